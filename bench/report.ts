/**
 * The benches' common result API. A bench calls `report()` once per figure it measured; run by
 * `make bench` (scripts/bench.mjs) each figure is appended as one JSON line to
 * $BENCH_RESULTS_FILE, and the harness turns them into bench/results/<UTC date-time>.json and
 * bench/results/latest.md. Run by hand, `report()` only prints the figure.
 *
 * Every figure names a peer: the same measure taken side by side in the same run (native/JS,
 * chaind/anvil, chaind/bare uWS handler, design A/design B), or, where no peer can run here, a
 * published anchor marked "(published)". `ratio` is oriented so that above 1 means chaind (the
 * first design) is better: value/peer for higher-is-better figures (ops/s, tx/s), peer/value for
 * lower-is-better ones (ms, µs).
 *
 * BENCH_SMOKE=1 asks for a smoke run (a second or two per figure, to prove the bench still works,
 * not to measure): `smoke(full, small)` picks the size.
 *
 * Paired runs: a figure measured several times, A then B then B then A … (`alternate()`, PAIRS
 * pairs, BENCH_PAIRS to change), is reported with `samples`: report() takes the medians of
 * both sides, the ratio as the median of the per-pair ratios (each pair ran side by side, so load
 * that comes and goes on a shared machine hits both of a pair alike), and the spread of those
 * ratios, and records every pair in the JSON.
 */
import fs from 'node:fs';

export const SMOKE = process.env.BENCH_SMOKE === '1';

/** Alternating pairs per figure: BENCH_PAIRS, else 5 (1 in a smoke run). */
export const PAIRS = Math.max(1, Number(process.env.BENCH_PAIRS ?? (SMOKE ? 1 : 5)) || 1);

/** `full` normally, `small` under BENCH_SMOKE=1. */
export function smoke<T>(full: T, small: T): T {
  return SMOKE ? small : full;
}

/** One pair of an alternating run: the first design's value and the peer's. */
export interface Sample {
  value: number;
  peerValue: number;
}

export interface Figure {
  /** The table of latest.md it goes in: 'crypto', 'node RPC', 'EVM RPC', 'consensus', … */
  area: string;
  /** What was measured, e.g. 'keccak-256, 32 B'. */
  figure: string;
  /** The unit of value and peerValue: 'ops/s', 'req/s', 'tx/s', 'ms', 'µs', 'MB/s', … */
  unit: string;
  /** chaind's (or the first design's) value; the median when there were several runs. */
  value?: number;
  /** The peer's name, e.g. 'JS backend', 'anvil', 'bare uWS handler', 'CometBFT QA v0.38 (published)'. */
  peer: string;
  peerValue?: number;
  /**
   * Paired runs (alternate()): value, peerValue, runs and spread are then computed here, and
   * the ratio is the median of the per-pair ratios. Give either samples or value + peerValue.
   */
  samples?: readonly Sample[];
  /** 'higher' (default) or 'lower' is better. */
  better?: 'higher' | 'lower';
  /** How many runs (or pairs) the medians come from (default 1). */
  runs?: number;
  /** (max − min) / median of the per-run ratios (or values), when there were several runs. */
  spread?: number;
  /** A remark for the table (e.g. the goal). */
  note?: string;
}

export interface FigureRecord extends Required<Omit<Figure, 'spread' | 'note' | 'samples'>> {
  bench: string;
  value: number;
  peerValue: number;
  ratio: number;
  spread: number | null;
  note: string | null;
  /** The pairs, in the order they ran (null for a single run). */
  samples: Sample[] | null;
}

/** ratio > 1: the first is better. */
export function ratioOf(f: { value: number; peerValue: number; better?: 'higher' | 'lower' }): number {
  return (f.better ?? 'higher') === 'higher' ? f.value / f.peerValue : f.peerValue / f.value;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** (max − min) / median; 0 for one value. */
export function spread(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  return (Math.max(...xs) - Math.min(...xs)) / Math.abs(median(xs));
}

/** What report() makes of paired runs: the medians, and the per-pair ratios' median and spread. */
export function summarize(samples: readonly Sample[], better: 'higher' | 'lower' = 'higher') {
  const ratios = samples.map((p) => ratioOf({ ...p, better }));
  return {
    value: median(samples.map((p) => p.value)),
    peerValue: median(samples.map((p) => p.peerValue)),
    ratio: median(ratios),
    spread: spread(ratios),
    runs: samples.length,
  };
}

/**
 * Alternating runs A, B, B, A, A, B, … (`pairs` of each, default PAIRS; A and B alternate, and
 * the order flips every pair, so steady drift on a shared machine hits both alike). Returns the
 * pairs (for report()'s `samples`) and their summary.
 *
 *   const r = await alternate(runA, runB, { better: 'lower' });
 *   report({ ..., samples: r.samples, better: 'lower' });
 *
 * The older form alternate(pairs, a, b, better) still works.
 */
export async function alternate(
  a: () => number | Promise<number>,
  b: () => number | Promise<number>,
  opts?: { pairs?: number; better?: 'higher' | 'lower' },
): Promise<ReturnType<typeof summarize> & { samples: Sample[] }>;
export async function alternate(
  pairs: number,
  a: () => number | Promise<number>,
  b: () => number | Promise<number>,
  better?: 'higher' | 'lower',
): Promise<ReturnType<typeof summarize> & { samples: Sample[] }>;
export async function alternate(...args: unknown[]): Promise<ReturnType<typeof summarize> & { samples: Sample[] }> {
  type Run = () => number | Promise<number>;
  let a: Run;
  let b: Run;
  let pairs = PAIRS;
  let better: 'higher' | 'lower' = 'higher';
  if (typeof args[0] === 'number') {
    pairs = args[0];
    a = args[1] as Run;
    b = args[2] as Run;
    better = (args[3] as 'higher' | 'lower' | undefined) ?? 'higher';
  } else {
    a = args[0] as Run;
    b = args[1] as Run;
    const opts = (args[2] ?? {}) as { pairs?: number; better?: 'higher' | 'lower' };
    pairs = opts.pairs ?? PAIRS;
    better = opts.better ?? 'higher';
  }
  const samples: Sample[] = [];
  for (let i = 0; i < pairs; i++) {
    let x: number;
    let y: number;
    if (i % 2 === 0) {
      x = await a();
      y = await b();
    } else {
      y = await b();
      x = await a();
    }
    samples.push({ value: x, peerValue: y });
  }
  return { samples, ...summarize(samples, better) };
}

const bench = process.env.BENCH_NAME ?? (process.argv[1] ?? '').replace(/^.*\//, '').replace(/\.bench\.js$/, '');

/** Records one figure (and prints it). */
export function report(f: Figure): FigureRecord {
  const better = f.better ?? 'higher';
  let value: number;
  let peerValue: number;
  let ratio: number;
  let runs = f.runs ?? 1;
  let spr: number | null = f.spread ?? null;
  if (f.samples !== undefined && f.samples.length > 0) {
    const s = summarize(f.samples, better);
    ({ value, peerValue, ratio } = s);
    runs = s.runs;
    spr = s.runs > 1 ? s.spread : null;
  } else {
    if (f.value === undefined || f.peerValue === undefined) throw new Error(`report(${f.figure}): give samples, or value and peerValue`);
    value = f.value;
    peerValue = f.peerValue;
    ratio = ratioOf({ value, peerValue, better });
  }
  const rec: FigureRecord = {
    bench,
    area: f.area,
    figure: f.figure,
    unit: f.unit,
    value,
    peer: f.peer,
    peerValue,
    better,
    ratio,
    runs,
    spread: spr,
    note: f.note ?? null,
    samples: f.samples && f.samples.length > 0 ? f.samples.map((p) => ({ value: p.value, peerValue: p.peerValue })) : null,
  };
  const file = process.env.BENCH_RESULTS_FILE;
  if (file) fs.appendFileSync(file, JSON.stringify(rec) + '\n');
  const g = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(3));
  console.log(`figure: [${rec.area}] ${rec.figure}: ${g(rec.value)} ${rec.unit} vs ${rec.peer} ${g(rec.peerValue)} → ${rec.ratio.toFixed(2)}×${rec.spread !== null ? ` (spread ${(rec.spread * 100).toFixed(0)}%, ${rec.runs} runs)` : ''}`);
  return rec;
}
