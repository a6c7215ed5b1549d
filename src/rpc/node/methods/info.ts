/** Node RPC methods: net_info, dump_consensus_state, consensus_state, unconfirmed_txs, num_unconfirmed_txs, broadcast_tx_*, check_tx, abci_info, abci_query, broadcast_evidence, dial_seeds, dial_peers, unsafe_flush_mempool. */
import type { NodeRpcContext } from '../context.js';
import type { Route } from '../routes.js';

export function infoRoutes(_ctx: NodeRpcContext): Route[] {
  return [];
}
