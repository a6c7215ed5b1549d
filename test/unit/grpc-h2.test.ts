/**
 * The gRPC server's own HTTP/2 transport (src/rpc/grpc/h2.ts) on 127.0.0.1:0, against node:http2's
 * client (nghttp2: Huffman strings, its dynamic table, CONTINUATION, flow control as a real client
 * does them) and raw frames for what a well-behaved client never sends. Every wait has a generous
 * deadline; nothing measures time.
 */
import http2 from 'node:http2';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import t, { type Test } from 'tap';
import { createNames } from '../../src/names/index.js';
import { QueryRouter } from '../../src/app/query-router.js';
import { H2_PREFACE, H2Server, type H2ServerOptions } from '../../src/rpc/grpc/h2.js';
import type { GrpcServer, GrpcServerOptions } from '../../src/rpc/grpc/server.js';
import { BlobRequestSchema, BlobResponseSchema, EchoRequestSchema, EchoResponseSchema, Query } from '../fixtures/gen/chain/fixture/v1/query_pb.js';
import { encodeHeaders, HpackDecoder } from '../../src/rpc/grpc/hpack.js';
import { framed, h2Call, h2Connect, RawH2, startGrpcServer, waitFor, within, type H2Answer } from '../helpers/raw-h2.js';

const ECHO = '/chain.fixture.v1.Query/Echo';
const BLOB = '/chain.fixture.v1.Query/Blob';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The metadata each Echo call saw, by its `x-tag`. */
const seenMetadata = new Map<string, Map<string, readonly string[]>>();

function makeRouter(): QueryRouter {
  const router = new QueryRouter({ names: createNames({ upstreamNames: false }), resolveHeight: (h) => h ?? 7n });
  router.registerService(Query, {
    echo: (req, ctx) => {
      const tag = ctx.metadata.get('x-tag')?.[0];
      if (tag !== undefined) seenMetadata.set(tag, new Map(ctx.metadata));
      return create(EchoResponseSchema, { echo: req });
    },
    blob: (req) => ({ blob: new Uint8Array(req.size).fill(0xab) }),
  });
  return router;
}

const startServer = (t: Test, opts: Partial<GrpcServerOptions> = {}): Promise<GrpcServer> => startGrpcServer(t, makeRouter(), opts);

function call(s: http2.ClientHttp2Session, path: string, body: Buffer, extra: http2.OutgoingHttpHeaders = {}): Promise<H2Answer> {
  return within(h2Call(s, { ':path': path, ...extra }, body), 60_000, `call ${path}`);
}

async function connect(t: Test, port: number, settings: http2.Settings = {}): Promise<http2.ClientHttp2Session> {
  const s = await h2Connect(port, settings);
  t.teardown(() => s.destroy());
  return s;
}

const GRPC_HEADERS = { ':method': 'POST', ':scheme': 'http', ':path': ECHO, ':authority': 'localhost', 'content-type': 'application/grpc', te: 'trailers' };

// ------------------------------------------------------------------------------------------------

t.test('a response larger than the client windows arrives whole (flow control, frame size)', async (t) => {
  const server = await startServer(t);
  const s = await connect(t, server.port); // node's client: 64 KiB windows, 16 KiB frames
  for (const size of [70_000, 3 * 1024 * 1024]) {
    const r = await call(s, BLOB, framed(toBinary(BlobRequestSchema, create(BlobRequestSchema, { size }))));
    t.equal(r.trailers['grpc-status'], '0', `${size}: grpc-status 0`);
    t.equal(r.body.readUInt32BE(1), r.body.length - 5, `${size}: one whole message`);
    const blob = fromBinary(BlobResponseSchema, r.body.subarray(5)).blob;
    t.equal(blob.length, size, `${size}: all of the blob`);
    t.ok(blob.every((b) => b === 0xab), `${size}: its bytes`);
  }
  // Several at once on one connection share its window.
  const many = await Promise.all(Array.from({ length: 6 }, () => call(s, BLOB, framed(toBinary(BlobRequestSchema, create(BlobRequestSchema, { size: 200_000 }))))));
  t.ok(
    many.every((r) => r.trailers['grpc-status'] === '0' && r.body.length === 200_000 + 5 + 4),
    'six 200 KB answers at once, each whole',
  );
});

t.test('a client with large windows: many large answers at once, all whole', async (t) => {
  const server = await startServer(t);
  const s = await connect(t, server.port, { initialWindowSize: 16 << 20 });
  s.setLocalWindowSize(1 << 30);
  const size = 500_000;
  const rs = await Promise.all(Array.from({ length: 40 }, () => call(s, BLOB, framed(toBinary(BlobRequestSchema, create(BlobRequestSchema, { size }))))));
  t.ok(
    rs.every((r) => r.trailers['grpc-status'] === '0' && fromBinary(BlobResponseSchema, r.body.subarray(5)).blob.length === size),
    '40 answers of 500 KB (20 MB, past the 4 MiB the server lets wait unsent), each whole',
  );
});

t.test('a request larger than the initial windows is read and credited', async (t) => {
  const server = await startServer(t, { maxRecvMsgSize: 8 * 1024 * 1024 });
  const s = await connect(t, server.port);
  const text = 'z'.repeat(5 * 1024 * 1024);
  const r = await call(s, ECHO, framed(toBinary(EchoRequestSchema, create(EchoRequestSchema, { text }))));
  t.equal(r.trailers['grpc-status'], '0');
  t.equal(fromBinary(EchoResponseSchema, r.body.subarray(5)).echo?.text.length, text.length, 'echoed whole');
  t.equal(server.bufferedBytes, 0, 'nothing held after the call');
});

t.test('request headers: Huffman strings, the dynamic table, CONTINUATION, repeated names', async (t) => {
  const server = await startServer(t);
  const s = await connect(t, server.port);
  const big = 'v'.repeat(40_000); // past one 16 KiB frame: nghttp2 sends CONTINUATION frames
  for (let i = 0; i < 3; i++) {
    const tag = `tag-${i}`;
    const r = await call(s, ECHO, framed(new Uint8Array(0)), { 'x-tag': tag, 'x-big': big, 'x-custom-thing': `value with spaces ${i}`, 'x-list': ['a', 'b'] });
    t.equal(r.trailers['grpc-status'], '0', `call ${i}`);
    t.equal(r.headers['x-cosmos-block-height'], '7', `call ${i}: the height header`);
    const md = seenMetadata.get(tag);
    t.equal(md?.get('x-big')?.[0], big, `call ${i}: the 40 KB value, whole`);
    t.same(md?.get('x-custom-thing'), [`value with spaces ${i}`], `call ${i}: a Huffman-coded value`);
    t.same(md?.get('x-list'), ['a', 'b'], `call ${i}: a name sent twice keeps both values in order`);
    t.notOk(md?.has(':path') || md?.has('content-type') || md?.has('te'), `call ${i}: pseudo and transport headers are not metadata`);
  }
});

t.test('streams past the advertised limit wait in the client, none is lost', async (t) => {
  const server = await startServer(t, { maxConcurrentStreams: 8 });
  const s = await connect(t, server.port);
  const rs = await Promise.all(Array.from({ length: 300 }, (_, i) => call(s, ECHO, framed(toBinary(EchoRequestSchema, create(EchoRequestSchema, { text: `n${i}` }))))));
  t.ok(
    rs.every((r, i) => r.trailers['grpc-status'] === '0' && fromBinary(EchoResponseSchema, r.body.subarray(5)).echo?.text === `n${i}`),
    '300 calls on one connection with an 8-stream limit, each answered with its own text',
  );
});

t.test('PING is answered', async (t) => {
  const server = await startServer(t);
  const s = await connect(t, server.port);
  const ok = await within(new Promise<boolean>((resolve) => s.ping(Buffer.from('12345678'), (err) => resolve(err === null))), 30_000, 'ping');
  t.ok(ok, 'PING ACK');
});

t.test('a unary answer leaves in one write: headers, message and trailers in one TCP read', async (t) => {
  const server = await startServer(t);
  const raw = new RawH2(server.port);
  t.teardown(() => raw.sock.destroy());
  raw.sock.write(RawH2.hello());
  await waitFor('server SETTINGS', () => raw.frames.some((f) => f.type === 4));
  raw.sock.write(RawH2.frame(1, 0x4, 1, encodeHeaders(GRPC_HEADERS)));
  raw.sock.write(RawH2.frame(0, 0x1, 1, framed(toBinary(EchoRequestSchema, create(EchoRequestSchema, { text: 'one' })))));
  await waitFor('the trailers of stream 1', () => raw.frames.some((f) => f.type === 1 && f.stream === 1 && (f.flags & 1) === 1));
  const mine = raw.frames.filter((f) => f.stream === 1);
  t.same(
    mine.map((f) => f.type),
    [1, 0, 1],
    'HEADERS, DATA, HEADERS',
  );
  t.equal(new Set(mine.map((f) => f.read)).size, 1, 'all three came in one read');
  const dec = new HpackDecoder();
  const head = new Map(dec.decode(mine[0]!.payload));
  t.equal(head.get(':status'), '200');
  t.equal(head.get('content-type'), 'application/grpc');
  t.same(dec.decode(mine[2]!.payload), [['grpc-status', '0']]);
});

t.test('protocol errors: the connection or the stream ends with the right code, the server goes on', async (t) => {
  const server = await startServer(t);
  const cases: Array<{ name: string; bytes: () => Buffer; expect: (r: RawH2) => boolean; what: string }> = [
    { name: 'not HTTP/2 (an HTTP/1.1 request)', bytes: () => Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'), expect: (r) => r.closed && r.goaway()?.code === 1, what: 'GOAWAY PROTOCOL_ERROR, closed' },
    { name: 'a frame other than SETTINGS first', bytes: () => Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), RawH2.frame(6, 0, 0, Buffer.alloc(8))]), expect: (r) => r.closed && r.goaway()?.code === 1, what: 'GOAWAY PROTOCOL_ERROR' },
    { name: 'a frame past 16 KiB', bytes: () => Buffer.concat([RawH2.hello(), RawH2.frame(0, 0, 1, Buffer.alloc(20_000))]), expect: (r) => r.closed && r.goaway()?.code === 6, what: 'GOAWAY FRAME_SIZE_ERROR' },
    { name: 'HEADERS on an even stream', bytes: () => Buffer.concat([RawH2.hello(), RawH2.frame(1, 0x5, 2, encodeHeaders(GRPC_HEADERS))]), expect: (r) => r.closed && r.goaway()?.code === 1, what: 'GOAWAY PROTOCOL_ERROR' },
    { name: 'a header block that is not HPACK', bytes: () => Buffer.concat([RawH2.hello(), RawH2.frame(1, 0x5, 1, Buffer.from([0x80]))]), expect: (r) => r.closed && r.goaway()?.code === 9, what: 'GOAWAY COMPRESSION_ERROR' },
    { name: 'a PING of 7 bytes', bytes: () => Buffer.concat([RawH2.hello(), RawH2.frame(6, 0, 0, Buffer.alloc(7))]), expect: (r) => r.closed && r.goaway()?.code === 6, what: 'GOAWAY FRAME_SIZE_ERROR' },
    {
      name: 'an upper-case header name',
      bytes: () => Buffer.concat([RawH2.hello(), RawH2.frame(1, 0x5, 1, encodeHeaders({ ...GRPC_HEADERS, 'X-Upper': '1' }))]),
      expect: (r) => r.frames.some((f) => f.type === 3 && f.stream === 1 && f.payload.readUInt32BE(0) === 1),
      what: 'RST_STREAM PROTOCOL_ERROR',
    },
    {
      name: 'no :path',
      bytes: () => Buffer.concat([RawH2.hello(), RawH2.frame(1, 0x5, 1, encodeHeaders({ ':method': 'POST', ':scheme': 'http', 'content-type': 'application/grpc' }))]),
      expect: (r) => r.frames.some((f) => f.type === 3 && f.stream === 1 && f.payload.readUInt32BE(0) === 1),
      what: 'RST_STREAM PROTOCOL_ERROR',
    },
  ];
  for (const c of cases) {
    const raw = new RawH2(server.port);
    t.teardown(() => raw.sock.destroy());
    raw.sock.write(c.bytes());
    await waitFor(`${c.name}: ${c.what}`, () => c.expect(raw));
    t.pass(`${c.name}: ${c.what}`);
    raw.sock.destroy();
  }
  const s = await connect(t, server.port);
  const r = await call(s, ECHO, framed(new Uint8Array(0)));
  t.equal(r.trailers['grpc-status'], '0', 'the server still serves');
  await waitFor('the bad connections gone', () => server.connections === 1);
  t.equal(server.connections, 1, 'only the good connection is left');
});

t.test('a client that opens its windows and stops reading: answers wait for the socket, then all arrive', async (t) => {
  const server = await startServer(t);
  const raw = new RawH2(server.port);
  t.teardown(() => raw.sock.destroy());
  const settings = Buffer.alloc(6);
  settings.writeUInt16BE(0x4, 0); // SETTINGS_INITIAL_WINDOW_SIZE
  settings.writeUInt32BE(2 ** 31 - 1, 2);
  const inc = Buffer.alloc(4);
  inc.writeUInt32BE(2 ** 31 - 1 - 65_535, 0);
  raw.sock.pause();
  const size = 4 * 1024 * 1024;
  const body = framed(toBinary(BlobRequestSchema, create(BlobRequestSchema, { size })));
  const n = 8; // 32 MiB of answers, past the 16 MiB a connection may hold unsent
  const reqs: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const id = 1 + 2 * i;
    reqs.push(RawH2.frame(1, 0x4, id, RawH2.requestHeaders(BLOB)), RawH2.frame(0, 0x1, id, body));
  }
  raw.sock.write(Buffer.concat([H2_PREFACE, RawH2.frame(4, 0, 0, settings), RawH2.frame(8, 0, 0, inc), ...reqs]));
  await sleep(500);
  raw.sock.resume();
  await waitFor('the trailers of every stream', () => raw.frames.filter((f) => f.type === 1 && (f.flags & 1) === 1).length === n, 60_000);
  for (let i = 0; i < n; i++) {
    const id = 1 + 2 * i;
    const data = Buffer.concat(raw.frames.filter((f) => f.type === 0 && f.stream === id).map((f) => f.payload));
    t.equal(data.readUInt32BE(1), data.length - 5, `stream ${id}: one whole message`);
    t.equal(fromBinary(BlobResponseSchema, data.subarray(5)).blob.length, size, `stream ${id}: all of the blob`);
  }
});

// ------------------------------------------------------------------------------------------------
// What a hostile client may try (the transport alone, H2Server with a handler of the test's own)

async function startH2(t: Test, onStream: H2ServerOptions['onStream'], opts: Partial<H2ServerOptions> = {}): Promise<{ h2: H2Server; port: number }> {
  const h2 = new H2Server({ maxConcurrentStreams: 100, streamWindow: 1 << 20, connectionWindow: 16 << 20, maxConnections: 0, handshakeTimeoutMs: 0, idleTimeoutMs: 0, graceMs: 500, onStream, ...opts });
  const addr = await h2.listen('127.0.0.1', 0);
  t.teardown(() => h2.close());
  return { h2, port: addr.port };
}

t.test('a client that sends but does not read: the server stops reading at its output cap, loses nothing', async (t) => {
  // Each request is answered at once with an 8 KB trailers-only HEADERS: 5,000 of them are 40 MB
  // of answers for ~300 KB of requests.
  const big = 'x'.repeat(8000);
  const { h2, port } = await startH2(t, (s) => s.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12', 'grpc-message': big }, true));
  const raw = new RawH2(port);
  t.teardown(() => raw.sock.destroy());
  raw.sock.pause();
  const n = 5000;
  const block = RawH2.requestHeaders(ECHO);
  raw.sock.write(Buffer.concat([RawH2.hello(), ...Array.from({ length: n }, (_, i) => RawH2.frame(1, 0x5, 1 + 2 * i, block))]));
  await sleep(1000);
  const conn = [...h2.connections][0]!;
  t.ok(conn.socket.writableLength <= 5 * 1024 * 1024, `the server holds ${(conn.socket.writableLength / 1048576).toFixed(1)} MB unsent, not 40`);
  raw.sock.resume();
  await waitFor('every answer', () => raw.frames.filter((f) => f.type === 1 && (f.flags & 1) === 1).length === n, 60_000);
  t.pass(`all ${n} answers arrive once the client reads`);
});

t.test('rapid reset: streams the client resets keep their place while their handlers run', async (t) => {
  let running = 0;
  let most = 0;
  const { port } = await startH2(
    t,
    (s) => {
      s.ondata = () => {
        s.ondata = null;
        s.start();
        running++;
        most = Math.max(most, running);
        setTimeout(() => {
          running--;
          s.done();
          s.respond({ ':status': 200, 'grpc-status': '0' }, true);
        }, 300);
      };
    },
    { maxConcurrentStreams: 4 },
  );
  const raw = new RawH2(port);
  t.teardown(() => raw.sock.destroy());
  const block = RawH2.requestHeaders(ECHO);
  const cancel = Buffer.alloc(4);
  cancel.writeUInt32BE(8, 0); // CANCEL
  const frames = [RawH2.hello()];
  for (let i = 0; i < 200; i++) {
    const id = 1 + 2 * i;
    frames.push(RawH2.frame(1, 0x4, id, block), RawH2.frame(0, 0x1, id, framed(new Uint8Array(0))), RawH2.frame(3, 0, id, cancel));
  }
  raw.sock.write(Buffer.concat(frames));
  await waitFor('REFUSED_STREAM answers', () => raw.frames.filter((f) => f.type === 3 && f.payload.readUInt32BE(0) === 7).length >= 190);
  await sleep(400);
  t.ok(most <= 4, `at most 4 handlers ran at once (${most})`);
  t.ok(raw.frames.filter((f) => f.type === 3 && f.payload.readUInt32BE(0) === 7).length >= 196, 'the streams past them were refused');
});

t.test('empty CONTINUATION frames without end: the connection is closed ENHANCE_YOUR_CALM', async (t) => {
  const server = await startServer(t);
  const raw = new RawH2(server.port);
  t.teardown(() => raw.sock.destroy());
  const empty = RawH2.frame(9, 0, 1, Buffer.alloc(0));
  raw.sock.write(Buffer.concat([RawH2.hello(), RawH2.frame(1, 0, 1, RawH2.requestHeaders(ECHO)), ...Array.from({ length: 1000 }, () => empty)]));
  await waitFor('GOAWAY', () => raw.goaway() !== undefined);
  t.equal(raw.goaway()?.code, 11, 'ENHANCE_YOUR_CALM');
});

t.test('an early answer to a client still sending is followed by RST_STREAM NO_ERROR; HEADERS on a reset stream are ignored', async (t) => {
  const server = await startServer(t);
  const raw = new RawH2(server.port);
  t.teardown(() => raw.sock.destroy());
  // Stream 1: an unknown method, the client has not half-closed: trailers-only, then the reset.
  raw.sock.write(Buffer.concat([RawH2.hello(), RawH2.frame(1, 0x4, 1, RawH2.requestHeaders('/no.such.Service/Method'))]));
  await waitFor('RST_STREAM on stream 1', () => raw.frames.some((f) => f.type === 3 && f.stream === 1));
  const one = raw.frames.filter((f) => f.stream === 1);
  t.same(
    one.map((f) => f.type),
    [1, 3],
    'HEADERS (the status), then RST_STREAM',
  );
  t.equal(one[1]!.payload.readUInt32BE(0), 0, 'NO_ERROR');
  // The client's trailers on the stream the server reset: ignored, and the connection serves on.
  raw.sock.write(Buffer.concat([RawH2.frame(1, 0x5, 1, RawH2.requestHeaders('/x')), RawH2.frame(1, 0x4, 3, RawH2.requestHeaders(ECHO)), RawH2.frame(0, 0x1, 3, framed(new Uint8Array(0)))]));
  await waitFor('the answer on stream 3', () => raw.frames.some((f) => f.type === 1 && f.stream === 3 && (f.flags & 1) === 1));
  t.equal(raw.goaway(), undefined, 'no GOAWAY');
});
