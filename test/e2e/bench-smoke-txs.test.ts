/**
 * `make bench` smoke run (test/helpers/bench-smoke.ts) of the benches that load a devnet node with
 * txs (banksend, evm-rpc beside anvil, exec-latency): 6 minutes on the 2-core machine at load
 * average 20.
 */
import t from 'tap';
import { allBenches, SMOKE_GROUPS, smokeRun } from '../helpers/bench-smoke.js';

t.setTimeout(880_000);

t.test('tx-load benches run in smoke mode and report ratios against named peers', async (t) => {
  await smokeRun(t, SMOKE_GROUPS.txs.filter((b) => allBenches().includes(b)));
});
