#!/usr/bin/env node
/**
 * `make bench`: runs every dist/bench/*.bench.js (or those named by BENCH=a,b — `rpc` is
 * rpc.bench.js), each in its own process, one after the other, with a progress line; collects the
 * figures they report (bench/report.ts) and writes
 *
 *   bench/results/<UTC date-time>.json   machine facts, each bench's status and time, every figure
 *                                        (figure, unit, value, peer, peer value, ratio, runs, spread)
 *   bench/results/latest.md              the same as Markdown: one table per area
 *   bench/results/logs/<bench>.log       each bench's own output
 *
 * BENCH_SMOKE=1: every bench at a tiny size (SMOKE below, and the bench's own `smoke()` choices),
 * a second or two per figure, one pair: proves the benches still run, measures nothing.
 * BENCH_PAIRS=<n>: alternating pairs per paired figure (default 5; bench/report.ts alternate():
 * A then B, then B then A, …). A paired figure's ratio is the median of its per-pair ratios, its
 * spread (max − min) ÷ median of them; the JSON keeps every pair (`samples`).
 * BENCH_RESULTS_DIR=<dir> writes there instead of bench/results. Exit code 1 when a bench failed.
 *
 * A run of some benches (BENCH=a,b, not a smoke run) writes its own <UTC date-time>.json as any
 * run, and merges into latest.md: the figures and the Benches rows of the benches it ran replace
 * theirs in the previous latest (bench/results/latest.json, else the newest <date-time>.json),
 * the others stay, and the header lists the re-runs (when, commit, load). latest.json is the
 * document latest.md shows.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist/bench');
const OUT = path.resolve(process.env.BENCH_RESULTS_DIR ?? path.join(ROOT, 'bench/results'));
const SMOKE_MODE = process.env.BENCH_SMOKE === '1';

/** Smoke-size arguments and environment per bench (their full sizes are their defaults). */
const SMOKE = {
  banksend: { args: ['200', '8', '2', '1'] },
  blocksync: { env: { BS_BLOCKS: '40', BS_TX_BLOCKS: '10' } },
  crypto: { env: { BENCH_MAX_TIME: '0.1' } },
  'evm-exec': { env: { BENCH_EVM_TRANSFERS: '40', BENCH_EVM_HOLDERS: '16', BENCH_EVM_BLOCKS: '1' } },
  'evm-call': { env: { BENCH_CALL_HOLDERS: '16', BENCH_CALL_ROUNDS: '1' } },
  'evm-module': { env: { BENCH_EVM_TRANSFERS: '40', BENCH_EVM_HOLDERS: '16' } },
  'evm-rpc': { args: ['1'] },
  'exec-latency': { args: ['100', '10', '2'], env: { BENCH_TIMEOUT_COMMIT: '10s', BENCH_PROBE_MS: '20' } },
  flood: { args: ['0.05', '2'] },
  fuzz: { args: ['--count', '100'] },
  'p2p-interval': { env: { INTERVAL_COMMITS: '100ms', INTERVAL_BLOCKS: '5' } },
  'p2p-join': { env: { JOIN_HEIGHT: '10' } },
  'p2p-transport': { env: { P2P_BENCH_MB: '1' } },
  rpc: { args: ['1', '1'] },
  search: { env: { BENCH_TXS: '6000', BENCH_PER_BLOCK: '20', BENCH_ITER: '30' } },
  'versioned-state': { env: { BENCH_KEYS: '5000', BENCH_BLOCKS: '40', BENCH_CHANGES: '100', BENCH_KEEP: '20' } },
};

/**
 * Arguments of a full `make bench` run where a bench's own default is a soak meant to be run by
 * hand: the fuzzer's default is 200,000 cases on each of its 7 surfaces (hours); here it runs
 * twice the suite's 10,000.
 */
const FULL = {
  fuzz: { args: ['--count', '20000', '--parallel'] },
};

const nameOf = (f) => f.replace(/\.bench\.js$/, '');

function machine() {
  const cpus = os.cpus();
  let backend = 'unknown';
  const probe = spawnSync(process.execPath, ['--input-type=module', '-e', `import('${path.join(ROOT, 'dist/src/crypto/backend.js')}').then((m) => console.log(m.getCryptoBackend().name))`], {
    encoding: 'utf8',
    env: process.env,
  });
  if (probe.status === 0) backend = probe.stdout.trim();
  const git = spawnSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
  return {
    cores: cpus.length,
    cpu: cpus[0]?.model ?? 'unknown',
    memory_gib: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    crypto_backend: backend + (process.env.CHAIND_CRYPTO ? ` (CHAIND_CRYPTO=${process.env.CHAIND_CRYPTO})` : ''),
    load_average_at_start: os.loadavg().map((x) => Math.round(x * 10) / 10),
    commit: git.status === 0 ? git.stdout.trim() : null,
    smoke: SMOKE_MODE,
    pairs: Math.max(1, Number(process.env.BENCH_PAIRS ?? (SMOKE_MODE ? 1 : 5)) || 1),
  };
}

const fmtS = (ms) => {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
};

function runOne(file, i, n, jsonl, logDir, t0) {
  const name = nameOf(file);
  const cfg = SMOKE_MODE ? (SMOKE[name] ?? {}) : (FULL[name] ?? {});
  const log = fs.openSync(path.join(logDir, `${name}.log`), 'w');
  const started = Date.now();
  const tty = process.stderr.isTTY === true;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(DIST, file), ...(cfg.args ?? [])], {
      cwd: ROOT,
      env: { ...process.env, ...(cfg.env ?? {}), BENCH_RESULTS_FILE: jsonl, BENCH_NAME: name },
      stdio: ['ignore', log, log],
    });
    const line = () => `[${i + 1}/${n}] ${name}  ${fmtS(Date.now() - started)}  (all ${fmtS(Date.now() - t0)})`;
    let lastPrinted = 0;
    const timer = setInterval(() => {
      if (tty) process.stderr.write(`\r${line()}   `);
      else if (Date.now() - lastPrinted >= 30_000) {
        process.stderr.write(line() + '\n');
        lastPrinted = Date.now();
      }
    }, 1000);
    if (!tty) {
      process.stderr.write(line() + '\n');
      lastPrinted = Date.now();
    }
    const limitMs = SMOKE_MODE ? 300_000 : 3 * 3_600_000;
    const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('exit', (code, signal) => {
      clearInterval(timer);
      clearTimeout(killer);
      fs.closeSync(log);
      const seconds = (Date.now() - started) / 1000;
      const status = code === 0 ? 'ok' : signal === 'SIGKILL' ? `timed out after ${limitMs / 1000} s` : `failed (exit ${code ?? signal})`;
      process.stderr.write(`${tty ? '\r' : ''}[${i + 1}/${n}] ${name}  ${status} in ${fmtS(seconds * 1000)}${' '.repeat(10)}\n`);
      if (code !== 0) {
        const tail = fs.readFileSync(path.join(logDir, `${name}.log`), 'utf8').trimEnd().split('\n').slice(-15);
        for (const l of tail) process.stderr.write(`    ${l}\n`);
      }
      resolve({ bench: name, status, seconds: Math.round(seconds * 10) / 10, load_average_at_end: Math.round(os.loadavg()[0] * 10) / 10 });
    });
  });
}

const g = (x) => (x === null || x === undefined || Number.isNaN(x) ? '—' : Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(3));

export function markdown(doc) {
  const m = doc.machine;
  const out = [];
  out.push(`# chaind benchmarks${m.smoke ? ' (SMOKE RUN: tiny sizes, the numbers mean nothing)' : ''}`, '');
  out.push(`Run ${doc.started} (UTC), ${fmtS(doc.seconds * 1000)}; commit ${m.commit ?? '?'}.`, '');
  out.push(`Machine: ${m.cores} cores, ${m.cpu}, ${m.memory_gib} GiB; Node ${m.node}; ${m.os}; crypto backend ${m.crypto_backend}; load average at start ${m.load_average_at_start.join(' ')}.`, '');
  for (const r of doc.reruns ?? []) out.push(`Re-run since, alone: ${r.benches.join(', ')} on ${r.started} (UTC), commit ${r.commit ?? '?'}, load average at start ${r.load_average_at_start.join(' ')}; their rows below are from that run.`, '');
  out.push(
    'Every figure is a ratio against the named peer measured in the same run (a peer marked "(published)" is a published figure, not run here).',
    'The ratio is oriented so that **above 1 means chaind (or the first design) is better**: value ÷ peer for rates, peer ÷ value for times.',
    `Runs: how many runs or alternating pairs the medians come from (paired figures: ${m.pairs ?? "?"} pair${m.pairs === 1 ? "" : "s"}, A then B, then B then A, …, so load that comes and goes hits both sides of a pair alike); the ratio of a paired figure is the median of its per-pair ratios.`,
    'Spread: (max − min) ÷ median of the per-pair ratios; a figure whose spread is over 50% is marked "noisy": read its ratio as an order of magnitude.',
    'The machine is shared and its load varies: read the ratios, not the absolute values.',
    '',
  );
  const areas = new Map();
  for (const f of doc.figures) {
    if (!areas.has(f.area)) areas.set(f.area, []);
    areas.get(f.area).push(f);
  }
  for (const [area, figs] of areas) {
    out.push(`## ${area}`, '', '| figure | chaind | peer | peer value | ratio | runs | spread | bench |', '|---|---:|---|---:|---:|---:|---:|---|');
    for (const f of figs) {
      const noisy = f.spread !== null && f.runs >= 2 && f.spread > 0.5;
      out.push(
        `| ${f.figure}${f.note ? ` (${f.note})` : ''} | ${g(f.value)} ${f.unit} | ${f.peer} | ${g(f.peerValue)} ${f.unit} | **${g(f.ratio)}×** | ${f.runs} | ${f.spread === null || f.runs < 2 ? '—' : `${(f.spread * 100).toFixed(0)}%${noisy ? ' noisy' : ''}`} | ${f.bench} |`,
      );
    }
    out.push('');
  }
  out.push('## Benches', '', '| bench | status | time | figures | load average (1 min) at its end |', '|---|---|---:|---:|---:|');
  for (const b of doc.benches) out.push(`| ${b.bench} | ${b.status} | ${fmtS(b.seconds * 1000)} | ${doc.figures.filter((f) => f.bench === b.bench).length} | ${b.load_average_at_end ?? '—'} |`);
  out.push('');
  return out.join('\n');
}

/**
 * The previous latest document with the benches of `doc` (a run of some benches) replaced by
 * theirs, in place; `doc` itself when there is no previous one.
 */
export function mergeIntoLatest(doc, jsonPath) {
  let prev = null;
  const latest = path.join(OUT, 'latest.json');
  if (fs.existsSync(latest)) prev = JSON.parse(fs.readFileSync(latest, 'utf8'));
  else {
    const runs = fs.readdirSync(OUT).filter((f) => /^\d{4}-\d\d-\d\dT\d{6}Z\.json$/.test(f) && path.join(OUT, f) !== jsonPath).sort();
    if (runs.length) prev = JSON.parse(fs.readFileSync(path.join(OUT, runs[runs.length - 1]), 'utf8'));
  }
  if (!prev || prev.machine?.smoke) return doc;
  const ran = new Set(doc.benches.map((b) => b.bench));
  const figures = [];
  const placed = new Set();
  for (const f of prev.figures) {
    if (!ran.has(f.bench)) figures.push(f);
    else if (!placed.has(f.bench)) {
      placed.add(f.bench);
      figures.push(...doc.figures.filter((x) => x.bench === f.bench));
    }
  }
  figures.push(...doc.figures.filter((x) => !placed.has(x.bench)));
  const benches = prev.benches.map((b) => doc.benches.find((x) => x.bench === b.bench) ?? b);
  benches.push(...doc.benches.filter((b) => !prev.benches.some((x) => x.bench === b.bench)));
  const reruns = [...(prev.reruns ?? []).map((r) => ({ ...r, benches: r.benches.filter((b) => !ran.has(b)) })).filter((r) => r.benches.length), { benches: [...ran], started: doc.started, commit: doc.machine.commit, load_average_at_start: doc.machine.load_average_at_start }];
  return { ...prev, benches, figures, reruns };
}

async function main() {
  if (!fs.existsSync(DIST)) {
    console.error('dist/bench is missing: build first (make build)');
    process.exit(1);
  }
  let files = fs.readdirSync(DIST).filter((f) => f.endsWith('.bench.js')).sort();
  const only = (process.env.BENCH ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (only.length) {
    const unknown = only.filter((o) => !files.some((f) => nameOf(f) === o));
    if (unknown.length) {
      console.error(`no such bench: ${unknown.join(', ')} (have: ${files.map(nameOf).join(', ')})`);
      process.exit(2);
    }
    files = files.filter((f) => only.includes(nameOf(f)));
  }
  const started = new Date();
  const stamp = started.toISOString().replace(/[:]/g, '').replace(/\.\d+Z$/, 'Z');
  fs.mkdirSync(OUT, { recursive: true });
  const logDir = path.join(OUT, 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  const jsonl = path.join(os.tmpdir(), `chaind-bench-${process.pid}-${stamp}.jsonl`);
  fs.writeFileSync(jsonl, '');
  const mach = machine();
  process.stderr.write(`${files.length} benches${SMOKE_MODE ? ' (smoke)' : ''}; ${mach.cores} cores, ${mach.cpu}, Node ${mach.node}, crypto ${mach.crypto_backend}; logs in ${path.relative(ROOT, logDir) || logDir}\n`);
  const t0 = Date.now();
  const benches = [];
  for (let i = 0; i < files.length; i++) benches.push(await runOne(files[i], i, files.length, jsonl, logDir, t0));
  const figures = fs
    .readFileSync(jsonl, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  fs.rmSync(jsonl, { force: true });
  const doc = { started: started.toISOString(), seconds: Math.round((Date.now() - t0) / 100) / 10, machine: mach, benches, figures };
  const jsonPath = path.join(OUT, `${stamp}.json`);
  fs.writeFileSync(jsonPath, JSON.stringify(doc, null, 1) + '\n');
  const shown = only.length && !SMOKE_MODE ? mergeIntoLatest(doc, jsonPath) : doc;
  fs.writeFileSync(path.join(OUT, 'latest.json'), JSON.stringify(shown, null, 1) + '\n');
  fs.writeFileSync(path.join(OUT, 'latest.md'), markdown(shown));
  const failed = benches.filter((b) => b.status !== 'ok');
  process.stderr.write(`${figures.length} figures from ${benches.length} benches in ${fmtS(Date.now() - t0)}; ${failed.length} failed${failed.length ? ` (${failed.map((b) => b.bench).join(', ')})` : ''}\n`);
  process.stderr.write(`wrote ${path.relative(ROOT, jsonPath)} and ${path.relative(ROOT, path.join(OUT, 'latest.md'))}\n`);
  process.exit(failed.length ? 1 : 0);
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) void main();
