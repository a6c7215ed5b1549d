/**
 * Byte-array helpers shared across chaind: the one upper-case hex rendering, the one byte
 * equality and ordering, and the ASCII fast path of the binary encoders. The lowest room (crypto
 * uses it, so it imports nothing).
 */

/**
 * A byte string as a JS string of code units 0–255 ("latin1"): one char per byte, the cheapest Map
 * key for bytes in V8 (no hashing, no hex or base64 expansion). JS compares strings by UTF-16 code
 * unit, so comparing two such strings is exactly bytewise (LMDB's) order; that lets the caches use
 * Map keys and `<` without a comparator.
 */
export function bytesToKey(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
}

/** Upper-case hex, as CometBFT prints HexBytes (and Go's `strings.ToUpper(hex.EncodeToString(b))`). */
export function hexUpper(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex').toUpperCase();
}

/**
 * `0x` + lower-case hex, as geth's hexutil.Encode. One flat string from node's hex encoder: the
 * `bytesToHex` of @noble/@ethereumjs builds it by appending two characters at a time, a rope of
 * one V8 string node per byte until something flattens it (~3 KB of heap per ERC-20 transfer's
 * events, kept until the block ends).
 */
export function hex0x(b: Uint8Array): string {
  return `0x${Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex')}`;
}

/** bytes.Equal; two absent values are equal, an absent and a present one are not. */
export function bytesEqual(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** bytes.Compare: lexicographic byte order, the order LMDB keeps keys in; a prefix sorts first. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/**
 * Writes `s` at `buf[at…]` when every character is ASCII (then its UTF-8 is its characters) and
 * returns true; returns false at the first other character, having written some of it (the caller
 * encodes the string the general way over the same place). The caller makes the room
 * (`s.length` bytes). Short keys, addresses, type URLs and event attributes are almost all ASCII:
 * written this way they cost no TextEncoder array nor native call.
 */
export function writeAscii(buf: Uint8Array, at: number, s: string): boolean {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return false;
    buf[at + i] = c;
  }
  return true;
}
