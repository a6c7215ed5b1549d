/**
 * The Switch (cometbft/cometbft:p2p/switch.go, p2p/peer.go): owns the Transport, keeps the set of
 * connected peers, routes each received message to the reactor that registered its channel, and
 * dials persistent peers again after they drop (reconnectToPeer: 20 tries about 5 s apart with
 * jitter, then exponential back-off capped by persistent_peers_max_dial_period).
 *
 *   const sw = new Switch({ nodeKey, nodeInfo, config: config.p2p, logger });
 *   sw.addReactor(consensusReactor); sw.addReactor(blocksyncReactor);   // before start()
 *   await sw.start();           // listens on [p2p] laddr, dials persistent_peers and seeds
 *
 * Only the channels of registered reactors are advertised in our NodeInfo.
 */
import type { Ed25519PrivKey } from '../crypto/ed25519.js';
import type { P2PConfig } from '../config/node-config.js';
import { nullLogger, type Logger } from '../log.js';
import { P2PError } from './errors.js';
import { MConnection, mconnConfigFromP2P, type ChannelDescriptor, type ConnectionStatus, type MConnConfig } from './mconnection.js';
import { hasChannel, parseListenAddr, type NodeInfo } from './node-info.js';
import { Timers } from './timers.js';
import { Transport, parsePeerAddress, resolveHost, type PeerAddress, type UpgradedConnection } from './transport.js';

/** A reactor: a protocol on some channels (cometbft/cometbft:p2p/base_reactor.go). */
export interface Reactor {
  readonly name: string;
  readonly channels: readonly ChannelDescriptor[];
  /** A peer finished its handshake; its MConnection is running. */
  addPeer(peer: Peer): void;
  /** The peer is gone (error, stop); no more sends reach it. */
  removePeer(peer: Peer, reason: unknown): void;
  /** One complete message on one of this reactor's channels. Throwing disconnects the peer. */
  receive(channelId: number, peer: Peer, msg: Uint8Array): void;
  /** Called once when the switch starts / stops. */
  start?(sw: Switch): void;
  stop?(): void;
}

/** A connected peer (cometbft/cometbft:p2p/peer.go). */
export class Peer {
  readonly id: string;
  readonly nodeInfo: NodeInfo;
  readonly outbound: boolean;
  readonly persistent: boolean;
  readonly remoteIp: string;
  readonly remotePort: number;
  /** The address we dialled (outbound), for reconnection. */
  readonly dialAddr: PeerAddress | null;
  /** Per-reactor data (PeerState etc.), by key. */
  readonly data = new Map<string, unknown>();
  mconn!: MConnection;

  constructor(up: UpgradedConnection, opts: { persistent: boolean; remoteIp: string; remotePort: number; dialAddr: PeerAddress | null }) {
    this.id = up.id;
    this.nodeInfo = up.nodeInfo;
    this.outbound = up.outbound;
    this.persistent = opts.persistent;
    this.remoteIp = opts.remoteIp;
    this.remotePort = opts.remotePort;
    this.dialAddr = opts.dialAddr;
  }

  hasChannel(ch: number): boolean {
    return hasChannel(this.nodeInfo, ch);
  }

  /** Queues without waiting; false when the queue is full or the peer lacks the channel (peer.go TrySend). */
  trySend(ch: number, msg: Uint8Array): boolean {
    if (!this.hasChannel(ch) || !this.mconn.isRunning) return false;
    return this.mconn.trySend(ch, msg);
  }

  /** Waits for queue space up to the send timeout (peer.go Send). */
  send(ch: number, msg: Uint8Array): Promise<boolean> {
    if (!this.hasChannel(ch) || !this.mconn.isRunning) return Promise.resolve(false);
    return this.mconn.send(ch, msg);
  }

  status(): ConnectionStatus {
    return this.mconn.status();
  }
}

/** Where dialled addresses are recorded (the PEX reactor's address book; switch.go SetAddrBook). */
export interface SwitchAddrBook {
  /** An address given to dialPeersAsync (persistent_peers, dial_seeds, dial_peers), as DialPeersAsync adds it. */
  addDialedAddress(pa: PeerAddress): void;
}

/** The PEX channel: a reactor on it dials the seeds itself (cometbft/cometbft:p2p/pex/pex_reactor.go). */
const PEX_CHANNEL_ID = 0x00;

export interface SwitchOptions {
  nodeKey: Ed25519PrivKey;
  /** Our NodeInfo without channels (the switch fills them in from the reactors). */
  nodeInfo: NodeInfo;
  config: P2PConfig;
  logger?: Logger;
  /** MConnection settings (default: from config). */
  mconn?: MConnConfig;
  /** Delay of the first reconnect attempts (default 5000 ms; tests shorten it). */
  reconnectBaseMs?: number;
}

/** reconnectToPeer's constants (cometbft/cometbft:p2p/switch.go). */
const RECONNECT_ATTEMPTS = 20;
const RECONNECT_BACKOFF_ATTEMPTS = 10;
const RECONNECT_BACKOFF_BASE_S = 3;

export class Switch {
  readonly log: Logger;
  private readonly reactors: Reactor[] = [];
  private readonly byChannel = new Map<number, Reactor>();
  private readonly peers = new Map<string, Peer>();
  private readonly dialing = new Set<string>();
  private readonly reconnecting = new Set<string>();
  private readonly persistentIds = new Set<string>();
  private readonly persistentAddrs: PeerAddress[] = [];
  private readonly unconditionalIds = new Set<string>();
  private readonly privateIds = new Set<string>();
  private transport: Transport | null = null;
  private readonly timers = new Timers(() => this.running);
  private running = false;
  private _listening = false;
  listenPort = 0;
  nodeInfo: NodeInfo;
  /** Until this time (ms since the epoch) the switch refuses every connection (isolate). */
  private isolatedUntil = 0;
  private readonly mconnConfig: MConnConfig;
  private addrBook: SwitchAddrBook | null = null;

  constructor(private readonly opts: SwitchOptions) {
    this.log = opts.logger ?? nullLogger;
    this.nodeInfo = opts.nodeInfo;
    this.mconnConfig = opts.mconn ?? mconnConfigFromP2P(opts.config);
    for (const id of opts.config.unconditionalPeerIds) if (id) this.unconditionalIds.add(id.toLowerCase());
    for (const id of opts.config.privatePeerIds) if (id) this.privateIds.add(id.toLowerCase());
  }

  addReactor(r: Reactor): void {
    if (this.running) throw new Error('addReactor after start');
    for (const ch of r.channels) {
      if (this.byChannel.has(ch.id)) throw new Error(`channel ${ch.id} has multiple reactors`);
      this.byChannel.set(ch.id, r);
    }
    this.reactors.push(r);
  }

  /** SetAddrBook: dialPeersAsync records its addresses there. */
  setAddrBook(book: SwitchAddrBook | null): void {
    this.addrBook = book;
  }

  get listening(): boolean {
    return this._listening;
  }

  channelDescriptors(): ChannelDescriptor[] {
    return this.reactors.flatMap((r) => r.channels);
  }

  async start(): Promise<void> {
    const channels = Uint8Array.from(this.channelDescriptors().map((c) => c.id));
    this.nodeInfo = { ...this.nodeInfo, channels };
    this.transport = new Transport({
      nodeKey: this.opts.nodeKey,
      nodeInfo: this.nodeInfo,
      handshakeTimeout: this.opts.config.handshakeTimeout,
      dialTimeout: this.opts.config.dialTimeout,
    });
    this.running = true;
    for (const r of this.reactors) r.start?.(this);
    const { host, port } = parseListenAddr(this.opts.config.laddr);
    this.listenPort = await this.transport.listen(
      host,
      port,
      (up) => this.onAccepted(up),
      (err, remote) => this.log.debug('inbound connection rejected', { remote, err: (err as Error).message }),
      // While cut off, a dialler must fail at the dial and back off: accepting the handshake and
      // then closing made every peer redial at once, several times a second.
      () => this.running && !this.isolated,
    );
    // A NodeInfo advertising port 0 (tests listening on an ephemeral port) advertises the bound
    // one; the Transport holds this same object, and no handshake can run before this line.
    if (/:0$/.test(this.nodeInfo.listenAddr)) this.nodeInfo.listenAddr = this.nodeInfo.listenAddr.replace(/:0$/, `:${this.listenPort}`);
    this._listening = true;
    this.log.info('P2P listening', { addr: `${host}:${this.listenPort}`, id: this.transport.id });
    const persistent = this.opts.config.persistentPeers.filter((s) => s.trim() !== '');
    if (persistent.length > 0) this.dialPeersAsync(persistent, { persistent: true });
    const seeds = this.opts.config.seeds.filter((s) => s.trim() !== '');
    // With PEX the reactor dials seeds when its address book has nothing to dial (CometBFT dials
    // them only there).
    if (seeds.length > 0 && !this.byChannel.has(PEX_CHANNEL_ID)) this.dialPeersAsync(seeds, {});
  }

  async stop(): Promise<void> {
    this.running = false;
    this.timers.clear();
    // net.Server.close() resolves only once every connection has ended: stop the peers first.
    const closing = this.transport?.close();
    for (const p of [...this.peers.values()]) this.stopPeer(p, new P2PError('CLOSED', 'switch stopped'), false);
    for (const r of this.reactors) r.stop?.();
    await closing;
    this._listening = false;
  }

  peerList(): Peer[] {
    return [...this.peers.values()];
  }

  getPeer(id: string): Peer | undefined {
    return this.peers.get(id);
  }

  numPeers(): { outbound: number; inbound: number; dialing: number } {
    let outbound = 0;
    let inbound = 0;
    for (const p of this.peers.values()) {
      if (p.outbound) outbound++;
      else inbound++;
    }
    return { outbound, inbound, dialing: this.dialing.size };
  }

  /** IsDialingOrExistingAddress (by ID). */
  isDialingOrConnected(id: string): boolean {
    return this.peers.has(id) || this.dialing.has(id);
  }

  isPersistent(id: string): boolean {
    return this.persistentIds.has(id);
  }

  isPrivate(id: string): boolean {
    return this.privateIds.has(id);
  }

  addPersistentPeers(addrs: readonly string[]): void {
    for (const a of addrs) {
      const pa = parsePeerAddress(a);
      if (!this.persistentIds.has(pa.id)) this.persistentAddrs.push(pa);
      this.persistentIds.add(pa.id);
    }
  }

  addUnconditionalPeerIds(ids: readonly string[]): void {
    for (const id of ids) this.unconditionalIds.add(id.toLowerCase());
  }

  addPrivatePeerIds(ids: readonly string[]): void {
    for (const id of ids) this.privateIds.add(id.toLowerCase());
  }

  /**
   * Cuts the node off the network for `ms` from inside (fault tests; reached only through the
   * unsafe RPC `unsafe_p2p_isolate`): every peer is stopped, inbound connections are closed before
   * any handshake and dials fail until the time is up; persistent peers are redialled as after
   * any disconnect, so the links come back on their own afterwards. `ms` 0 ends a cut now.
   */
  isolate(ms: number): void {
    if (ms <= 0) {
      this.isolatedUntil = 0;
      this.log.info('isolation ended');
      for (const pa of this.persistentAddrs) if (!this.peers.has(pa.id)) this.reconnectToPeer(pa);
      return;
    }
    this.isolatedUntil = Date.now() + ms;
    this.log.info('isolating the node from its peers', { ms });
    for (const p of [...this.peers.values()]) this.stopPeer(p, new P2PError('ISOLATED', 'node isolated'), true);
  }

  get isolated(): boolean {
    return Date.now() < this.isolatedUntil;
  }

  /** Sends to every peer that has the channel, without waiting (switch.go Broadcast uses Send). */
  broadcast(ch: number, msg: Uint8Array): void {
    for (const p of this.peers.values()) void p.send(ch, msg);
  }

  /** DialPeersAsync: dials in the background; failures are logged (and persistent ones retried). */
  dialPeersAsync(addrs: readonly string[], flags: { persistent?: boolean }): void {
    for (const a of addrs) {
      let pa: PeerAddress;
      try {
        pa = parsePeerAddress(a.includes('://') ? a.split('://')[1]! : a);
      } catch (e) {
        this.log.error('Error dialing peer', { addr: a, err: (e as Error).message });
        continue;
      }
      // The book keeps IPs (NetAddress): a host name goes in as the address it resolves to now;
      // the dial itself resolves the name again (Transport.dial).
      const book = this.addrBook;
      if (book) {
        void resolveHost(pa.host).then(
          (ip) => book.addDialedAddress({ ...pa, host: ip }),
          (e: Error) => this.log.info('Error resolving peer address', { addr: a, err: e.message }),
        );
      }
      if (flags.persistent && !this.persistentIds.has(pa.id)) {
        this.persistentIds.add(pa.id);
        this.persistentAddrs.push(pa);
      }
      // A small random delay, as DialPeersAsync does (0–3 s there), so that both ends of a pair
      // do not dial each other at the very same moment.
      const delay = Math.floor(Math.random() * 500);
      this.later(delay, () => {
        void this.dialPeer(pa).catch((e) => {
          this.log.info('Error dialing peer', { addr: a, err: (e as Error).message });
          if (this.persistentIds.has(pa.id)) this.reconnectToPeer(pa);
        });
      });
    }
  }

  private later(ms: number, fn: () => void): void {
    this.timers.later(ms, fn);
  }

  /** Dials one address and adds the peer; throws on failure. */
  async dialPeer(pa: PeerAddress): Promise<Peer> {
    if (!this.running || this.transport === null) throw new P2PError('SOCKET', 'switch not running');
    if (pa.id === this.transport.id) throw new P2PError('SELF', 'dial to self');
    if (this.isolated) throw new P2PError('ISOLATED', 'node isolated');
    const existing = this.peers.get(pa.id);
    if (existing) return existing;
    if (this.dialing.has(pa.id)) throw new P2PError('DUPLICATE', `already dialing ${pa.id}`);
    const { outbound } = this.numPeers();
    if (!this.persistentIds.has(pa.id) && !this.unconditionalIds.has(pa.id) && outbound >= this.opts.config.maxNumOutboundPeers) {
      throw new P2PError('FULL', 'max outbound peers reached');
    }
    this.dialing.add(pa.id);
    try {
      const up = await this.transport.dial(pa);
      if (this.isolated) {
        up.conn.close();
        throw new P2PError('ISOLATED', 'node isolated');
      }
      const peer = this.addPeer(up, pa);
      if (peer === null) throw new P2PError('DUPLICATE', `peer ${pa.id} already connected`);
      return peer;
    } finally {
      this.dialing.delete(pa.id);
    }
  }

  private onAccepted(up: UpgradedConnection): void {
    if (!this.running || this.isolated) {
      up.conn.close();
      return;
    }
    const { inbound } = this.numPeers();
    if (!this.unconditionalIds.has(up.id) && !this.persistentIds.has(up.id) && inbound >= this.opts.config.maxNumInboundPeers) {
      this.log.info('rejected inbound peer: max inbound peers', { id: up.id });
      up.conn.close();
      return;
    }
    this.addPeer(up, null);
  }

  /** addPeer: filters, starts the MConnection, tells the reactors. Null when filtered out. */
  private addPeer(up: UpgradedConnection, dialAddr: PeerAddress | null): Peer | null {
    const remote = { ip: (up.conn.remoteAddress ?? dialAddr?.host ?? '').replace(/^::ffff:/, ''), port: up.conn.remotePort ?? dialAddr?.port ?? 0 };
    if (this.peers.has(up.id)) {
      up.conn.close();
      return null;
    }
    if (!this.opts.config.allowDuplicateIp && remote.ip !== '') {
      for (const p of this.peers.values()) {
        if (p.remoteIp === remote.ip) {
          this.log.info('rejected peer: duplicate IP', { id: up.id, ip: remote.ip });
          up.conn.close();
          return null;
        }
      }
    }
    const peer = new Peer(up, {
      persistent: this.persistentIds.has(up.id),
      remoteIp: remote.ip,
      remotePort: remote.port,
      dialAddr,
    });
    const descs = this.channelDescriptors();
    peer.mconn = new MConnection(
      up.conn,
      descs,
      {
        onReceive: (ch, msg) => {
          const r = this.byChannel.get(ch);
          if (!r) throw new P2PError('PROTOCOL', `unknown channel ${ch}`);
          r.receive(ch, peer, msg);
        },
        onError: (err) => this.stopPeerForError(peer, err),
      },
      this.mconnConfig,
    );
    this.peers.set(peer.id, peer);
    peer.mconn.start();
    this.log.info('added peer', { id: peer.id, outbound: peer.outbound, ip: remote.ip });
    for (const r of this.reactors) {
      try {
        r.addPeer(peer);
      } catch (e) {
        this.log.error('reactor addPeer failed', { reactor: r.name, err: (e as Error).message });
      }
    }
    return peer;
  }

  /** StopPeerForError: disconnects; a persistent peer is dialled again. */
  stopPeerForError(peer: Peer, reason: unknown): void {
    if (this.peers.get(peer.id) !== peer) return;
    this.log.info('stopping peer for error', { id: peer.id, err: (reason as Error)?.message ?? String(reason) });
    this.stopPeer(peer, reason, true);
  }

  private stopPeer(peer: Peer, reason: unknown, reconnect: boolean): void {
    if (this.peers.get(peer.id) !== peer) return;
    this.peers.delete(peer.id);
    peer.mconn.stop();
    for (const r of this.reactors) {
      try {
        r.removePeer(peer, reason);
      } catch (e) {
        this.log.error('reactor removePeer failed', { reactor: r.name, err: (e as Error).message });
      }
    }
    if (reconnect && this.running && this.persistentIds.has(peer.id)) {
      const pa = peer.dialAddr ?? this.persistentAddrs.find((a) => a.id === peer.id);
      if (pa) this.reconnectToPeer(pa);
    }
  }

  /** reconnectToPeer (switch.go): RECONNECT_ATTEMPTS tries at base±jitter, then exponential. */
  private reconnectToPeer(pa: PeerAddress): void {
    if (this.reconnecting.has(pa.id)) return;
    this.reconnecting.add(pa.id);
    const base = this.opts.reconnectBaseMs ?? 5000;
    const maxPeriod = this.opts.config.persistentPeersMaxDialPeriod;
    let attempt = 0;
    const tryOnce = () => {
      if (!this.running || this.peers.has(pa.id)) {
        this.reconnecting.delete(pa.id);
        return;
      }
      this.dialPeer(pa).then(
        () => this.reconnecting.delete(pa.id),
        (e) => {
          attempt++;
          this.log.debug('reconnect failed', { id: pa.id, attempt, err: (e as Error).message });
          let wait: number;
          if (attempt < RECONNECT_ATTEMPTS) wait = base + Math.random() * 3000 * (base / 5000);
          else if (attempt < RECONNECT_ATTEMPTS + RECONNECT_BACKOFF_ATTEMPTS) {
            wait = RECONNECT_BACKOFF_BASE_S ** (attempt - RECONNECT_ATTEMPTS + 1) * 1000 + Math.random() * 3000;
          } else {
            this.reconnecting.delete(pa.id);
            this.log.error('gave up reconnecting to peer', { id: pa.id });
            return;
          }
          if (maxPeriod > 0) wait = Math.min(wait, maxPeriod);
          this.later(wait, tryOnce);
        },
      );
    };
    this.later(Math.floor(Math.random() * base * 0.2), tryOnce);
  }
}
