/** Serves the Prometheus text format at /metrics (instrumentation.prometheus_listen_addr). */
import { listen, parseListenAddr, uws, type Listening } from '../rpc/server/uws.js';
import type { Registry } from './registry.js';

export async function startMetricsServer(addr: string, registry: Registry): Promise<Listening> {
  const app = uws.App();
  app.get('/metrics', (res) => {
    res.writeStatus('200 OK').writeHeader('Content-Type', 'text/plain; version=0.0.4; charset=utf-8').end(registry.render());
  });
  app.any('/*', (res) => {
    res.writeStatus('404 Not Found').end('404 page not found\n');
  });
  return listen(app, parseListenAddr(addr, 'instrumentation.prometheus_listen_addr'), 'metrics');
}
