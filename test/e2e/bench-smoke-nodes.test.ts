/**
 * `make bench` smoke run (test/helpers/bench-smoke.ts) of the benches that start node processes
 * or wrk, other than the tx-load ones: flood, fuzz, p2p-interval, p2p-join, rpc.
 */
import t from 'tap';
import { allBenches, SMOKE_GROUPS, smokeRun } from '../helpers/bench-smoke.js';

t.setTimeout(880_000);

// Minutes of node processes on 2 cores: past what `make test` can spend (its 20-minute budget).
// `make bench-smoke` runs this file with CHAIND_BENCH_SMOKE=all; `make test` skips it.
const RUN = process.env['CHAIND_BENCH_SMOKE'] === 'all';

t.test('node benches run in smoke mode and report ratios against named peers', { skip: RUN ? false : 'node-process benches: make bench-smoke (CHAIND_BENCH_SMOKE=all)' }, async (t) => {
  await smokeRun(t, SMOKE_GROUPS.nodes.filter((b) => allBenches().includes(b)));
});
