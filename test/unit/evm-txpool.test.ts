/**
 * The EVM tx pool (src/mempool/evm_pool.ts) over a stand-in app whose CheckTx behaves as the EVM
 * ante does (nonce = the check state's sequence, balance ≥ gas × fee cap + value, effects kept in
 * the check state until a commit resets it): gap → queued → promoted, replacement rules, limits
 * and eviction, recheck after a block, a recheck cut by recheck_timeout, proposal order, the
 * AppMempool's fair share of a block between Cosmos and EVM txs, and each app.toml [evm.mempool]
 * setting taking effect (price-limit, price-bump, account-slots, account-queue, the global
 * bound, lifetime with an injected clock and its unref'd tick).
 */
import t from 'tap';
import { CheckTxType, type ResponseCheckTx } from '../../src/abci/types.js';
import { AppMempool } from '../../src/mempool/app_mempool.js';
import { CListMempool } from '../../src/mempool/clist_mempool.js';
import { ErrTxInCache } from '../../src/mempool/errors.js';
import { EvmTxPool, type EvmPoolConfig, type EvmPoolTxInfo } from '../../src/mempool/evm_pool.js';
import { computeProtoSizeForTxs, txKey } from '../../src/mempool/mempool.js';

interface FakeTx {
  s: string;
  n: number;
  f: number;
  t: number;
  g?: number;
  v?: number;
  pad?: number;
  /** The app refuses it on recheck (it became invalid). */
  bad?: boolean;
}

const enc = (x: FakeTx): Uint8Array => {
  const body = Buffer.from(JSON.stringify(x) + ' '.repeat(x.pad ?? 0));
  return Uint8Array.from([0x02, ...body]);
};
const dec = (b: Uint8Array): FakeTx => JSON.parse(Buffer.from(b.subarray(1)).toString().trim()) as FakeTx;
const info = (b: Uint8Array): EvmPoolTxInfo => {
  const x = dec(b);
  return { hash: `0x${Buffer.from(b).toString('hex').slice(0, 64)}`, sender: x.s, nonce: BigInt(x.n), gasLimit: BigInt(x.g ?? 21000), feeCap: BigInt(x.f), tip: BigInt(x.t), value: BigInt(x.v ?? 0), to: '0x00000000000000000000000000000000000000aa' };
};
const costOf = (x: FakeTx) => BigInt(x.g ?? 21000) * BigInt(x.f) + BigInt(x.v ?? 0);

/** A stand-in app: committed accounts, and a check state CheckTx writes and a commit resets. */
class FakeEvmApp {
  committed = new Map<string, { nonce: bigint; balance: bigint }>();
  check = new Map<string, { nonce: bigint; balance: bigint }>();
  calls: { type: CheckTxType; tx: FakeTx }[] = [];
  constructor(accounts: Record<string, bigint>) {
    for (const [a, bal] of Object.entries(accounts)) this.committed.set(a, { nonce: 0n, balance: bal });
    this.reset();
  }
  reset(): void {
    this.check = new Map([...this.committed].map(([a, v]) => [a, { ...v }]));
  }
  acct(m: Map<string, { nonce: bigint; balance: bigint }>, a: string) {
    let v = m.get(a);
    if (v === undefined) m.set(a, (v = { nonce: 0n, balance: 0n }));
    return v;
  }
  async checkTx(raw: Uint8Array, type: CheckTxType): Promise<ResponseCheckTx> {
    await Promise.resolve();
    const x = dec(raw);
    this.calls.push({ type, tx: x });
    const r = (code: number, log: string): ResponseCheckTx => ({ code, log, data: new Uint8Array(), info: '', gasWanted: BigInt(x.g ?? 21000), gasUsed: 0n, events: [], codespace: code ? 'sdk' : '' });
    if (x.bad && type === CheckTxType.Recheck) return r(4, 'became invalid');
    const a = this.acct(this.check, x.s);
    if (BigInt(x.n) < a.nonce) return r(32, `nonce too low: address ${x.s}, tx: ${x.n} state: ${a.nonce}: account sequence mismatch`);
    if (BigInt(x.n) > a.nonce) return r(32, `nonce too high: address ${x.s}, tx: ${x.n} state: ${a.nonce}: account sequence mismatch`);
    const c = costOf(x);
    if (a.balance < c) return r(5, 'insufficient funds for gas * price + value: insufficient funds');
    a.nonce++;
    a.balance -= c;
    return r(0, '');
  }
  /** A block of these txs commits: committed state moves, the check state is reset. */
  commit(txs: Uint8Array[]): void {
    for (const raw of txs) {
      const x = dec(raw);
      const a = this.acct(this.committed, x.s);
      a.nonce = BigInt(x.n) + 1n;
      a.balance -= costOf(x);
    }
    this.reset();
  }
}

function makePool(app: FakeEvmApp, cfg: Partial<EvmPoolConfig> = {}, cut?: (n: number) => void) {
  return new EvmTxPool(cfg, {
    app,
    chain: { inspect: info, account: (s) => ({ ...app.acct(app.committed, s) }) },
    ...(cut ? { onRecheckCut: cut } : {}),
  });
}

async function block(app: FakeEvmApp, pool: EvmTxPool, height: bigint, txs: Uint8Array[]): Promise<void> {
  await pool.lock();
  try {
    app.commit(txs);
    await pool.update(height, txs, txs.map(() => ({ code: 0 })));
  } finally {
    pool.unlock();
  }
}

// Fast alone (~1 s of work), but tap's default 30 s per file is not enough on a loaded 2-core machine.
t.setTimeout(180_000);

const A = '0x000000000000000000000000000000000000000a';
const B = '0x000000000000000000000000000000000000000b';
const C = '0x000000000000000000000000000000000000000c';
const D = '0x000000000000000000000000000000000000000d';
const RICH = 10n ** 18n;

/** The pool's refusal: a thrown MempoolError's message, or a CheckTx response's log. */
async function refusal(p: Promise<{ response: ResponseCheckTx; added: boolean }>): Promise<string> {
  try {
    const r = await p;
    return r.added ? 'accepted' : `${r.response.code}: ${r.response.log}`;
  } catch (e) {
    return (e as Error).message;
  }
}

t.test('a nonce gap queues; filling it promotes the queued txs into the check state in order', async (t) => {
  const app = new FakeEvmApp({ [A]: RICH });
  const pool = makePool(app);
  const announced: number[] = [];
  pool.onTxAdded((tx) => announced.push(dec(tx).n));
  const r2 = await pool.checkTx(enc({ s: A, n: 2, f: 10, t: 1 }));
  t.ok(r2.added, 'nonce 2 admitted');
  t.equal(r2.response.code, 0);
  await pool.checkTx(enc({ s: A, n: 1, f: 10, t: 1 }));
  t.same(pool.stats(), { pending: 0, queued: 2 }, 'both queued behind the gap at 0');
  t.same(pool.reapMaxTxs(-1), [], 'queued txs are never reaped');
  t.same([...pool.entries()], [], 'nor gossiped');
  t.same(announced, [], 'queued txs are not announced as pending');
  t.equal(pool.pendingNonce(A), 0n);
  const r0 = await pool.checkTx(enc({ s: A, n: 0, f: 10, t: 1 }));
  t.ok(r0.added);
  t.same(pool.stats(), { pending: 3, queued: 0 }, 'the gap filled: all pending');
  t.equal(pool.pendingNonce(A), 3n);
  t.equal(app.check.get(A)!.nonce, 3n, 'the check state holds all three');
  t.same(announced, [0, 1, 2], 'announced in nonce order on promotion');
  t.same(pool.reapMaxTxs(-1).map((x) => dec(x).n), [0, 1, 2]);
  t.same([...pool.entries()].map((e) => dec(e.tx).n), [0, 1, 2], 'gossip walks them in nonce order');
  const c = pool.content();
  t.same([...c.pending.get(A)!].map((e) => e.info.nonce), [0n, 1n, 2n]);
  t.equal(c.queued.size, 0);
});

t.test('errors: already known, nonce too low, insufficient funds, the app\'s own refusal', async (t) => {
  const app = new FakeEvmApp({ [A]: RICH, [B]: 21000n * 10n - 1n });
  const pool = makePool(app);
  const tx = enc({ s: A, n: 0, f: 10, t: 1 });
  await pool.checkTx(tx);
  const dup = await pool.checkTx(tx).catch((e: unknown) => e);
  t.ok(dup instanceof ErrTxInCache, 'a tx in the pool is refused as known (eth: `already known`)');
  await block(app, pool, 1n, [tx]);
  t.ok((await pool.checkTx(tx).catch((e: unknown) => e)) instanceof ErrTxInCache, 'a mined tx too');
  t.equal(await refusal(pool.checkTx(enc({ s: A, n: 0, f: 11, t: 2 }))), '32: nonce too low: next nonce 1, tx nonce 0: incorrect account sequence', 'code 32 as the app\'s wrong sequence');
  t.equal(await refusal(pool.checkTx(enc({ s: B, n: 0, f: 10, t: 1 }))), '5: insufficient funds for gas * price + value: balance 209999, tx cost 210000, overshot 1: insufficient funds');
  t.equal(pool.size(), 0);
});

t.test('replacement needs 10% more fee cap AND tip', async (t) => {
  const app = new FakeEvmApp({ [A]: RICH });
  const pool = makePool(app);
  await pool.checkTx(enc({ s: A, n: 0, f: 100, t: 10 }));
  await pool.checkTx(enc({ s: A, n: 2, f: 100, t: 10 })); // queued
  t.equal(await refusal(pool.checkTx(enc({ s: A, n: 0, f: 109, t: 11 }))), 'replacement transaction underpriced', 'fee cap +9%');
  t.equal(await refusal(pool.checkTx(enc({ s: A, n: 0, f: 200, t: 10 }))), 'replacement transaction underpriced', 'tip not bumped');
  const ok = await pool.checkTx(enc({ s: A, n: 0, f: 110, t: 11 }));
  t.ok(ok.added, 'exactly +10% on both is accepted');
  t.equal(ok.response.code, 0);
  t.same(pool.stats(), { pending: 1, queued: 1 });
  t.equal(pool.content().pending.get(A)![0]!.info.feeCap, 110n, 'the new tx took the old one\'s place');
  t.notOk(pool.has(new Uint8Array(32)), 'sanity');
  t.equal(pool.size(), 2, 'the old one is gone');
  t.equal(app.check.get(A)!.nonce, 1n, 'the check state still counts one tx at nonce 0');
  t.equal(await refusal(pool.checkTx(enc({ s: A, n: 2, f: 105, t: 11 }))), 'replacement transaction underpriced', 'queued: same rule');
  t.ok((await pool.checkTx(enc({ s: A, n: 2, f: 120, t: 20 }))).added, 'queued replacement accepted');
  t.equal(pool.content().queued.get(A)![0]!.info.feeCap, 120n);
  // A new next nonce after the replaced one still passes the app (the check state's sequence is right).
  const r1 = await pool.checkTx(enc({ s: A, n: 1, f: 100, t: 10 }));
  t.equal(r1.response.code, 0);
  t.same(pool.stats(), { pending: 3, queued: 0 });
});

t.test('per-account and global limits; a full pool evicts the cheapest for a better-paying tx', async (t) => {
  const app = new FakeEvmApp({ [A]: RICH, [B]: RICH, [C]: RICH, [D]: RICH });
  const pool = makePool(app, { accountSlots: 2, accountQueue: 1, globalSlots: 3, globalQueue: 0 });
  await pool.checkTx(enc({ s: A, n: 0, f: 10, t: 5 }));
  await pool.checkTx(enc({ s: A, n: 1, f: 10, t: 5 }));
  await pool.checkTx(enc({ s: B, n: 0, f: 10, t: 7 }));
  t.equal(pool.size(), 3, 'the pool is full');
  t.equal(await refusal(pool.checkTx(enc({ s: C, n: 0, f: 10, t: 5 }))), 'transaction underpriced', 'no cheaper tx to evict');
  t.ok((await pool.checkTx(enc({ s: C, n: 0, f: 10, t: 6 }))).added, 'a better-paying tx is admitted');
  t.equal(pool.size(), 3);
  t.same(pool.content().pending.get(A)!.map((e) => e.info.nonce), [0n], 'the cheapest sender lost its last tx (no gap is left)');
  t.ok((await pool.checkTx(enc({ s: D, n: 0, f: 10, t: 9 }))).added);
  t.same([...pool.content().pending.keys()].sort(), [B, C, D], 'A, the cheapest, was evicted again');
  // A's evicted txs are still in the check state (sequence 2): its resubmission at nonce 0 is the
  // pool's next nonce for A, and the app's "nonce too low" only means the check state is ahead.
  const again = await pool.checkTx(enc({ s: A, n: 0, f: 10, t: 8 }));
  t.ok(again.added, 'A resubmits nonce 0 at a better price');
  t.equal(again.response.code, 0);
  t.same([...pool.content().pending.keys()].sort(), [A, B, D], 'C (tip 6) made room');
  t.equal(pool.pendingNonce(A), 1n);
  // geth admits any number of an ordinary sender's executable txs (AccountSlots only shields them
  // from eviction); 40 from one sender, as a deploy script sends them, all stay.
  const many = makePool(new FakeEvmApp({ [A]: RICH }), { accountSlots: 2 });
  for (let n = 0; n < 40; n++) t.equal((await many.checkTx(enc({ s: A, n, f: 10, t: 5 }))).response.code, 0);
  t.same(many.stats(), { pending: 40, queued: 0 }, 'pending txs of one sender are not limited by number');
  const q = makePool(new FakeEvmApp({ [A]: RICH }), { accountQueue: 1 });
  await q.checkTx(enc({ s: A, n: 5, f: 10, t: 5 }));
  t.equal(await refusal(q.checkTx(enc({ s: A, n: 6, f: 10, t: 5 }))), 'account limit exceeded', 'second queued of one sender');
});

t.test('after a block: mined txs leave, unpayable and now-invalid ones leave, txs behind a gap are queued, the rest rechecked', async (t) => {
  const app = new FakeEvmApp({ [A]: RICH, [B]: RICH, [C]: RICH });
  const pool = makePool(app);
  const a0 = enc({ s: A, n: 0, f: 10, t: 1 });
  await pool.checkTx(a0);
  await pool.checkTx(enc({ s: A, n: 1, f: 10, t: 1 }));
  await pool.checkTx(enc({ s: A, n: 2, f: 10, t: 1 }));
  await pool.checkTx(enc({ s: B, n: 0, f: 10, t: 1 }));
  await pool.checkTx(enc({ s: C, n: 0, f: 10, t: 1, bad: true }));
  await pool.checkTx(enc({ s: C, n: 1, f: 10, t: 1 }));
  // The block mines A:0; B's balance is drained elsewhere; C:0 becomes invalid.
  app.committed.get(B)!.balance = 1n;
  app.calls = [];
  await block(app, pool, 1n, [a0]);
  t.notOk(pool.content().pending.has(B), 'B can no longer pay: dropped');
  t.same(pool.content().pending.get(A)!.map((e) => e.info.nonce), [1n, 2n], 'A:0 mined, A:1 and A:2 stay pending');
  t.same(pool.content().queued.get(C)!.map((e) => e.info.nonce), [1n], 'C:0 failed its recheck; C:1 is queued behind the gap');
  t.notOk(pool.content().pending.has(C));
  t.same(app.calls.filter((c) => c.type === CheckTxType.Recheck).map((c) => `${c.tx.s.slice(-1)}${c.tx.n}`), ['a1', 'a2', 'c0'], 'pending txs rechecked in nonce order');
  t.equal(app.check.get(A)!.nonce, 3n, 'the check state holds A:1 and A:2 again');
  t.same(pool.stats(), { pending: 2, queued: 1 });
});

t.test('a recheck cut by recheck_timeout: the sender\'s next tx still passes (no "nonce too high")', async (t) => {
  const cuts: number[] = [];
  const app = new FakeEvmApp({ [A]: RICH });
  const pool = makePool(app, { recheckTimeoutMs: 0 }, (n) => cuts.push(n));
  const txs = [0, 1, 2, 3].map((n) => enc({ s: A, n, f: 10, t: 1 }));
  for (const x of txs) await pool.checkTx(x);
  await block(app, pool, 1n, [txs[0]!]);
  t.same(cuts, [3], 'nothing was rechecked');
  t.equal(app.check.get(A)!.nonce, 1n, 'the check state lacks A:1..3');
  const r = await pool.checkTx(enc({ s: A, n: 4, f: 10, t: 1 }));
  t.equal(r.response.code, 0, 'A:4 passes the app');
  t.ok(r.added);
  t.equal(app.check.get(A)!.nonce, 5n, 'A:1..3 were applied first, then A:4');
  t.same(pool.reapMaxTxs(-1).map((x) => dec(x).n), [1, 2, 3, 4]);

  // The arrival-order pool under the same cut: the defect this pool fixes.
  const app2 = new FakeEvmApp({ [A]: RICH });
  const clist = new CListMempool({ recheckTimeoutMs: 0 }, { app: app2 });
  for (const x of txs) await clist.checkTx(x);
  await clist.lock();
  app2.commit([txs[0]!]);
  await clist.update(1n, [txs[0]!], [{ code: 0 }]);
  clist.unlock();
  const r2 = await clist.checkTx(enc({ s: A, n: 4, f: 10, t: 1 }));
  t.match(r2.response.log, /nonce too high/, 'CListMempool refuses it');
});

t.test('after a block of many senders: the refresh and the recheck give the event loop turns, and end as one pass would', async (t) => {
  // 40 senders with a pending tx each; A's block commits. Reading an account and a Recheck each
  // take 0.5 ms here (busy), ~40 ms in all: far past RECHECK_SLICE_MS, so both loops must yield.
  const senders = Array.from({ length: 40 }, (_, i) => `0x${(i + 0x100).toString(16).padStart(40, '0')}`);
  const app = new FakeEvmApp(Object.fromEntries([A, ...senders].map((s) => [s, RICH])));
  const busy = () => {
    const until = performance.now() + 0.5;
    while (performance.now() < until);
  };
  const pool = new EvmTxPool({}, { app, chain: { inspect: info, account: (s) => (busy(), { ...app.acct(app.committed, s) }) } });
  const a0 = enc({ s: A, n: 0, f: 10, t: 1 });
  await pool.checkTx(a0);
  for (const s of senders) await pool.checkTx(enc({ s, n: 0, f: 10, t: 1 }));
  const check = app.checkTx.bind(app);
  app.checkTx = async (raw, type) => {
    if (type === CheckTxType.Recheck) busy();
    return check(raw, type);
  };
  let turns = 0;
  let counting = true;
  const count = () => {
    if (!counting) return;
    turns++;
    setImmediate(count);
  };
  setImmediate(count);
  app.calls = [];
  await block(app, pool, 1n, [a0]);
  counting = false;
  t.ok(turns >= 4, `the event loop turned during the update (${turns} turns)`);
  t.same(pool.stats(), { pending: 40, queued: 0 }, 'every other sender\'s tx stays pending');
  t.equal(app.calls.filter((c) => c.type === CheckTxType.Recheck).length, 40, 'each rechecked once');
  t.same(senders.map((s) => app.check.get(s)!.nonce), senders.map(() => 1n), 'and applied to the check state again');

  // A flush (unsafe_flush_mempool) between two slices of the next update, which would drop the last
  // sender's tx (it can no longer pay): the pass does not go on over the flushed txs.
  const b0 = enc({ s: A, n: 1, f: 10, t: 1 });
  await pool.checkTx(b0);
  app.committed.get(senders[39]!)!.balance = 1n;
  setImmediate(() => pool.flush());
  await block(app, pool, 2n, [b0]);
  t.same([pool.size(), pool.sizeBytes(), pool.stats()], [0, 0, { pending: 0, queued: 0 }], 'flushed mid-update: empty, 0 bytes');
});

t.test('a tx that arrives while the pool rechecks waits for the recheck and is admitted (no "still rechecking")', async (t) => {
  const app = new FakeEvmApp({ [A]: RICH, [B]: RICH });
  const pool = makePool(app);
  const a = [0, 1, 2].map((n) => enc({ s: A, n, f: 10, t: 1 }));
  for (const x of a) await pool.checkTx(x);
  // The recheck after the block stops at its first CheckTx until the gate opens.
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let rechecking!: () => void;
  const started = new Promise<void>((r) => (rechecking = r));
  const check = app.checkTx.bind(app);
  app.checkTx = async (raw, type) => {
    if (type === CheckTxType.Recheck) {
      rechecking();
      await gate;
    }
    return check(raw, type);
  };
  const blockDone = block(app, pool, 1n, [a[0]!]);
  await started;
  t.ok(pool.isRechecking, 'the pool is rechecking');
  let settled = false;
  const arrival = refusal(pool.checkTx(enc({ s: B, n: 0, f: 10, t: 1 }))).finally(() => (settled = true));
  await new Promise((r) => setTimeout(r, 20));
  t.notOk(settled, 'the new tx waits while the recheck runs');
  open();
  await blockDone;
  t.equal(await arrival, 'accepted', 'and is admitted once the recheck is done');
  t.same(pool.stats(), { pending: 3, queued: 0 });
});

t.test('proposal order: nonce order within a sender, highest effective tip across senders; budgets end a sender\'s run', async (t) => {
  const app = new FakeEvmApp({ [A]: RICH, [B]: RICH, [C]: RICH });
  const pool = makePool(app);
  await pool.checkTx(enc({ s: A, n: 0, f: 100, t: 5 }));
  await pool.checkTx(enc({ s: A, n: 1, f: 100, t: 20 }));
  await pool.checkTx(enc({ s: B, n: 0, f: 100, t: 10 }));
  await pool.checkTx(enc({ s: C, n: 0, f: 3, t: 50 })); // effective tip min(50, 3) = 3
  const order = pool.reapMaxTxs(-1).map((x) => `${dec(x).s.slice(-1)}${dec(x).n}`);
  t.same(order, ['b0', 'a0', 'a1', 'c0']);
  const gas = pool.reapMaxBytesMaxGas(-1, 21000 * 2).map((x) => `${dec(x).s.slice(-1)}${dec(x).n}`);
  t.same(gas, ['b0', 'a0'], 'gas budget of two transfers');
  await pool.checkTx(enc({ s: B, n: 1, f: 100, t: 10, g: 50000 }));
  const g2 = pool.reapMaxBytesMaxGas(-1, 21000 * 3 + 1000).map((x) => `${dec(x).s.slice(-1)}${dec(x).n}`);
  t.same(g2, ['b0', 'a0', 'a1'], 'B:1 does not fit: B stops, others go on');
});

t.test('AppMempool: Cosmos and EVM txs share the block\'s bytes and gas fairly', async (t) => {
  const app = new FakeEvmApp(Object.fromEntries([...'0123456789'].map((i) => [`0x${i.repeat(40)}`, RICH])));
  const cosmosApp = {
    checkTx: async (): Promise<ResponseCheckTx> => ({ code: 0, log: '', data: new Uint8Array(), info: '', gasWanted: 21000n, gasUsed: 0n, events: [], codespace: '' }),
  };
  const gauge = { size: -1, bytes: -1 };
  const mk = () => {
    const evm = makePool(app);
    const cosmos = new CListMempool({}, { app: cosmosApp });
    const gauges = { size: { set: (v: number) => (gauge.size = v) }, sizeBytes: { set: (v: number) => (gauge.bytes = v) } };
    return { m: new AppMempool(cosmos, evm, (tx) => tx[0] === 0x02, gauges), cosmos, evm };
  };
  const evmTx = (i: number) => enc({ s: `0x${String(i).repeat(40)}`, n: 0, f: 10, t: 1, pad: 100 });
  const cosmosTx = (i: number) => Uint8Array.from([0x0a, ...Buffer.from(`cosmos-${i}`.padEnd(evmTx(0).length - 1, '.'))]);
  const { m } = mk();
  for (let i = 0; i < 8; i++) await m.checkTx(cosmosTx(i));
  for (let i = 0; i < 8; i++) await m.checkTx(evmTx(i));
  t.equal(m.size(), 16);
  t.equal(gauge.size, 16, 'mempool_size counts both pools');
  t.equal(gauge.bytes, m.sizeBytes());
  const one = computeProtoSizeForTxs([cosmosTx(0)]);
  t.equal(computeProtoSizeForTxs([evmTx(0)]), one, 'same sizes, for a clean split');
  const reaped = m.reapMaxBytesMaxGas(one * 6, -1);
  t.equal(reaped.filter((x) => x[0] === 0x0a).length, 3, 'half the bytes to Cosmos txs');
  t.equal(reaped.filter((x) => x[0] === 0x02).length, 3, 'half to EVM txs');
  const byGas = m.reapMaxBytesMaxGas(-1, 21000 * 4);
  t.same([byGas.filter((x) => x[0] === 0x0a).length, byGas.filter((x) => x[0] === 0x02).length], [2, 2], 'and half the gas');
  // One side empty: the other takes all.
  const only = mk();
  for (let i = 0; i < 8; i++) await only.m.checkTx(cosmosTx(i));
  t.equal(only.m.reapMaxBytesMaxGas(one * 6, -1).length, 6, 'Cosmos txs take the unused EVM half');
  const onlyEvm = mk();
  for (let i = 0; i < 8; i++) await onlyEvm.m.checkTx(evmTx(i));
  t.equal(onlyEvm.m.reapMaxBytesMaxGas(one * 6, -1).length, 6, 'EVM txs take the unused Cosmos half');
  // update() sends each tx to its own pool.
  await m.lock();
  app.commit([evmTx(0)]);
  await m.update(1n, [cosmosTx(0), evmTx(0)], [{ code: 0 }, { code: 0 }]);
  m.unlock();
  t.equal(m.size(), 14);
  t.equal(gauge.size, 14, 'and follows update()');

  // A large block: the split by kind is sliced (the RPC thread answers between slices), and each
  // committed tx still reaches its own pool. A slow kind test (~20 µs a tx) makes every 256 txs
  // one slice's worth.
  const slow = new AppMempool(m.cosmos, m.evm, (tx) => {
    const until = performance.now() + 0.02;
    while (performance.now() < until);
    return tx[0] === 0x02;
  });
  const big: Uint8Array[] = [cosmosTx(1), evmTx(1)];
  for (let i = 0; i < 1200; i++) big.push(i % 2 === 0 ? cosmosTx(1000 + i) : enc({ s: `0x${'ab'.repeat(20)}`, n: i, f: 10, t: 1 }));
  let turned = false;
  setImmediate(() => (turned = true));
  await slow.lock();
  app.commit([evmTx(1)]);
  await slow.update(2n, big, big.map(() => ({ code: 0 })));
  slow.unlock();
  t.ok(turned, 'the event loop turned during the update');
  t.equal(slow.size(), 12, 'the block\'s Cosmos tx and EVM tx left their pools');
  t.notOk(m.cosmos.has(txKey(cosmosTx(1))), 'the Cosmos one from the Cosmos pool');
});

t.test('lock() while admissions are queued: it waits for the running one only; the queued ones run after unlock()', async (t) => {
  const app = new FakeEvmApp({ [A]: RICH, [B]: RICH });
  const pool = makePool(app);
  const p1 = pool.checkTx(enc({ s: A, n: 0, f: 10, t: 1 }));
  const p2 = pool.checkTx(enc({ s: A, n: 1, f: 10, t: 1 }));
  const p3 = pool.checkTx(enc({ s: B, n: 0, f: 10, t: 1 }));
  // The first admission is at the app; two more wait their turn.
  while (app.calls.length === 0) await Promise.resolve();
  await pool.lock();
  t.equal(pool.size(), 1, `lock() returned once the running admission finished (the queued ones did not hold it up)`);
  app.commit([]);
  await pool.update(1n, [], []);
  pool.unlock();
  const rs = await Promise.all([p1, p2, p3]);
  t.ok(rs.every((r) => r.added && r.response.code === 0), 'all three admitted after the unlock');
  t.same(pool.stats(), { pending: 3, queued: 0 });
});

// --- [evm.mempool] settings (app.toml), each shown to take effect ---------------------------------

t.test('price-limit: a tip cap below it is refused with geth\'s words; at it, admitted', async (t) => {
  const app = new FakeEvmApp({ [A]: RICH });
  const pool = makePool(app, { priceLimit: 5n });
  t.equal(
    await refusal(pool.checkTx(enc({ s: A, n: 0, f: 100, t: 4 }))),
    'transaction gas price below minimum: gas tip cap 4, minimum needed 5',
    'ethereum/go-ethereum:core/txpool/validation.go ErrTxGasPriceTooLow',
  );
  t.equal(app.calls.length, 0, 'the app was not asked');
  t.ok((await pool.checkTx(enc({ s: A, n: 0, f: 100, t: 5 }))).added, 'tip = minimum: admitted');
  // A queued tx is held to it too, and so is a replacement.
  t.match(await refusal(pool.checkTx(enc({ s: A, n: 3, f: 100, t: 1 }))), /^transaction gas price below minimum: gas tip cap 1, minimum needed 5$/);
  t.same(pool.stats(), { pending: 1, queued: 0 });
  // The default (chaind: 0) admits a zero tip, as its eth_maxPriorityFeePerGas suggests.
  t.ok((await makePool(new FakeEvmApp({ [A]: RICH })).checkTx(enc({ s: A, n: 0, f: 0, t: 0 }))).added, 'default price-limit 0 admits tip 0');
});

t.test('price-bump: the replacement threshold follows the setting', async (t) => {
  const app = new FakeEvmApp({ [A]: RICH });
  const pool = makePool(app, { priceBump: 50 });
  await pool.checkTx(enc({ s: A, n: 0, f: 100, t: 10 }));
  t.equal(await refusal(pool.checkTx(enc({ s: A, n: 0, f: 140, t: 14 }))), 'replacement transaction underpriced', '+40% with price-bump 50');
  t.ok((await pool.checkTx(enc({ s: A, n: 0, f: 150, t: 15 }))).added, '+50% accepted');
});

t.test('account-queue 2 refuses the third queued tx of a sender; global-slots + global-queue bound the pool', async (t) => {
  const app = new FakeEvmApp({ [A]: RICH, [B]: RICH });
  const pool = makePool(app, { accountQueue: 2 });
  t.ok((await pool.checkTx(enc({ s: A, n: 2, f: 10, t: 1 }))).added);
  t.ok((await pool.checkTx(enc({ s: A, n: 3, f: 10, t: 1 }))).added);
  t.equal(await refusal(pool.checkTx(enc({ s: A, n: 4, f: 10, t: 1 }))), 'account limit exceeded', 'third queued');
  t.ok((await pool.checkTx(enc({ s: B, n: 5, f: 10, t: 1 }))).added, 'another sender has its own queue');
  t.same(pool.stats(), { pending: 0, queued: 3 });
  const small = makePool(new FakeEvmApp({ [A]: RICH, [B]: RICH }), { globalSlots: 1, globalQueue: 1 });
  await small.checkTx(enc({ s: A, n: 0, f: 10, t: 2 }));
  await small.checkTx(enc({ s: A, n: 5, f: 10, t: 2 }));
  t.equal(await refusal(small.checkTx(enc({ s: B, n: 0, f: 10, t: 1 }))), 'transaction underpriced', 'a pool of 1 + 1 is full at two txs');
});

t.test('account-slots: while a sender holds more than it, a full pool evicts only from such senders', async (t) => {
  const mk = (accountSlots: number) => makePool(new FakeEvmApp({ [A]: RICH, [B]: RICH, [C]: RICH }), { accountSlots, globalSlots: 4, globalQueue: 0 });
  for (const slots of [2, 16]) {
    const pool = mk(slots);
    await pool.checkTx(enc({ s: A, n: 0, f: 10, t: 1 })); // A: one cheap tx
    for (let n = 0; n < 3; n++) await pool.checkTx(enc({ s: B, n, f: 10, t: 5 })); // B: three dearer txs
    t.ok((await pool.checkTx(enc({ s: C, n: 0, f: 10, t: 6 }))).added, `account-slots ${slots}: C admitted into the full pool`);
    const left = pool.content().pending;
    if (slots === 2) {
      t.same(left.get(A)?.map((e) => e.info.nonce), [0n], 'account-slots 2: A (1 tx) is spared although cheapest');
      t.same(left.get(B)?.map((e) => e.info.nonce), [0n, 1n], 'B (3 txs > 2) lost its last');
    } else {
      t.notOk(left.has(A), 'account-slots 16: nobody is over it, the cheapest (A) is evicted');
      t.equal(left.get(B)?.length, 3);
    }
  }
});

t.test('lifetime: a peer\'s queued txs are dropped after it without progress; pending and local ones stay', async (t) => {
  let clock = 1_000_000;
  const app = new FakeEvmApp({ [A]: RICH, [B]: RICH, [C]: RICH, [D]: RICH });
  const expired: number[] = [];
  const pool = new EvmTxPool({ lifetimeMs: 10_000 }, { app, chain: { inspect: info, account: (s) => ({ ...app.acct(app.committed, s) }) }, now: () => clock, onExpired: (n) => expired.push(n) });
  const peer = { sender: 'peer-1' };
  await pool.checkTx(enc({ s: A, n: 0, f: 10, t: 1 }), peer); // pending
  await pool.checkTx(enc({ s: A, n: 2, f: 10, t: 1 }), peer); // queued at t0
  await pool.checkTx(enc({ s: A, n: 3, f: 10, t: 1 }), peer);
  await pool.checkTx(enc({ s: B, n: 1, f: 10, t: 1 }), peer); // queued at t0
  await pool.checkTx(enc({ s: C, n: 1, f: 10, t: 1 })); // queued, through RPC: local
  await pool.checkTx(enc({ s: D, n: 3, f: 10, t: 1 }), peer); // queued at t0
  clock += 6_000;
  // D makes progress short of its gap: a new pending tx bumps the heartbeat of its queue.
  await pool.checkTx(enc({ s: D, n: 0, f: 10, t: 1 }), peer);
  // B makes progress: its gap fills, its tx is promoted (geth bumps the heartbeat), and it queues another.
  await pool.checkTx(enc({ s: B, n: 0, f: 10, t: 1 }), peer);
  await pool.checkTx(enc({ s: B, n: 5, f: 10, t: 1 }), peer);
  clock += 4_000;
  t.equal(await pool.evictStale(), 0, 'exactly the lifetime: nothing yet (geth: older than it)');
  clock += 1;
  t.equal(await pool.evictStale(), 2, 'A\'s two queued txs are dropped');
  t.same(expired, [2]);
  const c = pool.content();
  t.same(c.pending.get(A)?.map((e) => e.info.nonce), [0n], 'A\'s pending tx stays');
  t.notOk(c.queued.has(A));
  t.same(c.queued.get(B)?.map((e) => e.info.nonce), [5n], 'B progressed 4 s ago: kept');
  t.same(c.queued.get(C)?.map((e) => e.info.nonce), [1n], 'C is local: spared');
  t.same(c.queued.get(D)?.map((e) => e.info.nonce), [3n], 'D\'s pending tx 4 s ago bumped its heartbeat: kept');
  clock += 6_001;
  t.equal(await pool.evictStale(), 2, 'then B\'s and D\'s queues age out too');
  t.same(pool.stats(), { pending: 4, queued: 1 });
  // A sender whose queue emptied starts a fresh heartbeat when it queues again.
  await pool.checkTx(enc({ s: A, n: 7, f: 10, t: 1 }), peer);
  clock += 10_000;
  t.equal(await pool.evictStale(), 0, 'A\'s new queued tx is not older than the lifetime');
});

t.test('lifetime tick: runs by itself, does not hold the process open, and stops', async (t) => {
  const app = new FakeEvmApp({ [A]: RICH });
  const pool = new EvmTxPool({ lifetimeMs: 20 }, { app, chain: { inspect: info, account: (s) => ({ ...app.acct(app.committed, s) }) } });
  await pool.checkTx(enc({ s: A, n: 4, f: 10, t: 1 }), { sender: 'peer-1' });
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  pool.start();
  t.equal(timers(), before, 'the tick is unref\'d');
  const deadline = Date.now() + 60_000;
  while (pool.stats().queued > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.equal(pool.stats().queued, 0, 'the queued tx was dropped by the tick');
  pool.stop();
  await pool.checkTx(enc({ s: A, n: 6, f: 10, t: 1 }), { sender: 'peer-1' });
  await new Promise((r) => setTimeout(r, 100));
  t.equal(pool.stats().queued, 1, 'stopped: no more ticks');
});
