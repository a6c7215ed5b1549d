/** Moved to the shared JSON-RPC layer (src/rpc/jsonrpc/envelope.ts); kept so that existing imports resolve. */
export * from '../jsonrpc/envelope.js';
