/**
 * The worker-thread pool: batches signature items into jobs and runs them on Piscina workers
 * (workers/crypto.worker.ts). Structure after lodestar's BLS pool (ChainSafe/lodestar
 * packages/beacon-node/src/chain/bls/multithread/index.ts): small calls are buffered and merged,
 * big calls are chunked, jobs carry timestamps back, and a bounded queue gives back-pressure.
 * The constants and the costs behind them are in ./constants.ts.
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { cryptoBackendSetting, type CryptoBackendSetting } from '../crypto/backend.js';
import { LANE, spanBegin, spanEnd } from '../profiling/spans.js';
import { recordWait } from '../profiling/waits.js';
import { IDLE_TIMEOUT_MS, MAX_BUFFER_WAIT_MS, MAX_ITEMS_PER_JOB, MAX_QUEUED_JOBS, MIN_ITEMS_TO_SKIP_BUFFER } from './constants.js';
import { nowMs, observeJob, packJob, recoverPoolItem, ResultCode, sigPoolItem, type CryptoJob, type CryptoJobResult, type PoolItem } from './job.js';
import {
  CryptoPoolError,
  type CryptoPool,
  type CryptoPoolModules,
  type CryptoPoolOptions,
  type RecoverItem,
  type SigItem,
} from './types.js';

/** Compiled worker: dist/src/pool/piscina.js -> dist/workers/crypto.worker.js. */
export const CRYPTO_WORKER_URL = new URL('../../workers/crypto.worker.js', import.meta.url);

/**
 * The pool threads' Node options: the process's own, with require() of ES modules turned off.
 * Piscina's worker loads the task module with require() first and falls back to import(). On Node
 * 20.19+ require() of our ES module succeeds, synchronously; a thread terminated (the pool closed,
 * as at every node stop) while that synchronous load instantiates the module graph aborts the
 * whole process: node 20.20's ModuleWrap::InstantiateSync skips its error return on a termination
 * and calls IsGraphAsync() on the uninstantiated module ("FATAL ERROR: v8::Module::IsGraphAsync
 * must be used on an instantiated module", nodejs/node:src/module_wrap.cc). With require(esm) off,
 * piscina takes its import() path, which a termination ends cleanly. Nothing the threads load
 * needs require(esm): the only CommonJS-to-ES-module require in them was piscina's own.
 */
const POOL_EXEC_ARGV = process.allowedNodeEnvironmentFlags.has('--experimental-require-module')
  ? [...workerExecArgv(process.execArgv).filter((a) => !/^--(no-)?experimental-require-module$/.test(a)), '--no-experimental-require-module']
  : workerExecArgv(process.execArgv);

/**
 * The process's Node options without V8's own flags. A worker given `execArgv` refuses V8 flags
 * (`node --max-old-space-size=4096 …/main.js start` failed: "Initiated Worker with invalid execArgv
 * flags"); they are process-wide and reach the worker's isolate anyway. V8's flag names come from
 * `node --v8-options`, read only when the process was started with flags outside the common Node
 * ones below (as a test runner's --import or a bench's --cpu-prof).
 */
export function workerExecArgv(argv: readonly string[], v8Flags: () => ReadonlySet<string> = v8FlagNames): string[] {
  const plainNode = /^--(import|require|loader|experimental-|no-experimental-|enable-source-maps|conditions|cpu-prof|heap-prof|inspect|no-warnings|no-deprecation|trace-warnings|trace-uncaught|unhandled-rejections)/;
  const out: string[] = [];
  let set: ReadonlySet<string> | undefined;
  for (const a of argv) {
    if (a.startsWith('--') && !plainNode.test(a)) {
      set ??= v8Flags();
      const name = a.slice(2).split('=')[0]!.replace(/_/g, '-');
      if (set.has(name) || (name.startsWith('no-') && set.has(name.slice(3)))) continue;
    }
    out.push(a);
  }
  return out;
}

function v8FlagNames(): ReadonlySet<string> {
  const r = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
  return new Set(Array.from((r.stdout ?? '').matchAll(/^ {2}--([a-z0-9-]+) /gm), (m) => m[1]!));
}

/** What the worker reads from Piscina's workerData. */
export interface CryptoWorkerData {
  crypto: CryptoBackendSetting;
}

/** One caller's slice of a job result. */
interface Slice {
  codes: Uint8Array;
  addresses: Uint8Array | null;
}

/** A caller waiting on buffered items. */
interface Waiter {
  start: number;
  count: number;
  resolve: (s: Slice) => void;
  reject: (e: unknown) => void;
}

/**
 * Leave one core to the main thread, which parses RPC, runs consensus and the EVM (lodestar's
 * poolSize.ts does the same): on the 2-core reference machine that is a single worker.
 */
export function defaultThreadCount(): number {
  return Math.max(1, availableParallelism() - 1);
}

export class PiscinaCryptoPool implements CryptoPool {
  readonly kind = 'piscina' as const;
  readonly threads: number;
  private readonly pool: Piscina<CryptoJob, CryptoJobResult>;
  private readonly maxItemsPerJob: number;
  private readonly maxBufferWaitMs: number;
  private readonly maxQueuedJobs: number;
  private bufferItems: PoolItem[] = [];
  private bufferWaiters: Waiter[] = [];
  private bufferTimer: NodeJS.Timeout | null = null;
  /** Jobs handed to Piscina and not yet settled (queued in Piscina or running). */
  private jobsPending = 0;
  private readonly settling = new Set<Promise<unknown>>();
  private closed = false;
  private closing: Promise<void> | null = null;

  constructor(
    opts: Omit<CryptoPoolOptions, 'kind'> = {},
    private readonly modules: CryptoPoolModules = {},
  ) {
    this.threads = Math.max(1, Math.floor(opts.threads ?? defaultThreadCount()));
    this.maxItemsPerJob = Math.max(1, opts.maxItemsPerJob ?? MAX_ITEMS_PER_JOB);
    this.maxBufferWaitMs = Math.max(0, opts.maxBufferWaitMs ?? MAX_BUFFER_WAIT_MS);
    this.maxQueuedJobs = Math.max(1, opts.maxQueuedJobs ?? MAX_QUEUED_JOBS);
    const workerData: CryptoWorkerData = { crypto: opts.crypto ?? cryptoBackendSetting() };
    this.pool = new Piscina<CryptoJob, CryptoJobResult>({
      filename: CRYPTO_WORKER_URL.href,
      name: 'default',
      // Fixed size: all threads start now (the addon loads once per thread, ~1 ms) and stay.
      minThreads: this.threads,
      maxThreads: this.threads,
      idleTimeout: IDLE_TIMEOUT_MS,
      // Jobs are synchronous CPU work: a second task per worker would only wait behind the first.
      concurrentTasksPerWorker: 1,
      // Unbounded on purpose: back-pressure is our jobsPending check, which refuses a whole call
      // up front with a typed error. A Piscina limit would instead fail single chunks of a big
      // call already accepted (a 20,000-signature block is 157 jobs), losing the whole call.
      maxQueue: Number.POSITIVE_INFINITY,
      workerData,
      execArgv: POOL_EXEC_ARGV,
    });
  }

  verifySignatures(items: readonly SigItem[]): Promise<boolean[]> {
    return this.submit(items, sigPoolItem).then(({ codes }) => {
      const out = new Array<boolean>(codes.length);
      for (let i = 0; i < codes.length; i++) out[i] = codes[i] === ResultCode.valid;
      return out;
    });
  }

  recoverSenders(items: readonly RecoverItem[]): Promise<(Uint8Array | null)[]> {
    return this.submit(items, recoverPoolItem).then(({ codes, addresses }) => {
      const out = new Array<Uint8Array | null>(codes.length);
      for (let i = 0; i < codes.length; i++) {
        out[i] = codes[i] === ResultCode.valid && addresses ? addresses.slice(i * 20, i * 20 + 20) : null;
      }
      return out;
    });
  }

  /**
   * Another kind of job on the same threads: `name` is the worker module's export that runs it
   * (workers/crypto.worker.ts `evmCall`, src/pool/evm-calls.ts). Not batched, not counted in the
   * signature back-pressure; rejects with POOL_CLOSED after close().
   */
  runTask<T, R>(name: string, task: T, transferList?: readonly import("node:worker_threads").TransferListItem[]): Promise<R> {
    if (this.closed) return Promise.reject(new CryptoPoolError('crypto pool is closed', 'POOL_CLOSED'));
    const t = spanBegin();
    // transferList: a MessagePort a job streams its result through (evm-calls.ts, debug traces).
    const p = (this.pool as unknown as Piscina<T, R>).run(task, transferList === undefined ? { name } : { name, transferList: transferList as never });
    const settled = p.catch(() => undefined).finally(() => (this.settling.delete(settled), spanEnd(t, name, 'pool', undefined, LANE.pool)));
    this.settling.add(settled);
    return p;
  }

  canAcceptWork(): boolean {
    return !this.closed && this.queueLength() < this.maxQueuedJobs;
  }

  queueLength(): number {
    return this.jobsPending + (this.bufferItems.length > 0 ? 1 : 0);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      // Buffered callers were promised an answer: send them, then let every job settle.
      this.flush();
      while (this.settling.size > 0) await Promise.allSettled([...this.settling]);
      await this.pool.close();
    })();
    return this.closing;
  }

  private async submit<T>(items: readonly T[], toPoolItem: (it: T) => PoolItem): Promise<Slice> {
    if (this.closed) throw new CryptoPoolError('crypto pool is closed', 'POOL_CLOSED');
    if (items.length === 0) return { codes: new Uint8Array(0), addresses: null };
    if (this.queueLength() >= this.maxQueuedJobs) {
      this.modules.metrics?.busyRefusals?.inc();
      throw new CryptoPoolError(`crypto pool is full: ${this.queueLength()} jobs queued (max ${this.maxQueuedJobs})`, 'POOL_QUEUE_FULL');
    }
    const poolItems = items.map(toPoolItem);
    if (poolItems.length >= Math.min(MIN_ITEMS_TO_SKIP_BUFFER, this.maxItemsPerJob)) return this.runChunked(poolItems);
    return this.buffer(poolItems);
  }

  /** A big call: its own jobs, at most maxItemsPerJob each, all in flight at once. */
  private async runChunked(items: PoolItem[]): Promise<Slice> {
    const parts: Promise<CryptoJobResult>[] = [];
    for (let lo = 0; lo < items.length; lo += this.maxItemsPerJob) parts.push(this.runJob(items.slice(lo, lo + this.maxItemsPerJob)));
    const results = await Promise.all(parts);
    const codes = new Uint8Array(items.length);
    let addresses: Uint8Array | null = null;
    results.forEach((r, k) => {
      const lo = k * this.maxItemsPerJob;
      codes.set(r.codes, lo);
      if (r.addresses) {
        addresses ??= new Uint8Array(items.length * 20);
        addresses.set(r.addresses, lo * 20);
      }
    });
    return { codes, addresses };
  }

  /** A small call: merged with others into the next job (flushed when full or after the wait). */
  private buffer(items: PoolItem[]): Promise<Slice> {
    // Keep jobs within the limit: send what is buffered before it would overflow.
    if (this.bufferItems.length + items.length > this.maxItemsPerJob) this.flush();
    return new Promise<Slice>((resolve, reject) => {
      this.bufferWaiters.push({ start: this.bufferItems.length, count: items.length, resolve, reject });
      for (const it of items) this.bufferItems.push(it);
      if (this.bufferItems.length >= this.maxItemsPerJob) this.flush();
      else this.bufferTimer ??= setTimeout(() => this.flush(), this.maxBufferWaitMs);
      this.gaugeQueue();
    });
  }

  private flush(): void {
    if (this.bufferTimer) {
      clearTimeout(this.bufferTimer);
      this.bufferTimer = null;
    }
    if (this.bufferItems.length === 0) return;
    const items = this.bufferItems;
    const waiters = this.bufferWaiters;
    this.bufferItems = [];
    this.bufferWaiters = [];
    this.runJob(items).then(
      (r) => {
        for (const w of waiters) {
          w.resolve({
            codes: r.codes.subarray(w.start, w.start + w.count),
            addresses: r.addresses ? r.addresses.subarray(w.start * 20, (w.start + w.count) * 20) : null,
          });
        }
      },
      (e) => {
        for (const w of waiters) w.reject(e);
      },
    );
  }

  private runJob(items: PoolItem[]): Promise<CryptoJobResult> {
    const job = packJob(items);
    const t = spanBegin();
    this.jobsPending++;
    this.gaugeQueue();
    const p = this.pool
      // Transfer, not clone: the two buffers were made for this job and nobody else holds them.
      .run(job, { transferList: [job.meta.buffer as ArrayBuffer, job.data.buffer as ArrayBuffer] })
      .then(
        (res) => {
          const seen = nowMs();
          this.report(items.length, res, job.sentAt, seen);
          if (res.error !== null) throw new CryptoPoolError(`crypto worker could not run the job: ${res.error}`, 'POOL_WORKER_ERROR');
          return res;
        },
        (e: unknown) => {
          this.modules.metrics?.jobs?.inc();
          this.modules.metrics?.jobErrors?.inc();
          if (e instanceof CryptoPoolError) throw e;
          throw new CryptoPoolError(`crypto worker failed: ${e instanceof Error ? e.message : String(e)}`, 'POOL_WORKER_ERROR', { cause: e });
        },
      )
      .finally(() => {
        spanEnd(t, 'crypto job', 'pool', { items: items.length }, LANE.pool);
        this.jobsPending--;
        this.settling.delete(p);
        this.gaugeQueue();
      });
    this.settling.add(p);
    return p;
  }

  private gaugeQueue(): void {
    this.modules.metrics?.queueLength?.set(this.queueLength());
  }

  private report(items: number, res: CryptoJobResult, sent: number, seen: number): void {
    observeJob(this.modules.metrics, items, res.workerStart - sent, res.workerEnd - res.workerStart, res.error !== null);
    recordWait('pool-queue', (res.workerStart - sent) * 1e6);
    if (!this.modules.onJob) return;
    try {
      this.modules.onJob({
        items,
        backend: res.backend,
        toWorkerMs: res.workerStart - sent,
        workerMs: res.workerEnd - res.workerStart,
        fromWorkerMs: seen - res.workerEnd,
      });
    } catch {
      // Metrics must never break verification.
    }
  }
}
