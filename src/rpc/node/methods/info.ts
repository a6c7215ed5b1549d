/**
 * Node RPC methods: net_info, dump_consensus_state, consensus_state, unconfirmed_txs,
 * num_unconfirmed_txs, broadcast_tx_async, broadcast_tx_sync, broadcast_tx_commit, check_tx,
 * abci_info, abci_query, broadcast_evidence, and (with `[rpc] unsafe = true`) dial_seeds,
 * dial_peers, unsafe_flush_mempool. Each group lives in its own info-*.ts module.
 */
import type { NodeRpcContext } from '../context.js';
import type { Route } from '../../jsonrpc/methods.js';
import { consensusRoutes } from './info-consensus.js';
import { evidenceRoutes } from './info-evidence.js';
import { mempoolRoutes } from './info-mempool.js';
import { netRoutes } from './info-net.js';

export function infoRoutes(ctx: NodeRpcContext): Route[] {
  return [...netRoutes(ctx), ...consensusRoutes(ctx), ...mempoolRoutes(ctx), ...evidenceRoutes(ctx)];
}
