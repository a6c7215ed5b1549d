/**
 * The app hash: cheap per block, a function of the state alone.
 *
 * Scheme (chaind's own, not an upstream one):
 *
 *   element(k, v)   = SHAKE256(u32be(len(k)) || k || v, 2048 bytes) read as 1024 little-endian u16
 *   moduleHash(M)   = Σ element(k, v) over every (k, v) in module M's store, lane-wise mod 2^16
 *                     (an LtHash16 multiset hash: Bellare–Micciancio; Lewi et al. 2019, the
 *                     construction Solana adopted for its accounts hash)
 *   moduleRoot(M)   = SHA-256(the 2048 little-endian bytes of moduleHash(M))
 *   appHash         = RFC 6962 Merkle root (crypto/merkle.ts, SHA-256) over the leaves
 *                     u8(len(storeKey)) || storeKey || moduleRoot, one per registered module,
 *                     sorted by store key
 *
 * Why: the sum is homomorphic, so a block that changes c keys updates its module's hash in O(c)
 * (subtract the old pair's element, add the new one's) no matter how big the module is, modules
 * that did not change keep their root untouched, and nothing but the 2 KiB sum per module needs to
 * be stored. The hash depends only on the set of pairs, not on the order or history of writes, so
 * the same state always hashes the same, after a restart or on another node that reached it by a
 * different path. The u32 length prefix makes (k, v) → input injective. The price is that an
 * LtHash proves nothing about one key: abci_query `prove` needs a different commitment (an IAVL-
 * or JMT-style tree) if it is ever required; the Merkle layer over modules already gives per-module
 * proofs.
 *
 * Module commitments: a module may bring its own 32-byte commitment (AppModule.commitment, e.g. the
 * EVM's state root, whose state lives outside the LtHash-summed store). Its leaf then carries
 *   moduleLeafRoot  = SHA-256(0x01 || moduleRoot || commitment)
 * instead of moduleRoot: combined rather than replaced, so the module's KV store (params, indexes)
 * stays committed too. The 0x01 prefix and the 65-byte input keep a combined leaf from ever equalling
 * a plain moduleRoot of some store. Modules without a commitment keep moduleRoot unchanged, so the
 * app hash of a chain without such modules is what it was before commitments existed.
 */
import { createHash } from 'node:crypto';
import { getCryptoBackend, LTHASH_BYTES } from '../crypto/backend.js';
import { merkleRoot } from '../crypto/merkle.js';
import { concatBytes, utf8, type Bytes } from './bytes.js';

/**
 * A module's multiset hash: 1024 u16 lanes summed mod 2^16, kept as their serialized form, 2048
 * little-endian bytes, which the crypto backend's ltHashMix adds elements into in place (natively
 * where the addon loaded: ~10 µs a step, against ~15-20 µs through node:crypto's SHAKE256 and a
 * JS lane sum).
 */
export class LtHash {
  private readonly sum: Uint8Array;

  constructor(sum: Uint8Array = new Uint8Array(LTHASH_BYTES)) {
    if (sum.length !== LTHASH_BYTES) throw new Error(`LtHash needs ${LTHASH_BYTES} bytes`);
    this.sum = sum;
  }

  static fromBytes(b: Bytes): LtHash {
    if (b.length !== LTHASH_BYTES) throw new Error(`stored module hash must be ${LTHASH_BYTES} bytes, got ${b.length}`);
    return new LtHash(Uint8Array.from(b));
  }

  toBytes(): Bytes {
    return Uint8Array.from(this.sum);
  }

  clone(): LtHash {
    return new LtHash(Uint8Array.from(this.sum));
  }

  add(key: Bytes, value: Bytes): void {
    getCryptoBackend().ltHashMix(this.sum, key, value, false);
  }

  remove(key: Bytes, value: Bytes): void {
    getCryptoBackend().ltHashMix(this.sum, key, value, true);
  }

  /** moduleRoot: SHA-256 of the serialized sum. */
  root(): Bytes {
    return createHash('sha256').update(this.sum).digest();
  }
}

/** A module's leaf root when it brings its own commitment (see above). */
export function moduleLeafRoot(moduleRoot: Bytes, commitment: Bytes): Bytes {
  if (moduleRoot.length !== 32 || commitment.length !== 32) throw new Error('a module root and a module commitment are 32 bytes');
  return createHash('sha256').update(Uint8Array.of(0x01)).update(moduleRoot).update(commitment).digest();
}

/** appHash over (storeKey, moduleRoot) pairs; sorts by store key itself. */
export function appHashFromModuleRoots(roots: ReadonlyMap<string, Bytes>): Bytes {
  const names = [...roots.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const leaves = names.map((name) => {
    const n = utf8(name);
    if (n.length > 255) throw new Error(`store key ${name} is longer than 255 bytes`);
    return concatBytes(Uint8Array.of(n.length), n, roots.get(name)!);
  });
  return merkleRoot(leaves);
}
