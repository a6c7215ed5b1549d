/**
 * Pull-based byte readers with back-pressure, shared by the raw socket (handshake, sealed frames)
 * and the SecretConnection's plaintext (MConnection packets).
 *
 * A `ChunkSource` hands out chunks either synchronously (`pullSync`, null when nothing is ready)
 * or asynchronously (`pull`, rejects with a P2PError on EOF or failure). `BufferedReader` turns
 * that into exact-length and uvarint-delimited reads, with a synchronous fast path so a consumer
 * can drain everything already received without a promise per message. One consumer at a time.
 */
import type { Socket } from 'node:net';
import { P2PError } from './errors.js';

export interface ChunkSource {
  pullSync(): Uint8Array | null;
  pull(): Promise<Uint8Array>;
}

/** Bytes from a net.Socket; pauses the socket while more than `highWater` bytes wait unread. */
export class SocketSource implements ChunkSource {
  private readonly queue: Uint8Array[] = [];
  private queued = 0;
  private failure: P2PError | null = null;
  private waiter: { resolve: (c: Uint8Array) => void; reject: (e: P2PError) => void } | null = null;
  private paused = false;

  constructor(
    private readonly socket: Socket,
    private readonly highWater = 1 << 20,
  ) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.fail(new P2PError('EOF', 'connection closed by the remote')));
    socket.on('error', (err) => this.fail(new P2PError('SOCKET', `socket error: ${err.message}`, { cause: err })));
    socket.on('close', () => this.fail(new P2PError('CLOSED', 'connection closed')));
  }

  private onData(chunk: Buffer): void {
    if (chunk.length === 0) return;
    const w = this.waiter;
    if (w) {
      this.waiter = null;
      w.resolve(chunk);
      return;
    }
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (!this.paused && this.queued > this.highWater) {
      this.paused = true;
      this.socket.pause();
    }
  }

  /** The first failure wins: 'end' before 'close' reports EOF rather than CLOSED. */
  fail(err: P2PError): void {
    if (!this.failure) this.failure = err;
    const w = this.waiter;
    if (w) {
      this.waiter = null;
      w.reject(this.failure);
    }
  }

  private take(): Uint8Array | null {
    const c = this.queue.shift();
    if (c === undefined) return null;
    this.queued -= c.length;
    if (this.paused && this.queued <= this.highWater / 2) {
      this.paused = false;
      this.socket.resume();
    }
    return c;
  }

  pullSync(): Uint8Array | null {
    return this.take();
  }

  pull(): Promise<Uint8Array> {
    const c = this.take();
    if (c) return Promise.resolve(c);
    if (this.failure) return Promise.reject(this.failure);
    if (this.waiter) return Promise.reject(new Error('SocketSource: concurrent pulls'));
    if (this.paused) {
      this.paused = false;
      this.socket.resume();
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }
}

export class BufferedReader {
  private chunks: Uint8Array[] = [];
  /** Read offset into chunks[0]. */
  private head = 0;
  private size = 0;
  /** Bytes read so far (flow-rate accounting and tests). */
  total = 0;

  constructor(private readonly source: ChunkSource) {}

  get buffered(): number {
    return this.size;
  }

  private append(c: Uint8Array): void {
    if (c.length === 0) return;
    this.chunks.push(c);
    this.size += c.length;
  }

  /** Fills from the source's ready chunks until `n` bytes are buffered; false if it ran dry. */
  private fillSync(n: number): boolean {
    while (this.size < n) {
      const c = this.source.pullSync();
      if (c === null) return false;
      this.append(c);
    }
    return true;
  }

  /** Removes and returns `n` buffered bytes (caller checked size >= n). */
  private take(n: number): Uint8Array {
    if (n === 0) return new Uint8Array(0);
    this.size -= n;
    this.total += n;
    const first = this.chunks[0]!;
    if (first.length - this.head >= n) {
      const out = first.subarray(this.head, this.head + n);
      this.head += n;
      if (this.head === first.length) {
        this.chunks.shift();
        this.head = 0;
      }
      return out;
    }
    const out = new Uint8Array(n);
    let off = 0;
    while (off < n) {
      const c = this.chunks[0]!;
      const k = Math.min(c.length - this.head, n - off);
      out.set(c.subarray(this.head, this.head + k), off);
      off += k;
      this.head += k;
      if (this.head === c.length) {
        this.chunks.shift();
        this.head = 0;
      }
    }
    return out;
  }

  private peekByte(i: number): number {
    let idx = this.head + i;
    for (const c of this.chunks) {
      if (idx < c.length) return c[idx]!;
      idx -= c.length;
    }
    throw new RangeError('peek past the buffer');
  }

  /** `n` bytes if they are (or can synchronously be) buffered, else null. */
  tryRead(n: number): Uint8Array | null {
    if (!this.fillSync(n)) return null;
    return this.take(n);
  }

  async read(n: number): Promise<Uint8Array> {
    while (!this.fillSync(n)) this.append(await this.source.pull());
    return this.take(n);
  }

  /**
   * The uvarint length prefix if complete: returns [value, prefixBytes] without consuming, or null
   * when more bytes are needed. Rejects prefixes over 10 bytes or beyond 2^53.
   */
  private peekUvarint(): [number, number] | null {
    let value = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (i >= this.size && !this.fillSync(i + 1)) return null;
      const b = this.peekByte(i);
      value += (b & 0x7f) * mul;
      if (b < 0x80) {
        if (!Number.isSafeInteger(value)) throw new P2PError('PROTOCOL', 'message length prefix out of range');
        return [value, i + 1];
      }
      mul *= 128;
    }
    throw new P2PError('PROTOCOL', 'message length prefix longer than 10 bytes');
  }

  /**
   * One `uvarint(len) || msg` message if fully available, else null. `len > max` is an error as
   * soon as the prefix is read (cometbft/cometbft:libs/protoio/reader.go).
   */
  tryReadDelimited(max: number): Uint8Array | null {
    const p = this.peekUvarint();
    if (!p) return null;
    const [len, pre] = p;
    if (len > max) throw new P2PError('MSG_TOO_LARGE', `message exceeds max size (${len} > ${max})`);
    if (!this.fillSync(pre + len)) return null;
    this.take(pre);
    return this.take(len);
  }

  async readDelimited(max: number): Promise<Uint8Array> {
    for (;;) {
      const m = this.tryReadDelimited(max);
      if (m) return m;
      this.append(await this.source.pull());
    }
  }
}
