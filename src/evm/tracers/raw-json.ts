/**
 * JSON text that is already serialized: a tracer whose result is large (the struct logger) builds
 * its entries as text once, and the result travels (worker to RPC thread, into the response) as
 * text pieces instead of an object graph that would be cloned and stringified again.
 *
 * A RawJson holds its text as parts (the struct logger: one part per step) and joins them only
 * when `json` is read (the buffered path: batches, websocket, the JSON-RPC envelope). A single
 * HTTP request whose result is large is streamed instead (StreamScope below):
 * the parts go to the socket in chunks and are never one string.
 */
export class RawJson {
  private text: string | undefined;
  private pieces: readonly string[] | undefined;
  constructor(json: string | readonly string[]) {
    if (typeof json === 'string') this.text = json;
    else this.pieces = json;
  }
  /** The whole text (joined once, on first read). */
  get json(): string {
    if (this.text === undefined) {
      this.text = this.pieces!.join('');
      this.pieces = undefined;
    }
    return this.text;
  }
  /** The text as parts, whose concatenation is `json`. */
  get parts(): readonly string[] {
    return this.pieces ?? [this.text!];
  }
  toJSON(): unknown {
    return JSON.parse(this.json);
  }
}

/** JSON.stringify that writes a RawJson's text as it is, wherever it sits in `v`. */
export function toJsonText(v: unknown): string {
  return toJsonParts(v).join('');
}

/** toJsonText as parts: a RawJson's parts are kept as they are (no join of a large result). */
export function toJsonParts(v: unknown, out: string[] = []): string[] {
  if (v instanceof RawJson) {
    for (const p of v.parts) out.push(p);
    return out;
  }
  if (Array.isArray(v)) {
    out.push('[');
    v.forEach((x, i) => {
      if (i > 0) out.push(',');
      if (x === undefined) out.push('null');
      else toJsonParts(x, out);
    });
    out.push(']');
    return out;
  }
  if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array) && typeof (v as { toJSON?: unknown }).toJSON !== 'function') {
    out.push('{');
    let first = true;
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue;
      out.push(`${first ? '' : ','}${JSON.stringify(k)}:`);
      first = false;
      toJsonParts(x, out);
    }
    out.push('}');
    return out;
  }
  out.push(JSON.stringify(v) ?? 'null');
  return out;
}

/** Parts grouped into chunks of about `size` characters (the last may be shorter). */
export function* chunkParts(parts: readonly string[], size = CHUNK_CHARS): Generator<string> {
  let buf: string[] = [];
  let n = 0;
  for (const p of parts) {
    buf.push(p);
    n += p.length;
    if (n >= size) {
      yield buf.join('');
      buf = [];
      n = 0;
    }
  }
  if (buf.length > 0) yield buf.join('');
}

/** About 256 KiB of text per chunk written to the socket. */
export const CHUNK_CHARS = 256 * 1024;

// ---- streaming a result to the socket -------------------------------------------------------------

/**
 * A result whose text is pulled chunk by chunk (from a pool thread, through a MessagePort, or from
 * parts in hand). `next()` asks for the next chunk only when the previous one is written: that is
 * the back-pressure (the producer holds at most a few chunks ahead). `cancel()` when the client
 * went away.
 */
export interface ChunkSource {
  next(): Promise<string | undefined>;
  cancel(): void;
}

/** A source over parts in hand (the inline path without a pool). */
export function partsSource(parts: readonly string[]): ChunkSource {
  const it = chunkParts(parts);
  return {
    next: async () => {
      const r = it.next();
      return r.done ? undefined : r.value;
    },
    cancel: () => void it.return(undefined),
  };
}

/**
 * Where a handler may stream its result: the HTTP server (src/rpc/jsonrpc/geth-server.ts) opens a
 * scope around one single (non-batch) request; a handler inside it that returns `adopt(source)`
 * gets a placeholder RawJson in the envelope, and the server writes the envelope's text before
 * and after the placeholder around the source's chunks. Outside a scope (batches, websocket), a
 * handler answers as before, with the whole text.
 */
export class StreamScope {
  /** A JSON string no result contains (a NUL and a random tag): what the envelope carries. */
  readonly placeholder = `"\\u0000chunked-${Math.random().toString(36).slice(2)}"`;
  source: ChunkSource | undefined;

  adopt(source: ChunkSource): RawJson {
    this.source?.cancel();
    this.source = source;
    return new RawJson(this.placeholder);
  }
}

/** Results under this many characters are answered whole even inside a scope. */
export const STREAM_MIN_CHARS = 1024 * 1024;

// ---- across a MessagePort (a pool thread's result, src/pool/evm-calls.ts) ------------------------

/** Chunks the producer may send before the consumer asks for more. */
const CREDIT = 4;

/** A consumer that asks for nothing more for this long is taken as gone (the producer stops). */
const STALL_MS = 60_000;

/**
 * The producer's end (on the pool thread): sends `parts` in chunks, at most CREDIT ahead of what
 * the consumer took; `null` ends the stream. A consumer that cancels, closes its end or stalls
 * stops it. The job awaits it: an idle Piscina thread sleeps in Atomics.wait and would not see
 * the consumer's requests for more, so the stream runs inside the job.
 */
export function sendParts(port: import('node:worker_threads').MessagePort, parts: readonly string[]): Promise<void> {
  const it = chunkParts(parts);
  let credit = CREDIT;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  return new Promise<void>((resolve) => {
    const stop = () => {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      port.close();
      resolve();
    };
    const arm = () => {
      clearTimeout(timer);
      // A 'more' can still be delivered after the stream stopped (the consumer's close and its
      // last request cross): re-arming then left a 60 s timer holding the thread's event loop.
      if (!stopped) timer = setTimeout(stop, STALL_MS);
    };
    arm();
    const pump = () => {
      while (!stopped && credit > 0) {
        const r = it.next();
        if (r.done) {
          port.postMessage(null);
          stop();
          return;
        }
        credit--;
        port.postMessage(r.value);
      }
    };
    port.on('message', (m: unknown) => {
      if (stopped) return;
      if (m === 'more') {
        credit++;
        arm();
        pump();
      } else stop();
    });
    port.on('close', stop);
    pump();
  });
}

/**
 * The consumer's end (on the RPC thread): each next() takes one chunk and asks for one more.
 * `started` resolves with the first message: the job is streaming its result.
 */
export function portSource(port: import('node:worker_threads').MessagePort): ChunkSource & { started: Promise<void> } {
  const queue: (string | null)[] = [];
  let waiter: ((v: string | null) => void) | undefined;
  let done = false;
  let onStart!: () => void;
  const started = new Promise<void>((r) => (onStart = r));
  const finish = () => {
    if (done) return;
    done = true;
    port.close();
  };
  port.on('message', (m: string | null) => {
    onStart();
    if (waiter !== undefined) {
      const w = waiter;
      waiter = undefined;
      w(m);
    } else queue.push(m);
  });
  port.on('close', () => {
    done = true;
    if (waiter !== undefined) {
      const w = waiter;
      waiter = undefined;
      w(null);
    }
  });
  return {
    started,
    next: async () => {
      let m: string | null;
      if (queue.length > 0) m = queue.shift()!;
      else if (done) m = null;
      else m = await new Promise<string | null>((r) => (waiter = r));
      if (m === null) {
        finish();
        return undefined;
      }
      port.postMessage('more');
      return m;
    },
    cancel: () => {
      if (!done) port.postMessage('cancel');
      finish();
    },
  };
}
