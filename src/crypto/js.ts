/**
 * The JS crypto backend: the fallback when native/ is not built, and the reference the native
 * backend is tested against.
 *
 * - keccak256: @noble/hashes v2 (~5 µs per 32-byte input, paulmillr/noble-hashes:README.md; the addon takes 0.3 µs).
 * - sha256: node:crypto (OpenSSL, SHA-NI where the CPU has it).
 * - merkleRoot: written top-down, straight from the definition (cometbft: crypto/merkle/tree.go),
 *   unlike the native level-by-level loop, so the two implementations check each other.
 * - secp256k1: @noble/secp256k1 v3 with `prehash: false`. v3 sha256-hashes the message by
 *   default, which would double-hash Ethereum (keccak) and Cosmos (sha256) digests.
 *   ~480 verifies/s per core against ~24,000/s through libsecp256k1 (paulmillr/noble-secp256k1:README.md).
 * - ed25519: node:crypto with a cached KeyObject per public key (src/crypto/ed25519.ts): ~12,500
 *   verifies/s, 55x tweetnacl and 13x @noble/ed25519 (paulmillr/noble-secp256k1:README.md). Shared by both backends.
 */
import { createHash } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3.js';
import * as secp from '@noble/secp256k1';
import type { CryptoBackend } from './backend.js';
import { argError, bytesArg, exactArg, indexArg, outArg } from './args.js';
import { ed25519Verify as ed25519VerifyCached } from './ed25519.js';

const EMPTY_SHA256 = createHash('sha256').digest();
const LEAF_PREFIX = Uint8Array.of(0);
const INNER_PREFIX = Uint8Array.of(1);

function sha256(data: Uint8Array): Uint8Array {
  return createHash('sha256').update(data).digest();
}

/** Largest power of two strictly less than n, for n >= 2 (cometbft getSplitPoint). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function subtreeRoot(items: readonly Uint8Array[], lo: number, hi: number): Uint8Array {
  if (hi - lo === 1) return createHash('sha256').update(LEAF_PREFIX).update(items[lo]!).digest();
  const mid = lo + splitPoint(hi - lo);
  const left = subtreeRoot(items, lo, mid);
  const right = subtreeRoot(items, mid, hi);
  return createHash('sha256').update(INNER_PREFIX).update(left).update(right).digest();
}

function merkleRoot(items: readonly Uint8Array[]): Uint8Array {
  if (!Array.isArray(items)) throw argError('merkleRoot', 'items must be an array of Uint8Array');
  for (let i = 0; i < items.length; i++) {
    if (!(items[i] instanceof Uint8Array)) throw argError('merkleRoot', `items[${i}] must be a Uint8Array`);
  }
  if (items.length === 0) return Uint8Array.from(EMPTY_SHA256);
  return subtreeRoot(items, 0, items.length);
}

/**
 * SEC1 prefix check. @noble refuses hybrid 0x06/0x07 keys on its own; libsecp256k1 would parse
 * them, so both backends check here to agree on every input.
 */
export function secp256k1PubKeyWellFormed(pub: Uint8Array): boolean {
  return pub.length === 33 ? pub[0] === 0x02 || pub[0] === 0x03 : pub.length === 65 && pub[0] === 0x04;
}

function secp256k1Verify(digest: Uint8Array, sig: Uint8Array, pubKey: Uint8Array): boolean {
  const fn = 'secp256k1Verify';
  exactArg(fn, 'digest', digest, 32);
  exactArg(fn, 'sig', sig, 64);
  const pub = bytesArg(fn, 'pubkey', pubKey);
  if (pub.length !== 33 && pub.length !== 65) throw argError(fn, `pubkey must be 33 or 65 bytes, got ${pub.length}`);
  if (!secp256k1PubKeyWellFormed(pub)) return false;
  try {
    return secp.verify(sig, digest, pub, { prehash: false, lowS: true });
  } catch {
    // noble throws for a pubkey that is not on the curve; that is an invalid signature here.
    return false;
  }
}

function secp256k1Decompress(pubKey: Uint8Array): Uint8Array | null {
  const pub = bytesArg('secp256k1Decompress', 'pubkey', pubKey);
  if (pub.length !== 33 && pub.length !== 65) throw argError('secp256k1Decompress', `pubkey must be 33 or 65 bytes, got ${pub.length}`);
  if (!secp256k1PubKeyWellFormed(pub)) return null;
  try {
    return secp.Point.fromBytes(pub).toBytes(false);
  } catch {
    // Not on the curve (x has no square root, or y does not match for an uncompressed key).
    return null;
  }
}

function secp256k1Recover(digest: Uint8Array, sig: Uint8Array, recid: number): Uint8Array | null {
  const fn = 'secp256k1Recover';
  exactArg(fn, 'digest', digest, 32);
  exactArg(fn, 'sig', sig, 64);
  const r = indexArg(fn, 'recid', recid);
  if (r > 3) throw argError(fn, `recid must be 0..3, got ${r}`);
  // noble's "recovered" format puts the recovery id first: recid || r || s.
  const rsig = new Uint8Array(65);
  rsig[0] = r;
  rsig.set(sig, 1);
  try {
    return secp.recoverPublicKey(rsig, digest, { prehash: false, isCompressed: false });
  } catch {
    // r or s zero or >= n, x not on the curve for this recid: no key, as libsecp256k1 says 0.
    return null;
  }
}

/** ed25519 with the same argument checks as every other backend method. */
export function ed25519VerifyChecked(pubKey: Uint8Array, msg: Uint8Array, sig: Uint8Array): boolean {
  const fn = 'ed25519Verify';
  exactArg(fn, 'pubkey', pubKey, 32);
  bytesArg(fn, 'msg', msg);
  exactArg(fn, 'sig', sig, 64);
  return ed25519VerifyCached(pubKey, msg, sig);
}

/** Lanes of the app hash's LtHash16, and their bytes (the `lanes` argument of ltHashMix). */
const LTHASH_LANES = 1024;
export const LTHASH_BYTES = 2 * LTHASH_LANES;
/** Whether this host stores a u16 little-endian. */
const HOST_LE = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/**
 * ltHashMix through node:crypto's SHAKE256 (OpenSSL); the lanes as u16 views on a little-endian
 * host (Uint16Array arithmetic wraps mod 2^16), byte by byte otherwise.
 */
export function ltHashMixChecked(lanes: Uint8Array, key: Uint8Array, value: Uint8Array, subtract: boolean): void {
  const fn = 'ltHashMix';
  exactArg(fn, 'lanes', lanes, LTHASH_BYTES);
  bytesArg(fn, 'key', key);
  bytesArg(fn, 'value', value);
  const n = key.length;
  const len = Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
  const e = createHash('shake256', { outputLength: LTHASH_BYTES }).update(len).update(key).update(value).digest();
  if (HOST_LE && (lanes.byteOffset & 1) === 0 && (e.byteOffset & 1) === 0) {
    // Both as u16 lanes where they lie (this host's order is the lanes' little-endian one).
    const l = new Uint16Array(lanes.buffer, lanes.byteOffset, LTHASH_LANES);
    const d = new Uint16Array(e.buffer, e.byteOffset, LTHASH_LANES);
    if (subtract) for (let i = 0; i < LTHASH_LANES; i++) l[i] = l[i]! - d[i]!;
    else for (let i = 0; i < LTHASH_LANES; i++) l[i] = l[i]! + d[i]!;
    return;
  }
  for (let i = 0; i < LTHASH_BYTES; i += 2) {
    const a = lanes[i]! | (lanes[i + 1]! << 8);
    const b = e[i]! | (e[i + 1]! << 8);
    const r = (subtract ? a - b : a + b) & 0xffff;
    lanes[i] = r & 0xff;
    lanes[i + 1] = r >>> 8;
  }
}

export function createJsBackend(): CryptoBackend {
  return {
    name: 'js',
    keccak256: (d) => keccak_256(bytesArg('keccak256', 'data', d)),
    keccak256Into: (d, out, off) => {
      bytesArg('keccak256Into', 'data', d);
      const o = outArg('keccak256Into', out, off);
      o.out.set(keccak_256(d), o.offset);
    },
    keccak256Batch: (concat, itemLen, out) => {
      const fn = 'keccak256Batch';
      const c = bytesArg(fn, 'concat', concat);
      const item = indexArg(fn, 'itemLen', itemLen);
      const o = bytesArg(fn, 'out', out);
      if (item === 0) throw argError(fn, 'itemLen must be at least 1');
      if (c.length % item !== 0) throw argError(fn, `concat length ${c.length} is not a multiple of itemLen ${item}`);
      const n = c.length / item;
      if (n * 32 > o.length) throw argError(fn, `out too small: ${n} items need ${n * 32} bytes, got ${o.length}`);
      for (let i = 0; i < n; i++) o.set(keccak_256(c.subarray(i * item, (i + 1) * item)), i * 32);
      return n;
    },
    keccak256Spans: (concat, ends, out) => {
      const fn = 'keccak256Spans';
      const c = bytesArg(fn, 'concat', concat);
      if (!(ends instanceof Uint32Array)) throw argError(fn, 'ends must be a Uint32Array');
      const o = bytesArg(fn, 'out', out);
      const n = ends.length;
      if (n * 32 > o.length) throw argError(fn, `out too small: ${n} items need ${n * 32} bytes, got ${o.length}`);
      let prev = 0;
      for (let i = 0; i < n; i++) {
        const e = ends[i]!;
        if (e < prev || e > c.length) throw argError(fn, `ends[${i}] = ${e} is out of order or past concat length ${c.length}`);
        prev = e;
      }
      let start = 0;
      for (let i = 0; i < n; i++) {
        const e = ends[i]!;
        o.set(keccak_256(c.subarray(start, e)), i * 32);
        start = e;
      }
      return n;
    },
    sha256: (d) => sha256(bytesArg('sha256', 'data', d)),
    sha256Into: (d, out, off) => {
      bytesArg('sha256Into', 'data', d);
      const o = outArg('sha256Into', out, off);
      o.out.set(sha256(d), o.offset);
    },
    merkleRoot,
    secp256k1Verify,
    secp256k1Recover,
    secp256k1Decompress,
    ed25519Verify: ed25519VerifyChecked,
    ltHashMix: ltHashMixChecked,
  };
}
