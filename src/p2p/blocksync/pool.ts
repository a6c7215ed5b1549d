/**
 * The block pool of block sync (the scheduling side of cometbft/cometbft:blocksync/pool.go):
 * which heights to ask which peer for, what came back, and which peers to drop.
 *
 * It owns no sockets and no timers. The reactor feeds it peers' (base, height) from
 * StatusResponse, blocks and NoBlockResponses, and calls `tick()` periodically (every second);
 * the pool asks for blocks through `sendRequest` and reports peers to drop through `onPeerError`.
 * A clock can be injected (`now`), so scheduling is tested without waiting.
 *
 * Rules (CometBFT values where it has them):
 *  - at most `requestsPerPeer` (20, maxPendingRequestsPerPeer) requests pending at one peer, and
 *    at most `maxAhead` (600, maxTotalRequesters) heights past the next height to apply;
 *  - a height goes to the peer with the fewest pending requests whose [base, height] holds it;
 *  - within `tipWindow` (50) blocks of the highest peer height each block is asked of two peers;
 *  - a peer with requests pending that delivered nothing for `peerTimeoutMs` (15 s) is dropped and
 *    its heights are asked of others;
 *  - a slow or silent peer is dropped (disconnected) but not banned: reconnected, it is used again;
 *  - a peer is dropped for a receive rate below `minRecvRate` (128 KiB/s) measured over
 *    `rateWindowMs`, but only when it held requests for the whole window AND its oldest pending
 *    request waited at least `rateWindowMs`: a peer that answers every request at once is never
 *    slow, however small the blocks (empty blocks are a few hundred bytes; CometBFT's rate check
 *    alone would drop a good peer serving them);
 *  - NoBlockResponse: the height is asked of another peer, never again of that one;
 *  - a block that fails verification: `rejectBlocks` drops the peer that sent it, discards the
 *    other blocks it sent and asks other peers for all its heights.
 */
import type { Block } from '../../types/block.js';
import type { ExtendedCommit } from '../../types/codec.js';

export const REQUESTS_PER_PEER = 20;
export const MAX_AHEAD = 600;
export const PEER_TIMEOUT_MS = 15_000;
export const MIN_RECV_RATE = 128 * 1024;
export const RATE_WINDOW_MS = 5_000;
export const TIP_WINDOW = 50n;

export interface PoolOptions {
  /** The first height to sync (state.lastBlockHeight + 1, or the initial height). */
  startHeight: bigint;
  /** Sends a BlockRequest; false if the peer's queue refused it (the pool then tries others). */
  sendRequest(peerId: string, height: bigint): boolean;
  /** The pool removed this peer; the reactor disconnects it. */
  onPeerError(peerId: string, reason: string): void;
  requestsPerPeer?: number;
  maxAhead?: number;
  peerTimeoutMs?: number;
  minRecvRate?: number;
  rateWindowMs?: number;
  tipWindow?: bigint;
  now?: () => number;
}

export interface PooledBlock {
  block: Block;
  /** The block's proto bytes as received (its part set is made from them). */
  blockBytes: Uint8Array;
  extCommit: ExtendedCommit | null;
  peerId: string;
}

interface PoolPeer {
  id: string;
  base: bigint;
  height: bigint;
  /** height -> time the request was sent. */
  pending: Map<bigint, number>;
  /** When `pending` last went from empty to non-empty (for the rate rule). */
  busySince: number;
  /** Last time the peer delivered a block (or got its first request). */
  lastProgress: number;
  /** Bytes received in the current rate window, with the window's start. */
  windowBytes: number;
  windowStart: number;
  /** Bytes per second over the last complete window; -1 before the first. */
  lastRate: number;
}

interface Requester {
  height: bigint;
  /** Peers asked for this height (one, or two near the tip). */
  asked: string[];
  /** Peers that said they do not have it. */
  refused: Set<string>;
  got: PooledBlock | null;
}

export class BlockPool {
  private readonly o: Required<Omit<PoolOptions, 'startHeight' | 'sendRequest' | 'onPeerError'>>;
  private readonly sendRequest: PoolOptions['sendRequest'];
  private readonly onPeerError: PoolOptions['onPeerError'];
  private readonly peers = new Map<string, PoolPeer>();
  private readonly requesters = new Map<bigint, Requester>();
  /** Peers removed from this pool: their late messages are ignored. */
  private readonly banned = new Set<string>();
  /** Peers dropped as slow/silent: their late blocks are ignored until they report again. */
  private readonly dropped = new Set<string>();
  private _height: bigint;
  private _maxPeerHeight = 0n;
  readonly startTime: number;

  constructor(opts: PoolOptions) {
    this.o = {
      requestsPerPeer: opts.requestsPerPeer ?? REQUESTS_PER_PEER,
      maxAhead: opts.maxAhead ?? MAX_AHEAD,
      peerTimeoutMs: opts.peerTimeoutMs ?? PEER_TIMEOUT_MS,
      minRecvRate: opts.minRecvRate ?? MIN_RECV_RATE,
      rateWindowMs: opts.rateWindowMs ?? RATE_WINDOW_MS,
      tipWindow: opts.tipWindow ?? TIP_WINDOW,
      now: opts.now ?? Date.now,
    };
    this.sendRequest = opts.sendRequest;
    this.onPeerError = opts.onPeerError;
    this._height = opts.startHeight;
    this.startTime = this.o.now();
  }

  /** The next height to apply. */
  get height(): bigint {
    return this._height;
  }

  get maxPeerHeight(): bigint {
    return this._maxPeerHeight;
  }

  get numPeers(): number {
    return this.peers.size;
  }

  peerIds(): string[] {
    return [...this.peers.keys()];
  }

  /** Pending request heights of a peer (for tests and status). */
  pendingOf(peerId: string): bigint[] {
    const p = this.peers.get(peerId);
    return p ? [...p.pending.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) : [];
  }

  /** Peers asked for `height` that have not answered or been released. */
  askedFor(height: bigint): string[] {
    return [...(this.requesters.get(height)?.asked ?? [])];
  }

  /** The number of requests in flight over all peers. */
  numPending(): number {
    let n = 0;
    for (const p of this.peers.values()) n += p.pending.size;
    return n;
  }

  /**
   * IsCaughtUp: we have at least one peer and the next height is within one of the highest peer
   * height (the peers' last block cannot be verified here: its commit is not in any block yet).
   */
  isCaughtUp(): boolean {
    return this.peers.size > 0 && this._height >= this._maxPeerHeight - 1n;
  }

  /** A StatusResponse: adds the peer or updates its range, then schedules. */
  setPeerRange(peerId: string, base: bigint, height: bigint): void {
    if (this.banned.has(peerId)) return;
    this.dropped.delete(peerId);
    let p = this.peers.get(peerId);
    if (!p) {
      const now = this.o.now();
      p = { id: peerId, base, height, pending: new Map(), busySince: now, lastProgress: now, windowBytes: 0, windowStart: now, lastRate: -1 };
      this.peers.set(peerId, p);
    } else {
      p.base = base;
      p.height = height;
    }
    if (height > this._maxPeerHeight) this._maxPeerHeight = height;
    else this.updateMaxPeerHeight();
    this.schedule();
  }

  /** The peer left (or was dropped): its pending heights go to other peers. */
  removePeer(peerId: string): void {
    const p = this.peers.get(peerId);
    if (!p) return;
    this.peers.delete(peerId);
    for (const h of p.pending.keys()) {
      const r = this.requesters.get(h);
      if (r) r.asked = r.asked.filter((id) => id !== peerId);
    }
    // Blocks it delivered but not yet applied are kept: they are verified like any other (a bad
    // one is found by verification), and dropping them would only slow the sync.
    this.updateMaxPeerHeight();
    this.schedule();
  }

  /**
   * Drops a slow or silent peer: removed and reported (the reactor disconnects it). Not banned:
   * on a loaded machine our own event loop can make a good peer look slow, and a persistent
   * peer that reconnects and reports its status again is used again (a ban here left a joining
   * node with its only peer refused, syncing forever). Bad blocks ban (rejectBlocks).
   */
  private dropPeer(peerId: string, reason: string): void {
    if (!this.peers.has(peerId)) return;
    this.dropped.add(peerId);
    this.removePeer(peerId);
    this.onPeerError(peerId, reason);
  }

  /**
   * A BlockResponse. Returns an error message when the peer sent a block it was not asked for
   * (the reactor may drop it); a late duplicate of a height already served returns null.
   */
  addBlock(peerId: string, block: Block, blockBytes: Uint8Array, extCommit: ExtendedCommit | null): string | null {
    const p = this.peers.get(peerId);
    if (!p) return this.banned.has(peerId) || this.dropped.has(peerId) ? null : 'block from a peer that sent no status';
    const h = block.header.height;
    const sentAt = p.pending.get(h);
    if (sentAt === undefined) {
      // A height already applied (a second copy near the tip arriving late) is harmless.
      if (h < this._height) return null;
      return `unsolicited block at height ${h}`;
    }
    const now = this.o.now();
    p.pending.delete(h);
    p.lastProgress = now;
    this.countBytes(p, blockBytes.length, now);
    const r = this.requesters.get(h);
    if (r) {
      r.asked = r.asked.filter((id) => id !== peerId);
      if (r.got === null) r.got = { block, blockBytes, extCommit, peerId };
    }
    this.schedule();
    return null;
  }

  /** A NoBlockResponse: ask someone else, never this peer again for that height. */
  noBlock(peerId: string, height: bigint): void {
    const p = this.peers.get(peerId);
    if (!p || !p.pending.delete(height)) return;
    p.lastProgress = this.o.now();
    const r = this.requesters.get(height);
    if (r) {
      r.asked = r.asked.filter((id) => id !== peerId);
      r.refused.add(peerId);
    }
    this.schedule();
  }

  /** PeekTwoBlocks: the blocks at height and height + 1, when both are here. */
  peekTwoBlocks(): [PooledBlock | null, PooledBlock | null] {
    return [this.requesters.get(this._height)?.got ?? null, this.requesters.get(this._height + 1n)?.got ?? null];
  }

  /** PopRequest: block `height` was applied; move on. Peers still asked for it are released. */
  popRequest(): void {
    const r = this.requesters.get(this._height);
    if (r) {
      for (const id of r.asked) this.peers.get(id)?.pending.delete(this._height);
      this.requesters.delete(this._height);
    }
    this._height++;
    this.schedule();
  }

  /**
   * The blocks at `heights` failed verification: the peers that sent them are dropped, every
   * not-yet-applied block they sent is discarded, and all their heights go to other peers. The
   * reactor works out which block was bad (CometBFT drops the senders of both the block and the
   * next one, cometbft/cometbft:blocksync/reactor.go, which can drop an honest peer).
   */
  rejectBlocks(heights: readonly bigint[], reason: string): string[] {
    const dropped: string[] = [];
    for (const h of heights) {
      const r = this.requesters.get(h);
      const id = r?.got?.peerId;
      if (r) r.got = null;
      if (id !== undefined && !dropped.includes(id)) dropped.push(id);
    }
    for (const id of dropped) {
      for (const r of this.requesters.values()) if (r.got?.peerId === id) r.got = null;
      this.banned.add(id);
    }
    for (const id of dropped) {
      if (this.peers.has(id)) {
        this.removePeer(id);
        this.onPeerError(id, reason);
      }
    }
    this.schedule();
    return dropped;
  }

  /** Timeouts and the receive-rate rule; the reactor calls this every second. */
  tick(): void {
    const now = this.o.now();
    for (const p of [...this.peers.values()]) {
      this.rollWindow(p, now);
      if (p.pending.size === 0) continue;
      if (now - p.lastProgress >= this.o.peerTimeoutMs) {
        this.dropPeer(p.id, `peer did not send us anything for ${this.o.peerTimeoutMs} ms with ${p.pending.size} requests pending`);
        continue;
      }
      let oldest = Infinity;
      for (const t of p.pending.values()) if (t < oldest) oldest = t;
      if (
        p.lastRate >= 0 &&
        now - p.busySince >= this.o.rateWindowMs &&
        now - oldest >= this.o.rateWindowMs &&
        p.lastRate < this.o.minRecvRate
      ) {
        this.dropPeer(p.id, `peer is not sending us data fast enough: ${Math.round(p.lastRate)} B/s < ${this.o.minRecvRate} B/s`);
      }
    }
    this.schedule();
  }

  private countBytes(p: PoolPeer, n: number, now: number): void {
    this.rollWindow(p, now);
    p.windowBytes += n;
  }

  private rollWindow(p: PoolPeer, now: number): void {
    const elapsed = now - p.windowStart;
    if (elapsed < this.o.rateWindowMs) return;
    p.lastRate = (p.windowBytes * 1000) / elapsed;
    p.windowBytes = 0;
    p.windowStart = now;
  }

  private updateMaxPeerHeight(): void {
    let max = 0n;
    for (const p of this.peers.values()) if (p.height > max) max = p.height;
    this._maxPeerHeight = max;
  }

  /** Creates requesters up to maxAhead and gives each unserved height its peer(s). */
  private schedule(): void {
    if (this.peers.size === 0) return;
    const cap = this.o.requestsPerPeer;
    const hasRoom = () => {
      for (const p of this.peers.values()) if (p.pending.size < cap) return true;
      return false;
    };
    const last = this._height + BigInt(this.o.maxAhead) - 1n;
    const top = this._maxPeerHeight < last ? this._maxPeerHeight : last;
    const tipFrom = this._maxPeerHeight - this.o.tipWindow;
    for (let h = this._height; h <= top; h++) {
      if (!hasRoom()) return;
      let r = this.requesters.get(h);
      if (!r) {
        r = { height: h, asked: [], refused: new Set(), got: null };
        this.requesters.set(h, r);
      }
      if (r.got !== null) continue;
      const want = h > tipFrom ? 2 : 1;
      while (r.asked.length < want) {
        const p = this.pickPeer(r);
        if (!p) break;
        const now = this.o.now();
        if (p.pending.size === 0) {
          p.busySince = now;
          p.lastProgress = now;
        }
        p.pending.set(h, now);
        r.asked.push(p.id);
        if (!this.sendRequest(p.id, h)) {
          p.pending.delete(h);
          r.asked.pop();
          break;
        }
      }
    }
  }

  private pickPeer(r: Requester): PoolPeer | null {
    let best: PoolPeer | null = null;
    for (const p of this.peers.values()) {
      if (p.pending.size >= this.o.requestsPerPeer) continue;
      if (r.height < p.base || r.height > p.height) continue;
      if (r.asked.includes(p.id) || r.refused.has(p.id)) continue;
      if (best === null || p.pending.size < best.pending.size) best = p;
    }
    return best;
  }
}
