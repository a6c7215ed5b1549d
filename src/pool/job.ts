/**
 * The job that both pool implementations run: a packed batch of signature items in, one result
 * code per item out. The worker (workers/crypto.worker.ts) and the single-threaded pool call the
 * same `runCryptoJob`, so the two pools cannot disagree on a verdict.
 *
 * Wire format. Items are copied into ONE fresh ArrayBuffer plus a Uint32Array index, and both are
 * transferred to the worker, not cloned. Posting the items as they are would structured-clone
 * every distinct backing ArrayBuffer in full: a small Buffer drags its whole 8 KiB pool slab
 * along, a signature sliced from a 1 MiB block drags the block. Measured for a 128-item ed25519
 * job (120-byte messages, 2-core box under load): cloning the items took 154 µs when they were
 * Buffer-pool views and 473 µs when each field had its own small ArrayBuffer; packing plus
 * transfer took 52 µs, and the transfer itself is O(1). Results (1 byte per item, 20 per
 * recovered address) are small enough to clone.
 */
import type { CryptoBackend, CryptoBackendName } from '../crypto/backend.js';
import type { CryptoPoolMetrics, RecoverItem, SigItem } from './types.js';

/** What an item asks the worker to do. */
export const ItemKind = {
  ed25519: 0,
  secp256k1Digest: 1,
  secp256k1Sha256: 2,
  secp256k1Keccak256: 3,
  ethRecover: 4,
} as const;
export type ItemKind = (typeof ItemKind)[keyof typeof ItemKind];

/** Per-item verdict. */
export const ResultCode = {
  /** Signature valid / sender recovered. */
  valid: 0,
  /** Well-formed but the signature does not verify (or recover, or is high-S). */
  invalid: 1,
  /** Wrong field lengths or an unknown kind: rejected without any curve work. */
  malformed: 2,
  /** The backend threw on this item (a bug): treated as invalid by the pools. */
  error: 3,
} as const;
export type ResultCode = (typeof ResultCode)[keyof typeof ResultCode];

/** meta holds, per item: kind, aOff, aLen, bOff, bLen, cOff, cLen, extra. */
export const META_STRIDE = 8;

/**
 * One item before packing. For signatures a = pubkey, b = message or digest, c = signature;
 * for ethRecover a is empty, b = digest, c = r||s, extra = recid.
 */
export interface PoolItem {
  kind: ItemKind;
  a: Uint8Array;
  b: Uint8Array;
  c: Uint8Array;
  extra: number;
}

export interface CryptoJob {
  n: number;
  meta: Uint32Array;
  data: Uint8Array;
  /** nowMs() when posted. */
  sentAt: number;
}

export interface CryptoJobResult {
  /** ResultCode per item. */
  codes: Uint8Array;
  /** 20-byte address per item at 20*i for ethRecover items (zeros elsewhere); null if none. */
  addresses: Uint8Array | null;
  backend: CryptoBackendName | null;
  /** Set when the job as a whole could not run (backend missing, corrupt job): codes are all `error`. */
  error: string | null;
  workerStart: number;
  workerEnd: number;
}

const EMPTY = new Uint8Array(0);

/** Milliseconds on a clock shared by all threads (timeOrigin differs per thread; the sum does not). */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

function needBytes(v: unknown, what: string): Uint8Array {
  if (!(v instanceof Uint8Array)) throw new TypeError(`crypto pool: ${what} must be a Uint8Array`);
  return v;
}

/** Maps public items to pool items; throws TypeError on a non-byte field or unknown scheme. */
export function sigPoolItem(it: SigItem): PoolItem {
  if (it.scheme === 'ed25519') {
    return { kind: ItemKind.ed25519, a: needBytes(it.pubKey, 'pubKey'), b: needBytes(it.msg, 'msg'), c: needBytes(it.sig, 'sig'), extra: 0 };
  }
  if (it.scheme === 'secp256k1') {
    const a = needBytes(it.pubKey, 'pubKey');
    const c = needBytes(it.sig, 'sig');
    if ('digest' in it) return { kind: ItemKind.secp256k1Digest, a, b: needBytes(it.digest, 'digest'), c, extra: 0 };
    const kind = it.hash === 'sha256' ? ItemKind.secp256k1Sha256 : it.hash === 'keccak256' ? ItemKind.secp256k1Keccak256 : null;
    if (kind === null) throw new TypeError(`crypto pool: unknown secp256k1 hash "${String((it as { hash?: unknown }).hash)}"`);
    return { kind, a, b: needBytes(it.msg, 'msg'), c, extra: 0 };
  }
  throw new TypeError(`crypto pool: unknown scheme "${String((it as { scheme?: unknown }).scheme)}"`);
}

export function recoverPoolItem(it: RecoverItem): PoolItem {
  const recid = it.recid;
  // An out-of-range recid is data, not a bug: it becomes `malformed` (0xff) in the worker.
  const extra = Number.isInteger(recid) && recid >= 0 && recid <= 3 ? recid : 0xff;
  return { kind: ItemKind.ethRecover, a: EMPTY, b: needBytes(it.digest, 'digest'), c: needBytes(it.sig, 'sig'), extra };
}

/** Packs items into one buffer + index (see the file comment for why). */
export function packJob(items: readonly PoolItem[]): CryptoJob {
  const n = items.length;
  let total = 0;
  for (const it of items) total += it.a.length + it.b.length + it.c.length;
  if (total > 0xffffffff) throw new RangeError('crypto pool: job larger than 4 GiB');
  const data = new Uint8Array(total);
  const meta = new Uint32Array(n * META_STRIDE);
  let off = 0;
  for (let i = 0; i < n; i++) {
    const it = items[i]!;
    const m = i * META_STRIDE;
    meta[m] = it.kind;
    meta[m + 1] = off;
    meta[m + 2] = it.a.length;
    data.set(it.a, off);
    off += it.a.length;
    meta[m + 3] = off;
    meta[m + 4] = it.b.length;
    data.set(it.b, off);
    off += it.b.length;
    meta[m + 5] = off;
    meta[m + 6] = it.c.length;
    data.set(it.c, off);
    off += it.c.length;
    meta[m + 7] = it.extra;
  }
  return { n, meta, data, sentAt: nowMs() };
}

/** secp256k1 n/2, big-endian: s above it is the malleable twin (EIP-2, BIP-62). */
const HALF_N = Uint8Array.from(Buffer.from('7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0', 'hex'));

/** s (bytes 32..64 of r||s) <= n/2. */
export function isLowS(sig: Uint8Array): boolean {
  for (let i = 0; i < 32; i++) {
    const d = sig[32 + i]! - HALF_N[i]!;
    if (d !== 0) return d < 0;
  }
  return true;
}

function secpShapeOk(pub: Uint8Array, digestOrMsgOk: boolean, sig: Uint8Array): boolean {
  return digestOrMsgOk && sig.length === 64 && (pub.length === 33 || pub.length === 65);
}

/** A job every item of which failed for one reason (no backend, corrupt job). */
export function failedJobResult(n: number, error: string, start = nowMs()): CryptoJobResult {
  return { codes: new Uint8Array(n).fill(ResultCode.error), addresses: null, backend: null, error, workerStart: start, workerEnd: nowMs() };
}

/**
 * Runs a job. Never throws: a bad job gives `error`, a bad item gives `malformed`, a backend
 * exception on one item gives `error` for that item only.
 */
export function runCryptoJob(job: CryptoJob, backend: CryptoBackend): CryptoJobResult {
  const workerStart = nowMs();
  const n = job?.n;
  if (!Number.isInteger(n) || n < 0 || !(job.meta instanceof Uint32Array) || !(job.data instanceof Uint8Array) || job.meta.length !== n * META_STRIDE) {
    return failedJobResult(Number.isInteger(n) && n > 0 ? n : 0, 'corrupt crypto job', workerStart);
  }
  const { meta, data } = job;
  const codes = new Uint8Array(n);
  let addresses: Uint8Array | null = null;
  const digest = new Uint8Array(32);
  for (let i = 0; i < n; i++) {
    const m = i * META_STRIDE;
    const aEnd = meta[m + 1]! + meta[m + 2]!;
    const bEnd = meta[m + 3]! + meta[m + 4]!;
    const cEnd = meta[m + 5]! + meta[m + 6]!;
    if (aEnd > data.length || bEnd > data.length || cEnd > data.length) {
      codes[i] = ResultCode.malformed;
      continue;
    }
    const a = data.subarray(meta[m + 1]!, aEnd);
    const b = data.subarray(meta[m + 3]!, bEnd);
    const c = data.subarray(meta[m + 5]!, cEnd);
    try {
      switch (meta[m]) {
        case ItemKind.ed25519:
          codes[i] = a.length !== 32 || c.length !== 64 ? ResultCode.malformed : backend.ed25519Verify(a, b, c) ? ResultCode.valid : ResultCode.invalid;
          break;
        case ItemKind.secp256k1Digest:
          codes[i] = !secpShapeOk(a, b.length === 32, c) ? ResultCode.malformed : backend.secp256k1Verify(b, c, a) ? ResultCode.valid : ResultCode.invalid;
          break;
        case ItemKind.secp256k1Sha256:
        case ItemKind.secp256k1Keccak256:
          if (!secpShapeOk(a, true, c)) {
            codes[i] = ResultCode.malformed;
            break;
          }
          if (meta[m] === ItemKind.secp256k1Sha256) backend.sha256Into(b, digest, 0);
          else backend.keccak256Into(b, digest, 0);
          codes[i] = backend.secp256k1Verify(digest, c, a) ? ResultCode.valid : ResultCode.invalid;
          break;
        case ItemKind.ethRecover: {
          const recid = meta[m + 7]!;
          if (b.length !== 32 || c.length !== 64 || recid > 3) {
            codes[i] = ResultCode.malformed;
            break;
          }
          if (!isLowS(c)) {
            codes[i] = ResultCode.invalid;
            break;
          }
          const pub = backend.secp256k1Recover(b, c, recid);
          if (pub === null) {
            codes[i] = ResultCode.invalid;
            break;
          }
          // Ethereum address: the last 20 bytes of keccak256 over the 64-byte X||Y (no 0x04).
          backend.keccak256Into(pub.subarray(1), digest, 0);
          addresses ??= new Uint8Array(n * 20);
          addresses.set(digest.subarray(12), i * 20);
          codes[i] = ResultCode.valid;
          break;
        }
        default:
          codes[i] = ResultCode.malformed;
      }
    } catch {
      codes[i] = ResultCode.error;
    }
  }
  return { codes, addresses, backend: backend.name, error: null, workerStart, workerEnd: nowMs() };
}

/** One finished job into the pool metrics (both implementations); times in ms. Never throws. */
export function observeJob(m: CryptoPoolMetrics | undefined, items: number, waitMs: number, workMs: number, failed: boolean): void {
  if (m === undefined) return;
  m.jobs?.inc();
  if (failed) m.jobErrors?.inc();
  m.jobItems?.observe(items);
  m.jobWait?.observe(Math.max(0, waitMs) / 1000);
  m.jobTime?.observe(Math.max(0, workMs) / 1000);
}
