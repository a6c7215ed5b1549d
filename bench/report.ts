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
 */
import fs from 'node:fs';

export const SMOKE = process.env.BENCH_SMOKE === '1';

/** `full` normally, `small` under BENCH_SMOKE=1. */
export function smoke<T>(full: T, small: T): T {
  return SMOKE ? small : full;
}

export interface Figure {
  /** The table of latest.md it goes in: 'crypto', 'node RPC', 'EVM RPC', 'consensus', … */
  area: string;
  /** What was measured, e.g. 'keccak-256, 32 B'. */
  figure: string;
  /** The unit of value and peerValue: 'ops/s', 'req/s', 'tx/s', 'ms', 'µs', 'MB/s', … */
  unit: string;
  /** chaind's (or the first design's) value; the median when there were several runs. */
  value: number;
  /** The peer's name, e.g. 'JS backend', 'anvil', 'bare uWS handler', 'CometBFT QA v0.38 (published)'. */
  peer: string;
  peerValue: number;
  /** 'higher' (default) or 'lower' is better. */
  better?: 'higher' | 'lower';
  /** How many runs (or pairs) the medians come from (default 1). */
  runs?: number;
  /** (max − min) / median of the per-run ratios (or values), when there were several runs. */
  spread?: number;
  /** A remark for the table (e.g. the goal). */
  note?: string;
}

export interface FigureRecord extends Required<Omit<Figure, 'spread' | 'note'>> {
  bench: string;
  ratio: number;
  spread: number | null;
  note: string | null;
}

/** ratio > 1: the first is better. */
export function ratioOf(f: Pick<Figure, 'value' | 'peerValue' | 'better'>): number {
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

/**
 * Alternating runs A, B, B, A, A, B, … (`pairs` of each; the order flips every pair, so drift
 * on a shared machine hits both alike): the medians, the per-pair ratios' median and spread.
 */
export async function alternate(pairs: number, a: () => number | Promise<number>, b: () => number | Promise<number>, better: 'higher' | 'lower' = 'higher') {
  const as: number[] = [];
  const bs: number[] = [];
  const ratios: number[] = [];
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
    as.push(x);
    bs.push(y);
    ratios.push(ratioOf({ value: x, peerValue: y, better }));
  }
  return { value: median(as), peerValue: median(bs), ratio: median(ratios), spread: spread(ratios), runs: pairs };
}

const bench = process.env.BENCH_NAME ?? (process.argv[1] ?? '').replace(/^.*\//, '').replace(/\.bench\.js$/, '');

/** Records one figure (and prints it). */
export function report(f: Figure): FigureRecord {
  const rec: FigureRecord = {
    bench,
    area: f.area,
    figure: f.figure,
    unit: f.unit,
    value: f.value,
    peer: f.peer,
    peerValue: f.peerValue,
    better: f.better ?? 'higher',
    ratio: ratioOf(f),
    runs: f.runs ?? 1,
    spread: f.spread ?? null,
    note: f.note ?? null,
  };
  const file = process.env.BENCH_RESULTS_FILE;
  if (file) fs.appendFileSync(file, JSON.stringify(rec) + '\n');
  const g = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(3));
  console.log(`figure: [${rec.area}] ${rec.figure}: ${g(rec.value)} ${rec.unit} vs ${rec.peer} ${g(rec.peerValue)} → ${rec.ratio.toFixed(2)}×${rec.spread !== null ? ` (spread ${(rec.spread * 100).toFixed(0)}%, ${rec.runs} runs)` : ''}`);
  return rec;
}
