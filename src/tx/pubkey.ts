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
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { sdkErrors, type AbciError } from '../app/errors.js';
import { LegacyAminoPubKeySchema } from '../gen/chain/crypto/multisig/keys_pb.js';
import { PubKeySchema as Ed25519PubKeySchema } from '../gen/chain/crypto/ed25519/keys_pb.js';
import { PubKeySchema as MlDsa65PubKeySchema } from '../gen/chain/crypto/mldsa65/keys_pb.js';
import { PubKeySchema as Secp256k1PubKeySchema } from '../gen/chain/crypto/secp256k1/keys_pb.js';
import { PubKeySchema as EthSecp256k1PubKeySchema } from '../gen/chain/evm/crypto/v1/ethsecp256k1/keys_pb.js';
import { canonicalTypeName, packAny, type EmitNames } from '../proto/registry.js';

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

/** Multisig nesting bound: a LegacyAminoPubKey may hold multisig keys, but not without end. */
const MAX_MULTISIG_DEPTH = 8;

/**
 * Decodes a pubkey Any. Throws an AbciError (sdk code 8, invalid pubkey) for an unknown type URL
 * or a key of the wrong length / not on the curve.
 */
export function decodePubKey(any: Any, depth = 0): PubKey {
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
    try {
      secp256k1.Point.fromBytes(key);
    } catch {
      throw invalid(`invalid ${algo} public key: not a compressed curve point`);
    }
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
  const uncompressed = secp256k1.Point.fromBytes(compressedOrUncompressed).toBytes(false);
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

/** The 20-byte account address of a key. */
export function pubKeyAddress(pk: PubKey): Uint8Array {
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
