/**
 * Node RPC `consensus_state` (cometbft: rpc/core/consensus.go GetConsensusState;
 * consensus/types/round_state.go RoundStateSimple): `height/round/step` as "H/R/S" with the
 * numeric step, start time, the three block hashes, `height_vote_set` with numeric rounds and
 * vote and bit-array strings, and the proposer. Over URI, JSON-RPC and websocket; shape checked
 * against the `consensus_state` fixture.
 */
import t from 'tap';
import { startTestNode, waitAtRest, waitHeight } from '../helpers/inproc.js';
import { FIXTURES, nodeViaUri as viaUri, viaWs, nodeOk3 as ok3, shape } from '../helpers/rpc3.js';

t.test('consensus_state on a chain at rest', async (t) => {
  const tn = await startTestNode({ flags: { 'consensus.create_empty_blocks': false } });
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);
  await waitAtRest(tn);
  const r = await ok3(t, tn, 'consensus_state', '', {});
  t.same(r.post, r.uri, 'JSON-RPC = URI');
  t.same(r.ws, r.uri, 'websocket = URI');
  t.same(r.cache, [null, null], 'not cacheable');
  t.same(Object.keys(r.uri), ['round_state']);
  const rs = r.uri.round_state;
  t.same(shape(rs), shape(FIXTURES['consensus_state'].result.round_state), 'fixture shape');
  t.same(
    Object.keys(rs),
    ['height/round/step', 'start_time', 'proposal_block_hash', 'locked_block_hash', 'valid_block_hash', 'height_vote_set', 'proposer'],
    'RoundStateSimple field order',
  );

  const snap = tn.ctx.consensus.getRoundState();
  t.equal(rs['height/round/step'], `${snap.height}/${snap.round}/${snap.step as number}`, 'H/R/S with the numeric step');
  t.match(rs.start_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/);
  const addr = Buffer.from(tn.ctx.validator.address).toString('hex').toUpperCase();
  t.same(rs.proposer, { address: addr, index: 0 }, 'proposer: our validator at index 0');
  for (const k of ['proposal_block_hash', 'locked_block_hash', 'valid_block_hash']) t.match(rs[k], /^([0-9A-F]{64})?$/, `${k}: hex or empty`);
  t.equal(rs.height_vote_set[0].round, 0, 'rounds are numbers here (unlike dump_consensus_state)');
  for (const rv of rs.height_vote_set) {
    for (const kind of ['prevotes', 'precommits']) {
      if (rv[kind] === null) continue;
      t.equal(rv[kind].length, 1, `${kind}: one entry per validator`);
      t.match(rv[`${kind}_bit_array`], /^BA\{1:[x_]\} \d+\/10 = \d\.\d\d$/, `${kind}_bit_array`);
    }
  }
});

t.test('consensus_state while blocks are made: votes as strings', async (t) => {
  const tn = await startTestNode({ timeoutCommit: '50ms' });
  t.teardown(() => tn.close());
  await waitHeight(tn, 2n);
  let seen = false;
  const deadline = Date.now() + 30_000; // generous: the loop ends as soon as it sees it
  while (!seen && Date.now() < deadline) {
    const r = await viaUri(tn, 'consensus_state');
    const rs = r.body.result.round_state;
    const prevotes: string[] = rs.height_vote_set[0].prevotes ?? [];
    if (prevotes[0] && prevotes[0] !== 'nil-Vote') {
      seen = true;
      const [h] = rs['height/round/step'].split('/');
      t.match(prevotes[0], new RegExp(`^Vote\\{0:[0-9A-F]{12} ${h}/00/SIGNED_MSG_TYPE_PREVOTE\\(Prevote\\) [0-9A-F]{12} [0-9A-F]{12} [0-9A-F]{12} @ \\S+Z\\}$`));
      t.equal(rs.height_vote_set[0].prevotes_bit_array, 'BA{1:x} 10/10 = 1.00');
      t.not(rs.proposal_block_hash, '', 'a proposal block once prevoted');
    }
  }
  t.ok(seen, 'caught a prevote');
});

t.test('consensus_state takes no parameters', async (t) => {
  const tn = await startTestNode({ flags: { 'consensus.create_empty_blocks': false } });
  t.teardown(() => tn.close());
  const r = await viaWs(tn, 'consensus_state', ['1']);
  t.same(r.error, { code: -32603, message: 'Internal error', data: 'error converting json params to arguments: expected 0 parameters ([]), got 1 ([[34 49 34]])' });
});
