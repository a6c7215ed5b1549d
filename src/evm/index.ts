/**
 * chaind's EVM core: flat state, a StateManager for @ethereumjs/vm v10 over it, the state trie
 * and proofs, tx admission and block execution. Self-contained (no node, consensus or RPC
 * imports) so it loads on the main thread and in workers alike. See docs/EVM.md.
 */
export * from './kv.js';
export * from './flat-state.js';
export * from './state-manager.js';
export * from './trie.js';
export * from './common.js';
export * from './tx.js';
export * from './block.js';
