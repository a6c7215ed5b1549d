/**
 * The inline pool: runs the same packed job as the workers, on the calling thread. For unit
 * tests (deterministic, no threads), single-core machines, and as the baseline in benchmarks.
 * Calls are chunked like the Piscina pool's jobs so both exercise identical job shapes.
 */
import { getCryptoBackend, selectCryptoBackend, type CryptoBackend } from '../crypto/backend.js';
import { nowMs, observeJob, packJob, recoverPoolItem, ResultCode, runCryptoJob, sigPoolItem, type PoolItem } from './job.js';
import { MAX_ITEMS_PER_JOB } from './constants.js';
import {
  CryptoPoolError,
  type CryptoPool,
  type CryptoPoolModules,
  type CryptoPoolOptions,
  type RecoverItem,
  type SigItem,
} from './types.js';

export class SingleThreadCryptoPool implements CryptoPool {
  readonly kind = 'single' as const;
  private readonly backend: CryptoBackend;
  private readonly maxItemsPerJob: number;
  private closed = false;

  constructor(
    opts: Omit<CryptoPoolOptions, 'kind'> = {},
    private readonly modules: CryptoPoolModules = {},
  ) {
    this.backend = opts.crypto ? selectCryptoBackend(opts.crypto) : getCryptoBackend();
    this.maxItemsPerJob = opts.maxItemsPerJob ?? MAX_ITEMS_PER_JOB;
  }

  async verifySignatures(items: readonly SigItem[]): Promise<boolean[]> {
    const codes = this.run(items.map(sigPoolItem)).codes;
    const out = new Array<boolean>(codes.length);
    for (let i = 0; i < codes.length; i++) out[i] = codes[i] === ResultCode.valid;
    return out;
  }

  async recoverSenders(items: readonly RecoverItem[]): Promise<(Uint8Array | null)[]> {
    const { codes, addresses } = this.run(items.map(recoverPoolItem));
    const out = new Array<Uint8Array | null>(codes.length);
    for (let i = 0; i < codes.length; i++) {
      out[i] = codes[i] === ResultCode.valid && addresses ? addresses.slice(i * 20, i * 20 + 20) : null;
    }
    return out;
  }

  private run(items: PoolItem[]): { codes: Uint8Array; addresses: Uint8Array | null } {
    if (this.closed) throw new CryptoPoolError('crypto pool is closed', 'POOL_CLOSED');
    const codes = new Uint8Array(items.length);
    let addresses: Uint8Array | null = null;
    for (let lo = 0; lo < items.length; lo += this.maxItemsPerJob) {
      const chunk = items.slice(lo, lo + this.maxItemsPerJob);
      const job = packJob(chunk);
      const res = runCryptoJob(job, this.backend);
      const seen = nowMs();
      codes.set(res.codes, lo);
      if (res.addresses) {
        addresses ??= new Uint8Array(items.length * 20);
        addresses.set(res.addresses, lo * 20);
      }
      this.report(chunk.length, res.backend, job.sentAt, res.workerStart, res.workerEnd, seen);
    }
    return { codes, addresses };
  }

  private report(items: number, backend: CryptoBackend['name'] | null, sent: number, start: number, end: number, seen: number): void {
    observeJob(this.modules.metrics, items, start - sent, end - start, false);
    if (!this.modules.onJob) return;
    try {
      this.modules.onJob({ items, backend, toWorkerMs: start - sent, workerMs: end - start, fromWorkerMs: seen - end });
    } catch {
      // Metrics must never break verification.
    }
  }

  canAcceptWork(): boolean {
    return !this.closed;
  }

  queueLength(): number {
    return 0;
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
