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
export type HttpOutcome = { kind: 'answer'; answer: HttpAnswer } | { kind: 'closed'; partial: string } | { kind: 'timeout'; partial: string } | { kind: 'error'; message: string };

export function header(a: HttpAnswer, name: string): string | undefined {
  return a.headers.get(name.toLowerCase())?.[0];
}

interface Pending {
  head: boolean;
  resolve: (o: HttpOutcome) => void;
}

export class HttpConn {
  private sock: net.Socket | null = null;
  private buf = Buffer.alloc(0);
  private queue: Pending[] = [];
  private dead = true;
  /** Answers read on the current socket (0: a fresh connection). */
  private answered = 0;
  /** The last answer on this socket was to a HEAD (then a close is not retried: KNOWN_BUGS.headKeepAlive). */
  private afterHead = false;

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
    sock.on('data', (d) => {
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      this.drain(false);
    });
    const gone = (err?: Error) => {
      if (this.sock !== sock) return;
      this.dead = true;
      this.drain(true, err);
      this.sock = null;
    };
    sock.on('close', () => gone());
    sock.on('error', (e) => gone(e));
    return sock;
  }

  /**
   * Sends `raw` (optionally in several writes, split at `splits`) and resolves with the first
   * response. `responses` > 1 for pipelined requests written together: the result is the last.
   */
  async send(raw: Buffer, opts: { head?: boolean; splits?: number[]; responses?: number; heads?: boolean[] } = {}): Promise<HttpOutcome[]> {
    const reused = !this.dead && this.sock !== null && this.answered > 0 && !this.afterHead;
    const outs = await this.sendOnce(raw, opts);
    // A kept-alive connection the server closed (after an answer that ended it) while this request
    // was on its way: what clients do, and what is fair here, is to send it again on a new one.
    const first = outs[0];
    if (reused && first && ((first.kind === 'closed' && first.partial === '') || (first.kind === 'error' && /EPIPE|ECONNRESET/.test(first.message)))) {
      this.destroy();
      return this.sendOnce(raw, opts);
    }
    return outs;
  }

  private sendOnce(raw: Buffer, opts: { head?: boolean; splits?: number[]; responses?: number; heads?: boolean[] }): Promise<HttpOutcome[]> {
    const sock = this.dead || !this.sock ? this.connect() : this.sock;
    const n = opts.responses ?? 1;
    const promises: Promise<HttpOutcome>[] = [];
    for (let i = 0; i < n; i++) {
      const head = opts.heads?.[i] ?? opts.head ?? false;
      promises.push(new Promise<HttpOutcome>((resolve) => this.queue.push({ head, resolve })));
    }
    const points = [...(opts.splits ?? [])].filter((p) => p > 0 && p < raw.length).sort((a, b) => a - b);
    let from = 0;
    for (const p of points) {
      sock.write(raw.subarray(from, p));
      from = p;
    }
    sock.write(raw.subarray(from));
    // One watchdog per connection rather than a timer per request (a timer each is a visible
    // share of the fuzzer's CPU at thousands of cases a second).
    this.deadline = Date.now() + this.timeoutMs;
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

  private drain(closed: boolean, err?: Error): void {
    while (this.queue.length > 0) {
      const p = this.queue[0]!;
      const r = parseResponse(this.buf, p.head, closed);
      if (r === null) {
        if (!closed) return;
        this.queue.shift();
        const partial = this.buf.subarray(0, 300).toString('latin1');
        this.buf = Buffer.alloc(0);
        p.resolve(err && partial === '' ? { kind: 'error', message: err.message } : { kind: 'closed', partial });
        continue;
      }
      this.queue.shift();
      this.answered++;
      this.afterHead = p.head;
      this.buf = this.buf.subarray(r.used);
      const wantsClose = (header(r.answer, 'connection') ?? '').toLowerCase() === 'close';
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
