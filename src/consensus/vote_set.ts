/**
 * The votes of one height, round and type (cometbft: types/vote_set.go).
 *
 * Counting: a vote adds its validator's power to the set's sum and to its BlockID's sum. A
 * BlockID (or nil) has a two-thirds majority when its power is strictly more than 2/3 of the
 * total: 3*sum > 2*total, which is vote_set.go's `sum >= total*2/3 + 1` for integers. Four
 * validators of power 10 need 30 (three of them); powers 40/30/20/10 need 67.
 *
 * A validator's second vote for a different BlockID is not counted: the first one stays, and
 * the pair goes to `onConflict` as duplicate-vote evidence (state.go tryAddVote reports it to
 * the evidence pool). As CometBFT does, a conflicting vote is still counted for its BlockID when
 * a peer claimed a +2/3 majority for that BlockID (`setPeerMaj23`; vote_set.go addVerifiedVote
 * and SetPeerMaj23): here the claim is a peer's catch-up (ConsensusState.catchupPeer), which
 * sends the commit of a height we are still deciding. Without it a node holding one half of an
 * equivocation could never count the other half, and when that vote was needed for the commit
 * it stayed a height behind for good. Counting it is safe: each vote is verified, and +2/3
 * signed precommits for one BlockID are a commit whichever votes came first.
 *
 * Signatures are checked by the caller before addVote (ConsensusState verifies in batches);
 * `verifySignature` can be given for standalone use.
 */
import { BitArray } from '../types/bitarray.js';
import { BlockIDFlag, SignedMsgType, ZERO_TIME, type BlockID, type Commit, type CommitSig, type Vote } from '../types/block.js';
import type { ValidatorSet } from '../types/validator_set.js';
import { voteString } from '../types/json.js';
import type { DuplicateVoteEvidence } from './types.js';
import {
  blockIdEqual,
  blockIdKey,
  blockIdKeyBytes,
  bytesEqual,
  compareBytesLex,
  formatGoFixed2,
  hexUpper,
  isCompleteBlockId,
  isNilBlockId,
  isZeroBlockId,
  validatorAt,
} from './util.js';

export type VoteSetErrorCode =
  | 'VOTE_UNEXPECTED_STEP'
  | 'VOTE_INVALID_VALIDATOR_INDEX'
  | 'VOTE_INVALID_VALIDATOR_ADDRESS'
  | 'VOTE_INVALID_BLOCK_ID'
  | 'VOTE_INVALID_SIGNATURE'
  | 'VOTE_NON_DETERMINISTIC_SIGNATURE'
  | 'VOTE_CONFLICTING';

export interface AddVoteResult {
  added: boolean;
  /** Why a vote was refused; absent for an accepted vote or a plain duplicate. */
  code?: VoteSetErrorCode;
  error?: string;
  /** Set with code VOTE_CONFLICTING. */
  evidence?: DuplicateVoteEvidence;
}

export class VoteSetError extends Error {
  constructor(
    readonly code: VoteSetErrorCode | 'VOTE_SET_NO_MAJORITY' | 'VOTE_SET_WRONG_TYPE',
    message: string,
  ) {
    super(message);
    this.name = 'VoteSetError';
  }
}

interface BlockVotes {
  blockId: BlockID;
  bits: BitArray;
  sum: bigint;
  /** The votes counted for this BlockID, by validator index (they replace `votes` on a majority). */
  votes: (Vote | null)[];
  /** A peer claimed +2/3 for this BlockID: conflicting votes for it are counted too. */
  peerMaj23: boolean;
}

/** The most BlockIDs one vote set accepts +2/3 claims for (a few honest ones per round at most). */
const MAX_PEER_MAJ23_CLAIMS = 16;

export interface VoteSetOptions {
  /** Called for each conflicting pair (first vote stays counted). */
  onConflict?: (ev: DuplicateVoteEvidence) => void;
  /** Checks a vote's signature inside addVote; omit when the caller verified already. */
  verifySignature?: (vote: Vote, pubKey: Uint8Array) => boolean;
}

/**
 * The pair in CometBFT's evidence order: the vote with the smaller BlockID.Key() first
 * (types/evidence.go NewDuplicateVoteEvidence).
 */
export function duplicateVoteEvidence(a: Vote, b: Vote, validatorPower: bigint, totalVotingPower: bigint): DuplicateVoteEvidence {
  const c = compareBytesLex(blockIdKeyBytes(a.blockId), blockIdKeyBytes(b.blockId));
  const [voteA, voteB] = c < 0 ? [a, b] : [b, a];
  return { voteA, voteB, validatorPower, totalVotingPower };
}

export class VoteSet {
  readonly chainId: string;
  readonly height: bigint;
  readonly round: number;
  readonly type: SignedMsgType;
  readonly valSet: ValidatorSet;
  private readonly votes: (Vote | null)[];
  private readonly bits: BitArray;
  private sum = 0n;
  private maj23: BlockID | null = null;
  private readonly byBlock = new Map<string, BlockVotes>();
  private readonly total: bigint;
  private readonly opts: VoteSetOptions;

  constructor(chainId: string, height: bigint, round: number, type: SignedMsgType, valSet: ValidatorSet, opts: VoteSetOptions = {}) {
    if (height === 0n) throw new Error('Cannot make VoteSet for height == 0, doesn\'t make sense.');
    this.chainId = chainId;
    this.height = height;
    this.round = round;
    this.type = type;
    this.valSet = valSet;
    this.votes = new Array<Vote | null>(valSet.size).fill(null);
    this.bits = new BitArray(valSet.size);
    this.total = valSet.totalVotingPower();
    this.opts = opts;
  }

  get size(): number {
    return this.valSet.size;
  }

  /**
   * AddVote. Returns added=false without a code for an exact duplicate, with a code for a vote
   * that does not belong here or conflicts with an earlier one.
   */
  addVote(vote: Vote): AddVoteResult {
    const idx = vote.validatorIndex;
    if (vote.height !== this.height || vote.round !== this.round || vote.type !== this.type) {
      return {
        added: false,
        code: 'VOTE_UNEXPECTED_STEP',
        error: `expected ${this.height}/${this.round}/${this.type}, but got ${vote.height}/${vote.round}/${vote.type}`,
      };
    }
    const val = validatorAt(this.valSet, idx);
    if (val === null) {
      return {
        added: false,
        code: 'VOTE_INVALID_VALIDATOR_INDEX',
        error: `Cannot find validator ${idx} in valSet of size ${this.valSet.size}`,
      };
    }
    if (!bytesEqual(val.address, vote.validatorAddress)) {
      return {
        added: false,
        code: 'VOTE_INVALID_VALIDATOR_ADDRESS',
        error: `vote.ValidatorAddress (${hexUpper(vote.validatorAddress)}) does not match address (${hexUpper(val.address)}) for vote.ValidatorIndex (${idx})`,
      };
    }
    // Vote.ValidateBasic: a BlockID is either nil (empty) or complete.
    if (!isZeroBlockId(vote.blockId) && !isCompleteBlockId(vote.blockId)) {
      return { added: false, code: 'VOTE_INVALID_BLOCK_ID', error: 'blockID must be either empty or complete' };
    }
    const key = blockIdKey(vote.blockId);
    const existing = this.votes[idx] ?? null;
    if (existing !== null && blockIdKey(existing.blockId) === key) {
      if (bytesEqual(existing.signature, vote.signature)) return { added: false };
      return {
        added: false,
        code: 'VOTE_NON_DETERMINISTIC_SIGNATURE',
        error: `existing vote: ${voteString(existing)}; new vote: ${voteString(vote)}: non-deterministic signature`,
      };
    }
    if (this.opts.verifySignature && !this.opts.verifySignature(vote, val.pubKey.bytes)) {
      return { added: false, code: 'VOTE_INVALID_SIGNATURE', error: 'invalid signature' };
    }
    if (existing !== null) {
      const claimed = this.byBlock.get(key);
      // Already counted for a claimed BlockID (a resend): a plain duplicate.
      if (claimed !== undefined && claimed.bits.getIndex(idx)) return { added: false };
      const evidence = duplicateVoteEvidence(existing, vote, val.votingPower, this.total);
      this.opts.onConflict?.(evidence);
      const error = 'conflicting votes from validator ' + hexUpper(val.address);
      // vote_set.go addVerifiedVote: counted only for a BlockID a peer claimed +2/3 for; the
      // validator's first vote stays in `votes` (and in `sum`) unless this BlockID is the majority.
      if (claimed === undefined || !claimed.peerMaj23) return { added: false, code: 'VOTE_CONFLICTING', error, evidence };
      if (this.maj23 !== null && blockIdKey(this.maj23) === key) this.votes[idx] = vote;
      this.countFor(claimed, idx, vote, val.votingPower);
      return { added: true, code: 'VOTE_CONFLICTING', error, evidence };
    }

    this.votes[idx] = vote;
    this.bits.set(idx, true);
    this.sum += val.votingPower;
    this.countFor(this.blockVotes(vote.blockId), idx, vote, val.votingPower);
    return { added: true };
  }

  private blockVotes(id: BlockID): BlockVotes {
    const key = blockIdKey(id);
    let bv = this.byBlock.get(key);
    if (bv === undefined) {
      bv = { blockId: id, bits: new BitArray(this.valSet.size), sum: 0n, votes: new Array<Vote | null>(this.valSet.size).fill(null), peerMaj23: false };
      this.byBlock.set(key, bv);
    }
    return bv;
  }

  private countFor(bv: BlockVotes, idx: number, vote: Vote, power: bigint): void {
    const before = bv.sum;
    bv.bits.set(idx, true);
    bv.votes[idx] = vote;
    bv.sum += power;
    // The first BlockID to cross 2/3 is the majority; once set it never changes (only one can).
    // Its votes replace a validator's conflicting first vote, so that makeCommit finds them.
    if (this.maj23 === null && !this.exceedsTwoThirds(before) && this.exceedsTwoThirds(bv.sum)) {
      this.maj23 = bv.blockId;
      bv.votes.forEach((v, i) => {
        if (v !== null) this.votes[i] = v;
      });
    }
  }

  /**
   * SetPeerMaj23: a peer says `id` has +2/3 in this set. From now on conflicting votes for `id`
   * are counted for it (see the file comment); the claim alone counts nothing.
   */
  setPeerMaj23(id: BlockID): void {
    const bv = this.byBlock.get(blockIdKey(id));
    if (bv?.peerMaj23) return;
    // Bounded: CometBFT keeps one claim per peer (vote_set.go peerMaj23s); claims arrive in
    // peers' catch-up messages, so a peer sending many made-up blocks must not grow this set.
    if (this.peerMaj23Claims >= MAX_PEER_MAJ23_CLAIMS) return;
    this.peerMaj23Claims++;
    (bv ?? this.blockVotes(id)).peerMaj23 = true;
  }

  private peerMaj23Claims = 0;

  private exceedsTwoThirds(sum: bigint): boolean {
    return sum * 3n > this.total * 2n;
  }

  /** The validator's vote, or null. */
  getByIndex(i: number): Vote | null {
    return this.votes[i] ?? null;
  }

  getByAddress(address: Uint8Array): Vote | null {
    const f = this.valSet.getByAddress(address);
    return f === null ? null : this.getByIndex(f.index);
  }

  /** Every counted vote, in validator order. */
  list(): Vote[] {
    return this.votes.filter((v): v is Vote => v !== null);
  }

  bitArray(): BitArray {
    return this.bits.copy();
  }

  bitArrayByBlockId(id: BlockID): BitArray | null {
    const bv = this.byBlock.get(blockIdKey(id));
    return bv ? bv.bits.copy() : null;
  }

  /** Power counted for one BlockID. */
  powerFor(id: BlockID): bigint {
    return this.byBlock.get(blockIdKey(id))?.sum ?? 0n;
  }

  /** Power of all counted votes. */
  get votedPower(): bigint {
    return this.sum;
  }

  get totalPower(): bigint {
    return this.total;
  }

  /** TwoThirdsMajority: the BlockID with +2/3 (a nil BlockID for a nil majority), or null. */
  twoThirdsMajority(): BlockID | null {
    return this.maj23;
  }

  hasTwoThirdsMajority(): boolean {
    return this.maj23 !== null;
  }

  /** +2/3 of the power voted, for anything. */
  hasTwoThirdsAny(): boolean {
    return this.exceedsTwoThirds(this.sum);
  }

  hasAll(): boolean {
    return this.sum === this.total;
  }

  /** vote_set.go voteStrings: one entry per validator, `nil-Vote` when absent. */
  voteStrings(): string[] {
    return this.votes.map((v) => voteString(v));
  }

  /** `BA{4:xx_x} 30/40 = 0.75` (vote_set.go bitArrayString). */
  bitArrayString(): string {
    const frac = this.total === 0n ? 0 : Number(this.sum) / Number(this.total);
    return `${this.bits.toString()} ${this.sum}/${this.total} = ${formatGoFixed2(frac)}`;
  }

  /** StringShort: `VoteSet{H:5 R:0 T:1 +2/3:<nil>(0.75) BA{4:xxx_} map[]}`. */
  toString(): string {
    const frac = this.total === 0n ? 0 : Number(this.sum) / Number(this.total);
    const maj = this.maj23 === null ? '<nil>' : `${hexUpper(this.maj23.hash)}:${this.maj23.partSetHeader.total}`;
    return `VoteSet{H:${this.height} R:${this.round} T:${this.type} +2/3:${maj}(${formatGoFixed2(frac)}) ${this.bits.toString()} map[]}`;
  }

  /** The `last_commit` JSON of dump_consensus_state (vote_set.go VoteSetJSON). */
  toJSON(): { votes: string[]; votes_bit_array: string; peer_maj_23s: Record<string, unknown> } {
    return { votes: this.voteStrings(), votes_bit_array: this.bitArrayString(), peer_maj_23s: {} };
  }

  /**
   * MakeExtendedCommit(...).ToCommit(): one CommitSig per validator in set order. A precommit
   * for the majority block is Commit, a nil precommit is Nil, no precommit or one for another
   * block is Absent (address empty, zero time, no signature).
   */
  makeCommit(): Commit {
    if (this.type !== SignedMsgType.Precommit) {
      throw new VoteSetError('VOTE_SET_WRONG_TYPE', 'Cannot MakeCommit() unless VoteSet.Type is PrecommitType');
    }
    const maj = this.maj23;
    if (maj === null || isNilBlockId(maj)) {
      throw new VoteSetError('VOTE_SET_NO_MAJORITY', 'Cannot MakeCommit() unless a blockhash has +2/3');
    }
    const signatures: CommitSig[] = this.votes.map((v) => {
      if (v === null) return absentSig();
      if (isNilBlockId(v.blockId)) {
        return { blockIdFlag: BlockIDFlag.Nil, validatorAddress: v.validatorAddress, timestamp: v.timestamp, signature: v.signature };
      }
      if (!blockIdEqual(v.blockId, maj)) return absentSig();
      return { blockIdFlag: BlockIDFlag.Commit, validatorAddress: v.validatorAddress, timestamp: v.timestamp, signature: v.signature };
    });
    return { height: this.height, round: this.round, blockId: maj, signatures };
  }
}

function absentSig(): CommitSig {
  return { blockIdFlag: BlockIDFlag.Absent, validatorAddress: new Uint8Array(0), timestamp: ZERO_TIME, signature: new Uint8Array(0) };
}

/**
 * The precommits a Commit stands for (types/block.go Commit.GetVote / CommitToVoteSet): the
 * vote set behind LastCommit after a restart. Signatures are not re-checked; the commit came
 * from our own store.
 */
export function commitToVoteSet(chainId: string, commit: Commit, valSet: ValidatorSet): VoteSet {
  const vs = new VoteSet(chainId, commit.height, commit.round, SignedMsgType.Precommit, valSet);
  commit.signatures.forEach((sig, i) => {
    const v = commitSigToVote(commit, sig, i);
    if (v === null) return;
    const r = vs.addVote(v);
    if (!r.added && r.code) throw new VoteSetError(r.code, `failed to reconstruct last commit: ${r.error}`);
  });
  return vs;
}

/** Commit.GetVote: the precommit behind a CommitSig, or null for an absent one. */
export function commitSigToVote(commit: Commit, sig: CommitSig, index: number): Vote | null {
  if (sig.blockIdFlag === BlockIDFlag.Absent || sig.blockIdFlag === BlockIDFlag.Unknown) return null;
  const blockId: BlockID =
    sig.blockIdFlag === BlockIDFlag.Commit ? commit.blockId : { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } };
  return {
    type: SignedMsgType.Precommit,
    height: commit.height,
    round: commit.round,
    blockId,
    timestamp: sig.timestamp,
    validatorAddress: sig.validatorAddress,
    validatorIndex: index,
    signature: sig.signature,
    extension: new Uint8Array(0),
    extensionSignature: new Uint8Array(0),
  };
}
