/**
 * Node RPC `tx_search` (cometbft: rpc/core/tx.go TxSearch, env.go validatePage/validatePerPage):
 * txs whose events match a query, sorted by (height, index) asc by default or desc, paginated
 * (per_page default 30, at most 100), `total_count` the full match count, proofs with `prove`;
 * errors for order_by, pages, queries (512-byte limit, syntax) and a disabled indexer. Not
 * cacheable (routes.go). Real bank transfers on a real node, over URI, JSON-RPC and websocket;
 * shapes checked against the `tx_search_with_prove` fixture.
 */
import t, { type Test } from 'tap';
import { waitHeight } from '../helpers/inproc.js';
import { createHash } from 'node:crypto';
import { FIXTURES, hexOf, b64, startNode, ALICE, sendTx, settle, viaUri, ok3, err3, shapeDiff } from '../helpers/rpc3.js';

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
