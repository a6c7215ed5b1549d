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
    const { state, blockId, block, seenCommit } = req;
    const height = block.header.height;
    const resp: ResponseFinalizeBlock = await app.finalizeBlock({
      txs: block.data.txs,
      decidedLastCommit: commitInfo(state, block.lastCommit),
      misbehavior: misbehaviorOf(block.evidence),
      hash: blockId.hash,
      height,
      time: block.header.time,
      nextValidatorsHash: block.header.nextValidatorsHash,
      proposerAddress: block.header.proposerAddress,
    });
    if (resp.txResults.length !== block.data.txs.length) {
      throw new Error(`expected tx results length to match size of transactions in block. Expected ${block.data.txs.length}, got ${resp.txResults.length}`);
    }
    const newState = updateState(state, blockId, block, resp);
    const blockBytes = req.blockBytes ?? encodeBlock(block);
    await beforeCommit?.();
    let evidenceCommitted: (() => void) | undefined;
    try {
      storage.transactionSync(() => {
        storage.blocks.saveBlock(block, blockId, blockBytes, seenCommit);
        if (height === state.initialHeight) storage.state.saveInitialHeight(state);
        storage.state.saveFinalizeBlockResponse(height, resp);
        storage.state.save(newState);
        // evpool.Update: the block's evidence is committed, expired evidence pruned.
        evidenceCommitted = this.deps.evidence?.update(newState, block.evidence, votes);
        this.deps.indexer?.indexBlock(block, blockId, resp);
        app.commit();
      });
    } catch (e) {
      // Nothing was written; bring the app's memory back to what is on disk.
      app.reload?.();
      throw e;
    }
    evidenceCommitted?.();
    return { resp, newState };
  }
}
