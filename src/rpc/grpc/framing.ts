/**
 * gRPC message framing (grpc/grpc PROTOCOL-HTTP2.md, Length-Prefixed-Message): one byte
 * Compressed-Flag, a 4-byte big-endian length, then the message. The reader enforces the receive
 * limit from the length prefix, before buffering the message (grpc-go rpc_util.go recvMsg:
 * `grpc: received message larger than max (N vs. M)`, ResourceExhausted).
 */
import zlib from 'node:zlib';
import { GrpcCode } from '../../app/errors.js';
import { statusError } from './status.js';

export const FRAME_HEADER_BYTES = 5;
/** Chunks under this size are copied together into one buffer of TAIL_BYTES (FrameReader.keep). */
const SMALL_CHUNK = 4096;
const TAIL_BYTES = 16 * 1024;

export interface Frame {
  compressed: boolean;
  data: Buffer;
}

/** Frames one message (never compressed: responses are sent with identity encoding). */
export function frame(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, FRAME_HEADER_BYTES);
  return out;
}

/** Incremental reader over a request body's DATA chunks. */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Length of the message being read, once its header is complete. */
  private need: number | null = null;
  private flag = 0;
  /** The buffer small chunks are copied into, and how much of it is used (see keep()). */
  private tail: Buffer | null = null;
  private tailEnd = 0;

  constructor(private readonly maxMessageBytes: number) {}

  /** Bytes buffered now (of a frame not yet complete). */
  get held(): number {
    return this.buffered;
  }

  /** Drops whatever is buffered (the call ended; the bytes are not needed). */
  clear(): void {
    this.chunks = [];
    this.buffered = 0;
    this.tail = null;
    this.tailEnd = 0;
  }

  /** True when part of a frame is buffered (the body must not end here). */
  get partial(): boolean {
    return this.buffered > 0 || this.need !== null;
  }

  /** Adds a chunk; returns the frames it completes. Throws ResourceExhausted past the limit. */
  push(chunk: Buffer): Frame[] {
    const out: Frame[] = [];
    if (chunk.length > 0) {
      this.chunks.push(this.keep(chunk));
      this.buffered += chunk.length;
    }
    for (;;) {
      if (this.need === null) {
        if (this.buffered < FRAME_HEADER_BYTES) break;
        const head = this.take(FRAME_HEADER_BYTES);
        this.flag = head[0]!;
        const len = head.readUInt32BE(1);
        if (len > this.maxMessageBytes) {
          throw statusError(GrpcCode.ResourceExhausted, `grpc: received message larger than max (${len} vs. ${this.maxMessageBytes})`);
        }
        this.need = len;
      }
      if (this.buffered < this.need) break;
      const data = this.take(this.need);
      this.need = null;
      out.push({ compressed: this.flag !== 0, data });
    }
    return out;
  }

  /**
   * What the reader holds for a chunk. A chunk much smaller than the buffer it is a view of (one
   * frame's payload in a socket read) would keep that whole buffer alive, and thousands of tiny
   * chunks would cost a Buffer object each: small chunks are copied into a shared tail buffer
   * that grows with them, others smaller than half their backing store are copied alone. The
   * reader then holds about what it counts in `held`.
   */
  private keep(chunk: Buffer): Buffer {
    if (chunk.length < SMALL_CHUNK) {
      const t = this.tail;
      const last = this.chunks[this.chunks.length - 1];
      if (t !== null && last !== undefined && last.buffer === t.buffer && last.byteOffset + last.length === t.byteOffset + this.tailEnd && this.tailEnd + chunk.length <= t.length) {
        // Extend the last chunk in place: it ends where the tail's free space begins.
        chunk.copy(t, this.tailEnd);
        this.tailEnd += chunk.length;
        this.chunks.pop();
        return t.subarray(last.byteOffset - t.byteOffset, this.tailEnd);
      }
      const fresh = Buffer.allocUnsafeSlow(TAIL_BYTES);
      chunk.copy(fresh, 0);
      this.tail = fresh;
      this.tailEnd = chunk.length;
      return fresh.subarray(0, chunk.length);
    }
    if (chunk.length * 2 < chunk.buffer.byteLength) return Buffer.from(chunk);
    return chunk;
  }

  private take(n: number): Buffer {
    if (n === 0) return Buffer.alloc(0);
    const first = this.chunks[0]!;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      out = Buffer.allocUnsafe(n);
      let off = 0;
      while (off < n) {
        const c = this.chunks[0]!;
        const k = Math.min(c.length, n - off);
        c.copy(out, off, 0, k);
        off += k;
        if (k === c.length) this.chunks.shift();
        else this.chunks[0] = c.subarray(k);
      }
    }
    this.buffered -= n;
    return out;
  }
}

/** Message encodings the server accepts (`grpc-accept-encoding` of its responses). */
export const ACCEPT_ENCODING = 'identity,deflate,gzip';

/**
 * Decompresses a compressed frame per the request's `grpc-encoding` (grpc-go rpc_util.go
 * checkRecvPayload / decompress): a set flag with identity or no encoding is Internal, an unknown
 * encoding Unimplemented, output beyond the receive limit ResourceExhausted.
 */
export function decompress(f: Frame, encoding: string, maxMessageBytes: number): Buffer {
  if (!f.compressed) return f.data;
  if (encoding === '' || encoding === 'identity') {
    throw statusError(GrpcCode.Internal, 'grpc: compressed flag set with identity or empty encoding');
  }
  const opts = { maxOutputLength: maxMessageBytes + 1 };
  let out: Buffer;
  try {
    if (encoding === 'gzip') out = zlib.gunzipSync(f.data, opts);
    else if (encoding === 'deflate') out = zlib.inflateSync(f.data, opts);
    else throw statusError(GrpcCode.Unimplemented, `grpc: Decompressor is not installed for grpc-encoding ${JSON.stringify(encoding)}`);
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw statusError(GrpcCode.ResourceExhausted, `grpc: received message after decompression larger than max (${maxMessageBytes})`);
    }
    if (e instanceof Error && e.name === 'GrpcStatusError') throw e;
    throw statusError(GrpcCode.Internal, `grpc: failed to decompress the received message: ${(e as Error).message}`);
  }
  if (out.length > maxMessageBytes) {
    throw statusError(GrpcCode.ResourceExhausted, `grpc: received message after decompression larger than max (${out.length} vs. ${maxMessageBytes})`);
  }
  return out;
}
