/**
 * A thin adapter over uWebSockets.js (the Truffle build, the one that loads on Debian 12's glibc:
 * npm @trufflesuite/uws-js-unofficial). Every server of the node goes through here, so swapping the
 * transport stays a one-file change.
 *
 * Hygiene, as uWS requires (STYLE.md item 10): an abort handler on every response not answered at
 * once; request headers read synchronously; writes after an await wrapped in cork(); no write
 * after an abort.
 */
import { createRequire } from 'node:module';
import type * as UWS from '@trufflesuite/uws-js-unofficial';

const require = createRequire(import.meta.url);
export const uws = require('@trufflesuite/uws-js-unofficial') as typeof UWS;

export type TemplatedApp = UWS.TemplatedApp;
export type HttpResponse = UWS.HttpResponse;
export type HttpRequest = UWS.HttpRequest;
export type WebSocket<UserData> = UWS.WebSocket<UserData>;
export type WebSocketBehavior<UserData> = UWS.WebSocketBehavior<UserData>;
export type UpgradeContext = UWS.us_socket_context_t;

/** `WebSocket.send()` return codes (uWS index.d.ts): 1 sent, 0 buffered (back-pressure), 2 dropped. */
export const SEND_STATUS = { BACKPRESSURE: 0, SUCCESS: 1, DROPPED: 2 } as const;

/** Per-request state shared by the handler and its abort callback. */
export interface ResponseState {
  aborted: boolean;
  /** Set once a response has been written; later writes are ignored. */
  done?: boolean;
  /**
   * What the request's Connection header means for the connection after the answer
   * (connectionClose(); CONN_KEEP when absent). Set by the handler while the request is readable.
   */
  connClose?: number;
  /** Reading is paused until the answer (pauseUntilAnswer); send() resumes it. */
  paused?: boolean;
}

/**
 * Pauses reading the request's connection until its answer is written: send() resumes it inside
 * the answer's cork. Not earlier: uWS 20.30's resume() arms the socket's 10 s HTTP timeout
 * (uNetworking/uWebSockets:src/HttpResponse.h resume → timeout(HTTP_TIMEOUT_S)), which a request
 * still being computed then meets 8–12 s later: the connection was closed without an answer
 * (a bare uWS handler shows it; a request never paused has no timeout while it is pending).
 * While paused, uWS reads nothing more from the client (no pipelined request can close the
 * connection meanwhile) and notices its leaving only when the answer is written.
 */
export function pauseUntilAnswer(res: HttpResponse, state: ResponseState): void {
  res.pause();
  state.paused = true;
}

/** The connection stays open after the answer (no `close` asked, nothing uWS closes on). */
export const CONN_KEEP = 0;
/**
 * uWS 20.30 closes the connection after this answer on its own and does not say so: it does for
 * any request whose first Connection header value is 5 bytes long (`close`, but also `fooba`)
 * and then, as the client "already sent it", never writes `Connection: close`
 * (uNetworking/uWebSockets:src/HttpContext.h, src/HttpResponse.h internalEnd). A client that
 * reuses the connection then meets a closed socket; we write the header ourselves.
 */
export const CONN_CLOSED_BY_UWS = 1;
/**
 * The request carries the `close` token among other values (`close, te`): net/http closes after
 * the answer and says so (server.go, httpguts.HeaderValuesContainsToken); uWS does not notice, so
 * the answer goes out as a closing one.
 */
export const CONN_CLOSE_ASKED = 2;

/**
 * uWS 20.30 drops the connection right after our handler returns, with whatever the handler wrote
 * still in its cork buffer (a Content-Length it cannot parse: uwsRefusesContentLength). Only an
 * answer written synchronously, and past that buffer, gets out: writeResponse pads the body.
 */
export const CONN_DROPPED_BY_UWS = 3;

/**
 * uWS 20.30 reads Content-Length as 1–9 decimal digits only, after the request handler ran, and
 * on anything else closes the socket without uncorking it (uNetworking/uWebSockets:
 * src/HttpParser.h toUnsignedInteger, src/HttpContext.h FULLPTR): the answer never leaves.
 */
export function uwsRefusesContentLength(v: string): boolean {
  if (v === '') return false;
  if (v.length > 9) return true;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return true;
  }
  return false;
}

/**
 * A write larger than what uWS's 16 KiB cork buffer has left is written at once, uncorked
 * (uNetworking/uWebSockets:src/AsyncSocket.h write, LoopData.h CORK_BUFFER_SIZE): a body of this
 * size leaves the cork, and the answer then closes the connection itself before uWS drops it.
 */
const CORK_FLUSH_BYTES = 16 * 1024 + 1;

/**
 * The connection's fate from the request's Connection header: `first` is the first value (the
 * one uWS looks at, HttpRequest.getHeader), `anyClose` whether any value holds the close token
 * (RFC 9110 §7.6.1: a comma-separated list, case-insensitive).
 */
export function connectionClose(first: string, anyClose = hasCloseToken(first)): number {
  if (first.length === 5) return CONN_CLOSED_BY_UWS;
  return anyClose ? CONN_CLOSE_ASKED : CONN_KEEP;
}

/** Whether a Connection header value lists the `close` option (RFC 9110 §7.6.1, RFC 9112 §9.6). */
export function hasCloseToken(v: string): boolean {
  if (v.length < 5) return false;
  for (const part of v.split(',')) if (part.trim().toLowerCase() === 'close') return true;
  return false;
}

export interface ListenAddr {
  host: string;
  port: number;
}

/** Parses `tcp://127.0.0.1:26657`, `127.0.0.1:9090`, `:26660` or `[::1]:8545`. */
export function parseListenAddr(addr: string, field = 'address'): ListenAddr {
  const rest = addr.replace(/^(tcp|http|ws):\/\//, '');
  const m = /^(\[[^\]]*\]|[^:]*):(\d+)$/.exec(rest);
  if (!m) throw new Error(`${field}: invalid listen address "${addr}" (want host:port)`);
  const port = Number(m[2]);
  if (port > 65535) throw new Error(`${field}: invalid port in "${addr}"`);
  let host = m[1]!.replace(/^\[|\]$/g, '');
  if (host === '') host = '127.0.0.1';
  return { host, port };
}

export interface Listening {
  host: string;
  port: number;
  close(): void;
}

/** Starts listening; resolves with the bound port (useful with port 0), rejects when the bind fails. */
export function listen(app: TemplatedApp, addr: ListenAddr, what: string): Promise<Listening> {
  return new Promise((resolve, reject) => {
    app.listen(addr.host, addr.port, (socket) => {
      if (!socket) {
        reject(new Error(`${what}: cannot listen on ${addr.host}:${addr.port} (address in use or not permitted)`));
        return;
      }
      const port = uws.us_socket_local_port(socket);
      let closed = false;
      resolve({
        host: addr.host,
        port,
        close() {
          if (closed) return;
          closed = true;
          uws.us_listen_socket_close(socket);
          // Open keep-alive connections would hold the process; close() ends them all.
          (app as unknown as { close?: () => void }).close?.();
        },
      });
    });
  });
}

export interface SendOptions {
  /** Close the connection after the response (`Connection: close`). */
  close?: boolean;
  /** A HEAD request: headers and Content-Length only (uWS would otherwise send the body). */
  head?: boolean;
  /** No body and no Content-Length (e.g. 204); `close` is only announced (see writeResponse). */
  noBody?: boolean;
}

export type Headers = Record<string, string> | ReadonlyArray<readonly [string, string]>;

/**
 * Writes a complete response; safe to call after an await (corks), after an abort and after an
 * earlier response (no-op in both cases).
 *
 * Back-pressure: the body goes out with tryEnd, which hands the kernel what it takes now and
 * leaves the rest with us (uWS's end() would copy it into an unbounded buffer of its own). What
 * is left is written from onWritable as the client reads. Meanwhile the response is pending, so
 * uWS closes the connection if a pipelined request follows (it refuses async pipelining): a
 * client that sends without reading holds at most one answer here, plus the kernel's buffers.
 */
export function send(
  res: HttpResponse,
  state: ResponseState,
  status: string,
  headers: Headers,
  body: string | Uint8Array,
  opts: SendOptions = NO_OPTIONS,
  corked = false,
): void {
  if (state.aborted || state.done) return;
  state.done = true;
  // Inside uWS's own handler the socket is already corked; another cork is a wasted native call
  // (and the closure it needs a wasted allocation).
  if (corked) writeResponse(res, state, status, headers, body, opts);
  else res.cork(() => writeResponse(res, state, status, headers, body, opts));
}

const NO_OPTIONS: SendOptions = Object.freeze({});

/** Bodies up to this many characters go out with sendJson's end() (at most 3 bytes each in UTF-8). */
const SEND_JSON_MAX_CHARS = 4096;

/**
 * The fast path of send() for a `200 OK` JSON answer on a connection that stays open: the same
 * bytes (the status line and Content-Type in one writeStatus, STATUS_200_JSON; end() writes the
 * Content-Length tryEnd would), in one cork with two native calls. Returns false, having written
 * nothing, when the answer needs send()'s general path: an empty or large body (large ones go out
 * with back-pressure), a connection that closes after it, a paused request.
 */
export function sendJson(res: HttpResponse, state: ResponseState, body: string, corked: boolean): boolean {
  if (body.length === 0 || body.length > SEND_JSON_MAX_CHARS || state.paused === true || (state.connClose !== undefined && state.connClose !== CONN_KEEP)) return false;
  if (state.aborted || state.done) return true;
  state.done = true;
  if (corked) res.writeStatus(STATUS_200_JSON).end(body);
  else res.cork(() => res.writeStatus(STATUS_200_JSON).end(body));
  return true;
}

/**
 * The status line's text and the Content-Type header in one writeStatus: uWS writes
 * `HTTP/1.1 <status>\r\n`, so this is byte for byte what writeHeader('Content-Type', …) after the
 * default status gives, in one native call instead of two. As bytes: uWS takes a string through a
 * UTF-8 copy per call.
 */
const STATUS_200_JSON = Buffer.from('200 OK\r\nContent-Type: application/json');

function writeResponse(res: HttpResponse, state: ResponseState, status: string, headers: Headers, body: string | Uint8Array, opts: SendOptions): void {
  if (state.paused) {
    state.paused = false;
    res.resume();
  }
  res.writeStatus(status);
  if (Array.isArray(headers)) {
    const list = headers as ReadonlyArray<readonly [string, string]>;
    for (let i = 0; i < list.length; i++) res.writeHeader(list[i]![0], list[i]![1]);
  } else for (const k in headers) res.writeHeader(k, (headers as Record<string, string>)[k]!);
  const cc = state.connClose ?? CONN_KEEP;
  const close = opts.close === true || cc === CONN_CLOSE_ASKED || cc === CONN_DROPPED_BY_UWS;
  if (cc === CONN_DROPPED_BY_UWS && !opts.noBody && !opts.head) {
    // Padded with trailing spaces (still the same text or JSON) so that it leaves uWS's cork
    // buffer and goes out before uWS drops the connection (see CONN_DROPPED_BY_UWS). A bodiless
    // answer (HEAD) cannot be: it is lost with the connection.
    const size = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    if (size < CORK_FLUSH_BYTES) body = Buffer.concat([typeof body === 'string' ? Buffer.from(body) : body, Buffer.alloc(CORK_FLUSH_BYTES - size, 0x20)]);
  }
  // uWS closes after this answer by itself and would not announce it (see CONN_CLOSED_BY_UWS).
  // Its end(…, true) then writes no header either, so this one is never doubled.
  if (cc === CONN_CLOSED_BY_UWS) res.writeHeader('Connection', 'close');
  // No argument at all: uWS 20.30 reads an explicit `undefined` length as 2^63 and writes that
  // as Content-Length, which breaks the connection for the next request (a 204 carries none).
  if (opts.noBody || opts.head) {
    // A HEAD answer names its body's length itself: uWS 20.30's endWithoutBody(length) leaves
    // the response open (the next request on the connection was closed unanswered, found by the
    // fuzzer), while endWithoutBody() with the header written by hand completes it.
    if (!opts.noBody) res.writeHeader('Content-Length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength));
    // endWithoutBody() cannot also close (its only closing form takes the Content-Length that
    // leaves the response open) and the response object is void after it (close() throws). So
    // a bodiless answer that must close says so and leaves the closing to the client, which
    // MUST stop there (RFC 9112 §9.6), or to uWS's keep-alive timeout (10 s) — unless uWS
    // closes it anyway (CONN_CLOSED_BY_UWS).
    if (close && cc !== CONN_CLOSED_BY_UWS) res.writeHeader('Connection', 'close');
    res.endWithoutBody();
  }
  // A closing answer is a short error: uWS's end() writes `Connection: close` and closes after it.
  else if (close) res.end(body, true);
  else {
    const size = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    const start = res.getWriteOffset();
    if (!res.tryEnd(body, size)[1]) streamRest(res, state, typeof body === 'string' ? Buffer.from(body) : body, size, start);
  }
}

/**
 * The part of a body the kernel did not take yet, written as the client reads (uWS's
 * VideoStreamer pattern). The response is pending until then, so it needs an abort handler; the
 * caller's has nothing more to do once the answer is written, so ours replaces it.
 */
function streamRest(res: HttpResponse, state: ResponseState, body: Uint8Array, size: number, start: number): void {
  unreadResponseBytes += size;
  let counted = true;
  const uncount = () => {
    if (counted) {
      counted = false;
      unreadResponseBytes -= size;
    }
  };
  res.onAborted(() => {
    state.aborted = true;
    uncount();
  });
  res.onWritable((offset) => {
    if (state.aborted) return true;
    const [ok, done] = res.tryEnd(body.subarray(offset - start), size);
    if (done) uncount();
    return ok;
  });
}

/** Bytes of HTTP responses waiting for their clients to read them (all servers; for metrics and tests). */
export let unreadResponseBytes = 0;

/**
 * Content-Length as net/http reads it (transfer.go parseContentLength): absent → undefined;
 * decimal digits only, else null (Go: `bad Content-Length` → 400). Values past 2^53 are refused
 * too (they exceed any body limit anyway).
 */
export function parseContentLength(v: string): number | null | undefined {
  if (v === '') return undefined;
  if (v.length > 15) return /^\d+$/.test(v) ? Number.MAX_SAFE_INTEGER : null;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return null;
  }
  return Number(v);
}

/**
 * Wraps a uWS HTTP handler so that nothing it throws leaves uWS's callback (an exception there
 * ends the process): the error is logged and, if the request is still unanswered, answered with
 * `onError` (a protocol-shaped 500) or a plain one.
 */
export function guardHttp(
  what: string,
  log: { error(msg: string, fields?: Record<string, unknown>): void } | undefined,
  handler: (res: HttpResponse, req: HttpRequest) => void,
): (res: HttpResponse, req: HttpRequest) => void {
  return (res, req) => {
    try {
      handler(res, req);
    } catch (e) {
      log?.error(`${what}: request handler failed`, { err: e as Error });
      try {
        res.cork(() => res.writeStatus('500 Internal Server Error').writeHeader('Content-Type', 'text/plain; charset=utf-8').end('500 Internal Server Error', true));
      } catch {
        // Already answered or aborted: uWS refuses the write, and there is nothing more to do.
      }
    }
  };
}

/** The client's IP address as text (uWS gives no port). */
export function remoteAddress(x: HttpResponse | WebSocket<unknown>): string {
  return Buffer.from(x.getRemoteAddressAsText()).toString();
}

/**
 * Reads a request body, copying each chunk (uWS neuters the ArrayBuffer when the callback
 * returns) into a buffer pre-sized from Content-Length. Calls `done(body, res, state)` once, or
 * `done(null, res, state)` as soon as more than `maxBytes` arrive. Requires an abort handler on
 * `res`. `done` and `onError` get the response and its state, so that a server can pass the same
 * two functions for every request (no closures of its own per request).
 *
 * `view`: a body that arrives whole in one chunk (the common small request) is handed over
 * without a copy, as a view over uWS's chunk that is valid only until `done` returns: a `done`
 * that keeps the body for later copies it (Buffer.from(body)). The copy buffer is then never
 * allocated.
 */
export function readBody<S extends ResponseState>(
  res: HttpResponse,
  state: S,
  maxBytes: number,
  contentLength: number | undefined,
  done: (body: Buffer | null, res: HttpResponse, state: S) => void,
  onError: (e: unknown, res: HttpResponse, state: S) => void = reportError,
  view = false,
): void {
  // An announced empty body is complete at once. uWS 20.30 sends the empty last chunk of a
  // `Content-Length: 0` request only when the request's head arrived in one read: a head split
  // over two TCP segments got no chunk at all, so the request hung unanswered until uWS's idle
  // timeout closed the connection (found by the fuzzer's frame.split mutation, ~1 run in 6).
  if (contentLength === 0) {
    call(done, Buffer.alloc(0), onError, res, state);
    return;
  }
  let buf: Buffer | null = null;
  let len = 0;
  let finished = false;
  res.onData((chunk, isLast) => {
    if (finished || state.aborted) return;
    const n = chunk.byteLength;
    if (len + n > maxBytes) {
      finished = true;
      call(done, null, onError, res, state);
      return;
    }
    if (view && isLast && len === 0) {
      finished = true;
      call(done, Buffer.from(chunk), onError, res, state);
      return;
    }
    if (buf === null) {
      // Pre-sized from a valid Content-Length only (a negative or NaN one threw here once).
      const presize = contentLength !== undefined && Number.isSafeInteger(contentLength) && contentLength >= 0 && contentLength <= maxBytes ? contentLength : 0;
      buf = Buffer.allocUnsafe(presize);
    }
    if (len + n > buf.length) {
      const grown = Buffer.allocUnsafe(Math.min(maxBytes, Math.max(len + n, buf.length * 2, 1024)));
      buf.copy(grown, 0, 0, len);
      buf = grown;
    }
    buf.set(new Uint8Array(chunk), len);
    len += n;
    if (isLast) {
      finished = true;
      call(done, buf.subarray(0, len), onError, res, state);
    }
  });
}

/** Runs a body callback inside uWS's data callback, where nothing may be thrown. */
function call<S>(done: (body: Buffer | null, res: HttpResponse, state: S) => void, body: Buffer | null, onError: (e: unknown, res: HttpResponse, state: S) => void, res: HttpResponse, state: S): void {
  try {
    done(body, res, state);
  } catch (e) {
    try {
      onError(e, res, state);
    } catch {
      /* nothing left to report to */
    }
  }
}

function reportError(e: unknown): void {
  process.emitWarning(`uWS body handler failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
}
