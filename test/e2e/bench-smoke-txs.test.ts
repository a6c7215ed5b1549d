/**
 * `make bench` smoke run (test/helpers/bench-smoke.ts) of the benches that load a devnet node with
 * txs (banksend, evm-rpc beside anvil, exec-latency): 6 minutes on the 2-core machine at load
 * average 20.
 */
import t from 'tap';
import { allBenches, SMOKE_GROUPS, smokeRun } from '../helpers/bench-smoke.js';

t.setTimeout(880_000);

// Minutes of node processes on 2 cores: past what `make test` can spend (its 20-minute budget).
// `make bench-smoke` runs this file with CHAIND_BENCH_SMOKE=all; `make test` skips it.
const RUN = process.env['CHAIND_BENCH_SMOKE'] === 'all';

t.test('tx-load benches run in smoke mode and report ratios against named peers', { skip: RUN ? false : 'node-process benches: make bench-smoke (CHAIND_BENCH_SMOKE=all)' }, async (t) => {
  await smokeRun(t, SMOKE_GROUPS.txs.filter((b) => allBenches().includes(b)));
});
