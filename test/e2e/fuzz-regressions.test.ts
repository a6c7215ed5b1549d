/**
 * Requests the fuzzer (test/e2e/fuzz.test.ts) found to crash the node or to go unanswered, each
 * pinned as a fixed case against a real `chaind start` process. Every case asserts the node lives
 * and keeps making blocks; where uWS 20.30 itself closes or holds the connection before (or
 * after) our handler, "answered" is a todo naming that, and its mutator stays off in
 * test/helpers/fuzz/known-bugs.ts.
 */
import t, { type Test } from 'tap';
import { statusHeight, waitFor } from '../helpers/node.js';
import net from 'node:net';
import { header, HttpConn, parseResponse, type HttpAnswer, type HttpOutcome } from '../helpers/fuzz/http-conn.js';
import { startFuzzNode, type FuzzNode } from '../helpers/fuzz/node.js';

/** Cases uWS 20.30 closes or holds before any handler of ours runs (or after it, discarding the answer). */
const UWS_LIMIT = 'uWS 20.30 closes or holds this connection itself; no handler can answer (docs/ARCHITECTURE.md, RPC under load)';

let node: FuzzNode;
t.before(async () => {
  node = await startFuzzNode();
});
t.teardown(() => node?.stop());

/**
 * Sends raw bytes on a fresh connection; the outcomes of `responses` answers. A request that must
 * be answered gets a generous 30 s (a loaded machine); a known-bug case that uWS holds passes a
 * short wait, as its answer is a todo.
 */
async function exchange(port: number, raw: string, responses = 1, timeoutMs = 30_000): Promise<HttpOutcome[]> {
  const c = new HttpConn(port, timeoutMs);
  try {
    return await c.send(Buffer.from(raw, 'latin1'), { responses, heads: raw.startsWith('HEAD') ? [true] : undefined });
  } finally {
    c.close();
  }
}

async function stillServing(t: Test): Promise<void> {
  t.ok(node.alive(), 'the node is alive');
  const h = await statusHeight(node.ports.rpc);
  await waitFor('a new block', async () => (await statusHeight(node.ports.rpc)) > h, 30_000, 200);
  t.pass('blocks keep coming');
}

function status(o: HttpOutcome | undefined): number | string {
  return o?.kind === 'answer' ? o.answer.status : (o?.kind ?? 'none');
}

t.test('node RPC: Content-Length -1 does not kill the node', async (t) => {
  const [o] = await exchange(node.ports.rpc, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"health"}');
  t.equal(status(o), 400, 'answered 400');
  await stillServing(t);
});

// This killed the node (src/rpc/server/uws.ts readBody sized a buffer from the negative length).
// uWS 20.30 then closes the connection right after the handler, with the 400 still in its cork
// buffer (it fails its own Content-Length parse after the handler ran); the 400 is now written so
// that it leaves first (uws.ts CONN_DROPPED_BY_UWS).
t.test('REST: Content-Length -1 does not kill the node', async (t) => {
  const [o] = await exchange(node.ports.api, 'POST /cosmos/tx/v1beta1/simulate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n{}');
  t.equal(status(o), 400, 'answered 400');
  await stillServing(t);
});

// The cases below get no answer today (the connection is closed, or held): found by the fuzzer,
// fixed on harden-http (malformed-framing 400s), each a KNOWN_BUGS switch.
const FIXED = new Set([
  'HEAD then GET on one connection (KNOWN_BUGS.headKeepAlive)',
  'REST: HEAD then GET on one connection (KNOWN_BUGS.headKeepAlive)',
  'a chunked body (KNOWN_BUGS.chunkedBody)',
  'a non-numeric Content-Length (KNOWN_BUGS.badContentLength)',
]);
const unanswered: Array<[string, 'rpc' | 'api', string, number]> = [
  ['HEAD then GET on one connection (KNOWN_BUGS.headKeepAlive)', 'rpc', 'HEAD /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n', 2],
  ['REST: HEAD then GET on one connection (KNOWN_BUGS.headKeepAlive)', 'api', 'HEAD /cosmos/auth/v1beta1/params HTTP/1.1\r\nHost: x\r\n\r\nGET /cosmos/auth/v1beta1/params HTTP/1.1\r\nHost: x\r\n\r\n', 2],
  ['an unknown method (KNOWN_BUGS.unknownMethod)', 'rpc', 'FUZZ /health HTTP/1.1\r\nHost: x\r\n\r\n', 1],
  ['a header name with token punctuation (KNOWN_BUGS.headerNameChars)', 'api', "GET /cosmos/auth/v1beta1/params HTTP/1.1\r\nHost: x\r\nx-a|b'c: 1\r\n\r\n", 1],
  ['HTTP/1.0 (KNOWN_BUGS.requestLineFraming)', 'rpc', 'GET /health HTTP/1.0\r\nHost: x\r\n\r\n', 1],
  ['LF-only line ends (KNOWN_BUGS.requestLineFraming)', 'rpc', 'GET /health HTTP/1.1\nHost: x\n\n', 1],
  ['an absolute-form target (KNOWN_BUGS.requestLineFraming)', 'rpc', 'GET http://x/health HTTP/1.1\r\nHost: x\r\n\r\n', 1],
  ['a chunked body (KNOWN_BUGS.chunkedBody)', 'rpc', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2a\r\n{"jsonrpc":"2.0","id":1,"method":"health"}\r\n0\r\n\r\n', 1],
  ['a 130 KiB request head, under max_header_bytes (KNOWN_BUGS.largeHead)', 'rpc', `GET /health?x=${'a'.repeat(130_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 1],
  ['REST: a 130 KiB request head (KNOWN_BUGS.largeHead)', 'api', `GET /cosmos/auth/v1beta1/params HTTP/1.1\r\nHost: x\r\nX-Large: ${'a'.repeat(130_000)}\r\n\r\n`, 1],
  ['a non-numeric Content-Length (KNOWN_BUGS.badContentLength)', 'rpc', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}', 1],
];
for (const [what, port, raw, n] of unanswered) {
  t.test(`${what}: answered where uWS lets us, and the node keeps serving`, async (t) => {
    const fixed = FIXED.has(what);
    const outs = await exchange(port === 'rpc' ? node.ports.rpc : node.ports.api, raw, n, fixed ? 30_000 : 3000);
    const todo = fixed ? {} : { todo: UWS_LIMIT };
    for (const [i, o] of outs.entries()) t.equal(o.kind, 'answer', `response ${i + 1} of ${n} arrives (got ${status(o)})`, todo);
    t.ok(node.alive());
    await stillServing(t);
  });
}

/**
 * Two requests on one connection as a plain keep-alive client sends them: the second at once after
 * the first answer, unless that answer said `Connection: close`. The first answer, and whether
 * the second was answered (null: not sent; 'closed': the server had closed the connection).
 */
async function keepAliveTwo(port: number, first: string, second: string): Promise<{ a: HttpAnswer | null; b: HttpAnswer | 'closed' | null }> {
  const sock = net.connect(port, '127.0.0.1');
  let buf = Buffer.alloc(0);
  let closed = false;
  let wake = () => {};
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    wake();
  });
  sock.on('close', () => {
    closed = true;
    wake();
  });
  sock.on('error', () => {});
  const next = async (head: boolean): Promise<HttpAnswer | null> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = parseResponse(buf, head, closed);
      if (r) {
        buf = buf.subarray(r.used);
        return r.answer;
      }
      if (closed || Date.now() > deadline) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 500);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };
  try {
    sock.write(first, 'latin1');
    const a = await next(first.startsWith('HEAD'));
    if (!a || (header(a, 'connection') ?? '').toLowerCase() === 'close') return { a, b: null };
    sock.write(second, 'latin1');
    return { a, b: (await next(second.startsWith('HEAD'))) ?? 'closed' };
  } finally {
    sock.destroy();
  }
}

// The fuzzer's "~1 request in 2,500 closed without an answer" (each passed when rerun alone): the
// request after one that carried `Connection: close` on the same connection. uWS 20.30 closed the
// connection after that answer without saying so; the fuzz client (like any keep-alive client
// that is not told) sent the next request into the closed socket. Found as, e.g.,
// FUZZ_SEED=227596642 FUZZ_SURFACE=node-uri FUZZ_CASE=9485 after a `HEAD … Connection: close`.
const closeThenNext: Array<[string, 'rpc' | 'api', string, string]> = [
  ['node RPC URI: HEAD /genesis, Connection: close', 'rpc', 'HEAD /genesis HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', 'POST /genesis_chunked?chunk=0 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n'],
  ['node RPC URI: GET /commit, Connection: close', 'rpc', 'GET /commit?height=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', 'GET /commit?height=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
  ['node JSON-RPC: POST /, Connection: Close', 'rpc', 'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Close\r\nContent-Length: 42\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"health"}', 'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 42\r\n\r\n{"jsonrpc":"2.0","id":2,"method":"health"}'],
  ['REST: HEAD, Connection: close', 'api', 'HEAD /cosmos/bank/v1beta1/params HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', 'GET /cosmos/bank/v1beta1/supply HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
  ['REST: GET, Connection: close, te', 'api', 'GET /cosmos/bank/v1beta1/supply HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close, te\r\n\r\n', 'GET /cosmos/bank/v1beta1/supply HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
];
for (const [what, port, first, second] of closeThenNext) {
  t.test(`${what}: the answer says the connection closes, or the next request is answered`, async (t) => {
    const { a, b } = await keepAliveTwo(port === 'rpc' ? node.ports.rpc : node.ports.api, first, second);
    t.ok(a, 'the first request is answered');
    t.equal(a && header(a, 'connection')?.toLowerCase(), 'close', 'and its answer says Connection: close (net/http does; RFC 9112 §9.6)');
    t.not(b, 'closed', 'no request goes into a connection the server closed silently');
  });
}
