/**
 * The main thread's scheduler slice: short, so that a request wakes it onto a core at once while
 * the executor thread computes a block there.
 *
 * Linux's EEVDF scheduler (6.6+) lets the running thread finish its slice (about 0.7 ms × (1 +
 * log2 cores), 1.4 ms on 2 cores) before a thread that wakes up runs, unless the waking thread
 * asked for a shorter slice than the running one (6.12+: sched_setattr's sched_runtime for
 * SCHED_OTHER). The slice changes when a thread runs, not how much: the share of the CPU is the
 * weight (nice), which stays as it was, so the executor loses no throughput to it. Only this thread
 * gets it: threads it starts later begin with the kernel's default (reset on fork).
 *
 * Measured on the 2-core machine (bench/exec-latency.bench.ts, 3 blocks of 5,000 bank sends per
 * run, alternating runs, 2026-11-27): /status p99 while a block executes 9.7 and 7.9 ms (median
 * of each run's 3 blocks) with a 0.1 ms slice, 19.7 and 13.3 ms with the kernel's default; gRPC
 * Balance 15.7 and 11.9 ms against 24.1 and 22.4 ms. perf sched showed the main thread runnable
 * but waiting for a core for up to 18 ms at a time during the block.
 *
 * The call goes through the native addon (native/src/sched.rs: Node has no API for it); without
 * the addon, on another OS or on an older kernel the slice stays the kernel's default.
 */
import { loadNativeAddon, type NativeAddon } from '../crypto/native.js';

/** What applyThreadSlice did: the slice now in force (ns; null when unknown) and why not, if not. */
export interface SliceResult {
  applied: boolean;
  sliceNs: number | null;
  reason?: string;
}

/**
 * Sets the calling thread's slice to `us` µs (0: leaves the kernel's default). `addon` is for
 * tests; by default the node's addon (CHAIND_NATIVE_PATH or native/).
 */
export function applyThreadSlice(us: number, addon?: Pick<NativeAddon, 'threadSlice'>): SliceResult {
  if (us === 0) return { applied: false, sliceNs: null, reason: 'CHAIND_MAIN_SLICE_US=0' };
  if (process.platform !== 'linux') return { applied: false, sliceNs: null, reason: `not Linux (${process.platform})` };
  let a: Pick<NativeAddon, 'threadSlice'>;
  try {
    a = addon ?? loadNativeAddon();
  } catch (e) {
    return { applied: false, sliceNs: null, reason: (e as Error).message };
  }
  if (typeof a.threadSlice !== 'function') return { applied: false, sliceNs: null, reason: 'the native addon predates threadSlice(); rebuild it' };
  const ns = a.threadSlice(us * 1000);
  if (ns < 0) return { applied: false, sliceNs: null, reason: `sched_setattr failed (errno ${-ns})` };
  // A kernel before 6.12 keeps its own value for this policy: the read-back says so.
  if (ns !== us * 1000) return { applied: false, sliceNs: ns, reason: `the kernel kept ${ns} ns (custom slices need Linux 6.12+)` };
  return { applied: true, sliceNs: ns };
}
