/**
 * Node RPC `consensus_params` (cometbft: rpc/core/consensus.go ConsensusParams, env.go getHeight,
 * latestUncommittedHeight): the consensus params of a height, by default the next height's
 * (store height + 1), int64 values as strings. Cacheable only with a height. Over URI, JSON-RPC
 * and websocket; this chain runs the default params, so they equal the `consensus_params`
 * fixture value for value.
 */
import t from 'tap';
import { FIXTURES, startNode, growTo, viaPost, ok3, err3, shapeDiff } from '../helpers/rpc3.js';

t.test('consensus_params', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  const H = await growTo(tn, 3n);
  const fixture = FIXTURES['consensus_params'].result;

  await t.test('default: the next height\'s params, not cacheable', async (t) => {
    const r = await ok3(t, tn, 'consensus_params', {}, {}, false);
    t.equal(r.block_height, String(H + 1n));
    t.same(r.consensus_params, fixture.consensus_params, 'default params as the fixture');
    t.same(shapeDiff(r, fixture), [], 'fixture shape');
  });

  await t.test('every height from 1 to the next one', async (t) => {
    for (let h = 1n; h <= H + 1n; h++) {
      const r = await ok3(t, tn, 'consensus_params', { height: String(h) }, { height: String(h) }, true);
      t.same(r, { block_height: String(h), consensus_params: fixture.consensus_params }, `height ${h}`);
    }
    const positional = await viaPost(tn, 'consensus_params', ['2']);
    t.equal(positional.body.result.block_height, '2', 'positional params');
  });

  await t.test('height errors', async (t) => {
    await err3(t, tn, 'consensus_params', { height: '0' }, { height: '0' }, 'height must be greater than 0, but got 0');
    await err3(t, tn, 'consensus_params', { height: '-7' }, { height: '-7' }, 'height must be greater than 0, but got -7');
    const over = String(H + 2n);
    await err3(t, tn, 'consensus_params', { height: over }, { height: over }, `height ${over} must be less than or equal to the current blockchain height ${H + 1n}`);
    const b = tn.ctx.storage.blocks as unknown as { base: () => bigint };
    b.base = () => 3n;
    t.teardown(() => void delete (b as { base?: unknown }).base);
    await err3(t, tn, 'consensus_params', { height: '2' }, { height: '2' }, 'height 2 is not available, lowest height is 3');
  });
});
