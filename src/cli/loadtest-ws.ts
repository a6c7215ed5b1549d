/**
 * A small websocket client (RFC 6455, text frames only) for `chaind loadtest`: node 20 has no
 * WebSocket global and the `ws` package is a development dependency only. Client frames are
 * masked; server frames may be fragmented; pings are answered; anything else closes the socket.
 */
import crypto from 'node:crypto';
import net from 'node:net';

export class WsTextClient {
  private buf: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private closedFlag = false;
  onMessage: (text: string) => void = () => {};
  onClose: (why: string) => void = () => {};

  private constructor(private readonly sock: net.Socket) {
    sock.setNoDelay(true);
    sock.on('data', (d: Buffer) => this.feed(d));
    sock.on('close', () => this.closed('socket closed'));
    sock.on('error', (e) => this.closed(e.message));
  }

  /** Opens ws://host:port/path; resolves after the 101 answer. */
  static connect(url: string, timeoutMs = 10_000): Promise<WsTextClient> {
    const u = new URL(url);
    if (u.protocol !== 'ws:') return Promise.reject(new Error(`websocket URL must be ws://, got ${url}`));
    const port = Number(u.port || 80);
    const key = crypto.randomBytes(16).toString('base64');
    return new Promise((resolve, reject) => {
      const sock = net.connect(port, u.hostname);
      let head = Buffer.alloc(0);
      const timer = setTimeout(() => fail(new Error(`websocket ${url}: no handshake answer in ${timeoutMs} ms`)), timeoutMs);
      const fail = (e: Error) => {
        clearTimeout(timer);
        sock.destroy();
        reject(e);
      };
      sock.once('error', fail);
      sock.on('connect', () => {
        sock.write(
          `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
      });
      const onData = (d: Buffer) => {
        head = Buffer.concat([head, d]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        sock.off('data', onData);
        sock.off('error', fail);
        clearTimeout(timer);
        const status = head.subarray(0, end).toString('latin1');
        if (!/^HTTP\/1\.1 101/.test(status)) {
          sock.destroy();
          reject(new Error(`websocket ${url}: ${status.split('\r\n')[0]}`));
          return;
        }
        const c = new WsTextClient(sock);
        resolve(c);
        const rest = head.subarray(end + 4);
        if (rest.length > 0) c.feed(rest);
      };
      sock.on('data', onData);
    });
  }

  get isClosed(): boolean {
    return this.closedFlag;
  }

  send(text: string): void {
    if (this.closedFlag) throw new Error('websocket closed');
    this.frame(0x1, Buffer.from(text, 'utf8'));
  }

  close(): void {
    if (this.closedFlag) return;
    try {
      this.frame(0x8, Buffer.from([0x03, 0xe8]));
    } catch {
      // already gone
    }
    this.sock.end();
    setTimeout(() => this.sock.destroy(), 1000).unref();
  }

  private frame(opcode: number, payload: Buffer): void {
    const len = payload.length;
    const hdr = len < 126 ? Buffer.alloc(6) : len < 65536 ? Buffer.alloc(8) : Buffer.alloc(14);
    hdr[0] = 0x80 | opcode;
    let o = 2;
    if (len < 126) hdr[1] = 0x80 | len;
    else if (len < 65536) {
      hdr[1] = 0x80 | 126;
      hdr.writeUInt16BE(len, 2);
      o = 4;
    } else {
      hdr[1] = 0x80 | 127;
      hdr.writeBigUInt64BE(BigInt(len), 2);
      o = 10;
    }
    const mask = crypto.randomBytes(4);
    mask.copy(hdr, o);
    const masked = Buffer.allocUnsafe(len);
    for (let i = 0; i < len; i++) masked[i] = payload[i]! ^ mask[i & 3]!;
    this.sock.write(Buffer.concat([hdr, masked]));
  }

  private feed(d: Buffer): void {
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    for (;;) {
      if (this.buf.length < 2) return;
      const b0 = this.buf[0]!;
      const b1 = this.buf[1]!;
      let len = b1 & 0x7f;
      let o = 2;
      if (len === 126) {
        if (this.buf.length < 4) return;
        len = this.buf.readUInt16BE(2);
        o = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return;
        len = Number(this.buf.readBigUInt64BE(2));
        o = 10;
      }
      const masked = (b1 & 0x80) !== 0;
      const maskAt = o;
      if (masked) o += 4;
      if (this.buf.length < o + len) return;
      let payload = this.buf.subarray(o, o + len);
      if (masked) {
        const m = this.buf.subarray(maskAt, maskAt + 4);
        payload = Buffer.from(payload.map((x, i) => x ^ m[i & 3]!));
      }
      this.buf = this.buf.subarray(o + len);
      const opcode = b0 & 0x0f;
      const fin = (b0 & 0x80) !== 0;
      if (opcode === 0x9) this.frame(0xa, Buffer.from(payload));
      else if (opcode === 0x8) {
        this.closed(`closed by server (${payload.length >= 2 ? payload.readUInt16BE(0) : 'no code'})`);
        this.sock.end();
        return;
      } else if (opcode === 0x1 || opcode === 0x2 || opcode === 0x0) {
        this.fragments.push(Buffer.from(payload));
        if (fin) {
          const text = Buffer.concat(this.fragments).toString('utf8');
          this.fragments = [];
          this.onMessage(text);
        }
      }
    }
  }

  private closed(why: string): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.onClose(why);
  }
}
