/**
 * The REST gateway on uWebSockets.js: HTTP/1.1 JSON over the QueryRouter's services, with the
 * routes generated from each method's `google.api.http` option, behaving as the Cosmos SDK's API
 * server does — a grpc-gateway v1.16 ServeMux with the SDK's JSON marshaler, proto error handler
 * and header matcher (cosmos-sdk server/api/server.go; cosmos/cosmos-sdk:baseapp/grpcrouter.go).
 *
 * Layers, outermost first:
 * 1. `[api] max-open-connections`: in-flight requests beyond it get 503 (upstream's limit
 *    listener makes them wait in accept; uWS has no accept hook) and the connection is closed.
 * 2. `[api] enabled-unsafe-cors`: gorilla/handlers CORS with `AllowedHeaders: Content-Type`, as
 *    the SDK configures it: a request with an Origin gets `Access-Control-Allow-Origin: *`; a
 *    preflight (OPTIONS) is answered here, 200, with `Access-Control-Allow-Headers` echoing the
 *    requested non-simple headers (only Content-Type may be among them, else 403), 405 for a
 *    method other than GET/HEAD/POST, 400 without Access-Control-Request-Method.
 * 3. `[api] rpc-max-body-bytes`: a larger body is InvalidArgument `http: request body too large`
 *    (http.MaxBytesReader's error, which the gateway's decoder reports) and the connection closes.
 * 4. The mux (runtime/mux.go): the path is split on `/` and each segment percent-decoded (grpc-
 *    gateway v1 decodes the whole path first, so `%2F` could not reach a variable; per segment it
 *    can), `/cosmos/...` is read as `/chain/...` (names registry), the verb is split off the last
 *    segment, and the bindings of the request's method are tried, the most recently registered
 *    first (ServeMux.Handle prepends): so of two methods with the same pattern the later one
 *    answers, as AddressStringToBytes does for auth's `/bech32/{…}` (cosmos-sdk #23281). No
 *    match → 501 `{"code":12,"message":"Not Implemented","details":[]}` (runtime.ErrUnknownURI),
 *    also when the path matches another method only — except a form-encoded POST to a GET
 *    binding, which is served as that GET (isPathLengthFallback).
 * 5. The generated handler: the body (`body: "*"` or a field) decoded with the SDK JSON codec,
 *    then path variables (`type mismatch, parameter: …`), then — unless the body is `*` — query
 *    parameters (query-params.ts); all InvalidArgument (400). Request metadata: `x-cosmos-block-height`
 *    (or, without that header, `?height=` unless the request message has a `height` field)
 *    and `Grpc-Metadata-*` headers (cosmos-sdk CustomGRPCHeaderMatcher), permanent HTTP headers as
 *    `grpcgateway-*`, `x-forwarded-for`/`-host`; `Grpc-Timeout` sets a deadline.
 * 6. The answer: the response in the SDK's JSON, `Content-Type: application/json`, the served
 *    height in `Grpc-Metadata-X-Cosmos-Block-Height` (upstream's name) and `X-Cosmos-Block-Height`;
 *    errors as `{code, message, details: []}` with runtime.HTTPStatusFromCode (errors.ts).
 */
import { create, type DescField, type DescMessage, type Message } from '@bufbuild/protobuf';
import type { ApiConfig } from '../../config/app-config.js';
import type { Logger } from '../../log.js';
import { BLOCK_HEIGHT_HEADER, GrpcCode, parseGrpcTimeout, parseHeightHeader, statusError, toStatus, type Status } from '../grpc/status.js';
import type { Metadata, QueryRouter, Route } from '../../app/query-router.js';
import { goHtmlEscape, RPC_JSON_MAX_DEPTH, scanJson } from '../server/gojson.js';
import { goUnescape, isFormContentType, parseGoQuery } from '../server/http.js';
import { loopSlice, type LoopSlice } from '../server/slice.js';
import { connectionClose, CONN_DROPPED_BY_UWS, CONN_KEEP, hasCloseToken, uwsRefusesContentLength, listen, parseContentLength, pauseUntilAnswer, parseListenAddr, readBody, remoteAddress, send, uws, type HttpRequest, type HttpResponse, type Listening, type ResponseState, type TemplatedApp } from '../server/uws.js';
import { errorBody, httpStatusFromCode, statusLine, UNKNOWN_URI } from './errors.js';
import { httpBindings, PathTemplate, type HttpBinding } from './http-rule.js';
import { fieldByName, fieldToSdkJson, fromSdkJson, readField, toSdkJson } from './json.js';
import { populatePathParam, populateQueryParams, protoPath, QueryParamError, type FieldFilter } from './query-params.js';

/** app.toml `[api] rpc-max-body-bytes` default (src/config/app-config.ts; the SDK's is the same 1 MB). */
export const DEFAULT_MAX_BODY_BYTES = 1_000_000;

export interface RestGatewayOptions {
  /** `[api] address`, e.g. `tcp://127.0.0.1:1317` (port 0 picks a free port). */
  address: string;
  router: QueryRouter;
  /** `[api] rpc-max-body-bytes`. */
  maxBodyBytes?: number;
  /** `[api] enabled-unsafe-cors`. */
  enabledUnsafeCors?: boolean;
  /** `[api] max-open-connections`; 0 = unlimited. */
  maxOpenConnections?: number;
  logger?: Logger;
  /** The per-loop-turn bound on RPC work; the process-wide one by default (../server/slice.ts). */
  slice?: LoopSlice;
}

/** RestGatewayOptions from app.toml's `[api]` section. */
export function restGatewayOptions(cfg: ApiConfig, router: QueryRouter, logger?: Logger): RestGatewayOptions {
  return {
    address: cfg.address,
    router,
    maxBodyBytes: cfg.rpcMaxBodyBytes,
    enabledUnsafeCors: cfg.enabledUnsafeCors,
    maxOpenConnections: cfg.maxOpenConnections,
    logger,
  };
}

/**
 * REST calls under way at once. Each ends after an await, so its work runs in the microtasks
 * after the slice's clock was read; 4 of them (a typical call costs well under a millisecond)
 * bound that unmeasured work per loop iteration to a few ms.
 */
export const REST_MAX_RUNNING = 4;

/** One HTTP binding of one method, ready to match. */
export interface RestRoute {
  readonly route: Route;
  readonly binding: HttpBinding;
  readonly template: PathTemplate;
  /** The request field the body fills (`body: "field"`), if not the whole message. */
  readonly bodyField: DescField | undefined;
  readonly responseField: DescField | undefined;
  /** Field paths that path variables and the body fill: query parameters skip them. */
  readonly filter: FieldFilter;
}

const JSON_HEADER: readonly [string, string] = ['Content-Type', 'application/json'];
const UPSTREAM_HEIGHT_HEADER = 'Grpc-Metadata-X-Cosmos-Block-Height';
const HEIGHT_HEADER = 'X-Cosmos-Block-Height';
const EMPTY = Buffer.alloc(0);

/** runtime/mux.go isPermanentHTTPHeader: forwarded as `grpcgateway-<name>` metadata. */
const PERMANENT_HEADERS = new Set(
  [
    'accept',
    'accept-charset',
    'accept-language',
    'accept-ranges',
    'authorization',
    'cache-control',
    'content-type',
    'cookie',
    'date',
    'expect',
    'from',
    'host',
    'if-match',
    'if-modified-since',
    'if-none-match',
    'if-schedule-tag-match',
    'if-unmodified-since',
    'max-forwards',
    'origin',
    'pragma',
    'referer',
    'user-agent',
    'via',
    'warning',
  ],
);

/** gorilla/handlers cors.go defaults, plus the SDK's AllowedHeaders(Content-Type). */
const CORS_SIMPLE_HEADERS = new Set(['Accept', 'Accept-Language', 'Content-Language', 'Origin']);
const CORS_ALLOWED_HEADERS = new Set([...CORS_SIMPLE_HEADERS, 'Content-Type']);
const CORS_METHODS = new Set(['GET', 'HEAD', 'POST']);

interface Exchange extends ResponseState {
  /** A HEAD request: answered without a body. */
  head: boolean;
  ac: AbortController | null;
  counted: boolean;
  timer: NodeJS.Timeout | null;
}

/** What was read from uWS's HttpRequest while it was valid. */
interface RequestInfo {
  method: string;
  url: string;
  query: string;
  origin: string;
  hasAcrm: boolean;
  acrm: string;
  acrh: string;
  contentType: string;
  contentLength: string;
  chunked: boolean;
  host: string;
  grpcTimeout: string;
  metadata: Map<string, string[]>;
  /** The connection after the answer, from the Connection headers (uws.ts connectionClose). */
  connClose: number;
}

export class RestGateway {
  private readonly router: QueryRouter;
  private readonly maxBody: number;
  private readonly cors: boolean;
  private readonly maxOpen: number;
  private readonly log: Logger | undefined;
  private readonly slice: LoopSlice;
  private app: TemplatedApp | null = null;
  private listening: Listening | null = null;
  private inflight = 0;
  /** REST calls started and not yet answered (see serveInSlice). */
  private running = 0;
  private readonly blocked: Array<() => void> = [];
  private table: { version: number; byMethod: Map<string, RestRoute[]> } | null = null;

  constructor(private readonly opts: RestGatewayOptions) {
    this.router = opts.router;
    this.maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.cors = opts.enabledUnsafeCors ?? false;
    this.maxOpen = opts.maxOpenConnections ?? 0;
    this.log = opts.logger;
    this.slice = opts.slice ?? loopSlice;
  }

  get port(): number {
    return this.listening?.port ?? 0;
  }

  get host(): string {
    return this.listening?.host ?? '';
  }

  async start(): Promise<void> {
    if (this.app) throw new Error('REST gateway: already started');
    const app = uws.App();
    this.app = app;
    app.any('/*', (res, req) => this.onHttp(res, req));
    try {
      this.listening = await listen(app, parseListenAddr(this.opts.address, 'api.address'), 'REST gateway');
    } catch (e) {
      this.app = null;
      throw e;
    }
    this.routes(); // build now, so a bad template is logged at start
    this.log?.info('REST gateway listening', { addr: `${this.listening.host}:${this.listening.port}` });
  }

  /** Stops listening and closes open connections (uWS has no graceful drain for HTTP). */
  close(): void {
    this.listening?.close();
    this.listening = null;
    this.app = null;
  }

  /** The routing table by HTTP method, most recently registered binding first. */
  routes(): ReadonlyMap<string, readonly RestRoute[]> {
    const v = this.router.version;
    if (this.table && this.table.version === v) return this.table.byMethod;
    const byMethod = new Map<string, RestRoute[]>();
    for (const route of this.router.routes()) {
      if (route.desc.methodKind !== 'unary') continue;
      for (const binding of httpBindings(route.desc)) {
        const rr = this.compile(route, binding);
        if (!rr) continue;
        const list = byMethod.get(binding.method) ?? [];
        list.unshift(rr); // ServeMux.Handle prepends: the last registered is tried first
        byMethod.set(binding.method, list);
      }
    }
    this.table = { version: v, byMethod };
    return byMethod;
  }

  private compile(route: Route, binding: HttpBinding): RestRoute | null {
    const input = route.desc.input;
    try {
      const template = PathTemplate.parse(this.router.names.parseRestPath(binding.template));
      const filter: string[][] = [];
      for (const v of template.variables) {
        if (!resolvesField(input, v.path)) throw new Error(`path variable ${v.path.join('.')} is not a field of ${input.typeName}`);
        filter.push(protoPath(input, v.path));
      }
      let bodyField: DescField | undefined;
      if (binding.body !== '' && binding.body !== '*') {
        bodyField = fieldByName(input, binding.body);
        if (!bodyField) throw new Error(`body field ${binding.body} is not a field of ${input.typeName}`);
        filter.push([bodyField.name]);
      }
      let responseField: DescField | undefined;
      if (binding.responseBody !== '') {
        responseField = fieldByName(route.desc.output, binding.responseBody);
        if (!responseField) throw new Error(`response_body ${binding.responseBody} is not a field of ${route.desc.output.typeName}`);
      }
      return { route, binding, template, bodyField, responseField, filter };
    } catch (e) {
      this.log?.warn('REST gateway: binding skipped', { method: route.path, template: binding.template, err: (e as Error).message });
      return null;
    }
  }

  // --------------------------------------------------------------------------------------------

  /** Nothing thrown may leave uWS's callback (the process would end): a bug here is logged and answered 500. */
  private onHttp(res: HttpResponse, req: HttpRequest): void {
    const ex: Exchange = { aborted: false, done: false, head: false, ac: null, counted: false, timer: null };
    try {
      // First, as uWS requires: a response not answered synchronously needs an abort handler.
      res.onAborted(() => {
        ex.aborted = true;
        ex.ac?.abort(statusError(GrpcCode.Canceled, 'context canceled'));
        this.release(ex);
      });
      this.handleHttp(res, req, ex);
    } catch (e) {
      this.log?.error('REST gateway: request handler failed', { err: e as Error });
      try {
        this.fail(res, ex, [], { code: GrpcCode.Internal, message: e instanceof Error ? e.message : String(e) });
      } catch (e2) {
        this.log?.error('REST gateway: cannot answer', { err: e2 as Error });
      }
    }
  }

  private handleHttp(res: HttpResponse, req: HttpRequest, ex: Exchange): Exchange {
    let info: RequestInfo;
    try {
      info = readRequest(req, res);
      ex.head = info.method === 'HEAD';
      ex.connClose = info.connClose;
    } catch (e) {
      this.fail(res, ex, [], toStatus(e));
      return ex;
    }
    if (this.maxOpen > 0 && this.inflight >= this.maxOpen) {
      this.answer(res, ex, 503, [JSON_HEADER], errorBody({ code: GrpcCode.Unavailable, message: 'too many open connections' }), true);
      return ex;
    }
    this.inflight++;
    ex.counted = true;

    const headers: Array<readonly [string, string]> = [];
    if (this.cors && info.origin !== '') {
      if (info.method === 'OPTIONS') {
        this.preflight(res, ex, info);
        return ex;
      }
      headers.push(['Access-Control-Allow-Origin', '*']);
    } else if (this.cors && info.method === 'OPTIONS') {
      // gorilla/handlers: an OPTIONS request from a disallowed (here: absent) origin ends empty.
      this.answer(res, ex, 200, [], '');
      return ex;
    }

    const cl = parseContentLength(info.contentLength);
    if (cl === null || info.connClose === CONN_DROPPED_BY_UWS) {
      // net/http readRequest: `bad Content-Length` is answered by the server itself, 400, and the
      // connection closed. uWS 20.30 drops the connection right after this handler; the answer is
      // written so that it leaves first (uws.ts CONN_DROPPED_BY_UWS).
      this.answer(res, ex, 400, [['Content-Type', 'text/plain; charset=utf-8']], '400 Bad Request', true);
      return ex;
    }
    const hasBody = (cl !== undefined && cl !== 0) || info.chunked;
    if (!hasBody) {
      this.serveInSlice(res, ex, info, headers, EMPTY);
      return ex;
    }
    if (cl !== undefined && cl > this.maxBody) {
      this.tooLarge(res, ex, headers);
      return ex;
    }
    readBody(
      res,
      ex,
      this.maxBody,
      cl,
      (body) => {
        if (body === null) this.tooLarge(res, ex, headers);
        else this.serveInSlice(res, ex, info, headers, body);
      },
      (e) => this.fail(res, ex, headers, toStatus(e)),
    );
    return ex;
  }

  /**
   * Serves now, or in a later loop turn with the socket paused meanwhile (../server/slice.ts).
   * A REST call finishes after an await (the query router is async), past the slice's clock, so
   * the calls under way are bounded too: beyond REST_MAX_RUNNING the next waits for one to end.
   */
  private serveInSlice(res: HttpResponse, ex: Exchange, info: RequestInfo, headers: Array<readonly [string, string]>, body: Buffer): void {
    if (this.running < REST_MAX_RUNNING && this.slice.admitHttp()) {
      this.run(res, ex, info, headers, body);
      return;
    }
    // Resumed with the answer (uws.ts pauseUntilAnswer): resuming before the async call let
    // uWS's timeout close the connection unanswered when the call took 8 s or more.
    pauseUntilAnswer(res, ex);
    const attempt = (): void => {
      if (ex.aborted || ex.done) return;
      if (this.running >= REST_MAX_RUNNING) {
        this.blocked.push(attempt);
        return;
      }
      this.run(res, ex, info, headers, body);
    };
    this.slice.defer(attempt);
  }

  private run(res: HttpResponse, ex: Exchange, info: RequestInfo, headers: Array<readonly [string, string]>, body: Buffer): void {
    this.running++;
    void this.serve(res, ex, info, headers, body).finally(this.ended);
  }

  private readonly ended = (): void => {
    this.running--;
    const next = this.blocked.shift();
    if (next) this.slice.defer(next);
  };

  private tooLarge(res: HttpResponse, ex: Exchange, headers: Array<readonly [string, string]>): void {
    const st: Status = { code: GrpcCode.InvalidArgument, message: 'http: request body too large' };
    this.answer(res, ex, httpStatusFromCode(st.code), [...headers, JSON_HEADER], errorBody(st), true);
  }

  /** gorilla/handlers cors.go ServeHTTP, OPTIONS branch, with the SDK's options. */
  private preflight(res: HttpResponse, ex: Exchange, info: RequestInfo): void {
    if (!info.hasAcrm) return this.answer(res, ex, 400, [], '');
    if (!CORS_METHODS.has(info.acrm)) return this.answer(res, ex, 405, [], '');
    const echoed: string[] = [];
    for (const raw of info.acrh.split(',')) {
      const h = canonicalHeaderKey(raw.trim());
      if (h === '' || CORS_SIMPLE_HEADERS.has(h)) continue;
      if (!CORS_ALLOWED_HEADERS.has(h)) return this.answer(res, ex, 403, [], '');
      echoed.push(h);
    }
    const headers: Array<readonly [string, string]> = [];
    if (echoed.length > 0) headers.push(['Access-Control-Allow-Headers', echoed.join(',')]);
    headers.push(['Access-Control-Allow-Origin', '*']);
    this.answer(res, ex, 200, headers, '');
  }

  private async serve(res: HttpResponse, ex: Exchange, info: RequestInfo, headers: Array<readonly [string, string]>, body: Buffer): Promise<void> {
    let height: bigint | undefined;
    try {
      const found = this.match(info);
      if (!found) return this.fail(res, ex, headers, UNKNOWN_URI);
      const { rr, params, formBody } = found;
      const input = rr.route.desc.input;
      const msg = this.buildRequest(rr, input, params, info, formBody ? EMPTY : body, formBody ? body.toString('utf8') : '');

      ex.ac = new AbortController();
      if (info.grpcTimeout !== '') {
        const ms = parseGrpcTimeout(info.grpcTimeout);
        if (ms === null) throw statusError(GrpcCode.InvalidArgument, `invalid grpc-timeout: ${info.grpcTimeout}`);
        ex.timer = setTimeout(() => {
          ex.ac?.abort(statusError(GrpcCode.DeadlineExceeded, 'context deadline exceeded'));
          this.fail(res, ex, headers, { code: GrpcCode.DeadlineExceeded, message: 'context deadline exceeded' });
        }, ms);
      }
      // cosmos-sdk RegisterGRPCServer reads the header only when it is given once.
      const hv = info.metadata.get(BLOCK_HEIGHT_HEADER);
      const requested = hv !== undefined ? (hv.length === 1 ? parseHeightHeader(hv[0]!) : undefined) : heightParam(input, info.query);
      height = this.router.resolveHeight(requested);
      const { response } = await this.router.callAt(rr.route, msg, height, { metadata: info.metadata as Metadata, signal: ex.ac.signal });
      if (ex.aborted || ex.done) return;
      const output = rr.route.desc.output;
      const json = rr.responseField ? fieldToSdkJson(output, response, rr.responseField, this.router.registry) : toSdkJson(output, response, this.router.registry);
      // json.Marshal's HTML escaping (`<` → \u003c …), as jsonpb writes strings through it.
      this.answer(res, ex, 200, [...headers, JSON_HEADER, ...heightHeaders(height)], goHtmlEscape(JSON.stringify(json)));
    } catch (e) {
      // A codec error left here comes from writing the response (an Any the registry cannot
      // resolve): grpc-gateway reports marshal errors as Unknown.
      const st = e instanceof QueryParamError ? { code: GrpcCode.InvalidArgument, message: e.message } : toStatus(e);
      this.fail(res, ex, [...headers, ...heightHeaders(height)], st);
    }
  }

  /** The binding for the request, its path variables, and whether it is a form POST served as GET. */
  private match(info: RequestInfo): { rr: RestRoute; params: Map<string, string>; formBody: boolean } | null {
    const path = this.router.names.parseRestPath(info.url);
    if (!path.startsWith('/')) throw statusError(GrpcCode.InvalidArgument, 'Bad Request');
    const raw = path.slice(1).split('/');
    let verb = '';
    const last = raw[raw.length - 1]!;
    const colon = last.lastIndexOf(':');
    if (colon === 0) return null;
    if (colon > 0) {
      raw[raw.length - 1] = last.slice(0, colon);
      verb = last.slice(colon + 1);
    }
    const components: string[] = [];
    for (const c of raw) {
      const d = goUnescape(c, 'path');
      if (d === null) throw statusError(GrpcCode.InvalidArgument, 'Bad Request');
      components.push(d);
    }
    const table = this.routes();
    for (const rr of table.get(info.method) ?? []) {
      const params = rr.template.match(components, verb);
      if (params) return { rr, params, formBody: false };
    }
    // isPathLengthFallback: a form-encoded POST may call any binding whose path matches.
    if (info.method === 'POST' && isFormContentType(info.contentType)) {
      for (const [m, list] of table) {
        if (m === 'POST') continue;
        for (const rr of list) {
          const params = rr.template.match(components, verb);
          if (params) return { rr, params, formBody: true };
        }
      }
    }
    return null;
  }

  private buildRequest(rr: RestRoute, input: DescMessage, params: Map<string, string>, info: RequestInfo, body: Buffer, form: string): Message {
    const registry = this.router.registry;
    let msg = create(input) as Message & Record<string, unknown>;
    if (rr.binding.body !== '' && body.length > 0) {
      // The gateway decodes with a json.Decoder: the first JSON value counts, whatever follows is
      // ignored, an empty body is io.EOF (an empty request), and syntax errors read as Go's.
      const scan = scanJson(body, 'decode', RPC_JSON_MAX_DEPTH);
      if (!scan.ok && scan.error !== 'EOF') throw statusError(GrpcCode.InvalidArgument, scan.error);
      if (scan.ok) {
        const parsed: unknown = JSON.parse(body.subarray(0, scan.end).toString('utf8'));
        try {
          if (rr.bodyField) {
            const f = rr.bodyField;
            const v = readField(f, parsed, registry, {}, f.name, 0);
            if (f.oneof) msg[f.oneof.localName] = { case: f.localName, value: v };
            else msg[f.localName] = v;
          } else msg = fromSdkJson(input, parsed, registry);
        } catch (e) {
          throw statusError(GrpcCode.InvalidArgument, (e as Error).message);
        }
      }
    }
    for (const [fieldPath, value] of params) {
      try {
        populatePathParam(input, msg, fieldPath, value);
      } catch (e) {
        throw statusError(GrpcCode.InvalidArgument, `type mismatch, parameter: ${fieldPath}, error: ${(e as Error).message}`);
      }
    }
    if (rr.binding.body !== '*') {
      const q = parseGoQuery(info.query);
      // Request.Form: the URL's query, then a form body's values.
      if (form !== '') for (const [k, vs] of parseGoQuery(form)) q.set(k, [...(q.get(k) ?? []), ...vs]);
      try {
        populateQueryParams(input, msg, q, rr.filter);
      } catch (e) {
        throw statusError(GrpcCode.InvalidArgument, (e as Error).message);
      }
    }
    return msg;
  }

  private fail(res: HttpResponse, ex: Exchange, headers: ReadonlyArray<readonly [string, string]>, st: Status): void {
    this.answer(res, ex, httpStatusFromCode(st.code), [...headers, JSON_HEADER], errorBody(st));
  }

  private answer(res: HttpResponse, ex: Exchange, status: number, headers: ReadonlyArray<readonly [string, string]>, body: string, close = false): void {
    if (ex.aborted || ex.done) return;
    send(res, ex, statusLine(status), headers, body, { close, head: ex.head });
    this.release(ex);
  }

  private release(ex: Exchange): void {
    if (ex.timer) {
      clearTimeout(ex.timer);
      ex.timer = null;
    }
    if (ex.counted) {
      ex.counted = false;
      this.inflight--;
    }
  }
}

/**
 * `?height=N` when no `x-cosmos-block-height` header was sent: the height as the header would
 * give it (the SDK's legacy REST spelling; grpc-gateway itself ignores the parameter). Not read
 * when the request message has a `height` field of its own, which the parameter then fills.
 */
function heightParam(input: DescMessage, query: string): bigint | undefined {
  if (query === '' || !query.includes('height=') || input.fields.some((f) => f.name === 'height')) return undefined;
  const vs = parseGoQuery(query).get('height');
  return vs !== undefined && vs.length === 1 ? parseHeightHeader(vs[0]!) : undefined;
}

function heightHeaders(h: bigint | undefined): Array<readonly [string, string]> {
  if (h === undefined) return [];
  const s = h.toString();
  return [
    [UPSTREAM_HEIGHT_HEADER, s],
    [HEIGHT_HEADER, s],
  ];
}

/** Go's textproto.CanonicalMIMEHeaderKey for ASCII tokens: `content-type` → `Content-Type`. */
function canonicalHeaderKey(h: string): string {
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(h)) return h;
  return h
    .toLowerCase()
    .split('-')
    .map((p) => (p === '' ? p : p[0]!.toUpperCase() + p.slice(1)))
    .join('-');
}

function readRequest(req: HttpRequest, res: HttpResponse): RequestInfo {
  const info: RequestInfo = {
    method: req.getCaseSensitiveMethod(),
    url: req.getUrl(),
    query: req.getQuery() ?? '',
    origin: '',
    hasAcrm: false,
    acrm: '',
    acrh: '',
    contentType: '',
    contentLength: '',
    chunked: false,
    host: '',
    grpcTimeout: '',
    metadata: new Map(),
    connClose: CONN_KEEP,
  };
  let connection: string | null = null;
  let connectionCloses = false;
  let firstContentLength: string | null = null;
  const md = info.metadata;
  const add = (k: string, v: string) => {
    const list = md.get(k);
    if (list) list.push(v);
    else md.set(k, [v]);
  };
  req.forEach((k, v) => {
    // uWS gives header names lower-cased.
    switch (k) {
      case 'origin':
        info.origin = v;
        break;
      case 'access-control-request-method':
        info.hasAcrm = true;
        info.acrm = v;
        break;
      case 'access-control-request-headers':
        info.acrh = v;
        break;
      case 'content-type':
        info.contentType = v;
        break;
      case 'content-length':
        info.contentLength = v;
        firstContentLength ??= v;
        break;
      case 'transfer-encoding':
        info.chunked = v.toLowerCase().includes('chunked');
        break;
      case 'host':
        info.host = v;
        break;
      case 'grpc-timeout':
        info.grpcTimeout = v;
        break;
      case 'connection':
        connection ??= v;
        if (hasCloseToken(v)) connectionCloses = true;
        break;
    }
    if (k === BLOCK_HEIGHT_HEADER) add(BLOCK_HEIGHT_HEADER, v);
    else if (k.startsWith('grpc-metadata-')) add(k.slice('grpc-metadata-'.length), v);
    if (PERMANENT_HEADERS.has(k)) add(`grpcgateway-${k}`, v);
  });
  if (connection !== null) info.connClose = connectionClose(connection, connectionCloses);
  // uWS drops the connection after this handler (the value uWS reads is the first one).
  if (firstContentLength !== null && uwsRefusesContentLength(firstContentLength)) info.connClose = CONN_DROPPED_BY_UWS;
  // runtime/context.go annotateContext: X-Forwarded-Host and X-Forwarded-For.
  if (!md.has('x-forwarded-host') && info.host !== '') add('x-forwarded-host', info.host);
  const ip = remoteAddress(res);
  if (ip !== '') add('x-forwarded-for', ip);
  return info;
}

/** Whether a dotted path names a field (singular messages along the way). */
function resolvesField(desc: DescMessage, path: readonly string[]): boolean {
  let d: DescMessage | undefined = desc;
  for (let i = 0; i < path.length; i++) {
    const f: DescField | undefined = d ? fieldByName(d, path[i]!) : undefined;
    if (!f) return false;
    if (i < path.length - 1) {
      if (f.fieldKind !== 'message') return false;
      d = f.message;
    }
  }
  return true;
}

