/**
 * Node RPC `abci_info` (cometbft: rpc/core/abci.go ABCIInfo): the app's ResponseInfo under
 * cmtjson, where every field is `omitempty` (zero values disappear; int64 as strings; the app
 * hash base64). Always cacheable (routes.go). Over URI, JSON-RPC and websocket; shape checked
 * against the `abci_info` fixture.
 */
import { VERSION } from '../../src/version.js';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { startTestNode, waitHeight, type TestNode } from '../helpers/inproc.js';
import { WsClient } from '../helpers/ws.js';

// ------------------------------------------------------------------------------------------------
// Shared by the rpc-<method> tests of the node/mempool/ABCI group; each file carries its own copy
// so that it stands alone.

const here = path.dirname(fileURLToPath(import.meta.url));
/** Real CometBFT v0.38 kvstore responses, brand words renamed (../shared/reference/fixtures). */
const FIXTURES = JSON.parse(
  fs.readFileSync(path.join(here, '../../../test/fixtures/cometbft-v038-kvstore.json'), 'utf8'),
) as Record<string, any>;

interface Answer {
  status: number;
  cache: string | null;
  body: any;
}
/** URI form: GET /<method>?<query> (`query` already in CometBFT's URI argument syntax). */
async function viaUri(tn: TestNode, method: string, query = ''): Promise<Answer> {
  const r = await fetch(`${tn.base}/${method}${query ? `?${query}` : ''}`);
  return { status: r.status, cache: r.headers.get('cache-control'), body: await r.json() };
}
/** JSON-RPC over HTTP POST, id 1. */
async function viaPost(tn: TestNode, method: string, params: unknown): Promise<Answer> {
  const r = await fetch(`${tn.base}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: r.status, cache: r.headers.get('cache-control'), body: await r.json() };
}
/** JSON-RPC over the websocket, id 2. */
async function viaWs(tn: TestNode, method: string, params: unknown): Promise<any> {
  const { ws } = await WsClient.connect(tn.rpcPort);
  if (!ws) throw new Error('websocket not upgraded');
  try {
    ws.call({ jsonrpc: '2.0', id: 2, method, params });
    return await ws.nextJson();
  } finally {
    ws.close();
  }
}
/** The three envelopes of a successful call, checked; returns the three results. */
async function ok3(t: Test, tn: TestNode, method: string, query: string, params: unknown): Promise<{ uri: any; post: any; ws: any; cache: (string | null)[] }> {
  const [u, p, w] = await Promise.all([viaUri(tn, method, query), viaPost(tn, method, params), viaWs(tn, method, params)]);
  t.same([u.status, u.body.jsonrpc, u.body.id, u.body.error], [200, '2.0', -1, undefined], `${method}: URI 200, id -1, no error`);
  t.same([p.status, p.body.jsonrpc, p.body.id, p.body.error], [200, '2.0', 1, undefined], `${method}: JSON-RPC 200, id 1, no error`);
  t.same([w.jsonrpc, w.id, w.error], ['2.0', 2, undefined], `${method}: websocket id 2, no error`);
  return { uri: u.body.result, post: p.body.result, ws: w.result, cache: [u.cache, p.cache] };
}
/**
 * A method's error over the three transports (cometbft.md §1.2): -32603 `Internal error` with the
 * text in `data`, URI HTTP 500, JSON-RPC HTTP 200. With `param` it is a parameter-conversion
 * error: -32602 `Invalid params` over HTTP (data `error converting http|json params to
 * arguments: <text>`), -32603 with the json prefix over the websocket.
 */
async function err3(t: Test, tn: TestNode, method: string, query: string, params: unknown, data: string | RegExp, param = false): Promise<void> {
  const [u, p, w] = await Promise.all([viaUri(tn, method, query), viaPost(tn, method, params), viaWs(tn, method, params)]);
  t.equal(u.status, 500, `${method} ${query}: URI answers 500`);
  t.equal(p.status, 200, `${method}: JSON-RPC answers 200`);
  const cases = [
    ['URI', u.body, -1, param ? -32602 : -32603, param ? 'error converting http params to arguments: ' : ''],
    ['JSON-RPC', p.body, 1, param ? -32602 : -32603, param ? 'error converting json params to arguments: ' : ''],
    ['websocket', w, 2, -32603, param ? 'error converting json params to arguments: ' : ''],
  ] as const;
  for (const [via, body, id, code, prefix] of cases) {
    const message = code === -32602 ? 'Invalid params' : 'Internal error';
    t.same([body.id, body.error?.code, body.error?.message, body.result], [id, code, message, undefined], `${method}: ${via} ${code}`);
    const text = String(body.error?.data);
    t.ok(text.startsWith(prefix), `${method}: ${via} error prefix`);
    if (typeof data === 'string') t.equal(text.slice(prefix.length), data, `${method}: ${via} error text`);
    else t.match(text.slice(prefix.length), data, `${method}: ${via} error text`);
  }
}
/** The JSON kinds of a value, keys sorted, arrays by their first element (for fixture shapes). */
function shape(v: unknown): unknown {
  if (v === null) return 'null';
  if (Array.isArray(v)) return v.length === 0 ? [] : [shape(v[0])];
  if (typeof v === 'object') return Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, shape((v as any)[k])]));
  return typeof v;
}
const sha256Hex = (b: Uint8Array) => createHash('sha256').update(b).digest('hex').toUpperCase();
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
// ------------------------------------------------------------------------------------------------

const CACHED = 'public, max-age=86400';

t.test('abci_info on a running chain', async (t) => {
  const tn = await startTestNode({ flags: { 'consensus.create_empty_blocks': false } });
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);
  // Let the chain come to rest (the proof block after an app-hash change may follow).
  for (let h = -1n; h !== tn.ctx.storage.blocks.height(); ) {
    h = tn.ctx.storage.blocks.height();
    await new Promise((r) => setTimeout(r, 400));
  }
  const r = await ok3(t, tn, 'abci_info', '', {});
  t.same(r.post, r.uri);
  t.same(r.ws, r.uri);
  t.same(r.cache, [CACHED, CACHED], 'cacheable over URI and JSON-RPC');
  const state = tn.ctx.consensus.getState();
  t.same(r.uri, {
    response: {
      data: 'chaind',
      version: VERSION,
      last_block_height: String(state.lastBlockHeight),
      last_block_app_hash: Buffer.from(state.appHash).toString('base64'),
    },
  });
  t.same(Object.keys(r.uri.response), ['data', 'version', 'last_block_height', 'last_block_app_hash'], 'ResponseInfo order; app_version 0 omitted');
  // The fixture's app has app_version 1; here it is 0 and omitempty drops it.
  const fx = { ...FIXTURES['abci_info'].result.response };
  delete fx.app_version;
  t.same(shape(r.uri.response), shape(fx), 'fixture shape');
});

t.test('abci_info before the first block: height and app hash as the app reports them', async (t) => {
  const tn = await startTestNode({ timeoutCommit: '60s' });
  t.teardown(() => tn.close());
  const r = await ok3(t, tn, 'abci_info', '', {});
  const info = await tn.ctx.app.info();
  t.equal(info.lastBlockHeight, 0n);
  const want: Record<string, string> = { data: 'chaind', version: VERSION };
  if (info.lastBlockAppHash.length > 0) want['last_block_app_hash'] = Buffer.from(info.lastBlockAppHash).toString('base64');
  t.same(r.uri.response, want, 'last_block_height 0 is omitted');
  t.notOk('last_block_height' in r.uri.response);
  t.same([r.post, r.ws], [r.uri, r.uri]);
  const bad = await viaPost(tn, 'abci_info', ['x']);
  t.same(bad.body.error, { code: -32602, message: 'Invalid params', data: 'error converting json params to arguments: expected 0 parameters ([]), got 1 ([[34 120 34]])' });
});
