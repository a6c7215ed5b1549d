/**
 * Node RPC `block_by_hash` (cometbft: rpc/core/blocks.go BlockByHash): the block with that hash
 * (`hash` is []byte: base64 in JSON-RPC, 0x-hex over URI); an unknown hash is no error but the
 * zero BlockID and `block: null`. Always cacheable (routes.go). Over URI, JSON-RPC and websocket,
 * shapes checked against the `block_at_height_10` fixture.
 */
import t from 'tap';
import { FIXTURES, hexOf, b64, startNode, growTo, viaUri, viaPost, ok3, shapeDiff } from '../helpers/rpc3.js';

t.test('block_by_hash', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  const H = await growTo(tn, 4n);
  const blocks = tn.ctx.storage.blocks;
  const ZERO = { block_id: { hash: '', parts: { total: 0, hash: '' } }, block: null };

  await t.test('every stored block by its hash equals block?height', async (t) => {
    for (let h = 1n; h <= H; h++) {
      const hash = blocks.loadBlockMeta(h)!.blockId.hash;
      const r = await ok3(t, tn, 'block_by_hash', { hash: `0x${hexOf(hash)}` }, { hash: b64(hash) }, true);
      const byHeight = await viaUri(tn, 'block', { height: String(h) });
      t.same(r, byHeight.body.result, `block ${h}`);
      t.equal(r.block_id.hash, hexOf(hash));
      t.same(shapeDiff(r, FIXTURES['block_at_height_10'].result, { mayOmit: ['$.block.header.version.app'] }), [], 'fixture shape');
    }
    const hash = blocks.loadBlockMeta(2n)!.blockId.hash;
    const lower = await viaUri(tn, 'block_by_hash', { hash: `0x${Buffer.from(hash).toString('hex')}` });
    t.equal(lower.body.result.block.header.height, '2', 'URI hex may be lower case');
    const positional = await viaPost(tn, 'block_by_hash', [b64(hash)]);
    t.equal(positional.body.result.block.header.height, '2', 'positional params');
  });

  await t.test('unknown or empty hash: zero block id and null block, not an error', async (t) => {
    const unknown = new Uint8Array(32).fill(0xab);
    t.same(await ok3(t, tn, 'block_by_hash', { hash: `0x${hexOf(unknown)}` }, { hash: b64(unknown) }, true), ZERO);
    t.same(await ok3(t, tn, 'block_by_hash', { hash: '0xAB' }, { hash: 'qw==' }, true), ZERO, 'a short hash');
    t.same(await ok3(t, tn, 'block_by_hash', {}, {}, true), ZERO, 'no hash at all');
  });

  await t.test('the hash is []byte: hex is not base64 in JSON-RPC', async (t) => {
    const hash = blocks.loadBlockMeta(2n)!.blockId.hash;
    const r = await viaPost(tn, 'block_by_hash', { hash: hexOf(hash) });
    // 64 hex chars are valid base64 of other bytes: a miss, not an error.
    t.same(r.body.result, ZERO);
    const bad = await viaPost(tn, 'block_by_hash', { hash: 'AB#=' });
    t.equal(bad.body.error?.code, -32602, 'not base64: invalid params');
  });
});
