/**
 * The node's metric catalogue. Names follow CometBFT's (consensus/metrics.go, mempool/metrics.go)
 * under the `chaind` namespace, so existing CometBFT dashboards map by a namespace change.
 */
import { Counter, Gauge, Histogram, Registry } from './registry.js';

export function createMetrics(namespace = 'chaind') {
  const r = new Registry();
  const n = (s: string) => `${namespace}_${s}`;
  return {
    registry: r,
    consensus: {
      height: r.register(new Gauge(n('consensus_height'), 'Height of the chain.')),
      latestBlockHeight: r.register(new Gauge(n('consensus_latest_block_height'), 'The latest block height.')),
      rounds: r.register(new Gauge(n('consensus_rounds'), 'Number of rounds at the current height.')),
      step: r.register(new Gauge(n('consensus_step'), 'Current consensus step (1 NewHeight … 8 Commit).')),
      validators: r.register(new Gauge(n('consensus_validators'), 'Number of validators.')),
      validatorsPower: r.register(new Gauge(n('consensus_validators_power'), 'Total voting power of the validators.')),
      numTxs: r.register(new Gauge(n('consensus_num_txs'), 'Number of transactions in the latest block.')),
      totalTxs: r.register(new Counter(n('consensus_total_txs'), 'Total number of transactions committed.')),
      // Buckets around the 1 s default timeout_commit, where a healthy devnet sits.
      blockInterval: r.register(
        new Histogram(n('consensus_block_interval_seconds'), 'Time between this and the last block.', [0.1, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 5, 10]),
      ),
    },
    mempool: {
      size: r.register(new Gauge(n('mempool_size'), 'Number of uncommitted transactions in the mempool.')),
      sizeBytes: r.register(new Gauge(n('mempool_size_bytes'), 'Total size of the mempool in bytes.')),
      failedTxs: r.register(new Counter(n('mempool_failed_txs'), 'Number of transactions that failed CheckTx.')),
      rejectedTxs: r.register(new Counter(n('mempool_rejected_txs'), 'Number of transactions rejected because the mempool was full.')),
      evictedTxs: r.register(new Counter(n('mempool_evicted_txs'), 'Number of transactions evicted on recheck.')),
      recheckTimes: r.register(new Counter(n('mempool_recheck_times'), 'Number of times transactions were rechecked.')),
    },
    // Recorded by the JSON-RPC layer (src/rpc/jsonrpc/dispatch.ts), labelled by method and
    // transport (uri, jsonrpc, websocket); names the table does not serve count as "(unknown)".
    rpc: {
      requests: r.register(new Counter(n('rpc_requests_total'), 'JSON-RPC calls, by method and transport.')),
      errors: r.register(new Counter(n('rpc_errors_total'), 'JSON-RPC calls answered with an error, by method and transport.')),
      latency: r.register(
        new Histogram(n('rpc_request_duration_seconds'), 'Time a JSON-RPC method took, by method and transport.', [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]),
      ),
    },
    // eth_subscribe (src/rpc/evm/subscribe.ts over src/events/subscriptions.ts).
    evmSubscriptions: {
      clients: r.register(new Gauge(n('jsonrpc_subscription_clients'), 'Websocket connections holding eth_subscribe subscriptions.')),
      subscriptions: r.register(new Gauge(n('jsonrpc_subscriptions'), 'Active eth_subscribe subscriptions.')),
      droppedEvents: r.register(new Counter(n('jsonrpc_subscription_dropped_notifications_total'), 'Notifications discarded with a slow client.')),
      canceledSubscriptions: r.register(new Counter(n('jsonrpc_subscription_overflows_total'), 'Subscriptions whose buffer filled up.')),
      droppedClients: r.register(new Counter(n('jsonrpc_subscription_dropped_clients_total'), 'Websocket connections closed because their client did not read its notifications.')),
    },
    pool: poolMetrics(r, n),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

// ---------------------------------------------------------------------------------------------
// Worker pool (src/pool CryptoPoolMetrics): signature jobs on the Piscina threads.

/** Job times: a 128-signature job takes ~1 ms native, ~25 ms JS; queueing can add seconds under load. */
const POOL_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

function poolMetrics(r: Registry, n: (s: string) => string) {
  return {
    queueLength: r.register(new Gauge(n('pool_queue_length'), 'Signature jobs queued or running in the worker pool.')),
    jobs: r.register(new Counter(n('pool_jobs_total'), 'Signature jobs the worker pool finished.')),
    jobItems: r.register(new Histogram(n('pool_job_items'), 'Signatures per worker-pool job.', [1, 2, 4, 8, 16, 32, 64, 128])),
    jobTime: r.register(new Histogram(n('pool_job_seconds'), 'Time a worker spent on one job.', POOL_SECONDS)),
    jobWait: r.register(new Histogram(n('pool_job_wait_seconds'), 'Time from posting a job until a worker started it.', POOL_SECONDS)),
    busyRefusals: r.register(new Counter(n('pool_busy_refusals_total'), 'Calls refused because the worker pool queue was full.')),
    jobErrors: r.register(new Counter(n('pool_job_errors_total'), 'Jobs a worker could not run.')),
  };
}
