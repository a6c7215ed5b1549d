#!/usr/bin/env node
// Runs the given compiled tap test files and closes with the plain line CI reads:
// "N passed, N failed" (tap's own summary is a JS object literal no CI harness parses).
// Before that line it repeats every failed assertion with its subtest path and the start of tap's
// diagnostic for it (found/wanted, where; for a file timeout, the handles still open), and lists the
// slowest files with their own time and when tap reported them (tap prints the files in name
// order, so a slow or hung file holds back the report of the files after it), so a CI log cut
// to its tail still says what failed and where the time went.
//
//   node scripts/run-tests.mjs <files…> [--js <files…>]
//
// The files before `--js` run once with the environment's CHAIND_CRYPTO (unset: auto, the native
// addon where it loaded); the files after it run a second time, afterwards, with CHAIND_CRYPTO=js
// (test/helpers/crypto-env.ts applies it to every test process and the threads they start). The
// closing line counts both passes; a failure is listed with the pass it failed in.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

const args = process.argv.slice(2);
const split = args.indexOf('--js');
const passes = [
  { name: 'default', env: {}, files: (split < 0 ? args : args.slice(0, split)).filter((f) => existsSync(f)) },
  { name: 'js', env: { CHAIND_CRYPTO: 'js' }, files: split < 0 ? [] : args.slice(split + 1).filter((f) => existsSync(f)) },
].filter((p) => p.files.length > 0);
if (passes.length === 0) {
  console.log('no test files found');
  console.log('0 passed, 1 failed');
  process.exit(1);
}

/** What CHAIND_CRYPTO resolves to in a test process with this environment (for the pass header). */
async function backendOf(env) {
  try {
    const { parseCryptoSetting, selectCryptoBackend } = await import('../dist/src/crypto/backend.js');
    const setting = parseCryptoSetting(env.CHAIND_CRYPTO);
    return `CHAIND_CRYPTO=${setting}: ${selectCryptoBackend(setting).name}`;
  } catch (e) {
    return `CHAIND_CRYPTO=${env.CHAIND_CRYPTO ?? ''}: ${e instanceof Error ? e.message : String(e)}`;
  }
}

// Three files at a time on the 2-core CI machine: most end-to-end files spend their time waiting
// for blocks, restarts and timeouts rather than computing (cli-tx: 15 s of CPU in 93 s), so a
// third file fills cores two would leave idle. TEST_JOBS overrides.
const jobs = Number(process.env.TEST_JOBS ?? 3);
/** Lines of tap's YAML diagnostic kept per failure for the closing summary. */
const DIAG_LINES = 14;
const DIAG_SKIP = new Set(['at', 'stack', 'source', 'command', 'args', 'cwd', 'env', 'compare']);

function runPass(files, env) {
  const started = Date.now();
  const tap = spawn(
    process.execPath,
    [
      'node_modules/tap/dist/esm/run.mjs', '--disable-coverage', '--reporter=tap', '--timeout=900', `--jobs=${jobs}`,
      // No file runs alone: running the four-validator fault test after the others added ~100 s to
      // the suite, and the stalls that once made it look load-sensitive were consensus-reactor
      // defects (a dropped catch-up block, votes marked as sent to a peer still block-syncing).
      ...files,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } },
  );

  let tail = '';
  let partial = '';
  const subtests = []; // "# Subtest: name" by nesting level (4 spaces a level)
  const failures = []; // { path, diag: tap's YAML lines under the failed assertion }
  const finished = []; // { file, ms, at }
  let diagOf = null; // { failure, indent, open } while the lines after a failure are its YAML
  function onLine(line) {
    const indent = /^ */.exec(line)[0].length;
    if (diagOf !== null) {
      const text = line.slice(Math.min(indent, diagOf.indent));
      if (!diagOf.open && text === '---') {
        diagOf.open = true;
        return;
      }
      if (diagOf.open && text !== '...') {
        // Top-level keys start a field; where/stack/source/command lines are left out.
        const key = /^([A-Za-z]\w*):/.exec(text);
        if (key) diagOf.skip = DIAG_SKIP.has(key[1]);
        if (!diagOf.skip && diagOf.failure.diag.length < DIAG_LINES) diagOf.failure.diag.push(text);
        return;
      }
      diagOf = null;
    }
    const level = Math.floor(indent / 4);
    const body = line.slice(indent);
    const sub = /^# Subtest: (.*)$/.exec(body);
    if (sub) {
      subtests.length = level;
      subtests[level] = sub[1];
      return;
    }
    const res = /^(not )?ok \d+ - (.*?)(?: # time=([\d.]+)ms)?$/.exec(body);
    if (!res) return;
    if (res[1] && !/# (TODO|SKIP)/i.test(body)) {
      // A failed parent repeats its failed children; report the innermost ones only.
      const path = [...subtests.slice(0, level), res[2]].join(' > ');
      if (!failures.some((f) => f.path.startsWith(path + ' > '))) {
        const failure = { path, diag: [] };
        failures.push(failure);
        diagOf = { failure, indent: indent + 2, open: false, skip: false };
      }
    }
    if (level === 0 && res[2].startsWith('dist/')) {
      finished.push({ file: res[2], ms: Number(res[3] ?? 0), at: (Date.now() - started) / 1000 });
    }
  }
  tap.stdout.on('data', (d) => {
    process.stdout.write(d);
    const text = d.toString();
    tail = (tail + text).slice(-4096);
    const lines = (partial + text).split('\n');
    partial = lines.pop();
    for (const line of lines) onLine(line);
  });
  return new Promise((resolve) => {
    tap.on('close', (code) => {
      if (partial) onLine(partial);
      // tap 21 ends with "# { total: N, pass: P, fail: F, … }".
      const m = /#\s*\{([^}]*)\}\s*(?:\n#\s*time=[^\n]*)?\s*$/.exec(tail) ?? /#\s*\{([^}]*total[^}]*)\}/.exec(tail);
      const field = (name) => {
        const f = m && new RegExp(`${name}:\\s*(\\d+)`).exec(m[1]);
        return f ? Number(f[1]) : 0;
      };
      let failed = field('fail');
      if (code !== 0 && failed === 0) failed = 1; // a crash or timeout with no counted failure
      resolve({
        ok: code === 0 && failed === 0,
        passed: field('pass'),
        failed,
        skipped: field('skip') + field('todo'),
        failures,
        finished,
        seconds: (Date.now() - started) / 1000,
      });
    });
  });
}

const results = [];
for (const [i, pass] of passes.entries()) {
  const label = `pass ${i + 1} of ${passes.length}: ${pass.files.length} files, ${await backendOf({ ...process.env, ...pass.env })}`;
  console.log(`# ${label}`);
  results.push({ pass, label, ...(await runPass(pass.files, pass.env)) });
}

for (const r of results) {
  const slow = [...r.finished].sort((a, b) => b.ms - a.ms).slice(0, 12);
  console.log(`\n# ${r.label}`);
  console.log('# slowest files (own time, reported at):');
  for (const f of slow) console.log(`#   ${(f.ms / 1000).toFixed(1).padStart(6)} s  @${f.at.toFixed(0).padStart(5)} s  ${f.file}`);
  const own = r.finished.reduce((s, f) => s + f.ms, 0) / 1000;
  console.log(`# ${r.finished.length} files, ${own.toFixed(0)} s of file time in ${r.seconds.toFixed(0)} s; ${r.passed} passed, ${r.failed} failed`);
}
const failures = results.flatMap((r) => r.failures.map((f) => ({ ...f, label: results.length > 1 ? `[${r.pass.name}] ${f.path}` : f.path })));
if (failures.length > 0) {
  console.log(`\n# failed (${failures.length}):`);
  for (const f of failures.slice(0, 40)) console.log(`#   ${f.label}`);
  // The diagnostics of the first few, so that a log cut to its tail still says why.
  for (const f of failures.slice(0, 5)) {
    console.log(`#\n# ${f.label}:`);
    for (const d of f.diag) console.log(`#     ${d}`);
  }
}
const sum = (k) => results.reduce((s, r) => s + r[k], 0);
const skipped = sum('skipped');
console.log(`${sum('passed')} passed, ${sum('failed')} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
