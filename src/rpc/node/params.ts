/** Moved to the shared JSON-RPC layer (src/rpc/jsonrpc/cometbft-params.ts); kept so that existing imports resolve. */
export * from '../jsonrpc/cometbft-params.js';
