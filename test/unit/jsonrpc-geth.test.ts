/**
 * The geth dialect of the JSON-RPC layer (src/rpc/jsonrpc/geth.ts, geth-server.ts), served over
 * HTTP and websocket with a tiny `eth_*` method table. Expected texts are go-ethereum's
 * (ethereum/go-ethereum:rpc/errors.go, rpc/json.go, rpc/handler.go, rpc/server.go, rpc/http.go,
 * common/hexutil/json.go; golden files rpc/testdata/*.js).
 */
import net from 'node:net';
import t from 'tap';
import { decodeGethArg, GethRpcError, gethMethod } from '../../src/rpc/jsonrpc/geth.js';
import { GethRpcServer } from '../../src/rpc/jsonrpc/geth-server.js';
import { RouteTable } from '../../src/rpc/jsonrpc/methods.js';
import { WsClient } from '../helpers/ws.js';

const ADDR = '0x' + 'ab'.repeat(20);
let notified = 0;

const methods = [
  gethMethod({ name: 'eth_chainId', handler: () => '0x2a' }),
  gethMethod({
    name: 'eth_getBalance',
    params: [
      { name: 'address', type: 'address' },
      { name: 'block', type: 'block', optional: true },
    ],
    handler: ({ address, block }) => ({ address: Buffer.from(address).toString('hex'), block: typeof block === 'bigint' ? `0x${block.toString(16)}` : (block ?? 'latest') }),
  }),
  gethMethod({
    name: 'eth_sum',
    params: [
      { name: 'a', type: 'quantity' },
      { name: 'b', type: 'uint64' },
    ],
    handler: ({ a, b }) => `0x${(a + b).toString(16)}`,
  }),
  gethMethod({ name: 'eth_slow', params: [{ name: 'data', type: 'data' }], handler: async ({ data }) => `0x${Buffer.from(data).toString('hex')}` }),
  gethMethod({ name: 'eth_notify', handler: () => (notified++, true) }),
  gethMethod({ name: 'eth_fail', handler: () => { throw new Error('header not found'); } }),
  gethMethod({ name: 'eth_revert', handler: () => { throw new GethRpcError(3, 'execution reverted: user error', '0x08c379a0'); } }),
  gethMethod({ name: 'eth_transport', handler: (_a, ctx) => ctx.transport }),
  gethMethod({ name: 'eth_subscribe', params: [{ name: 'kind', type: 'string' }], handler: () => '0x1' }),
];

async function startServer(opts: Partial<ConstructorParameters<typeof GethRpcServer>[0]> = {}): Promise<GethRpcServer> {
  const s = new GethRpcServer({ laddr: 'tcp://127.0.0.1:0', methods, ...opts });
  await s.start();
  return s;
}

async function post(port: number, body: string, headers: Record<string, string> = { 'Content-Type': 'application/json' }, method = 'POST') {
  const r = await fetch(`http://127.0.0.1:${port}/`, { method, body, headers });
  return { status: r.status, contentType: r.headers.get('content-type'), text: await r.text() };
}

const err = (id: unknown, code: number, message: string) => JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
const ok = (id: unknown, result: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result });

t.test('method names: namespaced camelCase is accepted, other shapes are not', async (t) => {
  t.doesNotThrow(() => new RouteTable(methods, { unsafe: false, paramTypes: ['address', 'block', 'quantity', 'uint64', 'data', 'string'] }));
  t.throws(() => new RouteTable([gethMethod({ name: 'Eth_x', handler: () => 1 })], { unsafe: false, paramTypes: [] }), /invalid name/);
  t.throws(() => new RouteTable([gethMethod({ name: 'eth-x', handler: () => 1 })], { unsafe: false, paramTypes: [] }), /invalid name/);
});

t.test('over HTTP', async (t) => {
  const s = await startServer();
  t.teardown(() => s.close());
  const p = s.port;

  await t.test('a call, and its id echoed as sent', async (t) => {
    const r = await post(p, '{"jsonrpc":"2.0","id":7,"method":"eth_chainId"}');
    t.equal(r.status, 200);
    t.equal(r.contentType, 'application/json');
    t.equal(r.text, ok(7, '0x2a'));
    t.equal((await post(p, '{"jsonrpc":"2.0","id":"abc","method":"eth_chainId","params":[]}')).text, ok('abc', '0x2a'));
    t.equal((await post(p, '{"jsonrpc":"2.0","id":null,"method":"eth_chainId","params":null}')).text, ok(null, '0x2a'), '"id":null is a call');
    t.equal((await post(p, '{"jsonrpc":"2.0","id":1,"method":"eth_transport"}')).text, ok(1, 'jsonrpc'));
    // A number id too large for a double parses as ±Infinity, which JSON cannot write: the answer
    // must still be JSON (found by the bench's fuzz run: `"id":Infinity`), with id null.
    t.equal((await post(p, '{"jsonrpc":"2.0","id":1e400,"method":"eth_chainId"}')).text, ok(null, '0x2a'), 'id 1e400: null');
    t.equal((await post(p, '{"jsonrpc":"2.0","id":-1e400,"method":"nope"}')).text, err(null, -32601, 'the method nope does not exist/is not available'), 'id -1e400 on an error: null');
    t.equal((await post(p, '[{"jsonrpc":"2.0","id":1e400,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2.50,"method":"eth_chainId"}]')).text, `[${ok(null, '0x2a')},${ok(2.5, '0x2a')}]`, 'in a batch too');
  });

  await t.test('parse error', async (t) => {
    const r = await post(p, "'f");
    t.equal(r.status, 200);
    t.equal(r.text, err(null, -32700, 'parse error'));
    t.equal((await post(p, '{"jsonrpc":"2.0",')).text, err(null, -32700, 'parse error'));
  });

  await t.test('invalid request', async (t) => {
    t.equal((await post(p, '1')).text, err(null, -32600, 'invalid request'));
    t.equal((await post(p, 'null')).text, err(null, -32600, 'invalid request'));
    t.equal((await post(p, '{"jsonrpc":"2.1","id":1,"method":"eth_chainId"}')).text, err(1, -32600, 'invalid request'), 'wrong version: id echoed');
    t.equal((await post(p, '{"id":1,"method":"eth_chainId"}')).text, err(1, -32600, 'invalid request'), 'no version');
    t.equal((await post(p, '{"jsonrpc":"2.0","id":1}')).text, err(1, -32600, 'invalid request'), 'no method');
    t.equal((await post(p, '{"jsonrpc":"2.0","id":[],"method":"eth_chainId"}')).text, err(null, -32600, 'invalid request'), 'array id: null');
    t.equal((await post(p, '{"jsonrpc":"2.0","id":{},"method":"eth_chainId"}')).text, err(null, -32600, 'invalid request'), 'object id: null');
    const long = 'eth_' + 'x'.repeat(2045);
    t.equal((await post(p, JSON.stringify({ jsonrpc: '2.0', id: 2, method: long }))).text, err(2, -32600, 'method name too long: 2049 > 2048'));
  });

  await t.test('unknown method', async (t) => {
    t.equal((await post(p, '{"jsonrpc":"2.0","id":1,"method":"invalid_method"}')).text, err(1, -32601, 'the method invalid_method does not exist/is not available'));
    t.equal((await post(p, '{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}')).text, err(1, -32601, 'notifications not supported'));
  });

  await t.test('parameters: positional, with geth\'s texts', async (t) => {
    const call = (params: unknown) => post(p, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params }));
    t.equal((await call([ADDR])).text, ok(1, { address: 'ab'.repeat(20), block: 'latest' }), 'optional block left out');
    t.equal((await call([ADDR, '0x10'])).text, ok(1, { address: 'ab'.repeat(20), block: '0x10' }));
    t.equal((await call([ADDR, null])).text, ok(1, { address: 'ab'.repeat(20), block: 'latest' }), 'null for a pointer argument');
    t.equal((await call([ADDR, 'pending'])).text, ok(1, { address: 'ab'.repeat(20), block: 'pending' }));
    t.equal((await call([ADDR, '3'])).text, err(1, -32602, 'invalid argument 1: hex string without 0x prefix'));
    t.equal((await call([ADDR, '0x03'])).text, err(1, -32602, 'invalid argument 1: hex number with leading zero digits'));
    t.equal((await call([ADDR, ''])).text, err(1, -32602, 'invalid argument 1: empty hex string'));
    t.equal((await call([ADDR, '0x'])).text, err(1, -32602, 'invalid argument 1: hex string "0x"'));
    t.equal((await call([ADDR, 3])).text, err(1, -32602, 'invalid argument 1: hex string without 0x prefix'), 'a JSON number is read as its text');
    t.equal((await call(['ab'.repeat(20)])).text, err(1, -32602, 'invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type common.Address'));
    t.equal((await call(['0x12'])).text, err(1, -32602, 'invalid argument 0: hex string has length 2, want 40 for common.Address'));
    t.equal((await call(['0x1'])).text, err(1, -32602, 'invalid argument 0: json: cannot unmarshal hex string of odd length into Go value of type common.Address'));
    t.equal((await call([5])).text, err(1, -32602, 'invalid argument 0: json: cannot unmarshal non-string into Go value of type common.Address'));
    t.equal((await call({ address: ADDR })).text, err(1, -32602, 'non-array args'));
    t.equal((await call([ADDR, 'latest', 1])).text, err(1, -32602, 'too many arguments, want at most 2'));
    t.equal((await call([])).text, err(1, -32602, 'missing value for required argument 0'));
    const sum = (params: unknown) => post(p, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sum', params }));
    t.equal((await sum(['0xff', '0x1'])).text, ok(1, '0x100'));
    t.equal((await sum(['0x', '0x1'])).text, err(1, -32602, 'invalid argument 0: json: cannot unmarshal hex string "0x" into Go value of type *hexutil.Big'));
    t.equal((await sum(['0x1', '0x1ffffffffffffffff'])).text, err(1, -32602, 'invalid argument 1: json: cannot unmarshal hex number > 64 bits into Go value of type hexutil.Uint64'));
    t.equal((await sum(['0xzz', '0x1'])).text, err(1, -32602, 'invalid argument 0: json: cannot unmarshal invalid hex string into Go value of type *hexutil.Big'));
  });

  await t.test('method errors: -32000 by default, the error\'s own code and data otherwise', async (t) => {
    t.equal((await post(p, '{"jsonrpc":"2.0","id":1,"method":"eth_fail"}')).text, err(1, -32000, 'header not found'));
    t.equal(
      (await post(p, '{"jsonrpc":"2.0","id":1,"method":"eth_revert"}')).text,
      JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: 3, message: 'execution reverted: user error', data: '0x08c379a0' } }),
    );
    t.equal((await post(p, '{"jsonrpc":"2.0","id":1,"method":"eth_slow","params":["0xbeef"]}')).text, ok(1, '0xbeef'), 'an async method');
  });

  await t.test('a notification runs and gets no answer', async (t) => {
    const before = notified;
    const r = await post(p, '{"jsonrpc":"2.0","method":"eth_notify"}');
    t.equal(r.status, 200);
    t.equal(r.text, '');
    t.equal(notified, before + 1);
    t.equal((await post(p, '')).text, '', 'an empty body: nothing');
  });

  await t.test('batches', async (t) => {
    const before = notified;
    const r = await post(
      p,
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'eth_chainId' },
        { jsonrpc: '2.0', method: 'eth_notify' },
        { jsonrpc: '2.0', id: 2, method: 'eth_slow', params: ['0x01'] },
        1,
        { jsonrpc: '2.0', id: 3, method: 'nope_nope' },
        { jsonrpc: '2.0', id: 4, method: 'eth_sum', params: ['0x1'] },
      ]),
    );
    t.equal(
      r.text,
      `[${ok(1, '0x2a')},${ok(2, '0x01')},${err(null, -32600, 'invalid request')},${err(3, -32601, 'the method nope_nope does not exist/is not available')},${err(4, -32602, 'missing value for required argument 1')}]`,
      'answers in order; the notification has none',
    );
    t.equal(notified, before + 1);
    t.equal((await post(p, '[]')).text, err(null, -32600, 'empty batch'), 'an empty batch: one object');
    t.equal((await post(p, '[{"jsonrpc":"2.0","method":"eth_notify"}]')).text, '', 'only notifications: no answer');
    t.equal((await post(p, '[{"jsonrpc":"2.0","id":9,"method":"eth_chainId"}]')).text, `[${ok(9, '0x2a')}]`, 'a batch of one is an array');
  });

  await t.test('HTTP rules', async (t) => {
    const health = await fetch(`http://127.0.0.1:${p}/`);
    t.equal(health.status, 200);
    t.equal(await health.text(), '');
    const bad = await post(p, '{}', { 'Content-Type': 'text/plain' });
    t.equal(bad.status, 415);
    t.equal(bad.text, 'invalid content type, only application/json is supported\n');
    t.equal((await post(p, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}', { 'Content-Type': 'application/json-rpc; charset=utf-8' })).text, ok(1, '0x2a'));
    t.equal((await post(p, '{}', { 'Content-Type': 'application/json' }, 'PUT')).status, 405);
  });
});

t.test('batch limits', async (t) => {
  const s = await startServer({ batchItemLimit: 2, batchResponseMaxSize: 60, bodyLimit: 1000 });
  t.teardown(() => s.close());
  const p = s.port;
  const calls = [
    { jsonrpc: '2.0', method: 'eth_notify' },
    { jsonrpc: '2.0', id: 5, method: 'eth_chainId' },
    { jsonrpc: '2.0', id: 6, method: 'eth_chainId' },
  ];
  t.equal((await post(p, JSON.stringify(calls))).text, `[${err(5, -32600, 'batch too large')}]`, 'over the item limit: one error with the first call\'s id');
  const big = await post(p, JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'eth_slow', params: ['0x' + '00'.repeat(40)] }, { jsonrpc: '2.0', id: 2, method: 'eth_chainId' }]));
  t.equal(big.text, `[${ok(1, '0x' + '00'.repeat(40))},${err(2, -32003, 'response too large')}]`, 'past the response size: the rest get -32003');
  const tooLarge = await post(p, 'x'.repeat(1001));
  t.equal(tooLarge.status, 413);
  t.equal(tooLarge.text, 'content length too large (1001>1000)\n');
});

t.test('http-timeout: a call still running is answered -32002, its signal aborted; websocket has no limit', async (t) => {
  // eth_hang runs until its request's signal aborts; eth_count counts the calls that started.
  const started = { hang: 0, count: 0, aborted: 0 };
  const hangMethods = [
    ...methods,
    gethMethod({
      name: 'eth_hang',
      handler: async (_a, ctx) => {
        started.hang++;
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        started.aborted++;
        return '0xlate';
      },
    }),
    gethMethod({ name: 'eth_count', handler: async () => (started.count++, '0x1') }),
  ];
  // 1.1 s: each call gets 1 s (100 ms less, as geth answers before the server's own cut).
  const s = await startServer({ methods: hangMethods, httpTimeoutMs: 1_100 });
  t.teardown(() => s.close());
  const p = s.port;
  t.equal((await post(p, '{"jsonrpc":"2.0","id":1,"method":"eth_count"}')).text, ok(1, '0x1'), 'a call within the limit: its answer');
  t.equal((await post(p, '{"jsonrpc":"2.0","id":2,"method":"eth_hang"}')).text, err(2, -32002, 'request timed out'), 'a single call');
  t.equal(started.aborted, 1, "the call's signal was aborted");
  const batch = [
    { jsonrpc: '2.0', id: 3, method: 'eth_count' },
    { jsonrpc: '2.0', id: 4, method: 'eth_chainId' },
    { jsonrpc: '2.0', id: 5, method: 'eth_hang' },
    { jsonrpc: '2.0', id: 6, method: 'eth_count' },
    { jsonrpc: '2.0', method: 'eth_count' },
  ];
  const counted = started.count;
  t.equal(
    (await post(p, JSON.stringify(batch))).text,
    `[${ok(3, '0x1')},${ok(4, '0x2a')},${err(5, -32002, 'request timed out')},${err(6, -32002, 'request timed out')}]`,
    'a batch: the answers so far, then the error for each call not answered (not for the notification)',
  );
  t.equal(started.count, counted + 1, 'no call started after the timeout');
  t.equal(started.aborted, 2);

  // Over websocket (geth: no write deadline there) the call runs until it ends; here it is
  // ended by closing the connection, which aborts its signal.
  const { ws } = await WsClient.connect(p);
  const c = ws!;
  c.send('{"jsonrpc":"2.0","id":7,"method":"eth_hang"}');
  await new Promise((r) => setTimeout(r, 1_500));
  t.equal(started.hang, 3, 'the call started');
  t.equal(started.aborted, 2, 'not aborted after the HTTP limit');
  c.close();
  for (let i = 0; i < 200 && started.aborted < 3; i++) await new Promise((r) => setTimeout(r, 50));
  t.equal(started.aborted, 3, 'closing the connection aborted it');
});

t.test('over websocket', async (t) => {
  const s = await startServer();
  t.teardown(() => s.close());
  const { ws } = await WsClient.connect(s.port);
  t.ok(ws, 'upgraded');
  const c = ws!;
  t.teardown(() => c.close());

  c.send('{"jsonrpc":"2.0","id":1,"method":"eth_transport"}');
  t.equal(await c.next(), ok(1, 'websocket'));
  c.send('{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["0x12"]}');
  t.equal(await c.next(), err(2, -32602, 'invalid argument 0: hex string has length 2, want 40 for common.Address'));
  c.send('{"jsonrpc":"2.0","id":3,"method":"eth_nothing"}');
  t.equal(await c.next(), err(3, -32601, 'the method eth_nothing does not exist/is not available'));
  c.send('{"jsonrpc":"2.0","id":4}');
  t.equal(await c.next(), err(4, -32600, 'invalid request'));
  // A notification is answered by nothing: the next message is the answer to the next call.
  const before = notified;
  c.send('{"jsonrpc":"2.0","method":"eth_notify"}');
  c.send('{"jsonrpc":"2.0","id":5,"method":"eth_subscribe","params":["newHeads"]}');
  t.equal(await c.next(), ok(5, '0x1'), 'subscribe is served over websocket');
  t.equal(notified, before + 1);
  c.send('[{"jsonrpc":"2.0","id":6,"method":"eth_chainId"},{"jsonrpc":"2.0","id":7,"method":"eth_slow","params":["0x02"]}]');
  t.equal(await c.next(), `[${ok(6, '0x2a')},${ok(7, '0x02')}]`, 'a batch over websocket');
  // A message that does not parse: Go's syntax error, then the connection ends.
  c.send("'f");
  t.equal(await c.next(), err(null, -32700, "invalid character '\\'' looking for beginning of value"));
  t.equal(await c.next(), null, 'closed after a parse error');
});

t.test('the HTTP port still answers raw keep-alive requests after a bad one and a HEAD', async (t) => {
  const s = await startServer();
  t.teardown(() => s.close());
  const sock = net.connect(s.port, '127.0.0.1');
  t.teardown(() => sock.destroy());
  const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}';
  let acc = '';
  const got = new Promise<void>((resolve) =>
    sock.on('data', (d) => {
      acc += d.toString('latin1');
      if ((acc.match(/"result":"0x2a"/g) ?? []).length >= 2) resolve();
    }),
  );
  const req = `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  // A HEAD answer carries no body (else it would run into the next answer).
  const head = 'HEAD / HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n\r\n';
  sock.write(req + head + `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n'f` + req);
  await got;
  t.match(acc, /"code":-32700,"message":"parse error"/);
  t.match(acc, /HTTP\/1\.1 415 Unsupported Media Type/);
  t.notMatch(acc, /invalid content type/, 'the HEAD answer has no body');
});

t.test('hex parameters: addresses, hashes and data decode as hexutil does, short and long', async (t) => {
  const bytes = (type: 'address' | 'hash' | 'data', v: string) => Buffer.from(decodeGethArg(type, v) as Uint8Array).toString('hex');
  const fails = (type: 'address' | 'hash' | 'data', v: string) => {
    try {
      decodeGethArg(type, v);
      return 'decoded';
    } catch (e) {
      return (e as Error).message;
    }
  };
  t.equal(bytes('address', '0x' + 'aB'.repeat(20)), 'ab'.repeat(20), 'mixed case');
  t.equal(bytes('address', '0X' + '01'.repeat(20)), '01'.repeat(20), '0X prefix');
  t.equal(bytes('hash', '0x' + 'Ff'.repeat(32)), 'ff'.repeat(32));
  t.equal(bytes('data', '0x'), '');
  t.equal(bytes('data', ''), '', 'empty text: no bytes');
  const long = '0123456789abcdefABCDEF'.repeat(10);
  t.equal(bytes('data', `0x${long}`), long.toLowerCase(), 'past the short path');
  const syntax = 'json: cannot unmarshal invalid hex string into Go value of type';
  for (const [what, bad] of [
    ['first digit', 'g' + '0'.repeat(39)],
    ['last digit', '0'.repeat(39) + 'g'],
    ['a letter past f', '0'.repeat(20) + 'G' + '0'.repeat(19)],
    ['U+0130, whose low byte is a digit', '0'.repeat(38) + '\u01300'],
    ['a space', '0'.repeat(38) + ' 0'],
  ] as const) {
    t.match(fails('address', `0x${bad}`), syntax, `address, ${what}`);
    t.match(fails('data', `0x${bad}${long}`), syntax, `long data, ${what}`);
  }
  t.equal(fails('address', '0x' + 'ab'.repeat(19)), 'hex string has length 38, want 40 for common.Address');
  t.match(fails('address', 'ab'.repeat(20)), 'hex string without 0x prefix');
  t.match(fails('hash', '0x' + 'a'.repeat(63)), 'hex string of odd length');
  t.match(fails('data', '0x' + 'a'.repeat(201)), 'hex string of odd length');
  const decoded = decodeGethArg('address', '0x' + '11'.repeat(20)) as Uint8Array;
  t.equal(decoded.byteOffset, 0, 'bytes of their own');
  t.equal(decoded.buffer.byteLength, 20);
});
