/**
 * The benches' lean HTTP/1.1 client (bench/lean-http.ts) against a raw TCP server on loopback
 * that decides how answers are cut into writes and when connections close: answers split at
 * every byte or coalesced, keep-alive reuse, the connection cap, `Connection: close`, a server
 * that closes an idle kept-alive connection (the request goes out once more on a fresh one), a
 * connection lost under a request (ECONNRESET), a refused connection (its own code), an answer
 * without Content-Length, a request never answered (ETIMEDOUT) and close() with requests pending.
 */
import net from 'node:net';
import t, { type Test } from 'tap';
import { LeanClient } from '../../bench/lean-http.js';

interface Seen {
  method: string;
  path: string;
  body: string;
  conn: number;
}

type Reply = (sock: net.Socket, req: Seen, nth: number) => void;

/** A server that parses requests (Content-Length bodies) and lets `reply` answer each. */
async function server(t: Test, reply: Reply): Promise<{ port: number; seen: Seen[]; conns: () => number }> {
  const seen: Seen[] = [];
  let conns = 0;
  const srv = net.createServer((sock) => {
    const conn = ++conns;
    let buf = Buffer.alloc(0);
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.toString('latin1', 0, end);
        const len = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + len) return;
        const [method, path] = head.split(' ');
        const req = { method: method!, path: path!, body: buf.toString('utf8', end + 4, end + 4 + len), conn };
        buf = buf.subarray(end + 4 + len);
        seen.push(req);
        reply(sock, req, seen.length);
      }
    });
    sock.on('error', () => {});
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => srv.close(() => r())));
  return { port: (srv.address() as net.AddressInfo).port, seen, conns: () => conns };
}

const answer = (body: string, extra = ''): string => `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

t.test('answers split at every byte are put back together; the connection is reused', async (t) => {
  const s = await server(t, (sock, req) => {
    const bytes = Buffer.from(answer(`echo ${req.method} ${req.path} ${req.body}`));
    let i = 0;
    const drip = () => {
      if (i < bytes.length) sock.write(bytes.subarray(i, ++i), drip);
    };
    drip();
  });
  const c = new LeanClient(s.port, 1);
  t.teardown(() => c.close());
  const a = await c.post('/', '{"x":"é"}');
  t.equal(a.status, 200);
  t.equal(a.body.toString(), 'echo POST / {"x":"é"}', 'the body, sent with its byte length');
  const b = await c.get('/status?x=1');
  t.equal(b.body.toString(), 'echo GET /status?x=1 ');
  t.equal(s.conns(), 1, 'one keep-alive connection for both');
});

t.test('no more connections than the cap; the others wait in order', async (t) => {
  const s = await server(t, (sock, req) => setTimeout(() => sock.write(answer(req.body)), 5));
  const c = new LeanClient(s.port, 3);
  t.teardown(() => c.close());
  const out = await Promise.all(Array.from({ length: 30 }, (_, i) => c.post('/', String(i)).then((a) => a.body.toString())));
  t.same(out, Array.from({ length: 30 }, (_, i) => String(i)), 'each caller gets its own answer');
  t.equal(s.conns(), 3);
  t.equal(s.seen.length, 30);
});

t.test('Connection: close in an answer: the next request opens a new connection', async (t) => {
  const s = await server(t, (sock, _req, n) => {
    if (n === 1) sock.end(answer('one', 'Connection: close\r\n'));
    else sock.write(answer('two'));
  });
  const c = new LeanClient(s.port, 1);
  t.teardown(() => c.close());
  t.equal((await c.get('/')).body.toString(), 'one');
  t.equal((await c.get('/')).body.toString(), 'two');
  t.equal(s.conns(), 2);
});

t.test('an idle kept-alive connection the server closed: the request goes out again on a fresh one', async (t) => {
  // The server answers the first request, then closes that connection after the client's second
  // request arrives without answering it (as a server's idle timeout races the request).
  const s = await server(t, (sock, req, n) => {
    if (n === 2) sock.destroy();
    else sock.write(answer(`${n} ${req.path}`));
  });
  const c = new LeanClient(s.port, 1);
  t.teardown(() => c.close());
  t.equal((await c.get('/a')).body.toString(), '1 /a');
  t.equal((await c.get('/b')).body.toString(), '3 /b', 'sent once more, answered on the second connection');
  t.equal(s.conns(), 2);
});

t.test('a connection lost under a request it had not used before rejects with ECONNRESET; the next request works', async (t) => {
  const s = await server(t, (sock, _req, n) => {
    if (n === 1) sock.destroy();
    else sock.write(answer('ok'));
  });
  const c = new LeanClient(s.port, 1);
  t.teardown(() => c.close());
  await t.rejects(c.get('/'), { code: 'ECONNRESET' }, 'not retried: the request may have been read');
  t.equal((await c.get('/')).body.toString(), 'ok');
});

t.test('a connection lost after part of the answer: ECONNRESET, not sent again', async (t) => {
  const s = await server(t, (sock) => {
    sock.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
    setTimeout(() => sock.destroy(), 10);
  });
  const c = new LeanClient(s.port, 1);
  t.teardown(() => c.close());
  await t.rejects(c.get('/'), { code: 'ECONNRESET' });
  await t.rejects(c.get('/'), { code: 'ECONNRESET' });
  t.equal(s.seen.length, 2, 'each request went out once');
});

t.test('a refused connection keeps its own error code', async (t) => {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const c = new LeanClient(port, 1);
  t.teardown(() => c.close());
  await t.rejects(c.get('/'), { code: 'ECONNREFUSED' });
});

t.test('an answer without Content-Length is an error naming it', async (t) => {
  const s = await server(t, (sock, _req, n) => {
    if (n === 1) sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n');
    else sock.write(answer('fine'));
  });
  const c = new LeanClient(s.port, 1);
  t.teardown(() => c.close());
  await t.rejects(c.get('/'), /answer without Content-Length/);
  t.equal((await c.get('/')).body.toString(), 'fine', 'the connection was dropped and a new one serves the next request');
  t.equal(s.conns(), 2);
});

t.test('a request left unanswered rejects with ETIMEDOUT after the timeout; the connection is dropped and the next request works', async (t) => {
  const s = await server(t, (sock, _req, n) => {
    if (n > 1) sock.write(answer('late ok'));
  });
  const c = new LeanClient(s.port, 1, '127.0.0.1', 200);
  t.teardown(() => c.close());
  const t0 = performance.now();
  await t.rejects(c.get('/'), { code: 'ETIMEDOUT' });
  t.ok(performance.now() - t0 >= 200, 'not before the timeout');
  t.equal((await c.get('/')).body.toString(), 'late ok');
  t.equal(s.conns(), 2);
});

t.test('close() rejects the request in flight and the ones waiting for a connection', async (t) => {
  const s = await server(t, () => {});
  const c = new LeanClient(s.port, 1);
  const inFlight = c.get('/a');
  const waiting = c.get('/b');
  // Until the server has the first request (it never answers it).
  for (let i = 0; i < 500 && s.seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  c.close();
  await t.rejects(inFlight, { code: 'ECONNRESET' });
  await t.rejects(waiting, { code: 'ECONNRESET' });
  t.same(s.seen.map((r) => r.path), ['/a'], 'the waiting one never went out');
});
