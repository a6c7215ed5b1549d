/**
 * For tests of the gRPC server's transport: a server on a free port, and a raw HTTP/2 client: frames written by hand (so a test
 * can send what a well-behaved client never does), frames read back as they come, each with the
 * number of the TCP read it came in.
 */
import net from 'node:net';
import type { Test } from 'tap';
import type { QueryRouter } from '../../src/app/query-router.js';
import { encodeHeaders, h2Frame, H2_PREFACE } from '../../src/rpc/grpc/h2.js';
import { GrpcServer, type GrpcServerOptions } from '../../src/rpc/grpc/server.js';

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
