/**
 * A lean keep-alive HTTP/1.1 client for the benches' load generators and probes.
 *
 * Why not node:http: the load generator shares this 2-core machine with the node it measures, so
 * every microsecond it spends per request is taken from the node. Measured 2026-11-27 in the bank
 * send bench: node:http's agent, request and response objects cost the client 0.40 ms of CPU per
 * committed tx (a broadcast_tx_sync, a share of the /status probe and of the block watcher), a
 * quarter of what the node itself spent per tx. This client writes each request as one string on a
 * plain socket and reads the answer's status line, Content-Length and body; nothing else.
 *
 * What it does not do: chunked bodies, pipelining (one request at a time per connection, as a
 * node:http agent), redirects, TLS. An answer without Content-Length is an error. A connection the
 * server closed under a request rejects that request with code ECONNRESET (the caller decides
 * whether to retry; see Conn.send for the one case retried here) and is opened again for the next.
 */
import net from 'node:net';

export interface LeanAnswer {
  status: number;
  body: Buffer;
}

interface Pending {
  head: string;
  body: Buffer | undefined;
  resolve: (a: LeanAnswer) => void;
  reject: (e: Error) => void;
  /** Sent again once already (see Conn.send). */
  retried: boolean;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** One keep-alive connection: at most one request in flight. */
class Conn {
  private socket: net.Socket | null = null;
  private current: Pending | null = null;
  private buf: Buffer = Buffer.alloc(0);
  private bodyStart = -1;
  private bodyLen = 0;
  private status = 0;
  private closeAfter = false;
  /** Whether the current request went out on a connection that had served one before. */
  private reused = false;
  /** Whether any byte of the current request's answer arrived. */
  private answered = false;
  /** When the current request was sent (performance.now()). */
  sentAt = 0;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly onFree: (c: Conn) => void,
  ) {}

  get busy(): boolean {
    return this.current !== null;
  }

  /**
   * Sends `p`. A request sent on a kept-alive connection that closes before any byte of the answer
   * is sent once more on a fresh connection: the server closed an idle connection (uWS does after
   * 10 s) as the request went out, and never read it. Browsers and node:http's agent do the same
   * for a reused socket.
   */
  send(p: Pending): void {
    this.current = p;
    this.sentAt = performance.now();
    this.reused = this.socket !== null;
    this.answered = false;
    const s = this.socket ?? this.open();
    if (p.body === undefined) s.write(p.head);
    else {
      s.cork();
      s.write(p.head);
      s.write(p.body);
      s.uncork();
    }
  }

  /** Closes the connection; a request in flight rejects with `err`. */
  destroy(err?: Error): void {
    this.socket?.destroy();
    this.socket = null;
    const p = this.current;
    this.current = null;
    if (p !== null) p.reject(err ?? Object.assign(new Error('connection closed by the client'), { code: 'ECONNRESET' }));
  }

  private open(): net.Socket {
    const s = net.connect({ host: this.host, port: this.port, noDelay: true });
    this.socket = s;
    this.buf = Buffer.alloc(0);
    this.bodyStart = -1;
    s.on('data', (d: Buffer) => this.onData(d));
    const gone = (err?: Error) => {
      if (this.socket !== s) return;
      this.socket = null;
      const p = this.current;
      this.current = null;
      if (p === null) return;
      if (this.reused && !this.answered && !p.retried) {
        p.retried = true;
        return this.send(p);
      }
      // A refused connection keeps its own code; a connection lost under the request is a reset.
      p.reject(err !== undefined && (err as NodeJS.ErrnoException).code !== undefined ? err : Object.assign(err ?? new Error('socket closed'), { code: 'ECONNRESET' }));
      this.onFree(this);
    };
    s.on('error', (e) => gone(e));
    s.on('close', () => gone());
    return s;
  }

  private onData(d: Buffer): void {
    if (this.current === null) return;
    this.answered = true;
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    if (this.bodyStart < 0) {
      const end = this.buf.indexOf(HEADER_END);
      if (end < 0) return;
      const head = this.buf.toString('latin1', 0, end);
      this.status = Number(head.slice(9, 12));
      const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      if (m === null) return this.fail(new Error(`answer without Content-Length: ${head.slice(0, 200)}`));
      this.bodyLen = Number(m[1]);
      this.closeAfter = /\r\nconnection:\s*close/i.test(head);
      this.bodyStart = end + 4;
    }
    if (this.buf.length < this.bodyStart + this.bodyLen) return;
    const body = this.buf.subarray(this.bodyStart, this.bodyStart + this.bodyLen);
    const rest = this.buf.subarray(this.bodyStart + this.bodyLen);
    this.buf = rest.length === 0 ? Buffer.alloc(0) : Buffer.from(rest);
    this.bodyStart = -1;
    const p = this.current;
    this.current = null;
    if (this.closeAfter) this.destroy();
    p?.resolve({ status: this.status, body });
    this.onFree(this);
  }

  /** Ends the request in flight with `e` (the connection is dropped) and frees the connection. */
  fail(e: Error): void {
    this.destroy(e);
    this.onFree(this);
  }
}

/**
 * Up to `conns` keep-alive connections to one server; requests beyond them wait in order. A
 * request unanswered `timeoutMs` after it went out rejects with code ETIMEDOUT and its connection
 * is dropped (a sweep once a second, or at half the timeout when shorter; no timer per request).
 */
export class LeanClient {
  private readonly conns: Conn[] = [];
  private readonly idle: Conn[] = [];
  private readonly queue: Pending[] = [];
  private readonly hostHeader: string;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    readonly port: number,
    private readonly maxConns = 8,
    private readonly host = '127.0.0.1',
    private readonly timeoutMs = 60_000,
  ) {
    this.hostHeader = `${host}:${port}`;
  }

  get(path: string): Promise<LeanAnswer> {
    return this.enqueue(`GET ${path} HTTP/1.1\r\nHost: ${this.hostHeader}\r\n\r\n`, undefined);
  }

  post(path: string, body: string, contentType = 'application/json'): Promise<LeanAnswer> {
    const b = Buffer.from(body);
    return this.enqueue(`POST ${path} HTTP/1.1\r\nHost: ${this.hostHeader}\r\nContent-Type: ${contentType}\r\nContent-Length: ${b.length}\r\n\r\n`, b);
  }

  /** Closes every connection; requests in flight and waiting reject (ECONNRESET). */
  close(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    const waiting = this.queue.splice(0);
    for (const c of this.conns) c.destroy();
    this.conns.length = 0;
    this.idle.length = 0;
    for (const p of waiting) p.reject(Object.assign(new Error('connection closed by the client'), { code: 'ECONNRESET' }));
  }

  private sweep(): void {
    const now = performance.now();
    for (const c of this.conns) {
      if (c.busy && now - c.sentAt > this.timeoutMs) c.fail(Object.assign(new Error(`no answer within ${this.timeoutMs} ms`), { code: 'ETIMEDOUT' }));
    }
  }

  private enqueue(head: string, body: Buffer | undefined): Promise<LeanAnswer> {
    return new Promise((resolve, reject) => {
      const p: Pending = { head, body, resolve, reject, retried: false };
      if (this.sweeper === undefined) {
        this.sweeper = setInterval(() => this.sweep(), Math.min(1000, Math.max(10, this.timeoutMs / 2)));
        this.sweeper.unref();
      }
      const c = this.idle.pop() ?? this.fresh();
      if (c === undefined) this.queue.push(p);
      else c.send(p);
    });
  }

  private fresh(): Conn | undefined {
    if (this.conns.length >= this.maxConns) return undefined;
    const c = new Conn(this.host, this.port, (free) => this.release(free));
    this.conns.push(c);
    return c;
  }

  private release(c: Conn): void {
    const next = this.queue.shift();
    if (next !== undefined) c.send(next);
    else this.idle.push(c);
  }
}
