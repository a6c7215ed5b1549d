/**
 * Prevotes and precommits of every round of one height (cometbft: consensus/types/height_vote_set.go).
 *
 * Rounds 0..round+1 always have vote sets (the state machine calls setRound(r+1) on entering
 * round r, so votes of the next round are kept). A vote for any other, later round creates that
 * round's sets only if its peer has caused fewer than `maxPeerCatchupRounds` (2) such rounds: a
 * peer cannot make us allocate vote sets for arbitrary rounds, yet +2/3 of votes at a higher
 * round can still be collected, which is what makes the node skip ahead (state.go addVote).
 */
import { SignedMsgType, type BlockID, type Vote } from '../types/block.js';
import type { ValidatorSet } from '../types/validator_set.js';
import { VoteSet, type AddVoteResult, type VoteSetOptions } from './vote_set.js';

export const DEFAULT_MAX_PEER_CATCHUP_ROUNDS = 2;

interface RoundVoteSet {
  prevotes: VoteSet;
  precommits: VoteSet;
}

export interface RoundVotesJSON {
  round: string | number;
  prevotes: string[] | null;
  prevotes_bit_array: string;
  precommits: string[] | null;
  precommits_bit_array: string;
}

export class HeightVoteSet {
  readonly chainId: string;
  private _height: bigint;
  private _valSet: ValidatorSet;
  private _round = 0;
  private readonly rounds = new Map<number, RoundVoteSet>();
  private readonly peerCatchupRounds = new Map<string, number[]>();
  /** Peer +2/3 claims for precommit rounds not created yet, applied when they are. */
  private readonly pendingMaj23 = new Map<number, BlockID[]>();
  private readonly opts: VoteSetOptions;
  private readonly maxPeerCatchupRounds: number;

  constructor(
    chainId: string,
    height: bigint,
    valSet: ValidatorSet,
    opts: VoteSetOptions & { maxPeerCatchupRounds?: number } = {},
  ) {
    this.chainId = chainId;
    this._height = height;
    this._valSet = valSet;
    this.opts = opts;
    this.maxPeerCatchupRounds = opts.maxPeerCatchupRounds ?? DEFAULT_MAX_PEER_CATCHUP_ROUNDS;
    this.reset(height, valSet);
  }

  reset(height: bigint, valSet: ValidatorSet): void {
    this._height = height;
    this._valSet = valSet;
    this.rounds.clear();
    this.peerCatchupRounds.clear();
    this.pendingMaj23.clear();
    this.addRound(0);
    this._round = 0;
  }

  get height(): bigint {
    return this._height;
  }

  get round(): number {
    return this._round;
  }

  get valSet(): ValidatorSet {
    return this._valSet;
  }

  /** Creates vote sets up to `round` (inclusive). Rounds never go backwards. */
  setRound(round: number): void {
    if (this._round !== 0 && round < this._round) throw new Error('SetRound() must increment hvs.round');
    for (let r = Math.max(0, this._round - 1); r <= round; r++) if (!this.rounds.has(r)) this.addRound(r);
    this._round = round;
  }

  private addRound(round: number): void {
    if (this.rounds.has(round)) return;
    this.rounds.set(round, {
      prevotes: new VoteSet(this.chainId, this._height, round, SignedMsgType.Prevote, this._valSet, this.opts),
      precommits: new VoteSet(this.chainId, this._height, round, SignedMsgType.Precommit, this._valSet, this.opts),
    });
    const claims = this.pendingMaj23.get(round);
    if (claims !== undefined) {
      this.pendingMaj23.delete(round);
      for (const id of claims) this.rounds.get(round)!.precommits.setPeerMaj23(id);
    }
  }

  /**
   * A peer's claim that `id` has +2/3 precommits in `round` (height_vote_set.go SetPeerMaj23).
   * A round not created yet keeps the claim until it is (a few per round at most).
   */
  setPeerMaj23Precommits(round: number, id: BlockID): void {
    if (!Number.isInteger(round) || round < 0) return;
    const vs = this.precommits(round);
    if (vs !== null) {
      vs.setPeerMaj23(id);
      return;
    }
    const list = this.pendingMaj23.get(round) ?? [];
    if (list.length < 4 && this.pendingMaj23.size < 16) this.pendingMaj23.set(round, [...list, id]);
  }

  /**
   * AddVote. A vote of an unknown round is taken only within the peer's catch-up allowance;
   * otherwise the result carries code VOTE_UNWANTED_ROUND (height_vote_set.go ErrGotVoteFromUnwantedRound).
   */
  addVote(vote: Vote, peerId: string): AddVoteResult | { added: false; code: 'VOTE_UNWANTED_ROUND' | 'VOTE_INVALID_TYPE'; error: string } {
    if (vote.type !== SignedMsgType.Prevote && vote.type !== SignedMsgType.Precommit) {
      return { added: false, code: 'VOTE_INVALID_TYPE', error: `invalid vote type ${vote.type}` };
    }
    if (!Number.isInteger(vote.round) || vote.round < 0) {
      return { added: false, code: 'VOTE_INVALID_TYPE', error: `invalid vote round ${vote.round}` };
    }
    let vs = this.getVoteSet(vote.round, vote.type);
    if (vs === null) {
      const used = this.peerCatchupRounds.get(peerId) ?? [];
      if (used.length >= this.maxPeerCatchupRounds) {
        return { added: false, code: 'VOTE_UNWANTED_ROUND', error: 'peer has sent a vote that does not match our round for more than one round' };
      }
      this.addRound(vote.round);
      vs = this.getVoteSet(vote.round, vote.type)!;
      this.peerCatchupRounds.set(peerId, [...used, vote.round]);
    }
    return vs.addVote(vote);
  }

  /** Whether a vote set exists for the vote's round (a vote there is not subject to catch-up limits). */
  hasRound(round: number): boolean {
    return this.rounds.has(round);
  }

  getVoteSet(round: number, type: SignedMsgType): VoteSet | null {
    const r = this.rounds.get(round);
    if (r === undefined) return null;
    return type === SignedMsgType.Prevote ? r.prevotes : type === SignedMsgType.Precommit ? r.precommits : null;
  }

  prevotes(round: number): VoteSet | null {
    return this.getVoteSet(round, SignedMsgType.Prevote);
  }

  precommits(round: number): VoteSet | null {
    return this.getVoteSet(round, SignedMsgType.Precommit);
  }

  /** POLInfo: the highest round with a prevote majority, and its BlockID; round -1 when none. */
  polInfo(): { round: number; blockId: BlockID | null } {
    for (let r = this._round; r >= 0; r--) {
      const id = this.prevotes(r)?.twoThirdsMajority() ?? null;
      if (id !== null) return { round: r, blockId: id };
    }
    return { round: -1, blockId: null };
  }

  /** Known rounds, ascending. */
  roundNumbers(): number[] {
    return [...this.rounds.keys()].sort((a, b) => a - b);
  }

  /**
   * height_vote_set.go MarshalJSON: rounds 0..round in order, each with vote strings and
   * bit-array strings. The spec's dump_consensus_state (§2.2) has `round` as a string; the
   * consensus_state fixture (RoundStateSimple) has a number: `roundAsString` picks.
   */
  toJSON(roundAsString = true): RoundVotesJSON[] {
    const out: RoundVotesJSON[] = [];
    for (let r = 0; r <= this._round; r++) {
      const rv = this.rounds.get(r);
      out.push({
        round: roundAsString ? String(r) : r,
        prevotes: rv ? rv.prevotes.voteStrings() : null,
        prevotes_bit_array: rv ? rv.prevotes.bitArrayString() : 'nil-BitArray',
        precommits: rv ? rv.precommits.voteStrings() : null,
        precommits_bit_array: rv ? rv.precommits.bitArrayString() : 'nil-BitArray',
      });
    }
    return out;
  }
}
