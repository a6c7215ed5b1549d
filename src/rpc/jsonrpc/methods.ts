/**
 * The node RPC route table: every method is one entry naming its parameters (wire name, type,
 * optional), its flags and its handler. The URI, JSON-RPC-over-HTTP and websocket transports, the
 * endpoint listing at `GET /`, validation and caching all read this one table
 * (cometbft: rpc/core/routes.go, rpc/jsonrpc/server/rpc_func.go; STYLE.md items 7 and 8).
 *
 * Adding a method:
 *
 *   route({
 *     name: 'block',
 *     params: [{ name: 'height', type: 'int64', optional: true }],
 *     cacheable: { unlessDefault: ['height'] },
 *     handler: ({ height }) => blockResult(height),   // height: bigint | undefined
 *   })
 */
import type { JsonRpcId } from './envelope.js';
import { isZeroArg, PARAM_TYPES, type Args, type ParamSpec, type ParamValueMap } from './cometbft-params.js';
import type { WsConnection } from './ws.js';
import type { StreamScope } from '../../evm/tracers/raw-json.js';

export type Transport = 'uri' | 'jsonrpc' | 'websocket';

/** What a handler learns about the call besides its arguments. */
export interface RouteContext {
  readonly transport: Transport;
  /** The JSON-RPC request id; -1 for URI calls (CometBFT's URIClientRequestID). */
  readonly id: JsonRpcId;
  /** The client's IP address as text. */
  readonly remoteAddr: string;
  /** The websocket connection, for calls made over `/websocket`. */
  readonly ws: WsConnection | undefined;
  /**
   * Aborted when the client goes away (the HTTP request is aborted, or the websocket closes),
   * like a Go handler's request context (rpc/jsonrpc/types/types.go Context.Context()).
   */
  readonly signal: AbortSignal;
  /**
   * Where the result may be streamed to the socket (raw-json.ts StreamScope): set for a single
   * (non-batch) HTTP request of the geth dialect to a method that may stream, else undefined.
   */
  readonly stream?: StreamScope;
}

/** The context of a websocket-only method: the connection is always there. */
export interface WsRouteContext extends RouteContext {
  readonly transport: 'websocket';
  readonly ws: WsConnection;
}

/** Handler arguments typed from the parameter declarations. */
export type ArgsOf<P extends readonly ParamSpec[]> = {
  [S in P[number] as S['name']]: S extends { optional: true } ? ParamValueMap[S['type']] | undefined : ParamValueMap[S['type']];
};

/**
 * `true`: every successful call may be cached by clients for a day. `{ unlessDefault: [...] }`:
 * only when each listed parameter was given a non-default value (rpc_func.go Cacheable(noCacheDefArgs)),
 * e.g. `block` only with a height.
 */
export type Cacheable = boolean | { readonly unlessDefault: readonly string[] };

/**
 * One entry of the table (the erased form the transports use). Build it with `route()` or
 * `wsRoute()` for typed arguments; the table fills in the defaults.
 */
export interface Route {
  readonly name: string;
  readonly params: readonly ParamSpec[];
  /** Default false. */
  readonly cacheable?: Cacheable;
  /** Websocket only (subscribe, unsubscribe, unsubscribe_all): -32601 over HTTP, 404 over URI. */
  readonly wsOnly?: boolean;
  /** Registered only when `[rpc] unsafe = true` (dial_seeds, dial_peers, unsafe_flush_mempool). */
  readonly unsafe?: boolean;
  /** Returns the result (or a promise of it); a throw is the method's error (-32603). */
  readonly handler: (args: Args, ctx: RouteContext) => unknown;
}

export interface RouteDef<P extends readonly ParamSpec[]> {
  name: string;
  params?: P;
  cacheable?: boolean | { readonly unlessDefault: readonly P[number]['name'][] };
  unsafe?: boolean;
  handler: (args: ArgsOf<P>, ctx: RouteContext) => unknown;
}

export interface WsRouteDef<P extends readonly ParamSpec[]> {
  name: string;
  params?: P;
  unsafe?: boolean;
  handler: (args: ArgsOf<P>, ctx: WsRouteContext) => unknown;
}

/** Declares a method served over all three transports. */
export function route<const P extends readonly ParamSpec[] = []>(def: RouteDef<P>): Route {
  return {
    name: def.name,
    params: def.params ?? [],
    cacheable: def.cacheable ?? false,
    wsOnly: false,
    unsafe: def.unsafe ?? false,
    handler: def.handler as unknown as Route['handler'],
  };
}

/** Declares a websocket-only method; its handler gets the connection in `ctx.ws`. */
export function wsRoute<const P extends readonly ParamSpec[] = []>(def: WsRouteDef<P>): Route {
  return {
    name: def.name,
    params: def.params ?? [],
    cacheable: false,
    wsOnly: true,
    unsafe: def.unsafe ?? false,
    handler: def.handler as unknown as Route['handler'],
  };
}

/** A route table that cannot be served (duplicate name, bad parameter declaration, …). */
export class RouteError extends Error {
  readonly code = 'RPC_ROUTE_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'RouteError';
  }
}

/**
 * Method names: CometBFT's snake_case (`block_results`) and namespaced camelCase (`eth_getBalance`,
 * geth's `<namespace>_<method>`, ethereum/go-ethereum:rpc/service.go).
 */
const NAME = /^[a-z][a-zA-Z0-9_]*$/;

/** The routes being served, checked once at construction. */
export class RouteTable {
  private readonly byName = new Map<string, Route>();

  /**
   * Unsafe routes are left out unless `unsafe` (node/node.go startRPC: AddUnsafeRoutes).
   * `paramTypes`: the parameter types the dialect decodes (CometBFT's by default; geth.ts has its own).
   */
  constructor(routes: readonly Route[], opts: { unsafe: boolean; paramTypes?: readonly string[] }) {
    const types = opts.paramTypes ?? PARAM_TYPES;
    const seen = new Set<string>();
    for (const given of routes) {
      const r: Route = { ...given, params: given.params ?? [], cacheable: given.cacheable ?? false, wsOnly: given.wsOnly ?? false, unsafe: given.unsafe ?? false };
      checkRoute(r, types);
      if (seen.has(r.name)) throw new RouteError(`route ${r.name}: declared twice`);
      seen.add(r.name);
      if (r.unsafe && !opts.unsafe) continue;
      this.byName.set(r.name, r);
    }
  }

  get(name: string): Route | undefined {
    return this.byName.get(name);
  }

  get size(): number {
    return this.byName.size;
  }

  /** Served routes sorted by name (Go's sort.Strings order). */
  list(): Route[] {
    return [...this.byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** A plain description of the table, for docs and method-status listings. */
  describe(): Array<{ name: string; params: ParamSpec[]; cacheable: Cacheable; wsOnly: boolean; unsafe: boolean }> {
    return this.list().map((r) => ({ name: r.name, params: [...r.params], cacheable: r.cacheable ?? false, wsOnly: !!r.wsOnly, unsafe: !!r.unsafe }));
  }

  /**
   * The page `GET /` shows (http_json_handler.go writeListOfEndpoints). CometBFT counts the
   * context argument every method takes, so no method lands under "Available endpoints" and every
   * link, even `health?`, is listed under "Endpoints that require arguments".
   */
  endpointsHtml(host: string): string {
    const h = escapeHtml(host);
    let out = '<html><body><br>Available endpoints:<br><br>Endpoints that require arguments:<br>';
    for (const r of this.list()) {
      const link = `//${h}/${r.name}?${r.params.map((p) => `${p.name}=_`).join('&')}`;
      out += `<a href="${link}">${link}</a></br>`;
    }
    return out + '</body></html>';
  }
}

/**
 * rpc_func.go cacheableWithArgs: a cacheable route is cached unless one of its `unlessDefault`
 * parameters was not given (`given` is false for a JSON-RPC request without `params`) or holds its
 * Go zero value.
 */
export function isCacheable(route: Route, args: Args, given: boolean): boolean {
  const c = route.cacheable;
  if (!c) return false;
  if (c === true) return true;
  for (const name of c.unlessDefault) {
    if (!given) return false;
    const spec = route.params.find((p) => p.name === name)!;
    if (isZeroArg(spec, args[name])) return false;
  }
  return true;
}

function checkRoute(r: Route, types: readonly string[]): void {
  if (!NAME.test(r.name) || r.name === 'websocket') throw new RouteError(`route "${r.name}": invalid name`);
  const seen = new Set<string>();
  for (const p of r.params) {
    if (!p.name || /[&=?#\s]/.test(p.name)) throw new RouteError(`route ${r.name}: invalid parameter name "${p.name}"`);
    if (seen.has(p.name)) throw new RouteError(`route ${r.name}: parameter ${p.name} declared twice`);
    if (!types.includes(p.type)) throw new RouteError(`route ${r.name}: parameter ${p.name} has unknown type "${String(p.type)}"`);
    seen.add(p.name);
  }
  if (typeof r.cacheable === 'object') {
    if (r.wsOnly) throw new RouteError(`route ${r.name}: websocket-only routes are not cacheable`);
    for (const n of r.cacheable.unlessDefault) if (!seen.has(n)) throw new RouteError(`route ${r.name}: cacheable.unlessDefault names unknown parameter ${n}`);
  }
  if (typeof r.handler !== 'function') throw new RouteError(`route ${r.name}: handler is not a function`);
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

/**
 * Builders for `health` and `status`; the other methods plug into the table the same way.
 * `health` (rpc/core/health.go) answers `{}`; `status` (rpc/core/status.go) answers what the
 * callback returns, e.g. `() => statusResult(deps)`.
 */
export const routes = {
  health(): Route {
    return route({ name: 'health', handler: () => ({}) });
  },
  status(status: () => unknown): Route {
    return route({ name: 'status', handler: () => status() });
  },
};
