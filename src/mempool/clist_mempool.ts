/**
 * CListMempool, the mempool chaind runs today, after CometBFT's CListMempool (cometbft: mempool/clist_mempool.go, mempool/cache.go,
 * mempool/mempool.go, mempool/metrics.go; cometbft/cometbft:mempool/clist_mempool.go).
 *
 * - Txs are kept in arrival order in one Map (JS Maps iterate in insertion order and delete in
 *   O(1), which is what CometBFT's concurrent list plus txsMap give it).
 * - CheckTx: fullness (count `size`, bytes `max_txs_bytes`; "still rechecking" only when the next
 *   block's lock was asked for while a recheck still ran, CometBFT's recheckFull), `max_tx_bytes`,
 *   the node's pre-check, then the LRU cache of sha256 keys, then the app. While a commit holds
 *   the lock (update and its recheck included) a new tx waits for it instead of being refused, as
 *   CheckTx waits on CometBFT's updateMtx.
 *   App calls are pipelined (each starts at once) but their responses are applied in submission
 *   order, like ABCI's async client over one connection, so insertion order is submission order.
 * - update() after a commit (caller holds lock()): committed txs leave the pool, successful ones
 *   enter the cache, failed ones leave it (unless keep-invalid-txs-in-cache), then the remaining
 *   txs are rechecked (CheckTx type Recheck) and failures evicted. The recheck gives the event
 *   loop back every few milliseconds (RPC keeps answering during a long one).
 * - txsAvailable fires at most once per height, when the pool becomes non-empty, for
 *   `create_empty_blocks = false`.
 */
import { CheckTxType, type Application, type ExecTxResult, type ResponseCheckTx } from '../abci/types.js';
import type { Bytes } from '../types/block.js';
import type { Counter, Gauge, Histogram } from '../metrics/types.js';
import { ErrAppConnMempool, ErrMempoolIsFull, ErrPreCheck, ErrRecheckFull, ErrTxInCache, ErrTxTooLarge } from './errors.js';
import { computeProtoSizeForTxs, LoopTurns, protoSizeOfTx, txKey, type CheckTxResult, type Mempool, type MempoolTx, type PostCheckFunc, type PreCheckFunc, type TxInfo } from './mempool.js';
import { bytesToKey } from '../crypto/bytes.js';

/** [mempool] options; TOML names in the comments (config/config.go MempoolConfig). */
export interface MempoolConfig {
  /** `size`: maximum number of txs. */
  size: number;
  /** `max_txs_bytes`: maximum total bytes of all txs. */
  maxTxsBytes: number;
  /** `cache_size`: entries of the LRU cache of tx keys; 0 disables the cache. */
  cacheSize: number;
  /** `max_tx_bytes`: maximum size of one tx. */
  maxTxBytes: number;
  /** `recheck`: recheck the remaining txs after every commit. */
  recheck: boolean;
  /** `recheck_timeout` in ms: txs not rechecked by then stay in the pool unchecked. */
  recheckTimeoutMs: number;
  /** `keep-invalid-txs-in-cache`: keep failed txs' keys cached so they are refused early. */
  keepInvalidTxsInCache: boolean;
}

/** CometBFT's defaults (config/config.go DefaultMempoolConfig). */
export function defaultMempoolConfig(): MempoolConfig {
  return {
    size: 5000,
    maxTxsBytes: 1073741824, // 1 GiB
    cacheSize: 10000,
    maxTxBytes: 1048576, // 1 MiB
    recheck: true,
    recheckTimeoutMs: 1000,
    keepInvalidTxsInCache: false,
  };
}

/** mempool/metrics.go, every one optional. */
export interface MempoolMetrics {
  /** mempool_size */
  size?: Gauge;
  /** mempool_size_bytes */
  sizeBytes?: Gauge;
  /** mempool_tx_size_bytes */
  txSizeBytes?: Histogram;
  /** mempool_failed_txs: CheckTx said no. */
  failedTxs?: Counter;
  /** mempool_rejected_txs: refused because the pool was full. */
  rejectedTxs?: Counter;
  /** mempool_evicted_txs: dropped by a recheck. */
  evictedTxs?: Counter;
  /** mempool_recheck_times */
  recheckTimes?: Counter;
  /** mempool_already_received_txs: cache hits. */
  alreadyReceivedTxs?: Counter;
}

export interface MempoolModules {
  app: Pick<Application, 'checkTx'>;
  /** Last committed height (the state's lastBlockHeight). */
  height?: bigint;
  metrics?: MempoolMetrics;
  preCheck?: PreCheckFunc;
  postCheck?: PostCheckFunc;
}

/** LRUTxCache (mempool/cache.go) over a Map, whose insertion order is the recency order. */
export class LruTxCache {
  private readonly m = new Map<string, true>();
  constructor(private readonly capacity: number) {}

  /** Adds the key; false when it was already there (it becomes the most recent). */
  push(key: string): boolean {
    if (this.capacity <= 0) return true; // NopTxCache: nothing is ever cached
    if (this.m.has(key)) {
      this.m.delete(key);
      this.m.set(key, true);
      return false;
    }
    this.m.set(key, true);
    if (this.m.size > this.capacity) this.m.delete(this.m.keys().next().value!);
    return true;
  }

  remove(key: string): void {
    this.m.delete(key);
  }

  has(key: string): boolean {
    return this.m.has(key);
  }

  reset(): void {
    this.m.clear();
  }

  get size(): number {
    return this.m.size;
  }
}

interface Entry extends MempoolTx {
  keyStr: string;
}

export class CListMempool implements Mempool {
  readonly config: Readonly<MempoolConfig>;
  private readonly app: Pick<Application, 'checkTx'>;
  private readonly metrics: MempoolMetrics | undefined;
  private preCheck: PreCheckFunc | undefined;
  private postCheck: PostCheckFunc | undefined;
  private readonly cache: LruTxCache;

  private readonly txs = new Map<string, Entry>();
  /** Admitted tx objects → their entry (knownKey): a block reaped from here is looked up without hashing. */
  private readonly byTx = new WeakMap<Bytes, Entry>();
  private txsBytes = 0;
  private height: bigint;

  private locked = false;
  private unlockWaiters: (() => void)[] = [];
  /** Settles when every CheckTx issued so far has had its response applied. */
  private tail: Promise<void> = Promise.resolve();
  private rechecking = false;
  /**
   * A lock was asked for (the next block) while a recheck still ran: new txs are refused as
   * "still rechecking" until it ends (cometbft/cometbft:mempool/clist_mempool.go, recheck state
   * full). Without that, new txs just wait for the lock.
   */
  private recheckFull = false;
  /** What the last recheck did not reach (recheck_timeout), in pool order; null when none. */
  private leftover: Entry[] | null = null;
  /** The catch-up recheck of `leftover` in progress. */
  private catchingUp: Promise<void> | null = null;

  private notifiedTxsAvailable = false;
  private readonly txsAvailableListeners = new Set<() => void>();
  private readonly txAddedListeners = new Set<(tx: Bytes) => void>();

  constructor(config: Partial<MempoolConfig>, modules: MempoolModules) {
    this.config = Object.freeze({ ...defaultMempoolConfig(), ...config });
    this.app = modules.app;
    this.metrics = modules.metrics;
    this.preCheck = modules.preCheck;
    this.postCheck = modules.postCheck;
    this.height = modules.height ?? 0n;
    this.cache = new LruTxCache(this.config.cacheSize);
    // The gauges read 0 from the start, not absent until the first tx.
    this.updateGauges();
  }

  /** Number of txs in the pool. */
  size(): number {
    return this.txs.size;
  }

  /** Total bytes of the txs in the pool. */
  sizeBytes(): number {
    return this.txsBytes;
  }

  /** True while update() rechecks the remaining txs. */
  get isRechecking(): boolean {
    return this.rechecking;
  }

  /** Whether a tx with this key (sha256) is in the pool. */
  has(key: Bytes): boolean {
    return this.txs.has(bytesToKey(key));
  }

  getTx(key: Bytes): MempoolTx | undefined {
    return this.txs.get(bytesToKey(key));
  }

  knownKey(tx: Bytes): Bytes | undefined {
    return this.byTx.get(tx)?.key;
  }

  /** The pool in insertion order (gossip, unconfirmed_txs). */
  *entries(): IterableIterator<MempoolTx> {
    yield* this.txs.values();
  }

  private isFull(txSize: number): void {
    const n = this.txs.size;
    if (n >= this.config.size || txSize + this.txsBytes > this.config.maxTxsBytes) {
      throw new ErrMempoolIsFull(n, this.config.size, this.txsBytes, this.config.maxTxsBytes);
    }
    if (this.recheckFull) throw new ErrRecheckFull();
  }

  private localChecks(tx: Bytes): void {
    try {
      this.isFull(tx.length);
    } catch (e) {
      this.metrics?.rejectedTxs?.inc();
      throw e;
    }
    if (tx.length > this.config.maxTxBytes) throw new ErrTxTooLarge(this.config.maxTxBytes, tx.length);
    if (this.preCheck !== undefined) {
      const err = this.preCheck(tx);
      if (err !== undefined) throw new ErrPreCheck(err);
    }
  }

  private waitUnlocked(): Promise<void> {
    return new Promise((resolve) => this.unlockWaiters.push(resolve));
  }

  /**
   * CheckTx (clist_mempool.go CheckTx + resCbFirstTime). Throws a MempoolError for the local
   * checks (full, still rechecking, too large, pre-check, in cache, app failure); otherwise
   * resolves with the app's response, which may carry a non-zero code.
   */
  async checkTx(tx: Bytes, info: TxInfo = {}): Promise<CheckTxResult> {
    // Checks run before waiting so a full pool answers at once, and again after a wait, since
    // a commit may have changed the pool in between.
    this.localChecks(tx);
    while (this.locked) {
      await this.waitUnlocked();
      this.localChecks(tx);
    }
    if (this.leftover !== null || this.catchingUp !== null) {
      await this.catchUp();
      while (this.locked) {
        await this.waitUnlocked();
        this.localChecks(tx);
      }
    }
    const key = txKey(tx);
    const ks = bytesToKey(key);
    if (!this.cache.push(ks)) {
      // Record the extra sender of a tx we already hold, so it is not gossiped back to them.
      const e = this.txs.get(ks);
      if (e !== undefined && info.sender !== undefined) e.senders.add(info.sender);
      this.metrics?.alreadyReceivedTxs?.inc();
      throw new ErrTxInCache();
    }

    // Issue the app call now; attach handlers at once so a rejection is never unhandled.
    const settled = this.app.checkTx(tx, CheckTxType.New).then(
      (res) => ({ ok: true as const, res }),
      (err: unknown) => ({ ok: false as const, err }),
    );
    const prev = this.tail;
    let done!: () => void;
    this.tail = new Promise<void>((r) => (done = r));
    try {
      await prev;
      const out = await settled;
      if (!out.ok) {
        this.cache.remove(ks);
        throw new ErrAppConnMempool(out.err instanceof Error ? out.err : new Error(String(out.err)));
      }
      const added = this.addChecked(tx, key, ks, out.res, info);
      return { response: out.res, added };
    } finally {
      done();
    }
  }

  /** resCbFirstTime: admit a checked tx, or forget it. */
  private addChecked(tx: Bytes, key: Bytes, ks: string, res: ResponseCheckTx, info: TxInfo): boolean {
    const postErr = res.code === 0 && this.postCheck !== undefined ? this.postCheck(tx, res) : undefined;
    if (res.code !== 0 || postErr !== undefined) {
      this.metrics?.failedTxs?.inc();
      // Forget it so that it may be resubmitted once it can pass.
      if (!this.config.keepInvalidTxsInCache) this.cache.remove(ks);
      return false;
    }
    // Check fullness again: other txs may have been admitted while the app was checking this one.
    try {
      this.isFull(tx.length);
    } catch {
      this.cache.remove(ks);
      this.metrics?.rejectedTxs?.inc();
      return false;
    }
    const existing = this.txs.get(ks);
    if (existing !== undefined) {
      if (info.sender !== undefined) existing.senders.add(info.sender);
      return false;
    }
    const entry: Entry = { tx, key, keyStr: ks, height: this.height, gasWanted: res.gasWanted, senders: new Set(info.sender === undefined ? [] : [info.sender]) };
    this.txs.set(ks, entry);
    this.byTx.set(tx, entry);
    this.txsBytes += tx.length;
    this.metrics?.txSizeBytes?.observe(tx.length);
    this.updateGauges();
    this.notifyTxsAvailable();
    for (const l of this.txAddedListeners) {
      try {
        l(tx);
      } catch {
        // A listener's failure must not undo the admission of the tx.
      }
    }
    return true;
  }

  private updateGauges(): void {
    this.metrics?.size?.set(this.txs.size);
    this.metrics?.sizeBytes?.set(this.txsBytes);
  }

  private removeEntry(ks: string): boolean {
    const e = this.txs.get(ks);
    if (e === undefined) return false;
    this.txs.delete(ks);
    this.txsBytes -= e.tx.length;
    return true;
  }

  /** RemoveTxByKey: drops the tx with this sha256 key; false when it is not in the pool. */
  removeTxByKey(key: Bytes): boolean {
    const ok = this.removeEntry(bytesToKey(key));
    if (ok) this.updateGauges();
    return ok;
  }

  /**
   * ReapMaxBytesMaxGas: txs from the front while their Data proto size fits maxBytes and their
   * summed gasWanted fits maxGas; -1 means no limit. Stops at the first tx that does not fit.
   */
  reapMaxBytesMaxGas(maxBytes: bigint | number, maxGas: bigint | number): Bytes[] {
    return this.reapWithTotals(maxBytes, maxGas).txs;
  }

  /**
   * reapMaxBytesMaxGas, with what the reaped txs add up to: their Data proto size
   * (computeProtoSizeForTxs) and their summed gasWanted, so that a caller does not go over
   * thousands of txs again for them.
   */
  reapWithTotals(maxBytes: bigint | number, maxGas: bigint | number): { txs: Bytes[]; bytes: number; gas: bigint } {
    // Byte counts as numbers (a block's bytes are far below 2^53), gas as bigint: thousands of
    // txs per proposal on the RPC thread.
    const mbBig = BigInt(maxBytes);
    const mb = mbBig > -1n ? Number(mbBig) : -1;
    const mg = BigInt(maxGas);
    let size = 0;
    let gas = 0n;
    const out: Bytes[] = [];
    for (const e of this.txs.values()) {
      const dataSize = protoSizeOfTx(e.tx);
      if (mb > -1 && size + dataSize > mb) break;
      const newGas = gas + e.gasWanted;
      if (mg > -1n && newGas > mg) break;
      size += dataSize;
      gas = newGas;
      out.push(e.tx);
    }
    return { txs: out, bytes: size, gas };
  }

  /** ReapMaxTxs: the first n txs; n < 0 gives all. */
  reapMaxTxs(n: number): Bytes[] {
    const max = n < 0 ? this.txs.size : Math.min(n, this.txs.size);
    const out: Bytes[] = [];
    for (const e of this.txs.values()) {
      if (out.length >= max) break;
      out.push(e.tx);
    }
    return out;
  }

  /**
   * Lock: waits for other holders, then for every CheckTx already sent to the app to be applied
   * (CometBFT's Lock + FlushAppConn), so commit sees a settled pool. New CheckTx calls wait.
   */
  async lock(): Promise<void> {
    if (this.rechecking) this.recheckFull = true;
    while (this.locked) await this.waitUnlocked();
    this.locked = true;
    if (this.catchingUp !== null) await this.catchingUp;
    await this.tail;
  }

  unlock(): void {
    if (!this.locked) throw new Error('mempool unlock without lock');
    this.locked = false;
    const ws = this.unlockWaiters;
    this.unlockWaiters = [];
    for (const w of ws) w();
  }

  /**
   * Update after the block at `height` committed; the caller holds lock(). `results[i]` is txs[i]'s
   * ExecTxResult. New pre/post checks replace the old ones when given (consensus params changed).
   */
  async update(height: bigint, txs: readonly Bytes[], results: readonly Pick<ExecTxResult, 'code'>[], preCheck?: PreCheckFunc, postCheck?: PostCheckFunc): Promise<void> {
    if (!this.locked) throw new Error('mempool update without lock');
    if (txs.length !== results.length) throw new Error(`update with ${txs.length} txs but ${results.length} results`);
    this.height = height;
    this.notifiedTxsAvailable = false;
    // This commit's recheck covers every tx left; the check state starts over.
    this.leftover = null;
    if (preCheck !== undefined) this.preCheck = preCheck;
    if (postCheck !== undefined) this.postCheck = postCheck;

    const turns = new LoopTurns();
    for (let i = 0; i < txs.length; i++) {
      // A block of thousands of txs: RPC is answered between slices (new CheckTx calls wait).
      if (turns.due(i, 64)) await turns.turn();
      // The pool's own tx objects (a block this node proposed) are known without hashing.
      const ks = this.byTx.get(txs[i]!)?.keyStr ?? bytesToKey(txKey(txs[i]!));
      if (results[i]!.code === 0) {
        // A committed tx must not re-enter: keep its key cached.
        this.cache.push(ks);
      } else if (!this.config.keepInvalidTxsInCache) {
        // It may become valid later (e.g. after a deposit): allow a resubmission.
        this.cache.remove(ks);
      }
      this.removeEntry(ks);
    }
    this.updateGauges();

    if (this.config.recheck && this.txs.size > 0) await this.recheckTxs();
    if (this.txs.size > 0) this.notifyTxsAvailable();
  }

  /**
   * Re-runs CheckTx (Recheck) on every remaining tx, in order, evicting the ones that now fail.
   * Past recheck_timeout the rest stay in the pool unchecked, as CometBFT leaves unanswered ones;
   * they are rechecked before the next new tx (catchUp).
   */
  private async recheckTxs(): Promise<void> {
    this.rechecking = true;
    this.metrics?.recheckTimes?.inc();
    try {
      this.leftover = await this.recheckEntries([...this.txs.values()]);
    } finally {
      this.rechecking = false;
      this.recheckFull = false;
      this.updateGauges();
    }
  }

  /**
   * Rechecks `entries` in order within recheck_timeout (one timer for the pass); returns the ones
   * not reached, or null. Every RECHECK_SLICE_MS of work it yields to the event loop, so that RPC
   * is answered while thousands of txs are rechecked (new CheckTx calls wait meanwhile).
   */
  private async recheckEntries(entries: Entry[]): Promise<Entry[] | null> {
    const deadline = Date.now() + this.config.recheckTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), Math.max(0, this.config.recheckTimeoutMs))));
    const turns = new LoopTurns();
    try {
      for (let i = 0; i < entries.length; i++) {
        const e = entries[i]!;
        if (Date.now() >= deadline) return entries.slice(i);
        if (turns.due()) {
          await turns.turn();
          if (Date.now() >= deadline) return entries.slice(i);
        }
        // Committed or flushed while this pass yielded: nothing to recheck.
        if (this.txs.get(e.keyStr) !== e) continue;
        const res = await Promise.race([this.app.checkTx(e.tx, CheckTxType.Recheck).catch((): 'error' => 'error'), timeout]);
        if (res === 'timeout') return entries.slice(i + 1);
        // An app failure is not the tx's fault: keep it.
        if (res === 'error') continue;
        const postErr = res.code === 0 && this.postCheck !== undefined ? this.postCheck(e.tx, res) : undefined;
        if (res.code !== 0 || postErr !== undefined) {
          if (this.removeEntry(e.keyStr)) this.metrics?.evictedTxs?.inc();
          if (!this.config.keepInvalidTxsInCache) this.cache.remove(e.keyStr);
        }
      }
      return null;
    } finally {
      clearTimeout(timer);
      this.updateGauges();
    }
  }

  /**
   * The txs a recheck_timeout cut left out of the app's check state, rechecked before the next
   * new tx is checked: otherwise a sender's next tx would meet the sequence of the last tx the
   * cut recheck reached and be refused (account sequence mismatch) while its predecessors stay
   * in the pool. One pass, itself within recheck_timeout; what it does not reach waits for the
   * next new tx or the next block's recheck.
   */
  private catchUp(): Promise<void> {
    this.catchingUp ??= (async () => {
      try {
        const l = this.leftover;
        this.leftover = null;
        if (l !== null) this.leftover = await this.recheckEntries(l);
      } finally {
        this.catchingUp = null;
      }
    })();
    return this.catchingUp;
  }

  /** Flush (unsafe_flush_mempool): empties the pool and the cache. */
  flush(): void {
    this.leftover = null;
    this.txs.clear();
    this.txsBytes = 0;
    this.cache.reset();
    this.updateGauges();
  }

  /**
   * Subscribes to "txs available": called at most once per height, when the pool holds txs
   * (EnableTxsAvailable/TxsAvailable). Returns the unsubscribe function.
   */
  onTxsAvailable(listener: () => void): () => void {
    this.txsAvailableListeners.add(listener);
    return () => this.txsAvailableListeners.delete(listener);
  }

  /** Subscribes to each admitted tx (called synchronously on admission); returns the unsubscribe function. */
  onTxAdded(listener: (tx: Bytes) => void): () => void {
    this.txAddedListeners.add(listener);
    return () => this.txAddedListeners.delete(listener);
  }

  private notifyTxsAvailable(): void {
    if (this.txs.size === 0 || this.txsAvailableListeners.size === 0 || this.notifiedTxsAvailable) return;
    this.notifiedTxsAvailable = true;
    for (const l of this.txsAvailableListeners) {
      try {
        l();
      } catch {
        // A listener's failure must not undo the admission of the tx.
      }
    }
  }
}
