/**
 * The node RPC transports on a real uWS server (127.0.0.1, port 0): URI, JSON-RPC over HTTP and
 * JSON-RPC over websocket, read from one route table. Envelopes, id echo, params, batches and
 * notifications, every error case with its HTTP status, headers (X-Server-Time, Cache-Control,
 * CORS), body/header/connection limits, websocket pushes and back-pressure. Expected behaviour is
 * CometBFT 0.38's (cometbft/cometbft:rpc/jsonrpc/server/http_server.go, cometbft/cometbft:rpc/jsonrpc/server/ws_handler.go).
 */
import crypto from 'node:crypto';
import net from 'node:net';
import { WsClient } from '../helpers/ws.js';
import t, { type Test } from 'tap';
import { defaultNodeConfig, type RpcConfig } from '../../src/config/node-config.js';
import { RpcError } from '../../src/rpc/node/errors.js';
import { route, routes, wsRoute, type Route } from '../../src/rpc/node/routes.js';
import { NodeRpcServer } from '../../src/rpc/node/server.js';
import type { PushResult, WsConnection } from '../../src/rpc/node/ws.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

// ------------------------------------------------------------------------------------------------
// Test routes: one per parameter type, a cacheable one, an unsafe one, websocket-only ones.

interface Sub {
  conn: WsConnection;
  id: string | number;
  query: string;
  signal: AbortSignal;
}

class State {
  subs: Sub[] = [];
  holds: Array<() => void> = [];
  flood: { counts: Record<PushResult, number>; late?: PushResult; conn: WsConnection; closeFired: boolean } | null = null;
  release(): void {
    for (const r of this.holds.splice(0)) r();
  }
}

function testRoutes(st: State): Route[] {
  return [
    routes.health(),
    routes.status(() => ({ node_info: { network: 'test-chain' }, sync_info: { latest_block_height: 7n, catching_up: false } })),
    route({
      name: 'block',
      params: [{ name: 'height', type: 'int64', optional: true }],
      cacheable: { unlessDefault: ['height'] },
      handler: ({ height }) => {
        if (height !== undefined && height <= 0n) throw new Error(`height must be greater than 0, but got ${height}`);
        return { height: height ?? 7n };
      },
    }),
    route({
      name: 'tx',
      params: [
        { name: 'hash', type: 'bytes' },
        { name: 'prove', type: 'bool' },
      ],
      cacheable: true,
      handler: ({ hash, prove }) => {
        if (hex(hash) !== 'abcd') throw new Error(`tx (${hex(hash).toUpperCase()}) not found`);
        return { hash: 'ABCD', prove };
      },
    }),
    route({
      name: 'echo',
      params: [
        { name: 'i64', type: 'int64', optional: true },
        { name: 'i', type: 'int' },
        { name: 'u', type: 'uint' },
        { name: 'b', type: 'bool' },
        { name: 's', type: 'string' },
        { name: 'raw', type: 'bytes' },
        { name: 'hx', type: 'hexbytes' },
        { name: 'list', type: 'array' },
        { name: 'q', type: 'query' },
      ],
      handler: (a, ctx) => ({ i64: a.i64 ?? null, i: a.i, u: a.u, b: a.b, s: a.s, raw: hex(a.raw), hx: hex(a.hx), list: a.list, q: a.q, via: ctx.transport, id: ctx.id }),
    }),
    route({
      name: 'big',
      handler: async () => {
        await sleep(1);
        return { max: 2n ** 63n - 1n, html: '<b>&' };
      },
    }),
    route({ name: 'coded', handler: () => Promise.reject(new RpcError('SERVER_ERROR', 'custom')) }),
    route({
      name: 'sleep',
      params: [{ name: 'ms', type: 'int' }],
      handler: async ({ ms }) => {
        await sleep(Number(ms));
        return { slept: ms };
      },
    }),
    route({ name: 'hold', handler: () => new Promise((resolve) => st.holds.push(() => resolve({ held: true }))) }),
    route({
      name: 'dial_seeds',
      unsafe: true,
      params: [{ name: 'seeds', type: 'array' }],
      handler: ({ seeds }) => {
        if (seeds.length === 0) throw new Error('no seeds provided');
        return { log: 'Dialing seeds in progress. See /net_info for details' };
      },
    }),
    wsRoute({
      name: 'subscribe',
      params: [{ name: 'query', type: 'query' }],
      handler: ({ query }, ctx) => {
        st.subs.push({ conn: ctx.ws, id: ctx.id, query, signal: ctx.signal });
        return {};
      },
    }),
    wsRoute({
      name: 'flood',
      params: [{ name: 'size', type: 'int' }],
      handler: async ({ size }, ctx) => {
        const counts: Record<PushResult, number> = { sent: 0, buffered: 0, dropped: 0, closed: 0 };
        const flood = { counts, conn: ctx.ws, closeFired: false } as NonNullable<State['flood']>;
        st.flood = flood;
        ctx.ws.onClose(() => (flood.closeFired = true));
        const chunk = 'x'.repeat(Number(size));
        for (let i = 0; i < 10_000 && counts.dropped === 0 && counts.closed === 0; i++) counts[ctx.ws.push(ctx.id, { i, chunk })]++;
        await sleep(400);
        flood.late = ctx.ws.push(ctx.id, { late: true });
        return counts;
      },
    }),
  ];
}

function rpcConfig(over: Partial<RpcConfig> = {}): RpcConfig {
  return { ...defaultNodeConfig().rpc, laddr: 'tcp://127.0.0.1:0', ...over };
}

async function startServer(t: Test, config: RpcConfig, st = new State(), ws?: ConstructorParameters<typeof NodeRpcServer>[0]['ws']) {
  const server = new NodeRpcServer({ laddr: 'tcp://127.0.0.1:0', config, routes: testRoutes(st), ws });
  await server.start();
  t.teardown(() => server.close());
  return { server, st, base: `http://127.0.0.1:${server.port}` };
}

// ------------------------------------------------------------------------------------------------
// Clients

interface Res {
  status: number;
  headers: Headers;
  text: string;
}

async function http(base: string, path: string, init: RequestInit = {}): Promise<Res> {
  const r = await fetch(base + path, init);
  return { status: r.status, headers: r.headers, text: await r.text() };
}

function post(base: string, body: string | object, path = '/', headers: Record<string, string> = {}): Promise<Res> {
  return http(base, path, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'Content-Type': 'application/json', ...headers } });
}

/** Writes raw bytes and collects the answer until the server closes or `waitMs` passes. */
function raw(port: number, data: string | Buffer, waitMs = 1500): Promise<{ text: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    let byServer = true;
    s.on('data', (d) => chunks.push(d));
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closedByServer: byServer });
    });
    s.write(data);
    timer = setTimeout(() => {
      byServer = false;
      s.destroy();
    }, waitMs);
  });
}

/** A minimal RFC 6455 client: masked frames out, text/binary/close/ping in. */
function serverTimeOk(t: Test, v: string | null, label = 'X-Server-Time'): void {
  const now = Math.floor(Date.now() / 1000);
  t.ok(v !== null && /^\d+$/.test(v) && Math.abs(Number(v) - now) <= 5, `${label}: ${v}`);
}

// ------------------------------------------------------------------------------------------------

const MAIN = rpcConfig({ maxBodyBytes: 4096, maxRequestBatchSize: 3, maxHeaderBytes: 2048 });

/**
 * With the default max_header_bytes and no CORS, a plain `GET /<method>` is matched by uWS's own
 * router (server.ts onRouteGet); MAIN's small max_header_bytes sends every request through the
 * general handler. The URI transport must behave the same on both.
 */
const STATIC_ROUTES = rpcConfig({ maxBodyBytes: 4096, maxRequestBatchSize: 3 });

for (const [label, config] of [
  ['general path', MAIN],
  ['static routes', STATIC_ROUTES],
] as const) {
  t.test(`URI transport (${label})`, (t) => uriTransport(t, config));
}

async function uriTransport(t: Test, config: RpcConfig): Promise<void> {
  const { base, server } = await startServer(t, config);

  let r = await http(base, '/health');
  t.equal(r.status, 200);
  t.equal(r.text, '{"jsonrpc":"2.0","id":-1,"result":{}}', 'envelope with id -1');
  t.equal(r.headers.get('content-type'), 'application/json');
  t.equal(r.headers.get('cache-control'), null, 'health is not cacheable');
  t.equal(r.headers.get('vary'), null, 'no CORS headers when CORS is off');
  serverTimeOk(t, r.headers.get('x-server-time'));

  r = await http(base, '/status');
  t.same(JSON.parse(r.text).result, { node_info: { network: 'test-chain' }, sync_info: { latest_block_height: '7', catching_up: false } }, '64-bit integers as strings');

  r = await http(base, `/echo?i64=5&i=-2&u=3&b=true&s="x%20y"&raw="hi"&hx=0xABCD&list=["a","b"]&q="tm.event='NewBlock'"`);
  t.equal(r.status, 200);
  t.same(JSON.parse(r.text).result, {
    i64: '5',
    i: '-2',
    u: '3',
    b: true,
    s: 'x y',
    raw: '6869',
    hx: 'abcd',
    list: ['a', 'b'],
    q: "tm.event='NewBlock'",
    via: 'uri',
    id: -1,
  });
  r = await http(base, '/echo?i64="9223372036854775807"&raw=0x6869&s=0x78&hx="AB"');
  t.match(JSON.parse(r.text).result, { i64: '9223372036854775807', raw: '6869', s: 'x', hx: '4142' }, 'quoted int, 0x bytes and string, quoted hexbytes are raw');
  r = await http(base, '/echo');
  t.same(JSON.parse(r.text).result, { i64: null, i: '0', u: '0', b: false, s: '', raw: '', hx: '', list: [], q: '', via: 'uri', id: -1 }, 'absent: zero values, optional: undefined');

  // Cache-Control only on a successful cacheable call that pins its height.
  r = await http(base, '/block?height=5');
  t.equal(r.status, 200);
  t.equal(r.headers.get('cache-control'), 'public, max-age=86400', 'block with height is cached');
  r = await http(base, '/block');
  t.equal(r.headers.get('cache-control'), null, 'block without height is not cached');
  r = await http(base, '/block?height=0');
  t.equal(r.status, 500, 'method error: 500');
  t.equal(r.text, '{"jsonrpc":"2.0","id":-1,"error":{"code":-32603,"message":"Internal error","data":"height must be greater than 0, but got 0"}}');
  t.equal(r.headers.get('cache-control'), null, 'errors are not cached');
  r = await http(base, '/tx?hash=0xABCD');
  t.equal(r.headers.get('cache-control'), 'public, max-age=86400', 'always-cacheable route');
  r = await http(base, '/tx?hash=0x01');
  t.equal(r.status, 500);
  t.equal(JSON.parse(r.text).error.data, 'tx (01) not found');

  // Parameter errors: -32602 with HTTP 500.
  const bad: Array<[string, string]> = [
    ['/block?height=0x5', "got a hex string arg, but expected 'int64'"],
    ['/block?height=abc', 'invalid 64-bit integer encoding "abc", expected string'],
    ['/echo?s=abc', "invalid character 'a' looking for beginning of value"],
    ['/echo?b=1', 'json: cannot unmarshal number into Go value of type bool'],
    ['/echo?hx=ABCD', 'invalid hex string: ABCD'],
    ['/echo?u=-1', 'json: cannot unmarshal number -1 into Go value of type uint'],
  ];
  for (const [path, data] of bad) {
    r = await http(base, path);
    t.equal(r.status, 500, `${path}: 500`);
    t.same(JSON.parse(r.text), { jsonrpc: '2.0', id: -1, error: { code: -32602, message: 'Invalid params', data: `error converting http params to arguments: ${data}` } }, path);
  }
  r = await http(base, '/block?height=%22');
  t.same(JSON.parse(r.text), { jsonrpc: '2.0', id: -1, error: { code: -32603, message: 'Internal error', data: 'runtime error: slice bounds out of range [1:0]' } }, 'Go panics on a lone quote');
  t.equal(r.status, 500);

  r = await http(base, '/coded');
  t.same(JSON.parse(r.text).error, { code: -32000, message: 'Server error', data: 'custom' }, 'an RpcError keeps its code');

  r = await http(base, '/subscribe');
  t.equal(r.status, 404, 'websocket-only method over URI: 404');
  t.equal(r.text, '{"jsonrpc":"2.0","id":-1,"error":{"code":-32601,"message":"Method not found"}}');

  for (const path of ['/dial_seeds', '/nope', '/health/', '//health']) {
    r = await http(base, path);
    t.equal(r.status, 404, `${path}: 404`);
    t.equal(r.text, '404 page not found\n', `${path}: Go's plain 404`);
    t.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
    serverTimeOk(t, r.headers.get('x-server-time'), `${path} X-Server-Time`);
  }

  r = await http(base, '/st%61tus');
  t.equal(r.status, 200, 'the path is unescaped before routing');

  r = await http(base, '/echo?i=1', { method: 'POST', body: 's=%22posted%22&b=true&i=9', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  t.match(JSON.parse(r.text).result, { s: 'posted', b: true, i: '1' }, 'form-encoded POST; the URL query wins');

  // multipart/form-data (FormValue → ParseMultipartForm): non-file values only.
  const fd = new FormData();
  fd.append('height', '3');
  r = await http(base, '/block', { method: 'POST', body: fd });
  t.same(JSON.parse(r.text).result, { height: '3' }, 'multipart form (fetch FormData)');
  const multipart = (path: string, boundary: string, body: string, method = 'POST', ct = `multipart/form-data; boundary=${boundary}`) =>
    http(base, path, { method, body, headers: { 'Content-Type': ct } });
  const part = (name: string, value: string, extra = '') => `Content-Disposition: form-data; name="${name}"${extra}\r\n\r\n${value}\r\n`;
  r = await multipart('/block', 'B', `--B\r\n${part('height', '3')}--B--\r\n`);
  t.same(JSON.parse(r.text).result, { height: '3' }, 'multipart: a field');
  r = await multipart('/block', 'B', `--B\r\n${part('height', '3')}--B--\r\n`, 'DELETE');
  t.same(JSON.parse(r.text).result, { height: '3' }, 'multipart: read whatever the method (ParseMultipartForm does not look at it)');
  const withFile = new FormData();
  withFile.append('s', new Blob(['"file"']), 'f.txt');
  withFile.append('s', '"text"');
  r = await http(base, '/echo', { method: 'POST', body: withFile });
  t.match(JSON.parse(r.text).result, { s: 'text' }, 'multipart: a file part is not a form value');
  r = await multipart('/block', 'B', `--B\r\n${part('height', '4', '; filename="h.txt"')}--B\r\n${part('height', '5', '; filename=""')}--B--\r\n`);
  t.same(JSON.parse(r.text).result, { height: '5' }, 'multipart: a part with a filename is a file, not a value (an empty filename is none)');
  r = await multipart('/echo', 'a:b c', `preamble\r\n--a:b c\r\n${part('s', '"q"')}--a:b c\r\n${part('i', '8')}--a:b c--`, 'POST', 'Multipart/Form-Data; charset=utf-8; boundary="a:b c"');
  t.match(JSON.parse(r.text).result, { s: 'q', i: '8' }, 'multipart: quoted boundary, preamble, no CRLF after the close');
  for (const [label, ct, body] of [
    ['unterminated', 'multipart/form-data; boundary=B', `--B\r\n${part('height', '3')}`],
    ['a bad part after a good one', 'multipart/form-data; boundary=B', `--B\r\n${part('height', '3')}--B\r\nno colon\r\n\r\nx\r\n--B--`],
    ['no boundary line', 'multipart/form-data; boundary=B', part('height', '3')],
    ['no boundary parameter', 'multipart/form-data', `--B\r\n${part('height', '3')}--B--`],
    ['a malformed Content-Type', 'multipart/form-data; boundary=B;;', `--B\r\n${part('height', '3')}--B--`],
  ]) {
    r = await http(base, '/block', { method: 'POST', body, headers: { 'Content-Type': ct! } });
    t.same(JSON.parse(r.text).result, { height: '7' }, `multipart: ${label}: no form values`);
  }
  r = await multipart('/echo?i=1', 'B', `--B\r\n${part('i', '9')}--B\r\n${part('s', '"posted"')}--B--\r\n`);
  t.match(JSON.parse(r.text).result, { i: '1', s: 'posted' }, 'multipart: the URL query wins');
  r = await multipart('/block?height=', 'B', `--B\r\n${part('height', '3')}--B--\r\n`);
  t.same(JSON.parse(r.text).result, { height: '7' }, "multipart: an empty query value hides the form's (r.Form lists the query first)");
  r = await http(base, '/block?height=', { method: 'POST', body: 'height=3', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  t.same(JSON.parse(r.text).result, { height: '3' }, "url-encoded: the form's value comes first in r.Form");

  r = await http(base, '/health', { method: 'HEAD' });
  t.equal(r.status, 200);
  t.equal(r.text, '', 'HEAD: no body');
  t.equal(r.headers.get('content-length'), String('{"jsonrpc":"2.0","id":-1,"result":{}}'.length));

  r = await http(base, '/big');
  t.equal(r.text, '{"jsonrpc":"2.0","id":-1,"result":{"max":"9223372036854775807","html":"\\u003cb\\u003e\\u0026"}}', 'bigint as string; HTML escaped as json.Marshal does');

  r = await http(base, '/');
  t.equal(r.status, 200);
  t.equal(r.headers.get('content-type'), 'text/html');
  const host = `127.0.0.1:${server.port}`;
  t.match(r.text, `<a href="//${host}/health?">//${host}/health?</a></br>`, 'endpoint list');
  t.match(r.text, `//${host}/block?height=_`);
  t.notMatch(r.text, 'dial_seeds', 'unsafe routes are not listed when disabled');

  r = await http(base, '/websocket');
  t.equal(r.status, 400, 'GET /websocket without upgrade');
  t.equal(r.text, 'Bad Request\n');
  t.equal(r.headers.get('sec-websocket-version'), '13');
}

t.test('JSON-RPC over HTTP', async (t) => {
  const { base, server } = await startServer(t, MAIN);
  const req = (method: string, params?: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

  let r = await post(base, req('health', {}));
  t.equal(r.status, 200);
  t.equal(r.text, '{"jsonrpc":"2.0","id":1,"result":{}}');
  serverTimeOk(t, r.headers.get('x-server-time'));

  // The JSON-RPC handler reads the body whatever the method: a GET with one is a call.
  const getBody = JSON.stringify(req('health', {}, 9));
  const x = await raw(server.port, `GET / HTTP/1.1\r\nHost: a\r\nContent-Length: ${getBody.length}\r\n\r\n${getBody}`, 300);
  t.match(x.text, /^HTTP\/1\.1 200 OK\r\n/);
  t.ok(x.text.endsWith('{"jsonrpc":"2.0","id":9,"result":{}}'), 'GET / with a body: a JSON-RPC call');
  for (const [id, echoed] of [
    ['abc', 'abc'],
    [7, 7],
    [-5, -5],
    [1.9, 1],
    ['', ''],
  ] as const) {
    r = await post(base, req('health', {}, id));
    t.equal(JSON.parse(r.text).id, echoed, `id ${JSON.stringify(id)} echoed as ${JSON.stringify(echoed)}`);
  }
  // Numeric ids are Go's int(float64) on amd64: truncated, exact digits, -2^63 outside int64.
  const MIN_INT = '-9223372036854775808';
  for (const [id, echoed] of [
    ['99999999999999999999', MIN_INT],
    ['-99999999999999999999', MIN_INT],
    ['1e300', MIN_INT],
    ['9223372036854775807', MIN_INT],
    ['-9223372036854775808', MIN_INT],
    ['9223372036854774784', '9223372036854774784'],
    ['9007199254740993', '9007199254740992'],
    ['-0', '0'],
    ['1.9', '1'],
    ['-1.9', '-1'],
  ]) {
    r = await post(base, `{"jsonrpc":"2.0","id":${id},"method":"health","params":{}}`);
    t.equal(r.text, `{"jsonrpc":"2.0","id":${echoed},"result":{}}`, `id ${id} echoed as ${echoed}`);
  }
  r = await post(base, '{"jsonrpc":"2.0","id":99999999999999999999,"method":"nope"}');
  t.equal(r.text, `{"jsonrpc":"2.0","id":${MIN_INT},"error":{"code":-32601,"message":"Method not found"}}`, 'error envelopes too');
  r = await post(base, '[{"jsonrpc":"2.0","id":99999999999999999999,"method":"health"},{"jsonrpc":"2.0","id":9007199254740993,"method":"nope"}]');
  t.equal(
    r.text,
    `[{"jsonrpc":"2.0","id":${MIN_INT},"result":{}},{"jsonrpc":"2.0","id":9007199254740992,"error":{"code":-32601,"message":"Method not found"}}]`,
    'ids in a batch',
  );
  r = await post(base, '{"jsonrpc":"2.0","method":"health","params":{},"id":1e400}');
  t.equal(r.status, 500, 'an id past float64: parse error');
  t.equal(
    r.text,
    '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error. Invalid JSON","data":"error unmarshaling request: json: cannot unmarshal number 1e400 into Go struct field .id of type float64"}}',
    "the id's literal in the error, as written",
  );
  r = await post(base, '{"Id" : -1E+400,"method":"health"}');
  t.equal(JSON.parse(r.text).error.data, 'error unmarshaling request: json: cannot unmarshal number -1E+400 into Go struct field .id of type float64');
  r = await post(base, '[{"jsonrpc":"2.0","method":"health","id":1e400}]');
  t.equal(r.status, 500);
  t.match(JSON.parse(r.text).error.data, /^error unmarshaling request: json: cannot unmarshal array into Go value of type struct \{/, 'in a batch: the array error');

  r = await post(base, { id: 3, method: 'health', params: [] });
  t.equal(r.text, '{"jsonrpc":"2.0","id":3,"result":{}}', 'jsonrpc member not required');
  r = await post(base, req('health'));
  t.equal(r.text, '{"jsonrpc":"2.0","id":1,"result":{}}', 'params may be omitted when there are none');

  const named = { i64: '-9223372036854775808', i: '4', u: '18446744073709551615', b: true, s: 'é<', raw: 'aGk=', hx: 'ABCD', list: ['p'], q: "tx.height=5" };
  const wantEcho = { i64: '-9223372036854775808', i: '4', u: '18446744073709551615', b: true, s: 'é<', raw: '6869', hx: 'abcd', list: ['p'], q: 'tx.height=5', via: 'jsonrpc', id: 1 };
  r = await post(base, req('echo', named));
  t.same(JSON.parse(r.text).result, wantEcho, 'named params');
  r = await post(base, req('echo', Object.values(named)));
  t.same(JSON.parse(r.text).result, wantEcho, 'positional params');
  r = await post(base, req('echo', null));
  t.match(JSON.parse(r.text).result, { i64: null, i: '0', raw: '' }, 'null params: defaults');

  const paramErr = async (params: unknown, data: string) => {
    const res = await post(base, req('echo', params));
    t.equal(res.status, 200, `invalid params are HTTP 200 (${data})`);
    t.same(JSON.parse(res.text), { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Invalid params', data: `error converting json params to arguments: ${data}` } });
  };
  await paramErr({ i: 4 }, 'invalid 64-bit integer encoding "4", expected string');
  await paramErr({ raw: 'a' }, 'illegal base64 data at input byte 0');
  await paramErr({ hx: '0x12' }, "encoding/hex: invalid byte: U+0078 'x'");
  await paramErr({ b: 'yes' }, 'json: cannot unmarshal string into Go value of type bool');
  await paramErr(['1'], 'expected 9 parameters ([i64 i u b s raw hx list q]), got 1 ([[34 49 34]])');
  await paramErr('x', 'unknown type for JSON params: json: cannot unmarshal string into Go value of type []json.RawMessage. Expected map or array');

  r = await post(base, req('nope', {}));
  t.equal(r.status, 200);
  t.equal(r.text, '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}', 'unknown method: -32601 without data');
  r = await post(base, req('subscribe', { query: "tm.event='NewBlock'" }));
  t.equal(JSON.parse(r.text).error.code, -32601, 'websocket-only method over HTTP');
  t.equal(r.status, 200);
  r = await post(base, req('dial_seeds', { seeds: ['a@b:1'] }));
  t.equal(JSON.parse(r.text).error.code, -32601, 'unsafe method absent');

  r = await post(base, req('block', { height: '0' }));
  t.equal(r.status, 200, 'method error: HTTP 200');
  t.same(JSON.parse(r.text).error, { code: -32603, message: 'Internal error', data: 'height must be greater than 0, but got 0' });

  r = await post(base, req('block'));
  t.equal(r.status, 500, 'params omitted for a method with arguments: Go panics');
  t.equal(r.text, '{"jsonrpc":"2.0","id":-1,"error":{"code":-32603,"message":"Internal error","data":"reflect: Call with too few input arguments"}}');

  // Cache-Control.
  r = await post(base, req('block', { height: '5' }));
  t.equal(r.headers.get('cache-control'), 'public, max-age=86400', 'height given');
  r = await post(base, req('block', {}));
  t.equal(r.headers.get('cache-control'), null, 'height not given');
  r = await post(base, req('tx', { hash: 'AQ==' }));
  t.equal(JSON.parse(r.text).error.data, 'tx (01) not found');
  t.equal(r.headers.get('cache-control'), 'public, max-age=86400', "a method's own error keeps the cache header");
  r = await post(base, [req('block', ['5'], 1), req('tx', { hash: 'q80=' }, 2)]);
  t.equal(r.headers.get('cache-control'), 'public, max-age=86400', 'batch of cacheable calls');
  r = await post(base, [req('block', ['5'], 1), req('health', {}, 2)]);
  t.equal(r.headers.get('cache-control'), null, 'one uncacheable call clears it');
  r = await post(base, [req('block', ['5'], 1), req('nope', {}, 2)]);
  t.equal(r.headers.get('cache-control'), null, 'method not found clears it');

  // Batches and notifications.
  r = await post(base, [req('health', {}, 'a'), { jsonrpc: '2.0', method: 'health' }, req('nope', {}, 'c')]);
  t.equal(r.text, '[{"jsonrpc":"2.0","id":"a","result":{}},{"jsonrpc":"2.0","id":"c","error":{"code":-32601,"message":"Method not found"}}]', 'batch: in order, notification skipped');
  r = await post(base, [req('big', {}, 9)]);
  t.ok(r.text.startsWith('{"jsonrpc":"2.0","id":9,'), 'a batch with one response is answered with an object');
  r = await post(base, [{ jsonrpc: '2.0', method: 'health' }, { jsonrpc: '2.0', id: null, method: 'health' }]);
  t.equal(r.status, 200);
  t.equal(r.text, '', 'only notifications: empty body');
  r = await post(base, { jsonrpc: '2.0', method: 'nope' });
  t.equal(r.text, '', 'a single notification gets nothing, even for an unknown method');
  r = await post(base, '[]');
  t.equal(r.status, 200);
  t.equal(r.text, '', 'empty batch: 200, empty body');
  r = await post(base, Array.from({ length: 4 }, (_, i) => req('health', {}, i)));
  t.equal(r.status, 200, 'batch over max_request_batch_size');
  t.equal(r.text, '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":"batch request exceeds maximum (3) allowed number of requests"}}');
  t.equal(r.headers.get('x-server-time'), null, 'rejected before RecoverAndLogHandler');
  r = await post(base, Array.from({ length: 3 }, (_, i) => req('health', {}, i)));
  t.equal(JSON.parse(r.text).length, 3, 'batch at the maximum');

  // Parse errors: 500, no id.
  const parseErr = async (body: string, data: string) => {
    const res = await post(base, body);
    t.equal(res.status, 500, `parse error: 500 (${data})`);
    t.equal(res.text, JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error. Invalid JSON', data: `error unmarshaling request: ${data}` } }));
  };
  await parseErr('{"jsonrpc":"2.0","id":1,', 'unexpected end of JSON input');
  await parseErr('{"id":true,"method":"health"}', 'json-rpc ID (true) is of unknown type (bool)');
  await parseErr('{"id":1,"method":"health"} x', "invalid character 'x' after top-level value");
  await parseErr('"health"', 'json: cannot unmarshal string into Go value of type struct { JSONRPC string "json:\\"jsonrpc\\""; ID interface {} "json:\\"id,omitempty\\""; Method string "json:\\"method\\""; Params json.RawMessage "json:\\"params\\"" }');
  r = await post(base, Buffer.from([0xff, 0x7b]).toString('latin1'));
  t.equal(r.status, 500, 'non-JSON bytes');

  // Invalid UTF-8 inside a string is accepted (Go replaces it with U+FFFD).
  const bodyBytes = Buffer.concat([Buffer.from('{"id":1,"method":"echo","params":{"s":"a'), Buffer.from([0xff]), Buffer.from('"}}')]);
  const r2 = await fetch(base + '/', { method: 'POST', body: bodyBytes });
  t.equal(JSON.parse(await r2.text()).result.s, 'a\ufffd', 'invalid UTF-8 in a string');

  r = await post(base, req('health', {}), '/nope');
  t.equal(r.status, 404, 'JSON-RPC on another path: 404');
  r = await http(base, '/', { method: 'POST' });
  t.equal(r.headers.get('content-type'), 'text/html', 'empty POST body: endpoint list');
  r = await post(base, req('status', {}));
  t.equal(JSON.parse(r.text).result.sync_info.latest_block_height, '7', '64-bit integers as strings');
});

t.test('body, header and connection limits; bad input keeps the server up', async (t) => {
  const { base, server, st } = await startServer(t, { ...MAIN, maxOpenConnections: 3 });
  const port = server.port;
  const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'echo', params: { s: 'x'.repeat(5000) } });
  const tooLarge = '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":"error reading request body: http: request body too large"}}';

  let x = await raw(port, `POST / HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n${big}`);
  t.match(x.text, /^HTTP\/1\.1 400 Bad Request\r\n/, 'body over max_body_bytes: 400');
  t.match(x.text, /\r\nConnection: close\r\n/i, 'and the connection is closed');
  t.ok(x.text.endsWith(tooLarge), 'Go body-too-large error, no id');
  t.notMatch(x.text, /X-Server-Time/i, 'rejected before RecoverAndLogHandler');
  t.ok(x.closedByServer);

  // Chunked: no Content-Length to check up front; refused once the limit is passed.
  const chunks = Array.from({ length: 6 }, () => `3e8\r\n${'y'.repeat(1000)}\r\n`).join('');
  x = await raw(port, `POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`);
  t.match(x.text, /^HTTP\/1\.1 400 Bad Request\r\n/, 'chunked body over the limit');
  t.ok(x.text.endsWith(tooLarge));

  const atLimit = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'echo', params: { s: '' } });
  const fit = atLimit.replace('"s":""', `"s":"${'z'.repeat(4096 - atLimit.length)}"`);
  t.equal(fit.length, 4096);
  let r = await post(base, fit);
  t.equal(r.status, 200, 'a body of exactly max_body_bytes is read');

  // max_header_bytes (2048) + Go's 4096 bytes of slack.
  x = await raw(port, `GET /health HTTP/1.1\r\nHost: a\r\nX-Pad: ${'p'.repeat(6500)}\r\n\r\n`);
  t.match(x.text, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/, 'headers over the limit: 431');
  t.ok(x.text.endsWith('431 Request Header Fields Too Large'));
  t.ok(x.closedByServer, 'connection closed');
  x = await raw(port, `GET /health HTTP/1.1\r\nHost: a\r\nX-Pad: ${'p'.repeat(5000)}\r\n\r\n`, 300);
  t.match(x.text, /^HTTP\/1\.1 200 OK\r\n/, 'headers within limit + slack');

  // Garbage never takes the server down.
  await raw(port, 'GARBAGE\r\n\r\n', 300);
  await raw(port, Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0x0d, 0x0a, 0x0d, 0x0a]), 300);
  await raw(port, 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n{"id":', 200); // client goes away mid-body
  await raw(port, 'GET /health HTTP/1.1\r\nHost: a\r\nContent-Length: nope\r\n\r\n', 300);
  x = await raw(port, 'GET /he%zzalth HTTP/1.1\r\nHost: a\r\n\r\n', 500);
  t.match(x.text, /^HTTP\/1\.1 400 Bad Request\r\n/, 'bad escape in the path: 400');
  r = await http(base, '/health');
  t.equal(r.status, 200, 'still serving after bad input');

  // max_open_connections (3): in-flight requests and websockets count; the excess is refused.
  const { ws } = await WsClient.connect(port);
  const held = [http(base, '/hold'), http(base, '/hold')];
  while (st.holds.length < 2) await sleep(5);
  t.equal(server.openConnections, 3);
  r = await http(base, '/health');
  t.equal(r.status, 503, 'over max_open_connections: refused');
  const refused = await WsClient.connect(port);
  t.equal(refused.ws, null, 'websocket refused too');
  t.match(refused.head, /^HTTP\/1\.1 503/);
  st.release();
  for (const h of await Promise.all(held)) t.equal(JSON.parse(h.text).result.held, true);
  r = await http(base, '/health');
  t.equal(r.status, 200, 'served again once below the limit');
  ws!.close();
  await ws!.closed;
  await sleep(20);
  t.equal(server.openConnections, 0, 'all released');
});

t.test('static routes: max_open_connections and aborted requests', async (t) => {
  const { base, server, st } = await startServer(t, { ...STATIC_ROUTES, maxOpenConnections: 2 });
  const held = [http(base, '/hold'), http(base, '/hold')];
  while (st.holds.length < 2) await sleep(5);
  t.equal(server.openConnections, 2, 'requests answered later are counted');
  let r = await http(base, '/health');
  t.equal(r.status, 503, 'over max_open_connections: refused');
  t.equal(r.text, 'too many open connections\n');
  st.release();
  for (const h of await Promise.all(held)) t.equal(JSON.parse(h.text).result.held, true);
  t.equal(server.openConnections, 0, 'released when answered');

  // A client that goes away before the answer: released at once, the late answer is dropped.
  const x = raw(server.port, 'GET /hold HTTP/1.1\r\nHost: a\r\n\r\n', 100);
  while (st.holds.length < 1) await sleep(5);
  t.equal(server.openConnections, 1);
  await x;
  await sleep(20);
  t.equal(server.openConnections, 0, 'released on abort');
  st.release();
  r = await http(base, '/status');
  t.equal(r.status, 200, 'still serving');
  serverTimeOk(t, r.headers.get('x-server-time'));
  t.equal(r.headers.get('content-type'), 'application/json');
});

t.test('JSON-RPC over websocket', async (t) => {
  const { server, st } = await startServer(t, MAIN);
  const port = server.port;
  const { ws, head } = await WsClient.connect(port);
  t.ok(ws, 'upgraded');
  t.match(head, /\r\nX-Server-Time: \d+/i, 'X-Server-Time on the upgrade');
  t.notMatch(head, /Sec-WebSocket-Protocol/i, 'no subprotocol negotiated');
  const c = ws!;

  c.call({ jsonrpc: '2.0', id: 1, method: 'health', params: {} });
  t.equal(await c.next(), '{"jsonrpc":"2.0","id":1,"result":{}}');
  c.call({ jsonrpc: '2.0', id: 'str', method: 'echo', params: { i: '3', raw: 'aGk=' } });
  t.match(await c.nextJson(), { id: 'str', result: { i: '3', raw: '6869', via: 'websocket', id: 'str' } }, 'string id, named params');
  c.call({ jsonrpc: '2.0', id: 2, method: 'block', params: ['4'] });
  t.same(await c.nextJson(), { jsonrpc: '2.0', id: 2, result: { height: '4' } }, 'positional params');
  c.send(Buffer.from('{"jsonrpc":"2.0","id":3,"method":"health","params":{}}'), 0x2);
  t.equal((await c.nextJson()).id, 3, 'binary frames are read too');

  c.call({ jsonrpc: '2.0', id: 4, method: 'echo', params: { i: 5 } });
  t.same(
    await c.nextJson(),
    { jsonrpc: '2.0', id: 4, error: { code: -32603, message: 'Internal error', data: 'error converting json params to arguments: invalid 64-bit integer encoding "5", expected string' } },
    'bad params over websocket: -32603',
  );
  c.call({ jsonrpc: '2.0', id: 5, method: 'nope', params: {} });
  t.equal(await c.next(), '{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found"}}');
  c.call({ jsonrpc: '2.0', id: 6, method: 'dial_seeds', params: { seeds: [] } });
  t.equal((await c.nextJson()).error.code, -32601, 'unsafe method absent');
  c.call({ jsonrpc: '2.0', id: 7, method: 'block' });
  t.equal(await c.next(), '{"jsonrpc":"2.0","id":-1,"error":{"code":-32603,"message":"Internal error","data":"WSJSONRPC: reflect: Call with too few input arguments"}}');
  c.call({ jsonrpc: '2.0', id: 8, method: 'block', params: { height: '-1' } });
  t.equal((await c.nextJson()).error.data, 'height must be greater than 0, but got -1', 'method error');
  c.send('{"jsonrpc":"2.0","id":9,');
  t.equal(await c.next(), '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error. Invalid JSON","data":"error unmarshaling request: unexpected EOF"}}');
  c.send('[{"jsonrpc":"2.0","id":10,"method":"health"}]');
  t.match((await c.nextJson()).error.data, /^error unmarshaling request: json: cannot unmarshal array into Go value of type struct/, 'no batches over websocket');
  c.send('{"jsonrpc":"2.0","id":99999999999999999999,"method":"health","params":{}}');
  t.equal(await c.next(), '{"jsonrpc":"2.0","id":-9223372036854775808,"result":{}}', 'an id outside int64: -2^63');
  c.send('{"jsonrpc":"2.0","id":-99999999999999999999,"method":"nope"}');
  t.equal(await c.next(), '{"jsonrpc":"2.0","id":-9223372036854775808,"error":{"code":-32601,"message":"Method not found"}}');
  c.send('{"jsonrpc":"2.0","id":9007199254740993,"method":"health","params":{}}');
  t.equal(await c.next(), '{"jsonrpc":"2.0","id":9007199254740992,"result":{}}', "an id past 2^53: the float64's digits");
  c.send('{"jsonrpc":"2.0","method":"health","id":1e400} junk');
  t.equal(
    await c.next(),
    '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error. Invalid JSON","data":"error unmarshaling request: json: cannot unmarshal number 1e400 into Go struct field .id of type float64"}}',
    'an id past float64',
  );
  c.send('{"jsonrpc":"2.0","id":11,"method":"health","params":{}} trailing junk');
  t.equal((await c.nextJson()).id, 11, 'text after the first value is ignored');
  c.call({ jsonrpc: '2.0', method: 'health', params: {} });
  c.call({ jsonrpc: '2.0', id: 12, method: 'status', params: {} });
  const afterNote = await c.nextJson();
  t.equal(afterNote.id, 12, 'a notification gets no reply');
  t.equal(afterNote.result.sync_info.latest_block_height, '7', '64-bit integers as strings');

  // Requests on one connection are answered in order, one at a time.
  c.call({ jsonrpc: '2.0', id: 'slow', method: 'sleep', params: { ms: '60' } });
  c.call({ jsonrpc: '2.0', id: 'fast', method: 'health', params: {} });
  t.equal((await c.nextJson()).id, 'slow');
  t.equal((await c.nextJson()).id, 'fast');

  // A websocket-only method and pushes on its connection.
  c.call({ jsonrpc: '2.0', id: 'sub-1', method: 'subscribe', params: { query: "tm.event='NewBlock'" } });
  t.equal(await c.next(), '{"jsonrpc":"2.0","id":"sub-1","result":{}}');
  t.equal(st.subs.length, 1);
  const sub = st.subs[0]!;
  t.equal(sub.id, 'sub-1');
  t.equal(sub.conn.remoteAddr, '127.0.0.1');
  t.match(sub.conn.id, /^127\.0\.0\.1#\d+$/);
  const event = { query: sub.query, data: { type: 'consensus/event/NewBlock', value: { block: { header: { height: 5n } } } }, events: { 'tm.event': ['NewBlock'] } };
  t.equal(sub.conn.push(sub.id, event), 'sent');
  t.equal(
    await c.next(),
    '{"jsonrpc":"2.0","id":"sub-1","result":{"query":"tm.event=\'NewBlock\'","data":{"type":"consensus/event/NewBlock","value":{"block":{"header":{"height":"5"}}}},"events":{"tm.event":["NewBlock"]}}}',
    'pushed with the subscribe request id',
  );
  sub.conn.pushError(sub.id, { code: -32000, message: 'Server error', data: 'subscription was canceled (reason: CometBFT exited)' });
  t.equal(await c.next(), '{"jsonrpc":"2.0","id":"sub-1","error":{"code":-32000,"message":"Server error","data":"subscription was canceled (reason: CometBFT exited)"}}');
  t.equal(sub.conn.bufferedAmount(), 0);

  let closeFired = 0;
  sub.conn.onClose(() => closeFired++);
  const removed = sub.conn.onClose(() => closeFired += 100);
  removed();
  t.equal(sub.signal.aborted, false);
  c.close();
  await c.closed;
  for (let i = 0; i < 50 && !sub.conn.closed; i++) await sleep(10);
  t.equal(sub.conn.closed, true, 'server saw the close');
  t.equal(closeFired, 1, 'close listener ran once');
  t.equal(sub.signal.aborted, true, 'ctx.signal aborted on close');
  t.equal(sub.conn.push(sub.id, {}), 'closed', 'push after close');

  // A message over max_body_bytes (the read limit) closes the connection.
  const c2 = (await WsClient.connect(port)).ws!;
  c2.call({ jsonrpc: '2.0', id: 1, method: 'echo', params: { s: 'x'.repeat(5000) } });
  t.equal(await c2.next(), null, 'closed on a too-large message');

  const r = await WsClient.connect(port, '', '8');
  t.equal(r.ws, null, 'unsupported version refused');
  t.match(r.head, /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.equal((await http(`http://127.0.0.1:${port}`, '/health')).status, 200, 'still serving');
});

t.test('websocket back-pressure: pushes skipped, slow client dropped', async (t) => {
  const { server, st } = await startServer(t, MAIN, new State(), { pushHighWaterBytes: 64 * 1024, slowClientMs: 300 });
  const c = (await WsClient.connect(server.port)).ws!;
  c.sock.pause(); // the client stops reading
  c.call({ jsonrpc: '2.0', id: 'f', method: 'flood', params: { size: '262144' } });
  for (let i = 0; i < 500 && !(st.flood?.late); i++) await sleep(10);
  const f = st.flood!;
  t.ok(f.counts.sent + f.counts.buffered > 0, `pushes accepted before back-pressure: ${JSON.stringify(f.counts)}`);
  t.ok(f.counts.buffered > 0, 'some pushes buffered (send returned 0)');
  t.equal(f.counts.dropped, 1, 'then a push is skipped above the high-water mark');
  t.equal(f.late, 'closed', 'still stalled after slowClientMs: the client is dropped');
  t.equal(f.conn.closed, true);
  t.equal(f.closeFired, true, 'close listeners ran');
  c.sock.destroy();
  const r = await http(`http://127.0.0.1:${server.port}`, '/health');
  t.equal(r.status, 200, 'server unaffected');
  t.equal(server.openConnections, 0);
});

t.test('CORS', async (t) => {
  const { base, server } = await startServer(t, rpcConfig({ corsAllowedOrigins: ['https://*.example.com', 'http://good.org'], unsafe: true }));
  const preflight = (origin: string, method: string, headers?: string, path = '/') =>
    http(base, path, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': method, ...(headers ? { 'Access-Control-Request-Headers': headers } : {}) } });

  let r = await preflight('https://app.example.com', 'POST', 'content-type');
  t.equal(r.status, 204, 'preflight: 204');
  t.equal(r.text, '');
  t.equal(r.headers.get('access-control-allow-origin'), 'https://app.example.com', 'wildcard subdomain allowed, origin echoed');
  t.equal(r.headers.get('access-control-allow-methods'), 'POST');
  t.equal(r.headers.get('access-control-allow-headers'), 'content-type');
  t.equal(r.headers.get('vary'), 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
  serverTimeOk(t, r.headers.get('x-server-time'));
  // rs/cors writes a bare 204: no Content-Length, and the connection serves the next request.
  const twice = 'OPTIONS / HTTP/1.1\r\nHost: a\r\nOrigin: http://good.org\r\nAccess-Control-Request-Method: POST\r\nContent-Length: 0\r\n\r\n';
  const x = await raw(server.port, twice + 'GET /health HTTP/1.1\r\nHost: a\r\n\r\n', 400);
  t.notMatch(x.text.slice(0, x.text.indexOf('\r\n\r\n')), /content-length/i, 'no Content-Length on the 204');
  t.match(x.text, /^HTTP\/1\.1 204 No Content\r\n[^]*\r\n\r\nHTTP\/1\.1 200 OK\r\n[^]*\{"jsonrpc":"2\.0","id":-1,"result":\{\}\}$/, 'preflight then a request on one connection');

  r = await preflight('http://evil.org', 'POST');
  t.equal(r.status, 204, 'disallowed origin: still 204');
  t.equal(r.headers.get('access-control-allow-origin'), null, 'but no allow headers');
  t.equal(r.headers.get('vary'), 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
  r = await preflight('http://good.org', 'PUT');
  t.equal(r.headers.get('access-control-allow-origin'), null, 'method not allowed');
  r = await preflight('http://good.org', 'GET', 'authorization');
  t.equal(r.headers.get('access-control-allow-origin'), null, 'header not allowed');
  r = await preflight('http://good.org', 'GET', 'content-type,x-server-time', '/nope');
  t.equal(r.status, 204, 'preflight answered before routing');
  t.equal(r.headers.get('access-control-allow-headers'), 'content-type,x-server-time');

  r = await http(base, '/health', { headers: { Origin: 'https://a.b.example.com' } });
  t.equal(r.headers.get('access-control-allow-origin'), 'https://a.b.example.com', 'actual request from an allowed origin');
  t.equal(r.headers.get('vary'), 'Origin');
  r = await post(base, { jsonrpc: '2.0', id: 1, method: 'health', params: {} }, '/', { Origin: 'http://good.org' });
  t.equal(r.headers.get('access-control-allow-origin'), 'http://good.org');
  r = await http(base, '/health', { headers: { Origin: 'https://example.com' } });
  t.equal(r.headers.get('access-control-allow-origin'), null, 'the wildcard needs a subdomain');
  t.equal(r.headers.get('vary'), 'Origin', 'Vary always set');
  r = await http(base, '/health');
  t.equal(r.headers.get('access-control-allow-origin'), null, 'no Origin');
  r = await http(base, '/nope', { headers: { Origin: 'http://good.org' } });
  t.equal(r.headers.get('access-control-allow-origin'), 'http://good.org', 'CORS headers on a 404 too');
  r = await http(base, '/health', { method: 'OPTIONS', headers: { Origin: 'http://good.org' } });
  t.equal(r.status, 200, 'OPTIONS without Access-Control-Request-Method is an actual request');

  const { head } = await WsClient.connect(server.port, 'Origin: http://good.org\r\n');
  t.match(head, /\r\nAccess-Control-Allow-Origin: http:\/\/good\.org/i, 'CORS on the websocket upgrade');

  r = await http(base, '/dial_seeds?seeds=["id@1.2.3.4:26656"]');
  t.equal(JSON.parse(r.text).result.log, 'Dialing seeds in progress. See /net_info for details', 'unsafe route served when enabled');
  r = await post(base, { jsonrpc: '2.0', id: 1, method: 'dial_seeds', params: { seeds: [] } });
  t.equal(JSON.parse(r.text).error.data, 'no seeds provided');
  r = await http(base, '/');
  t.match(r.text, 'dial_seeds?seeds=_', 'listed when enabled');

  const all = await startServer(t, rpcConfig({ corsAllowedOrigins: ['*'] }));
  r = await http(all.base, '/health', { headers: { Origin: 'http://anything.test' } });
  t.equal(r.headers.get('access-control-allow-origin'), '*', '"*" allows every origin');
  r = await http(all.base, '/', { method: 'OPTIONS', headers: { Origin: 'http://x.test', 'Access-Control-Request-Method': 'GET' } });
  t.equal(r.headers.get('access-control-allow-origin'), '*');
});

t.test('start and close', async (t) => {
  const server = new NodeRpcServer({ laddr: 'tcp://127.0.0.1:0', config: rpcConfig(), routes: [routes.health()] });
  await server.start();
  const port = server.port;
  t.ok(port > 0);
  const { ws } = await WsClient.connect(port);
  await t.rejects(server.start(), /already started/);
  server.close();
  await ws!.closed;
  t.equal(ws!.closeCode, 1001, 'websockets closed with 1001 on shutdown');
  await t.rejects(fetch(`http://127.0.0.1:${port}/health`), 'no longer listening');
  t.throws(() => new NodeRpcServer({ laddr: 'x', config: rpcConfig(), routes: [routes.health(), routes.health()] }), /declared twice/);
  const busy = new NodeRpcServer({ laddr: 'tcp://127.0.0.1:0', config: rpcConfig(), routes: [] });
  await busy.start();
  t.teardown(() => busy.close());
  const clash = new NodeRpcServer({ laddr: `tcp://127.0.0.1:${busy.port}`, config: rpcConfig(), routes: [] });
  await t.rejects(clash.start(), /cannot listen/, 'bind failure rejects');
});
