/**
 * CometBFT JSON renderings of the core types, as the RPC returns them (cometbft libs/json
 * "cmtjson" over types/*.go struct tags; cometbft/cometbft:libs/json/encoder.go, cometbft/cometbft:rpc/core/types/responses.goshapes checked against
 * test/fixtures/cometbft-v038-kvstore.json):
 * - int64/uint64 are strings, int32/uint32/enums are numbers;
 * - HexBytes/Address are upper-case hex ("" when empty), []byte is base64 (null when empty/nil);
 * - time.Time is RFC3339Nano in UTC with trailing fraction zeros trimmed;
 * - keys follow Go struct field order (JSON.stringify keeps insertion order).
 * Registered type names (pub keys, evidence) are passed in by the caller, never hard-coded here.
 */
import { SignedMsgType, type Block, type BlockID, type BlockMeta, type Commit, type CommitSig, type Header, type Proposal, type Vote } from './block.js';
import type { ConsensusParams } from './params.js';
import type { PubKey, Validator } from './validator.js';
import type { MerkleProof } from '../crypto/merkle.js';
import type { Part } from './codec.js';
import { readEvidenceOneof, readTimestamp, readVote } from './codec.js';
import { ProtoReader, WIRE_LEN, WIRE_VARINT, expectWire } from './proto.js';
import { hexUpper } from '../crypto/bytes.js';

const NS_PER_S = 1_000_000_000n;

/** A time string that is not RFC 3339, or a value the renderers cannot show. */
export class JSONFormatError extends Error {
  constructor(readonly code: 'INVALID_TIME' | 'INVALID_VOTE_TYPE' | 'INVALID_EVIDENCE', message: string) {
    super(message);
    this.name = 'JSONFormatError';
  }
}
const SECONDS_PER_DAY = 86400n;

// ---------------------------------------------------------------------------------------------
// Bytes

export { hexUpper };

/** []byte: base64, null when nil/empty (gogoproto leaves absent bytes nil). */
export function base64OrNull(b: Uint8Array | null | undefined): string | null {
  if (!b || b.length === 0) return null;
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
}

export function base64(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
}

/** cmtbytes.Fingerprint: the first 6 bytes, zero-padded, as upper-case hex. */
export function fingerprint(b: Uint8Array): string {
  const f = new Uint8Array(6);
  f.set(b.subarray(0, 6));
  return hexUpper(f);
}

// ---------------------------------------------------------------------------------------------
// Time

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's algorithm).
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/**
 * Go's t.UTC().Format(time.RFC3339Nano): `2006-01-02T15:04:05.999999999Z`, fraction trimmed of
 * trailing zeros and dropped when zero. Go's zero time gives 0001-01-01T00:00:00Z.
 */
export function formatTime(ns: bigint): string {
  let secs = ns / NS_PER_S;
  let nanos = ns - secs * NS_PER_S;
  if (nanos < 0n) {
    secs -= 1n;
    nanos += NS_PER_S;
  }
  let days = secs / SECONDS_PER_DAY;
  let sod = secs - days * SECONDS_PER_DAY;
  if (sod < 0n) {
    days -= 1n;
    sod += SECONDS_PER_DAY;
  }
  const [y, mo, d] = civilFromDays(Number(days));
  const s = Number(sod);
  let out = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(Math.floor(s / 3600), 2)}:${pad(Math.floor((s % 3600) / 60), 2)}:${pad(s % 60, 2)}`;
  if (nanos !== 0n) out += '.' + pad(Number(nanos), 9).replace(/0+$/, '');
  return out + 'Z';
}

const TIME_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Parses RFC 3339 (as Go's time.Parse(time.RFC3339Nano)) to nanoseconds since the epoch. */
export function parseTime(s: string): bigint {
  const m = TIME_RE.exec(s);
  if (!m) throw new JSONFormatError('INVALID_TIME', `invalid RFC 3339 time ${JSON.stringify(s)}`);
  const [y, mo, d, h, mi, se] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12) throw new JSONFormatError('INVALID_TIME', `invalid month in ${s}`);
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const mdays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1]!;
  if (d < 1 || d > mdays || h > 23 || mi > 59 || se > 59) throw new JSONFormatError('INVALID_TIME', `time out of range in ${s}`);
  let secs = BigInt(daysFromCivil(y, mo, d)) * SECONDS_PER_DAY + BigInt(h * 3600 + mi * 60 + se);
  if (m[9]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) throw new JSONFormatError('INVALID_TIME', `invalid zone offset in ${s}`);
    const off = BigInt(oh * 3600 + om * 60);
    secs = m[9] === '+' ? secs - off : secs + off;
  }
  const frac = m[7] ? BigInt(m[7].padEnd(9, '0')) : 0n;
  return secs * NS_PER_S + frac;
}

// ---------------------------------------------------------------------------------------------
// Keys and validators

/** A pub key type name, or a function choosing one per key (for mixed key types). */
export type PubKeyTypeName = string | ((pk: PubKey) => string);

export function pubKeyJSON(pk: PubKey, typeName: PubKeyTypeName): { type: string; value: string } {
  return { type: typeof typeName === 'string' ? typeName : typeName(pk), value: base64(pk.bytes) };
}

export function validatorJSON(v: Validator, pubKeyTypeName: PubKeyTypeName) {
  return {
    address: hexUpper(v.address),
    pub_key: pubKeyJSON(v.pubKey, pubKeyTypeName),
    voting_power: v.votingPower.toString(),
    proposer_priority: v.proposerPriority.toString(),
  };
}

/**
 * ValidatorSet JSON: `{validators, proposer}` (types/validator_set.go; the cached total power is
 * unexported and not shown). An empty set has a nil validator slice and no proposer in Go, so
 * both render as null (dump_consensus_state's last_validators at the initial height).
 */
export function validatorSetJSON(
  vs: { validators: readonly Validator[]; proposerOrNull(): Validator | null },
  pubKeyTypeName: PubKeyTypeName,
) {
  const p = vs.proposerOrNull();
  return {
    validators: vs.validators.length === 0 ? null : vs.validators.map((v) => validatorJSON(v, pubKeyTypeName)),
    proposer: p ? validatorJSON(p, pubKeyTypeName) : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Merkle proofs and parts

/**
 * merkle.Proof JSON (crypto/merkle/proof.go): total/index are int64 strings, hashes base64.
 * `aunts` is `omitempty`, but cmtjson omits only nil slices and CometBFT's own proofs carry an
 * empty non-nil one, so `[]` is shown (as tx?prove=true responses do).
 */
export function merkleProofJSON(p: MerkleProof) {
  return {
    total: String(p.total),
    index: String(p.index),
    leaf_hash: base64(p.leafHash),
    aunts: p.aunts.map(base64),
  };
}

/** types.Part JSON: index number, bytes upper-case hex, proof. */
export function partJSON(p: Part) {
  return { index: p.index, bytes: hexUpper(p.bytes), proof: merkleProofJSON(p.proof) };
}

// ---------------------------------------------------------------------------------------------
// Blocks

export function blockIdJSON(id: BlockID) {
  return {
    hash: hexUpper(id.hash),
    parts: { total: id.partSetHeader.total, hash: hexUpper(id.partSetHeader.hash) },
  };
}

export function headerJSON(h: Header) {
  // version.Consensus fields are `omitempty`.
  const version: { block?: string; app?: string } = {};
  if (h.version.block !== 0n) version.block = h.version.block.toString();
  if (h.version.app !== 0n) version.app = h.version.app.toString();
  return {
    version,
    chain_id: h.chainId,
    height: h.height.toString(),
    time: formatTime(h.time),
    last_block_id: blockIdJSON(h.lastBlockId),
    last_commit_hash: hexUpper(h.lastCommitHash),
    data_hash: hexUpper(h.dataHash),
    validators_hash: hexUpper(h.validatorsHash),
    next_validators_hash: hexUpper(h.nextValidatorsHash),
    consensus_hash: hexUpper(h.consensusHash),
    app_hash: hexUpper(h.appHash),
    last_results_hash: hexUpper(h.lastResultsHash),
    evidence_hash: hexUpper(h.evidenceHash),
    proposer_address: hexUpper(h.proposerAddress),
  };
}

export function commitSigJSON(s: CommitSig) {
  return {
    block_id_flag: s.blockIdFlag as number,
    validator_address: hexUpper(s.validatorAddress),
    timestamp: formatTime(s.timestamp),
    signature: base64OrNull(s.signature),
  };
}

export function commitJSON(c: Commit) {
  return {
    height: c.height.toString(),
    round: c.round,
    block_id: blockIdJSON(c.blockId),
    signatures: c.signatures.map(commitSigJSON),
  };
}

export function voteJSON(v: Vote) {
  return {
    type: v.type as number,
    height: v.height.toString(),
    round: v.round,
    block_id: blockIdJSON(v.blockId),
    timestamp: formatTime(v.timestamp),
    validator_address: hexUpper(v.validatorAddress),
    validator_index: v.validatorIndex,
    signature: base64OrNull(v.signature),
    extension: base64OrNull(v.extension),
    extension_signature: base64OrNull(v.extensionSignature),
  };
}

/** Proposal JSON; its Type field has no json tag in Go, hence the capital "Type". */
export function proposalJSON(p: Proposal) {
  return {
    Type: p.type as number,
    height: p.height.toString(),
    round: p.round,
    pol_round: p.polRound,
    block_id: blockIdJSON(p.blockId),
    timestamp: formatTime(p.timestamp),
    signature: base64OrNull(p.signature),
  };
}

/** Registered names for evidence JSON (e.g. `<brand>/DuplicateVoteEvidence`), from the names registry. */
export interface EvidenceTypeNames {
  duplicateVote: string;
  lightClientAttack: string;
}

/**
 * Renders one encoded Evidence item as `{type, value}`. DuplicateVoteEvidence is fully rendered
 * (types/evidence.go: vote_a, vote_b, then the untagged TotalVotingPower, ValidatorPower,
 * Timestamp); LightClientAttackEvidence is not produced by this node and renders its raw proto
 * as base64 under `value`.
 */
export function evidenceJSON(ev: Uint8Array, names: EvidenceTypeNames): { type: string; value: unknown } {
  const inner = readEvidenceOneof(ev);
  if (inner === null) throw new JSONFormatError('INVALID_EVIDENCE', 'evidence has no known evidence type');
  const { field, body } = inner;
  if (field === 1) return { type: names.duplicateVote, value: duplicateVoteEvidenceJSON(body) };
  return { type: names.lightClientAttack, value: base64(body.buf.subarray(body.pos, body.end)) };
}

function duplicateVoteEvidenceJSON(r: ProtoReader) {
  let voteA: Vote | null = null;
  let voteB: Vote | null = null;
  let total = 0n;
  let power = 0n;
  let ts: bigint | null = null;
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    switch (f) {
      case 1:
        expectWire(f, wt, WIRE_LEN);
        voteA = readVote(r.sub());
        break;
      case 2:
        expectWire(f, wt, WIRE_LEN);
        voteB = readVote(r.sub());
        break;
      case 3:
        expectWire(f, wt, WIRE_VARINT);
        total = r.int64();
        break;
      case 4:
        expectWire(f, wt, WIRE_VARINT);
        power = r.int64();
        break;
      case 5:
        expectWire(f, wt, WIRE_LEN);
        ts = readTimestamp(r.sub());
        break;
      default:
        r.skip(wt);
    }
  }
  return {
    vote_a: voteA ? voteJSON(voteA) : null,
    vote_b: voteB ? voteJSON(voteB) : null,
    TotalVotingPower: total.toString(),
    ValidatorPower: power.toString(),
    Timestamp: formatTime(ts ?? -62135596800n * NS_PER_S),
  };
}

export interface BlockJSONOptions {
  /** Names for evidence items; without them evidence items render as base64 proto. */
  evidenceNames?: EvidenceTypeNames;
}

export function blockJSON(b: Block, opts: BlockJSONOptions = {}) {
  const names = opts.evidenceNames;
  return {
    header: headerJSON(b.header),
    data: { txs: b.data.txs.map(base64) },
    evidence: { evidence: b.evidence.map((ev) => (names ? evidenceJSON(ev, names) : base64(ev))) },
    last_commit: commitJSON(b.lastCommit),
  };
}

export function blockMetaJSON(bm: BlockMeta) {
  return {
    block_id: blockIdJSON(bm.blockId),
    block_size: String(bm.blockSize),
    header: headerJSON(bm.header),
    num_txs: String(bm.numTxs),
  };
}

export function consensusParamsJSON(p: ConsensusParams) {
  return {
    block: { max_bytes: p.block.maxBytes.toString(), max_gas: p.block.maxGas.toString() },
    evidence: {
      max_age_num_blocks: p.evidence.maxAgeNumBlocks.toString(),
      max_age_duration: p.evidence.maxAgeDuration.toString(),
      max_bytes: p.evidence.maxBytes.toString(),
    },
    validator: { pub_key_types: [...p.validator.pubKeyTypes] },
    version: { app: p.version.app.toString() },
    abci: { vote_extensions_enable_height: p.abci.voteExtensionsEnableHeight.toString() },
  };
}

// ---------------------------------------------------------------------------------------------
// Strings for dump_consensus_state

/** The proto enum name of a SignedMsgType (its goproto stringer). */
export function signedMsgTypeName(t: SignedMsgType): string {
  switch (t) {
    case SignedMsgType.Prevote:
      return 'SIGNED_MSG_TYPE_PREVOTE';
    case SignedMsgType.Precommit:
      return 'SIGNED_MSG_TYPE_PRECOMMIT';
    case SignedMsgType.Proposal:
      return 'SIGNED_MSG_TYPE_PROPOSAL';
    case SignedMsgType.Unknown:
      return 'SIGNED_MSG_TYPE_UNKNOWN';
    default:
      return String(t);
  }
}

/**
 * Vote.String (types/vote.go):
 * `Vote{idx:ADDR6 H/RR/SIGNED_MSG_TYPE_X(X) BLOCK6 SIG6 EXT6 @ time}`; `nil-Vote` for null.
 */
export function voteString(vote: Vote | null | undefined): string {
  if (!vote) return 'nil-Vote';
  let typeString: string;
  if (vote.type === SignedMsgType.Prevote) typeString = 'Prevote';
  else if (vote.type === SignedMsgType.Precommit) typeString = 'Precommit';
  else throw new JSONFormatError('INVALID_VOTE_TYPE', `unknown vote type ${vote.type}`);
  const round = vote.round < 0 ? `-${pad(-vote.round, 1)}` : pad(vote.round, 2);
  return (
    `Vote{${vote.validatorIndex}:${fingerprint(vote.validatorAddress)} ${vote.height}/${round}/` +
    `${signedMsgTypeName(vote.type)}(${typeString}) ${fingerprint(vote.blockId.hash)} ` +
    `${fingerprint(vote.signature)} ${fingerprint(vote.extension)} @ ${formatTime(vote.timestamp)}}`
  );
}

/** BlockID.String: `HASH:total:PSH6`. */
export function blockIdString(id: BlockID): string {
  return `${hexUpper(id.hash)}:${id.partSetHeader.total}:${fingerprint(id.partSetHeader.hash)}`;
}

/** Proposal.String (types/proposal.go): `Proposal{H/R (BLOCKID, POL) SIG6 @ time}`. */
export function proposalString(p: Proposal): string {
  return `Proposal{${p.height}/${p.round} (${blockIdString(p.blockId)}, ${p.polRound}) ${fingerprint(p.signature)} @ ${formatTime(p.timestamp)}}`;
}
