/**
 * Node RPC `broadcast_tx_async` (cometbft: rpc/core/mempool.go BroadcastTxAsync; mempool
 * clist_mempool.go CheckTx; cometbft/cometbft:mempool/clist_mempool.go): answers after the mempool's local checks with
 * `{code:0,data:"",log:"",codespace:"",hash}` without waiting for the app's CheckTx; the local
 * refusals (cache, too large, full) are -32603 with the plain error text. Over URI, JSON-RPC and
 * websocket; shape checked against the `broadcast_tx_async` fixture.
 */
import type { ResponseCheckTx } from '../../src/abci/types.js';
import { EventBus } from '../../src/events/bus.js';
import { nullLogger } from '../../src/log.js';
import { CListMempool } from '../../src/mempool/clist_mempool.js';
import { SPEC_NAMES } from '../../src/names/index.js';
import type { NodeRpcContext } from '../../src/rpc/node/context.js';
import { mempoolRoutes } from '../../src/rpc/node/methods/info-mempool.js';
import type { RouteContext } from '../../src/rpc/node/routes.js';
import t from 'tap';
import { FIXTURES, nodeViaUri as viaUri, viaPost, viaWs, nodeOk3 as ok3, nodeErr3 as err3, shape, sha256Hex, utf8 } from '../helpers/rpc3.js';

import { transferTx, b64, hexArg, idleNode } from '../helpers/mempool-tx.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('broadcast_tx_async: code 0 and the hash even when CheckTx will fail', async (t) => {
  const tn = await idleNode();
  t.teardown(() => tn.close());
  const tx = utf8('name=satoshi');
  const r = await ok3(t, tn, 'broadcast_tx_async', 'tx="name=satoshi"', { tx: b64(tx) });
  const want = { code: 0, data: '', log: '', codespace: '', hash: sha256Hex(tx) };
  t.same(r.uri, want, 'URI');
  t.same(r.post, want, 'JSON-RPC');
  t.same(r.ws, want, 'websocket');
  t.same(Object.keys(r.uri), ['code', 'data', 'log', 'codespace', 'hash'], 'ResultBroadcastTx field order');
  t.same(shape(r.uri), shape(FIXTURES['broadcast_tx_async'].result), 'fixture shape');
  t.same(r.cache, [null, null], 'not cacheable');
  await sleep(20);
  t.equal(tn.ctx.mempool.size(), 0, 'the app refused it afterwards: not in the mempool');
});

t.test('broadcast_tx_async with txs the app accepts', async (t) => {
  const tn = await idleNode({ json: true, flags: { 'mempool.max_tx_bytes': 400 } });
  t.teardown(() => tn.close());

  await t.test('the txs reach the mempool', async (t) => {
    const txs = [transferTx(), transferTx(), transferTx()];
    const [u, p, w] = await Promise.all([
      viaUri(tn, 'broadcast_tx_async', `tx=${hexArg(txs[0]!)}`),
      viaPost(tn, 'broadcast_tx_async', { tx: b64(txs[1]!) }),
      viaWs(tn, 'broadcast_tx_async', { tx: b64(txs[2]!) }),
    ]);
    t.same([u.body.result.hash, p.body.result.hash, w.result.hash], txs.map(sha256Hex));
    await sleep(20);
    t.equal(tn.ctx.mempool.size(), 3);
  });

  await t.test('local refusals are errors: in cache, too large', async (t) => {
    const tx = transferTx();
    await viaPost(tn, 'broadcast_tx_async', { tx: b64(tx) });
    await err3(t, tn, 'broadcast_tx_async', `tx=${hexArg(tx)}`, { tx: b64(tx) }, 'tx already exists in cache');
    const big = transferTx(400);
    await err3(t, tn, 'broadcast_tx_async', `tx=${hexArg(big)}`, { tx: b64(big) }, `Tx too large. Max size is 400, but got ${big.length}`);
  });

  await t.test('a missing tx is the empty tx (Go zero value), refused by the app later', async (t) => {
    const r = await viaPost(tn, 'broadcast_tx_async', {});
    t.same(r.body.result, { code: 0, data: '', log: '', codespace: '', hash: sha256Hex(new Uint8Array(0)) });
  });
});

t.test('broadcast_tx_async: a full mempool is an error', async (t) => {
  const tn = await idleNode({ json: true, flags: { 'mempool.size': 1 } });
  t.teardown(() => tn.close());
  const first = transferTx();
  await viaPost(tn, 'broadcast_tx_async', { tx: b64(first) });
  await sleep(20);
  const next = transferTx();
  await err3(t, tn, 'broadcast_tx_async', `tx=${hexArg(next)}`, { tx: b64(next) }, `mempool is full: number of txs 1 (max: 1), total txs bytes ${first.length} (max: 1073741824)`);
});

t.test('broadcast_tx_async does not wait for the app; broadcast_tx_sync does', async (t) => {
  // The real Mempool and routes over an app whose CheckTx fails, and finishes only when the test
  // opens its gate: the order of events proves who waited, whatever the machine's load.
  let open: () => void = () => {};
  let gate = new Promise<void>((r) => (open = r));
  let finished = 0;
  const slow = (): Promise<ResponseCheckTx> =>
    gate.then(() => {
      finished++;
      return { code: 5, data: new Uint8Array(0), log: 'no', info: '', gasWanted: 0n, gasUsed: 0n, events: [], codespace: 'x' };
    });
  const app = { checkTx: slow };
  const mempool = new CListMempool({}, { app });
  const ctx = { mempool, app, bus: new EventBus(), names: SPEC_NAMES, logger: nullLogger, config: { rpc: {} } } as unknown as NodeRpcContext;
  const routes = mempoolRoutes(ctx);
  const rc: RouteContext = { transport: 'jsonrpc', id: 1, remoteAddr: '127.0.0.1', ws: undefined, signal: new AbortController().signal };
  const async = routes.find((r) => r.name === 'broadcast_tx_async')!.handler;
  const sync = routes.find((r) => r.name === 'broadcast_tx_sync')!.handler;
  t.same(await async({ tx: utf8('a') }, rc), { code: 0, data: '', log: '', codespace: '', hash: sha256Hex(utf8('a')) });
  t.equal(finished, 0, 'async answered while CheckTx was still running');
  // While that CheckTx is still running its key is cached: a resubmission is refused.
  await t.rejects(Promise.resolve(async({ tx: utf8('a') }, rc)), { message: 'tx already exists in cache' });
  let syncDone = false;
  const pending = Promise.resolve(sync({ tx: utf8('b') }, rc)).then((r) => {
    syncDone = true;
    return r;
  });
  await sleep(50);
  t.equal(syncDone, false, 'sync is still waiting for CheckTx');
  open();
  t.equal(((await pending) as { code: number }).code, 5, "sync answers with CheckTx's code");
  t.equal(finished, 2, 'after both CheckTx calls finished');
  // The failed tx left the cache (keep-invalid-txs-in-cache is off): it may be sent again.
  gate = Promise.resolve();
  t.same(await async({ tx: utf8('a') }, rc), { code: 0, data: '', log: '', codespace: '', hash: sha256Hex(utf8('a')) });
});
