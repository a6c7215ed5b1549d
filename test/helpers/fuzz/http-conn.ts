/**
 * A raw HTTP/1.1 client connection for the fuzzer: it writes request bytes exactly as given (so
 * framing can be varied) and reads responses with a small parser (Content-Length, chunked, or
 * until close). One connection carries many cases (keep-alive); when the server closes it, the
 * next case reconnects.
 */
import net from 'node:net';

export interface HttpAnswer {
  status: number;
  statusLine: string;
  headers: Map<string, string[]>;
  body: Buffer;
  /** The server closed the connection after this response. */
  closed: boolean;
}

/** What one request got: an answer, or the connection closed (or timed out) without one. */
export type HttpOutcome =
  | { kind: 'answer'; answer: HttpAnswer }
  | { kind: 'closed'; partial: string; conn?: string }
  | { kind: 'timeout'; partial: string; conn?: string }
  | { kind: 'error'; message: string; conn?: string };

export function header(a: HttpAnswer, name: string): string | undefined {
  return a.headers.get(name.toLowerCase())?.[0];
}

/** A kept-alive connection idle this long is not reused (uWS closes it after 8–12 s). */
const IDLE_REUSE_MS = 5000;

/** The request's Connection header values, as lower-cased tokens (RFC 9110 §7.6.1). */
function connectionTokens(raw: Buffer): { requestLine: string; tokens: string[] } {
  let end = raw.indexOf('\r\n\r\n');
  if (end < 0) end = Math.min(raw.length, 64 * 1024);
  const lines = raw.subarray(0, end).toString('latin1').split(/\r?\n/);
  const tokens: string[] = [];
  for (const l of lines.slice(1)) {
    const m = /^connection[ \t]*:(.*)$/i.exec(l);
    if (m) tokens.push(...m[1]!.split(',').map((t) => t.trim().toLowerCase()));
  }
  return { requestLine: lines[0] ?? '', tokens };
}

/** The request's Connection header lists `close` (RFC 9112 §9.6). */
export function sendsCloseOption(raw: Buffer): boolean {
  return connectionTokens(raw).tokens.includes('close');
}

/**
 * Whether a request asks to close its connection after the answer: a `close` option in its
 * Connection header (RFC 9112 §9.6), or HTTP/1.0 without `keep-alive` (§9.3). A client that asked
 * MUST NOT send another request on that connection.
 */
export function asksClose(raw: Buffer): boolean {
  const { requestLine, tokens } = connectionTokens(raw);
  if (tokens.includes('close')) return true;
  return / HTTP\/1\.0$/.test(requestLine) && !tokens.includes('keep-alive');
}

interface ConnTrace {
  port: number;
  opened: number;
  sent: number;
  lastAnswer: number;
  fin: number;
  requests: number;
  /** The last requests written on this socket (request line, size), most recent last. */
  history: string[];
}

interface Pending {
  head: boolean;
  /** The request asked to close the connection after its answer. */
  close: boolean;
  resolve: (o: HttpOutcome) => void;
}

export class HttpConn {
  private sock: net.Socket | null = null;
  private buf = Buffer.alloc(0);
  private queue: Pending[] = [];
  private dead = true;
  /** Answers read on the current socket (0: a fresh connection). */
  private answered = 0;
  /** What happened on the current socket, for a failure report (see connInfo). */
  private trace: ConnTrace | null = null;

  constructor(
    readonly port: number,
    readonly timeoutMs = 20_000,
  ) {}

  private connect(): net.Socket {
    const sock = net.connect(this.port, '127.0.0.1');
    sock.setNoDelay(true);
    this.sock = sock;
    this.buf = Buffer.alloc(0);
    this.dead = false;
    this.answered = 0;
    const trace: ConnTrace = { port: 0, opened: performance.now(), sent: 0, lastAnswer: 0, fin: 0, requests: 0, history: [] };
    this.trace = trace;
    sock.on('connect', () => (trace.port = sock.localPort ?? 0));
    sock.on('end', () => (trace.fin = performance.now()));
    sock.on('data', (d) => {
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      this.drain(false);
    });
    const gone = (err?: Error) => {
      if (this.sock !== sock) return;
      this.dead = true;
      this.drain(true, err, this.connInfo(trace, err));
      this.sock = null;
    };
    sock.on('close', () => gone());
    sock.on('error', (e) => gone(e));
    return sock;
  }

  /**
   * Sends `raw` (optionally in several writes, split at `splits`) and resolves with the first
   * response. `responses` > 1 for pipelined requests written together: the result is the last.
   *
   * No retry: a connection is reused only while the server keeps it (it announced no close, the
   * client asked for none, and it has not sat idle towards uWS's keep-alive timeout), so a kept
   * connection that closes under a request is the server's fault, reported as such.
   */
  send(raw: Buffer, opts: { head?: boolean; splits?: number[]; responses?: number; heads?: boolean[]; timeoutMs?: number } = {}): Promise<HttpOutcome[]> {
    // uWS closes a keep-alive connection idle for HTTP_IDLE_TIMEOUT_S (10 s), checked every 4 s:
    // 8–12 s after the last answer (uNetworking/uWebSockets:src/HttpContext.h). Like a real
    // client's idle-connection timeout, one idle for 5 s is not reused.
    if (!this.dead && this.trace && this.trace.lastAnswer > 0 && performance.now() - this.trace.lastAnswer > IDLE_REUSE_MS) this.destroy();
    return this.sendOnce(raw, opts);
  }

  private sendOnce(raw: Buffer, opts: { head?: boolean; splits?: number[]; responses?: number; heads?: boolean[]; timeoutMs?: number }): Promise<HttpOutcome[]> {
    const sock = this.dead || !this.sock ? this.connect() : this.sock;
    const n = opts.responses ?? 1;
    const points = [...(opts.splits ?? [])].filter((p) => p > 0 && p < raw.length).sort((a, b) => a - b);
    if (this.trace) {
      this.trace.sent = performance.now();
      this.trace.requests++;
      const nl = raw.indexOf('\r\n');
      this.trace.history.push(`${JSON.stringify(raw.subarray(0, Math.min(nl < 0 ? 120 : nl, 120)).toString('latin1'))} (${raw.length} B${n > 1 ? ` ×${n}` : ''}${points.length ? `, ${points.length + 1} writes` : ''})`);
      if (this.trace.history.length > 3) this.trace.history.shift();
    }
    const promises: Promise<HttpOutcome>[] = [];
    const close = asksClose(raw);
    for (let i = 0; i < n; i++) {
      const head = opts.heads?.[i] ?? opts.head ?? false;
      promises.push(new Promise<HttpOutcome>((resolve) => this.queue.push({ head, close, resolve })));
    }
    let from = 0;
    for (const p of points) {
      sock.write(raw.subarray(from, p));
      from = p;
    }
    sock.write(raw.subarray(from));
    // One watchdog per connection rather than a timer per request (a timer each is a visible
    // share of the fuzzer's CPU at thousands of cases a second).
    this.deadline = Date.now() + (opts.timeoutMs ?? this.timeoutMs);
    this.watchdog ??= setInterval(() => this.checkDeadline(), Math.min(1000, this.timeoutMs));
    return Promise.all(promises);
  }

  private deadline = 0;
  private watchdog: NodeJS.Timeout | null = null;

  private checkDeadline(): void {
    if (this.queue.length === 0 || Date.now() < this.deadline) return;
    const partial = this.buf.subarray(0, 300).toString('latin1');
    const waiting = this.queue;
    this.queue = [];
    for (const w of waiting) w.resolve({ kind: 'timeout', partial });
    this.destroy();
  }

  /** Ends the connection; the next send opens a new one. `close()` also stops the watchdog. */
  close(): void {
    this.destroy();
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
  }

  destroy(): void {
    const s = this.sock;
    this.sock = null;
    this.dead = true;
    s?.destroy();
  }

  /**
   * The socket's story when it ended without an answer: client port (to find it in a packet
   * capture), requests sent and answers read on it, and the times since it opened.
   */
  private connInfo(t: ConnTrace, err?: Error): string {
    const now = performance.now();
    const ms = (x: number) => (x === 0 ? '-' : `${(now - x).toFixed(0)} ms ago`);
    return `client port ${t.port}, request ${t.requests} on it (${this.answered} answered), opened ${ms(t.opened)}, last request sent ${ms(t.sent)}, last answer ${ms(t.lastAnswer)}, ${t.fin ? `FIN ${ms(t.fin)}` : 'no FIN'}${err ? `, ${err.message}` : ''}; requests on it, last ones: ${t.history.join(' → ')}`;
  }

  private drain(closed: boolean, err?: Error, conn?: string): void {
    while (this.queue.length > 0) {
      const p = this.queue[0]!;
      const r = parseResponse(this.buf, p.head, closed);
      if (r === null) {
        if (!closed) return;
        this.queue.shift();
        const partial = this.buf.subarray(0, 300).toString('latin1');
        this.buf = Buffer.alloc(0);
        p.resolve(err && partial === '' ? { kind: 'error', message: err.message, conn } : { kind: 'closed', partial, conn });
        continue;
      }
      this.queue.shift();
      this.answered++;
      if (this.trace) {
        this.trace.lastAnswer = performance.now();
        const h = this.trace.history;
        if (h.length > 0) h[h.length - 1] += ` → ${r.answer.status}${r.answer.body.length ? ` ${r.answer.body.length} B` : ''}`;
      }
      this.buf = this.buf.subarray(r.used);
      // The server announced the close, or this client asked for it: either way the connection
      // ends with this answer (pipelined requests behind it are never read).
      const wantsClose = (header(r.answer, 'connection') ?? '').toLowerCase() === 'close' || p.close;
      r.answer.closed = closed || wantsClose;
      if (r.answer.status >= 100 && r.answer.status < 200 && r.answer.status !== 101) {
        this.queue.unshift(p); // interim answer: the real one follows
        continue;
      }
      if (wantsClose) {
        this.dead = true;
        this.sock?.end();
      }
      p.resolve({ kind: 'answer', answer: r.answer });
    }
  }
}

/** Parses one response at the start of `b`; null when incomplete. */
export function parseResponse(b: Buffer, head: boolean, closed: boolean): { answer: HttpAnswer; used: number } | null {
  const end = b.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = b.subarray(0, end).toString('latin1').split('\r\n');
  const statusLine = lines[0]!;
  const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(statusLine);
  const status = m ? Number(m[1]) : -1;
  const headers = new Map<string, string[]>();
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    const k = (i < 0 ? l : l.slice(0, i)).trim().toLowerCase();
    const v = i < 0 ? '' : l.slice(i + 1).trim();
    const list = headers.get(k);
    if (list) list.push(v);
    else headers.set(k, [v]);
  }
  const bodyStart = end + 4;
  const answer = (body: Buffer, used: number) => ({ answer: { status, statusLine, headers, body, closed: false }, used });
  if (head || status === 204 || status === 304 || (status >= 100 && status < 200)) return answer(Buffer.alloc(0), bodyStart);
  const cl = headers.get('content-length')?.[0];
  if (cl !== undefined) {
    const n = Number(cl);
    if (b.length - bodyStart < n) return null;
    return answer(b.subarray(bodyStart, bodyStart + n), bodyStart + n);
  }
  if ((headers.get('transfer-encoding')?.[0] ?? '').toLowerCase().includes('chunked')) {
    const parts: Buffer[] = [];
    let i = bodyStart;
    for (;;) {
      const le = b.indexOf('\r\n', i);
      if (le < 0) return null;
      const size = parseInt(b.subarray(i, le).toString('latin1'), 16);
      if (!Number.isFinite(size)) return answer(Buffer.concat(parts), b.length);
      if (size === 0) {
        const te = b.indexOf('\r\n', le + 2);
        if (te < 0) return null;
        return answer(Buffer.concat(parts), te + 2);
      }
      if (b.length < le + 2 + size + 2) return null;
      parts.push(b.subarray(le + 2, le + 2 + size));
      i = le + 2 + size + 2;
    }
  }
  if (!closed) return null;
  return answer(b.subarray(bodyStart), b.length);
}

/** Builds request bytes; Content-Length is set from the body unless `headers` carries one or `noLength`. */
export function buildRequest(req: { method: string; target: string; version?: string; headers: Array<[string, string]>; body: Buffer; eol?: string; noLength?: boolean }): Buffer {
  const eol = req.eol ?? '\r\n';
  let head = `${req.method} ${req.target} ${req.version ?? 'HTTP/1.1'}${eol}`;
  let hasLength = false;
  for (const [k, v] of req.headers) {
    if (k.toLowerCase() === 'content-length' || k.toLowerCase() === 'transfer-encoding') hasLength = true;
    head += `${k}: ${v}${eol}`;
  }
  if (!hasLength && !req.noLength && (req.body.length > 0 || req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH')) head += `Content-Length: ${req.body.length}${eol}`;
  head += eol;
  return Buffer.concat([Buffer.from(head, 'latin1'), req.body]);
}
