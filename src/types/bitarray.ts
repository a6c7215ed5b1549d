/**
 * A fixed-size bit array (cometbft: libs/bits/bit_array.go).
 *
 * Bit i lives in word i>>5 at bit i&31; the uint64 "elems" of the proto form are pairs of those
 * words, so elems()/fromElems() convert losslessly. Bits past `size` are always kept clear
 * (cometbft's Not() leaves them set in the last word; only its IsEmpty can see that).
 *
 * A size-0 array stands for cometbft's nil *BitArray (NewBitArray(0) returns nil): it prints
 * `nil-BitArray` and marshals to JSON null.
 */

export class BitArrayFormatError extends Error {
  readonly code = 'INVALID_BIT_ARRAY';
  constructor(message: string) {
    super(message);
    this.name = 'BitArrayFormatError';
  }
}

export class BitArray {
  readonly size: number;
  private readonly words: Uint32Array;

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 0) size = 0;
    this.size = size;
    this.words = new Uint32Array((size + 31) >>> 5);
  }

  /** NewBitArrayFromFn. */
  static fromFn(size: number, fn: (i: number) => boolean): BitArray {
    const ba = new BitArray(size);
    for (let i = 0; i < ba.size; i++) if (fn(i)) ba.words[i >>> 5]! |= 1 << (i & 31);
    return ba;
  }

  /** Parses the JSON/bits form "xx_x" or the String() form "BA{4:xx_x}"; throws on anything else. */
  static fromString(s: string): BitArray {
    let bits = s;
    const m = /^BA\{(\d+):([_x]*)\}$/.exec(s);
    if (m) {
      bits = m[2]!;
      if (Number(m[1]) !== bits.length) throw new BitArrayFormatError(`bit array string ${s} has a wrong length`);
    } else if (!/^[_x]*$/.test(s)) {
      throw new BitArrayFormatError(`bit array string should match [_x]* but got ${JSON.stringify(s)}`);
    }
    const ba = new BitArray(bits.length);
    for (let i = 0; i < bits.length; i++) if (bits.charCodeAt(i) === 120 /* x */) ba.words[i >>> 5]! |= 1 << (i & 31);
    return ba;
  }

  /** From the proto form (libs/bits BitArray{bits, elems uint64}). */
  static fromElems(size: number, elems: readonly bigint[]): BitArray {
    const ba = new BitArray(size);
    for (let w = 0; w < ba.words.length; w++) {
      const e = elems[w >>> 1];
      if (e === undefined) break;
      ba.words[w] = Number((w & 1 ? e >> 32n : e) & 0xffffffffn);
    }
    ba.clearTail();
    return ba;
  }

  private clearTail(): void {
    const rem = this.size & 31;
    if (rem !== 0) this.words[this.words.length - 1] = this.words[this.words.length - 1]! & ((2 ** rem - 1) >>> 0);
  }

  get(i: number): boolean {
    if (!(i >= 0 && i < this.size)) return false;
    return (this.words[i >>> 5]! & (1 << (i & 31))) !== 0;
  }

  getIndex(i: number): boolean {
    return this.get(i);
  }

  /** SetIndex: false when i is out of range. */
  set(i: number, v = true): boolean {
    if (!(i >= 0 && i < this.size) || !Number.isInteger(i)) return false;
    if (v) this.words[i >>> 5]! |= 1 << (i & 31);
    else this.words[i >>> 5]! &= ~(1 << (i & 31));
    return true;
  }

  setIndex(i: number, v: boolean): boolean {
    return this.set(i, v);
  }

  copy(): BitArray {
    return this.copyBits(this.size);
  }

  private copyBits(size: number): BitArray {
    const c = new BitArray(size);
    c.words.set(this.words.subarray(0, Math.min(this.words.length, c.words.length)));
    c.clearTail();
    return c;
  }

  /** Union; the result has the larger size. */
  or(o: BitArray): BitArray {
    const c = this.copyBits(Math.max(this.size, o.size));
    const n = Math.min(c.words.length, o.words.length);
    for (let i = 0; i < n; i++) c.words[i]! |= o.words[i]!;
    return c;
  }

  /** Intersection; the result has the smaller size. */
  and(o: BitArray): BitArray {
    const c = this.copyBits(Math.min(this.size, o.size));
    for (let i = 0; i < c.words.length; i++) c.words[i]! &= o.words[i]!;
    return c;
  }

  not(): BitArray {
    const c = new BitArray(this.size);
    for (let i = 0; i < c.words.length; i++) c.words[i] = ~this.words[i]!;
    c.clearTail();
    return c;
  }

  /** Bits set here and not in o; the result keeps this size. */
  sub(o: BitArray): BitArray {
    const c = this.copy();
    const n = Math.min(c.words.length, o.words.length);
    for (let i = 0; i < n; i++) c.words[i]! &= ~o.words[i]!;
    c.clearTail();
    return c;
  }

  /** Update: copies o's bits over this array's (sizes may differ). */
  update(o: BitArray): void {
    const n = Math.min(this.words.length, o.words.length);
    for (let i = 0; i < n; i++) this.words[i] = o.words[i]!;
    this.clearTail();
  }

  isEmpty(): boolean {
    for (let i = 0; i < this.words.length; i++) if (this.words[i] !== 0) return false;
    return true;
  }

  /** IsFull; a size-0 (nil) array counts as full, as in cometbft. */
  isFull(): boolean {
    const full = this.size >>> 5;
    for (let i = 0; i < full; i++) if (this.words[i] !== 0xffffffff) return false;
    const rem = this.size & 31;
    if (rem === 0) return true;
    const mask = (2 ** rem - 1) >>> 0;
    return (this.words[full]! & mask) >>> 0 === mask;
  }

  countTrue(): number {
    let count = 0;
    for (let i = 0; i < this.words.length; i++) {
      let v = this.words[i]!;
      v = v - ((v >>> 1) & 0x55555555);
      v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
      count += (((v + (v >>> 4)) & 0xf0f0f0f) * 0x1010101) >>> 24;
    }
    return count;
  }

  trueIndices(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.size; i++) if (this.get(i)) out.push(i);
    return out;
  }

  /** PickRandom: a uniformly chosen set index, or null when none is set. */
  pickRandom(random: () => number = Math.random): number | null {
    const n = this.countTrue();
    if (n === 0) return null;
    let k = Math.floor(random() * n);
    if (k >= n) k = n - 1;
    for (let i = 0; i < this.size; i++) {
      if (this.get(i)) {
        if (k === 0) return i;
        k--;
      }
    }
    return null;
  }

  /** The bits as "x" (set) and "_" (unset). */
  bitsString(): string {
    let s = '';
    for (let i = 0; i < this.size; i++) s += this.get(i) ? 'x' : '_';
    return s;
  }

  /** String(): `BA{4:xx_x}`; `nil-BitArray` for the nil (size 0) array. */
  toString(): string {
    if (this.size === 0) return 'nil-BitArray';
    return `BA{${this.size}:${this.bitsString()}}`;
  }

  /** MarshalJSON: the bits string, or null for the nil (size 0) array. */
  toJSON(): string | null {
    if (this.size === 0) return null;
    return this.bitsString();
  }

  /** Bytes(): bit i in byte i/8 at bit i%8, (size+7)/8 bytes. */
  bytes(): Uint8Array {
    const out = new Uint8Array((this.size + 7) >>> 3);
    for (let i = 0; i < out.length; i++) out[i] = (this.words[i >>> 2]! >>> ((i & 3) * 8)) & 0xff;
    return out;
  }

  /** The uint64 elems of the proto form. */
  elems(): bigint[] {
    const n = (this.size + 63) >>> 6;
    const out = new Array<bigint>(n);
    for (let i = 0; i < n; i++) {
      const lo = BigInt(this.words[2 * i]!);
      const hi = BigInt(this.words[2 * i + 1] ?? 0);
      out[i] = (hi << 32n) | lo;
    }
    return out;
  }

  equals(o: BitArray): boolean {
    if (this.size !== o.size) return false;
    for (let i = 0; i < this.words.length; i++) if (this.words[i] !== o.words[i]) return false;
    return true;
  }
}
