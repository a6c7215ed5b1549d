/**
 * What chaind has in place of Go's block and mutex profiles (debug_blockProfile,
 * debug_mutexProfile and their set/write forms). Node has no goroutines blocking on channels or
 * mutexes; the nearest real things are:
 *
 * - block profile: how long the main thread's event loop was blocked (perf_hooks
 *   monitorEventLoopDelay: every callback that ran long delays every timer and socket behind it);
 * - mutex profile: how long work waited for a shared resource: a job waiting for a worker-pool
 *   thread (queued in Piscina, sent to the thread, until it starts there), recorded by
 *   src/pool/piscina.ts through recordWait().
 *
 * Each is a set of histograms (ns), written as JSON (not pprof: no Go tool reads these anyway).
 * Imports nothing of chaind: the pool calls recordWait(), a no-op while the profile is off.
 */
import { createHistogram, monitorEventLoopDelay, type IntervalHistogram, type RecordableHistogram } from 'node:perf_hooks';

export type WaitKind = 'pool-queue';

const waits = {
  /** Go's mutex profile fraction (0: off). */
  fraction: 0,
  since: 0,
  hist: new Map<WaitKind, RecordableHistogram>(),
};

/** Records a wait of `ns` nanoseconds (no-op unless the mutex profile is on). */
export function recordWait(kind: WaitKind, ns: number): void {
  if (waits.fraction <= 0) return;
  let h = waits.hist.get(kind);
  if (h === undefined) waits.hist.set(kind, (h = createHistogram()));
  h.record(Math.max(1, Math.round(ns)));
}

/** debug_setMutexProfileFraction: > 0 records (anew), 0 stops; the previous fraction. */
export function setMutexProfileFraction(rate: number): number {
  const prev = waits.fraction;
  waits.fraction = Math.max(0, Math.trunc(rate));
  if (waits.fraction > 0 && prev <= 0) {
    waits.hist.clear();
    waits.since = Date.now();
  }
  return prev;
}

export function mutexProfileFraction(): number {
  return waits.fraction;
}

type Hist = Pick<RecordableHistogram, 'count' | 'min' | 'max' | 'mean' | 'stddev' | 'percentile'> & { exceeds?: number };

function summary(h: Hist): Record<string, unknown> {
  const count = Number(h.count);
  if (count === 0) return { count: 0 };
  const pct = (p: number) => h.percentile(p);
  return {
    count,
    minNs: h.min,
    maxNs: h.max,
    meanNs: Math.round(h.mean),
    stddevNs: Math.round(h.stddev),
    totalNs: Math.round(h.mean * count),
    percentilesNs: { p50: pct(50), p90: pct(90), p99: pct(99), p999: pct(99.9) },
    ...(h.exceeds ? { exceeds: h.exceeds } : {}),
  };
}

/** The mutex profile document; throws when the profile is off and nothing was recorded. */
export function mutexProfile(): Record<string, unknown> {
  if (waits.fraction <= 0 && waits.hist.size === 0) {
    throw new Error('mutex profiling is off: debug_setMutexProfileFraction(1) turns it on (chaind records time jobs wait for a worker-pool thread)');
  }
  const hist: Record<string, unknown> = {};
  for (const k of ['pool-queue'] as WaitKind[]) hist[k] = summary(waits.hist.get(k) ?? createHistogram());
  return {
    profile: 'chaind mutex profile: time work waited for a shared resource',
    since: new Date(waits.since).toISOString(),
    until: new Date().toISOString(),
    fraction: waits.fraction,
    waits: hist,
    legend: { 'pool-queue': 'a worker-pool job, from being handed to Piscina until it started on a thread' },
  };
}

const block = {
  rate: 0,
  since: 0,
  monitor: undefined as IntervalHistogram | undefined,
};

/**
 * debug_setBlockProfileRate: > 0 starts (anew) an event-loop delay histogram sampling every
 * max(1, rate / 1e6) ms, capped at 1000 ms (Go's rate is in ns); 0 stops it (the last one is kept
 * for writeBlockProfile).
 */
export function setBlockProfileRate(rate: number): void {
  const r = Math.max(0, Math.trunc(rate));
  if (r > 0) {
    block.monitor?.disable();
    const resolution = Math.min(1000, Math.max(1, Math.round(r / 1e6)));
    block.monitor = monitorEventLoopDelay({ resolution });
    block.monitor.enable();
    block.since = Date.now();
  } else block.monitor?.disable();
  block.rate = r;
}

export function blockProfileRate(): number {
  return block.rate;
}

/** The block profile document; throws when it was never turned on. */
export function blockProfile(): Record<string, unknown> {
  const m = block.monitor;
  if (m === undefined) {
    throw new Error('block profiling is off: debug_setBlockProfileRate(1) turns it on (chaind measures how long the main event loop is blocked)');
  }
  return {
    profile: 'chaind block profile: main-thread event-loop delay (perf_hooks.monitorEventLoopDelay)',
    since: new Date(block.since).toISOString(),
    until: new Date().toISOString(),
    rate: block.rate,
    eventLoopDelay: summary(m),
    legend: { eventLoopDelay: 'how late the event loop ran a timer set to fire every resolution ms: time it was blocked by running code' },
  };
}
