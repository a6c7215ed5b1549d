/**
 * The long fuzz run: the same surfaces and mutators as test/e2e/fuzz.test.ts, more cases.
 *
 *   node dist/bench/fuzz.bench.js [--seed N] [--count N] [--surfaces node-uri,rest] [--lanes N] [--parallel]
 *
 * Defaults: a random seed (printed), 200000 cases per surface, every surface, one surface at a time
 * (so cases/s is per surface; --parallel runs them together as the test does). Known-bug mutators
 * (test/helpers/fuzz/known-bugs.ts) run with FUZZ_KNOWN_BUGS=name,… or =all; FUZZ_WS_FRAMES (0–1,
 * default 0.2) is the share of websocket cases sent with a frame mutation (ws-frames.ts). Exits 1
 * on any failure.
 */
import { parseArgs } from 'node:util';
import { fuzzSeed, runSession } from '../test/helpers/fuzz/run.js';
import { report as figure } from './report.js';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    count: { type: 'string', default: '200000' },
    surfaces: { type: 'string' },
    lanes: { type: 'string' },
    parallel: { type: 'boolean', default: false },
  },
});
const seed = values.seed !== undefined ? Number(values.seed) >>> 0 : fuzzSeed();
const count = Number(values.count);
const report = await runSession({
  seed,
  count,
  surfaces: values.surfaces?.split(',').map((s) => s.trim()),
  lanes: values.lanes ? Number(values.lanes) : undefined,
  parallel: values.parallel,
  log: (l) => console.log(l),
});
console.log('');
console.log(`seed ${seed}, ${count} cases per surface`);
for (const s of report.surfaces) {
  console.log(`${s.result.surface.padEnd(14)} ${String(s.result.cases).padStart(8)} cases  ${s.casesPerSecond.toFixed(0).padStart(6)} cases/s  CPU/case node ${s.nodeCpuMsPerCase.toFixed(2)} ms, fuzzer ${s.clientCpuMsPerCase.toFixed(2)} ms  ${s.result.failures.length} failures  height ${s.heightBefore} → ${s.heightAfter ?? 'stalled'}`);
}
console.log(`RSS: start ${(report.firstRssKiB / 1024).toFixed(0)} MiB, peak ${(report.peakRssKiB / 1024).toFixed(0)} MiB, end ${(report.lastRssKiB / 1024).toFixed(0)} MiB`);
console.log(`node ${report.alive ? `alive at height ${report.finalHeight}` : `DIED (exit ${report.exitCode})`}`);
if (!report.alive) console.log(report.nodeOutput);
// The figures for bench/results (scripts/bench.mjs): what the node held after the fuzzing, against
// what it held before, and its height against what timeout_commit alone would have made.
figure({ area: 'Fuzzing', figure: `node RSS, peak during ${count} cases per surface`, unit: 'MiB', value: Math.round(report.peakRssKiB / 1024), peer: 'node RSS before the fuzzing', peerValue: Math.round(report.firstRssKiB / 1024), better: 'lower' });
const fuzzed = report.surfaces.reduce((n, s) => n + s.result.cases, 0);
const failures = report.surfaces.reduce((n, s) => n + s.result.failures.length, 0);
figure({ area: 'Fuzzing', figure: `cases answered in the protocol's shape, of ${fuzzed} (seed ${seed})`, unit: 'cases', value: fuzzed - failures, peer: 'cases sent', peerValue: fuzzed });

const failed = !report.alive || report.surfaces.some((s) => s.result.failures.length > 0 || s.heightAfter === null);
process.exit(failed ? 1 : 0);
