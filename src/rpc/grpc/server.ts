/**
 * The gRPC server: unary calls over cleartext HTTP/2 (h2c) on our own HTTP/2 transport (./h2.ts)
 * — the one server of the node that is not uWebSockets.js, which has no HTTP/2
 * (docs/ARCHITECTURE.md, ports). It serves the QueryRouter's services and server reflection
 * (reflection.ts).
 *
 * Wire behaviour, as grpc-go's server answers (internal/transport/http2_server.go, server.go;
 * grpc/grpc PROTOCOL-HTTP2.md):
 * - a Content-Type that is not `application/grpc[+proto|;…]` → HTTP 415, grpc-status 3
 *   `invalid gRPC request content-type "…"`; a method other than POST → HTTP 405, grpc-status 13;
 *   a malformed `grpc-timeout` → HTTP 400, grpc-status 13 `malformed grpc-timeout: …`;
 * - every failure after that is HTTP 200 "trailers-only": one HEADERS frame with END_STREAM that
 *   carries `grpc-status` and the percent-encoded `grpc-message`;
 * - success: headers (`content-type`, `grpc-accept-encoding`, `x-cosmos-block-height`), one
 *   length-prefixed message, trailers `grpc-status: 0`;
 * - a request message over `max-recv-msg-size` → ResourceExhausted `grpc: received message larger
 *   than max (N vs. M)`, read from the length prefix (the body is not buffered); a response over
 *   `max-send-msg-size` → ResourceExhausted `grpc: trying to send message larger than max`;
 * - `grpc-timeout` starts a deadline: when it passes the handler's signal aborts and the call ends
 *   DeadlineExceeded `context deadline exceeded`; a client RST aborts the signal too;
 * - compressed requests are accepted in gzip and deflate; responses are never compressed.
 *
 * Heights (cosmos-sdk baseapp/grpcserver.go): the request's
 * `x-cosmos-block-height` goes to the router; the served height returns in the response header of
 * the same name, on errors too (upstream's interceptor sets it before calling the handler).
 *
 * close() is grpc-go's GracefulStop: stop accepting, GOAWAY every connection, let in-flight calls
 * finish, then cut whatever is left after the grace period.
 *
 * Limits (app.toml [grpc]; docs/ARCHITECTURE.md "gRPC limits and fd limits"), because every open
 * connection holds a file descriptor and every unfinished request message holds memory:
 * - `max-open-connections`: connections past the cap are closed as soon as they are accepted
 *   (net.Server maxConnections); the server goes on serving the others;
 * - `handshake-timeout`: a connection whose client has not sent the HTTP/2 preface and SETTINGS
 *   by then is destroyed (grpc-go ServerOption ConnectionTimeout, default 120 s);
 * - `idle-timeout`: a connection with no open stream for that long gets GOAWAY and is closed
 *   (grpc-go keepalive.ServerParameters MaxConnectionIdle, default infinity);
 * - `max-concurrent-streams`: SETTINGS_MAX_CONCURRENT_STREAMS; a stream past it on one connection
 *   is refused with RST_STREAM REFUSED_STREAM (grpc-go http2_server.go operateHeaders);
 * - `max-recv-msg-size` bounds what one unfinished stream may hold (checked on the length prefix)
 *   and `max-recv-buffer-bytes` what all unfinished streams hold together: the stream whose bytes
 *   would go past it ends ResourceExhausted. A stream that ends in an error has its buffered
 *   bytes dropped and, when the client has not half-closed it, is reset (grpc-go finishStream):
 *   the RST_STREAM always follows the HEADERS that carry its grpc-status.
 */
import type { AddressInfo } from 'node:net';
import { toBinary, fromBinary } from '@bufbuild/protobuf';
import { AbciError } from '../../app/errors.js';
import type { GrpcConfig } from '../../config/app-config.js';
import type { Logger } from '../../log.js';
import { parseListenAddr } from '../server/uws.js';
import { ACCEPT_ENCODING, decompress, frame, FrameReader } from './framing.js';
import { H2Error, H2Server, type H2Stream, type IncomingHeaders, type OutHeaders } from './h2.js';
import { answerReflection, DescriptorPool, REFLECTION_PATHS, type ReflectionVersion } from './reflection.js';
import { decodeRequest, type Metadata, type QueryRouter, type Route } from '../../app/query-router.js';
import { BLOCK_HEIGHT_HEADER, encodeGrpcMessage, GrpcCode, parseGrpcTimeout, parseHeightHeader, statusError, toStatus, type Status } from './status.js';

/** cosmos-sdk server/config: DefaultGRPCMaxRecvMsgSize = 10 MiB, DefaultGRPCMaxSendMsgSize = math.MaxInt32. */
export const DEFAULT_MAX_RECV_MSG_SIZE = 10 * 1024 * 1024;
export const DEFAULT_MAX_SEND_MSG_SIZE = 2 ** 31 - 1;
/** How long close() waits for in-flight calls before cutting connections. */
export const DEFAULT_CLOSE_GRACE_MS = 5000;
/**
 * Flow-control windows. HTTP/2's default 64 KiB window makes a 10 MiB request take ~160 window
 * round trips; grpc-go grows its windows by BDP estimation up to 16 MiB. 1 MiB per stream and
 * 16 MiB per connection keep large queries to a few round trips without letting one connection
 * buffer more than that.
 */
const STREAM_WINDOW_BYTES = 1 << 20;
const SESSION_WINDOW_BYTES = 16 << 20;
/** Defaults of the limits (app.toml [grpc]; why these values: docs/ARCHITECTURE.md). */
export const DEFAULT_MAX_OPEN_CONNECTIONS = 256;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;
export const DEFAULT_MAX_CONCURRENT_STREAMS = 100;
export const DEFAULT_MAX_RECV_BUFFER_BYTES = 128 * 1024 * 1024;

export interface GrpcServerOptions {
  /** `[grpc] address`, e.g. `127.0.0.1:9090` (port 0 picks a free port). */
  address: string;
  router: QueryRouter;
  /** `[grpc] max-recv-msg-size`, bytes. */
  maxRecvMsgSize?: number;
  /** `[grpc] max-send-msg-size`, bytes. */
  maxSendMsgSize?: number;
  /** Serve grpc.reflection.v1 and v1alpha (default true). */
  reflection?: boolean;
  logger?: Logger;
  closeGraceMs?: number;
  /** `[grpc] max-open-connections`; 0 = unlimited. */
  maxOpenConnections?: number;
  /** `[grpc] handshake-timeout`, ms until the client's preface and SETTINGS; 0 = none. */
  handshakeTimeoutMs?: number;
  /** `[grpc] idle-timeout`, ms a connection may stay without a stream; 0 = none. */
  idleTimeoutMs?: number;
  /** `[grpc] max-concurrent-streams` per connection (≥ 1). */
  maxConcurrentStreams?: number;
  /** `[grpc] max-recv-buffer-bytes`, unfinished request bytes held across all streams (≥ 1). */
  maxRecvBufferBytes?: number;
  /**
   * Runs a resolved call: by default here, over `router` (localInvoker). The gRPC thread
   * (./thread.ts) serves the transport on a thread of its own and hands each call's bytes to the
   * main thread's router this way; `router` there only names the routes (resolve, reflection).
   */
  invoke?: Invoker;
}

/** What one call came to: the response message's bytes, or a status; and the height served. */
export type InvokeResult = { ok: true; bytes: Uint8Array; height: bigint | undefined } | { ok: false; status: Status; height: bigint | undefined };

/**
 * Runs one unary call: `body` is the request message's bytes, `heightHeader` the request's
 * x-cosmos-block-height ('' when absent). Never throws: a failure is a status.
 */
export type Invoker = (route: Route, body: Uint8Array, heightHeader: string, options: { readonly metadata: Metadata; readonly signal?: AbortSignal }) => Promise<InvokeResult>;

/**
 * The call on this thread: decode the request, resolve the height (cosmos-sdk's
 * createQueryContext rules, so that an error answer carries the height too), run the handler,
 * encode the response. A handler's failure that is neither a gRPC status nor an SDK error is
 * logged at debug level.
 */
export function localInvoker(router: QueryRouter, log?: Logger): Invoker {
  return async (route, body, hv, options) => {
    let height: bigint | undefined;
    try {
      const req = decodeRequest(route.desc.input, body);
      height = router.resolveHeight(hv === '' ? undefined : parseHeightHeader(hv));
      const { response } = await router.callAt(route, req, height, options);
      return { ok: true, bytes: toBinary(route.desc.output, response), height };
    } catch (e) {
      const status = toStatus(e);
      if (status.code === GrpcCode.Unknown && !(e instanceof AbciError)) log?.debug('gRPC handler failed', { method: route.path, err: status.message });
      return { ok: false, status, height };
    }
  };
}

/** GrpcServerOptions from app.toml's `[grpc]` section. */
export function grpcServerOptions(cfg: GrpcConfig, router: QueryRouter, logger?: Logger): GrpcServerOptions {
  return {
    address: cfg.address,
    router,
    maxRecvMsgSize: cfg.maxRecvMsgSize,
    maxSendMsgSize: cfg.maxSendMsgSize,
    maxOpenConnections: cfg.maxOpenConnections,
    handshakeTimeoutMs: cfg.handshakeTimeout,
    idleTimeoutMs: cfg.idleTimeout,
    maxConcurrentStreams: cfg.maxConcurrentStreams,
    maxRecvBufferBytes: cfg.maxRecvBufferBytes,
    logger,
  };
}

/** Request headers that are transport, not metadata (grpc-go internal/transport isReservedHeader). */
const RESERVED = new Set(['content-type', 'te', 'grpc-timeout', 'grpc-encoding', 'grpc-accept-encoding', 'grpc-message', 'grpc-status', 'grpc-message-type', 'grpc-status-details-bin']);

export class GrpcServer {
  private readonly router: QueryRouter;
  private readonly maxRecv: number;
  private readonly maxSend: number;
  private readonly reflection: boolean;
  private readonly log: Logger | undefined;
  private h2: H2Server | null = null;
  private pool: { version: number; pool: DescriptorPool } | null = null;
  private bound: AddressInfo | null = null;
  private closing: Promise<void> | null = null;
  private readonly maxBuffered: number;
  /** Bytes of unfinished request messages held by all streams. */
  private buffered = 0;
  private dropped = 0;
  private lastDropLog = 0;
  private readonly invoke: Invoker;

  constructor(private readonly opts: GrpcServerOptions) {
    this.router = opts.router;
    this.invoke = opts.invoke ?? localInvoker(opts.router, opts.logger);
    this.maxRecv = opts.maxRecvMsgSize ?? DEFAULT_MAX_RECV_MSG_SIZE;
    this.maxSend = opts.maxSendMsgSize ?? DEFAULT_MAX_SEND_MSG_SIZE;
    this.reflection = opts.reflection ?? true;
    this.log = opts.logger;
    this.maxBuffered = opts.maxRecvBufferBytes ?? DEFAULT_MAX_RECV_BUFFER_BYTES;
  }

  /** Open connections right now. */
  get connections(): number {
    return this.h2?.connections.size ?? 0;
  }

  /** Bytes of unfinished request messages held across all streams right now. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /** The bound port (the real one when the address asked for port 0). */
  get port(): number {
    return this.bound?.port ?? 0;
  }

  get host(): string {
    return this.bound?.address ?? '';
  }

  async start(): Promise<void> {
    if (this.h2) throw new Error('gRPC server: already started');
    const addr = parseListenAddr(this.opts.address, 'grpc.address');
    const o = this.opts;
    const h2 = new H2Server({
      maxConcurrentStreams: o.maxConcurrentStreams ?? DEFAULT_MAX_CONCURRENT_STREAMS,
      streamWindow: STREAM_WINDOW_BYTES,
      connectionWindow: SESSION_WINDOW_BYTES,
      // Past the cap net.Server closes a new socket at once: its descriptor is given back before
      // any HTTP/2 state exists for it.
      maxConnections: o.maxOpenConnections ?? DEFAULT_MAX_OPEN_CONNECTIONS,
      handshakeTimeoutMs: o.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
      idleTimeoutMs: o.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      graceMs: o.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS,
      onStream: (stream, headers) => this.onStream(stream, headers),
      onConnectionError: (msg) => this.log?.debug('gRPC connection error', { err: msg }),
      onDrop: () => this.onDrop(),
      onIdleClose: () => this.log?.debug('gRPC connection closed: idle', { ms: o.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS }),
      onHandshakeTimeout: () => this.log?.debug('gRPC connection closed: no HTTP/2 preface within handshake-timeout', { ms: o.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS }),
    });
    try {
      this.bound = await h2.listen(addr.host, addr.port);
    } catch (e) {
      throw new Error(`gRPC server: cannot listen on ${addr.host}:${addr.port}: ${(e as Error).message}`);
    }
    this.h2 = h2;
    this.log?.info('gRPC server listening', { addr: `${this.bound.address}:${this.bound.port}` });
  }

  /** GracefulStop: no new connections, GOAWAY on open ones, in-flight calls finish; then cut. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const h2 = this.h2;
      if (!h2) return;
      await h2.close();
      this.h2 = null;
    })();
    return this.closing;
  }

  private onDrop(): void {
    this.dropped++;
    const now = Date.now();
    if (now - this.lastDropLog < 10_000) return;
    this.lastDropLog = now;
    this.log?.warn('gRPC connection refused: max-open-connections reached', { max: this.opts.maxOpenConnections ?? DEFAULT_MAX_OPEN_CONNECTIONS, refused_total: this.dropped });
  }

  /**
   * Accounts `n` more buffered request bytes (negative: released). False when taking them would
   * go past max-recv-buffer-bytes; nothing is accounted then.
   */
  private reserve(n: number): boolean {
    if (n > 0 && this.buffered + n > this.maxBuffered) return false;
    this.buffered += n;
    return true;
  }

  private descriptorPool(): DescriptorPool {
    const v = this.router.version;
    if (!this.pool || this.pool.version !== v) {
      const services = this.router.serviceDescs().map((s) => s.typeName);
      this.pool = { version: v, pool: new DescriptorPool(this.router.files(), services, this.router.names) };
    }
    return this.pool.pool;
  }

  // --------------------------------------------------------------------------------------------

  private onStream(stream: H2Stream, headers: IncomingHeaders): void {
    const ct = header(headers, 'content-type');
    const sub = contentSubtype(ct);
    if (sub === null) {
      this.early(stream, 415, 'application/grpc', { code: GrpcCode.InvalidArgument, message: `invalid gRPC request content-type ${JSON.stringify(ct)}` });
      return;
    }
    const ctOut = sub === '' ? 'application/grpc' : `application/grpc+${sub}`;
    const method = header(headers, ':method');
    if (method !== 'POST') {
      this.early(stream, 405, ctOut, { code: GrpcCode.Internal, message: `invalid gRPC request method ${JSON.stringify(method)}, which should be POST` });
      return;
    }
    let timeoutMs: number | null = null;
    const tm = header(headers, 'grpc-timeout');
    if (tm !== '') {
      timeoutMs = parseGrpcTimeout(tm);
      if (timeoutMs === null) {
        this.early(stream, 400, ctOut, { code: GrpcCode.Internal, message: `malformed grpc-timeout: ${JSON.stringify(tm)}` });
        return;
      }
    }
    if (sub !== '' && sub !== 'proto') {
      // grpc-go encoding.GetCodec: only the proto codec is registered.
      this.trailersOnly(stream, ctOut, { code: GrpcCode.Internal, message: `grpc: no codec registered for content-subtype ${sub}` });
      return;
    }
    const path = header(headers, ':path');
    const refl = this.reflection ? REFLECTION_PATHS.get(path) : undefined;
    if (refl) {
      this.serveReflection(stream, headers, refl, ctOut);
      return;
    }
    const resolved = this.router.resolve(path);
    if ('error' in resolved) {
      this.trailersOnly(stream, ctOut, resolved.error);
      return;
    }
    this.serveUnary(stream, headers, resolved.route, ctOut, timeoutMs);
  }

  private serveUnary(stream: H2Stream, headers: IncomingHeaders, route: Route, ctOut: string, timeoutMs: number | null): void {
    const call = new UnaryCall(stream, ctOut, (st, extra) => this.trailersOnly(stream, ctOut, st, extra));
    if (timeoutMs !== null) call.deadline(timeoutMs);
    // grpc-go processUnaryRPC reads one message and runs the handler at once, without waiting for
    // the client to half-close; anything sent after that message is read and dropped.
    const encoding = header(headers, 'grpc-encoding');
    const reader = new FrameReader(this.maxRecv);
    const release = this.holder(reader);
    stream.onclose = () => {
      call.cancel();
      release();
    };
    stream.ondata = (chunk) => {
      if (call.finished) return;
      try {
        const frames = this.pushHeld(reader, chunk);
        if (frames.length === 0) return;
        const body = decompress(frames[0]!, encoding, this.maxRecv);
        stream.ondata = stream.onend = null;
        release();
        stream.start();
        void this.runUnary(call, headers, route, body);
      } catch (e) {
        release();
        call.fail(toStatus(e)); // trailers-only, then the reset while the client still sends
      }
    };
    stream.onend = () => {
      if (call.finished) return;
      const partial = reader.partial;
      release();
      if (partial) call.fail({ code: GrpcCode.Internal, message: 'grpc: unexpected EOF in the middle of a request message' });
      else call.fail({ code: GrpcCode.Internal, message: 'grpc: the request has no message' });
    };
  }

  /**
   * Feeds a chunk to a stream's reader with the server-wide accounting: the bytes the reader
   * holds after the push count against max-recv-buffer-bytes; past it, ResourceExhausted.
   */
  private pushHeld(reader: FrameReader, chunk: Buffer): ReturnType<FrameReader['push']> {
    const before = reader.held;
    if (!this.reserve(chunk.length)) {
      throw statusError(GrpcCode.ResourceExhausted, `grpc: server is holding too many unfinished request bytes (max-recv-buffer-bytes ${this.maxBuffered})`);
    }
    try {
      return reader.push(chunk);
    } finally {
      // Only what stays buffered counts: completed frames have left the reader.
      this.buffered += reader.held - (before + chunk.length);
    }
  }

  /** A release function for a reader's accounted bytes: drops them and its buffer, once. */
  private holder(reader: FrameReader): () => void {
    return () => {
      this.reserve(-reader.held);
      reader.clear();
    };
  }

  private async runUnary(call: UnaryCall, headers: IncomingHeaders, route: Route, body: Buffer): Promise<void> {
    // The options reach the call only through a LazySignal (CallOptionsOf): nothing the router
    // is handed leads back to the stream (see LazySignal).
    const r = await this.invoke(route, body, header(headers, BLOCK_HEIGHT_HEADER), new CallOptionsOf(headers, call.lazy));
    call.handlerDone();
    if (call.finished) return;
    if (!r.ok) {
      call.fail(r.status, heightHeaders(r.height));
      return;
    }
    if (r.bytes.length > this.maxSend) {
      call.fail({ code: GrpcCode.ResourceExhausted, message: `grpc: trying to send message larger than max (${r.bytes.length} vs. ${this.maxSend})` }, heightHeaders(r.height));
      return;
    }
    call.succeed(frame(r.bytes), heightHeaders(r.height));
  }

  private serveReflection(stream: H2Stream, headers: IncomingHeaders, version: ReflectionVersion, ctOut: string): void {
    const pool = this.descriptorPool();
    const sent = new Set<string>();
    const encoding = header(headers, 'grpc-encoding');
    const reader = new FrameReader(this.maxRecv);
    let done = false;
    /** Ends the call with `st`, then resets the stream if the client is still sending (an error mid-stream). */
    const end = (st: Status) => {
      if (done) return;
      done = true;
      stream.ondata = stream.onend = null;
      if (!stream.headersSent) this.trailersOnly(stream, ctOut, st);
      else stream.end(statusHeaders(st));
      resetIfOpen(stream);
    };
    const release = this.holder(reader);
    stream.onclose = () => {
      done = true;
      release();
    };
    stream.ondata = (chunk) => {
      if (done) return;
      try {
        for (const f of this.pushHeld(reader, chunk)) {
          const data = decompress(f, encoding, this.maxRecv);
          let req;
          try {
            req = fromBinary(version.request, data);
          } catch (e) {
            throw statusError(GrpcCode.Internal, `grpc: error unmarshalling request: ${(e as Error).message}`);
          }
          const res = answerReflection(pool, version, req, sent);
          if (stream.closed) return;
          if (!stream.headersSent) stream.respond({ ':status': 200, 'content-type': ctOut, 'grpc-accept-encoding': ACCEPT_ENCODING });
          stream.write(frame(toBinary(version.response, res as never)));
        }
      } catch (e) {
        release();
        end(toStatus(e));
      }
    };
    stream.onend = () => {
      release();
      end({ code: GrpcCode.OK, message: '' });
    };
  }

  /**
   * An answer before the call is accepted (grpc-go earlyAbortStream): an HTTP status and a gRPC
   * status, then RST_STREAM NO_ERROR if the client is still sending.
   */
  private early(stream: H2Stream, httpStatus: number, ct: string, st: Status): void {
    stream.respond({ ':status': httpStatus, 'content-type': ct, ...statusHeaders(st) }, true);
    resetIfOpen(stream);
  }

  /**
   * A trailers-only response (PROTOCOL-HTTP2.md): HTTP 200, the status in the only HEADERS frame,
   * then RST_STREAM NO_ERROR if the client is still sending (grpc-go WriteStatus).
   */
  private trailersOnly(stream: H2Stream, ct: string, st: Status, extra?: OutHeaders): void {
    stream.ondata = stream.onend = null;
    stream.respond({ ':status': 200, 'content-type': ct, ...extra, ...statusHeaders(st) }, true);
    resetIfOpen(stream);
  }
}

/**
 * After a status that ends the call early: the client may still be sending (an oversized
 * message); reset the stream so it stops and nothing more is read (grpc-go finishStream sends
 * RST_STREAM when the client has not half-closed, after the trailers:
 * grpc/grpc-go:internal/transport/http2_server.go). The transport sends the RST_STREAM only once
 * the frames queued before it, the status among them, are out.
 */
function resetIfOpen(stream: H2Stream): void {
  if (!stream.closed && !stream.remoteEnded) stream.reset(H2Error.NO_ERROR);
}

/**
 * A call's abort signal, made when a handler first reads it (most never do: an AbortController
 * costs more than a small query's whole answer on Node 20); an abort before that is kept for it.
 *
 * It holds no reference to the stream or the call, and the options handed to the router reach
 * the call only through it. Measured on the node's main thread (open-loop Balance/Params probe,
 * --trace-gc-nvp): when the options object reached the UnaryCall (a getter closing over it, or a
 * plain property), ~2.6 KB per request of the request's graph (Http2Stream, headers, listeners,
 * handler context) survived young-generation collections and was promoted, ~13 % of what a
 * request allocates; every scavenge then copied and promoted megabytes (10-70 ms pauses on a
 * loaded machine, one every ~0.85 s at 1,000 req/s), the main source of the RPC thread's tail
 * latency. Without that path: ~0.35 KB promoted per request.
 */
export class LazySignal {
  private ac: AbortController | null = null;
  private aborted: { reason: unknown } | null = null;

  get signal(): AbortSignal {
    if (this.ac === null) {
      this.ac = new AbortController();
      if (this.aborted !== null) this.ac.abort(this.aborted.reason);
    }
    return this.ac.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted !== null) return;
    this.aborted = { reason };
    this.ac?.abort(reason);
  }
}

/** The router's CallOptions of one call: metadata from the request's headers, and the signal through its LazySignal. */
class CallOptionsOf {
  private md: Metadata | null = null;

  constructor(
    private readonly headers: IncomingHeaders,
    private readonly lazy: LazySignal,
  ) {}

  /** The request's metadata, made when first read (most handlers never read it). */
  get metadata(): Metadata {
    return (this.md ??= toMetadata(this.headers));
  }

  get signal(): AbortSignal {
    return this.lazy.signal;
  }
}

/** One unary call's life: answered once (success, failure, deadline), or cancelled by the client. */
class UnaryCall {
  finished = false;
  /** The handler's signal: aborted on failure, deadline or client cancel. */
  readonly lazy = new LazySignal();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly stream: H2Stream,
    private readonly ctOut: string,
    private readonly answerError: (st: Status, extra?: OutHeaders) => void,
  ) {}

  private abort(reason: unknown): void {
    this.lazy.abort(reason);
  }

  deadline(ms: number): void {
    this.timer = setTimeout(() => this.fail({ code: GrpcCode.DeadlineExceeded, message: 'context deadline exceeded' }), ms);
  }

  /** The handler has returned: the stream no longer holds a place under the stream limit for it. */
  handlerDone(): void {
    this.stream.done();
  }

  /** The client reset the stream or the connection went away: nothing to answer. */
  cancel(): void {
    if (this.finish()) this.abort(statusError(GrpcCode.Canceled, 'context canceled'));
  }

  fail(st: Status, extra?: OutHeaders): void {
    if (!this.finish()) return;
    this.abort(statusError(st.code, st.message));
    this.answerError(st, extra);
  }

  /** Headers, the one response message, then trailers `grpc-status: 0`: one write. */
  succeed(message: Buffer, extra?: OutHeaders): void {
    if (!this.finish()) return;
    const s = this.stream;
    if (s.closed) return;
    s.respond(extra === undefined ? { ':status': 200, 'content-type': this.ctOut, 'grpc-accept-encoding': ACCEPT_ENCODING } : { ':status': 200, 'content-type': this.ctOut, 'grpc-accept-encoding': ACCEPT_ENCODING, ...extra });
    s.write(message);
    s.end(OK_TRAILERS);
  }

  /** Marks the call answered; false when it already was. */
  private finish(): boolean {
    if (this.finished) return false;
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    return true;
  }
}

const OK_TRAILERS: OutHeaders = { 'grpc-status': '0' };

function heightHeaders(h: bigint | undefined): OutHeaders | undefined {
  return h === undefined ? undefined : { [BLOCK_HEIGHT_HEADER]: h.toString() };
}

function statusHeaders(st: Status): OutHeaders {
  const h: OutHeaders = { 'grpc-status': String(st.code) };
  if (st.message !== '') h['grpc-message'] = encodeGrpcMessage(st.message);
  return h;
}

function header(headers: IncomingHeaders, name: string): string {
  const v = headers[name];
  if (v === undefined) return '';
  return Array.isArray(v) ? v.join(',') : String(v);
}

/**
 * grpcutil.ContentSubtype: `application/grpc` alone (''), or followed by `+subtype` or
 * `;params` (subtype '' for the latter); anything else is not gRPC (null). Case-insensitive.
 */
export function contentSubtype(ct: string): string | null {
  const base = 'application/grpc';
  const v = ct.toLowerCase();
  if (!v.startsWith(base)) return null;
  if (v.length === base.length) return '';
  const c = v[base.length];
  if (c === ';') return '';
  if (c === '+') return v.slice(base.length + 1).split(';', 1)[0]!.trim();
  return null;
}

/** Request metadata: every header but pseudo-headers and the transport's own (lower-case keys). */
function toMetadata(headers: IncomingHeaders): Metadata {
  const md = new Map<string, string[]>();
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || k.startsWith(':') || RESERVED.has(k)) continue;
    md.set(k, Array.isArray(v) ? v : [String(v)]);
  }
  return md;
}
