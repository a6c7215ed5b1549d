/**
 * Node RPC `block_search` (cometbft: rpc/core/blocks.go BlockSearch, env.go validatePage/
 * validatePerPage): blocks whose FinalizeBlock events match a query, desc by height by default,
 * paginated (per_page default 30, at most 100), `total_count` the full match count; errors for
 * order_by, pages, query syntax and a disabled indexer. Not cacheable (routes.go). Over URI,
 * JSON-RPC and websocket; shapes checked against the `block_search` fixture.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { startTestNode, waitHeight, type TestNode } from '../helpers/inproc.js';
import { WsClient } from '../helpers/ws.js';

// ------------------------------------------------------------------------------------------------
// Shared by the rpc-<chain method> tests; each file carries its own copy so it stands alone.

const here = path.dirname(fileURLToPath(import.meta.url));
/** Real CometBFT v0.38 kvstore responses, brand words renamed (../shared/reference/fixtures). */
const FIXTURES = JSON.parse(
  fs.readFileSync(path.join(here, '../../../test/fixtures/cometbft-v038-kvstore.json'), 'utf8'),
) as Record<string, any>;
const CACHED = 'public, max-age=86400';
const hexOf = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A real in-process node whose chain stands still between calls: with create_empty_blocks off a
 * block is made only for txs (and the proof block after each app-hash change). The JSON tx
 * decoder lets the tests send real bank transfers between two funded dev accounts.
 */
function startNode(): Promise<TestNode> {
  return startTestNode({ timeoutCommit: '100ms', txDecoder: 'json', flags: { 'consensus.create_empty_blocks': false } });
}
const [ALICE, BOB] = devAccounts();
let sent = 0;
/** A bank transfer as the JSON tx decoder reads it; the amount makes each one unique. */
function transferTx(): Uint8Array {
  sent++;
  const msg = { '@type': '/chain.bank.v1beta1.MsgSend', from_address: ALICE!.bech32, to_address: BOB!.bech32, amount: [{ denom: 'achain', amount: String(sent) }] };
  return new TextEncoder().encode(JSON.stringify({ body: { messages: [msg], memo: '' }, auth_info: { fee: { amount: [], gas_limit: '200000' } } }));
}
/** Puts one tx into the mempool (the broadcast methods are not what these files test). */
async function sendTx(tn: TestNode): Promise<Uint8Array> {
  const tx = transferTx();
  const r = await tn.ctx.mempool.checkTx(tx);
  if (r.response.code !== 0) throw new Error(`CheckTx failed: ${r.response.log}`);
  return tx;
}
/** Waits until no block has come for 500 ms; returns the store height. */
async function settle(tn: TestNode): Promise<bigint> {
  let last = -1n;
  let since = Date.now();
  for (;;) {
    const h = tn.ctx.storage.blocks.height();
    if (h !== last) {
      last = h;
      since = Date.now();
    } else if (Date.now() - since >= 500) return h;
    await sleep(20);
  }
}
/** Sends txs one at a time until the store reaches `height`, then lets the chain settle. */
async function growTo(tn: TestNode, height: bigint): Promise<bigint> {
  await waitHeight(tn, 1n);
  while (tn.ctx.storage.blocks.height() < height) {
    const h = tn.ctx.storage.blocks.height();
    await sendTx(tn);
    await waitHeight(tn, h + 1n);
  }
  return settle(tn);
}

interface HttpAnswer {
  status: number;
  cache: string | null;
  body: any;
}
/** URI form: GET /<method>?name=value (values as CometBFT's URI parser reads them). */
async function viaUri(tn: TestNode, method: string, args: Record<string, string>): Promise<HttpAnswer> {
  const qs = new URLSearchParams(args).toString();
  const r = await fetch(`${tn.base}/${method}${qs ? `?${qs}` : ''}`);
  return { status: r.status, cache: r.headers.get('cache-control'), body: await r.json() };
}
/** JSON-RPC over HTTP POST, id 1. */
async function viaPost(tn: TestNode, method: string, params: unknown): Promise<HttpAnswer> {
  const r = await fetch(`${tn.base}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: r.status, cache: r.headers.get('cache-control'), body: await r.json() };
}
/** JSON-RPC over the websocket, id 2. */
async function viaWs(tn: TestNode, method: string, params: unknown): Promise<any> {
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
async function call3(tn: TestNode, method: string, uri: Record<string, string>, params: unknown) {
  const [u, p, w] = await Promise.all([viaUri(tn, method, uri), viaPost(tn, method, params), viaWs(tn, method, params)]);
  return { uri: u, post: p, ws: w };
}
/**
 * The successful result, the same over the three transports, with CometBFT's Cache-Control
 * (routes.go Cacheable) on both HTTP forms when `cacheable`.
 */
async function ok3(t: Test, tn: TestNode, method: string, uri: Record<string, string>, params: unknown, cacheable: boolean): Promise<any> {
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
async function err3(t: Test, tn: TestNode, method: string, uri: Record<string, string>, params: unknown, data: string | RegExp): Promise<void> {
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
function shapeDiff(actual: unknown, fixture: unknown, opts: { mayOmit?: string[]; mayFill?: string[]; opaque?: string[] } = {}): string[] {
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

t.test('block_search', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  const H = Number(await growTo(tn, 7n));
  const q = (query: string, extra: Record<string, string> = {}) => ({
    uri: Object.fromEntries(Object.entries({ query, ...extra }).map(([k, v]) => [k, k === 'page' || k === 'per_page' ? v : JSON.stringify(v)])),
    params: { query, ...extra },
  });
  const search = async (t: Test, query: string, extra: Record<string, string> = {}) => {
    const a = q(query, extra);
    return ok3(t, tn, 'block_search', a.uri, a.params, false);
  };
  const heights = (r: any) => r.blocks.map((b: any) => Number(b.block.header.height));
  const range = (hi: number, lo: number) => Array.from({ length: hi - lo + 1 }, (_, i) => hi - i);

  await t.test('desc by default; entries are block results', async (t) => {
    const r = await search(t, 'block.height >= 2');
    t.equal(r.total_count, String(H - 1));
    t.same(heights(r), range(H, 2), 'highest first');
    t.same(shapeDiff(r, FIXTURES['block_search'].result, { mayOmit: ['$.blocks[].block.header.version.app'] }), [], 'fixture shape');
    for (const b of r.blocks.slice(0, 3)) {
      const one = await viaUri(tn, 'block', { height: b.block.header.height });
      t.same(b, one.body.result, `entry ${b.block.header.height} = block?height`);
    }
    const desc = await search(t, 'block.height >= 2', { order_by: 'desc' });
    t.same(desc, r, 'order_by desc = default');
    const asc = await search(t, 'block.height >= 2', { order_by: 'asc' });
    t.same(heights(asc), range(H, 2).reverse(), 'asc');
  });

  await t.test('queries', async (t) => {
    t.same(heights(await search(t, 'block.height = 3')), [3], 'one height');
    t.same(heights(await search(t, 'block.height > 2 AND block.height < 5')), [4, 3], 'a range');
    t.same(await search(t, "mint.amount = '1'"), { blocks: [], total_count: '0' }, 'no block events on this chain: [] and 0');
    const long = await search(t, `block.height > 0 AND block.height > 0 AND ${'x'.repeat(600)} EXISTS`);
    t.equal(long.total_count, '0', 'no 512-byte query limit on block_search (CometBFT)');
  });

  await t.test('pages', async (t) => {
    const p2 = await search(t, 'block.height >= 1', { page: '2', per_page: '3' });
    t.same([p2.total_count, heights(p2)], [String(H), range(H - 3, H - 5)]);
    const clamp = await search(t, 'block.height >= 1', { per_page: '1000' });
    t.equal(clamp.blocks.length, H, 'per_page above 100 is clamped');
    const zero = await search(t, 'block.height >= 1', { per_page: '-1' });
    t.equal(zero.blocks.length, H, 'per_page below 1 means 30');
  });

  await t.test('errors', async (t) => {
    const bad = async (query: string, extra: Record<string, string>, data: string | RegExp) => {
      const a = q(query, extra);
      await err3(t, tn, 'block_search', a.uri, a.params, data);
    };
    const pages = Math.ceil(H / 3);
    await bad('block.height >= 1', { page: String(pages + 1), per_page: '3' }, `page should be within [1, ${pages}] range, given ${pages + 1}`);
    await bad('block.height >= 1', { page: '0' }, 'page should be within [1, 1] range, given 0');
    await bad("mint.amount = '1'", { page: '2' }, 'page should be within [1, 1] range, given 2');
    await bad('block.height >= 1', { page: '9223372036854775807' }, 'page should be within [1, 1] range, given 9223372036854775807');
    await bad('block.height >= 1', { order_by: 'newest' }, 'expected order_by to be either `asc` or `desc` or empty');
    await bad('block.height = ', {}, /^offset \d+: /);
    const ctx = tn.ctx as { blockIndexer: unknown };
    const saved = ctx.blockIndexer;
    ctx.blockIndexer = null;
    t.teardown(() => void (ctx.blockIndexer = saved));
    await bad('block.height >= 1', {}, 'block indexing is disabled');
  });
});
