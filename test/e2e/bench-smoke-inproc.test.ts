/**
 * `make bench` smoke run (test/helpers/bench-smoke.ts) of the benches that run in one process:
 * 4 minutes on the 2-core machine at load average 20 (other engineers' tests). Also checks that every bench is in a group.
 */
import t from 'tap';
import { allBenches, SMOKE_GROUPS, smokeRun } from '../helpers/bench-smoke.js';

t.setTimeout(880_000);

t.test('every bench is in a smoke group', async (t) => {
  t.same(Object.values(SMOKE_GROUPS).flat().sort(), allBenches(), 'the groups cover dist/bench/*.bench.js exactly');
});

t.test('in-process benches run in smoke mode and report ratios against named peers', async (t) => {
  await smokeRun(t, SMOKE_GROUPS.inproc.filter((b) => allBenches().includes(b)));
});
