/**
 * broadcast_evidence (cometbft: rpc/core/evidence.go; types/evidence.go; evidence/pool.go
 * AddEvidence; evidence/verify.go; libs/json decoder.go for the type-wrapped argument).
 *
 * The steps and their error texts are CometBFT's:
 * 1. no argument (or `null`): `no evidence was provided`;
 * 2. the cmtjson decoding of `{"type":"consensus/DuplicateVoteEvidence","value":{…}}` (either the
 *    spec or the upstream type name): a failure is a parameter error, as in CometBFT;
 * 3. `evidence.ValidateBasic failed: …` (DuplicateVoteEvidence and Vote ValidateBasic,
 *    src/types/evidence.ts);
 * 4. the evidence pool's AddEvidence (src/evidence/pool.ts), which verifies against the chain
 *    (src/evidence/verify.ts): `failed to add evidence: Invalid evidence: <reason>. Evidence: <ev>`
 *    (header present, same time as the block, not expired, validator in the set at that height,
 *    same H/R/S and address, different BlockIDs, powers, signatures).
 * Evidence that passes is kept pending until a block commits it; the answer is
 * ResultBroadcastEvidence `{"hash": <Evidence.Hash(), base64 as Go encodes []byte>}`. Evidence
 * already pending or already committed is answered the same way and not added again, as CometBFT
 * does. Light-client-attack evidence is decoded and its basic fields checked, but chaind cannot
 * verify it against light blocks, so the pool refuses it:
 * `failed to add evidence: can't add evidence to pending list: chaind does not verify light client
 * attack evidence`.
 */
import { goJsonKind, goQuote, goSyntaxError } from '../../server/gojson.js';
import { ZERO_TIME, type BlockID, type Vote } from '../../../types/block.js';
import { duplicateVoteValidateBasic, type CheckedDuplicateVoteEvidence, type DuplicateVoteEvidence } from '../../../types/evidence.js';
import { parseTime } from '../../../types/json.js';
import { goBase64Decode, goHexDecode, goParseInt } from '../../jsonrpc/cometbft-params.js';
import type { EvidenceRpc } from '../context.js';
import { RpcError } from '../../jsonrpc/envelope.js';
import { route, type Route, type RouteContext } from '../../jsonrpc/methods.js';

/** Go's int32 range, for the enum/int32 fields of a Vote. */
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** A vote as cmtjson decodes it: zero values for absent fields. */
export interface DecodedVote extends Vote {}

export interface DuplicateVoteEvidenceValue extends DuplicateVoteEvidence {
  kind: 'DuplicateVoteEvidence';
  voteA: DecodedVote | null;
  voteB: DecodedVote | null;
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
// ValidateBasic (types/evidence.go; the duplicate-vote checks live in src/types/evidence.ts)

/** Evidence.ValidateBasic; returns the error text or null. */
export function evidenceValidateBasic(e: EvidenceValue): string | null {
  if (e.kind === 'DuplicateVoteEvidence') return duplicateVoteValidateBasic(e);
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

/** The error CometBFT's parameter decoding gives on each transport (server.ts does the same). */
function paramError(rc: RouteContext, msg: string): RpcError {
  if (rc.transport === 'uri') return new RpcError('INVALID_PARAMS', `error converting http params to arguments: ${msg}`);
  if (rc.transport === 'websocket') return new RpcError('INTERNAL_ERROR', `error converting json params to arguments: ${msg}`);
  return new RpcError('INVALID_PARAMS', `error converting json params to arguments: ${msg}`);
}

/** ResultBroadcastEvidence: `Hash []byte`, which Go's JSON writes as base64. */
export interface BroadcastEvidenceResult {
  hash: string;
}

/** BroadcastEvidence for an already-parsed argument (`undefined`/`null` = not given). */
export function broadcastEvidence(ctx: EvidenceRpc, arg: unknown, rc: RouteContext): BroadcastEvidenceResult {
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
  if (ev.kind !== 'DuplicateVoteEvidence') {
    ctx.logger.info('light client attack evidence refused: chaind does not verify it', { common_height: ev.commonHeight });
    throw new Error("failed to add evidence: can't add evidence to pending list: chaind does not verify light client attack evidence");
  }
  let hash: Uint8Array;
  try {
    // ValidateBasic passed, so both votes are there.
    hash = ctx.evidencePool.addEvidence(ev as CheckedDuplicateVoteEvidence);
  } catch (e) {
    throw new Error(`failed to add evidence: ${(e as Error).message}`);
  }
  return { hash: Buffer.from(hash).toString('base64') };
}

export function evidenceRoutes(ctx: EvidenceRpc): Route[] {
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
            // encoding/json's text, not V8's (the URI transport checks the syntax before this).
            throw paramError(rc, goSyntaxError(evidence) ?? (e as Error).message);
          }
        }
        return broadcastEvidence(ctx, arg, rc);
      },
    }),
  ];
}
