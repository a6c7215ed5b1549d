/**
 * Node RPC `broadcast_tx_sync` (cometbft: rpc/core/mempool.go BroadcastTxSync; mempool/errors.go;
 * cometbft/cometbft:mempool/clist_mempool.go): waits for the app's CheckTx; a failing code is returned in the result (not an
 * error) with `data` as upper-case HEX and the tx hash; the mempool's own refusals (cache, too
 * large, full) are -32603 with the plain error text. Over URI ("quoted" and 0x forms), JSON-RPC
 * and websocket (base64); shape checked against the `broadcast_tx_sync` fixture.
 */
import { CheckTxType, type ResponseCheckTx } from '../../src/abci/types.js';
import { CListMempool } from '../../src/mempool/clist_mempool.js';
import type { NodeRpcContext } from '../../src/rpc/node/context.js';
import { mempoolRoutes } from '../../src/rpc/node/methods/info-mempool.js';
import { nullLogger } from '../../src/log.js';
import { SPEC_NAMES } from '../../src/names/index.js';
import type { RouteContext } from '../../src/rpc/node/routes.js';
import { EventBus } from '../../src/events/bus.js';
import { createHash } from 'node:crypto';
import t from 'tap';
import { FIXTURES, nodeViaUri as viaUri, viaPost, viaWs, nodeOk3 as ok3, nodeErr3 as err3, shape, sha256Hex, utf8 } from '../helpers/rpc3.js';

import { transferTx, b64, hexArg, idleNode } from '../helpers/mempool-tx.js';

t.test('broadcast_tx_sync: a tx the protobuf decoder refuses is a result with its code', async (t) => {
  const tn = await idleNode();
  t.teardown(() => tn.close());
  const tx = utf8('name=satoshi');
  const r = await ok3(t, tn, 'broadcast_tx_sync', 'tx="name=satoshi"', { tx: b64(tx) });
  const want = { code: 2, data: '', log: 'expected 2 wire type, got 6: tx parse error', codespace: 'sdk', hash: sha256Hex(tx) };
  t.same(r.uri, want, 'URI ("quoted" raw bytes)');
  t.same(r.post, want, 'JSON-RPC (base64)');
  t.same(r.ws, want, 'websocket (base64)');
  t.same(Object.keys(r.uri), ['code', 'data', 'log', 'codespace', 'hash'], 'ResultBroadcastTx field order');
  t.same(shape(r.uri), shape(FIXTURES['broadcast_tx_sync'].result), 'fixture shape');
  t.same(r.cache, [null, null], 'not cacheable');
  // The 0x form carries the same bytes.
  const hexForm = await viaUri(tn, 'broadcast_tx_sync', `tx=${hexArg(tx)}`);
  t.same(hexForm.body.result, want, 'URI 0x-hex form');
  t.equal(tn.ctx.mempool.size(), 0, 'a failed tx does not enter the mempool');
});

t.test('broadcast_tx_sync with txs the app accepts', async (t) => {
  const tn = await idleNode({ json: true });
  t.teardown(() => tn.close());

  await t.test('code 0, the tx is in the mempool', async (t) => {
    const txs = [transferTx(), transferTx(), transferTx()];
    const [u, p, w] = await Promise.all([
      viaUri(tn, 'broadcast_tx_sync', `tx=${hexArg(txs[0]!)}`),
      viaPost(tn, 'broadcast_tx_sync', { tx: b64(txs[1]!) }),
      viaWs(tn, 'broadcast_tx_sync', [b64(txs[2]!)]),
    ]);
    t.same(u.body.result, { code: 0, data: '', log: '', codespace: '', hash: sha256Hex(txs[0]!) }, 'URI');
    t.same(p.body.result, { code: 0, data: '', log: '', codespace: '', hash: sha256Hex(txs[1]!) }, 'JSON-RPC');
    t.same(w.result, { code: 0, data: '', log: '', codespace: '', hash: sha256Hex(txs[2]!) }, 'websocket, positional params');
    t.equal(tn.ctx.mempool.size(), 3);
    for (const tx of txs) t.ok(tn.ctx.mempool.has(createHash('sha256').update(tx).digest()), 'in the mempool');
  });

  await t.test('a decodable tx the ante chain refuses: its code and log, not added', async (t) => {
    const bad = utf8(JSON.stringify({ body: { messages: [] }, auth_info: { fee: { amount: [], gas_limit: '1' } } }));
    const r = await viaPost(tn, 'broadcast_tx_sync', { tx: b64(bad) });
    t.same(r.body.result, { code: 18, data: '', log: 'must contain at least one message: invalid request', codespace: 'sdk', hash: sha256Hex(bad) });
    t.notOk(tn.ctx.mempool.has(createHash('sha256').update(bad).digest()));
  });

  await t.test('a tx already seen: -32603 tx already exists in cache', async (t) => {
    const tx = transferTx();
    await viaPost(tn, 'broadcast_tx_sync', { tx: b64(tx) });
    await err3(t, tn, 'broadcast_tx_sync', `tx=${hexArg(tx)}`, { tx: b64(tx) }, 'tx already exists in cache');
  });

  await t.test('bad arguments are parameter errors', async (t) => {
    const r = await viaPost(tn, 'broadcast_tx_sync', { tx: 'not base64!' });
    t.same(r.body.error, { code: -32602, message: 'Invalid params', data: 'error converting json params to arguments: illegal base64 data at input byte 3' });
    const u = await viaUri(tn, 'broadcast_tx_sync', 'tx=0xZZ');
    t.same([u.status, u.body.error?.code, u.body.error?.data], [500, -32602, "error converting http params to arguments: encoding/hex: invalid byte: U+005A 'Z'"]);
  });
});

t.test('broadcast_tx_sync: too large and full are -32603 with the mempool error text', async (t) => {
  const tn = await idleNode({ json: true, flags: { 'mempool.max_tx_bytes': 400, 'mempool.size': 1 } });
  t.teardown(() => tn.close());
  const big = transferTx(400);
  await err3(t, tn, 'broadcast_tx_sync', `tx=${hexArg(big)}`, { tx: b64(big) }, `Tx too large. Max size is 400, but got ${big.length}`);
  const first = transferTx();
  const ok = await viaPost(tn, 'broadcast_tx_sync', { tx: b64(first) });
  t.equal(ok.body.result.code, 0);
  const next = transferTx();
  await err3(t, tn, 'broadcast_tx_sync', `tx=${hexArg(next)}`, { tx: b64(next) }, `mempool is full: number of txs 1 (max: 1), total txs bytes ${first.length} (max: 1073741824)`);
});

t.test('broadcast_tx_sync: the CheckTx data is upper-case HEX (HexBytes), not base64', async (t) => {
  // A real Mempool and the real routes over an app whose CheckTx returns data and waits a bit.
  const res = (code: number): ResponseCheckTx => ({ code, data: Uint8Array.from([0xab, 0x01]), log: 'l', info: '', gasWanted: 1n, gasUsed: 0n, events: [], codespace: 'cs' });
  const app = { checkTx: async (tx: Uint8Array, type: CheckTxType) => (t.equal(type, CheckTxType.New), res(tx[0] === 1 ? 7 : 0)) };
  const ctx = { mempool: new CListMempool({}, { app }), app, bus: new EventBus(), names: SPEC_NAMES, logger: nullLogger, config: { rpc: {} } } as unknown as NodeRpcContext;
  const handler = mempoolRoutes(ctx).find((r) => r.name === 'broadcast_tx_sync')!.handler;
  const rc: RouteContext = { transport: 'jsonrpc', id: 1, remoteAddr: '127.0.0.1', ws: undefined, signal: new AbortController().signal };
  t.same(await handler({ tx: Uint8Array.from([0, 2]) }, rc), { code: 0, data: 'AB01', log: 'l', codespace: 'cs', hash: sha256Hex(Uint8Array.from([0, 2])) });
  t.same(await handler({ tx: Uint8Array.from([1, 2]) }, rc), { code: 7, data: 'AB01', log: 'l', codespace: 'cs', hash: sha256Hex(Uint8Array.from([1, 2])) });
});

