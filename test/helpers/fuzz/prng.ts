/**
 * A small seeded PRNG (mulberry32) for the fuzzer. Every case gets its own generator, seeded from
 * (run seed, surface name, case index), so one case reproduces alone from those three values,
 * whatever the concurrency or the cases that ran before it.
 */

/** 32-bit FNV-1a of a string: mixes the surface name into a case seed. */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }

  /** The generator for case `index` of `surface` in a run seeded with `seed`. */
  static forCase(seed: number, surface: string, index: number): Rng {
    // splitmix-style mixing so neighbouring indexes give unrelated streams.
    let x = (seed ^ fnv1a(surface)) >>> 0;
    x = (x + Math.imul(index + 1, 0x9e3779b9)) >>> 0;
    x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
    x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
    return new Rng((x ^ (x >>> 16)) >>> 0);
  }

  /** mulberry32: a uint32. */
  u32(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** [0, 1). */
  float(): number {
    return this.u32() / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return n <= 0 ? 0 : Math.floor(this.float() * n);
  }

  /** An integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }

  /** Picks by weight: `[[weight, value], …]`. */
  weighted<T>(xs: ReadonlyArray<readonly [number, T]>): T {
    let total = 0;
    for (const [w] of xs) total += w;
    let r = this.float() * total;
    for (const [w, v] of xs) {
      r -= w;
      if (r < 0) return v;
    }
    return xs[xs.length - 1]![1];
  }

  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = this.u32() & 0xff;
    return b;
  }

  /** A length skewed small: mostly < 16, sometimes up to `max`. */
  smallLen(max = 4096): number {
    return this.chance(0.8) ? this.int(16) : this.int(max);
  }
}

/** A seeded [0, 1) generator as a plain function (mulberry32, the same stream as Rng.float()). */
export function seededRandom(seed: number): () => number {
  const r = new Rng(seed);
  return () => r.float();
}
