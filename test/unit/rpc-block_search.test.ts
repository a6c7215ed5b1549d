/**
 * Node RPC `block_search` (cometbft: rpc/core/blocks.go BlockSearch, env.go validatePage/
 * validatePerPage): blocks whose FinalizeBlock events match a query, desc by height by default,
 * paginated (per_page default 30, at most 100), `total_count` the full match count; errors for
 * order_by, pages, query syntax and a disabled indexer. Not cacheable (routes.go). Over URI,
 * JSON-RPC and websocket; shapes checked against the `block_search` fixture.
 */
import t, { type Test } from 'tap';
import { FIXTURES, startNode, growTo, viaUri, ok3, err3, shapeDiff } from '../helpers/rpc3.js';

t.test('block_search', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  const H = Number(await growTo(tn, 7n));
  const q = (query: string, extra: Record<string, string> = {}) => ({
    uri: Object.fromEntries(Object.entries({ query, ...extra }).map(([k, v]) => [k, k === 'page' || k === 'per_page' ? v : JSON.stringify(v)])),
    params: { query, ...extra },
  });
  const search = async (t: Test, query: string, extra: Record<string, string> = {}) => {
    const a = q(query, extra);
    return ok3(t, tn, 'block_search', a.uri, a.params, false);
  };
  const heights = (r: any) => r.blocks.map((b: any) => Number(b.block.header.height));
  const range = (hi: number, lo: number) => Array.from({ length: hi - lo + 1 }, (_, i) => hi - i);

  await t.test('desc by default; entries are block results', async (t) => {
    const r = await search(t, 'block.height >= 2');
    t.equal(r.total_count, String(H - 1));
    t.same(heights(r), range(H, 2), 'highest first');
    t.same(shapeDiff(r, FIXTURES['block_search'].result, { mayOmit: ['$.blocks[].block.header.version.app'] }), [], 'fixture shape');
    for (const b of r.blocks.slice(0, 3)) {
      const one = await viaUri(tn, 'block', { height: b.block.header.height });
      t.same(b, one.body.result, `entry ${b.block.header.height} = block?height`);
    }
    const desc = await search(t, 'block.height >= 2', { order_by: 'desc' });
    t.same(desc, r, 'order_by desc = default');
    const asc = await search(t, 'block.height >= 2', { order_by: 'asc' });
    t.same(heights(asc), range(H, 2).reverse(), 'asc');
  });

  await t.test('queries', async (t) => {
    t.same(heights(await search(t, 'block.height = 3')), [3], 'one height');
    t.same(heights(await search(t, 'block.height > 2 AND block.height < 5')), [4, 3], 'a range');
    t.same(await search(t, "mint.amount = '1'"), { blocks: [], total_count: '0' }, 'no block events on this chain: [] and 0');
    const long = await search(t, `block.height > 0 AND block.height > 0 AND ${'x'.repeat(600)} EXISTS`);
    t.equal(long.total_count, '0', 'no 512-byte query limit on block_search (CometBFT)');
  });

  await t.test('pages', async (t) => {
    const p2 = await search(t, 'block.height >= 1', { page: '2', per_page: '3' });
    t.same([p2.total_count, heights(p2)], [String(H), range(H - 3, H - 5)]);
    const clamp = await search(t, 'block.height >= 1', { per_page: '1000' });
    t.equal(clamp.blocks.length, H, 'per_page above 100 is clamped');
    const zero = await search(t, 'block.height >= 1', { per_page: '-1' });
    t.equal(zero.blocks.length, H, 'per_page below 1 means 30');
  });

  await t.test('errors', async (t) => {
    const bad = async (query: string, extra: Record<string, string>, data: string | RegExp) => {
      const a = q(query, extra);
      await err3(t, tn, 'block_search', a.uri, a.params, data);
    };
    const pages = Math.ceil(H / 3);
    await bad('block.height >= 1', { page: String(pages + 1), per_page: '3' }, `page should be within [1, ${pages}] range, given ${pages + 1}`);
    await bad('block.height >= 1', { page: '0' }, 'page should be within [1, 1] range, given 0');
    await bad("mint.amount = '1'", { page: '2' }, 'page should be within [1, 1] range, given 2');
    await bad('block.height >= 1', { page: '9223372036854775807' }, 'page should be within [1, 1] range, given 9223372036854775807');
    await bad('block.height >= 1', { order_by: 'newest' }, 'expected order_by to be either `asc` or `desc` or empty');
    await bad('block.height = ', {}, /^offset \d+: /);
    const ctx = tn.ctx as { blockIndexer: unknown };
    const saved = ctx.blockIndexer;
    ctx.blockIndexer = null;
    t.teardown(() => void (ctx.blockIndexer = saved));
    await bad('block.height >= 1', {}, 'block indexing is disabled');
  });
});
