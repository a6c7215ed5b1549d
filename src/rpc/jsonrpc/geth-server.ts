/**
 * A JSON-RPC server in the geth dialect (geth.ts) on uWebSockets.js: HTTP POST (any path) and
 * websocket (an upgrade on any path), as geth serves both on one port
 * (ethereum/go-ethereum:rpc/http.go, rpc/websocket.go, node/rpcstack.go). It is the transport
 * the EVM's `eth_*` methods will be served on; a method table is all it needs.
 *
 * HTTP, as rpc/http.go ServeHTTP and validateRequest answer:
 * - `GET` with no body and no query: 200, empty (health checks);
 * - `PUT`/`DELETE`: 405 `method not allowed`;
 * - a Content-Length over the body limit (5 MiB): 413 `content length too large (N>LIMIT)`;
 * - a Content-Type other than application/json, application/json-rpc or application/jsonrequest
 *   (OPTIONS excepted): 415 `invalid content type, only application/json is supported`;
 * - a body that does not parse (or passes the limit while read): 200, -32700 `parse error`,
 *   `"id":null`; an empty body, or only notifications: 200 with no body.
 * Websocket: one JSON value per message (single or batch); a message that does not parse gets
 * -32700 with Go's syntax error text and the connection is closed, as geth's read loop ends.
 *
 * Private methods (`auth`): a body or frame that calls one needs `Authorization: Bearer <JWT>`
 * (geth's node/jwt_handler.go rules, checked by `auth.verify`). Over HTTP the request gets 401 with
 * geth's text and nothing in it runs; a websocket is authenticated once, at the upgrade (a bad
 * token there is 401, no token an unauthenticated connection), and a frame calling a private
 * method on an unauthenticated connection gets a JSON-RPC error per call, nothing run.
 */
import type { Logger } from '../../log.js';
import { loopSlice, type LoopSlice } from '../server/slice.js';
import { connectionClose, CONN_DROPPED_BY_UWS, listen, pauseUntilAnswer, sendJson, parseContentLength, uwsRefusesContentLength, parseListenAddr, readBody, remoteAddress, send, uws, type HttpRequest, type HttpResponse, type Listening, type ResponseState, type SendOptions, type Headers, type TemplatedApp } from '../server/uws.js';
import { StreamScope } from '../../evm/tracers/raw-json.js';
import { replyChunked } from './chunked-reply.js';
import type { RpcMetrics } from './dispatch.js';
import { GETH_CODES, GETH_NO_VALUE, GETH_TIMEOUT_MARGIN_MS, gethErrorEnvelope, GethJsonRpc, GethSyntaxError, gethTable, parseGethBody, parseGethValue, toMessage, type CallTimeLimit, type GethCallSite } from './geth.js';
import type { Route, RouteTable } from './methods.js';
import { UwsConnection, WS_MAX_QUEUED_REQUESTS, WS_MIN_PUSH_HIGH_WATER, WS_WRITE_WAIT_MS, type WsLimits, type WsUserData } from './ws.js';

/** A body read past the limit: geth's MaxBytesReader error, answered as any other read error. */
const READ_ERROR = new GethSyntaxError('');

/**
 * The header names every request reads, as bytes: uWS takes a name given as a string through a
 * UTF-8 copy (an allocation per call), one given as bytes as it is.
 */
const H_AUTHORIZATION = Buffer.from('authorization');
const H_CONNECTION = Buffer.from('connection');
const H_CONTENT_LENGTH = Buffer.from('content-length');
const H_CONTENT_TYPE = Buffer.from('content-type');

/** rpc/http.go defaultBodyLimit. */
export const GETH_HTTP_BODY_LIMIT = 5 * 1024 * 1024;
/** rpc/websocket.go wsDefaultReadLimit. */
export const GETH_WS_READ_LIMIT = 32 * 1024 * 1024;
/** rpc/websocket.go: pings every 30 s, pong within 30 s. */
const WS_IDLE_TIMEOUT_S = 60;
const ACCEPTED_CONTENT_TYPES = new Set(['application/json', 'application/json-rpc', 'application/jsonrequest']);
const JSON_HEADERS: ReadonlyArray<readonly [string, string]> = [['Content-Type', 'application/json']];
/** net/http http.Error. */
const TEXT_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Content-Type', 'text/plain; charset=utf-8'],
  ['X-Content-Type-Options', 'nosniff'],
];

export interface GethRpcServerOptions {
  /** `host:port` or `tcp://host:port`. */
  laddr: string;
  /** The methods (gethMethod), or a table built with gethTable. */
  methods: readonly Route[] | RouteTable;
  logger?: Logger;
  metrics?: RpcMetrics;
  bodyLimit?: number;
  wsReadLimit?: number;
  batchItemLimit?: number;
  batchResponseMaxSize?: number;
  slice?: LoopSlice;
  auth?: GethRpcAuth;
  /**
   * Which methods may stream their result (raw-json.ts StreamScope): a single HTTP request to one
   * of them gets a scope in its call context (RouteContext.stream). Default: every method; a
   * server whose tables say which methods stream (the EVM's: debug_*) spares the others the scope.
   */
  streams?: (method: string) => boolean;
  /**
   * The HTTP server's write timeout (`[json-rpc] http-timeout`), ms; 0 or absent: none. An HTTP
   * call still running GETH_TIMEOUT_MARGIN_MS before it is answered -32002 `request timed out`
   * (rpc/context.go ContextRequestTimeout). Websocket calls have no limit, as in geth.
   */
  httpTimeoutMs?: number;
}

/** Authentication of private methods. */
export interface GethRpcAuth {
  isPrivate(method: string): boolean;
  /** The Authorization header's value → null when it carries a valid token, else why not. */
  verify(authorization: string): string | null;
}

/**
 * Whether one message calls a method `isPrivate` says is private: every `method` member counts,
 * matched case-insensitively as toMessage does.
 */
function callsPrivate(m: unknown, isPrivate: (method: string) => boolean): boolean {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return false;
  for (const k in m as Record<string, unknown>) {
    const v = (m as Record<string, unknown>)[k];
    if (typeof v === 'string' && k.toLowerCase() === 'method' && isPrivate(v)) return true;
  }
  return false;
}

/** The `id` of a message (undefined for a notification). */
function idOf(m: unknown): unknown {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return null;
  let id: unknown;
  for (const k in m as Record<string, unknown>) if (k.toLowerCase() === 'id') id = (m as Record<string, unknown>)[k];
  return id;
}

/**
 * One HTTP request: the state its handlers share, and the call site and time limit of its calls
 * (one object per request, in place of a site, a limit and their closures).
 */
class Exchange implements ResponseState, GethCallSite, CallTimeLimit {
  aborted = false;
  done = false;
  connClose: number | undefined = undefined;
  paused = false;
  ac: AbortController | null = null;
  /** Set for a single request to a method that may stream (serveSingle). */
  stream: StreamScope | undefined = undefined;
  readonly transport = 'jsonrpc' as const;
  readonly ws = undefined;
  private remote: string | undefined = undefined;
  constructor(
    readonly res: HttpResponse,
    /** A HEAD request: every answer goes out without its body. */
    readonly head: boolean,
    /** The Authorization header (read while the request is in hand). */
    readonly authorization: string,
    /** The time limit of its calls, ms (0: none); at its end the request's signal is aborted. */
    readonly ms: number,
  ) {}
  get remoteAddr(): string {
    return (this.remote ??= this.aborted ? '' : remoteAddress(this.res));
  }
  get signal(): AbortSignal {
    this.ac ??= new AbortController();
    if (this.aborted) this.ac.abort();
    return this.ac.signal;
  }
  onTimeout(): void {
    this.ac ??= new AbortController();
    this.ac.abort();
  }
  /** uWS's abort callback (attachAbort). */
  aborts(): () => void {
    return () => {
      this.aborted = true;
      this.ac?.abort();
    };
  }
}

export class GethRpcServer {
  readonly rpc: GethJsonRpc;
  private readonly log: Logger | undefined;
  private readonly bodyLimit: number;
  private readonly wsReadLimit: number;
  private readonly slice: LoopSlice;
  private readonly wsLimits: WsLimits;
  private app: TemplatedApp | null = null;
  private listening: Listening | null = null;
  private readonly conns = new Set<UwsConnection>();
  private connSeq = 0;
  private readonly auth: GethRpcAuth | undefined;
  private readonly streams: ((method: string) => boolean) | undefined;
  /** Connections whose upgrade carried a valid token. */
  private readonly authed = new WeakSet<UwsConnection>();
  /** An HTTP call's time limit, ms (0: none). */
  private readonly callLimitMs: number;

  constructor(opts: GethRpcServerOptions) {
    this.log = opts.logger;
    const table = Array.isArray(opts.methods) ? gethTable(opts.methods as readonly Route[]) : (opts.methods as RouteTable);
    this.rpc = new GethJsonRpc(table, { logger: opts.logger, metrics: opts.metrics, batchItemLimit: opts.batchItemLimit, batchResponseMaxSize: opts.batchResponseMaxSize });
    this.bodyLimit = opts.bodyLimit ?? GETH_HTTP_BODY_LIMIT;
    this.wsReadLimit = opts.wsReadLimit ?? GETH_WS_READ_LIMIT;
    this.slice = opts.slice ?? loopSlice;
    this.wsLimits = {
      pushHighWaterBytes: WS_MIN_PUSH_HIGH_WATER,
      slowClientBytes: 4 * WS_MIN_PUSH_HIGH_WATER,
      slowClientMs: WS_WRITE_WAIT_MS,
      maxQueuedRequests: WS_MAX_QUEUED_REQUESTS,
      maxQueuedBytes: 4 * this.wsReadLimit,
    };
    this.laddr = opts.laddr;
    this.auth = opts.auth;
    this.streams = opts.streams;
    // Cosmos EVM gives its http.Server `http-timeout` as WriteTimeout unchanged (cosmos/evm:
    // server/json_rpc.go; 0: none), not through geth's CheckTimeouts.
    const t = opts.httpTimeoutMs ?? 0;
    this.callLimitMs = t > 0 ? Math.max(1, t - GETH_TIMEOUT_MARGIN_MS) : 0;
  }

  /**
   * Whether the messages call a private method this server serves (one it does not serve is
   * -32601 with or without a token: it does nothing).
   */
  /** Whether a body's messages call a private method this server serves. */
  private needsAuth(messages: readonly unknown[]): boolean {
    if (this.auth === undefined) return false;
    for (const m of messages) if (callsPrivate(m, this.privateServed)) return true;
    return false;
  }

  private readonly laddr: string;

  get port(): number {
    return this.listening?.port ?? 0;
  }

  async start(): Promise<void> {
    if (this.app) throw new Error('JSON-RPC: already started');
    const app = uws.App();
    this.app = app;
    app.ws<WsUserData>('/*', {
      maxPayloadLength: this.wsReadLimit,
      idleTimeout: WS_IDLE_TIMEOUT_S,
      sendPingsAutomatically: true,
      maxBackpressure: this.wsLimits.slowClientBytes,
      compression: uws.DISABLED,
      upgrade: (res, req, context) => {
        try {
          const key = req.getHeader('sec-websocket-key');
          const protocol = req.getHeader('sec-websocket-protocol');
          const extensions = req.getHeader('sec-websocket-extensions');
          const ip = remoteAddress(res);
          const authorization = this.auth ? req.getHeader('authorization') : '';
          const refused = authorization !== '' ? this.auth!.verify(authorization) : null;
          if (refused !== null) {
            res.cork(() => res.writeStatus('401 Unauthorized').writeHeader('Content-Type', 'text/plain; charset=utf-8').end(`${refused}\n`));
            return;
          }
          const conn = new UwsConnection(`${ip}#${++this.connSeq}`, ip, this.wsLimits, (c, m) => this.onWsMessage(c, m), this.log, this.slice);
          if (authorization !== '') this.authed.add(conn);
          res.upgrade<WsUserData>({ conn }, key, protocol, extensions, context);
        } catch (e) {
          this.log?.error('JSON-RPC: websocket upgrade failed', { err: e as Error });
          res.cork(() => res.writeStatus('500 Internal Server Error').end());
        }
      },
      open: (ws) => this.guard(() => {
        const conn = ws.getUserData().conn;
        conn.attach(ws);
        this.conns.add(conn);
      }),
      message: (ws, message) => this.guard(() => ws.getUserData().conn.enqueue(message)),
      drain: (ws) => this.guard(() => ws.getUserData().conn.handleDrain()),
      close: (ws) => this.guard(() => {
        const conn = ws.getUserData().conn;
        this.conns.delete(conn);
        conn.handleClosed();
      }),
    });
    // POST (uWS routes any case of it here) behaves as any method other than GET, HEAD, PUT,
    // DELETE and OPTIONS: its route spares the read of the method.
    app.post('/*', (res, req) => this.onHttpGuarded(res, req, 'POST'));
    app.any('/*', (res, req) => this.onHttpGuarded(res, req, undefined));
    this.listening = await listen(app, parseListenAddr(this.laddr, 'json-rpc.address'), 'JSON-RPC');
    this.log?.info('JSON-RPC listening', { addr: `${this.listening.host}:${this.listening.port}` });
  }

  close(): void {
    for (const c of [...this.conns]) c.close(1001, 'server shutting down');
    this.conns.clear();
    this.listening?.close();
    this.listening = null;
    this.app = null;
  }

  private guard(fn: () => void, res?: HttpResponse): void {
    try {
      fn();
    } catch (e) {
      this.handlerFailed(e, res);
    }
  }

  /** A uWS callback threw: logged, and an HTTP request still open is answered 500. */
  private handlerFailed(e: unknown, res?: HttpResponse): void {
    this.log?.error('JSON-RPC: handler failed', { err: e as Error });
    if (res) {
      try {
        res.cork(() => res.writeStatus('500 Internal Server Error').end());
      } catch {
        /* already answered or gone */
      }
    }
  }

  /** guard() without its closure: this runs for every request. */
  private onHttpGuarded(res: HttpResponse, req: HttpRequest, method: string | undefined): void {
    try {
      this.onHttp(res, req, method);
    } catch (e) {
      this.handlerFailed(e, res);
    }
  }

  /** `known`: the method, when the route says it (only its comparisons below matter). */
  private onHttp(res: HttpResponse, req: HttpRequest, known: string | undefined): void {
    const method = known ?? req.getCaseSensitiveMethod();
    const ex = new Exchange(res, method === 'HEAD', this.auth ? req.getHeader(H_AUTHORIZATION) : '', this.callLimitMs);
    // uWS does not count a HEAD answer (endWithoutBody) as one: HEAD always attaches.
    if (ex.head) res.onAborted(ex.aborts());
    // What uWS and net/http do with the connection after the answer (../server/uws.ts
    // connectionClose): `Connection: close` is written whenever the connection ends after it.
    const connection = req.getHeader(H_CONNECTION);
    if (connection !== '') ex.connClose = connectionClose(connection);
    const clHeader = req.getHeader(H_CONTENT_LENGTH);
    // uWS drops the connection right after this handler on a Content-Length it cannot read; the
    // 400 below is written so that it leaves first (CONN_DROPPED_BY_UWS).
    if (uwsRefusesContentLength(clHeader)) ex.connClose = CONN_DROPPED_BY_UWS;
    const cl = parseContentLength(clHeader);
    // (Transfer-Encoding matters to a GET only: read for it alone.)
    if (method === 'GET' && (cl === undefined || cl === 0) && req.getHeader('transfer-encoding') === '' && (req.getQuery() ?? '') === '') {
      this.reply(res, ex, '200 OK', [], '', undefined, true);
      return;
    }
    if (cl === null) {
      this.reply(res, ex, '400 Bad Request', TEXT_HEADERS, '400 Bad Request', { close: true }, true);
      return;
    }
    if (method === 'PUT' || method === 'DELETE') {
      this.reply(res, ex, '405 Method Not Allowed', TEXT_HEADERS, 'method not allowed\n', undefined, true);
      return;
    }
    if (cl !== undefined && cl > this.bodyLimit) {
      this.reply(res, ex, '413 Request Entity Too Large', TEXT_HEADERS, `content length too large (${cl}>${this.bodyLimit})\n`, { close: true }, true);
      return;
    }
    if (method !== 'OPTIONS' && !ACCEPTED_CONTENT_TYPES.has(mediaType(req.getHeader(H_CONTENT_TYPE)))) {
      this.reply(res, ex, '415 Unsupported Media Type', TEXT_HEADERS, 'invalid content type, only application/json is supported\n', undefined, true);
      return;
    }
    if (!ex.head) res.onAborted(ex.aborts());
    readBody(res, ex, this.bodyLimit, cl, this.onBody, this.onBodyError, true);
  }

  /** readBody's `done`, the same function for every request. */
  private readonly onBody = (body: Buffer | null, res: HttpResponse, ex: Exchange): void => {
    // The body may be a view over uWS's chunk (readBody's `view`): served now, or copied.
    if (this.slice.admitHttp()) this.serveHttp(res, ex, body, true);
    else {
      const kept = body === null ? null : Buffer.from(body);
      // Paused until the answer is written (../server/uws.ts pauseUntilAnswer), as the node
      // RPC and REST servers do: resuming before serving armed uWS's 10 s HTTP timeout, and a
      // deferred batch still computing 8–12 s later (~600 calls at load 15, the fuzz bench)
      // had its connection closed without an answer.
      pauseUntilAnswer(res, ex);
      this.slice.defer(() => {
        if (ex.aborted || ex.done) return;
        this.serveHttp(res, ex, kept, false);
      });
    }
  };

  private readonly onBodyError = (e: unknown, res: HttpResponse, ex: Exchange): void => this.internal(res, ex, e);

  /** Writes an answer (see ../server/uws.ts send); a HEAD request's goes out without its body. */
  private reply(res: HttpResponse, ex: Exchange, status: string, headers: Headers, body: string, opts?: SendOptions, corked = false): void {
    send(res, ex, status, headers, body, ex.head ? { ...opts, head: true } : opts, corked);
  }

  /** `body` null: the limit was passed while reading (geth's MaxBytesReader: a read error). */
  private serveHttp(res: HttpResponse, ex: Exchange, body: Buffer | null, corked: boolean): void {
    try {
      const value = body === null ? READ_ERROR : parseGethValue(body);
      if (value === GETH_NO_VALUE) {
        this.reply(res, ex, '200 OK', JSON_HEADERS, '', undefined, corked);
        return;
      }
      if (value instanceof GethSyntaxError) {
        // rpc/server.go serveSingleRequest: any read error other than EOF is "parse error".
        this.reply(res, ex, '200 OK', JSON_HEADERS, gethErrorEnvelope(null, GETH_CODES.PARSE_ERROR, 'parse error'), undefined, corked);
        return;
      }
      if (!Array.isArray(value)) {
        this.serveSingle(res, ex, value, corked);
        return;
      }
      const parsed = { messages: value, batch: true };
      if (this.needsAuth(parsed.messages)) {
        const refused = this.auth!.verify(ex.authorization);
        if (refused !== null) {
          // node/jwt_handler.go: http.Error(w, reason, 401); nothing of the request runs.
          this.reply(res, ex, '401 Unauthorized', TEXT_HEADERS, `${refused}\n`, undefined, corked);
          return;
        }
      }
      const a = this.rpc.serve(parsed, ex, ex);
      if (a instanceof Promise) {
        a.then(
          (answer) => this.reply(res, ex, '200 OK', JSON_HEADERS, answer ?? ''),
          (e: unknown) => this.internal(res, ex, e),
        );
        return;
      }
      this.reply(res, ex, '200 OK', JSON_HEADERS, a ?? '', undefined, corked);
    } catch (e) {
      this.internal(res, ex, e);
    }
  }

  /**
   * The fast path of a single (non-batch) request: one decoding of the message, the auth check on
   * its method alone, the answer written with one cork and end (replyJson).
   */
  private serveSingle(res: HttpResponse, ex: Exchange, value: unknown, corked: boolean): void {
    const m = toMessage(value);
    // One `method` member (the usual message): its text says it; more: each of them counts.
    if (this.auth !== undefined && (m.methodKeys === 1 ? this.privateServed(m.method) : m.methodKeys > 1 && callsPrivate(value, this.privateServed))) {
      const refused = this.auth.verify(ex.authorization);
      if (refused !== null) {
        // node/jwt_handler.go: http.Error(w, reason, 401); nothing of the request runs.
        this.reply(res, ex, '401 Unauthorized', TEXT_HEADERS, `${refused}\n`, undefined, corked);
        return;
      }
    }
    // Streaming hook (issue 12): a large result (a debug trace) may be written to the socket in
    // chunks (chunked-reply.ts) through the stream scope in its call context; methods that do not
    // stream (options `streams`) get none.
    const scope = this.streams === undefined || this.streams(m.method) ? new StreamScope() : undefined;
    ex.stream = scope;
    const a = this.rpc.single(m, ex, ex);
    if (a instanceof Promise) {
      a.then(
        (answer) => (scope !== undefined && scope.source !== undefined && answer !== null ? replyChunked(res, ex, answer, scope, (e) => this.internal(res, ex, e)) : this.replyJson(res, ex, answer ?? '', false)),
        (e: unknown) => this.internal(res, ex, e),
      );
      return;
    }
    this.replyJson(res, ex, a ?? '', corked);
  }

  private readonly privateByName = new Map<string, boolean>();

  /** Whether a method this server serves is private, kept per served name (a finite set). */
  private readonly privateServed = (method: string): boolean => {
    let p = this.privateByName.get(method);
    if (p === undefined) {
      if (this.rpc.table.get(method) === undefined) return false;
      p = this.auth!.isPrivate(method);
      this.privateByName.set(method, p);
    }
    return p;
  };

  /** A 200 JSON answer: sendJson's one cork and end when it may, else reply's general path. */
  private replyJson(res: HttpResponse, ex: Exchange, body: string, corked: boolean): void {
    if (ex.head || !sendJson(res, ex, body, corked)) this.reply(res, ex, '200 OK', JSON_HEADERS, body, undefined, corked);
  }

  private internal(res: HttpResponse, ex: Exchange, e: unknown): void {
    this.log?.error('JSON-RPC: request failed', { err: e as Error });
    this.reply(res, ex, '200 OK', JSON_HEADERS, gethErrorEnvelope(null, GETH_CODES.INTERNAL_ERROR, 'method handler crashed'));
  }

  private async onWsMessage(conn: UwsConnection, message: Buffer): Promise<void> {
    const parsed = parseGethBody(message);
    if (parsed === null) {
      // gorilla ReadJSON of an empty message: io.ErrUnexpectedEOF, and the read loop ends.
      conn.close();
      return;
    }
    if (!parsed.ok) {
      conn.reply(gethErrorEnvelope(null, GETH_CODES.PARSE_ERROR, parsed.error));
      conn.close();
      return;
    }
    if (!this.authed.has(conn) && this.needsAuth(parsed.messages)) {
      const errs = parsed.messages.map(idOf).filter((id) => id !== undefined).map((id) => gethErrorEnvelope(id, GETH_CODES.DEFAULT, 'missing token'));
      if (errs.length > 0) conn.reply(parsed.batch ? `[${errs.join(',')}]` : errs[0]!);
      return;
    }
    const site: GethCallSite = { transport: 'websocket', remoteAddr: conn.remoteAddr, signal: conn.signal, ws: conn };
    let answer: string | null;
    try {
      answer = await this.rpc.serve(parsed, site);
    } catch (e) {
      this.log?.error('JSON-RPC: websocket request failed', { conn: conn.id, err: e as Error });
      answer = gethErrorEnvelope(null, GETH_CODES.INTERNAL_ERROR, 'method handler crashed');
    }
    if (answer !== null) conn.reply(answer);
  }
}

/** mime.ParseMediaType's media type: before any `;`, trimmed, lower-cased. */
function mediaType(v: string): string {
  if (v === 'application/json') return v; // what nearly every client sends: nothing to cut
  const i = v.indexOf(';');
  return (i === -1 ? v : v.slice(0, i)).trim().toLowerCase();
}
