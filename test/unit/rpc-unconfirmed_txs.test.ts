/**
 * Node RPC `unconfirmed_txs` (cometbft: rpc/core/mempool.go UnconfirmedTxs; env.go
 * validatePerPage): the first `limit` txs of the mempool in arrival order (absent or < 1 → 30,
 * above 100 → 100, never an error), `n_txs` their count, `total` the mempool size, `total_bytes`
 * its bytes, all as strings, `txs` base64 (`[]` when empty). Over URI, JSON-RPC and websocket.
 */
import t from 'tap';
import { nodeViaUri as viaUri, viaPost, viaWs, nodeOk3 as ok3 } from '../helpers/rpc3.js';

import { transferTx, b64, idleNode } from '../helpers/mempool-tx.js';

t.test('unconfirmed_txs', async (t) => {
  const tn = await idleNode({ json: true });
  t.teardown(() => tn.close());

  await t.test('empty mempool: txs is [] (not null)', async (t) => {
    const r = await ok3(t, tn, 'unconfirmed_txs', '', {});
    const want = { n_txs: '0', total: '0', total_bytes: '0', txs: [] };
    t.same([r.uri, r.post, r.ws], [want, want, want]);
    t.same(Object.keys(r.uri), ['n_txs', 'total', 'total_bytes', 'txs'], 'ResultUnconfirmedTxs field order');
    t.same(r.cache, [null, null], 'not cacheable');
  });

  const txs: Uint8Array[] = [];
  for (let i = 0; i < 105; i++) {
    const tx = transferTx();
    t.equal((await tn.ctx.mempool.checkTx(tx)).response.code, 0);
    txs.push(tx);
  }
  const bytes = String(txs.reduce((n, x) => n + x.length, 0));
  const first = (n: number) => txs.slice(0, n).map(b64);

  await t.test('a limit: the first txs in arrival order, total and bytes of the whole pool', async (t) => {
    const r = await ok3(t, tn, 'unconfirmed_txs', 'limit=2', { limit: '2' });
    const want = { n_txs: '2', total: '105', total_bytes: bytes, txs: first(2) };
    t.same([r.uri, r.post, r.ws], [want, want, want]);
    const pos = await viaWs(tn, 'unconfirmed_txs', ['3']);
    t.same(pos.result.txs, first(3), 'positional params');
  });

  await t.test('limit defaults and bounds: absent, 0 and negative give 30; above 100 gives 100', async (t) => {
    for (const [q, p, n] of [['', {}, 30], ['limit=0', { limit: '0' }, 30], ['limit=-5', { limit: '-5' }, 30], ['limit=1000', { limit: '1000' }, 100], ['limit=100', { limit: '100' }, 100], ['limit=99', { limit: '99' }, 99]] as const) {
      const r = await ok3(t, tn, 'unconfirmed_txs', q, p);
      t.same([r.uri.n_txs, r.post.n_txs, r.ws.n_txs], [String(n), String(n), String(n)], `${q || 'no limit'}: ${n}`);
      t.same(r.uri.txs, first(n));
      t.equal(r.uri.total, '105');
    }
  });

  await t.test('limit must be an integer (a JSON string in JSON-RPC)', async (t) => {
    const p = await viaPost(tn, 'unconfirmed_txs', { limit: 2 });
    t.same(p.body.error, { code: -32602, message: 'Invalid params', data: 'error converting json params to arguments: invalid 64-bit integer encoding "2", expected string' });
    const u = await viaUri(tn, 'unconfirmed_txs', 'limit=0x10');
    t.same([u.status, u.body.error?.code, u.body.error?.data], [500, -32602, "error converting http params to arguments: got a hex string arg, but expected 'int'"]);
  });
});
