/**
 * Node RPC `header_by_hash` (cometbft: rpc/core/blocks.go HeaderByHash): the header of the block
 * with that hash; `hash` is HexBytes (hex without 0x in JSON-RPC, 0x-hex over URI), unlike
 * block_by_hash's base64. An unknown hash answers `header: null`. Always cacheable (routes.go).
 * Over URI, JSON-RPC and websocket, shapes checked against the `block_at_height_10` fixture.
 */
import t from 'tap';
import { FIXTURES, hexOf, b64, startNode, growTo, viaUri, viaPost, ok3, shapeDiff } from '../helpers/rpc3.js';

t.test('header_by_hash', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  const H = await growTo(tn, 4n);
  const blocks = tn.ctx.storage.blocks;
  const fixture = { header: FIXTURES['block_at_height_10'].result.block.header };

  await t.test('each stored block by its hash', async (t) => {
    for (let h = 1n; h <= H; h++) {
      const hash = blocks.loadBlockMeta(h)!.blockId.hash;
      const r = await ok3(t, tn, 'header_by_hash', { hash: `0x${hexOf(hash)}` }, { hash: hexOf(hash) }, true);
      const byHeight = await viaUri(tn, 'header', { height: String(h) });
      t.same(r, byHeight.body.result, `header ${h}`);
      t.same(shapeDiff(r, fixture, { mayOmit: ['$.header.version.app'] }), [], 'fixture shape');
    }
    const hash = blocks.loadBlockMeta(3n)!.blockId.hash;
    const lower = await viaPost(tn, 'header_by_hash', { hash: Buffer.from(hash).toString('hex') });
    t.equal(lower.body.result.header.height, '3', 'lower-case hex in JSON-RPC');
    const positional = await viaPost(tn, 'header_by_hash', [hexOf(hash)]);
    t.equal(positional.body.result.header.height, '3', 'positional params');
  });

  await t.test('unknown or empty hash: header null', async (t) => {
    t.same(await ok3(t, tn, 'header_by_hash', { hash: `0x${'CD'.repeat(32)}` }, { hash: 'CD'.repeat(32) }, true), { header: null });
    t.same(await ok3(t, tn, 'header_by_hash', {}, {}, true), { header: null }, 'no hash');
  });

  await t.test('the hash is HexBytes: base64 is invalid params', async (t) => {
    const hash = blocks.loadBlockMeta(2n)!.blockId.hash;
    const r = await viaPost(tn, 'header_by_hash', { hash: b64(hash) });
    t.equal(r.body.error?.code, -32602);
    t.match(r.body.error?.data, /^error converting json params to arguments: encoding\/hex: /);
  });
});
