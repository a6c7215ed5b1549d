/**
 * The EVM tx pool: raw signed Ethereum txs kept per sender in nonce order, with geth's legacy
 * pool rules (ethereum/go-ethereum:core/txpool/legacypool/legacypool.go, core/txpool/validation.go,
 * core/txpool/errors.go), on top of the app's CheckTx.
 *
 * - A sender's txs are `pending` while their nonces run without a gap from the account's committed
 *   nonce, `queued` after a gap. A tx that fills the gap promotes the queued ones behind it.
 * - Same sender and nonce: a replacement, accepted only when both the fee cap and the tip are at
 *   least `priceBump` % (10) above the old tx's (`replacement transaction underpriced`).
 * - `priceLimit`: a tx whose tip cap (a legacy tx's gas price) is below it is refused with geth's
 *   `transaction gas price below minimum: gas tip cap X, minimum needed Y` (core/txpool/validation.go).
 * - Limits: `accountQueue` queued per sender (`account limit exceeded`; pending txs of a sender are
 *   not limited by number, as in geth),
 *   `globalSlots + globalQueue` in all and `maxTxsBytes`; a full pool evicts the cheapest sender's
 *   last tx for a better-paying one, else `transaction underpriced`. While some sender holds more
 *   than `accountSlots` txs, only such senders lose txs (geth's truncatePending spares accounts
 *   at or under AccountSlots).
 * - `lifetime`: a sender's queued txs are dropped when none of its txs became pending for that
 *   long (geth's per-account heartbeat and its eviction loop, every minute: legacypool.go loop,
 *   queue.go evictList); senders whose txs came through this node's RPC are spared, as geth
 *   (up to v1.14) spared local accounts — its later locals tracker resubmits them instead.
 * - `already known` (ErrTxInCache), the pool's own refusals as EvmPoolError (replacement, limits),
 *   and, as CheckTx responses with the SDK's codes: `nonce too low: next nonce N, tx nonce M`,
 *   `insufficient funds for gas * price + value: balance B, tx cost C, overshot O`, and the app's
 *   own refusals (chain id, intrinsic gas, signature) as the app words them.
 *
 * The app's CheckTx still validates every tx (signature, chain id, intrinsic gas, balance): the
 * EVM ante demands nonce = the check state's sequence and bumps it, so a tx the pool holds as
 * pending is "applied" to the check state when the app accepted it. A queued tx is answered by
 * the app with `nonce too high` after every check before the nonce passed; the pool keeps it and
 * applies it (CheckTx Recheck) when it is promoted. After a commit the check state is the committed
 * state again: update() drops mined and now-invalid txs, demotes the ones behind a gap and rechecks
 * the pending ones in nonce order. When `recheck_timeout` cuts that short, the txs not reached are
 * left unapplied and are applied, in nonce order, before the sender's next tx is checked — so that
 * tx is not refused with `nonce too high` (the defect of the arrival-order pool, which left
 * un-rechecked txs out of the check state).
 */
import { CheckTxType, type Application, type ExecTxResult, type ResponseCheckTx } from '../abci/types.js';
import type { Bytes } from '../types/block.js';
import { LruTxCache } from './clist_mempool.js';
import { ErrAppConnMempool, ErrMempoolIsFull, ErrPreCheck, ErrTxInCache, ErrTxTooLarge, MempoolError } from './errors.js';
import { computeProtoSizeForTxs, LoopTurns, txKey, type CheckTxResult, type Mempool, type MempoolTx, type PostCheckFunc, type PreCheckFunc, type TxInfo } from './mempool.js';
import { bytesToKey } from '../crypto/bytes.js';

/** What the pool needs to know of one EVM tx (decoded and its sender recovered by the chain). */
export interface EvmPoolTxInfo {
  /** 0x-prefixed keccak hash of the tx (the Ethereum tx hash). */
  hash: string;
  /** 0x-prefixed lowercase sender address. */
  sender: string;
  nonce: bigint;
  gasLimit: bigint;
  /** maxFeePerGas, or the gas price of a legacy / access-list tx. */
  feeCap: bigint;
  /** maxPriorityFeePerGas, or the gas price. */
  tip: bigint;
  value: bigint;
  /** 0x recipient, or null for a contract creation. */
  to: string | null;
}

/** The chain as the pool sees it: decoding and the committed account state. */
export interface EvmPoolChain {
  /** Decodes and recovers the sender; throws an Error worded as geth would (chain id, rlp, sender). */
  inspect(tx: Bytes): EvmPoolTxInfo;
  /** The sender's committed nonce and balance (the last block's state). */
  account(sender: string): { nonce: bigint; balance: bigint };
}

/** Pool limits (geth's legacypool.DefaultConfig; app.toml `[evm.mempool]`) plus CometBFT's byte limits. */
export interface EvmPoolConfig {
  /** Minimum tip cap admitted, in wei (geth PriceLimit 1; chaind's default 0: its EVM suggests a tip of 0). */
  priceLimit: bigint;
  /** Pending txs per sender spared by eviction while senders with more exist (geth AccountSlots 16). */
  accountSlots: number;
  /** Queued txs per sender (geth AccountQueue 64). */
  accountQueue: number;
  /** Pending txs in all (geth GlobalSlots 5120). */
  globalSlots: number;
  /** Queued txs in all (geth GlobalQueue 1024). */
  globalQueue: number;
  /** Minimum fee bump of a replacement, in percent (geth PriceBump 10). */
  priceBump: number;
  /** ms a sender's queued txs are kept without progress (geth Lifetime 3h). */
  lifetimeMs: number;
  /** `[mempool] max_txs_bytes`. */
  maxTxsBytes: number;
  /** `[mempool] max_tx_bytes`. */
  maxTxBytes: number;
  /** `[mempool] cache_size`: committed tx keys remembered so a mined tx is `already known`. */
  cacheSize: number;
  /** `[mempool] recheck`. */
  recheck: boolean;
  /** `[mempool] recheck_timeout` in ms. */
  recheckTimeoutMs: number;
}

export function defaultEvmPoolConfig(): EvmPoolConfig {
  return {
    priceLimit: 0n,
    accountSlots: 16,
    accountQueue: 64,
    globalSlots: 5120,
    globalQueue: 1024,
    priceBump: 10,
    lifetimeMs: 3 * 3_600_000,
    maxTxsBytes: 1073741824,
    maxTxBytes: 1048576,
    cacheSize: 10000,
    recheck: true,
    recheckTimeoutMs: 1000,
  };
}

/** A refusal by the pool itself, with geth's words (core/txpool/errors.go, core/txpool/validation.go). */
export class EvmPoolError extends MempoolError {}

export const ERR_REPLACE_UNDERPRICED = 'replacement transaction underpriced';
export const ERR_UNDERPRICED = 'transaction underpriced';
export const ERR_ACCOUNT_LIMIT = 'account limit exceeded';
export const ERR_POOL_FULL = 'txpool is full';
export const ERR_GAS_PRICE_TOO_LOW = 'transaction gas price below minimum';

/** geth's eviction interval (core/txpool/legacypool/legacypool.go evictionInterval). */
export const EVICTION_INTERVAL_MS = 60_000;

export interface EvmPoolEntry extends MempoolTx {
  keyStr: string;
  info: EvmPoolTxInfo;
  /** Its effects (sequence, cost) are in the app's current check state. */
  applied: boolean;
  /** Arrival counter: ties in price go to the earlier tx. */
  seq: number;
  /** Its size inside a block's Data (computeProtoSizeForTxs). */
  protoSize: number;
}

interface Account {
  addr: string;
  /** Committed nonce, as last read. */
  nonce: bigint;
  txs: Map<bigint, EvmPoolEntry>;
  /** First nonce after the pending run (nonce … pendingEnd-1 are pending). */
  pendingEnd: bigint;
  /** Last progress (geth's heartbeat), ms: set when its queue starts, bumped when a tx becomes
   * pending; undefined while it has no queued tx. */
  beat: number | undefined;
  /** One of its txs came through this node's RPC (not from a peer): `lifetime` spares it. */
  local: boolean;
}

export interface EvmPoolModules {
  app: Pick<Application, 'checkTx'>;
  chain: EvmPoolChain;
  height?: bigint;
  preCheck?: PreCheckFunc;
  postCheck?: PostCheckFunc;
  /** Called with the number of txs a recheck did not reach before recheck_timeout (tests, logs). */
  onRecheckCut?: (left: number) => void;
  /** Called with the number of queued txs `lifetime` dropped (logs). */
  onExpired?: (dropped: number) => void;
  /** The clock of `lifetime`, ms (tests inject one); default Date.now. */
  now?: () => number;
}

/** The price per gas a tx pays a proposer with a base fee of 0: min(tip, fee cap). */
export function effectiveTip(i: Pick<EvmPoolTxInfo, 'tip' | 'feeCap'>): bigint {
  return i.tip < i.feeCap ? i.tip : i.feeCap;
}

/** The first nonce after the sender's run of txs from its committed nonce (its pending run's end). */
function runEnd(a: Account): bigint {
  let n = a.nonce;
  while (a.txs.has(n)) n++;
  return n;
}

/** Txs of the sender behind its gap (every nonce of the pending run is present). */
function queuedOf(a: Account): number {
  return a.txs.size - Number(a.pendingEnd - a.nonce);
}

function cost(i: EvmPoolTxInfo): bigint {
  return i.gasLimit * i.feeCap + i.value;
}

/**
 * The SDK errors the app's EVM ante gives for the same faults (cosmos/cosmos-sdk:types/errors/errors.go):
 * the pool answers them as CheckTx responses, as the app would, so broadcast_tx_sync reports a
 * code; the log ends with the error's description, which eth_sendRawTransaction strips.
 */
const SDK_WRONG_SEQUENCE = { code: 32, description: 'incorrect account sequence' };
const SDK_INSUFFICIENT_FUNDS = { code: 5, description: 'insufficient funds' };

function refuse(info: EvmPoolTxInfo, err: { code: number; description: string }, msg: string): CheckTxResult {
  return { response: { code: err.code, data: new Uint8Array(0), log: `${msg}: ${err.description}`, info: '', gasWanted: info.gasLimit, gasUsed: 0n, events: [], codespace: 'sdk' }, added: false };
}

function okResponse(gasWanted: bigint): ResponseCheckTx {
  return { code: 0, data: new Uint8Array(0), log: '', info: '', gasWanted, gasUsed: 0n, events: [], codespace: '' };
}

/** A max-heap by effective tip (`tip`, computed once per item), then arrival. */
class TipHeap<T extends { e: EvmPoolEntry; tip: bigint }> {
  private readonly a: T[] = [];
  private better(x: T, y: T): boolean {
    return x.tip !== y.tip ? x.tip > y.tip : x.e.seq < y.e.seq;
  }
  get size(): number {
    return this.a.length;
  }
  push(v: T): void {
    const a = this.a;
    a.push(v);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.better(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): T | undefined {
    const a = this.a;
    if (a.length === 0) return undefined;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.better(a[l]!, a[m]!)) m = l;
        if (r < a.length && this.better(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}

export class EvmTxPool implements Mempool {
  readonly config: Readonly<EvmPoolConfig>;
  private readonly app: Pick<Application, 'checkTx'>;
  private readonly chain: EvmPoolChain;
  private preCheck: PreCheckFunc | undefined;
  private postCheck: PostCheckFunc | undefined;
  private readonly onRecheckCut: ((left: number) => void) | undefined;
  private readonly onExpired: ((dropped: number) => void) | undefined;
  private readonly now: () => number;
  private evictTimer: NodeJS.Timeout | undefined;
  private readonly cache: LruTxCache;

  private readonly accounts = new Map<string, Account>();
  private readonly byKey = new Map<string, EvmPoolEntry>();
  /** Admitted tx objects → their entry (knownKey): a block reaped from here is looked up without hashing. */
  private readonly byTx = new WeakMap<Bytes, EvmPoolEntry>();
  private readonly byHash = new Map<string, EvmPoolEntry>();
  private bytes = 0;
  private pendingCount = 0;
  private height: bigint;
  private arrivals = 0;

  private locked = false;
  private unlockWaiters: (() => void)[] = [];
  /** CheckTx calls run one after another: each reads and changes the per-sender state across awaits. */
  private tail: Promise<void> = Promise.resolve();
  /** The admission running now (past its lock check), if any. */
  private inFlight: Promise<void> | undefined;
  private rechecking = false;

  private notifiedTxsAvailable = false;
  private readonly txsAvailableListeners = new Set<() => void>();
  private readonly txAddedListeners = new Set<(tx: Bytes) => void>();

  constructor(config: Partial<EvmPoolConfig>, modules: EvmPoolModules) {
    this.config = Object.freeze({ ...defaultEvmPoolConfig(), ...config });
    this.app = modules.app;
    this.chain = modules.chain;
    this.preCheck = modules.preCheck;
    this.postCheck = modules.postCheck;
    this.onRecheckCut = modules.onRecheckCut;
    this.onExpired = modules.onExpired;
    this.now = modules.now ?? Date.now;
    this.height = modules.height ?? 0n;
    this.cache = new LruTxCache(this.config.cacheSize);
  }

  // --- reading ------------------------------------------------------------------------------------

  size(): number {
    return this.byKey.size;
  }

  sizeBytes(): number {
    return this.bytes;
  }

  get isRechecking(): boolean {
    return this.rechecking;
  }

  has(key: Bytes): boolean {
    return this.byKey.has(bytesToKey(key));
  }

  getTx(key: Bytes): MempoolTx | undefined {
    return this.byKey.get(bytesToKey(key));
  }

  knownKey(tx: Bytes): Bytes | undefined {
    return this.byTx.get(tx)?.key;
  }

  /** The tx with this Ethereum hash (0x lowercase), pending or queued. */
  getByHash(hash: string): EvmPoolEntry | undefined {
    return this.byHash.get(hash.toLowerCase());
  }

  /** Pending and queued counts (txpool_status). */
  stats(): { pending: number; queued: number } {
    return { pending: this.pendingCount, queued: this.byKey.size - this.pendingCount };
  }

  /**
   * Every sender's txs split into pending and queued, each in nonce order (txpool_content);
   * `sender` (0x lowercase) limits it to one account.
   */
  content(sender?: string): { pending: Map<string, EvmPoolEntry[]>; queued: Map<string, EvmPoolEntry[]> } {
    const pending = new Map<string, EvmPoolEntry[]>();
    const queued = new Map<string, EvmPoolEntry[]>();
    const accts = sender === undefined ? [...this.accounts.values()] : [this.accounts.get(sender.toLowerCase())].filter((a): a is Account => a !== undefined);
    for (const a of accts) {
      const sorted = [...a.txs.values()].sort((x, y) => (x.info.nonce < y.info.nonce ? -1 : 1));
      const p = sorted.filter((e) => e.info.nonce < a.pendingEnd);
      const q = sorted.filter((e) => e.info.nonce >= a.pendingEnd);
      if (p.length > 0) pending.set(a.addr, p);
      if (q.length > 0) queued.set(a.addr, q);
    }
    return { pending, queued };
  }

  /** The sender's next nonce counting its pending txs (eth_getTransactionCount `pending`). */
  pendingNonce(sender: string): bigint | undefined {
    return this.accounts.get(sender.toLowerCase())?.pendingEnd;
  }

  /** Pending txs, sender by sender in nonce order (gossip sees pending txs only, as geth announces only those). */
  *entries(): IterableIterator<MempoolTx> {
    // Each sender's pending run in nonce order (no price sort: gossip walks this on every pass).
    for (const a of [...this.accounts.values()]) {
      for (let n = a.nonce; n < a.pendingEnd; n++) {
        const e = a.txs.get(n);
        if (e !== undefined) yield e;
      }
    }
  }

  reapMaxBytesMaxGas(maxBytes: bigint | number, maxGas: bigint | number): Bytes[] {
    return this.ordered(BigInt(maxBytes), BigInt(maxGas), Infinity).entries.map((e) => e.tx);
  }

  reapMaxTxs(n: number): Bytes[] {
    return this.ordered(-1n, -1n, n < 0 ? Infinity : n).entries.map((e) => e.tx);
  }

  /**
   * Pending txs as a proposer takes them (geth's miner: transactionsByPriceAndNonce): each sender's
   * in nonce order, across senders the highest effective tip first (arrival breaks ties). A tx
   * that does not fit the bytes or gas left ends its sender's run (its later nonces could not run).
   */
  ordered(maxBytes: bigint, maxGas: bigint, maxTxs: number): { entries: EvmPoolEntry[]; bytes: bigint; gas: bigint } {
    const heap = new TipHeap<{ e: EvmPoolEntry; a: Account; tip: bigint }>();
    for (const a of this.accounts.values()) {
      const e = a.txs.get(a.nonce);
      if (e !== undefined) heap.push({ e, a, tip: effectiveTip(e.info) });
    }
    const out: EvmPoolEntry[] = [];
    let bytes = 0n;
    let gas = 0n;
    while (heap.size > 0 && out.length < maxTxs) {
      const { e, a } = heap.pop()!;
      const size = BigInt(e.protoSize);
      if ((maxBytes > -1n && bytes + size > maxBytes) || (maxGas > -1n && gas + e.gasWanted > maxGas)) continue;
      bytes += size;
      gas += e.gasWanted;
      out.push(e);
      const next = a.txs.get(e.info.nonce + 1n);
      if (next !== undefined && next.info.nonce < a.pendingEnd) heap.push({ e: next, a, tip: effectiveTip(next.info) });
    }
    return { entries: out, bytes, gas };
  }

  // --- admission ----------------------------------------------------------------------------------

  private localChecks(tx: Bytes): void {
    // No refusal while the pool rechecks after a commit: the recheck runs under the lock
    // (update()), bounded by recheck_timeout, and a new tx waits for the unlock, as geth's pool
    // takes txs across its reorg and as the Cosmos pool waits on CometBFT's update lock.
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
   * Runs `work` in its turn: after the calls before it (admissions and eviction ticks run one
   * after another, each reading and changing per-sender state across awaits) and once no update
   * holds the lock. `work` is called with no await after the lock check.
   */
  private async inTurn<T>(work: () => T | Promise<T>): Promise<T> {
    const prev = this.tail;
    let done!: () => void;
    this.tail = new Promise<void>((r) => (done = r));
    try {
      await prev;
      while (this.locked) await this.waitUnlocked();
      return await work();
    } finally {
      done();
    }
  }

  async checkTx(tx: Bytes, info: TxInfo = {}): Promise<CheckTxResult> {
    this.localChecks(tx);
    return this.inTurn(async () => {
      this.localChecks(tx);
      // No await between the lock check and this: lock() waits for exactly this admission.
      const run = this.admit(tx, info);
      this.inFlight = run.then(
        () => undefined,
        () => undefined,
      );
      try {
        return await run;
      } finally {
        this.inFlight = undefined;
      }
    });
  }

  private account(addr: string): Account {
    let a = this.accounts.get(addr);
    if (a === undefined) {
      a = { addr, nonce: 0n, txs: new Map(), pendingEnd: 0n, beat: undefined, local: false };
      this.accounts.set(addr, a);
    }
    return a;
  }

  /** Recomputes the pending run of a sender and the pool's pending count. */
  private settle(a: Account): void {
    const before = a.pendingEnd < a.nonce ? 0n : a.pendingEnd - a.nonce;
    const n = (a.pendingEnd = runEnd(a));
    this.pendingCount += Number(n - a.nonce - before);
    if (queuedOf(a) === 0) a.beat = undefined;
    if (a.txs.size === 0) this.accounts.delete(a.addr);
  }

  private insert(a: Account, e: EvmPoolEntry): void {
    a.txs.set(e.info.nonce, e);
    this.byKey.set(e.keyStr, e);
    this.byTx.set(e.tx, e);
    this.byHash.set(e.info.hash, e);
    this.bytes += e.tx.length;
  }

  /** Takes a tx out (no re-settling: callers settle the account). */
  private unlink(a: Account, e: EvmPoolEntry): void {
    if (a.txs.get(e.info.nonce) === e) a.txs.delete(e.info.nonce);
    this.byKey.delete(e.keyStr);
    if (this.byHash.get(e.info.hash) === e) this.byHash.delete(e.info.hash);
    this.bytes -= e.tx.length;
  }

  private async appCheck(tx: Bytes, type: CheckTxType): Promise<ResponseCheckTx> {
    try {
      return await this.app.checkTx(tx, type);
    } catch (err) {
      throw new ErrAppConnMempool(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /**
   * Applies the sender's pending txs below `upTo` that are not in the check state yet (a recheck
   * cut short, or recheck off), in nonce order. A tx the app now refuses leaves the pool; the ones
   * behind it become queued.
   */
  private async catchUp(a: Account, upTo: bigint): Promise<void> {
    for (let n = a.nonce; n < upTo && n < a.pendingEnd; n++) {
      const e = a.txs.get(n);
      if (e === undefined || e.applied) continue;
      const res = await this.appCheck(e.tx, CheckTxType.Recheck);
      if (res.code === 0) {
        e.applied = true;
        continue;
      }
      if (/nonce too (high|low)/.test(res.log)) continue; // the check state is off; leave it to the block
      this.unlink(a, e);
      this.settle(a);
      return;
    }
  }

  private async admit(tx: Bytes, txInfo: TxInfo): Promise<CheckTxResult> {
    const key = txKey(tx);
    const ks = bytesToKey(key);
    const have = this.byKey.get(ks);
    if (have !== undefined) {
      if (txInfo.sender !== undefined) have.senders.add(txInfo.sender);
      throw new ErrTxInCache();
    }
    if (this.cache.has(ks)) throw new ErrTxInCache();

    let info: EvmPoolTxInfo;
    try {
      info = this.chain.inspect(tx);
    } catch (e) {
      // Undecodable, foreign chain id, bad signature: the app's own refusal, with its code.
      const res = await this.appCheck(tx, CheckTxType.New);
      if (res.code !== 0) return { response: res, added: false };
      throw new EvmPoolError('EVM_TX_INVALID', (e as Error).message);
    }
    // ethereum/go-ethereum:core/txpool/validation.go ValidateTransaction (ErrTxGasPriceTooLow).
    if (info.tip < this.config.priceLimit) {
      throw new EvmPoolError('EVM_GAS_PRICE_TOO_LOW', `${ERR_GAS_PRICE_TOO_LOW}: gas tip cap ${info.tip}, minimum needed ${this.config.priceLimit}`);
    }
    const state = this.chain.account(info.sender);
    const a = this.account(info.sender);
    if (a.nonce !== state.nonce) {
      // A new sender, or blocks moved the account on since update() last saw it: forget what
      // they made stale and count this sender's pending run again (O(its txs)).
      const before = a.pendingEnd > a.nonce ? a.pendingEnd - a.nonce : 0n;
      a.nonce = state.nonce;
      for (const [n, e] of a.txs) if (n < a.nonce) this.unlink(a, e);
      const n = (a.pendingEnd = runEnd(a));
      this.pendingCount += Number(n - a.nonce - before);
    }
    try {
      return await this.admitTo(a, tx, key, ks, info, state.balance, txInfo);
    } finally {
      if (a.txs.size === 0) this.accounts.delete(a.addr);
    }
  }

  /** Recounts pending txs of every account (after an account's base nonce moved). */
  private recount(): void {
    let p = 0;
    for (const a of this.accounts.values()) {
      a.pendingEnd = runEnd(a);
      p += Number(a.pendingEnd - a.nonce);
    }
    this.pendingCount = p;
  }

  private async admitTo(a: Account, tx: Bytes, key: Bytes, ks: string, info: EvmPoolTxInfo, balance: bigint, txInfo: TxInfo): Promise<CheckTxResult> {
    const cfg = this.config;
    if (info.nonce < a.nonce) return refuse(info, SDK_WRONG_SEQUENCE, `nonce too low: next nonce ${a.nonce}, tx nonce ${info.nonce}`);

    const old = a.txs.get(info.nonce);
    if (old !== undefined) {
      const bump = BigInt(100 + cfg.priceBump);
      const feeCapMin = (old.info.feeCap * bump) / 100n;
      const tipMin = (old.info.tip * bump) / 100n;
      if (info.feeCap < feeCapMin || info.tip < tipMin) throw new EvmPoolError('EVM_REPLACE_UNDERPRICED', ERR_REPLACE_UNDERPRICED);
    }

    const c = cost(info);
    if (balance < c) {
      return refuse(info, SDK_INSUFFICIENT_FUNDS, `insufficient funds for gas * price + value: balance ${balance}, tx cost ${c}, overshot ${c - balance}`);
    }
    if (old !== undefined) {
      let spent = 0n;
      for (const e of a.txs.values()) spent += cost(e.info);
      const bump = c - cost(old.info);
      if (balance < spent + bump) {
        return refuse(info, SDK_INSUFFICIENT_FUNDS, `insufficient funds for gas * price + value: balance ${balance}, queued cost ${spent}, tx bump ${bump}, overshot ${spent + bump - balance}`);
      }
    }

    const willPend = info.nonce <= a.pendingEnd;
    if (old === undefined) {
      // Per-sender limits.
      let pend = 0;
      for (const n of a.txs.keys()) if (n < a.pendingEnd) pend++;
      const queued = a.txs.size - pend;
      // geth admits any number of executable txs of an ordinary account (legacypool's
      // UsedAndLeftSlots answers MaxInt; AccountSlots only shields 16 of them from the eviction of
      // an over-full pool); a sender's queue, behind a gap, is bounded.
      if (!willPend && queued >= cfg.accountQueue) throw new EvmPoolError('EVM_ACCOUNT_LIMIT', ERR_ACCOUNT_LIMIT);
      // Global limits: make room by evicting the cheapest, or refuse.
      while (this.byKey.size >= cfg.globalSlots + cfg.globalQueue || this.bytes + tx.length > cfg.maxTxsBytes) {
        const victim = this.cheapestTail(a.addr);
        if (victim === undefined) throw new ErrMempoolIsFull(this.byKey.size, cfg.globalSlots + cfg.globalQueue, this.bytes, cfg.maxTxsBytes);
        const vt = effectiveTip(victim.e.info);
        const nt = effectiveTip(info);
        if (nt < vt || (nt === vt && info.feeCap <= victim.e.info.feeCap)) throw new EvmPoolError('EVM_UNDERPRICED', ERR_UNDERPRICED);
        this.unlink(victim.a, victim.e);
        this.settle(victim.a);
      }
      // A tx that continues the pending run: first apply the run's unapplied txs (a cut recheck).
      if (info.nonce === a.pendingEnd) await this.catchUp(a, info.nonce);
    }

    const res = await this.appCheck(tx, CheckTxType.New);
    let applied: boolean;
    let response: ResponseCheckTx;
    if (res.code === 0) {
      const postErr = this.postCheck?.(tx, res);
      if (postErr !== undefined) return { response: { ...res, code: 1, log: postErr.message }, added: false };
      applied = true;
      response = res;
    } else if (/nonce too (high|low)/.test(res.log)) {
      // The app checked all that comes before the nonce (chain id, sender, intrinsic gas); the
      // nonce is the pool's business. A replacement keeps its predecessor's place in the check state.
      applied = old?.applied ?? false;
      response = okResponse(info.gasLimit);
      const postErr = this.postCheck?.(tx, response);
      if (postErr !== undefined) return { response: { ...res, log: postErr.message }, added: false };
    } else {
      return { response: res, added: false };
    }
    // The app awaited: the sender's txs may have changed meanwhile only through this pool's own
    // serialized calls, so `old` is still the one at this nonce unless a block removed it.
    const cur = a.txs.get(info.nonce);
    if (cur !== undefined) this.unlink(a, cur);
    this.accounts.set(a.addr, a);
    const e: EvmPoolEntry = { tx, key, keyStr: ks, height: this.height, gasWanted: info.gasLimit, senders: new Set(txInfo.sender === undefined ? [] : [txInfo.sender]), info, applied, seq: this.arrivals++, protoSize: computeProtoSizeForTxs([tx]) };
    const wasEnd = a.pendingEnd;
    const queuedBefore = queuedOf(a);
    if (txInfo.sender === undefined) a.local = true;
    this.insert(a, e);
    this.settle(a);
    // geth's heartbeat (queue.go add/bump): a new queue starts it; a tx becoming pending (added,
    // replaced or promoted) bumps it.
    if (queuedOf(a) > 0 && (queuedBefore === 0 || a.beat === undefined || e.info.nonce < a.pendingEnd)) a.beat = this.now();
    const announce: EvmPoolEntry[] = [];
    if (e.info.nonce < a.pendingEnd) announce.push(e);
    // Promotion: queued txs the new one joined to the pending run enter the check state in order.
    if (old === undefined && info.nonce === wasEnd) {
      for (let n = info.nonce + 1n; n < a.pendingEnd; n++) {
        const q = a.txs.get(n)!;
        if (!q.applied) {
          const r = await this.appCheck(q.tx, CheckTxType.Recheck);
          if (r.code === 0) q.applied = true;
          else if (!/nonce too (high|low)/.test(r.log)) {
            this.unlink(a, q);
            this.settle(a);
            break;
          }
        }
        announce.push(q);
      }
    }
    if (this.pendingCount > 0) this.notifyTxsAvailable();
    for (const p of announce) this.announce(p.tx);
    return { response, added: true };
  }

  /**
   * The last tx (highest nonce) of the sender whose last tx pays least, other than `exclude`;
   * among the senders with more than `accountSlots` pending txs while there are any.
   */
  private cheapestTail(exclude: string): { a: Account; e: EvmPoolEntry } | undefined {
    return this.cheapestTailOf(exclude, this.config.accountSlots) ?? this.cheapestTailOf(exclude, 0);
  }

  /** `over` 0: every sender; n: senders with more than n pending txs. */
  private cheapestTailOf(exclude: string, over: number): { a: Account; e: EvmPoolEntry } | undefined {
    let best: { a: Account; e: EvmPoolEntry } | undefined;
    for (const a of this.accounts.values()) {
      if (a.addr === exclude || a.txs.size === 0) continue;
      if (over > 0 && a.pendingEnd - a.nonce <= BigInt(over)) continue;
      let last: EvmPoolEntry | undefined;
      for (const e of a.txs.values()) if (last === undefined || e.info.nonce > last.info.nonce) last = e;
      if (last === undefined) continue;
      if (best === undefined) best = { a, e: last };
      else {
        const t = effectiveTip(last.info);
        const bt = effectiveTip(best.e.info);
        if (t < bt || (t === bt && last.info.feeCap < best.e.info.feeCap)) best = { a, e: last };
      }
    }
    return best;
  }

  private announce(tx: Bytes): void {
    for (const l of this.txAddedListeners) {
      try {
        l(tx);
      } catch {
        // A listener's failure must not undo the admission.
      }
    }
  }

  // --- removal and the block -------------------------------------------------------------------------

  removeTxByKey(key: Bytes): boolean {
    const e = this.byKey.get(bytesToKey(key));
    if (e === undefined) return false;
    const a = this.accounts.get(e.info.sender)!;
    this.unlink(a, e);
    this.settle(a);
    return true;
  }

  async lock(): Promise<void> {
    while (this.locked) await this.waitUnlocked();
    this.locked = true;
    // Let the admission already past its lock check finish; queued ones wait for unlock().
    while (this.inFlight !== undefined) await this.inFlight;
  }

  unlock(): void {
    if (!this.locked) throw new Error('mempool unlock without lock');
    this.locked = false;
    const ws = this.unlockWaiters;
    this.unlockWaiters = [];
    for (const w of ws) w();
  }

  /**
   * After the block at `height` committed (lock held; the app's check state is the committed state
   * again): mined txs leave; every sender's txs below its new nonce leave (mined elsewhere or
   * replaced); txs the sender can no longer pay leave; txs behind a new gap are demoted to queued;
   * the pending ones are rechecked in nonce order until recheck_timeout.
   */
  async update(height: bigint, txs: readonly Bytes[], results: readonly Pick<ExecTxResult, 'code'>[], preCheck?: PreCheckFunc, postCheck?: PostCheckFunc): Promise<void> {
    if (!this.locked) throw new Error('mempool update without lock');
    if (txs.length !== results.length) throw new Error(`update with ${txs.length} txs but ${results.length} results`);
    this.height = height;
    this.notifiedTxsAvailable = false;
    if (preCheck !== undefined) this.preCheck = preCheck;
    if (postCheck !== undefined) this.postCheck = postCheck;
    // The RPC thread answers between slices of RECHECK_SLICE_MS (new admissions wait for the
    // lock). A reader meanwhile may see a sender whose mined txs are gone and whose committed nonce
    // is not refreshed yet: its pending run then starts at a missing nonce (not reaped, not
    // gossiped) until its turn comes.
    const turns = new LoopTurns();
    for (let i = 0; i < txs.length; i++) {
      if (turns.due(i, 256)) await turns.turn();
      const ks = this.byTx.get(txs[i]!)?.keyStr ?? bytesToKey(txKey(txs[i]!));
      if (results[i]!.code === 0) this.cache.push(ks);
      const e = this.byKey.get(ks);
      if (e !== undefined) this.unlink(this.accounts.get(e.info.sender)!, e);
    }
    const before = new Map<Account, bigint>();
    for (const a of [...this.accounts.values()]) {
      // Each account costs two reads of committed state: hundreds of senders take tens of ms.
      if (turns.due()) await turns.turn();
      if (this.accounts.get(a.addr) !== a) continue; // emptied or flushed while this pass yielded
      before.set(a, a.pendingEnd);
      const st = this.chain.account(a.addr);
      a.nonce = st.nonce;
      for (const [n, e] of a.txs) {
        e.applied = false;
        if (n < a.nonce) this.unlink(a, e);
      }
      // geth demoteUnexecutables: drop what the balance can no longer pay.
      for (const e of [...a.txs.values()]) if (cost(e.info) > st.balance) this.unlink(a, e);
      if (a.txs.size === 0) this.accounts.delete(a.addr);
      else a.pendingEnd = runEnd(a);
    }
    this.recount();
    const now = this.now();
    for (const a of this.accounts.values()) {
      // Demoted txs start a queue; txs the block made pending (their gap mined) bump it.
      if (queuedOf(a) === 0) a.beat = undefined;
      else if (a.beat === undefined || a.pendingEnd > (before.get(a) ?? 0n)) a.beat = now;
    }
    if (this.config.recheck && this.pendingCount > 0) await this.recheck();
    if (this.pendingCount > 0) this.notifyTxsAvailable();
  }

  /**
   * Rechecks the pending txs, sender by sender in nonce order, within recheck_timeout. An EVM
   * Recheck is answered in microtasks (no pool job): without the yields every RECHECK_SLICE_MS, a
   * block's worth of senders left behind (hundreds) held the RPC thread for their whole recheck.
   */
  private async recheck(): Promise<void> {
    this.rechecking = true;
    const deadline = Date.now() + this.config.recheckTimeoutMs;
    let left = this.pendingCount;
    const turns = new LoopTurns();
    try {
      outer: for (const a of [...this.accounts.values()]) {
        for (let n = a.nonce; n < a.pendingEnd; n++) {
          if (turns.due()) await turns.turn();
          if (Date.now() >= deadline) break outer;
          const e = a.txs.get(n);
          // Removed, or the pool flushed, while this pass yielded (remove_tx, unsafe_flush_mempool).
          if (e === undefined || this.byKey.get(e.keyStr) !== e) break;
          let res: ResponseCheckTx | 'error';
          try {
            res = await this.app.checkTx(e.tx, CheckTxType.Recheck);
          } catch {
            res = 'error';
          }
          left--;
          if (res === 'error') continue; // not the tx's fault: it stays, unapplied
          if (res.code === 0 && this.postCheck?.(e.tx, res) === undefined) {
            e.applied = true;
            continue;
          }
          // Now invalid: it leaves, and the sender's later txs are queued behind the gap.
          left -= Number(a.pendingEnd - n - 1n);
          this.unlink(a, e);
          this.settle(a);
          break;
        }
      }
    } finally {
      this.rechecking = false;
    }
    if (left > 0) this.onRecheckCut?.(left);
  }

  /**
   * Drops the queued txs of every non-local sender without progress for `lifetime` (geth's
   * eviction tick). Runs in turn with admissions and never inside update(); resolves to the number
   * of txs dropped.
   */
  evictStale(): Promise<number> {
    return this.inTurn(() => {
      // No await in here: no admission or update runs meanwhile.
      const now = this.now();
      let dropped = 0;
      for (const a of [...this.accounts.values()]) {
        if (a.local || a.beat === undefined || now - a.beat <= this.config.lifetimeMs) continue;
        for (const [n, e] of [...a.txs]) {
          if (n < a.pendingEnd) continue;
          this.unlink(a, e);
          dropped++;
        }
        this.settle(a);
      }
      if (dropped > 0) this.onExpired?.(dropped);
      return dropped;
    });
  }

  /** Starts the eviction tick (every minute, or every `lifetime` when shorter); it does not keep the process alive. */
  start(): void {
    if (this.evictTimer !== undefined) return;
    const every = Math.max(1, Math.min(EVICTION_INTERVAL_MS, this.config.lifetimeMs));
    this.evictTimer = setInterval(() => void this.evictStale().catch(() => undefined), every);
    this.evictTimer.unref();
  }

  stop(): void {
    if (this.evictTimer !== undefined) clearInterval(this.evictTimer);
    this.evictTimer = undefined;
  }

  flush(): void {
    this.accounts.clear();
    this.byKey.clear();
    this.byHash.clear();
    this.bytes = 0;
    this.pendingCount = 0;
    this.cache.reset();
  }

  onTxsAvailable(listener: () => void): () => void {
    this.txsAvailableListeners.add(listener);
    return () => this.txsAvailableListeners.delete(listener);
  }

  onTxAdded(listener: (tx: Bytes) => void): () => void {
    this.txAddedListeners.add(listener);
    return () => this.txAddedListeners.delete(listener);
  }

  private notifyTxsAvailable(): void {
    if (this.notifiedTxsAvailable || this.txsAvailableListeners.size === 0) return;
    this.notifiedTxsAvailable = true;
    for (const l of this.txsAvailableListeners) {
      try {
        l();
      } catch {
        // ignore
      }
    }
  }
}
