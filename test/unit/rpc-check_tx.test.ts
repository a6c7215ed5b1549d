/**
 * Node RPC `check_tx` (cometbft: rpc/core/mempool.go CheckTx): the app's CheckTx (type New)
 * straight through the mempool connection, without the mempool's checks and without adding the
 * tx. The result is the flat ResponseCheckTx under jsonpb (every field, proto order, int64 as
 * strings, empty bytes null). Over URI, JSON-RPC and websocket; shape checked against the
 * `broadcast_tx_commit` fixture's `check_tx`.
 */
import t from 'tap';
import { FIXTURES, viaPost, viaWs, nodeOk3 as ok3, nodeErr3 as err3, shape, utf8 } from '../helpers/rpc3.js';

import { transferTx, b64, hexArg, idleNode } from '../helpers/mempool-tx.js';

const FIELDS = ['code', 'data', 'log', 'info', 'gas_wanted', 'gas_used', 'events', 'codespace'];

t.test('check_tx with bytes the protobuf tx decoder refuses: a result, not an error', async (t) => {
  const tn = await idleNode();
  t.teardown(() => tn.close());
  const r = await ok3(t, tn, 'check_tx', 'tx="name=satoshi"', { tx: b64(utf8('name=satoshi')) });
  const want = { code: 2, data: null, log: 'expected 2 wire type, got 6: tx parse error', info: '', gas_wanted: '0', gas_used: '0', events: [], codespace: 'sdk' };
  t.same(r.uri, want, 'URI');
  t.same(r.post, want, 'JSON-RPC');
  t.same(r.ws, want, 'websocket');
  t.same(Object.keys(r.uri), FIELDS, 'flat ResponseCheckTx, proto order');
  t.same(shape(r.uri), shape(FIXTURES['broadcast_tx_commit'].result.check_tx), 'fixture shape');
  t.same(r.cache, [null, null], 'not cacheable');
});

t.test('check_tx with txs the app accepts', async (t) => {
  const tn = await idleNode({ json: true, flags: { 'mempool.max_tx_bytes': 300, 'mempool.size': 1 } });
  t.teardown(() => tn.close());

  await t.test('code 0 and gas; nothing enters the mempool, nothing is cached', async (t) => {
    const tx = transferTx();
    const r = await ok3(t, tn, 'check_tx', `tx=${hexArg(tx)}`, { tx: b64(tx) });
    t.same(r.post, r.uri);
    t.same(r.ws, r.uri);
    t.equal(r.uri.code, 0);
    t.equal(r.uri.gas_wanted, '200000', "the tx's gas limit");
    t.match(r.uri.gas_used, /^[1-9]\d*$/, 'gas used by the ante chain');
    t.equal(tn.ctx.mempool.size(), 0, 'not added');
    // The mempool never saw it: broadcasting it afterwards works.
    const b = await viaPost(tn, 'broadcast_tx_sync', { tx: b64(tx) });
    t.equal(b.body.result.code, 0);
    t.equal(tn.ctx.mempool.size(), 1);
  });

  await t.test("the mempool's limits do not apply (full, too large, cached)", async (t) => {
    const big = transferTx(60);
    t.ok(big.length > 300);
    const r = await viaPost(tn, 'check_tx', { tx: b64(big) });
    t.equal(r.body.result.code, 0, 'a tx above max_tx_bytes, with a full mempool');
    const again = await viaPost(tn, 'check_tx', { tx: b64(big) });
    t.equal(again.body.result.code, 0, 'the same tx twice');
  });

  await t.test('a decodable tx the app refuses: its code and log', async (t) => {
    const bad = utf8(JSON.stringify({ body: { messages: [] }, auth_info: { fee: { amount: [], gas_limit: '1' } } }));
    const r = await viaWs(tn, 'check_tx', { tx: b64(bad) });
    t.same(r.result, { code: 18, data: null, log: 'must contain at least one message: invalid request', info: '', gas_wanted: '0', gas_used: '0', events: [], codespace: 'sdk' });
  });

  await t.test('bad arguments are parameter errors', async (t) => {
    await err3(t, tn, 'check_tx', 'tx=0x1', { tx: 'AQ=' }, /^(encoding\/hex: odd length hex string|illegal base64 data at input byte 3)$/, true);
  });
});
