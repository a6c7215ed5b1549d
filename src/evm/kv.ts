/**
 * The tiny key/value surface the EVM core stores everything through (flat state and trie nodes).
 *
 * Four operations, synchronous, binary keys and values: that is all the flat state and the trie
 * node store need, and it is small enough to put later on chaind's versioned store (src/store)
 * without touching the EVM code. Two implementations live here: `MemoryKV` (tests, benches, the
 * reference side of comparisons) and `LmdbKV` over a plain lmdb-js database handle.
 *
 * Writes through `LmdbKV` are plain `db.put`/`db.remove`: the caller runs them inside its block's
 * `transactionSync` so that flat state, trie nodes and the block land in one LMDB transaction.
 */
import type { Database } from 'lmdb';
import { bytesToKey } from '../crypto/bytes.js';

export interface KVStore {
  get(key: Uint8Array): Uint8Array | undefined;
  put(key: Uint8Array, value: Uint8Array): void;
  del(key: Uint8Array): void;
  /** Every entry whose key starts with `prefix`, in ascending key order. */
  range(prefix: Uint8Array): Iterable<[Uint8Array, Uint8Array]>;
}

/** The inverse of bytesToKey (crypto/bytes.ts): a fresh Uint8Array (not a Buffer). */
export function keyBytes(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s, 'latin1'));
}

/**
 * Trie nodes read from `base`, with writes kept in memory: a trie commit whose new nodes must not
 * reach the store (debug tracing's roots over a replayed block). A trie's node store is never
 * ranged, and nodes are never deleted.
 */
export function overlayKV(base: Pick<KVStore, 'get'>): KVStore {
  const written = new Map<string, Uint8Array>();
  return {
    get: (k) => written.get(bytesToKey(k)) ?? base.get(k),
    put: (k, v) => void written.set(bytesToKey(k), v),
    del: () => {},
    range: () => [],
  };
}

/** An in-memory KVStore (a Map with latin1-string keys; range sorts, so it is for tests). */
export class MemoryKV implements KVStore {
  readonly map = new Map<string, Uint8Array>();

  get(key: Uint8Array): Uint8Array | undefined {
    return this.map.get(bytesToKey(key));
  }
  put(key: Uint8Array, value: Uint8Array): void {
    this.map.set(bytesToKey(key), value);
  }
  del(key: Uint8Array): void {
    this.map.delete(bytesToKey(key));
  }
  *range(prefix: Uint8Array): Iterable<[Uint8Array, Uint8Array]> {
    const p = bytesToKey(prefix);
    const keys = [...this.map.keys()].filter((k) => k.startsWith(p)).sort();
    for (const k of keys) yield [keyBytes(k), this.map.get(k)!];
  }
  get size(): number {
    return this.map.size;
  }
}

/** One past the last key with this prefix (the exclusive end of a prefix range). */
export function prefixEnd(prefix: Uint8Array): Uint8Array | undefined {
  const end = Uint8Array.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]! += 1;
      return end.subarray(0, i + 1);
    }
  }
  return undefined;
}

/**
 * A KVStore over an lmdb-js database opened by the caller with `keyEncoding: 'binary'` and
 * `encoding: 'binary'` (values come back as Buffers, keys are compared bytewise).
 */
export class LmdbKV implements KVStore {
  constructor(readonly db: Database<Buffer | Uint8Array, Uint8Array>) {}

  get(key: Uint8Array): Uint8Array | undefined {
    const v = this.db.get(key) as Uint8Array | undefined;
    return v ?? undefined;
  }
  put(key: Uint8Array, value: Uint8Array): void {
    void this.db.put(key, value);
  }
  del(key: Uint8Array): void {
    void this.db.remove(key);
  }
  *range(prefix: Uint8Array): Iterable<[Uint8Array, Uint8Array]> {
    const end = prefixEnd(prefix);
    const it = this.db.getRange(end ? { start: prefix, end } : { start: prefix });
    for (const { key, value } of it) yield [key as Uint8Array, value as Uint8Array];
  }
}
