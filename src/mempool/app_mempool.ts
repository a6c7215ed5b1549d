/**
 * The node's mempool: Cosmos txs in the arrival-order CListMempool, EVM txs in the nonce-ordered
 * EvmTxPool (evm_pool.ts), behind the one Mempool interface the executor, the RPC and gossip use.
 * A tx goes to the EVM pool when `isEvm` claims its bytes (the EVM tx kind's lead bytes).
 *
 * A proposal shares the block's byte and gas budget fairly: each pool is first offered half of
 * both; what one leaves unused is then offered to the other (Cosmos txs first in the block, then
 * the EVM txs in nonce-within-sender, tip-across-senders order).
 */
import type { ExecTxResult } from '../abci/types.js';
import type { Gauge } from '../metrics/types.js';
import type { Bytes } from '../types/block.js';
import type { CListMempool } from './clist_mempool.js';
import type { EvmTxPool } from './evm_pool.js';
import { LoopTurns, type CheckTxResult, type Mempool, type MempoolTx, type PostCheckFunc, type PreCheckFunc, type TxInfo } from './mempool.js';

/** mempool_size and mempool_size_bytes over both pools (the Cosmos pool is then built without them). */
export interface AppMempoolGauges {
  size?: Gauge;
  sizeBytes?: Gauge;
}

export class AppMempool implements Mempool {
  constructor(
    readonly cosmos: CListMempool,
    readonly evm: EvmTxPool,
    private readonly isEvm: (tx: Bytes) => boolean,
    private readonly gauges: AppMempoolGauges = {},
  ) {
    this.updateGauges();
  }

  private updateGauges(): void {
    this.gauges.size?.set(this.size());
    this.gauges.sizeBytes?.set(this.sizeBytes());
  }

  private pool(tx: Bytes): Mempool {
    return this.isEvm(tx) ? this.evm : this.cosmos;
  }

  size(): number {
    return this.cosmos.size() + this.evm.size();
  }

  sizeBytes(): number {
    return this.cosmos.sizeBytes() + this.evm.sizeBytes();
  }

  get isRechecking(): boolean {
    return this.cosmos.isRechecking || this.evm.isRechecking;
  }

  has(key: Bytes): boolean {
    return this.cosmos.has(key) || this.evm.has(key);
  }

  getTx(key: Bytes): MempoolTx | undefined {
    return this.cosmos.getTx(key) ?? this.evm.getTx(key);
  }

  knownKey(tx: Bytes): Bytes | undefined {
    return this.cosmos.knownKey(tx) ?? this.evm.knownKey?.(tx);
  }

  *entries(): IterableIterator<MempoolTx> {
    yield* this.cosmos.entries();
    yield* this.evm.entries();
  }

  async checkTx(tx: Bytes, info?: TxInfo): Promise<CheckTxResult> {
    try {
      return await this.pool(tx).checkTx(tx, info);
    } finally {
      this.updateGauges();
    }
  }

  removeTxByKey(key: Bytes): boolean {
    const ok = this.cosmos.removeTxByKey(key) || this.evm.removeTxByKey(key);
    this.updateGauges();
    return ok;
  }

  reapMaxBytesMaxGas(maxBytes: bigint | number, maxGas: bigint | number): Bytes[] {
    const mb = BigInt(maxBytes);
    const mg = BigInt(maxGas);
    const half = (x: bigint) => (x < 0n ? -1n : x / 2n);
    const rest = (x: bigint, used: bigint) => (x < 0n ? -1n : x - used);
    // Cosmos' fair half, then the EVM pool gets everything the Cosmos half did not take, then
    // Cosmos gets everything the EVM txs left.
    const c1 = this.cosmos.reapWithTotals(half(mb), half(mg));
    const e = this.evm.ordered(rest(mb, BigInt(c1.bytes)), rest(mg, c1.gas), Infinity);
    // A reap is a prefix of the pool: when the half budget already took every Cosmos tx, the
    // larger one takes the same (a second pass over thousands of txs spared on the RPC thread).
    const c = c1.txs.length === this.cosmos.size() ? c1.txs : this.cosmos.reapMaxBytesMaxGas(rest(mb, e.bytes), rest(mg, e.gas));
    return [...c, ...e.entries.map((x) => x.tx)];
  }

  reapMaxTxs(n: number): Bytes[] {
    const c = this.cosmos.reapMaxTxs(n);
    return [...c, ...this.evm.reapMaxTxs(n < 0 ? -1 : n - c.length)];
  }

  async lock(): Promise<void> {
    await this.cosmos.lock();
    await this.evm.lock();
  }

  unlock(): void {
    this.evm.unlock();
    this.cosmos.unlock();
  }

  async update(height: bigint, txs: readonly Bytes[], results: readonly Pick<ExecTxResult, 'code'>[], preCheck?: PreCheckFunc, postCheck?: PostCheckFunc): Promise<void> {
    const split = { c: [[], []] as [Bytes[], Pick<ExecTxResult, 'code'>[]], e: [[], []] as [Bytes[], Pick<ExecTxResult, 'code'>[]] };
    // Sliced as the pools' own loops are (the lock is held; RPC answers between slices): a
    // 5,000-tx block's split, run once per block and so mostly by the interpreter, held the RPC
    // thread ~16 ms at the commit (exec-latency profile, 2026-11-27).
    const turns = new LoopTurns();
    for (let i = 0; i < txs.length; i++) {
      if (turns.due(i, 256)) await turns.turn();
      const t = txs[i]!;
      const s = this.isEvm(t) ? split.e : split.c;
      s[0].push(t);
      s[1].push(results[i]!);
    }
    // The Cosmos pool rechecks first, then the EVM pool: both write the app's one check state.
    try {
      await this.cosmos.update(height, split.c[0], split.c[1], preCheck, postCheck);
      await this.evm.update(height, split.e[0], split.e[1], preCheck, postCheck);
    } finally {
      this.updateGauges();
    }
  }

  flush(): void {
    this.cosmos.flush();
    this.evm.flush();
    this.updateGauges();
  }

  onTxsAvailable(listener: () => void): () => void {
    const a = this.cosmos.onTxsAvailable(listener);
    const b = this.evm.onTxsAvailable(listener);
    return () => {
      a();
      b();
    };
  }

  onTxAdded(listener: (tx: Bytes) => void): () => void {
    const a = this.cosmos.onTxAdded(listener);
    const b = this.evm.onTxAdded(listener);
    return () => {
      a();
      b();
    };
  }
}
