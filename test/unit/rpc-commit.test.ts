/**
 * Node RPC `commit` (cometbft: rpc/core/blocks.go Commit): the signed header of a height; at the
 * store height the commit is the one this node saw (`canonical: false`), below it the canonical
 * commit carried by block h+1 (`canonical: true`). CometBFT's height errors. Cacheable only with
 * a height (routes.go Cacheable("height")), even at the latest height. Over URI, JSON-RPC and
 * websocket, shapes checked against the `commit_at_height_10` fixture.
 */
import t from 'tap';
import { waitHeight } from '../helpers/inproc.js';
import { FIXTURES, hexOf, startNode, sendTx, settle, growTo, viaUri, ok3, err3, shapeDiff } from '../helpers/rpc3.js';

t.test('commit', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  let H = await growTo(tn, 4n);
  const fixture = FIXTURES['commit_at_height_10'].result;
  let seen: any;

  await t.test('latest: the seen commit, canonical false', async (t) => {
    const r = await ok3(t, tn, 'commit', {}, {}, false);
    t.equal(r.canonical, false);
    t.equal(r.signed_header.header.height, String(H));
    t.equal(r.signed_header.commit.height, String(H));
    t.equal(r.signed_header.commit.block_id.hash, hexOf(tn.ctx.storage.blocks.loadBlockMeta(H)!.blockId.hash), 'commits to the block at H');
    t.equal(r.signed_header.commit.signatures.length, 1);
    t.same(
      [r.signed_header.commit.signatures[0].block_id_flag, r.signed_header.commit.signatures[0].validator_address],
      [2, hexOf(tn.ctx.validator.address)],
      'our validator signed (flag COMMIT)',
    );
    t.same(shapeDiff(r, fixture, { mayOmit: ['$.signed_header.header.version.app'] }), [], 'fixture shape');
    const pinned = await ok3(t, tn, 'commit', { height: String(H) }, { height: String(H) }, true);
    t.same(pinned, r, 'the same with the latest height given, and then cacheable');
    seen = r;
  });

  await t.test('below the latest: the canonical commit from block h+1', async (t) => {
    for (let h = 1n; h < H; h++) {
      const r = await ok3(t, tn, 'commit', { height: String(h) }, { height: String(h) }, true);
      t.equal(r.canonical, true, `commit ${h} canonical`);
      const next = await viaUri(tn, 'block', { height: String(h + 1n) });
      t.same(r.signed_header.commit, next.body.result.block.last_commit, `commit ${h} is block ${h + 1n}'s last_commit`);
      const header = await viaUri(tn, 'header', { height: String(h) });
      t.same(r.signed_header.header, header.body.result.header);
      t.same(shapeDiff(r, fixture, { mayOmit: ['$.signed_header.header.version.app'] }), [], 'fixture shape');
    }
  });

  await t.test('once the next block is in, the latest commit turns canonical', async (t) => {
    const before = H;
    await sendTx(tn);
    await waitHeight(tn, before + 1n);
    H = await settle(tn);
    const r = await ok3(t, tn, 'commit', { height: String(before) }, { height: String(before) }, true);
    t.equal(r.canonical, true);
    t.same(r.signed_header.header, seen.signed_header.header);
    t.same(r.signed_header.commit.block_id, seen.signed_header.commit.block_id, 'same block id as the seen commit');
    const latest = await ok3(t, tn, 'commit', {}, {}, false);
    t.same([latest.canonical, latest.signed_header.header.height], [false, String(H)]);
  });

  await t.test('height errors', async (t) => {
    await err3(t, tn, 'commit', { height: '0' }, { height: '0' }, 'height must be greater than 0, but got 0');
    await err3(t, tn, 'commit', { height: '-2' }, { height: '-2' }, 'height must be greater than 0, but got -2');
    const over = String(H + 1n);
    await err3(t, tn, 'commit', { height: over }, { height: over }, `height ${over} must be less than or equal to the current blockchain height ${H}`);
    const b = tn.ctx.storage.blocks as unknown as { base: () => bigint };
    b.base = () => 2n;
    t.teardown(() => void delete (b as { base?: unknown }).base);
    await err3(t, tn, 'commit', { height: '1' }, { height: '1' }, 'height 1 is not available, lowest height is 2');
  });
});
