/** The in-process node harness itself: blocks come, status answers, close is clean. */
import t from 'tap';
import { startTestNode, waitHeight } from '../helpers/inproc.js';

t.test('in-process node makes blocks and serves status (blocks on the executor thread)', async (t) => {
  const tn = await startTestNode({ executor: 'thread' });
  t.teardown(() => tn.close());
  await waitHeight(tn, 3n);
  const res = (await fetch(`${tn.base}/status`).then((r) => r.json())) as any;
  t.ok(BigInt(res.result.sync_info.latest_block_height) >= 3n);
  t.equal(res.result.node_info.network, 'inproc-1');
  const blk = tn.ctx.storage.blocks.loadBlock(2n);
  t.equal(blk?.header.height, 2n, 'block 2 is stored');
  t.equal(tn.ctx.consensus.getState().chainId, 'inproc-1');
});

t.test('validators and params of the initial height are stored', async (t) => {
  const tn = await startTestNode();
  t.teardown(() => tn.close());
  await waitHeight(tn, 2n);
  const v1 = tn.ctx.storage.state.loadValidators(1n);
  t.ok(v1, 'validator set of height 1');
  const h1 = tn.ctx.storage.blocks.loadBlockMeta(1n)!.header;
  t.same(Buffer.from(v1!.hash()), Buffer.from(h1.validatorsHash), 'it hashes to block 1 validators_hash');
  t.ok(tn.ctx.storage.state.loadConsensusParams(1n), 'consensus params of height 1');
});
