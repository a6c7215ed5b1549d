/**
 * The PEX reactor on channel 0x00 (cometbft/cometbft:p2p/pex/pex_reactor.go): peers exchange
 * addresses (PexRequest → PexAddrs) and the node keeps up to `[p2p] max_num_outbound_peers`
 * outbound connections by dialling addresses from its book (src/p2p/pex/addrbook.ts).
 *
 * Rules kept from CometBFT:
 * - we send a PexRequest to a peer only with none outstanding to it; a PexAddrs we did not ask
 *   for disconnects the peer and bans it (ErrUnsolicitedList); so does a list with an IP that does
 *   not parse or a port above 65535, or more than 250 addresses; addresses the book refuses
 *   (invalid, non-routable under strict, ours, private, banned) are skipped one by one;
 * - a peer's PexRequests are answered at most once per ensurePeersPeriod/3 (the first two pass):
 *   one sooner disconnects and bans it;
 * - ensurePeers every ensurePeersPeriod (30 s; the first pass at once when we have no peer, else
 *   after a random part of the period), when max_num_outbound_peers − (outbound + dialling) > 0:
 *   dial that many addresses picked from the book with a bias to "new" addresses that shrinks as
 *   outbound peers grow; while the book needs addresses (< 1000), lift ended bans, ask a random
 *   peer for addresses, and dial the seeds when nothing was picked;
 * - a failed dial counts an attempt; the next waits 2^attempts s (+ up to 1 s jitter, capped by
 *   persistent_peers_max_dial_period for persistent peers); after 16 the address is banned;
 *   an authentication failure bans it at once; dialling ourselves records our address;
 * - an inbound peer's NodeInfo listen address goes into the book (it is its own source); an
 *   outbound peer is asked for addresses; addresses learnt from a seed are dialled at once;
 * - seed_mode: no ensurePeers; crawl every period (dial the book's addresses not crawled in the
 *   last 2 minutes and ask each for addresses), answer an inbound peer's first request with a
 *   selection biased 30 % to new addresses and then hang up, and drop non-persistent peers
 *   connected longer than 28 h.
 * Addresses sent: at most 100 per PexAddrs (CometBFT sends up to 250 and caps the message at
 * 64,000 bytes; both are accepted from peers), never our own, never a private peer's.
 *
 * Simplified: a successful outbound connection marks the address good (see addrbook.ts).
 */
import { isIP } from 'node:net';
import { nullLogger, type Logger } from '../../log.js';
import { P2PError } from '../errors.js';
import type { ChannelDescriptor } from '../mconnection.js';
import { PEX_CHANNEL, decodePexMessage, encodePexMessage, type PexMessage } from '../messages/pex.js';
import type { Peer, Reactor, Switch, SwitchAddrBook } from '../switch.js';
import { parsePeerAddress, type PeerAddress } from '../transport.js';
import { Timers } from '../timers.js';
import { AddrBook, DEFAULT_BAN_MS, MAX_GET_SELECTION } from './addrbook.js';
import { dialString, netAddressFromListen, netAddressString, normalizeNetAddress, type NetAddress } from './netaddress.js';

/** pex_reactor.go constants. */
export const DEFAULT_ENSURE_PEERS_PERIOD_MS = 30_000;
const MAX_ADDRESS_SIZE = 256;
/** maxMsgSize: the channel's receive cap. */
export const MAX_PEX_MSG_SIZE = MAX_ADDRESS_SIZE * MAX_GET_SELECTION;
const MIN_TIME_BETWEEN_CRAWLS_MS = 2 * 60_000;
const MAX_ATTEMPTS_TO_DIAL = 16;
const BIAS_TO_SELECT_NEW_PEERS = 30;
/** node.go: SeedDisconnectWaitPeriod. */
export const DEFAULT_SEED_DISCONNECT_WAIT_MS = 28 * 3600_000;
/** Addresses in one PexAddrs we send. */
export const MAX_ADDRS_PER_MSG = 100;

export interface PexReactorOptions {
  book: AddrBook;
  /** `[p2p] seeds` (id@host:port). */
  seeds?: readonly string[];
  seedMode?: boolean;
  /** ensurePeers / crawl period (default 30 s; tests shorten it). */
  ensurePeersPeriodMs?: number;
  seedDisconnectWaitMs?: number;
  /** `[p2p] persistent_peers_max_dial_period` (ms, 0 = none). */
  persistentPeersMaxDialPeriodMs?: number;
  /** `[p2p] max_num_outbound_peers`. */
  maxNumOutboundPeers: number;
  logger?: Logger;
}

interface DialAttempts {
  number: number;
  lastDialed: number;
}

function toPeerAddress(a: NetAddress): PeerAddress {
  return { id: a.id, host: a.ip, port: a.port };
}

export class PexReactor implements Reactor, SwitchAddrBook {
  readonly name = 'PEX';
  readonly channels: readonly ChannelDescriptor[] = [{ id: PEX_CHANNEL, priority: 1, sendQueueCapacity: 10, recvMessageCapacity: MAX_PEX_MSG_SIZE }];
  readonly book: AddrBook;
  private readonly log: Logger;
  private readonly period: number;
  private sw: Switch | null = null;
  private readonly seedAddrs: PeerAddress[] = [];
  /** Peers we sent a PexRequest to and that have not answered. */
  private readonly requestsSent = new Set<string>();
  /** Last PexRequest received per peer (0 = the first one, which passes). */
  private readonly lastReceivedRequests = new Map<string, number>();
  private readonly attemptsToDial = new Map<string, DialAttempts>();
  private readonly crawled = new Map<string, number>();
  private readonly timers = new Timers(() => this.running);
  private running = false;

  constructor(private readonly opts: PexReactorOptions) {
    this.book = opts.book;
    this.log = opts.logger ?? nullLogger;
    this.period = opts.ensurePeersPeriodMs ?? DEFAULT_ENSURE_PEERS_PERIOD_MS;
    for (const s of opts.seeds ?? []) {
      if (s.trim() === '') continue;
      try {
        this.seedAddrs.push(parsePeerAddress(s.includes('://') ? s.split('://')[1]! : s));
      } catch (e) {
        this.log.error('invalid seed address', { addr: s, err: (e as Error).message });
      }
    }
  }

  /** minReceiveRequestInterval: a third of the ensurePeers period. */
  get minReceiveRequestIntervalMs(): number {
    return this.period / 3;
  }

  start(sw: Switch): void {
    this.sw = sw;
    this.running = true;
    this.book.addOurId(sw.nodeInfo.id);
    this.book.start();
    sw.setAddrBook(this);
    if (this.opts.seedMode) {
      this.later(0, () => {
        if (this.seedAddrs.length > 0) this.dialSeeds();
        else this.crawlPeers(this.book.getSelection());
        this.every(() => {
          this.attemptDisconnects();
          this.crawlPeers(this.book.getSelection());
          this.cleanupCrawled();
        });
      });
    } else {
      // Randomise the first pass (thundering herd) unless we have no peer at all.
      const { outbound, inbound, dialing } = sw.numPeers();
      const first = outbound + inbound + dialing > 0 ? Math.floor(Math.random() * this.period) : 0;
      this.later(first, () => {
        this.ensurePeers();
        this.every(() => this.ensurePeers());
      });
    }
  }

  stop(): void {
    this.running = false;
    this.timers.clear();
    this.sw?.setAddrBook(null);
    this.book.stop();
  }

  private later(ms: number, fn: () => void): void {
    this.timers.later(ms, fn);
  }

  private every(fn: () => void): void {
    this.timers.every(this.period, fn);
  }

  /** Our address as a source of addresses dialled by hand (DialPeersAsync uses NetAddress()). */
  private ourAddress(): NetAddress {
    const info = this.sw!.nodeInfo;
    return netAddressFromListen(info.id, info.listenAddr) ?? { id: info.id, ip: '', port: 0 };
  }

  /** SwitchAddrBook: an address given to dialPeersAsync (persistent peers, dial_seeds, dial_peers). */
  addDialedAddress(pa: PeerAddress): void {
    if (this.sw?.isPrivate(pa.id)) return;
    const a = { id: pa.id, ip: pa.host, port: pa.port };
    if (this.book.tryAddAddress(a, this.ourAddress())) this.book.save();
  }

  addPeer(peer: Peer): void {
    if (peer.outbound) {
      this.book.markGood(peer.id);
      if (this.book.needMoreAddrs()) this.requestAddrs(peer);
    } else {
      // An inbound peer is its own source; asking it right away is left to ensurePeers.
      const addr = netAddressFromListen(peer.id, peer.nodeInfo.listenAddr);
      if (addr === null) {
        this.log.debug('inbound peer has no usable listen address', { id: peer.id, listenAddr: peer.nodeInfo.listenAddr });
        return;
      }
      if (!this.sw?.isPrivate(peer.id)) this.book.tryAddAddress(addr, addr);
    }
  }

  removePeer(peer: Peer): void {
    this.requestsSent.delete(peer.id);
    this.lastReceivedRequests.delete(peer.id);
  }

  receive(_ch: number, peer: Peer, bytes: Uint8Array): void {
    let msg: PexMessage;
    try {
      msg = decodePexMessage(bytes);
    } catch (e) {
      throw new P2PError('INVALID_MESSAGE', `pex: ${(e as Error).message}`);
    }
    if (msg.type === 'PexRequest') this.onRequest(peer);
    else this.onAddrs(peer, msg.addrs);
  }

  private onRequest(peer: Peer): void {
    if (this.opts.seedMode && !peer.outbound) {
      // A seed answers an inbound peer once and hangs up.
      if (this.lastReceivedRequests.has(peer.id)) return;
      this.lastReceivedRequests.set(peer.id, Date.now());
      void this.sendAddrs(peer, this.book.getSelectionWithBias(BIAS_TO_SELECT_NEW_PEERS))
        .then(() => peer.mconn.flushStop())
        .then(() => this.sw?.stopPeerForError(peer, new P2PError('CLOSED', 'seed: addresses sent')));
      return;
    }
    const last = this.lastReceivedRequests.get(peer.id);
    const now = Date.now();
    if (last === undefined) this.lastReceivedRequests.set(peer.id, 0);
    else if (last === 0) this.lastReceivedRequests.set(peer.id, now);
    else if (now - last < this.minReceiveRequestIntervalMs) {
      this.book.markBad(peer.id, DEFAULT_BAN_MS);
      throw new P2PError('INVALID_MESSAGE', `peer (${peer.id}) sent next PEX request too soon: ${now - last} ms < ${this.minReceiveRequestIntervalMs} ms`);
    } else this.lastReceivedRequests.set(peer.id, now);
    void this.sendAddrs(peer, this.book.getSelection());
  }

  private onAddrs(peer: Peer, raw: NetAddress[]): void {
    if (!this.requestsSent.has(peer.id)) {
      this.book.markBad(peer.id, DEFAULT_BAN_MS);
      throw new P2PError('INVALID_MESSAGE', 'unsolicited pexAddrsMessage');
    }
    if (raw.length > MAX_GET_SELECTION) {
      this.book.markBad(peer.id, DEFAULT_BAN_MS);
      throw new P2PError('INVALID_MESSAGE', `pex: ${raw.length} addresses in one message (at most ${MAX_GET_SELECTION})`);
    }
    // NetAddressesFromProto: an IP that does not parse or a port above 65535 fails the whole list;
    // other faults (unspecified IP, bad ID, port 0, …) are the book's to refuse one by one.
    const addrs = raw.map(normalizeNetAddress);
    for (const a of addrs) {
      if (isIP(a.ip) === 0 || a.port > 65535) {
        this.book.markBad(peer.id, DEFAULT_BAN_MS);
        throw new P2PError('INVALID_MESSAGE', `pex: invalid address ${JSON.stringify(a)}`);
      }
    }
    this.requestsSent.delete(peer.id);
    const src = netAddressFromListen(peer.id, peer.nodeInfo.listenAddr) ?? { id: peer.id, ip: peer.remoteIp, port: peer.remotePort };
    const fromSeed = this.seedAddrs.some((s) => s.id === peer.id);
    for (const a of addrs) {
      if (this.sw?.isPrivate(a.id)) continue;
      if (!this.book.tryAddAddress(a, src)) continue;
      // Addresses from a seed are dialled at once (CometBFT #2093).
      if (fromSeed) void this.dialPeer(a);
    }
  }

  /** RequestAddrs: unless a request to this peer is outstanding. */
  requestAddrs(peer: Peer): void {
    if (this.requestsSent.has(peer.id)) return;
    this.requestsSent.add(peer.id);
    this.log.debug('requesting addresses', { peer: peer.id });
    void peer.send(PEX_CHANNEL, encodePexMessage({ type: 'PexRequest' }));
  }

  private sendAddrs(peer: Peer, addrs: NetAddress[]): Promise<boolean> {
    const ours = this.sw?.nodeInfo.id;
    const list = addrs.filter((a) => a.id !== ours && a.id !== peer.id && !this.sw?.isPrivate(a.id) && !this.book.isPrivate(a.id)).slice(0, MAX_ADDRS_PER_MSG);
    return peer.send(PEX_CHANNEL, encodePexMessage({ type: 'PexAddrs', addrs: list }));
  }

  /** ensurePeers (one pass). */
  ensurePeers(): void {
    const sw = this.sw;
    if (!sw || !this.running) return;
    const { outbound, inbound, dialing } = sw.numPeers();
    const numToDial = this.opts.maxNumOutboundPeers - (outbound + dialing);
    this.log.debug('ensure peers', { outbound, inbound, dialing, numToDial });
    if (numToDial <= 0) return;
    // Prefer vetted addresses while we have few connections: bias 10..90 towards new.
    const newBias = Math.min(outbound, 8) * 10 + 10;
    const toDial = new Map<string, NetAddress>();
    for (let i = 0; i < numToDial * 3 && toDial.size < numToDial; i++) {
      const a = this.book.pickAddress(newBias);
      if (a === null || toDial.has(a.id) || sw.isDialingOrConnected(a.id) || a.id === sw.nodeInfo.id) continue;
      toDial.set(a.id, a);
    }
    for (const a of toDial.values()) void this.dialPeer(a);
    if (this.book.needMoreAddrs()) this.book.reinstateBadPeers();
    if (this.book.needMoreAddrs()) {
      const peers = sw.peerList();
      if (peers.length > 0) this.requestAddrs(peers[Math.floor(Math.random() * peers.length)]!);
      // Also the seeds, for peers that do not take part in PEX.
      if (toDial.size === 0) this.dialSeeds();
    }
  }

  /** dialSeeds: random order until one connects (or is already connected / being dialled). */
  dialSeeds(): void {
    const sw = this.sw;
    if (!sw || this.seedAddrs.length === 0) return;
    const order = this.seedAddrs.slice();
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    void (async () => {
      for (const s of order) {
        if (!this.running) return;
        if (sw.isDialingOrConnected(s.id)) return;
        try {
          await sw.dialPeer(s);
          return;
        } catch (e) {
          if (e instanceof P2PError && e.code === 'DUPLICATE') return;
          this.log.error('Error dialing seed', { seed: `${s.id}@${s.host}:${s.port}`, err: (e as Error).message });
        }
      }
      this.log.error("Couldn't connect to any seeds");
    })();
  }

  /** Dial attempts recorded for an address (0 after a success). */
  attemptsToDialCount(a: NetAddress): number {
    return this.attemptsToDial.get(dialString(a))?.number ?? 0;
  }

  /** dialPeer with CometBFT's attempt counting and back-off; resolves true on a connection. */
  async dialPeer(a: NetAddress): Promise<boolean> {
    const sw = this.sw;
    if (!sw || !this.running) return false;
    const key = dialString(a);
    const pa = toPeerAddress(a);
    const persistent = sw.isPersistent(a.id);
    const prev = this.attemptsToDial.get(key) ?? { number: 0, lastDialed: 0 };
    if (!persistent && prev.number > MAX_ATTEMPTS_TO_DIAL) {
      this.book.markBad(a.id, DEFAULT_BAN_MS);
      this.log.debug('reached max attempts to dial', { addr: netAddressString(a) });
      return false;
    }
    if (prev.number > 0) {
      let backoff = Math.random() * 1000 + 2 ** prev.number * 1000;
      const cap = this.opts.persistentPeersMaxDialPeriodMs ?? 0;
      if (persistent && cap > 0) backoff = Math.min(backoff, cap);
      if (Date.now() - prev.lastDialed < backoff) return false;
    }
    try {
      await sw.dialPeer(pa);
      this.attemptsToDial.delete(key);
      return true;
    } catch (e) {
      const code = e instanceof P2PError ? e.code : 'SOCKET';
      // ErrCurrentlyDialingOrExistingAddress and our own limits are no attempt.
      if (code === 'DUPLICATE' || code === 'FULL' || code === 'ISOLATED') return false;
      if (code === 'SELF') {
        this.book.addOurAddress(a);
        this.attemptsToDial.delete(key);
        return false;
      }
      if (e instanceof P2PError && e.isAuthFailure) {
        this.book.markBad(a.id, DEFAULT_BAN_MS);
        this.attemptsToDial.delete(key);
      } else {
        this.book.markAttempt(a.id);
        this.attemptsToDial.set(key, { number: prev.number + 1, lastDialed: Date.now() });
      }
      this.log.debug('dial failed', { addr: netAddressString(a), attempts: prev.number + 1, err: (e as Error).message });
      return false;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // seed mode

  private crawlPeers(addrs: NetAddress[]): void {
    const now = Date.now();
    for (const a of addrs) {
      const last = this.crawled.get(a.id);
      if (last !== undefined && now - last < MIN_TIME_BETWEEN_CRAWLS_MS) continue;
      this.crawled.set(a.id, now);
      void this.dialPeer(a).then((ok) => {
        const p = ok ? this.sw?.getPeer(a.id) : undefined;
        if (p) this.requestAddrs(p);
      });
    }
  }

  private cleanupCrawled(): void {
    const now = Date.now();
    for (const [id, t] of this.crawled) if (now - t > 24 * 3600_000) this.crawled.delete(id);
  }

  private attemptDisconnects(): void {
    const wait = this.opts.seedDisconnectWaitMs ?? DEFAULT_SEED_DISCONNECT_WAIT_MS;
    for (const p of this.sw?.peerList() ?? []) {
      if (p.persistent || p.status().durationMs < wait) continue;
      this.sw?.stopPeerForError(p, new P2PError('CLOSED', 'seed: connected long enough'));
    }
  }
}
