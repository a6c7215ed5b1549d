/**
 * What every mempool offers the node (cometbft/cometbft:mempool/mempool.go Mempool): CheckTx,
 * reaping for a proposal, the post-commit update, the gossip walk. `CListMempool`
 * (clist_mempool.ts) is today's implementation, in arrival order; a nonce-ordered EVM pool
 * implements the same interface. Consumers that need less declare less (state/execution.ts
 * ExecutorMempool, mempool/broadcast.ts).
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { ExecTxResult, ResponseCheckTx } from '../abci/types.js';
import type { Bytes } from '../types/block.js';
import { txHash } from '../types/hashing.js';

/**
 * Work between two event-loop turns in the long loops that run on the thread that answers RPC
 * (the pools' update and recheck, a proposal's tx loops), in ms: short against RPC's latency goal
 * (10 ms p99).
 */
export const RECHECK_SLICE_MS = 4;

/**
 * Event-loop turns for a long loop on the RPC thread: `due(i, every)` says whether `sliceMs` of
 * work has passed since the last turn, reading the clock only every `every` items (a power of two;
 * 1: every item); `turn()` gives the loop one turn (setImmediate: I/O is served first) and starts
 * the next slice. One object may serve several loops of one pass.
 */
export class LoopTurns {
  private from = performance.now();

  constructor(private readonly sliceMs = RECHECK_SLICE_MS) {}

  due(i = 0, every = 1): boolean {
    return (i & (every - 1)) === every - 1 && performance.now() - this.from >= this.sliceMs;
  }

  async turn(): Promise<void> {
    await yieldToLoop();
    this.from = performance.now();
  }
}

/** Runs before the cache and the app; an Error refuses the tx (`tx pre check: …`). */
export type PreCheckFunc = (tx: Bytes) => Error | undefined;
/** Runs on a successful CheckTx response; an Error refuses the tx. */
export type PostCheckFunc = (tx: Bytes, res: ResponseCheckTx) => Error | undefined;

export interface MempoolTx {
  tx: Bytes;
  /** sha256(tx), the TxKey. */
  key: Bytes;
  /** Height at which the tx entered the pool. */
  height: bigint;
  gasWanted: bigint;
  /** Peers that sent it (for gossip: never send a tx back to its sender). */
  senders: Set<string>;
}

export interface CheckTxResult {
  response: ResponseCheckTx;
  /** True when the tx entered the pool (code 0, not a duplicate, still room). */
  added: boolean;
}

export interface TxInfo {
  /** The peer that sent the tx; undefined for RPC. */
  sender?: string;
}

/** TxKey: sha256 of the tx bytes (types/tx.go Tx.Key); the tx hash, native where the addon loaded. */
export function txKey(tx: Bytes): Bytes {
  return txHash(tx);
}

function varintSize(n: number): number {
  let s = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    s++;
  }
  return s;
}

/**
 * ComputeProtoSizeForTxs (types/tx.go): the txs' size inside a block's `Data{repeated bytes txs = 1}`,
 * i.e. per tx one tag byte, the length varint and the bytes.
 */
export function computeProtoSizeForTxs(txs: readonly Bytes[]): number {
  let n = 0;
  for (const tx of txs) n += protoSizeOfTx(tx);
  return n;
}

/** computeProtoSizeForTxs of one tx. */
export function protoSizeOfTx(tx: Bytes): number {
  return 1 + varintSize(tx.length) + tx.length;
}

/** PreCheckMaxBytes (mempool/mempool.go): the tx must fit the block's data bytes. */
export function preCheckMaxBytes(maxBytes: bigint): PreCheckFunc {
  return (tx) => {
    const size = computeProtoSizeForTxs([tx]);
    return BigInt(size) > maxBytes ? new Error(`tx size is too big: ${size}, max: ${maxBytes}`) : undefined;
  };
}

/** PostCheckMaxGas (mempool/mempool.go): gas wanted within the block's max gas (-1 = no limit). */
export function postCheckMaxGas(maxGas: bigint): PostCheckFunc {
  return (_tx, res) => {
    if (maxGas === -1n) return undefined;
    if (res.gasWanted < 0n) return new Error(`gas wanted ${res.gasWanted} is negative`);
    if (res.gasWanted > maxGas) return new Error(`gas wanted ${res.gasWanted} is greater than max gas ${maxGas}`);
    return undefined;
  };
}

export interface Mempool {
  /** Number of txs in the pool. */
  size(): number;
  /** Total bytes of the txs in the pool. */
  sizeBytes(): number;
  /** True while the txs left after a commit are being rechecked. */
  readonly isRechecking: boolean;
  has(key: Bytes): boolean;
  getTx(key: Bytes): MempoolTx | undefined;
  /**
   * The TxKey of this very tx object if the pool admitted it (looked up by identity, no hashing),
   * else undefined. A proposal's txs are the pool's own objects: their block's data hash and the
   * update after the commit need no sha256 of thousands of txs on the RPC thread.
   */
  knownKey?(tx: Bytes): Bytes | undefined;
  /** The pool's txs in the order a proposal reaps them (gossip walks them too). */
  entries(): IterableIterator<MempoolTx>;
  /** CheckTx through the app; `added` says whether the tx entered the pool. */
  checkTx(tx: Bytes, info?: TxInfo): Promise<CheckTxResult>;
  removeTxByKey(key: Bytes): boolean;
  /** Txs for a proposal within max bytes (proto size in Data) and max gas (-1: no limit). */
  reapMaxBytesMaxGas(maxBytes: bigint | number, maxGas: bigint | number): Bytes[];
  /** At most n txs (-1: all). */
  reapMaxTxs(n: number): Bytes[];
  /** Held by the executor from before FinalizeBlock until update() returns. */
  lock(): Promise<void>;
  unlock(): void;
  /** After a commit (lock held): drop committed txs, recheck the rest. */
  update(height: bigint, txs: readonly Bytes[], results: readonly Pick<ExecTxResult, 'code'>[], preCheck?: PreCheckFunc, postCheck?: PostCheckFunc): Promise<void>;
  /** unsafe_flush_mempool: empty the pool and its cache. */
  flush(): void;
  /** "Txs available", at most once per height; returns the unsubscribe function. */
  onTxsAvailable(listener: () => void): () => void;
  /** Each tx admitted to the pool, as it is admitted (eth_subscribe newPendingTransactions). */
  onTxAdded?(listener: (tx: Bytes) => void): () => void;
}
