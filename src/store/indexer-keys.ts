/**
 * Key layout of the `tx_index` and `block_index` databases (written and searched by src/indexer/indexer.ts), and the
 * order-preserving number encoding that lets range conditions seek.
 *
 * tx_index (T = height(8 BE) index(4 BE), 12 bytes):
 *   0x01 T                              → tx hash (32) + indexed attributes (indexer-codec.ts)
 *   0x02 tag 0x00 value 0x00 T          → ''   one per distinct (tag, value) of a tx
 *   0x03 tag 0x00 num(value) T          → ''   the same, for values that parse as numbers
 *   0x05 height(8)                      → u64 BE: txs indexed at heights ≤ this one
 *   0x07 T                              → ''   position whose tx was re-indexed elsewhere
 * block_index (T = height(8 BE)):
 *   0x01 T                              → indexed FinalizeBlock attributes
 *   0x02 / 0x03 as above with the 8-byte tail, 0x05 as above
 *
 * Tags never contain 0x00 (an attribute whose composite key does is skipped: no query can name
 * it), so the first 0x00 ends the tag; the fixed-width tail ends the value. Strings are UTF-8,
 * which never contains 0xFF, so a value too long for LMDB's 1978-byte key limit (or containing
 * 0x00) is stored as 0xFF + sha256(value): equality still seeks, CONTAINS checks such rows
 * against the position row.
 */
import { createHash } from 'node:crypto';

export const P_POS = 0x01;
export const P_STR = 0x02;
export const P_NUM = 0x03;
export const P_CUM = 0x05;
export const P_DEL = 0x07;

/** lmdb-js default maxKeySize. */
export const MAX_KEY = 1978;
export const HASHED_VALUE = 0xff;

const MAX_U64 = (1n << 64n) - 1n;

// ---------------------------------------------------------------------------------------------
// Numbers as the kv indexer reads them (cometbft: state/txindex/kv/kv.go matchRange):
// big.Int.SetString(v, 10), else big.ParseFloat(v, 10, 125, …). Accepted: an optional sign,
// digits with an optional point (".5" and "5." too), an optional e/E exponent, and ±Inf/inf.
// Comparison here is exact (CometBFT rounds decimals to 125 bits; only >37-digit values differ).

/** Sign classes in sort order. */
export const enum NumClass {
  NegInf = 1,
  Neg = 2,
  Zero = 3,
  Pos = 4,
  PosInf = 5,
}

/** ±0.digits × 10^exp, digits without leading or trailing zeros. */
export interface NumVal {
  readonly cls: NumClass;
  readonly exp: number;
  readonly digits: string;
}

const ZERO: NumVal = { cls: NumClass.Zero, exp: 0, digits: '' };
/** Exponents are kept well inside an int32 so the biased 4-byte encoding cannot overflow. */
const MAX_EXP = 1 << 30;

/** The characters a number can start with in NUM_RE (a digit, a sign, the point, "e"/"E", "i"/"I" of inf). */
const NUM_FIRST: boolean[] = Array.from({ length: 128 }, (_, c) => (c >= 48 && c <= 57) || '+-.eEiI'.includes(String.fromCharCode(c)));
const NUM_RE = /^([+-]?)(?:(inf|Inf)|(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,9}))?)$/;

/** Normalizes sign, integer digits, fraction digits and a decimal exponent. */
export function makeNum(neg: boolean, int: string, frac: string, exp10: number): NumVal | undefined {
  let all = int + frac;
  let point = int.length + exp10;
  let k = 0;
  while (k < all.length && all.charCodeAt(k) === 48) k++;
  all = all.slice(k);
  point -= k;
  let e = all.length;
  while (e > 0 && all.charCodeAt(e - 1) === 48) e--;
  all = all.slice(0, e);
  if (all === '') return ZERO;
  if (point > MAX_EXP || point < -MAX_EXP) return undefined;
  return { cls: neg ? NumClass.Neg : NumClass.Pos, exp: point, digits: all };
}

/** Parses an attribute value as the kv indexer does; undefined when it is not a number. */
export function parseIndexNumber(s: string): NumVal | undefined {
  if (s.length === 0 || s.length > 1200 || !NUM_FIRST[s.charCodeAt(0)]) return undefined;
  const m = NUM_RE.exec(s);
  if (!m) return undefined;
  const neg = m[1] === '-';
  if (m[2]) return { cls: neg ? NumClass.NegInf : NumClass.PosInf, exp: 0, digits: '' };
  const int = m[3] ?? '';
  const frac = m[4] ?? '';
  if (int === '' && frac === '') return undefined;
  return makeNum(neg, int, frac, m[5] ? Number(m[5]) : 0);
}

/** Exact order of two numbers. */
export function compareNum(a: NumVal, b: NumVal): number {
  if (a.cls !== b.cls) return a.cls < b.cls ? -1 : 1;
  if (a.cls !== NumClass.Pos && a.cls !== NumClass.Neg) return 0;
  let c = 0;
  if (a.exp !== b.exp) c = a.exp < b.exp ? -1 : 1;
  else if (a.digits !== b.digits) c = a.digits < b.digits ? -1 : 1;
  return a.cls === NumClass.Neg ? -c : c;
}

/**
 * Order-preserving, self-delimiting bytes for a number: byte order equals numeric order, and no
 * encoding is a prefix of another, so the key tail after it never changes the order.
 *   class(1) [exp+2^31 (4, BE) digits(ASCII) 0x00]   for positives
 *   class(1) [complement of the above, ending 0xFF]  for negatives
 */
export function encodeNum(n: NumVal): Buffer {
  const b = Buffer.allocUnsafe(encodedNumLength(n));
  writeNum(b, 0, n);
  return b;
}

function encodedNumLength(n: NumVal): number {
  return n.cls !== NumClass.Pos && n.cls !== NumClass.Neg ? 1 : 1 + 4 + n.digits.length + 1;
}

/** Writes encodeNum(n) at `at` (room checked by the caller); returns the offset after it. */
function writeNum(b: Buffer, at: number, n: NumVal): number {
  b[at] = n.cls;
  if (n.cls !== NumClass.Pos && n.cls !== NumClass.Neg) return at + 1;
  const len = n.digits.length;
  b.writeUInt32BE(n.exp + 0x80000000, at + 1);
  b.write(n.digits, at + 5, 'latin1');
  b[at + 5 + len] = 0;
  const end = at + 6 + len;
  if (n.cls === NumClass.Neg) for (let i = at + 1; i < end; i++) b[i] = 0xff - b[i]!;
  return end;
}

/** floor() of a number, for height bounds; ±Inf and huge exponents map past the u64 range. */
export function numFloor(n: NumVal): bigint {
  const far = MAX_U64 + 1n;
  switch (n.cls) {
    case NumClass.Zero:
      return 0n;
    case NumClass.NegInf:
      return -far;
    case NumClass.PosInf:
      return far;
  }
  if (n.exp > 40) return n.cls === NumClass.Pos ? far : -far;
  const intPart = n.exp <= 0 ? 0n : BigInt(n.digits.slice(0, n.exp).padEnd(n.exp, '0'));
  const hasFrac = n.digits.length > Math.max(n.exp, 0);
  return n.cls === NumClass.Pos ? intPart : -(intPart + (hasFrac ? 1n : 0n));
}

/** ceil() of a number (see numFloor). */
export function numCeil(n: NumVal): bigint {
  const f = numFloor(n);
  return isInteger(n) ? f : f + 1n;
}

export function isInteger(n: NumVal): boolean {
  if (n.cls === NumClass.Zero) return true;
  if (n.cls !== NumClass.Pos && n.cls !== NumClass.Neg) return false;
  return n.digits.length <= n.exp;
}

// ---------------------------------------------------------------------------------------------
// Keys

export function u64(h: bigint): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeBigUInt64BE(h < 0n ? 0n : h > MAX_U64 ? MAX_U64 : h);
  return b;
}

/** Key of prefix p and height h; for h past 2^64-1, the first key after every p-height key. */
export function heightBound(p: number, h: bigint): Buffer {
  if (h > MAX_U64) return Buffer.from([p + 1]);
  const b = Buffer.allocUnsafe(9);
  b[0] = p;
  b.writeBigUInt64BE(h < 0n ? 0n : h, 1);
  return b;
}

export function posKey(p: number, tail: Uint8Array): Buffer {
  const b = Buffer.allocUnsafe(1 + tail.length);
  b[0] = p;
  b.set(tail, 1);
  return b;
}

/** The position tail of a tx: height(8) index(4). */
export function txTail(height: bigint, index: number): Buffer {
  const b = Buffer.allocUnsafe(12);
  b.writeBigUInt64BE(height, 0);
  b.writeUInt32BE(index, 8);
  return b;
}

export function blockTail(height: bigint): Buffer {
  return u64(height);
}

/** `p tag 0x00`: the start of every row of one tag. */
export function tagPrefix(p: number, tag: string): Buffer {
  const t = Buffer.from(tag, 'utf8');
  const b = Buffer.allocUnsafe(t.length + 2);
  b[0] = p;
  t.copy(b, 1);
  b[t.length + 1] = 0;
  return b;
}

/** Whether a value of `valueLen` UTF-8 bytes goes into a 0x02 row as it is (`p tag 0x00 value 0x00 tail`). */
function rawValueFits(tagLen: number, valueLen: number, tailLen: number): boolean {
  return 1 + tagLen + 1 + valueLen + 1 + tailLen <= MAX_KEY;
}

/** The value part of a 0x02 row: the UTF-8 value, or 0xFF + sha256 when the key would be too long. */
export function valuePart(tagLen: number, value: string, tailLen: number): Buffer {
  const v = Buffer.from(value, 'utf8');
  // A value containing 0x00 is hashed too: raw value parts never contain the separator, so no
  // (tag, value) prefix is a prefix of another value's rows.
  if (rawValueFits(tagLen, v.length, tailLen) && !v.includes(0)) return v;
  const h = createHash('sha256').update(v).digest();
  const b = Buffer.allocUnsafe(33);
  b[0] = HASHED_VALUE;
  h.copy(b, 1);
  return b;
}

/** Whether a tag leaves room for a hashed value and the tail. */
export function tagFits(tag: string, tailLen: number): boolean {
  return Buffer.byteLength(tag, 'utf8') + 2 + 33 + 1 + tailLen <= MAX_KEY && !tag.includes('\0');
}

/** `0x02 tag 0x00 value 0x00`: the rows of one (tag, value), followed by the tail. */
export function strPrefix(tag: string, value: string, tailLen: number): Buffer {
  const t = Buffer.from(tag, 'utf8');
  const v = valuePart(t.length, value, tailLen);
  const b = Buffer.allocUnsafe(1 + t.length + 1 + v.length + 1);
  b[0] = P_STR;
  t.copy(b, 1);
  b[1 + t.length] = 0;
  v.copy(b, 2 + t.length);
  b[b.length - 1] = 0;
  return b;
}

/** `0x03 tag 0x00 num`, followed by the tail. */
export function numPrefix(tag: string, n: NumVal): Buffer {
  return Buffer.concat([tagPrefix(P_NUM, tag), encodeNum(n)]);
}

/**
 * The 0x02 and 0x03 row keys of one position, built in one reused buffer: byte for byte
 * `concat(strPrefix(tag, value, tail.length), tail)` and `concat(numPrefix(tag, n), tail)`, without
 * their five short-lived buffers a row. A key returned is a view of that buffer, valid until the
 * next call: for a caller that hands it at once to a synchronous write, which copies it (lmdb-js
 * copies keys into its write instructions).
 */
export class RowKeys {
  private readonly buf = Buffer.allocUnsafe(MAX_KEY);
  /** Bytes of the tag (after the prefix byte) written by the last call, and which tag and tail length it was for. */
  private tag = '';
  private tagLen = -1;
  private tailLen = -1;

  /** Writes `p tag 0x00`; -1 when the tag would not leave room for a hashed value and the tail. */
  private head(p: number, tag: string, tailLen: number): number {
    const b = this.buf;
    b[0] = p;
    if (tag !== this.tag || tailLen !== this.tailLen || this.tagLen < 0) {
      if (!tagFits(tag, tailLen)) return -1;
      this.tag = tag;
      this.tailLen = tailLen;
      this.tagLen = b.write(tag, 1, 'utf8');
    }
    b[1 + this.tagLen] = 0;
    return 2 + this.tagLen;
  }

  /** `0x02 tag 0x00 value 0x00 tail`, or undefined for a tag no row can hold (see tagFits). */
  str(tag: string, value: string, tail: Uint8Array): Buffer | undefined {
    const b = this.buf;
    let at = this.head(P_STR, tag, tail.length);
    if (at < 0) return undefined;
    // Raw value when it fits and has no 0x00 (UTF-8 has that byte only for U+0000): as valuePart.
    // At most 3 UTF-8 bytes a UTF-16 unit: a value short enough fits without counting its bytes.
    const tagLen = at - 2;
    const fits = rawValueFits(tagLen, value.length * 3, tail.length) || rawValueFits(tagLen, Buffer.byteLength(value, 'utf8'), tail.length);
    if (fits && !value.includes('\0')) {
      at += b.write(value, at, 'utf8');
    } else {
      b[at] = HASHED_VALUE;
      createHash('sha256').update(value, 'utf8').digest().copy(b, at + 1);
      at += 33;
    }
    b[at++] = 0;
    b.set(tail, at);
    return b.subarray(0, at + tail.length);
  }

  /** `0x03 tag 0x00 num tail`, or undefined when it would pass LMDB's key limit (no row then). */
  num(tag: string, n: NumVal, tail: Uint8Array): Buffer | undefined {
    const at = this.head(P_NUM, tag, tail.length);
    if (at < 0 || at + encodedNumLength(n) + tail.length > MAX_KEY) return undefined;
    const end = writeNum(this.buf, at, n);
    this.buf.set(tail, end);
    return this.buf.subarray(0, end + tail.length);
  }
}

export function concat(a: Uint8Array, b: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** The key just after every key starting with `prefix` (prefix never ends in 0xFF here). */
export function prefixEnd(prefix: Uint8Array): Buffer {
  const b = Buffer.from(prefix);
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i]! < 0xff) {
      b[i]!++;
      return b.subarray(0, i + 1);
    }
  }
  return Buffer.from([0xff, 0xff]);
}
