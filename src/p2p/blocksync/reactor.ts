/**
 * The block-sync reactor (cometbft/cometbft:blocksync/reactor.go) on channel 0x40.
 *
 * Always: answers StatusRequest with our block store's (base, height) and BlockRequest with the
 * stored block bytes (NoBlockResponse when missing), records peers' StatusResponses, and
 * broadcasts a StatusRequest every `statusIntervalMs` (10 s; every `statusIntervalStartMs`, 1 s,
 * while syncing) so peers' heights stay known.
 *
 * In sync mode (start with `blockSync: true`, or `startSync(state)` later) the pool fetches blocks
 * and the reactor applies them in order: block H is checked against H+1's LastCommit (+2/3 of
 * H's validators signed H's BlockID, src/state/execution.ts verifyCommit), validated
 * (Executor.validateBlock), then applied (Executor.applyBlock: block, seen commit = H+1's
 * LastCommit, state, app writes in one LMDB transaction). Once the pool is within one block of
 * the highest peer (and `minSyncMs` passed since the sync began), `onCaughtUp(state)` hands over
 * to consensus; the reactor keeps serving.
 *
 * `startSync(state)` is the way back (CometBFT lacks it: cometbft/cometbft issue #3372):
 * consensus, stopped by the node, hands its state over when it has fallen too far behind; the
 * reactor reports that case through `onFallenBehind` once a peer's status height is at least
 * `fallBehindBlocks` ahead of ours while not syncing.
 *
 * The switch calls: channels(), addPeer(peer), removePeer(peer, reason), receive(peer, chId, msg),
 * and start()/stop(). A peer is the narrow `BlocksyncPeer` below.
 */
import type { Logger } from '../../log.js';
import type { State } from '../../types/state.js';
import type { Block, BlockID, Commit } from '../../types/block.js';
import { MAX_BLOCK_SIZE_BYTES, makePartSet } from '../../types/partset.js';
import { headerHash } from '../../types/hashing.js';
import { verifyCommit } from '../../state/execution.js';
import type { ChannelDescriptor } from '../mconnection.js';
import {
  BLOCKSYNC_CHANNEL,
  decodeBlocksyncMessage,
  encodeBlockResponseRaw,
  encodeBlocksyncMessage,
  validateBlocksyncMessage,
  type DecodedBlocksyncMessage,
} from '../messages/blocksync.js';
import { BlockPool, type PoolOptions } from './pool.js';

/** What the reactor needs of a connected peer; the switch's peer adapts to it. */
export interface BlocksyncPeer {
  /** Node ID (hex). */
  readonly id: string;
  /** Queues a message, waiting for room if need be; false when it could not be queued. */
  send(chId: number, bytes: Uint8Array): boolean | Promise<boolean>;
  /** Queues a message only if there is room now. */
  trySend(chId: number, bytes: Uint8Array): boolean;
  /** Asks the switch to stop this peer (misbehaviour, timeout). */
  disconnect(reason: string): void;
}

/** Read access to the block store (src/store/blockstore.ts BlockStore fits). */
export interface BlocksyncStore {
  base(): bigint;
  height(): bigint;
  loadBlockBytes(height: bigint): Uint8Array | null;
}

/** Blocks applied in one write transaction (src/state/execution.ts ExecutorBatch fits). */
export interface BlocksyncBatch {
  readonly size: number;
  /** Executes the block inside the batch's transaction; the state after it (not yet committed). */
  add(state: State, blockId: BlockID, block: Block, seenCommit: Commit, blockBytes?: Uint8Array): Promise<State>;
  /** Commits every block added; the states after each. */
  commit(): Promise<State[]>;
  /** Drops the batch; the states of blocks committed all the same (see BlockBatch.abort). */
  abort(): Promise<State[]>;
}

/** What sync needs of block execution (src/state/execution.ts Executor fits). */
export interface BlocksyncExecutor {
  /** `lastCommitVerified`: block.lastCommit was verified by the caller (see verifyPair). */
  validateBlock(state: State, block: Block, opts?: { lastCommitVerified?: boolean }): void;
  applyBlock(state: State, blockId: BlockID, block: Block, seenCommit: Commit): Promise<State>;
  /** Several blocks in one write transaction; absent or null: each block alone (applyBlock). */
  beginBatch?(): BlocksyncBatch | null;
}

export interface BlocksyncReactorOptions {
  store: BlocksyncStore;
  executor: BlocksyncExecutor;
  /** The current state (store and state agree on the height). */
  state: State;
  /** Start in sync mode (config block_sync and not the only validator). */
  blockSync: boolean;
  /** Sync finished: consensus takes over from this state. */
  onCaughtUp?(state: State, blocksSynced: number): void;
  /** Not syncing, and a peer reports a height ≥ `fallBehindBlocks` past ours. */
  onFallenBehind?(peerId: string, peerHeight: bigint, ourHeight: bigint): void;
  /** A block was applied by sync (metrics, tests). */
  onBlockSynced?(state: State): void;
  fallBehindBlocks?: bigint;
  statusIntervalMs?: number;
  statusIntervalStartMs?: number;
  /** How often the pool's timeouts and the caught-up condition are checked (1 s). */
  checkIntervalMs?: number;
  /** Least time in sync mode before switching to consensus (lets status responses arrive). */
  minSyncMs?: number;
  /**
   * Batching (executor.beginBatch): at most this many blocks per write transaction (64), and a
   * batch is committed once it is `batchMs` old (250) or no next block is here within
   * `batchWaitMs` (20).
   */
  batchBlocks?: number;
  batchMs?: number;
  batchWaitMs?: number;
  /** Largest message accepted on the channel; default CometBFT's MaxMsgSize (100 MiB + 5). */
  recvMessageCapacity?: number;
  pool?: Partial<Omit<PoolOptions, 'startHeight' | 'sendRequest' | 'onPeerError'>>;
  logger?: Logger;
}

/** blocksync MaxMsgSize: MaxBlockSizeBytes plus the BlockResponse prefix and field key. */
export const BLOCKSYNC_MAX_MSG_SIZE = MAX_BLOCK_SIZE_BYTES + 5;

const STATUS_REQUEST = encodeBlocksyncMessage({ type: 'StatusRequest' });

export class BlocksyncError extends Error {
  constructor(
    readonly code: 'BLOCKSYNC_BAD_BLOCK' | 'BLOCKSYNC_APPLY',
    message: string,
  ) {
    super(message);
    this.name = 'BlocksyncError';
  }
}

export class BlocksyncReactor {
  private readonly o: BlocksyncReactorOptions;
  private readonly peers = new Map<string, BlocksyncPeer>();
  /** Heights peers last reported, kept across sync/consensus mode. */
  private readonly peerStatus = new Map<string, { base: bigint; height: bigint }>();
  private _state: State;
  private pool: BlockPool | null = null;
  private syncing = false;
  private syncStart = 0;
  private synced = 0;
  private applying = false;
  private loop: Promise<void> = Promise.resolve();
  private started = false;
  private statusTimer: NodeJS.Timeout | null = null;
  private checkTimer: NodeJS.Timeout | null = null;
  private lastStatusBroadcast = 0;
  private fatal: Error | null = null;
  /** Wakes the sync loop waiting for the next block of an open batch. */
  private arrived: (() => void) | null = null;

  constructor(opts: BlocksyncReactorOptions) {
    this.o = opts;
    this._state = opts.state;
    this.syncing = opts.blockSync;
  }

  /** Channel descriptors for the switch. */
  channels(): ChannelDescriptor[] {
    return [
      {
        id: BLOCKSYNC_CHANNEL,
        priority: 5,
        sendQueueCapacity: 1000,
        recvBufferCapacity: 1024,
        recvMessageCapacity: this.o.recvMessageCapacity ?? BLOCKSYNC_MAX_MSG_SIZE,
      },
    ];
  }

  get state(): State {
    return this._state;
  }

  isSyncing(): boolean {
    return this.syncing;
  }

  /** The pool while syncing (status, tests). */
  get blockPool(): BlockPool | null {
    return this.pool;
  }

  /** The error that stopped sync (a block our own app could not apply), if any. */
  get error(): Error | null {
    return this.fatal;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    if (this.syncing) this.beginSync();
    this.armStatusTimer();
    this.checkTimer = setInterval(() => this.check(), this.o.checkIntervalMs ?? 1000);
    this.checkTimer.unref?.();
  }

  stop(): void {
    this.started = false;
    if (this.statusTimer) clearTimeout(this.statusTimer);
    if (this.checkTimer) clearInterval(this.checkTimer);
    this.statusTimer = this.checkTimer = null;
    this.syncing = false;
    this.pool = null;
  }

  /** Resolves once no block is being applied (after stop(), none starts again). */
  async idle(): Promise<void> {
    await this.loop;
  }

  /**
   * Back to block sync from `state` (consensus stopped and hands over). Peers already connected
   * join the new pool with the heights they last reported, and are asked again.
   */
  startSync(state: State): void {
    this._state = state;
    this.syncing = true;
    this.fatal = null;
    if (this.started) {
      this.beginSync();
      this.armStatusTimer();
    }
  }

  addPeer(peer: BlocksyncPeer): void {
    this.peers.set(peer.id, peer);
    // AddPeer: tell the new peer our range; it answers our StatusRequest with its own.
    peer.trySend(BLOCKSYNC_CHANNEL, this.statusResponse());
    peer.trySend(BLOCKSYNC_CHANNEL, STATUS_REQUEST);
  }

  removePeer(peer: BlocksyncPeer | string, _reason?: unknown): void {
    const id = typeof peer === 'string' ? peer : peer.id;
    this.peers.delete(id);
    this.peerStatus.delete(id);
    this.pool?.removePeer(id);
  }

  /** A message from `peer` on `chId`; malformed ones disconnect the peer. */
  receive(peer: BlocksyncPeer, chId: number, msgBytes: Uint8Array): void {
    if (chId !== BLOCKSYNC_CHANNEL) return;
    let msg: DecodedBlocksyncMessage;
    try {
      msg = decodeBlocksyncMessage(msgBytes);
    } catch (e) {
      this.punish(peer, `bad blocksync message: ${(e as Error).message}`);
      return;
    }
    const invalid = validateBlocksyncMessage(msg);
    if (invalid !== null) {
      this.punish(peer, `invalid blocksync message: ${invalid}`);
      return;
    }
    switch (msg.type) {
      case 'BlockRequest':
        this.respondToBlockRequest(peer, msg.height);
        return;
      case 'StatusRequest':
        peer.trySend(BLOCKSYNC_CHANNEL, this.statusResponse());
        return;
      case 'StatusResponse':
        this.peerStatus.set(peer.id, { base: msg.base, height: msg.height });
        if (this.syncing) this.pool?.setPeerRange(peer.id, msg.base, msg.height);
        else this.checkFallenBehind(peer.id, msg.height);
        return;
      case 'NoBlockResponse':
        this.pool?.noBlock(peer.id, msg.height);
        return;
      case 'BlockResponse': {
        if (!this.pool) return;
        const err = this.pool.addBlock(peer.id, msg.block, msg.blockBytes, msg.extCommit);
        if (err !== null) {
          this.o.logger?.debug('blocksync: block not added', { peer: peer.id, err });
          return;
        }
        this.arrived?.();
        this.trySync();
        return;
      }
    }
  }

  /** Tell every peer our new height (the node calls this when consensus commits a block). */
  broadcastStatus(): void {
    this.lastStatusBroadcast = Date.now();
    const msg = this.statusResponse();
    for (const p of this.peers.values()) p.trySend(BLOCKSYNC_CHANNEL, msg);
  }

  private statusResponse(): Uint8Array {
    const s = this.o.store;
    return encodeBlocksyncMessage({ type: 'StatusResponse', height: s.height(), base: s.base() });
  }

  private respondToBlockRequest(peer: BlocksyncPeer, height: bigint): void {
    const bytes = this.o.store.loadBlockBytes(height);
    if (bytes === null) {
      peer.trySend(BLOCKSYNC_CHANNEL, encodeBlocksyncMessage({ type: 'NoBlockResponse', height }));
      return;
    }
    // Vote extensions are not enabled in chaind, so there is no extended commit to attach.
    const sent = peer.trySend(BLOCKSYNC_CHANNEL, encodeBlockResponseRaw(bytes));
    if (!sent) {
      // The queue is full (1000 messages): wait for room rather than drop a requested block.
      void Promise.resolve(peer.send(BLOCKSYNC_CHANNEL, encodeBlockResponseRaw(bytes))).catch(() => false);
    }
  }

  private punish(peer: BlocksyncPeer, reason: string): void {
    this.o.logger?.info('blocksync: disconnecting peer', { peer: peer.id, reason });
    this.removePeer(peer.id);
    peer.disconnect(reason);
  }

  private beginSync(): void {
    const s = this._state;
    const startHeight = s.lastBlockHeight === 0n ? s.initialHeight : s.lastBlockHeight + 1n;
    this.syncStart = Date.now();
    this.synced = 0;
    this.pool = new BlockPool({
      ...this.o.pool,
      startHeight,
      sendRequest: (peerId, height) => {
        const p = this.peers.get(peerId);
        return p ? p.trySend(BLOCKSYNC_CHANNEL, encodeBlocksyncMessage({ type: 'BlockRequest', height })) : false;
      },
      onPeerError: (peerId, reason) => {
        const p = this.peers.get(peerId);
        this.o.logger?.info('blocksync: dropping peer', { peer: peerId, reason });
        this.peers.delete(peerId);
        this.peerStatus.delete(peerId);
        p?.disconnect(reason);
      },
    });
    for (const [id, st] of this.peerStatus) this.pool.setPeerRange(id, st.base, st.height);
    for (const p of this.peers.values()) p.trySend(BLOCKSYNC_CHANNEL, STATUS_REQUEST);
  }

  private armStatusTimer(): void {
    if (!this.started) return;
    if (this.statusTimer) clearTimeout(this.statusTimer);
    const ms = this.syncing ? this.o.statusIntervalStartMs ?? 1000 : this.o.statusIntervalMs ?? 10_000;
    this.statusTimer = setTimeout(() => {
      for (const p of this.peers.values()) p.trySend(BLOCKSYNC_CHANNEL, STATUS_REQUEST);
      this.armStatusTimer();
    }, ms);
    this.statusTimer.unref?.();
  }

  /** Every second: pool timeouts, the caught-up switch, our status while syncing. */
  private check(): void {
    if (!this.syncing || !this.pool) return;
    this.pool.tick();
    // While syncing, peers learn our height at most once a second.
    if (Date.now() - this.lastStatusBroadcast >= 1000) this.broadcastStatus();
    if (this.applying || this.fatal) return;
    if (Date.now() - this.syncStart >= (this.o.minSyncMs ?? 1000) && this.pool.isCaughtUp()) {
      this.switchToConsensus();
    }
  }

  private switchToConsensus(): void {
    this.o.logger?.info('blocksync: caught up, switching to consensus', {
      height: this._state.lastBlockHeight.toString(),
      blocks: this.synced,
    });
    this.syncing = false;
    this.pool = null;
    this.armStatusTimer();
    this.broadcastStatus();
    this.o.onCaughtUp?.(this._state, this.synced);
  }

  private checkFallenBehind(peerId: string, peerHeight: bigint): void {
    const n = this.o.fallBehindBlocks ?? 100n;
    const ours = this.o.store.height();
    if (peerHeight >= ours + n) this.o.onFallenBehind?.(peerId, peerHeight, ours);
  }

  /**
   * Which of the two blocks is bad, if any. When H+1's LastCommit does not sign H's BlockID, the
   * commit is checked against the BlockID it names itself: a commit +2/3 of the validators did
   * sign cannot come from a lying peer, so then block H is the forgery; otherwise H+1 is.
   */
  private verifyPair(s: State, blockId: BlockID, block: Block, commit: Commit, lastCommitVerified = false): { height: bigint; err: string } | null {
    const height = block.header.height;
    try {
      verifyCommit(s.chainId, s.validators, blockId, height, commit);
    } catch (e) {
      try {
        verifyCommit(s.chainId, s.validators, commit.blockId, height, commit);
      } catch {
        return { height: height + 1n, err: `its LastCommit does not verify: ${(e as Error).message}` };
      }
      return { height, err: (e as Error).message };
    }
    try {
      this.o.executor.validateBlock(s, block, { lastCommitVerified });
    } catch (e) {
      return { height, err: (e as Error).message };
    }
    return null;
  }

  /** Applies blocks while the next two are here (one loop at a time: applying is async). */
  private trySync(): void {
    if (this.applying || !this.syncing || this.fatal) return;
    this.applying = true;
    this.loop = this.syncLoop().finally(() => {
      this.applying = false;
    });
  }

  /** Resolves when a block arrives or after `ms`. */
  private nextArrival(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.arrived = null;
        resolve();
      }, ms);
      this.arrived = () => {
        clearTimeout(t);
        this.arrived = null;
        resolve();
      };
    });
  }

  /**
   * Verifies and applies blocks in order. With a batching executor, consecutive blocks go into one
   * write transaction (one fsync for all: the real-process rate was bound by one synced commit per
   * block): block H+1 is verified against the state block H left inside the open batch, and the
   * batch is committed when full, old enough, or when no next block is here soon. `_state`
   * (what RPC readers and consensus get) moves only when a batch has committed.
   */
  private async syncLoop(): Promise<void> {
    const maxBlocks = this.o.batchBlocks ?? 64;
    const maxMs = this.o.batchMs ?? 250;
    const waitMs = this.o.batchWaitMs ?? 20;
    let batch: BlocksyncBatch | null = null;
    let staged = this._state;
    let batchStart = 0;
    // The commit verified with the block before (its successor's LastCommit), and the state it was
    // verified under: the next block's LastCommit is that same object, already checked.
    let verified: { commit: Commit; height: bigint } | null = null;
    try {
      for (;;) {
        const pool = this.pool;
        if (!pool || !this.syncing || this.fatal) return;
        const [first, second] = pool.peekTwoBlocks();
        if (!first || !second) {
          if (batch === null) return;
          if (Date.now() - batchStart < maxMs) {
            const before = pool.height;
            await this.nextArrival(waitMs);
            const [f, n] = pool.peekTwoBlocks();
            if ((f && n) || pool.height !== before) continue;
          }
          await this.commitBatch(batch);
          batch = null;
          continue;
        }
        const block = first.block;
        const height = block.header.height;
        const blockId: BlockID = { hash: headerHash(block.header), partSetHeader: makePartSet(first.blockBytes).header };
        // +2/3 of H's validators (state.validators: the set of lastBlockHeight + 1) signed H's
        // BlockID in H+1's LastCommit; then the block itself against the state.
        const lastCommitVerified = verified !== null && verified.commit === block.lastCommit && verified.height === staged.lastBlockHeight;
        const bad = this.verifyPair(staged, blockId, block, second.block.lastCommit, lastCommitVerified);
        verified = null;
        if (bad !== null) {
          const reason = `invalid block at height ${bad.height}: ${bad.err}`;
          const dropped = pool.rejectBlocks([bad.height], reason);
          this.o.logger?.info('blocksync: bad block', { height: bad.height.toString(), err: bad.err, dropped });
          continue;
        }
        if (batch === null) {
          batch = this.o.executor.beginBatch?.() ?? null;
          batchStart = Date.now();
        }
        try {
          if (batch !== null) {
            staged = await batch.add(staged, blockId, block, second.block.lastCommit, first.blockBytes);
          } else {
            staged = await this.o.executor.applyBlock(this._state, blockId, block, second.block.lastCommit);
            this.advance([staged]);
          }
        } catch (e) {
          // A verified block our own app cannot apply: not the peer's fault, and nothing to retry.
          if (batch !== null) {
            const kept = await batch.abort().catch(() => []);
            this.advance(kept);
            batch = null;
          }
          this.fatal = new BlocksyncError('BLOCKSYNC_APPLY', `applying block ${height}: ${(e as Error).message}`);
          this.o.logger?.error('blocksync: failed to apply a verified block', { height: height.toString(), err: (e as Error).message });
          return;
        }
        // H+1's LastCommit signed H (verifyPair), and the state now is the one after H.
        verified = { commit: second.block.lastCommit, height: staged.lastBlockHeight };
        if (this.pool !== pool) return;
        pool.popRequest();
        if (batch !== null && (batch.size >= maxBlocks || Date.now() - batchStart >= maxMs)) {
          await this.commitBatch(batch);
          batch = null;
        }
      }
    } finally {
      // Stopped, or nothing more to apply: what was verified and executed is committed.
      if (batch !== null) await this.commitBatch(batch);
    }
  }

  private async commitBatch(batch: BlocksyncBatch): Promise<void> {
    try {
      this.advance(await batch.commit());
    } catch (e) {
      this.fatal = new BlocksyncError('BLOCKSYNC_APPLY', `committing ${batch.size} blocks: ${(e as Error).message}`);
      this.o.logger?.error('blocksync: failed to commit a batch of verified blocks', { err: (e as Error).message });
    }
  }

  /** Blocks committed: the state moves on. */
  private advance(states: State[]): void {
    for (const st of states) {
      this._state = st;
      this.synced++;
      this.o.onBlockSynced?.(st);
    }
  }
}
