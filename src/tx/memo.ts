/**
 * A bounded memo: a Map used as an LRU list (a hit moves the entry to the back, an insert past
 * the capacity drops the front). O(1) per operation; for caches of pure functions of their key
 * (key decoding, verified signatures), where a miss only costs the recomputation.
 */
export class LruMemo<K, V> {
  private readonly map = new Map<K, V>();
  /** Hits and misses since creation (tests and metrics). */
  readonly stats = { hits: 0, misses: 0, evictions: 0 };

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`memo capacity must be a positive integer, got ${capacity}`);
  }

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v === undefined) {
      this.stats.misses++;
      return undefined;
    }
    this.stats.hits++;
    // Most recently used goes to the back.
    this.map.delete(key);
    this.map.set(key, v);
    return v;
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): void {
    if (this.map.has(key)) this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) {
      // The front is the least recently used.
      const oldest = this.map.keys().next().value as K;
      this.map.delete(oldest);
      this.stats.evictions++;
    }
  }

  clear(): void {
    this.map.clear();
  }
}
