/**
 * For tests of the gRPC server and its HTTP/2 transport: a server on a free port; node:http2
 * client sessions and calls; gRPC message framing; bounded waits; and a raw HTTP/2 client, whose
 * frames are written by hand (so a test can send what a well-behaved client never does) and read
 * back as they come, each with the number of the TCP read it came in.
 */
import http2 from 'node:http2';
import net from 'node:net';
import type { Test } from 'tap';
import type { QueryRouter } from '../../src/app/query-router.js';
import { h2Frame, H2_PREFACE } from '../../src/rpc/grpc/h2.js';
import { encodeHeaders } from '../../src/rpc/grpc/hpack.js';
import { GrpcServer, type GrpcServerOptions } from '../../src/rpc/grpc/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves when the promise does, rejects after `ms` (a generous bound, not a measurement). */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)))]).finally(() => clearTimeout(timer));
}

/** Polls `fn` every 20 ms until it holds; rejects after `timeoutMs`. */
export async function waitFor(what: string, fn: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn()) return;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A gRPC length-prefixed message (PROTOCOL-HTTP2.md), its Compressed-Flag set when asked. */
export function framed(msg: Uint8Array, compressed = false): Buffer {
  const b = Buffer.alloc(5 + msg.length);
  b[0] = compressed ? 1 : 0;
  b.writeUInt32BE(msg.length, 1);
  b.set(msg, 5);
  return b;
}

/** A node:http2 client session once the server's SETTINGS have arrived (its errors ignored). */
export async function h2Connect(port: number, settings: http2.Settings = {}): Promise<http2.ClientHttp2Session> {
  const s = http2.connect(`http://127.0.0.1:${port}`, { settings });
  s.on('error', () => {});
  await within(
    new Promise<void>((resolve, reject) => {
      s.once('remoteSettings', () => resolve());
      s.once('close', () => reject(new Error('session closed before SETTINGS')));
    }),
    30_000,
    'client session SETTINGS',
  );
  return s;
}

export interface H2Answer {
  headers: http2.IncomingHttpHeaders;
  trailers: http2.IncomingHttpHeaders;
  body: Buffer;
  /** ms from the request to the end of the answer. */
  elapsed: number;
}

/**
 * One request on a session: POST, content-type application/grpc and te trailers unless `headers`
 * say otherwise; `body` then END_STREAM. Resolves with what came back once the answer ends;
 * rejects on a stream error.
 */
export function h2Call(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body: Buffer | null): Promise<H2Answer> {
  return new Promise<H2Answer>((resolve, reject) => {
    const started = Date.now();
    const req = session.request({ ':method': 'POST', 'content-type': 'application/grpc', te: 'trailers', ...headers });
    let h: http2.IncomingHttpHeaders = {};
    let tr: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    req.on('response', (x) => (h = x));
    req.on('trailers', (x) => (tr = x));
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve({ headers: h, trailers: tr, body: Buffer.concat(chunks), elapsed: Date.now() - started }));
    req.on('error', reject);
    if (body) req.end(body);
    else req.end();
  });
}

/** A gRPC server on 127.0.0.1:0 over `router`, closed (0.5 s grace) when the test ends. */
export async function startGrpcServer(t: Test, router: QueryRouter, opts: Partial<GrpcServerOptions> = {}): Promise<GrpcServer> {
  const server = new GrpcServer({ address: '127.0.0.1:0', router, closeGraceMs: 500, ...opts });
  await server.start();
  t.teardown(() => server.close());
  return server;
}

export interface RawFrame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
  /** The socket read (1, 2, …) that completed this frame. */
  read: number;
}

export class RawH2 {
  readonly sock: net.Socket;
  readonly frames: RawFrame[] = [];
  reads = 0;
  closed = false;
  private buf = Buffer.alloc(0);

  constructor(port: number) {
    this.sock = net.connect(port, '127.0.0.1');
    this.sock.on('error', () => {});
    this.sock.on('close', () => (this.closed = true));
    this.sock.on('data', (d: Buffer) => {
      this.reads++;
      this.buf = Buffer.concat([this.buf, d]);
      while (this.buf.length >= 9) {
        const len = this.buf.readUIntBE(0, 3);
        if (this.buf.length < 9 + len) break;
        this.frames.push({ type: this.buf[3]!, flags: this.buf[4]!, stream: this.buf.readUInt32BE(5) & 0x7fffffff, payload: Buffer.from(this.buf.subarray(9, 9 + len)), read: this.reads });
        this.buf = this.buf.subarray(9 + len);
      }
    });
  }

  static frame(type: number, flags: number, stream: number, payload: Uint8Array): Buffer {
    return h2Frame(type, flags, stream, payload);
  }

  /** The preface and an empty SETTINGS. */
  static hello(): Buffer {
    return Buffer.concat([H2_PREFACE, h2Frame(4, 0, 0, Buffer.alloc(0))]);
  }

  /** A gRPC request's header block: POST, http, the path, :authority, content-type application/grpc, te trailers. */
  static requestHeaders(path: string): Buffer {
    return encodeHeaders({ ':method': 'POST', ':scheme': 'http', ':path': path, ':authority': 'localhost', 'content-type': 'application/grpc', te: 'trailers' });
  }

  /** The server's GOAWAY, when one came. */
  goaway(): { code: number } | undefined {
    const f = this.frames.find((x) => x.type === 7);
    return f ? { code: f.payload.readUInt32BE(4) } : undefined;
  }
}
