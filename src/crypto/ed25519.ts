/**
 * Ed25519 keys and signatures on node:crypto (OpenSSL), which verifies far faster than a pure-JS
 * implementation. Key formats follow cometbft crypto/ed25519/ed25519.go: the private key is the
 * 64-byte seed||pub, the public key is 32 raw bytes, the address is sha256(pub)[:20].
 *
 * Verification note: cometbft verifies with ZIP-215 rules (curve25519-voi); OpenSSL follows
 * RFC 8032 strictly. Both accept every signature produced by a standard signer; they can differ
 * only on crafted edge cases (non-canonical points, small-order keys).
 */
import { createPrivateKey, createPublicKey, randomBytes, sign as cryptoSign, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { KeyError, sha256, tmhashTruncated } from './hash.js';
import { bytesToKey } from './bytes.js';

export const ED25519_PUBKEY_SIZE = 32;
export const ED25519_PRIVKEY_SIZE = 64;
export const ED25519_SIGNATURE_SIZE = 64;
export const ED25519_SEED_SIZE = 32;

// DER prefixes for raw Ed25519 keys (RFC 8410): SubjectPublicKeyInfo and PKCS#8 PrivateKeyInfo.
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

function publicKeyObject(pub: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, pub]), format: 'der', type: 'spki' });
}

export class Ed25519PrivKey {
  readonly seed: Uint8Array;
  readonly pubKey: Uint8Array;
  private readonly key: KeyObject;
  private addr: Uint8Array | undefined;

  private constructor(seed: Uint8Array) {
    this.seed = Uint8Array.from(seed);
    this.key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    const spki = createPublicKey(this.key).export({ format: 'der', type: 'spki' });
    this.pubKey = Uint8Array.from(spki.subarray(spki.length - ED25519_PUBKEY_SIZE));
  }

  static generate(): Ed25519PrivKey {
    return new Ed25519PrivKey(randomBytes(ED25519_SEED_SIZE));
  }

  static fromSeed(seed: Uint8Array): Ed25519PrivKey {
    if (seed.length !== ED25519_SEED_SIZE) throw new KeyError(`ed25519 seed must be 32 bytes, got ${seed.length}`);
    return new Ed25519PrivKey(seed);
  }

  /** From the 64-byte seed||pub form of priv_validator_key.json / node_key.json. */
  static fromBytes(priv: Uint8Array): Ed25519PrivKey {
    if (priv.length === ED25519_SEED_SIZE) return Ed25519PrivKey.fromSeed(priv);
    if (priv.length !== ED25519_PRIVKEY_SIZE) throw new KeyError(`ed25519 private key must be 64 bytes, got ${priv.length}`);
    const k = new Ed25519PrivKey(priv.subarray(0, ED25519_SEED_SIZE));
    const stored = priv.subarray(ED25519_SEED_SIZE);
    for (let i = 0; i < ED25519_PUBKEY_SIZE; i++) {
      // A mismatch means a corrupt key file: signatures would not verify under the stored pubkey.
      if (stored[i] !== k.pubKey[i]) throw new KeyError('ed25519 private key: public half does not match the seed');
    }
    return k;
  }

  /** GenPrivKeyFromSecret: the seed is sha256(secret). */
  static fromSecret(secret: Uint8Array): Ed25519PrivKey {
    return new Ed25519PrivKey(sha256(secret));
  }

  /** The 64-byte seed||pub form. */
  bytes(): Uint8Array {
    const out = new Uint8Array(ED25519_PRIVKEY_SIZE);
    out.set(this.seed, 0);
    out.set(this.pubKey, ED25519_SEED_SIZE);
    return out;
  }

  get address(): Uint8Array {
    if (!this.addr) this.addr = tmhashTruncated(this.pubKey);
    return this.addr;
  }

  sign(msg: Uint8Array): Uint8Array {
    return cryptoSign(null, msg, this.key);
  }
}

// Building a KeyObject costs about as much as a verification, so keep one per public key. A
// validator set is small; the cap only bounds memory against a stream of unknown keys.
const KEY_CACHE_MAX = 4096;
const keyCache = new Map<string, KeyObject>();

function cachedKey(pub: Uint8Array): KeyObject {
  const id = bytesToKey(pub);
  let k = keyCache.get(id);
  if (k === undefined) {
    if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
    k = publicKeyObject(pub);
    keyCache.set(id, k);
  }
  return k;
}

/** True iff `sig` is a valid Ed25519 signature of `msg` under the 32-byte public key `pub`. */
export function ed25519Verify(pub: Uint8Array, msg: Uint8Array, sig: Uint8Array): boolean {
  if (pub.length !== ED25519_PUBKEY_SIZE || sig.length !== ED25519_SIGNATURE_SIZE) return false;
  try {
    return cryptoVerify(null, msg, cachedKey(pub), sig);
  } catch {
    return false;
  }
}

export function ed25519Address(pub: Uint8Array): Uint8Array {
  return tmhashTruncated(pub);
}
