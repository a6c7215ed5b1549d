/** Node RPC methods: blockchain, block, block_by_hash, block_results, commit, header, header_by_hash, validators, genesis, genesis_chunked, consensus_params, tx, tx_search, block_search. */
import type { NodeRpcContext } from '../context.js';
import type { Route } from '../routes.js';

export function chainRoutes(_ctx: NodeRpcContext): Route[] {
  return [];
}
