/**
 * The versioned store (src/store/versioned.ts) over real LMDB: every retained version reads back
 * exactly as it was written (point reads and ranges, both directions), pruning keeps exactly the
 * SDK's window and deletes the dead rows in bounded batches, pruned and future versions throw,
 * and the latest version never touches the history database.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { open, type RootDatabase } from 'lmdb';
import { pruningOptions, pruneUpTo, type PruningOptions } from '../../src/store/pruning.js';
import { historyKey, VersionedStore, type VersionedDb, type VersionedDbs } from '../../src/store/versioned.js';
import { seededRandom as rng } from '../helpers/fuzz/prng.js';

type Bytes = Uint8Array;
const hex = (b: Bytes) => Buffer.from(b).toString('hex');
const cmp = (a: Bytes, b: Bytes) => Buffer.compare(Buffer.from(a), Buffer.from(b));

function openEnv(t: Test): { env: RootDatabase; dbs: VersionedDbs } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  const env = open({ path: dir, maxDbs: 4, noSync: true });
  t.teardown(async () => {
    await env.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const db = (name: string) => env.openDB<Uint8Array, Uint8Array>({ name, encoding: 'binary', keyEncoding: 'binary' }) as unknown as VersionedDb;
  return { env, dbs: { latest: db('app'), history: db('app_history'), changes: db('app_changes') } };
}

// Keys chosen to stress the encoding: zero bytes, keys that are prefixes of others, 0xff bytes.
const KEYS: Bytes[] = [
  Uint8Array.of(0x01),
  Uint8Array.of(0x01, 0x00),
  Uint8Array.of(0x01, 0x00, 0x00),
  Uint8Array.of(0x01, 0x00, 0x01),
  Uint8Array.of(0x01, 0x01),
  Uint8Array.of(0x01, 0xff),
  Uint8Array.of(0x00),
  Uint8Array.of(0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05),
  Uint8Array.of(0x02, 0x61, 0x62),
  Uint8Array.of(0x02, 0x61, 0x62, 0x00, 0x63),
  Uint8Array.of(0xff, 0xff),
  ...Array.from({ length: 20 }, (_, i) => Uint8Array.of(0x03, i, 0x00, i)),
].sort(cmp);

type Model = Map<string, Bytes>;

/** Commits `versions` random blocks; returns the model of every version. */
function run(env: RootDatabase, store: VersionedStore, versions: number, seed: number, from = 1n): Map<bigint, Model> {
  const rand = rng(seed);
  const models = new Map<bigint, Model>();
  let cur: Model = new Map();
  for (let i = 0; i < versions; i++) {
    const v = from + BigInt(i);
    const next = new Map(cur);
    const changes: { key: Bytes; value: Bytes | null }[] = [];
    const n = 1 + Math.floor(rand() * 8);
    const picked = new Set<number>();
    for (let j = 0; j < n; j++) picked.add(Math.floor(rand() * KEYS.length));
    for (const idx of [...picked].sort((a, b) => a - b)) {
      const key = KEYS[idx]!;
      const r = rand();
      if (r < 0.3) {
        changes.push({ key, value: null });
        next.delete(hex(key));
      } else {
        // Sometimes the same value again (no change), sometimes empty, sometimes with zero bytes.
        const value = r < 0.4 ? (cur.get(hex(key)) ?? Uint8Array.of(7)) : r < 0.45 ? new Uint8Array(0) : Uint8Array.of(Math.floor(rand() * 256), 0, i & 0xff);
        changes.push({ key, value });
        next.set(hex(key), value);
      }
    }
    env.transactionSync(() => store.commit(v, changes));
    models.set(v, next);
    cur = next;
  }
  return models;
}

function expectRange(model: Model, start?: Bytes, end?: Bytes, reverse = false): string[] {
  const out = [...model.entries()]
    .map(([k, v]) => ({ key: Buffer.from(k, 'hex'), value: v }))
    .filter(({ key }) => (start === undefined || cmp(key, start) >= 0) && (end === undefined || cmp(key, end) < 0))
    .sort((a, b) => cmp(a.key, b.key));
  if (reverse) out.reverse();
  return out.map((e) => `${hex(e.key)}=${hex(e.value)}`);
}

function actualRange(store: VersionedStore, v: bigint, start?: Bytes, end?: Bytes, reverse = false): string[] {
  return [...store.iterateAt(v, start, end, reverse)].map((e) => `${hex(e.key)}=${hex(e.value)}`);
}

function checkVersion(t: Test, store: VersionedStore, v: bigint, model: Model): void {
  for (const key of KEYS) {
    const got = store.getAt(key, v);
    const want = model.get(hex(key));
    if ((got === undefined) !== (want === undefined) || (got && want && hex(got) !== hex(want))) {
      t.fail(`version ${v} key ${hex(key)}: got ${got && hex(got)}, want ${want && hex(want)}`);
      return;
    }
  }
  const bounds: [Bytes | undefined, Bytes | undefined][] = [
    [undefined, undefined],
    [Uint8Array.of(0x01), Uint8Array.of(0x02)],
    [Uint8Array.of(0x01, 0x00), Uint8Array.of(0x01, 0x00, 0x01)],
    [Uint8Array.of(0x00, 0x00), Uint8Array.of(0x03, 5)],
    [Uint8Array.of(0x03), undefined],
    [undefined, Uint8Array.of(0x01, 0x01)],
  ];
  for (const [s, e] of bounds) {
    for (const reverse of [false, true]) {
      t.same(actualRange(store, v, s, e, reverse), expectRange(model, s, e, reverse), `version ${v} range ${s && hex(s)}..${e && hex(e)}${reverse ? ' reverse' : ''}`);
    }
  }
}

t.test('history keys sort by (key, height) in the flat key order', async (t) => {
  const rand = rng(7);
  const keys = [...KEYS];
  for (let i = 0; i < 200; i++) keys.push(Uint8Array.from({ length: 1 + Math.floor(rand() * 5) }, () => (rand() < 0.4 ? 0 : Math.floor(rand() * 256))));
  let bad = 0;
  for (const a of keys) {
    for (const b of keys) {
      const ka = historyKey(a, BigInt(Math.floor(rand() * 1e6)));
      const kb = historyKey(b, BigInt(Math.floor(rand() * 1e6)));
      const want = Math.sign(cmp(a, b));
      if (want !== 0 && Math.sign(cmp(ka, kb)) !== want) bad++;
    }
  }
  t.equal(bad, 0);
  t.ok(cmp(historyKey(KEYS[0]!, 1n), historyKey(KEYS[0]!, 2n)) < 0, 'heights ascend within a key');
});

t.test('every version reads back as written (pruning nothing)', async (t) => {
  const { env, dbs } = openEnv(t);
  const store = new VersionedStore(dbs, pruningOptions('nothing'));
  t.throws(() => store.getAt(KEYS[0]!, 1n), { code: 'VERSION_NOT_FOUND' }, 'no version before the first commit');
  const models = run(env, store, 60, 1);
  t.equal(store.latestVersion, 60n);
  t.equal(store.earliestVersion, 1n);
  for (const [v, model] of models) checkVersion(t, store, v, model);
  t.throws(() => store.getAt(KEYS[0]!, 61n), { code: 'VERSION_NOT_FOUND' }, 'future version');
  t.throws(() => [...store.iterateAt(61n)], { code: 'VERSION_NOT_FOUND' }, 'future version (range)');
  t.throws(() => store.getAt(KEYS[0]!, 0n), { code: 'VERSION_NOT_FOUND' }, 'version 0');

  // A reopened store (e.g. after a restart) reads the same.
  const again = new VersionedStore(dbs, pruningOptions('nothing'));
  t.equal(again.latestVersion, 60n);
  checkVersion(t, again, 30n, models.get(30n)!);
});

t.test('an initial height above 1 starts the history there', async (t) => {
  const { env, dbs } = openEnv(t);
  const store = new VersionedStore(dbs, pruningOptions('nothing'));
  const models = run(env, store, 5, 3, 100n);
  t.equal(store.earliestVersion, 100n);
  t.throws(() => store.getAt(KEYS[0]!, 99n), { code: 'VERSION_NOT_FOUND' });
  for (const [v, model] of models) checkVersion(t, store, v, model);
});

t.test('pruning keeps exactly the SDK window and deletes dead rows in bounded batches', async (t) => {
  t.equal(pruneUpTo(pruningOptions('custom', 2, 10), 20n), 17n, 'manager.go: h - keepRecent - 1 at multiples of the interval');
  t.equal(pruneUpTo(pruningOptions('custom', 2, 10), 21n), 0n);
  t.equal(pruneUpTo(pruningOptions('custom', 20, 10), 20n), 0n, 'never the last keepRecent');
  t.equal(pruneUpTo(pruningOptions('nothing'), 1000n), 0n);

  const { env, dbs } = openEnv(t);
  const opts: PruningOptions = pruningOptions('custom', 2, 10);
  const store = new VersionedStore(dbs, opts, { pruneBatch: 3 });
  const models = new Map<bigint, Model>();
  const rand = rng(11);
  let cur: Model = new Map();
  const seen: { v: bigint; changed: number; pruned: number }[] = [];
  for (let v = 1n; v <= 45n; v++) {
    // Commit one block at a time so the window can be checked after each.
    const next = new Map(cur);
    const changes = KEYS.filter(() => rand() < 0.5).map((key) => {
      const value = Uint8Array.of(Number(v), Math.floor(rand() * 256));
      next.set(hex(key), value);
      return { key, value };
    });
    const stats = env.transactionSync(() => store.commit(v, changes));
    seen.push({ v, ...stats });
    models.set(v, next);
    cur = next;
    // The SDK's window: after height h, every version ≤ the last prune point is gone.
    let pruneTo = 0n;
    for (let h = 1n; h <= v; h++) pruneTo = pruneUpTo(opts, h) > pruneTo ? pruneUpTo(opts, h) : pruneTo;
    const earliest = pruneTo > 0n ? pruneTo + 1n : 1n;
    t.equal(store.earliestVersion, earliest, `earliest after ${v}`);
  }
  t.equal(store.earliestVersion, 38n, 'after 45 blocks: pruned through 40-2-1 = 37');
  for (let v = 1n; v < 38n; v++) {
    t.notOk(store.hasVersion(v), `version ${v} is gone`);
    t.throws(() => store.getAt(KEYS[0]!, v), { code: 'VERSION_NOT_FOUND' });
  }
  t.throws(() => [...store.iterateAt(37n)], { code: 'VERSION_NOT_FOUND' });
  for (let v = 38n; v <= 45n; v++) checkVersion(t, store, v, models.get(v)!);

  // Bounded: each commit deleted at most its budget (pruneBatch + 2 × its changes), or one index
  // chunk when that alone is larger.
  for (const s of seen) t.ok(s.pruned <= Math.max(3 + 2 * s.changed, 256), `commit ${s.v} pruned ${s.pruned} rows for ${s.changed} changes`);
  // Keep committing small blocks: the dead rows drain and only rows above `earliest` stay.
  for (let v = 46n; v <= 65n; v++) {
    const value = Uint8Array.of(Number(v));
    env.transactionSync(() => store.commit(v, [{ key: KEYS[0]!, value }]));
    cur = new Map(cur).set(hex(KEYS[0]!), value);
    models.set(v, cur);
  }
  const heights: bigint[] = [];
  for (const { key } of dbs.history.getRange({})) heights.push(Buffer.from(key as Bytes).readBigUInt64BE((key as Bytes).length - 8));
  t.equal(store.earliestVersion, 58n, 'pruned through 60-2-1 at height 60');
  t.same(heights.filter((h) => h <= store.earliestVersion), [], 'no history row at or below the earliest version is left');
  t.ok(heights.length > 0, 'rows above it remain');
  for (let v = 58n; v <= 65n; v++) checkVersion(t, store, v, models.get(v)!);
});

t.test('the latest version never reads the history database', async (t) => {
  const { env, dbs } = openEnv(t);
  const store = new VersionedStore(dbs, pruningOptions('nothing'));
  const models = run(env, store, 10, 5);
  let touched = 0;
  const h = dbs.history;
  const counting: VersionedDb = {
    getBinary: (k) => (touched++, h.getBinary(k)),
    getRange: (o) => (touched++, h.getRange(o)),
    putSync: (k, v) => (touched++, h.putSync(k, v)),
    removeSync: (k) => (touched++, h.removeSync(k)),
  };
  const spied = new VersionedStore({ ...dbs, history: counting }, pruningOptions('nothing'));
  for (const key of KEYS) {
    spied.get(key);
    spied.getAt(key, 10n);
  }
  t.same(actualRange(spied, 10n), expectRange(models.get(10n)!));
  t.same(actualRange(spied, 10n, undefined, undefined, true), expectRange(models.get(10n)!, undefined, undefined, true));
  t.equal(touched, 0, 'no history access at the latest version');
  spied.getAt(KEYS[0]!, 9n);
  t.ok(touched > 0, 'an older version does read it');
});

t.test('SDK pruning option validation', async (t) => {
  t.same(pruningOptions('default'), { strategy: 'default', keepRecent: 362880n, interval: 10n });
  t.same(pruningOptions('everything'), { strategy: 'everything', keepRecent: 2n, interval: 10n });
  t.same(pruningOptions('nothing', 5, 5), { strategy: 'nothing', keepRecent: 0n, interval: 0n });
  t.same(pruningOptions('custom', 100, 15), { strategy: 'custom', keepRecent: 100n, interval: 15n });
  t.throws(() => pruningOptions('custom', 2, 0), { message: `invalid custom pruning options: 'pruning-interval' must not be 0. If you want to disable pruning, select pruning = "nothing"` });
  t.throws(() => pruningOptions('custom', 2, 9), { message: `invalid custom pruning options: 'pruning-interval' must not be less than 10. For the most aggressive pruning, select pruning = "everything"` });
  t.throws(() => pruningOptions('custom', 1, 10), { message: `invalid custom pruning options: 'pruning-keep-recent' must not be less than 2. For the most aggressive pruning, select pruning = "everything"` });
  t.throws(() => pruningOptions('custom', 1n << 63n, 10), { message: /must not be greater than 2\^63-1/ });
  t.throws(() => pruningOptions('sometimes'), { message: 'unknown pruning strategy sometimes' });
});
