/**
 * Hardening of the uWS servers (node RPC, REST, metrics) against hostile input, on real servers
 * on 127.0.0.1 with raw sockets: a bad Content-Length must never end the process, a thrown
 * handler error becomes a protocol-shaped answer, JSON nested past RPC_JSON_MAX_DEPTH is a parse
 * error on every transport, a json-typed URI parameter reports Go's syntax error, clients that
 * send without reading are paced and closed (the loop slice, write back-pressure, the websocket
 * queue), and malformed framing leaves the server serving. REST-specific cases are in
 * rest-gateway.test.ts.
 */
import net from 'node:net';
import t, { type Test } from 'tap';
import { defaultNodeConfig, type RpcConfig } from '../../src/config/node-config.js';
import { Registry } from '../../src/metrics/registry.js';
import { startMetricsServer } from '../../src/metrics/server.js';
import { decodeUriArg, ParamError } from '../../src/rpc/node/params.js';
import { route, routes, type Route } from '../../src/rpc/node/routes.js';
import { NodeRpcServer } from '../../src/rpc/node/server.js';
import { RPC_JSON_MAX_DEPTH } from '../../src/rpc/server/gojson.js';
import { LoopSlice, MIN_PER_TURN } from '../../src/rpc/server/slice.js';
import { parseContentLength } from '../../src/rpc/server/uws.js';
import { wsConnectRaw, wsFrame } from '../helpers/flood.js';
import { WsClient } from '../helpers/ws.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rpcConfig(over: Partial<RpcConfig> = {}): RpcConfig {
  return { ...defaultNodeConfig().rpc, laddr: 'tcp://127.0.0.1:0', ...over };
}

/**
 * Resolves true once `s` is closed by the server. A socket that does not read never sees the
 * server's FIN: after `quietMs` it starts reading (and discarding) to find out.
 */
function closedByServer(s: net.Socket, quietMs: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    s.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
    setTimeout(() => {
      s.on('data', () => {});
      s.resume();
    }, quietMs);
  });
}

/** Sends raw bytes on a new connection; resolves with what came back once the server closed it (or after `waitMs`). */
function raw(port: number, data: string | Buffer, waitMs = 2000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let out = '';
    const timer = setTimeout(() => {
      s.destroy();
      resolve({ text: out, closed: false });
    }, waitMs);
    s.on('data', (d) => (out += d.toString('latin1')));
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ text: out, closed: true });
    });
    s.on('error', reject);
    s.write(data);
  });
}

const BIG = 'x'.repeat(64 * 1024);
/** Far more than the kernel's socket buffers take at once: written through onWritable. */
const HUGE = Array.from({ length: 4 * 1024 }, (_, i) => `${i}`.padStart(1023, '.') + '|').join('');

function hardeningRoutes(calls: { big: number; slow: number }): Route[] {
  return [
    routes.health(),
    routes.status(() => ({ ok: true })),
    route({ name: 'boom', params: [], handler: () => { throw new TypeError('handler bug'); } }),
    route({
      name: 'big',
      params: [],
      handler: () => {
        calls.big++;
        return { data: BIG };
      },
    }),
    route({
      name: 'slow',
      params: [],
      handler: () => {
        calls.slow++;
        const end = performance.now() + 2;
        while (performance.now() < end) {
          /* 2 ms of work */
        }
        return {};
      },
    }),
    route({ name: 'evidence', params: [{ name: 'evidence', type: 'json' }], handler: ({ evidence }) => ({ evidence }) }),
    route({ name: 'huge', params: [], handler: () => ({ data: HUGE }) }),
  ];
}

async function startRpc(t: Test, config = rpcConfig(), slice = new LoopSlice(5)) {
  const calls = { big: 0, slow: 0 };
  const server = new NodeRpcServer({ laddr: 'tcp://127.0.0.1:0', config, routes: hardeningRoutes(calls), slice });
  await server.start();
  t.teardown(() => server.close());
  return { server, calls, slice, port: server.port, base: `http://127.0.0.1:${server.port}` };
}

t.test('Content-Length: parsed as net/http does', async (t) => {
  t.equal(parseContentLength(''), undefined);
  t.equal(parseContentLength('0'), 0);
  t.equal(parseContentLength('1234'), 1234);
  for (const bad of ['-1', 'abc', '1e3', '0x10', '+5', ' 5', '5 ', '1.0']) t.equal(parseContentLength(bad), null, `${JSON.stringify(bad)} is bad`);
  t.equal(parseContentLength('99999999999999999999'), Number.MAX_SAFE_INTEGER, 'huge: over any limit');
});

t.test('node RPC: a bad or oversized Content-Length never ends the process', async (t) => {
  for (const [label, config] of [
    ['general path', rpcConfig({ maxHeaderBytes: 2048 })],
    ['static routes', rpcConfig()],
  ] as const) {
    const { port, base } = await startRpc(t, config);
    for (const cl of ['-1', 'abc', '99999999999999999999', '4294967296']) {
      for (const req of [`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${cl}\r\n\r\n{}`, `GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: ${cl}\r\n\r\n`]) {
        const r = await raw(port, req);
        // uWS 20.30 closes such a connection itself once the handler returns, before flushing;
        // where anything is answered, it is Go's 400.
        t.ok(r.closed, `${label}, ${cl}: connection closed`);
        if (r.text !== '') t.match(r.text, /^HTTP\/1\.1 400 /, `${label}, ${cl}: 400`);
      }
    }
    // A numeric Content-Length past max_body_bytes is refused before the body is read.
    const r = await raw(port, `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n{}`);
    t.match(r.text, /^HTTP\/1\.1 400 /, `${label}: oversized body is 400`);
    t.match(r.text, /request body too large/);
    const ok = await fetch(`${base}/health`);
    t.equal(ok.status, 200, `${label}: still serving`);
  }
});

t.test('node RPC: a handler bug is a JSON-RPC internal error, never an uncaught exception', async (t) => {
  const { base } = await startRpc(t);
  const r = await fetch(`${base}/boom`);
  t.equal(r.status, 500);
  const body = (await r.json()) as { id: number; error: { code: number; data: string } };
  t.equal(body.error.code, -32603);
  t.equal(body.error.data, 'handler bug');
});

t.test('metrics: bad Content-Length and floods', async (t) => {
  const reg = new Registry();
  const m = await startMetricsServer('127.0.0.1:0', reg);
  t.teardown(() => m.close());
  for (const cl of ['-1', 'abc', '99999999999999999999']) {
    const r = await raw(m.port, `GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: ${cl}\r\n\r\n`);
    t.ok(r.closed, `${cl}: closed`);
    if (r.text !== '') t.match(r.text, /^HTTP\/1\.1 400 /);
  }
  const ok = await fetch(`http://127.0.0.1:${m.port}/metrics`);
  t.equal(ok.status, 200, 'still serving');
});

t.test('JSON nested past RPC_JSON_MAX_DEPTH: a parse error on every node RPC transport', async (t) => {
  const { base, port } = await startRpc(t);
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
  const body = `{"jsonrpc":"2.0","id":1,"method":"health","params":${deep(5000)}}`;

  const r = await fetch(`${base}/`, { method: 'POST', body });
  t.equal(r.status, 500, 'HTTP: a parse error is 500');
  const j = (await r.json()) as { error: { code: number; data: string } };
  t.equal(j.error.code, -32700);
  t.equal(j.error.data, "error unmarshaling request: invalid character '[' exceeded max depth");

  // Just under the limit still parses (and gets the method's own answer).
  const under = await fetch(`${base}/`, { method: 'POST', body: `{"jsonrpc":"2.0","id":1,"method":"health","params":{"x":${deep(RPC_JSON_MAX_DEPTH - 2)}}}` });
  t.equal(((await under.json()) as { result?: unknown }).result !== undefined, true, 'depth below the limit is served');

  const { ws } = await WsClient.connect(port);
  t.ok(ws);
  ws!.send(body);
  const w = JSON.parse((await ws!.next(5000))!);
  t.equal(w.error.code, -32700, 'websocket: parse error');
  t.equal(w.error.data, "error unmarshaling request: invalid character '[' exceeded max depth");
  ws!.call({ jsonrpc: '2.0', id: 2, method: 'health' });
  t.same(JSON.parse((await ws!.next())!).result, {}, 'websocket: the connection goes on');
  ws!.close();

  const uri = await fetch(`${base}/evidence?evidence=${deep(5000)}`);
  const u = (await uri.json()) as { error: { code: number; data: string } };
  t.equal(u.error.code, -32602, 'URI json param: invalid params');
  t.equal(u.error.data, "error converting http params to arguments: invalid character '[' exceeded max depth");
});

t.test("a json-typed URI parameter reports encoding/json's syntax error, not V8's", async (t) => {
  t.throws(() => decodeUriArg({ name: 'evidence', type: 'json' }, '%'), new ParamError("invalid character '%' looking for beginning of value"));
  t.throws(() => decodeUriArg({ name: 'evidence', type: 'json' }, '{"a":'), new ParamError('unexpected end of JSON input'));
  t.equal(decodeUriArg({ name: 'evidence', type: 'json' }, '{"a":1}'), '{"a":1}');
  const { base } = await startRpc(t);
  const r = await fetch(`${base}/evidence?evidence=%25`);
  t.equal(r.status, 500);
  const j = (await r.json()) as { error: { code: number; data: string } };
  t.equal(j.error.data, "error converting http params to arguments: invalid character '%' looking for beginning of value");
});

t.test('an answer larger than the socket buffers reaches a slow reader intact (tryEnd + onWritable)', async (t) => {
  const { port, base } = await startRpc(t);
  const want = JSON.stringify({ jsonrpc: '2.0', id: -1, result: { data: HUGE } });
  // A reader that stops for a while, twice: the rest of the body waits with the server meanwhile.
  const s = net.connect(port, '127.0.0.1');
  await new Promise((r) => s.once('connect', r));
  const chunks: Buffer[] = [];
  let got = 0;
  let paused = 0;
  const done = new Promise<void>((resolve) => {
    s.on('data', (d: Buffer) => {
      chunks.push(d);
      got += d.length;
      if (paused < 2 && got > (paused + 1) * 1_000_000) {
        paused++;
        s.pause();
        setTimeout(() => s.resume(), 300);
      }
      const text = Buffer.concat(chunks).toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      if (head > 0) {
        const m = /content-length: (\d+)/i.exec(text.slice(0, head));
        if (m && text.length - head - 4 >= Number(m[1])) resolve();
      }
    });
  });
  s.write('GET /huge HTTP/1.1\r\nHost: x\r\n\r\n');
  await done;
  const text = Buffer.concat(chunks).toString('utf8');
  t.equal(text.slice(text.indexOf('\r\n\r\n') + 4), want, `${want.length} bytes, intact`);
  // The same connection serves the next request.
  s.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  const next = await new Promise<string>((resolve) => s.once('data', (d: Buffer) => resolve(d.toString())));
  t.match(next, /^HTTP\/1\.1 200 OK/, 'keep-alive goes on after the streamed answer');
  s.destroy();
  const r = await fetch(`${base}/huge`);
  t.equal(await r.text(), want, 'fetch reads it whole too');
});

t.test('pipelined requests from a client that does not read: paced by the slice, then closed', async (t) => {
  const slice = new LoopSlice(5);
  const { port, calls, base } = await startRpc(t, rpcConfig(), slice);
  const n = 2000;
  const s = net.connect(port, '127.0.0.1');
  await new Promise((r) => s.once('connect', r));
  s.pause(); // never read
  s.on('error', () => {});
  s.write(Buffer.from('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(n)));
  t.ok(await closedByServer(s, 1000, 20_000), 'the connection is closed');
  // At 2 ms a request, MIN_PER_TURN (16) and a 5 ms slice, a turn's worth ran before the rest
  // were deferred; uWS refuses async pipelining, so the deferred one closed the connection.
  t.ok(calls.slow < n / 4, `only ${calls.slow} of ${n} requests ran`);
  t.ok(slice.deferred >= 1, 'a request was deferred to a later turn');
  t.equal((await fetch(`${base}/health`)).status, 200, 'still serving');
});

t.test('large answers to a client that does not read: at most one is held, then closed', async (t) => {
  const { port, calls, base } = await startRpc(t);
  const n = 2000;
  const s = net.connect(port, '127.0.0.1');
  await new Promise((r) => s.once('connect', r));
  s.pause();
  s.on('error', () => {});
  s.write(Buffer.from('GET /big HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(n)));
  t.ok(await closedByServer(s, 1000, 20_000), 'the connection is closed');
  // The kernel's buffers take a few MB of 64 KiB answers; then one is left pending (tryEnd) and
  // the next pipelined request ends the connection. Without back-pressure all 2000 (128 MB) ran.
  t.ok(calls.big < 150, `${calls.big} of ${n} answers were made`);
  t.equal((await fetch(`${base}/health`)).status, 200, 'still serving');
});

t.test('websocket requests from a client that does not read: paced, then closed', async (t) => {
  const { port, calls } = await startRpc(t, rpcConfig({ maxWebsocketQueuedRequests: 64 }));
  const s = await wsConnectRaw(port);
  s.on('error', () => {});
  const n = 5000;
  const frames: Buffer[] = [];
  for (let i = 0; i < n; i++) frames.push(wsFrame(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'big' })));
  s.write(Buffer.concat(frames));
  t.ok(await closedByServer(s, 1000, 20_000), 'the connection is closed');
  // Answers stop once more than the push high-water mark (4 MiB: 64 of 64 KiB) waits unread; the
  // queue then fills (64) and the connection is closed.
  t.ok(calls.big < 150, `${calls.big} of ${n} requests ran`);
});

t.test('malformed framing: uWS closes or ignores it, the server goes on', async (t) => {
  const { port, base } = await startRpc(t);
  // uWS 20.30 rejects these in its parser, before any handler: no hook to write Go's 400.
  for (const req of ['G@T /health HTTP/1.1\r\nHost: x\r\n\r\n', 'FOO /health HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /hea\0lth HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /health HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n\r\n']) {
    const r = await raw(port, req, 500);
    t.notMatch(r.text, /^HTTP\/1\.1 200/, `${JSON.stringify(req.slice(0, 20))}: not served`);
  }
  t.equal((await fetch(`${base}/health`)).status, 200, 'still serving');
});

t.test('LoopSlice: at once within the slice, deferred in order after it', async (t) => {
  const slice = new LoopSlice(5);
  let admitted = 0;
  for (let i = 0; i < MIN_PER_TURN; i++) if (slice.admit()) admitted++;
  t.equal(admitted, MIN_PER_TURN, 'the first MIN_PER_TURN requests of a turn run');
  const end = performance.now() + 6;
  while (performance.now() < end) {
    /* spend the slice */
  }
  t.notOk(slice.admit(), 'past the slice: deferred');
  const order: number[] = [];
  for (let i = 0; i < 3; i++) slice.defer(() => order.push(i));
  t.notOk(slice.admit(), 'FIFO: later requests wait behind deferred ones');
  t.equal(slice.pending, 3);
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  t.same(order, [0, 1, 2]);
  t.equal(slice.pending, 0);
  t.ok(slice.admit(), 'a new turn');
  const off = new LoopSlice(0);
  t.ok(off.admit() && off.admit(), 'a slice of 0 never defers');
});

/**
 * The deferred FIFO gets a slice of its own in each loop iteration, not what the turn's requests
 * left of theirs: under an HTTP flood the turn spends its slice every iteration, and deferred work
 * (every websocket request) ran one item per iteration, seconds of waiting each under the fuzzer.
 */
t.test('LoopSlice: deferred work gets its own slice after a spent turn', async (t) => {
  const slice = new LoopSlice(5);
  t.ok(slice.admit(), 'a turn opens');
  const end = performance.now() + 6;
  while (performance.now() < end) {
    /* the turn's requests spend the slice */
  }
  let ran = 0;
  for (let i = 0; i < 50; i++) slice.defer(() => ran++);
  await new Promise((r) => setImmediate(r));
  t.equal(ran, 50, 'fifty short deferred items ran in the one check phase');
  t.equal(slice.pending, 0);
  // And the slice still bounds it: items of 2 ms each, at most ~3 of them in one iteration.
  let slow = 0;
  t.ok(slice.admit(), 'the next turn');
  for (let i = 0; i < 10; i++) {
    slice.defer(() => {
      slow++;
      const e = performance.now() + 2;
      while (performance.now() < e) {
        /* a 2 ms request */
      }
    });
  }
  await new Promise((r) => setImmediate(r));
  t.ok(slow >= 1 && slow <= 4, `one check phase ran ${slow} of ten 2 ms items (its 5 ms slice)`);
  while (slice.pending > 0) await new Promise((r) => setImmediate(r));
  t.equal(slow, 10, 'the rest in later iterations');
});

/**
 * Other RPC work always waiting in the slice (as under load: HTTP requests deferred by other
 * clients). A deferred websocket request used to ask admit() again when the slice drained it;
 * with anything else waiting the answer was no, so it went to the back of the queue, every
 * time: the client never got an answer (the fuzzer's "no answer to the sentinel within 20 s").
 */
t.test('websocket: a request the slice deferred runs when its turn comes, however busy the slice', async (t) => {
  const slice = new LoopSlice(1);
  const { port } = await startRpc(t, rpcConfig(), slice);
  let stopped = false;
  let background = 0;
  const busy = (): void => {
    background++;
    if (!stopped) slice.defer(busy);
  };
  // Two never-ending items: whichever runs, the other is still waiting.
  slice.defer(busy);
  slice.defer(busy);
  t.teardown(() => {
    stopped = true;
  });
  const a = await WsClient.connect(port);
  const b = await WsClient.connect(port);
  t.ok(a.ws && b.ws);
  const before = slice.deferred;
  a.ws!.call({ jsonrpc: '2.0', id: 1, method: 'health' });
  b.ws!.send('{"jsonrpc":[[[[[["2.0"]]]]]],"id":2,"method":"health"}');
  a.ws!.call({ jsonrpc: '2.0', id: 3, method: 'status' });
  const ra = JSON.parse((await a.ws!.next(20_000)) ?? 'null');
  t.same(ra?.result, {}, 'first connection: answered');
  const rb = JSON.parse((await b.ws!.next(20_000)) ?? 'null');
  t.equal(rb?.error?.code, -32700, 'second connection: its parse error answered');
  const ra2 = JSON.parse((await a.ws!.next(20_000)) ?? 'null');
  t.equal(ra2?.id, 3, 'and the next request of the first connection too');
  t.ok(slice.deferred - before >= 3, 'the websocket requests were deferred (the slice was busy)');
  t.ok(background > 0);
  stopped = true;
  a.ws!.close();
  b.ws!.close();
});

/**
 * A short pipeline on a loaded machine: the slice is spent by other work (here two never-ending
 * deferred items, so every turn has others waiting). uWS closes a connection whose pipelined
 * request is parsed while an earlier one waits, so a deferral would close it unanswered; a turn
 * answers up to PIPELINE_OVERDRAFT HTTP requests at once past its slice instead.
 */
t.test('pipelined requests while the slice is spent: all answered, in order', async (t) => {
  const slice = new LoopSlice(5);
  const { port } = await startRpc(t, rpcConfig(), slice);
  let stopped = false;
  const busy = (): void => {
    if (!stopped) slice.defer(busy);
  };
  slice.defer(busy);
  slice.defer(busy);
  t.teardown(() => {
    stopped = true;
  });
  const cases: Array<[string, string, RegExp]> = [
    ['URI', 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n', /"result":\{\}/g],
    ['URI, general path (query)', 'GET /health?x=1 HTTP/1.1\r\nHost: x\r\n\r\n', /"result":\{\}/g],
    ['JSON-RPC', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 46\r\n\r\n{"jsonrpc":"2.0","id":7,"method":"health"}    ', /"id":7,"result":\{\}/g],
  ];
  for (const [label, one, answer] of cases) {
    for (const n of [2, 4, 8]) {
      const before = slice.pending;
      t.ok(before > 0, 'others wait in the slice');
      const r = await new Promise<{ text: string; closed: boolean }>((resolve) => {
        const s = net.connect(port, '127.0.0.1');
        let out = '';
        const done = (closed: boolean) => {
          clearTimeout(timer);
          s.destroy();
          resolve({ text: out, closed });
        };
        const timer = setTimeout(() => done(false), 15_000);
        s.on('data', (d) => {
          out += d.toString('latin1');
          if ((out.match(answer) ?? []).length >= n) done(false);
        });
        s.on('close', () => done(true));
        s.on('error', () => {});
        s.write(one.repeat(n));
      });
      const got = (r.text.match(answer) ?? []).length;
      t.equal(got, n, `${label}: ${n} pipelined, ${got} answered${r.closed ? ' (closed)' : ''}`);
    }
  }
  stopped = true;
});
