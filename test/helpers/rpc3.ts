/**
 * Helpers shared by the node RPC method tests (test/unit/rpc-*.test.ts): the fixtures, a real
 * in-process node, txs to grow its chain, and calls over the three transports (URI, JSON-RPC POST,
 * websocket).
 *
 * Two families use them. The rpc-<chain method> tests use `viaUri` (URI args as a record),
 * `call3`, `ok3`, `err3` and `shapeDiff`. The rpc-<method> tests of the node/mempool/ABCI group
 * take the URI query as a string and check the envelopes differently: they import `nodeViaUri`,
 * `nodeOk3` and `nodeErr3` under the names `viaUri`, `ok3` and `err3`, with `shape`,
 * `sha256Hex` and `utf8`.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { RoundStep } from '../../src/consensus/types.js';
import { startTestNode, waitHeight, type TestNode } from './inproc.js';
import { WsClient } from './ws.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Real CometBFT v0.38 kvstore responses, brand words renamed (test/fixtures/cometbft-v038-kvstore.json). */
export const FIXTURES = JSON.parse(
  fs.readFileSync(path.join(here, '../../../test/fixtures/cometbft-v038-kvstore.json'), 'utf8'),
) as Record<string, any>;
export const CACHED = 'public, max-age=86400';
export const hexOf = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();
export const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A real in-process node whose chain stands still between calls: with create_empty_blocks off a
 * block is made only for txs (and the proof block after each app-hash change). The JSON tx
 * decoder lets the tests send real bank transfers between two funded dev accounts.
 */
export function startNode(): Promise<TestNode> {
  return startTestNode({ timeoutCommit: '100ms', txDecoder: 'json', flags: { 'consensus.create_empty_blocks': false } });
}
export const [ALICE, BOB] = devAccounts();
let sent = 0;
/** A bank transfer as the JSON tx decoder reads it; the amount makes each one unique. */
export function transferTx(): Uint8Array {
  sent++;
  const msg = { '@type': '/chain.bank.v1beta1.MsgSend', from_address: ALICE!.bech32, to_address: BOB!.bech32, amount: [{ denom: 'achain', amount: String(sent) }] };
  return new TextEncoder().encode(JSON.stringify({ body: { messages: [msg], memo: '' }, auth_info: { fee: { amount: [], gas_limit: '200000' } } }));
}
/** Puts one tx into the mempool (the broadcast methods are not what these files test). */
export async function sendTx(tn: TestNode): Promise<Uint8Array> {
  const tx = transferTx();
  const r = await tn.ctx.mempool.checkTx(tx);
  if (r.response.code !== 0) throw new Error(`CheckTx failed: ${r.response.log}`);
  return tx;
}
/**
 * Waits until the chain stands still and returns the store height. Standing still is a state,
 * not a quiet spell: consensus waits for txs at the next height (round 0, NewRound), the mempool
 * is empty, and the last block needs no proof block after it (its header's app hash is the
 * state's). "No block for 500 ms" was wrong on a loaded machine, where the proof block after a
 * tx block can take longer than that to come and then grew the chain under a test's feet.
 */
export async function settle(tn: TestNode): Promise<bigint> {
  for (;;) {
    const h = tn.ctx.storage.blocks.height();
    const cs = tn.ctx.consensus;
    const state = tn.ctx.storage.state.load();
    const header = h > 0n ? tn.ctx.storage.blocks.loadBlock(h)?.header : undefined;
    const still =
      h > 0n &&
      cs.height === h + 1n &&
      cs.getRoundState().round === 0 &&
      cs.step === RoundStep.NewRound &&
      tn.ctx.mempool.size() === 0 &&
      state !== null &&
      state.lastBlockHeight === h &&
      header !== undefined &&
      Buffer.from(header.appHash).equals(Buffer.from(state.appHash));
    if (still) return h;
    await sleep(20);
  }
}
/** Sends txs one at a time until the store reaches `height`, then lets the chain settle. */
export async function growTo(tn: TestNode, height: bigint): Promise<bigint> {
  await waitHeight(tn, 1n);
  while (tn.ctx.storage.blocks.height() < height) {
    const h = tn.ctx.storage.blocks.height();
    await sendTx(tn);
    await waitHeight(tn, h + 1n);
  }
  return settle(tn);
}

export interface HttpAnswer {
  status: number;
  cache: string | null;
  body: any;
}
/** URI form: GET /<method>?name=value (values as CometBFT's URI parser reads them). */
export async function viaUri(tn: TestNode, method: string, args: Record<string, string>): Promise<HttpAnswer> {
  const qs = new URLSearchParams(args).toString();
  const r = await fetch(`${tn.base}/${method}${qs ? `?${qs}` : ''}`);
  return { status: r.status, cache: r.headers.get('cache-control'), body: await r.json() };
}
/** JSON-RPC over HTTP POST, id 1. */
export async function viaPost(tn: TestNode, method: string, params: unknown): Promise<HttpAnswer> {
  const r = await fetch(`${tn.base}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: r.status, cache: r.headers.get('cache-control'), body: await r.json() };
}
/** JSON-RPC over the websocket, id 2. */
export async function viaWs(tn: TestNode, method: string, params: unknown): Promise<any> {
  const { ws } = await WsClient.connect(tn.rpcPort);
  if (!ws) throw new Error('websocket not upgraded');
  try {
    ws.call({ jsonrpc: '2.0', id: 2, method, params });
    return await ws.nextJson();
  } finally {
    ws.close();
  }
}
/** One call over the three transports: URI (`uri` args) and JSON-RPC POST + websocket (`params`). */
export async function call3(tn: TestNode, method: string, uri: Record<string, string>, params: unknown) {
  const [u, p, w] = await Promise.all([viaUri(tn, method, uri), viaPost(tn, method, params), viaWs(tn, method, params)]);
  return { uri: u, post: p, ws: w };
}
/**
 * The successful result, the same over the three transports, with CometBFT's Cache-Control
 * (routes.go Cacheable) on both HTTP forms when `cacheable`.
 */
export async function ok3(t: Test, tn: TestNode, method: string, uri: Record<string, string>, params: unknown, cacheable: boolean): Promise<any> {
  const r = await call3(tn, method, uri, params);
  const what = `${method} ${JSON.stringify(uri)}`;
  t.same([r.uri.status, r.uri.body.id, r.uri.body.error], [200, -1, undefined], `${what}: URI answers 200, id -1`);
  t.same([r.post.status, r.post.body.id, r.post.body.error], [200, 1, undefined], `${what}: JSON-RPC answers 200, id 1`);
  t.same([r.ws.id, r.ws.error], [2, undefined], `${what}: websocket answers id 2`);
  t.same(r.post.body.result, r.uri.body.result, `${what}: JSON-RPC result = URI result`);
  t.same(r.ws.result, r.uri.body.result, `${what}: websocket result = URI result`);
  t.equal(r.uri.cache, cacheable ? CACHED : null, `${what}: URI Cache-Control`);
  t.equal(r.post.cache, cacheable ? CACHED : null, `${what}: JSON-RPC Cache-Control`);
  return r.uri.body.result;
}
/**
 * The method's own error over the three transports: -32603 `Internal error` with the text in
 * `data`; HTTP 500 for URI, 200 for JSON-RPC (rpc/jsonrpc/server/http_uri_handler.go,
 * http_json_handler.go).
 */
export async function err3(t: Test, tn: TestNode, method: string, uri: Record<string, string>, params: unknown, data: string | RegExp): Promise<void> {
  const r = await call3(tn, method, uri, params);
  const what = `${method} ${JSON.stringify(uri)}`;
  t.equal(r.uri.status, 500, `${what}: URI answers 500`);
  t.equal(r.post.status, 200, `${what}: JSON-RPC answers 200`);
  t.equal(r.uri.cache, null, `${what}: a URI error is not cacheable`);
  for (const [via, body, id] of [['URI', r.uri.body, -1], ['JSON-RPC', r.post.body, 1], ['websocket', r.ws, 2]] as const) {
    t.same([body.id, body.error?.code, body.error?.message, body.result], [id, -32603, 'Internal error', undefined], `${what}: ${via} -32603`);
    if (typeof data === 'string') t.equal(body.error?.data, data, `${what}: ${via} error text`);
    else t.match(body.error?.data, data, `${what}: ${via} error text`);
  }
}
/**
 * Where a value's JSON shape differs from a fixture's: missing or extra keys and different kinds,
 * checking every array element against the fixture's first. `mayOmit` lists keys omitempty may
 * drop here (e.g. header version.app, 0 on this chain), `mayFill` places where the fixture has
 * null and this chain a value, `opaque` subtrees whose content is the chain's own.
 */
export function shapeDiff(actual: unknown, fixture: unknown, opts: { mayOmit?: string[]; mayFill?: string[]; opaque?: string[] } = {}): string[] {
  const out: string[] = [];
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  const walk = (a: any, f: any, at: string) => {
    if (opts.opaque?.includes(at)) return;
    if (f === null && a !== null) {
      if (!opts.mayFill?.includes(at)) out.push(`${at}: ${kind(a)} where the fixture has null`);
      return;
    }
    if (kind(a) !== kind(f)) {
      out.push(`${at}: ${kind(a)} where the fixture has ${kind(f)}`);
      return;
    }
    if (Array.isArray(f)) {
      if (f.length > 0) (a as unknown[]).forEach((x) => walk(x, f[0], `${at}[]`));
    } else if (kind(f) === 'object') {
      for (const k of Object.keys(f)) {
        if (k in a) walk(a[k], f[k], `${at}.${k}`);
        else if (!opts.mayOmit?.includes(`${at}.${k}`)) out.push(`${at}.${k}: missing`);
      }
      for (const k of Object.keys(a)) if (!(k in f)) out.push(`${at}.${k}: not in the fixture`);
    }
  };
  walk(actual, fixture, '$');
  return out;
}

// ------------------------------------------------------------------------------------------------
// The node/mempool/ABCI group.

/** The same envelope as `HttpAnswer` (the node group's name for it). */
export type Answer = HttpAnswer;
/** URI form: GET /<method>?<query> (`query` already in CometBFT's URI argument syntax). */
export async function nodeViaUri(tn: TestNode, method: string, query = ''): Promise<HttpAnswer> {
  const r = await fetch(`${tn.base}/${method}${query ? `?${query}` : ''}`);
  return { status: r.status, cache: r.headers.get('cache-control'), body: await r.json() };
}
/** The three envelopes of a successful call, checked; returns the three results. */
export async function nodeOk3(t: Test, tn: TestNode, method: string, query: string, params: unknown): Promise<{ uri: any; post: any; ws: any; cache: (string | null)[] }> {
  const [u, p, w] = await Promise.all([nodeViaUri(tn, method, query), viaPost(tn, method, params), viaWs(tn, method, params)]);
  t.same([u.status, u.body.jsonrpc, u.body.id, u.body.error], [200, '2.0', -1, undefined], `${method}: URI 200, id -1, no error`);
  t.same([p.status, p.body.jsonrpc, p.body.id, p.body.error], [200, '2.0', 1, undefined], `${method}: JSON-RPC 200, id 1, no error`);
  t.same([w.jsonrpc, w.id, w.error], ['2.0', 2, undefined], `${method}: websocket id 2, no error`);
  return { uri: u.body.result, post: p.body.result, ws: w.result, cache: [u.cache, p.cache] };
}
/**
 * A method's error over the three transports (cometbft/cometbft:rpc/jsonrpc/types/types.go): -32603 `Internal error` with the
 * text in `data`, URI HTTP 500, JSON-RPC HTTP 200. With `param` it is a parameter-conversion
 * error: -32602 `Invalid params` over HTTP (data `error converting http|json params to
 * arguments: <text>`), -32603 with the json prefix over the websocket.
 */
export async function nodeErr3(t: Test, tn: TestNode, method: string, query: string, params: unknown, data: string | RegExp, param = false): Promise<void> {
  const [u, p, w] = await Promise.all([nodeViaUri(tn, method, query), viaPost(tn, method, params), viaWs(tn, method, params)]);
  t.equal(u.status, 500, `${method} ${query}: URI answers 500`);
  t.equal(p.status, 200, `${method}: JSON-RPC answers 200`);
  const cases = [
    ['URI', u.body, -1, param ? -32602 : -32603, param ? 'error converting http params to arguments: ' : ''],
    ['JSON-RPC', p.body, 1, param ? -32602 : -32603, param ? 'error converting json params to arguments: ' : ''],
    ['websocket', w, 2, -32603, param ? 'error converting json params to arguments: ' : ''],
  ] as const;
  for (const [via, body, id, code, prefix] of cases) {
    const message = code === -32602 ? 'Invalid params' : 'Internal error';
    t.same([body.id, body.error?.code, body.error?.message, body.result], [id, code, message, undefined], `${method}: ${via} ${code}`);
    const text = String(body.error?.data);
    t.ok(text.startsWith(prefix), `${method}: ${via} error prefix`);
    if (typeof data === 'string') t.equal(text.slice(prefix.length), data, `${method}: ${via} error text`);
    else t.match(text.slice(prefix.length), data, `${method}: ${via} error text`);
  }
}
/** The JSON kinds of a value, keys sorted, arrays by their first element (for fixture shapes). */
export function shape(v: unknown): unknown {
  if (v === null) return 'null';
  if (Array.isArray(v)) return v.length === 0 ? [] : [shape(v[0])];
  if (typeof v === 'object') return Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, shape((v as any)[k])]));
  return typeof v;
}
export const sha256Hex = (b: Uint8Array) => createHash('sha256').update(b).digest('hex').toUpperCase();
export const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
