/**
 * Versioned key/value state: the latest value of every key, flat (one LMDB get), plus a history
 * of what each key held before each change, so that any retained version can be read.
 *
 * Layout (three LMDB databases sharing the environment's one write transaction):
 *   latest:  key                          → value            (the state at the latest version)
 *   history: esc(key) 00 00 || u64be(h)   → 00 (key absent) | 01 value
 *            = what `key` held at version h-1, written when the block at height h changed it
 *   changes: u64be(h) || u32be(chunk)     → (u16be(len) key)*  (the keys height h changed, ≤256
 *                                            per row: the pruning index)
 *            ff 'l' → u64be(latest version), ff 'e' → u64be(earliest readable version)
 *
 * esc() writes each 00 byte as 00 01, so esc(key) 00 00 never is a prefix of another key's
 * encoding and history rows sort by (key, height) in exactly the latest database's key order:
 * a historical range scan merges the two databases in one pass.
 *
 * Why "before" rows (an undo log) rather than "after" rows (a version chain):
 * - a read at version v < latest is ONE range seek: the first history row of the key with height
 *   > v holds the value at v; when there is none, the key has not changed since v and the latest
 *   value is the answer;
 * - a row (key, h) can only answer reads at versions < h, so once the earliest readable version
 *   E reaches h it is dead, whatever the key's other rows are: pruning deletes rows by height
 *   alone, through the `changes` index, without looking at neighbours;
 * - the first version (genesis plus the first block) writes no history at all: nothing older is
 *   readable.
 * With "after" rows every key would need its newest row below E kept forever (or copied), and the
 * latest value would be stored twice.
 *
 * Pruning follows the SDK's schedule (pruning.ts): the earliest readable version moves forward at
 * multiples of the interval, at once and in O(1); the dead rows are then deleted in bounded
 * batches, some every block, inside the block's write transaction: each commit deletes at most
 * `pruneBatch + 2 × (keys this block changed)` rows, a whole index chunk at least. Leftover dead
 * rows cost nothing but disk: reads never reach rows at heights ≤ E.
 */
import { pruneUpTo, type PruningOptions } from './pruning.js';

type Bytes = Uint8Array;

/** The part of an lmdb-js binary Database the store uses. */
export interface VersionedDb {
  getBinary(key: Bytes): Bytes | undefined | null;
  getRange(opts: { start?: Bytes; end?: Bytes; reverse?: boolean; limit?: number }): Iterable<{ key: unknown; value: unknown }>;
  putSync(key: Bytes, value: Bytes): void;
  removeSync(key: Bytes): boolean;
}

export interface VersionedDbs {
  latest: VersionedDb;
  history: VersionedDb;
  changes: VersionedDb;
}

/** A version outside the retained window: pruned, never written, or in the future. */
export class VersionNotFoundError extends Error {
  readonly code = 'VERSION_NOT_FOUND';
  constructor(readonly version: bigint) {
    super('version does not exist');
  }
}

export interface KVEntry {
  key: Bytes;
  value: Bytes;
}

export interface KVChange {
  key: Bytes;
  /** null deletes the key. */
  value: Bytes | null;
}

export interface CommitStats {
  /** Keys whose value changed (history rows written). */
  changed: number;
  /** History rows deleted by pruning in this commit. */
  pruned: number;
}

export interface VersionedStoreOptions {
  /** Rows every commit may delete on top of twice its own changes. Default 2048. */
  pruneBatch?: number;
}

const CHUNK_KEYS = 256;
const META_LATEST = Uint8Array.of(0xff, 0x6c); // ff 'l'
const META_EARLIEST = Uint8Array.of(0xff, 0x65); // ff 'e'
const TAG_ABSENT = 0x00;
const TAG_PRESENT = 0x01;
const ABSENT_ROW = Uint8Array.of(TAG_ABSENT);
const ZERO_KEY = Uint8Array.of(0x00);

function u64be(n: bigint): Bytes {
  const b = Buffer.allocUnsafe(8);
  b.writeBigUInt64BE(n);
  return b;
}

function readU64be(b: Bytes): bigint {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).readBigUInt64BE(0);
}

function concat(a: Bytes, b: Bytes): Bytes {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function compare(a: Bytes, b: Bytes): number {
  return Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

function equal(a: Bytes | undefined, b: Bytes | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && compare(a, b) === 0;
}

/** esc(key): every 00 byte becomes 00 01 (order-preserving, never contains 00 00). */
export function escapeKey(key: Bytes): Bytes {
  let zeros = 0;
  for (let i = 0; i < key.length; i++) if (key[i] === 0) zeros++;
  if (zeros === 0) return Uint8Array.from(key);
  const out = new Uint8Array(key.length + zeros);
  let o = 0;
  for (let i = 0; i < key.length; i++) {
    out[o++] = key[i]!;
    if (key[i] === 0) out[o++] = 0x01;
  }
  return out;
}

/** esc(key) 00 00: every history row of `key` starts with it, and no other key's row does. */
export function historyPrefix(key: Bytes): Bytes {
  const e = escapeKey(key);
  const out = new Uint8Array(e.length + 2);
  out.set(e, 0);
  return out;
}

/** The history row of `key` written at `height`. */
export function historyKey(key: Bytes, height: bigint): Bytes {
  return concat(historyPrefix(key), u64be(height));
}

/** The first encoding after every row of the prefix's key: esc(key) 00 01. */
function prefixEnd(prefix: Bytes): Bytes {
  const out = Uint8Array.from(prefix);
  out[out.length - 1] = 0x01;
  return out;
}

/** A history row's key, its prefix (esc(key) 00 00) and its height. */
function decodeHistoryKey(row: Bytes): { key: Bytes; prefix: Bytes; height: bigint } {
  const out: number[] = [];
  let i = 0;
  for (;;) {
    if (i + 1 >= row.length) throw new Error('corrupt history key: no terminator');
    const b = row[i]!;
    if (b !== 0) {
      out.push(b);
      i++;
      continue;
    }
    if (row[i + 1] === 0) break;
    out.push(0);
    i += 2;
  }
  const end = i + 2;
  if (row.length !== end + 8) throw new Error('corrupt history key: height is not 8 bytes');
  return { key: Uint8Array.from(out), prefix: row.subarray(0, end), height: readU64be(row.subarray(end)) };
}

function untag(row: Bytes): Bytes | undefined {
  if (row.length === 0) throw new Error('corrupt history row: empty');
  if (row[0] === TAG_ABSENT) return undefined;
  return row.subarray(1);
}

function tag(v: Bytes | undefined): Bytes {
  if (v === undefined) return ABSENT_ROW;
  const out = new Uint8Array(v.length + 1);
  out[0] = TAG_PRESENT;
  out.set(v, 1);
  return out;
}

function first(it: Iterable<{ key: unknown; value: unknown }>): { key: Bytes; value: Bytes } | undefined {
  for (const r of it) return { key: r.key as Bytes, value: r.value as Bytes };
  return undefined;
}

function packChunk(keys: readonly Bytes[]): Bytes {
  let n = 0;
  for (const k of keys) n += 2 + k.length;
  const out = Buffer.allocUnsafe(n);
  let o = 0;
  for (const k of keys) {
    if (k.length > 0xffff) throw new Error('key longer than 65535 bytes');
    out.writeUInt16BE(k.length, o);
    out.set(k, o + 2);
    o += 2 + k.length;
  }
  return out;
}

function unpackChunk(b: Bytes): Bytes[] {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const out: Bytes[] = [];
  for (let o = 0; o < buf.length; ) {
    const n = buf.readUInt16BE(o);
    out.push(buf.subarray(o + 2, o + 2 + n));
    o += 2 + n;
  }
  return out;
}

function chunkKey(height: bigint, chunk: number): Bytes {
  const b = Buffer.allocUnsafe(12);
  b.writeBigUInt64BE(height, 0);
  b.writeUInt32BE(chunk, 8);
  return b;
}

/** Reads of the latest version in the SDK's [start, end) order; reverse walks it from the top. */
function* latestRange(db: VersionedDb, start: Bytes | undefined, end: Bytes | undefined, reverse: boolean): Iterable<KVEntry> {
  if (!reverse) {
    for (const { key, value } of db.getRange({ start, end })) yield { key: key as Bytes, value: value as Bytes };
    return;
  }
  // lmdb-js reverse ranges begin (inclusive) at `start` and stop (exclusive) at `end`: begin at
  // our `end`, skip it, and check our inclusive `start` by hand.
  for (const { key, value } of db.getRange({ start: end, reverse: true })) {
    const k = key as Bytes;
    if (end !== undefined && compare(k, end) >= 0) continue;
    if (start !== undefined && compare(k, start) < 0) return;
    yield { key: k, value: value as Bytes };
  }
  // lmdb-js 3 never yields the one-byte key 00 in a reverse range (its default low bound), so the
  // lowest possible key is read by hand.
  if (start === undefined || start.length === 0 || (start.length === 1 && start[0] === 0)) {
    const v = db.getBinary(ZERO_KEY);
    if (v != null && (end === undefined || compare(ZERO_KEY, end) < 0)) yield { key: ZERO_KEY, value: v };
  }
}

export class VersionedStore {
  private latestV = 0n;
  private earliestV = 0n;
  private readonly pruneBatch: number;

  constructor(
    private readonly dbs: VersionedDbs,
    readonly pruning: PruningOptions,
    opts: VersionedStoreOptions = {},
  ) {
    this.pruneBatch = opts.pruneBatch ?? 2048;
    this.reload();
  }

  /** Re-reads the version markers (after a failed write transaction). */
  reload(): void {
    const l = this.dbs.changes.getBinary(META_LATEST);
    const e = this.dbs.changes.getBinary(META_EARLIEST);
    this.latestV = l == null ? 0n : readU64be(l);
    this.earliestV = e == null ? 0n : readU64be(e);
  }

  /** The last committed version; 0 before the first. */
  get latestVersion(): bigint {
    return this.latestV;
  }

  /** The oldest readable version; 0 before the first commit. */
  get earliestVersion(): bigint {
    return this.earliestV;
  }

  /** Whether `version` can be read now. */
  hasVersion(version: bigint): boolean {
    return this.latestV > 0n && version >= this.earliestV && version <= this.latestV;
  }

  /** The latest value: one LMDB get, no history involved. */
  get(key: Bytes): Bytes | undefined {
    return this.dbs.latest.getBinary(key) ?? undefined;
  }

  /**
   * The value of `key` at `version`: a flat get at the latest version, else one range seek in the
   * history (plus a flat get when the key has not changed since). Throws VersionNotFoundError.
   */
  getAt(key: Bytes, version: bigint): Bytes | undefined {
    if (version === this.latestV && version > 0n) return this.get(key);
    if (!this.hasVersion(version)) throw new VersionNotFoundError(version);
    const p = historyPrefix(key);
    const row = this.firstAfter(p, version);
    return row === undefined ? this.get(key) : untag(row);
  }

  /**
   * The key's first history row above `version` (its value at `version`), or undefined: one seek
   * with no end bound (cheaper in lmdb-js), the row's prefix checked instead. No other key's row
   * starts with esc(key) 00 00, because esc() never writes 00 00.
   */
  private firstAfter(prefix: Bytes, version: bigint): Bytes | undefined {
    const row = first(this.dbs.history.getRange({ start: concat(prefix, u64be(version + 1n)), limit: 1 }));
    if (row === undefined || row.key.length !== prefix.length + 8) return undefined;
    for (let i = 0; i < prefix.length; i++) if (row.key[i] !== prefix[i]) return undefined;
    return row.value;
  }

  /**
   * Entries of [start, end) at `version`, in key order (reverse: from the top). At the latest
   * version this is the flat range; below it, the flat range merged with the history keys of the
   * range (at most two seeks per key that has history). Throws VersionNotFoundError up front and
   * if the version is pruned while the iteration runs.
   */
  *iterateAt(version: bigint, start?: Bytes, end?: Bytes, reverse = false): Iterable<KVEntry> {
    if (version === this.latestV && version > 0n) {
      yield* latestRange(this.dbs.latest, start, end, reverse);
      return;
    }
    if (!this.hasVersion(version)) throw new VersionNotFoundError(version);
    const flat = latestRange(this.dbs.latest, start, end, reverse)[Symbol.iterator]();
    const hist = this.historyAt(version, start, end, reverse)[Symbol.iterator]();
    const before = reverse ? (c: number) => c > 0 : (c: number) => c < 0;
    let a = flat.next();
    let b = hist.next();
    while (!a.done || !b.done) {
      if (!this.hasVersion(version)) throw new VersionNotFoundError(version);
      const c = a.done ? 1 : b.done ? -1 : compare(a.value.key, b.value.key);
      // Written as "a comes first" for either direction.
      const aFirst = a.done ? false : b.done ? true : before(c);
      if (aFirst) {
        yield a.value;
        a = flat.next();
        continue;
      }
      // The history decides this key: the flat value (if any) is newer than `version`.
      if (!a.done && c === 0) a = flat.next();
      if (b.value.value !== undefined) yield { key: b.value.key, value: b.value.value };
      b = hist.next();
    }
  }

  /** Keys of [start, end) changed after `version`, each with its value at `version`. */
  private *historyAt(version: bigint, start: Bytes | undefined, end: Bytes | undefined, reverse: boolean): Iterable<{ key: Bytes; value: Bytes | undefined }> {
    const db = this.dbs.history;
    const lo = start === undefined ? undefined : escapeKey(start);
    const hi = end === undefined ? undefined : escapeKey(end);
    const valueAt = (prefix: Bytes, row: { value: Bytes } | undefined, rowHeight: bigint) => {
      if (row !== undefined && rowHeight > version) return { found: true, value: untag(row.value) };
      const r = this.firstAfter(prefix, version);
      return r === undefined ? { found: false, value: undefined } : { found: true, value: untag(r) };
    };
    if (!reverse) {
      let pos = lo;
      for (;;) {
        const row = first(db.getRange({ start: pos, end: hi, limit: 1 }));
        if (row === undefined) return;
        const { key, prefix, height } = decodeHistoryKey(row.key);
        const v = valueAt(prefix, row, height);
        if (v.found) yield { key, value: v.value };
        pos = prefixEnd(prefix);
      }
    }
    let top = hi;
    for (;;) {
      let row: { key: Bytes; value: Bytes } | undefined;
      for (const r of db.getRange({ start: top, end: lo, reverse: true })) {
        // lmdb-js starts a reverse range AT `start`; our bound is exclusive.
        if (top !== undefined && compare(r.key as Bytes, top) >= 0) continue;
        row = { key: r.key as Bytes, value: r.value as Bytes };
        break;
      }
      if (row === undefined) return;
      const { key, prefix } = decodeHistoryKey(row.key);
      // The row found is the key's newest; its value at `version` is its first row above it.
      const v = valueAt(prefix, undefined, 0n);
      if (v.found) yield { key, value: v.value };
      top = prefix;
    }
  }

  /**
   * Commits `version`: for every change whose value differs from the latest one, writes the old
   * value to the history (except at the first version) and the new value to the flat database,
   * then records the keys for pruning, moves the version markers and deletes a bounded batch of
   * dead history rows. Writes with putSync/removeSync: call it inside the environment's write
   * transaction. On abort, call reload().
   */
  commit(version: bigint, changes: Iterable<KVChange>): CommitStats {
    if (version <= this.latestV) throw new Error(`commit of version ${version}, but version ${this.latestV} is committed`);
    const { latest, history } = this.dbs;
    const firstVersion = this.latestV === 0n;
    const changed: Bytes[] = [];
    for (const { key, value } of changes) {
      const old = latest.getBinary(key) ?? undefined;
      const now = value ?? undefined;
      if (equal(old, now)) continue;
      if (!firstVersion) {
        history.putSync(historyKey(key, version), tag(old));
        changed.push(key);
      }
      if (now === undefined) latest.removeSync(key);
      else latest.putSync(key, now);
    }
    for (let i = 0, c = 0; i < changed.length; i += CHUNK_KEYS, c++) {
      this.dbs.changes.putSync(chunkKey(version, c), packChunk(changed.slice(i, i + CHUNK_KEYS)));
    }
    this.latestV = version;
    this.dbs.changes.putSync(META_LATEST, u64be(version));
    let earliest = firstVersion ? version : this.earliestV;
    const upTo = pruneUpTo(this.pruning, version);
    if (upTo + 1n > earliest) earliest = upTo + 1n;
    if (earliest !== this.earliestV) {
      this.earliestV = earliest;
      this.dbs.changes.putSync(META_EARLIEST, u64be(earliest));
    }
    const pruned = this.pruneDead(this.pruneBatch + 2 * changed.length);
    return { changed: changed.length, pruned };
  }

  /**
   * Deletes history rows at heights ≤ earliest (they answer no readable version), whole index
   * chunks at a time, oldest first, until `budget` rows are gone. Returns the rows deleted.
   */
  private pruneDead(budget: number): number {
    const end = u64be(this.earliestV + 1n); // index rows of heights ≤ earliest
    const chunks: { key: Bytes; height: bigint; keys: Bytes[] }[] = [];
    let rows = 0;
    for (const { key, value } of this.dbs.changes.getRange({ end })) {
      const k = key as Bytes;
      const keys = unpackChunk(value as Bytes);
      if (chunks.length > 0 && rows + keys.length > budget) break;
      chunks.push({ key: Uint8Array.from(k), height: readU64be(k.subarray(0, 8)), keys: keys.map((x) => Uint8Array.from(x)) });
      rows += keys.length;
      if (rows >= budget) break;
    }
    for (const c of chunks) {
      for (const k of c.keys) this.dbs.history.removeSync(historyKey(k, c.height));
      this.dbs.changes.removeSync(c.key);
    }
    return rows;
  }
}
