/**
 * Keep-alive on the uWS ports (node RPC, REST, EVM JSON-RPC): a connection is only ever closed after an answer
 * that says so, and a request is never closed unanswered while the node computes it.
 *
 * The fuzzer's last open defect (hardening issue 8: ~1 request in 2,500 closed with no answer
 * under a full parallel run) was the first: uWS 20.30 closes the connection after answering a
 * request whose first Connection header value is 5 bytes long (`close`, `Close`, even `fooba`),
 * and then writes no `Connection: close` (it takes the client's word as said). A client that
 * reuses the connection meets a closed socket. net/http (CometBFT, the SDK's gateway) answers
 * `Connection: close` and closes for the `close` option in any spelling or list position.
 *
 * The second was found on the way: uWS's HttpResponse.resume() arms a 10 s timeout, so a request
 * the loop slice had deferred (paused, then resumed) and that took 8–12 s more to compute was
 * closed unanswered. Both are src/rpc/server/uws.ts (connectionClose, pauseUntilAnswer).
 */
import net from 'node:net';
import t, { type Test } from 'tap';
import { defaultNodeConfig } from '../../src/config/node-config.js';
import { route, routes } from '../../src/rpc/node/routes.js';
import { NodeRpcServer } from '../../src/rpc/node/server.js';
import { QueryRouter } from '../../src/app/query-router.js';
import { RestGateway } from '../../src/rpc/rest/gateway.js';
import { GethRpcServer } from '../../src/rpc/jsonrpc/geth-server.js';
import { gethMethod } from '../../src/rpc/jsonrpc/geth.js';
import { LoopSlice } from '../../src/rpc/server/slice.js';
import { CONN_CLOSE_ASKED, CONN_CLOSED_BY_UWS, CONN_KEEP, connectionClose, hasCloseToken, listen, uws, uwsRefusesContentLength } from '../../src/rpc/server/uws.js';
import { header, parseResponse, type HttpAnswer } from '../helpers/fuzz/http-conn.js';
import { Query } from '../fixtures/gen/chain/fixture/v1/query_pb.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Longer than uWS's HTTP timeout can ever take to fire (10 s, swept every 4 s: 8–12 s). */
const PAST_UWS_TIMEOUT_MS = 14_000;

/** A raw client connection: writes requests, reads answers one at a time, sees the server's close. */
class RawConn {
  private readonly sock: net.Socket;
  private buf = Buffer.alloc(0);
  closed = false;
  private wake: (() => void) | null = null;

  constructor(port: number) {
    this.sock = net.connect(port, '127.0.0.1');
    this.sock.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.wake?.();
    });
    const gone = () => {
      this.closed = true;
      this.wake?.();
    };
    this.sock.on('close', gone);
    this.sock.on('error', gone);
  }

  write(raw: string): void {
    this.sock.write(raw, 'latin1');
  }

  /** The next answer, or null when the server closed the connection first (or after `ms`). */
  async answer(head: boolean, ms = 60_000): Promise<HttpAnswer | null> {
    const deadline = Date.now() + ms;
    for (;;) {
      const r = parseResponse(this.buf, head, this.closed);
      if (r) {
        this.buf = this.buf.subarray(r.used);
        return r.answer;
      }
      if (this.closed || Date.now() > deadline) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(1000, Math.max(1, deadline - Date.now())));
        this.wake = () => {
          clearTimeout(timer);
          this.wake = null;
          resolve();
        };
      });
    }
  }

  /** Resolves once the server has closed the connection (true), or false after `ms`. */
  async serverCloses(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.closed && Date.now() < deadline) await sleep(20);
    return this.closed;
  }

  destroy(): void {
    this.sock.destroy();
  }
}

/** Always defers: every HTTP request is paused and served in a later loop turn. */
class DeferEverything extends LoopSlice {
  override admitHttp(): boolean {
    return false;
  }
}

/** Connection header values, and whether the server must close after the answer (and say so). */
const VARIANTS: Array<[string | null, boolean]> = [
  [null, false],
  ['keep-alive', false],
  ['close', true],
  ['Close', true],
  ['close, te', true],
  ['te,close', true],
  // Not a close option (net/http keeps the connection), but uWS 20.30 closes on any 5-byte value:
  // then the answer must at least say so.
  ['fooba', true],
];

function request(method: string, path: string, conn: string | null, body = ''): string {
  const hs = ['Host: x'];
  if (conn !== null) hs.push(`Connection: ${conn}`);
  if (body !== '' || method === 'POST') hs.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  return `${method} ${path} HTTP/1.1\r\n${hs.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * One request with the given Connection header, then, as a naive keep-alive client does, the
 * next one at once unless the answer said `Connection: close`: it must be answered.
 */
async function checkVariant(t: Test, port: number, req: { method: string; path: string; body?: string }, next: string, conn: string | null, closes: boolean): Promise<void> {
  const head = req.method === 'HEAD';
  const c = new RawConn(port);
  try {
    c.write(request(req.method, req.path, conn, req.body));
    const a = await c.answer(head);
    const what = `${req.method} ${req.path}, Connection: ${conn ?? '(none)'}`;
    if (!t.ok(a, `${what}: answered`)) return;
    const says = (header(a!, 'connection') ?? '').toLowerCase() === 'close';
    t.equal(says, closes, `${what}: the answer ${closes ? 'says' : 'does not say'} Connection: close`);
    if (!says) {
      c.write(next);
      const b = await c.answer(false);
      t.ok(b, `${what}: the connection stays open, the next request is answered (got ${b ? b.status : 'a close'})`);
      return;
    }
    // A bodiless answer cannot make uWS close (uws.ts writeResponse): for a close option uWS
    // does not see itself, the client closes, as RFC 9112 §9.6 requires of it.
    if (head && conn !== null && connectionClose(conn) === CONN_CLOSE_ASKED) return;
    t.ok(await c.serverCloses(30_000), `${what}: and the server closes the connection`);
  } finally {
    c.destroy();
  }
}

t.test('Connection header: what uWS and net/http make of it', async (t) => {
  t.equal(connectionClose('close'), CONN_CLOSED_BY_UWS);
  t.equal(connectionClose('CLOSE'), CONN_CLOSED_BY_UWS);
  t.equal(connectionClose('fooba'), CONN_CLOSED_BY_UWS, 'uWS 20.30 closes on any 5-byte value');
  t.equal(connectionClose('close, te'), CONN_CLOSE_ASKED);
  t.equal(connectionClose('te', true), CONN_CLOSE_ASKED, 'close in a later Connection header');
  t.equal(connectionClose('keep-alive'), CONN_KEEP);
  t.equal(connectionClose('closed'), CONN_KEEP);
  t.ok(hasCloseToken(' Close , upgrade'));
  t.notOk(hasCloseToken('closes'));
  t.notOk(hasCloseToken(''));
});

// The premise of src/rpc/server/uws.ts CONN_CLOSED_BY_UWS, on a bare uWS handler (no chaind code
// on the path): should a uWS upgrade change it, the workaround needs a second look (a doubled
// header, or nothing left to work around).
t.test('uWS 20.30 itself: a 5-byte Connection value closes the connection after the answer, unannounced', async (t) => {
  const app = uws.App();
  app.any('/*', (res) => void res.end('hello'));
  const l = await listen(app, { host: '127.0.0.1', port: 0 }, 'bare uWS');
  t.teardown(() => l.close());
  for (const [conn, closes] of [['close', true], ['fooba', true], ['close, te', false], [null, false]] as const) {
    const c = new RawConn(l.port);
    try {
      c.write(request('GET', '/', conn));
      const a = await c.answer(false);
      t.equal(a?.status, 200, `Connection: ${conn ?? '(none)'}: answered`);
      t.equal(a && header(a, 'connection'), undefined, 'no Connection header in the answer');
      if (closes) t.ok(await c.serverCloses(30_000), 'and uWS closes the connection');
      else {
        c.write(request('GET', '/', null));
        t.equal((await c.answer(false))?.status, 200, 'and keeps it open');
      }
    } finally {
      c.destroy();
    }
  }
});

t.test('node RPC: the connection is closed only after an answer that says so', async (t) => {
  const server = await startNodeRpc(t);
  const next = request('GET', '/health', null);
  const jsonrpc = '{"jsonrpc":"2.0","id":1,"method":"health"}';
  for (const [conn, closes] of VARIANTS) {
    await checkVariant(t, server.port, { method: 'GET', path: '/health' }, next, conn, closes);
    await checkVariant(t, server.port, { method: 'POST', path: '/', body: jsonrpc }, next, conn, closes);
    await checkVariant(t, server.port, { method: 'HEAD', path: '/health' }, next, conn, closes);
    await checkVariant(t, server.port, { method: 'GET', path: '/no_such_method' }, next, conn, closes);
  }
});

function fixtureRouter(): QueryRouter {
  const router = new QueryRouter({ resolveHeight: (h) => h ?? 1n });
  router.registerService(Query, {
    denom: (req) => ({ denom: req.denom }),
    sleep: async (req, ctx) => {
      const end = Date.now() + req.millis;
      while (Date.now() < end && !ctx.signal.aborted) await sleep(20);
      return { finished: true };
    },
  });
  return router;
}

/** The uWS servers under test on port 0, closed when the test ends. */
async function startNodeRpc(t: Test, rs = [routes.health(), routes.status(() => ({ ok: true }))], slice: LoopSlice = new LoopSlice(5)): Promise<NodeRpcServer> {
  const config = { ...defaultNodeConfig().rpc, laddr: 'tcp://127.0.0.1:0' };
  const server = new NodeRpcServer({ laddr: 'tcp://127.0.0.1:0', config, routes: rs, slice });
  await server.start();
  t.teardown(() => server.close());
  return server;
}

async function startRest(t: Test, slice: LoopSlice = new LoopSlice(5)): Promise<RestGateway> {
  const gw = new RestGateway({ address: 'tcp://127.0.0.1:0', router: fixtureRouter(), slice });
  await gw.start();
  t.teardown(() => gw.close());
  return gw;
}

async function startGeth(t: Test, slice: LoopSlice = new LoopSlice(5), extra: Parameters<typeof gethMethod>[0][] = []): Promise<GethRpcServer> {
  const server = new GethRpcServer({ laddr: 'tcp://127.0.0.1:0', methods: [gethMethod({ name: 'web3_clientVersion', handler: () => 'x' }), ...extra.map((m) => gethMethod(m))], slice });
  await server.start();
  t.teardown(() => server.close());
  return server;
}

t.test('REST: the connection is closed only after an answer that says so', async (t) => {
  const gw = await startRest(t);
  const next = request('GET', '/chain/fixture/v1/denoms/atom', null);
  for (const [conn, closes] of VARIANTS) {
    await checkVariant(t, gw.port, { method: 'GET', path: '/chain/fixture/v1/denoms/atom' }, next, conn, closes);
    await checkVariant(t, gw.port, { method: 'HEAD', path: '/chain/fixture/v1/denoms/atom' }, next, conn, closes);
    await checkVariant(t, gw.port, { method: 'GET', path: '/no/such/route' }, next, conn, closes);
  }
});

t.test('EVM JSON-RPC (geth dialect): the connection is closed only after an answer that says so', async (t) => {
  const server = await startGeth(t);
  const call = '{"jsonrpc":"2.0","id":1,"method":"web3_clientVersion"}';
  const next = request('POST', '/', null, call);
  for (const [conn, closes] of VARIANTS) {
    await checkVariant(t, server.port, { method: 'POST', path: '/', body: call }, next, conn, closes);
    // geth answers an empty GET with 200 (its health check) and a PUT with 405.
    await checkVariant(t, server.port, { method: 'GET', path: '/' }, next, conn, closes);
    await checkVariant(t, server.port, { method: 'PUT', path: '/', body: call }, next, conn, closes);
  }
});

// The old code resumed a deferred request's socket before computing it: uWS's timeout then
// closed the connection 8–12 s later, unanswered.
t.test('a request the loop slice deferred is answered however long it takes', async (t) => {
  const slow = route({
    name: 'slow',
    params: [],
    handler: async () => {
      await sleep(PAST_UWS_TIMEOUT_MS);
      return { slept: true };
    },
  });
  const server = await startNodeRpc(t, [routes.health(), slow], new DeferEverything(5));
  const gw = await startRest(t, new DeferEverything(5));
  // The EVM JSON-RPC server too (a big batch at load 15 took this long in the fuzz bench).
  const geth = await startGeth(t, new DeferEverything(5), [{ name: 'test_slow', handler: async () => (await sleep(PAST_UWS_TIMEOUT_MS), 'slept') }]);
  const gethCall = (method: string) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] });

  const ask = async (port: number, path: string): Promise<HttpAnswer | null> => {
    const c = new RawConn(port);
    const isGeth = path === 'geth';
    try {
      c.write(isGeth ? request('POST', '/', null, gethCall('test_slow')) : request('GET', path, null));
      const a = await c.answer(false, PAST_UWS_TIMEOUT_MS + 60_000);
      // Kept alive afterwards, and serving.
      if (a) {
        c.write(isGeth ? request('POST', '/', null, gethCall('web3_clientVersion')) : request('GET', path === '/slow' ? '/health' : '/chain/fixture/v1/denoms/atom', null));
        t.ok(await c.answer(false), `${path}: the connection serves the next request`);
      }
      return a;
    } finally {
      c.destroy();
    }
  };
  const [rpc, rest, evm] = await Promise.all([ask(server.port, '/slow'), ask(gw.port, `/chain/fixture/v1/sleep/${PAST_UWS_TIMEOUT_MS}`), ask(geth.port, 'geth')]);
  t.equal(evm?.status, 200, `EVM JSON-RPC: the same (got ${evm ? evm.status : 'a close'})`);
  t.match(evm?.body.toString() ?? '', /"result":"slept"/);
  t.equal(rpc?.status, 200, `node RPC: a deferred request computed for ${PAST_UWS_TIMEOUT_MS / 1000} s is answered (got ${rpc ? rpc.status : 'a close'})`);
  t.match(rpc?.body.toString() ?? '', /"slept":true/);
  t.equal(rest?.status, 200, `REST: the same (got ${rest ? rest.status : 'a close'})`);
  t.match(rest?.body.toString() ?? '', /"finished":true/);
});

// uWS 20.30 reads Content-Length only after the handler ran, as 1–9 digits, and on anything else
// closes the socket with the handler's answer still in its cork buffer: the client saw a silent
// close where RFC 9112 §6.3 (and net/http) answer 400. The answer now leaves the cork first.
t.test('a Content-Length uWS cannot parse: 400 Bad Request, then the connection closes', async (t) => {
  const server = await startNodeRpc(t);
  const gw = await startRest(t);
  t.ok(uwsRefusesContentLength('-1') && uwsRefusesContentLength('1234567890') && uwsRefusesContentLength('5, 5'));
  t.notOk(uwsRefusesContentLength('') || uwsRefusesContentLength('0') || uwsRefusesContentLength('123456789'));
  const targets: Array<[number, string, string]> = [
    [server.port, 'GET', '/health'],
    [server.port, 'GET', '/no_such_method'],
    [server.port, 'POST', '/'],
    [server.port, 'POST', '/health'],
    [gw.port, 'GET', '/chain/fixture/v1/denoms/atom'],
    [gw.port, 'POST', '/chain/fixture/v1/echo'],
  ];
  for (const [port, method, path] of targets) {
    for (const cl of ['-1', 'abc', '1e3', '5, 5', '1234567890']) {
      const c = new RawConn(port);
      try {
        c.write(`${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${cl}\r\n\r\n{}`);
        const a = await c.answer(false);
        const what = `${method} ${path}, Content-Length: ${cl}`;
        t.equal(a?.status, 400, `${what}: 400 (got ${a ? a.status : 'a close'})`);
        t.equal(a && header(a, 'connection')?.toLowerCase(), 'close', `${what}: Connection: close`);
        t.match(a?.body.toString() ?? '', /^400 Bad Request */, `${what}: Go's text`);
        t.ok(await c.serverCloses(30_000), `${what}: closed`);
      } finally {
        c.destroy();
      }
    }
  }
});

// uWS 20.30 sends the empty last body chunk of a `Content-Length: 0` request only when the
// request's head came in one read. A head split over two TCP segments was never answered: the
// connection sat until uWS's idle timeout closed it (the fuzzer's frame.split, ~1 run in 6).
t.test('Content-Length: 0 with the head split over TCP segments: answered on every port', async (t) => {
  const server = await startNodeRpc(t);
  const gw = await startRest(t);
  const geth = await startGeth(t);
  const targets: Array<[number, string, string]> = [
    [server.port, 'POST', '/health'],
    [server.port, 'PATCH', '/health'],
    [server.port, 'POST', '/'],
    [gw.port, 'POST', '/chain/fixture/v1/denoms/atom'],
    [geth.port, 'POST', '/'],
  ];
  const name = (port: number) => (port === server.port ? 'node RPC' : port === gw.port ? 'REST' : 'EVM');
  for (const [port, method, path] of targets) {
    const raw = `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 0\r\n\r\n`;
    // The same request in one write is the reference answer.
    const whole = new RawConn(port);
    whole.write(raw);
    const ref = await whole.answer(false, 30_000);
    whole.destroy();
    if (!t.ok(ref, `${method} ${path} on ${name(port)}, one write: answered`)) continue;
    // Cut inside the request line and just before the head's last CRLF: each part its own segment.
    for (const cut of [5, raw.length - 2]) {
      const c = new RawConn(port);
      try {
        c.write(raw.slice(0, cut));
        await sleep(50);
        c.write(raw.slice(cut));
        const a = await c.answer(false, 30_000);
        t.equal(a?.status, ref!.status, `${method} ${path} on ${name(port)}, cut at ${cut}: answered ${ref!.status} as in one write (got ${a ? a.status : 'no answer'})`);
      } finally {
        c.destroy();
      }
    }
  }
});

