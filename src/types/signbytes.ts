/**
 * Sign bytes of votes, proposals and vote extensions (cometbft: types/vote.go VoteSignBytes /
 * VoteExtensionSignBytes, types/proposal.go ProposalSignBytes, types/canonical.go,
 * proto/tendermint/types/canonical.proto). Each is protoio.MarshalDelimited of the canonical
 * message: `uvarint(len) || proto`.
 *
 * Canonical forms use sfixed64 for height and round so the signed layout has fixed-size
 * numbers; proto3 still omits them (and type) when zero. The CanonicalBlockID is omitted for a
 * zero BlockID (a nil vote); the timestamp is non-nullable and always written. The proto
 * package name never enters the bytes, so renaming the brand changes no signature.
 */
import { SignedMsgType, type BlockID, type Proposal, type Vote } from './block.js';
import { ProtoWriter, WIRE_LEN } from './proto.js';
import { writeTimestampField } from './codec.js';

const textEncoder = new TextEncoder();

// One scratch writer: sign bytes are built synchronously and copied out by finishDelimited.
const scratch = new ProtoWriter(256);
let cachedChainId = '';
let cachedChainIdBytes = new Uint8Array(0);

function chainIdBytes(chainId: string): Uint8Array {
  if (chainId !== cachedChainId) {
    cachedChainIdBytes = textEncoder.encode(chainId);
    cachedChainId = chainId;
  }
  return cachedChainIdBytes;
}

/** BlockID.IsZero: empty hash and a zero PartSetHeader. */
export function isZeroBlockId(id: BlockID): boolean {
  return id.hash.length === 0 && id.partSetHeader.total === 0 && id.partSetHeader.hash.length === 0;
}

/** CanonicalBlockID{1 hash, 2 CanonicalPartSetHeader{1 total, 2 hash}}; nothing for a zero BlockID. */
function writeCanonicalBlockId(w: ProtoWriter, field: number, id: BlockID): void {
  if (isZeroBlockId(id)) return;
  const m = w.fork(field);
  w.bytesField(1, id.hash);
  const m2 = w.fork(2);
  w.uint32Field(1, id.partSetHeader.total);
  w.bytesField(2, id.partSetHeader.hash);
  w.ldelim(m2);
  w.ldelim(m);
}

function writeChainId(w: ProtoWriter, field: number, chainId: string): void {
  if (chainId.length === 0) return;
  w.tag(field, WIRE_LEN);
  w.lenBytes(chainIdBytes(chainId));
}

/** The unprefixed CanonicalVote proto. */
export function canonicalVoteBytes(chainId: string, vote: Pick<Vote, 'type' | 'height' | 'round' | 'blockId' | 'timestamp'>): Uint8Array {
  const w = scratch;
  w.pos = 0;
  writeCanonicalVote(w, chainId, vote);
  return w.finish();
}

function writeCanonicalVote(w: ProtoWriter, chainId: string, vote: Pick<Vote, 'type' | 'height' | 'round' | 'blockId' | 'timestamp'>): void {
  w.int32Field(1, vote.type);
  w.sfixed64Field(2, vote.height);
  w.sfixed64Field(3, BigInt(vote.round));
  writeCanonicalBlockId(w, 4, vote.blockId);
  writeTimestampField(w, 5, vote.timestamp);
  writeChainId(w, 6, chainId);
}

/** VoteSignBytes: what a validator signs for a prevote or precommit. */
export function voteSignBytes(chainId: string, vote: Pick<Vote, 'type' | 'height' | 'round' | 'blockId' | 'timestamp'>): Uint8Array {
  const w = scratch;
  w.pos = 0;
  writeCanonicalVote(w, chainId, vote);
  return w.finishDelimited();
}

/**
 * ProposalSignBytes. The canonical type is always PROPOSAL (32) whatever the proposal carries;
 * pol_round is a plain int64 varint, so -1 takes 10 bytes.
 */
export function proposalSignBytes(chainId: string, proposal: Pick<Proposal, 'height' | 'round' | 'polRound' | 'blockId' | 'timestamp'>): Uint8Array {
  const w = scratch;
  w.pos = 0;
  w.int32Field(1, SignedMsgType.Proposal);
  w.sfixed64Field(2, proposal.height);
  w.sfixed64Field(3, BigInt(proposal.round));
  w.int64Field(4, BigInt(proposal.polRound));
  writeCanonicalBlockId(w, 5, proposal.blockId);
  writeTimestampField(w, 6, proposal.timestamp);
  writeChainId(w, 7, chainId);
  return w.finishDelimited();
}

/** VoteExtensionSignBytes: CanonicalVoteExtension{1 extension, 2 height, 3 round, 4 chain_id}. */
export function voteExtensionSignBytes(chainId: string, vote: Pick<Vote, 'extension' | 'height' | 'round'>): Uint8Array {
  const w = scratch;
  w.pos = 0;
  w.bytesField(1, vote.extension);
  w.sfixed64Field(2, vote.height);
  w.sfixed64Field(3, BigInt(vote.round));
  writeChainId(w, 4, chainId);
  return w.finishDelimited();
}
