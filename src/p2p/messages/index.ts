/**
 * Reactor message codecs: the bytes each reactor hands to MConnection for its channels
 * (cometbft/cometbft:p2p/peer.go marshals the reactor's wrapper Message; the evidence channel
 * carries a bare EvidenceList). One file per reactor.
 */
export * from './consensus.js';
export * from './mempool.js';
export * from './evidence.js';
export * from './blocksync.js';
export * from './pex.js';
