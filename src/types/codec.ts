/**
 * Protobuf encoding of the CometBFT types, byte for byte as gogoproto marshals them
 * (cometbft: proto/tendermint/types/{types,block,validator,evidence}.proto, crypto/keys.proto,
 * crypto/proof.proto, version/types.proto; field numbers in cometbft/cometbft:proto/tendermint/types/types.proto).
 *
 * gogoproto rules that matter for byte equality:
 * - proto3 zero scalars and empty bytes/strings are omitted;
 * - `(gogoproto.nullable) = false` embedded messages are always written, even when empty
 *   (an empty BlockID is `12 00` inside its parent: its part_set_header is non-nullable);
 * - stdtime Timestamps are non-nullable everywhere here, so they are always written; Go's zero
 *   time is seconds -62135596800;
 * - repeated bytes and repeated non-nullable messages write every element, even empty ones.
 *
 * Decoders reject malformed wire data (truncation, bad varints, wrong wire types for known
 * fields, out-of-range timestamps) with ProtoDecodeError; unknown fields are skipped as proto3
 * requires. Semantic checks (ValidateBasic) are the callers' business.
 */
import {
  BlockIDFlag,
  ZERO_TIME,
  type Block,
  type BlockID,
  type BlockMeta,
  type Bytes,
  type Commit,
  type CommitSig,
  type ConsensusVersion,
  type Data,
  type Header,
  type PartSetHeader,
  type Proposal,
  type SignedMsgType,
  type Vote,
} from './block.js';
import type { PubKey, Validator } from './validator.js';
import {
  ProtoDecodeError,
  ProtoReader,
  ProtoWriter,
  WIRE_LEN,
  WIRE_VARINT,
  expectWire,
} from './proto.js';
import type { MerkleProof } from '../crypto/merkle.js';
import { BitArray } from './bitarray.js';
import { KeyError } from '../crypto/hash.js';

const NS_PER_S = 1_000_000_000n;
/** google.protobuf.Timestamp valid range: 0001-01-01 to 9999-12-31 (gogoproto/types/timestamp.go). */
const MIN_VALID_SECONDS = -62135596800n;
const MAX_VALID_SECONDS = 253402300800n;

const EMPTY = new Uint8Array(0);

// ---------------------------------------------------------------------------------------------
// Timestamp

/** Splits nanoseconds since the epoch into proto Timestamp {seconds, nanos} with 0 <= nanos < 1e9. */
export function timeToSecondsNanos(ns: bigint): { seconds: bigint; nanos: number } {
  let seconds = ns / NS_PER_S;
  let rem = ns - seconds * NS_PER_S;
  if (rem < 0n) {
    seconds -= 1n;
    rem += NS_PER_S;
  }
  return { seconds, nanos: Number(rem) };
}

/** Timestamp body (without tag): 1 seconds int64, 2 nanos int32. */
export function writeTimestampBody(w: ProtoWriter, ns: bigint): void {
  const { seconds, nanos } = timeToSecondsNanos(ns);
  w.int64Field(1, seconds);
  w.int32Field(2, nanos);
}

/** A non-nullable stdtime field: always written. */
export function writeTimestampField(w: ProtoWriter, field: number, ns: bigint): void {
  const m = w.fork(field);
  writeTimestampBody(w, ns);
  w.ldelim(m);
}

export function encodeTimestamp(ns: bigint): Uint8Array {
  const w = new ProtoWriter(16);
  writeTimestampBody(w, ns);
  return w.finish();
}

export function readTimestamp(r: ProtoReader): bigint {
  let seconds = 0n;
  let nanos = 0;
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1) {
      expectWire(f, wt, WIRE_VARINT);
      seconds = r.int64();
    } else if (f === 2) {
      expectWire(f, wt, WIRE_VARINT);
      nanos = r.int32();
    } else r.skip(wt);
  }
  if (seconds < MIN_VALID_SECONDS || seconds >= MAX_VALID_SECONDS) {
    throw new ProtoDecodeError(`timestamp seconds ${seconds} out of range`);
  }
  if (nanos < 0 || nanos >= 1e9) throw new ProtoDecodeError(`timestamp nanos ${nanos} out of range`);
  return seconds * NS_PER_S + BigInt(nanos);
}

export function decodeTimestamp(bytes: Uint8Array): bigint {
  return readTimestamp(new ProtoReader(bytes));
}

// ---------------------------------------------------------------------------------------------
// PartSetHeader, BlockID

export function writePartSetHeaderBody(w: ProtoWriter, psh: PartSetHeader): void {
  w.uint32Field(1, psh.total);
  w.bytesField(2, psh.hash);
}

export function writeBlockIdBody(w: ProtoWriter, id: BlockID): void {
  w.bytesField(1, id.hash);
  const m = w.fork(2);
  writePartSetHeaderBody(w, id.partSetHeader);
  w.ldelim(m);
}

export function writeBlockIdField(w: ProtoWriter, field: number, id: BlockID): void {
  const m = w.fork(field);
  writeBlockIdBody(w, id);
  w.ldelim(m);
}

export function encodePartSetHeader(psh: PartSetHeader): Uint8Array {
  const w = new ProtoWriter(48);
  writePartSetHeaderBody(w, psh);
  return w.finish();
}

export function encodeBlockId(id: BlockID): Uint8Array {
  const w = new ProtoWriter(80);
  writeBlockIdBody(w, id);
  return w.finish();
}

export function readPartSetHeader(r: ProtoReader): PartSetHeader {
  let total = 0;
  let hash: Bytes = EMPTY;
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1) {
      expectWire(f, wt, WIRE_VARINT);
      total = r.uint32();
    } else if (f === 2) {
      expectWire(f, wt, WIRE_LEN);
      hash = r.bytes();
    } else r.skip(wt);
  }
  return { total, hash };
}

export function readBlockId(r: ProtoReader): BlockID {
  let hash: Bytes = EMPTY;
  let partSetHeader: PartSetHeader = { total: 0, hash: EMPTY };
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1) {
      expectWire(f, wt, WIRE_LEN);
      hash = r.bytes();
    } else if (f === 2) {
      expectWire(f, wt, WIRE_LEN);
      partSetHeader = readPartSetHeader(r.sub());
    } else r.skip(wt);
  }
  return { hash, partSetHeader };
}

export function decodePartSetHeader(bytes: Uint8Array): PartSetHeader {
  return readPartSetHeader(new ProtoReader(bytes));
}

export function decodeBlockId(bytes: Uint8Array): BlockID {
  return readBlockId(new ProtoReader(bytes));
}

export function emptyBlockId(): BlockID {
  return { hash: EMPTY, partSetHeader: { total: 0, hash: EMPTY } };
}

// ---------------------------------------------------------------------------------------------
// Consensus version, Header

export function writeVersionBody(w: ProtoWriter, v: ConsensusVersion): void {
  w.uint64Field(1, v.block);
  w.uint64Field(2, v.app);
}

export function encodeConsensusVersion(v: ConsensusVersion): Uint8Array {
  const w = new ProtoWriter(24);
  writeVersionBody(w, v);
  return w.finish();
}

function readVersion(r: ProtoReader): ConsensusVersion {
  let block = 0n;
  let app = 0n;
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1) {
      expectWire(f, wt, WIRE_VARINT);
      block = r.uint64();
    } else if (f === 2) {
      expectWire(f, wt, WIRE_VARINT);
      app = r.uint64();
    } else r.skip(wt);
  }
  return { block, app };
}

export function writeHeaderBody(w: ProtoWriter, h: Header): void {
  let m = w.fork(1);
  writeVersionBody(w, h.version);
  w.ldelim(m);
  w.stringField(2, h.chainId);
  w.int64Field(3, h.height);
  writeTimestampField(w, 4, h.time);
  m = w.fork(5);
  writeBlockIdBody(w, h.lastBlockId);
  w.ldelim(m);
  w.bytesField(6, h.lastCommitHash);
  w.bytesField(7, h.dataHash);
  w.bytesField(8, h.validatorsHash);
  w.bytesField(9, h.nextValidatorsHash);
  w.bytesField(10, h.consensusHash);
  w.bytesField(11, h.appHash);
  w.bytesField(12, h.lastResultsHash);
  w.bytesField(13, h.evidenceHash);
  w.bytesField(14, h.proposerAddress);
}

export function encodeHeader(h: Header): Uint8Array {
  const w = new ProtoWriter(512);
  writeHeaderBody(w, h);
  return w.finish();
}

export function readHeader(r: ProtoReader): Header {
  const h: Header = {
    version: { block: 0n, app: 0n },
    chainId: '',
    height: 0n,
    time: ZERO_TIME,
    lastBlockId: emptyBlockId(),
    lastCommitHash: EMPTY,
    dataHash: EMPTY,
    validatorsHash: EMPTY,
    nextValidatorsHash: EMPTY,
    consensusHash: EMPTY,
    appHash: EMPTY,
    lastResultsHash: EMPTY,
    evidenceHash: EMPTY,
    proposerAddress: EMPTY,
  };
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    switch (f) {
      case 1:
        expectWire(f, wt, WIRE_LEN);
        h.version = readVersion(r.sub());
        break;
      case 2:
        expectWire(f, wt, WIRE_LEN);
        h.chainId = r.string();
        break;
      case 3:
        expectWire(f, wt, WIRE_VARINT);
        h.height = r.int64();
        break;
      case 4:
        expectWire(f, wt, WIRE_LEN);
        h.time = readTimestamp(r.sub());
        break;
      case 5:
        expectWire(f, wt, WIRE_LEN);
        h.lastBlockId = readBlockId(r.sub());
        break;
      case 6:
        expectWire(f, wt, WIRE_LEN);
        h.lastCommitHash = r.bytes();
        break;
      case 7:
        expectWire(f, wt, WIRE_LEN);
        h.dataHash = r.bytes();
        break;
      case 8:
        expectWire(f, wt, WIRE_LEN);
        h.validatorsHash = r.bytes();
        break;
      case 9:
        expectWire(f, wt, WIRE_LEN);
        h.nextValidatorsHash = r.bytes();
        break;
      case 10:
        expectWire(f, wt, WIRE_LEN);
        h.consensusHash = r.bytes();
        break;
      case 11:
        expectWire(f, wt, WIRE_LEN);
        h.appHash = r.bytes();
        break;
      case 12:
        expectWire(f, wt, WIRE_LEN);
        h.lastResultsHash = r.bytes();
        break;
      case 13:
        expectWire(f, wt, WIRE_LEN);
        h.evidenceHash = r.bytes();
        break;
      case 14:
        expectWire(f, wt, WIRE_LEN);
        h.proposerAddress = r.bytes();
        break;
      default:
        r.skip(wt);
    }
  }
  return h;
}

export function decodeHeader(bytes: Uint8Array): Header {
  return readHeader(new ProtoReader(bytes));
}

// ---------------------------------------------------------------------------------------------
// CommitSig, Commit

export function writeCommitSigBody(w: ProtoWriter, s: CommitSig): void {
  w.int32Field(1, s.blockIdFlag);
  w.bytesField(2, s.validatorAddress);
  writeTimestampField(w, 3, s.timestamp);
  w.bytesField(4, s.signature);
}

export function encodeCommitSig(s: CommitSig): Uint8Array {
  const w = new ProtoWriter(128);
  writeCommitSigBody(w, s);
  return w.finish();
}

export function readCommitSig(r: ProtoReader): CommitSig {
  const s: CommitSig = { blockIdFlag: BlockIDFlag.Unknown, validatorAddress: EMPTY, timestamp: ZERO_TIME, signature: EMPTY };
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    switch (f) {
      case 1:
        expectWire(f, wt, WIRE_VARINT);
        s.blockIdFlag = r.int32() as BlockIDFlag;
        break;
      case 2:
        expectWire(f, wt, WIRE_LEN);
        s.validatorAddress = r.bytes();
        break;
      case 3:
        expectWire(f, wt, WIRE_LEN);
        s.timestamp = readTimestamp(r.sub());
        break;
      case 4:
        expectWire(f, wt, WIRE_LEN);
        s.signature = r.bytes();
        break;
      default:
        r.skip(wt);
    }
  }
  return s;
}

export function decodeCommitSig(bytes: Uint8Array): CommitSig {
  return readCommitSig(new ProtoReader(bytes));
}

export function writeCommitBody(w: ProtoWriter, c: Commit): void {
  w.int64Field(1, c.height);
  w.int32Field(2, c.round);
  writeBlockIdField(w, 3, c.blockId);
  for (const s of c.signatures) {
    const m = w.fork(4);
    writeCommitSigBody(w, s);
    w.ldelim(m);
  }
}

export function encodeCommit(c: Commit): Uint8Array {
  const w = new ProtoWriter(128 + c.signatures.length * 112);
  writeCommitBody(w, c);
  return w.finish();
}

export function readCommit(r: ProtoReader): Commit {
  const c: Commit = { height: 0n, round: 0, blockId: emptyBlockId(), signatures: [] };
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    switch (f) {
      case 1:
        expectWire(f, wt, WIRE_VARINT);
        c.height = r.int64();
        break;
      case 2:
        expectWire(f, wt, WIRE_VARINT);
        c.round = r.int32();
        break;
      case 3:
        expectWire(f, wt, WIRE_LEN);
        c.blockId = readBlockId(r.sub());
        break;
      case 4:
        expectWire(f, wt, WIRE_LEN);
        c.signatures.push(readCommitSig(r.sub()));
        break;
      default:
        r.skip(wt);
    }
  }
  return c;
}

export function decodeCommit(bytes: Uint8Array): Commit {
  return readCommit(new ProtoReader(bytes));
}

/** The commit a block at the initial height carries: height 0, empty BlockID, no signatures. */
export function emptyCommit(): Commit {
  return { height: 0n, round: 0, blockId: emptyBlockId(), signatures: [] };
}

// ---------------------------------------------------------------------------------------------
// Data, Block

export function writeDataBody(w: ProtoWriter, d: Data): void {
  for (const tx of d.txs) w.bytesFieldAlways(1, tx);
}

export function writeBlockBody(w: ProtoWriter, b: Block): void {
  let m = w.fork(1);
  writeHeaderBody(w, b.header);
  w.ldelim(m);
  m = w.fork(2);
  writeDataBody(w, b.data);
  w.ldelim(m);
  // EvidenceList{1 repeated Evidence (non-nullable)}: the items are already-encoded Evidence.
  m = w.fork(3);
  for (const ev of b.evidence) w.bytesFieldAlways(1, ev);
  w.ldelim(m);
  // last_commit is a nullable pointer in the proto, but Block.ToProto always sets it.
  m = w.fork(4);
  writeCommitBody(w, b.lastCommit);
  w.ldelim(m);
}

export function encodeBlock(b: Block): Uint8Array {
  let size = 1024 + b.lastCommit.signatures.length * 112;
  for (const tx of b.data.txs) size += tx.length + 6;
  for (const ev of b.evidence) size += ev.length + 6;
  const w = new ProtoWriter(size);
  writeBlockBody(w, b);
  return w.finish();
}

function readData(r: ProtoReader): Data {
  const txs: Bytes[] = [];
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1) {
      expectWire(f, wt, WIRE_LEN);
      txs.push(r.bytes());
    } else r.skip(wt);
  }
  return { txs };
}

/** EvidenceList.evidence: the raw proto-encoded Evidence items. */
export function readEvidenceList(r: ProtoReader): Bytes[] {
  const out: Bytes[] = [];
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1) {
      expectWire(f, wt, WIRE_LEN);
      out.push(r.bytes());
    } else r.skip(wt);
  }
  return out;
}

/** EvidenceList{1 repeated Evidence}: every item written, as in a block's evidence field. */
export function encodeEvidenceList(items: readonly Bytes[]): Uint8Array {
  const w = new ProtoWriter(items.reduce((n, ev) => n + ev.length + 6, 16));
  for (const ev of items) w.bytesFieldAlways(1, ev);
  return w.finish();
}

export function decodeEvidenceList(bytes: Uint8Array): Bytes[] {
  return readEvidenceList(new ProtoReader(bytes));
}

/**
 * The concrete evidence inside one proto `Evidence` item, a oneof (1 duplicate_vote_evidence,
 * 2 light_client_attack_evidence; the last one set wins, as in any proto decoder), or null when it
 * holds neither. A wrong wire type is a ProtoDecodeError.
 */
export function readEvidenceOneof(bytes: Uint8Array): { field: 1 | 2; body: ProtoReader } | null {
  const r = new ProtoReader(bytes);
  let out: { field: 1 | 2; body: ProtoReader } | null = null;
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1 || f === 2) {
      expectWire(f, wt, WIRE_LEN);
      out = { field: f, body: r.sub() };
    } else r.skip(wt);
  }
  return out;
}

export function readBlock(r: ProtoReader): Block {
  let header: Header | undefined;
  let data: Data = { txs: [] };
  let evidence: Bytes[] = [];
  let lastCommit: Commit | undefined;
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    switch (f) {
      case 1:
        expectWire(f, wt, WIRE_LEN);
        header = readHeader(r.sub());
        break;
      case 2:
        expectWire(f, wt, WIRE_LEN);
        data = readData(r.sub());
        break;
      case 3:
        expectWire(f, wt, WIRE_LEN);
        evidence = readEvidenceList(r.sub());
        break;
      case 4:
        expectWire(f, wt, WIRE_LEN);
        lastCommit = readCommit(r.sub());
        break;
      default:
        r.skip(wt);
    }
  }
  if (header === undefined) header = readHeader(new ProtoReader(EMPTY));
  // cometbft BlockFromProto leaves LastCommit nil when absent; a block without one cannot be
  // hashed or validated there, so treat it as malformed input.
  if (lastCommit === undefined) throw new ProtoDecodeError('block has no last_commit');
  return { header, data, evidence, lastCommit };
}

export function decodeBlock(bytes: Uint8Array): Block {
  return readBlock(new ProtoReader(bytes));
}

// ---------------------------------------------------------------------------------------------
// Vote, Proposal

export function writeVoteBody(w: ProtoWriter, v: Vote): void {
  w.int32Field(1, v.type);
  w.int64Field(2, v.height);
  w.int32Field(3, v.round);
  writeBlockIdField(w, 4, v.blockId);
  writeTimestampField(w, 5, v.timestamp);
  w.bytesField(6, v.validatorAddress);
  w.int32Field(7, v.validatorIndex);
  w.bytesField(8, v.signature);
  w.bytesField(9, v.extension);
  w.bytesField(10, v.extensionSignature);
}

export function encodeVote(v: Vote): Uint8Array {
  const w = new ProtoWriter(256 + v.extension.length);
  writeVoteBody(w, v);
  return w.finish();
}

export function readVote(r: ProtoReader): Vote {
  const v: Vote = {
    type: 0 as SignedMsgType,
    height: 0n,
    round: 0,
    blockId: emptyBlockId(),
    timestamp: ZERO_TIME,
    validatorAddress: EMPTY,
    validatorIndex: 0,
    signature: EMPTY,
    extension: EMPTY,
    extensionSignature: EMPTY,
  };
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    switch (f) {
      case 1:
        expectWire(f, wt, WIRE_VARINT);
        v.type = r.int32() as SignedMsgType;
        break;
      case 2:
        expectWire(f, wt, WIRE_VARINT);
        v.height = r.int64();
        break;
      case 3:
        expectWire(f, wt, WIRE_VARINT);
        v.round = r.int32();
        break;
      case 4:
        expectWire(f, wt, WIRE_LEN);
        v.blockId = readBlockId(r.sub());
        break;
      case 5:
        expectWire(f, wt, WIRE_LEN);
        v.timestamp = readTimestamp(r.sub());
        break;
      case 6:
        expectWire(f, wt, WIRE_LEN);
        v.validatorAddress = r.bytes();
        break;
      case 7:
        expectWire(f, wt, WIRE_VARINT);
        v.validatorIndex = r.int32();
        break;
      case 8:
        expectWire(f, wt, WIRE_LEN);
        v.signature = r.bytes();
        break;
      case 9:
        expectWire(f, wt, WIRE_LEN);
        v.extension = r.bytes();
        break;
      case 10:
        expectWire(f, wt, WIRE_LEN);
        v.extensionSignature = r.bytes();
        break;
      default:
        r.skip(wt);
    }
  }
  return v;
}

export function decodeVote(bytes: Uint8Array): Vote {
  return readVote(new ProtoReader(bytes));
}

export function writeProposalBody(w: ProtoWriter, p: Proposal): void {
  w.int32Field(1, p.type);
  w.int64Field(2, p.height);
  w.int32Field(3, p.round);
  w.int32Field(4, p.polRound);
  writeBlockIdField(w, 5, p.blockId);
  writeTimestampField(w, 6, p.timestamp);
  w.bytesField(7, p.signature);
}

export function encodeProposal(p: Proposal): Uint8Array {
  const w = new ProtoWriter(256);
  writeProposalBody(w, p);
  return w.finish();
}

export function readProposal(r: ProtoReader): Proposal {
  const p: Proposal = {
    type: 0 as SignedMsgType.Proposal,
    height: 0n,
    round: 0,
    polRound: 0,
    blockId: emptyBlockId(),
    timestamp: ZERO_TIME,
    signature: EMPTY,
  };
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    switch (f) {
      case 1:
        expectWire(f, wt, WIRE_VARINT);
        // Kept as decoded so callers can reject a non-proposal type (ValidateBasic).
        p.type = r.int32() as SignedMsgType.Proposal;
        break;
      case 2:
        expectWire(f, wt, WIRE_VARINT);
        p.height = r.int64();
        break;
      case 3:
        expectWire(f, wt, WIRE_VARINT);
        p.round = r.int32();
        break;
      case 4:
        expectWire(f, wt, WIRE_VARINT);
        p.polRound = r.int32();
        break;
      case 5:
        expectWire(f, wt, WIRE_LEN);
        p.blockId = readBlockId(r.sub());
        break;
      case 6:
        expectWire(f, wt, WIRE_LEN);
        p.timestamp = readTimestamp(r.sub());
        break;
      case 7:
        expectWire(f, wt, WIRE_LEN);
        p.signature = r.bytes();
        break;
      default:
        r.skip(wt);
    }
  }
  return p;
}

export function decodeProposal(bytes: Uint8Array): Proposal {
  return readProposal(new ProtoReader(bytes));
}

// ---------------------------------------------------------------------------------------------
// PublicKey, Validator, SimpleValidator, ValidatorSet

/** crypto.PublicKey oneof: 1 ed25519, 2 secp256k1. A set oneof member is written even if empty. */
export function writePublicKeyBody(w: ProtoWriter, pk: PubKey): void {
  if (pk.type === 'ed25519') w.bytesFieldAlways(1, pk.bytes);
  else if (pk.type === 'secp256k1') w.bytesFieldAlways(2, pk.bytes);
  else throw new KeyError(`unsupported public key type ${(pk as PubKey).type}`);
}

export function encodePublicKey(pk: PubKey): Uint8Array {
  const w = new ProtoWriter(40);
  writePublicKeyBody(w, pk);
  return w.finish();
}

export function readPublicKey(r: ProtoReader): PubKey {
  let pk: PubKey | undefined;
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1) {
      expectWire(f, wt, WIRE_LEN);
      pk = { type: 'ed25519', bytes: r.bytes() };
    } else if (f === 2) {
      expectWire(f, wt, WIRE_LEN);
      pk = { type: 'secp256k1', bytes: r.bytes() };
    } else r.skip(wt);
  }
  if (!pk) throw new ProtoDecodeError('public key has no known key type');
  return pk;
}

export function decodePublicKey(bytes: Uint8Array): PubKey {
  return readPublicKey(new ProtoReader(bytes));
}

export function writeValidatorBody(w: ProtoWriter, v: Validator): void {
  w.bytesField(1, v.address);
  const m = w.fork(2);
  writePublicKeyBody(w, v.pubKey);
  w.ldelim(m);
  w.int64Field(3, v.votingPower);
  w.int64Field(4, v.proposerPriority);
}

export function encodeValidator(v: Validator): Uint8Array {
  const w = new ProtoWriter(96);
  writeValidatorBody(w, v);
  return w.finish();
}

export function readValidator(r: ProtoReader): Validator {
  let address: Bytes = EMPTY;
  let pubKey: PubKey | undefined;
  let votingPower = 0n;
  let proposerPriority = 0n;
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    switch (f) {
      case 1:
        expectWire(f, wt, WIRE_LEN);
        address = r.bytes();
        break;
      case 2:
        expectWire(f, wt, WIRE_LEN);
        pubKey = readPublicKey(r.sub());
        break;
      case 3:
        expectWire(f, wt, WIRE_VARINT);
        votingPower = r.int64();
        break;
      case 4:
        expectWire(f, wt, WIRE_VARINT);
        proposerPriority = r.int64();
        break;
      default:
        r.skip(wt);
    }
  }
  if (!pubKey) throw new ProtoDecodeError('validator has no public key');
  return { address, pubKey, votingPower, proposerPriority };
}

export function decodeValidator(bytes: Uint8Array): Validator {
  return readValidator(new ProtoReader(bytes));
}

/** SimpleValidator{1 pub_key, 2 voting_power}: the leaf of ValidatorsHash (types/validator.go Bytes). */
export function encodeSimpleValidator(pubKey: PubKey, votingPower: bigint): Uint8Array {
  const w = new ProtoWriter(48);
  const m = w.fork(1);
  writePublicKeyBody(w, pubKey);
  w.ldelim(m);
  w.int64Field(2, votingPower);
  return w.finish();
}

/** ValidatorSet as stored: validators, proposer, total_voting_power always 0 (types/validator_set.go ToProto). */
export function encodeValidatorSet(vs: { validators: readonly Validator[]; proposer: Validator | null | undefined }): Uint8Array {
  const w = new ProtoWriter(64 + vs.validators.length * 90);
  if (vs.validators.length === 0) return w.finish();
  for (const v of vs.validators) {
    const m = w.fork(1);
    writeValidatorBody(w, v);
    w.ldelim(m);
  }
  if (vs.proposer) {
    const m = w.fork(2);
    writeValidatorBody(w, vs.proposer);
    w.ldelim(m);
  }
  return w.finish();
}

export function decodeValidatorSet(bytes: Uint8Array): { validators: Validator[]; proposer: Validator | null } {
  const r = new ProtoReader(bytes);
  const validators: Validator[] = [];
  let proposer: Validator | null = null;
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1) {
      expectWire(f, wt, WIRE_LEN);
      validators.push(readValidator(r.sub()));
    } else if (f === 2) {
      expectWire(f, wt, WIRE_LEN);
      proposer = readValidator(r.sub());
    } else if (f === 3) {
      // total_voting_power: recomputed by the set, never trusted (types/validator_set.go).
      expectWire(f, wt, WIRE_VARINT);
      r.int64();
    } else r.skip(wt);
  }
  return { validators, proposer };
}

// ---------------------------------------------------------------------------------------------
// Proof, Part, BlockMeta

export interface Part {
  index: number;
  bytes: Bytes;
  proof: MerkleProof;
}

export function writeProofBody(w: ProtoWriter, p: MerkleProof): void {
  w.int64Field(1, BigInt(p.total));
  w.int64Field(2, BigInt(p.index));
  w.bytesField(3, p.leafHash);
  for (const a of p.aunts) w.bytesFieldAlways(4, a);
}

export function readProof(r: ProtoReader): MerkleProof {
  let total = 0;
  let index = 0;
  let leafHash: Bytes = EMPTY;
  const aunts: Bytes[] = [];
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    switch (f) {
      case 1: {
        expectWire(f, wt, WIRE_VARINT);
        const v = r.int64();
        if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) throw new ProtoDecodeError('proof total out of range');
        total = Number(v);
        break;
      }
      case 2: {
        expectWire(f, wt, WIRE_VARINT);
        const v = r.int64();
        if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) throw new ProtoDecodeError('proof index out of range');
        index = Number(v);
        break;
      }
      case 3:
        expectWire(f, wt, WIRE_LEN);
        leafHash = r.bytes();
        break;
      case 4:
        expectWire(f, wt, WIRE_LEN);
        aunts.push(r.bytes());
        break;
      default:
        r.skip(wt);
    }
  }
  return { total, index, leafHash, aunts };
}

export function writePartBody(w: ProtoWriter, p: Part): void {
  w.uint32Field(1, p.index);
  w.bytesField(2, p.bytes);
  const m = w.fork(3);
  writeProofBody(w, p.proof);
  w.ldelim(m);
}

export function encodePart(p: Part): Uint8Array {
  const w = new ProtoWriter(p.bytes.length + 64 + p.proof.aunts.length * 34);
  writePartBody(w, p);
  return w.finish();
}

export function readPart(r: ProtoReader): Part {
  let index = 0;
  let bytes: Bytes = EMPTY;
  let proof: MerkleProof = { total: 0, index: 0, leafHash: EMPTY, aunts: [] };
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1) {
      expectWire(f, wt, WIRE_VARINT);
      index = r.uint32();
    } else if (f === 2) {
      expectWire(f, wt, WIRE_LEN);
      bytes = r.bytes();
    } else if (f === 3) {
      expectWire(f, wt, WIRE_LEN);
      proof = readProof(r.sub());
    } else r.skip(wt);
  }
  return { index, bytes, proof };
}

export function decodePart(bytes: Uint8Array): Part {
  return readPart(new ProtoReader(bytes));
}

export function encodeBlockMeta(bm: BlockMeta): Uint8Array {
  const w = new ProtoWriter(640);
  writeBlockIdField(w, 1, bm.blockId);
  w.int64Field(2, BigInt(bm.blockSize));
  const m = w.fork(3);
  writeHeaderBody(w, bm.header);
  w.ldelim(m);
  w.int64Field(4, BigInt(bm.numTxs));
  return w.finish();
}

export function decodeBlockMeta(bytes: Uint8Array): BlockMeta {
  const r = new ProtoReader(bytes);
  let blockId = emptyBlockId();
  let blockSize = 0;
  let header: Header | undefined;
  let numTxs = 0;
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    switch (f) {
      case 1:
        expectWire(f, wt, WIRE_LEN);
        blockId = readBlockId(r.sub());
        break;
      case 2:
        expectWire(f, wt, WIRE_VARINT);
        blockSize = Number(r.int64());
        break;
      case 3:
        expectWire(f, wt, WIRE_LEN);
        header = readHeader(r.sub());
        break;
      case 4:
        expectWire(f, wt, WIRE_VARINT);
        numTxs = Number(r.int64());
        break;
      default:
        r.skip(wt);
    }
  }
  return { blockId, blockSize, header: header ?? readHeader(new ProtoReader(EMPTY)), numTxs };
}

// ---------------------------------------------------------------------------------------------
// BitArray (cometbft: proto/tendermint/libs/bits/types.proto BitArray{bits int64=1, elems repeated uint64=2})

/** The body of a BitArray: bits, then the elems packed (proto3 packs repeated varints). */
export function writeBitArrayBody(w: ProtoWriter, ba: BitArray): void {
  w.int64Field(1, BigInt(ba.size));
  const elems = ba.elems();
  if (elems.length === 0) return;
  const inner = new ProtoWriter(elems.length * 10);
  for (const e of elems) inner.uvarint64(e);
  w.bytesField(2, inner.finish());
}

export function encodeBitArray(ba: BitArray): Uint8Array {
  const w = new ProtoWriter(16 + ((ba.size + 63) >>> 6) * 10);
  writeBitArrayBody(w, ba);
  return w.finish();
}

/**
 * A BitArray from its proto form; elems may come packed or one by one. The elems must be exactly
 * the ceil(bits/64) words the size needs (cometbft/cometbft:libs/bits/bit_array.go ValidateBasic
 * refuses the mismatch), which also bounds the array by the message size.
 */
export function readBitArray(r: ProtoReader): BitArray {
  let bits = 0n;
  const elems: bigint[] = [];
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1) {
      expectWire(f, wt, WIRE_VARINT);
      bits = r.int64();
    } else if (f === 2) {
      if (wt === WIRE_LEN) {
        const p = r.sub();
        while (!p.eof()) elems.push(p.uint64());
      } else {
        expectWire(f, wt, WIRE_VARINT);
        elems.push(r.uint64());
      }
    } else r.skip(wt);
  }
  if (bits < 0n) throw new ProtoDecodeError(`bit array size ${bits} is negative`);
  const want = (bits + 63n) / 64n;
  if (BigInt(elems.length) !== want) throw new ProtoDecodeError(`bit array of ${bits} bits has ${elems.length} elems, want ${want}`);
  return BitArray.fromElems(Number(bits), elems);
}

export function decodeBitArray(bytes: Uint8Array): BitArray {
  return readBitArray(new ProtoReader(bytes));
}

// ---------------------------------------------------------------------------------------------
// ExtendedCommit (cometbft: proto/tendermint/types/types.proto; types/block.go ExtendedCommit)

/** A CommitSig plus the vote extension and its signature (ExtendedCommitSig fields 1–4 are CommitSig's). */
export interface ExtendedCommitSig extends CommitSig {
  extension: Bytes;
  extensionSignature: Bytes;
}

export interface ExtendedCommit {
  height: bigint;
  round: number;
  blockId: BlockID;
  extendedSignatures: ExtendedCommitSig[];
}

export function writeExtendedCommitBody(w: ProtoWriter, c: ExtendedCommit): void {
  w.int64Field(1, c.height);
  w.int32Field(2, c.round);
  writeBlockIdField(w, 3, c.blockId);
  for (const s of c.extendedSignatures) {
    const m = w.fork(4);
    writeCommitSigBody(w, s);
    w.bytesField(5, s.extension);
    w.bytesField(6, s.extensionSignature);
    w.ldelim(m);
  }
}

export function encodeExtendedCommit(c: ExtendedCommit): Uint8Array {
  const w = new ProtoWriter(128 + c.extendedSignatures.reduce((n, s) => n + 160 + s.extension.length, 0));
  writeExtendedCommitBody(w, c);
  return w.finish();
}

function readExtendedCommitSig(r: ProtoReader): ExtendedCommitSig {
  const start = r.pos;
  // Fields 1–4 through the CommitSig reader (it skips 5 and 6), then a second pass for 5 and 6.
  const base = readCommitSig(new ProtoReader(r.buf, start, r.end));
  let extension: Bytes = EMPTY;
  let extensionSignature: Bytes = EMPTY;
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 5) {
      expectWire(f, wt, WIRE_LEN);
      extension = r.bytes();
    } else if (f === 6) {
      expectWire(f, wt, WIRE_LEN);
      extensionSignature = r.bytes();
    } else r.skip(wt);
  }
  return { ...base, extension, extensionSignature };
}

export function readExtendedCommit(r: ProtoReader): ExtendedCommit {
  const c: ExtendedCommit = { height: 0n, round: 0, blockId: emptyBlockId(), extendedSignatures: [] };
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    switch (f) {
      case 1:
        expectWire(f, wt, WIRE_VARINT);
        c.height = r.int64();
        break;
      case 2:
        expectWire(f, wt, WIRE_VARINT);
        c.round = r.int32();
        break;
      case 3:
        expectWire(f, wt, WIRE_LEN);
        c.blockId = readBlockId(r.sub());
        break;
      case 4:
        expectWire(f, wt, WIRE_LEN);
        c.extendedSignatures.push(readExtendedCommitSig(r.sub()));
        break;
      default:
        r.skip(wt);
    }
  }
  return c;
}

export function decodeExtendedCommit(bytes: Uint8Array): ExtendedCommit {
  return readExtendedCommit(new ProtoReader(bytes));
}

/** ExtendedCommit.ToCommit: the commit without the extensions. */
export function extendedCommitToCommit(c: ExtendedCommit): Commit {
  return {
    height: c.height,
    round: c.round,
    blockId: c.blockId,
    signatures: c.extendedSignatures.map((s) => ({ blockIdFlag: s.blockIdFlag, validatorAddress: s.validatorAddress, timestamp: s.timestamp, signature: s.signature })),
  };
}
