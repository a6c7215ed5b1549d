/**
 * Shared by test/e2e/bench-smoke-*.test.ts: `make bench` in smoke mode (BENCH_SMOKE=1: every bench at a tiny size), so that no bench rots:
 * each dist/bench/*.bench.js must run to exit 0 through scripts/bench.mjs and report at least one
 * figure with a named peer and a finite ratio, and the harness must write its JSON and
 * latest.md (into a temp dir, not bench/results). The figures measure nothing at these sizes.
 *
 * The benches are split in four groups, one test file each (tap's 900 s per file): the light in-process
 * ones (about 45 s), the heavy in-process ones (crypto, evm-exec: about 50 s), those that load a node with txs
 * (banksend, evm-rpc, exec-latency: 6 minutes there) and the other node-process ones (flood, fuzz,
 * p2p-interval, p2p-join, rpc). Every bench must be in a group.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { ROOT } from './node.js';

export const SMOKE_GROUPS = {
  inproc: ['blocksync', 'evm-call', 'evm-module', 'p2p-transport', 'search', 'versioned-state'],
  /** In one process too, but 20–30 s each even at smoke size (crypto's many figures, evm-exec's native/JS children). */
  heavy: ['crypto', 'evm-exec', 'evm-txpool'],
  txs: ['banksend', 'evm-rpc', 'exec-latency'],
  nodes: ['evm-trace', 'flood', 'fuzz', 'p2p-interval', 'p2p-join', 'rpc'],
};

/**
 * Benches that have nothing to compare against a peer: the EVM pool's admission, reap and update
 * times have no peer that runs here (geth's pool is Go).
 */
const NO_FIGURES = new Set(['evm-txpool']);

export function allBenches(): string[] {
  return fs
    .readdirSync(path.join(ROOT, 'dist/bench'))
    .filter((f) => f.endsWith('.bench.js'))
    .map((f) => f.replace(/\.bench\.js$/, ''))
    .sort();
}

/** Runs `benches` through scripts/bench.mjs in smoke mode and checks what it wrote. */
export async function smokeRun(t: Test, benches: string[]): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-bench-smoke-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const { code, err } = await new Promise<{ code: number | null; err: string }>((resolve) => {
    const p = spawn(process.execPath, [path.join(ROOT, 'scripts/bench.mjs')], {
      cwd: ROOT,
      env: { ...process.env, BENCH_SMOKE: '1', BENCH: benches.join(','), BENCH_RESULTS_DIR: dir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let e = '';
    p.stderr.on('data', (d) => (e += d));
    p.on('exit', (c) => resolve({ code: c, err: e }));
  });
  t.equal(code, 0, `the harness exits 0:\n${err.slice(-4000)}`);
  const jsonFile = fs.readdirSync(dir).find((f) => /^\d{4}-\d\d-\d\dT\d{6}Z\.json$/.test(f));
  t.ok(jsonFile, 'a <UTC date-time>.json was written');
  if (!jsonFile) return;
  const doc = JSON.parse(fs.readFileSync(path.join(dir, jsonFile), 'utf8'));
  t.equal(doc.machine.smoke, true);
  t.ok(doc.machine.cores > 0 && typeof doc.machine.node === 'string' && typeof doc.machine.crypto_backend === 'string', 'machine facts');
  t.same(
    doc.benches.map((b: { bench: string }) => b.bench),
    benches,
    'every bench ran',
  );
  for (const b of doc.benches as { bench: string; status: string }[]) {
    t.equal(b.status, 'ok', `${b.bench} ok`);
    const figs = (doc.figures as { bench: string }[]).filter((f) => f.bench === b.bench);
    if (!NO_FIGURES.has(b.bench)) t.ok(figs.length > 0, `${b.bench} reported figures`);
  }
  for (const f of doc.figures) {
    const ok = typeof f.peer === 'string' && f.peer !== '' && f.unit !== '' && Number.isFinite(f.value) && Number.isFinite(f.peerValue) && Number.isFinite(f.ratio) && f.runs >= 1;
    t.ok(ok, `${f.bench}: ${f.figure} has a peer and a finite ratio (${f.value} vs ${f.peer} ${f.peerValue})`);
  }
  const md = fs.readFileSync(path.join(dir, 'latest.md'), 'utf8');
  t.match(md, /SMOKE RUN/);
  for (const area of new Set<string>(doc.figures.map((f: { area: string }) => f.area))) t.match(md, `## ${area}\n`, `latest.md has a table for ${area}`);
  t.equal((md.match(/\*\*[^*]+×\*\*/g) ?? []).length, doc.figures.length, 'one ratio cell per figure');
}
