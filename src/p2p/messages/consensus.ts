/**
 * The consensus reactor's messages (cometbft/cometbft:proto/tendermint/consensus/types.proto at
 * v0.38; conversion rules cometbft/cometbft:consensus/msgs.go), on channels 0x20 State
 * (NewRoundStep, NewValidBlock, HasVote, VoteSetMaj23), 0x21 Data (Proposal, ProposalPOL,
 * BlockPart), 0x22 Vote (Vote) and 0x23 VoteSetBits (VoteSetBits):
 *
 *   Message{oneof sum: new_round_step=1, new_valid_block=2, proposal=3, proposal_pol=4,
 *           block_part=5, vote=6, has_vote=7, vote_set_maj23=8, vote_set_bits=9}
 *   NewRoundStep{height int64=1, round int32=2, step uint32=3, seconds_since_start_time int64=4,
 *                last_commit_round int32=5}
 *   NewValidBlock{height=1, round=2, block_part_set_header PartSetHeader=3 (non-nullable),
 *                 block_parts BitArray=4 (nullable), is_commit bool=5}
 *   Proposal{proposal tendermint.types.Proposal=1 (non-nullable)}
 *   ProposalPOL{height=1, proposal_pol_round int32=2, proposal_pol BitArray=3 (non-nullable)}
 *   BlockPart{height=1, round=2, part tendermint.types.Part=3 (non-nullable)}
 *   Vote{vote tendermint.types.Vote=1 (nullable; absent is an error, as VoteFromProto(nil))}
 *   HasVote{height=1, round=2, type SignedMsgType=3, index int32=4}
 *   VoteSetMaj23{height=1, round=2, type=3, block_id BlockID=4 (non-nullable)}
 *   VoteSetBits{height=1, round=2, type=3, block_id=4 (non-nullable), votes BitArray=5 (non-nullable)}
 *
 * The member types reuse the codecs of src/types (Proposal, Vote, Part, PartSetHeader, BlockID,
 * BitArray). Decoding checks the wire format only; validateConsensusMessage is CometBFT's
 * ValidateBasic of each message (checks against the round state, e.g. a bit array's size against
 * the validator set, stay with the reactor).
 * (`HasProposalBlockPart = 10` is on CometBFT's main branch only, cometbft/cometbft#904; its v0.38
 * backport #1705 was closed unmerged. It reads here as an unknown message.)
 */
import { BitArray } from '../../types/bitarray.js';
import { BLOCK_PART_SIZE_BYTES, type BlockID, type PartSetHeader, type Proposal, type SignedMsgType, type Vote } from '../../types/block.js';
import { voteValidateBasic } from '../../types/evidence.js';
import { MAX_BLOCK_SIZE_BYTES, validatePart } from '../../types/partset.js';
import {
  emptyBlockId,
  readBitArray,
  readBlockId,
  readPart,
  readPartSetHeader,
  readProposal,
  readVote,
  writeBitArrayBody,
  writeBlockIdField,
  writePartBody,
  writePartSetHeaderBody,
  writeProposalBody,
  writeVoteBody,
  type Part,
} from '../../types/codec.js';
import { ProtoDecodeError, ProtoReader, type ProtoWriter, WIRE_LEN, WIRE_VARINT, expectWire } from '../../types/proto.js';
import { readOneof, writeOneof } from './oneof.js';

/** Channel IDs of the consensus reactor (cometbft/cometbft:consensus/reactor.go). */
export const STATE_CHANNEL = 0x20;
export const DATA_CHANNEL = 0x21;
export const VOTE_CHANNEL = 0x22;
export const VOTE_SET_BITS_CHANNEL = 0x23;

export interface NewRoundStepMessage {
  type: 'NewRoundStep';
  height: bigint;
  round: number;
  /** RoundStepType (1 NewHeight … 8 Commit). */
  step: number;
  secondsSinceStartTime: bigint;
  lastCommitRound: number;
}

export interface NewValidBlockMessage {
  type: 'NewValidBlock';
  height: bigint;
  round: number;
  blockPartSetHeader: PartSetHeader;
  /** Size 0 stands for Go's nil *BitArray (the field is then omitted). */
  blockParts: BitArray;
  isCommit: boolean;
}

export interface ProposalMessage {
  type: 'Proposal';
  proposal: Proposal;
}

export interface ProposalPOLMessage {
  type: 'ProposalPOL';
  height: bigint;
  proposalPolRound: number;
  proposalPol: BitArray;
}

export interface BlockPartMessage {
  type: 'BlockPart';
  height: bigint;
  round: number;
  part: Part;
}

export interface VoteMessage {
  type: 'Vote';
  vote: Vote;
}

export interface HasVoteMessage {
  type: 'HasVote';
  height: bigint;
  round: number;
  voteType: SignedMsgType;
  index: number;
}

export interface VoteSetMaj23Message {
  type: 'VoteSetMaj23';
  height: bigint;
  round: number;
  voteType: SignedMsgType;
  blockId: BlockID;
}

export interface VoteSetBitsMessage {
  type: 'VoteSetBits';
  height: bigint;
  round: number;
  voteType: SignedMsgType;
  blockId: BlockID;
  votes: BitArray;
}

export type ConsensusMessage =
  | NewRoundStepMessage
  | NewValidBlockMessage
  | ProposalMessage
  | ProposalPOLMessage
  | BlockPartMessage
  | VoteMessage
  | HasVoteMessage
  | VoteSetMaj23Message
  | VoteSetBitsMessage;

/** Oneof field number of each message. */
export const CONSENSUS_FIELD = {
  NewRoundStep: 1,
  NewValidBlock: 2,
  Proposal: 3,
  ProposalPOL: 4,
  BlockPart: 5,
  Vote: 6,
  HasVote: 7,
  VoteSetMaj23: 8,
  VoteSetBits: 9,
} as const satisfies Record<ConsensusMessage['type'], number>;

/** The channel each message travels on (cometbft/cometbft:consensus/reactor.go). */
export function consensusChannelOf(m: ConsensusMessage): number {
  switch (m.type) {
    case 'NewRoundStep':
    case 'NewValidBlock':
    case 'HasVote':
    case 'VoteSetMaj23':
      return STATE_CHANNEL;
    case 'Proposal':
    case 'ProposalPOL':
    case 'BlockPart':
      return DATA_CHANNEL;
    case 'Vote':
      return VOTE_CHANNEL;
    case 'VoteSetBits':
      return VOTE_SET_BITS_CHANNEL;
  }
}

function sub(w: ProtoWriter, field: number, body: () => void): void {
  const m = w.fork(field);
  body();
  w.ldelim(m);
}

function writeBody(w: ProtoWriter, m: ConsensusMessage): void {
  switch (m.type) {
    case 'NewRoundStep':
      w.int64Field(1, m.height);
      w.int32Field(2, m.round);
      w.uint32Field(3, m.step);
      w.int64Field(4, m.secondsSinceStartTime);
      w.int32Field(5, m.lastCommitRound);
      return;
    case 'NewValidBlock':
      w.int64Field(1, m.height);
      w.int32Field(2, m.round);
      sub(w, 3, () => writePartSetHeaderBody(w, m.blockPartSetHeader));
      if (m.blockParts.size > 0) sub(w, 4, () => writeBitArrayBody(w, m.blockParts));
      w.boolField(5, m.isCommit);
      return;
    case 'Proposal':
      sub(w, 1, () => writeProposalBody(w, m.proposal));
      return;
    case 'ProposalPOL':
      w.int64Field(1, m.height);
      w.int32Field(2, m.proposalPolRound);
      sub(w, 3, () => writeBitArrayBody(w, m.proposalPol));
      return;
    case 'BlockPart':
      w.int64Field(1, m.height);
      w.int32Field(2, m.round);
      sub(w, 3, () => writePartBody(w, m.part));
      return;
    case 'Vote':
      sub(w, 1, () => writeVoteBody(w, m.vote));
      return;
    case 'HasVote':
      w.int64Field(1, m.height);
      w.int32Field(2, m.round);
      w.int32Field(3, m.voteType);
      w.int32Field(4, m.index);
      return;
    case 'VoteSetMaj23':
      w.int64Field(1, m.height);
      w.int32Field(2, m.round);
      w.int32Field(3, m.voteType);
      writeBlockIdField(w, 4, m.blockId);
      return;
    case 'VoteSetBits':
      w.int64Field(1, m.height);
      w.int32Field(2, m.round);
      w.int32Field(3, m.voteType);
      writeBlockIdField(w, 4, m.blockId);
      sub(w, 5, () => writeBitArrayBody(w, m.votes));
      return;
  }
}

/** The wire bytes of a consensus message: proto `tendermint.consensus.Message`. */
export function encodeConsensusMessage(m: ConsensusMessage): Uint8Array {
  const hint = m.type === 'BlockPart' ? m.part.bytes.length + 64 + m.part.proof.aunts.length * 34 : 256;
  return writeOneof(CONSENSUS_FIELD[m.type], (w) => writeBody(w, m), hint);
}

/** Walks a message body: `on(field, wire)` reads the value or returns false to skip it. */
function fields(r: ProtoReader, on: (f: number, wt: number) => boolean): void {
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (!on(f, wt)) r.skip(wt);
  }
}

function varint(f: number, wt: number): void {
  expectWire(f, wt, WIRE_VARINT);
}

function len(f: number, wt: number): void {
  expectWire(f, wt, WIRE_LEN);
}

function readHeightRound(r: ProtoReader, f: number, wt: number, m: { height: bigint; round: number }): boolean {
  if (f === 1) {
    varint(f, wt);
    m.height = r.int64();
    return true;
  }
  if (f === 2) {
    varint(f, wt);
    m.round = r.int32();
    return true;
  }
  return false;
}

/** Decodes `tendermint.consensus.Message`; throws ProtoDecodeError for malformed bytes or no known member. */
export function decodeConsensusMessage(bytes: Uint8Array): ConsensusMessage {
  const { field, body: r } = readOneof(bytes, [1, 2, 3, 4, 5, 6, 7, 8, 9], 'consensus');
  switch (field) {
    case 1: {
      const m: NewRoundStepMessage = { type: 'NewRoundStep', height: 0n, round: 0, step: 0, secondsSinceStartTime: 0n, lastCommitRound: 0 };
      fields(r, (f, wt) => {
        if (readHeightRound(r, f, wt, m)) return true;
        if (f === 3) {
          varint(f, wt);
          m.step = r.uint32();
        } else if (f === 4) {
          varint(f, wt);
          m.secondsSinceStartTime = r.int64();
        } else if (f === 5) {
          varint(f, wt);
          m.lastCommitRound = r.int32();
        } else return false;
        return true;
      });
      return m;
    }
    case 2: {
      const m: NewValidBlockMessage = {
        type: 'NewValidBlock',
        height: 0n,
        round: 0,
        blockPartSetHeader: { total: 0, hash: new Uint8Array(0) },
        blockParts: new BitArray(0),
        isCommit: false,
      };
      fields(r, (f, wt) => {
        if (readHeightRound(r, f, wt, m)) return true;
        if (f === 3) {
          len(f, wt);
          m.blockPartSetHeader = readPartSetHeader(r.sub());
        } else if (f === 4) {
          len(f, wt);
          m.blockParts = readBitArray(r.sub());
        } else if (f === 5) {
          varint(f, wt);
          m.isCommit = r.bool();
        } else return false;
        return true;
      });
      return m;
    }
    case 3: {
      let proposal: Proposal | undefined;
      fields(r, (f, wt) => {
        if (f !== 1) return false;
        len(f, wt);
        proposal = readProposal(r.sub());
        return true;
      });
      // Non-nullable: an absent proposal is the zero Proposal, which ValidateBasic then refuses.
      return { type: 'Proposal', proposal: proposal ?? readProposal(new ProtoReader(new Uint8Array(0))) };
    }
    case 4: {
      const m: ProposalPOLMessage = { type: 'ProposalPOL', height: 0n, proposalPolRound: 0, proposalPol: new BitArray(0) };
      fields(r, (f, wt) => {
        if (f === 1) {
          varint(f, wt);
          m.height = r.int64();
        } else if (f === 2) {
          varint(f, wt);
          m.proposalPolRound = r.int32();
        } else if (f === 3) {
          len(f, wt);
          m.proposalPol = readBitArray(r.sub());
        } else return false;
        return true;
      });
      return m;
    }
    case 5: {
      const m: BlockPartMessage = {
        type: 'BlockPart',
        height: 0n,
        round: 0,
        part: { index: 0, bytes: new Uint8Array(0), proof: { total: 0, index: 0, leafHash: new Uint8Array(0), aunts: [] } },
      };
      fields(r, (f, wt) => {
        if (readHeightRound(r, f, wt, m)) return true;
        if (f !== 3) return false;
        len(f, wt);
        m.part = readPart(r.sub());
        return true;
      });
      return m;
    }
    case 6: {
      let vote: Vote | undefined;
      fields(r, (f, wt) => {
        if (f !== 1) return false;
        len(f, wt);
        vote = readVote(r.sub());
        return true;
      });
      if (vote === undefined) throw new ProtoDecodeError('consensus: Vote message without a vote');
      return { type: 'Vote', vote };
    }
    case 7: {
      const m: HasVoteMessage = { type: 'HasVote', height: 0n, round: 0, voteType: 0, index: 0 };
      fields(r, (f, wt) => {
        if (readHeightRound(r, f, wt, m)) return true;
        if (f === 3) {
          varint(f, wt);
          m.voteType = r.int32() as SignedMsgType;
        } else if (f === 4) {
          varint(f, wt);
          m.index = r.int32();
        } else return false;
        return true;
      });
      return m;
    }
    case 8:
    case 9: {
      const m = { height: 0n, round: 0, voteType: 0 as SignedMsgType, blockId: emptyBlockId(), votes: new BitArray(0) };
      fields(r, (f, wt) => {
        if (readHeightRound(r, f, wt, m)) return true;
        if (f === 3) {
          varint(f, wt);
          m.voteType = r.int32() as SignedMsgType;
        } else if (f === 4) {
          len(f, wt);
          m.blockId = readBlockId(r.sub());
        } else if (f === 5 && field === 9) {
          len(f, wt);
          m.votes = readBitArray(r.sub());
        } else return false;
        return true;
      });
      if (field === 8) return { type: 'VoteSetMaj23', height: m.height, round: m.round, voteType: m.voteType, blockId: m.blockId };
      return { type: 'VoteSetBits', ...m };
    }
    default:
      throw new ProtoDecodeError(`consensus: unknown message field ${field}`);
  }
}

// ---------------------------------------------------------------------------------------------
// ValidateBasic (cometbft/cometbft:consensus/reactor.go, the *Message ValidateBasic methods;
// types/proposal.go, types/block.go BlockID and PartSetHeader ValidateBasic)

/** types.MaxVotesCount. */
export const MAX_VOTES_COUNT = 10_000;
/** types.MaxBlockPartsCount: MaxBlockSizeBytes / BlockPartSizeBytes + 1. */
export const MAX_BLOCK_PARTS_COUNT = Math.floor(MAX_BLOCK_SIZE_BYTES / BLOCK_PART_SIZE_BYTES) + 1;
const HASH_SIZE = 32;
const MAX_SIGNATURE_SIZE = 64;

function hashError(h: Uint8Array): string | null {
  return h.length > 0 && h.length !== HASH_SIZE ? `wrong Hash: expected size to be ${HASH_SIZE} bytes, got ${h.length} bytes` : null;
}

function partSetHeaderError(p: PartSetHeader): string | null {
  return hashError(p.hash);
}

function blockIdError(id: BlockID): string | null {
  const h = hashError(id.hash);
  if (h !== null) return h;
  const p = partSetHeaderError(id.partSetHeader);
  return p === null ? null : `wrong PartSetHeader: ${p}`;
}

const isVoteType = (t: number) => t === SIGNED_PREVOTE || t === SIGNED_PRECOMMIT;
const SIGNED_PREVOTE = 1;
const SIGNED_PRECOMMIT = 2;
const SIGNED_PROPOSAL = 32;

/** Proposal.ValidateBasic (timestamps and the POL round against the round are the state's checks). */
export function proposalValidateBasic(p: Proposal): string | null {
  if (p.type !== SIGNED_PROPOSAL) return 'invalid Type';
  if (p.height < 0n) return 'negative Height';
  if (p.round < 0) return 'negative Round';
  if (p.polRound < -1) return 'negative POLRound (exception: -1)';
  const b = blockIdError(p.blockId);
  if (b !== null) return `wrong BlockID: ${b}`;
  const complete = p.blockId.hash.length === HASH_SIZE && p.blockId.partSetHeader.total > 0 && p.blockId.partSetHeader.hash.length === HASH_SIZE;
  if (!complete) return 'expected a complete, non-empty BlockID';
  if (p.signature.length === 0) return 'signature is missing';
  if (p.signature.length > MAX_SIGNATURE_SIZE) return `signature is too big (max: ${MAX_SIGNATURE_SIZE})`;
  return null;
}

/**
 * The message's ValidateBasic: an error text, or null when it may be handed to the consensus
 * state. A peer whose message fails is disconnected (cometbft: consensus/reactor.go Receive).
 */
export function validateConsensusMessage(m: ConsensusMessage): string | null {
  const hr = (h: bigint, r: number) => (h < 0n ? 'negative Height' : r < 0 ? 'negative Round' : null);
  switch (m.type) {
    case 'NewRoundStep':
      if (m.height < 0n) return 'negative Height';
      if (m.round < 0) return 'negative Round';
      if (m.step < 1 || m.step > 8) return 'invalid Step';
      // seconds_since_start_time may be negative (clock skew).
      if (m.lastCommitRound < -1) return 'invalid LastCommitRound (cannot be < -1)';
      return null;
    case 'NewValidBlock': {
      const e = hr(m.height, m.round);
      if (e !== null) return e;
      const p = partSetHeaderError(m.blockPartSetHeader);
      if (p !== null) return `wrong BlockPartSetHeader: ${p}`;
      if (m.blockParts.size === 0) return 'empty blockParts';
      if (m.blockParts.size !== m.blockPartSetHeader.total) {
        return `blockParts bit array size ${m.blockParts.size} not equal to BlockPartSetHeader.Total ${m.blockPartSetHeader.total}`;
      }
      if (m.blockParts.size > MAX_BLOCK_PARTS_COUNT) return `blockParts bit array is too big: ${m.blockParts.size}, max: ${MAX_BLOCK_PARTS_COUNT}`;
      return null;
    }
    case 'Proposal':
      return proposalValidateBasic(m.proposal);
    case 'ProposalPOL':
      if (m.height < 0n) return 'negative Height';
      if (m.proposalPolRound < 0) return 'negative ProposalPOLRound';
      if (m.proposalPol.size === 0) return 'empty ProposalPOL bit array';
      if (m.proposalPol.size > MAX_VOTES_COUNT) return `proposalPOL bit array is too big: ${m.proposalPol.size}, max: ${MAX_VOTES_COUNT}`;
      return null;
    case 'BlockPart': {
      const e = hr(m.height, m.round);
      if (e !== null) return e;
      const p = validatePart(m.part);
      return p === null ? null : `wrong Part: ${p}`;
    }
    case 'Vote':
      return voteValidateBasic(m.vote);
    case 'HasVote':
    case 'VoteSetMaj23':
    case 'VoteSetBits': {
      const e = hr(m.height, m.round);
      if (e !== null) return e;
      if (!isVoteType(m.voteType)) return 'invalid Type';
      if (m.type === 'HasVote') return m.index < 0 ? 'negative Index' : null;
      const b = blockIdError(m.blockId);
      if (b !== null) return `wrong BlockID: ${b}`;
      if (m.type === 'VoteSetBits' && m.votes.size > MAX_VOTES_COUNT) return `votes bit array is too big: ${m.votes.size}, max: ${MAX_VOTES_COUNT}`;
      return null;
    }
  }
}

/** NewRoundStepMessage.ValidateHeight: last_commit_round is -1 exactly at the initial height. */
export function validateNewRoundStepHeight(m: NewRoundStepMessage, initialHeight: bigint): string | null {
  if (m.height < initialHeight) return `invalid Height ${m.height} (lower than initial height ${initialHeight})`;
  if (m.height === initialHeight && m.lastCommitRound !== -1) {
    return `invalid LastCommitRound ${m.lastCommitRound} (must be -1 for initial height ${initialHeight})`;
  }
  if (m.height > initialHeight && m.lastCommitRound < 0) return `LastCommitRound can only be negative for initial height ${initialHeight}`;
  return null;
}
