/**
 * The Tendermint consensus state machine as CometBFT 0.38 runs it (cometbft: consensus/state.go;
 * cometbft/cometbft:consensus/state.go).
 *
 * One instance drives one node through heights and rounds: NewHeight → NewRound → Propose →
 * Prevote → (PrevoteWait) → Precommit → (precommit wait) → Commit. The transition functions keep
 * CometBFT's names, guards and order (enterNewRound, enterPropose, enterPrevote, …, addVote), so
 * the two can be read side by side. Differences, each for a reason:
 *
 * - Blocks travel whole with their proposal (ProposalMessage); the BlockID still names the real
 *   PartSetHeader. Where CometBFT waits for "ProposalBlockParts" of a header, this code keeps the
 *   wanted BlockID (`wantedBlockId`) and a per-height cache of blocks whose recomputed BlockID
 *   matched a proposal; a block is used only for a BlockID that a proposal or +2/3 votes named.
 * - Every input (peer message, own message, timeout, "txs available") goes through one queue
 *   and one async loop, awaited across executor calls, so no two transitions ever interleave.
 *   Own messages go first (state.go's internalMsgQueue).
 * - Peer votes that arrive in one event-loop turn are verified as one batch through the
 *   VoteVerifier (the crypto pool), before they enter the queue.
 * - With only broadcast (no per-peer gossip state), liveness under message loss comes from
 *   (a) relaying each newly added peer vote once, which also lets honest nodes see both halves
 *   of an equivocation, (b) re-broadcasting our own current votes/proposal when no step change
 *   happened for `rebroadcastIntervalMs`, (c) answering a peer that is behind with the block and
 *   the precommits of its height (CometBFT's reactor does this from the block store), and
 *   (d) buffering messages of the next height while we are still committing.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Gauge } from '../metrics/types.js';
import {
  SignedMsgType,
  type Block,
  type BlockID,
  type Commit,
  type Proposal,
  type Vote,
} from '../types/block.js';
import type { State } from '../types/state.js';
import type { BlockExecutor } from '../state/executor.js';
import type { ValidatorSet } from '../types/validator_set.js';
import { blockIdOfEncoded } from '../types/partset.js';
import { proposalSignBytes, voteSignBytes } from '../types/signbytes.js';
import { emptyCommit, encodeBlock, type Part } from '../types/codec.js';
import type { Logger } from '../log.js';
import { nullLogger } from '../log.js';
import { HeightVoteSet } from './height_vote_set.js';
import { VoteSet, commitSigToVote, commitToVoteSet, type AddVoteResult } from './vote_set.js';
import type { PrivValidator } from './privval.js';
import { SyncVoteVerifier, type Ed25519Item, type VoteVerifier } from './verifier.js';
import { TimerTicker, type TimeoutTicker } from './ticker.js';
import type { WAL } from './wal.js';
import {
  ConsensusError,
  OWN_PEER,
  RoundStep,
  precommitTimeout,
  prevoteTimeout,
  proposeTimeout,
  roundStepName,
  type ConsensusConfig,
  type ConsensusEventData,
  type ConsensusEventName,
  type ConsensusMessage,
  type DuplicateVoteEvidence,
  type EventDataRoundState,
  type ProposalMessage,
  type TimeoutInfo,
} from './types.js';
import { blockIdEqual, blockIdKey, bytesEqual, hexUpper, isNilBlockId, nilBlockId, nowNs, proposerOf, validatorAt } from './util.js';
import { roundStateJSON, roundStateSimpleJSON, type RoundStateJSONOptions } from './round_state_json.js';
import { spanStep } from '../profiling/spans.js';

const MS = 1_000_000n;
/** types/block.go timeIota: a vote is never timed before its block's time + 1 ms (BFT time). */
const TIME_IOTA_NS = MS;

/** Peer messages waiting for verification or for the loop; beyond this they are dropped (state.go msgQueueSize is 1000 and blocks). */
const MAX_QUEUED_PEER_MESSAGES = 10_000;
/** Messages for height+1 kept while this node is still finishing its height. */
const MAX_FUTURE_MESSAGES = 2_000;
/** Blocks kept per height (proposals of several rounds, catch-up blocks). */
const MAX_CACHED_BLOCKS = 16;
/** The loop yields to the event loop after running this long (timers, sockets, RPC). */
const LOOP_YIELD_MS = 5;
/** A proposal block of at least this many txs is encoded in event-loop turns (encodeInTurns). */
const SLICED_BLOCK_TXS = 256;
/** Proposals for later rounds of this height, held until we get there. */
const MAX_PENDING_PROPOSALS = 4;

/** What consensus reads from the block store (src/store/blockstore.ts BlockStore fits). */
export interface ConsensusBlockStore {
  loadBlock(height: bigint): Block | null;
  /** The canonical commit for a height (stored with block height+1). */
  loadBlockCommit?(height: bigint): Commit | null;
  /** The +2/3 precommits this node saw for a height (kept for the latest height). */
  loadSeenCommit(height: bigint): Commit | null;
}

/**
 * cometbft/cometbft:consensus/metrics.go, every one optional (the catalogue's `consensus` group,
 * src/metrics/metrics.ts, fits).
 */
export interface ConsensusMetrics {
  /** consensus_height: the height being decided. */
  height?: Gauge;
  /** consensus_rounds: the round at that height. */
  rounds?: Gauge;
  /** consensus_step: RoundStep, 1 NewHeight … 8 Commit. */
  step?: Gauge;
  /** consensus_validators: the set deciding this height. */
  validators?: Gauge;
  validatorsPower?: Gauge;
}

export interface ConsensusStateOptions {
  config: ConsensusConfig & { doubleSignCheckHeight?: number };
  /** The state after the last committed height (state store). */
  state: State;
  executor: BlockExecutor;
  /** Sends a message to every peer. */
  broadcast: (msg: ConsensusMessage) => void;
  /** Sends a message to one peer (catch-up answers); falls back to broadcast. */
  sendTo?: (peerId: string, msg: ConsensusMessage) => void;
  /** Absent for a non-validator (full) node. */
  privValidator?: PrivValidator | null;
  /** Batch signature checks; default SyncVoteVerifier (inline node:crypto). */
  verifier?: VoteVerifier;
  /** Opened by start(), closed by stop(). Absent: no crash recovery (tests). */
  wal?: WAL | null;
  /** Default TimerTicker (setTimeout). Tests may pass a ManualTicker. */
  ticker?: TimeoutTicker;
  /** For the last commit after a restart, the proof-block rule and catch-up answers. */
  blockStore?: ConsensusBlockStore | null;
  /** The seen commit of state.lastBlockHeight, when no blockStore is given. */
  lastCommit?: Commit | null;
  onEvent?: (name: ConsensusEventName, data: ConsensusEventData) => void;
  /** Duplicate-vote evidence for the evidence pool. */
  onEvidence?: (ev: DuplicateVoteEvidence) => void;
  /** Unrecoverable errors (executor failure, committed invalid block, WAL failure on own messages); consensus halts. */
  onFatal?: (err: Error) => void;
  /** Nanoseconds since the epoch. */
  now?: () => bigint;
  logger?: Logger;
  metrics?: ConsensusMetrics;
  /** Re-broadcast each newly added peer vote once (default true). */
  relayVotes?: boolean;
  /** Re-broadcast a newly accepted peer proposal with its block once (default false: costs n× block bandwidth). */
  relayProposals?: boolean;
  /** Re-broadcast own proposal/votes after this long without a step change (default 1000; 0 = never). */
  rebroadcastIntervalMs?: number;
  /** Minimum gap between two catch-up answers to one peer for one height (default 500 ms). */
  catchupResendMs?: number;
  /** height_vote_set.go: rounds a peer may open beyond ours (default 2). */
  maxPeerCatchupRounds?: number;
  /** JSON key type name in round-state dumps (names registry); default `consensus/PubKeyEd25519`. */
  pubKeyTypeName?: string;
}

/** RoundState (consensus/types/round_state.go) as getRoundState() returns it; do not mutate. */
export interface RoundStateSnapshot {
  height: bigint;
  round: number;
  step: RoundStep;
  startTime: bigint;
  commitTime: bigint;
  validators: ValidatorSet;
  proposal: Proposal | null;
  proposalBlock: Block | null;
  proposalBlockId: BlockID | null;
  /** The BlockID whose block we are waiting for or hold (ProposalBlockParts.Header()). */
  wantedBlockId: BlockID | null;
  lockedRound: number;
  lockedBlock: Block | null;
  lockedBlockId: BlockID | null;
  validRound: number;
  validBlock: Block | null;
  validBlockId: BlockID | null;
  votes: HeightVoteSet;
  commitRound: number;
  lastCommit: VoteSet | null;
  lastValidators: ValidatorSet;
  triggeredTimeoutPrecommit: boolean;
}

/** Back-off of a signature retry after PRIVVAL_PERSIST_FAILED: 200 ms doubling to 5 s. */
const SIGN_RETRY_FIRST_MS = 200;
const SIGN_RETRY_MAX_MS = 5000;

/**
 * I/O errors that go away by themselves: the process or the system out of descriptors, a full
 * disk or quota, an interrupted or would-block call, memory pressure.
 */
const TRANSIENT_IO = new Set(['EMFILE', 'ENFILE', 'ENOSPC', 'EDQUOT', 'EAGAIN', 'EWOULDBLOCK', 'EINTR', 'EBUSY', 'ENOMEM']);

export function isTransientIoError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TRANSIENT_IO.has(code);
}

type QueueItem =
  | { kind: 'msg'; msg: ConsensusMessage; peerId: string; verifiedKey: Uint8Array | null }
  | { kind: 'timeout'; ti: TimeoutInfo }
  | { kind: 'txs' }
  | { kind: 'task'; fn: () => Promise<void> | void };

interface CachedBlock {
  block: Block;
  blockId: BlockID;
}

/**
 * MedianTime (types/block.go Commit.MedianTime, types/time WeightedMedian): the voting-power
 * weighted median of the non-absent commit timestamps: the block time of height+1 in 0.38.
 */
export function medianTime(commit: Commit, validators: ValidatorSet): bigint {
  const weighted: { t: bigint; w: bigint }[] = [];
  let total = 0n;
  for (const sig of commit.signatures) {
    if (sig.blockIdFlag === 1 /* Absent */) continue;
    const f = validators.getByAddress(sig.validatorAddress);
    if (f === null) continue;
    total += f.validator.votingPower;
    weighted.push({ t: sig.timestamp, w: f.validator.votingPower });
  }
  weighted.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
  let median = total / 2n;
  for (const x of weighted) {
    if (median <= x.w) return x.t;
    median -= x.w;
  }
  return 0n;
}

export class ConsensusState {
  private readonly cfg: ConsensusConfig & { doubleSignCheckHeight?: number };
  private state: State;
  private rs!: RoundStateSnapshot;
  private readonly executor: BlockExecutor;
  private readonly broadcastFn: (msg: ConsensusMessage) => void;
  private readonly sendToFn: ((peerId: string, msg: ConsensusMessage) => void) | null;
  private readonly pv: PrivValidator | null;
  private readonly verifier: VoteVerifier;
  private readonly wal: WAL | null;
  private readonly ticker: TimeoutTicker;
  private readonly blockStore: ConsensusBlockStore | null;
  private readonly now: () => bigint;
  private readonly log: Logger;
  private readonly opts: ConsensusStateOptions;
  private readonly listeners = new Set<(name: ConsensusEventName, data: ConsensusEventData) => void>();

  private readonly internalQ: QueueItem[] = [];
  private readonly externalQ: QueueItem[] = [];
  private inbox: { msg: ConsensusMessage; peerId: string }[] = [];
  private flushScheduled = false;
  private flushing = 0;
  private futureMsgs: { msg: ConsensusMessage; peerId: string }[] = [];
  private loopRunning = false;
  private loopDone: Promise<void> = Promise.resolve();
  private started = false;
  private stopped = false;
  private halted = false;
  private replaying = false;
  private rebroadcastTimer: NodeJS.Timeout | null = null;
  /** A signature retry after the private validator could not save its state (see signFailed). */
  private signRetryTimer: NodeJS.Timeout | null = null;
  private signRetry: { key: string; attempt: number } | null = null;
  private lastProgressMs = Date.now();

  private readonly blockCache = new Map<string, CachedBlock>();
  /** Each block's BlockID, proto bytes and parts, made once: gossip, the WAL and the executor share them. */
  private readonly blockIds = new WeakMap<Block, { id: BlockID; bytes: Uint8Array; parts: Part[] }>();
  private validatedBlocks = new Set<string>();
  private pendingProposals = new Map<number, Proposal>();
  private reportedConflicts = new Set<string>();
  private readonly catchupSent = new Map<string, { height: bigint; at: number }>();
  private lastCommitted: { height: bigint; block: Block; blockId: BlockID } | null = null;
  /** The peer with the highest height we have heard of, when above ours (we are behind). */
  private aheadPeer: { peerId: string; height: bigint } | null = null;
  private stateInitialized = false;

  /** Peer messages dropped because a queue was full. */
  droppedMessages = 0;

  constructor(opts: ConsensusStateOptions) {
    this.opts = opts;
    this.cfg = opts.config;
    this.state = opts.state;
    this.executor = opts.executor;
    this.broadcastFn = opts.broadcast;
    this.sendToFn = opts.sendTo ?? null;
    this.pv = opts.privValidator ?? null;
    this.verifier = opts.verifier ?? new SyncVoteVerifier();
    this.wal = opts.wal ?? null;
    this.ticker = opts.ticker ?? new TimerTicker();
    this.blockStore = opts.blockStore ?? null;
    this.now = opts.now ?? nowNs;
    this.log = (opts.logger ?? nullLogger).child({ module: 'consensus' });
    if (opts.onEvent) this.listeners.add(opts.onEvent);

    this.rs = {
      height: 0n,
      round: 0,
      step: RoundStep.NewHeight,
      startTime: 0n,
      commitTime: 0n,
      validators: opts.state.validators,
      proposal: null,
      proposalBlock: null,
      proposalBlockId: null,
      wantedBlockId: null,
      lockedRound: -1,
      lockedBlock: null,
      lockedBlockId: null,
      validRound: -1,
      validBlock: null,
      validBlockId: null,
      votes: new HeightVoteSet(opts.state.chainId, 1n, opts.state.validators, { maxPeerCatchupRounds: opts.maxPeerCatchupRounds }),
      commitRound: -1,
      lastCommit: null,
      lastValidators: opts.state.lastValidators,
      triggeredTimeoutPrecommit: false,
    };
    this.reconstructLastCommit(opts.state);
    this.updateToState(opts.state);
  }

  // -------------------------------------------------------------------------------------------
  // Public surface

  get height(): bigint {
    return this.rs.height;
  }

  get round(): number {
    return this.rs.round;
  }

  get step(): RoundStep {
    return this.rs.step;
  }

  /** The state after the last committed height. */
  getState(): State {
    return this.state;
  }

  /** The live round state, for RPC rendering (read synchronously; do not mutate). */
  getRoundState(): RoundStateSnapshot {
    return { ...this.rs };
  }

  /** dump_consensus_state `round_state`. */
  roundStateJSON(opts: Partial<RoundStateJSONOptions> = {}): ReturnType<typeof roundStateJSON> {
    return roundStateJSON(this.getRoundState(), { pubKeyTypeName: this.opts.pubKeyTypeName ?? 'consensus/PubKeyEd25519', ...opts });
  }

  /** consensus_state `round_state` (RoundStateSimple). */
  roundStateSimpleJSON(): ReturnType<typeof roundStateSimpleJSON> {
    return roundStateSimpleJSON(this.getRoundState());
  }

  /** Adds an event listener; returns its remover. */
  subscribe(fn: (name: ConsensusEventName, data: ConsensusEventData) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** True after a fatal error stopped the state machine. */
  get isHalted(): boolean {
    return this.halted;
  }

  /**
   * OnStart: open the WAL and replay this height's messages, check the double-sign risk, then
   * schedule round 0 and start processing.
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.ticker.onTimeout = (ti) => this.enqueue({ kind: 'timeout', ti });
    if (this.wal) {
      const r = await this.wal.open();
      if (r.repaired) this.log.error('WAL was corrupted; repaired', { backup: r.backup, err: r.error });
      try {
        await this.catchupReplay(this.rs.height);
      } catch (e) {
        this.log.error('error on catchup replay; proceeding to start state anyway', { err: (e as Error).message });
      } finally {
        this.replaying = false;
      }
    }
    this.checkDoubleSigningRisk(this.rs.height);
    this.scheduleRound0();
    const iv = this.opts.rebroadcastIntervalMs ?? 1000;
    if (iv > 0) {
      this.rebroadcastTimer = setInterval(() => this.checkStuck(iv), Math.max(5, Math.floor(iv / 2)));
      this.rebroadcastTimer.unref?.();
    }
    this.kick();
    // Own messages replayed from the WAL may never have left before the crash.
    if (this.wal) this.enqueue({ kind: 'task', fn: () => this.rebroadcastOwn() });
  }

  /** Stops timers and input, waits for the transition in flight, closes the WAL. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.ticker.stop();
    if (this.rebroadcastTimer) clearInterval(this.rebroadcastTimer);
    this.rebroadcastTimer = null;
    if (this.signRetryTimer) clearTimeout(this.signRetryTimer);
    this.signRetryTimer = null;
    await this.loopDone;
    if (this.wal) await this.wal.close();
  }

  /** A consensus message from a peer. Verification is batched per event-loop turn. */
  receive(msg: ConsensusMessage, peerId: string): void {
    if (this.stopped || this.halted) return;
    const m = normalizeMessage(msg);
    if (m === null) return;
    if (this.inbox.length >= MAX_QUEUED_PEER_MESSAGES) {
      this.droppedMessages++;
      return;
    }
    this.inbox.push({ msg: m, peerId });
    this.scheduleFlush();
  }

  /**
   * Resolves once every received message has been verified and processed and the loop is idle
   * (tests; a node draining before shutdown). Timeouts scheduled for later do not count.
   */
  async whenIdle(): Promise<void> {
    for (;;) {
      const busy =
        this.inbox.length > 0 || this.flushScheduled || this.flushing > 0 || this.loopRunning ||
        (!this.stopped && !this.halted && (this.internalQ.length > 0 || this.externalQ.length > 0));
      if (!busy) return;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** The mempool has txs (only relevant with create_empty_blocks = false or an interval). */
  notifyTxsAvailable(): void {
    this.enqueue({ kind: 'txs' });
  }

  // -------------------------------------------------------------------------------------------
  // Queue and loop

  private enqueue(item: QueueItem, internal = false): void {
    if (this.stopped || this.halted) return;
    if (internal) this.internalQ.push(item);
    else {
      if (item.kind === 'msg' && this.externalQ.length >= MAX_QUEUED_PEER_MESSAGES) {
        this.droppedMessages++;
        return;
      }
      this.externalQ.push(item);
    }
    this.kick();
  }

  private kick(): void {
    if (this.loopRunning || !this.started || this.replaying || this.stopped || this.halted) return;
    this.loopRunning = true;
    this.loopDone = this.runLoop();
  }

  private async runLoop(): Promise<void> {
    let since = performance.now();
    try {
      while (!this.stopped && !this.halted) {
        const item = this.internalQ.shift() ?? this.externalQ.shift();
        if (item === undefined) break;
        try {
          await this.handleItem(item);
        } catch (e) {
          this.log.error('consensus failure', { err: (e as Error).message, stack: (e as Error).stack });
        }
        // Own messages and inline verification resolve as microtasks only: a lone validator with
        // skip_timeout_commit would never let timers or sockets run. Yield every few ms.
        if (performance.now() - since > LOOP_YIELD_MS) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          since = performance.now();
        }
      }
    } finally {
      this.loopRunning = false;
    }
  }

  private async handleItem(item: QueueItem): Promise<void> {
    switch (item.kind) {
      case 'msg': {
        const own = item.peerId === OWN_PEER;
        if (this.wal && !this.replaying) {
          const wal = this.wal;
          try {
            // Own messages must be durable before they leave: a transient failure (descriptors
            // exhausted, disk full) is waited out rather than halting consensus for good.
            // A proposal's block is encoded once for its BlockID, the WAL and the executor.
            const bytes = item.msg.kind === 'proposal' ? this.blockBytesOf(item.msg.block) : undefined;
            if (own) await this.retryTransientIo('own message', () => wal.writeMessage(item.msg, item.peerId, true, bytes));
            else await wal.writeMessage(item.msg, item.peerId, false, bytes);
          } catch (e) {
            if (this.stopped) return;
            if (own) return this.fatal(new ConsensusError('WAL_WRITE_FAILED', `failed to write own message to the WAL: ${(e as Error).message}`));
            this.log.error('failed writing to WAL', { err: (e as Error).message });
          }
        }
        // Own messages leave only after they are durable in the WAL (state.go: WriteSync before handleMsg).
        if (own && !this.replaying) this.broadcastFn(this.withParts(item.msg));
        await this.handleMsg(item.msg, item.peerId, item.verifiedKey);
        return;
      }
      case 'timeout':
        if (this.wal && !this.replaying) {
          try {
            this.wal.write({ type: 'timeout', timeout: item.ti });
          } catch (e) {
            this.log.error('failed writing to WAL', { err: (e as Error).message });
          }
        }
        await this.handleTimeout(item.ti);
        return;
      case 'txs':
        await this.handleTxsAvailable();
        return;
      case 'task':
        await item.fn();
        return;
    }
  }

  /**
   * Runs a WAL write, retrying with back-off (100 ms doubling to 5 s) while it fails with a
   * transient I/O error (isTransientIoError) and the node runs; any other error is thrown. The
   * loop waits meanwhile: nothing that needs this record may go ahead of it.
   */
  private async retryTransientIo(what: string, write: () => Promise<void>): Promise<void> {
    let delay = 100;
    for (let attempt = 1; ; attempt++) {
      try {
        await write();
        if (attempt > 1) this.log.info('WAL write succeeded after retrying', { what, attempts: attempt });
        return;
      } catch (e) {
        if (!isTransientIoError(e) || this.stopped) throw e;
        this.log.error('WAL write failed; retrying', { what, attempt, retry_in_ms: delay, err: (e as Error).message });
      }
      await new Promise((r) => setTimeout(r, delay));
      if (this.stopped) throw new ConsensusError('STOPPED', 'consensus stopped');
      delay = Math.min(delay * 2, 5000);
    }
  }

  /**
   * A sign call failed. When the private validator could not save its state (PRIVVAL_PERSIST_FAILED:
   * nothing was signed, nothing left), the same step is tried again after a back-off (200 ms
   * doubling to 5 s) for as long as consensus is still at it; once the I/O works again the node
   * goes on by itself. Any other failure (double-sign refusal, …) is logged and dropped as before.
   */
  private signFailed(key: string, err: unknown, still: () => boolean, again: () => Promise<void>): boolean {
    if ((err as { code?: unknown }).code !== 'PRIVVAL_PERSIST_FAILED' || this.stopped || this.halted || this.replaying) return false;
    const attempt = this.signRetry?.key === key ? this.signRetry.attempt + 1 : 1;
    this.signRetry = { key, attempt };
    const delay = Math.min(SIGN_RETRY_MAX_MS, SIGN_RETRY_FIRST_MS * 2 ** Math.min(attempt - 1, 10));
    this.log.error('cannot sign: the private validator could not save its state; retrying', { what: key, attempt, retry_in_ms: delay, err: (err as Error).message });
    if (this.signRetryTimer) clearTimeout(this.signRetryTimer);
    this.signRetryTimer = setTimeout(() => {
      this.signRetryTimer = null;
      this.enqueue({ kind: 'task', fn: async () => (still() ? again() : undefined) }, true);
    }, delay);
    return true;
  }

  /** A signature went out: a later failure starts its back-off afresh. */
  private signSucceeded(key: string): void {
    if (this.signRetry?.key === key && this.signRetry.attempt > 0) {
      this.log.info('signed after retrying', { what: key, attempts: this.signRetry.attempt + 1 });
    }
    this.signRetry = null;
  }

  private fatal(err: Error): void {
    if (this.halted) return;
    this.halted = true;
    if (this.signRetryTimer) clearTimeout(this.signRetryTimer);
    this.signRetryTimer = null;
    this.ticker.stop();
    if (this.rebroadcastTimer) clearInterval(this.rebroadcastTimer);
    this.rebroadcastTimer = null;
    this.log.error('CONSENSUS FAILURE!!!', { err: err.message });
    this.opts.onFatal?.(err);
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flushing++;
      void this.flush()
        .catch((e) => this.log.error('vote verification failed', { err: (e as Error).message }))
        .finally(() => this.flushing--);
    });
  }

  /**
   * Pre-checks a turn's worth of peer messages against the current round state, verifies all
   * vote signatures in one verifier call, and queues what passed. A key that verified is
   * remembered with the item, so addVote re-verifies only if the validator set changed meanwhile.
   */
  private async flush(): Promise<void> {
    const batch = this.inbox;
    this.inbox = [];
    if (batch.length === 0 || this.stopped || this.halted) return;
    const chainId = this.state.chainId;
    const items: Ed25519Item[] = [];
    const entries: { msg: ConsensusMessage; peerId: string; vi: number; key: Uint8Array | null }[] = [];
    for (const { msg, peerId } of batch) {
      if (msg.kind === 'vote') {
        const pc = this.precheckVote(msg.vote, peerId);
        if (pc === 'drop') continue;
        if (pc === 'future') {
          this.bufferFuture(msg, peerId);
          continue;
        }
        entries.push({ msg, peerId, vi: items.length, key: pc });
        items.push({ scheme: 'ed25519', pubKey: pc, msg: voteSignBytes(chainId, msg.vote), sig: msg.vote.signature });
      } else {
        const h = msg.proposal.height;
        if (h < this.rs.height) {
          if (h + 1n < this.rs.height || msg.proposal.signature.length > 0) this.catchupPeer(peerId, h);
          continue;
        }
        if (h > this.rs.height) {
          this.bufferFuture(msg, peerId);
          continue;
        }
        entries.push({ msg, peerId, vi: -1, key: null });
      }
    }
    let results: boolean[] | null = null;
    if (items.length > 0) {
      try {
        results = await this.verifier.verifyEd25519(items);
      } catch (e) {
        // Pool saturated or closed: let addVote verify one by one instead of losing the votes.
        this.log.error('batch vote verification failed; verifying later', { err: (e as Error).message, n: items.length });
      }
    }
    for (const e of entries) {
      if (e.vi >= 0 && results !== null) {
        if (!results[e.vi]) {
          this.log.debug('invalid vote signature', { peer: e.peerId });
          continue;
        }
        this.enqueue({ kind: 'msg', msg: e.msg, peerId: e.peerId, verifiedKey: e.key });
      } else this.enqueue({ kind: 'msg', msg: e.msg, peerId: e.peerId, verifiedKey: null });
    }
  }

  /** The pubkey to verify a peer vote with, or 'drop' / 'future'. Also triggers catch-up answers. */
  private precheckVote(vote: Vote, peerId: string): Uint8Array | 'drop' | 'future' {
    const rs = this.rs;
    if (vote.type !== SignedMsgType.Prevote && vote.type !== SignedMsgType.Precommit) return 'drop';
    if (!Number.isInteger(vote.round) || vote.round < 0 || vote.signature.length !== 64) return 'drop';
    if (vote.height > rs.height) return 'future';
    let valSet: ValidatorSet;
    let existing: Vote | null;
    if (vote.height < rs.height) {
      if (vote.height + 1n === rs.height && vote.type === SignedMsgType.Precommit && rs.lastCommit !== null) {
        valSet = rs.lastCommit.valSet;
        existing = rs.lastCommit.round === vote.round ? rs.lastCommit.getByIndex(vote.validatorIndex) : null;
      } else {
        // A vote of an earlier height: the peer is behind. A precommit of h may come from a node
        // still at h or from one that just moved to h+1: answer for both.
        this.catchupPeer(peerId, vote.height);
        if (vote.type === SignedMsgType.Precommit) this.catchupPeer(peerId, vote.height + 1n);
        return 'drop';
      }
    } else {
      valSet = rs.validators;
      existing = rs.votes.getVoteSet(vote.round, vote.type)?.getByIndex(vote.validatorIndex) ?? null;
    }
    const val = validatorAt(valSet, vote.validatorIndex);
    if (val === null || !bytesEqual(val.address, vote.validatorAddress)) return 'drop';
    // Already have exactly this vote (a relay or re-broadcast): no need to verify again.
    if (existing !== null && bytesEqual(existing.signature, vote.signature)) return 'drop';
    return val.pubKey.bytes;
  }

  private bufferFuture(msg: ConsensusMessage, peerId: string): void {
    const h = msg.kind === 'vote' ? msg.vote.height : msg.proposal.height;
    if (peerId !== OWN_PEER && (this.aheadPeer === null || h >= this.aheadPeer.height)) this.aheadPeer = { peerId, height: h };
    if (h !== this.rs.height + 1n) return;
    if (this.futureMsgs.length >= MAX_FUTURE_MESSAGES) {
      this.droppedMessages++;
      return;
    }
    this.futureMsgs.push({ msg, peerId });
  }

  private reinjectFuture(): void {
    const keep = this.futureMsgs.filter(({ msg }) => (msg.kind === 'vote' ? msg.vote.height : msg.proposal.height) === this.rs.height);
    this.futureMsgs = [];
    if (keep.length === 0) return;
    for (const k of keep) this.inbox.push(k);
    this.scheduleFlush();
  }

  // -------------------------------------------------------------------------------------------
  // Message handling

  private async handleMsg(msg: ConsensusMessage, peerId: string, verifiedKey: Uint8Array | null): Promise<void> {
    if (msg.kind === 'proposal') await this.handleProposalMessage(msg, peerId);
    else await this.tryAddVote(msg.vote, peerId, verifiedKey);
  }

  private encoded(block: Block, bytes?: Uint8Array): { id: BlockID; bytes: Uint8Array; parts: Part[] } {
    let e = this.blockIds.get(block);
    if (e === undefined) {
      const { blockId, blockBytes, parts } = blockIdOfEncoded(block, bytes ?? encodeBlock(block));
      e = { id: blockId, bytes: blockBytes, parts };
      this.blockIds.set(block, e);
    }
    return e;
  }

  /**
   * encoded() for the proposer's new block, with an event-loop turn before the encoding and one
   * before the part set when the block is big: the block's making, its encoding and its part set
   * (thousands of txs, megabytes) would otherwise be one stretch on the thread that answers RPC.
   */
  private async encodeInTurns(block: Block): Promise<BlockID> {
    const have = this.blockIds.get(block);
    if (have !== undefined) return have.id;
    const big = block.data.txs.length >= SLICED_BLOCK_TXS;
    if (big) await yieldToLoop();
    const bytes = encodeBlock(block);
    if (big) await yieldToLoop();
    return this.encoded(block, bytes).id;
  }

  private blockIdFor(block: Block): BlockID {
    return this.encoded(block).id;
  }

  /** A proposal message to broadcast, with the block's parts when they are made (the reactor gossips them). */
  private withParts(msg: ConsensusMessage): ConsensusMessage {
    if (msg.kind !== 'proposal' || msg.parts !== undefined) return msg;
    const e = this.blockIds.get(msg.block);
    return e === undefined ? msg : { ...msg, parts: e.parts };
  }

  /** The block's proto bytes, or undefined when it does not encode (the caller's own path reports that). */
  private blockBytesOf(block: Block): Uint8Array | undefined {
    try {
      return this.encoded(block).bytes;
    } catch {
      return undefined;
    }
  }

  private cacheBlock(blockId: BlockID, block: Block): void {
    const key = blockIdKey(blockId);
    if (this.blockCache.has(key)) return;
    if (this.blockCache.size >= MAX_CACHED_BLOCKS) {
      // Evict the oldest block we are not using.
      for (const [k, v] of this.blockCache) {
        if (v.block !== this.rs.proposalBlock && v.block !== this.rs.lockedBlock && v.block !== this.rs.validBlock) {
          this.blockCache.delete(k);
          break;
        }
      }
    }
    this.blockCache.set(key, { block, blockId });
  }

  private cachedBlock(id: BlockID | null): CachedBlock | null {
    if (id === null) return null;
    return this.blockCache.get(blockIdKey(id)) ?? null;
  }

  private async handleProposalMessage(msg: ProposalMessage, peerId: string): Promise<void> {
    const rs = this.rs;
    const p = msg.proposal;
    if (p.height !== rs.height) return;
    if (msg.block.header.height !== p.height) {
      this.log.debug('proposal block of the wrong height', { peer: peerId });
      return;
    }
    const own = peerId === OWN_PEER;
    let id: BlockID;
    try {
      id = this.blockIdFor(msg.block);
    } catch (e) {
      this.log.debug('unencodable proposal block', { peer: peerId, err: (e as Error).message });
      return;
    }
    if (!blockIdEqual(id, p.blockId)) {
      this.log.debug('proposal block does not match the proposal BlockID', { peer: peerId });
      return;
    }
    this.cacheBlock(id, msg.block);
    if (p.signature.length > 0) {
      if (p.round === rs.round) {
        const accepted = await this.setProposal(p, own);
        if (accepted && !own && this.opts.relayProposals && !this.replaying) this.broadcastFn(this.withParts(msg));
      } else if (p.round > rs.round) {
        this.pendingProposals.set(p.round, p);
        if (this.pendingProposals.size > MAX_PENDING_PROPOSALS) {
          const highest = Math.max(...this.pendingProposals.keys());
          this.pendingProposals.delete(highest);
        }
      }
    } else if (!own) {
      // A peer's catch-up (catchupPeer): it committed this BlockID with +2/3 precommits of
      // p.round, which it sends next. Like CometBFT's VoteSetMaj23 claim (cometbft/cometbft:
      // consensus/reactor.go queryMaj23Routine, types/vote_set.go SetPeerMaj23), this lets those
      // precommits count even where we hold a conflicting vote of an equivocating validator.
      rs.votes.setPeerMaj23Precommits(p.round, p.blockId);
    }
    await this.maybeCompleteProposal(rs.height);
  }

  /** defaultSetProposal: checks POLRound and the proposer's signature, then keeps it. */
  private async setProposal(p: Proposal, own: boolean): Promise<boolean> {
    const rs = this.rs;
    if (rs.proposal !== null) return false;
    if (p.height !== rs.height || p.round !== rs.round) return false;
    if (p.polRound < -1 || (p.polRound >= 0 && p.polRound >= p.round)) {
      this.log.debug('error invalid proposal POL round', { polRound: p.polRound, round: p.round });
      return false;
    }
    const proposer = proposerOf(rs.validators);
    if (proposer === null) return false;
    if (!own) {
      const [ok] = await this.verifier.verifyEd25519([
        { scheme: 'ed25519', pubKey: proposer.pubKey.bytes, msg: proposalSignBytes(this.state.chainId, p), sig: p.signature },
      ]);
      if (!ok) {
        this.log.debug('error invalid proposal signature', { height: p.height, round: p.round });
        return false;
      }
      // The await yielded: make sure nothing moved (only this loop mutates rs, but be exact).
      if (rs !== this.rs || rs.proposal !== null || p.height !== rs.height || p.round !== rs.round) return false;
    }
    rs.proposal = p;
    // "We don't update ProposalBlockParts if it is already set": commit step or a valid block.
    if (rs.wantedBlockId === null) rs.wantedBlockId = p.blockId;
    this.log.info('received proposal', { height: p.height, round: p.round, hash: hexUpper(p.blockId.hash) });
    return true;
  }

  /** Attaches the wanted block from the cache, without the completion transitions. */
  private attachCachedBlock(): boolean {
    const rs = this.rs;
    if (rs.proposalBlock !== null) return false;
    const c = this.cachedBlock(rs.wantedBlockId);
    if (c === null) return false;
    rs.proposalBlock = c.block;
    rs.proposalBlockId = c.blockId;
    this.publish('CompleteProposal', { ...this.roundStateEvent(), blockId: c.blockId });
    return true;
  }

  /** The block for the wanted BlockID is here: handleCompleteProposal. */
  private async maybeCompleteProposal(height: bigint): Promise<void> {
    if (this.rs.height !== height) return;
    if (!this.attachCachedBlock()) return;
    await this.handleCompleteProposal(height);
  }

  private async handleCompleteProposal(height: bigint): Promise<void> {
    const rs = this.rs;
    const prevotes = rs.votes.prevotes(rs.round);
    const maj = prevotes?.twoThirdsMajority() ?? null;
    if (maj !== null && !isNilBlockId(maj) && rs.validRound < rs.round) {
      if (this.hashesTo(rs.proposalBlockId, maj)) {
        this.log.debug('updating valid block to new proposal block', { round: rs.round });
        rs.validRound = rs.round;
        rs.validBlock = rs.proposalBlock;
        rs.validBlockId = rs.proposalBlockId;
      }
    }
    if (rs.step <= RoundStep.Propose && this.isProposalComplete()) {
      await this.enterPrevote(height, rs.round);
      if (maj !== null) await this.enterPrecommit(height, this.rs.round);
    } else if (rs.step === RoundStep.Commit) {
      await this.tryFinalizeCommit(height);
    }
  }

  private hashesTo(id: BlockID | null, target: BlockID): boolean {
    return id !== null && bytesEqual(id.hash, target.hash);
  }

  /** tryAddVote: verify if needed, add, report conflicts. */
  private async tryAddVote(vote: Vote, peerId: string, verifiedKey: Uint8Array | null): Promise<boolean> {
    const rs = this.rs;
    const own = peerId === OWN_PEER;
    if (!own) {
      let valSet: ValidatorSet | null = null;
      if (vote.height === rs.height) valSet = rs.validators;
      else if (vote.height + 1n === rs.height && vote.type === SignedMsgType.Precommit && rs.lastCommit !== null) valSet = rs.lastCommit.valSet;
      if (valSet === null) return false;
      const val = validatorAt(valSet, vote.validatorIndex);
      if (val === null) return false;
      if (verifiedKey === null || !bytesEqual(verifiedKey, val.pubKey.bytes)) {
        const [ok] = await this.verifier.verifyEd25519([
          { scheme: 'ed25519', pubKey: val.pubKey.bytes, msg: voteSignBytes(this.state.chainId, vote), sig: vote.signature },
        ]);
        if (!ok) {
          this.log.debug('invalid vote signature', { peer: peerId });
          return false;
        }
      }
    }
    return this.addVote(vote, peerId);
  }

  private handleAddError(r: AddVoteResult | { added: false; code?: string; error?: string }, vote: Vote, peerId: string): void {
    if (r.code === undefined) return; // plain duplicate
    if (r.code === 'VOTE_CONFLICTING' && 'evidence' in r && r.evidence) {
      if (this.pv !== null && bytesEqual(vote.validatorAddress, this.pv.address)) {
        this.log.error('found conflicting vote from ourselves; did you unsafe_reset a validator?', { height: vote.height, round: vote.round, type: vote.type });
        return;
      }
      const k = `${vote.height}/${vote.round}/${vote.type}/${vote.validatorIndex}`;
      if (this.reportedConflicts.has(k)) return;
      this.reportedConflicts.add(k);
      this.log.info('found conflicting vote; reporting duplicate-vote evidence', { height: vote.height, round: vote.round, validator: hexUpper(vote.validatorAddress) });
      try {
        this.opts.onEvidence?.(r.evidence);
      } catch (e) {
        this.log.error('evidence callback failed', { err: (e as Error).message });
      }
      return;
    }
    this.log.debug('vote not added', { peer: peerId, code: r.code, err: r.error });
  }

  /** state.go addVote. */
  private async addVote(vote: Vote, peerId: string): Promise<boolean> {
    const rs = this.rs;
    // A precommit for the previous height.
    if (vote.height + 1n === rs.height && vote.type === SignedMsgType.Precommit) {
      if (rs.step !== RoundStep.NewHeight || rs.lastCommit === null) return false;
      const r = rs.lastCommit.addVote(vote);
      if (!r.added) {
        this.handleAddError(r, vote, peerId);
        return false;
      }
      this.publish('Vote', { vote });
      this.relay(vote, peerId);
      if (this.cfg.skipTimeoutCommit && rs.lastCommit.hasAll()) await this.enterNewRound(rs.height, 0);
      return true;
    }
    if (vote.height !== rs.height) return false;

    const height = rs.height;
    const r = rs.votes.addVote(vote, peerId);
    if (!r.added) {
      this.handleAddError(r, vote, peerId);
      return false;
    }
    // Counted for a BlockID a peer claimed +2/3 for, though it conflicts: still evidence.
    if (r.code === 'VOTE_CONFLICTING') this.handleAddError(r, vote, peerId);
    this.publish('Vote', { vote });
    this.relay(vote, peerId);

    if (vote.type === SignedMsgType.Prevote) {
      const prevotes = rs.votes.prevotes(vote.round)!;
      const maj = prevotes.twoThirdsMajority();
      let attached = false;
      if (maj !== null) {
        // There was a polka. Unlock if `LockedRound < vote.Round <= Round` and it is for another block.
        if (rs.lockedBlock !== null && rs.lockedRound < vote.round && vote.round <= rs.round && !this.hashesTo(rs.lockedBlockId, maj)) {
          this.log.debug('unlocking because of POL', { lockedRound: rs.lockedRound, polRound: vote.round });
          rs.lockedRound = -1;
          rs.lockedBlock = null;
          rs.lockedBlockId = null;
          this.publish('Unlock', this.roundStateEvent());
        }
        // Update Valid* if we can.
        if (!isNilBlockId(maj) && rs.validRound < vote.round && vote.round === rs.round) {
          if (this.hashesTo(rs.proposalBlockId, maj)) {
            this.log.debug('updating valid block because of POL', { validRound: rs.validRound, polRound: vote.round });
            rs.validRound = vote.round;
            rs.validBlock = rs.proposalBlock;
            rs.validBlockId = rs.proposalBlockId;
          } else {
            // We're getting the wrong block.
            rs.proposalBlock = null;
            rs.proposalBlockId = null;
          }
          if (rs.wantedBlockId === null || !blockIdEqual(rs.wantedBlockId, maj)) rs.wantedBlockId = maj;
          this.publish('ValidBlock', this.roundStateEvent());
          // The block may already be here (an earlier round's proposal, a catch-up).
          if (rs.proposalBlock === null && this.cachedBlock(maj) !== null) attached = this.attachCachedBlock();
        }
      }

      if (rs.round < vote.round && prevotes.hasTwoThirdsAny()) {
        // Round-skip if there is any 2/3+ of votes ahead of us.
        await this.enterNewRound(height, vote.round);
      } else if (rs.round === vote.round && RoundStep.Prevote <= rs.step) {
        const m = prevotes.twoThirdsMajority();
        if (m !== null && (this.isProposalComplete() || isNilBlockId(m))) await this.enterPrecommit(height, vote.round);
        else if (prevotes.hasTwoThirdsAny()) await this.enterPrevoteWait(height, vote.round);
      } else if (rs.proposal !== null && rs.proposal.polRound >= 0 && rs.proposal.polRound === vote.round) {
        // If the proposal is now complete, enter prevote of cs.Round.
        if (this.isProposalComplete()) await this.enterPrevote(height, rs.round);
      }
      if (attached && this.rs.height === height) await this.handleCompleteProposal(height);
    } else {
      const precommits = rs.votes.precommits(vote.round)!;
      const maj = precommits.twoThirdsMajority();
      if (maj !== null) {
        // Executed as TwoThirdsMajority could be from a higher round.
        await this.enterNewRound(height, vote.round);
        await this.enterPrecommit(height, vote.round);
        if (!isNilBlockId(maj)) {
          await this.enterCommit(height, vote.round);
          if (this.cfg.skipTimeoutCommit && precommits.hasAll()) await this.enterNewRound(this.rs.height, 0);
        } else {
          await this.enterPrecommitWait(height, vote.round);
        }
      } else if (rs.round <= vote.round && precommits.hasTwoThirdsAny()) {
        await this.enterNewRound(height, vote.round);
        await this.enterPrecommitWait(height, vote.round);
      }
    }
    return true;
  }

  private relay(vote: Vote, peerId: string): void {
    if (peerId === OWN_PEER || this.replaying || this.opts.relayVotes === false) return;
    this.broadcastFn({ kind: 'vote', vote });
  }

  // -------------------------------------------------------------------------------------------
  // Transitions

  private updateRoundStep(round: number, step: RoundStep): void {
    this.rs.round = round;
    this.rs.step = step;
  }

  private roundStateEvent(): EventDataRoundState {
    return { height: this.rs.height, round: this.rs.round, step: roundStepName(this.rs.step) };
  }

  /** newStep: log the round state to the WAL, publish NewRoundStep. */
  private newStep(): void {
    this.lastProgressMs = Date.now();
    const rs = this.rs;
    spanStep('consensus', roundStepName(rs.step), { height: String(rs.height), round: rs.round });
    const m = this.opts.metrics;
    if (m !== undefined) {
      m.height?.set(Number(rs.height));
      m.rounds?.set(rs.round);
      m.step?.set(rs.step);
    }
    if (this.wal?.isOpen && !this.replaying) {
      try {
        this.wal.write({ type: 'roundState', height: rs.height, round: rs.round, step: rs.step });
      } catch (e) {
        this.log.error('failed writing to WAL', { err: (e as Error).message });
      }
    }
    if (this.stateInitialized) this.publish('NewRoundStep', this.roundStateEvent());
  }

  private publish(name: ConsensusEventName, data: ConsensusEventData): void {
    for (const l of this.listeners) {
      try {
        l(name, data);
      } catch (e) {
        this.log.error('event listener failed', { event: name, err: (e as Error).message });
      }
    }
  }

  private scheduleTimeout(duration: number, height: bigint, round: number, step: RoundStep): void {
    this.ticker.schedule({ duration: Math.max(0, duration), height, round, step });
  }

  private scheduleRound0(): void {
    const sleepMs = Number((this.rs.startTime - this.now()) / MS);
    this.scheduleTimeout(sleepMs, this.rs.height, 0, RoundStep.NewHeight);
  }

  /** Rebuilds LastCommit from the stored seen commit (state.go reconstructLastCommit). */
  private reconstructLastCommit(state: State): void {
    if (state.lastBlockHeight === 0n) return;
    let commit = this.opts.lastCommit ?? null;
    if (commit === null && this.blockStore !== null) commit = this.blockStore.loadSeenCommit(state.lastBlockHeight);
    if (commit === null) {
      this.log.error('no seen commit for the last height; cannot propose until peers resend precommits', { height: state.lastBlockHeight });
      this.rs.lastCommit = new VoteSet(state.chainId, state.lastBlockHeight, 0, SignedMsgType.Precommit, state.lastValidators);
      return;
    }
    const vs = commitToVoteSet(state.chainId, commit, state.lastValidators);
    if (!vs.hasTwoThirdsMajority()) throw new ConsensusError('BAD_LAST_COMMIT', 'failed to reconstruct last commit; does not have +2/3 maj');
    this.rs.lastCommit = vs;
  }

  /** updateToState: move to the height after `state`. */
  private updateToState(state: State): void {
    const rs = this.rs;
    if (rs.commitRound > -1 && rs.height > 0n && rs.height !== state.lastBlockHeight) {
      throw new ConsensusError('STATE_MISMATCH', `updateToState() expected state height of ${rs.height} but found ${state.lastBlockHeight}`);
    }
    if (this.stateInitialized && state.lastBlockHeight <= this.state.lastBlockHeight) {
      this.log.debug('ignoring updateToState()', { newHeight: state.lastBlockHeight + 1n, oldHeight: this.state.lastBlockHeight + 1n });
      this.newStep();
      return;
    }
    let lastCommit: VoteSet | null;
    if (state.lastBlockHeight === 0n) lastCommit = null;
    else if (rs.commitRound > -1) {
      const pc = rs.votes.precommits(rs.commitRound);
      if (pc === null || !pc.hasTwoThirdsMajority()) {
        throw new ConsensusError('STATE_MISMATCH', `wanted to form a commit, but precommits (H/R: ${state.lastBlockHeight}/${rs.commitRound}) didn't have 2/3+`);
      }
      lastCommit = pc;
    } else lastCommit = rs.lastCommit;

    let height = state.lastBlockHeight + 1n;
    if (height === 1n) height = state.initialHeight;

    rs.height = height;
    this.opts.metrics?.validators?.set(state.validators.size);
    this.opts.metrics?.validatorsPower?.set(Number(state.validators.totalVotingPower()));
    this.updateRoundStep(0, RoundStep.NewHeight);
    // StartTime = CommitTime + timeout_commit, or now + timeout_commit on the first height.
    rs.startTime = (rs.commitTime === 0n ? this.now() : rs.commitTime) + BigInt(this.cfg.timeoutCommit) * MS;
    rs.validators = state.validators;
    rs.proposal = null;
    rs.proposalBlock = null;
    rs.proposalBlockId = null;
    rs.wantedBlockId = null;
    rs.lockedRound = -1;
    rs.lockedBlock = null;
    rs.lockedBlockId = null;
    rs.validRound = -1;
    rs.validBlock = null;
    rs.validBlockId = null;
    rs.votes = new HeightVoteSet(state.chainId, height, state.validators, { maxPeerCatchupRounds: this.opts.maxPeerCatchupRounds });
    rs.commitRound = -1;
    rs.lastCommit = lastCommit;
    rs.lastValidators = state.lastValidators;
    rs.triggeredTimeoutPrecommit = false;

    this.state = state;
    this.blockCache.clear();
    this.validatedBlocks = new Set();
    this.pendingProposals = new Map();
    this.reportedConflicts = new Set();
    this.newStep();
    this.stateInitialized = true;
  }

  /** enterNewRound: rotate the proposer for `round`, reset the round's proposal, maybe propose. */
  private async enterNewRound(height: bigint, round: number): Promise<void> {
    const rs = this.rs;
    if (rs.height !== height || round < rs.round || (rs.round === round && rs.step !== RoundStep.NewHeight)) return;
    this.log.debug('entering new round', { height, round, current: `${rs.height}/${rs.round}/${roundStepName(rs.step)}` });
    let validators = rs.validators;
    if (rs.round < round) validators = validators.copyIncrementProposerPriority(round - rs.round);
    this.updateRoundStep(round, RoundStep.NewRound);
    rs.validators = validators;
    if (round !== 0) {
      // Round 0 was reset at the new height and may already hold a proposal.
      rs.proposal = null;
      rs.proposalBlock = null;
      rs.proposalBlockId = null;
      rs.wantedBlockId = null;
    }
    rs.votes.setRound(round + 1); // also track the next round, for round skipping
    rs.triggeredTimeoutPrecommit = false;
    const proposer = proposerOf(validators);
    const pIdx = proposer ? (validators.getByAddress(proposer.address)?.index ?? -1) : -1;
    this.publish('NewRound', { ...this.roundStateEvent(), proposer: { address: proposer?.address ?? new Uint8Array(0), index: pIdx } });

    // A proposal for this round that arrived early.
    const pend = this.pendingProposals.get(round);
    for (const r of [...this.pendingProposals.keys()]) if (r <= round) this.pendingProposals.delete(r);
    if (pend !== undefined && rs.proposal === null) {
      if (await this.setProposal(pend, false)) this.attachCachedBlock();
    }

    // Wait for txs before proposing in round 0, unless a proof block is needed.
    const waitForTxs = this.waitForTxs() && round === 0 && !this.needProofBlock(height);
    if (waitForTxs) {
      if (this.cfg.createEmptyBlocksInterval > 0) this.scheduleTimeout(this.cfg.createEmptyBlocksInterval, height, round, RoundStep.NewRound);
    } else {
      await this.enterPropose(height, round);
    }
  }

  private waitForTxs(): boolean {
    return !this.cfg.createEmptyBlocks || this.cfg.createEmptyBlocksInterval > 0;
  }

  /** needProofBlock: at the initial height, or when the last block changed the app hash. */
  private needProofBlock(height: bigint): boolean {
    if (height === this.state.initialHeight) return true;
    let header = this.lastCommitted !== null && this.lastCommitted.height === height - 1n ? this.lastCommitted.block.header : null;
    if (header === null && this.blockStore !== null) header = this.blockStore.loadBlock(height - 1n)?.header ?? null;
    if (header === null) return true;
    return !bytesEqual(this.state.appHash, header.appHash);
  }

  private isProposer(): boolean {
    if (this.pv === null) return false;
    const p = proposerOf(this.rs.validators);
    return p !== null && bytesEqual(p.address, this.pv.address);
  }

  /** enterPropose: schedule timeout_propose; propose if it is our turn. */
  private async enterPropose(height: bigint, round: number): Promise<void> {
    const rs = this.rs;
    if (rs.height !== height || round < rs.round || (rs.round === round && RoundStep.Propose <= rs.step)) return;
    this.log.debug('entering propose step', { height, round });
    try {
      // If we don't get the proposal and all block parts quick enough, enterPrevote.
      this.scheduleTimeout(proposeTimeout(this.cfg, round), height, round, RoundStep.Propose);
      if (this.pv !== null && rs.validators.hasAddress(this.pv.address) && this.isProposer()) {
        this.log.debug('propose step; our turn to propose', { height, round });
        await this.decideProposal(height, round);
      }
    } finally {
      if (this.rs === rs && rs.height === height) {
        this.updateRoundStep(round, RoundStep.Propose);
        this.newStep();
      }
    }
    if (this.rs.height === height && this.isProposalComplete()) await this.enterPrevote(height, this.rs.round);
  }

  /** The commit a new block carries: empty at the initial height, else LastCommit's. */
  private lastCommitForProposal(): Commit | null {
    const rs = this.rs;
    if (rs.height === this.state.initialHeight) return emptyCommit();
    if (rs.lastCommit !== null && rs.lastCommit.hasTwoThirdsMajority()) return rs.lastCommit.makeCommit();
    return null;
  }

  /** defaultDecideProposal: ValidBlock if set, else a new block; sign with POLRound = ValidRound. */
  private async decideProposal(height: bigint, round: number): Promise<void> {
    const rs = this.rs;
    const pv = this.pv!;
    let block: Block;
    let blockId: BlockID;
    if (rs.validBlock !== null && rs.validBlockId !== null) {
      block = rs.validBlock;
      blockId = rs.validBlockId;
    } else {
      const lastCommit = this.lastCommitForProposal();
      if (lastCommit === null) {
        this.log.error('propose step; cannot propose anything without commit for the previous block', { height });
        return;
      }
      const time = height === this.state.initialHeight ? this.state.lastBlockTime : medianTime(lastCommit, this.state.lastValidators);
      try {
        block = await this.executor.createProposalBlock(this.state, lastCommit, pv.address, time);
      } catch (e) {
        this.log.error('unable to create proposal block', { err: (e as Error).message });
        return;
      }
      if (this.rs !== rs || rs.height !== height || rs.round !== round) return;
      blockId = await this.encodeInTurns(block);
      if (this.rs !== rs || rs.height !== height || rs.round !== round) return;
    }
    // Flush the WAL: otherwise a replay may not recompute the same proposal, and the privval
    // would refuse to sign anything (state.go decideProposal).
    if (this.wal?.isOpen) await this.wal.flushAndSync();
    const proposal: Proposal = {
      type: SignedMsgType.Proposal,
      height,
      round,
      polRound: rs.validRound,
      blockId,
      timestamp: this.now(),
      signature: new Uint8Array(0),
    };
    let signed: Proposal;
    const key = `proposal ${height}/${round}`;
    try {
      signed = await pv.signProposal(this.state.chainId, proposal);
    } catch (e) {
      const retry = this.signFailed(
        key,
        e,
        () => this.rs.height === height && this.rs.round === round && this.rs.step === RoundStep.Propose && this.rs.proposal === null,
        () => this.decideProposal(height, round),
      );
      if (!retry && !this.replaying) this.log.error('propose step; failed signing proposal', { height, round, err: (e as Error).message });
      return;
    }
    this.signSucceeded(key);
    this.log.debug('signed proposal', { height, round, hash: hexUpper(blockId.hash) });
    this.enqueue({ kind: 'msg', msg: { kind: 'proposal', proposal: signed, block }, peerId: OWN_PEER, verifiedKey: null }, true);
  }

  /** Proposal and block are here, and with POLRound ≥ 0 also +2/3 prevotes of that round. */
  private isProposalComplete(): boolean {
    const rs = this.rs;
    if (rs.proposal === null || rs.proposalBlock === null) return false;
    if (rs.proposal.polRound < 0) return true;
    return rs.votes.prevotes(rs.proposal.polRound)?.hasTwoThirdsMajority() ?? false;
  }

  private async enterPrevote(height: bigint, round: number): Promise<void> {
    const rs = this.rs;
    if (rs.height !== height || round < rs.round || (rs.round === round && RoundStep.Prevote <= rs.step)) return;
    this.log.debug('entering prevote step', { height, round });
    try {
      await this.doPrevote(height, round);
    } finally {
      if (this.rs === rs && rs.height === height) {
        this.updateRoundStep(round, RoundStep.Prevote);
        this.newStep();
      }
    }
  }

  /** validateBlock once per block and height (the state does not change within a height). */
  private validateOnce(block: Block, id: BlockID): void {
    const k = blockIdKey(id);
    if (this.validatedBlocks.has(k)) return;
    this.executor.validateBlock(this.state, block);
    this.validatedBlocks.add(k);
  }

  /** defaultDoPrevote (v0.38): locked → locked block; no block → nil; else ValidateBlock + ProcessProposal. */
  private async doPrevote(height: bigint, round: number): Promise<void> {
    const rs = this.rs;
    if (rs.lockedBlock !== null && rs.lockedBlockId !== null) {
      this.log.debug('prevote step; already locked on a block; prevoting locked block');
      await this.signAddVote(SignedMsgType.Prevote, rs.lockedBlockId);
      return;
    }
    if (rs.proposalBlock === null || rs.proposalBlockId === null) {
      this.log.debug('prevote step: ProposalBlock is nil; prevoting nil');
      await this.signAddVote(SignedMsgType.Prevote, nilBlockId());
      return;
    }
    const block = rs.proposalBlock;
    const id = rs.proposalBlockId;
    try {
      this.validateOnce(block, id);
    } catch (e) {
      this.log.error('prevote step: consensus deems this block invalid; prevoting nil', { err: (e as Error).message });
      await this.signAddVote(SignedMsgType.Prevote, nilBlockId());
      return;
    }
    let ok: boolean;
    try {
      ok = await this.executor.processProposal(this.state, block);
    } catch (e) {
      this.log.error('prevote step: ProcessProposal failed; prevoting nil', { err: (e as Error).message });
      ok = false;
    }
    if (this.rs !== rs || rs.height !== height || rs.round !== round) return;
    if (!ok) {
      this.log.error('prevote step: state machine rejected a proposed block; this should not happen', { height, round });
      await this.signAddVote(SignedMsgType.Prevote, nilBlockId());
      return;
    }
    this.log.debug('prevote step: ProposalBlock is valid; prevoting it');
    await this.signAddVote(SignedMsgType.Prevote, id);
  }

  private async enterPrevoteWait(height: bigint, round: number): Promise<void> {
    const rs = this.rs;
    if (rs.height !== height || round < rs.round || (rs.round === round && RoundStep.PrevoteWait <= rs.step)) return;
    if (!rs.votes.prevotes(round)?.hasTwoThirdsAny()) {
      this.log.error('entering prevote wait step, but prevotes does not have any +2/3 votes', { height, round });
      return;
    }
    this.scheduleTimeout(prevoteTimeout(this.cfg, round), height, round, RoundStep.PrevoteWait);
    this.updateRoundStep(round, RoundStep.PrevoteWait);
    this.newStep();
  }

  /** enterPrecommit: lock/relock/unlock by the polka of this round, then precommit. */
  private async enterPrecommit(height: bigint, round: number): Promise<void> {
    const rs = this.rs;
    if (rs.height !== height || round < rs.round || (rs.round === round && RoundStep.Precommit <= rs.step)) return;
    this.log.debug('entering precommit step', { height, round });
    try {
      const maj = rs.votes.prevotes(round)?.twoThirdsMajority() ?? null;
      if (maj === null) {
        // No polka: precommit nil, keep any lock.
        await this.signAddVote(SignedMsgType.Precommit, nilBlockId());
        return;
      }
      this.publish('Polka', this.roundStateEvent());
      const pol = rs.votes.polInfo();
      if (pol.round < round) throw new ConsensusError('POL_ROUND', `this POLRound should be ${round} but got ${pol.round}`);

      if (isNilBlockId(maj)) {
        // +2/3 prevoted nil: unlock and precommit nil.
        if (rs.lockedBlock !== null) {
          rs.lockedRound = -1;
          rs.lockedBlock = null;
          rs.lockedBlockId = null;
          this.publish('Unlock', this.roundStateEvent());
        }
        await this.signAddVote(SignedMsgType.Precommit, nilBlockId());
        return;
      }
      if (rs.lockedBlock !== null && this.hashesTo(rs.lockedBlockId, maj)) {
        rs.lockedRound = round;
        this.publish('Relock', this.roundStateEvent());
        await this.signAddVote(SignedMsgType.Precommit, maj);
        return;
      }
      if (!this.hashesTo(rs.proposalBlockId, maj)) {
        const c = this.cachedBlock(maj);
        if (c !== null) {
          rs.proposalBlock = c.block;
          rs.proposalBlockId = c.blockId;
          rs.wantedBlockId = maj;
        }
      }
      if (rs.proposalBlock !== null && this.hashesTo(rs.proposalBlockId, maj)) {
        try {
          this.validateOnce(rs.proposalBlock, rs.proposalBlockId!);
        } catch (e) {
          // CometBFT panics here (+2/3 prevoted an invalid block); a nil precommit is the safe refusal.
          this.log.error('precommit step: +2/3 prevoted for an invalid block', { err: (e as Error).message });
          await this.signAddVote(SignedMsgType.Precommit, nilBlockId());
          return;
        }
        rs.lockedRound = round;
        rs.lockedBlock = rs.proposalBlock;
        rs.lockedBlockId = rs.proposalBlockId;
        this.publish('Lock', this.roundStateEvent());
        await this.signAddVote(SignedMsgType.Precommit, maj);
        return;
      }
      // A polka for a block we don't have: unlock, wait for it, precommit nil.
      rs.lockedRound = -1;
      rs.lockedBlock = null;
      rs.lockedBlockId = null;
      if (rs.wantedBlockId === null || !blockIdEqual(rs.wantedBlockId, maj)) {
        rs.proposalBlock = null;
        rs.proposalBlockId = null;
        rs.wantedBlockId = maj;
      }
      this.publish('Unlock', this.roundStateEvent());
      await this.signAddVote(SignedMsgType.Precommit, nilBlockId());
    } finally {
      if (this.rs === rs && rs.height === height) {
        this.updateRoundStep(round, RoundStep.Precommit);
        this.newStep();
      }
    }
  }

  /**
   * enterPrecommitWait: +2/3 precommits for anything. As in CometBFT 0.38 the step stays
   * Precommit and TriggeredTimeoutPrecommit is set; the scheduled timeout carries step PrecommitWait.
   */
  private async enterPrecommitWait(height: bigint, round: number): Promise<void> {
    const rs = this.rs;
    if (rs.height !== height || round < rs.round || (rs.round === round && rs.triggeredTimeoutPrecommit)) return;
    if (!rs.votes.precommits(round)?.hasTwoThirdsAny()) {
      this.log.error('entering precommit wait step, but precommits does not have any +2/3 votes', { height, round });
      return;
    }
    this.scheduleTimeout(precommitTimeout(this.cfg, round), height, round, RoundStep.PrecommitWait);
    rs.triggeredTimeoutPrecommit = true;
    this.newStep();
  }

  /** enterCommit: +2/3 precommits for a block at commitRound. */
  private async enterCommit(height: bigint, commitRound: number): Promise<void> {
    const rs = this.rs;
    if (rs.height !== height || RoundStep.Commit <= rs.step) return;
    this.log.debug('entering commit step', { height, commitRound });
    const maj = rs.votes.precommits(commitRound)?.twoThirdsMajority() ?? null;
    if (maj === null) throw new ConsensusError('NO_COMMIT_MAJORITY', 'RunActionCommit() expects +2/3 precommits');
    // The locked block is the committed one: use it.
    if (rs.lockedBlock !== null && this.hashesTo(rs.lockedBlockId, maj)) {
      rs.proposalBlock = rs.lockedBlock;
      rs.proposalBlockId = rs.lockedBlockId;
      rs.wantedBlockId = rs.lockedBlockId;
    }
    if (!this.hashesTo(rs.proposalBlockId, maj)) {
      rs.proposalBlock = null;
      rs.proposalBlockId = null;
      rs.wantedBlockId = maj;
      const c = this.cachedBlock(maj);
      if (c !== null) {
        rs.proposalBlock = c.block;
        rs.proposalBlockId = c.blockId;
      } else {
        this.log.info('commit is for a block we do not know about; waiting for it', { hash: hexUpper(maj.hash) });
        this.publish('ValidBlock', this.roundStateEvent());
      }
    }
    this.updateRoundStep(rs.round, RoundStep.Commit);
    rs.commitRound = commitRound;
    rs.commitTime = this.now();
    this.newStep();
    await this.tryFinalizeCommit(height);
  }

  private async tryFinalizeCommit(height: bigint): Promise<void> {
    const rs = this.rs;
    if (rs.height !== height) throw new ConsensusError('STATE_MISMATCH', `tryFinalizeCommit() cs.Height: ${rs.height} vs height: ${height}`);
    const maj = rs.votes.precommits(rs.commitRound)?.twoThirdsMajority() ?? null;
    if (maj === null || isNilBlockId(maj)) {
      this.log.error('failed attempt to finalize commit; there was no +2/3 majority or +2/3 was for nil');
      return;
    }
    if (!this.hashesTo(rs.proposalBlockId, maj)) {
      this.log.debug('failed attempt to finalize commit; we do not have the commit block', { hash: hexUpper(maj.hash) });
      return;
    }
    await this.finalizeCommit(height);
  }

  /** finalizeCommit: EndHeight to the WAL (fsync), apply the block, move to the next height. */
  private async finalizeCommit(height: bigint): Promise<void> {
    const rs = this.rs;
    if (rs.height !== height || rs.step !== RoundStep.Commit) return;
    const precommits = rs.votes.precommits(rs.commitRound)!;
    const blockId = precommits.twoThirdsMajority()!;
    const block = rs.proposalBlock!;
    try {
      this.validateOnce(block, rs.proposalBlockId!);
    } catch (e) {
      return this.fatal(new ConsensusError('INVALID_COMMITTED_BLOCK', `+2/3 committed an invalid block: ${(e as Error).message}`));
    }
    const seenCommit = precommits.makeCommit();
    this.log.info('finalizing commit of block', { height, hash: hexUpper(blockId.hash), txs: block.data.txs.length });
    // EndHeight first, synced: a replay of height+1 starts after it (state.go finalizeCommit).
    if (this.wal?.isOpen) {
      const wal = this.wal;
      try {
        await this.retryTransientIo(`EndHeight ${height}`, () => wal.endHeight(height));
      } catch (e) {
        if (this.stopped) return;
        return this.fatal(new ConsensusError('WAL_WRITE_FAILED', `failed to write EndHeight ${height} to the WAL: ${(e as Error).message}`));
      }
    }
    let newState: State;
    try {
      newState = await this.executor.applyBlock(this.state, blockId, block, seenCommit, this.blockBytesOf(block));
    } catch (e) {
      return this.fatal(new ConsensusError('APPLY_BLOCK_FAILED', `failed to apply block ${height}: ${(e as Error).message}`));
    }
    this.lastCommitted = { height, block, blockId };
    this.updateToState(newState);
    this.scheduleRound0();
    this.reinjectFuture();
    this.announceIfBehind();
  }

  /**
   * Catching up: a peer is more than one height ahead, so it will answer a precommit of our
   * last height with the next block and its commit. Send it one at once instead of waiting for
   * our next vote (one round trip per height instead of one propose timeout).
   */
  private announceIfBehind(): void {
    const ahead = this.aheadPeer;
    if (ahead === null || this.replaying) return;
    if (ahead.height <= this.rs.height) {
      this.aheadPeer = null;
      return;
    }
    const v = this.ownOrAnyLastCommitVote();
    if (v === null) return;
    const m: ConsensusMessage = { kind: 'vote', vote: v };
    if (this.sendToFn) this.sendToFn(ahead.peerId, m);
    else this.broadcastFn(m);
  }

  /** Our precommit in LastCommit, else anyone's: a message that tells peers our height. */
  private ownOrAnyLastCommitVote(): Vote | null {
    const lc = this.rs.lastCommit;
    if (lc === null) return null;
    if (this.pv !== null) {
      const me = lc.valSet.getByAddress(this.pv.address);
      const own = me !== null ? lc.getByIndex(me.index) : null;
      if (own !== null) return own;
    }
    return lc.list()[0] ?? null;
  }

  // -------------------------------------------------------------------------------------------
  // Signing

  /** voteTime: now, but never before the (locked or proposal) block time + 1 ms. */
  private voteTime(): bigint {
    const now = this.now();
    let min = now;
    if (this.rs.lockedBlock !== null) min = this.rs.lockedBlock.header.time + TIME_IOTA_NS;
    else if (this.rs.proposalBlock !== null) min = this.rs.proposalBlock.header.time + TIME_IOTA_NS;
    return now > min ? now : min;
  }

  /** signAddVote: sign (flushing the WAL first) and queue our own vote. */
  private async signAddVote(type: SignedMsgType, blockId: BlockID): Promise<void> {
    const pv = this.pv;
    if (pv === null) return;
    const rs = this.rs;
    const found = rs.validators.getByAddress(pv.address);
    if (found === null) return;
    if (this.wal?.isOpen) await this.wal.flushAndSync();
    const vote: Vote = {
      type,
      height: rs.height,
      round: rs.round,
      blockId,
      timestamp: this.voteTime(),
      validatorAddress: pv.address,
      validatorIndex: found.index,
      signature: new Uint8Array(0),
      extension: new Uint8Array(0),
      extensionSignature: new Uint8Array(0),
    };
    let signed: Vote;
    const key = `${type === SignedMsgType.Prevote ? 'prevote' : 'precommit'} ${vote.height}/${vote.round}`;
    try {
      signed = await pv.signVote(this.state.chainId, vote);
    } catch (e) {
      const { height, round } = vote;
      // Only while consensus still wants this vote: same height and round, not past its step,
      // and not already holding one of ours.
      const lastStep = type === SignedMsgType.Prevote ? RoundStep.PrevoteWait : RoundStep.PrecommitWait;
      const still = () => {
        const now = this.rs;
        if (now.height !== height || now.round !== round || now.step > lastStep) return false;
        const set = type === SignedMsgType.Prevote ? now.votes.prevotes(round) : now.votes.precommits(round);
        return (set?.getByAddress(pv.address) ?? null) === null;
      };
      if (!this.signFailed(key, e, still, () => this.signAddVote(type, blockId))) {
        this.log.error('failed signing vote', { height: vote.height, round: vote.round, type, err: (e as Error).message });
      }
      return;
    }
    this.signSucceeded(key);
    this.log.debug('signed and pushed vote', { height: vote.height, round: vote.round, type, hash: hexUpper(blockId.hash) });
    this.enqueue({ kind: 'msg', msg: { kind: 'vote', vote: signed }, peerId: OWN_PEER, verifiedKey: null }, true);
  }

  // -------------------------------------------------------------------------------------------
  // Timeouts and txs

  private async handleTimeout(ti: TimeoutInfo): Promise<void> {
    const rs = this.rs;
    // Timeouts for an old height/round/step are ignored.
    if (ti.height !== rs.height || ti.round < rs.round || (ti.round === rs.round && ti.step < rs.step)) return;
    switch (ti.step) {
      case RoundStep.NewHeight:
        await this.enterNewRound(ti.height, 0);
        return;
      case RoundStep.NewRound:
        // handleTxsAvailable may schedule this from NewHeight: run the new round first.
        if (rs.step < RoundStep.NewRound) await this.enterNewRound(ti.height, 0);
        await this.enterPropose(ti.height, 0);
        return;
      case RoundStep.Propose:
        this.publish('TimeoutPropose', this.roundStateEvent());
        await this.enterPrevote(ti.height, ti.round);
        return;
      case RoundStep.PrevoteWait:
        this.publish('TimeoutWait', this.roundStateEvent());
        await this.enterPrecommit(ti.height, ti.round);
        return;
      case RoundStep.PrecommitWait:
        this.publish('TimeoutWait', this.roundStateEvent());
        await this.enterPrecommit(ti.height, ti.round);
        await this.enterNewRound(ti.height, ti.round + 1);
        return;
      default:
        throw new ConsensusError('BAD_TIMEOUT', `invalid timeout step: ${ti.step}`);
    }
  }

  private async handleTxsAvailable(): Promise<void> {
    const rs = this.rs;
    // We only need to do this for round 0.
    if (rs.round !== 0) return;
    if (rs.step === RoundStep.NewHeight) {
      if (this.needProofBlock(rs.height)) return; // enterPropose will be called by enterNewRound
      // +1ms so the NewRound timeout always fires after the NewHeight one would have.
      const ms = Number((rs.startTime - this.now()) / MS) + 1;
      this.scheduleTimeout(ms, rs.height, 0, RoundStep.NewRound);
    } else if (rs.step === RoundStep.NewRound) {
      await this.enterPropose(rs.height, 0);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Replay, catch-up, re-broadcast

  /**
   * catchupReplay (consensus/replay.go): re-feed everything after EndHeight(height-1). If the
   * WAL also holds EndHeight(height) (a crash between EndHeight and the block's commit), the
   * messages are replayed anyway: the +2/3 precommits in them commit the block again, where
   * CometBFT would return an error and rely on its handshake replay.
   */
  async catchupReplay(height: bigint): Promise<void> {
    if (!this.wal) return;
    const { found, items } = this.wal.replayAfterEndHeight(height - 1n);
    if (!found) this.log.info('WAL has no #ENDHEIGHT for the previous height; replaying what follows the newest marker', { height: height - 1n });
    if (items.length === 0) return;
    this.log.info('catchup replay: replaying WAL messages', { height, n: items.length });
    this.replaying = true;
    try {
      for (const it of items) {
        if (this.halted) break;
        if (it.type === 'msgInfo') await this.handleMsg(it.msg, it.peerId, null);
        else if (it.type === 'timeout') await this.handleTimeout(it.timeout);
        // Own messages produced by the replay wait in the internal queue; they run (logged and
        // broadcast) once the loop starts.
      }
    } finally {
      this.replaying = false;
    }
    this.log.info('catchup replay: done', { height: this.rs.height, round: this.rs.round, step: roundStepName(this.rs.step) });
  }

  /** checkDoubleSigningRisk: refuse to start if our signature is in one of the last N commits. */
  private checkDoubleSigningRisk(height: bigint): void {
    const n = BigInt(this.cfg.doubleSignCheckHeight ?? 0);
    if (this.pv === null || n <= 0n || height <= 0n || this.blockStore === null) return;
    const limit = n > height ? height : n;
    for (let i = 1n; i < limit; i++) {
      const c = this.blockStore.loadSeenCommit(height - i) ?? this.blockStore.loadBlockCommit?.(height - i) ?? null;
      if (c === null) continue;
      for (const s of c.signatures) {
        if (s.blockIdFlag === 2 /* Commit */ && bytesEqual(s.validatorAddress, this.pv.address)) {
          throw new ConsensusError('DOUBLE_SIGN_RISK', 'found signature from the same key');
        }
      }
    }
  }

  /**
   * A peer sent a message of an earlier height: hand it the block and the precommits of that
   * height (what CometBFT's reactor gossips to a lagging peer from its block store).
   */
  private catchupPeer(peerId: string, h: bigint): void {
    if (peerId === OWN_PEER || this.replaying || h >= this.rs.height || h < 1n) return;
    const nowMs = Date.now();
    const key = `${peerId}/${h}`;
    const last = this.catchupSent.get(key);
    if (last !== undefined && nowMs - last.at < (this.opts.catchupResendMs ?? 500)) return;
    let block: Block | null = null;
    let votes: Vote[] = [];
    let blockId: BlockID | null = null;
    let round = 0;
    const rs = this.rs;
    if (this.lastCommitted !== null && this.lastCommitted.height === h && rs.lastCommit !== null && rs.lastCommit.height === h) {
      block = this.lastCommitted.block;
      blockId = this.lastCommitted.blockId;
      votes = rs.lastCommit.list();
      round = rs.lastCommit.round;
    } else if (this.blockStore !== null) {
      try {
        block = this.blockStore.loadBlock(h);
        const commit = this.blockStore.loadBlockCommit?.(h) ?? this.blockStore.loadSeenCommit(h);
        if (commit !== null) {
          blockId = commit.blockId;
          round = commit.round;
          votes = commit.signatures.map((s, i) => commitSigToVote(commit, s, i)).filter((v): v is Vote => v !== null);
        }
      } catch (e) {
        this.log.debug('catch-up: block store read failed', { height: h, err: (e as Error).message });
        return;
      }
    }
    if (block === null || blockId === null || votes.length === 0) return;
    if (this.catchupSent.size > 1024) this.catchupSent.clear();
    this.catchupSent.set(key, { height: h, at: nowMs });
    const send = (m: ConsensusMessage) => (this.sendToFn ? this.sendToFn(peerId, m) : this.broadcastFn(m));
    // An unsigned proposal only carries the block: the receiver takes it for a +2/3-precommitted BlockID.
    send({
      kind: 'proposal',
      proposal: { type: SignedMsgType.Proposal, height: h, round, polRound: -1, blockId, timestamp: block.header.time, signature: new Uint8Array(0) },
      block,
    });
    for (const v of votes) send({ kind: 'vote', vote: v });
    this.log.debug('sent catch-up to a lagging peer', { peer: peerId, height: h });
  }

  private checkStuck(intervalMs: number): void {
    if (this.stopped || this.halted || this.replaying) return;
    if (Date.now() - this.lastProgressMs < intervalMs) return;
    this.lastProgressMs = Date.now();
    this.enqueue({ kind: 'task', fn: () => this.rebroadcastOwn() });
  }

  /** Re-sends our proposal and our votes of the current (and previous) round. */
  private rebroadcastOwn(): void {
    const pv = this.pv;
    if (pv === null) return;
    const rs = this.rs;
    const me = rs.validators.getByAddress(pv.address);
    if (me === null) return;
    if (rs.proposal !== null && rs.proposalBlock !== null && this.isProposer() && rs.proposalBlockId !== null && blockIdEqual(rs.proposalBlockId, rs.proposal.blockId)) {
      this.broadcastFn(this.withParts({ kind: 'proposal', proposal: rs.proposal, block: rs.proposalBlock }));
    }
    for (const r of [rs.round - 1, rs.round]) {
      if (r < 0) continue;
      for (const vs of [rs.votes.prevotes(r), rs.votes.precommits(r)]) {
        const v = vs?.getByIndex(me.index) ?? null;
        if (v !== null) this.broadcastFn({ kind: 'vote', vote: v });
      }
    }
    // A precommit of the last height shows our height even when we have nothing else to say
    // (e.g. a vote signed just before a crash and lost): peers ahead answer with catch-up.
    const lv = this.ownOrAnyLastCommitVote();
    if (lv !== null) this.broadcastFn({ kind: 'vote', vote: lv });
  }
}

/** Accepts messages without `kind` (duck-typed) from a codec that omits it. */
function normalizeMessage(msg: ConsensusMessage): ConsensusMessage | null {
  if (msg === null || typeof msg !== 'object') return null;
  const m = msg as { kind?: unknown; vote?: Vote; proposal?: Proposal; block?: Block };
  if (m.kind === 'vote' || (m.kind === undefined && m.vote !== undefined)) return m.vote ? { kind: 'vote', vote: m.vote } : null;
  if (m.kind === 'proposal' || (m.kind === undefined && m.proposal !== undefined)) {
    return m.proposal && m.block ? { kind: 'proposal', proposal: m.proposal, block: m.block } : null;
  }
  return null;
}
