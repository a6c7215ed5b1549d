/**
 * Feeding the router from the base app, until modules register typed proto handlers.
 *
 * Today a module registers `QueryRoute`s (src/app/module.ts) whose handlers take and return plain
 * objects in the proto-JSON shape (snake_case names, 64-bit integers as strings or bigints, bytes
 * as base64 or Uint8Array), and BaseApp.queryObject runs them on a query context after checking
 * the height. `jsonQueryService` wraps those routes as a typed service: the request message is
 * written in the SDK's JSON, the handler's answer read back into the response message (leniently:
 * bigints, Uint8Arrays and unknown keys are accepted). A query is still written once, and the
 * gRPC server, the REST gateway and abci_query all reach it through the router.
 *
 * `latestOnlyHeights` is the router's height rule for a store that keeps only the latest state:
 * cosmos-sdk baseapp createQueryContext's checks, as BaseApp applies them.
 */
import type { DescService } from '@bufbuild/protobuf';
import { sdkErrors } from '../../app/errors.js';
import { fromSdkJson, toSdkJson } from '../rest/json.js';
import type { QueryRouter, ServiceImpl, UnaryHandler } from '../../app/query-router.js';

/** What the bridge needs of the base app (BaseApp satisfies it). */
export interface JsonQueryApp {
  queryObject<R = unknown>(path: string, request: unknown, height?: bigint): { height: bigint; response: R };
}

export interface JsonQueryServiceOptions {
  /** Only these methods (proto names); default every unary method of the service. */
  methods?: readonly string[];
}

/** A ServiceImpl whose methods call the app's JSON-shaped query routes of the same gRPC path. */
export function jsonQueryService(router: QueryRouter, app: JsonQueryApp, service: DescService, opts: JsonQueryServiceOptions = {}): ServiceImpl {
  const impl: Record<string, UnaryHandler> = {};
  for (const m of service.methods) {
    if (m.methodKind !== 'unary') continue;
    if (opts.methods && !opts.methods.includes(m.name)) continue;
    const path = `/${service.typeName}/${m.name}`;
    impl[m.name] = (req, ctx) => {
      const request = toSdkJson(m.input, req, router.registry);
      const { response } = app.queryObject(path, request, ctx.height ?? 0n);
      return fromSdkJson(m.output, response, router.registry, { lenient: true });
    };
  }
  return impl;
}

/**
 * createQueryContext for a store that serves only its latest height (the messages BaseApp uses):
 * nothing before the first block, nothing in the future, nothing older than the latest.
 */
export function latestOnlyHeights(latest: () => bigint, appName = 'chaind'): (requested: bigint | undefined) => bigint {
  return (h) => {
    const last = latest();
    if (last === 0n) throw sdkErrors.invalidHeight.wrap(`${appName} is not ready; please wait for first block`);
    if (h === undefined) return last;
    if (h > last) throw sdkErrors.invalidHeight.wrap('cannot query with height in the future; please provide a valid height');
    if (h !== last) throw sdkErrors.invalidRequest.wrap(`failed to load state at height ${h}; version does not exist (latest height: ${last})`);
    return h;
  };
}

/** What the proto bridge needs of the base app (BaseApp satisfies it). */
export interface ProtoQueryApp extends JsonQueryApp {
  hasQueryRoute(path: string): boolean;
}

/**
 * A ServiceImpl over the app's protobuf-coded query routes (src/app/proto-route.ts): the request
 * message goes to the route as is and its response message comes back, so Any and Timestamp
 * fields survive. Only methods the app has a route for are served; the rest answer Unimplemented.
 */
export function protoQueryService(app: ProtoQueryApp, service: DescService): ServiceImpl {
  const impl: Record<string, UnaryHandler> = {};
  for (const m of service.methods) {
    if (m.methodKind !== 'unary') continue;
    const path = `/${service.typeName}/${m.name}`;
    if (!app.hasQueryRoute(path)) continue;
    impl[m.name] = (req, ctx) => app.queryObject(path, req, ctx.height ?? 0n).response as never;
  }
  return impl;
}
