/**
 * Node RPC `check_tx` (cometbft: rpc/core/mempool.go CheckTx): the app's CheckTx (type New)
 * straight through the mempool connection, without the mempool's checks and without adding the
 * tx. The result is the flat ResponseCheckTx under jsonpb (every field, proto order, int64 as
 * strings, empty bytes null). Over URI, JSON-RPC and websocket; shape checked against the
 * `broadcast_tx_commit` fixture's `check_tx`.
 */
import { devAccounts } from '../../src/keys/devaccounts.js';
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
const [ALICE, BOB] = devAccounts();
let sent = 0;
/** A bank transfer the JSON tx decoder accepts; the memo makes each one unique. */
function transferTx(pad = 0): Uint8Array {
  sent++;
  const msg = { '@type': '/chain.bank.v1beta1.MsgSend', from_address: ALICE!.bech32, to_address: BOB!.bech32, amount: [{ denom: 'achain', amount: '1' }] };
  const memo = `tx ${sent} ${'x'.repeat(pad)}`;
  return utf8(JSON.stringify({ body: { messages: [msg], memo }, auth_info: { fee: { amount: [], gas_limit: '200000' } } }));
}
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
/** The URI form of a byte argument: 0x-hex. */
const hexArg = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;
/** A node whose first block comes only after 60 s: the mempool keeps what it is given. */
function idleNode(opts: { json?: boolean; flags?: Record<string, string | number | boolean> } = {}): Promise<TestNode> {
  return startTestNode({ timeoutCommit: '60s', txDecoder: opts.json ? 'json' : undefined, flags: opts.flags });
}

const FIELDS = ['code', 'data', 'log', 'info', 'gas_wanted', 'gas_used', 'events', 'codespace'];

t.test('check_tx with bytes the protobuf tx decoder refuses: a result, not an error', async (t) => {
  const tn = await idleNode();
  t.teardown(() => tn.close());
  const r = await ok3(t, tn, 'check_tx', 'tx="name=satoshi"', { tx: b64(utf8('name=satoshi')) });
  const want = { code: 2, data: null, log: 'expected 2 wire type, got 6: tx parse error', info: '', gas_wanted: '0', gas_used: '0', events: [], codespace: 'sdk' };
  t.same(r.uri, want, 'URI');
  t.same(r.post, want, 'JSON-RPC');
  t.same(r.ws, want, 'websocket');
  t.same(Object.keys(r.uri), FIELDS, 'flat ResponseCheckTx, proto order');
  t.same(shape(r.uri), shape(FIXTURES['broadcast_tx_commit'].result.check_tx), 'fixture shape');
  t.same(r.cache, [null, null], 'not cacheable');
});

t.test('check_tx with txs the app accepts', async (t) => {
  const tn = await idleNode({ json: true, flags: { 'mempool.max_tx_bytes': 300, 'mempool.size': 1 } });
  t.teardown(() => tn.close());

  await t.test('code 0 and gas; nothing enters the mempool, nothing is cached', async (t) => {
    const tx = transferTx();
    const r = await ok3(t, tn, 'check_tx', `tx=${hexArg(tx)}`, { tx: b64(tx) });
    t.same(r.post, r.uri);
    t.same(r.ws, r.uri);
    t.equal(r.uri.code, 0);
    t.equal(r.uri.gas_wanted, '200000', "the tx's gas limit");
    t.match(r.uri.gas_used, /^[1-9]\d*$/, 'gas used by the ante chain');
    t.equal(tn.ctx.mempool.size(), 0, 'not added');
    // The mempool never saw it: broadcasting it afterwards works.
    const b = await viaPost(tn, 'broadcast_tx_sync', { tx: b64(tx) });
    t.equal(b.body.result.code, 0);
    t.equal(tn.ctx.mempool.size(), 1);
  });

  await t.test("the mempool's limits do not apply (full, too large, cached)", async (t) => {
    const big = transferTx(60);
    t.ok(big.length > 300);
    const r = await viaPost(tn, 'check_tx', { tx: b64(big) });
    t.equal(r.body.result.code, 0, 'a tx above max_tx_bytes, with a full mempool');
    const again = await viaPost(tn, 'check_tx', { tx: b64(big) });
    t.equal(again.body.result.code, 0, 'the same tx twice');
  });

  await t.test('a decodable tx the app refuses: its code and log', async (t) => {
    const bad = utf8(JSON.stringify({ body: { messages: [] }, auth_info: { fee: { amount: [], gas_limit: '1' } } }));
    const r = await viaWs(tn, 'check_tx', { tx: b64(bad) });
    t.same(r.result, { code: 18, data: null, log: 'must contain at least one message: invalid request', info: '', gas_wanted: '0', gas_used: '0', events: [], codespace: 'sdk' });
  });

  await t.test('bad arguments are parameter errors', async (t) => {
    await err3(t, tn, 'check_tx', 'tx=0x1', { tx: 'AQ=' }, /^(encoding\/hex: odd length hex string|illegal base64 data at input byte 3)$/, true);
  });
});
