/**
 * The evidence pool (cometbft: evidence/pool.go): duplicate-vote evidence that was verified and
 * waits for a block, and the evidence blocks have already committed.
 *
 * Storage: `Storage.evidence` (src/store/evidencestore.ts), the `evidence` database of the node's
 * one LMDB environment; the key layout lives there.
 *
 * Crash safety: `update` (mark committed, drop from pending, prune expired, flush evidence that
 * consensus reported) runs inside the block executor's write transaction, so the pool on disk
 * always matches the committed height: a crash leaves the evidence pending with the old block or
 * committed with the new one. Adding evidence (RPC, a block being validated) is one small write
 * transaction of its own. Nothing pending lives only in memory, so a restart sees the same pool.
 * The one exception is CometBFT's: conflicting votes reported by consensus wait in memory for the
 * end of their height, when the block time that the evidence needs is known.
 */
import type { Logger } from '../log.js';
import { nullLogger } from '../log.js';
import type { State } from '../types/state.js';
import type { EvidenceStore } from '../store/evidencestore.js';
import type { Vote } from '../types/block.js';
import {
  decodeEvidenceItem,
  duplicateVoteEvidenceString,
  encodeDuplicateVoteEvidence,
  evidenceItemHeight,
  evidenceListByteSize,
  newDuplicateVoteEvidence,
  type CheckedDuplicateVoteEvidence,
  type EvidenceItem,
} from '../types/evidence.js';
import { evidenceItemHash } from '../types/hashing.js';
import { hexUpper } from '../types/json.js';
import { isExpired, verifyDuplicateVote, type EvidenceChainReader } from './verify.js';

/** One second in ns: the pruning time bound is one second past expiry, as in CometBFT. */
const ONE_SECOND_NS = 1_000_000_000n;

/** Errors the pool answers with; `message` is CometBFT's text (the RPC prefixes `failed to add evidence: `). */
export class EvidenceError extends Error {
  constructor(
    readonly code: 'INVALID_EVIDENCE' | 'PENDING_LIST' | 'UNSUPPORTED_EVIDENCE',
    message: string,
  ) {
    super(message);
    this.name = 'EvidenceError';
  }
}

/** types.ErrInvalidEvidence: `Invalid evidence: <reason>. Evidence: <ev>`. */
function invalidEvidence(reason: string, ev: EvidenceItem, code: EvidenceError['code'] = 'INVALID_EVIDENCE'): EvidenceError {
  return new EvidenceError(code, `Invalid evidence: ${reason}. Evidence: ${evidenceString(ev)}`);
}

function evidenceString(ev: EvidenceItem): string {
  return ev.kind === 'DuplicateVoteEvidence' ? duplicateVoteEvidenceString(ev) : `LightClientAttackEvidence{CommonHeight: ${ev.commonHeight}}`;
}

export interface EvidencePoolOptions {
  /** The `evidence` database's repository (Storage.evidence). */
  store: EvidenceStore;
  /** Block metas and validator sets by height (Storage.blocks + Storage.state). */
  chain: EvidenceChainReader;
  /** The state after the last committed block. */
  state: State;
  logger?: Logger;
}

export class EvidencePool {
  private readonly db: EvidenceStore;
  private readonly chain: EvidenceChainReader;
  private readonly log: Logger;
  private _state: State;
  /** Conflicting votes from consensus, turned into evidence at the next `update`. */
  private buffer: { voteA: Vote; voteB: Vote }[] = [];
  /** The next height and time at which pending evidence expires: pruning waits until both pass. */
  private pruningHeight: bigint;
  private pruningTime: bigint;

  constructor(opts: EvidencePoolOptions) {
    this.db = opts.store;
    this.chain = opts.chain;
    this.log = opts.logger ?? nullLogger;
    this._state = opts.state;
    // NewPool: pending evidence left from before a restart may have expired meanwhile.
    const [h, t] = this.db.transactionSync(() => this.removeExpiredPending(this._state));
    this.pruningHeight = h;
    this.pruningTime = t;
  }

  /** The state of the last `update` (or the one the pool was opened with). */
  get state(): State {
    return this._state;
  }

  /** Number of pending evidence items. */
  size(): number {
    return this.db.pendingCount();
  }

  isPending(item: Uint8Array): boolean {
    return this.db.isPending(...this.idOf(item));
  }

  isCommitted(item: Uint8Array): boolean {
    return this.db.isCommitted(...this.idOf(item));
  }

  /**
   * AddEvidence for duplicate-vote evidence that passed ValidateBasic; returns its hash. Evidence
   * already pending or already committed is not an error (CometBFT returns nil: a peer that is
   * behind may send it again), and is neither re-verified nor re-added.
   */
  addEvidence(ev: CheckedDuplicateVoteEvidence): Uint8Array {
    const item = encodeDuplicateVoteEvidence(ev);
    const hash = evidenceItemHash(item);
    const height = ev.voteA.height;
    if (this.db.isPending(height, hash)) {
      this.log.debug('evidence already pending, ignoring this one', { hash: hexUpper(hash) });
      return hash;
    }
    if (this.db.isCommitted(height, hash)) {
      this.log.debug('evidence was already committed, ignoring this one', { hash: hexUpper(hash) });
      return hash;
    }
    const reason = verifyDuplicateVote(this._state, this.chain, ev);
    if (reason !== null) throw invalidEvidence(reason, { kind: 'DuplicateVoteEvidence', ...ev });
    try {
      this.db.addPending(height, hash, item);
    } catch (e) {
      throw new EvidenceError('PENDING_LIST', `can't add evidence to pending list: can't persist evidence: ${(e as Error).message}`);
    }
    this.log.info('verified new evidence of byzantine behavior', { height, hash: hexUpper(hash) });
    return hash;
  }

  /**
   * ReportConflictingVotes: consensus saw two votes of one validator for one height, round and
   * type. The votes were verified by the vote set; the evidence is formed at the next `update`,
   * once the block time of that height is final.
   */
  reportConflictingVotes(voteA: Vote, voteB: Vote): void {
    this.buffer.push({ voteA, voteB });
  }

  /**
   * PendingEvidence: pending items, oldest height first, while their EvidenceList size stays
   * within maxBytes (-1: no bound). `size` is that EvidenceList's byte size, which the proposer
   * takes off block.max_bytes. Items that expired since the last prune are skipped: a proposal
   * carrying them would fail other validators' checks.
   */
  pendingEvidence(maxBytes: bigint): { evidence: Uint8Array[]; size: bigint } {
    const evidence: Uint8Array[] = [];
    let size = 0n;
    for (const { item } of this.db.pending()) {
      const decoded = decodeEvidenceItem(item);
      if (isExpired(this._state, evidenceItemHeight(decoded), decoded.timestamp)) continue;
      const next = size + evidenceListByteSize([item]);
      if (maxBytes !== -1n && next > maxBytes) break;
      evidence.push(item);
      size = next;
    }
    return { evidence, size };
  }

  /**
   * CheckEvidence for a proposed block's evidence (items already decoded and ValidateBasic'ed by
   * the executor): each must verify against `state` unless it is already pending, must not be
   * committed, and must appear once. Evidence new to this node is added to pending, as CometBFT
   * does, so that it is at hand if the block commits. Throws the first failure.
   */
  checkEvidence(state: State, items: readonly Uint8Array[]): void {
    const seen = new Set<string>();
    for (const item of items) {
      const ev = decodeEvidenceItem(item);
      const hash = evidenceItemHash(item);
      const height = evidenceItemHeight(ev);
      if (ev.kind === 'LightClientAttackEvidence') {
        // CometBFT verifies these against light blocks; chaind cannot, so it never accepts them.
        throw invalidEvidence('chaind does not verify light client attack evidence', ev, 'UNSUPPORTED_EVIDENCE');
      }
      if (!this.db.isPending(height, hash)) {
        if (this.db.isCommitted(height, hash)) throw invalidEvidence('evidence was already committed', ev);
        // CometBFT returns the verification error itself here, unwrapped.
        const reason = verifyDuplicateVote(state, this.chain, ev as CheckedDuplicateVoteEvidence);
        if (reason !== null) throw new EvidenceError('INVALID_EVIDENCE', reason);
        try {
          this.db.addPending(height, hash, item);
        } catch (e) {
          // Valid all the same: log and go on.
          this.log.error("can't add evidence to pending list", { err: (e as Error).message, hash: hexUpper(hash) });
        }
        this.log.info('check evidence: verified evidence of byzantine behavior', { height, hash: hexUpper(hash) });
      }
      const h = hexUpper(hash);
      if (seen.has(h)) throw invalidEvidence('duplicate evidence', ev);
      seen.add(h);
    }
  }

  /**
   * Update after a committed block. Must run inside the block's write transaction: it turns the
   * conflicting votes consensus reported into pending evidence, moves the block's evidence from
   * pending to committed and prunes expired pending evidence. Returns the in-memory step (new
   * state, pruning bounds, empty vote buffer) for the caller to run once the transaction has
   * committed, so a failed block leaves the pool's memory as its disk.
   */
  update(state: State, committed: readonly Uint8Array[], votes?: readonly { voteA: Vote; voteB: Vote }[]): () => void {
    if (state.lastBlockHeight <= this._state.lastBlockHeight) {
      throw new Error(
        `failed EvidencePool.Update new state height is less than or equal to previous state height: ${state.lastBlockHeight} <= ${this._state.lastBlockHeight}`,
      );
    }
    // `votes`: another thread's buffer (the executor thread writes for the main thread's pool).
    const flushed = votes === undefined ? this.buffer.length : 0;
    this.processConsensusBuffer(state, votes ?? this.buffer);
    for (const item of committed) {
      const ev = decodeEvidenceItem(item);
      const height = evidenceItemHeight(ev);
      const hash = evidenceItemHash(item);
      this.db.markCommitted(height, hash);
    }
    let pruning: [bigint, bigint] = [this.pruningHeight, this.pruningTime];
    if (state.lastBlockHeight > this.pruningHeight && state.lastBlockTime > this.pruningTime && this.size() > 0) {
      pruning = this.removeExpiredPending(state);
    }
    return () => {
      this._state = state;
      [this.pruningHeight, this.pruningTime] = pruning;
      this.buffer = this.buffer.slice(flushed);
    };
  }

  /** The conflicting votes waiting for the next block's transaction (handed to the executor thread). */
  consensusVotes(): readonly { voteA: Vote; voteB: Vote }[] {
    return this.buffer.slice();
  }

  /**
   * After another thread's block transaction ran `update` on its own pool over the same database:
   * this pool's memory follows (its state, and the first `flushed` buffered votes are gone).
   */
  committed(state: State, flushed: number): void {
    this._state = state;
    this.buffer = this.buffer.slice(flushed);
  }

  /** The height and hash an encoded item is stored under. */
  private idOf(item: Uint8Array): [bigint, Uint8Array] {
    return [evidenceItemHeight(decodeEvidenceItem(item)), evidenceItemHash(item)];
  }

  /**
   * processConsensusBuffer: evidence from reported vote pairs, timed by the block of their
   * height (the block just committed, or an earlier one from the store). Not verified again.
   */
  private processConsensusBuffer(state: State, pairs: readonly { voteA: Vote; voteB: Vote }[]): void {
    for (const { voteA, voteB } of pairs) {
      const h = voteA.height;
      let ev: CheckedDuplicateVoteEvidence | null;
      if (h === state.lastBlockHeight) {
        ev = newDuplicateVoteEvidence(voteA, voteB, state.lastBlockTime, state.lastValidators);
      } else if (h < state.lastBlockHeight) {
        const valSet = this.chain.loadValidators(h);
        if (valSet === null) {
          this.log.error('failed to load validator set for conflicting votes', { height: h });
          continue;
        }
        const meta = this.chain.loadBlockMeta(h);
        if (meta === null) {
          this.log.error('failed to load block time for conflicting votes', { height: h });
          continue;
        }
        ev = newDuplicateVoteEvidence(voteA, voteB, meta.header.time, valSet);
      } else {
        this.log.error('inbound duplicate votes from consensus are of a greater height than current state', {
          height: h,
          last_block_height: state.lastBlockHeight,
        });
        continue;
      }
      if (ev === null) {
        this.log.error('conflicting votes from a validator not in the set', { height: h, validator: hexUpper(voteA.validatorAddress) });
        continue;
      }
      const item = encodeDuplicateVoteEvidence(ev);
      const hash = evidenceItemHash(item);
      if (this.db.isPending(h, hash) || this.db.isCommitted(h, hash)) continue;
      this.db.addPending(h, hash, item);
      this.log.info('verified new evidence of byzantine behavior', { height: h, hash: hexUpper(hash), validator: hexUpper(voteA.validatorAddress) });
    }
  }

  /**
   * removeExpiredPendingEvidence: drops pending evidence expired under `state`, oldest first, up
   * to the first that is still valid; returns when that one expires (height + max_age_num_blocks
   * + 1, time + max_age_duration + 1 s), or the state's own height and time when nothing is left.
   */
  private removeExpiredPending(state: State): [bigint, bigint] {
    const p = state.consensusParams.evidence;
    const expired: { height: bigint; hash: Uint8Array }[] = [];
    let next: [bigint, bigint] | null = null;
    for (const { height, hash, item } of this.db.pending()) {
      const ev = decodeEvidenceItem(item);
      if (!isExpired(state, height, ev.timestamp)) {
        next = [height + p.maxAgeNumBlocks + 1n, ev.timestamp + p.maxAgeDuration + ONE_SECOND_NS];
        break;
      }
      expired.push({ height, hash });
    }
    for (const e of expired) this.db.removePending(e.height, e.hash);
    if (expired.length > 0) this.log.info('pruned expired evidence', { count: expired.length });
    return next ?? [state.lastBlockHeight, state.lastBlockTime];
  }
}
