/**
 * `make bench` smoke run (test/helpers/bench-smoke.ts) of the in-process benches that take 20–30 s
 * each even at smoke size: crypto (every backend and size) and evm-exec (native and JS children).
 */
import t from 'tap';
import { allBenches, SMOKE_GROUPS, smokeRun } from '../helpers/bench-smoke.js';

t.setTimeout(880_000);

// A minute of CPU on 2 cores that `make test`'s 20-minute budget cannot spare. `make bench-smoke`
// runs this file with CHAIND_BENCH_SMOKE=all; `make test` skips it.
const RUN = process.env['CHAIND_BENCH_SMOKE'] === 'all';

t.test('heavy in-process benches (crypto, evm-exec) run in smoke mode and report ratios against named peers', { skip: RUN ? false : 'heavy benches: make bench-smoke (CHAIND_BENCH_SMOKE=all)' }, async (t) => {
  await smokeRun(t, SMOKE_GROUPS.heavy.filter((b) => allBenches().includes(b)));
});
