/**
 * Node RPC `num_unconfirmed_txs` (cometbft: rpc/core/mempool.go NumUnconfirmedTxs): the mempool's
 * size as `n_txs` and `total`, its bytes as `total_bytes` (strings), and `txs: null`. Over URI,
 * JSON-RPC and websocket.
 */
import t from 'tap';
import { nodeViaUri as viaUri, viaPost, nodeOk3 as ok3, utf8 } from '../helpers/rpc3.js';

import { transferTx, b64, idleNode } from '../helpers/mempool-tx.js';

t.test('num_unconfirmed_txs', async (t) => {
  const tn = await idleNode({ json: true });
  t.teardown(() => tn.close());

  await t.test('empty mempool', async (t) => {
    const r = await ok3(t, tn, 'num_unconfirmed_txs', '', {});
    const want = { n_txs: '0', total: '0', total_bytes: '0', txs: null };
    t.same([r.uri, r.post, r.ws], [want, want, want]);
    t.same(Object.keys(r.uri), ['n_txs', 'total', 'total_bytes', 'txs'], 'ResultUnconfirmedTxs field order');
    t.equal(r.uri.txs, null, 'txs is null, not []');
    t.same(r.cache, [null, null], 'not cacheable');
  });

  await t.test('counts and bytes follow the mempool', async (t) => {
    const txs = [transferTx(), transferTx(10), transferTx(20)];
    for (const tx of txs) await viaPost(tn, 'broadcast_tx_sync', { tx: b64(tx) });
    const r = await ok3(t, tn, 'num_unconfirmed_txs', '', {});
    const want = { n_txs: '3', total: '3', total_bytes: String(txs.reduce((n, x) => n + x.length, 0)), txs: null };
    t.same([r.uri, r.post, r.ws], [want, want, want]);
    // A refused tx does not count.
    await viaPost(tn, 'broadcast_tx_sync', { tx: b64(utf8('not json')) });
    t.equal((await viaUri(tn, 'num_unconfirmed_txs')).body.result.n_txs, '3');
  });

  await t.test('no parameters', async (t) => {
    const r = await viaPost(tn, 'num_unconfirmed_txs', ['1']);
    t.same(r.body.error, { code: -32602, message: 'Invalid params', data: 'error converting json params to arguments: expected 0 parameters ([]), got 1 ([[34 49 34]])' });
  });
});
