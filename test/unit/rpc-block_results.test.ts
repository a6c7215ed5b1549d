/**
 * Node RPC `block_results` (cometbft: rpc/core/blocks.go BlockResults,
 * rpc/core/types/responses.go ResultBlockResults): the stored FinalizeBlock response of a height
 * (default: the store height): `txs_results` as jsonpb ExecTxResults, `finalize_block_events`,
 * `validator_updates` (the `Sum`-wrapped ABCI key, cometbft.md §4.9), `consensus_param_updates`
 * (proto params, omitempty), `app_hash` base64; empty lists are null. `could not find results for
 * height #H` when none is stored. Cacheable only with a height. Over URI, JSON-RPC and websocket,
 * shapes checked against the `block_results_at_height_10` and `tx_search_with_prove` fixtures.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { startTestNode, waitHeight, type TestNode } from '../helpers/inproc.js';
import { WsClient } from '../helpers/ws.js';
import { createHash } from 'node:crypto';
import type { ResponseFinalizeBlock } from '../../src/app/abci.js';
import { defaultConsensusParams } from '../../src/types/params.js';

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

t.test('block_results', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);
  await Promise.all([sendTx(tn), sendTx(tn)]);
  const H = await growTo(tn, 5n);
  const blocks = tn.ctx.storage.blocks;
  const states = tn.ctx.storage.state;
  let T = 1n;
  while (blocks.loadBlock(T)!.data.txs.length === 0) T++;
  let E = 1n;
  while (blocks.loadBlock(E)!.data.txs.length !== 0) E++;

  await t.test('an empty block: null lists, the app hash in base64', async (t) => {
    const r = await ok3(t, tn, 'block_results', { height: String(E) }, { height: String(E) }, true);
    t.same(shapeDiff(r, FIXTURES['block_results_at_height_10'].result, { mayFill: ['$.app_hash'] }), [], 'fixture shape');
    t.same(
      [r.height, r.txs_results, r.finalize_block_events, r.validator_updates, r.consensus_param_updates],
      [String(E), null, null, null, null],
    );
    const next = blocks.loadBlockMeta(E + 1n)!.header;
    t.equal(Buffer.from(r.app_hash, 'base64').toString('hex').toUpperCase(), hexOf(next.appHash), 'app_hash is what block h+1 carries');
  });

  await t.test('a block with txs: jsonpb ExecTxResults', async (t) => {
    const r = await ok3(t, tn, 'block_results', { height: String(T) }, { height: String(T) }, true);
    const block = blocks.loadBlock(T)!;
    t.equal(r.txs_results.length, block.data.txs.length);
    const want = FIXTURES['tx_search_with_prove'].result.txs[0].tx_result;
    for (const [i, tx] of block.data.txs.entries()) {
      const res = r.txs_results[i];
      t.same(shapeDiff(res, want, { mayFill: ['$.data'] }), [], `tx ${i}: ExecTxResult shape as the fixture`);
      t.same(Object.keys(res), ['code', 'data', 'log', 'info', 'gas_wanted', 'gas_used', 'events', 'codespace'], 'every jsonpb field, proto order');
      t.same([res.code, res.gas_wanted, typeof res.gas_used], [0, '200000', 'string']);
      const indexed = tn.ctx.txIndexer!.getTx(createHash('sha256').update(tx).digest())!;
      t.equal(res.gas_used, indexed.result.gasUsed.toString(), 'the same result the indexer holds');
      const transfer = res.events.find((e: any) => e.type === 'transfer');
      t.same(transfer.attributes.find((a: any) => a.key === 'sender'), { key: 'sender', value: ALICE!.bech32, index: true });
    }
    t.equal(r.finalize_block_events, null, 'the bank app emits no block events');
    const latest = await ok3(t, tn, 'block_results', {}, {}, false);
    t.equal(latest.height, String(H), 'latest by default, not cacheable');
  });

  await t.test('events, validator updates and param updates as CometBFT renders them', async (t) => {
    const s = states as unknown as { loadFinalizeBlockResponse: (h: bigint) => ResponseFinalizeBlock | null };
    const stored = s.loadFinalizeBlockResponse.bind(states);
    const params = defaultConsensusParams();
    params.block.maxGas = 0n;
    params.version.app = 3n;
    const resp: ResponseFinalizeBlock = {
      events: [
        { type: 'mint', attributes: [{ key: 'amount', value: '5', index: true }, { key: 'note', value: '', index: false }] },
        { type: 'bare', attributes: [] },
        { type: '', attributes: [{ key: 'k', value: 'v', index: false }] },
      ],
      txResults: [],
      validatorUpdates: [
        { pubKey: { type: 'ed25519', bytes: new Uint8Array(32).fill(7) }, power: 15n },
        { pubKey: { type: 'ed25519', bytes: new Uint8Array(32).fill(8) }, power: 0n },
      ],
      consensusParamUpdates: params,
      appHash: new Uint8Array([1, 2, 3]),
    };
    s.loadFinalizeBlockResponse = (h) => (h === 2n ? resp : stored(h));
    t.teardown(() => void delete (s as { loadFinalizeBlockResponse?: unknown }).loadFinalizeBlockResponse);
    const r = await ok3(t, tn, 'block_results', { height: '2' }, { height: '2' }, true);
    t.same(r.finalize_block_events, [
      { type: 'mint', attributes: [{ key: 'amount', value: '5', index: true }, { key: 'note', value: '', index: false }] },
      { type: 'bare' },
      { attributes: [{ key: 'k', value: 'v', index: false }] },
    ], 'cmtjson omitempty on type and attributes');
    const sum = tn.ctx.names.abciPubKeySumType('ed25519');
    t.equal(sum, 'consensus.crypto.PublicKey_Ed25519');
    t.same(r.validator_updates, [
      { pub_key: { Sum: { type: sum, value: { ed25519: b64(new Uint8Array(32).fill(7)) } } }, power: '15' },
      { pub_key: { Sum: { type: sum, value: { ed25519: b64(new Uint8Array(32).fill(8)) } } } },
    ], 'Sum-wrapped keys; power 0 omitted');
    t.same(r.consensus_param_updates, {
      block: { max_bytes: '22020096' },
      evidence: { max_age_num_blocks: '100000', max_age_duration: '172800000000000', max_bytes: '1048576' },
      validator: { pub_key_types: ['ed25519'] },
      version: { app: '3' },
      abci: {},
    }, 'proto params: zero values omitted, max_age_duration kept');
    t.equal(r.app_hash, 'AQID');
  });

  await t.test('no stored results', async (t) => {
    const s = states as unknown as { loadFinalizeBlockResponse: (h: bigint) => ResponseFinalizeBlock | null };
    s.loadFinalizeBlockResponse = () => null;
    t.teardown(() => void delete (s as { loadFinalizeBlockResponse?: unknown }).loadFinalizeBlockResponse);
    await err3(t, tn, 'block_results', { height: '2' }, { height: '2' }, 'could not find results for height #2');
  });

  await t.test('height errors', async (t) => {
    await err3(t, tn, 'block_results', { height: '0' }, { height: '0' }, 'height must be greater than 0, but got 0');
    const over = String(H + 1n);
    await err3(t, tn, 'block_results', { height: over }, { height: over }, `height ${over} must be less than or equal to the current blockchain height ${H}`);
    const b = blocks as unknown as { base: () => bigint };
    b.base = () => 3n;
    t.teardown(() => void delete (b as { base?: unknown }).base);
    await err3(t, tn, 'block_results', { height: '2' }, { height: '2' }, 'height 2 is not available, lowest height is 3');
  });
});

