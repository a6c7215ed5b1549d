/**
 * The block executor: builds proposals, validates blocks and applies committed ones
 * (state/execution.go, state/validation.go in CometBFT 0.38).
 *
 * applyBlock hands the block to the writing half (./block-writer.ts; by default on the executor
 * thread, ./executor-thread.ts), which runs FinalizeBlock, then stores the block, its seen commit,
 * the new state, the FinalizeBlock response, the evidence pool's update, the indexes and the
 * application's writes in ONE LMDB write transaction, so a crash leaves either the height before
 * or the height after, never a mix. CometBFT needs a handshake replay for the window between
 * SaveBlock and Commit; chaind has no such window. Then, on this thread: mempool update (recheck)
 * and events.
 *
 * Evidence (state/execution.go, state/validation.go, evidence/pool.go): a proposal carries the
 * pool's pending evidence up to evidence.max_bytes and its txs get what is left; a received block's
 * evidence must decode, pass ValidateBasic, fit evidence.max_bytes and pass the pool's
 * CheckEvidence; the committed block's evidence reaches the app as FinalizeBlock misbehavior.
 */
import type { Counter, Gauge, Histogram } from '../metrics/types.js';
import type { ResponseCheckTx, ResponseFinalizeBlock } from '../abci/types.js';
import { ed25519Verify } from '../crypto/ed25519.js';
import type { EventBus } from '../events/bus.js';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Logger } from '../log.js';
import type { Storage } from '../store/storage.js';
import {
  BLOCK_PROTOCOL,
  BlockIDFlag,
  SignedMsgType,
  ZERO_TIME,
  type Block,
  type BlockID,
  type Bytes,
  type Commit,
  type Header,
} from '../types/block.js';
import {
  commitHash,
  consensusParamsHash,
  dataHash,
  headerHash,
  evidenceHash,
  txHash,
} from '../types/hashing.js';
import { decodeEvidenceItem, duplicateVoteValidateBasic, evidenceListByteSize } from '../types/evidence.js';
import { voteSignBytes } from '../types/signbytes.js';
import type { ValidatorSet } from '../types/validator_set.js';
import {
  commitInfo,
  InlineBlockWriter,
  misbehaviorOf,
  type BlockIndexHook,
  type BlockWriter,
  type ConflictingVotes,
  type ExecutorApp,
  type WriteResult,
} from './block-writer.js';
import type { BlockExecutor } from './executor.js';

export type { BlockIndexHook, ExecutorApp } from './block-writer.js';
import type { State } from './state.js';
import { bytesEqual, hexUpper } from '../crypto/bytes.js';
import { spanBegin, spanEnd } from '../profiling/spans.js';

/** What the executor needs of the mempool (src/mempool/mempool.ts). */
export interface ExecutorMempool {
  reapMaxBytesMaxGas(maxBytes: bigint, maxGas: bigint): Bytes[];
  /** The tx hash of a tx object the pool holds, without hashing it (src/mempool/mempool.ts Mempool.knownKey). */
  knownKey?(tx: Bytes): Bytes | undefined;
  /** Resolves once CheckTx calls already sent to the app have finished. */
  lock(): Promise<void>;
  unlock(): void;
  update(
    height: bigint,
    txs: readonly Bytes[],
    results: readonly { code: number }[],
    preCheck?: (tx: Bytes) => Error | undefined,
    postCheck?: (tx: Bytes, res: ResponseCheckTx) => Error | undefined,
  ): Promise<void>;
}

/**
 * cometbft/cometbft:consensus/metrics.go's block metrics, every one optional (the catalogue's
 * `consensus` group, src/metrics/metrics.ts, fits).
 */
export interface ExecutorMetrics {
  /** consensus_latest_block_height */
  latestBlockHeight?: Gauge;
  /** consensus_num_txs: txs in the latest block. */
  numTxs?: Gauge;
  /** consensus_total_txs */
  totalTxs?: Counter;
  /** consensus_block_interval_seconds: header time since the previous block this node applied. */
  blockInterval?: Histogram;
}

/** What the executor needs of the evidence pool (src/evidence/pool.ts EvidencePool fits). */
export interface ExecutorEvidencePool {
  /** Pending evidence for a proposal within maxBytes, and its EvidenceList byte size. */
  pendingEvidence(maxBytes: bigint): { evidence: Bytes[]; size: bigint };
  /** CheckEvidence: throws when a block's (decoded, ValidateBasic'ed) evidence is not acceptable. */
  checkEvidence(state: State, evidence: readonly Bytes[]): void;
  /** Runs inside the block's write transaction; returns the step to run after it committed. */
  update(state: State, committed: readonly Bytes[], votes?: readonly ConflictingVotes[]): () => void;
}

export interface ExecutorDeps {
  storage: Storage;
  /**
   * The writing half (FinalizeBlock + the block's one write transaction). Default: an
   * InlineBlockWriter over `app`, `storage`, `evidence` and `indexer` on this thread; the node
   * passes the executor thread (./executor-thread.ts).
   */
  writer?: BlockWriter;
  /** Absent: proposals carry no evidence and blocks with evidence are refused. */
  evidence?: ExecutorEvidencePool;
  indexer?: BlockIndexHook;
  app: ExecutorApp;
  mempool: ExecutorMempool;
  /** Re-checks mempool txs against the next block's limits (mempool preCheckMaxBytes/postCheckMaxGas). */
  mempoolChecks?: (state: State) => {
    preCheck?: (tx: Bytes) => Error | undefined;
    postCheck?: (tx: Bytes, res: ResponseCheckTx) => Error | undefined;
  };
  bus?: EventBus;
  logger?: Logger;
  metrics?: ExecutorMetrics;
}

/** Tx events published between two yields to the event loop. */
const EVENT_SLICE_TXS = 256;
/** A proposal or a committed block with at least this many txs gives the event loop a turn between its phases. */
const YIELD_TXS = 256;

// Size bounds from types/block.go: the largest possible proto overhead of a block, a header and a
// commit with n signatures. A proposal's txs get what is left of block.max_bytes.
const MAX_OVERHEAD_FOR_BLOCK = 11n;
const MAX_HEADER_BYTES = 626n;
const MAX_COMMIT_OVERHEAD_BYTES = 94n;
const MAX_COMMIT_SIG_BYTES = 109n;
/** types.MaxBlockSizeBytes: 100 MiB, what block.max_bytes = -1 means. */
const MAX_BLOCK_SIZE_BYTES = 104857600n;

export function maxDataBytes(maxBytes: bigint, evidenceBytes: bigint, valsCount: number): bigint {
  const limit = maxBytes === -1n ? MAX_BLOCK_SIZE_BYTES : maxBytes;
  return (
    limit -
    MAX_OVERHEAD_FOR_BLOCK -
    MAX_HEADER_BYTES -
    (MAX_COMMIT_OVERHEAD_BYTES + MAX_COMMIT_SIG_BYTES * BigInt(valsCount)) -
    evidenceBytes
  );
}

/**
 * BFT time: the voting-power-weighted median of the last commit's timestamps
 * (state.MedianTime / types.WeightedMedian). Absent signatures do not count.
 */
export function medianTime(commit: Commit, validators: ValidatorSet): bigint {
  const weighted: { time: bigint; weight: bigint }[] = [];
  let total = 0n;
  for (const sig of commit.signatures) {
    if (sig.blockIdFlag === BlockIDFlag.Absent) continue;
    const found = validators.getByAddress(sig.validatorAddress);
    if (!found) continue;
    weighted.push({ time: sig.timestamp, weight: found.validator.votingPower });
    total += found.validator.votingPower;
  }
  weighted.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  let median = total / 2n;
  for (const w of weighted) {
    if (median <= w.weight) return w.time;
    median -= w.weight;
  }
  return ZERO_TIME;
}

/**
 * state.MakeBlock: the block at `height` on top of `state` with these txs and evidence, every
 * header hash computed (state/state.go MakeBlock, types/block.go fillHeader).
 */
export function makeBlock(
  state: State,
  height: bigint,
  time: bigint,
  lastCommit: Commit,
  proposerAddress: Uint8Array,
  txs: Bytes[],
  evidence: Bytes[],
  /** Tx hashes already known (the mempool's keys), so that the data hash does not hash those txs again. */
  knownTxHash?: (tx: Bytes) => Bytes | undefined,
): Block {
  const header: Header = {
    version: { block: BLOCK_PROTOCOL, app: state.appVersion },
    chainId: state.chainId,
    height,
    time,
    lastBlockId: state.lastBlockId,
    lastCommitHash: commitHash(lastCommit),
    dataHash: dataHash(txs, knownTxHash),
    validatorsHash: state.validators.hash(),
    nextValidatorsHash: state.nextValidators.hash(),
    consensusHash: consensusParamsHash(state.consensusParams),
    appHash: state.appHash,
    lastResultsHash: state.lastResultsHash,
    evidenceHash: evidenceHash(evidence),
    proposerAddress,
  };
  return { header, data: { txs }, evidence, lastCommit };
}

export function emptyCommit(): Commit {
  return { height: 0n, round: 0, blockId: zeroBlockId(), signatures: [] };
}

export function zeroBlockId(): BlockID {
  return { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } };
}

function blockIdEqual(a: BlockID, b: BlockID): boolean {
  return (
    bytesEqual(a.hash, b.hash) &&
    a.partSetHeader.total === b.partSetHeader.total &&
    bytesEqual(a.partSetHeader.hash, b.partSetHeader.hash)
  );
}

/**
 * Checks that +2/3 of `vals` signed `blockId` at `height` (types.VerifyCommit). Signatures are
 * checked with the cached-KeyObject ed25519 verifier; a commit has one signature per validator, so
 * this is a handful of ~80 µs checks per block at today's validator counts.
 */
export function verifyCommit(chainId: string, vals: ValidatorSet, blockId: BlockID, height: bigint, commit: Commit): void {
  if (commit.height !== height) throw new Error(`invalid commit -- wrong height: ${height} vs ${commit.height}`);
  if (!blockIdEqual(commit.blockId, blockId)) {
    throw new Error(`invalid commit -- wrong block ID: want ${hexUpper(blockId.hash)}, got ${hexUpper(commit.blockId.hash)}`);
  }
  if (commit.signatures.length !== vals.size) {
    throw new Error(`invalid commit -- wrong set size: ${vals.size} vs ${commit.signatures.length}`);
  }
  let tallied = 0n;
  commit.signatures.forEach((sig, idx) => {
    if (sig.blockIdFlag === BlockIDFlag.Absent) return;
    const val = vals.getByIndex(idx);
    if (!bytesEqual(val.address, sig.validatorAddress)) {
      throw new Error(`wrong validator address in commit at index ${idx}`);
    }
    const vote = {
      type: SignedMsgType.Precommit,
      height: commit.height,
      round: commit.round,
      blockId: sig.blockIdFlag === BlockIDFlag.Commit ? commit.blockId : zeroBlockId(),
      timestamp: sig.timestamp,
      validatorAddress: sig.validatorAddress,
      validatorIndex: idx,
      signature: sig.signature,
      extension: new Uint8Array(0),
      extensionSignature: new Uint8Array(0),
    };
    if (!ed25519Verify(val.pubKey.bytes, voteSignBytes(chainId, vote), sig.signature)) {
      throw new Error(`wrong signature (#${idx}): ${hexUpper(sig.signature)}`);
    }
    if (sig.blockIdFlag === BlockIDFlag.Commit) tallied += val.votingPower;
  });
  const needed = (vals.totalVotingPower() * 2n) / 3n;
  if (tallied <= needed) {
    throw new Error(`invalid commit -- insufficient voting power: got ${tallied}, needed more than ${needed}`);
  }
}

/** Executor.beginBatch's handle (block sync). */
export interface ExecutorBatch {
  readonly size: number;
  add(state: State, blockId: BlockID, block: Block, seenCommit: Commit, blockBytes?: Uint8Array): Promise<State>;
  /** The states after each block, in order. */
  commit(): Promise<State[]>;
  /** Drops the batch; the states of the blocks that were committed all the same (BlockBatch.abort). */
  abort(): Promise<State[]>;
}

export class Executor implements BlockExecutor {
  private readonly deps: ExecutorDeps;
  private readonly writer: BlockWriter;

  /** The mempool's tx hashes by tx object (a block reaped from it needs no hashing of its txs). */
  private readonly knownTxHash: ((tx: Bytes) => Bytes | undefined) | undefined;

  constructor(deps: ExecutorDeps) {
    this.deps = deps;
    this.writer = deps.writer ?? new InlineBlockWriter({ storage: deps.storage, app: deps.app, evidence: deps.evidence, indexer: deps.indexer });
    const mp = deps.mempool;
    this.knownTxHash = mp.knownKey === undefined ? undefined : (tx) => mp.knownKey!(tx);
  }

  private nextHeight(state: State): bigint {
    return state.lastBlockHeight === 0n ? state.initialHeight : state.lastBlockHeight + 1n;
  }

  /** Block time: genesis time at the initial height, else the median of the last commit. */
  private blockTime(state: State, lastCommit: Commit): bigint {
    return this.nextHeight(state) === state.initialHeight ? state.lastBlockTime : medianTime(lastCommit, state.lastValidators);
  }

  /**
   * A proposal from the mempool. It runs on the thread that answers RPC, so its phases (reap,
   * PrepareProposal, the block and its hashes) each get their own event-loop turn; the tx hashes
   * of the data hash are the mempool's keys, not computed again.
   */
  async createProposalBlock(state: State, lastCommit: Commit, proposerAddress: Uint8Array, _time: bigint): Promise<Block> {
    const height = this.nextHeight(state);
    const params = state.consensusParams;
    const { evidence, size: evidenceSize } = this.deps.evidence?.pendingEvidence(params.evidence.maxBytes) ?? { evidence: [], size: 0n };
    const maxData = maxDataBytes(params.block.maxBytes, evidenceSize, state.validators.size);
    const reaped = this.deps.mempool.reapMaxBytesMaxGas(maxData, params.block.maxGas);
    const time = this.blockTime(state, lastCommit);
    if (reaped.length >= YIELD_TXS) await yieldToLoop();
    const txs = await this.deps.app.prepareProposal({
      maxTxBytes: maxData,
      txs: reaped,
      localLastCommit: commitInfo(state, lastCommit),
      misbehavior: misbehaviorOf(evidence),
      height,
      time,
      nextValidatorsHash: state.nextValidators.hash(),
      proposerAddress,
    });
    if (txs.length >= YIELD_TXS) await yieldToLoop();
    // Frozen: the data hash below stays the hash of these txs (dataHashMatches).
    const block = makeBlock(state, height, time, lastCommit, proposerAddress, Object.freeze(txs) as Bytes[], evidence, this.knownTxHash);
    this.madeDataHash.set(block, { txs, dataHash: block.header.dataHash });
    return block;
  }

  /**
   * The data hash of the blocks createProposalBlock made, with the (frozen) txs array it was
   * computed over: validateBlock of this node's own proposal (the same object) does not hash its
   * thousands of txs again while its txs and its header's data hash are still those.
   */
  private readonly madeDataHash = new WeakMap<Block, { txs: readonly Bytes[]; dataHash: Bytes }>();

  private dataHashMatches(block: Block): boolean {
    const made = this.madeDataHash.get(block);
    if (made !== undefined && made.txs === block.data.txs && bytesEqual(made.dataHash, block.header.dataHash)) return true;
    return bytesEqual(block.header.dataHash, dataHash(block.data.txs, this.knownTxHash));
  }

  /**
   * `opts.lastCommitVerified`: the caller has itself verified block.lastCommit against
   * state.lastValidators for state.lastBlockId (block sync verified it as the commit of the block
   * before), so its signatures are not checked twice.
   */
  validateBlock(state: State, block: Block, opts?: { lastCommitVerified?: boolean }): void {
    const h = block.header;
    const want = (cond: boolean, msg: string) => {
      if (!cond) throw new Error(msg);
    };
    want(h.version.block === BLOCK_PROTOCOL, `wrong Block.Header.Version. Expected block ${BLOCK_PROTOCOL}, got ${h.version.block}`);
    want(h.version.app === state.appVersion, `wrong Block.Header.Version. Expected app ${state.appVersion}, got ${h.version.app}`);
    want(h.chainId === state.chainId, `wrong Block.Header.ChainID. Expected ${state.chainId}, got ${h.chainId}`);
    const height = this.nextHeight(state);
    want(h.height === height, `wrong Block.Header.Height. Expected ${height}, got ${h.height}`);
    want(blockIdEqual(h.lastBlockId, state.lastBlockId), `wrong Block.Header.LastBlockID`);
    want(bytesEqual(h.appHash, state.appHash), `wrong Block.Header.AppHash. Expected ${hexUpper(state.appHash)}, got ${hexUpper(h.appHash)}`);
    want(bytesEqual(h.consensusHash, consensusParamsHash(state.consensusParams)), 'wrong Block.Header.ConsensusHash');
    want(bytesEqual(h.lastResultsHash, state.lastResultsHash), 'wrong Block.Header.LastResultsHash');
    want(bytesEqual(h.validatorsHash, state.validators.hash()), 'wrong Block.Header.ValidatorsHash');
    want(bytesEqual(h.nextValidatorsHash, state.nextValidators.hash()), 'wrong Block.Header.NextValidatorsHash');
    want(this.dataHashMatches(block), 'wrong Header.DataHash');
    // Block.ValidateBasic: every evidence item decodes and passes its own ValidateBasic.
    block.evidence.forEach((item, i) => {
      let reason: string | null;
      try {
        const ev = decodeEvidenceItem(item);
        reason = ev.kind === 'DuplicateVoteEvidence' ? duplicateVoteValidateBasic(ev) : null;
      } catch (e) {
        reason = (e as Error).message;
      }
      if (reason !== null) throw new Error(`invalid evidence (#${i}): ${reason}`);
    });
    want(bytesEqual(h.evidenceHash, evidenceHash(block.evidence)), 'wrong Header.EvidenceHash');
    want(bytesEqual(h.lastCommitHash, commitHash(block.lastCommit)), 'wrong Header.LastCommitHash');
    want(state.validators.getByAddress(h.proposerAddress) !== null, `block.Header.ProposerAddress ${hexUpper(h.proposerAddress)} is not a validator`);
    if (height === state.initialHeight) {
      want(block.lastCommit.signatures.length === 0, 'initial block can\'t have LastCommit signatures');
      want(h.time === state.lastBlockTime, 'block time is not equal to genesis time');
    } else {
      if (opts?.lastCommitVerified !== true) verifyCommit(state.chainId, state.lastValidators, state.lastBlockId, height - 1n, block.lastCommit);
      want(h.time > state.lastBlockTime, 'block time is not greater than last block time');
      want(h.time === medianTime(block.lastCommit, state.lastValidators), 'invalid block time');
    }
    const maxEvidence = state.consensusParams.evidence.maxBytes;
    const evidenceBytes = evidenceListByteSize(block.evidence);
    want(evidenceBytes <= maxEvidence, `Too much evidence: Max ${maxEvidence}, got ${evidenceBytes}`);
    // BlockExecutor.ValidateBlock: then the pool's CheckEvidence.
    if (block.evidence.length > 0) {
      if (this.deps.evidence === undefined) throw new Error('block has evidence but this node has no evidence pool to check it');
      this.deps.evidence.checkEvidence(state, block.evidence);
    }
  }

  async processProposal(state: State, block: Block): Promise<boolean> {
    return this.deps.app.processProposal({
      txs: block.data.txs,
      proposedLastCommit: commitInfo(state, block.lastCommit),
      misbehavior: misbehaviorOf(block.evidence),
      // The block hash is the header's: no need to encode the block and hash its parts again.
      hash: headerHash(block.header),
      height: block.header.height,
      time: block.header.time,
      nextValidatorsHash: block.header.nextValidatorsHash,
      proposerAddress: block.header.proposerAddress,
    });
  }

  /** `blockBytes`: the block's proto encoding when the caller has it (consensus made it for the part set). */
  async applyBlock(state: State, blockId: BlockID, block: Block, seenCommit: Commit, blockBytes?: Uint8Array): Promise<State> {
    const { mempool, bus } = this.deps;
    const height = block.header.height;
    // FinalizeBlock and the block's one write transaction (on the executor thread by default);
    // when it resolves this thread's views show the new height.
    // The mempool lock is held from just before this thread's app sees the new height (its check
    // state reset) until the recheck has rebuilt the check state from the remaining txs.
    let locked = false;
    const lock = async () => {
      if (locked) return;
      await mempool.lock();
      locked = true;
    };
    let res: WriteResult;
    const span = { height: String(height), txs: block.data.txs.length };
    let t = spanBegin();
    try {
      res = await this.writer.write({ state, blockId, block, seenCommit, blockBytes }, lock);
      spanEnd(t, 'finalizeBlock+commit', 'block', span);
      t = spanBegin();
      await lock();
      // The views moved to the new height in the turn that ended; a big block's mempool update
      // starts in the next one, so that the two are not one stretch on the RPC thread.
      if (block.data.txs.length >= YIELD_TXS) await yieldToLoop();
      const checks = this.deps.mempoolChecks?.(res.newState) ?? {};
      await mempool.update(height, block.data.txs, Array.from(res.codes, (code) => ({ code })), checks.preCheck, checks.postCheck);
      spanEnd(t, 'mempool update', 'block', span);
    } finally {
      if (locked) mempool.unlock();
    }
    this.observeBlock(height, block);
    // Nobody listens (no subscription, no broadcast_tx_commit waiting): no response to decode.
    t = spanBegin();
    if (bus && bus.listenerCount > 0) await this.fireEvents(bus, block, blockId, await res.response());
    spanEnd(t, 'fire events', 'block', span);
    return res.newState;
  }

  /**
   * Block sync: blocks applied in ONE write transaction (./block-writer.ts BlockBatch: one fsync
   * for the batch, and after a crash all of its blocks or none). `add` runs each block's
   * FinalizeBlock and writes and returns the state after it; `commit` commits them, then the
   * mempool update and events of each block as applyBlock does. Null when the writer cannot batch.
   * Consensus never batches: it commits each block alone (applyBlock).
   */
  beginBatch(): ExecutorBatch | null {
    if (this.writer.beginBatch === undefined) return null;
    const { mempool } = this.deps;
    let locked = false;
    const lock = async () => {
      if (locked) return;
      await mempool.lock();
      locked = true;
    };
    const batch = this.writer.beginBatch(lock);
    const blocks: { block: Block; blockId: BlockID }[] = [];
    return {
      get size() {
        return batch.size;
      },
      add: async (state, blockId, block, seenCommit, blockBytes) => {
        const next = await batch.add({ state, blockId, block, seenCommit, blockBytes });
        blocks.push({ block, blockId });
        return next;
      },
      // After abort: the blocks the writer had committed all the same.
      abort: async () => this.afterBatch(await batch.abort().catch(() => []), blocks, lock, () => locked, () => (locked = false)),
      commit: async () => {
        let results: WriteResult[];
        try {
          results = await batch.commit();
        } catch (e) {
          if (locked) mempool.unlock();
          locked = false;
          throw e;
        }
        return this.afterBatch(results, blocks, lock, () => locked, () => (locked = false));
      },
    };
  }

  /** A batch's committed blocks: mempool update (under the lock), then metrics and events. */
  private async afterBatch(
    results: WriteResult[],
    blocks: { block: Block; blockId: BlockID }[],
    lock: () => Promise<void>,
    isLocked: () => boolean,
    unlocked: () => void,
  ): Promise<State[]> {
    const { mempool, bus } = this.deps;
    try {
      if (results.length > 0) await lock();
      for (let i = 0; i < results.length; i++) {
        const { block } = blocks[i]!;
        const res = results[i]!;
        const checks = this.deps.mempoolChecks?.(res.newState) ?? {};
        await mempool.update(block.header.height, block.data.txs, Array.from(res.codes, (code) => ({ code })), checks.preCheck, checks.postCheck);
      }
    } finally {
      if (isLocked()) mempool.unlock();
      unlocked();
    }
    for (let i = 0; i < results.length; i++) {
      const { block, blockId } = blocks[i]!;
      this.observeBlock(block.header.height, block);
      if (bus && bus.listenerCount > 0) await this.fireEvents(bus, block, blockId, await results[i]!.response());
    }
    return results.map((r) => r.newState);
  }

  private lastBlockTime: bigint | null = null;

  private observeBlock(height: bigint, block: Block): void {
    const m = this.deps.metrics;
    if (m === undefined) return;
    m.latestBlockHeight?.set(Number(height));
    m.numTxs?.set(block.data.txs.length);
    m.totalTxs?.inc(block.data.txs.length);
    if (this.lastBlockTime !== null) m.blockInterval?.observe(Number(block.header.time - this.lastBlockTime) / 1e9);
    this.lastBlockTime = block.header.time;
  }

  /** NewBlock, NewBlockHeader, NewBlockEvents, Tx and ValidatorSetUpdates (state/execution.go fireEvents). */
  private async fireEvents(bus: EventBus, block: Block, blockId: BlockID, resp: ResponseFinalizeBlock): Promise<void> {
    const height = block.header.height.toString();
    // types/event_bus.go validateAndStringifyEvents: every attribute, indexed or not, keyed
    // `<type>.<key>`; the index flag matters only to the indexer.
    const flatten = (events: { type: string; attributes: { key: string; value: string }[] }[], into: Record<string, string[]>) => {
      for (const ev of events) {
        if (ev.type === '') continue;
        for (const a of ev.attributes) {
          if (a.key === '') continue;
          (into[`${ev.type}.${a.key}`] ??= []).push(a.value);
        }
      }
      return into;
    };
    bus.publish({ type: 'NewBlock', data: { block, blockId, resultFinalizeBlock: resp }, attributes: flatten(resp.events, {}) });
    bus.publish({ type: 'NewBlockHeader', data: { header: block.header }, attributes: {} });
    bus.publish({
      type: 'NewBlockEvents',
      data: { height: block.header.height, events: resp.events, numTxs: block.data.txs.length },
      // PublishEventNewBlockEvents adds block.height.
      attributes: flatten(resp.events, { 'block.height': [height] }),
    });
    for (const evidence of block.evidence) {
      bus.publish({ type: 'NewEvidence', data: { height: block.header.height, evidence }, attributes: {} });
    }
    for (let index = 0; index < block.data.txs.length; index++) {
      // A slice at a time: the servers on this thread answer in between.
      if (index > 0 && index % EVENT_SLICE_TXS === 0) await yieldToLoop();
      const tx = block.data.txs[index]!;
      const result = resp.txResults[index]!;
      const hash = hexUpper(txHash(tx));
      const attrs = flatten(result.events, { 'tx.hash': [hash], 'tx.height': [height] });
      bus.publish({ type: 'Tx', data: { height: block.header.height, index, tx, result }, attributes: attrs });
    }
    if (resp.validatorUpdates.length > 0) {
      bus.publish({ type: 'ValidatorSetUpdates', data: { validatorUpdates: resp.validatorUpdates }, attributes: {} });
    }
  }
}
