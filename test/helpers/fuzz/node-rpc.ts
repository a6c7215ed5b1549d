/**
 * Node RPC surfaces (port 26657): URI GET, JSON-RPC over HTTP POST, JSON-RPC over websocket. The
 * seed corpus has a valid call of every method of the route table (src/rpc/node/routes.ts and
 * methods/), including the unsafe and websocket-only ones (which answer method-not-found here).
 *
 * What a protocol-shaped answer is (cometbft: rpc/jsonrpc/server/http_json_handler.go,
 * http_uri_handler.go, http_server.go, ws_handler.go; rpc/jsonrpc/types/types.go):
 * - JSON bodies: a JSON-RPC 2.0 response object (or, for a batch, an array of them) with
 *   `jsonrpc: "2.0"`, exactly one of `result`/`error`, an error `{code: int, message: string,
 *   data?: string}`, an `id` that is a string or number (absent only on errors whose request had
 *   none: parse errors, batch-size errors);
 * - Go's own text pages (404 page not found, 400 Bad Request, 431, 503, the websocket upgrade
 *   errors), the HTML endpoint list, and empty 200s (only notifications) and 204s;
 * - status codes 200, 400, 404, 405, 431, 500, 503.
 */
import { header, HttpConn, buildRequest, type HttpAnswer, type HttpOutcome } from './http-conn.js';
import { enabled, jsLeak, headerName, headerValue, mutateBytes, mutateJson, mutatePath, mutateQuery, pickMutator, Raw, toJson, type JsonValue, type Mutator } from './mutators.js';
import { knownBugEnabled } from './known-bugs.js';
import { framingMutators, type HttpCase, type HttpRequestSpec, httpCaseOf, judgeHttpOutcome } from './http-surface.js';
import type { Rng } from './prng.js';
import { answerBudgetMs, isFramingError, printable, type FuzzCase, type Lane, type Surface } from './surface.js';
import type { FuzzTarget } from './target.js';
import { encodeFrame, frameMutation, frameMutationShare, OP_TEXT, plainPlan, RawWs, type FramePlan } from './ws-frames.js';

/** A valid call: its method, JSON-RPC params, and URI query. */
export interface RpcSeed {
  method: string;
  params: { [k: string]: JsonValue } | null;
  uri: string;
}

const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

export function nodeRpcSeeds(t: FuzzTarget): RpcSeed[] {
  const h = t.blockHash;
  const txHash = 'AB'.repeat(32);
  const tx = Buffer.from('0a0212001200', 'hex').toString('base64');
  const q = (s: string) => encodeURIComponent(JSON.stringify(s));
  const seeds: RpcSeed[] = [
    { method: 'health', params: {}, uri: '' },
    { method: 'status', params: {}, uri: '' },
    { method: 'net_info', params: {}, uri: '' },
    { method: 'blockchain', params: { minHeight: '1', maxHeight: '3' }, uri: 'minHeight=1&maxHeight=3' },
    { method: 'genesis', params: {}, uri: '' },
    { method: 'genesis_chunked', params: { chunk: '0' }, uri: 'chunk=0' },
    { method: 'block', params: { height: '1' }, uri: 'height=1' },
    { method: 'block', params: {}, uri: '' },
    { method: 'block_by_hash', params: { hash: b64(h) }, uri: `hash=0x${h}` },
    { method: 'block_results', params: { height: '1' }, uri: 'height=1' },
    { method: 'commit', params: { height: '1' }, uri: 'height=1' },
    { method: 'header', params: { height: '2' }, uri: 'height=2' },
    { method: 'header_by_hash', params: { hash: h }, uri: `hash=0x${h}` },
    { method: 'validators', params: { height: '1', page: '1', per_page: '30' }, uri: 'height=1&page=1&per_page=30' },
    { method: 'consensus_params', params: { height: '1' }, uri: 'height=1' },
    { method: 'tx', params: { hash: b64(txHash), prove: true }, uri: `hash=0x${txHash}&prove=true` },
    {
      method: 'tx_search',
      params: { query: "tx.height>=1 AND message.sender='x'", prove: false, page: '1', per_page: '10', order_by: 'asc' },
      uri: `query=${q("tx.height>=1 AND message.sender='x'")}&prove=false&page=1&per_page=10&order_by=${q('asc')}`,
    },
    {
      method: 'block_search',
      params: { query: 'block.height > 1 AND block.height <= 5', page: '1', per_page: '5', order_by: 'desc' },
      uri: `query=${q('block.height > 1 AND block.height <= 5')}&page=1&per_page=5&order_by=${q('desc')}`,
    },
    { method: 'subscribe', params: { query: "tm.event='NewBlock'" }, uri: `query=${q("tm.event='NewBlock'")}` },
    { method: 'unsubscribe', params: { query: "tm.event='NewBlock'" }, uri: `query=${q("tm.event='NewBlock'")}` },
    { method: 'unsubscribe_all', params: {}, uri: '' },
    { method: 'dump_consensus_state', params: {}, uri: '' },
    { method: 'consensus_state', params: {}, uri: '' },
    { method: 'abci_info', params: {}, uri: '' },
    {
      method: 'abci_query',
      params: { path: '/cosmos.bank.v1beta1.Query/TotalSupply', data: '', height: '0', prove: false },
      uri: `path=${q('/cosmos.bank.v1beta1.Query/TotalSupply')}&data=0x&height=0&prove=false`,
    },
    { method: 'abci_query', params: { path: 'store/bank/key', data: 'AB', height: '0', prove: true }, uri: `path=${q('store/bank/key')}&data=0xAB&prove=true` },
    {
      method: 'broadcast_evidence',
      params: { evidence: { type: 'tendermint/DuplicateVoteEvidence', value: { vote_a: null, vote_b: null, TotalVotingPower: '10', ValidatorPower: '10', Timestamp: '2020-01-01T00:00:00Z' } } },
      uri: `evidence=${encodeURIComponent('{"type":"tendermint/DuplicateVoteEvidence","value":{}}')}`,
    },
    { method: 'broadcast_tx_async', params: { tx }, uri: `tx=0x0a0212001200` },
    { method: 'broadcast_tx_sync', params: { tx }, uri: `tx=0x0a0212001200` },
    { method: 'broadcast_tx_commit', params: { tx }, uri: `tx=0x0a0212001200` },
    { method: 'check_tx', params: { tx }, uri: `tx=0x0a0212001200` },
    { method: 'unconfirmed_txs', params: { limit: '30' }, uri: 'limit=30' },
    { method: 'num_unconfirmed_txs', params: {}, uri: '' },
    { method: 'unsafe_flush_mempool', params: {}, uri: '' },
    { method: 'dial_seeds', params: { seeds: ['id@127.0.0.1:1'] }, uri: `seeds=${encodeURIComponent('["id@127.0.0.1:1"]')}` },
    { method: 'dial_peers', params: { peers: ['id@127.0.0.1:1'], persistent: false, unconditional: false, private: false }, uri: `peers=${encodeURIComponent('["id@127.0.0.1:1"]')}&persistent=false` },
  ];
  return seeds;
}

// ------------------------------------------------------------------------------------------------
// Judging answers

const TEXT_BODIES = new Set(['404 page not found\n', '400 Bad Request', '431 Request Header Fields Too Large', 'too many open connections\n', 'Bad Request\n', 'Method Not Allowed\n']);
const NODE_STATUSES = new Set([200, 204, 400, 404, 405, 431, 500, 503]);

/** Problem with one JSON-RPC response object, or null. */
export function envelopeProblem(v: unknown): string | null {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'response is not an object';
  const o = v as Record<string, unknown>;
  if (o.jsonrpc !== '2.0') return `jsonrpc is ${JSON.stringify(o.jsonrpc)}`;
  const hasResult = 'result' in o;
  const hasError = 'error' in o;
  if (hasResult === hasError) return 'not exactly one of result/error';
  if ('id' in o && typeof o.id !== 'string' && typeof o.id !== 'number') return `id of type ${o.id === null ? 'null' : typeof o.id}`;
  if (hasResult && !('id' in o)) return 'result without id';
  if (hasError) {
    const e = o.error as Record<string, unknown> | null;
    if (e === null || typeof e !== 'object') return 'error is not an object';
    if (!Number.isInteger(e.code)) return `error.code ${JSON.stringify(e.code)}`;
    if (typeof e.message !== 'string') return 'error.message is not a string';
    if ('data' in e && typeof e.data !== 'string') return 'error.data is not a string';
  }
  for (const k of Object.keys(o)) if (!['jsonrpc', 'id', 'result', 'error'].includes(k)) return `unexpected member ${k}`;
  return null;
}

export function judgeNodeRpc(a: HttpAnswer, head: boolean): string | null {
  if (!NODE_STATUSES.has(a.status)) return `HTTP status ${a.status}`;
  const leak = jsLeak(a.body.toString('utf8'));
  if (leak) return `a JavaScript error leaks into the answer (${leak})`;
  const ct = (header(a, 'content-type') ?? '').toLowerCase();
  if (head || a.status === 204) return a.body.length === 0 ? null : 'body on a HEAD/204 answer';
  if (ct.startsWith('application/json')) {
    let v: unknown;
    try {
      v = JSON.parse(a.body.toString('utf8'));
    } catch {
      return 'application/json body does not parse';
    }
    if (Array.isArray(v)) {
      if (v.length === 0) return 'empty batch answer';
      for (const x of v) {
        const p = envelopeProblem(x);
        if (p) return `batch element: ${p}`;
      }
      return a.status === 200 ? null : `batch with status ${a.status}`;
    }
    return envelopeProblem(v);
  }
  if (ct.startsWith('text/plain')) return TEXT_BODIES.has(a.body.toString('utf8')) || isFramingError(a) ? null : `unexpected text body ${printable(a.body, 200)}`;
  if (ct.startsWith('text/html')) return a.body.toString('utf8').startsWith('<html>') ? null : 'html body is not the endpoint list';
  if (a.body.length === 0 && a.status === 200) return null; // only notifications
  return `unexpected content-type ${JSON.stringify(ct)} with status ${a.status}`;
}

// ------------------------------------------------------------------------------------------------
// URI

export function nodeUriSurface(t: FuzzTarget): Surface<HttpCase> {
  const seeds = nodeRpcSeeds(t);
  const methods = httpMethods(['GET', 'GET', 'GET', 'GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);
  const structural: Mutator<HttpRequestSpec>[] = [
    { name: 'uri.query', weight: 8, apply: (rng, r) => ({ ...r, query: mutateQuery(rng, r.query, r.applied) }) },
    { name: 'uri.path', weight: 2, apply: (rng, r) => ({ ...r, path: mutatePath(rng, r.path, r.applied) }) },
    { name: 'uri.method', weight: 2, apply: (rng, r) => ({ ...r, method: rng.pick(methods) }) },
    {
      name: 'uri.formBody',
      weight: 2,
      apply: (rng, r) => ({
        ...r,
        method: 'POST',
        headers: [...r.headers, ['Content-Type', rng.pick(['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=utf-8', 'APPLICATION/X-WWW-FORM-URLENCODED'])]],
        body: Buffer.from(rng.chance(0.5) ? mutateQuery(rng, r.query, r.applied) : r.query),
        query: rng.chance(0.5) ? '' : r.query,
      }),
    },
    {
      name: 'uri.multipart',
      weight: 1,
      apply(rng, r) {
        const boundary = rng.pick(['xYz', 'a'.repeat(70), '', '"q"', '--', 'b'.repeat(5000)]);
        const parts = r.query
          .split('&')
          .filter(Boolean)
          .map((p) => {
            const [k, v] = p.split('=');
            return `--${boundary}\r\nContent-Disposition: form-data; name="${safeDecode(k ?? '')}"\r\n\r\n${safeDecode(v ?? '')}\r\n`;
          });
        let body: Buffer = Buffer.from(`${parts.join('')}--${boundary}--\r\n`);
        if (rng.chance(0.5)) body = mutateBytes(rng, body, r.applied);
        return { ...r, method: rng.pick(['POST', 'PUT', 'GET']), query: '', headers: [...r.headers, ['Content-Type', `multipart/form-data; boundary=${boundary}`]], body };
      },
    },
    { name: 'uri.headers', weight: 2, apply: (rng, r) => ({ ...r, headers: [...r.headers, ...randomHeaders(rng)] }) },
  ];
  return httpSurface('node-uri', t.ports.rpc, seeds.map((s) => s.method + (s.uri ? `?${s.uri}` : '')), (rng) => {
    const s = rng.pick(seeds);
    const r: HttpRequestSpec = { method: 'GET', path: `/${s.method}`, query: s.uri, headers: [['Host', '127.0.0.1']], body: Buffer.alloc(0), applied: [] };
    return { seed: s.method, spec: applyStructural(rng, r, structural) };
  }, judgeNodeRpc);
}

/** HTTP methods to try: the given ones, plus methods uWS does not know when KNOWN_BUGS.unknownMethod is on. */
export function httpMethods(known: string[]): string[] {
  return knownBugEnabled('unknownMethod') ? [...known, 'FUZZ', 'PROPFIND', 'M-SEARCH'] : known;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

export function randomHeaders(rng: Rng): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let n = rng.range(1, 5); n > 0; n--) out.push([headerName(rng), headerValue(rng)]);
  return out;
}

function applyStructural(rng: Rng, r: HttpRequestSpec, list: Mutator<HttpRequestSpec>[]): HttpRequestSpec {
  const on = enabled(list);
  let out = r;
  for (let n = rng.weighted([[6, 1], [3, 2], [1, 3]] as const); n > 0; n--) {
    const m = pickMutator(rng, on);
    out.applied.push(m.name);
    out = m.apply(rng, out);
  }
  return out;
}

/** An HTTP surface from a generator of structured requests and a judge of answers. */
export function httpSurface(name: string, port: number, seedNames: string[], gen: (rng: Rng) => { seed: string; spec: HttpRequestSpec }, judge: (a: HttpAnswer, head: boolean) => string | null): Surface<HttpCase> {
  const framing = framingMutators();
  return {
    name,
    seedNames,
    generate(rng, index) {
      const { seed, spec } = gen(rng);
      return httpCaseOf(rng, index, seed, spec, framing);
    },
    async openLane(): Promise<Lane<HttpCase>> {
      const conn = new HttpConn(port);
      return {
        async run(c) {
          const outs = await conn.send(c.raw, { splits: c.splits, responses: c.responses, heads: c.heads, timeoutMs: c.answerMs });
          // Nothing may follow a HEAD on its connection until KNOWN_BUGS.headKeepAlive is fixed.
          if (c.heads[c.heads.length - 1] && !knownBugEnabled('headKeepAlive')) conn.destroy();
          return judgeHttpOutcome(c, outs, judge);
        },
        close: () => conn.close(),
      };
    },
  };
}

// ------------------------------------------------------------------------------------------------
// JSON-RPC over HTTP

const copyJson = (v: JsonValue): JsonValue => (v instanceof Raw || v === null || typeof v !== 'object' ? v : JSON.parse(JSON.stringify(v)));
const IDS: JsonValue[] = [1, 0, -1, 'abc', '', null, 1.5, new Raw('1e300'), new Raw('18446744073709551616'), new Raw('-9223372036854775809'), true, {}, [], '💥', 'x'.repeat(1000), new Raw('-0'), 9007199254740993];

/** Mutations of the request envelope (id, jsonrpc, method, params form) on top of the generic JSON ones. */
function envelopeMutators(t: FuzzTarget, seeds: RpcSeed[]): Mutator<{ [k: string]: JsonValue }>[] {
  return [
    { name: 'rpc.id', weight: 3, apply: (rng, o) => ({ ...o, id: copyJson(rng.pick(IDS)) }) },
    {
      name: 'rpc.noId',
      weight: 1,
      apply: (_rng, o) => {
        const { id: _id, ...rest } = o;
        return rest;
      },
    },
    { name: 'rpc.version', weight: 1, apply: (rng, o) => ({ ...o, jsonrpc: rng.pick(['1.0', '', 2, null, '2.0 ', '2.00'] as JsonValue[]) }) },
    { name: 'rpc.method', weight: 2, apply: (rng, o) => ({ ...o, method: rng.pick([...seeds.map((s) => s.method), '', 'Status', 'status ', 'rpc.foo', 1, null, 'websocket', 'constructor', '__proto__', 'a'.repeat(500)] as JsonValue[]) }) },
    {
      name: 'rpc.positional',
      weight: 2,
      apply: (rng, o) => ({ ...o, params: o.params && typeof o.params === 'object' && !Array.isArray(o.params) ? Object.values(o.params as object).filter(() => rng.chance(0.8)) : [] }),
    },
    { name: 'rpc.params', weight: 1, apply: (rng, o) => ({ ...o, params: JSON.parse(JSON.stringify(rng.pick([null, [], {}, 'x', 1, [null], [[]]]))) }) },
    {
      name: 'rpc.noParams',
      weight: 1,
      apply: (_rng, o) => {
        const { params: _p, ...rest } = o;
        return rest;
      },
    },
    { name: 'rpc.address', weight: 0.5, apply: (rng, o) => ({ ...o, params: { ...(o.params as object), address: rng.pick(t.addresses) } }) },
  ];
}

interface JsonRpcSpec {
  /** Requests (one, or a batch). */
  body: JsonValue;
  applied: string[];
}

/** Builds a (possibly batched) mutated JSON-RPC request body from the seeds. */
export function jsonRpcBody(rng: Rng, t: FuzzTarget, seeds: RpcSeed[], allowBatch: boolean): { seed: string; body: Buffer; applied: string[]; calls: number } {
  const env = enabled(envelopeMutators(t, seeds));
  const one = (): { seed: string; v: JsonValue } => {
    const s = rng.pick(seeds);
    let o: { [k: string]: JsonValue } = { jsonrpc: '2.0', id: rng.int(1_000_000), method: s.method };
    if (s.params !== null) o.params = s.params;
    return { seed: s.method, v: o };
  };
  const spec: JsonRpcSpec = { body: null, applied: [] };
  const first = one();
  let v: JsonValue = first.v;
  // Envelope mutation, then generic JSON mutation, each with some probability.
  if (rng.chance(0.45)) {
    const m = pickMutator(rng, env);
    spec.applied.push(m.name);
    v = m.apply(rng, v as { [k: string]: JsonValue });
  }
  if (rng.chance(0.6)) v = mutateJson(rng, v, spec.applied);
  if (allowBatch && rng.chance(0.15)) {
    const kind = rng.pick(['wrap', 'many', 'empty', 'nested', 'mixed', 'tooMany']);
    spec.applied.push(`batch.${kind}`);
    if (kind === 'wrap') v = [v];
    else if (kind === 'many') v = [v, ...Array.from({ length: rng.range(1, 9) }, () => one().v)];
    else if (kind === 'empty') v = [];
    else if (kind === 'nested') v = [[v]];
    else if (kind === 'mixed') v = [v, 1, null, 'x', [], one().v];
    else v = Array.from({ length: rng.range(11, 200) }, () => one().v);
  }
  let body: Buffer = Buffer.from(toJson(v), "utf8");
  if (rng.chance(0.15)) body = mutateBytes(rng, body, spec.applied);
  return { seed: first.seed, body, applied: spec.applied, calls: Array.isArray(v) ? v.length : 1 };
}

export function nodeJsonRpcSurface(t: FuzzTarget): Surface<HttpCase> {
  const seeds = nodeRpcSeeds(t);
  return httpSurface('node-jsonrpc', t.ports.rpc, seeds.map((s) => s.method), (rng) => {
    const { seed, body, applied, calls } = jsonRpcBody(rng, t, seeds, true);
    const headers: Array<[string, string]> = [['Host', '127.0.0.1']];
    if (rng.chance(0.7)) headers.push(['Content-Type', rng.pick(['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1'])]);
    const spec: HttpRequestSpec = { method: 'POST', path: '/', query: '', headers, body, applied, calls };
    if (rng.chance(0.1)) {
      spec.method = rng.pick(httpMethods(['GET', 'PUT', 'HEAD', 'DELETE', 'OPTIONS']));
      applied.push('rpc.httpMethod');
    }
    if (rng.chance(0.05)) spec.path = mutatePath(rng, '/', applied);
    if (rng.chance(0.05)) spec.query = mutateQuery(rng, '', applied);
    if (rng.chance(0.1)) {
      headers.push(...randomHeaders(rng));
      applied.push('rpc.headers');
    }
    return { seed, spec };
  }, judgeNodeRpc);
}

// ------------------------------------------------------------------------------------------------
// JSON-RPC over websocket

export interface WsCase extends FuzzCase {
  readonly messages: Array<{ data: Buffer; binary: boolean }>;
  /**
   * A text message that is not UTF-8, or a message past max_body_bytes: RFC 6455 §8.1 and §10.4
   * let the server fail the connection (drop TCP, no close frame) for these.
   */
  readonly violation: boolean;
  /** The frames that carry the messages (ws-frames.ts): one plain frame each, or a frame mutation. */
  readonly frames: FramePlan;
  /** How long the sentinel's answer may take (answerBudgetMs of the calls in all messages). */
  readonly answerMs: number;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
function isUtf8(b: Buffer): boolean {
  try {
    UTF8.decode(b);
    return true;
  } catch {
    return false;
  }
}
/** config.toml [rpc] max_body_bytes default: the websocket read limit. */
const WS_MAX_MESSAGE = 1_000_000;

const SENTINEL = 'fuzz-sentinel';
/** A masking key per sentinel (any key will do; a fresh one each time, without a crypto call). */
const sentinelMask = (seq: number) => Buffer.from([0x5a ^ (seq & 0xff), 0xa5 ^ ((seq >>> 8) & 0xff), 0x3c, 0xc3 ^ ((seq >>> 16) & 0xff)]);
/** Close codes of a deliberate close: normal, going away, protocol error, bad data, too big, policy. */
const CLEAN_CLOSE = new Set([1000, 1001, 1002, 1003, 1007, 1008, 1009, 1011]);

export function nodeWsSurface(t: FuzzTarget): Surface<WsCase> {
  const seeds = nodeRpcSeeds(t);
  return jsonRpcWsSurface({
    name: 'node-ws',
    url: `ws://127.0.0.1:${t.ports.rpc}/websocket`,
    seedNames: seeds.map((s) => s.method),
    message: (rng) => jsonRpcBody(rng, t, seeds, true),
    maxMessage: WS_MAX_MESSAGE,
    sentinelMethod: 'health',
    judge: envelopeProblem,
  });
}

export interface JsonRpcWsSurfaceOptions {
  name: string;
  url: string;
  seedNames: string[];
  /** One (mutated) message: its seed, its bytes and the mutators applied. */
  message(rng: Rng): { seed: string; body: Buffer; applied: string[]; calls: number };
  /** The server's read limit: a longer message may fail the connection (RFC 6455 §10.4). */
  maxMessage: number;
  /** A method that always answers: its answer marks the end of a case. */
  sentinelMethod: string;
  /** Problem with one message from the server (an answer or a notification), or null. */
  judge(v: unknown): string | null;
}

/**
 * A JSON-RPC-over-websocket surface: each case sends 1–3 mutated messages, then a sentinel call,
 * on one connection per lane (a raw socket with frames written by ws-frames.ts; reopened after a
 * close). Most cases send one plain masked frame per message, as any client does; a seeded share
 * (FUZZ_WS_FRAMES, default 0.2) sends them with a frame mutation (fragments with pings and pongs between
 * them, reserved bits, unknown opcodes, bad close frames, …). Every message up to the sentinel's
 * answer must be protocol-shaped; the sentinel must be answered, or, after a frame the RFC says
 * fails the connection (a `close` plan), the connection must be closed (any way), and a close
 * otherwise must be a clean one (or follow a message the server may fail the connection for).
 */
export function jsonRpcWsSurface(o: JsonRpcWsSurfaceOptions): Surface<WsCase> {
  const url = new URL(o.url);
  const port = Number(url.port);
  const path = url.pathname || '/';
  const share = frameMutationShare();
  return {
    name: o.name,
    seedNames: o.seedNames,
    generate(rng, index) {
      const messages: WsCase['messages'] = [];
      const mutations: string[] = [];
      let seed = '';
      let calls = 0;
      for (let n = rng.weighted([[8, 1], [2, 2], [1, 3]] as const); n > 0; n--) {
        const m = o.message(rng);
        seed ||= m.seed;
        calls += m.calls;
        mutations.push(...m.applied);
        const binary = rng.chance(0.05);
        if (binary) mutations.push('ws.binary');
        messages.push({ data: m.body, binary });
      }
      const frames = rng.chance(share) ? frameMutation(rng, messages) : plainPlan(rng, messages);
      if (frames.kind !== 'plain') mutations.push(frames.kind);
      return {
        index,
        seed,
        mutations,
        messages,
        frames,
        violation: messages.some((m) => m.data.length > o.maxMessage || (!m.binary && !isUtf8(m.data))),
        answerMs: answerBudgetMs(calls + 1),
        describe: () => {
          const text = messages.map((m) => (m.binary ? 'binary ' : '') + printable(m.data, 1000)).join(' | ');
          if (frames.kind === 'plain') return text;
          const wire = frames.writes.map((w) => (w.length > 300 ? `${w.subarray(0, 300).toString('hex')}…(+${w.length - 300} B)` : w.toString('hex'))).join(' / ');
          return `${text} || ${frames.kind} (${frames.writes.length} writes${frames.pace ? ', paced' : ''}): ${wire}`;
        },
      };
    },
    async openLane(): Promise<Lane<WsCase>> {
      let ws: RawWs | null = null;
      /** The next connection, opened as soon as the server closed the last one (its upgrade overlaps the judging). */
      let next: Promise<RawWs> | null = null;
      const reopen = () => {
        const p = RawWs.connect(port, path);
        p.catch(() => {}); // awaited (and its error reported) by the next case
        next = p;
      };
      let seq = 0;
      let wake: (() => void) | null = null;
      const waitEvent = (ms: number) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            wake = null;
            resolve();
          }, ms);
          wake = () => {
            clearTimeout(timer);
            wake = null;
            resolve();
          };
        });
      return {
        async run(c) {
          if (!ws || ws.closed) {
            const p = next ?? RawWs.connect(port, path);
            next = null;
            ws = await p;
            ws.onEvent = () => wake?.();
          }
          const conn = ws;
          const plan = c.frames;
          const raw = plan.kind !== 'plain';
          const tag = (outcome: string) => (raw ? `${plan.kind} ${outcome}` : outcome);
          // Messages still queued (late answers to the last case) are judged with this one; pongs are per case.
          conn.pongs.length = 0;
          if (plan.kind === 'frame.close' || plan.kind === 'frame.badClose' || plan.kind === 'frame.bigControl') conn.markCloseSent();
          const sentinel = `${SENTINEL}-${++seq}`;
          const sentinelFrame = encodeFrame({ opcode: OP_TEXT, payload: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: sentinel, method: o.sentinelMethod })), mask: sentinelMask(seq) });
          if (plan.joinSentinel) {
            const writes = [...plan.writes];
            writes[writes.length - 1] = Buffer.concat([writes[writes.length - 1]!, sentinelFrame]);
            await conn.writeAll(writes, plan.pace);
          } else {
            await conn.writeAll(plan.writes, plan.pace);
            void conn.write(sentinelFrame);
          }
          const deadline = Date.now() + c.answerMs;
          for (;;) {
            if (conn.serverViolation !== null) {
              ws = null;
              return { problem: `the server sent a frame RFC 6455 forbids: ${conn.serverViolation}`, tag: tag('server violation') };
            }
            while (conn.messages.length > 0) {
              const text = conn.messages.shift()!.data.toString('utf8');
              let v: unknown;
              try {
                v = JSON.parse(text);
              } catch {
                return { problem: `websocket message is not JSON: ${printable(text, 300)}`, tag: tag('bad') };
              }
              const leak = jsLeak(text);
              if (leak) return { problem: `a JavaScript error leaks into a websocket answer (${leak}): ${printable(text, 300)}`, tag: tag('leak') };
              const p = o.judge(v);
              if (p) return { problem: `websocket message: ${p}: ${printable(text, 300)}`, tag: tag('bad') };
              if ((v as { id?: unknown }).id === sentinel) {
                if (plan.expect === 'close') return { problem: `the server went on after ${plan.kind}, a frame RFC 6455 says fails the connection (it answered the next call)`, tag: tag('answered') };
                // RFC 6455 §5.5.2: a ping is answered by a pong with its payload (the last one may stand for earlier ones, §5.5.3).
                if (plan.lastPing !== null && !conn.pongs.some((p) => p.equals(plan.lastPing!))) return { problem: `no pong to our ping (${plan.lastPing.toString('hex')}) before the answer`, tag: tag('no pong') };
                return { problem: null, tag: tag('answered') };
              }
            }
            if (conn.closed) {
              ws = null;
              reopen();
              const code = conn.closeCode!;
              if (plan.expect === 'close') return { problem: null, tag: tag(`close ${code}`) };
              return CLEAN_CLOSE.has(code) || c.violation ? { problem: null, tag: tag(`close ${code}`) } : { problem: `websocket closed with code ${code}${code === 1006 ? ' (no close frame)' : ''}`, tag: tag(`close ${code}`) };
            }
            if (Date.now() > deadline) return { problem: `no answer to the sentinel and no close within ${c.answerMs / 1000} s${raw ? ` after ${plan.kind}` : ''}`, tag: tag('timeout') };
            await waitEvent(Math.max(1, deadline - Date.now()));
          }
        },
        close() {
          ws?.destroy();
          ws = null;
          void next?.then((w) => w.destroy(), () => {});
          next = null;
        },
      };
    },
  };
}
