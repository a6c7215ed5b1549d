/**
 * A server side of HTTP/2 (RFC 9113) over cleartext TCP, as much of it as gRPC's unary and
 * streaming calls need, written for the gRPC server (./server.ts) instead of node:http2.
 *
 * Why: node:http2 cost ~400–600 µs of the RPC thread's CPU per unary call on this 2-core machine
 * (nghttp2 through the C++ binding, header objects, and three socket writes: response headers,
 * the message, then the trailers when nghttp2 asks for them), about four times a `/status` answer
 * on uWebSockets.js, and that thread also answers the node RPC while the executor runs a block.
 * Here a unary answer (HEADERS, DATA, trailers) leaves in one write.
 *
 * What it does:
 * - the connection preface and SETTINGS both ways (ours: MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE,
 *   MAX_HEADER_LIST_SIZE), PING, GOAWAY both ways, RST_STREAM, WINDOW_UPDATE, PRIORITY (read,
 *   ignored), CONTINUATION, padding; unknown frame types are ignored (RFC 9113 §4.1, §5.5);
 * - flow control both ways (§6.9): what we send waits for the client's stream and connection
 *   windows, split at its MAX_FRAME_SIZE; what we receive is credited back as it is read;
 * - header blocks through HPACK (./hpack.ts); ours are written as static indexes and literals
 *   without indexing, so the client's table size does not concern us (RFC 7541 §6.2.2);
 * - connection errors end with GOAWAY and the error code (§5.4.1), stream errors with RST_STREAM;
 * - streams past SETTINGS_MAX_CONCURRENT_STREAMS are refused with REFUSED_STREAM;
 * - push is never used; a client's PUSH_PROMISE is a PROTOCOL_ERROR.
 * Output of one turn of the event loop is written once, at the end of the turn's microtasks.
 */
import net, { type AddressInfo, type Socket } from 'node:net';
import { encodeHeaders, HpackDecoder, HpackError } from './hpack.js';

/** The client's connection preface (RFC 9113 §3.4). */
export const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** Frame types (RFC 9113 §6). */
export const H2Frame = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

/** Frame flags (RFC 9113 §6); END_STREAM and ACK share a bit on different frame types. */
export const H2Flag = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

/** SETTINGS parameters (RFC 9113 §6.5.2). */
export const H2Setting = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const;

/** A window's size until SETTINGS or WINDOW_UPDATE say otherwise (RFC 9113 §6.5.2), and the largest one (§6.9.1). */
export const H2_DEFAULT_WINDOW = 65_535;
export const H2_MAX_WINDOW = 2 ** 31 - 1;

const { DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION } = H2Frame;
const { END_STREAM: FLAG_END_STREAM, ACK: FLAG_ACK, END_HEADERS: FLAG_END_HEADERS, PADDED: FLAG_PADDED, PRIORITY: FLAG_PRIORITY } = H2Flag;
const {
  HEADER_TABLE_SIZE: SETTINGS_HEADER_TABLE_SIZE,
  ENABLE_PUSH: SETTINGS_ENABLE_PUSH,
  MAX_CONCURRENT_STREAMS: SETTINGS_MAX_CONCURRENT_STREAMS,
  INITIAL_WINDOW_SIZE: SETTINGS_INITIAL_WINDOW_SIZE,
  MAX_FRAME_SIZE: SETTINGS_MAX_FRAME_SIZE,
  MAX_HEADER_LIST_SIZE: SETTINGS_MAX_HEADER_LIST_SIZE,
} = H2Setting;

/** HTTP/2 error codes (RFC 9113 §7). */
export const H2Error = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  ENHANCE_YOUR_CALM: 0xb,
} as const;

/** The largest frame payload we accept: the protocol's default SETTINGS_MAX_FRAME_SIZE, which we keep. */
const OUR_MAX_FRAME = 16_384;
/** The header list we accept (SETTINGS_MAX_HEADER_LIST_SIZE; RFC 7541 §4.1 sizes). */
const MAX_HEADER_LIST_BYTES = 64 * 1024;
/** Bytes of a header block being gathered across CONTINUATION frames before it is refused. */
const MAX_HEADER_BLOCK_BYTES = 2 * MAX_HEADER_LIST_BYTES;
/** Frames of one header block (HEADERS and its CONTINUATIONs) before it is refused. */
const MAX_HEADER_FRAMES = 64;
/** Unsent bytes on a connection past which DATA waits and reading pauses until the socket drains. */
const CONGESTED_BYTES = 4 * 1024 * 1024;
/** A turn's output up to this size is joined into one buffer for one write; larger goes as a corked series. */
const JOIN_LIMIT = 64 * 1024;

/** Request headers: lower-case names; a name sent more than once has its values in order. */
export type IncomingHeaders = Record<string, string | string[]>;
/** Response headers or trailers: names as sent (lower-case), values written as text. */
export type OutHeaders = Record<string, string | number>;

export interface H2Options {
  /** SETTINGS_MAX_CONCURRENT_STREAMS we advertise and enforce, per connection. */
  maxConcurrentStreams: number;
  /** SETTINGS_INITIAL_WINDOW_SIZE we advertise: what a client may send on one stream before credit. */
  streamWindow: number;
  /** The connection's receive window (raised from 64 KiB by a WINDOW_UPDATE right after SETTINGS). */
  connectionWindow: number;
  /** A new stream with its request headers; the callee sets its handlers before returning. */
  onStream: (stream: H2Stream, headers: IncomingHeaders) => void;
  /** A connection ended in a protocol error, or its socket failed (debug logging). */
  onConnectionError?: (message: string) => void;
}

// ------------------------------------------------------------------------------------------------

/** One request stream: the request's DATA in, the response out. */
export class H2Stream {
  /** A chunk of the request body (nothing is buffered for a stream without this handler). */
  ondata: ((chunk: Buffer) => void) | null = null;
  /** The client half-closed the stream (END_STREAM): no more request data. */
  onend: (() => void) | null = null;
  /** The stream is closed: answered and ended both ways, reset by either side, or its connection is gone. */
  onclose: (() => void) | null = null;
  headersSent = false;
  /** Our END_STREAM is queued: nothing more may be sent. */
  localEnded = false;
  remoteEnded = false;
  closed = false;
  /** The RST_STREAM code when the stream was reset (by either side). */
  rstCode: number | undefined;
  /** What the client still lets us send on this stream. */
  sendWindow: number;
  /** Request bytes read but not yet credited back with a WINDOW_UPDATE. */
  unacked = 0;
  /** Our DATA not yet sent for lack of window, then the trailers' block, then whether END_STREAM goes last. */
  private pending: Buffer[] = [];
  private trailerBlock: Buffer | null = null;
  private endQueued = false;
  private resetAfter: number | undefined;
  /** A handler runs for this stream: it counts against the stream limit until done(), closed or not. */
  private busy = false;
  private lingering = false;

  constructor(
    readonly id: number,
    private readonly conn: H2Connection,
    sendWindow: number,
  ) {
    this.sendWindow = sendWindow;
  }

  /**
   * Marks a handler running for this stream. Until done(), the stream keeps its place under
   * SETTINGS_MAX_CONCURRENT_STREAMS even when the client resets it: otherwise a client could
   * open, start and reset streams without end and have any number of handlers run at once
   * (the "rapid reset" attack, CVE-2023-44487).
   */
  start(): void {
    this.busy = true;
  }

  /** The handler has returned. */
  done(): void {
    if (!this.busy) return;
    this.busy = false;
    if (this.lingering) {
      this.lingering = false;
      this.conn.releaseLingering();
    }
  }

  /** Called by the connection when the stream closes: true when it must keep its place (a handler runs). */
  linger(): boolean {
    if (!this.busy) return false;
    this.lingering = true;
    return true;
  }

  /** Whether the stream's output is all written (nothing waits for a window). */
  get flushed(): boolean {
    return this.pending.length === 0 && !this.endQueued;
  }

  /** Sends the response headers; `endStream`: they are the whole response (trailers-only). */
  respond(headers: OutHeaders, endStream = false): void {
    if (this.closed || this.headersSent || this.localEnded) return;
    this.headersSent = true;
    this.conn.sendHeaders(this.id, encodeHeaders(headers), endStream);
    if (endStream) this.endLocal();
  }

  /** Queues response data (after respond()). */
  write(data: Buffer): void {
    if (this.closed || this.localEnded || data.length === 0) return;
    this.pending.push(data);
    this.pump();
  }

  /** Ends the response: the trailers when given, else an empty DATA frame with END_STREAM. */
  end(trailers?: OutHeaders): void {
    if (this.closed || this.localEnded) return;
    this.localEnded = true;
    this.endQueued = true;
    this.trailerBlock = trailers ? encodeHeaders(trailers) : null;
    this.pump();
  }

  /** Resets the stream once what is queued for it has gone out (a status before its RST_STREAM). */
  reset(code: number): void {
    if (this.closed) return;
    if (!this.flushed) {
      this.resetAfter = code;
      return;
    }
    this.conn.resetStream(this, code);
  }

  /** Sends what the windows allow; called again when they open. */
  pump(): void {
    while (this.pending.length > 0) {
      const room = Math.min(this.sendWindow, this.conn.sendWindow, this.conn.peerMaxFrame);
      if (room <= 0 || this.conn.congested) {
        this.conn.blocked.add(this);
        return;
      }
      const head = this.pending[0]!;
      const n = Math.min(room, head.length);
      const chunk = n === head.length ? head : head.subarray(0, n);
      if (n === head.length) this.pending.shift();
      else this.pending[0] = head.subarray(n);
      this.sendWindow -= n;
      this.conn.sendWindow -= n;
      this.conn.sendData(this.id, chunk, false);
    }
    this.conn.blocked.delete(this);
    if (this.endQueued) {
      this.endQueued = false;
      if (this.trailerBlock) this.conn.sendHeaders(this.id, this.trailerBlock, true);
      else this.conn.sendData(this.id, EMPTY, true);
      this.trailerBlock = null;
      this.endLocal();
    }
    if (this.resetAfter !== undefined && !this.closed) this.conn.resetStream(this, this.resetAfter);
  }

  private endLocal(): void {
    this.localEnded = true;
    if (this.remoteEnded) this.conn.closeStream(this);
  }
}

const EMPTY = Buffer.alloc(0);

// ------------------------------------------------------------------------------------------------

/** One client connection. */
export class H2Connection {
  /** What the client lets us send on the connection. */
  sendWindow = H2_DEFAULT_WINDOW;
  peerMaxFrame = 16_384;
  readonly blocked = new Set<H2Stream>();
  readonly streams = new Map<number, H2Stream>();
  /** Set when the client's first SETTINGS arrives (the handshake). */
  onSettled: (() => void) | null = null;
  /** Called when the count of open streams changes (idle timer). */
  onStreamsChanged: ((open: number) => void) | null = null;
  /** Called once, when the socket is closed. */
  onClosed: (() => void) | null = null;
  settled = false;
  closed = false;

  private readonly decoder = new HpackDecoder(4096, MAX_HEADER_LIST_BYTES);
  private peerStreamWindow = H2_DEFAULT_WINDOW;
  private prefaceSeen = 0;
  private buf: Buffer | null = null;
  private lastStreamId = 0;
  /** Streams above this id are ignored after our GOAWAY. */
  private goawayAt: number | null = null;
  private peerGoaway = false;
  /** A header block being gathered: its stream, flags of the HEADERS, the fragments. */
  private gathering: { id: number; endStream: boolean; parts: Buffer[]; bytes: number; frames: number } | null = null;
  private recvUnacked = 0;
  private out: Buffer[] = [];
  private outBytes = 0;
  private flushQueued = false;
  /** Closed streams whose handlers still run (see H2Stream.start). */
  private lingering = 0;
  /** The socket was ended by us: nothing more is read or written. */
  private ending = false;
  /** Reading is paused until the socket drains (see congested). */
  private inputPaused = false;

  constructor(
    readonly socket: Socket,
    private readonly opts: H2Options,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (e) => this.opts.onConnectionError?.(e.message));
    socket.on('close', () => this.onSocketClose());
    socket.on('drain', () => {
      for (const st of [...this.blocked]) st.pump();
      this.maybeResume();
    });
    // Our SETTINGS (the server's preface, §3.4) and the connection window, at once.
    const s = Buffer.alloc(18);
    s.writeUInt16BE(SETTINGS_MAX_CONCURRENT_STREAMS, 0);
    s.writeUInt32BE(opts.maxConcurrentStreams, 2);
    s.writeUInt16BE(SETTINGS_INITIAL_WINDOW_SIZE, 6);
    s.writeUInt32BE(opts.streamWindow, 8);
    s.writeUInt16BE(SETTINGS_MAX_HEADER_LIST_SIZE, 12);
    s.writeUInt32BE(MAX_HEADER_LIST_BYTES, 14);
    this.queue(h2Frame(SETTINGS, 0, 0, s));
    if (opts.connectionWindow > H2_DEFAULT_WINDOW) this.queue(windowUpdate(0, opts.connectionWindow - H2_DEFAULT_WINDOW));
  }

  /** Open streams, and closed ones whose handlers still run. */
  get openStreams(): number {
    return this.streams.size + this.lingering;
  }

  releaseLingering(): void {
    this.lingering--;
    this.onStreamsChanged?.(this.openStreams);
    this.maybeEnd();
  }

  /**
   * Whether the socket holds more unsent bytes than CONGESTED_BYTES: a client that does not read
   * (and opens large windows, or sends PINGs or requests that are answered at once) would
   * otherwise have every answer buffered here. DATA waits and reading pauses until the socket
   * drains.
   */
  get congested(): boolean {
    return this.socket.writableLength + this.outBytes > CONGESTED_BYTES;
  }

  /** Graceful close (GOAWAY NO_ERROR): no new streams; the socket ends when the last one closes. */
  goaway(): void {
    if (this.closed || this.goawayAt !== null) return;
    this.goawayAt = this.lastStreamId;
    this.queue(goawayFrame(this.lastStreamId, H2Error.NO_ERROR));
    this.maybeEnd();
  }

  /** Cuts the connection at once (TCP RST where the platform allows). */
  destroy(): void {
    const sock = this.socket;
    if (sock.destroyed) return;
    if (typeof sock.resetAndDestroy === 'function') sock.resetAndDestroy();
    else sock.destroy();
  }

  // ---------------------------------------------------------------------------------- output

  sendHeaders(id: number, block: Buffer, endStream: boolean): void {
    let flags = endStream ? FLAG_END_STREAM : 0;
    if (block.length <= this.peerMaxFrame) {
      this.queue(h2Frame(HEADERS, flags | FLAG_END_HEADERS, id, block));
      return;
    }
    let off = 0;
    let type: number = HEADERS;
    while (off < block.length) {
      const n = Math.min(this.peerMaxFrame, block.length - off);
      const last = off + n === block.length;
      this.queue(h2Frame(type, flags | (last ? FLAG_END_HEADERS : 0), id, block.subarray(off, off + n)));
      off += n;
      type = CONTINUATION;
      flags = 0;
    }
  }

  sendData(id: number, data: Buffer, endStream: boolean): void {
    this.queue(h2Frame(DATA, endStream ? FLAG_END_STREAM : 0, id, data));
  }

  resetStream(stream: H2Stream, code: number): void {
    if (stream.closed) return;
    stream.rstCode = code;
    this.queue(rstFrame(stream.id, code));
    this.closeStream(stream);
  }

  closeStream(stream: H2Stream): void {
    if (stream.closed) return;
    stream.closed = true;
    this.streams.delete(stream.id);
    this.blocked.delete(stream);
    if (stream.linger()) this.lingering++;
    const cb = stream.onclose;
    stream.ondata = stream.onend = stream.onclose = null;
    cb?.();
    this.onStreamsChanged?.(this.openStreams);
    this.maybeEnd();
  }

  /** After a GOAWAY either way, the socket ends once no stream is open. */
  private maybeEnd(): void {
    if (this.openStreams === 0 && (this.goawayAt !== null || this.peerGoaway)) this.endSocket();
  }

  private queue(b: Buffer): void {
    if (this.closed || this.ending) return;
    this.out.push(b);
    this.outBytes += b.length;
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(() => this.flush());
    }
  }

  private flush(): void {
    this.flushQueued = false;
    const out = this.out;
    if (out.length === 0 || this.closed || this.socket.destroyed) {
      this.out = [];
      this.outBytes = 0;
      return;
    }
    if (out.length === 1) this.socket.write(out[0]!);
    else if (this.outBytes <= JOIN_LIMIT) this.socket.write(Buffer.concat(out, this.outBytes));
    else {
      this.socket.cork();
      for (const b of out) this.socket.write(b);
      this.socket.uncork();
    }
    this.out = [];
    this.outBytes = 0;
    if (this.socket.writableLength > CONGESTED_BYTES) this.pauseInput();
    // Reading may have paused for this turn's answers, which the kernel may have taken whole
    // (no 'drain' follows a write that did not back up).
    else this.maybeResume();
  }

  private pauseInput(): void {
    if (this.inputPaused) return;
    this.inputPaused = true;
    this.socket.pause();
  }

  private maybeResume(): void {
    if (!this.inputPaused || this.congested || this.ending || this.closed) return;
    this.inputPaused = false;
    this.socket.resume();
    // Frames read before the pause and not yet handled.
    if (this.buf !== null) this.onData(EMPTY);
  }

  private endSocket(): void {
    if (this.closed || this.ending) return;
    // After what is queued (the GOAWAY, the last answers); then nothing more is read or written
    // (a write after end() would destroy the socket with the last answers still in it).
    queueMicrotask(() => {
      if (this.ending || this.openStreams > 0) return;
      this.flush();
      this.ending = true;
      if (!this.socket.destroyed) this.socket.end();
    });
  }

  /** A connection error (§5.4.1): GOAWAY with the code, then the socket is closed. */
  private fail(code: number, why: string): void {
    if (this.closed) return;
    this.opts.onConnectionError?.(`HTTP/2 connection error ${code}: ${why}`);
    this.queue(goawayFrame(this.lastStreamId, code));
    this.ending = true; // nothing more is read, even where the flush would resume reading
    this.flush();
    this.closed = true;
    this.socket.end();
    const timer = setTimeout(() => this.destroy(), 1000);
    timer.unref();
  }

  private onSocketClose(): void {
    this.closed = true;
    for (const s of [...this.streams.values()]) this.closeStream(s);
    this.out = [];
    this.onClosed?.();
  }

  // ---------------------------------------------------------------------------------- input

  private onData(chunk: Buffer): void {
    if (this.closed || this.ending) return;
    let b = this.buf === null ? chunk : Buffer.concat([this.buf, chunk]);
    this.buf = null;
    if (this.prefaceSeen < H2_PREFACE.length) {
      const n = Math.min(H2_PREFACE.length - this.prefaceSeen, b.length);
      if (!b.subarray(0, n).equals(H2_PREFACE.subarray(this.prefaceSeen, this.prefaceSeen + n))) {
        this.fail(H2Error.PROTOCOL_ERROR, 'not an HTTP/2 connection preface');
        return;
      }
      this.prefaceSeen += n;
      b = b.subarray(n);
    }
    let off = 0;
    while (!this.closed && !this.ending && b.length - off >= 9) {
      if (this.congested) {
        // Answers wait unsent: read no more until the socket drains (the rest stays in buf).
        this.pauseInput();
        break;
      }
      const len = (b[off]! << 16) | (b[off + 1]! << 8) | b[off + 2]!;
      if (len > OUR_MAX_FRAME) {
        this.fail(H2Error.FRAME_SIZE_ERROR, `frame of ${len} bytes past SETTINGS_MAX_FRAME_SIZE`);
        return;
      }
      if (b.length - off < 9 + len) break;
      const type = b[off + 3]!;
      const flags = b[off + 4]!;
      const id = b.readUInt32BE(off + 5) & 0x7fffffff;
      const payload = b.subarray(off + 9, off + 9 + len);
      off += 9 + len;
      if (this.settled === false && type !== SETTINGS) {
        this.fail(H2Error.PROTOCOL_ERROR, 'the first frame is not SETTINGS');
        return;
      }
      this.onFrame(type, flags, id, payload);
    }
    if (!this.closed && off < b.length) this.buf = Buffer.from(b.subarray(off));
  }

  private onFrame(type: number, flags: number, id: number, p: Buffer): void {
    if (this.gathering !== null && type !== CONTINUATION) {
      this.fail(H2Error.PROTOCOL_ERROR, 'a header block was interrupted');
      return;
    }
    switch (type) {
      case DATA:
        return this.onDataFrame(flags, id, p);
      case HEADERS:
        return this.onHeaders(flags, id, p);
      case PRIORITY:
        // Priority signals are deprecated (RFC 9113 §5.3.2) and ignored here.
        if (id === 0) return this.fail(H2Error.PROTOCOL_ERROR, 'PRIORITY on stream 0');
        return;
      case RST_STREAM:
        return this.onRst(id, p);
      case SETTINGS:
        return this.onSettings(flags, id, p);
      case PUSH_PROMISE:
        return this.fail(H2Error.PROTOCOL_ERROR, 'PUSH_PROMISE from a client');
      case PING:
        if (id !== 0) return this.fail(H2Error.PROTOCOL_ERROR, 'PING on a stream');
        if (p.length !== 8) return this.fail(H2Error.FRAME_SIZE_ERROR, 'PING of a size other than 8');
        if ((flags & FLAG_ACK) === 0) this.queue(h2Frame(PING, FLAG_ACK, 0, Buffer.from(p)));
        return;
      case GOAWAY:
        if (id !== 0) return this.fail(H2Error.PROTOCOL_ERROR, 'GOAWAY on a stream');
        this.peerGoaway = true;
        this.maybeEnd();
        return;
      case WINDOW_UPDATE:
        return this.onWindowUpdate(id, p);
      case CONTINUATION:
        return this.onContinuation(flags, id, p);
      default:
        return; // unknown frame types are ignored (§4.1)
    }
  }

  private onSettings(flags: number, id: number, p: Buffer): void {
    if (id !== 0) return this.fail(H2Error.PROTOCOL_ERROR, 'SETTINGS on a stream');
    if ((flags & FLAG_ACK) !== 0) {
      if (p.length !== 0) this.fail(H2Error.FRAME_SIZE_ERROR, 'SETTINGS ACK with a payload');
      return;
    }
    if (p.length % 6 !== 0) return this.fail(H2Error.FRAME_SIZE_ERROR, 'SETTINGS of a size not a multiple of 6');
    // The last value of INITIAL_WINDOW_SIZE in the frame is the one that counts; it is applied
    // to the open streams once, however many times the frame repeats it.
    let window: number | null = null;
    for (let i = 0; i < p.length; i += 6) {
      const key = p.readUInt16BE(i);
      const v = p.readUInt32BE(i + 2);
      switch (key) {
        case SETTINGS_ENABLE_PUSH:
          if (v > 1) return this.fail(H2Error.PROTOCOL_ERROR, 'SETTINGS_ENABLE_PUSH not 0 or 1');
          break;
        case SETTINGS_INITIAL_WINDOW_SIZE:
          if (v > H2_MAX_WINDOW) return this.fail(H2Error.FLOW_CONTROL_ERROR, 'SETTINGS_INITIAL_WINDOW_SIZE past 2^31-1');
          window = v;
          break;
        case SETTINGS_MAX_FRAME_SIZE:
          if (v < 16_384 || v > 16_777_215) return this.fail(H2Error.PROTOCOL_ERROR, 'SETTINGS_MAX_FRAME_SIZE out of range');
          this.peerMaxFrame = v;
          break;
        case SETTINGS_HEADER_TABLE_SIZE:
        case SETTINGS_MAX_CONCURRENT_STREAMS:
        case SETTINGS_MAX_HEADER_LIST_SIZE:
        default:
          // Our header blocks use no dynamic table; we never open streams; unknown keys are ignored.
          break;
      }
    }
    if (window !== null && window !== this.peerStreamWindow) {
      const delta = window - this.peerStreamWindow;
      this.peerStreamWindow = window;
      for (const s of this.streams.values()) {
        s.sendWindow += delta;
        if (s.sendWindow > H2_MAX_WINDOW) return this.fail(H2Error.FLOW_CONTROL_ERROR, 'a stream window past 2^31-1');
      }
    }
    this.queue(h2Frame(SETTINGS, FLAG_ACK, 0, EMPTY));
    if (!this.settled) {
      this.settled = true;
      this.onSettled?.();
    }
    for (const s of [...this.blocked]) s.pump();
  }

  private onWindowUpdate(id: number, p: Buffer): void {
    if (p.length !== 4) return this.fail(H2Error.FRAME_SIZE_ERROR, 'WINDOW_UPDATE of a size other than 4');
    const inc = p.readUInt32BE(0) & 0x7fffffff;
    if (id === 0) {
      if (inc === 0) return this.fail(H2Error.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0');
      this.sendWindow += inc;
      if (this.sendWindow > H2_MAX_WINDOW) return this.fail(H2Error.FLOW_CONTROL_ERROR, 'connection window past 2^31-1');
      for (const s of [...this.blocked]) s.pump();
      return;
    }
    const s = this.streams.get(id);
    if (s === undefined) return; // a stream that is closed, or not open yet (§6.9)
    if (inc === 0) return this.streamError(id, H2Error.PROTOCOL_ERROR);
    s.sendWindow += inc;
    if (s.sendWindow > H2_MAX_WINDOW) return this.streamError(id, H2Error.FLOW_CONTROL_ERROR);
    s.pump();
  }

  private onRst(id: number, p: Buffer): void {
    if (id === 0) return this.fail(H2Error.PROTOCOL_ERROR, 'RST_STREAM on stream 0');
    if (p.length !== 4) return this.fail(H2Error.FRAME_SIZE_ERROR, 'RST_STREAM of a size other than 4');
    if (id > this.lastStreamId) return this.fail(H2Error.PROTOCOL_ERROR, 'RST_STREAM on an idle stream');
    const s = this.streams.get(id);
    if (s === undefined) return;
    s.rstCode = p.readUInt32BE(0);
    this.closeStream(s);
  }

  private onDataFrame(flags: number, id: number, p: Buffer): void {
    if (id === 0) return this.fail(H2Error.PROTOCOL_ERROR, 'DATA on stream 0');
    // The whole frame counts against the windows, padding included (§6.9.1).
    this.credit(p.length);
    const s = this.streams.get(id);
    if (s === undefined || s.remoteEnded) {
      if (id > this.lastStreamId) return this.fail(H2Error.PROTOCOL_ERROR, 'DATA on an idle stream');
      // A stream that is closed or half-closed on the client's side (§5.1): STREAM_CLOSED.
      if (s !== undefined) this.resetStream(s, H2Error.STREAM_CLOSED);
      return;
    }
    let data = p;
    if ((flags & FLAG_PADDED) !== 0) {
      const pad = p.length > 0 ? p[0]! : 256;
      if (pad >= p.length) return this.fail(H2Error.PROTOCOL_ERROR, 'DATA padding past the frame');
      data = p.subarray(1, p.length - pad);
    }
    s.unacked += p.length;
    if (s.unacked >= this.opts.streamWindow >>> 1 && (flags & FLAG_END_STREAM) === 0) {
      this.queue(windowUpdate(id, s.unacked));
      s.unacked = 0;
    }
    if (data.length > 0) s.ondata?.(data);
    if ((flags & FLAG_END_STREAM) !== 0 && !s.closed) this.remoteEnd(s);
  }

  /** Connection-level credit for `n` bytes read: returned in batches of half the window. */
  private credit(n: number): void {
    this.recvUnacked += n;
    if (this.recvUnacked >= this.opts.connectionWindow >>> 1) {
      this.queue(windowUpdate(0, this.recvUnacked));
      this.recvUnacked = 0;
    }
  }

  private remoteEnd(s: H2Stream): void {
    s.remoteEnded = true;
    const cb = s.onend;
    s.onend = null;
    cb?.();
    if (s.localEnded && s.flushed) this.closeStream(s);
  }

  private onHeaders(flags: number, id: number, p: Buffer): void {
    if (id === 0 || id % 2 === 0) return this.fail(H2Error.PROTOCOL_ERROR, `HEADERS on stream ${id}`);
    let frag = p;
    if ((flags & FLAG_PADDED) !== 0) {
      const pad = p.length > 0 ? p[0]! : 256;
      if (pad >= p.length) return this.fail(H2Error.PROTOCOL_ERROR, 'HEADERS padding past the frame');
      frag = p.subarray(1, p.length - pad);
    }
    if ((flags & FLAG_PRIORITY) !== 0) {
      if (frag.length < 5) return this.fail(H2Error.FRAME_SIZE_ERROR, 'HEADERS too short for its priority');
      frag = frag.subarray(5);
    }
    // A block in several frames is copied: views would keep each whole socket read alive.
    const whole = (flags & FLAG_END_HEADERS) !== 0;
    this.gathering = { id, endStream: (flags & FLAG_END_STREAM) !== 0, parts: [whole ? frag : Buffer.from(frag)], bytes: frag.length + 9, frames: 1 };
    if ((flags & FLAG_END_HEADERS) !== 0) this.headerBlockDone();
  }

  private onContinuation(flags: number, id: number, p: Buffer): void {
    const g = this.gathering;
    if (g === null || g.id !== id) return this.fail(H2Error.PROTOCOL_ERROR, 'CONTINUATION out of place');
    // Each frame counts its 9-byte header too, so empty CONTINUATION frames cannot go on forever.
    g.bytes += p.length + 9;
    g.frames++;
    if (g.bytes > MAX_HEADER_BLOCK_BYTES || g.frames > MAX_HEADER_FRAMES) return this.fail(H2Error.ENHANCE_YOUR_CALM, 'header block too large');
    if (p.length > 0) g.parts.push(Buffer.from(p));
    if ((flags & FLAG_END_HEADERS) !== 0) this.headerBlockDone();
  }

  private headerBlockDone(): void {
    const g = this.gathering!;
    this.gathering = null;
    const block = g.parts.length === 1 ? g.parts[0]! : Buffer.concat(g.parts);
    let fields: Array<[string, string]>;
    let tooLarge = false;
    try {
      fields = this.decoder.decode(block);
    } catch (e) {
      if (e instanceof HpackError && e.tooLarge) {
        tooLarge = true;
        fields = [];
      } else {
        return this.fail(H2Error.COMPRESSION_ERROR, e instanceof Error ? e.message : String(e));
      }
    }
    const existing = this.streams.get(g.id);
    if (existing !== undefined || g.id <= this.lastStreamId) {
      // Trailers from the client (§8.1): they must end the stream; their fields are not read. On a
      // stream that is closed (we may have reset it), the frame is ignored (§5.1); its block was
      // decoded above, so the HPACK table stays in step.
      if (existing === undefined) return;
      if (!g.endStream || existing.remoteEnded) return this.streamError(g.id, H2Error.PROTOCOL_ERROR);
      this.remoteEnd(existing);
      return;
    }
    this.lastStreamId = g.id;
    if (this.goawayAt !== null && g.id > this.goawayAt) return; // after our GOAWAY: ignored (§6.8)
    if (this.openStreams >= this.opts.maxConcurrentStreams) {
      this.queue(rstFrame(g.id, H2Error.REFUSED_STREAM));
      return;
    }
    if (tooLarge) {
      this.queue(rstFrame(g.id, H2Error.ENHANCE_YOUR_CALM));
      return;
    }
    const headers = requestHeaders(fields);
    if (headers === null) {
      this.queue(rstFrame(g.id, H2Error.PROTOCOL_ERROR));
      return;
    }
    const s = new H2Stream(g.id, this, this.peerStreamWindow);
    this.streams.set(g.id, s);
    this.onStreamsChanged?.(this.openStreams);
    this.opts.onStream(s, headers);
    if (g.endStream && !s.closed) this.remoteEnd(s);
  }

  private streamError(id: number, code: number): void {
    const s = this.streams.get(id);
    if (s !== undefined) this.resetStream(s, code);
    else if (id <= this.lastStreamId) this.queue(rstFrame(id, code));
  }
}

/** A field name: lower-case token characters only (RFC 9113 §8.2.1, RFC 9110 §5.6.2). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;
/** What a field value may not hold (RFC 9113 §8.2.1): NUL, CR, LF. */
const BAD_VALUE = /[\0\r\n]/;

/**
 * A request's fields as headers, or null when the request is malformed (§8.3.1, §8.2.1, §8.2.2):
 * pseudo-headers after regular ones, unknown or repeated pseudo-headers, a missing :method or
 * :path, names that are not lower-case tokens, values with NUL, CR or LF, connection-specific
 * headers, or `te` other than `trailers`.
 */
function requestHeaders(fields: Array<[string, string]>): IncomingHeaders | null {
  const h: IncomingHeaders = Object.create(null) as IncomingHeaders;
  let regular = false;
  for (const [name, value] of fields) {
    if (name.length === 0) return null;
    if (name.charCodeAt(0) === 0x3a) {
      if (regular || h[name] !== undefined) return null;
      if (name !== ':method' && name !== ':path' && name !== ':scheme' && name !== ':authority') return null;
      h[name] = value;
      continue;
    }
    regular = true;
    if (!TOKEN.test(name) || BAD_VALUE.test(value)) return null;
    if (name === 'connection' || name === 'keep-alive' || name === 'proxy-connection' || name === 'transfer-encoding' || name === 'upgrade') return null;
    if (name === 'te' && value !== 'trailers') return null;
    const prev = h[name];
    if (prev === undefined) h[name] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else h[name] = [prev, value];
  }
  if (h[':method'] === undefined || h[':path'] === undefined) return null;
  return h;
}

// ------------------------------------------------------------------------------------------------
// Frames and header blocks out

/** One frame: the 9-byte header (RFC 9113 §4.1) and its payload. */
export function h2Frame(type: number, flags: number, id: number, payload: Uint8Array): Buffer {
  const b = Buffer.allocUnsafe(9 + payload.length);
  b[0] = (payload.length >>> 16) & 0xff;
  b[1] = (payload.length >>> 8) & 0xff;
  b[2] = payload.length & 0xff;
  b[3] = type;
  b[4] = flags;
  b.writeUInt32BE(id, 5);
  b.set(payload, 9);
  return b;
}

function windowUpdate(id: number, inc: number): Buffer {
  const p = Buffer.allocUnsafe(4);
  p.writeUInt32BE(inc, 0);
  return h2Frame(WINDOW_UPDATE, 0, id, p);
}

function rstFrame(id: number, code: number): Buffer {
  const p = Buffer.allocUnsafe(4);
  p.writeUInt32BE(code, 0);
  return h2Frame(RST_STREAM, 0, id, p);
}

function goawayFrame(lastId: number, code: number): Buffer {
  const p = Buffer.allocUnsafe(8);
  p.writeUInt32BE(lastId, 0);
  p.writeUInt32BE(code, 4);
  return h2Frame(GOAWAY, 0, 0, p);
}

// ------------------------------------------------------------------------------------------------

export interface H2ServerOptions extends H2Options {
  /** Connections past this are closed as soon as they are accepted (0 = no cap). */
  maxConnections: number;
  /** A connection without the client's SETTINGS by then is cut (0 = no limit). */
  handshakeTimeoutMs: number;
  /** A connection without a stream this long gets GOAWAY (0 = never). */
  idleTimeoutMs: number;
  /** After a GOAWAY of ours, how long the client has to close before the connection is cut. */
  graceMs: number;
  onDrop?: () => void;
  onIdleClose?: () => void;
  onHandshakeTimeout?: () => void;
}

/** The listening side: connections with their handshake and idle timers. */
export class H2Server {
  private server: net.Server | null = null;
  readonly connections = new Set<H2Connection>();

  constructor(private readonly opts: H2ServerOptions) {}

  listen(host: string, port: number): Promise<AddressInfo> {
    const server = net.createServer({ noDelay: true }, (sock) => this.onSocket(sock));
    if (this.opts.maxConnections > 0) server.maxConnections = this.opts.maxConnections;
    server.on('drop', () => this.opts.onDrop?.());
    this.server = server;
    return new Promise<AddressInfo>((resolve, reject) => {
      const onError = (e: Error) => {
        server.off('listening', onListening);
        this.server = null;
        reject(e);
      };
      const onListening = () => {
        server.off('error', onError);
        server.on('error', (e) => this.opts.onConnectionError?.(e.message));
        resolve(server.address() as AddressInfo);
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen(port, host);
    });
  }

  /** Stops accepting; GOAWAY on every connection; cuts those still open after the grace period. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const c of this.connections) c.goaway();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        for (const c of this.connections) c.destroy();
        resolve();
      }, this.opts.graceMs);
      timer.unref();
    });
    await Promise.race([closed, grace]);
    clearTimeout(timer);
    await closed;
  }

  private onSocket(sock: Socket): void {
    const c = new H2Connection(sock, this.opts);
    this.connections.add(c);
    let handshake: NodeJS.Timeout | undefined;
    // One timer a connection: a stream's open or close only notes the time (no timer churn per
    // call); when the timer fires early it waits out the rest.
    let idle: NodeJS.Timeout | undefined;
    let idleSince = performance.now();
    const idleMs = this.opts.idleTimeoutMs;
    const onIdleTimer = () => {
      idle = undefined;
      if (c.closed || c.openStreams > 0) return;
      const left = idleSince + idleMs - performance.now();
      if (left > 1) {
        idle = setTimeout(onIdleTimer, left);
        return;
      }
      this.opts.onIdleClose?.();
      c.goaway();
      const later = setTimeout(() => c.destroy(), this.opts.graceMs);
      later.unref();
    };
    const armIdle = (open: number) => {
      if (idleMs <= 0 || open > 0 || c.closed) return;
      idleSince = performance.now();
      idle ??= setTimeout(onIdleTimer, idleMs);
    };
    if (this.opts.handshakeTimeoutMs > 0) {
      handshake = setTimeout(() => {
        if (c.settled) return;
        this.opts.onHandshakeTimeout?.();
        c.destroy();
      }, this.opts.handshakeTimeoutMs);
    }
    c.onSettled = () => {
      clearTimeout(handshake);
      handshake = undefined;
    };
    c.onStreamsChanged = armIdle;
    c.onClosed = () => {
      clearTimeout(handshake);
      clearTimeout(idle);
      this.connections.delete(c);
    };
    armIdle(0);
  }
}
