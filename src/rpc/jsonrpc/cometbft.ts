/**
 * The CometBFT dialect of the JSON-RPC layer: CometBFT 0.38's rules for one request of a body
 * (cometbft/cometbft:rpc/jsonrpc/server/http_json_handler.go) and for one websocket message
 * (cometbft/cometbft:rpc/jsonrpc/server/ws_handler.go readRoutine), with Go's error texts:
 * - an unknown or websocket-only method: -32601 `Method not found`;
 * - parameters that do not convert: -32602 over HTTP, -32603 over websocket, with
 *   `error converting json params to arguments: <Go's error>` (cometbft-params.ts);
 * - a request without `params` to a method that takes some: reflect's panic, answered by the
 *   recover layer (the whole HTTP request 500 with id -1; over websocket -32603 with id -1);
 * - a method's error: -32603 `Internal error` with its text as `data` (envelope.ts RpcError).
 * Requests are decoded by cometbft-params.ts (decodeHttpBody, decodeWsMessage); the HTTP layers
 * around them (URI routes, limits, CORS, Go's net/http answers) are the node server's
 * (src/rpc/node/server.ts).
 */
import type { Logger } from '../../log.js';
import { decodeJsonParams, decodeWsMessage, GoPanicError, ParamError, TOO_FEW_ARGS_PANIC, withDefaults, type Args, type RpcRequest } from './cometbft-params.js';
import { invoke, recordRejected, UNKNOWN_METHOD, type RpcMetrics } from './dispatch.js';
import { errorEnvelope, rpcErrorObject, successEnvelope, toRpcErrorObject, type JsonRpcId, type RpcErrorObject } from './envelope.js';
import { isCacheable, type Route, type RouteContext, type RouteTable, type Transport } from './methods.js';
import type { UwsConnection } from './ws.js';

export type CometOutcome = { ok: true; result: unknown } | { ok: false; error: RpcErrorObject };

/** The responses of one JSON-RPC body so far, and whether the answer may be cached. */
export interface JsonRpcBatch {
  out: string[];
  cache: boolean;
}

class WsCallContext implements RouteContext {
  readonly transport = 'websocket';
  constructor(
    readonly id: JsonRpcId,
    readonly ws: UwsConnection,
  ) {}
  get remoteAddr(): string {
    return this.ws.remoteAddr;
  }
  get signal(): AbortSignal {
    return this.ws.signal;
  }
}

export interface CometbftJsonRpcOptions {
  logger?: Logger;
  metrics?: RpcMetrics;
}

/** CometBFT's JSON-RPC over one method table (the node RPC's). */
export class CometbftJsonRpc {
  private readonly log: Logger | undefined;
  private readonly metrics: RpcMetrics | undefined;

  constructor(
    readonly table: RouteTable,
    opts: CometbftJsonRpcOptions = {},
  ) {
    this.log = opts.logger;
    this.metrics = opts.metrics;
  }

  /**
   * Runs a method (URI or JSON-RPC). A method's error becomes its outcome; a Go panic
   * (GoPanicError) goes on to the caller's recover layer.
   */
  call(route: Route, args: Args, ctx: RouteContext): CometOutcome | Promise<CometOutcome> {
    const o = invoke(route, args, ctx, this.metrics);
    if (o instanceof Promise) return o.then((done) => (done.ok ? done : this.failed(route, done.thrown)));
    return o.ok ? o : this.failed(route, o.thrown);
  }

  private failed(route: Route, e: unknown): CometOutcome {
    if (e instanceof GoPanicError) throw e;
    if (this.log?.enabled('debug')) this.log.debug('node RPC: method failed', { method: route.name, err: e as Error });
    return { ok: false, error: toRpcErrorObject(e) };
  }

  /** Counts an answer given before any method ran (for URI requests, which the server decodes). */
  rejected(method: string, transport: Transport): void {
    recordRejected(this.metrics, this.table.get(method) ? method : UNKNOWN_METHOD, transport);
  }

  /**
   * http_json_handler.go: runs requests[from…] of a body into `batch`; a promise only once a
   * method answers later (the rest of the batch then follows, in order, asynchronously).
   * `context` builds each call's RouteContext.
   */
  runHttp(requests: readonly (RpcRequest | null)[], from: number, batch: JsonRpcBatch, context: (id: JsonRpcId) => RouteContext): Promise<void> | undefined {
    for (let i = from; i < requests.length; i++) {
      const req = requests[i]!;
      if (req === null) continue; // a notification gets no response, also inside a batch
      const route = this.table.get(req.method);
      // Cached only if every request in the batch is cacheable; method-not-found and invalid
      // params clear it, a method's own error does not.
      if (!route || route.wsOnly) {
        recordRejected(this.metrics, route ? req.method : UNKNOWN_METHOD, 'jsonrpc');
        batch.out.push(errorEnvelope(req.id, rpcErrorObject('METHOD_NOT_FOUND')));
        batch.cache = false;
        continue;
      }
      let args: Args = {};
      if (req.hasParams) {
        try {
          args = decodeJsonParams(route.params, req.params);
        } catch (e) {
          if (!(e instanceof ParamError)) throw e;
          recordRejected(this.metrics, route.name, 'jsonrpc');
          batch.out.push(errorEnvelope(req.id, rpcErrorObject('INVALID_PARAMS', `error converting json params to arguments: ${e.message}`)));
          batch.cache = false;
          continue;
        }
      } else if (route.params.length > 0) {
        // No `params` member: CometBFT calls the method with too few arguments and reflect
        // panics; the recover handler answers the whole request 500, -32603, id -1.
        throw new GoPanicError(TOO_FEW_ARGS_PANIC);
      }
      if (batch.cache && !isCacheable(route, args, req.hasParams)) batch.cache = false;
      const o = this.call(route, withDefaults(route.params, args), context(req.id));
      if (o instanceof Promise) {
        return o.then((done) => {
          batch.out.push(done.ok ? successEnvelope(req.id, done.result) : errorEnvelope(req.id, done.error));
          return this.runHttp(requests, i + 1, batch, context);
        });
      }
      batch.out.push(o.ok ? successEnvelope(req.id, o.result) : errorEnvelope(req.id, o.error));
    }
    return undefined;
  }

  /**
   * ws_handler.go readRoutine, for one message. Its recover answers a panic with -32603, id -1
   * and the panic's text, and goes on reading: so does any error escaping here.
   */
  async onWsRequest(conn: UwsConnection, message: Buffer): Promise<void> {
    try {
      await this.serveWs(conn, message);
    } catch (e) {
      this.log?.error('node RPC: websocket request failed', { conn: conn.id, err: e as Error });
      conn.reply(errorEnvelope(-1, rpcErrorObject('INTERNAL_ERROR', e instanceof Error ? e.message : String(e))));
    }
  }

  private async serveWs(conn: UwsConnection, message: Buffer): Promise<void> {
    const d = decodeWsMessage(message);
    if (!d.ok) {
      conn.reply(errorEnvelope(null, rpcErrorObject('PARSE_ERROR', `error unmarshaling request: ${d.error}`)));
      return;
    }
    const req = d.value;
    if (req === null) return; // notification
    const route = this.table.get(req.method);
    if (!route) {
      recordRejected(this.metrics, UNKNOWN_METHOD, 'websocket');
      conn.reply(errorEnvelope(req.id, rpcErrorObject('METHOD_NOT_FOUND')));
      return;
    }
    let args: Args = {};
    if (req.hasParams) {
      try {
        args = decodeJsonParams(route.params, req.params);
      } catch (e) {
        if (!(e instanceof ParamError)) throw e;
        recordRejected(this.metrics, route.name, 'websocket');
        // Over websocket CometBFT answers bad params with -32603, not -32602.
        conn.reply(errorEnvelope(req.id, rpcErrorObject('INTERNAL_ERROR', `error converting json params to arguments: ${e.message}`)));
        return;
      }
    } else if (route.params.length > 0) {
      // The reflect panic, recovered by readRoutine: "WSJSONRPC: <panic>", id -1.
      recordRejected(this.metrics, route.name, 'websocket');
      conn.reply(errorEnvelope(-1, rpcErrorObject('INTERNAL_ERROR', `WSJSONRPC: ${TOO_FEW_ARGS_PANIC}`)));
      return;
    }
    const ctx = new WsCallContext(req.id, conn);
    let o: CometOutcome;
    try {
      o = await this.call(route, withDefaults(route.params, args), ctx);
    } catch (e) {
      if (!(e instanceof GoPanicError)) throw e;
      // readRoutine's recover: a runtime error is written as it is, with id -1.
      conn.reply(errorEnvelope(-1, rpcErrorObject('INTERNAL_ERROR', e.message)));
      return;
    }
    conn.reply(o.ok ? successEnvelope(req.id, o.result) : errorEnvelope(req.id, o.error));
  }
}
