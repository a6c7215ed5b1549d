/**
 * Hashes used by CometBFT types (cometbft: crypto/tmhash/hash.go, crypto/ed25519/ed25519.go,
 * crypto/secp256k1/secp256k1.go). tmhash is plain SHA-256; "truncated" tmhash keeps 20 bytes.
 */
import { createHash } from 'node:crypto';

export type PubKeyType = 'ed25519' | 'secp256k1';

/** A public key as CometBFT carries it: its algorithm and its bytes (src/types re-exports it). */
export interface PubKey {
  type: PubKeyType;
  bytes: Uint8Array;
}

/** A public or private key of the wrong type or size. */
export class KeyError extends Error {
  readonly code = 'INVALID_KEY';
  constructor(message: string) {
    super(message);
    this.name = 'KeyError';
  }
}

/** tmhash.Size. */
export const HASH_SIZE = 32;
/** tmhash.TruncatedSize = crypto.AddressSize. */
export const ADDRESS_SIZE = 20;

export function sha256(data: Uint8Array): Uint8Array {
  return createHash('sha256').update(data).digest();
}

/** tmhash.Sum. */
export const tmhash = sha256;

/** tmhash.SumTruncated = crypto.AddressHash: the first 20 bytes of SHA-256. */
export function tmhashTruncated(data: Uint8Array): Uint8Array {
  return sha256(data).subarray(0, ADDRESS_SIZE);
}

export function ripemd160(data: Uint8Array): Uint8Array {
  return createHash('ripemd160').update(data).digest();
}

/**
 * Validator / node address of a public key.
 * ed25519: first 20 bytes of sha256(pub32) (cometbft: crypto/ed25519/ed25519.go PubKey.Address).
 * secp256k1: ripemd160(sha256(compressed33)) (cometbft: crypto/secp256k1/secp256k1.go), the
 * Bitcoin-style address.
 */
export function addressFromPubKey(pk: PubKey): Uint8Array {
  if (pk.type === 'ed25519') {
    if (pk.bytes.length !== 32) throw new KeyError(`ed25519 public key must be 32 bytes, got ${pk.bytes.length}`);
    return tmhashTruncated(pk.bytes);
  }
  if (pk.type === 'secp256k1') {
    if (pk.bytes.length !== 33) throw new KeyError(`secp256k1 public key must be 33 bytes, got ${pk.bytes.length}`);
    return ripemd160(sha256(pk.bytes));
  }
  throw new KeyError(`unsupported public key type ${(pk as PubKey).type}`);
}
