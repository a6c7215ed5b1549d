/**
 * The fuzz surfaces, by name. A new surface is one more entry: a function from the target to a
 * Surface (surface.ts).
 */
import { evmHttpSurface, evmWsSurface } from './evm-rpc.js';
import { grpcSurface } from './grpc.js';
import { nodeJsonRpcSurface, nodeUriSurface, nodeWsSurface } from './node-rpc.js';
import { restSurface } from './rest.js';
import type { FuzzCase, Surface } from './surface.js';
import type { FuzzTarget } from './target.js';

export const SURFACES: Record<string, (t: FuzzTarget) => Surface<FuzzCase>> = {
  'node-uri': nodeUriSurface,
  'node-jsonrpc': nodeJsonRpcSurface,
  'node-ws': nodeWsSurface,
  rest: restSurface,
  grpc: grpcSurface,
  'evm-http': evmHttpSurface,
  'evm-ws': evmWsSurface,
};

/** Lanes (parallel connections) per surface in the default run. */
export const DEFAULT_LANES: Record<string, number> = { 'node-uri': 16, 'node-jsonrpc': 24, 'node-ws': 32, rest: 16, grpc: 32, 'evm-http': 16, 'evm-ws': 16 };
