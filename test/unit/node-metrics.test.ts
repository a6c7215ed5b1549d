/**
 * The metrics a running node serves, from the parts that take `metrics?` themselves (consensus,
 * executor, mempool, worker pool): no wiring in node.ts.
 */
import t from 'tap';
import { startTestNode, waitHeight } from '../helpers/inproc.js';

function value(text: string, name: string): number | null {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m === null ? null : Number(m[1]);
}

t.test('consensus, executor, mempool and pool metrics on /metrics', async (t) => {
  const tn = await startTestNode({ executor: 'thread', flags: { 'instrumentation.prometheus': true, 'instrumentation.prometheus_listen_addr': '127.0.0.1:0' } });
  t.teardown(() => tn.close());
  await waitHeight(tn, 3n);
  const port = tn.node.metricsPort;
  t.ok(port, 'metrics server listening');
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  t.ok((value(text, 'chaind_consensus_height') ?? 0) >= 3, 'consensus: height being decided');
  const step = value(text, 'chaind_consensus_step');
  t.ok(step !== null && step >= 1 && step <= 8, 'consensus: step is a RoundStep number');
  t.equal(value(text, 'chaind_consensus_validators'), 1, 'consensus: one validator');
  t.equal(value(text, 'chaind_consensus_validators_power'), 10, 'consensus: its power');
  t.ok((value(text, 'chaind_consensus_latest_block_height') ?? 0) >= 2, 'executor: latest block');
  t.ok((value(text, 'chaind_consensus_block_interval_seconds_count') ?? 0) >= 1, 'executor: block interval observed');
  t.equal(value(text, 'chaind_consensus_total_txs'), 0, 'executor: no txs yet');
  t.equal(value(text, 'chaind_mempool_size'), 0, 'mempool: empty, and the gauge is there from the start');
  t.not(value(text, 'chaind_pool_queue_length'), undefined);
  t.equal(value(text, 'chaind_pool_busy_refusals_total'), 0, 'pool: catalogue registered');
});
