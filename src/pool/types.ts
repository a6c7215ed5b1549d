/**
 * The signature-checking pool: one interface, two implementations (the lodestar chain/bls
 * pattern: ChainSafe/lodestar packages/beacon-node/src/chain/bls/interface.ts). `single` runs the
 * job function inline on the calling thread (deterministic, for unit tests and tiny nodes);
 * `piscina` batches items into jobs for worker threads. Callers cannot tell them apart except by
 * timing and `kind`.
 */
import type { CryptoBackendName, CryptoBackendSetting } from '../crypto/backend.js';
import type { Counter, Gauge, Histogram } from '../metrics/types.js';

/** One signature to check. Bytes cross to a worker packed into one transferred buffer. */
export type SigItem =
  /** CometBFT votes/proposals, Cosmos ed25519 accounts: RFC 8032 over the message itself. */
  | { scheme: 'ed25519'; pubKey: Uint8Array; msg: Uint8Array; sig: Uint8Array }
  /** secp256k1 over a digest the caller already computed. */
  | { scheme: 'secp256k1'; pubKey: Uint8Array; digest: Uint8Array; sig: Uint8Array }
  /**
   * secp256k1 over `hash(msg)`, hashed in the worker: sha256 for Cosmos secp256k1 sign bytes,
   * keccak256 for eth_secp256k1 (cosmos/cosmos-sdk:x/auth/tx/direct.go). Saves the main thread the hash.
   */
  | { scheme: 'secp256k1'; pubKey: Uint8Array; msg: Uint8Array; hash: 'sha256' | 'keccak256'; sig: Uint8Array };

/**
 * An Ethereum transaction signature whose sender is wanted: r||s, the recovery id (0/1 from
 * y-parity; v already normalised by the tx decoder) and the signing hash.
 */
export interface RecoverItem {
  digest: Uint8Array;
  sig: Uint8Array;
  recid: number;
}

export type CryptoPoolKind = 'piscina' | 'single';

export interface CryptoPool {
  readonly kind: CryptoPoolKind;
  /**
   * One boolean per item, in order: true iff the signature is valid. Malformed items (wrong
   * lengths, bad key encodings) are false, not errors. Rejects with CryptoPoolError
   * POOL_QUEUE_FULL when the pool is saturated, POOL_CLOSED after close(), POOL_WORKER_ERROR
   * when a worker could not run the job at all; with a TypeError for a non-byte field.
   */
  verifySignatures(items: readonly SigItem[]): Promise<boolean[]>;
  /**
   * Ethereum sender recovery: the 20-byte address (keccak256(pubkey)[12:]) per item, or null
   * for an invalid signature. High-S is refused (EIP-2, as for every post-Homestead tx).
   */
  recoverSenders(items: readonly RecoverItem[]): Promise<(Uint8Array | null)[]>;
  /** False when a new call would be refused with POOL_QUEUE_FULL: the RPC layer's "busy" signal. */
  canAcceptWork(): boolean;
  /** Jobs posted and not finished (queued or running), plus one while single calls are buffered. */
  queueLength(): number;
  /** Flushes buffered calls, waits for running jobs, stops the threads. Idempotent. */
  close(): Promise<void>;
}

export interface CryptoPoolOptions {
  kind: CryptoPoolKind;
  /** Worker threads (piscina only). Default: availableParallelism() - 1, at least 1. */
  threads?: number;
  /** Backend in the pool's threads; default the main thread's setting (src/crypto/backend.ts cryptoBackendSetting). */
  crypto?: CryptoBackendSetting;
  /** Overrides of the batching constants in src/pool/piscina.ts (tests use small values). */
  maxItemsPerJob?: number;
  maxBufferWaitMs?: number;
  maxQueuedJobs?: number;
}

/** Per-job timings for metrics; all times are ms on the shared performance clock. */
export interface CryptoJobTiming {
  items: number;
  backend: CryptoBackendName | null;
  /** Posted by the main thread until the worker started it (queueing + message latency). */
  toWorkerMs: number;
  /** Time the worker spent on the job. */
  workerMs: number;
  /** Worker finished until the main thread saw the result. */
  fromWorkerMs: number;
}

/**
 * Worker-pool metrics, every one optional (the catalogue's `pool` group, src/metrics/metrics.ts,
 * fits); the lodestar pattern (ChainSafe/lodestar:packages/beacon-node/src/metrics/metrics/lodestar.ts
 * blsThreadPool).
 */
export interface CryptoPoolMetrics {
  /** Jobs queued or running, plus one while small calls are buffered (queueLength()). */
  queueLength?: Gauge;
  /** Jobs finished, failed ones included. */
  jobs?: Counter;
  /** Items (signatures) per job. */
  jobItems?: Histogram;
  /** Seconds a worker spent on a job. */
  jobTime?: Histogram;
  /** Seconds from posting a job until a worker started it (queueing + message latency). */
  jobWait?: Histogram;
  /** Calls refused with POOL_QUEUE_FULL: the "busy" answers. */
  busyRefusals?: Counter;
  /** Jobs a worker could not run (POOL_WORKER_ERROR). */
  jobErrors?: Counter;
}

export interface CryptoPoolModules {
  /** Called after each job. Never throws into the pool (errors are ignored). */
  onJob?: (t: CryptoJobTiming) => void;
  metrics?: CryptoPoolMetrics;
}

export type CryptoPoolErrorCode =
  /** maxQueuedJobs jobs are already waiting: back off (RPC: "mempool is busy"). */
  | 'POOL_QUEUE_FULL'
  /** close() was called. */
  | 'POOL_CLOSED'
  /** The worker could not run the job (backend failed to load, worker died). */
  | 'POOL_WORKER_ERROR';

export class CryptoPoolError extends Error {
  override readonly name = 'CryptoPoolError';
  constructor(
    message: string,
    readonly code: CryptoPoolErrorCode,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
