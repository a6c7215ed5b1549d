/**
 * The executor thread (docs/ARCHITECTURE.md, Threads): block execution off the thread that answers
 * RPC. A dedicated node:worker_threads Worker (workers/executor.worker.ts) opens the same LMDB
 * environment, builds its own chain app over it and, for each committed block, runs the writing
 * half of ./block-writer.ts: FinalizeBlock, then the block's ONE write transaction (block, seen
 * commit, response, state, evidence update, indexes, app writes). Blocks go one at a time, in
 * order; the thread is stateful, so it is not a Piscina task.
 *
 * This side (`ExecutorThread`, a BlockWriter for ./execution.ts) sends the block and waits. When
 * the thread answers, it brings this thread's views up to the new height before `write` resolves:
 * a fresh LMDB read snapshot, the block store's height, the main app's committed view (CheckTx and
 * queries run over it here), the evidence pool's memory. Then consensus goes on (mempool update,
 * events) as before. The answer is the new state, the result codes, and the response serialized
 * in slices (transferred buffers) that are decoded only if events need them; when the event bus
 * had no listener as the block went to the thread, the response is not sent at all (a reader that
 * turns up later loads the one the block's transaction stored). A block that fails on the thread (FinalizeBlock throws, the transaction
 * aborts) rejects `write` with that error and nothing was written; the thread's app has reloaded
 * its committed state. A thread that dies rejects every write after it; the node logs it.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { RequestInitChain, ResponseFinalizeBlock } from '../abci/types.js';
import { createChainApp, type ChainApp, type ChainAppOptions, type DecCoinSetting } from '../app/chain.js';
import { cryptoBackendSetting, type CryptoBackendName, type CryptoBackendSetting } from '../crypto/backend.js';
import type { EvidencePool } from '../evidence/pool.js';
import type { LogFields, Logger, LogLevel } from '../log.js';
import { BECH32_PREFIX, createNames } from '../names/index.js';
import type { PruningOptions } from '../store/pruning.js';
import type { Storage } from '../store/storage.js';
import { encodeBlock } from '../types/codec.js';
import type { BlockID, Commit } from '../types/block.js';
import type { Validator } from '../types/validator.js';
import { ValidatorSet } from '../types/validator_set.js';
import { VERSION } from '../version.js';
import { type BlockBatch, type BlockWriter, type ConflictingVotes, type WriteRequest, type WriteResult } from './block-writer.js';
import type { State } from './state.js';

/** Compiled worker: dist/src/state/executor-thread.js -> dist/workers/executor.worker.js. */
export const EXECUTOR_WORKER_URL = new URL('../../workers/executor.worker.js', import.meta.url);

/** The node's chain app as plain data, so that both threads build the same one. */
export interface NodeAppSpec {
  pruning: PruningOptions;
  upstreamNames: boolean;
  minGasPrices: DecCoinSetting;
  appVersion: bigint;
  /** The EVM module's options (plain data; ChainAppOptions.evm). */
  evm: { allowUnprotectedTxs: boolean };
}

/** The node's chain app over `storage` (main thread: with the pool; executor thread: without). */
export function createNodeApp(storage: Storage, spec: NodeAppSpec, extra: Pick<ChainAppOptions, 'pool' | 'txDecoder' | 'onPoolError'> = {}): ChainApp {
  return createChainApp({
    db: storage.app.latest,
    // Versioned module state: queries at any retained height (src/store/versioned.ts).
    history: storage.app,
    pruning: spec.pruning,
    names: createNames({ upstreamNames: spec.upstreamNames }),
    minGasPrices: spec.minGasPrices,
    bech32Prefix: BECH32_PREFIX,
    name: 'chaind',
    version: VERSION,
    appVersion: spec.appVersion,
    // Module-declared databases (AppModule.databases) open in the same LMDB environment.
    openDatabase: (name) => storage.openNamedDb(name),
    evm: spec.evm,
    ...extra,
  });
}

// --- the wire between the threads (structured clone: bigint and Uint8Array survive) ------------

interface WireValidatorSet {
  validators: Validator[];
  proposer: Uint8Array | null;
}

export type WireState = Omit<State, 'validators' | 'nextValidators' | 'lastValidators'> & {
  validators: WireValidatorSet;
  nextValidators: WireValidatorSet;
  lastValidators: WireValidatorSet;
};

const setToWire = (vs: ValidatorSet): WireValidatorSet => ({ validators: vs.validators, proposer: vs.isEmpty() ? null : vs.proposer.address });
const setFromWire = (w: WireValidatorSet): ValidatorSet => ValidatorSet.restore(w.validators, w.proposer);

export function stateToWire(s: State): WireState {
  return { ...s, validators: setToWire(s.validators), nextValidators: setToWire(s.nextValidators), lastValidators: setToWire(s.lastValidators) };
}

export function stateFromWire(w: WireState): State {
  return { ...w, validators: setFromWire(w.validators), nextValidators: setFromWire(w.nextValidators), lastValidators: setFromWire(w.lastValidators) };
}

/** workerData of the executor thread: what it needs to open the store and build its app. */
export interface ExecutorWorkerData {
  dbFile: string;
  noSync: boolean;
  app: NodeAppSpec;
  /** The main logger's level for each module the thread logs under. */
  logLevels: Record<string, LogLevel>;
  /** CHAIND_CRYPTO as the main thread applied it (workers/crypto-setting.ts applies it on the thread). */
  crypto: CryptoBackendSetting;
  /** The thread's nice value (0: as the main thread); see ExecutorSpawnOptions.nice. */
  nice: number;
}

export type ToWorker =
  | {
      /** The first message: the chain state the thread starts from. */
      type: 'init';
      state: WireState;
      /** Set when the chain starts from genesis: the thread's app runs the same InitChain. */
      initChain?: RequestInitChain;
      /** Whether tx_search / block_search indexes are written (tx_index.indexer = "kv"). */
      indexer: boolean;
    }
  | {
      /**
       * Valid signature checks this thread's CheckTx made, sent as they accumulate (every
       * VERIFIED_FLUSH_MS) rather than all with the next block: a block of 5,000 txs otherwise
       * carried 5,000 keys, ~8 ms of structured cloning on this thread at load ~8 as it commits.
       */
      type: 'verified';
      verified: string[];
    }
  | {
      type: 'write';
      id: number;
      state: WireState;
      blockId: BlockID;
      blockBytes: Uint8Array;
      seenCommit: Commit;
      votes: ConflictingVotes[];
      /** Valid signature checks this thread's CheckTx made since the last block. */
      verified: string[];
      /** EVM senders and tx hashes this thread's admission recovered (EvmKeeper.takeSenderHints). */
      evmHints?: Uint8Array;
      /**
       * Whether the answer carries the FinalizeBlock response (only events need it here). Without
       * it the thread spares serializing a response nobody reads; a late reader loads the one the
       * block's transaction stored.
       */
      pack: boolean;
    }
  | {
      /**
       * Block sync: FinalizeBlock and the writes of one block inside the open batch transaction
       * (the first `stage` opens it); answered `staged` with the state after the block.
       */
      type: 'stage';
      id: number;
      /** The state before the block: with the batch's first block only (the thread chains the rest). */
      state?: WireState;
      blockId: BlockID;
      blockBytes: Uint8Array;
      seenCommit: Commit;
      votes: ConflictingVotes[];
      verified: string[];
      evmHints?: Uint8Array;
    }
  | { /** Commits the open batch: answered `batchWritten`. */ type: 'commitBatch'; id: number }
  | {
      /**
       * Drops the open batch: answered `batchWritten` with the blocks the thread had committed by
       * itself (an open batch is committed when no message came for BATCH_IDLE_MS).
       */
      type: 'abortBatch';
      id: number;
    }
  | { type: 'close' };

export type FromWorker =
  /** `backend`: the crypto backend the thread's app hashes and verifies with. */
  | { type: 'ready'; backend: CryptoBackendName }
  | { type: 'fatal'; message: string }
  | { type: 'written'; id: number; answer: WrittenBlock }
  | { type: 'staged'; id: number; state: WireState }
  | { type: 'batchWritten'; id: number; answers: WrittenBlock[] }
  | { type: 'failed'; id: number; message: string; code?: string }
  | { type: 'log'; level: Exclude<LogLevel, 'none'>; module: string; msg: string; fields?: LogFields }
  | { type: 'closed' };

/** The thread's answer for a written block: small parts as they are, the response serialized. */
export interface WrittenBlock {
  state: WireState;
  codes: Uint32Array;
  /** v8.serialize of the response without txResults; null when not asked for (`pack: false`). */
  head: Uint8Array | null;
  /** v8.serialize of txResults, RESULTS_PER_SLICE at a time. */
  slices: Uint8Array[];
}

/** Tx results per serialized slice: decoding one takes well under a millisecond. */
const RESULTS_PER_SLICE = 128;

/** The thread's side of WrittenBlock (its buffers are transferred, not copied). */
export function packWritten(resp: ResponseFinalizeBlock, state: State, pack = true): { answer: WrittenBlock; transfer: ArrayBuffer[] } {
  const { txResults, ...rest } = resp;
  if (!pack) {
    const codes = Uint32Array.from(txResults, (r) => r.code);
    return { answer: { state: stateToWire(state), codes, head: null, slices: [] }, transfer: [codes.buffer as ArrayBuffer] };
  }
  const head = v8.serialize(rest);
  const slices: Uint8Array[] = [];
  for (let i = 0; i < txResults.length; i += RESULTS_PER_SLICE) slices.push(v8.serialize(txResults.slice(i, i + RESULTS_PER_SLICE)));
  const codes = Uint32Array.from(txResults, (r) => r.code);
  const answer: WrittenBlock = { state: stateToWire(state), codes, head, slices };
  // Only buffers that own their whole ArrayBuffer move; anything else (a pooled slice) is copied.
  const transfer = [codes, head, ...slices].filter((b) => b.byteOffset === 0 && b.byteLength === b.buffer.byteLength).map((b) => b.buffer as ArrayBuffer);
  return { answer, transfer };
}

/** Decodes a WrittenBlock's response a slice per event-loop turn. */
async function unpackResponse(w: WrittenBlock, stored: () => ResponseFinalizeBlock | null): Promise<ResponseFinalizeBlock> {
  if (w.head === null) {
    // Not sent (nobody listened when the block went to the thread): the one its transaction stored.
    const r = stored();
    if (r === null) throw new ExecutorThreadError('EXECUTOR_BLOCK_FAILED', `FinalizeBlock response of height ${w.state.lastBlockHeight} is not stored`);
    return r;
  }
  const rest = v8.deserialize(w.head) as Omit<ResponseFinalizeBlock, 'txResults'>;
  const txResults: ResponseFinalizeBlock['txResults'] = [];
  for (const slice of w.slices) {
    for (const r of v8.deserialize(slice) as ResponseFinalizeBlock['txResults']) txResults.push(r);
    await yieldToLoop();
  }
  return { ...rest, txResults };
}

/** Why a block could not be written by the executor thread. */
export class ExecutorThreadError extends Error {
  constructor(
    readonly code: 'EXECUTOR_START' | 'EXECUTOR_BLOCK_FAILED' | 'EXECUTOR_DEAD',
    message: string,
  ) {
    super(message);
    this.name = 'ExecutorThreadError';
  }
}

/** What this thread refreshes after the executor thread committed a block. */
export interface MainViews {
  storage: Storage;
  /** The main thread's app: CheckTx, queries, proposals over the committed state. */
  app: ChainApp;
  evidence?: EvidencePool;
}

export interface ExecutorSpawnOptions {
  dbFile: string;
  noSync?: boolean;
  appSpec: NodeAppSpec;
  logger: Logger;
  /** Default: this thread's setting (src/crypto/backend.ts cryptoBackendSetting), so both threads agree. */
  crypto?: CryptoBackendSetting;
  /**
   * The thread's nice value (0..19, default 0). Where the node's threads share a core (a loaded
   * machine, or fewer cores than busy threads), a block's execution then gives way to the thread
   * that answers RPC, consensus and CheckTx, whose work comes in short slices; with a core of its
   * own the executor runs as fast as before. Linux keeps nice per thread; elsewhere it is the
   * process's and the thread leaves it alone.
   */
  nice?: number;
}

export interface ExecutorInitOptions extends MainViews {
  state: State;
  initChain?: RequestInitChain;
  indexer: boolean;
  /**
   * Whether the next block's FinalizeBlock response will be read here (the event bus has
   * listeners); asked as each block goes to the thread. Default: always.
   */
  wantsResponse?: () => boolean;
}

/**
 * The executor thread commits an open batch by itself when no message came for this long: a
 * write on the main thread (the evidence pool's) waits for the batch's transaction, and the main
 * thread, blocked in it, could not send `commitBatch`.
 */
export const BATCH_IDLE_MS = 100;

/** How often CheckTx's valid signature checks go to the thread between blocks ('verified'). */
export const VERIFIED_FLUSH_MS = 50;

const LOG_MODULES = ['state', 'txindex', 'evidence', 'executor'];
/** How long close() waits for the thread to finish its block and close its environment. */
const CLOSE_TIMEOUT_MS = 30_000;

export class ExecutorThread implements BlockWriter {
  private readonly worker: Worker;
  private views: MainViews | null = null;
  /** Asked as each block goes to the thread: will its FinalizeBlock response be read here? (ExecutorInitOptions.wantsResponse) */
  wantsResponse: () => boolean = () => true;
  private readonly log: Logger;
  private readonly loggers = new Map<string, Logger>();
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (r: never) => void; reject: (e: Error) => void }>();
  /** The batch open on the thread, if any (one at a time). */
  private batch: ThreadBatch | null = null;
  private dead: Error | null = null;
  private closing: Promise<void> | null = null;
  private onClosed: (() => void) | null = null;
  private onReady: ((err: Error | null) => void) | null = null;
  /** The crypto backend of the thread's app, once init() has resolved (null before). */
  backend: CryptoBackendName | null = null;

  /**
   * Starts the thread: it loads its modules, opens the store and builds its app while this thread
   * gets on with start-up; `init` then hands it the chain state.
   */
  constructor(opts: ExecutorSpawnOptions) {
    this.log = opts.logger.child({ module: 'executor' });
    const logLevels: Record<string, LogLevel> = {};
    for (const m of LOG_MODULES) {
      const l = opts.logger.child({ module: m });
      this.loggers.set(m, l);
      logLevels[m] = l.level;
    }
    const data: ExecutorWorkerData = { dbFile: opts.dbFile, noSync: opts.noSync ?? false, app: opts.appSpec, logLevels, crypto: opts.crypto ?? cryptoBackendSetting(), nice: opts.nice ?? 0 };
    this.worker = new Worker(EXECUTOR_WORKER_URL, { workerData: data, name: 'chaind-executor' });
    this.worker.on('message', (m: FromWorker) => this.onMessage(m));
    this.worker.on('error', (e) => this.die(e));
    this.worker.on('exit', (code) => this.die(new Error(`exited with code ${code}`)));
  }

  /** Hands the thread the chain state (and genesis InitChain) and waits until it is ready. */
  async init(opts: ExecutorInitOptions): Promise<void> {
    const ready = new Promise<Error | null>((resolve) => (this.onReady = resolve));
    if (this.dead !== null) this.onReady?.(this.dead);
    this.worker.postMessage({ type: 'init', state: stateToWire(opts.state), initChain: opts.initChain, indexer: opts.indexer } satisfies ToWorker);
    const err = await ready;
    this.onReady = null;
    if (err !== null) throw new ExecutorThreadError('EXECUTOR_START', `executor thread failed to start: ${err.message}`);
    this.views = { storage: opts.storage, app: opts.app, evidence: opts.evidence };
    if (opts.wantsResponse !== undefined) this.wantsResponse = opts.wantsResponse;
    // What CheckTx verifies here goes to the thread's verifier as it accumulates, the rest with
    // each block.
    opts.app.sigVerifier.shareVerified();
    opts.app.evm?.keeper.shareSenderHints();
    this.verifiedTimer = setInterval(() => this.flushVerified(), VERIFIED_FLUSH_MS);
    this.verifiedTimer.unref();
  }

  private verifiedTimer: NodeJS.Timeout | null = null;

  /** Sends the valid checks collected since the last flush (none while a batch is open: block sync). */
  private flushVerified(): void {
    if (this.views === null || this.dead !== null || this.closing !== null || this.batch !== null) return;
    const verified = this.views.app.sigVerifier.takeVerified();
    if (verified.length > 0) this.worker.postMessage({ type: 'verified', verified } satisfies ToWorker);
  }

  private onMessage(m: FromWorker): void {
    switch (m.type) {
      case 'log':
        (this.loggers.get(m.module) ?? this.log)[m.level](m.msg, m.fields);
        return;
      case 'written':
      case 'staged':
      case 'batchWritten':
      case 'failed': {
        const w = this.waiting.get(m.id);
        if (w === undefined) return;
        this.waiting.delete(m.id);
        if (m.type === 'written') (w.resolve as (r: WrittenBlock) => void)(m.answer);
        else if (m.type === 'staged') (w.resolve as (r: WireState) => void)(m.state);
        else if (m.type === 'batchWritten') (w.resolve as (r: WrittenBlock[]) => void)(m.answers);
        else w.reject(Object.assign(new ExecutorThreadError('EXECUTOR_BLOCK_FAILED', m.message), m.code === undefined ? {} : { cause: m.code }));
        return;
      }
      case 'closed':
        this.onClosed?.();
        return;
      case 'ready':
        this.backend = m.backend;
        this.log.info('executor thread ready', { backend: m.backend });
        this.onReady?.(null);
        return;
      case 'fatal':
        this.die(new Error(m.message));
        return;
      default:
    }
  }

  private die(e: Error): void {
    if (this.dead !== null) return;
    this.dead = e;
    if (this.closing === null) this.log.error('executor thread died', { err: e.message });
    this.onReady?.(e);
    for (const w of this.waiting.values()) w.reject(new ExecutorThreadError('EXECUTOR_DEAD', `executor thread is gone: ${e.message}`));
    this.waiting.clear();
    this.onClosed?.();
  }

  private usable(): MainViews {
    if (this.dead !== null) throw new ExecutorThreadError('EXECUTOR_DEAD', `executor thread is gone: ${this.dead.message}`);
    if (this.closing !== null) throw new ExecutorThreadError('EXECUTOR_DEAD', 'executor thread is closing');
    if (this.views === null) throw new ExecutorThreadError('EXECUTOR_START', 'executor thread not initialised');
    return this.views;
  }

  /** Posts a message that the thread answers under `id`, and waits for the answer. */
  request<T>(msg: ToWorker & { id: number }, transfer: ArrayBuffer[] = []): Promise<T> {
    const answer = new Promise<T>((resolve, reject) => this.waiting.set(msg.id, { resolve: resolve as (r: never) => void, reject }));
    if (this.dead !== null) {
      this.waiting.delete(msg.id);
      return Promise.reject(new ExecutorThreadError('EXECUTOR_DEAD', `executor thread is gone: ${this.dead.message}`));
    }
    this.worker.postMessage(msg, transfer);
    return answer;
  }

  newId(): number {
    return this.nextId++;
  }

  async write(req: WriteRequest, beforeCommitVisible?: () => Promise<void>): Promise<WriteResult> {
    const { storage, app, evidence } = this.usable();
    if (this.batch !== null) throw new ExecutorThreadError('EXECUTOR_START', 'a block batch is open on the executor thread');
    const { state, blockId, block, seenCommit } = req;
    const votes = evidence?.consensusVotes() ?? [];
    // Our own encoding is handed over (transferred), a caller's bytes are copied.
    const own = req.blockBytes === undefined;
    const blockBytes = req.blockBytes ?? encodeBlock(block);
    const id = this.nextId++;
    const answer = new Promise<WrittenBlock>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    const msg: ToWorker = {
      type: 'write',
      id,
      state: stateToWire(state),
      blockId,
      blockBytes,
      seenCommit,
      votes: [...votes],
      verified: app.sigVerifier.takeVerified(),
      evmHints: app.evm?.keeper.takeSenderHints(),
      pack: this.wantsResponse(),
    };
    const whole = blockBytes.byteOffset === 0 && blockBytes.byteLength === blockBytes.buffer.byteLength;
    this.worker.postMessage(msg, own && whole ? [blockBytes.buffer as ArrayBuffer] : []);
    const written = await answer;
    const newState = stateFromWire(written.state);
    await beforeCommitVisible?.();
    // The thread committed: this thread's views move to the new height, all in this one turn.
    this.refreshViews(block.header.time, newState, votes.length);
    return resultOf(written, newState, storage);
  }

  /** The thread committed up to `state`: this thread's views move to it, all in this one turn. */
  refreshViews(blockTime: bigint, state: State, flushedVotes: number): void {
    const { storage, app, evidence } = this.usable();
    storage.resetReadTxn();
    storage.blocks.reload();
    app.committedElsewhere(blockTime);
    evidence?.committed(state, flushedVotes);
  }

  /**
   * Block sync: blocks written on the thread in one transaction (BlockBatch). The thread holds the
   * write transaction open between `add`s; this thread's views stay at the height before the
   * batch until `commit` has answered.
   */
  beginBatch(beforeCommitVisible?: () => Promise<void>): BlockBatch {
    this.usable();
    if (this.batch !== null) throw new ExecutorThreadError('EXECUTOR_START', 'a block batch is already open on the executor thread');
    const b = new ThreadBatch(this, this.usable(), beforeCommitVisible, () => {
      if (this.batch === b) this.batch = null;
    });
    this.batch = b;
    return b;
  }

  /** Lets the thread finish the block it has, close its environment and exit. */
  close(): Promise<void> {
    if (this.verifiedTimer !== null) clearInterval(this.verifiedTimer);
    this.verifiedTimer = null;
    this.closing ??= (async () => {
      if (this.dead !== null) return;
      if (this.views === null) return void (await this.worker.terminate());
      const closed = new Promise<void>((resolve) => (this.onClosed = resolve));
      this.worker.postMessage({ type: 'close' } satisfies ToWorker);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), CLOSE_TIMEOUT_MS)));
      const r = await Promise.race([closed, timeout]);
      clearTimeout(timer);
      if (r === 'timeout') this.log.error('executor thread did not close in time; terminating it');
      await this.worker.terminate();
    })();
    return this.closing;
  }
}

function resultOf(written: WrittenBlock, newState: State, storage: Storage): WriteResult {
  let decoded: Promise<ResponseFinalizeBlock> | undefined;
  const stored = () => storage.state.loadFinalizeBlockResponse(newState.lastBlockHeight);
  return { newState, codes: written.codes, response: () => (decoded ??= unpackResponse(written, stored)) };
}

/** ExecutorThread's BlockBatch: each `add` is a `stage` message, `commit` a `commitBatch`. */
class ThreadBatch implements BlockBatch {
  private added: { block: WriteRequest['block'] }[] = [];
  private votes = 0;
  private broken: Error | null = null;
  private finished = false;

  constructor(
    private readonly thread: ExecutorThread,
    private readonly views: MainViews,
    private readonly beforeCommitVisible: (() => Promise<void>) | undefined,
    private readonly onEnd: () => void,
  ) {}

  get size(): number {
    return this.added.length;
  }

  async add(req: WriteRequest): Promise<State> {
    if (this.broken !== null) throw this.broken;
    if (this.finished) throw new ExecutorThreadError('EXECUTOR_START', 'block batch already committed or aborted');
    const { state, blockId, block, seenCommit } = req;
    // Conflicting votes go with the first block only (the thread passes none to later ones).
    const votes = this.added.length === 0 ? [...(this.views.evidence?.consensusVotes() ?? [])] : [];
    if (this.added.length === 0) this.votes = votes.length;
    const own = req.blockBytes === undefined;
    const blockBytes = req.blockBytes ?? encodeBlock(block);
    const whole = blockBytes.byteOffset === 0 && blockBytes.byteLength === blockBytes.buffer.byteLength;
    try {
      const wire = await this.thread.request<WireState>(
        {
          type: 'stage',
          id: this.thread.newId(),
          state: this.added.length === 0 ? stateToWire(state) : undefined,
          blockId,
          blockBytes,
          seenCommit,
          votes,
          verified: this.views.app.sigVerifier.takeVerified(),
          evmHints: this.views.app.evm?.keeper.takeSenderHints(),
        },
        own && whole ? [blockBytes.buffer as ArrayBuffer] : [],
      );
      this.added.push({ block });
      return stateFromWire(wire);
    } catch (e) {
      // The thread dropped the open part of the batch (its transaction aborted, its app
      // reloaded); `abort` collects what it had committed by itself before.
      this.broken = e as Error;
      throw e;
    }
  }

  async commit(): Promise<WriteResult[]> {
    if (this.broken !== null) throw this.broken;
    if (this.finished) throw new ExecutorThreadError('EXECUTOR_START', 'block batch already committed or aborted');
    this.finished = true;
    try {
      if (this.added.length === 0) return [];
      const answers = await this.thread.request<WrittenBlock[]>({ type: 'commitBatch', id: this.thread.newId() });
      const states = answers.map((w) => stateFromWire(w.state));
      await this.beforeCommitVisible?.();
      const last = states[states.length - 1]!;
      this.thread.refreshViews(this.added[this.added.length - 1]!.block.header.time, last, this.votes);
      return answers.map((w, i) => resultOf(w, states[i]!, this.views.storage));
    } finally {
      this.onEnd();
    }
  }

  async abort(): Promise<WriteResult[]> {
    if (this.finished && this.broken === null) return [];
    this.finished = true;
    try {
      // Also after a failed `add`: the thread may have committed part of the batch by itself.
      const answers = await this.thread.request<WrittenBlock[]>({ type: 'abortBatch', id: this.thread.newId() });
      if (answers.length === 0) return [];
      const states = answers.map((w) => stateFromWire(w.state));
      await this.beforeCommitVisible?.();
      const n = answers.length;
      this.thread.refreshViews(this.added[n - 1]!.block.header.time, states[n - 1]!, this.votes);
      return answers.map((w, i) => resultOf(w, states[i]!, this.views.storage));
    } finally {
      this.broken = null;
      this.onEnd();
    }
  }
}
