/** Serves the Prometheus text format at /metrics (instrumentation.prometheus_listen_addr). */
import { loopSlice } from '../rpc/server/slice.js';
import { guardHttp, listen, parseContentLength, parseListenAddr, send, uws, type HttpResponse, type Listening } from '../rpc/server/uws.js';
import type { Registry } from './registry.js';

const TEXT = { 'Content-Type': 'text/plain; charset=utf-8' };
const METRICS = { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' };

export async function startMetricsServer(addr: string, registry: Registry, log?: { error(msg: string, fields?: Record<string, unknown>): void }): Promise<Listening> {
  const app = uws.App();
  // Go's promhttp behind net/http: a bad Content-Length is the server's own 400, connection closed.
  const badLength = (res: HttpResponse) => send(res, { aborted: false }, '400 Bad Request', TEXT, '400 Bad Request', { close: true }, true);
  app.get(
    '/metrics',
    guardHttp('metrics', log, (res, req) => {
      if (parseContentLength(req.getHeader('content-length')) === null) return badLength(res);
      const state = { aborted: false, done: false };
      if (loopSlice.admit()) {
        send(res, state, '200 OK', METRICS, registry.render(), undefined, true);
        return;
      }
      // Rendering waits for the next loop turn, like any RPC work past the slice.
      res.onAborted(() => (state.aborted = true));
      res.pause();
      loopSlice.defer(() => {
        if (state.aborted) return;
        res.resume();
        send(res, state, '200 OK', METRICS, registry.render());
      });
    }),
  );
  app.any(
    '/*',
    guardHttp('metrics', log, (res, req) => {
      if (parseContentLength(req.getHeader('content-length')) === null) return badLength(res);
      send(res, { aborted: false }, '404 Not Found', TEXT, '404 page not found\n', undefined, true);
    }),
  );
  return listen(app, parseListenAddr(addr, 'instrumentation.prometheus_listen_addr'), 'metrics');
}
