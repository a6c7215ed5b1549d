/** Moved to the shared JSON-RPC layer (src/rpc/jsonrpc/methods.ts); kept so that existing imports resolve. */
export * from '../jsonrpc/methods.js';
