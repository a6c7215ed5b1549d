/**
 * The genesis document (cometbft: types/genesis.go; JSON shape cometbft/cometbft:rpc/core/types/responses.go
 * and fixtures/cometbft-v038-kvstore.json `genesis`): parse, validate, complete and write.
 *
 * Validation follows GenesisDoc.ValidateAndComplete and ConsensusParams.ValidateBasic
 * (types/params.go), with messages that name the file and the field:
 * `config/genesis.json: chain_id: must not be empty`. Two deliberate differences: a missing
 * consensus_params section or field takes its default (CometBFT leaves it zero and then fails),
 * and `max_age_duration` also accepts a duration string ("172800s", "48h0m0s", as SDK exports
 * write it) besides int64 nanoseconds.
 *
 * Pub-key types are accepted in both spellings (`consensus/PubKeyEd25519`, `tendermint/…`) and
 * written through the names registry.
 */
import { consensusParamsJSON } from '../types/json.js';
import { readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { sha256 } from '@noble/hashes/sha2.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { configError } from './errors.js';
import { parseDurationNanos } from './duration.js';
import { defaultConsensusParams, type ConsensusParams } from '../types/params.js';
import type { PubKey, PubKeyType } from '../types/validator.js';
import { parsePubKeyType, SPEC_NAMES, type Names } from '../names/index.js';
import { hexUpper } from '../crypto/bytes.js';

/** cometbft: types/genesis.go MaxChainIDLen. */
export const MAX_CHAIN_ID_LEN = 50;
/** cometbft: types/params.go MaxBlockSizeBytes (100 MiB). */
export const MAX_BLOCK_SIZE_BYTES = 104_857_600n;
/** cometbft: types/validator_set.go MaxTotalVotingPower = MaxInt64 / 8. */
export const MAX_TOTAL_VOTING_POWER = 9223372036854775807n / 8n;

const PUBKEY_SIZE: Record<PubKeyType, number> = { ed25519: 32, secp256k1: 33 };

export interface GenesisValidator {
  /** 20 bytes; computed from the key when the file leaves it empty. */
  address: Uint8Array;
  pubKey: PubKey;
  power: bigint;
  name: string;
}

export interface GenesisDoc {
  /** Nanoseconds since the Unix epoch. */
  genesisTime: bigint;
  chainId: string;
  initialHeight: bigint;
  consensusParams: ConsensusParams;
  validators: GenesisValidator[];
  appHash: Uint8Array;
  /**
   * The parsed `app_state` (undefined when absent). Parsed with JSON.parse: integers beyond 2^53
   * lose precision, which is why the SDK (and chaind) write amounts as strings.
   */
  appState: unknown;
}

/** Address of a consensus or account key: sha256(pub)[:20] for ed25519 (cometbft: crypto/ed25519),
 * ripemd160(sha256(pub)) for secp256k1 (crypto/secp256k1). */
export function pubKeyAddress(pk: PubKey): Uint8Array {
  return pk.type === 'ed25519' ? sha256(pk.bytes).subarray(0, 20) : ripemd160(sha256(pk.bytes));
}

// ---------------------------------------------------------------------------------------------
// Time: RFC 3339 with nanoseconds, as cmtjson writes time.Time.

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/** Parse an RFC 3339 timestamp into nanoseconds since the epoch; undefined when invalid. */
export function parseRfc3339Nano(s: string): bigint | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0..99 to 1900..1999.
  const check = new Date(0);
  check.setUTCFullYear(y, mo - 1, d);
  check.setUTCHours(h, mi, se, 0);
  const ms = check.getTime();
  // Dates normalize overflow (Feb 30 → Mar 2): reject values that did not round-trip.
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59 || se > 59) {
    return undefined;
  }
  let ns = BigInt(ms) * 1_000_000n + BigInt((m[7] ?? '').padEnd(9, '0') || '0');
  const tz = m[8]!;
  if (tz !== 'Z' && tz !== 'z') {
    const sign = tz[0] === '-' ? -1n : 1n;
    const offMin = BigInt(Number(tz.slice(1, 3)) * 60 + Number(tz.slice(4, 6)));
    ns -= sign * offMin * 60_000_000_000n;
  }
  return ns;
}

/** RFC 3339 in UTC with nanoseconds, trailing zeros trimmed (Go's time.RFC3339Nano). */
export function formatRfc3339Nano(ns: bigint): string {
  const sec = ns >= 0n ? ns / 1_000_000_000n : -((-ns + 999_999_999n) / 1_000_000_000n);
  const frac = ns - sec * 1_000_000_000n;
  const iso = new Date(Number(sec) * 1000).toISOString(); // yyyy-mm-ddThh:mm:ss.000Z
  const base = iso.slice(0, 19);
  const f = frac === 0n ? '' : '.' + frac.toString().padStart(9, '0').replace(/0+$/, '');
  return `${base}${f}Z`;
}

/** Current time in nanoseconds (millisecond resolution). */
export function nowNanos(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

// ---------------------------------------------------------------------------------------------
// Parsing

class Ctx {
  constructor(readonly source: string) {}
  fail(field: string, reason: string): never {
    throw configError(this.source, field, reason);
  }
  int64(v: unknown, field: string, dflt?: bigint): bigint {
    if (v === undefined && dflt !== undefined) return dflt;
    if (typeof v === 'string' && /^-?\d+$/.test(v)) {
      const n = BigInt(v);
      if (n > 9223372036854775807n || n < -9223372036854775808n) this.fail(field, `out of int64 range: ${v}`);
      return n;
    }
    if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
    return this.fail(field, `expected an integer string such as "1", got ${JSON.stringify(v) ?? 'nothing'}`);
  }
  str(v: unknown, field: string, dflt?: string): string {
    if (v === undefined && dflt !== undefined) return dflt;
    if (typeof v !== 'string') this.fail(field, `expected a string, got ${JSON.stringify(v) ?? 'nothing'}`);
    return v;
  }
  obj(v: unknown, field: string): Record<string, unknown> | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'object' || Array.isArray(v)) this.fail(field, 'expected an object');
    return v as Record<string, unknown>;
  }
}

function decodeBase64(s: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) return undefined;
  return new Uint8Array(Buffer.from(s, 'base64'));
}

function parseConsensusParams(ctx: Ctx, raw: unknown): ConsensusParams {
  const p = defaultConsensusParams();
  const cp = ctx.obj(raw, 'consensus_params');
  if (!cp) return p;
  const block = ctx.obj(cp.block, 'consensus_params.block');
  if (block) {
    p.block.maxBytes = ctx.int64(block.max_bytes, 'consensus_params.block.max_bytes', p.block.maxBytes);
    p.block.maxGas = ctx.int64(block.max_gas, 'consensus_params.block.max_gas', p.block.maxGas);
  }
  const ev = ctx.obj(cp.evidence, 'consensus_params.evidence');
  if (ev) {
    p.evidence.maxAgeNumBlocks = ctx.int64(ev.max_age_num_blocks, 'consensus_params.evidence.max_age_num_blocks', p.evidence.maxAgeNumBlocks);
    const d = ev.max_age_duration;
    if (typeof d === 'string' && !/^-?\d+$/.test(d)) {
      const ns = parseDurationNanos(d);
      if (ns === undefined) ctx.fail('consensus_params.evidence.max_age_duration', `invalid duration ${JSON.stringify(d)}`);
      p.evidence.maxAgeDuration = BigInt(Math.round(ns));
    } else {
      p.evidence.maxAgeDuration = ctx.int64(d, 'consensus_params.evidence.max_age_duration', p.evidence.maxAgeDuration);
    }
    p.evidence.maxBytes = ctx.int64(ev.max_bytes, 'consensus_params.evidence.max_bytes', p.evidence.maxBytes);
  }
  const val = ctx.obj(cp.validator, 'consensus_params.validator');
  if (val && val.pub_key_types !== undefined) {
    const types = val.pub_key_types;
    if (!Array.isArray(types) || !types.every((t) => typeof t === 'string')) {
      ctx.fail('consensus_params.validator.pub_key_types', 'expected an array of strings');
    }
    p.validator.pubKeyTypes = [...(types as string[])];
  }
  const ver = ctx.obj(cp.version, 'consensus_params.version');
  if (ver) p.version.app = ctx.int64(ver.app, 'consensus_params.version.app', p.version.app);
  const abci = ctx.obj(cp.abci, 'consensus_params.abci');
  if (abci) {
    p.abci.voteExtensionsEnableHeight = ctx.int64(
      abci.vote_extensions_enable_height,
      'consensus_params.abci.vote_extensions_enable_height',
      p.abci.voteExtensionsEnableHeight,
    );
  }
  validateConsensusParams(ctx, p);
  return p;
}

/** cometbft: types/params.go ConsensusParams.ValidateBasic. */
function validateConsensusParams(ctx: Ctx, p: ConsensusParams): void {
  const f = (k: string, r: string) => ctx.fail(`consensus_params.${k}`, r);
  if (p.block.maxBytes === 0n || p.block.maxBytes < -1n) f('block.max_bytes', `must be -1 or greater than 0, got ${p.block.maxBytes}`);
  if (p.block.maxBytes > MAX_BLOCK_SIZE_BYTES) f('block.max_bytes', `must be <= ${MAX_BLOCK_SIZE_BYTES}, got ${p.block.maxBytes}`);
  if (p.block.maxGas < -1n) f('block.max_gas', `must be >= -1, got ${p.block.maxGas}`);
  if (p.evidence.maxAgeNumBlocks <= 0n) f('evidence.max_age_num_blocks', `must be greater than 0, got ${p.evidence.maxAgeNumBlocks}`);
  if (p.evidence.maxAgeDuration <= 0n) f('evidence.max_age_duration', `must be greater than 0, got ${p.evidence.maxAgeDuration}`);
  const maxBytes = p.block.maxBytes === -1n ? MAX_BLOCK_SIZE_BYTES : p.block.maxBytes;
  if (p.evidence.maxBytes < 0n) f('evidence.max_bytes', `must not be negative, got ${p.evidence.maxBytes}`);
  if (p.evidence.maxBytes > maxBytes) f('evidence.max_bytes', `must not exceed block.max_bytes (${maxBytes}), got ${p.evidence.maxBytes}`);
  if (p.validator.pubKeyTypes.length === 0) f('validator.pub_key_types', 'must not be empty');
  p.validator.pubKeyTypes.forEach((t, i) => {
    if (!(t in PUBKEY_SIZE)) f(`validator.pub_key_types[${i}]`, `unknown key type ${JSON.stringify(t)} (want ed25519 or secp256k1)`);
  });
  if (p.abci.voteExtensionsEnableHeight < 0n) f('abci.vote_extensions_enable_height', `must not be negative, got ${p.abci.voteExtensionsEnableHeight}`);
}

function parseValidators(ctx: Ctx, raw: unknown, params: ConsensusParams): GenesisValidator[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) ctx.fail('validators', 'expected an array');
  let total = 0n;
  const seen = new Set<string>();
  return raw.map((v, i) => {
    const at = `validators[${i}]`;
    const o = ctx.obj(v, at) ?? ctx.fail(at, 'expected an object');
    const pk = ctx.obj(o.pub_key, `${at}.pub_key`) ?? ctx.fail(`${at}.pub_key`, 'missing');
    const typeName = ctx.str(pk.type, `${at}.pub_key.type`);
    const algo = parsePubKeyType(typeName);
    if (algo !== 'ed25519' && algo !== 'secp256k1') {
      ctx.fail(`${at}.pub_key.type`, `unknown key type ${JSON.stringify(typeName)} (want ${SPEC_NAMES.pubKeyType('ed25519')})`);
    }
    if (!params.validator.pubKeyTypes.includes(algo)) {
      ctx.fail(`${at}.pub_key.type`, `${algo} is not in consensus_params.validator.pub_key_types`);
    }
    const bytes = decodeBase64(ctx.str(pk.value, `${at}.pub_key.value`));
    if (!bytes || bytes.length !== PUBKEY_SIZE[algo]) {
      ctx.fail(`${at}.pub_key.value`, `want ${PUBKEY_SIZE[algo]} bytes of base64 for ${algo}`);
    }
    const pubKey: PubKey = { type: algo, bytes };
    const power = ctx.int64(o.power, `${at}.power`);
    if (power <= 0n) ctx.fail(`${at}.power`, `must be greater than 0, got ${power}`);
    total += power;
    if (total > MAX_TOTAL_VOTING_POWER) ctx.fail(`${at}.power`, `total voting power exceeds ${MAX_TOTAL_VOTING_POWER}`);
    const expected = pubKeyAddress(pubKey);
    const addrText = ctx.str(o.address, `${at}.address`, '');
    if (addrText !== '') {
      if (!/^[0-9a-fA-F]{40}$/.test(addrText)) ctx.fail(`${at}.address`, `want 40 hex characters, got ${JSON.stringify(addrText)}`);
      if (addrText.toUpperCase() !== hexUpper(expected)) ctx.fail(`${at}.address`, `does not match the key; should be ${hexUpper(expected)}`);
    }
    const key = hexUpper(expected);
    if (seen.has(key)) ctx.fail(`${at}.pub_key`, 'duplicate validator');
    seen.add(key);
    return { address: expected, pubKey, power, name: ctx.str(o.name, `${at}.name`, '') };
  });
}

export interface ParseGenesisOptions {
  /** How the file is named in errors; default `config/genesis.json`. */
  source?: string;
  /** Genesis time to use when the file has none (CometBFT: now). */
  now?: () => bigint;
}

/** Parse and validate a genesis document (JSON text or an already parsed value). */
export function parseGenesis(input: string | unknown, opts: ParseGenesisOptions = {}): GenesisDoc {
  const ctx: Ctx = new Ctx(opts.source ?? 'config/genesis.json');
  let raw: unknown = input;
  if (typeof input === 'string') {
    try {
      raw = JSON.parse(input);
    } catch (e) {
      throw configError(ctx.source, undefined, `invalid JSON: ${(e as Error).message}`, 'CONFIG_SYNTAX');
    }
  }
  const doc = ctx.obj(raw, '(document)') ?? ctx.fail('(document)', 'expected a JSON object');

  const chainId = ctx.str(doc.chain_id, 'chain_id', '');
  if (chainId === '') ctx.fail('chain_id', 'must not be empty');
  if (chainId.length > MAX_CHAIN_ID_LEN) ctx.fail('chain_id', `too long (${chainId.length} > ${MAX_CHAIN_ID_LEN} characters)`);

  let initialHeight = ctx.int64(doc.initial_height, 'initial_height', 1n);
  if (initialHeight < 0n) ctx.fail('initial_height', `must not be negative, got ${initialHeight}`);
  if (initialHeight === 0n) initialHeight = 1n;

  const timeText = ctx.str(doc.genesis_time, 'genesis_time', '');
  let genesisTime: bigint;
  if (timeText === '' || timeText === '0001-01-01T00:00:00Z') {
    // cometbft: a zero genesis time becomes the current time.
    genesisTime = (opts.now ?? nowNanos)();
  } else {
    const t = parseRfc3339Nano(timeText);
    if (t === undefined) ctx.fail('genesis_time', `invalid RFC 3339 time ${JSON.stringify(timeText)}`);
    genesisTime = t;
  }

  const consensusParams = parseConsensusParams(ctx, doc.consensus_params);
  const validators = parseValidators(ctx, doc.validators, consensusParams);

  const appHashText = ctx.str(doc.app_hash, 'app_hash', '');
  if (!/^([0-9a-fA-F]{2})*$/.test(appHashText)) ctx.fail('app_hash', `expected hex, got ${JSON.stringify(appHashText)}`);
  const appHash = new Uint8Array(Buffer.from(appHashText, 'hex'));

  return { genesisTime, chainId, initialHeight, consensusParams, validators, appHash, appState: doc.app_state };
}

/** Read and validate `path`; `source` names it in errors (default: the path as given). */
export function loadGenesis(path: string, opts: ParseGenesisOptions = {}): GenesisDoc {
  const source = opts.source ?? path;
  if (!existsSync(path)) throw configError(source, undefined, 'not found (run `chaind init` first)', 'CONFIG_NOT_FOUND');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw configError(source, undefined, `cannot read: ${(e as Error).message}`, 'CONFIG_NOT_FOUND');
  }
  return parseGenesis(text, { ...opts, source });
}

// ---------------------------------------------------------------------------------------------
// Writing

/** Consensus params as genesis.json and the RPC write them (int64 as strings). */
export function consensusParamsToJson(p: ConsensusParams): Record<string, unknown> {
  return consensusParamsJSON(p);
}

/** Recursively sort object keys: the canonical form of app_state (the SDK sorts exported JSON). */
export function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}

/**
 * The document as JSON, in GenesisDoc field order (what the `genesis` RPC returns), key names
 * through `names` (spec names by default). `app_state` is omitted when absent (omitempty).
 */
export function genesisToJson(doc: GenesisDoc, names: Names = SPEC_NAMES): Record<string, unknown> {
  const out: Record<string, unknown> = {
    genesis_time: formatRfc3339Nano(doc.genesisTime),
    chain_id: doc.chainId,
    initial_height: doc.initialHeight.toString(),
    consensus_params: consensusParamsToJson(doc.consensusParams),
    validators: doc.validators.map((v) => ({
      address: hexUpper(v.address),
      pub_key: { type: names.pubKeyType(v.pubKey.type), value: Buffer.from(v.pubKey.bytes).toString('base64') },
      power: v.power.toString(),
      name: v.name,
    })),
    app_hash: hexUpper(doc.appHash),
  };
  if (doc.appState !== undefined) out.app_state = sortKeys(doc.appState);
  return out;
}

/** Canonical text: GenesisDoc field order, app_state keys sorted, two-space indent, final newline. */
export function genesisToString(doc: GenesisDoc, names: Names = SPEC_NAMES): string {
  return JSON.stringify(genesisToJson(doc, names), null, 2) + '\n';
}

/** The raw app_state bytes handed to InitChain: canonical JSON, empty when absent. */
export function appStateBytes(doc: GenesisDoc): Uint8Array {
  return doc.appState === undefined ? new Uint8Array() : new TextEncoder().encode(JSON.stringify(sortKeys(doc.appState)));
}

export function writeGenesis(path: string, doc: GenesisDoc, names: Names = SPEC_NAMES): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, genesisToString(doc, names));
}

