/** Moved to the shared JSON-RPC layer (src/rpc/jsonrpc/ws.ts); kept so that existing imports resolve. */
export * from '../jsonrpc/ws.js';
