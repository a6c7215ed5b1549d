/**
 * The query router: one table of unary handlers, keyed by gRPC method, that the gRPC server, the
 * REST gateway and the node RPC's `abci_query` all call, so each query is written once
 * (cosmos-sdk: baseapp/grpcrouter.go GRPCQueryRouter, whose routes both the gRPC server and
 * `abci_query` reach; cosmos/cosmos-sdk:baseapp/abci.go).
 *
 * - Services are registered with their @bufbuild/protobuf descriptors; handlers take and return
 *   messages. Nothing here knows a module.
 * - A service answers under its own name (`chain.auth.v1beta1.Query`) and under the other
 *   spelling of the names registry (`cosmos.auth.v1beta1.Query`): same descriptors, same handler.
 * - Heights: the client's `x-cosmos-block-height` (gRPC metadata, REST header, abci_query
 *   `height`) goes through `resolveHeight`, which refuses what cannot be served and turns
 *   "latest" into a number; the handler sees the result as `ctx.height`, and the servers echo it
 *   (response header `x-cosmos-block-height`, abci_query `height`; CosmJS needs it non-zero).
 * - Responses pass through the names registry: every Any's type URL is emitted in its spelling
 *   (any.ts), unless the service asked for verbatim Anys.
 */
import {
  clone,
  create,
  createRegistry,
  fromBinary,
  isMessage,
  toBinary,
  type DescFile,
  type DescMessage,
  type DescMethod,
  type DescService,
  type Message,
  type MessageInitShape,
  type MessageShape,
  type Registry,
} from '@bufbuild/protobuf';
import type { GenService } from '@bufbuild/protobuf/codegenv2';
import type { RequestQuery, ResponseQuery } from '../abci/types.js';
import { abciInfo, AbciError, GrpcCode, GrpcStatusError, grpcErrorToAbci, sdkErrors } from './errors.js';
import { SPEC_NAMES, type Names } from '../names/index.js';
import { aliasRegistry, emitTypeUrl, mapAnyTypeUrls, reachesAny } from './any.js';

/** Request metadata: lower-case keys (gRPC metadata, or the REST headers that map to it). */
export type Metadata = ReadonlyMap<string, readonly string[]>;

/** What a handler knows about its call. */
export interface CallContext {
  readonly method: DescMethod;
  /**
   * The height to answer at: the requested height as `resolveHeight` accepted it, or the latest
   * height when none was requested. Undefined only when the router has no `resolveHeight` and the
   * client asked for no height.
   */
  readonly height: bigint | undefined;
  readonly metadata: Metadata;
  /** Aborted when the client goes away or its deadline passes; long handlers should watch it. */
  readonly signal: AbortSignal;
}

export type HandlerResult<O extends DescMessage> = MessageShape<O> | MessageInitShape<O>;

/** A unary method: request message in, response message (or its init shape) out; throw to fail. */
export type UnaryHandler<I extends DescMessage = DescMessage, O extends DescMessage = DescMessage> = (
  req: MessageShape<I>,
  ctx: CallContext,
) => HandlerResult<O> | Promise<HandlerResult<O>>;

/**
 * A service's handlers, keyed by the method's local name (`account`, as generated code names it)
 * or its proto name (`Account`). A method left out answers Unimplemented.
 */
export type ServiceImpl<S extends DescService = DescService> =
  S extends GenService<infer M> ? { [K in keyof M]?: UnaryHandler<M[K]['input'], M[K]['output']> } : Record<string, UnaryHandler | undefined>;

export interface RegisterOptions {
  /**
   * Methods (proto names) that abci_query refuses with `can't route a broadcast tx message`
   * (code 18), as baseapp/abci.go Query refuses the tx service's BroadcastTx.
   */
  notAbciRoutable?: readonly string[];
  /**
   * Methods (proto names) whose responses keep Any type URLs as the handler built them, e.g. a
   * decoded tx, whose messages must re-encode to the bytes that were signed.
   */
  verbatimAny?: readonly string[];
}

/** One routable method. */
export interface Route {
  readonly desc: DescMethod;
  readonly service: DescService;
  /** Canonical gRPC path, `/chain.auth.v1beta1.Query/Account`. */
  readonly path: string;
  readonly handler: UnaryHandler | undefined;
  readonly abciRoutable: boolean;
  readonly verbatimAny: boolean;
}

export interface CallOptions {
  /** Requested height; undefined or 0n means latest. */
  height?: bigint;
  metadata?: Metadata;
  signal?: AbortSignal;
}

export interface CallResult {
  response: Message;
  /** The height served (CallContext.height). */
  height: bigint | undefined;
}

export interface QueryRouterOptions {
  /** Emit spelling of type URLs and service names (app.toml `[compat] upstream-names`). */
  names?: Names;
  /**
   * More message types for Any (accounts, keys, tx messages: the chain's type registry). The
   * files of registered services are always included.
   */
  registry?: Registry;
  /**
   * Validates a requested height (undefined = latest) and returns the height that will be served;
   * throws an AbciError for heights that cannot be served (cosmos-sdk baseapp createQueryContext).
   * Without it the requested height is passed through and "latest" stays undefined.
   */
  resolveHeight?: (requested: bigint | undefined) => bigint;
}

const EMPTY_METADATA: Metadata = new Map();
const NEVER_ABORTED = new AbortController().signal;

interface ServiceEntry {
  desc: DescService;
  routes: Map<string, Route>;
}

/** Result of resolving a gRPC path: the route, or the status grpc-go answers for it. */
/** A gRPC status (code and message), as the transports report it (rpc/grpc/status.ts). */
export interface Status {
  code: GrpcCode;
  message: string;
}

export type Resolved = { route: Route } | { error: Status };

export class QueryRouter {
  readonly names: Names;
  private readonly services = new Map<string, ServiceEntry>();
  private readonly extraRegistry: Registry | undefined;
  private readonly resolveHeightHook: ((h: bigint | undefined) => bigint) | undefined;
  private cache: { version: number; files: DescFile[]; registry: Registry } | null = null;
  private _version = 0;

  constructor(opts: QueryRouterOptions = {}) {
    this.names = opts.names ?? SPEC_NAMES;
    this.extraRegistry = opts.registry;
    this.resolveHeightHook = opts.resolveHeight;
  }

  /** Bumped by every registration: servers rebuild their tables (REST routes, reflection) when it moves. */
  get version(): number {
    return this._version;
  }

  /**
   * Registers a service's unary methods. Streaming methods are not served (the SDK's query and
   * tx services have none) and answer Unimplemented. Registering a name twice (in either
   * spelling) throws.
   */
  registerService<S extends DescService>(desc: S, impl: ServiceImpl<S>, opts: RegisterOptions = {}): void {
    const key = SPEC_NAMES.parseTypeUrl(desc.typeName);
    if (this.services.has(key)) throw new Error(`gRPC service ${desc.typeName} is registered twice`);
    const handlers = impl as Record<string, UnaryHandler | undefined>;
    const known = new Set(desc.methods.flatMap((m) => [m.localName, m.name]));
    for (const k of Object.keys(handlers)) {
      if (!known.has(k)) throw new Error(`gRPC service ${desc.typeName} has no method ${k}`);
    }
    const routes = new Map<string, Route>();
    for (const m of desc.methods) {
      const handler = m.methodKind === 'unary' ? (handlers[m.localName] ?? handlers[m.name]) : undefined;
      routes.set(m.name, {
        desc: m,
        service: desc,
        path: `/${key}/${m.name}`,
        handler,
        abciRoutable: !(opts.notAbciRoutable ?? []).includes(m.name),
        verbatimAny: (opts.verbatimAny ?? []).includes(m.name),
      });
    }
    this.services.set(key, { desc, routes });
    this._version++;
    this.cache = null;
  }

  /** The registered services, in registration order. */
  serviceDescs(): DescService[] {
    return [...this.services.values()].map((s) => s.desc);
  }

  /** Every route, in registration order (services, then their methods in proto order). */
  routes(): Route[] {
    return [...this.services.values()].flatMap((s) => [...s.routes.values()]);
  }

  /** A service by either spelling of its full name. */
  service(name: string): DescService | undefined {
    return this.services.get(SPEC_NAMES.parseTypeUrl(name))?.desc;
  }

  /**
   * The route of a gRPC path (`/svc/Method`, leading slash optional, either spelling), or the
   * status grpc-go answers (server.go handleStream): a path without `/` is `malformed method
   * name`, an unknown service `unknown service X`, an unknown method `unknown method M for
   * service X` — all Unimplemented.
   */
  resolve(path: string): Resolved {
    const p = path.startsWith('/') ? path.slice(1) : path;
    const slash = p.lastIndexOf('/');
    if (slash < 0) return { error: { code: GrpcCode.Unimplemented, message: `malformed method name: ${JSON.stringify(path)}` } };
    const svc = p.slice(0, slash);
    const method = p.slice(slash + 1);
    const entry = this.services.get(SPEC_NAMES.parseTypeUrl(svc));
    if (!entry) return { error: { code: GrpcCode.Unimplemented, message: `unknown service ${svc}` } };
    const route = entry.routes.get(method);
    if (!route) return { error: { code: GrpcCode.Unimplemented, message: `unknown method ${method} for service ${svc}` } };
    return { route };
  }

  /** The route of a gRPC path, or undefined. */
  lookup(path: string): Route | undefined {
    const r = this.resolve(path);
    return 'route' in r ? r.route : undefined;
  }

  /** Whether `path` is a registered method (abci_query tries the router first when it is). */
  has(path: string): boolean {
    return this.lookup(path) !== undefined;
  }

  /** The registered services' files and all their imports, each after its imports. */
  files(): DescFile[] {
    return this.built().files;
  }

  /** Types of the registered services' files plus the extra registry; finds either spelling. */
  get registry(): Registry {
    return this.built().registry;
  }

  private built(): { files: DescFile[]; registry: Registry } {
    if (this.cache && this.cache.version === this._version) return this.cache;
    const files: DescFile[] = [];
    const seen = new Set<string>();
    const visit = (f: DescFile) => {
      if (seen.has(f.name)) return;
      seen.add(f.name);
      for (const d of f.dependencies) visit(d);
      files.push(f);
    };
    for (const s of this.services.values()) visit(s.desc.file);
    const base = this.extraRegistry ? createRegistry(this.extraRegistry, ...files) : createRegistry(...files);
    this.cache = { version: this._version, files, registry: aliasRegistry(base) };
    return this.cache;
  }

  /**
   * The height a call is served at. A negative height is refused here for every transport
   * (createQueryContext: `cannot query with height < 0; please provide a valid height`).
   */
  resolveHeight(requested: bigint | undefined): bigint | undefined {
    const h = requested === 0n ? undefined : requested;
    if (h !== undefined && h < 0n) throw sdkErrors.invalidRequest.wrap('cannot query with height < 0; please provide a valid height');
    return this.resolveHeightHook ? this.resolveHeightHook(h) : h;
  }

  /**
   * Runs a route's handler. Throws what the handler throws (GrpcStatusError, AbciError, Error),
   * an AbciError for a height that cannot be served, Unimplemented for a method without handler.
   */
  async call(route: Route, req: Message, opts: CallOptions = {}): Promise<CallResult> {
    return this.callAt(route, req, this.resolveHeight(opts.height), opts);
  }

  /**
   * call() at a height already resolved by resolveHeight() (the servers resolve it first, so that
   * an error answer can carry the height header too); `opts.height` is ignored.
   */
  async callAt(route: Route, req: Message, height: bigint | undefined, opts: CallOptions = {}): Promise<CallResult> {
    if (!route.handler) throw new GrpcStatusError(GrpcCode.Unimplemented, `method ${route.desc.name} not implemented`);
    // `metadata` and `signal` are read only if the handler asks: a transport may make them on demand.
    const ctx: CallContext = {
      method: route.desc,
      height,
      get metadata() {
        return opts.metadata ?? EMPTY_METADATA;
      },
      get signal() {
        return opts.signal ?? NEVER_ABORTED;
      },
    };
    const raw = await route.handler!(req, ctx);
    const output = route.desc.output;
    let response = toMessage(output, raw);
    if (!route.verbatimAny && reachesAny(output)) {
      // A copy: the handler may have returned a cached or stored object.
      response = clone(output, response);
      mapAnyTypeUrls(output, response, emitTypeUrl(this.names), this.registry);
    }
    return { response, height };
  }

  /** Bytes in, bytes out (the request and response protobuf encodings). Throws like call(). */
  async callBytes(path: string, data: Uint8Array, opts: CallOptions = {}): Promise<{ value: Uint8Array; height: bigint | undefined }> {
    const r = this.resolve(path);
    if ('error' in r) throw new GrpcStatusError(r.error.code, r.error.message);
    const req = decodeRequest(r.route.desc.input, data);
    const { response, height } = await this.call(r.route, req, opts);
    return { value: toBinary(r.route.desc.output, response), height };
  }

  /**
   * abci_query for a gRPC path (cosmos-sdk baseapp/abci.go Query → handleQueryGRPC): request
   * bytes in `data`, height 0 = latest, `prove` ignored. Success: code 0, the response bytes,
   * `height` = the height served. Failures: unknown path → 6 `unknown query path`; a refused
   * method → 18; a height that cannot be served → the resolver's error as is; a handler error →
   * gRPCErrorToSDKError (NotFound 22, InvalidArgument/FailedPrecondition 18, Unauthenticated 4,
   * other statuses and SDK errors 6, errors without a status 18).
   */
  async abciQuery(req: RequestQuery): Promise<ResponseQuery> {
    const base: ResponseQuery = { code: 0, log: '', info: '', index: 0n, key: new Uint8Array(0), value: new Uint8Array(0), proofOps: null, height: 0n, codespace: '' };
    const fail = (err: unknown, height = 0n): ResponseQuery => {
      const { codespace, code, log } = abciInfo(err);
      return { ...base, code, codespace, log, height };
    };
    const route = this.lookup(req.path);
    if (!route) return fail(sdkErrors.unknownRequest.wrap('unknown query path'));
    if (!route.abciRoutable) return fail(sdkErrors.invalidRequest.wrap("can't route a broadcast tx message"));
    let height: bigint | undefined;
    try {
      height = this.resolveHeight(req.height);
    } catch (e) {
      return fail(e instanceof AbciError ? e : sdkErrors.invalidRequest.wrap(errText(e)));
    }
    const served = height ?? 0n;
    let request: Message;
    try {
      request = fromBinary(route.desc.input, req.data);
    } catch (e) {
      return fail(sdkErrors.invalidRequest.wrap(errText(e)), served);
    }
    try {
      const { response } = await this.callAt(route, request, height);
      return { ...base, value: toBinary(route.desc.output, response), height: served };
    } catch (e) {
      return fail(queryError(e), served);
    }
  }
}

/** A handler's result as a message of the method's output type. */
function toMessage(output: DescMessage, raw: unknown): Message {
  if (raw === null || typeof raw !== 'object') throw new GrpcStatusError(GrpcCode.Internal, `handler returned ${String(raw)}, want ${output.typeName}`);
  if (isMessage(raw)) {
    if (raw.$typeName !== output.typeName) throw new GrpcStatusError(GrpcCode.Internal, `handler returned ${raw.$typeName}, want ${output.typeName}`);
    return raw;
  }
  return create(output, raw as MessageInitShape<DescMessage>);
}

/** grpc-go server.go processUnaryRPC: an undecodable request is Internal. */
export function decodeRequest(input: DescMessage, data: Uint8Array): Message {
  try {
    return fromBinary(input, data);
  } catch (e) {
    throw new GrpcStatusError(GrpcCode.Internal, `grpc: error unmarshalling request: ${errText(e)}`);
  }
}

/** gRPCErrorToSDKError (cosmos-sdk baseapp/abci.go). */
export function queryError(e: unknown): AbciError {
  if (e instanceof GrpcStatusError) return grpcErrorToAbci(e);
  // A registered SDK error carries gRPC Unknown, which maps to 6; its text is Go's Error() order.
  if (e instanceof AbciError) return sdkErrors.unknownRequest.wrap(e.message);
  return sdkErrors.invalidRequest.wrap(errText(e));
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
