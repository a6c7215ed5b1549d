/**
 * RPC metrics recorded by the JSON-RPC layer (src/rpc/jsonrpc/dispatch.ts) into the catalogue
 * (src/metrics/metrics.ts `rpc`), read back from the metrics server: calls, errors and latency per
 * method and transport, for the node RPC (CometBFT dialect: URI, JSON-RPC, websocket) and a geth
 * dialect server.
 */
import t from 'tap';
import { defaultNodeConfig } from '../../src/config/node-config.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { startMetricsServer } from '../../src/metrics/server.js';
import { gethMethod } from '../../src/rpc/jsonrpc/geth.js';
import { GethRpcServer } from '../../src/rpc/jsonrpc/geth-server.js';
import { route, routes } from '../../src/rpc/jsonrpc/methods.js';
import { NodeRpcServer } from '../../src/rpc/node/server.js';
import { WsClient } from '../helpers/ws.js';

/** The value of one sample line `name{labels} value` in a Prometheus text page, or undefined. */
function sample(page: string, name: string, labels: string): number | undefined {
  for (const line of page.split('\n')) {
    if (line.startsWith(`${name}{${labels}} `)) return Number(line.slice(name.length + labels.length + 3));
  }
  return undefined;
}

t.test('RPC calls are counted and timed per method and transport, read from /metrics', async (t) => {
  const metrics = createMetrics('chaind');
  const node = new NodeRpcServer({
    laddr: 'tcp://127.0.0.1:0',
    config: { ...defaultNodeConfig().rpc, laddr: 'tcp://127.0.0.1:0' },
    metrics: metrics.rpc,
    routes: [
      routes.health(),
      route({ name: 'block', params: [{ name: 'height', type: 'int64', optional: true }], handler: async ({ height }) => ({ height: String(height ?? 0n) }) }),
      route({ name: 'broken', handler: () => { throw new Error('no'); } }),
    ],
  });
  await node.start();
  t.teardown(() => node.close());
  const geth = new GethRpcServer({ laddr: '127.0.0.1:0', metrics: metrics.rpc, methods: [gethMethod({ name: 'eth_chainId', handler: () => '0x1' })] });
  await geth.start();
  t.teardown(() => geth.close());
  const m = await startMetricsServer('tcp://127.0.0.1:0', metrics.registry);
  t.teardown(() => m.close());

  const nodeBase = `http://127.0.0.1:${node.port}`;
  const rpc = (body: unknown) => fetch(`${nodeBase}/`, { method: 'POST', body: JSON.stringify(body) }).then((r) => r.text());
  // URI: two health, one block, one broken, one block with a bad height.
  for (const p of ['/health', '/health', '/block?height=3', '/broken', '/block?height=x']) await (await fetch(nodeBase + p)).text();
  // JSON-RPC over HTTP: a health and an unknown method.
  await rpc({ jsonrpc: '2.0', id: 1, method: 'health' });
  await rpc({ jsonrpc: '2.0', id: 2, method: 'no_such' });
  // Websocket: one block.
  const { ws } = await WsClient.connect(node.port);
  t.ok(ws);
  t.teardown(() => ws!.close());
  ws!.call({ jsonrpc: '2.0', id: 3, method: 'block', params: { height: '5' } });
  t.match(await ws!.next(), /"height":"5"/);
  // The geth dialect: a call over HTTP.
  const g = await fetch(`http://127.0.0.1:${geth.port}/`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' });
  t.equal(await g.text(), '{"jsonrpc":"2.0","id":1,"result":"0x1"}');

  const page = await (await fetch(`http://127.0.0.1:${m.port}/metrics`)).text();
  const req = 'chaind_rpc_requests_total';
  const errs = 'chaind_rpc_errors_total';
  t.equal(sample(page, req, 'method="health",transport="uri"'), 2);
  t.equal(sample(page, req, 'method="block",transport="uri"'), 2, 'a call with bad params counts');
  t.equal(sample(page, errs, 'method="block",transport="uri"'), 1, '… as an error');
  t.equal(sample(page, req, 'method="broken",transport="uri"'), 1);
  t.equal(sample(page, errs, 'method="broken",transport="uri"'), 1);
  t.equal(sample(page, req, 'method="health",transport="jsonrpc"'), 1);
  t.equal(sample(page, errs, 'method="health",transport="jsonrpc"'), undefined, 'no error series for a method that never failed');
  t.equal(sample(page, errs, 'method="(unknown)",transport="jsonrpc"'), 1, 'unknown names share one series');
  t.equal(sample(page, req, 'method="block",transport="websocket"'), 1);
  t.equal(sample(page, req, 'method="eth_chainId",transport="jsonrpc"'), 1, 'the geth dialect records too');
  const lat = 'chaind_rpc_request_duration_seconds';
  t.equal(sample(page, `${lat}_count`, 'method="health",transport="uri"'), 2, 'latency observed per call');
  t.equal(sample(page, `${lat}_bucket`, 'method="health",transport="uri",le="+Inf"'), 2);
  t.ok((sample(page, `${lat}_sum`, 'method="block",transport="websocket"') ?? -1) >= 0);
  t.match(page, /# TYPE chaind_rpc_request_duration_seconds histogram/);
});

t.test('without metrics nothing is recorded and calls are answered as before', async (t) => {
  const node = new NodeRpcServer({ laddr: 'tcp://127.0.0.1:0', config: { ...defaultNodeConfig().rpc, laddr: 'tcp://127.0.0.1:0' }, routes: [routes.health()] });
  await node.start();
  t.teardown(() => node.close());
  const r = await fetch(`http://127.0.0.1:${node.port}/health`);
  t.equal(await r.text(), '{"jsonrpc":"2.0","id":-1,"result":{}}');
});
