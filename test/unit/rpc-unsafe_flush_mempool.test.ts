/**
 * Node RPC `unsafe_flush_mempool` (cometbft: rpc/core/dev.go UnsafeFlushMempool; routes.go
 * AddUnsafeRoutes): served only with `[rpc] unsafe = true`; empties the mempool and its cache and
 * answers `{}`. Without `unsafe` the URI form is a plain 404 and JSON-RPC -32601.
 */
import t from 'tap';
import { viaPost, viaWs, nodeOk3 as ok3 } from '../helpers/rpc3.js';

import { transferTx, b64, idleNode } from '../helpers/mempool-tx.js';

t.test('unsafe_flush_mempool with [rpc] unsafe = true', async (t) => {
  const tn = await idleNode({ json: true, flags: { 'rpc.unsafe': true } });
  t.teardown(() => tn.close());
  const txs = [transferTx(), transferTx()];
  for (const tx of txs) t.equal((await viaPost(tn, 'broadcast_tx_sync', { tx: b64(tx) })).body.result.code, 0);
  t.equal(tn.ctx.mempool.size(), 2);

  const r = await ok3(t, tn, 'unsafe_flush_mempool', '', {});
  t.same([r.uri, r.post, r.ws], [{}, {}, {}], '{} over the three transports');
  t.same(r.cache, [null, null], 'not cacheable');
  t.equal(tn.ctx.mempool.size(), 0, 'mempool empty');
  t.equal(tn.ctx.mempool.sizeBytes(), 0);
  t.same((await viaPost(tn, 'unconfirmed_txs', {})).body.result, { n_txs: '0', total: '0', total_bytes: '0', txs: [] });
  // The cache went too: the same tx is accepted again, not "already exists in cache".
  const again = await viaPost(tn, 'broadcast_tx_sync', { tx: b64(txs[0]!) });
  t.same([again.body.error, again.body.result?.code], [undefined, 0]);
  t.equal(tn.ctx.mempool.size(), 1);
});

t.test('unsafe_flush_mempool is not served by default', async (t) => {
  const tn = await idleNode({ json: true });
  t.teardown(() => tn.close());
  const tx = transferTx();
  await viaPost(tn, 'broadcast_tx_sync', { tx: b64(tx) });
  const u = await fetch(`${tn.base}/unsafe_flush_mempool`);
  t.same([u.status, await u.text()], [404, '404 page not found\n'], 'URI: plain 404');
  const p = await viaPost(tn, 'unsafe_flush_mempool', {});
  t.same(p.body.error, { code: -32601, message: 'Method not found' }, 'JSON-RPC: -32601');
  const w = await viaWs(tn, 'unsafe_flush_mempool', {});
  t.same(w.error, { code: -32601, message: 'Method not found' }, 'websocket: -32601');
  t.equal(tn.ctx.mempool.size(), 1, 'nothing flushed');
});
