/**
 * `make bench` smoke run (test/helpers/bench-smoke.ts) of the benches that start node processes
 * or wrk, other than the tx-load ones: flood, fuzz, p2p-join, rpc.
 */
import t from 'tap';
import { allBenches, SMOKE_GROUPS, smokeRun } from '../helpers/bench-smoke.js';

t.setTimeout(880_000);

t.test('node benches run in smoke mode and report ratios against named peers', async (t) => {
  await smokeRun(t, SMOKE_GROUPS.nodes.filter((b) => allBenches().includes(b)));
});
