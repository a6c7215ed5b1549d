/**
 * The CListMempool port against a tiny in-file application: limits and CometBFT's exact error
 * strings, the LRU cache and keep-invalid, reaping by bytes (with proto overhead) and gas, update
 * with recheck (sliced), "still rechecking" (recheckFull), txsAvailable once per height, order and locking.
 */
import t from 'tap';
import { CheckTxType, type Application, type ResponseCheckTx } from '../../src/abci/types.js';
import { CListMempool, LruTxCache, type MempoolConfig, type MempoolMetrics } from '../../src/mempool/clist_mempool.js';
import { computeProtoSizeForTxs, LoopTurns, postCheckMaxGas, preCheckMaxBytes, txKey, type Mempool } from '../../src/mempool/mempool.js';
import { ErrMempoolIsFull, ErrRecheckFull, ErrTxInCache, ErrTxTooLarge, MempoolError } from '../../src/mempool/errors.js';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/**
 * Txs are text. A tx starting with "bad" fails CheckTx; `gas=N` sets gasWanted (default 1); txs
 * listed in `invalid` fail from now on (as if state moved); `delays` holds a promise per tx text
 * that its New check waits on; `recheckGate` makes every Recheck wait.
 */
class TinyApp implements Pick<Application, 'checkTx'> {
  calls: { tx: string; type: CheckTxType }[] = [];
  invalid = new Set<string>();
  delays = new Map<string, Promise<void>>();
  recheckGate: Promise<void> | undefined;
  async checkTx(tx: Uint8Array, type: CheckTxType): Promise<ResponseCheckTx> {
    const s = dec(tx);
    this.calls.push({ tx: s, type });
    if (type === CheckTxType.New && this.delays.has(s)) await this.delays.get(s);
    if (type === CheckTxType.Recheck && this.recheckGate) await this.recheckGate;
    if (s === 'throw') throw new Error('app is down');
    const bad = s.startsWith('bad') || this.invalid.has(s);
    const gas = /gas=(\d+)/.exec(s);
    return {
      code: bad ? 1 : 0,
      data: new Uint8Array(),
      log: bad ? 'nope' : '',
      info: '',
      gasWanted: gas ? BigInt(gas[1]!) : 1n,
      gasUsed: 0n,
      events: [],
      codespace: bad ? 'test' : '',
    };
  }
}

function counters() {
  const c: Record<string, number> = {};
  const counter = (name: string) => ({ inc: (v = 1) => void (c[name] = (c[name] ?? 0) + v) });
  const gauge = (name: string) => ({ set: (v: number) => void (c[name] = v) });
  const metrics: MempoolMetrics = {
    size: gauge('size'),
    sizeBytes: gauge('sizeBytes'),
    failedTxs: counter('failed'),
    rejectedTxs: counter('rejected'),
    evictedTxs: counter('evicted'),
    recheckTimes: counter('recheck'),
    alreadyReceivedTxs: counter('already'),
  };
  return { c, metrics };
}

function make(config: Partial<MempoolConfig> = {}) {
  const app = new TinyApp();
  const { c, metrics } = counters();
  const mp = new CListMempool(config, { app, metrics, height: 1n });
  return { app, mp, c };
}

const txs = (mp: Mempool) => mp.reapMaxTxs(-1).map(dec);

async function commit(mp: Mempool, height: bigint, committed: string[], codes: number[]) {
  await mp.lock();
  try {
    await mp.update(
      height,
      committed.map(enc),
      codes.map((code) => ({ code })),
    );
  } finally {
    mp.unlock();
  }
}

t.test('defaults are CometBFT config.go defaults', async (t) => {
  const { mp } = make();
  t.same(mp.config, { size: 5000, maxTxsBytes: 1073741824, cacheSize: 10000, maxTxBytes: 1048576, recheck: true, recheckTimeoutMs: 1000, keepInvalidTxsInCache: false });
});

t.test('limits and their exact errors', async (t) => {
  const { mp, c } = make({ size: 2, maxTxsBytes: 10, maxTxBytes: 7 });
  t.same((await mp.checkTx(enc('aaaa'))).added, true);
  t.same((await mp.checkTx(enc('bbbb'))).added, true);
  await t.rejects(mp.checkTx(enc('cc')), { message: 'mempool is full: number of txs 2 (max: 2), total txs bytes 8 (max: 10)', code: 'MEMPOOL_FULL' });
  t.equal(c['rejected'], 1);
  mp.removeTxByKey(txKey(enc('bbbb')));
  const full = await mp.checkTx(enc('1234567')).catch((e: unknown) => e);
  t.ok(full instanceof ErrMempoolIsFull, 'bytes limit: 4 + 7 > 10');
  t.equal((full as Error).message, 'mempool is full: number of txs 1 (max: 2), total txs bytes 4 (max: 10)');
  t.equal((await mp.checkTx(enc('ccc'))).added, true, '4 + 3 fits');
  mp.removeTxByKey(txKey(enc('ccc')));
  const big = make({ maxTxBytes: 10 });
  const err = await big.mp.checkTx(enc('12345678901')).catch((e: unknown) => e);
  t.ok(err instanceof ErrTxTooLarge && err instanceof MempoolError);
  t.equal((err as Error).message, 'Tx too large. Max size is 10, but got 11');
  t.equal(big.app.calls.length, 0, 'refused before the app');
  t.equal(mp.size(), 1);
  t.equal(mp.sizeBytes(), 4);
  t.equal(c['size'], 1);
  t.equal(c['sizeBytes'], 4);
});

t.test('cache: duplicates, failed txs forgotten, keep-invalid, LRU eviction', async (t) => {
  const { mp, app, c } = make();
  await mp.checkTx(enc('x1'));
  await t.rejects(mp.checkTx(enc('x1')), { message: 'tx already exists in cache', code: 'MEMPOOL_TX_IN_CACHE' });
  t.equal(c['already'], 1);
  const r = await mp.checkTx(enc('bad1'));
  t.same([r.response.code, r.response.log, r.added], [1, 'nope', false], 'a failing CheckTx resolves with the response');
  t.equal(c['failed'], 1);
  await mp.checkTx(enc('bad1'));
  t.equal(app.calls.filter((x) => x.tx === 'bad1').length, 2, 'failed tx left the cache and reached the app again');

  const keep = make({ keepInvalidTxsInCache: true });
  await keep.mp.checkTx(enc('bad1'));
  await t.rejects(keep.mp.checkTx(enc('bad1')), ErrTxInCache, 'keep-invalid: refused from the cache');

  const lru = make({ cacheSize: 2 });
  await lru.mp.checkTx(enc('t1'));
  await lru.mp.checkTx(enc('t2'));
  await lru.mp.checkTx(enc('t3')); // evicts t1's key
  const again = await lru.mp.checkTx(enc('t1'));
  t.same([again.response.code, again.added], [0, false], 'evicted key passes the cache; the pool still drops the duplicate');
  t.equal(lru.mp.size(), 3);

  const nocache = make({ cacheSize: 0 });
  await nocache.mp.checkTx(enc('n'));
  t.equal((await nocache.mp.checkTx(enc('n'))).added, false, 'cache_size 0: no cache, duplicates still not re-added');

  const cache = new LruTxCache(2);
  t.equal(cache.push('a'), true);
  t.equal(cache.push('b'), true);
  t.equal(cache.push('a'), false, 'hit moves a to the back');
  t.equal(cache.push('c'), true);
  t.same([cache.has('a'), cache.has('b'), cache.has('c')], [true, false, true], 'b was least recent');
});

t.test('app errors and pre/post checks', async (t) => {
  const { mp } = make();
  await t.rejects(mp.checkTx(enc('throw')), { message: 'appConn mempool: app is down', code: 'MEMPOOL_APP_CONN' });
  t.equal((await mp.checkTx(enc('throw')).catch((e: Error) => e.message)), 'appConn mempool: app is down', 'not cached after an app error');
  const pre = new CListMempool({}, { app: new TinyApp(), preCheck: preCheckMaxBytes(5n) });
  await t.rejects(pre.checkTx(enc('12345')), { message: 'tx pre check: tx size is too big: 7, max: 5' });
  const post = new CListMempool({}, { app: new TinyApp(), postCheck: postCheckMaxGas(10n) });
  const r = await post.checkTx(enc('gas=11'));
  t.same([r.response.code, r.added], [0, false], 'post-check failure keeps the tx out');
  t.equal(post.size(), 0);
  t.equal((await post.checkTx(enc('gas=10'))).added, true);
});

t.test('insertion order is submission order even when the app answers out of order', async (t) => {
  const { mp, app } = make();
  let release!: () => void;
  app.delays.set('slow', new Promise<void>((r) => (release = r)));
  const p1 = mp.checkTx(enc('slow'));
  const p2 = mp.checkTx(enc('fast'));
  await new Promise((r) => setImmediate(r));
  t.same(txs(mp), [], 'fast waits for slow to be applied first');
  release();
  await Promise.all([p1, p2]);
  t.same(txs(mp), ['slow', 'fast']);
});

t.test('reapMaxBytesMaxGas counts proto overhead; reapMaxTxs', async (t) => {
  const { mp } = make();
  for (const s of ['gas=5|aaa', 'gas=5|bbb', 'gas=5|ccc']) await mp.checkTx(enc(s));
  const one = computeProtoSizeForTxs([enc('gas=5|aaa')]);
  t.equal(one, 11, '1 tag byte + 1 length byte + 9');
  t.equal(computeProtoSizeForTxs([new Uint8Array(200)]), 203, 'two-byte varint');
  t.same(mp.reapMaxBytesMaxGas(-1, -1).map(dec), ['gas=5|aaa', 'gas=5|bbb', 'gas=5|ccc']);
  t.same(mp.reapMaxBytesMaxGas(2 * one, -1).length, 2);
  t.same(mp.reapMaxBytesMaxGas(2 * one - 1, -1).length, 1, 'raw bytes would fit, proto bytes do not');
  t.same(mp.reapMaxBytesMaxGas(-1, 10n).length, 2);
  t.same(mp.reapMaxBytesMaxGas(-1, 9n).length, 1);
  t.same(mp.reapMaxBytesMaxGas(0, -1).length, 0);
  t.same(mp.reapMaxTxs(2).map(dec), ['gas=5|aaa', 'gas=5|bbb']);
  t.same(mp.reapMaxTxs(-1).length, 3);
  t.same(mp.reapMaxTxs(0), []);
});

t.test('update: committed txs leave, cache follows results, recheck evicts', async (t) => {
  const { mp, app, c } = make();
  for (const s of ['a', 'b', 'c', 'd']) await mp.checkTx(enc(s));
  app.invalid.add('c');
  app.calls = [];
  await commit(mp, 2n, ['a', 'b', 'zz'], [0, 5, 0]);
  t.same(txs(mp), ['d'], 'a, b committed; c evicted by the recheck');
  t.same(app.calls, [
    { tx: 'c', type: CheckTxType.Recheck },
    { tx: 'd', type: CheckTxType.Recheck },
  ], 'remaining txs rechecked in order');
  t.equal(c['evicted'], 1);
  t.equal(c['recheck'], 1);
  await t.rejects(mp.checkTx(enc('a')), ErrTxInCache, 'a committed OK tx stays cached');
  await t.rejects(mp.checkTx(enc('zz')), ErrTxInCache, 'a committed tx we never had is cached too');
  t.equal((await mp.checkTx(enc('b'))).added, true, 'a committed failed tx left the cache and may come back');
  app.invalid.delete('c');
  t.equal((await mp.checkTx(enc('c'))).added, true, 'an evicted tx left the cache');

  const norecheck = make({ recheck: false });
  await norecheck.mp.checkTx(enc('x'));
  norecheck.app.invalid.add('x');
  await commit(norecheck.mp, 2n, [], []);
  t.same(txs(norecheck.mp), ['x'], 'recheck off keeps it');

  const keep = make({ keepInvalidTxsInCache: true });
  await keep.mp.checkTx(enc('k'));
  await commit(keep.mp, 2n, ['k'], [1]);
  await t.rejects(keep.mp.checkTx(enc('k')), ErrTxInCache, 'keep-invalid: failed committed tx stays cached');

  await t.rejects(mp.update(3n, [], []), /without lock/);
});

t.test('the pool knows the keys of the tx objects it admitted; update and reaping use them without hashing', async (t) => {
  const { mp, app } = make();
  const objs = ['k1 gas=3', 'k2 gas=4', 'k3 gas=5'].map(enc);
  for (const o of objs) await mp.checkTx(o);
  for (const o of objs) t.same(mp.knownKey(o), txKey(o), 'knownKey of an admitted object is its TxKey');
  t.equal(mp.knownKey(enc('k1 gas=3')), undefined, 'the same bytes in another object: unknown (no hashing)');
  t.same(mp.reapWithTotals(-1, -1), { txs: objs, bytes: computeProtoSizeForTxs(objs), gas: 12n }, 'a reap with its proto size and gas');
  t.same(mp.reapWithTotals(-1, 7), { txs: objs.slice(0, 2), bytes: computeProtoSizeForTxs(objs.slice(0, 2)), gas: 7n }, 'the totals of what fits max gas');
  const two = computeProtoSizeForTxs(objs.slice(0, 2));
  t.same(mp.reapWithTotals(two + 1, -1), { txs: objs.slice(0, 2), bytes: two, gas: 7n }, 'the totals of what fits max bytes');
  const reaped = mp.reapMaxBytesMaxGas(-1, -1);
  t.ok(reaped.every((x, i) => x === objs[i]), 'reaping hands out the pool\'s own objects');
  // A block of the pool's own objects (this node's proposal) and one tx in a copy (a peer's block).
  app.calls = [];
  await mp.lock();
  try {
    await mp.update(2n, [objs[0]!, Uint8Array.from(objs[1]!)], [{ code: 0 }, { code: 0 }]);
  } finally {
    mp.unlock();
  }
  t.same(txs(mp), ['k3 gas=5'], 'both committed txs left the pool, found by identity and by hash');
  t.same(mp.reapWithTotals(-1, -1).gas, 5n, 'the committed txs no longer count');
  t.same(mp.knownKey(objs[0]!), txKey(objs[0]!), 'its key stays known (a pure function of its bytes)');
  await t.rejects(mp.checkTx(enc('k1 gas=3')), ErrTxInCache, 'the committed tx is cached under its key');
  await t.rejects(mp.checkTx(enc('k2 gas=4')), ErrTxInCache, 'the copy was cached under the same key');
});

t.test('while rechecking, a new tx waits for the recheck; refused as still rechecking only once the next block wants the lock', async (t) => {
  const { mp, app } = make();
  await mp.checkTx(enc('r1'));
  let open!: () => void;
  app.recheckGate = new Promise<void>((r) => (open = r));
  await mp.lock();
  const updating = mp.update(2n, [], []).finally(() => mp.unlock());
  await new Promise((r) => setImmediate(r));
  t.equal(mp.isRechecking, true);
  // CometBFT's CheckTx waits on the update lock; it is not refused merely because of a recheck.
  let waited: unknown = 'pending';
  const waiting = mp.checkTx(enc('new')).then(
    (r) => (waited = r.added),
    (e: unknown) => (waited = e),
  );
  await new Promise((r) => setTimeout(r, 20));
  t.equal(waited, 'pending', 'the new tx waits while the recheck runs');
  // The next block asks for the lock while the recheck still runs: recheckFull.
  const nextLock = mp.lock();
  const err = await mp.checkTx(enc('late')).catch((e: unknown) => e);
  t.ok(err instanceof ErrRecheckFull, 'refused once a new block arrived during the recheck');
  t.equal((err as Error).message, 'mempool is still rechecking after a new committed block, so it is considered as full');
  open();
  await updating;
  await nextLock;
  t.equal(mp.isRechecking, false);
  mp.unlock();
  await waiting;
  t.ok(waited === true || waited instanceof ErrRecheckFull, 'the waiting tx was answered after the recheck');
  t.equal((await mp.checkTx(enc('late'))).added, true, 'accepted once the recheck is over');
});

t.test('a recheck of many txs gives the event loop turns, and still rechecks every tx in order', async (t) => {
  const { mp, app } = make({ size: 100_000, recheckTimeoutMs: 600_000 });
  const n = 3000;
  for (let i = 0; i < n; i++) await mp.checkTx(enc(`m${i}`));
  // A recheck that costs real time per tx, so that it spans several slices.
  const slow = app.checkTx.bind(app);
  app.checkTx = (tx, type) => {
    if (type === CheckTxType.Recheck) {
      const until = performance.now() + 0.02;
      while (performance.now() < until);
    }
    return slow(tx, type);
  };
  app.invalid.add('m7');
  let turns = 0;
  let ticking = true;
  const tick = () => {
    if (!ticking) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  app.calls = [];
  await commit(mp, 2n, [], []);
  ticking = false;
  t.equal(app.calls.length, n, 'every tx rechecked');
  t.same(app.calls.slice(0, 3).map((c) => c.tx), ['m0', 'm1', 'm2'], 'in pool order');
  t.equal(mp.size(), n - 1, 'the failing one evicted');
  t.ok(turns >= 2, `the event loop ran during the recheck (${turns} turns)`);
});

t.test('a hung recheck gives up after recheck_timeout and keeps the rest', async (t) => {
  const { mp, app } = make({ recheckTimeoutMs: 30 });
  await mp.checkTx(enc('h1'));
  await mp.checkTx(enc('h2'));
  app.recheckGate = new Promise<void>(() => {});
  const start = Date.now();
  await commit(mp, 2n, [], []);
  // Proves the recheck does not hang (the gate never opens), not how fast it gives up: a bound far
  // above the 30 ms timeout, which a loaded machine's stalls cannot reach.
  const took = Date.now() - start;
  t.ok(took < 30_000, `the commit ended without the app's answer (${took} ms)`);
  t.same(txs(mp), ['h1', 'h2']);
});

t.test('what a recheck_timeout cut left unchecked is rechecked, in order, before the next new tx', async (t) => {
  const { mp, app } = make({ recheckTimeoutMs: 2000 });
  const names = Array.from({ length: 10 }, (_, i) => `c${i}`);
  for (const n of names) await mp.checkTx(enc(n));
  // The first pass costs 600 ms a tx: the 2 s recheck_timeout cuts it after at most four.
  let slow = true;
  const inner = app.checkTx.bind(app);
  app.checkTx = (tx, type) => {
    if (type === CheckTxType.Recheck && slow) {
      const until = performance.now() + 600;
      while (performance.now() < until);
    }
    return inner(tx, type);
  };
  app.calls = [];
  await commit(mp, 2n, [], []);
  const firstPass = app.calls.length;
  t.ok(firstPass >= 1 && firstPass < names.length, `the recheck was cut (${firstPass} of ${names.length} rechecked)`);
  slow = false;
  app.invalid.add('c9');
  t.equal((await mp.checkTx(enc('next'))).added, true);
  t.same(
    app.calls.map((c) => `${c.tx}/${c.type === CheckTxType.Recheck ? 'recheck' : 'new'}`),
    [...names.map((n) => `${n}/recheck`), 'next/new'],
    'the rest rechecked in pool order, then the new tx',
  );
  t.same(txs(mp), [...names.slice(0, 9), 'next'], 'a tx the catch-up found invalid was evicted');
  app.calls = [];
  await mp.checkTx(enc('after'));
  t.same(app.calls.map((c) => c.tx), ['after'], 'caught up: nothing rechecked again');
});

t.test('checkTx waits while the pool is locked', async (t) => {
  const { mp } = make();
  await mp.lock();
  let done = false;
  const p = mp.checkTx(enc('w')).then(() => (done = true));
  await new Promise((r) => setTimeout(r, 10));
  t.equal(done, false);
  mp.unlock();
  await p;
  t.equal(mp.size(), 1);
  t.throws(() => mp.unlock(), /without lock/);
});

t.test('lock waits for CheckTx calls already sent to the app', async (t) => {
  const { mp, app } = make();
  let release!: () => void;
  app.delays.set('inflight', new Promise<void>((r) => (release = r)));
  const p = mp.checkTx(enc('inflight'));
  let locked = false;
  const l = mp.lock().then(() => (locked = true));
  await new Promise((r) => setTimeout(r, 10));
  t.equal(locked, false, 'lock waits for the response');
  release();
  await Promise.all([p, l]);
  t.equal(mp.size(), 1, 'applied before the lock was granted');
  mp.unlock();
});

t.test('txsAvailable fires once per height', async (t) => {
  const { mp } = make();
  let n = 0;
  const off = mp.onTxsAvailable(() => n++);
  await mp.checkTx(enc('bad'));
  t.equal(n, 0, 'a failed tx does not notify');
  await mp.checkTx(enc('1'));
  await mp.checkTx(enc('2'));
  t.equal(n, 1, 'once for two txs');
  await commit(mp, 2n, ['1'], [0]);
  t.equal(n, 2, 'the next height notifies again for the txs left');
  await mp.checkTx(enc('3'));
  t.equal(n, 2, 'still once for that height');
  await commit(mp, 3n, ['2', '3'], [0, 0]);
  t.equal(n, 2, 'an empty pool does not notify');
  await mp.checkTx(enc('4'));
  t.equal(n, 3);
  off();
  await commit(mp, 4n, [], []);
  t.equal(n, 3, 'unsubscribed');
});

t.test('flush, removeTxByKey, entries', async (t) => {
  const { mp } = make();
  await mp.checkTx(enc('f1'), { sender: 'peerA' });
  await mp.checkTx(enc('f2'));
  await t.rejects(mp.checkTx(enc('f1'), { sender: 'peerB' }), ErrTxInCache);
  const e = mp.getTx(txKey(enc('f1')))!;
  t.same([...e.senders].sort(), ['peerA', 'peerB'], 'a cache hit records the extra sender');
  t.equal(e.height, 1n);
  t.equal(e.gasWanted, 1n);
  t.equal(mp.removeTxByKey(txKey(enc('f1'))), true);
  t.equal(mp.removeTxByKey(txKey(enc('f1'))), false);
  t.same([...mp.entries()].map((x) => dec(x.tx)), ['f2']);
  t.equal(mp.has(txKey(enc('f2'))), true);
  mp.flush();
  t.equal(mp.size(), 0);
  t.equal(mp.sizeBytes(), 0);
  t.equal((await mp.checkTx(enc('f2'))).added, true, 'flush also clears the cache');
});

t.test('LoopTurns: due once a slice of work has passed, the clock read every `every` items; a turn is a macrotask and starts a new slice', async (t) => {
  const busy = (ms: number) => {
    const end = performance.now() + ms;
    while (performance.now() < end);
  };
  // A long slice, so that a loaded machine's pause between two statements does not spend it.
  const turns = new LoopTurns(200);
  t.notOk(turns.due(), 'a fresh slice is not spent');
  busy(210);
  t.ok(turns.due(), 'spent after its length of work (every item)');
  t.notOk(turns.due(0, 4), 'with every = 4 the clock is read only at items 3, 7, …');
  t.notOk(turns.due(2, 4));
  t.ok(turns.due(3, 4));
  // The turn is a macrotask (setImmediate, after the loop's I/O phase): work queued before it as a
  // macrotask runs before the loop comes back.
  let ranFirst = false;
  setImmediate(() => (ranFirst = true));
  await turns.turn();
  const dueAfter = turns.due();
  t.ok(ranFirst, 'work queued before the turn ran during it');
  t.notOk(dueAfter, 'the turn starts a new slice');
});
