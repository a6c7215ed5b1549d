/**
 * Node RPC `validators` (cometbft: rpc/core/consensus.go Validators, env.go getHeight,
 * latestUncommittedHeight, validatePage, validatePerPage): the validator set of a height, by
 * default the next height's (store height + 1), paginated (per_page default 30, at most 100;
 * pages outside [1, N] are errors). Cacheable only with a height. Over URI, JSON-RPC and
 * websocket; validators shaped as the fixtures' validator_info plus proposer_priority.
 */
import t from 'tap';
import { FIXTURES, hexOf, b64, startNode, growTo, viaPost, ok3, err3, shapeDiff } from '../helpers/rpc3.js';

t.test('validators', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  const H = await growTo(tn, 3n);
  const me = tn.ctx.genesis.validators[0]!;
  const expectValidator = (v: any) => {
    const info = FIXTURES['status'].result.validator_info;
    t.same(shapeDiff(v, { ...info, proposer_priority: '0' }), [], 'validator shape: status validator_info + proposer_priority');
    t.same(
      [v.address, v.pub_key, v.voting_power, typeof v.proposer_priority],
      [hexOf(me.address), { type: 'consensus/PubKeyEd25519', value: b64(me.pubKey.bytes) }, me.power.toString(), 'string'],
    );
  };

  await t.test('default: the next height\'s set, not cacheable', async (t) => {
    const r = await ok3(t, tn, 'validators', {}, {}, false);
    t.same(Object.keys(r), ['block_height', 'validators', 'count', 'total']);
    t.same([r.block_height, r.count, r.total], [String(H + 1n), '1', '1'], 'block_height is store height + 1');
    t.equal(r.validators.length, 1);
    expectValidator(r.validators[0]);
  });

  await t.test('every height from 1 to the next one', async (t) => {
    for (let h = 1n; h <= H + 1n; h++) {
      const r = await ok3(t, tn, 'validators', { height: String(h) }, { height: String(h) }, true);
      t.same([r.block_height, r.count, r.total], [String(h), '1', '1'], `height ${h}`);
      expectValidator(r.validators[0]);
      if (h <= H) {
        const header = tn.ctx.storage.blocks.loadBlockMeta(h)!.header;
        t.equal(r.validators[0].address, hexOf(header.proposerAddress), `the proposer of block ${h} is in the set`);
      }
    }
    const positional = await viaPost(tn, 'validators', ['1', '1', '1']);
    t.same([positional.body.result.block_height, positional.body.result.count], ['1', '1'], 'positional params');
  });

  await t.test('pages', async (t) => {
    const p1 = await ok3(t, tn, 'validators', { page: '1', per_page: '1' }, { page: '1', per_page: '1' }, false);
    t.same([p1.count, p1.total, p1.validators.length], ['1', '1', 1]);
    for (const per of ['0', '-4', '1000', '9223372036854775807']) {
      const r = await ok3(t, tn, 'validators', { per_page: per }, { per_page: per }, false);
      t.same([r.count, r.total], ['1', '1'], `per_page ${per} is clamped, not an error`);
    }
    await err3(t, tn, 'validators', { page: '2' }, { page: '2' }, 'page should be within [1, 1] range, given 2');
    await err3(t, tn, 'validators', { page: '0' }, { page: '0' }, 'page should be within [1, 1] range, given 0');
    await err3(t, tn, 'validators', { page: '-1', per_page: '5' }, { page: '-1', per_page: '5' }, 'page should be within [1, 1] range, given -1');
    await err3(t, tn, 'validators', { page: '9223372036854775807' }, { page: '9223372036854775807' }, 'page should be within [1, 1] range, given 9223372036854775807');
  });

  await t.test('height errors', async (t) => {
    await err3(t, tn, 'validators', { height: '0' }, { height: '0' }, 'height must be greater than 0, but got 0');
    const over = String(H + 2n);
    await err3(t, tn, 'validators', { height: over }, { height: over }, `height ${over} must be less than or equal to the current blockchain height ${H + 1n}`);
    const b = tn.ctx.storage.blocks as unknown as { base: () => bigint };
    b.base = () => 2n;
    t.teardown(() => void delete (b as { base?: unknown }).base);
    await err3(t, tn, 'validators', { height: '1' }, { height: '1' }, 'height 1 is not available, lowest height is 2');
  });
});
