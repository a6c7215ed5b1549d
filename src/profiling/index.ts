/**
 * Profiling the running node (issue 12 part 3): geth's Go-runtime debug_ methods
 * (ethereum/go-ethereum:internal/debug/api.go HandlerT) mapped to V8 and Node. One profiler per
 * process (the isolates are the process's), used by src/rpc/evm/debug-node.ts; files only under
 * the profiles directory (files.ts).
 *
 * - CPU: node:inspector Profiler on the main thread and, through the NodeWorker domain, on every
 *   worker thread (threads.ts); one `.cpuprofile` per thread (Chrome DevTools, speedscope).
 * - Memory: a V8 heap snapshot (`.heapsnapshot`, DevTools' Memory tab) of every thread; memStats
 *   and gcStats (memstats.ts); a full GC of every thread (HeapProfiler.collectGarbage).
 * - Stacks: the main thread's stack at the call, and each worker's current stack (Debugger.pause,
 *   read, resume at once; a worker with no JavaScript running is reported idle).
 * - Trace: the node's own spans (spans.ts) as Chrome trace-event JSON.
 * - Block / mutex profiles: waits.ts.
 */
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { threadId } from 'node:worker_threads';
import { ProfilesDir, threadFileName } from './files.js';
import { LANE, startSpans, stopSpans, tracing, type TraceEvent } from './spans.js';
import { ThreadInspector, type WorkerInfo } from './threads.js';

export { ProfilePathError, ProfilesDir } from './files.js';

export class ProfilingError extends Error {
  readonly code = 'PROFILING';
  constructor(message: string) {
    super(message);
    this.name = 'ProfilingError';
  }
}

/** A worker's file tag: `worker-<threadId>`, then its name when it has one (`[worker 3] busy` → `worker-3-busy`). */
export function workerTag(w: WorkerInfo): string {
  const id = threadOf(w);
  const name = w.title.replace(/^\[worker \d+\]\s*/, '').replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 40);
  return name === '' || name === '_' ? `worker-${id}` : `worker-${id}-${name}`;
}

/** The worker's threadId, from its inspector title `[worker <threadId>] <name>`. */
export function threadOf(w: WorkerInfo): string {
  return /^\[worker (\d+)\]/.exec(w.title)?.[1] ?? w.workerId;
}

interface CpuRun {
  file: string;
  dir: ProfilesDir;
  insp: ThreadInspector;
  /** Workers the profiler was started on (session id → info). */
  started: Map<string, WorkerInfo>;
  startedAt: number;
}

export class NodeProfiler {
  private cpu: CpuRun | null = null;
  private cpuStarting = false;
  private trace: { file: string; dir: ProfilesDir; startedAt: number } | null = null;
  private heapBusy = false;

  // ------------------------------------------------------------------ CPU

  /** geth's StartCPUProfile: profiling every thread until stopCpuProfile. */
  async startCpuProfile(dir: ProfilesDir, file: string): Promise<void> {
    if (this.cpu !== null || this.cpuStarting) throw new ProfilingError('CPU profiling already in progress');
    // Refuse a bad name before anything starts.
    dir.checkName(file);
    dir.resolve(threadFileName(file, 'main', '.cpuprofile'));
    this.cpuStarting = true;
    let insp: ThreadInspector | undefined;
    try {
      insp = await ThreadInspector.open();
      const run: CpuRun = { file, dir, insp, started: new Map(), startedAt: Date.now() };
      await insp.main('Profiler.enable');
      await insp.main('Profiler.start');
      const startOn = async (w: WorkerInfo) => {
        try {
          await insp!.worker(w.sessionId, 'Profiler.enable', {}, 10_000);
          await insp!.worker(w.sessionId, 'Profiler.start', {}, 10_000);
          run.started.set(w.sessionId, w);
        } catch {
          // The worker exited meanwhile: no profile for it.
        }
      };
      // Threads the pool starts while profiling are profiled from then on.
      insp.onAttach((w) => void startOn(w));
      await Promise.all([...insp.workers.values()].map(startOn));
      this.cpu = run;
    } catch (e) {
      await insp?.close();
      throw e;
    } finally {
      this.cpuStarting = false;
    }
  }

  /** geth's StopCPUProfile; returns the files written (main thread first). */
  async stopCpuProfile(): Promise<string[]> {
    const run = this.cpu;
    if (run === null) throw new ProfilingError('CPU profiling not in progress');
    this.cpu = null;
    const files: string[] = [];
    try {
      const main = await run.insp.main<{ profile: unknown }>('Profiler.stop');
      files.push(run.dir.write(threadFileName(run.file, 'main', '.cpuprofile'), JSON.stringify(main.profile)));
      for (const w of run.started.values()) {
        try {
          const r = await run.insp.worker<{ profile: unknown }>(w.sessionId, 'Profiler.stop', {}, 30_000);
          files.push(run.dir.write(threadFileName(run.file, workerTag(w), '.cpuprofile'), JSON.stringify(r.profile)));
        } catch {
          // The thread ended before the stop (its profile went with it).
        }
      }
    } finally {
      await run.insp.main('Profiler.disable').catch(() => undefined);
      await run.insp.close();
    }
    return files;
  }

  cpuProfiling(): boolean {
    return this.cpu !== null || this.cpuStarting;
  }

  /** geth's CpuProfile(file, nsec): start, wait, stop. */
  async cpuProfile(dir: ProfilesDir, file: string, seconds: number): Promise<string[]> {
    await this.startCpuProfile(dir, file);
    await sleep(seconds * 1000);
    return this.stopCpuProfile();
  }

  // ------------------------------------------------------------------ heap

  /** A heap snapshot of every thread: `<file>.main.heapsnapshot`, `<file>.worker-<id>.heapsnapshot`. */
  async writeHeapSnapshots(dir: ProfilesDir, file: string): Promise<string[]> {
    if (this.heapBusy) throw new ProfilingError('heap snapshot already in progress');
    dir.checkName(file);
    dir.resolve(threadFileName(file, 'main', '.heapsnapshot'));
    this.heapBusy = true;
    const insp = await ThreadInspector.open().catch((e) => {
      this.heapBusy = false;
      throw e;
    });
    const files: string[] = [];
    try {
      {
        const out = dir.open(threadFileName(file, 'main', '.heapsnapshot'));
        const off = insp.onMain('HeapProfiler.addHeapSnapshotChunk', (p: { chunk: string }) => fs.writeFileSync(out.fd, p.chunk));
        try {
          await insp.main('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
        } finally {
          off();
          fs.closeSync(out.fd);
        }
        files.push(out.path);
      }
      for (const w of [...insp.workers.values()]) {
        const out = dir.open(threadFileName(file, workerTag(w), '.heapsnapshot'));
        const off = insp.onWorker('HeapProfiler.addHeapSnapshotChunk', (sid, p: { chunk: string }) => {
          if (sid === w.sessionId) fs.writeFileSync(out.fd, p.chunk);
        });
        try {
          await insp.worker(w.sessionId, 'HeapProfiler.takeHeapSnapshot', { reportProgress: false }, 120_000);
          files.push(out.path);
        } catch {
          fs.rmSync(out.path, { force: true }); // the thread ended: no partial file
        } finally {
          off();
          fs.closeSync(out.fd);
        }
      }
    } finally {
      this.heapBusy = false;
      await insp.close();
    }
    return files;
  }

  /** A full, forced GC of every thread (geth's FreeOSMemory: debug.FreeOSMemory); how many threads collected. */
  async collectGarbage(): Promise<number> {
    const insp = await ThreadInspector.open();
    let threads = 1;
    try {
      await insp.main('HeapProfiler.collectGarbage');
      for (const w of [...insp.workers.values()]) {
        try {
          // Not HeapProfiler.collectGarbage: V8 runs it as a platform task, which a pool thread
          // parked in Piscina's Atomics.wait loop never gets to. An evaluation runs at once (an
          // interrupt); the inspector's command-line API gives it `require`, and a full GC is
          // `gc` from a context made after --expose-gc (a process-wide V8 flag).
          const r = await insp.worker<{ exceptionDetails?: unknown }>(w.sessionId, 'Runtime.evaluate', { expression: WORKER_GC, includeCommandLineAPI: true, returnByValue: true }, 30_000);
          if (r.exceptionDetails === undefined) threads++;
        } catch {
          // ended meanwhile
        }
      }
    } finally {
      await insp.close();
    }
    return threads;
  }

  // ------------------------------------------------------------------ stacks

  /**
   * The JS stacks of every thread as text, one block per thread (geth's Stacks: all goroutines).
   * `filter`: a regular expression; only threads whose block matches are kept.
   */
  async stacks(filter?: string): Promise<string> {
    let re: RegExp | undefined;
    if (filter !== undefined && filter !== '') {
      try {
        re = new RegExp(filter);
      } catch (e) {
        throw new ProfilingError(`invalid filter: ${(e as Error).message}`);
      }
    }
    const blocks: string[] = [];
    const here = (new Error().stack ?? '').split('\n').slice(1).map((l) => `    ${l.trim()}`);
    blocks.push(`thread ${threadId} [main, running: this debug_stacks call]:\n${here.join('\n')}`);
    const insp = await ThreadInspector.open();
    try {
      for (const w of [...insp.workers.values()]) blocks.push(await this.workerStack(insp, w));
    } finally {
      await insp.close();
    }
    return `${blocks.filter((b) => re === undefined || re.test(b)).join('\n\n')}\n`;
  }

  private async workerStack(insp: ThreadInspector, w: WorkerInfo): Promise<string> {
    const head = `thread ${threadOf(w)} [${w.title}`;
    let off: (() => void) | undefined;
    try {
      await insp.worker(w.sessionId, 'Debugger.enable', {}, 10_000);
      const paused = new Promise<any>((resolve) => {
        off = insp.onWorker('Debugger.paused', (sid, p) => {
          if (sid === w.sessionId) resolve(p);
        });
      });
      insp.send(w.sessionId, 'Debugger.pause');
      // A worker running JavaScript pauses at once; an idle one only when it next runs some.
      const p = await Promise.race([paused, sleep(250).then(() => null)]);
      if (p === null) return `${head}, idle: no JavaScript running (waiting for a task)]`;
      insp.send(w.sessionId, 'Debugger.resume');
      const frames = (p.callFrames as any[]).map((f) => {
        const fn = f.functionName || '<anonymous>';
        return `    at ${fn} (${f.url || '<eval>'}:${f.location.lineNumber + 1}:${(f.location.columnNumber ?? 0) + 1})`;
      });
      return `${head}, running]:\n${frames.join('\n')}`;
    } catch (e) {
      return `${head}, stack unavailable: ${(e as Error).message}]`;
    } finally {
      off?.();
      // Disabling drops a pause still pending on an idle worker and resumes a paused one.
      await insp.worker(w.sessionId, 'Debugger.disable', {}, 10_000).catch(() => undefined);
    }
  }

  // ------------------------------------------------------------------ trace

  /** geth's StartGoTrace: record the node's spans (spans.ts) until stopTrace. */
  startTrace(dir: ProfilesDir, file: string): void {
    if (this.trace !== null || tracing()) throw new ProfilingError('trace already in progress');
    dir.resolve(file);
    this.trace = { file, dir, startedAt: Date.now() };
    startSpans();
  }

  /** geth's StopGoTrace: writes the Chrome trace-event JSON; returns its path. */
  stopTrace(): string {
    const t = this.trace;
    if (t === null) throw new ProfilingError('trace not in progress');
    this.trace = null;
    const { events, dropped } = stopSpans();
    return t.dir.write(t.file, JSON.stringify(traceDocument(events, dropped)));
  }

  async goTrace(dir: ProfilesDir, file: string, seconds: number): Promise<string> {
    this.startTrace(dir, file);
    await sleep(seconds * 1000);
    return this.stopTrace();
  }
}

/** The trace-event document: metadata naming the process and lanes, then the spans. */
export function traceDocument(events: TraceEvent[], dropped: number): Record<string, unknown> {
  const pid = process.pid;
  const meta = (name: string, tid: number, args: Record<string, unknown>): TraceEvent => ({ name, cat: '__metadata', ph: 'M', ts: 0, pid, tid, args });
  const tids = new Set(events.map((e) => e.tid));
  const lanes: TraceEvent[] = [meta('process_name', 0, { name: `chaind (pid ${pid})` })];
  for (const tid of tids) {
    const name = tid === LANE.pool ? 'worker pool jobs' : tid === 0 ? 'main thread' : `thread ${tid}`;
    lanes.push(meta('thread_name', tid, { name }));
  }
  return { traceEvents: [...lanes, ...events], displayTimeUnit: 'ms', otherData: { producer: 'chaind debug_goTrace', droppedEvents: dropped } };
}

/** A full GC of the evaluating thread (see collectGarbage). */
const WORKER_GC = "(() => { require('v8').setFlagsFromString('--expose-gc'); require('vm').runInNewContext('gc')(); return true; })()";

let profiler: NodeProfiler | undefined;

/** The process's profiler. */
export function nodeProfiler(): NodeProfiler {
  return (profiler ??= new NodeProfiler());
}
