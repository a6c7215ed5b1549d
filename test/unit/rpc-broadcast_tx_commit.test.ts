/**
 * Node RPC `broadcast_tx_commit` (cometbft: rpc/core/mempool.go BroadcastTxCommit; cometbft/cometbft:mempool/clist_mempool.go):
 * subscribes to the tx's Tx event, runs CheckTx, and waits for inclusion up to
 * `[rpc] timeout_broadcast_tx_commit`. Results: a failing CheckTx with the default `tx_result`
 * and height "0"; an included tx with its ExecTxResult and height. Errors: `error on
 * broadcastTxCommit: <mempool error>`, `timed out waiting for tx to be included in a block`,
 * and the subscription limits, counted together with the websocket subscriptions. Over URI,
 * JSON-RPC and websocket; shapes checked against the `broadcast_tx_commit` fixture.
 */
import type { ExecTxResult, ResponseCheckTx } from '../../src/abci/types.js';
import { EventBus } from '../../src/events/bus.js';
import { nullLogger } from '../../src/log.js';
import { CListMempool } from '../../src/mempool/clist_mempool.js';
import { txKey } from '../../src/mempool/mempool.js';
import { SPEC_NAMES } from '../../src/names/index.js';
import type { NodeRpcContext } from '../../src/rpc/node/context.js';
import { subscriptionsFor } from '../../src/rpc/node/methods/events.js';
import { mempoolRoutes } from '../../src/rpc/node/methods/info-mempool.js';
import type { RouteContext } from '../../src/rpc/node/routes.js';
import t from 'tap';
import { startTestNode } from '../helpers/inproc.js';
import { WsClient } from '../helpers/ws.js';
import { FIXTURES, nodeViaUri as viaUri, viaPost, viaWs, nodeOk3 as ok3, nodeErr3 as err3, shape, sha256Hex, utf8 } from '../helpers/rpc3.js';

import { transferTx, b64, hexArg, idleNode } from '../helpers/mempool-tx.js';

/** Polls `cond` every 10 ms until it holds; fails after a generous deadline. */
async function until(what: string, cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const DEFAULT_TX_RESULT = { code: 0, data: null, log: '', info: '', gas_wanted: '0', gas_used: '0', events: [], codespace: '' };

t.test('broadcast_tx_commit: a failing CheckTx is a result with height 0', async (t) => {
  const tn = await idleNode();
  t.teardown(() => tn.close());
  const tx = utf8('name=satoshi');
  const r = await ok3(t, tn, 'broadcast_tx_commit', 'tx="name=satoshi"', { tx: b64(tx) });
  const want = {
    check_tx: { code: 2, data: null, log: 'expected 2 wire type, got 6: tx parse error', info: '', gas_wanted: '0', gas_used: '0', events: [], codespace: 'sdk' },
    tx_result: DEFAULT_TX_RESULT,
    hash: sha256Hex(tx),
    height: '0',
  };
  t.same(r.uri, want, 'URI');
  t.same(r.post, want, 'JSON-RPC');
  t.same(r.ws, want, 'websocket');
  t.same(Object.keys(r.uri), ['check_tx', 'tx_result', 'hash', 'height'], 'ResultBroadcastTxCommit field order');
  t.same(Object.keys(r.uri.check_tx), ['code', 'data', 'log', 'info', 'gas_wanted', 'gas_used', 'events', 'codespace'], 'jsonpb: every field, proto order');
  t.same(shape(r.uri.check_tx), shape(FIXTURES['broadcast_tx_commit'].result.check_tx), 'check_tx fixture shape');
  t.same(r.cache, [null, null], 'not cacheable');
});

t.test('broadcast_tx_commit: included txs', async (t) => {
  const tn = await startTestNode({ timeoutCommit: '50ms', txDecoder: 'json' });
  t.teardown(() => tn.close());
  const txs = [transferTx(), transferTx(), transferTx()];
  const [u, p, w] = await Promise.all([
    viaUri(tn, 'broadcast_tx_commit', `tx=${hexArg(txs[0]!)}`),
    viaPost(tn, 'broadcast_tx_commit', { tx: b64(txs[1]!) }),
    viaWs(tn, 'broadcast_tx_commit', { tx: b64(txs[2]!) }),
  ]);
  const fx = FIXTURES['broadcast_tx_commit'].result;
  for (const [via, res, tx] of [['URI', u.body.result, txs[0]!], ['JSON-RPC', p.body.result, txs[1]!], ['websocket', w.result, txs[2]!]] as const) {
    t.equal(res.hash, sha256Hex(tx), `${via}: hash`);
    t.equal(res.check_tx.code, 0, `${via}: CheckTx passed`);
    t.equal(res.check_tx.gas_wanted, '200000', `${via}: gas wanted is the tx's limit`);
    t.equal(res.tx_result.code, 0, `${via}: executed`);
    t.ok(res.tx_result.events.some((e: any) => e.type === 'transfer'), `${via}: bank transfer events`);
    // The SDK puts the messages' responses in `data` where the kvstore app has none.
    t.same(shape({ ...res, tx_result: { ...res.tx_result, data: null } }), shape(fx), `${via}: fixture shape (incl. events and attributes)`);
    // The tx is in the block of that height, and the result is the one stored for it.
    const height = BigInt(res.height);
    const block = tn.ctx.storage.blocks.loadBlock(height)!;
    const index = block.data.txs.findIndex((x) => Buffer.from(x).equals(Buffer.from(tx)));
    t.ok(index >= 0, `${via}: in block ${height}`);
    const stored = tn.ctx.storage.state.loadFinalizeBlockResponse(height)!.txResults[index]!;
    t.equal(res.tx_result.gas_used, stored.gasUsed.toString(), `${via}: the block's result`);
    t.equal(res.tx_result.log, stored.log);
    t.equal(res.tx_result.data, stored.data.length ? Buffer.from(stored.data).toString('base64') : null, `${via}: data base64`);
  }
});

t.test('broadcast_tx_commit: timeout, cache and subscription errors', async (t) => {
  const tn = await idleNode({ json: true, flags: { 'rpc.timeout_broadcast_tx_commit': '300ms' } });
  t.teardown(() => tn.close());

  await t.test('not included within timeout_broadcast_tx_commit', async (t) => {
    const t0 = Date.now();
    const a = transferTx();
    const b = transferTx();
    const c = transferTx();
    const [u, p, w] = await Promise.all([
      viaUri(tn, 'broadcast_tx_commit', `tx=${hexArg(a)}`),
      viaPost(tn, 'broadcast_tx_commit', { tx: b64(b) }),
      viaWs(tn, 'broadcast_tx_commit', { tx: b64(c) }),
    ]);
    t.ok(Date.now() - t0 >= 290, 'waited for the timeout');
    const text = 'timed out waiting for tx to be included in a block';
    t.same([u.status, u.body.id, u.body.error], [500, -1, { code: -32603, message: 'Internal error', data: text }], 'URI');
    t.same([p.status, p.body.id, p.body.error], [200, 1, { code: -32603, message: 'Internal error', data: text }], 'JSON-RPC');
    t.same([w.id, w.error], [2, { code: -32603, message: 'Internal error', data: text }], 'websocket');
    t.equal(tn.ctx.mempool.size(), 3, 'the txs stay in the mempool');
  });

  await t.test('a tx already seen: error on broadcastTxCommit', async (t) => {
    const tx = transferTx();
    t.equal((await tn.ctx.mempool.checkTx(tx)).response.code, 0);
    await err3(t, tn, 'broadcast_tx_commit', `tx=${hexArg(tx)}`, { tx: b64(tx) }, 'error on broadcastTxCommit: tx already exists in cache');
  });

  await t.test('the same tx twice at once (two connections): the second is a cache hit', async (t) => {
    const tx = transferTx();
    const first = viaPost(tn, 'broadcast_tx_commit', { tx: b64(tx) });
    // The first call's CheckTx has put the tx in the pool (and its cache) before the second comes.
    await until('the first call to check the tx', () => tn.ctx.mempool.has(txKey(tx)));
    const second = await viaPost(tn, 'broadcast_tx_commit', { tx: b64(tx) });
    t.same(second.body.error, { code: -32603, message: 'Internal error', data: 'error on broadcastTxCommit: tx already exists in cache' });
    t.equal((await first).body.error.data, 'timed out waiting for tx to be included in a block');
  });
});

t.test('broadcast_tx_commit: max_subscriptions_per_client counts the websocket subscriptions too', async (t) => {
  const tn = await idleNode({ json: true, flags: { 'rpc.timeout_broadcast_tx_commit': '300ms', 'rpc.max_subscriptions_per_client': 1 } });
  t.teardown(() => tn.close());
  const { ws } = await WsClient.connect(tn.rpcPort);
  t.teardown(() => ws?.close());
  ws!.call({ jsonrpc: '2.0', id: 'sub', method: 'subscribe', params: { query: "node.event='NewBlock'" } });
  t.same((await ws!.nextJson()).result, {}, 'subscribed once: the limit is reached');
  ws!.call({ jsonrpc: '2.0', id: 'c', method: 'broadcast_tx_commit', params: { tx: b64(transferTx()) } });
  t.same((await ws!.nextJson()).error, { code: -32603, message: 'Internal error', data: 'max_subscriptions_per_client 1 reached' });
  // Other connections are other clients.
  const other = await viaPost(tn, 'broadcast_tx_commit', { tx: b64(transferTx()) });
  t.equal(other.body.error.data, 'timed out waiting for tx to be included in a block');
});

t.test('broadcast_tx_commit: max_subscriptions_per_client 0 refuses every call', async (t) => {
  const tn = await idleNode({ json: true, flags: { 'rpc.max_subscriptions_per_client': 0 } });
  t.teardown(() => tn.close());
  const tx = transferTx();
  await err3(t, tn, 'broadcast_tx_commit', `tx=${hexArg(tx)}`, { tx: b64(tx) }, 'max_subscriptions_per_client 0 reached');
  t.equal(tn.ctx.mempool.size(), 0, 'refused before CheckTx');
});

t.test('broadcast_tx_commit: max_subscription_clients counts every client', async (t) => {
  // Two clients: the indexer service takes one, as on CometBFT's bus.
  // A waiting call holds its client slot for timeout_broadcast_tx_commit: long enough that the
  // slot is still held when the competing call comes, however loaded the machine.
  const tn = await idleNode({ json: true, flags: { 'rpc.timeout_broadcast_tx_commit': '3s', 'rpc.max_subscription_clients': 2 } });
  t.teardown(() => tn.close());
  const subs = subscriptionsFor(tn.ctx);
  const base = subs.numClients();
  t.equal(base, 1, 'the indexer service holds one client slot');
  // A waiting broadcast_tx_commit is a client.
  const first = viaPost(tn, 'broadcast_tx_commit', { tx: b64(transferTx()) });
  await until('the first call to hold a client slot', () => subs.numClients() > base);
  const second = await viaUri(tn, 'broadcast_tx_commit', `tx=${hexArg(transferTx())}`);
  t.same([second.status, second.body.error], [500, { code: -32603, message: 'Internal error', data: 'max_subscription_clients 2 reached' }]);
  await first;
  const again = await viaPost(tn, 'broadcast_tx_commit', { tx: b64(transferTx()) });
  t.equal(again.body.error.data, 'timed out waiting for tx to be included in a block', 'released when the call ended');
  // So is a websocket subscriber.
  const { ws } = await WsClient.connect(tn.rpcPort);
  t.teardown(() => ws?.close());
  ws!.call({ jsonrpc: '2.0', id: 'sub', method: 'subscribe', params: { query: "node.event='NewBlock'" } });
  t.same((await ws!.nextJson()).result, {});
  const third = await viaPost(tn, 'broadcast_tx_commit', { tx: b64(transferTx()) });
  t.equal(third.body.error.data, 'max_subscription_clients 2 reached');
  // And a waiting broadcast_tx_commit keeps a websocket from subscribing (the check works both ways).
  ws!.call({ jsonrpc: '2.0', id: 'unsub', method: 'unsubscribe_all', params: {} });
  t.same((await ws!.nextJson()).result, {});
  await until('the websocket to release its slot', () => subs.numClients() === base);
  const waiting = viaPost(tn, 'broadcast_tx_commit', { tx: b64(transferTx()) });
  await until('the waiting call to hold a client slot', () => subs.numClients() > base);
  ws!.call({ jsonrpc: '2.0', id: 'sub2', method: 'subscribe', params: { query: "node.event='NewBlock'" } });
  t.same((await ws!.nextJson()).error, { code: -32603, message: 'Internal error', data: 'max_subscription_clients 2 reached' }, 'websocket refused');
  await waiting;
});

t.test('broadcast_tx_commit: the Tx event of its hash ends the wait; a client gone away ends it too', async (t) => {
  // The real Mempool, EventBus and routes; the test publishes the Tx event the executor would.
  const ok: ResponseCheckTx = { code: 0, data: new Uint8Array(0), log: '', info: '', gasWanted: 3n, gasUsed: 1n, events: [], codespace: '' };
  const app = { checkTx: async () => ok };
  const bus = new EventBus();
  const rpc = { timeoutBroadcastTxCommit: 10_000, maxSubscriptionClients: 100, maxSubscriptionsPerClient: 5 };
  const ctx = { mempool: new CListMempool({}, { app }), app, bus, names: SPEC_NAMES, logger: nullLogger, config: { rpc, txIndex: { indexer: 'kv' } } } as unknown as NodeRpcContext;
  const commit = mempoolRoutes(ctx).find((r) => r.name === 'broadcast_tx_commit')!.handler;
  const rc = (signal: AbortSignal): RouteContext => ({ transport: 'websocket', id: 1, remoteAddr: '127.0.0.1', ws: undefined, signal });

  const tx = utf8('included');
  const pending = Promise.resolve(commit({ tx }, rc(new AbortController().signal)));
  await new Promise((r) => setImmediate(r));
  const result: ExecTxResult = { code: 0, data: Uint8Array.from([1]), log: 'done', info: '', gasWanted: 3n, gasUsed: 2n, events: [{ type: 'e', attributes: [{ key: 'k', value: 'v', index: true }] }], codespace: '' };
  // Another tx's event is ignored; ours ends the call.
  bus.publish({ type: 'Tx', data: { height: 6n, index: 0, tx: utf8('other'), result }, attributes: { 'tx.hash': [sha256Hex(utf8('other'))] } });
  bus.publish({ type: 'Tx', data: { height: 7n, index: 1, tx, result }, attributes: { 'tx.hash': [sha256Hex(tx)] } });
  t.same(await pending, {
    check_tx: { code: 0, data: null, log: '', info: '', gas_wanted: '3', gas_used: '1', events: [], codespace: '' },
    tx_result: { code: 0, data: 'AQ==', log: 'done', info: '', gas_wanted: '3', gas_used: '2', events: [{ type: 'e', attributes: [{ key: 'k', value: 'v', index: true }] }], codespace: '' },
    hash: sha256Hex(tx),
    height: '7',
  });
  t.equal(bus.listenerCount, 0, 'unsubscribed');

  const ac = new AbortController();
  const waiting = Promise.resolve(commit({ tx: utf8('never included') }, rc(ac.signal)));
  await new Promise((r) => setTimeout(r, 20));
  ac.abort();
  await t.rejects(waiting, { message: 'broadcast confirmation not received: context canceled' });
  t.equal(bus.listenerCount, 0, 'unsubscribed after the cancel');
});
