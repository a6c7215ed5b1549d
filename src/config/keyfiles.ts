/**
 * Key files under config/ and data/ (cometbft: privval/file.go, p2p/key.go; JSON shape
 * cometbft/cometbft:types/block.go):
 *
 *   priv_validator_key.json  {"address": HEX, "pub_key": {"type", "value"}, "priv_key": {"type", "value"}}
 *   node_key.json            {"priv_key": {"type", "value"}}
 *   priv_validator_state.json {"height": "0", "round": 0, "step": 0}
 *
 * An ed25519 private key is 64 bytes, seed || public key, in base64. Types go through the names
 * registry (`consensus/PrivKeyEd25519`; `tendermint/PrivKeyEd25519` is accepted).
 * Private files are written with mode 0600.
 */
import { hexUpper } from '../crypto/bytes.js';
import { Ed25519PrivKey } from '../crypto/ed25519.js';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { sha256 } from '@noble/hashes/sha2.js';
import { configError } from './errors.js';
import { parsePrivKeyType, parsePubKeyType, SPEC_NAMES, type Names } from '../names/index.js';

export interface Ed25519KeyPair {
  /** 32-byte seed. */
  seed: Uint8Array;
  /** 32-byte public key. */
  pubKey: Uint8Array;
}

export interface PrivValidatorKey extends Ed25519KeyPair {
  /** sha256(pubKey)[:20]. */
  address: Uint8Array;
  /** 64 bytes: seed || pubKey (CometBFT's PrivKeyEd25519 bytes). */
  privKey: Uint8Array;
}

export interface NodeKey extends Ed25519KeyPair {
  privKey: Uint8Array;
  /** Node ID: hex(sha256(pubKey)[:20]), lower case (cometbft: p2p/key.go). */
  id: string;
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/**
 * A new random ed25519 key: 32 random bytes are the seed (RFC 8032), its public key derived. Not
 * generateKeyPairSync + a JWK export: on Node 20, a GC during that export can run the key-generation
 * job's destructor, which waits for the key's mutex the export holds, and the thread deadlocks
 * (seen as a test hung in futex_wait under node::crypto::KeyGenJob::~KeyGenJob in ExportJWKEdKey).
 */
export function generateEd25519(): Ed25519KeyPair {
  const seed = new Uint8Array(randomBytes(32));
  return { seed, pubKey: ed25519PubKeyFromSeed(seed) };
}

/** The public key of an ed25519 seed (the signer's own derivation: DER, no JWK export). */
export function ed25519PubKeyFromSeed(seed: Uint8Array): Uint8Array {
  return Ed25519PrivKey.fromSeed(seed).pubKey;
}

export function ed25519Address(pubKey: Uint8Array): Uint8Array {
  return sha256(pubKey).subarray(0, 20);
}

export function nodeIdFromPubKey(pubKey: Uint8Array): string {
  return hex(ed25519Address(pubKey));
}

function withPriv(k: Ed25519KeyPair): Uint8Array {
  const out = new Uint8Array(64);
  out.set(k.seed, 0);
  out.set(k.pubKey, 32);
  return out;
}

export function privValidatorKeyJson(k: Ed25519KeyPair, names: Names = SPEC_NAMES): Record<string, unknown> {
  return {
    address: hexUpper(ed25519Address(k.pubKey)),
    pub_key: { type: names.pubKeyType('ed25519'), value: b64(k.pubKey) },
    priv_key: { type: names.privKeyType('ed25519'), value: b64(withPriv(k)) },
  };
}

export function nodeKeyJson(k: Ed25519KeyPair, names: Names = SPEC_NAMES): Record<string, unknown> {
  return { priv_key: { type: names.privKeyType('ed25519'), value: b64(withPriv(k)) } };
}

function writePrivate(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { mode: 0o600 });
}

export function writePrivValidatorKey(path: string, k: Ed25519KeyPair, names: Names = SPEC_NAMES): void {
  writePrivate(path, JSON.stringify(privValidatorKeyJson(k, names), null, 2) + '\n');
}

export function writeNodeKey(path: string, k: Ed25519KeyPair, names: Names = SPEC_NAMES): void {
  writePrivate(path, JSON.stringify(nodeKeyJson(k, names), null, 2) + '\n');
}

/** The initial sign state: nothing signed yet (cometbft: privval/file.go FilePVLastSignState). */
export function writeInitialPrivValidatorState(path: string): void {
  writePrivate(path, JSON.stringify({ height: '0', round: 0, step: 0 }, null, 2) + '\n');
}

function readJson(path: string, source: string): Record<string, unknown> {
  if (!existsSync(path)) throw configError(source, undefined, 'not found (run `chaind init` first)', 'CONFIG_NOT_FOUND');
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw configError(source, undefined, `invalid JSON: ${(e as Error).message}`, 'CONFIG_SYNTAX');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw configError(source, undefined, 'expected a JSON object', 'CONFIG_SYNTAX');
  return v as Record<string, unknown>;
}

/** Check a `{type, value}` private key: ed25519, 64 bytes, and the public half matching the seed. */
function parsePrivKey(source: string, raw: unknown): { seed: Uint8Array; pubKey: Uint8Array; privKey: Uint8Array } {
  const o = raw as { type?: unknown; value?: unknown } | undefined;
  if (typeof o !== 'object' || o === null) throw configError(source, 'priv_key', 'missing');
  if (typeof o.type !== 'string' || parsePrivKeyType(o.type) !== 'ed25519') {
    throw configError(source, 'priv_key.type', `unsupported key type ${JSON.stringify(o.type)} (want ${SPEC_NAMES.privKeyType('ed25519')})`);
  }
  const bytes = typeof o.value === 'string' ? new Uint8Array(Buffer.from(o.value, 'base64')) : undefined;
  if (!bytes || bytes.length !== 64) throw configError(source, 'priv_key.value', 'want 64 bytes of base64 (seed || public key)');
  const seed = bytes.slice(0, 32);
  const pubKey = ed25519PubKeyFromSeed(seed);
  if (Buffer.compare(Buffer.from(pubKey), Buffer.from(bytes.subarray(32))) !== 0) {
    throw configError(source, 'priv_key.value', 'public half does not match the seed');
  }
  return { seed, pubKey, privKey: bytes };
}

export function readPrivValidatorKey(path: string, source = path): PrivValidatorKey {
  const doc = readJson(path, source);
  const { seed, pubKey, privKey } = parsePrivKey(source, doc.priv_key);
  const address = ed25519Address(pubKey);
  const pk = doc.pub_key as { type?: unknown; value?: unknown } | undefined;
  if (pk !== undefined) {
    if (typeof pk.type !== 'string' || parsePubKeyType(pk.type) !== 'ed25519') {
      throw configError(source, 'pub_key.type', `unsupported key type ${JSON.stringify(pk.type)}`);
    }
    if (pk.value !== b64(pubKey)) throw configError(source, 'pub_key.value', 'does not match priv_key');
  }
  if (doc.address !== undefined && String(doc.address).toUpperCase() !== hexUpper(address)) {
    throw configError(source, 'address', `does not match the key; should be ${hexUpper(address)}`);
  }
  return { seed, pubKey, privKey, address };
}

export function readNodeKey(path: string, source = path): NodeKey {
  const doc = readJson(path, source);
  const { seed, pubKey, privKey } = parsePrivKey(source, doc.priv_key);
  return { seed, pubKey, privKey, id: nodeIdFromPubKey(pubKey) };
}
