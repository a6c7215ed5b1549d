/**
 * Application state stores, shaped like the SDK's (cosmos-sdk: store/types/store.go KVStore,
 * store/cachekv/store.go, store/prefix/store.go, store/gaskv/store.go).
 *
 * Layers, bottom up:
 * - `LmdbReadStore`: the committed state in the app's LMDB database; read-only, because the only
 *   writes to LMDB happen in BaseApp.commit() inside the block's write transaction.
 * - `VersionReadStore`: the committed state at an older height (src/store/versioned.ts), for
 *   queries with a height.
 * - `CacheKVStore`: a write-back cache over any parent. BaseApp keeps one per block over the
 *   committed state (the SDK's finalizeBlockState) and branches one per tx (the SDK's
 *   CacheMultiStore): `write()` pushes a branch's changes into its parent, dropping the branch
 *   discards them.
 * - `PrefixStore`: a module's view, keys relative to the module's store prefix.
 * - `GasKVStore`: charges the SDK's KVGasConfig to a gas meter on every access.
 *
 * Iteration follows the SDK: `start` inclusive, `end` exclusive, undefined = unbounded; reverse
 * walks the same range from the top. Values returned by `get`/`iterate` must not be mutated.
 */
import { bytesToKey, concatBytes, keyToBytes, prefixEnd, type Bytes } from './bytes.js';
import { DEFAULT_KV_GAS_CONFIG, GasDesc, type GasMeter, type KVGasConfig } from './gas.js';
import type { VersionedStore } from '../store/versioned.js';

export interface KVPair {
  key: Bytes;
  value: Bytes;
}

export interface KVStore {
  get(key: Bytes): Bytes | undefined;
  has(key: Bytes): boolean;
  set(key: Bytes, value: Bytes): void;
  delete(key: Bytes): void;
  iterate(start?: Bytes, end?: Bytes, reverse?: boolean): Iterable<KVPair>;
}

/** The part of an lmdb-js `Database` (binary keys and values) that the app uses. */
export interface AppDb {
  getBinary(key: Bytes): Bytes | undefined;
  getRange(opts: { start?: Bytes; end?: Bytes; reverse?: boolean }): Iterable<{ key: unknown; value: unknown }>;
  putSync(key: Bytes, value: Bytes): void;
  removeSync(key: Bytes): boolean;
}

/** SDK stores panic on an empty key and a nil value (store/types/validity.go). */
function assertKey(key: Bytes): void {
  if (!(key instanceof Uint8Array) || key.length === 0) throw new Error('key is nil or empty');
}

function assertValue(value: Bytes): void {
  if (!(value instanceof Uint8Array)) throw new Error('value is nil');
}

function inRange(k: string, start: string | undefined, end: string | undefined): boolean {
  return (start === undefined || k >= start) && (end === undefined || k < end);
}

/** Committed state, read straight from LMDB. Writes throw: only commit() writes LMDB. */
export class LmdbReadStore implements KVStore {
  constructor(private readonly db: AppDb) {}

  get(key: Bytes): Bytes | undefined {
    assertKey(key);
    return this.db.getBinary(key) ?? undefined;
  }

  has(key: Bytes): boolean {
    return this.get(key) !== undefined;
  }

  set(): void {
    throw new Error('committed store is read-only: state reaches LMDB only through BaseApp.commit()');
  }

  delete(): void {
    throw new Error('committed store is read-only: state reaches LMDB only through BaseApp.commit()');
  }

  *iterate(start?: Bytes, end?: Bytes, reverse = false): Iterable<KVPair> {
    if (!reverse) {
      for (const { key, value } of this.db.getRange({ start, end })) yield { key: key as Bytes, value: value as Bytes };
      return;
    }
    // lmdb-js reverse ranges start (inclusive) at the high key and end (exclusive) at the low one,
    // which is the mirror of the SDK's [start, end): begin at `end`, skip it, stop below `start`.
    const lo = start === undefined ? undefined : bytesToKey(start);
    const hi = end === undefined ? undefined : bytesToKey(end);
    for (const { key, value } of this.db.getRange({ start: end, reverse: true })) {
      const k = bytesToKey(key as Bytes);
      if (hi !== undefined && k >= hi) continue;
      if (lo !== undefined && k < lo) return;
      yield { key: key as Bytes, value: value as Bytes };
    }
  }
}

/**
 * Committed state at an older height, read from the versioned store's history (queries with a
 * height). Read-only; a read after the height was pruned throws the store's VersionNotFoundError.
 */
export class VersionReadStore implements KVStore {
  constructor(
    private readonly store: VersionedStore,
    readonly version: bigint,
  ) {}

  get(key: Bytes): Bytes | undefined {
    assertKey(key);
    return this.store.getAt(key, this.version);
  }

  has(key: Bytes): boolean {
    return this.get(key) !== undefined;
  }

  set(): void {
    throw new Error('historical state is read-only');
  }

  delete(): void {
    throw new Error('historical state is read-only');
  }

  iterate(start?: Bytes, end?: Bytes, reverse = false): Iterable<KVPair> {
    return this.store.iterateAt(this.version, start, end, reverse);
  }
}

/** A read-only view: queries must not write, even into a cache. */
export class ReadOnlyStore implements KVStore {
  constructor(private readonly parent: KVStore) {}
  get(key: Bytes): Bytes | undefined {
    return this.parent.get(key);
  }
  has(key: Bytes): boolean {
    return this.parent.has(key);
  }
  set(): void {
    throw new Error('store is read-only');
  }
  delete(): void {
    throw new Error('store is read-only');
  }
  iterate(start?: Bytes, end?: Bytes, reverse?: boolean): Iterable<KVPair> {
    return this.parent.iterate(start, end, reverse);
  }
}

/** First index i with arr[i] >= s. */
function lowerBound(arr: readonly string[], s: string): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid]! < s) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A changed key: the new value, or null for a deletion. */
export interface DirtyEntry {
  key: Bytes;
  value: Bytes | null;
}

/**
 * Write-back cache (store/cachekv). Changes live in a Map keyed by the latin1 form of the key;
 * the sorted key list that iteration and flushing need is rebuilt only after a new key arrives.
 *
 * A cache over a store that is not itself a cache (the block's state, CheckTx's check state, over
 * committed LMDB) also remembers what it read from that store, absent keys included, as the SDK's
 * cachekv keeps clean entries beside dirty ones: a block reads the same params, module accounts
 * and signer accounts tx after tx, and each read went to LMDB (a native call, a key copy, a value
 * copy). The parent must not change under the cache while it lives: BaseApp makes a new block
 * state per block and a new check state at every commit, each over the committed state of that
 * moment (the SDK's CheckTx likewise reads its branch of the last commit). Clean entries are not
 * changes: they are neither written nor iterated; only `get`/`has` answer from them.
 */
export class CacheKVStore implements KVStore {
  private readonly dirty = new Map<string, Bytes | null>();
  private sorted: string[] | null = [];
  /** Reads from a non-cache parent (null: absent there); unused over another CacheKVStore. */
  private readonly clean: Map<string, Bytes | null> | null;
  /**
   * Called with the key (latin1) of every write into this cache — set, delete, or a branch's
   * write() — once it is made. BaseApp sets it on a block's state (BaseApp.watchBlockState).
   */
  onWrite: ((k: string) => void) | undefined = undefined;

  constructor(private readonly parent: KVStore) {
    this.clean = parent instanceof CacheKVStore ? null : new Map();
  }

  get(key: Bytes): Bytes | undefined {
    assertKey(key);
    return this.getByKey(bytesToKey(key), key);
  }

  /**
   * get with the key's latin1 form already made: a branch over a branch (a tx's over the block's)
   * hands it down instead of converting the key again at every level.
   */
  private getByKey(k: string, key: Bytes): Bytes | undefined {
    const v = this.dirty.get(k);
    if (v !== undefined) return v ?? undefined;
    const clean = this.clean;
    if (clean === null) return (this.parent as CacheKVStore).getByKey(k, key);
    let c = clean.get(k);
    if (c === undefined) {
      c = this.parent.get(key) ?? null;
      clean.set(k, c);
    }
    return c ?? undefined;
  }

  has(key: Bytes): boolean {
    return this.get(key) !== undefined;
  }

  set(key: Bytes, value: Bytes): void {
    assertKey(key);
    assertValue(value);
    this.put(bytesToKey(key), Uint8Array.from(value));
  }

  delete(key: Bytes): void {
    assertKey(key);
    this.put(bytesToKey(key), null);
  }

  private put(k: string, v: Bytes | null): void {
    if (!this.dirty.has(k)) this.sorted = null;
    this.dirty.set(k, v);
    this.onWrite?.(k);
  }

  private sortedKeys(): string[] {
    if (this.sorted === null) this.sorted = [...this.dirty.keys()].sort();
    return this.sorted;
  }

  /** A tx-level branch over this cache (CacheMultiStore.CacheMultiStore()). */
  branch(): CacheKVStore {
    return new CacheKVStore(this);
  }

  /** A copy of this cache's changes over the same parent, for re-running a block from scratch. */
  clone(): CacheKVStore {
    const c = new CacheKVStore(this.parent);
    for (const [k, v] of this.dirty) c.dirty.set(k, v);
    c.sorted = this.sorted === null ? null : this.sorted.slice();
    return c;
  }

  /** Pushes the changes into the parent in key order and empties this cache (cachekv Write). */
  write(): void {
    const p = this.parent;
    if (p instanceof CacheKVStore) {
      // Into a branch below (a tx's writes into the block's): the entries move as they are, the
      // key in its latin1 form and the value this cache already copied and now lets go of.
      for (const k of this.sortedKeys()) p.put(k, this.dirty.get(k)!);
    } else {
      for (const k of this.sortedKeys()) {
        const v = this.dirty.get(k)!;
        const key = keyToBytes(k);
        if (v === null) p.delete(key);
        else p.set(key, v);
      }
    }
    this.dirty.clear();
    this.sorted = [];
  }

  /** Drops every change (and what was read). */
  discard(): void {
    this.dirty.clear();
    this.clean?.clear();
    this.sorted = [];
  }

  /** Number of changed keys. */
  get size(): number {
    return this.dirty.size;
  }

  /** The changes in key order (deletions as null), for commit and the app hash. */
  *dirtyEntries(): Iterable<DirtyEntry> {
    for (const k of this.sortedKeys()) yield { key: keyToBytes(k), value: this.dirty.get(k)! };
  }

  *iterate(start?: Bytes, end?: Bytes, reverse = false): Iterable<KVPair> {
    const s = start === undefined ? undefined : bytesToKey(start);
    const e = end === undefined ? undefined : bytesToKey(end);
    // Snapshot the cache's keys in range: writes during iteration must not move the cursor.
    const keys = this.sortedKeys();
    const lo = s === undefined ? 0 : lowerBound(keys, s);
    const hi = e === undefined ? keys.length : lowerBound(keys, e);
    const mine = keys.slice(lo, hi);
    const vals = mine.map((k) => this.dirty.get(k)!);
    if (reverse) {
      mine.reverse();
      vals.reverse();
    }
    const before = reverse ? (a: string, b: string) => a > b : (a: string, b: string) => a < b;
    let i = 0;
    for (const p of this.parent.iterate(start, end, reverse)) {
      const pk = bytesToKey(p.key);
      // Emit cached keys that sort before the parent's key.
      while (i < mine.length && before(mine[i]!, pk)) {
        const v = vals[i]!;
        if (v !== null) yield { key: keyToBytes(mine[i]!), value: v };
        i++;
      }
      if (i < mine.length && mine[i] === pk) {
        // The cache shadows the parent's value (or deletes it).
        const v = vals[i]!;
        if (v !== null) yield { key: p.key, value: v };
        i++;
        continue;
      }
      if (!inRange(pk, s, e)) continue;
      yield p;
    }
    for (; i < mine.length; i++) {
      const v = vals[i]!;
      if (v !== null) yield { key: keyToBytes(mine[i]!), value: v };
    }
  }
}

/** A module's view of a parent store: every key is prefixed (store/prefix). */
export class PrefixStore implements KVStore {
  /**
   * The end of the prefix's range, made at the first iteration: a context makes a PrefixStore per
   * module store it is asked for, a tx's ante and messages many, and most only get and set.
   */
  private end: Bytes | undefined | null = null;

  constructor(
    private readonly parent: KVStore,
    readonly prefix: Bytes,
  ) {
    if (prefix.length === 0) throw new Error('prefix store needs a non-empty prefix');
  }

  private full(key: Bytes): Bytes {
    assertKey(key);
    return concatBytes(this.prefix, key);
  }

  get(key: Bytes): Bytes | undefined {
    return this.parent.get(this.full(key));
  }

  has(key: Bytes): boolean {
    return this.parent.has(this.full(key));
  }

  set(key: Bytes, value: Bytes): void {
    this.parent.set(this.full(key), value);
  }

  delete(key: Bytes): void {
    this.parent.delete(this.full(key));
  }

  *iterate(start?: Bytes, end?: Bytes, reverse = false): Iterable<KVPair> {
    const s = start === undefined ? this.prefix : concatBytes(this.prefix, start);
    const e = end === undefined ? (this.end === null ? (this.end = prefixEnd(this.prefix)) : this.end) : concatBytes(this.prefix, end);
    const n = this.prefix.length;
    for (const p of this.parent.iterate(s, e, reverse)) yield { key: p.key.subarray(n), value: p.value };
  }
}

/** Charges store access to a gas meter with the SDK's schedule (store/gaskv). */
export class GasKVStore implements KVStore {
  constructor(
    private readonly parent: KVStore,
    private readonly meter: GasMeter,
    private readonly cfg: KVGasConfig = DEFAULT_KV_GAS_CONFIG,
  ) {}

  get(key: Bytes): Bytes | undefined {
    this.meter.consume(this.cfg.readCostFlat, GasDesc.readFlat);
    const v = this.parent.get(key);
    this.meter.consume(this.cfg.readCostPerByte * BigInt(key.length), GasDesc.readPerByte);
    this.meter.consume(this.cfg.readCostPerByte * BigInt(v?.length ?? 0), GasDesc.readPerByte);
    return v;
  }

  has(key: Bytes): boolean {
    this.meter.consume(this.cfg.hasCost, GasDesc.has);
    return this.parent.has(key);
  }

  set(key: Bytes, value: Bytes): void {
    assertValue(value);
    this.meter.consume(this.cfg.writeCostFlat, GasDesc.writeFlat);
    this.meter.consume(this.cfg.writeCostPerByte * BigInt(key.length), GasDesc.writePerByte);
    this.meter.consume(this.cfg.writeCostPerByte * BigInt(value.length), GasDesc.writePerByte);
    this.parent.set(key, value);
  }

  delete(key: Bytes): void {
    this.meter.consume(this.cfg.deleteCost, GasDesc.delete);
    this.parent.delete(key);
  }

  *iterate(start?: Bytes, end?: Bytes, reverse = false): Iterable<KVPair> {
    // gaskv charges each position the iterator lands on: a flat step plus the bytes read.
    for (const p of this.parent.iterate(start, end, reverse)) {
      this.meter.consume(this.cfg.iterNextCostFlat, GasDesc.iterNextFlat);
      this.meter.consume(this.cfg.readCostPerByte * BigInt(p.key.length + p.value.length), GasDesc.valuePerByte);
      yield p;
    }
  }
}
