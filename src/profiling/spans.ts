/**
 * The node's own spans for debug_goTrace / debug_startGoTrace (src/profiling/trace.ts): block
 * execution phases, consensus steps, RPC handling and worker-pool jobs, recorded as Chrome
 * trace events ("X" complete events, microseconds; the format of
 * https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU, which Perfetto
 * and chrome://tracing open).
 *
 * Imports nothing of chaind: any layer may call it. When no trace is running every call is a
 * branch on one boolean (spanBegin returns -1 and spanEnd returns at once), so call sites stay in
 * hot paths:
 *
 *   const t = spanBegin();
 *   ... work ...
 *   spanEnd(t, 'finalizeBlock', 'block', { height: String(h) });
 */
import { performance } from 'node:perf_hooks';
import { threadId } from 'node:worker_threads';

export interface TraceEvent {
  name: string;
  cat: string;
  ph: 'X' | 'i' | 'M';
  /** Microseconds since the Unix epoch. */
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  s?: 't' | 'p' | 'g';
  args?: Record<string, unknown>;
}

/** Lanes beside the thread's own: spans of work handed to the pool, seen from the main thread. */
export const LANE = { main: 0, pool: 1_000_000 } as const;

/** Most events one trace keeps; later ones are counted as dropped. */
export const MAX_EVENTS = 500_000;

const state = {
  on: false,
  events: [] as TraceEvent[],
  dropped: 0,
};

const origin = performance.timeOrigin;
/** Microseconds since the epoch, sub-millisecond precise. */
export const nowUs = (): number => Math.round((origin + performance.now()) * 1000);

/** True while a trace records. */
export function tracing(): boolean {
  return state.on;
}

/** Starts recording (clears what an earlier trace left). */
export function startSpans(): void {
  state.events = [];
  state.dropped = 0;
  state.on = true;
}

/** Stops recording and hands back what was recorded. */
export function stopSpans(): { events: TraceEvent[]; dropped: number } {
  // Steps still open end now.
  for (const seq of [...steps.keys()]) spanStep(seq, '');
  steps.clear();
  state.on = false;
  const out = { events: state.events, dropped: state.dropped };
  state.events = [];
  state.dropped = 0;
  return out;
}

function push(e: TraceEvent): void {
  if (state.events.length >= MAX_EVENTS) state.dropped++;
  else state.events.push(e);
}

/** A span's start (µs), or -1 when not tracing. */
export function spanBegin(): number {
  return state.on ? nowUs() : -1;
}

/** Ends a span begun with spanBegin; nothing when it was begun while not tracing. */
export function spanEnd(begin: number, name: string, cat: string, args?: Record<string, unknown>, lane?: number): void {
  if (begin < 0 || !state.on) return;
  const e: TraceEvent = { name, cat, ph: 'X', ts: begin, dur: Math.max(0, nowUs() - begin), pid: process.pid, tid: lane ?? threadId };
  if (args !== undefined) e.args = args;
  push(e);
}

/** A point in time (e.g. a consensus step entered). */
export function spanMark(name: string, cat: string, args?: Record<string, unknown>): void {
  if (!state.on) return;
  const e: TraceEvent = { name, cat, ph: 'i', s: 't', ts: nowUs(), pid: process.pid, tid: threadId };
  if (args !== undefined) e.args = args;
  push(e);
}

/** Runs `fn` inside a span (sync or async: a promise's span ends when it settles). */
export function withSpan<T>(name: string, cat: string, fn: () => T, args?: Record<string, unknown>): T {
  const t = spanBegin();
  if (t < 0) return fn();
  let r: T;
  try {
    r = fn();
  } catch (e) {
    spanEnd(t, name, cat, { ...args, error: true });
    throw e;
  }
  if (r instanceof Promise) {
    return r.then(
      (v) => (spanEnd(t, name, cat, args), v),
      (e) => {
        spanEnd(t, name, cat, { ...args, error: true });
        throw e;
      },
    ) as T;
  }
  spanEnd(t, name, cat, args);
  return r;
}

/** The open span of each sequence (spanStep). */
const steps = new Map<string, { begin: number; name: string; args: Record<string, unknown> | undefined }>();

/**
 * One step of a sequence (e.g. the consensus state machine): ends the sequence's previous step's
 * span and begins this one, so each step shows as long as it lasted.
 */
export function spanStep(seq: string, name: string, args?: Record<string, unknown>): void {
  if (!state.on) {
    if (steps.size > 0) steps.clear();
    return;
  }
  const now = nowUs();
  const prev = steps.get(seq);
  if (prev !== undefined) {
    const e: TraceEvent = { name: prev.name, cat: seq, ph: 'X', ts: prev.begin, dur: Math.max(0, now - prev.begin), pid: process.pid, tid: threadId };
    if (prev.args !== undefined) e.args = prev.args;
    push(e);
  }
  steps.set(seq, { begin: now, name, args });
}
