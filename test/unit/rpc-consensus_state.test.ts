/**
 * Node RPC `consensus_state` (cometbft: rpc/core/consensus.go GetConsensusState;
 * consensus/types/round_state.go RoundStateSimple): `height/round/step` as "H/R/S" with the
 * numeric step, start time, the three block hashes, `height_vote_set` with numeric rounds and
 * vote and bit-array strings, and the proposer. Over URI, JSON-RPC and websocket; shape checked
 * against the `consensus_state` fixture.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { startTestNode, waitHeight, type TestNode } from '../helpers/inproc.js';
import { WsClient } from '../helpers/ws.js';

// ------------------------------------------------------------------------------------------------
// Shared by the rpc-<method> tests of the node/mempool/ABCI group; each file carries its own copy
// so that it stands alone.

const here = path.dirname(fileURLToPath(import.meta.url));
/** Real CometBFT v0.38 kvstore responses, brand words renamed (../shared/reference/fixtures). */
const FIXTURES = JSON.parse(
  fs.readFileSync(path.join(here, '../../../test/fixtures/cometbft-v038-kvstore.json'), 'utf8'),
) as Record<string, any>;

interface Answer {
  status: number;
  cache: string | null;
  body: any;
}
/** URI form: GET /<method>?<query> (`query` already in CometBFT's URI argument syntax). */
async function viaUri(tn: TestNode, method: string, query = ''): Promise<Answer> {
  const r = await fetch(`${tn.base}/${method}${query ? `?${query}` : ''}`);
  return { status: r.status, cache: r.headers.get('cache-control'), body: await r.json() };
}
/** JSON-RPC over HTTP POST, id 1. */
async function viaPost(tn: TestNode, method: string, params: unknown): Promise<Answer> {
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
/** The three envelopes of a successful call, checked; returns the three results. */
async function ok3(t: Test, tn: TestNode, method: string, query: string, params: unknown): Promise<{ uri: any; post: any; ws: any; cache: (string | null)[] }> {
  const [u, p, w] = await Promise.all([viaUri(tn, method, query), viaPost(tn, method, params), viaWs(tn, method, params)]);
  t.same([u.status, u.body.jsonrpc, u.body.id, u.body.error], [200, '2.0', -1, undefined], `${method}: URI 200, id -1, no error`);
  t.same([p.status, p.body.jsonrpc, p.body.id, p.body.error], [200, '2.0', 1, undefined], `${method}: JSON-RPC 200, id 1, no error`);
  t.same([w.jsonrpc, w.id, w.error], ['2.0', 2, undefined], `${method}: websocket id 2, no error`);
  return { uri: u.body.result, post: p.body.result, ws: w.result, cache: [u.cache, p.cache] };
}
/**
 * A method's error over the three transports (cometbft.md §1.2): -32603 `Internal error` with the
 * text in `data`, URI HTTP 500, JSON-RPC HTTP 200. With `param` it is a parameter-conversion
 * error: -32602 `Invalid params` over HTTP (data `error converting http|json params to
 * arguments: <text>`), -32603 with the json prefix over the websocket.
 */
async function err3(t: Test, tn: TestNode, method: string, query: string, params: unknown, data: string | RegExp, param = false): Promise<void> {
  const [u, p, w] = await Promise.all([viaUri(tn, method, query), viaPost(tn, method, params), viaWs(tn, method, params)]);
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
function shape(v: unknown): unknown {
  if (v === null) return 'null';
  if (Array.isArray(v)) return v.length === 0 ? [] : [shape(v[0])];
  if (typeof v === 'object') return Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, shape((v as any)[k])]));
  return typeof v;
}
const sha256Hex = (b: Uint8Array) => createHash('sha256').update(b).digest('hex').toUpperCase();
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
// ------------------------------------------------------------------------------------------------

t.test('consensus_state on a chain at rest', async (t) => {
  const tn = await startTestNode({ flags: { 'consensus.create_empty_blocks': false } });
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);
  for (let i = 0; i < 20; i++) {
    const before = JSON.stringify(tn.ctx.consensus.roundStateSimpleJSON());
    await new Promise((r) => setTimeout(r, 300));
    if (JSON.stringify(tn.ctx.consensus.roundStateSimpleJSON()) === before) break;
  }
  const r = await ok3(t, tn, 'consensus_state', '', {});
  t.same(r.post, r.uri, 'JSON-RPC = URI');
  t.same(r.ws, r.uri, 'websocket = URI');
  t.same(r.cache, [null, null], 'not cacheable');
  t.same(Object.keys(r.uri), ['round_state']);
  const rs = r.uri.round_state;
  t.same(shape(rs), shape(FIXTURES['consensus_state'].result.round_state), 'fixture shape');
  t.same(
    Object.keys(rs),
    ['height/round/step', 'start_time', 'proposal_block_hash', 'locked_block_hash', 'valid_block_hash', 'height_vote_set', 'proposer'],
    'RoundStateSimple field order',
  );

  const snap = tn.ctx.consensus.getRoundState();
  t.equal(rs['height/round/step'], `${snap.height}/${snap.round}/${snap.step as number}`, 'H/R/S with the numeric step');
  t.match(rs.start_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/);
  const addr = Buffer.from(tn.ctx.validator.address).toString('hex').toUpperCase();
  t.same(rs.proposer, { address: addr, index: 0 }, 'proposer: our validator at index 0');
  for (const k of ['proposal_block_hash', 'locked_block_hash', 'valid_block_hash']) t.match(rs[k], /^([0-9A-F]{64})?$/, `${k}: hex or empty`);
  t.equal(rs.height_vote_set[0].round, 0, 'rounds are numbers here (unlike dump_consensus_state)');
  for (const rv of rs.height_vote_set) {
    for (const kind of ['prevotes', 'precommits']) {
      if (rv[kind] === null) continue;
      t.equal(rv[kind].length, 1, `${kind}: one entry per validator`);
      t.match(rv[`${kind}_bit_array`], /^BA\{1:[x_]\} \d+\/10 = \d\.\d\d$/, `${kind}_bit_array`);
    }
  }
});

t.test('consensus_state while blocks are made: votes as strings', async (t) => {
  const tn = await startTestNode({ timeoutCommit: '50ms' });
  t.teardown(() => tn.close());
  await waitHeight(tn, 2n);
  let seen = false;
  const deadline = Date.now() + 5000;
  while (!seen && Date.now() < deadline) {
    const r = await viaUri(tn, 'consensus_state');
    const rs = r.body.result.round_state;
    const prevotes: string[] = rs.height_vote_set[0].prevotes ?? [];
    if (prevotes[0] && prevotes[0] !== 'nil-Vote') {
      seen = true;
      const [h] = rs['height/round/step'].split('/');
      t.match(prevotes[0], new RegExp(`^Vote\\{0:[0-9A-F]{12} ${h}/00/SIGNED_MSG_TYPE_PREVOTE\\(Prevote\\) [0-9A-F]{12} [0-9A-F]{12} [0-9A-F]{12} @ \\S+Z\\}$`));
      t.equal(rs.height_vote_set[0].prevotes_bit_array, 'BA{1:x} 10/10 = 1.00');
      t.not(rs.proposal_block_hash, '', 'a proposal block once prevoted');
    }
  }
  t.ok(seen, 'caught a prevote');
});

t.test('consensus_state takes no parameters', async (t) => {
  const tn = await startTestNode({ flags: { 'consensus.create_empty_blocks': false } });
  t.teardown(() => tn.close());
  const r = await viaWs(tn, 'consensus_state', ['1']);
  t.same(r.error, { code: -32603, message: 'Internal error', data: 'error converting json params to arguments: expected 0 parameters ([]), got 1 ([[34 49 34]])' });
});
