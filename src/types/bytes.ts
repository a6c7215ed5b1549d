/**
 * Byte-array helpers shared across chaind: the one upper-case hex rendering and the one byte
 * equality. Ground floor: imports nothing.
 */

/** Upper-case hex, as CometBFT prints HexBytes (and Go's `strings.ToUpper(hex.EncodeToString(b))`). */
export function hexUpper(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex').toUpperCase();
}

/** bytes.Equal; two absent values are equal, an absent and a present one are not. */
export function bytesEqual(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
