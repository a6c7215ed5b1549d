/**
 * broadcast_evidence (cometbft: rpc/core/evidence.go; types/evidence.go; evidence/pool.go
 * AddEvidence; evidence/verify.go; libs/json decoder.go for the type-wrapped argument).
 *
 * The steps and their error texts are CometBFT's:
 * 1. no argument (or `null`): `no evidence was provided`;
 * 2. the cmtjson decoding of `{"type":"consensus/DuplicateVoteEvidence","value":{…}}` (either the
 *    spec or the upstream type name): a failure is a parameter error, as in CometBFT;
 * 3. `evidence.ValidateBasic failed: …` (DuplicateVoteEvidence and Vote ValidateBasic);
 * 4. AddEvidence → verify against the node's state: `failed to add evidence: Invalid evidence:
 *    <reason>. Evidence: <ev>` (header present, same time as the block, not expired, validator in
 *    the set at that height, same H/R/S and address, different BlockIDs, powers, signatures).
 *
 * chaind has no evidence pool yet (nothing would propose the evidence in a block), so evidence
 * that passes every check is answered with the pool's own failure text: `failed to add evidence:
 * can't add evidence to pending list: chaind has no evidence pool yet`. Light-client-attack
 * evidence is decoded and its basic fields checked; its light-client verification is not done.
 */
import { ed25519Address, ed25519Verify } from '../../../crypto/ed25519.js';
import { goJsonKind, goQuote } from '../../server/gojson.js';
import { SignedMsgType, ZERO_TIME, type BlockID, type Vote } from '../../../types/block.js';
import { blockIdString, formatTime, hexUpper, parseTime, signedMsgTypeName, voteString } from '../../../types/json.js';
import { voteSignBytes } from '../../../types/signbytes.js';
import { blockIdKeyBytes, compareBytesLex } from '../../../consensus/util.js';
import { goBase64Decode, goHexDecode, goParseInt } from '../params.js';
import type { NodeRpcContext } from '../context.js';
import { RpcError } from '../errors.js';
import { route, type Route, type RouteContext } from '../routes.js';

/** tmhash.Size */
const HASH_SIZE = 32;
/** crypto.AddressSize */
const ADDRESS_SIZE = 20;
/** types.MaxSignatureSize: max(ed25519.SignatureSize, 64). */
const MAX_SIGNATURE_SIZE = 64;
/** Go's int32 range, for the enum/int32 fields of a Vote. */
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** A vote as cmtjson decodes it: zero values for absent fields. */
export interface DecodedVote extends Vote {}

export interface DuplicateVoteEvidenceValue {
  kind: 'DuplicateVoteEvidence';
  voteA: DecodedVote | null;
  voteB: DecodedVote | null;
  totalVotingPower: bigint;
  validatorPower: bigint;
  timestamp: bigint;
}

export interface LightClientAttackEvidenceValue {
  kind: 'LightClientAttackEvidence';
  /** Null when `ConflictingBlock` is absent; `header` null when the block has no signed header. */
  conflictingBlock: { header: { height: bigint; chainId: string } | null } | null;
  commonHeight: bigint;
  totalVotingPower: bigint;
  timestamp: bigint;
}

export type EvidenceValue = DuplicateVoteEvidenceValue | LightClientAttackEvidenceValue;

/** A decoding failure: CometBFT reports it as a parameter error. */
export class EvidenceDecodeError extends Error {
  readonly code = 'EVIDENCE_DECODE';
}

const fail = (msg: string): never => {
  throw new EvidenceDecodeError(msg);
};

const raw = (v: unknown) => JSON.stringify(v) ?? 'null';

/** encoding/json into a Go struct/map: `json: cannot unmarshal K into Go value of type T`. */
function asObject(v: unknown, goType: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(`json: cannot unmarshal ${goJsonKind(v)} into Go value of type ${goType}`);
  return v as Record<string, unknown>;
}

/** int64 fields: libs/json wants a JSON string holding the number. */
function int64Field(v: unknown): bigint {
  if (v === undefined || v === null) return 0n;
  if (typeof v !== 'string') fail(`invalid 64-bit integer encoding ${goQuote(raw(v))}, expected string`);
  try {
    return goParseInt(raw(v).slice(1, -1), 'int64');
  } catch (e) {
    return fail((e as Error).message);
  }
}

/** int32 and enum fields: a JSON number that is an integer in range. */
function int32Field(v: unknown, goType: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number') fail(`json: cannot unmarshal ${goJsonKind(v)} into Go value of type ${goType}`);
  const n = v as number;
  if (!Number.isInteger(n) || n < INT32_MIN || n > INT32_MAX) fail(`json: cannot unmarshal number ${raw(n)} into Go value of type ${goType}`);
  return n;
}

function uint32Field(v: unknown): number {
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number') fail(`json: cannot unmarshal ${goJsonKind(v)} into Go value of type uint32`);
  const n = v as number;
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) fail(`json: cannot unmarshal number ${raw(n)} into Go value of type uint32`);
  return n;
}

/** HexBytes.UnmarshalJSON. */
function hexField(v: unknown): Uint8Array {
  if (v === undefined || v === null) return new Uint8Array(0);
  if (typeof v !== 'string') fail(`invalid hex string: ${raw(v)}`);
  try {
    return goHexDecode(raw(v).slice(1, -1));
  } catch (e) {
    return fail((e as Error).message);
  }
}

/** []byte: base64. */
function bytesField(v: unknown): Uint8Array {
  if (v === undefined || v === null) return new Uint8Array(0);
  if (typeof v !== 'string') fail(`json: cannot unmarshal ${goJsonKind(v)} into Go value of type []uint8`);
  try {
    return goBase64Decode(v as string);
  } catch (e) {
    return fail((e as Error).message);
  }
}

function stringField(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') fail(`json: cannot unmarshal ${goJsonKind(v)} into Go value of type string`);
  return v as string;
}

/** time.Time under libs/json: an RFC 3339 string in UTC ending in `Z`. */
function timeField(v: unknown): bigint {
  if (v === undefined || v === null) return ZERO_TIME;
  const text = raw(v);
  if (typeof v !== 'string') fail(`JSON time must be an RFC3339 string, but got ${goQuote(text)}`);
  if (!(v as string).endsWith('Z')) fail(`JSON time must be UTC and end with 'Z', but got ${goQuote(text)}`);
  try {
    return parseTime(v as string);
  } catch (e) {
    return fail(`parsing time ${text}: ${(e as Error).message}`);
  }
}

function blockIdField(v: unknown): BlockID {
  if (v === undefined || v === null) return { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } };
  const o = asObject(v, 'map[string]json.RawMessage');
  const parts = o['parts'] === undefined || o['parts'] === null ? {} : asObject(o['parts'], 'map[string]json.RawMessage');
  return { hash: hexField(o['hash']), partSetHeader: { total: uint32Field(parts['total']), hash: hexField(parts['hash']) } };
}

/** types.Vote (json tags of types/vote.go). */
function voteField(v: unknown): DecodedVote | null {
  if (v === undefined || v === null) return null;
  const o = asObject(v, 'map[string]json.RawMessage');
  return {
    type: int32Field(o['type'], 'types.SignedMsgType'),
    height: int64Field(o['height']),
    round: int32Field(o['round'], 'int32'),
    blockId: blockIdField(o['block_id']),
    timestamp: timeField(o['timestamp']),
    validatorAddress: hexField(o['validator_address']),
    validatorIndex: int32Field(o['validator_index'], 'int32'),
    signature: bytesField(o['signature']),
    extension: bytesField(o['extension']),
    extensionSignature: bytesField(o['extension_signature']),
  };
}

/**
 * decodeReflectInterface for the `evidence` argument. `null`/absent is nil (no evidence).
 * The type name may be the spec's or the upstream one (names registry).
 */
export function decodeEvidence(v: unknown, parseType: (s: string) => string | undefined): EvidenceValue | null {
  if (v === undefined || v === null) return null;
  const w = asObject(v, 'json.interfaceWrapper');
  const type = stringField(w['type']);
  if (type === '') fail('interface type cannot be empty');
  if (w['value'] === undefined) fail('interface value cannot be empty');
  const kind = parseType(type);
  const value = w['value'];
  if (kind === 'DuplicateVoteEvidence') {
    // `"value": null` decodes to the zero struct (a non-nil evidence with no votes).
    const o = value === null ? {} : asObject(value, 'map[string]json.RawMessage');
    return {
      kind,
      voteA: voteField(o['vote_a']),
      voteB: voteField(o['vote_b']),
      totalVotingPower: int64Field(o['TotalVotingPower']),
      validatorPower: int64Field(o['ValidatorPower']),
      timestamp: timeField(o['Timestamp']),
    };
  }
  if (kind === 'LightClientAttackEvidence') {
    // LightClientAttackEvidence has no json tags: Go field names.
    const o = value === null ? {} : asObject(value, 'map[string]json.RawMessage');
    let conflictingBlock: LightClientAttackEvidenceValue['conflictingBlock'] = null;
    if (o['ConflictingBlock'] !== undefined && o['ConflictingBlock'] !== null) {
      const lb = asObject(o['ConflictingBlock'], 'map[string]json.RawMessage');
      const sh = lb['signed_header'] === undefined || lb['signed_header'] === null ? null : asObject(lb['signed_header'], 'map[string]json.RawMessage');
      const h = sh === null || sh['header'] === undefined || sh['header'] === null ? null : asObject(sh['header'], 'map[string]json.RawMessage');
      conflictingBlock = { header: h === null ? null : { height: int64Field(h['height']), chainId: stringField(h['chain_id']) } };
    }
    return {
      kind,
      conflictingBlock,
      commonHeight: int64Field(o['CommonHeight']),
      totalVotingPower: int64Field(o['TotalVotingPower']),
      timestamp: timeField(o['Timestamp']),
    };
  }
  return fail(`unknown type ${goQuote(type)}`);
}

// ---------------------------------------------------------------------------------------------
// ValidateBasic (types/evidence.go, types/vote.go, types/block.go, types/part_set.go)

const isZeroBlockId = (id: BlockID) => id.hash.length === 0 && id.partSetHeader.total === 0 && id.partSetHeader.hash.length === 0;
const isCompleteBlockId = (id: BlockID) => id.hash.length === HASH_SIZE && id.partSetHeader.total > 0 && id.partSetHeader.hash.length === HASH_SIZE;

/** ValidateHash. */
function hashError(h: Uint8Array): string | null {
  return h.length > 0 && h.length !== HASH_SIZE ? `expected size to be ${HASH_SIZE} bytes, got ${h.length} bytes` : null;
}

/** Go's `%v` of a BlockID: `HASH:total:PSH6`. */
const blockIdV = (id: BlockID) => blockIdString(id);

/** Vote.ValidateBasic; returns the error text or null. */
export function voteValidateBasic(v: Vote): string | null {
  if (v.type !== SignedMsgType.Prevote && v.type !== SignedMsgType.Precommit) return 'invalid Type';
  if (v.height <= 0n) return 'negative or zero Height';
  if (v.round < 0) return 'negative Round';
  if (hashError(v.blockId.hash) !== null) return 'wrong BlockID: wrong Hash';
  const psh = hashError(v.blockId.partSetHeader.hash);
  if (psh !== null) return `wrong BlockID: wrong PartSetHeader: wrong Hash: ${psh}`;
  if (!isZeroBlockId(v.blockId) && !isCompleteBlockId(v.blockId)) return `blockID must be either empty or complete, got: ${blockIdV(v.blockId)}`;
  if (v.validatorAddress.length !== ADDRESS_SIZE) {
    return `expected ValidatorAddress size to be ${ADDRESS_SIZE} bytes, got ${v.validatorAddress.length} bytes`;
  }
  if (v.validatorIndex < 0) return 'negative ValidatorIndex';
  if (v.signature.length === 0) return 'signature is missing';
  if (v.signature.length > MAX_SIGNATURE_SIZE) return `signature is too big (max: ${MAX_SIGNATURE_SIZE})`;
  const zero = isZeroBlockId(v.blockId);
  if (v.type !== SignedMsgType.Precommit || zero) {
    if (v.extension.length > 0) return `unexpected vote extension; vote type ${v.type}, isNil ${zero}`;
    if (v.extensionSignature.length > 0) return 'unexpected vote extension signature';
  }
  if (v.type === SignedMsgType.Precommit && !zero) {
    if (v.extensionSignature.length > MAX_SIGNATURE_SIZE) return `vote extension signature is too big (max: ${MAX_SIGNATURE_SIZE})`;
    if (v.extensionSignature.length === 0 && v.extension.length !== 0) return 'vote extension signature absent on vote with extension';
  }
  return null;
}

/** Vote.String, which panics in Go on an unknown type; a placeholder keeps the message readable. */
function voteV(v: Vote | null): string {
  try {
    return voteString(v);
  } catch {
    return `Vote{${v?.validatorIndex}:? ${v?.height}/${v?.round}/${v?.type}}`;
  }
}

/** DuplicateVoteEvidence.String. */
export function duplicateVoteEvidenceString(e: DuplicateVoteEvidenceValue): string {
  return `DuplicateVoteEvidence{VoteA: ${voteV(e.voteA)}, VoteB: ${voteV(e.voteB)}}`;
}

/** Evidence.ValidateBasic; returns the error text or null. */
export function evidenceValidateBasic(e: EvidenceValue): string | null {
  if (e.kind === 'DuplicateVoteEvidence') {
    if (e.voteA === null || e.voteB === null) return `one or both of the votes are empty ${voteV(e.voteA)}, ${voteV(e.voteB)}`;
    const a = voteValidateBasic(e.voteA);
    if (a !== null) return `invalid VoteA: ${a}`;
    const b = voteValidateBasic(e.voteB);
    if (b !== null) return `invalid VoteB: ${b}`;
    // Votes are ordered by BlockID.Key(), strictly.
    if (compareBytesLex(blockIdKeyBytes(e.voteA.blockId), blockIdKeyBytes(e.voteB.blockId)) >= 0) return 'duplicate votes in invalid order';
    return null;
  }
  // LightClientAttackEvidence.ValidateBasic, up to the light block's own checks.
  if (e.conflictingBlock === null) return 'conflicting block is nil';
  if (e.conflictingBlock.header === null) return 'conflicting block missing header';
  if (e.totalVotingPower <= 0n) return 'negative or zero total voting power';
  if (e.commonHeight <= 0n) return 'negative or zero common height';
  if (e.commonHeight > e.conflictingBlock.header.height) {
    return `common height is ahead of the conflicting block height (${e.commonHeight} > ${e.conflictingBlock.header.height})`;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Verification against the node's state (evidence/verify.go)

/** Go's time.Time.String() of a UTC time: `2006-01-02 15:04:05.999999999 +0000 UTC`. */
export function goTimeString(ns: bigint): string {
  return formatTime(ns).replace('T', ' ').replace(/Z$/, ' +0000 UTC');
}

const blockIdEqual = (a: BlockID, b: BlockID) =>
  compareBytesLex(a.hash, b.hash) === 0 && a.partSetHeader.total === b.partSetHeader.total && compareBytesLex(a.partSetHeader.hash, b.partSetHeader.hash) === 0;

/** Pool.verify + VerifyDuplicateVote for duplicate-vote evidence; the reason or null. */
export function verifyDuplicateVote(ctx: Pick<NodeRpcContext, 'consensus' | 'storage'>, e: DuplicateVoteEvidenceValue): string | null {
  const voteA = e.voteA!;
  const voteB = e.voteB!;
  const state = ctx.consensus.getState();
  const height = state.lastBlockHeight;
  const evHeight = voteA.height;
  const meta = ctx.storage.blocks.loadBlockMeta(evHeight);
  if (meta === null) return `don't have header #${evHeight}`;
  const evTime = meta.header.time;
  if (e.timestamp !== evTime) {
    return `evidence has a different time to the block it is associated with (${goTimeString(e.timestamp)} != ${goTimeString(evTime)})`;
  }
  const p = state.consensusParams.evidence;
  if (state.lastBlockTime - evTime > p.maxAgeDuration && height - evHeight > p.maxAgeNumBlocks) {
    return (
      `evidence from height ${evHeight} (created at: ${goTimeString(evTime)}) is too old; min height is ${height - p.maxAgeNumBlocks} ` +
      `and evidence can not be older than ${goTimeString(state.lastBlockTime + p.maxAgeDuration)}`
    );
  }
  const valSet = ctx.storage.state.loadValidators(evHeight);
  if (valSet === null) return `could not find validator set for height #${evHeight}`;

  const found = valSet.getByAddress(voteA.validatorAddress);
  if (found === null) return `address ${hexUpper(voteA.validatorAddress)} was not a validator at height ${evHeight}`;
  const val = found.validator;
  if (voteA.height !== voteB.height || voteA.round !== voteB.round || voteA.type !== voteB.type) {
    return (
      `h/r/s does not match: ${voteA.height}/${voteA.round}/${signedMsgTypeName(voteA.type)} vs ` +
      `${voteB.height}/${voteB.round}/${signedMsgTypeName(voteB.type)}`
    );
  }
  if (compareBytesLex(voteA.validatorAddress, voteB.validatorAddress) !== 0) {
    return `validator addresses do not match: ${hexUpper(voteA.validatorAddress)} vs ${hexUpper(voteB.validatorAddress)}`;
  }
  if (blockIdEqual(voteA.blockId, voteB.blockId)) return `block IDs are the same (${blockIdV(voteA.blockId)}) - not a real duplicate vote`;
  if (val.pubKey.type === 'ed25519') {
    const derived = ed25519Address(val.pubKey.bytes);
    if (compareBytesLex(derived, voteA.validatorAddress) !== 0) {
      return `address (${hexUpper(voteA.validatorAddress)}) doesn't match pubkey (PubKeyEd25519{${hexUpper(val.pubKey.bytes)}} - ${hexUpper(derived)})`;
    }
  }
  if (val.votingPower !== e.validatorPower) {
    return `validator power from evidence and our validator set does not match (${e.validatorPower} != ${val.votingPower})`;
  }
  const total = valSet.totalVotingPower();
  if (total !== e.totalVotingPower) {
    return `total voting power from the evidence and our validator set does not match (${e.totalVotingPower} != ${total})`;
  }
  // Only ed25519 validator keys exist in chaind; another key type cannot verify here.
  const verify = (v: Vote) => val.pubKey.type === 'ed25519' && ed25519Verify(val.pubKey.bytes, voteSignBytes(state.chainId, v), v.signature);
  if (!verify(voteA)) return 'verifying VoteA: invalid signature';
  if (!verify(voteB)) return 'verifying VoteB: invalid signature';
  return null;
}

/** The error CometBFT's parameter decoding gives on each transport (server.ts does the same). */
function paramError(rc: RouteContext, msg: string): RpcError {
  if (rc.transport === 'uri') return new RpcError('INVALID_PARAMS', `error converting http params to arguments: ${msg}`);
  if (rc.transport === 'websocket') return new RpcError('INTERNAL_ERROR', `error converting json params to arguments: ${msg}`);
  return new RpcError('INVALID_PARAMS', `error converting json params to arguments: ${msg}`);
}

/** BroadcastEvidence for an already-parsed argument (`undefined`/`null` = not given). */
export function broadcastEvidence(ctx: NodeRpcContext, arg: unknown, rc: RouteContext): never {
  let ev: EvidenceValue | null;
  try {
    ev = decodeEvidence(arg, (s) => ctx.names.parseEvidenceType(s));
  } catch (e) {
    if (e instanceof EvidenceDecodeError) throw paramError(rc, e.message);
    throw e;
  }
  if (ev === null) throw new Error('no evidence was provided');
  const basic = evidenceValidateBasic(ev);
  if (basic !== null) throw new Error(`evidence.ValidateBasic failed: ${basic}`);
  if (ev.kind === 'DuplicateVoteEvidence') {
    const reason = verifyDuplicateVote(ctx, ev);
    if (reason !== null) throw new Error(`failed to add evidence: Invalid evidence: ${reason}. Evidence: ${duplicateVoteEvidenceString(ev)}`);
  }
  ctx.logger.info('evidence not kept: chaind has no evidence pool yet', { kind: ev.kind });
  throw new Error("failed to add evidence: can't add evidence to pending list: chaind has no evidence pool yet");
}

export function evidenceRoutes(ctx: NodeRpcContext): Route[] {
  return [
    route({
      name: 'broadcast_evidence',
      // `types.Evidence` in CometBFT: a type-wrapped JSON object, handed over as its JSON text.
      params: [{ name: 'evidence', type: 'json' }],
      handler: ({ evidence }, rc) => {
        let arg: unknown;
        if (evidence !== '') {
          try {
            arg = JSON.parse(evidence);
          } catch (e) {
            throw paramError(rc, (e as Error).message);
          }
        }
        return broadcastEvidence(ctx, arg, rc);
      },
    }),
  ];
}
