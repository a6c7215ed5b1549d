/**
 * The writing half of block execution: FinalizeBlock, then ONE LMDB write transaction with the
 * block, its seen commit, the FinalizeBlock response, the new state, the evidence pool's update,
 * the indexes and the application's writes (cometbft/cometbft:state/execution.go ApplyBlock, with
 * SaveBlock and Commit folded into one transaction, so that no handshake replay is ever needed).
 *
 * The same code runs in two places (docs/ARCHITECTURE.md, Threads): on the executor thread
 * (workers/executor.worker.ts, the node's default), and in-process (`InlineBlockWriter` over the
 * caller's own app; unit tests and `CHAIND_EXEC=inline`). The consensus-facing half (proposals,
 * validation, mempool update, events) stays in ./execution.ts on the main thread.
 */
import type { Application, CommitInfo, Misbehavior, ResponseFinalizeBlock } from '../abci/types.js';
import type { Logger } from '../log.js';
import type { BlockIndexer, TxIndexer } from '../indexer/indexer.js';
import type { Storage } from '../store/storage.js';
import { BlockIDFlag, type Block, type BlockID, type Bytes, type Commit, type Vote } from '../types/block.js';
import { decodeEvidenceItem, type CheckedDuplicateVoteEvidence } from '../types/evidence.js';
import { duplicateVoteMisbehavior } from '../abci/evidence.js';
import { encodeBlock } from '../types/codec.js';
import { lastResultsHash, txHash } from '../types/hashing.js';
import type { State } from './state.js';

/** The application, plus a way back to the committed state when the block's transaction fails. */
export type ExecutorApp = Application & { reload?(): void };

/**
 * Writes a block's indexes (tx_search, block_search). Called inside the block's write transaction,
 * so a block and its index entries land together.
 */
export interface BlockIndexHook {
  indexBlock(block: Block, blockId: BlockID, resp: ResponseFinalizeBlock): void;
}

/** Conflicting votes consensus reported, to become evidence in the block's transaction. */
export interface ConflictingVotes {
  voteA: Vote;
  voteB: Vote;
}

/** The evidence pool's part in the block's transaction (src/evidence/pool.ts EvidencePool fits). */
export interface WriterEvidencePool {
  /**
   * Runs inside the block's write transaction; returns the step to run after it committed.
   * `votes`: the conflicting votes to turn into evidence (default the pool's own buffer).
   */
  update(state: State, committed: readonly Bytes[], votes?: readonly ConflictingVotes[]): () => void;
}

/** One block to write: the state before it, the block and the commit that decided it. */
export interface WriteRequest {
  state: State;
  blockId: BlockID;
  block: Block;
  seenCommit: Commit;
  /** The block's proto bytes when the caller has them (else encoded here). */
  blockBytes?: Uint8Array;
}

export interface WriteResult {
  newState: State;
  /** Each tx's result code, in block order (what the mempool update needs). */
  codes: ArrayLike<number>;
  /**
   * The whole FinalizeBlock response, for events. The executor thread's answer is decoded only
   * when asked, in slices that yield to the event loop in between: a 5,000-tx response is ~10 MB
   * of objects, whose decoding in one piece would stall every server for a long moment.
   */
  response(): Promise<ResponseFinalizeBlock>;
}

/** What the writer itself produced: the response and the state after the block. */
export interface WriteOutcome {
  resp: ResponseFinalizeBlock;
  newState: State;
}

/**
 * What the consensus-facing executor needs of the writing half. `write` resolves once the block's
 * transaction has committed AND the caller's thread sees the new height (its app's committed view,
 * block store, evidence pool); it throws when nothing was written.
 */
export interface BlockWriter {
  /**
   * `beforeCommitVisible`: awaited just before this thread's app sees the new height (inline:
   * before the transaction; executor thread: when its answer arrives, before the views refresh).
   * The executor takes the mempool lock there, so that no CheckTx runs between the check state's
   * reset and the recheck that rebuilds it (CometBFT holds the mempool lock across Commit).
   */
  write(req: WriteRequest, beforeCommitVisible?: () => Promise<void>): Promise<WriteResult>;
  /**
   * Block sync: several blocks in ONE write transaction (one fsync for all of them). Optional: a
   * writer without it writes each block alone. `beforeCommitVisible` as for `write`, awaited once
   * for the whole batch.
   */
  beginBatch?(beforeCommitVisible?: () => Promise<void>): BlockBatch;
}

/**
 * Blocks written together: `add` runs each block's FinalizeBlock and writes inside the batch's one
 * open write transaction (each block reads what the blocks before it wrote), `commit` commits it.
 * Atomic: after a crash either every block of the batch is there (block, seen commit, response,
 * state, evidence update, indexes, app writes) or none is. Only the writer's own thread sees the
 * added blocks before `commit`; other readers keep the height before the batch.
 */
export interface BlockBatch {
  /**
   * FinalizeBlock and the writes of the next block (its `state` is the state `add` of the block
   * before returned); resolves with the state after it. When it rejects, the whole batch was
   * dropped: nothing of it is written, and `commit` rejects too.
   */
  add(req: WriteRequest): Promise<State>;
  /** Commits every block added, in one transaction; resolves when the caller's thread sees them. */
  commit(): Promise<WriteResult[]>;
  /**
   * Drops the batch. Resolves with the blocks that were committed all the same: the executor
   * thread commits an open batch by itself when its caller stays quiet (see
   * workers/executor.worker.ts); in-process, none.
   */
  abort(): Promise<WriteResult[]>;
  /** Blocks added so far. */
  readonly size: number;
}

/** FinalizeBlock's decided_last_commit / ProcessProposal's proposed_last_commit. */
export function commitInfo(state: State, commit: Commit): CommitInfo {
  const vals = state.lastValidators;
  return {
    round: commit.round,
    votes: commit.signatures.map((sig, i) => {
      const v = vals.isEmpty() ? null : vals.getByIndex(i);
      return {
        validator: { address: v ? v.address : sig.validatorAddress, power: v ? v.votingPower : 0n },
        signedLastBlock: sig.blockIdFlag !== BlockIDFlag.Absent,
      };
    }),
  };
}

/** EvidenceList.ToABCI over a block's (validated) evidence items. */
export function misbehaviorOf(items: readonly Bytes[]): Misbehavior[] {
  const out: Misbehavior[] = [];
  for (const item of items) {
    const ev = decodeEvidenceItem(item);
    if (ev.kind === 'DuplicateVoteEvidence') out.push(duplicateVoteMisbehavior(ev as CheckedDuplicateVoteEvidence));
  }
  return out;
}

/**
 * state.updateState (cometbft/cometbft:state/execution.go): the validator set of H+2 takes this
 * block's updates. Pure: both threads compute it from the same inputs.
 */
export function updateState(state: State, blockId: BlockID, block: Block, resp: ResponseFinalizeBlock): State {
  const height = block.header.height;
  const nextVals = state.nextValidators.copy();
  let lastHeightValidatorsChanged = state.lastHeightValidatorsChanged;
  if (resp.validatorUpdates.length > 0) {
    nextVals.updateWithChangeSet(resp.validatorUpdates);
    // Updates from FinalizeBlock at H apply to H+2.
    lastHeightValidatorsChanged = height + 2n;
  }
  nextVals.incrementProposerPriority(1);
  let params = state.consensusParams;
  let lastHeightConsensusParamsChanged = state.lastHeightConsensusParamsChanged;
  if (resp.consensusParamUpdates) {
    params = resp.consensusParamUpdates;
    lastHeightConsensusParamsChanged = height + 1n;
  }
  return {
    ...state,
    lastBlockHeight: height,
    lastBlockId: blockId,
    lastBlockTime: block.header.time,
    validators: state.nextValidators.copy(),
    nextValidators: nextVals,
    lastValidators: state.validators.copy(),
    lastHeightValidatorsChanged,
    consensusParams: params,
    lastHeightConsensusParamsChanged,
    lastResultsHash: lastResultsHash(resp.txResults),
    appHash: resp.appHash,
    appVersion: params.version.app,
  };
}

/** The node's index hook over its kv indexers (config tx_index.indexer = "kv"). */
export function kvIndexHook(txIndexer: TxIndexer, blockIndexer: BlockIndexer, log: Logger): BlockIndexHook {
  return {
    indexBlock(block, _blockId, resp) {
      const h = block.header.height;
      const errB = blockIndexer.indexBlock(h, resp.events);
      if (errB) log.error('failed to index block', { height: h.toString(), err: errB.message });
      const errT = txIndexer.indexTxs(
        h,
        block.data.txs.map((tx, index) => ({ tx, index, result: resp.txResults[index]!, hash: txHash(tx) })),
      );
      if (errT) log.error('failed to index txs', { height: h.toString(), err: errT.message });
    },
  };
}

export interface InlineWriterDeps {
  storage: Storage;
  app: ExecutorApp;
  evidence?: WriterEvidencePool;
  indexer?: BlockIndexHook;
}

/**
 * The writing half on the calling thread: the executor thread runs it over its own app and
 * storage; in-process (tests, CHAIND_EXEC=inline) it runs over the node's app itself.
 */
export class InlineBlockWriter implements BlockWriter {
  constructor(private readonly deps: InlineWriterDeps) {}

  async write(req: WriteRequest, beforeCommitVisible?: () => Promise<void>): Promise<WriteResult> {
    const { resp, newState } = await this.writeWith(req, undefined, beforeCommitVisible);
    return { newState, codes: resp.txResults.map((r) => r.code), response: async () => resp };
  }

  /**
   * `votes`: conflicting votes to turn into evidence instead of the pool's own buffer (the
   * executor thread gets them from the main thread's pool). The pool's post-commit step has run
   * when it resolves.
   */
  async writeWith(req: WriteRequest, votes?: readonly ConflictingVotes[], beforeCommit?: () => Promise<void>): Promise<WriteOutcome> {
    const { storage, app } = this.deps;
    const { resp, newState } = await this.finalize(req);
    await beforeCommit?.();
    let evidenceCommitted: (() => void) | undefined;
    try {
      storage.transactionSync(() => {
        evidenceCommitted = this.stage(req, resp, newState, votes);
      });
    } catch (e) {
      // Nothing was written; bring the app's memory back to what is on disk.
      app.reload?.();
      storage.blocks.reload();
      throw e;
    }
    evidenceCommitted?.();
    return { resp, newState };
  }

  /** A batch of blocks in one write transaction (block sync); see BlockBatch. */
  beginBatch(beforeCommitVisible?: () => Promise<void>): InlineBatch {
    return new InlineBatch(this, this.deps, beforeCommitVisible);
  }

  /** FinalizeBlock and the state after the block (nothing written yet). */
  async finalize(req: WriteRequest): Promise<WriteOutcome> {
    const { app } = this.deps;
    const { state, blockId, block } = req;
    const resp: ResponseFinalizeBlock = await app.finalizeBlock({
      txs: block.data.txs,
      decidedLastCommit: commitInfo(state, block.lastCommit),
      misbehavior: misbehaviorOf(block.evidence),
      hash: blockId.hash,
      height: block.header.height,
      time: block.header.time,
      nextValidatorsHash: block.header.nextValidatorsHash,
      proposerAddress: block.header.proposerAddress,
    });
    if (resp.txResults.length !== block.data.txs.length) {
      throw new Error(`expected tx results length to match size of transactions in block. Expected ${block.data.txs.length}, got ${resp.txResults.length}`);
    }
    return { resp, newState: updateState(state, blockId, block, resp) };
  }

  /**
   * The block's writes; must run inside a write transaction. Returns the evidence pool's step to
   * run once that transaction committed.
   */
  stage(req: WriteRequest, resp: ResponseFinalizeBlock, newState: State, votes?: readonly ConflictingVotes[]): (() => void) | undefined {
    const { storage, app } = this.deps;
    const { state, blockId, block, seenCommit } = req;
    const height = block.header.height;
    const blockBytes = req.blockBytes ?? encodeBlock(block);
    storage.blocks.saveBlock(block, blockId, blockBytes, seenCommit);
    if (height === state.initialHeight) storage.state.saveInitialHeight(state);
    storage.state.saveFinalizeBlockResponse(height, resp);
    storage.state.save(newState);
    // evpool.Update: the block's evidence is committed, expired evidence pruned.
    const evidenceCommitted = this.deps.evidence?.update(newState, block.evidence, votes);
    this.deps.indexer?.indexBlock(block, blockId, resp);
    app.commit();
    return evidenceCommitted;
  }
}

/**
 * InlineBlockWriter's batch: the write transaction is opened by the first `add` and held open
 * (lmdb-js keeps a `transactionSync` open while its callback's promise is pending) until `commit`
 * or `abort`. While it is open, this thread's reads go through it and its writes join it; other
 * threads and processes see the height before the batch, and their writers wait for it.
 */
export class InlineBatch implements BlockBatch {
  private release: (() => void) | null = null;
  private fail: ((e: Error) => void) | null = null;
  private done: Promise<unknown> | null = null;
  private readonly results: WriteOutcome[] = [];
  private readonly posts: (() => void)[] = [];
  private broken: Error | null = null;
  private finished = false;

  constructor(
    private readonly writer: InlineBlockWriter,
    private readonly deps: InlineWriterDeps,
    private readonly beforeCommit: (() => Promise<void>) | undefined,
  ) {}

  get size(): number {
    return this.results.length;
  }

  /** What each block produced (the executor thread packs these for the main thread). */
  outcomes(): WriteOutcome[] {
    return this.results;
  }

  /**
   * `votes`: as for writeWith; only the first block of a batch takes conflicting votes (later ones
   * get none, so that no pair becomes evidence twice).
   */
  async add(req: WriteRequest, votes?: readonly ConflictingVotes[]): Promise<State> {
    if (this.broken !== null) throw this.broken;
    if (this.finished) throw new Error('block batch already committed or aborted');
    try {
      if (this.done === null) {
        await this.beforeCommit?.();
        const gate = new Promise<void>((resolve, reject) => {
          this.release = resolve;
          this.fail = reject;
        });
        // Rejected on abort: lmdb-js then aborts the transaction.
        this.done = this.deps.storage.transactionSync(() => gate);
        this.done.catch(() => undefined);
      }
      const outcome = await this.writer.finalize(req);
      const post = this.writer.stage(req, outcome.resp, outcome.newState, this.results.length === 0 ? votes : []);
      if (post) this.posts.push(post);
      this.results.push(outcome);
      return outcome.newState;
    } catch (e) {
      this.broken = e as Error;
      await this.drop();
      throw e;
    }
  }

  async commit(): Promise<WriteResult[]> {
    if (this.broken !== null) throw this.broken;
    if (this.finished) throw new Error('block batch already committed or aborted');
    this.finished = true;
    if (this.done !== null) {
      this.release?.();
      try {
        await this.done;
      } catch (e) {
        this.reloadMemory();
        throw e;
      }
    }
    for (const post of this.posts) post();
    return this.results.map(({ resp, newState }) => ({ newState, codes: resp.txResults.map((r) => r.code), response: async () => resp }));
  }

  async abort(): Promise<WriteResult[]> {
    if (this.finished) return [];
    await this.drop();
    return [];
  }

  private async drop(): Promise<void> {
    this.finished = true;
    if (this.done !== null) {
      this.fail?.(new Error('block batch aborted'));
      await this.done.catch(() => undefined);
    }
    this.reloadMemory();
  }

  /** Nothing of the batch was written: the app's and the block store's memory follow the disk. */
  private reloadMemory(): void {
    this.deps.app.reload?.();
    this.deps.storage.blocks.reload();
  }
}
