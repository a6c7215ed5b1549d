/**
 * Node RPC `abci_query` (cometbft: rpc/core/abci.go ABCIQuery): `path` (string), `data`
 * (HexBytes: hex without 0x in JSON-RPC, 0x-hex or "quoted" over URI), `height` (0 = latest) and
 * `prove` go to the app as given; the app's ResponseQuery comes back under jsonpb (every field,
 * proto order, int64 as strings, empty bytes null, `proofOps`). The app's refusals are results
 * with a code, not errors. Over URI, JSON-RPC and websocket; shape checked against the
 * `abci_query_with_existing_key` fixture.
 */
import { devAccounts } from '../../src/keys/devaccounts.js';
import { VERSION } from '../../src/version.js';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { QueryBalanceRequestSchema, QueryBalanceResponseSchema } from '../../src/gen/chain/bank/v1beta1/query_pb.js';
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

const FIELDS = ['code', 'log', 'info', 'index', 'key', 'value', 'proofOps', 'height', 'codespace'];
const [ALICE] = devAccounts();

t.test('abci_query', async (t) => {
  const tn = await startTestNode({ flags: { 'consensus.create_empty_blocks': false } });
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);
  for (let h = -1n; h !== tn.ctx.storage.blocks.height(); ) {
    h = tn.ctx.storage.blocks.height();
    await new Promise((r) => setTimeout(r, 400));
  }
  const H = String(tn.ctx.storage.blocks.height());

  await t.test('/app/version: the version as value, at the latest height', async (t) => {
    const r = await ok3(t, tn, 'abci_query', 'path="/app/version"', { path: '/app/version' });
    const want = { response: { code: 0, log: '', info: '', index: '0', key: null, value: Buffer.from(VERSION).toString('base64'), proofOps: null, height: H, codespace: '' } };
    t.same([r.uri, r.post, r.ws], [want, want, want]);
    t.same(Object.keys(r.uri.response), FIELDS, 'jsonpb: every field, proto order');
    t.same(shape({ ...r.uri.response, key: 'k' }), shape(FIXTURES['abci_query_with_existing_key'].result.response), 'fixture shape');
    t.same(r.cache, [null, null], 'not cacheable');
  });

  await t.test('a bank balance: data is hex (0x over URI, bare in JSON-RPC), request and answer protobuf', async (t) => {
    // What CosmJS's QueryClient sends: the gRPC path and the protobuf request.
    const req = Buffer.from(toBinary(QueryBalanceRequestSchema, create(QueryBalanceRequestSchema, { address: ALICE!.bech32, denom: 'achain' })));
    const path = '/chain.bank.v1beta1.Query/Balance';
    const r = await ok3(t, tn, 'abci_query', `path="${path}"&data=0x${req.toString('hex')}&height=${H}`, { path, data: req.toString('hex'), height: H, prove: false });
    t.same([r.post, r.ws], [r.uri, r.uri]);
    t.equal(r.uri.response.code, 0);
    t.equal(r.uri.response.height, H);
    const value = fromBinary(QueryBalanceResponseSchema, Buffer.from(r.uri.response.value, 'base64'));
    t.same([value.balance?.denom, value.balance?.amount], ['achain', '1000000000000000000000000'], 'the dev account balance');
    // Upper-case hex is accepted too, and the "quoted" URI form carries raw bytes.
    const up = await viaPost(tn, 'abci_query', { path, data: req.toString('hex').toUpperCase() });
    t.same(up.body.result, r.uri);
    const quoted = await viaUri(tn, 'abci_query', `path="${path}"&data=${encodeURIComponent(JSON.stringify(req.toString('latin1')))}`);
    t.equal(quoted.status, 200, 'the "quoted" URI form is accepted');
  });

  await t.test("the app's refusals are results with a code", async (t) => {
    const unknown = await ok3(t, tn, 'abci_query', 'path="/no/such/path"', { path: '/no/such/path' });
    t.same(unknown.uri.response, { code: 6, log: 'unknown query path: unknown request', info: '', index: '0', key: null, value: null, proofOps: null, height: '0', codespace: 'sdk' });
    t.same([unknown.post, unknown.ws], [unknown.uri, unknown.uri]);
    const path = '/chain.bank.v1beta1.Query/Balance';
    const future = await viaPost(tn, 'abci_query', { path, height: String(BigInt(H) + 5n) });
    t.same([future.body.result.response.code, future.body.result.response.codespace, future.body.result.response.log], [26, 'sdk', 'cannot query with height in the future; please provide a valid height: invalid height']);
    const negative = await viaWs(tn, 'abci_query', { path, height: '-1' });
    t.same([negative.result.response.code, negative.result.response.log], [18, 'cannot query with height < 0; please provide a valid height: invalid request']);
    const bad = await viaPost(tn, 'abci_query', { path, data: 'ff' });
    t.not(bad.body.result.response.code, 0, 'undecodable request data is refused');
  });

  await t.test('argument errors are parameter errors', async (t) => {
    await err3(t, tn, 'abci_query', 'path="/app/version"&data=0xzz', { path: '/app/version', data: 'zz' }, "encoding/hex: invalid byte: U+007A 'z'", true);
    const h = await viaPost(tn, 'abci_query', { path: '/app/version', height: 1 });
    t.same(h.body.error?.data, 'error converting json params to arguments: invalid 64-bit integer encoding "1", expected string');
    const p = await viaUri(tn, 'abci_query', 'path=/app/version');
    t.same([p.status, p.body.error?.code], [500, -32602], 'an unquoted URI string is not JSON');
  });
});
