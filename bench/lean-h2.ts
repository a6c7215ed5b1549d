/**
 * A lean gRPC client for the benches' open-loop probes: unary calls over one HTTP/2 connection on
 * a plain socket, with the frames written here (RFC 9113) instead of node:http2's session and
 * stream objects. Measured 2026-11-27 on the 2-core machine, a probe's call through node:http2 cost
 * its thread ~460 µs of CPU (the server's side ~540 µs): at one call every 2 ms that is a quarter
 * of a core taken from the node it measures, which a client on another machine would not take.
 *
 * What it does: the connection preface and its SETTINGS (no push; the largest stream and
 * connection windows, so the server never waits for a WINDOW_UPDATE from it), ACKs of the server's
 * SETTINGS and PINGs, the server's send windows and its stream limit kept (a request waits for a
 * WINDOW_UPDATE or a stream to end), GOAWAY and RST_STREAM. A request is one write: HEADERS (a header block of HPACK
 * literals that never touch the dynamic table, RFC 7541 §6.2.2, and static-table indexes) and one
 * DATA frame with END_STREAM. Answers are not HPACK-decoded (the probe would spend CPU on it that
 * the node shares): a call succeeds when its stream carried one whole gRPC message before it
 * ended, the shape of an OK unary answer; gRPC sends an error as trailers only, with no message,
 * so that fails it, as does a reset stream or a closed connection.
 */
import net from 'node:net';
import { h2Frame as frame, H2_DEFAULT_WINDOW as DEFAULT_WINDOW, H2_MAX_WINDOW as MAX_WINDOW, H2_PREFACE as PREFACE, H2Flag, H2Frame, H2Setting } from '../src/rpc/grpc/h2.js';
import { frame as grpcMessage } from '../src/rpc/grpc/framing.js';
import { encodeHeaders } from '../src/rpc/grpc/hpack.js';

const { DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE } = H2Frame;
const { END_STREAM, ACK, END_HEADERS, PADDED } = H2Flag;

/** The header block of a unary call: static indexes and literals without indexing. */
function headerBlock(authority: string, path: string): Buffer {
  return encodeHeaders({ ':method': 'POST', ':scheme': 'http', ':path': path, ':authority': authority, 'content-type': 'application/grpc', te: 'trailers' });
}

interface Call {
  chunks: Buffer[];
  resolve: (message: Buffer) => void;
  reject: (e: Error) => void;
}

/** One connection: its socket, unparsed bytes, streams and the server's windows for it. */
class Conn {
  buf: Buffer = Buffer.alloc(0);
  nextStream = 1;
  readonly calls = new Map<number, Call>();
  /** What the server lets us send: the connection's window, and each new stream's. */
  connWindow = DEFAULT_WINDOW;
  streamWindow = DEFAULT_WINDOW;
  /**
   * The server's SETTINGS_MAX_CONCURRENT_STREAMS (until its SETTINGS arrive, gRPC servers' usual
   * 100): a client must not open more (RFC 9113 §5.1.2); a server refuses the streams past it, and
   * node:http2 answers a connection with 100 refused streams with ENHANCE_YOUR_CALM on every later
   * one. Calls past it wait here, counted from their scheduled time as any latency.
   */
  maxStreams = 100;
  /** Requests waiting for the connection window or a free stream. */
  readonly blocked: Array<{ size: number; send: () => void }> = [];
  /** No new streams (GOAWAY received, or closed). */
  draining = false;

  constructor(readonly sock: net.Socket) {}

  /** Whether a request of `size` bytes may go out now. */
  canSend(size: number): boolean {
    return this.connWindow >= size && this.calls.size < this.maxStreams;
  }

  /** Sends the waiting requests that fit now, in order. */
  drain(): void {
    while (this.blocked.length > 0 && this.canSend(this.blocked[0]!.size)) this.blocked.shift()!.send();
  }

  /** Fails the calls on streams above `above` (all of them for 0) and the ones waiting to be sent. */
  fail(e: Error, above: number): void {
    for (const [id, c] of this.calls) {
      if (id <= above) continue;
      this.calls.delete(id);
      c.reject(e);
    }
    for (const b of this.blocked.splice(0)) b.send();
  }
}

export class LeanGrpc {
  private conn: Conn | null = null;
  private readonly headersOf = new Map<string, Buffer>();

  constructor(private readonly port: number) {}

  /** One unary call: resolves with the answer's message bytes (without the 5-byte prefix). */
  unary(path: string, message: Uint8Array): Promise<Buffer> {
    const c = this.connect();
    const body = grpcMessage(message);
    if (body.length > c.streamWindow) return Promise.reject(new Error('message larger than the stream window'));
    return new Promise((resolve, reject) => {
      const send = () => {
        if (c.draining || c.sock.destroyed) return reject(new Error('connection closed before the call was sent'));
        if (c.nextStream > MAX_WINDOW) return reject(new Error('stream ids exhausted'));
        const id = c.nextStream;
        c.nextStream += 2;
        c.connWindow -= body.length;
        c.calls.set(id, { chunks: [], resolve, reject });
        let h = this.headersOf.get(path);
        if (h === undefined) this.headersOf.set(path, (h = headerBlock(`127.0.0.1:${this.port}`, path)));
        c.sock.write(Buffer.concat([frame(HEADERS, END_HEADERS, id, h), frame(DATA, END_STREAM, id, body)]));
      };
      if (c.blocked.length === 0 && c.canSend(body.length)) send();
      else c.blocked.push({ size: body.length, send });
    });
  }

  close(): void {
    this.conn?.sock.destroy();
    this.conn = null;
  }

  private connect(): Conn {
    if (this.conn !== null && !this.conn.draining && !this.conn.sock.destroyed) return this.conn;
    const c = new Conn(net.connect({ port: this.port, host: '127.0.0.1', noDelay: true }));
    this.conn = c;
    const settings = Buffer.alloc(12);
    settings.writeUInt16BE(H2Setting.ENABLE_PUSH, 0);
    settings.writeUInt32BE(0, 2);
    settings.writeUInt16BE(H2Setting.INITIAL_WINDOW_SIZE, 6);
    settings.writeUInt32BE(MAX_WINDOW, 8);
    const inc = Buffer.alloc(4);
    inc.writeUInt32BE(MAX_WINDOW - DEFAULT_WINDOW, 0);
    c.sock.write(Buffer.concat([PREFACE, frame(SETTINGS, 0, 0, settings), frame(WINDOW_UPDATE, 0, 0, inc)]));
    c.sock.on('data', (d: Buffer) => this.onData(c, d));
    const gone = (e?: Error) => {
      c.draining = true;
      if (this.conn === c) this.conn = null;
      c.fail(e ?? new Error('connection closed'), 0);
    };
    c.sock.on('error', gone);
    c.sock.on('close', () => gone());
    return c;
  }

  private onData(c: Conn, d: Buffer): void {
    c.buf = c.buf.length === 0 ? d : Buffer.concat([c.buf, d]);
    let off = 0;
    while (c.buf.length - off >= 9) {
      const len = c.buf.readUIntBE(off, 3);
      if (c.buf.length - off < 9 + len) break;
      const type = c.buf[off + 3]!;
      const flags = c.buf[off + 4]!;
      const id = c.buf.readUInt32BE(off + 5) & 0x7fffffff;
      const p = c.buf.subarray(off + 9, off + 9 + len);
      off += 9 + len;
      this.onFrame(c, type, flags, id, p);
    }
    c.buf = off === c.buf.length ? Buffer.alloc(0) : Buffer.from(c.buf.subarray(off));
  }

  private onFrame(c: Conn, type: number, flags: number, id: number, p: Buffer): void {
    switch (type) {
      case DATA: {
        const call = c.calls.get(id);
        const pad = flags & PADDED ? p[0]! : -1;
        if (call !== undefined) call.chunks.push(Buffer.from(pad < 0 ? p : p.subarray(1, p.length - pad)));
        if (flags & END_STREAM) this.end(c, id);
        return;
      }
      case HEADERS:
        if (flags & END_STREAM) this.end(c, id);
        return;
      case RST_STREAM: {
        const call = c.calls.get(id);
        c.calls.delete(id);
        call?.reject(new Error(`stream reset (code ${p.readUInt32BE(0)})`));
        c.drain();
        return;
      }
      case SETTINGS:
        if (flags & ACK) return;
        for (let i = 0; i + 6 <= p.length; i += 6) {
          const [key, value] = [p.readUInt16BE(i), p.readUInt32BE(i + 2)];
          // A change of INITIAL_WINDOW_SIZE moves the windows of open streams too; ours are one small DATA each.
          if (key === H2Setting.INITIAL_WINDOW_SIZE) c.streamWindow = value;
          else if (key === H2Setting.MAX_CONCURRENT_STREAMS) c.maxStreams = value;
        }
        c.sock.write(frame(SETTINGS, ACK, 0, new Uint8Array(0)));
        c.drain();
        return;
      case PING:
        if (!(flags & ACK)) c.sock.write(frame(PING, ACK, 0, p));
        return;
      case GOAWAY:
        // Streams above the last one the server took were never processed; the streams below it
        // finish on this connection, and the next call opens another.
        c.draining = true;
        if (this.conn === c) this.conn = null;
        c.fail(new Error(`GOAWAY (code ${p.readUInt32BE(4)})`), p.readUInt32BE(0) & 0x7fffffff);
        if (c.calls.size === 0) c.sock.end();
        return;
      case WINDOW_UPDATE:
        if (id !== 0) return;
        c.connWindow += p.readUInt32BE(0) & 0x7fffffff;
        c.drain();
        return;
      default:
      // PRIORITY, PUSH_PROMISE (refused by our SETTINGS), CONTINUATION of a block we do not decode.
    }
  }

  /** A stream ended: its call succeeds with one whole gRPC message, fails without. */
  private end(c: Conn, id: number): void {
    const call = c.calls.get(id);
    if (call === undefined) return;
    c.calls.delete(id);
    if (c.draining && c.calls.size === 0) c.sock.end();
    c.drain();
    const m = Buffer.concat(call.chunks);
    if (m.length >= 5 && m[0] === 0 && m.readUInt32BE(1) === m.length - 5) call.resolve(m.subarray(5));
    else call.reject(new Error(m.length === 0 ? 'no message (a gRPC error: trailers only)' : `malformed gRPC message (${m.length} bytes)`));
  }
}
