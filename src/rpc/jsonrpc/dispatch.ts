/**
 * The dialect-neutral core of the JSON-RPC layer: running one method of a table (synchronously
 * when the handler answers synchronously, so that an answer can still be written inside uWS's
 * corked callback) and recording RPC metrics around it.
 *
 * The dialects (cometbft.ts: CometBFT 0.38's Go rules; geth.ts: go-ethereum's rpc package) decode
 * requests, look methods up, validate parameters and word errors; they all call `invoke`.
 */
import { spanBegin, spanEnd, tracing } from '../../profiling/spans.js';
import type { Args } from './cometbft-params.js';
import type { Route, RouteContext, Transport } from './methods.js';

/** A metric's labels (method, transport). */
export type RpcLabels = { readonly method: string; readonly transport: Transport };

/**
 * What the layer records (src/metrics/metrics.ts `rpc`): every call that reached a method
 * (`requests`), every call answered with an error, also before reaching a method (`errors`), and
 * the time a method took (`latency`, seconds). Optional everywhere: absent, nothing is measured.
 */
export interface RpcMetrics {
  readonly requests: { inc(by?: number, labels?: RpcLabels): void };
  readonly errors: { inc(by?: number, labels?: RpcLabels): void };
  readonly latency: { observe(seconds: number, labels?: RpcLabels): void };
}

/** The label of calls to names the table does not serve (one series, not one per name sent). */
export const UNKNOWN_METHOD = '(unknown)';

/** What a method did: its result, or what it threw. */
export type Outcome = { ok: true; result: unknown } | { ok: false; thrown: unknown };

export function isThenable(r: unknown): r is PromiseLike<unknown> {
  return r !== null && typeof r === 'object' && typeof (r as PromiseLike<unknown>).then === 'function';
}

/**
 * Runs a handler. A synchronous handler gives a synchronous outcome, so its response is written
 * inside uWS's handler while the socket is still corked (no extra microtask hops or cork): worth
 * ~25% of /status throughput. With `metrics`, the call is counted and timed.
 */
export function invoke(route: Route, args: Args, ctx: RouteContext, metrics?: RpcMetrics): Outcome | Promise<Outcome> {
  if (tracing()) return invokeTraced(route, args, ctx, metrics);
  return invokePlain(route, args, ctx, metrics);
}

/** While debug_goTrace records: the call as an `rpc` span (src/profiling/spans.ts). */
function invokeTraced(route: Route, args: Args, ctx: RouteContext, metrics?: RpcMetrics): Outcome | Promise<Outcome> {
  const t = spanBegin();
  const end = (o: Outcome): Outcome => (spanEnd(t, route.name, 'rpc', { transport: ctx.transport, ok: o.ok }), o);
  const o = invokePlain(route, args, ctx, metrics);
  return o instanceof Promise ? o.then(end) : end(o);
}

function invokePlain(route: Route, args: Args, ctx: RouteContext, metrics?: RpcMetrics): Outcome | Promise<Outcome> {
  if (metrics !== undefined) return invokeMeasured(route, args, ctx, metrics);
  try {
    const r = route.handler(args, ctx);
    if (isThenable(r)) return Promise.resolve(r).then(resolved, rejected);
    return { ok: true, result: r };
  } catch (e) {
    return { ok: false, thrown: e };
  }
}

const resolved = (result: unknown): Outcome => ({ ok: true, result });
const rejected = (thrown: unknown): Outcome => ({ ok: false, thrown });

function invokeMeasured(route: Route, args: Args, ctx: RouteContext, m: RpcMetrics): Outcome | Promise<Outcome> {
  const labels: RpcLabels = { method: route.name, transport: ctx.transport };
  const start = performance.now();
  const done = (o: Outcome): Outcome => {
    m.requests.inc(1, labels);
    if (!o.ok) m.errors.inc(1, labels);
    m.latency.observe((performance.now() - start) / 1000, labels);
    return o;
  };
  let r: unknown;
  try {
    r = route.handler(args, ctx);
  } catch (e) {
    return done({ ok: false, thrown: e });
  }
  if (isThenable(r)) return Promise.resolve(r).then((v) => done({ ok: true, result: v }), (e: unknown) => done({ ok: false, thrown: e }));
  return done({ ok: true, result: r });
}

/** Counts a call answered with an error before any method ran (unknown method, bad params). */
export function recordRejected(metrics: RpcMetrics | undefined, method: string, transport: Transport): void {
  if (metrics === undefined) return;
  const labels: RpcLabels = { method, transport };
  metrics.requests.inc(1, labels);
  metrics.errors.inc(1, labels);
}
