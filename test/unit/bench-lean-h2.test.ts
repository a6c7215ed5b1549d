/**
 * The benches' lean gRPC client (bench/lean-h2.ts) against a node:http2 server on loopback (a
 * full HTTP/2 implementation: it decodes our HPACK header block and enforces flow control and
 * stream states): a unary call's headers and message, an error status (trailers only, no
 * message), concurrent calls past the server's 64 KiB connection window (its WINDOW_UPDATEs let
 * the held ones go) and past its SETTINGS_MAX_CONCURRENT_STREAMS (held until streams end), a
 * reset stream, and a server that sends GOAWAY (the next call opens a new
 * connection).
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { LeanGrpc } from '../../bench/lean-h2.js';

type Handler = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, body: Buffer) => void;

async function server(t: Test, handle: Handler, settings: http2.Settings = {}): Promise<{ port: number; sessions: http2.ServerHttp2Session[] }> {
  const sessions: http2.ServerHttp2Session[] = [];
  const srv = http2.createServer({ settings });
  srv.on('session', (s) => sessions.push(s));
  srv.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (d: Buffer) => chunks.push(d));
    stream.on('end', () => handle(stream, headers, Buffer.concat(chunks)));
    stream.on('error', () => {});
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of sessions) s.destroy();
    return new Promise<void>((r) => srv.close(() => r()));
  });
  return { port: (srv.address() as AddressInfo).port, sessions };
}

/** A gRPC message: the 5-byte prefix, then the bytes. */
const grpcFrame = (m: Uint8Array) => {
  const f = Buffer.alloc(5 + m.length);
  f.writeUInt32BE(m.length, 1);
  f.set(m, 5);
  return f;
};

/** An OK unary answer: headers, the message, trailers with grpc-status 0. */
function ok(stream: http2.ServerHttp2Stream, message: Uint8Array): void {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(grpcFrame(message));
}

t.test('a unary call: its headers and message arrive as gRPC wants them, the answer comes back', async (t) => {
  let seen: http2.IncomingHttpHeaders | undefined;
  let got: Buffer | undefined;
  const s = await server(t, (stream, headers, body) => {
    seen = headers;
    got = body;
    ok(stream, Buffer.from(`echo ${body.subarray(5).toString()}`));
  });
  const c = new LeanGrpc(s.port);
  t.teardown(() => c.close());
  const answer = await c.unary('/chain.bank.v1beta1.Query/Balance', Buffer.from('hello'));
  t.equal(answer.toString(), 'echo hello');
  t.equal(seen?.[':method'], 'POST');
  t.equal(seen?.[':scheme'], 'http');
  t.equal(seen?.[':path'], '/chain.bank.v1beta1.Query/Balance');
  t.equal(seen?.[':authority'], `127.0.0.1:${s.port}`);
  t.equal(seen?.['content-type'], 'application/grpc');
  t.equal(seen?.te, 'trailers');
  t.same([...got!], [...grpcFrame(Buffer.from('hello'))]);
  // A second call on the same connection.
  t.equal((await c.unary('/x/Y', Buffer.from('again'))).toString(), 'echo again');
  t.equal(s.sessions.length, 1);
});

t.test('an error status (trailers only, no message) fails the call', async (t) => {
  const s = await server(t, (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12', 'grpc-message': 'unknown method' }, { endStream: true });
  });
  const c = new LeanGrpc(s.port);
  t.teardown(() => c.close());
  await t.rejects(c.unary('/nope/Nope', Buffer.from('x')), /no message/);
});

t.test('calls past the connection window wait for the server to open it, and all come back', async (t) => {
  const s = await server(t, (stream, _h, body) => ok(stream, body.subarray(5, 9)));
  const c = new LeanGrpc(s.port);
  t.teardown(() => c.close());
  // 100 calls of 2 KiB: 200 KiB, past node's 64 KiB connection window until its WINDOW_UPDATEs.
  const big = (i: number) => Buffer.concat([Buffer.from(String(i).padStart(4, '0')), Buffer.alloc(2044)]);
  const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => c.unary('/x/Y', big(i))));
  t.same(
    answers.map((a) => a.toString()),
    Array.from({ length: 100 }, (_, i) => String(i).padStart(4, '0')),
  );
});

t.test('a reset stream fails its call only', async (t) => {
  const s = await server(t, (stream, _h, body) => {
    if (body.subarray(5).toString() === 'reset') stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
    else ok(stream, Buffer.from('fine'));
  });
  const c = new LeanGrpc(s.port);
  t.teardown(() => c.close());
  const [a, b] = await Promise.allSettled([c.unary('/x/Y', Buffer.from('reset')), c.unary('/x/Y', Buffer.from('ok'))]);
  t.equal(a.status, 'rejected');
  t.match((a as PromiseRejectedResult).reason.message, /stream reset \(code 7\)/);
  t.equal(b.status, 'fulfilled');
});

t.test('after a GOAWAY the next call opens a new connection', async (t) => {
  const s = await server(t, (stream) => ok(stream, Buffer.from('fine')));
  const c = new LeanGrpc(s.port);
  t.teardown(() => c.close());
  t.equal((await c.unary('/x/Y', Buffer.from('1'))).toString(), 'fine');
  s.sessions[0]!.close();
  await new Promise((r) => setTimeout(r, 100));
  t.equal((await c.unary('/x/Y', Buffer.from('2'))).toString(), 'fine');
  t.equal(s.sessions.length, 2);
});

t.test('calls past the server\'s stream limit wait for streams to end; none is refused', async (t) => {
  let open = 0;
  let most = 0;
  const s = await server(
    t,
    (stream) => {
      most = Math.max(most, ++open);
      setTimeout(() => {
        open--;
        ok(stream, Buffer.from('later'));
      }, 5);
    },
    { maxConcurrentStreams: 3 },
  );
  const c = new LeanGrpc(s.port);
  t.teardown(() => c.close());
  // The first call lets the server's SETTINGS arrive; then 30 at once.
  await c.unary('/x/Y', Buffer.from('0'));
  const answers = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => c.unary('/x/Y', Buffer.from(String(i)))));
  t.same(
    answers.map((a) => a.status),
    answers.map(() => 'fulfilled'),
  );
  t.ok(most <= 3, `at most 3 streams open at the server (saw ${most})`);
  t.ok(most >= 2, 'more than one at a time');
});
