/**
 * Node RPC `tx_search` (cometbft: rpc/core/tx.go TxSearch, env.go validatePage/validatePerPage):
 * txs whose events match a query, sorted by (height, index) asc by default or desc, paginated
 * (per_page default 30, at most 100), `total_count` the full match count, proofs with `prove`;
 * errors for order_by, pages, queries (512-byte limit, syntax) and a disabled indexer. Not
 * cacheable (routes.go). Real bank transfers on a real node, over URI, JSON-RPC and websocket;
 * shapes checked against the `tx_search_with_prove` fixture.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { startTestNode, waitHeight, type TestNode } from '../helpers/inproc.js';
import { WsClient } from '../helpers/ws.js';
import { createHash } from 'node:crypto';

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

t.test('tx_search', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);
  const txs: Uint8Array[] = [];
  for (let i = 0; i < 3; i++) {
    const h = tn.ctx.storage.blocks.height();
    txs.push(await sendTx(tn));
    await waitHeight(tn, h + 1n);
  }
  txs.push(...(await Promise.all([sendTx(tn), sendTx(tn), sendTx(tn)])));
  await settle(tn);
  const sha = (b: Uint8Array) => createHash('sha256').update(b).digest();
  const ix = tn.ctx.txIndexer!;
  // Every tx, in (height, index) order.
  const all = txs.map((tx) => ({ tx, hash: hexOf(sha(tx)), ...ix.locate(sha(tx))! })).sort((a, b) => (a.height === b.height ? a.index - b.index : a.height < b.height ? -1 : 1));
  const q = (query: string, extra: Record<string, string | boolean> = {}) => ({
    uri: Object.fromEntries(Object.entries({ query, ...extra }).map(([k, v]) => [k, typeof v === 'string' && k !== 'page' && k !== 'per_page' ? JSON.stringify(v) : String(v)])),
    params: { query, ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, typeof v === 'boolean' ? v : String(v)])) },
  });
  const search = async (t: Test, query: string, extra: Record<string, string | boolean> = {}) => {
    const a = q(query, extra);
    return ok3(t, tn, 'tx_search', a.uri, a.params, false);
  };
  const hashes = (r: any) => r.txs.map((x: any) => x.hash);

  await t.test('all txs, asc by default, then desc', async (t) => {
    const r = await search(t, 'tx.height > 0');
    t.equal(r.total_count, String(all.length));
    t.same(hashes(r), all.map((x) => x.hash), 'sorted by height, then index');
    for (const [i, x] of r.txs.entries()) {
      t.same([x.height, x.index, x.tx], [all[i]!.height.toString(), all[i]!.index, b64(all[i]!.tx)]);
      t.notOk('proof' in x, 'no proof without prove');
    }
    const asc = await search(t, 'tx.height > 0', { order_by: 'asc' });
    t.same(asc, r, 'order_by asc = default');
    const desc = await search(t, 'tx.height > 0', { order_by: 'desc' });
    t.same(hashes(desc), all.map((x) => x.hash).reverse(), 'desc');
  });

  await t.test('with proofs: the fixture shape', async (t) => {
    const r = await search(t, `transfer.sender = '${ALICE!.bech32}'`, { prove: true });
    t.equal(r.total_count, String(all.length));
    t.same(shapeDiff(r, FIXTURES['tx_search_with_prove'].result, { mayFill: ['$.txs[].tx_result.data'] }), [], 'fixture shape');
    for (const x of r.txs) {
      const block = tn.ctx.storage.blocks.loadBlock(BigInt(x.height))!;
      t.equal(x.proof.root_hash, hexOf(block.header.dataHash), `tx ${x.height}/${x.index}: proof against the data hash`);
      t.same([x.proof.data, x.proof.proof.index, x.proof.proof.total], [x.tx, String(x.index), String(block.data.txs.length)]);
    }
    const one = await viaUri(tn, 'tx', { hash: `0x${r.txs[0].hash}`, prove: 'true' });
    t.same(r.txs[0], one.body.result, 'an entry equals tx?prove=true');
  });

  await t.test('queries', async (t) => {
    const first = all[0]!;
    const byHash = await search(t, `tx.hash = '${first.hash}'`);
    t.same([byHash.total_count, hashes(byHash)], ['1', [first.hash]]);
    const byHeight = await search(t, `tx.height = ${all[all.length - 1]!.height}`);
    t.same(hashes(byHeight), all.filter((x) => x.height === all[all.length - 1]!.height).map((x) => x.hash), 'one height');
    const none = await search(t, "transfer.sender = 'nobody'");
    t.same(none, { txs: [], total_count: '0' }, 'no match: [] and 0');
    const amount = await search(t, "coin_spent.amount = '2achain'");
    t.equal(amount.total_count, '1', 'an attribute value');
  });

  await t.test('pages', async (t) => {
    const p2 = await search(t, 'tx.height > 0', { page: '2', per_page: '2' });
    t.same([p2.total_count, hashes(p2)], [String(all.length), all.slice(2, 4).map((x) => x.hash)]);
    const last = await search(t, 'tx.height > 0', { page: '2', per_page: '4' });
    t.same(hashes(last), all.slice(4).map((x) => x.hash), 'the last page holds the rest');
    const desc = await search(t, 'tx.height > 0', { page: '1', per_page: '2', order_by: 'desc' });
    t.same(hashes(desc), all.slice(-2).reverse().map((x) => x.hash), 'sorted before paginating');
  });

  await t.test('page and order errors', async (t) => {
    const n = all.length;
    const pages = Math.ceil(n / 2);
    const bad = async (extra: Record<string, string>, data: string) => {
      const a = q('tx.height > 0', extra);
      await err3(t, tn, 'tx_search', a.uri, a.params, data);
    };
    await bad({ page: String(pages + 1), per_page: '2' }, `page should be within [1, ${pages}] range, given ${pages + 1}`);
    await bad({ page: '0' }, 'page should be within [1, 1] range, given 0');
    await bad({ page: '-2' }, 'page should be within [1, 1] range, given -2');
    await bad({ page: '9223372036854775807' }, 'page should be within [1, 1] range, given 9223372036854775807');
    await bad({ order_by: 'up' }, 'expected order_by to be either `asc` or `desc` or empty');
    const wide = await search(t, 'tx.height > 0', { per_page: '1000' });
    t.equal(wide.txs.length, n, 'per_page above 100 is clamped, not an error');
    const zero = await search(t, 'tx.height > 0', { per_page: '0' });
    t.equal(zero.txs.length, n, 'per_page 0 means 30');
    const empty = await search(t, "transfer.sender = 'nobody'", { page: '1' });
    t.equal(empty.total_count, '0', 'page 1 of nothing is fine');
  });

  await t.test('query errors and a disabled indexer', async (t) => {
    const long = `transfer.sender = '${'x'.repeat(500)}'`;
    const a = q(long);
    await err3(t, tn, 'tx_search', a.uri, a.params, 'maximum query length exceeded');
    const b = q('tx.height >');
    await err3(t, tn, 'tx_search', b.uri, b.params, /^offset \d+: /);
    const ctx = tn.ctx as { txIndexer: unknown };
    const saved = ctx.txIndexer;
    ctx.txIndexer = null;
    t.teardown(() => void (ctx.txIndexer = saved));
    const c = q('tx.height > 0');
    await err3(t, tn, 'tx_search', c.uri, c.params, 'transaction indexing is disabled');
  });
});
