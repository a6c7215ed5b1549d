/**
 * Node RPC `blockchain` (cometbft: rpc/core/blocks.go BlockchainInfo, filterMinMax): block metas
 * from maxHeight down to minHeight, at most 20, `last_height` the store height; 0 means default;
 * min raised to the base and to max-19, max lowered to the store height; errors for negative
 * heights and min > max. Always cacheable (routes.go). Over URI, JSON-RPC and websocket, shapes
 * checked against the `blockchain_from_1_to_10` fixture.
 */
import t from 'tap';
import { blockMetaJSON } from '../../src/types/json.js';
import { FIXTURES, startNode, growTo, ok3, err3, shapeDiff } from '../helpers/rpc3.js';

t.test('blockchain', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  const H = await growTo(tn, 23n);
  const blocks = tn.ctx.storage.blocks;
  const heights = (r: any) => r.block_metas.map((m: any) => Number(m.header.height));
  const range = (hi: number, lo: number) => Array.from({ length: hi - lo + 1 }, (_, i) => hi - i);

  await t.test('defaults: the 20 newest metas, highest first', async (t) => {
    const r = await ok3(t, tn, 'blockchain', {}, {}, true);
    t.equal(r.last_height, String(H));
    t.same(heights(r), range(Number(H), Number(H) - 19));
    // Each meta is the stored one (block id, size, header, tx count).
    for (const m of r.block_metas) t.same(m, blockMetaJSON(blocks.loadBlockMeta(BigInt(m.header.height))!), `meta ${m.header.height} as stored`);
    t.same(shapeDiff(r, FIXTURES['blockchain_from_1_to_10'].result, { mayOmit: ['$.block_metas[].header.version.app'] }), [], 'fixture shape');
  });

  await t.test('explicit ranges', async (t) => {
    const one = await ok3(t, tn, 'blockchain', { minHeight: '1', maxHeight: '10' }, { minHeight: '1', maxHeight: '10' }, true);
    t.same(heights(one), range(10, 1), '1..10 as in the fixture');
    t.equal(one.last_height, String(H));
    t.same(shapeDiff(one, FIXTURES['blockchain_from_1_to_10'].result, { mayOmit: ['$.block_metas[].header.version.app'] }), []);
    const withTxs = one.block_metas.find((m: any) => m.num_txs !== '0');
    t.ok(withTxs, 'a block with a tx is among them');
    t.equal(withTxs.num_txs, String(blocks.loadBlock(BigInt(withTxs.header.height))!.data.txs.length));

    const minOnly = await ok3(t, tn, 'blockchain', { minHeight: '2' }, { minHeight: '2' }, true);
    t.same(heights(minOnly), range(Number(H), Math.max(2, Number(H) - 19)), 'min only: max is the store height, still 20 at most');
    const maxOnly = await ok3(t, tn, 'blockchain', { maxHeight: '5' }, { maxHeight: '5' }, true);
    t.same(heights(maxOnly), range(5, 1), 'max only: min defaults to 1');
    const past = await ok3(t, tn, 'blockchain', { minHeight: '3', maxHeight: '100000' }, { minHeight: '3', maxHeight: '100000' }, true);
    t.same(heights(past), range(Number(H), Math.max(3, Number(H) - 19)), 'max beyond the store is lowered to it');
    const single = await ok3(t, tn, 'blockchain', { minHeight: '7', maxHeight: '7' }, ['7', '7'], true);
    t.same(heights(single), [7], 'positional params, one meta');
  });

  await t.test('a pruned store: min is raised to the base', async (t) => {
    const b = blocks as unknown as { base: () => bigint };
    b.base = () => 6n;
    t.teardown(() => void delete (b as { base?: unknown }).base);
    const r = await ok3(t, tn, 'blockchain', { minHeight: '1', maxHeight: '10' }, { minHeight: '1', maxHeight: '10' }, true);
    t.same(heights(r), range(10, 6));
    await err3(t, tn, 'blockchain', { minHeight: '1', maxHeight: '4' }, { minHeight: '1', maxHeight: '4' }, "min height 6 can't be greater than max height 4");
  });

  await t.test('errors', async (t) => {
    await err3(t, tn, 'blockchain', { minHeight: '-1' }, { minHeight: '-1' }, 'heights must be non-negative');
    await err3(t, tn, 'blockchain', { maxHeight: '-5' }, { maxHeight: '-5' }, 'heights must be non-negative');
    await err3(t, tn, 'blockchain', { minHeight: '9', maxHeight: '4' }, { minHeight: '9', maxHeight: '4' }, "min height 9 can't be greater than max height 4");
    const over = String(H + 5n);
    await err3(t, tn, 'blockchain', { minHeight: over }, { minHeight: over }, `min height ${over} can't be greater than max height ${H}`);
  });
});
