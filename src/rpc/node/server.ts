/**
 * The node RPC server on uWebSockets.js (rpc/jsonrpc/server in CometBFT). Every method is one
 * entry of a route table; URI (`GET /<method>?…`) and JSON-RPC over HTTP (`POST /`) both read it.
 */
import type { Logger } from '../../log.js';
import { listen, parseListenAddr, send, uws, type HttpResponse, type Listening } from '../server/uws.js';

export interface RouteCtx {
  params: Record<string, unknown>;
}

export interface Route {
  name: string;
  /** Parameter wire names, in positional order. */
  params: string[];
  /** Results that never change for a given argument may be cached by clients and proxies. */
  cacheable?: boolean;
  handler: (params: Record<string, unknown>) => unknown | Promise<unknown>;
}

export interface NodeRpcOptions {
  laddr: string;
  maxBodyBytes: number;
  routes: Route[];
  logger?: Logger;
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data = '',
  ) {
    super(message);
  }
}

const JSON_HEADERS = { 'Content-Type': 'application/json' };

function envelope(id: unknown, body: { result: unknown } | { error: { code: number; message: string; data: string } }): string {
  return JSON.stringify({ jsonrpc: '2.0', id, ...body });
}

export class NodeRpcServer {
  private listening: Listening | null = null;
  private readonly routes = new Map<string, Route>();
  constructor(private readonly opts: NodeRpcOptions) {
    for (const r of opts.routes) this.routes.set(r.name, r);
  }

  get port(): number {
    return this.listening?.port ?? 0;
  }

  async start(): Promise<void> {
    const app = uws.App();
    app.get('/', (res, req) => {
      const host = req.getHeader('host');
      const links = [...this.routes.keys()].map((n) => `<a href="//${host}/${n}">//${host}/${n}</a></br>`);
      res.writeStatus('200 OK').writeHeader('Content-Type', 'text/html').end(`<html><body><br>Available endpoints:<br>${links.join('')}</body></html>`);
    });
    app.get('/*', (res, req) => {
      const name = req.getUrl().slice(1);
      const route = this.routes.get(name);
      if (!route) {
        res.writeStatus('404 Not Found').writeHeader('Content-Type', 'text/plain').end('404 page not found\n');
        return;
      }
      const params: Record<string, unknown> = {};
      for (const p of route.params) {
        const v = req.getQuery(p);
        if (v !== undefined && v !== '') params[p] = v.replace(/^"(.*)"$/, '$1');
      }
      this.dispatch(res, route, params, -1, route.cacheable ?? false);
    });
    app.post('/*', (res) => {
      const state = { aborted: false };
      res.onAborted(() => {
        state.aborted = true;
      });
      const chunks: Buffer[] = [];
      let size = 0;
      res.onData((chunk, isLast) => {
        size += chunk.byteLength;
        if (size > this.opts.maxBodyBytes) {
          if (!state.aborted) {
            state.aborted = true;
            res.close();
          }
          return;
        }
        // uWS neuters the ArrayBuffer after the callback: copy it.
        chunks.push(Buffer.from(new Uint8Array(chunk).slice()));
        if (!isLast || state.aborted) return;
        let req: { id?: unknown; method?: unknown; params?: unknown };
        try {
          req = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch (e) {
          send(res, state, '500 Internal Server Error', JSON_HEADERS, envelope(-1, { error: { code: -32700, message: 'Parse error. Invalid JSON', data: (e as Error).message } }));
          return;
        }
        const route = typeof req.method === 'string' ? this.routes.get(req.method) : undefined;
        if (!route) {
          send(res, state, '404 Not Found', JSON_HEADERS, envelope(req.id ?? -1, { error: { code: -32601, message: 'Method not found', data: '' } }));
          return;
        }
        const params: Record<string, unknown> = {};
        if (Array.isArray(req.params)) route.params.forEach((p, i) => (params[p] = (req.params as unknown[])[i]));
        else if (req.params && typeof req.params === 'object') Object.assign(params, req.params);
        void this.run(route, params).then((out) => {
          const status = 'error' in out ? '500 Internal Server Error' : '200 OK';
          send(res, state, status, JSON_HEADERS, envelope(req.id ?? -1, out));
        });
      });
    });
    this.listening = await listen(app, parseListenAddr(this.opts.laddr, 'rpc.laddr'), 'node RPC');
    this.opts.logger?.info('node RPC listening', { addr: `${this.listening.host}:${this.listening.port}` });
  }

  private dispatch(res: HttpResponse, route: Route, params: Record<string, unknown>, id: unknown, cacheable: boolean): void {
    const state = { aborted: false };
    res.onAborted(() => {
      state.aborted = true;
    });
    void this.run(route, params).then((out) => {
      const headers: Record<string, string> = { ...JSON_HEADERS };
      if (cacheable && !('error' in out)) headers['Cache-Control'] = 'public, max-age=86400';
      send(res, state, 'error' in out ? '500 Internal Server Error' : '200 OK', headers, envelope(id, out));
    });
  }

  private async run(route: Route, params: Record<string, unknown>): Promise<{ result: unknown } | { error: { code: number; message: string; data: string } }> {
    try {
      return { result: await route.handler(params) };
    } catch (e) {
      const err = e instanceof RpcError ? e : new RpcError(-32603, 'Internal error', (e as Error).message);
      return { error: { code: err.code, message: err.message, data: err.data } };
    }
  }

  close(): void {
    this.listening?.close();
    this.listening = null;
  }
}
