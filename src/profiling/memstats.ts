/**
 * debug_memStats and debug_gcStats: Go's runtime.MemStats and debug.GCStats field names
 * (ethereum/go-ethereum:internal/debug/api.go MemStats / GcStats) filled from V8 and Node:
 * v8.getHeapStatistics(), v8.getHeapSpaceStatistics(), process.memoryUsage() and the GC entries
 * of a perf_hooks PerformanceObserver. docs/PROFILING.md has the field-by-field mapping; fields
 * with no meaning in V8 are 0 (listed there and in ZERO_FIELDS).
 */
import { constants, performance, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import v8 from 'node:v8';

/** Go keeps the last 256 pauses (runtime.MemStats.PauseNs). */
const RING = 256;

interface GcEntry {
  /** Pause length, ns. */
  pauseNs: number;
  /** End of the pause, ns since the Unix epoch. */
  endNs: number;
}

/** Every GC of this thread since the recorder started, as perf_hooks reports them. */
export class GcRecorder {
  numGC = 0;
  numForcedGC = 0;
  pauseTotalNs = 0;
  lastGcNs = 0;
  readonly startedMs = performance.now();
  /** Most recent last. */
  private readonly ring: GcEntry[] = [];
  private readonly observer: PerformanceObserver;

  constructor() {
    this.observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) this.record(e);
    });
    this.observer.observe({ entryTypes: ['gc'] });
  }

  private record(e: PerformanceEntry): void {
    const pauseNs = Math.round(e.duration * 1e6);
    const endNs = Math.round((performance.timeOrigin + e.startTime + e.duration) * 1e6);
    this.numGC++;
    const flags = (e as unknown as { detail?: { flags?: number } }).detail?.flags ?? 0;
    if (flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) this.numForcedGC++;
    this.pauseTotalNs += pauseNs;
    this.lastGcNs = endNs;
    this.ring.push({ pauseNs, endNs });
    if (this.ring.length > RING) this.ring.shift();
  }

  /** The last pauses, most recent first. */
  recent(): GcEntry[] {
    return [...this.ring].reverse();
  }

  /** Go's circular PauseNs / PauseEnd: entry (NumGC+255)%256 is the most recent. */
  circular(): { pauseNs: number[]; pauseEnd: number[] } {
    const pauseNs = new Array<number>(RING).fill(0);
    const pauseEnd = new Array<number>(RING).fill(0);
    const first = this.numGC - this.ring.length;
    this.ring.forEach((g, i) => {
      const slot = (first + i) % RING;
      pauseNs[slot] = g.pauseNs;
      pauseEnd[slot] = g.endNs;
    });
    return { pauseNs, pauseEnd };
  }

  close(): void {
    this.observer.disconnect();
  }
}

let recorder: GcRecorder | undefined;

/** The process's GC recorder, started on first use (debug namespace built: src/rpc/evm/debug-node.ts). */
export function gcRecorder(): GcRecorder {
  return (recorder ??= new GcRecorder());
}

/** Fields of Go's MemStats that have no counterpart in V8; always 0. */
export const ZERO_FIELDS = ['TotalAlloc', 'Lookups', 'Mallocs', 'Frees', 'HeapObjects', 'StackInuse', 'StackSys', 'MSpanInuse', 'MSpanSys', 'MCacheInuse', 'MCacheSys', 'BuckHashSys', 'NextGC', 'DebugGC'] as const;

/** Go's size classes (runtime/sizeclasses.go has 68 since Go 1.x; MemStats.BySize keeps 61). */
const BY_SIZE = 61;

export function memStats(rec: GcRecorder = gcRecorder()): Record<string, unknown> {
  const h = v8.getHeapStatistics();
  const mu = process.memoryUsage();
  const { pauseNs, pauseEnd } = rec.circular();
  const elapsedNs = Math.max(1, (performance.now() - rec.startedMs) * 1e6);
  return {
    // Bytes of live (and not yet collected) JS objects: V8's used heap size.
    Alloc: h.used_heap_size,
    TotalAlloc: 0,
    // Bytes the process holds from the OS: resident set size.
    Sys: mu.rss,
    Lookups: 0,
    Mallocs: 0,
    Frees: 0,
    HeapAlloc: h.used_heap_size,
    // Bytes reserved for the JS heap (all spaces).
    HeapSys: h.total_heap_size,
    // Reserved but not holding objects.
    HeapIdle: Math.max(0, h.total_heap_size - h.used_heap_size),
    // Heap pages committed and resident.
    HeapInuse: h.total_physical_size,
    // Reserved heap not backed by physical memory.
    HeapReleased: Math.max(0, h.total_heap_size - h.total_physical_size),
    HeapObjects: 0,
    StackInuse: 0,
    StackSys: 0,
    MSpanInuse: 0,
    MSpanSys: 0,
    MCacheInuse: 0,
    MCacheSys: 0,
    BuckHashSys: 0,
    // V8's malloc'd memory for its own use (GC bookkeeping among it).
    GCSys: h.malloced_memory,
    // Memory of C++ objects bound to JS (Buffers, ArrayBuffers, the native addons' objects).
    OtherSys: mu.external,
    NextGC: 0,
    LastGC: rec.lastGcNs,
    PauseTotalNs: rec.pauseTotalNs,
    PauseNs: pauseNs,
    PauseEnd: pauseEnd,
    NumGC: rec.numGC,
    NumForcedGC: rec.numForcedGC,
    // Share of wall time spent in GC pauses since the recorder started.
    GCCPUFraction: rec.pauseTotalNs / elapsedNs,
    EnableGC: true,
    DebugGC: false,
    BySize: Array.from({ length: BY_SIZE }, () => ({ Size: 0, Mallocs: 0, Frees: 0 })),
  };
}

/** Go's time.Time JSON: RFC 3339 with nanoseconds, UTC. */
export function rfc3339Nano(ns: number): string {
  if (ns === 0) return '0001-01-01T00:00:00Z';
  const ms = Math.floor(ns / 1e6);
  const frac = Math.round(ns - ms * 1e6);
  const iso = new Date(ms).toISOString(); // 2026-01-02T03:04:05.678Z
  const digits = `${iso.slice(20, 23)}${String(frac).padStart(6, '0')}`.replace(/0+$/, '');
  return `${iso.slice(0, 19)}${digits === '' ? '' : `.${digits}`}Z`;
}

/** debug.GCStats: LastGC, NumGC, PauseTotal, Pause and PauseEnd (most recent first), PauseQuantiles. */
export function gcStats(rec: GcRecorder = gcRecorder()): Record<string, unknown> {
  const recent = rec.recent();
  return {
    LastGC: rfc3339Nano(rec.lastGcNs),
    NumGC: rec.numGC,
    PauseTotal: rec.pauseTotalNs,
    Pause: recent.map((g) => g.pauseNs),
    PauseEnd: recent.map((g) => rfc3339Nano(g.endNs)),
    // geth reads GCStats with a nil PauseQuantiles slice.
    PauseQuantiles: null,
  };
}
