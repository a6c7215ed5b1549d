/**
 * Duplicate-vote evidence: the type, its proto encoding as a block's `Evidence` item, the checks
 * that need no chain state (ValidateBasic) and its `String()` form used in error texts (the ABCI
 * Misbehavior it becomes is in src/abci/evidence.ts) (cometbft: types/evidence.go, types/vote.go ValidateBasic,
 * proto/tendermint/types/evidence.proto).
 *
 * Wire shape: `Evidence{oneof: 1 duplicate_vote_evidence, 2 light_client_attack_evidence}` and
 * `DuplicateVoteEvidence{1 vote_a, 2 vote_b, 3 total_voting_power, 4 validator_power,
 * 5 timestamp (non-nullable stdtime)}`. The hash of an item is sha256 of the inner message
 * (hashing.ts evidenceItemHash). chaind produces and verifies duplicate-vote evidence only;
 * light-client-attack evidence is recognised (height and time) but never verified.
 */
import { compareBytes as compareBytesLex } from '../crypto/bytes.js';
import { blockIdKeyBytes, SignedMsgType, ZERO_TIME, type BlockID, type Vote } from './block.js';
import { readEvidenceOneof, readTimestamp, readVote, writeTimestampField, writeVoteBody } from './codec.js';
import { blockIdString, voteString } from './json.js';
import { ProtoDecodeError, ProtoReader, ProtoWriter, WIRE_LEN, WIRE_VARINT, expectWire, uvarintSize } from './proto.js';

/** tmhash.Size */
const HASH_SIZE = 32;
/** crypto.AddressSize */
const ADDRESS_SIZE = 20;
/** types.MaxSignatureSize: max(ed25519.SignatureSize, 64). */
const MAX_SIGNATURE_SIZE = 64;

/**
 * types.DuplicateVoteEvidence. The votes are null when absent (a nil pointer in Go), which only
 * ValidateBasic may see: every other function takes evidence that passed it.
 */
export interface DuplicateVoteEvidence {
  voteA: Vote | null;
  voteB: Vote | null;
  totalVotingPower: bigint;
  validatorPower: bigint;
  /** The time of the block at the votes' height. */
  timestamp: bigint;
}

/** Duplicate-vote evidence after ValidateBasic: both votes present. */
export type CheckedDuplicateVoteEvidence = DuplicateVoteEvidence & { voteA: Vote; voteB: Vote };

/** A decoded block evidence item. Light-client-attack evidence keeps only what the pool keys by. */
export type EvidenceItem =
  | ({ kind: 'DuplicateVoteEvidence' } & DuplicateVoteEvidence)
  | { kind: 'LightClientAttackEvidence'; commonHeight: bigint; timestamp: bigint };

// ---------------------------------------------------------------------------------------------
// Proto

/** The proto `Evidence` wrapper around one DuplicateVoteEvidence: what Block.evidence holds. */
export function encodeDuplicateVoteEvidence(e: DuplicateVoteEvidence): Uint8Array {
  const w = new ProtoWriter(512);
  const outer = w.fork(1);
  if (e.voteA !== null) {
    const m = w.fork(1);
    writeVoteBody(w, e.voteA);
    w.ldelim(m);
  }
  if (e.voteB !== null) {
    const m = w.fork(2);
    writeVoteBody(w, e.voteB);
    w.ldelim(m);
  }
  w.int64Field(3, e.totalVotingPower);
  w.int64Field(4, e.validatorPower);
  writeTimestampField(w, 5, e.timestamp);
  w.ldelim(outer);
  return w.finish();
}

function readDuplicateVoteEvidence(r: ProtoReader): DuplicateVoteEvidence {
  const e: DuplicateVoteEvidence = { voteA: null, voteB: null, totalVotingPower: 0n, validatorPower: 0n, timestamp: ZERO_TIME };
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1 || f === 2) {
      expectWire(f, wt, WIRE_LEN);
      const v = readVote(r.sub());
      if (f === 1) e.voteA = v;
      else e.voteB = v;
    } else if (f === 3 || f === 4) {
      expectWire(f, wt, WIRE_VARINT);
      if (f === 3) e.totalVotingPower = r.int64();
      else e.validatorPower = r.int64();
    } else if (f === 5) {
      expectWire(f, wt, WIRE_LEN);
      e.timestamp = readTimestamp(r.sub());
    } else r.skip(wt);
  }
  return e;
}

/** LightClientAttackEvidence: 2 common_height, 5 timestamp are all chaind reads of it. */
function readLightClientAttackHeightTime(r: ProtoReader): { commonHeight: bigint; timestamp: bigint } {
  let commonHeight = 0n;
  let timestamp = ZERO_TIME;
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 2) {
      expectWire(f, wt, WIRE_VARINT);
      commonHeight = r.int64();
    } else if (f === 5) {
      expectWire(f, wt, WIRE_LEN);
      timestamp = readTimestamp(r.sub());
    } else r.skip(wt);
  }
  return { commonHeight, timestamp };
}

/** Decodes one proto `Evidence` item; ProtoDecodeError when malformed or of no known type. */
export function decodeEvidenceItem(bytes: Uint8Array): EvidenceItem {
  const inner = readEvidenceOneof(bytes);
  if (inner === null) throw new ProtoDecodeError('evidence is not a known evidence type');
  return inner.field === 1
    ? { kind: 'DuplicateVoteEvidence', ...readDuplicateVoteEvidence(inner.body) }
    : { kind: 'LightClientAttackEvidence', ...readLightClientAttackHeightTime(inner.body) };
}

/** Evidence.Height(): the votes' height, or a light-client attack's common height. */
export function evidenceItemHeight(e: EvidenceItem): bigint {
  return e.kind === 'DuplicateVoteEvidence' ? (e.voteA?.height ?? 0n) : e.commonHeight;
}

/**
 * EvidenceList.ByteSize() of a list of encoded items: each is a length-delimited field 1 of
 * EvidenceList, one tag byte + length varint + bytes.
 */
export function evidenceListByteSize(items: readonly Uint8Array[]): bigint {
  let n = 0;
  for (const ev of items) n += 1 + uvarintSize(ev.length) + ev.length;
  return BigInt(n);
}

// ---------------------------------------------------------------------------------------------
// ValidateBasic and String

const isZeroBlockId = (id: BlockID) => id.hash.length === 0 && id.partSetHeader.total === 0 && id.partSetHeader.hash.length === 0;
const isCompleteBlockId = (id: BlockID) => id.hash.length === HASH_SIZE && id.partSetHeader.total > 0 && id.partSetHeader.hash.length === HASH_SIZE;

/** ValidateHash. */
function hashError(h: Uint8Array): string | null {
  return h.length > 0 && h.length !== HASH_SIZE ? `expected size to be ${HASH_SIZE} bytes, got ${h.length} bytes` : null;
}

/** Vote.ValidateBasic; returns the error text or null. */
export function voteValidateBasic(v: Vote): string | null {
  if (v.type !== SignedMsgType.Prevote && v.type !== SignedMsgType.Precommit) return 'invalid Type';
  if (v.height <= 0n) return 'negative or zero Height';
  if (v.round < 0) return 'negative Round';
  if (hashError(v.blockId.hash) !== null) return 'wrong BlockID: wrong Hash';
  const psh = hashError(v.blockId.partSetHeader.hash);
  if (psh !== null) return `wrong BlockID: wrong PartSetHeader: wrong Hash: ${psh}`;
  if (!isZeroBlockId(v.blockId) && !isCompleteBlockId(v.blockId)) return `blockID must be either empty or complete, got: ${blockIdString(v.blockId)}`;
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
export function voteStringSafe(v: Vote | null): string {
  try {
    return voteString(v);
  } catch {
    return `Vote{${v?.validatorIndex}:? ${v?.height}/${v?.round}/${v?.type}}`;
  }
}

/** DuplicateVoteEvidence.String. */
export function duplicateVoteEvidenceString(e: DuplicateVoteEvidence): string {
  return `DuplicateVoteEvidence{VoteA: ${voteStringSafe(e.voteA)}, VoteB: ${voteStringSafe(e.voteB)}}`;
}

/** DuplicateVoteEvidence.ValidateBasic; returns the error text or null. */
export function duplicateVoteValidateBasic(e: DuplicateVoteEvidence): string | null {
  if (e.voteA === null || e.voteB === null) return `one or both of the votes are empty ${voteStringSafe(e.voteA)}, ${voteStringSafe(e.voteB)}`;
  const a = voteValidateBasic(e.voteA);
  if (a !== null) return `invalid VoteA: ${a}`;
  const b = voteValidateBasic(e.voteB);
  if (b !== null) return `invalid VoteB: ${b}`;
  // Votes are ordered by BlockID.Key(), strictly.
  if (compareBytesLex(blockIdKeyBytes(e.voteA.blockId), blockIdKeyBytes(e.voteB.blockId)) >= 0) return 'duplicate votes in invalid order';
  return null;
}

// ---------------------------------------------------------------------------------------------
// Construction and ABCI

/**
 * NewDuplicateVoteEvidence: the two votes in BlockID.Key() order, the validator's power and the
 * set's total at that height, and the block time. Null when the voter is not in the set (Go
 * returns an error there).
 */
export function newDuplicateVoteEvidence(
  a: Vote,
  b: Vote,
  blockTime: bigint,
  valSet: { getByAddress(addr: Uint8Array): { validator: { votingPower: bigint } } | null; totalVotingPower(): bigint },
): CheckedDuplicateVoteEvidence | null {
  const found = valSet.getByAddress(a.validatorAddress);
  if (found === null) return null;
  const [voteA, voteB] = compareBytesLex(blockIdKeyBytes(a.blockId), blockIdKeyBytes(b.blockId)) < 0 ? [a, b] : [b, a];
  return { voteA, voteB, totalVotingPower: valSet.totalVotingPower(), validatorPower: found.validator.votingPower, timestamp: blockTime };
}
