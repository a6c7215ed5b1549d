#!/usr/bin/env node
// Runs the given compiled tap test files and closes with the plain line CI reads:
// "N passed, N failed" (tap's own summary is a JS object literal no CI harness parses).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

const files = process.argv.slice(2).filter((f) => existsSync(f));
if (files.length === 0) {
  console.log('no test files found');
  console.log('0 passed, 1 failed');
  process.exit(1);
}
const tap = spawn(
  process.execPath,
  ['node_modules/tap/dist/esm/run.mjs', '--disable-coverage', '--reporter=tap', '--timeout=900', '--jobs=2', ...files],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
let tail = '';
tap.stdout.on('data', (d) => {
  process.stdout.write(d);
  tail = (tail + d.toString()).slice(-4096);
});
tap.on('close', (code) => {
  // tap 21 ends with "# { total: N, pass: P, fail: F, … }".
  const m = /#\s*\{([^}]*)\}\s*(?:\n#\s*time=[^\n]*)?\s*$/.exec(tail) ?? /#\s*\{([^}]*total[^}]*)\}/.exec(tail);
  const field = (name) => {
    const f = m && new RegExp(`${name}:\\s*(\\d+)`).exec(m[1]);
    return f ? Number(f[1]) : 0;
  };
  const passed = field('pass');
  let failed = field('fail');
  if (code !== 0 && failed === 0) failed = 1; // a crash or timeout with no counted failure
  const skipped = field('skip') + field('todo');
  console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(code === 0 && failed === 0 ? 0 : 1);
});
