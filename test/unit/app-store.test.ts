/**
 * The app's store layers against a plain sorted-map model: CacheKVStore over LMDB (merge of
 * cached and committed keys, deletions, reverse ranges), branches, PrefixStore, GasKVStore's SDK
 * schedule, pagination, and the LtHash module hash (order independence, add/remove inverse).
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { open } from 'lmdb';
import { CacheKVStore, GasKVStore, LmdbReadStore, PrefixStore, type KVStore } from '../../src/app/store.js';
import { BasicGasMeter, OutOfGasError } from '../../src/app/gas.js';
import { LtHash, appHashFromModuleRoots } from '../../src/app/apphash.js';
import { paginate } from '../../src/app/pagination.js';
import { bytesToKey, prefixEnd } from '../../src/app/bytes.js';

const b = (...xs: number[]) => Uint8Array.from(xs);
const hex = (x: Uint8Array) => Buffer.from(x).toString('hex');

function tmpEnv(t: Test) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  const env = open({ path: dir, maxDbs: 16 });
  const db = env.openDB({ name: 'app', encoding: 'binary', keyEncoding: 'binary' });
  t.teardown(async () => {
    await env.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { env, db };
}

/** Deterministic PRNG so a failure reproduces. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function collect(it: Iterable<{ key: Uint8Array; value: Uint8Array }>): string[] {
  return [...it].map((p) => `${hex(p.key)}=${hex(p.value)}`);
}

function modelRange(m: Map<string, Uint8Array>, start?: Uint8Array, end?: Uint8Array, reverse = false): string[] {
  const s = start && bytesToKey(start);
  const e = end && bytesToKey(end);
  const keys = [...m.keys()].filter((k) => (s === undefined || k >= s) && (e === undefined || k < e)).sort();
  if (reverse) keys.reverse();
  return keys.map((k) => `${hex(Buffer.from(k, 'latin1'))}=${hex(m.get(k)!)}`);
}

t.test('CacheKVStore over LMDB matches a model under random writes, deletes and ranges', async (t) => {
  const { env, db } = tmpEnv(t);
  const r = rng(42);
  const key = () => b(1 + Math.floor(r() * 3), Math.floor(r() * 6));
  const model = new Map<string, Uint8Array>();
  env.transactionSync(() => {
    for (let i = 0; i < 12; i++) {
      const k = key();
      const v = b(i);
      db.putSync(k, v);
      model.set(bytesToKey(k), v);
    }
  });
  const committedCount = model.size;
  const committed = new LmdbReadStore(db);
  const block = new CacheKVStore(committed);
  const tx = block.branch();
  for (let i = 0; i < 40; i++) {
    const k = key();
    if (r() < 0.35) {
      tx.delete(k);
      model.delete(bytesToKey(k));
    } else {
      const v = b(100 + i);
      tx.set(k, v);
      model.set(bytesToKey(k), v);
    }
  }
  tx.write();
  let checked = 0;
  for (let i = 0; i < 60; i++) {
    const s = r() < 0.2 ? undefined : key();
    const e = r() < 0.2 ? undefined : key();
    const rev = r() < 0.5;
    t.same(collect(block.iterate(s, e, rev)), modelRange(model, s, e, rev), `range ${s && hex(s)}..${e && hex(e)} rev=${rev}`);
    checked++;
  }
  for (const k of model.keys()) t.equal(hex(block.get(Buffer.from(k, 'latin1'))!), hex(model.get(k)!));
  t.equal(checked, 60);
  // Nothing reached LMDB: only commit writes there.
  t.equal([...db.getRange({})].length, committedCount, 'LMDB untouched by cache writes');
});

t.test('a discarded branch leaves its parent unchanged; a written one lands', async (t) => {
  const { db } = tmpEnv(t);
  const block = new CacheKVStore(new LmdbReadStore(db));
  block.set(b(1), b(1));
  const br = block.branch();
  br.set(b(1), b(9));
  br.set(b(2), b(2));
  br.delete(b(1));
  t.equal(br.get(b(1)), undefined, 'branch sees its own delete');
  t.equal(hex(block.get(b(1))!), '01', 'parent does not');
  br.discard();
  t.same(collect(block.iterate()), ['01=01']);
  const br2 = block.branch();
  br2.set(b(2), b(2));
  br2.write();
  t.same(collect(block.iterate()), ['01=01', '02=02']);
  t.same([...block.dirtyEntries()].map((d) => hex(d.key)), ['01', '02'], 'dirty entries sorted');
});

t.test('empty keys are refused like the SDK', async (t) => {
  const { db } = tmpEnv(t);
  const c = new CacheKVStore(new LmdbReadStore(db));
  t.throws(() => c.set(new Uint8Array(0), b(1)), /key is nil or empty/);
  t.throws(() => new LmdbReadStore(db).set(), /read-only/);
});

t.test('PrefixStore strips its prefix and bounds iteration', async (t) => {
  const { db } = tmpEnv(t);
  const c = new CacheKVStore(new LmdbReadStore(db));
  c.set(b(1, 0xff, 1), b(1));
  c.set(b(1, 0xff), b(2));
  c.set(b(2), b(3));
  c.set(b(0, 9), b(4));
  const p = new PrefixStore(c, b(1));
  t.same(collect(p.iterate()), ['ff=02', 'ff01=01']);
  t.same(collect(p.iterate(undefined, undefined, true)), ['ff01=01', 'ff=02']);
  t.equal(hex(prefixEnd(b(1, 0xff))!), '02');
  t.equal(prefixEnd(b(0xff, 0xff)), undefined);
  const top = new PrefixStore(c, b(0xff));
  c.set(b(0xff, 0xff, 0xff), b(7));
  t.same(collect(top.iterate()), ['ffff=07'], 'all-0xff prefix iterates to the end');
});

t.test('GasKVStore charges the SDK KVGasConfig', async (t) => {
  const { db } = tmpEnv(t);
  const c = new CacheKVStore(new LmdbReadStore(db));
  const m = new BasicGasMeter(1_000_000n);
  const g = new GasKVStore(c, m);
  g.set(b(1, 2), b(1, 2, 3)); // 2000 + 30*2 + 30*3
  t.equal(m.consumed(), 2150n);
  g.get(b(1, 2)); // 1000 + 3*2 + 3*3
  t.equal(m.consumed(), 2150n + 1015n);
  g.has(b(1, 2)); // 1000
  g.delete(b(9)); // 1000
  t.equal(m.consumed(), 5165n);
  [...g.iterate()]; // one item: 30 + 3*(2+3)
  t.equal(m.consumed(), 5165n + 45n);
  const small = new GasKVStore(c, new BasicGasMeter(100n));
  t.throws(() => small.get(b(1, 2)), OutOfGasError);
});

t.test('LtHash: order-independent, remove inverts add, roots differ by content', async (t) => {
  const a = new LtHash();
  a.add(b(1), b(10));
  a.add(b(2), b(20));
  const c = new LtHash();
  c.add(b(2), b(20));
  c.add(b(3), b(30));
  c.add(b(1), b(10));
  c.remove(b(3), b(30));
  t.equal(hex(a.root()), hex(c.root()), 'same set, different history');
  t.equal(hex(new LtHash().root()), hex(LtHash.fromBytes(new LtHash().toBytes()).root()));
  t.equal(hex(LtHash.fromBytes(a.toBytes()).root()), hex(a.root()), 'serialization round-trips');
  const d = new LtHash();
  d.add(b(1), b(10, 2));
  d.add(b(2), b(20));
  t.not(hex(d.root()), hex(a.root()));
  // (k, v) split is length-prefixed: (01, 0203) and (0102, 03) differ.
  const x = new LtHash();
  x.add(b(1), b(2, 3));
  const y = new LtHash();
  y.add(b(1, 2), b(3));
  t.not(hex(x.root()), hex(y.root()));
  const r1 = appHashFromModuleRoots(new Map([['bank', a.root()], ['auth', d.root()]]));
  const r2 = appHashFromModuleRoots(new Map([['auth', d.root()], ['bank', a.root()]]));
  t.equal(hex(r1), hex(r2), 'module order is by name, not insertion');
  t.equal(r1.length, 32);
});

t.test('paginate: offset and key modes, limit 0 forces count_total, reverse', async (t) => {
  const { db } = tmpEnv(t);
  const c = new CacheKVStore(new LmdbReadStore(db));
  for (let i = 1; i <= 5; i++) c.set(b(i), b(i * 10));
  const run = (s: KVStore, req: Parameters<typeof paginate>[1]) => {
    const got: number[] = [];
    const res = paginate(s, req, (k) => got.push(k[0]!));
    return { got, next: res.next_key && hex(res.next_key), total: res.total };
  };
  t.same(run(c, { limit: 2 }), { got: [1, 2], next: '03', total: 0n });
  t.same(run(c, { limit: 2, count_total: true }), { got: [1, 2], next: '03', total: 5n });
  t.same(run(c, {}), { got: [1, 2, 3, 4, 5], next: null, total: 5n }, 'limit 0 → 100 and total');
  t.same(run(c, { offset: 4, limit: 2 }), { got: [5], next: null, total: 0n });
  t.same(run(c, { key: b(3), limit: 2 }), { got: [3, 4], next: '05', total: 0n });
  t.same(run(c, { key: b(3), limit: 2, reverse: true }), { got: [3, 2], next: '01', total: 0n });
  t.same(run(c, { limit: 2, reverse: true }), { got: [5, 4], next: '03', total: 0n });
  t.throws(() => run(c, { key: b(1), offset: 1 }), /either offset or key is expected, got both/);
});

t.test('a cache over committed state remembers its reads; a branch over a cache does not', async (t) => {
  let reads = 0;
  const data = new Map<string, Uint8Array>([[bytesToKey(b(1)), b(10)]]);
  const parent: KVStore = {
    get: (k) => {
      reads++;
      return data.get(bytesToKey(k));
    },
    has: (k) => data.has(bytesToKey(k)),
    set: () => {
      throw new Error('read-only');
    },
    delete: () => {
      throw new Error('read-only');
    },
    iterate: function* () {
      for (const [k, v] of [...data].sort()) yield { key: Buffer.from(k, 'latin1'), value: v };
    },
  };
  const root = new CacheKVStore(parent);
  t.same(root.get(b(1)), b(10));
  t.equal(root.get(b(2)), undefined);
  const branch = root.branch();
  t.same(branch.get(b(1)), b(10));
  t.equal(branch.has(b(2)), false);
  t.equal(reads, 2, 'each key reached the committed store once, present or absent');
  branch.set(b(2), b(20));
  branch.delete(b(1));
  t.equal(branch.get(b(1)), undefined, "the branch's deletion shadows the remembered read");
  branch.write();
  t.same(root.get(b(2)), b(20), 'a write shadows the remembered absence');
  t.equal(root.get(b(1)), undefined);
  t.same(
    [...root.dirtyEntries()].map((e) => [hex(e.key), e.value && hex(e.value)]),
    [
      ['01', null],
      ['02', '14'],
    ],
    'only writes are changes: remembered reads are neither written nor hashed',
  );
  t.same(
    [...new CacheKVStore(parent).iterate()].map((p) => hex(p.key)),
    ['01'],
  );
  t.equal(root.size, 2);
  root.discard();
  t.same(root.get(b(1)), b(10), 'discard forgets the reads too');
  t.equal(reads, 3);
});
