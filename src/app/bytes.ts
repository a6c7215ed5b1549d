/** Small byte helpers shared by the app stores and modules. */
import { bytesEqual, bytesToKey, compareBytes } from '../crypto/bytes.js';

export type Bytes = Uint8Array;

export const EMPTY_BYTES: Bytes = new Uint8Array(0);

export { bytesToKey };

export function keyToBytes(s: string): Bytes {
  return Buffer.from(s, 'latin1');
}

export function concatBytes(...parts: Bytes[]): Bytes {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export { bytesEqual };

/** Bytewise comparison, as LMDB orders keys. */
export { compareBytes };

/**
 * The smallest key greater than every key that starts with `prefix` (cosmos-sdk:
 * store/types/utils.go PrefixEndBytes), or undefined when there is none (all 0xff).
 */
export function prefixEnd(prefix: Bytes): Bytes | undefined {
  const end = Uint8Array.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]!++;
      return end.subarray(0, i + 1);
    }
  }
  return undefined;
}

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

export function utf8(s: string): Bytes {
  return utf8Encoder.encode(s);
}

/** Strict UTF-8 decoding: invalid sequences throw instead of becoming U+FFFD. */
export function fromUtf8(b: Bytes): string {
  return utf8Decoder.decode(b);
}

export function u64be(n: bigint): Bytes {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, n);
  return out;
}

export function readU64be(b: Bytes): bigint {
  if (b.length !== 8) throw new Error(`expected 8 bytes, got ${b.length}`);
  return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0);
}

export function toHex(b: Bytes): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}
