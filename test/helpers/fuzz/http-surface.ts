/**
 * The HTTP/1.1 side shared by the node RPC (URI, JSON-RPC) and REST surfaces: a structured request
 * (method, path, query, headers, body), framing variations applied when it is turned into bytes,
 * and the rule that every request gets an answer (a close or a hang without one is a failure).
 */
import { buildRequest, header, sendsCloseOption, type HttpAnswer, type HttpOutcome } from './http-conn.js';
import { knownBugEnabled } from './known-bugs.js';
import { enabled, pickMutator, type Mutator } from './mutators.js';
import type { Rng } from './prng.js';
import { answerBudgetMs, printable, type FuzzCase } from './surface.js';

export interface HttpRequestSpec {
  method: string;
  path: string;
  query: string;
  headers: Array<[string, string]>;
  body: Buffer;
  /** Mutators applied so far. */
  applied: string[];
  /** JSON-RPC calls in the body (a batch's length), for the answer deadline; default 1. */
  calls?: number;
}

export interface HttpCase extends FuzzCase {
  readonly raw: Buffer;
  /** Write boundaries (several TCP writes). */
  readonly splits: number[];
  /** Responses expected (pipelined copies). */
  readonly responses: number;
  /** Per response: the request was a HEAD (no body follows). */
  readonly heads: boolean[];
  /** How long the answers may take (answerBudgetMs of the calls in all copies). */
  readonly answerMs: number;
}

/** How a spec becomes bytes; framing mutators change this. */
export interface Framing {
  spec: HttpRequestSpec;
  version: string;
  eol: string;
  target: string;
  /** Content-Length / Transfer-Encoding written by the mutator (no automatic Content-Length). */
  noLength: boolean;
  body: Buffer;
  splits: number[];
  copies: number;
}

export function framingMutators(): Mutator<Framing>[] {
  return [
    {
      name: 'frame.split',
      weight: 3,
      apply(rng, f) {
        const len = 200 + f.body.length;
        return { ...f, splits: Array.from({ length: rng.range(1, 5) }, () => rng.int(len)) };
      },
    },
    {
      name: 'frame.headerCase',
      weight: 2,
      apply(rng, f) {
        const flip = (s: string) => [...s].map((ch) => (rng.chance(0.5) ? ch.toUpperCase() : ch.toLowerCase())).join('');
        return { ...f, spec: { ...f.spec, headers: f.spec.headers.map(([k, v]) => [flip(k), v] as [string, string]) } };
      },
    },
    {
      name: 'frame.ows',
      weight: 2,
      apply: (rng, f) => ({ ...f, spec: { ...f.spec, headers: f.spec.headers.map(([k, v]) => [k, `${rng.pick(['', ' ', '\t', '  '])}${v}${rng.pick(['', ' ', '\t'])}`] as [string, string]) } }),
    },
    {
      name: 'frame.pipeline',
      weight: 2,
      // A HEAD followed by anything on the connection is KNOWN_BUGS.headKeepAlive.
      apply: (rng, f) => (f.spec.method === 'HEAD' && !knownBugEnabled('headKeepAlive') ? f : { ...f, copies: rng.range(2, 4) }),
    },
    {
      name: 'frame.largeHead',
      weight: 1,
      knownBug: 'largeHead',
      apply: (rng, f) => ({ ...f, spec: { ...f.spec, headers: [...f.spec.headers, ['X-Large', 'a'.repeat(rng.range(130_000, 1_000_000))]] } }),
    },
    { name: 'frame.connectionClose', weight: 1, apply: (_rng, f) => ({ ...f, spec: { ...f.spec, headers: [...f.spec.headers, ['Connection', 'close']] } }) },
    { name: 'frame.keepAlive', weight: 0.5, apply: (_rng, f) => ({ ...f, spec: { ...f.spec, headers: [...f.spec.headers, ['Connection', 'keep-alive']] } }) },
    {
      name: 'frame.negativeContentLength',
      weight: 1,
      knownBug: 'negativeContentLength',
      apply: (rng, f) => ({ ...f, noLength: true, spec: { ...f.spec, headers: [...f.spec.headers, ['Content-Length', rng.pick(['-1', '-5', '-9223372036854775808'])]] } }),
    },
    {
      name: 'frame.badContentLength',
      weight: 1,
      knownBug: 'badContentLength',
      apply(rng, f) {
        const n = f.body.length;
        const v = rng.pick(['abc', `${n}abc`, `0x${n.toString(16)}`, `${n}.0`, `+${n}`, ` ${n}`, `${n}, ${n}`, '1e3', '']);
        const headers: Array<[string, string]> = [...f.spec.headers, ['Content-Length', v]];
        if (rng.chance(0.3)) headers.push(['Content-Length', String(n + 1)]);
        return { ...f, noLength: true, spec: { ...f.spec, headers } };
      },
    },
    {
      name: 'frame.chunked',
      weight: 1,
      knownBug: 'chunkedBody',
      apply(rng, f) {
        const parts: Buffer[] = [];
        for (let i = 0; i < f.body.length; ) {
          const n = Math.min(f.body.length - i, rng.range(1, 4096));
          parts.push(Buffer.from(`${n.toString(16)}\r\n`), f.body.subarray(i, i + n), Buffer.from('\r\n'));
          i += n;
        }
        parts.push(Buffer.from('0\r\n\r\n'));
        return { ...f, noLength: true, body: Buffer.concat(parts), spec: { ...f.spec, headers: [...f.spec.headers, ['Transfer-Encoding', 'chunked']] } };
      },
    },
    {
      name: 'frame.requestLine',
      weight: 1,
      knownBug: 'requestLineFraming',
      apply(rng, f) {
        const kind = rng.int(3);
        if (kind === 0) return { ...f, version: 'HTTP/1.0' };
        if (kind === 1) return { ...f, eol: '\n' };
        return { ...f, target: `http://127.0.0.1${f.target}` };
      },
    },
    { name: 'frame.pipelineFlood', weight: 1, knownBug: 'pipelineFlood', apply: (rng, f) => ({ ...f, copies: rng.range(50, 500) }) },
  ];
}

/** The largest request head uWS 20.30 takes in pieces (its fallback buffer is 4 KiB). */
const SPLIT_HEAD_LIMIT = 4000;

export function httpCaseOf(rng: Rng, index: number, seed: string, spec: HttpRequestSpec, framing: Mutator<Framing>[]): HttpCase {
  const target = spec.path + (spec.query !== '' ? `?${spec.query}` : '');
  let f: Framing = { spec, version: 'HTTP/1.1', eol: '\r\n', target, noLength: false, body: spec.body, splits: [], copies: 1 };
  let framed = '';
  if (rng.chance(0.25)) {
    const on = enabled(framing);
    const m = pickMutator(rng, on);
    spec.applied.push(m.name);
    framed = m.name;
    f = m.apply(rng, f);
  }
  const one = buildRequest({ method: f.spec.method, target: f.target, version: f.version, headers: f.spec.headers, body: f.body, eol: f.eol, noLength: f.noLength });
  // Pipelined requests past ~128 KiB in all are KNOWN_BUGS.largeHead (uWS resets the connection).
  if (framed === 'frame.pipeline' && one.length * f.copies > 64 * 1024 && !knownBugEnabled('largeHead')) f = { ...f, copies: 1 };
  const raw = f.copies > 1 ? Buffer.concat(Array<Buffer>(f.copies).fill(one)) : one;
  const head = f.spec.method === 'HEAD';
  // A request head over ~4 KiB that arrives in more than one read is KNOWN_BUGS.splitLargeHead
  // (uWS closes the connection unanswered): such a head goes out in one write.
  const headEnd = one.indexOf(f.eol + f.eol);
  if (f.splits.length > 0 && (headEnd < 0 ? one.length : headEnd) > SPLIT_HEAD_LIMIT && !knownBugEnabled('splitLargeHead')) f = { ...f, splits: [] };
  return {
    index,
    seed,
    mutations: f.spec.applied,
    raw,
    splits: f.splits,
    responses: f.copies,
    heads: Array<boolean>(f.copies).fill(head),
    answerMs: answerBudgetMs((spec.calls ?? 1) * f.copies),
    describe: () => printable(f.copies > 1 ? one : raw) + (f.copies > 1 ? ` ×${f.copies}` : ''),
  };
}

export function judgeHttpOutcome(c: HttpCase, outs: HttpOutcome[], judge: (a: HttpAnswer, head: boolean) => string | null): { problem: string | null; tag: string } {
  let closedBefore = false;
  for (let i = 0; i < outs.length; i++) {
    const o = outs[i]!;
    const which = outs.length > 1 ? ` (response ${i + 1} of ${outs.length})` : '';
    // Pipelined copies after an answer that closed the connection are never read by the server.
    if (closedBefore && o.kind !== 'answer') continue;
    if (o.kind === 'answer' && o.answer.closed) closedBefore = true;
    if (o.kind === 'closed' && c.raw.length > 1_000_000 && o.partial === '') continue;
    // A pipeline the server closes between answers (none half-written) is HTTP/1.1 as RFC 9112
    // §9.3.2 has it: the client retries what was not answered. uWS 20.30 does this whenever an
    // answer is still pending when the next pipelined request is parsed (an async method, or one
    // the loop slice deferred): docs/ARCHITECTURE.md "RPC under load". A single request closed
    // unanswered, or a partial answer, is still a failure.
    if (o.kind === 'closed' && outs.length > 1 && o.partial === '') {
      closedBefore = true;
      continue;
    }
    if (o.kind === 'closed') return { problem: `connection closed without an answer${which}; partial ${printable(o.partial, 300)}${o.conn ? ` (${o.conn})` : ''}`, tag: 'closed' };
    if (o.kind === 'timeout') return { problem: `no answer within the timeout${which}; partial ${printable(o.partial, 300)}`, tag: 'timeout' };
    // A body past the limit is answered (400/413) and the connection closed while the client is
    // still writing: the client may see the reset before the answer.
    if (o.kind === 'error' && c.raw.length > 1_000_000 && /EPIPE|ECONNRESET/.test(o.message)) continue;
    if (o.kind === 'error') return { problem: `socket error ${o.message}${which}${o.conn ? ` (${o.conn})` : ''}`, tag: 'error' };
    // RFC 9112 §9.6: a server that closes because the request said `close` SHOULD say so in its
    // answer, and net/http (CometBFT, the SDK's gateway) always does. uWS 20.30 alone closes such
    // connections silently, and a client that reused one met a closed socket (src/rpc/server/uws.ts
    // CONN_CLOSED_BY_UWS).
    if (sendsCloseOption(c.raw) && (header(o.answer, 'connection') ?? '').toLowerCase() !== 'close') {
      return { problem: `the request asked to close the connection, the answer does not say \`Connection: close\`${which}: ${o.answer.statusLine}`, tag: String(o.answer.status) };
    }
    const p = judge(o.answer, c.heads[i] ?? false);
    if (p) return { problem: `${p}${which}: ${o.answer.statusLine} ${printable(o.answer.body, 500)}`, tag: String(o.answer.status) };
  }
  const last = outs[outs.length - 1];
  return { problem: null, tag: last && last.kind === 'answer' ? String(last.answer.status) : '?' };
}
