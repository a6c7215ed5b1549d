/**
 * Key encodings for the LMDB databases. Heights are 8-byte big-endian so that LMDB's byte order
 * is numeric order and range scans by height are seeks (STYLE.md item 6).
 */

export function heightKey(height: bigint): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeBigUInt64BE(height);
  return b;
}

export function strKey(s: string): Buffer {
  return Buffer.from(s, 'utf8');
}
