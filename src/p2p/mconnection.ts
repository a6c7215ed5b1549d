/**
 * MConnection: several prioritised message channels multiplexed over one SecretConnection
 * (cometbft/cometbft:p2p/conn/connection.go).
 *
 * Sending: each channel has a bounded queue. The sender repeatedly picks, among channels with
 * something pending, the one with the lowest recentlySent/priority, and writes one packet of at
 * most maxPacketMsgPayloadSize (1024) bytes of its current message (`eof` on the last). Packets
 * go into a write buffer in batches of 10, one rate-limit check per batch; the buffer is sealed
 * and written when it reaches 64 KiB or when the flush throttle fires: at the end of the turn after
 * a quiet spell, else at most once per flushThrottle (100 ms; see armFlushTimer). recentlySent
 * decays by 0.8 every 2 s. Ping every pingInterval (60 s); no pong within pongTimeout (45 s) is fatal.
 *
 * Receiving: packets are read with a cap of maxPacketMsgSize (the Packet size of a full payload
 * on channel 1: 1034 bytes), subject to the receive rate limit; a packet for an unregistered
 * channel, a message above its channel's recvMessageCapacity or any malformed packet stops the
 * connection. Complete messages go to onReceive(channelId, bytes) (a fresh copy each time).
 *
 * Failures stop the connection and call onError once; stop()/flushStop() do not call it.
 */
import { P2PError } from './errors.js';
import { RateMonitor } from './flowrate.js';
import { PING_DELIMITED, PONG_DELIMITED, decodePacket, delimitedPacketMsgSize, packetMsgSize, writePacketMsgInto } from './packet.js';
import type { SecretConnection } from './secret-connection.js';

export interface ChannelDescriptor {
  /** Channel byte, 0..255. */
  id: number;
  /** Positive weight: a channel's share of the bandwidth is proportional to it. */
  priority: number;
  /** Messages that may wait in the send queue (default 1). */
  sendQueueCapacity?: number;
  /** Initial receive buffer hint (default 4096); kept for descriptor parity, not a limit. */
  recvBufferCapacity?: number;
  /** Largest message accepted on this channel (default 22,020,096 = 21 MiB). */
  recvMessageCapacity?: number;
}

export interface MConnConfig {
  /** Bytes/s; `[p2p] send_rate`. */
  sendRate: number;
  /** Bytes/s; `[p2p] recv_rate`. */
  recvRate: number;
  /** `[p2p] max_packet_msg_payload_size`. */
  maxPacketMsgPayloadSize: number;
  /** ms; `[p2p] flush_throttle_timeout`. */
  flushThrottle: number;
  /** ms */
  pingInterval: number;
  /** ms; must be below pingInterval. */
  pongTimeout: number;
  /** ms a send() waits for queue space before giving up. */
  sendTimeout: number;
}

/** cometbft/cometbft:p2p/conn/connection.go defaults. */
export const DEFAULT_SEND_QUEUE_CAPACITY = 1;
export const DEFAULT_RECV_BUFFER_CAPACITY = 4096;
export const DEFAULT_RECV_MESSAGE_CAPACITY = 22020096;
export const NUM_BATCH_PACKET_MSGS = 10;
export const MIN_WRITE_BUFFER_SIZE = 65536;
export const UPDATE_STATS_MS = 2000;

/**
 * Defaults as a node runs them: the rates are `[p2p] send_rate`/`recv_rate`'s 5,120,000 B/s
 * (cometbft/cometbft:config/config.go); MConnection's own fallback is 512,000.
 */
export const DEFAULT_MCONN_CONFIG: MConnConfig = {
  sendRate: 5_120_000,
  recvRate: 5_120_000,
  maxPacketMsgPayloadSize: 1024,
  flushThrottle: 100,
  pingInterval: 60_000,
  pongTimeout: 45_000,
  sendTimeout: 10_000,
};

/** The MConnection settings of a loaded `[p2p]` section. */
export function mconnConfigFromP2P(p2p: { sendRate: number; recvRate: number; maxPacketMsgPayloadSize: number; flushThrottleTimeout: number }): MConnConfig {
  return {
    ...DEFAULT_MCONN_CONFIG,
    sendRate: p2p.sendRate,
    recvRate: p2p.recvRate,
    maxPacketMsgPayloadSize: p2p.maxPacketMsgPayloadSize,
    flushThrottle: p2p.flushThrottleTimeout,
  };
}

export interface MConnHandlers {
  onReceive(channelId: number, msg: Uint8Array): void;
  /** The connection failed (remote closed, protocol error, pong timeout, ...). Called once. */
  onError(err: P2PError): void;
}

interface SendWaiter {
  msg: Uint8Array;
  resolve: (ok: boolean) => void;
  timer: NodeJS.Timeout;
}

class Channel {
  readonly desc: Required<ChannelDescriptor>;
  readonly queue: Uint8Array[] = [];
  readonly waiters: SendWaiter[] = [];
  sending: Uint8Array | null = null;
  sendingOff = 0;
  recentlySent = 0;
  recving: Uint8Array[] = [];
  recvingSize = 0;

  constructor(desc: ChannelDescriptor) {
    if (!Number.isInteger(desc.id) || desc.id < 0 || desc.id > 255) throw new RangeError(`channel id ${desc.id} out of range`);
    if (!(desc.priority > 0)) throw new RangeError('Channel default priority must be a positive integer');
    this.desc = {
      id: desc.id,
      priority: desc.priority,
      sendQueueCapacity: desc.sendQueueCapacity || DEFAULT_SEND_QUEUE_CAPACITY,
      recvBufferCapacity: desc.recvBufferCapacity || DEFAULT_RECV_BUFFER_CAPACITY,
      recvMessageCapacity: desc.recvMessageCapacity || DEFAULT_RECV_MESSAGE_CAPACITY,
    };
  }

  /** isSendPending: moves the next queued message into `sending` when idle. */
  isSendPending(): boolean {
    if (this.sending === null) {
      const next = this.queue.shift();
      if (next === undefined) return false;
      this.sending = next;
      this.sendingOff = 0;
      // A slot opened: admit the oldest blocked send().
      const w = this.waiters.shift();
      if (w) {
        clearTimeout(w.timer);
        this.queue.push(w.msg);
        w.resolve(true);
      }
    }
    return true;
  }
}

export interface ChannelStatus {
  id: number;
  sendQueueCapacity: number;
  sendQueueSize: number;
  priority: number;
  recentlySent: number;
}

export interface ConnectionStatus {
  durationMs: number;
  sendBytes: number;
  recvBytes: number;
  sendRate: number;
  recvRate: number;
  channels: ChannelStatus[];
}

export class MConnection {
  readonly config: MConnConfig;
  private readonly channels: Channel[];
  private readonly byId = new Map<number, Channel>();
  private readonly sendMonitor: RateMonitor;
  private readonly recvMonitor: RateMonitor;
  /** maxPacketMsgSize: the receive cap per packet. */
  readonly maxPacketMsgSize: number;
  private readonly created = performance.now();

  private running = false;
  private stopped = false;
  private writeBuf: Uint8Array;
  private writePos = 0;
  private pumpScheduled = false;
  private pumpTimer: NodeJS.Timeout | null = null;
  private waitingDrain = false;
  private flushTimer: NodeJS.Timeout | null = null;
  /** performance.now() of the last flush (-Infinity: none yet). */
  private lastFlushAt = -Infinity;
  private pingTimer: NodeJS.Timeout | null = null;
  private pongTimer: NodeJS.Timeout | null = null;
  private statsTimer: NodeJS.Timeout | null = null;
  private doneResolve!: () => void;
  /** Resolves once the connection has stopped, for whatever reason. */
  readonly done: Promise<void>;

  constructor(
    readonly conn: SecretConnection,
    channels: ChannelDescriptor[],
    private readonly handlers: MConnHandlers,
    config: Partial<MConnConfig> = {},
  ) {
    this.config = { ...DEFAULT_MCONN_CONFIG, ...config };
    if (this.config.pongTimeout >= this.config.pingInterval) {
      throw new RangeError('pongTimeout must be less than pingInterval (otherwise, next ping will reset pong timer)');
    }
    this.channels = channels.map((d) => new Channel(d));
    for (const ch of this.channels) {
      if (this.byId.has(ch.desc.id)) throw new RangeError(`duplicate channel id ${ch.desc.id}`);
      this.byId.set(ch.desc.id, ch);
    }
    this.sendMonitor = new RateMonitor(this.config.sendRate);
    this.recvMonitor = new RateMonitor(this.config.recvRate);
    this.maxPacketMsgSize = packetMsgSize(0x01, true, this.config.maxPacketMsgPayloadSize);
    // Room for the 64 KiB flush threshold plus one batch of full packets.
    this.writeBuf = new Uint8Array(MIN_WRITE_BUFFER_SIZE + (NUM_BATCH_PACKET_MSGS + 1) * (this.maxPacketMsgSize + 8));
    this.done = new Promise((r) => (this.doneResolve = r));
  }

  start(): void {
    if (this.running || this.stopped) throw new Error('MConnection already started');
    this.running = true;
    this.pingTimer = setInterval(() => this.sendPing(), this.config.pingInterval);
    this.statsTimer = setInterval(() => {
      for (const ch of this.channels) ch.recentlySent = Math.trunc(ch.recentlySent * 0.8);
    }, UPDATE_STATS_MS);
    // Packets already buffered (they can arrive with the handshake's last bytes) are handled from
    // a microtask, not inside start(): the switch tells its reactors about the peer right after
    // start() returns, and a reactor must know a peer before it gets the peer's messages (a PEX
    // ban of an inbound peer was lost when its PexAddrs came first).
    queueMicrotask(() => void this.recvLoop());
    this.kick();
  }

  get isRunning(): boolean {
    return this.running;
  }

  /**
   * Queues `msg` on channel `channelId`, waiting up to sendTimeout (10 s) for queue space.
   * Resolves false on timeout, on an unknown channel or when the connection is not running.
   */
  send(channelId: number, msg: Uint8Array): Promise<boolean> {
    if (this.trySend(channelId, msg)) return Promise.resolve(true);
    const ch = this.byId.get(channelId);
    if (!this.running || !ch) return Promise.resolve(false);
    return new Promise((resolve) => {
      const w: SendWaiter = {
        msg,
        resolve: (ok) => {
          resolve(ok);
          if (ok) this.kick();
        },
        timer: setTimeout(() => {
          const i = ch.waiters.indexOf(w);
          if (i >= 0) ch.waiters.splice(i, 1);
          resolve(false);
        }, this.config.sendTimeout),
      };
      ch.waiters.push(w);
    });
  }

  /** Queues `msg` if the channel's queue has room; false otherwise (never waits). */
  trySend(channelId: number, msg: Uint8Array): boolean {
    if (!this.running) return false;
    const ch = this.byId.get(channelId);
    if (!ch) return false;
    if (ch.queue.length >= ch.desc.sendQueueCapacity || ch.waiters.length > 0) return false;
    ch.queue.push(msg);
    this.kick();
    return true;
  }

  /** Whether a trySend on this channel would be accepted now. */
  canSend(channelId: number): boolean {
    const ch = this.byId.get(channelId);
    return this.running && ch !== undefined && ch.queue.length < ch.desc.sendQueueCapacity && ch.waiters.length === 0;
  }

  status(): ConnectionStatus {
    return {
      durationMs: performance.now() - this.created,
      sendBytes: this.sendMonitor.total,
      recvBytes: this.recvMonitor.total,
      sendRate: this.sendMonitor.averageRate(),
      recvRate: this.recvMonitor.averageRate(),
      channels: this.channels.map((ch) => ({
        id: ch.desc.id,
        sendQueueCapacity: ch.desc.sendQueueCapacity,
        sendQueueSize: ch.queue.length + (ch.sending ? 1 : 0),
        priority: ch.desc.priority,
        recentlySent: ch.recentlySent,
      })),
    };
  }

  /** Closes at once; queued messages are dropped. Does not call onError. */
  stop(): void {
    if (this.stopped) return;
    this.shutdown();
    this.conn.close();
  }

  /**
   * FlushStop: writes everything still queued (no rate limit), then ends the connection gracefully.
   * Resolves once the bytes are handed to the socket.
   */
  async flushStop(): Promise<void> {
    if (this.stopped) return;
    this.clearTimers();
    this.running = false;
    try {
      while (this.channels.some((c) => c.isSendPending())) {
        this.writeBatch();
        if (this.writePos >= MIN_WRITE_BUFFER_SIZE) {
          this.flush();
          if (this.conn.needsDrain) await this.conn.drain();
        }
      }
      this.flush();
    } catch {
      // the socket is going away anyway
    }
    this.shutdown();
    this.conn.end();
  }

  // -------------------------------------------------------------------------------------------
  // sending

  private kick(): void {
    if (this.pumpScheduled || this.pumpTimer || this.waitingDrain || !this.running) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    if (!this.running) return;
    try {
      for (;;) {
        if (this.conn.needsDrain) {
          this.waitingDrain = true;
          void this.conn.drain().then(() => {
            this.waitingDrain = false;
            this.kick();
          });
          return;
        }
        const wait = this.sendMonitor.delay();
        if (wait > 0) {
          this.pumpTimer = setTimeout(() => {
            this.pumpTimer = null;
            this.kick();
          }, wait);
          return;
        }
        const wrote = this.writeBatch();
        if (wrote === 0) return;
        this.sendMonitor.update(wrote);
        if (this.writePos >= MIN_WRITE_BUFFER_SIZE) this.flush();
        else this.armFlushTimer();
        // Yield to I/O between full buffers so reads and timers keep running.
        if (this.writePos === 0) {
          this.kick();
          return;
        }
      }
    } catch (err) {
      this.stopForError(err);
    }
  }

  /** selectChannelToGossipOn: lowest recentlySent/priority among channels with data pending. */
  private selectChannel(): Channel | null {
    let least = Infinity;
    let pick: Channel | null = null;
    for (const ch of this.channels) {
      if (!ch.isSendPending()) continue;
      const ratio = ch.recentlySent / ch.desc.priority;
      if (ratio < least) {
        least = ratio;
        pick = ch;
      }
    }
    return pick;
  }

  /** Up to 10 packets into the write buffer; returns bytes written. */
  private writeBatch(): number {
    let total = 0;
    const max = this.config.maxPacketMsgPayloadSize;
    for (let i = 0; i < NUM_BATCH_PACKET_MSGS; i++) {
      const ch = this.selectChannel();
      if (!ch) break;
      const msg = ch.sending!;
      const remaining = msg.length - ch.sendingOff;
      const eof = remaining <= max;
      const data = msg.subarray(ch.sendingOff, ch.sendingOff + (eof ? remaining : max));
      const size = delimitedPacketMsgSize(ch.desc.id, eof, data.length);
      this.ensureWrite(size);
      this.writePos = writePacketMsgInto(this.writeBuf, this.writePos, ch.desc.id, eof, data);
      if (eof) {
        ch.sending = null;
        ch.sendingOff = 0;
      } else ch.sendingOff += max;
      ch.recentlySent += size;
      total += size;
    }
    return total;
  }

  private ensureWrite(n: number): void {
    if (this.writePos + n <= this.writeBuf.length) return;
    const next = new Uint8Array(Math.max(this.writeBuf.length * 2, this.writePos + n));
    next.set(this.writeBuf.subarray(0, this.writePos));
    this.writeBuf = next;
  }

  private writeRaw(bytes: Uint8Array): void {
    this.ensureWrite(bytes.length);
    this.writeBuf.set(bytes, this.writePos);
    this.writePos += bytes.length;
  }

  /**
   * Throttled flush, leading edge: the first packets after a quiet spell (no flush for a whole
   * flushThrottle) go out at the end of this event-loop turn, which still coalesces everything
   * queued in the turn; packets written within flushThrottle of the last flush wait for the rest
   * of that window, so a busy connection still flushes at most once per flushThrottle. CometBFT's
   * trailing ThrottleTimer holds even a lone vote for the full 100 ms: on a 4-validator loopback
   * network that added ~100 ms to each of a height's hops (proposal, prevote, precommit), and a
   * block-sync request/response round trip took two whole throttles.
   */
  private armFlushTimer(): void {
    if (this.flushTimer || this.writePos === 0) return;
    const sinceLast = performance.now() - this.lastFlushAt;
    const wait = sinceLast >= this.config.flushThrottle ? 0 : this.config.flushThrottle - sinceLast;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      try {
        this.flush();
      } catch (err) {
        this.stopForError(err);
      }
    }, wait);
  }

  private flush(): void {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    if (this.writePos === 0) return;
    const n = this.writePos;
    this.writePos = 0;
    this.lastFlushAt = performance.now();
    this.conn.write(this.writeBuf.subarray(0, n));
  }

  private sendPing(): void {
    try {
      this.writeRaw(PING_DELIMITED);
      this.sendMonitor.update(PING_DELIMITED.length);
      if (this.pongTimer) clearTimeout(this.pongTimer);
      this.pongTimer = setTimeout(() => {
        this.pongTimer = null;
        this.stopForError(new P2PError('PONG_TIMEOUT', 'pong timeout'));
      }, this.config.pongTimeout);
      this.flush();
    } catch (err) {
      this.stopForError(err);
    }
  }

  private sendPong(): void {
    this.writeRaw(PONG_DELIMITED);
    this.sendMonitor.update(PONG_DELIMITED.length);
    this.flush();
  }

  // -------------------------------------------------------------------------------------------
  // receiving

  private async recvLoop(): Promise<void> {
    const reader = this.conn.reader;
    const max = this.maxPacketMsgSize;
    let sinceYield = 0;
    try {
      while (this.running) {
        const wait = this.recvMonitor.delay();
        if (wait > 0) {
          await new Promise((r) => setTimeout(r, wait));
          sinceYield = 0;
          if (!this.running) return;
        }
        const before = reader.total;
        let bytes = reader.tryReadDelimited(max);
        if (bytes === null) {
          bytes = await reader.readDelimited(max);
          sinceYield = 0;
          if (!this.running) return;
        } else if (++sinceYield >= 256) {
          // Much already buffered: let timers and writes run between long synchronous stretches.
          await new Promise((r) => setImmediate(r));
          sinceYield = 0;
          if (!this.running) return;
        }
        this.recvMonitor.update(reader.total - before);
        this.handlePacket(bytes);
      }
    } catch (err) {
      this.stopForError(err);
    }
  }

  private handlePacket(bytes: Uint8Array): void {
    const p = decodePacket(bytes);
    if (p.type === 'ping') {
      this.sendPong();
      return;
    }
    if (p.type === 'pong') {
      if (this.pongTimer) {
        clearTimeout(this.pongTimer);
        this.pongTimer = null;
      }
      return;
    }
    const ch = p.channelId >= 0 && p.channelId <= 255 ? this.byId.get(p.channelId) : undefined;
    if (!ch) throw new P2PError('UNKNOWN_CHANNEL', `unknown channel ${p.channelId.toString(16).toUpperCase()}`);
    const size = ch.recvingSize + p.data.length;
    if (size > ch.desc.recvMessageCapacity) {
      throw new P2PError('RECV_CAPACITY', `received message exceeds available capacity: ${ch.desc.recvMessageCapacity} < ${size}`);
    }
    if (p.data.length > 0) {
      ch.recving.push(p.data);
      ch.recvingSize = size;
    }
    if (!p.eof) return;
    let msg: Uint8Array;
    if (ch.recving.length === 1) msg = ch.recving[0]!;
    else {
      msg = new Uint8Array(ch.recvingSize);
      let off = 0;
      for (const c of ch.recving) {
        msg.set(c, off);
        off += c.length;
      }
    }
    ch.recving = [];
    ch.recvingSize = 0;
    try {
      this.handlers.onReceive(ch.desc.id, msg);
    } catch (err) {
      // CometBFT recovers a reactor panic and stops the connection for it.
      throw err instanceof P2PError ? err : new P2PError('PROTOCOL', `onReceive failed: ${(err as Error).message}`, { cause: err });
    }
  }

  // -------------------------------------------------------------------------------------------

  private clearTimers(): void {
    for (const t of [this.pingTimer, this.statsTimer]) if (t) clearInterval(t);
    for (const t of [this.pongTimer, this.flushTimer, this.pumpTimer]) if (t) clearTimeout(t);
    this.pingTimer = this.statsTimer = this.pongTimer = this.flushTimer = this.pumpTimer = null;
  }

  private shutdown(): void {
    this.stopped = true;
    this.running = false;
    this.clearTimers();
    for (const ch of this.channels) {
      for (const w of ch.waiters.splice(0)) {
        clearTimeout(w.timer);
        w.resolve(false);
      }
      ch.queue.length = 0;
      ch.sending = null;
    }
    this.doneResolve();
  }

  private stopForError(err: unknown): void {
    if (this.stopped) return;
    this.shutdown();
    this.conn.close();
    const e = err instanceof P2PError ? err : new P2PError('SOCKET', (err as Error)?.message ?? String(err), { cause: err });
    this.handlers.onError(e);
  }
}
