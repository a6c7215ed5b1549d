/**
 * Node RPC `dial_seeds` (cometbft: rpc/core/net.go UnsafeDialSeeds; p2p/switch.go DialPeersAsync;
 * p2p/netaddress.go). Served only with `[rpc] unsafe = true`. An empty list is `no seeds
 * provided`; each address is checked as NewNetAddressString does and the first error (other than
 * a failed host lookup) is returned; otherwise `Dialing seeds in progress. See /net_info for
 * details`. chaind has no P2P transport: like CometBFT, whose dials run in the background and only
 * log their failures, it answers so and logs that it cannot dial.
 */
import { nullLogger } from '../../src/log.js';
import type { NodeRpcContext } from '../../src/rpc/node/context.js';
import { netRoutes } from '../../src/rpc/node/methods/info-net.js';
import type { RouteContext } from '../../src/rpc/node/routes.js';
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
const ID = '0123456789abcdef0123456789abcdef01234567';
/** A JSON array of strings as the URI argument (http_uri_handler.go: a JSON array literal). */
const arrayArg = (name: string, xs: string[]) => `${name}=${encodeURIComponent(JSON.stringify(xs))}`;
/** A node with the unsafe routes; its dial attempts are logged (at error level) and fail. */
function unsafeNode(): Promise<TestNode> {
  return startTestNode({ timeoutCommit: '60s', flags: { 'rpc.unsafe': true } });
}
/** Address errors, each CometBFT's text (p2p/netaddress.go NewNetAddressString, net.SplitHostPort, strconv). */
const BAD_ADDRESSES: [string, string][] = [
  ['1.2.3.4:26656', 'address (1.2.3.4:26656) does not contain ID'],
  [`${ID}@a@1.2.3.4:1`, `address (${ID}@a@1.2.3.4:1) does not contain ID`],
  ['@1.2.3.4:26656', 'invalid address (@1.2.3.4:26656): no ID'],
  ['zz@1.2.3.4:26656', "invalid address (zz@1.2.3.4:26656): encoding/hex: invalid byte: U+007A 'z'"],
  ['abc@1.2.3.4:26656', 'invalid address (abc@1.2.3.4:26656): encoding/hex: odd length hex string'],
  ['abcd@1.2.3.4:26656', 'invalid address (abcd@1.2.3.4:26656): invalid hex length - got 2, expected 20'],
  [`tcp://zz@1.2.3.4:26656`, "invalid address (zz@1.2.3.4:26656): encoding/hex: invalid byte: U+007A 'z'"],
  [`${ID}@1.2.3.4`, 'invalid address (1.2.3.4): address 1.2.3.4: missing port in address'],
  [`${ID}@1:2:3:4`, 'invalid address (1:2:3:4): address 1:2:3:4: too many colons in address'],
  [`${ID}@[::1`, "invalid address ([::1): address [::1: missing ']' in address"],
  [`${ID}@:26656`, 'invalid address (:26656): host is empty'],
  [`${ID}@1.2.3.4:http`, 'invalid address (http): strconv.ParseUint: parsing "http": invalid syntax'],
  [`${ID}@1.2.3.4:`, 'invalid address (): strconv.ParseUint: parsing "": invalid syntax'],
  [`${ID}@1.2.3.4:65536`, 'invalid address (65536): strconv.ParseUint: parsing "65536": value out of range'],
  [`${ID}@[::1]:-1`, 'invalid address (-1): strconv.ParseUint: parsing "-1": invalid syntax'],
  [`${ID}@localhost:x`, 'invalid address (x): strconv.ParseUint: parsing "x": invalid syntax'],
];
const GOOD_ADDRESSES = [`${ID}@127.0.0.1:26656`, `tcp://${ID.toUpperCase()}@[::1]:26656`, `${ID}@localhost:0080`];

const DIALING = { log: 'Dialing seeds in progress. See /net_info for details' };

t.test('dial_seeds with [rpc] unsafe = true', async (t) => {
  const tn = await unsafeNode();
  t.teardown(() => tn.close());

  await t.test('valid addresses: dialing in progress', async (t) => {
    const r = await ok3(t, tn, 'dial_seeds', arrayArg('seeds', GOOD_ADDRESSES), { seeds: GOOD_ADDRESSES });
    t.same([r.uri, r.post, r.ws], [DIALING, DIALING, DIALING]);
    t.same(r.cache, [null, null], 'not cacheable');
    const pos = await viaPost(tn, 'dial_seeds', [[GOOD_ADDRESSES[0]]]);
    t.same(pos.body.result, DIALING, 'positional params');
    const net = await viaPost(tn, 'net_info', {});
    t.equal(net.body.result.n_peers, '0', 'no peer came of it');
  });

  await t.test('no seeds', async (t) => {
    await err3(t, tn, 'dial_seeds', '', {}, 'no seeds provided');
    await err3(t, tn, 'dial_seeds', arrayArg('seeds', []), { seeds: [] }, 'no seeds provided');
  });

  await t.test("each bad address gives CometBFT's error", async (t) => {
    for (const [addr, text] of BAD_ADDRESSES) await err3(t, tn, 'dial_seeds', arrayArg('seeds', [addr]), { seeds: [addr] }, text);
  });

  await t.test('the first bad address in order wins', async (t) => {
    const list = [GOOD_ADDRESSES[0]!, BAD_ADDRESSES[3]![0], BAD_ADDRESSES[0]![0]];
    await err3(t, tn, 'dial_seeds', arrayArg('seeds', list), { seeds: list }, BAD_ADDRESSES[3]![1]);
  });

  await t.test('seeds must be an array of strings', async (t) => {
    const p = await viaPost(tn, 'dial_seeds', { seeds: 'x' });
    t.same(p.body.error, { code: -32602, message: 'Invalid params', data: 'error converting json params to arguments: json: cannot unmarshal string into Go value of type []json.RawMessage' });
  });
});

t.test('dial_seeds is not served by default', async (t) => {
  const tn = await startTestNode({ timeoutCommit: '60s' });
  t.teardown(() => tn.close());
  const u = await fetch(`${tn.base}/dial_seeds?${arrayArg('seeds', GOOD_ADDRESSES)}`);
  t.same([u.status, await u.text()], [404, '404 page not found\n'], 'URI: plain 404');
  const p = await viaPost(tn, 'dial_seeds', { seeds: GOOD_ADDRESSES });
  t.same(p.body.error, { code: -32601, message: 'Method not found' }, 'JSON-RPC: -32601');
  const w = await viaWs(tn, 'dial_seeds', { seeds: GOOD_ADDRESSES });
  t.same(w.error, { code: -32601, message: 'Method not found' }, 'websocket: -32601');
});

t.test('dial_seeds: a host that does not resolve is skipped, as ErrNetAddressLookup is', async (t) => {
  // The route over a lookup that fails (no DNS in tests): the bad port behind it is never seen.
  const logged: string[] = [];
  const logger = { ...nullLogger, error: (m: string) => logged.push(m), info: () => {}, child: () => logger };
  const ctx = { logger, config: { p2p: { externalAddress: '' } } } as unknown as NodeRpcContext;
  const seen: string[] = [];
  const routes = netRoutes(ctx, { lookup: async (h) => (seen.push(h), Promise.reject(new Error('no such host'))) });
  const dial = routes.find((r) => r.name === 'dial_seeds')!.handler;
  const rc: RouteContext = { transport: 'jsonrpc', id: 1, remoteAddr: '127.0.0.1', ws: undefined, signal: new AbortController().signal };
  t.same(await dial({ seeds: [`${ID}@nowhere.invalid:x`] }, rc), DIALING);
  t.same(seen, ['nowhere.invalid'], 'looked up before the port was parsed');
  t.same(logged, ['Error dialing peer'], 'the dial failure is logged');
  // An IP literal needs no lookup: the port error stands.
  await t.rejects(Promise.resolve(dial({ seeds: [`${ID}@10.0.0.1:x`] }, rc)), { message: 'invalid address (x): strconv.ParseUint: parsing "x": invalid syntax' });
  t.same(seen, ['nowhere.invalid']);
});
