/**
 * The node RPC server on uWebSockets.js, compatible with CometBFT 0.38's (rpc/jsonrpc/server/*,
 * node/node.go startRPC; cometbft/cometbft:rpc/jsonrpc/server/http_server.go, cometbft/cometbft:rpc/jsonrpc/server/ws_handler.go). Three transports read one
 * route table (routes.ts):
 * - URI: `GET|POST /<method>?name=value` (http_uri_handler.go), id -1;
 * - JSON-RPC over HTTP: any method on `/` with a JSON body, single or batch (http_json_handler.go);
 *   an empty body gets the HTML list of endpoints;
 * - JSON-RPC over websocket at `/websocket` (ws_handler.go), the only place websocket-only
 *   methods are served; see ws.ts for per-connection back-pressure.
 *
 * The layers of a CometBFT HTTP request, outermost first, and what each contributes here:
 * 1. net/http: `max_header_bytes` (+4096 slack) → 431 and close; `max_open_connections` is a
 *    limit listener in CometBFT (excess connections wait in accept). uWS has no accept hook, so
 *    here the limit counts in-flight HTTP requests plus open websockets and refuses the excess
 *    with 503 and close.
 * 2. PreChecksHandler (http_server.go): the body is read under `max_body_bytes` (over it: 400,
 *    -32600 `error reading request body: http: request body too large`, connection closed) and a
 *    JSON array longer than `max_request_batch_size` is answered 200 with -32600 and no id. These
 *    answers carry neither X-Server-Time nor CORS headers: they never reach the inner layers.
 * 3. RecoverAndLogHandler: `X-Server-Time: <unix seconds>` on every response; a panic becomes
 *    HTTP 500, -32603, id -1.
 * 4. rs/cors (only with a non-empty `cors_allowed_origins`; ../server/cors.ts).
 * 5. The mux: `/websocket`, `/<method>` for each route, `/` for JSON-RPC; anything else is Go's
 *    plain-text `404 page not found`.
 *
 * Status codes (cometbft/cometbft:rpc/jsonrpc/types/types.go): JSON-RPC over HTTP answers 200 for every per-request error,
 * 500 for a parse error, 400 for an unreadable body. URI answers 500 for bad params (-32602) and
 * method errors (-32603), 404 with a JSON -32601 body for websocket-only methods. Unsafe methods
 * are absent unless `[rpc] unsafe = true` (plain 404 over URI, -32601 over JSON-RPC).
 */
import { defaultNodeConfig, type RpcConfig } from '../../config/node-config.js';
import type { Logger } from '../../log.js';
import { Cors, type CorsRequest } from '../server/cors.js';
import {
  GO_BAD_REQUEST_BODY,
  GO_ERROR_HEADERS,
  GO_HEADER_SLACK_BYTES,
  GO_HEADERS_TOO_LARGE_BODY,
  GO_NOT_FOUND_BODY,
  GO_TEXT_HEADERS,
  goUnescape,
  isFormContentType,
  parseGoMultipartForm,
  parseGoQuery,
  queryGet,
  requestHeaderBytes,
} from '../server/http.js';
import { loopSlice, type LoopSlice } from '../server/slice.js';
import {
  connectionClose,
  CONN_DROPPED_BY_UWS,
  listen,
  pauseUntilAnswer,
  uwsRefusesContentLength,
  parseContentLength,
  parseListenAddr,
  readBody,
  remoteAddress,
  send,
  uws,
  type Headers,
  type HttpRequest,
  type HttpResponse,
  type Listening,
  type ResponseState,
  type SendOptions,
  type TemplatedApp,
  type UpgradeContext,
} from '../server/uws.js';
import { errorEnvelope, HTTP_STATUS, RawJson, rpcErrorObject, successEnvelope, type JsonRpcId } from '../jsonrpc/envelope.js';
import { decodeHttpBody, decodeUriParams, GoPanicError, ParamError, withDefaults, type Args, type DecodedBody } from '../jsonrpc/cometbft-params.js';
import { isCacheable, RouteTable, type Route, type RouteContext, type Transport } from '../jsonrpc/methods.js';
import { CometbftJsonRpc, type CometOutcome, type JsonRpcBatch } from '../jsonrpc/cometbft.js';
import type { RpcMetrics } from '../jsonrpc/dispatch.js';
import { UwsConnection, wsLimitsFromConfig, type WsLimits, type WsUserData } from '../jsonrpc/ws.js';

export interface NodeRpcServerOptions {
  /** `tcp://host:port`, or several separated by commas (CometBFT allows a list). */
  laddr: string;
  /** `[rpc]` of config.toml: CORS, limits, unsafe. */
  config: RpcConfig;
  routes: readonly Route[];
  logger?: Logger;
  /** Websocket bounds; defaults from `config` (ws.ts wsLimitsFromConfig). */
  ws?: Partial<WsLimits>;
  /** The per-loop-turn bound on RPC work; the process-wide one by default (../server/slice.ts). */
  slice?: LoopSlice;
  /** RPC metrics (src/metrics/metrics.ts `rpc`); nothing is measured without them. */
  metrics?: RpcMetrics;
}

/** What uWS (20.30) accepts of a request's header block before closing the connection itself. */
const UWS_MAX_HEADER_BYTES = 128 * 1024;
/** The body of a request that has none. */
const EMPTY_BODY = Buffer.alloc(0);
const JSON_CONTENT_TYPE: readonly [string, string] = ['Content-Type', 'application/json'];
/** http_server.go WriteCacheableRPCResponseHTTP: one day. */
const CACHE_CONTROL: readonly [string, string] = ['Cache-Control', 'public, max-age=86400'];
/**
 * ws_handler.go: reads time out after 30 s without traffic and the server pings every 27 s.
 * uWS closes a socket idle for `idleTimeout` seconds and, with sendPingsAutomatically, pings it
 * before that.
 */
const WS_IDLE_TIMEOUT_S = 32;
const URI_ID: JsonRpcId = -1;
const HEAD_OPTIONS: SendOptions = Object.freeze({ head: true });

let serverTimeSecond = -1;
let serverTime: readonly [string, string] = ['X-Server-Time', ''];
/** RecoverAndLogHandler's `X-Server-Time: <unix seconds>`, one header pair per second. */
function serverTimeHeader(): readonly [string, string] {
  const sec = Math.floor(Date.now() / 1000);
  if (sec !== serverTimeSecond) {
    serverTimeSecond = sec;
    serverTime = ['X-Server-Time', String(sec)];
  }
  return serverTime;
}

/** State of one HTTP request, shared with its abort handler. */
interface Exchange extends ResponseState {
  /** Counted against max_open_connections (until answered or aborted). */
  counted: boolean;
  ac: AbortController | null;
  /** A HEAD request: every answer to it goes out without its body (see respond). */
  head?: boolean;
}

/** What was read from the request synchronously, while uWS's HttpRequest was valid. */
interface RequestInfo {
  method: string;
  path: string;
  query: string;
  host: string;
  origin: string;
  acrm: string;
  acrh: string;
  contentType: string;
  connection: string;
  upgrade: string;
  /** For the remote address, read lazily: a native call plus a string copy per request (14% of /status CPU when eager). */
  res: HttpResponse;
  remote?: string;
}

/** The context of a call over HTTP (URI or JSON-RPC); built per request, so without closures. */
class HttpCallContext implements RouteContext {
  readonly ws = undefined;
  constructor(
    readonly transport: Transport,
    readonly id: JsonRpcId,
    private readonly info: RequestInfo,
    private readonly ex: Exchange,
  ) {}
  get remoteAddr(): string {
    const info = this.info;
    return (info.remote ??= this.ex.aborted ? '' : remoteAddress(info.res));
  }
  /** Aborted when the client goes away before the answer. */
  get signal(): AbortSignal {
    const ex = this.ex;
    ex.ac ??= new AbortController();
    if (ex.aborted) ex.ac.abort();
    return ex.ac.signal;
  }
}

export class NodeRpcServer {
  /** The routes being served (unsafe ones only when enabled). */
  readonly table: RouteTable;
  /** The CometBFT dialect of the JSON-RPC layer over `table`: methods, JSON-RPC and websocket requests. */
  readonly rpc: CometbftJsonRpc;
  private readonly cfg: RpcConfig;
  private readonly log: Logger | undefined;
  private readonly cors: Cors | null;
  private readonly wsLimits: WsLimits;
  private readonly slice: LoopSlice;
  private app: TemplatedApp | null = null;
  private listening: Listening[] = [];
  private readonly conns = new Set<UwsConnection>();
  private inflight = 0;
  /** True while onHttp runs synchronously inside uWS's callback (the socket is corked then). */
  private inUwsHandler = false;
  private connSeq = 0;

  constructor(private readonly opts: NodeRpcServerOptions) {
    this.log = opts.logger;
    this.cfg = opts.config ?? legacyConfig(opts, this.log);
    const c = this.cfg;
    this.table = new RouteTable(opts.routes, { unsafe: c.unsafe });
    this.rpc = new CometbftJsonRpc(this.table, { logger: this.log, metrics: opts.metrics });
    this.cors = c.corsAllowedOrigins.length > 0 ? new Cors({ allowedOrigins: c.corsAllowedOrigins, allowedMethods: c.corsAllowedMethods, allowedHeaders: c.corsAllowedHeaders }) : null;
    this.wsLimits = { ...wsLimitsFromConfig(c), ...opts.ws };
    this.slice = opts.slice ?? loopSlice;
    if (!opts.slice && c.maxLoopSlice !== undefined) this.slice.sliceMs = c.maxLoopSlice;
  }

  /** The bound port of the first listen address (useful with port 0). */
  get port(): number {
    return this.listening[0]?.port ?? 0;
  }

  /** In-flight HTTP requests plus open websockets: what max_open_connections bounds. */
  get openConnections(): number {
    return this.inflight + this.conns.size;
  }

  async start(): Promise<void> {
    if (this.app) throw new Error('node RPC: already started');
    const app = uws.App();
    this.app = app;
    app.ws<WsUserData>('/websocket', {
      // ws_handler.go ReadLimit(max_body_bytes): a larger message closes the connection.
      maxPayloadLength: this.cfg.maxBodyBytes,
      idleTimeout: WS_IDLE_TIMEOUT_S,
      sendPingsAutomatically: true,
      // uWS never buffers more for one client; ws.ts closes a client this far behind itself, before
      // uWS would drop a send. (closeOnBackpressureLimit is left off: in this build it closed
      // connections whose pushes ws.ts was already skipping, before the subscription policy ran.)
      maxBackpressure: this.wsLimits.slowClientBytes,
      compression: uws.DISABLED,
      // Nothing thrown in these may leave uWS's callback (the process would end).
      upgrade: (res, req, context) => this.onUpgrade(res, req, context),
      open: (ws) => this.guardWs('open', () => {
        const conn = ws.getUserData().conn;
        conn.attach(ws);
        this.conns.add(conn);
      }),
      message: (ws, message) => this.guardWs('message', () => ws.getUserData().conn.enqueue(message)),
      drain: (ws) => this.guardWs('drain', () => ws.getUserData().conn.handleDrain()),
      close: (ws) => this.guardWs('close', () => {
        const conn = ws.getUserData().conn;
        this.conns.delete(conn);
        conn.handleClosed();
      }),
    });
    // Static routes: a plain `GET /<method>` is matched by uWS's router itself, so its handler
    // reads neither the method nor the URL (native calls and string copies per request). Only
    // when nothing else of the request is needed: with CORS or a max_header_bytes below uWS's own
    // limit, every request takes the general path.
    if (this.cors === null && !this.checksHeaderBytes()) {
      for (const route of this.table.list()) {
        const path = `/${route.name}`;
        if (!route.wsOnly) app.get(path, (res, req) => this.onRouteGet(res, req, route, path));
      }
    }
    // JSON-RPC over HTTP: uWS's router knows method and path, so the handler need not ask.
    app.post('/', (res, req) => this.onHttp(res, req, 'POST', '/'));
    app.any('/*', (res, req) => this.onHttp(res, req));
    const addrs = this.opts.laddr
      .split(',')
      .map((a) => a.trim())
      .filter((a) => a !== '');
    try {
      for (const a of addrs) this.listening.push(await listen(app, parseListenAddr(a, 'rpc.laddr'), 'node RPC'));
    } catch (e) {
      this.close();
      throw e;
    }
    this.log?.info('node RPC listening', { addr: this.listening.map((l) => `${l.host}:${l.port}`).join(',') });
  }

  /** Closes websockets (1001), listeners and open connections. */
  close(): void {
    for (const c of [...this.conns]) c.close(1001, 'server shutting down');
    this.conns.clear();
    for (const l of this.listening) l.close();
    this.listening = [];
    this.app = null;
  }

  private guardWs(what: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.log?.error(`node RPC: websocket ${what} handler failed`, { err: e as Error });
    }
  }

  // --------------------------------------------------------------------------------------------
  // HTTP

  private onHttp(res: HttpResponse, req: HttpRequest, method?: string, url?: string): void {
    this.inUwsHandler = true;
    try {
      this.handleHttp(res, req, method, url);
    } catch (e) {
      // handleHttp answers its own errors; this is the last line (a bug in that answer).
      this.log?.error('node RPC: request handler failed', { err: e as Error });
    } finally {
      this.inUwsHandler = false;
    }
  }

  /**
   * Serves a request in a later loop iteration (the slice of this one is spent): the socket is
   * paused meanwhile, and resumed with the answer (uws.ts pauseUntilAnswer: resuming before an
   * async answer let uWS's timeout close the connection unanswered).
   */
  private later(res: HttpResponse, ex: Exchange, serve: () => void): void {
    pauseUntilAnswer(res, ex);
    this.slice.defer(() => {
      if (ex.aborted || ex.done) return;
      serve();
    });
  }

  /**
   * uWS's header limit makes the per-header walk useless when max_header_bytes is at least that
   * (the 1 MiB default): the check could never fire.
   */
  private checksHeaderBytes(): boolean {
    return this.cfg.maxHeaderBytes + GO_HEADER_SLACK_BYTES < UWS_MAX_HEADER_BYTES;
  }

  /**
   * uWS terminates the process if a handler returns without answering or attaching an abort
   * handler. Every path either answers before returning or attaches one; a request answered
   * synchronously (a cached /status) skips the registration altogether.
   */
  private attachAbort(res: HttpResponse, ex: Exchange): void {
    res.onAborted(() => {
      ex.aborted = true;
      ex.ac?.abort();
      this.release(ex);
    });
  }

  /** `GET /<route.name>` through uWS's static route (see start()): the URI transport only. */
  private onRouteGet(res: HttpResponse, req: HttpRequest, route: Route, path: string): void {
    if (this.cfg.maxOpenConnections > 0 && this.openConnections >= this.cfg.maxOpenConnections) {
      this.onHttp(res, req);
      return;
    }
    const ex: Exchange = { aborted: false, done: false, counted: true, ac: null };
    this.inflight++;
    this.inUwsHandler = true;
    try {
      const connection = req.getHeader('connection');
      if (connection !== '') ex.connClose = connectionClose(connection);
      // A Content-Length uWS refuses: answered 400 on the general path (uws.ts CONN_DROPPED_BY_UWS).
      if (uwsRefusesContentLength(req.getHeader('content-length'))) {
        this.release(ex);
        this.inUwsHandler = false;
        this.onHttp(res, req);
        return;
      }
      // A route without parameters ignores the query, as CometBFT's handler does.
      const query = route.params.length === 0 ? '' : (req.getQuery() ?? '');
      const info: RequestInfo = {
        method: 'GET',
        path,
        query,
        host: '',
        origin: '',
        acrm: '',
        acrh: '',
        contentType: '',
        connection: '',
        upgrade: '',
        res,
      };
      if (!this.slice.admitHttp()) {
        this.attachAbort(res, ex);
        this.later(res, ex, () => this.runRouteGet(res, ex, info, route));
        return;
      }
      this.runRouteGet(res, ex, info, route);
      if (!ex.done) this.attachAbort(res, ex);
    } catch (e) {
      this.internalError(res, ex, [], e);
    } finally {
      this.inUwsHandler = false;
    }
  }

  private runRouteGet(res: HttpResponse, ex: Exchange, info: RequestInfo, route: Route): void {
    const headers: Array<readonly [string, string]> = [serverTimeHeader()];
    try {
      const pending = this.serveUri(res, ex, info, headers, EMPTY_BODY, route);
      if (pending) void pending.catch((e: unknown) => this.internalError(res, ex, headers, e));
    } catch (e) {
      this.internalError(res, ex, headers, e);
    }
  }

  /** `method` and `url` when the route already fixes them (a static uWS route). */
  private handleHttp(res: HttpResponse, req: HttpRequest, knownMethod?: string, knownUrl?: string): void {
    const ex: Exchange = { aborted: false, done: false, counted: false, ac: null };
    const attachAbort = () => this.attachAbort(res, ex);
    try {
      // Everything is read from `req` now: it is invalid once this callback returns.
      const method = knownMethod ?? req.getCaseSensitiveMethod();
      if (method === 'HEAD') ex.head = true;
      const url = knownUrl ?? req.getUrl();
      const query = req.getQuery() ?? '';
      // uWS itself refuses header blocks past UWS_MAX_HEADER_BYTES; when max_header_bytes is at
      // least that (the 1 MiB default), the check below cannot fire and the per-header walk (one
      // native callback per header) is skipped.
      let headerBytes = 0;
      if (this.checksHeaderBytes()) req.forEach((k, v) => (headerBytes += k.length + v.length + 4));
      let remote: string | undefined;
      // Each getHeader is a native call: read only what this request can use.
      const cors = this.cors !== null;
      // A GET or HEAD to a method's path is answered without its body (the URI handler reads form
      // values from POST bodies only): its body headers are never read, two native calls saved per
      // request. Only `/` reads a GET's body, as the JSON-RPC handler does for any method.
      const bodyless = (method === 'GET' || method === 'HEAD') && (url !== '/' || !announcesBody(req));
      const wsPath = url === '/websocket';
      // What uWS and net/http do with the connection after the answer (uws.ts connectionClose).
      const connection = req.getHeader('connection');
      if (connection !== '') ex.connClose = connectionClose(connection);
      // Read for every request: uWS drops the connection after this handler when it cannot parse
      // the value, whatever the method, and only a 400 written now gets out first.
      const contentLength = req.getHeader('content-length');
      if (uwsRefusesContentLength(contentLength)) ex.connClose = CONN_DROPPED_BY_UWS;
      const info: RequestInfo = {
        method,
        path: url,
        query,
        // For the endpoint list, the answer to an empty body.
        host: url === '/' && (contentLength === '' || contentLength === '0') ? req.getHeader('host') : '',
        origin: cors ? req.getHeader('origin') : '',
        acrm: cors ? req.getHeader('access-control-request-method') : '',
        acrh: cors ? req.getHeader('access-control-request-headers') : '',
        contentType: bodyless ? '' : req.getHeader('content-type'),
        connection: wsPath ? connection : '',
        upgrade: wsPath ? req.getHeader('upgrade') : '',
        res,
      };

      if (requestHeaderBytes(method, url, query, headerBytes) > this.cfg.maxHeaderBytes + GO_HEADER_SLACK_BYTES) {
        // net/http server.go: written by the server itself, before any handler.
        this.respond(res, ex, HTTP_STATUS.HEADERS_TOO_LARGE, GO_TEXT_HEADERS, GO_HEADERS_TOO_LARGE_BODY, { close: true });
        return;
      }
      if (this.cfg.maxOpenConnections > 0 && this.openConnections >= this.cfg.maxOpenConnections) {
        this.respond(res, ex, HTTP_STATUS.UNAVAILABLE, GO_TEXT_HEADERS, 'too many open connections\n', { close: true });
        return;
      }
      this.inflight++;
      ex.counted = true;

      const path = goUnescape(url, 'path');
      if (path === null) {
        this.respond(res, ex, HTTP_STATUS.BAD_REQUEST, GO_TEXT_HEADERS, GO_BAD_REQUEST_BODY, { close: true });
        return;
      }
      info.path = path;
      const cl = bodyless && ex.connClose !== CONN_DROPPED_BY_UWS ? undefined : parseContentLength(contentLength);
      if (cl === null || ex.connClose === CONN_DROPPED_BY_UWS) {
        // net/http readRequest: a Content-Length that is not a decimal number is a 400 written by
        // the server itself, connection closed. uWS 20.30 drops the connection right after this
        // handler (also for 10 digits or more); the answer is written so that it leaves first
        // (uws.ts CONN_DROPPED_BY_UWS).
        this.respond(res, ex, HTTP_STATUS.BAD_REQUEST, GO_TEXT_HEADERS, GO_BAD_REQUEST_BODY, { close: true });
        return;
      }
      if (cl !== undefined && cl > this.cfg.maxBodyBytes) {
        // Answer at once: no need to read what will be refused.
        this.bodyTooLarge(res, ex);
        return;
      }
      // A GET or HEAD is served now, inside uWS's corked handler: waiting for
      // uWS's empty last onData chunk costs a loop turn, which halved /status throughput.
      if (bodyless) {
        if (!this.slice.admitHttp()) {
          attachAbort();
          this.later(res, ex, () => void this.serveHttp(res, ex, info, EMPTY_BODY));
          return;
        }
        // uWS 20.30 does not count endWithoutBody (HEAD) as an answer: HEAD always attaches.
        if (method === 'HEAD') attachAbort();
        const pending = this.serveHttp(res, ex, info, EMPTY_BODY);
        if (!ex.done && method !== 'HEAD') attachAbort();
        void pending;
        return;
      }
      attachAbort();
      readBody(
        res,
        ex,
        this.cfg.maxBodyBytes,
        cl,
        (body) => {
          // Called from uWS's data callback, where the socket is corked as in onHttp (or from
          // onHttp itself, for an empty body).
          const outer = this.inUwsHandler;
          this.inUwsHandler = true;
          try {
            if (body === null) this.bodyTooLarge(res, ex);
            else if (this.slice.admitHttp()) void this.serveHttp(res, ex, info, body);
            else this.later(res, ex, () => void this.serveHttp(res, ex, info, body));
          } finally {
            this.inUwsHandler = outer;
          }
        },
        (e) => this.internalError(res, ex, [], e),
      );
    } catch (e) {
      this.internalError(res, ex, [], e);
    }
  }

  /** PreChecksHandler: http.MaxBytesReader's error; net/http closes the connection after it. */
  private bodyTooLarge(res: HttpResponse, ex: Exchange): void {
    const body = errorEnvelope(null, rpcErrorObject('INVALID_REQUEST', 'error reading request body: http: request body too large'));
    this.respond(res, ex, HTTP_STATUS.BAD_REQUEST, [JSON_CONTENT_TYPE], body, { close: true });
  }

  /** Synchronous when the answer is (a cached result): then it is written inside uWS's handler. */
  private serveHttp(res: HttpResponse, ex: Exchange, info: RequestInfo, body: Buffer): Promise<void> | undefined {
    const headers: Array<readonly [string, string]> = [];
    const failed = (e: unknown) => this.internalError(res, ex, headers, e);
    try {
      // PreChecksHandler: a batch over max_request_batch_size. Only a JSON array can be one, so
      // other bodies skip the parse here (it is done once, below, when needed).
      let decoded: DecodedBody | undefined;
      const max = this.cfg.maxRequestBatchSize;
      if (max > 0 && firstNonSpace(body) === 0x5b) {
        decoded = decodeHttpBody(body);
        if (decoded.ok && decoded.array && decoded.requests.length > max) {
          const err = rpcErrorObject('INVALID_REQUEST', `batch request exceeds maximum (${max}) allowed number of requests`);
          this.respond(res, ex, HTTP_STATUS.OK, [JSON_CONTENT_TYPE], errorEnvelope(null, err));
          return;
        }
      }
      // RecoverAndLogHandler.
      headers.push(serverTimeHeader());
      // rs/cors.
      if (this.cors) {
        const cr: CorsRequest = { method: info.method, origin: info.origin, requestMethod: info.acrm, requestHeaders: info.acrh };
        if (Cors.isPreflight(cr)) {
          this.respond(res, ex, HTTP_STATUS.NO_CONTENT, [...headers, ...this.cors.preflight(cr)], '', { noBody: true });
          return;
        }
        headers.push(...this.cors.actual(cr));
      }
      // The mux.
      if (info.path === '/') return this.serveJsonRpc(res, ex, info, headers, body, decoded)?.catch(failed);
      if (info.path === '/websocket') {
        this.notWebsocket(res, ex, info, headers);
        return;
      }
      const route = this.table.get(info.path.slice(1));
      if (!route) {
        this.respond(res, ex, HTTP_STATUS.NOT_FOUND, [...headers, ...Object.entries(GO_ERROR_HEADERS)], GO_NOT_FOUND_BODY, { head: info.method === 'HEAD' });
        return;
      }
      return this.serveUri(res, ex, info, headers, body, route)?.catch(failed);
    } catch (e) {
      failed(e);
    }
  }

  /**
   * http_json_handler.go makeJSONRPCHandler. Synchronous while the methods answer synchronously
   * (the response is then written inside uWS's callback, still corked); from the first method
   * that answers later, the rest of the batch follows, in order, asynchronously.
   */
  private serveJsonRpc(
    res: HttpResponse,
    ex: Exchange,
    info: RequestInfo,
    headers: Array<readonly [string, string]>,
    body: Buffer,
    decoded: DecodedBody | undefined,
  ): Promise<void> | undefined {
    const head = info.method === 'HEAD';
    if (body.length === 0) {
      this.respond(res, ex, HTTP_STATUS.OK, [...headers, ['Content-Type', 'text/html']], this.table.endpointsHtml(info.host), { head });
      return undefined;
    }
    const d = decoded ?? decodeHttpBody(body);
    if (!d.ok) {
      const err = rpcErrorObject('PARSE_ERROR', `error unmarshaling request: ${d.error}`);
      this.respond(res, ex, HTTP_STATUS.INTERNAL, [...headers, JSON_CONTENT_TYPE], errorEnvelope(null, err), { head });
      return undefined;
    }
    const batch: JsonRpcBatch = { out: [], cache: true };
    const answer = () => this.answerJsonRpc(res, ex, headers, batch, head);
    const pending = this.rpc.runHttp(d.requests, 0, batch, (id) => this.httpContext('jsonrpc', id, info, ex));
    if (pending) return pending.then(answer);
    answer();
    return undefined;
  }

  private answerJsonRpc(res: HttpResponse, ex: Exchange, headers: Array<readonly [string, string]>, batch: JsonRpcBatch, head: boolean): void {
    const out = batch.out;
    if (out.length === 0) {
      this.respond(res, ex, HTTP_STATUS.OK, headers, '', head ? HEAD_OPTIONS : undefined);
      return;
    }
    // http_server.go writeRPCResponseHTTP: a single response is written as an object, even for
    // a batch of one.
    const text = out.length === 1 ? out[0]! : `[${out.join(',')}]`;
    headers.push(JSON_CONTENT_TYPE);
    if (batch.cache) headers.push(CACHE_CONTROL);
    this.respond(res, ex, HTTP_STATUS.OK, headers, text, head ? HEAD_OPTIONS : undefined);
  }

  /**
   * http_uri_handler.go makeHTTPHandler. Returns a promise only when the method answers later;
   * `headers` gains the Content-Type.
   */
  private serveUri(res: HttpResponse, ex: Exchange, info: RequestInfo, headers: Array<readonly [string, string]>, body: Buffer, route: Route): Promise<void> | undefined {
    const head = info.method === 'HEAD';
    const json = headers;
    json.push(JSON_CONTENT_TYPE);
    if (route.wsOnly) {
      this.rpc.rejected(route.name, 'uri');
      this.respond(res, ex, HTTP_STATUS.NOT_FOUND, json, errorEnvelope(URI_ID, rpcErrorObject('METHOD_NOT_FOUND')), { head });
      return;
    }
    let args: Args;
    try {
      args = route.params.length === 0 ? {} : decodeUriParams(route.params, uriParamGetter(info, body));
    } catch (e) {
      if (!(e instanceof ParamError)) throw e;
      this.rpc.rejected(route.name, 'uri');
      const err = rpcErrorObject('INVALID_PARAMS', `error converting http params to arguments: ${e.message}`);
      this.respond(res, ex, HTTP_STATUS.INTERNAL, json, errorEnvelope(URI_ID, err), { head });
      return;
    }
    const cacheable = isCacheable(route, args, true);
    const pending = this.rpc.call(route, withDefaults(route.params, args), this.httpContext('uri', URI_ID, info, ex));
    if (pending instanceof Promise) return pending.then((o) => this.answerUri(res, ex, json, o, cacheable, head));
    this.answerUri(res, ex, json, pending, cacheable, head);
    return undefined;
  }

  private answerUri(res: HttpResponse, ex: Exchange, json: Array<readonly [string, string]>, o: CometOutcome, cacheable: boolean, head: boolean): void {
    if (!o.ok) {
      this.respond(res, ex, HTTP_STATUS.INTERNAL, json, errorEnvelope(URI_ID, o.error), head ? HEAD_OPTIONS : undefined);
      return;
    }
    const out = o.result instanceof RawJson ? o.result.uriEnvelope() : successEnvelope(URI_ID, o.result);
    if (cacheable) json.push(CACHE_CONTROL);
    this.respond(res, ex, HTTP_STATUS.OK, json, out, head ? HEAD_OPTIONS : undefined);
  }

  /** A request to /websocket that uWS did not upgrade: gorilla's Upgrader.returnError. */
  private notWebsocket(res: HttpResponse, ex: Exchange, info: RequestInfo, headers: Array<readonly [string, string]>): void {
    const upgrading = hasToken(info.connection, 'upgrade') && hasToken(info.upgrade, 'websocket');
    const notAllowed = upgrading && info.method !== 'GET';
    const status = notAllowed ? HTTP_STATUS.METHOD_NOT_ALLOWED : HTTP_STATUS.BAD_REQUEST;
    const h = [...headers, ...Object.entries(GO_ERROR_HEADERS), ['Sec-Websocket-Version', '13'] as const];
    this.respond(res, ex, status, h, notAllowed ? 'Method Not Allowed\n' : 'Bad Request\n', { head: info.method === 'HEAD' });
  }

  /** RecoverAndLogHandler's answer to a panic (and to any bug here): 500, -32603, id -1. */
  private internalError(res: HttpResponse, ex: Exchange, headers: Array<readonly [string, string]>, e: unknown): void {
    if (!(e instanceof GoPanicError)) this.log?.error('node RPC: request failed', { err: e as Error });
    const err = rpcErrorObject('INTERNAL_ERROR', e instanceof Error ? e.message : String(e));
    // The failure may come after serveUri added its Content-Type (and before any Cache-Control).
    const given = headers.filter(([k]) => k !== 'Content-Type' && k !== 'Cache-Control');
    const h = given.some(([k]) => k === 'X-Server-Time') ? given : [serverTimeHeader(), ...given];
    try {
      this.respond(res, ex, HTTP_STATUS.INTERNAL, [...h, JSON_CONTENT_TYPE], errorEnvelope(URI_ID, err));
    } catch (e2) {
      this.log?.error('node RPC: cannot answer', { err: e2 as Error });
    }
  }

  private respond(res: HttpResponse, ex: Exchange, status: string, headers: Headers, body: string | Uint8Array, opts?: SendOptions): void {
    // One place for HEAD: an answer on any path (batch limits, header limits, errors) must not
    // carry its body, or the bytes run into the next response on a keep-alive connection (the
    // fuzzer saw a batch error's body before the next status line).
    if (ex.head === true && opts?.head !== true && opts?.noBody !== true) opts = opts ? { ...opts, head: true } : HEAD_OPTIONS;
    send(res, ex, status, headers, body, opts, this.inUwsHandler);
    this.release(ex);
  }

  private release(ex: Exchange): void {
    if (!ex.counted) return;
    ex.counted = false;
    this.inflight--;
  }

  private httpContext(transport: Transport, id: JsonRpcId, info: RequestInfo, ex: Exchange): RouteContext {
    return new HttpCallContext(transport, id, info, ex);
  }

  // --------------------------------------------------------------------------------------------
  // Websocket

  private onUpgrade(res: HttpResponse, req: HttpRequest, context: UpgradeContext): void {
    const ex: Exchange = { aborted: false, done: false, counted: false, ac: null };
    res.onAborted(() => {
      ex.aborted = true;
    });
    try {
      const method = req.getCaseSensitiveMethod();
      const url = req.getUrl();
      const query = req.getQuery() ?? '';
      const raw: Array<[string, string]> = [];
      req.forEach((k, v) => raw.push([k, v]));
      const key = req.getHeader('sec-websocket-key');
      const version = req.getHeader('sec-websocket-version');
      const origin = req.getHeader('origin');
      const ip = remoteAddress(res);
      if (requestHeaderBytes(method, url, query, raw) > this.cfg.maxHeaderBytes + GO_HEADER_SLACK_BYTES) {
        this.respond(res, ex, HTTP_STATUS.HEADERS_TOO_LARGE, GO_TEXT_HEADERS, GO_HEADERS_TOO_LARGE_BODY, { close: true });
        return;
      }
      if (this.cfg.maxOpenConnections > 0 && this.openConnections >= this.cfg.maxOpenConnections) {
        this.respond(res, ex, HTTP_STATUS.UNAVAILABLE, GO_TEXT_HEADERS, 'too many open connections\n', { close: true });
        return;
      }
      const headers: Array<readonly [string, string]> = [serverTimeHeader()];
      if (this.cors) headers.push(...this.cors.actual({ method, origin, requestMethod: '', requestHeaders: '' }));
      // gorilla/websocket Upgrader.Upgrade checks (the token checks passed, or uWS would not be here).
      if (!hasToken(version, '13') || !validChallengeKey(key)) {
        const h = [...headers, ...Object.entries(GO_ERROR_HEADERS), ['Sec-Websocket-Version', '13'] as const];
        this.respond(res, ex, HTTP_STATUS.BAD_REQUEST, h, 'Bad Request\n');
        return;
      }
      const conn = new UwsConnection(`${ip}#${++this.connSeq}`, ip, this.wsLimits, (c, m) => this.rpc.onWsRequest(c, m), this.log, this.slice);
      ex.done = true;
      res.cork(() => {
        res.writeStatus('101 Switching Protocols');
        for (const [k, v] of headers) res.writeHeader(k, v);
        // No subprotocol and no extension: CometBFT's Upgrader negotiates neither.
        res.upgrade<WsUserData>({ conn }, key, '', '', context);
      });
    } catch (e) {
      this.internalError(res, ex, [], e);
    }
  }
}

/**
 * The first version of this server took `{ laddr, maxBodyBytes, routes }`; callers not yet passing
 * `config` get the `[rpc]` defaults (with their max_body_bytes) and a warning.
 */
function legacyConfig(opts: NodeRpcServerOptions, log: Logger | undefined): RpcConfig {
  const legacy = opts as unknown as { maxBodyBytes?: number };
  log?.warn('node RPC: no [rpc] config given; using defaults');
  const rpc = defaultNodeConfig().rpc;
  return legacy.maxBodyBytes ? { ...rpc, maxBodyBytes: legacy.maxBodyBytes } : rpc;
}

/**
 * http_uri_handler.go getParam: the URL query first, then Request.FormValue, which reads a
 * `application/x-www-form-urlencoded` body (POST, PUT, PATCH) or a `multipart/form-data` one (any
 * method with a body; a GET or HEAD to a method's path is served without reading its body).
 */
function uriParamGetter(info: RequestInfo, body: Buffer): (name: string) => string {
  let query: Map<string, string[]> | undefined;
  let form: Map<string, string[]> | null | undefined;
  let multipart = false;
  return (name) => {
    query ??= parseGoQuery(info.query);
    const v = queryGet(query, name);
    if (v !== '') return v;
    if (form === undefined) {
      const m = info.method;
      if ((m === 'POST' || m === 'PUT' || m === 'PATCH') && isFormContentType(info.contentType)) form = parseGoQuery(body.toString('utf8'));
      else {
        form = body.length === 0 ? null : parseGoMultipartForm(info.contentType, body);
        multipart = form !== null;
      }
    }
    if (form === null) return '';
    // FormValue reads r.Form: ParseForm puts a url-encoded body's values before the query's, while
    // ParseMultipartForm appends the parts' values after them. So a name present in the query,
    // even empty, hides the multipart values.
    if (multipart && query.has(name)) return '';
    return queryGet(form, name);
  };
}

/** Whether a request's headers announce a body (a non-zero Content-Length, or chunks). */
function announcesBody(req: HttpRequest): boolean {
  const cl = req.getHeader('content-length');
  return (cl !== '' && cl !== '0') || req.getHeader('transfer-encoding') !== '';
}

function firstNonSpace(b: Buffer): number {
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return c;
  }
  return -1;
}

/** gorilla tokenListContainsValue: comma-separated tokens, compared case-insensitively. */
function hasToken(header: string, token: string): boolean {
  return header.split(',').some((t) => t.trim().toLowerCase() === token);
}

/** gorilla isValidChallengeKey: base64 of 16 bytes. */
function validChallengeKey(key: string): boolean {
  return key.length === 24 && /^[A-Za-z0-9+/]{22}==$/.test(key);
}
