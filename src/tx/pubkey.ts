/**
 * Account public keys carried in `Any` (SignerInfo.public_key, BaseAccount.pub_key) and the
 * addresses they hash to (cosmos/cosmos-sdk:proto/cosmos/crypto/secp256k1/keys.proto, cosmos/cosmos-sdk:x/auth/keeper/account.go, cosmos/cosmos-sdk:crypto/keys/mldsa).
 *
 * | algo          | type URL (spec; upstream `/cosmos.…` accepted) | key          | address |
 * |---------------|-----------------------------------------------|--------------|---------|
 * | secp256k1     | /chain.crypto.secp256k1.PubKey                | 33 B compr.  | RIPEMD160(SHA256(key)) |
 * | eth_secp256k1 | /chain.evm.crypto.v1.ethsecp256k1.PubKey      | 33 B compr.  | keccak256(uncompressed[1:])[12:] |
 * | ed25519       | /chain.crypto.ed25519.PubKey                  | 32 B         | SHA256(key)[:20] |
 * | mldsa65       | /chain.crypto.mldsa65.PubKey                  | 1952 B       | SHA256(key)[:20] |
 * | multisig      | /chain.crypto.multisig.LegacyAminoPubKey      | threshold+keys | SHA256(amino binary)[:20] |
 *
 * The eth_secp256k1 address is the Ethereum address of the key, so one 20-byte account is both
 * `chain1…` and `0x…`. Ethermint's `/ethermint.crypto.v1.ethsecp256k1.PubKey` is accepted as an
 * alias (same message).
 */
import { create, fromBinary } from '@bufbuild/protobuf';
import type { Any } from '@bufbuild/protobuf/wkt';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { sdkErrors, type AbciError } from '../app/errors.js';
import { getCryptoBackend } from '../crypto/backend.js';
import { LegacyAminoPubKeySchema } from '../gen/chain/crypto/multisig/keys_pb.js';
import { PubKeySchema as Ed25519PubKeySchema } from '../gen/chain/crypto/ed25519/keys_pb.js';
import { PubKeySchema as MlDsa65PubKeySchema } from '../gen/chain/crypto/mldsa65/keys_pb.js';
import { PubKeySchema as Secp256k1PubKeySchema } from '../gen/chain/crypto/secp256k1/keys_pb.js';
import { PubKeySchema as EthSecp256k1PubKeySchema } from '../gen/chain/evm/crypto/v1/ethsecp256k1/keys_pb.js';
import { canonicalTypeName, packAny, type EmitNames } from '../proto/registry.js';
import { LruMemo } from './memo.js';
import { bytesToKey } from '../crypto/bytes.js';

export type PubKeyAlgo = 'secp256k1' | 'eth_secp256k1' | 'ed25519' | 'mldsa65' | 'multisig';

export const SECP256K1_PUBKEY_LEN = 33;
export const ED25519_PUBKEY_LEN = 32;
export const MLDSA65_PUBKEY_LEN = 1952;

export interface SinglePubKey {
  algo: 'secp256k1' | 'eth_secp256k1' | 'ed25519' | 'mldsa65';
  key: Uint8Array;
}

export interface MultisigPubKey {
  algo: 'multisig';
  threshold: number;
  pubKeys: PubKey[];
}

export type PubKey = SinglePubKey | MultisigPubKey;

const SCHEMA_BY_ALGO = {
  secp256k1: Secp256k1PubKeySchema,
  eth_secp256k1: EthSecp256k1PubKeySchema,
  ed25519: Ed25519PubKeySchema,
  mldsa65: MlDsa65PubKeySchema,
} as const;

const ALGO_BY_TYPE = new Map<string, PubKeyAlgo>([
  [Secp256k1PubKeySchema.typeName, 'secp256k1'],
  [EthSecp256k1PubKeySchema.typeName, 'eth_secp256k1'],
  ['ethermint.crypto.v1.ethsecp256k1.PubKey', 'eth_secp256k1'],
  [Ed25519PubKeySchema.typeName, 'ed25519'],
  [MlDsa65PubKeySchema.typeName, 'mldsa65'],
  [LegacyAminoPubKeySchema.typeName, 'multisig'],
]);

const KEY_LEN: Record<SinglePubKey['algo'], number> = {
  secp256k1: SECP256K1_PUBKEY_LEN,
  eth_secp256k1: SECP256K1_PUBKEY_LEN,
  ed25519: ED25519_PUBKEY_LEN,
  mldsa65: MLDSA65_PUBKEY_LEN,
};

function invalid(msg: string): AbciError {
  return sdkErrors.invalidPubKey.wrap(msg);
}

/** The algorithm of a pubkey type URL (either spelling), or undefined when it is not a key type. */
export function pubKeyAlgoOfTypeUrl(typeUrl: string): PubKeyAlgo | undefined {
  return ALGO_BY_TYPE.get(canonicalTypeName(typeUrl));
}

/**
 * How many secp256k1 keys stay decompressed. A tx's key is looked at by pre-verification, four
 * ante decorators, FinalizeBlock and every recheck; each look used to cost a field square root
 * (~0.2 ms in @noble). The memo must hold every signer with txs in flight: the mempool's default
 * `size` is 5,000 txs (so at most 5,000 distinct signers waiting, rechecked after each block),
 * plus the signers of the block being executed; 16,384 leaves room for a larger mempool. An entry
 * is the 33-byte key as a string and the 65-byte point, about 200 B: ~3 MB when full.
 */
export const SECP256K1_KEY_MEMO_SIZE = 16_384;

/** How many decoded pubkey `Any`s stay decoded (same population, same bound as the key memo). */
export const PUBKEY_ANY_MEMO_SIZE = 16_384;
/**
 * Larger Anys are decoded every time: an ML-DSA-65 key (1,952 B) needs no square root, and the
 * bound keeps the memo's worst case near 16,384 × 512 B = 8 MB whatever keys txs carry.
 */
export const PUBKEY_ANY_MEMO_MAX_BYTES = 512;

/** Decompresses a SEC1 key to its 65-byte form, or null when it is not a curve point. */
export type Secp256k1Decompressor = (key: Uint8Array) => Uint8Array | null;

/**
 * Valid secp256k1 keys, decompressed once: key bytes → 65-byte uncompressed point. Invalid keys
 * are not remembered (a tx with one fails at once and costs its sender the tx). The decompressor
 * is the process's crypto backend (libsecp256k1 where the native addon loaded, else @noble);
 * tests swap it to count calls.
 */
export class Secp256k1KeyMemo {
  private readonly memo: LruMemo<string, Uint8Array>;
  /** Calls that reached the decompressor. */
  decompressions = 0;

  constructor(
    capacity = SECP256K1_KEY_MEMO_SIZE,
    public decompressor: Secp256k1Decompressor = (k) => getCryptoBackend().secp256k1Decompress(k),
  ) {
    this.memo = new LruMemo(capacity);
  }

  get size(): number {
    return this.memo.size;
  }

  get stats() {
    return this.memo.stats;
  }

  /** The 65-byte uncompressed point of `key`, or null when `key` is not a valid SEC1 point. */
  uncompressed(key: Uint8Array): Uint8Array | null {
    const k = bytesToKey(key);
    const hit = this.memo.get(k);
    if (hit !== undefined) return hit;
    this.decompressions++;
    let point: Uint8Array | null;
    try {
      point = key.length === 33 || key.length === 65 ? this.decompressor(key) : null;
    } catch {
      point = null;
    }
    if (point !== null) this.memo.set(k, point);
    return point;
  }

  clear(): void {
    this.memo.clear();
    this.decompressions = 0;
  }
}

/** The process-wide key memo (src/app's ante chain and pre-verification go through it). */
export const secp256k1Keys = new Secp256k1KeyMemo();

/** Decoded pubkey Anys: canonical type name + value bytes → key. Entries are shared: never mutate one. */
const decodedAnys = new LruMemo<string, PubKey>(PUBKEY_ANY_MEMO_SIZE);

/** Multisig nesting bound: a LegacyAminoPubKey may hold multisig keys, but not without end. */
const MAX_MULTISIG_DEPTH = 8;

/**
 * Decodes a pubkey Any. Throws an AbciError (sdk code 8, invalid pubkey) for an unknown type URL
 * or a key of the wrong length / not on the curve.
 */
export function decodePubKey(any: Any, depth = 0): PubKey {
  if (any.value.length > PUBKEY_ANY_MEMO_MAX_BYTES) return decodePubKeyUncached(any, depth);
  // The same Any object again (a decoded tx's signer info, a remembered account's key): the ante
  // chain asks four times a tx. Anys are never mutated once decoded.
  const seen = depth === 0 ? decodedByObject.get(any) : undefined;
  if (seen !== undefined && seen.typeUrl === any.typeUrl && seen.value === any.value) return seen.pk;
  const memoKey = `${canonicalTypeName(any.typeUrl)}\0${bytesToKey(any.value)}`;
  let pk = decodedAnys.get(memoKey);
  if (pk === undefined) {
    pk = decodePubKeyUncached(any, depth);
    // Only top-level results: a nested key's depth matters for the nesting bound.
    if (depth === 0) decodedAnys.set(memoKey, pk);
  }
  if (depth === 0) decodedByObject.set(any, { typeUrl: any.typeUrl, value: any.value, pk });
  return pk;
}

/** decodePubKey's answers by Any object (its fields as they were, to notice a reassignment). */
const decodedByObject = new WeakMap<Any, { typeUrl: string; value: Uint8Array; pk: PubKey }>();

/** The memo of decoded pubkey Anys, for tests. */
export const pubKeyAnyMemo = {
  get size(): number {
    return decodedAnys.size;
  },
  clear(): void {
    decodedAnys.clear();
  },
};

function decodePubKeyUncached(any: Any, depth: number): PubKey {
  const algo = pubKeyAlgoOfTypeUrl(any.typeUrl);
  if (algo === undefined) throw invalid(`unrecognized public key type: ${any.typeUrl}`);
  let msg;
  try {
    if (algo === 'multisig') {
      if (depth >= MAX_MULTISIG_DEPTH) throw new Error('multisig nesting too deep');
      const m = fromBinary(LegacyAminoPubKeySchema, any.value);
      return { algo, threshold: m.threshold, pubKeys: m.publicKeys.map((k) => decodePubKey(k, depth + 1)) };
    }
    msg = fromBinary(SCHEMA_BY_ALGO[algo], any.value);
  } catch (e) {
    if (e instanceof Error && 'abciCode' in e) throw e;
    throw invalid(`${any.typeUrl}: ${(e as Error).message}`);
  }
  const key = msg.key;
  if (key.length !== KEY_LEN[algo]) throw invalid(`invalid ${algo} public key length: ${key.length}, expected ${KEY_LEN[algo]}`);
  if (algo === 'secp256k1' || algo === 'eth_secp256k1') {
    // A 33-byte key with prefix 02/03 whose x is on the curve; decompressed once per key.
    if (secp256k1Keys.uncompressed(key) === null) throw invalid(`invalid ${algo} public key: not a compressed curve point`);
  }
  return { algo, key };
}

/** Packs a single key as its Any (spec type URL, or upstream with upstreamNames). */
export function encodePubKey(pk: SinglePubKey, names?: EmitNames): Any {
  const schema = SCHEMA_BY_ALGO[pk.algo];
  return packAny(schema, create(schema, { key: pk.key }), names);
}

/** keccak256(uncompressed point without the 0x04 byte)[12:]: the Ethereum address. */
export function ethAddressOfSecp256k1(compressedOrUncompressed: Uint8Array): Uint8Array {
  const uncompressed = secp256k1Keys.uncompressed(compressedOrUncompressed);
  if (uncompressed === null) throw new Error('invalid secp256k1 public key: not a curve point');
  return keccak_256(uncompressed.subarray(1)).subarray(12);
}

/** The amino binary prefixes of the upstream registered names (tendermint/PubKeySecp256k1,
 * tendermint/PubKeyEd25519, tendermint/PubKeyMultisigThreshold): addresses derive from upstream's
 * bytes, so they are the same for spec and upstream spellings. */
const AMINO_PREFIX_SECP256K1 = Uint8Array.of(0xeb, 0x5a, 0xe9, 0x87);
const AMINO_PREFIX_ED25519 = Uint8Array.of(0x16, 0x24, 0xde, 0x64);
const AMINO_PREFIX_MULTISIG = Uint8Array.of(0x22, 0xc1, 0xf7, 0xe2);

function uvarint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

/** Legacy amino binary of a key (cosmos-sdk: crypto/keys/multisig/amino.go): prefix, then the
 * struct. Only secp256k1, ed25519 and nested multisig keys have an upstream amino registration. */
export function aminoBinaryPubKey(pk: PubKey): Uint8Array {
  if (pk.algo === 'secp256k1' || pk.algo === 'ed25519') {
    const prefix = pk.algo === 'secp256k1' ? AMINO_PREFIX_SECP256K1 : AMINO_PREFIX_ED25519;
    return Uint8Array.from([...prefix, ...uvarint(pk.key.length), ...pk.key]);
  }
  if (pk.algo === 'multisig') {
    const out: number[] = [...AMINO_PREFIX_MULTISIG, 0x08, ...uvarint(pk.threshold)];
    for (const sub of pk.pubKeys) {
      const b = aminoBinaryPubKey(sub);
      out.push(0x12, ...uvarint(b.length), ...b);
    }
    return Uint8Array.from(out);
  }
  throw sdkErrors.notSupported.wrap(`no legacy amino encoding for ${pk.algo} keys`);
}

const addressOfKey = new WeakMap<PubKey, Uint8Array>();

/** The 20-byte account address of a key (remembered per key object: memoised keys are shared). */
export function pubKeyAddress(pk: PubKey): Uint8Array {
  let a = addressOfKey.get(pk);
  if (a === undefined) {
    a = computePubKeyAddress(pk);
    addressOfKey.set(pk, a);
  }
  return a;
}

function computePubKeyAddress(pk: PubKey): Uint8Array {
  switch (pk.algo) {
    case 'secp256k1':
      return ripemd160(sha256(pk.key));
    case 'eth_secp256k1':
      return ethAddressOfSecp256k1(pk.key);
    case 'ed25519':
    case 'mldsa65':
      return sha256(pk.key).subarray(0, 20);
    case 'multisig':
      return sha256(aminoBinaryPubKey(pk)).subarray(0, 20);
  }
}

/** Number of signatures a key contributes to tx_sig_limit (multisig: its sub-keys, recursively). */
export function countSubKeys(pk: PubKey): number {
  return pk.algo === 'multisig' ? pk.pubKeys.reduce((n, k) => n + countSubKeys(k), 0) : 1;
}
