/**
 * A minimal websocket client over node:net for tests: it can stop reading (to play a slow client),
 * send raw frames, and see close codes, which a full client library hides.
 */
import crypto from 'node:crypto';
import net from 'node:net';

export class WsClient {
  private buf = Buffer.alloc(0);
  private readonly inbox: string[] = [];
  private waiter: ((m: string | null) => void) | null = null;
  closeCode: number | null = null;
  ended = false;
  private keepAlive: NodeJS.Timeout | null = null;
  readonly closed: Promise<void>;

  private constructor(
    readonly sock: net.Socket,
    readonly head: string,
    rest: Buffer,
  ) {
    this.closed = new Promise((resolve) => sock.on('close', () => resolve()));
    sock.on('data', (d) => this.feed(d));
    sock.on('close', () => {
      this.ended = true;
      this.stopKeepAlive();
      this.waiter?.(null);
    });
    if (rest.length) this.feed(rest);
  }

  /** Opens `/websocket`; resolves with the client, or with the HTTP answer when not upgraded. */
  static connect(port: number, extraHeaders = '', version = '13'): Promise<{ ws: WsClient | null; head: string }> {
    return new Promise((resolve, reject) => {
      const sock = net.connect(port, '127.0.0.1');
      const key = crypto.randomBytes(16).toString('base64');
      let acc = Buffer.alloc(0);
      const onData = (d: Buffer) => {
        acc = Buffer.concat([acc, d]);
        const end = acc.indexOf('\r\n\r\n');
        if (end < 0) return;
        sock.off('data', onData);
        const head = acc.subarray(0, end).toString('latin1');
        if (!head.startsWith('HTTP/1.1 101')) {
          sock.destroy();
          resolve({ ws: null, head: acc.toString('latin1') });
          return;
        }
        resolve({ ws: new WsClient(sock, head, acc.subarray(end + 4)), head });
      };
      sock.on('data', onData);
      sock.on('error', reject);
      sock.write(
        `GET /websocket HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: ${version}\r\n${extraHeaders}\r\n`,
      );
    });
  }

  send(data: string | Buffer, opcode = 0x1): void {
    const payload = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const mask = crypto.randomBytes(4);
    let header: Buffer;
    if (payload.length < 126) header = Buffer.from([0x80 | opcode, 0x80 | payload.length]);
    else if (payload.length < 65536) {
      header = Buffer.alloc(4);
      header[0] = 0x80 | opcode;
      header[1] = 0x80 | 126;
      header.writeUInt16BE(payload.length, 2);
    } else {
      header = Buffer.alloc(10);
      header[0] = 0x80 | opcode;
      header[1] = 0x80 | 127;
      header.writeBigUInt64BE(BigInt(payload.length), 2);
    }
    const masked = Buffer.from(payload);
    for (let i = 0; i < masked.length; i++) masked[i]! ^= mask[i & 3]!;
    this.sock.write(Buffer.concat([header, mask, masked]));
  }

  call(msg: object): void {
    this.send(JSON.stringify(msg));
  }

  /** The next text/binary message, or null when the connection closed first. */
  next(timeoutMs = 30_000): Promise<string | null> {
    const m = this.inbox.shift();
    if (m !== undefined) return Promise.resolve(m);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new Error('no websocket message in time'));
      }, timeoutMs);
      this.waiter = (x) => {
        clearTimeout(timer);
        this.waiter = null;
        resolve(x);
      };
    });
  }

  async nextJson(): Promise<any> {
    const m = await this.next();
    return m === null ? null : JSON.parse(m);
  }

  /**
   * Plays a client that stops reading but is still there: the socket is paused, so what the
   * server writes backs up (in the kernel's socket buffers, then in the server's), while a ping
   * frame goes out every `keepAliveMs`. The server's idle timeout (uWS `idleTimeout`, reset by any
   * data received; src/rpc/node/server.ts WS_IDLE_TIMEOUT_S = 32) would otherwise close a client
   * that neither reads nor sends (it cannot answer the server's pings) after ~32 s, and a test
   * that takes longer than that under load would see the connection closed instead of whatever
   * back-pressure behaviour it is about.
   */
  stopReading(keepAliveMs = 2_000): void {
    this.sock.pause();
    this.stopKeepAlive();
    this.keepAlive = setInterval(() => {
      if (!this.ended && !this.sock.destroyed) this.send(Buffer.alloc(0), 0x9);
    }, keepAliveMs);
  }

  /** Reads again (after stopReading). */
  resumeReading(): void {
    this.stopKeepAlive();
    this.sock.resume();
  }

  private stopKeepAlive(): void {
    if (this.keepAlive !== null) clearInterval(this.keepAlive);
    this.keepAlive = null;
  }

  close(): void {
    this.stopKeepAlive();
    this.send(Buffer.from([0x03, 0xe8]), 0x8);
    this.sock.end();
  }

  private feed(d: Buffer): void {
    this.buf = Buffer.concat([this.buf, d]);
    for (;;) {
      if (this.buf.length < 2) return;
      const op = this.buf[0]! & 0x0f;
      let len = this.buf[1]! & 0x7f;
      let off = 2;
      if (len === 126) {
        if (this.buf.length < 4) return;
        len = this.buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return;
        len = Number(this.buf.readBigUInt64BE(2));
        off = 10;
      }
      if (this.buf.length < off + len) return;
      const payload = this.buf.subarray(off, off + len);
      this.buf = this.buf.subarray(off + len);
      if (op === 0x1 || op === 0x2) {
        const text = payload.toString('utf8');
        if (this.waiter) this.waiter(text);
        else this.inbox.push(text);
      } else if (op === 0x8) this.closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
      else if (op === 0x9) this.send(Buffer.from(payload), 0xa);
    }
  }
}
