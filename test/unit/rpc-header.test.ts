/**
 * Node RPC `header` (cometbft: rpc/core/blocks.go Header, env.go getHeight): the header of a
 * height from its block meta (default: the store height); CometBFT's height errors. Cacheable
 * only with a height (routes.go Cacheable("height")). Over URI, JSON-RPC and websocket, shapes
 * checked against the header of the `block_at_height_10` fixture.
 */
import t from 'tap';
import { headerJSON } from '../../src/types/json.js';
import { FIXTURES, startNode, growTo, viaUri, viaPost, ok3, err3, shapeDiff } from '../helpers/rpc3.js';

t.test('header', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  const H = await growTo(tn, 4n);
  const blocks = tn.ctx.storage.blocks;
  const fixture = { header: FIXTURES['block_at_height_10'].result.block.header };

  await t.test('latest by default, not cacheable', async (t) => {
    const r = await ok3(t, tn, 'header', {}, {}, false);
    t.equal(r.header.height, String(H));
    t.same(Object.keys(r), ['header']);
    t.same(shapeDiff(r, fixture, { mayOmit: ['$.header.version.app'] }), [], 'fixture shape');
  });

  await t.test('each height: the block\'s header', async (t) => {
    for (let h = 1n; h <= H; h++) {
      const r = await ok3(t, tn, 'header', { height: String(h) }, { height: String(h) }, true);
      const block = await viaUri(tn, 'block', { height: String(h) });
      t.same(r.header, block.body.result.block.header, `header ${h} = block ${h}'s header`);
      t.same(r.header, headerJSON(blocks.loadBlockMeta(h)!.header));
    }
    const positional = await viaPost(tn, 'header', ['2']);
    t.equal(positional.body.result.header.height, '2', 'positional params');
  });

  await t.test('height errors', async (t) => {
    await err3(t, tn, 'header', { height: '0' }, { height: '0' }, 'height must be greater than 0, but got 0');
    await err3(t, tn, 'header', { height: '-1' }, { height: '-1' }, 'height must be greater than 0, but got -1');
    const over = String(H + 1n);
    await err3(t, tn, 'header', { height: over }, { height: over }, `height ${over} must be less than or equal to the current blockchain height ${H}`);
    const b = blocks as unknown as { base: () => bigint };
    b.base = () => 2n;
    t.teardown(() => void delete (b as { base?: unknown }).base);
    await err3(t, tn, 'header', { height: '1' }, { height: '1' }, 'height 1 is not available, lowest height is 2');
  });
});
