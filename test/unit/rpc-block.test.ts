/**
 * Node RPC `block` (cometbft: rpc/core/blocks.go Block, env.go getHeight): the block and its
 * BlockID at a height (default: the store height); heights outside [base, height] give
 * CometBFT's errors. Cacheable only with a height (routes.go Cacheable("height")). Over URI,
 * JSON-RPC and websocket, shapes checked against the `block_at_height_1` and `block_at_height_10`
 * fixtures.
 */
import t from 'tap';
import { headerHash } from '../../src/types/hashing.js';
import { FIXTURES, hexOf, b64, startNode, growTo, viaUri, ok3, err3, shapeDiff } from '../helpers/rpc3.js';

t.test('block', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  const H = await growTo(tn, 5n);
  const blocks = tn.ctx.storage.blocks;
  const noAppVersion = { mayOmit: ['$.block.header.version.app'] };

  await t.test('latest by default, not cacheable', async (t) => {
    const r = await ok3(t, tn, 'block', {}, {}, false);
    t.equal(r.block.header.height, String(H));
    t.equal(r.block_id.hash, hexOf(blocks.loadBlockMeta(H)!.blockId.hash), 'block_id from the block meta');
    t.same(shapeDiff(r, FIXTURES['block_at_height_10'].result, noAppVersion), [], 'fixture shape');
  });

  await t.test('height 1: the initial block', async (t) => {
    const r = await ok3(t, tn, 'block', { height: '1' }, { height: '1' }, true);
    t.same(shapeDiff(r, FIXTURES['block_at_height_1'].result, noAppVersion), [], 'fixture shape');
    t.same(r.block.last_commit, FIXTURES['block_at_height_1'].result.block.last_commit, 'empty last commit, as CometBFT');
    t.same(r.block.header.last_block_id, { hash: '', parts: { total: 0, hash: '' } });
    t.same(r.block.data, { txs: [] });
    t.same(r.block.evidence, { evidence: [] });
    t.equal(r.block.header.chain_id, 'inproc-1');
    // consensus/replay.go sets LastResultsHash to the RFC 6962 empty hash after InitChain.
    t.equal(r.block.header.last_results_hash, FIXTURES['block_at_height_1'].result.block.header.last_results_hash, 'last_results_hash: the empty hash');
    t.equal(r.block.header.last_results_hash, 'E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855');
  });

  await t.test('a block with txs', async (t) => {
    let h = 1n;
    while (blocks.loadBlock(h)!.data.txs.length === 0) h++;
    const stored = blocks.loadBlock(h)!;
    const r = await ok3(t, tn, 'block', { height: String(h) }, { height: String(h) }, true);
    t.same(r.block.data.txs, stored.data.txs.map(b64), 'txs as base64');
    t.equal(r.block_id.hash, hexOf(headerHash(stored.header)), 'block_id.hash is the header hash');
    t.equal(r.block_id.parts.total, 1, 'parts.total is a number');
    t.equal(r.block.last_commit.signatures[0].validator_address, hexOf(tn.ctx.validator.address));
    t.same(shapeDiff(r, FIXTURES['block_at_height_10'].result, noAppVersion), [], 'fixture shape');
    const next = await viaUri(tn, 'block', { height: String(h + 1n) });
    t.same(next.body.result.block.header.last_block_id, r.block_id, 'the next block links to this one');
  });

  await t.test('height errors', async (t) => {
    await err3(t, tn, 'block', { height: '0' }, { height: '0' }, 'height must be greater than 0, but got 0');
    await err3(t, tn, 'block', { height: '-3' }, { height: '-3' }, 'height must be greater than 0, but got -3');
    const over = String(H + 1n);
    await err3(t, tn, 'block', { height: over }, { height: over }, `height ${over} must be less than or equal to the current blockchain height ${H}`);
    await err3(t, tn, 'block', { height: '9223372036854775807' }, { height: '9223372036854775807' }, `height 9223372036854775807 must be less than or equal to the current blockchain height ${H}`);
  });

  await t.test('a pruned height', async (t) => {
    const b = blocks as unknown as { base: () => bigint };
    b.base = () => 3n;
    t.teardown(() => void delete (b as { base?: unknown }).base);
    await err3(t, tn, 'block', { height: '2' }, { height: '2' }, 'height 2 is not available, lowest height is 3');
    const r = await ok3(t, tn, 'block', { height: '3' }, { height: '3' }, true);
    t.equal(r.block.header.height, '3', 'the base itself is served');
  });
});
