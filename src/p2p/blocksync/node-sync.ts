/**
 * Block sync inside a node: the switch-facing reactor around BlocksyncReactor, and the mode
 * controller that runs either block sync or consensus and moves between them.
 *
 * Start: a node that is not the only validator begins in block sync (cometbft/cometbft:node/node.go
 * decides the same way); consensus is started from the synced state once the pool is caught up
 * (cometbft/cometbft:blocksync/reactor.go SwitchToConsensus). A running validator whose peers report
 * heights `fallBehindBlocks` past its own stops consensus and goes back to block sync, then to a
 * fresh consensus again when caught up: the way back CometBFT lacks (cometbft/cometbft issue #3372).
 *
 * A ConsensusState cannot be restarted once stopped, so each consensus period gets its own object
 * from `makeConsensus(state)`. Everything that listens to consensus (the consensus reactor, the
 * event bus bridge, metrics) subscribes once to the controller, which forwards the events of the
 * consensus currently running and forwards peers' consensus messages only to it (none while
 * syncing: cometbft/cometbft:consensus/reactor.go waitSync).
 */
import type { ConsensusEventData, ConsensusEventName, ConsensusMessage } from '../../consensus/types.js';
import type { Logger } from '../../log.js';
import { nullLogger } from '../../log.js';
import type { State } from '../../state/state.js';
import type { ChannelDescriptor } from '../mconnection.js';
import type { Peer, Reactor, Switch } from '../switch.js';
import type { BlocksyncPeer, BlocksyncReactor } from './reactor.js';

/** The Reactor the switch registers for channel 0x40, delegating to a BlocksyncReactor. */
export class BlocksyncSwitchReactor implements Reactor {
  readonly name = 'blocksync';
  readonly channels: readonly ChannelDescriptor[];
  private sw: Switch | null = null;

  constructor(readonly reactor: BlocksyncReactor) {
    this.channels = reactor.channels();
  }

  private adapt(peer: Peer): BlocksyncPeer {
    let a = peer.data.get('blocksync') as BlocksyncPeer | undefined;
    if (!a) {
      a = {
        id: peer.id,
        send: (ch, b) => peer.send(ch, b),
        trySend: (ch, b) => peer.trySend(ch, b),
        disconnect: (reason) => this.sw?.stopPeerForError(peer, reason),
      };
      peer.data.set('blocksync', a);
    }
    return a;
  }

  addPeer(peer: Peer): void {
    this.reactor.addPeer(this.adapt(peer));
  }

  removePeer(peer: Peer, reason: unknown): void {
    this.reactor.removePeer(peer.id, reason);
  }

  receive(channelId: number, peer: Peer, msg: Uint8Array): void {
    this.reactor.receive(this.adapt(peer), channelId, msg);
  }

  start(sw: Switch): void {
    this.sw = sw;
    this.reactor.start();
  }

  stop(): void {
    this.reactor.stop();
    this.sw = null;
  }
}

/** What the controller needs of a consensus state machine (ConsensusState fits). */
export interface ManagedConsensus {
  start(): Promise<void>;
  stop(): Promise<void>;
  getState(): State;
  receive(msg: ConsensusMessage, peerId: string): void;
  subscribe(fn: (name: ConsensusEventName, data: ConsensusEventData) => void): () => void;
  notifyTxsAvailable(): void;
}

export interface SyncControllerOptions<C extends ManagedConsensus> {
  reactor: BlocksyncReactor;
  /**
   * A new, unstarted consensus from `state`. `reader`: one that only RPC readers see while block
   * sync runs, never started; it should log nothing (its start-up complaints, such as a missing
   * seen commit, are about a consensus that does not run).
   */
  makeConsensus(state: State, opts?: { reader?: boolean }): C;
  /** The state the node starts from (the reactor was made with the same). */
  state: State;
  logger?: Logger;
}

/** A validator this many blocks behind a peer leaves consensus for block sync. */
export const FALL_BEHIND_BLOCKS = 10n;

type Listener = (name: ConsensusEventName, data: ConsensusEventData) => void;

export class SyncController<C extends ManagedConsensus> {
  private cur: C;
  private running = false;
  private switching: Promise<void> | null = null;
  private closed = false;
  private readonly listeners = new Set<Listener>();
  private unsub: (() => void) | null = null;
  private readonly log: Logger;
  /** Mode changes so far (tests, logs). */
  switches = { toConsensus: 0, toBlockSync: 0 };

  constructor(private readonly o: SyncControllerOptions<C>) {
    this.log = o.logger ?? nullLogger;
    this.cur = o.makeConsensus(o.state);
  }

  /**
   * The consensus for RPC readers: the running one, or while syncing an unstarted one at the
   * synced state (rebuilt when sync moved on, so `getState()` follows the synced height).
   */
  get consensus(): C {
    if (!this.running && this.switching === null && !this.closed) {
      const st = this.o.reactor.state;
      if (st.lastBlockHeight > this.cur.getState().lastBlockHeight) this.cur = this.o.makeConsensus(st, { reader: true });
    }
    return this.cur;
  }

  /** True while block sync (not consensus) drives the node. */
  get syncing(): boolean {
    return !this.running;
  }

  /** ConsensusSink / event source: forwards to the running consensus only. */
  receive(msg: ConsensusMessage, peerId: string): void {
    if (this.running) this.cur.receive(msg, peerId);
  }

  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  notifyTxsAvailable(): void {
    if (this.running) this.cur.notifyTxsAvailable();
  }

  /** The reactor's onCaughtUp. */
  onCaughtUp = (state: State): void => {
    this.enter(async () => {
      if (this.running || this.closed) return;
      this.cur = this.o.makeConsensus(state);
      await this.startCurrent();
      this.switches.toConsensus++;
    });
  };

  /** The reactor's onFallenBehind. */
  onFallenBehind = (peerId: string, peerHeight: bigint, ourHeight: bigint): void => {
    if (!this.running || this.switching !== null || this.closed) return;
    this.enter(async () => {
      if (!this.running || this.closed) return;
      this.log.info('fell behind peers: switching from consensus to block sync', {
        peer: peerId,
        peer_height: peerHeight.toString(),
        height: ourHeight.toString(),
      });
      this.running = false;
      this.unsub?.();
      this.unsub = null;
      await this.cur.stop();
      this.switches.toBlockSync++;
      this.o.reactor.startSync(this.cur.getState());
    });
  };

  /** Starts consensus now (no block sync: the only validator, or block sync off). */
  async startConsensus(): Promise<void> {
    await this.startCurrent();
  }

  /** Stops consensus, or block sync and the block it is applying (before the store closes). */
  async stop(): Promise<void> {
    this.closed = true;
    while (this.switching) await this.switching;
    this.o.reactor.stop();
    await this.o.reactor.idle();
    if (this.running) {
      this.running = false;
      this.unsub?.();
      this.unsub = null;
      await this.cur.stop();
    }
  }

  private async startCurrent(): Promise<void> {
    const c = this.cur;
    this.unsub = c.subscribe((name, data) => {
      for (const l of this.listeners) l(name, data);
    });
    this.running = true;
    await c.start();
  }

  private enter(fn: () => Promise<void>): void {
    const prev = this.switching ?? Promise.resolve();
    const p = prev.then(fn).catch((e) => {
      this.log.error('block sync / consensus switch failed', { err: (e as Error).message });
    });
    this.switching = p;
    void p.finally(() => {
      if (this.switching === p) this.switching = null;
    });
  }
}
