/**
 * Node RPC `dump_consensus_state` (cometbft: rpc/core/consensus.go DumpConsensusState;
 * consensus/types/round_state.go; spec §2.2): `round_state` with every field of the spec's table,
 * its types (where the spec differs from CometBFT it wins: `valid_round` and `votes[].round` are
 * strings), the vote strings and bit-array strings, and `peers` (none: chaind has no P2P yet).
 * Over URI, JSON-RPC and websocket.
 */
import t, { type Test } from 'tap';
import { startTestNode, waitAtRest, waitHeight, type TestNode } from '../helpers/inproc.js';
import { viaPost, viaWs, nodeOk3 as ok3 } from '../helpers/rpc3.js';

/** RoundState's fields in Go struct order (spec §2.2 lists the same set). */
const ROUND_STATE_FIELDS = [
  'height', 'round', 'step', 'start_time', 'commit_time', 'validators', 'proposal', 'proposal_block',
  'proposal_block_parts', 'locked_round', 'locked_block', 'locked_block_parts', 'valid_round', 'valid_block',
  'valid_block_parts', 'votes', 'commit_round', 'last_commit', 'last_validators', 'triggered_timeout_precommit',
];
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/;
/** `Vote{<index>:<address prefix> <height>/<round>/<type>(<Prevote|Precommit>) <hash prefixes> @ <timestamp>}`. */
const VOTE = /^Vote\{(\d+):([0-9A-F]{12}) (\d+)\/(\d{2,})\/SIGNED_MSG_TYPE_(PREVOTE\(Prevote\)|PRECOMMIT\(Precommit\)) [0-9A-F]{12} [0-9A-F]{12} [0-9A-F]{12} @ (\S+)\}$/;
/** `BA{<size>:<chars>} <count>/<total> = <ratio>`. */
const BIT_ARRAY = /^BA\{(\d+):([x_]*)\} (\d+)\/(\d+) = (\d+\.\d\d)$/;

/** Checks one ValidatorPriority object (spec §2.2). */
function checkValidator(t: Test, v: any, what: string, pubKeyType: string) {
  t.same(Object.keys(v), ['address', 'pub_key', 'voting_power', 'proposer_priority'], `${what}: fields`);
  t.match(v.address, /^[0-9A-F]{40}$/, `${what}: address hex`);
  t.same(Object.keys(v.pub_key), ['type', 'value'], `${what}: pub_key fields`);
  t.equal(v.pub_key.type, pubKeyType, `${what}: pub_key type`);
  t.equal(Buffer.from(v.pub_key.value, 'base64').length, 32, `${what}: pub_key base64 of 32 bytes`);
  t.match(v.voting_power, /^\d+$/, `${what}: voting_power string`);
  t.match(v.proposer_priority, /^-?\d+$/, `${what}: proposer_priority string`);
}

function checkBitArray(t: Test, s: string, what: string, size: number) {
  const m = BIT_ARRAY.exec(s);
  t.ok(m, `${what}: bit-array string ${s}`);
  if (!m) return;
  t.equal(Number(m[1]), size, `${what}: size`);
  t.equal(m[2]!.length, size, `${what}: one char per validator`);
  t.equal((Number(m[3]) / Number(m[4])).toFixed(2), m[5], `${what}: ratio`);
}

/** Every rule of spec §2.2 on one result; returns the round state. */
function checkDump(t: Test, res: any, tn: TestNode, pubKeyType = 'consensus/PubKeyEd25519'): any {
  t.same(Object.keys(res), ['round_state', 'peers'], 'result: round_state and peers');
  t.same(res.peers, [], 'no peers (no P2P yet)');
  const rs = res.round_state;
  t.same(Object.keys(rs), ROUND_STATE_FIELDS, 'round_state: every field, Go order');
  t.match(rs.height, /^\d+$/, 'height: integer as text');
  t.type(rs.round, 'number');
  t.type(rs.step, 'number');
  t.match(rs.start_time, TIME, 'start_time RFC 3339 with nanoseconds');
  t.match(rs.commit_time, TIME, 'commit_time RFC 3339');
  t.same(Object.keys(rs.validators), ['validators', 'proposer']);
  const addr = Buffer.from(tn.ctx.validator.address).toString('hex').toUpperCase();
  t.equal(rs.validators.validators.length, 1);
  checkValidator(t, rs.validators.validators[0], 'validators[0]', pubKeyType);
  t.equal(rs.validators.validators[0].address, addr, 'our validator');
  checkValidator(t, rs.validators.proposer, 'proposer', pubKeyType);
  t.type(rs.locked_round, 'number');
  t.equal(rs.locked_round, -1, 'locked_round -1 when none');
  t.type(rs.valid_round, 'string');
  t.match(rs.valid_round, /^-?\d+$/, 'valid_round: integer as text (spec)');
  t.type(rs.commit_round, 'number');
  t.type(rs.triggered_timeout_precommit, 'boolean');
  for (const k of ['proposal', 'proposal_block', 'proposal_block_parts', 'locked_block', 'locked_block_parts', 'valid_block', 'valid_block_parts']) {
    t.ok(k in rs && (rs[k] === null || typeof rs[k] === 'object'), `${k} present`);
  }
  t.ok(Array.isArray(rs.votes) && rs.votes.length >= 1, 'votes: one entry per round');
  rs.votes.forEach((rv: any, i: number) => {
    t.same(Object.keys(rv), ['round', 'prevotes', 'prevotes_bit_array', 'precommits', 'precommits_bit_array'], `votes[${i}] fields`);
    t.equal(rv.round, String(i), `votes[${i}].round: integer as text (spec)`);
    for (const kind of ['prevotes', 'precommits']) {
      if (rv[kind] === null) continue;
      for (const v of rv[kind]) t.ok(v === 'nil-Vote' || VOTE.test(v), `votes[${i}].${kind}: ${v}`);
      checkBitArray(t, rv[`${kind}_bit_array`], `votes[${i}].${kind}_bit_array`, 1);
    }
  });
  checkValidatorSet(t, rs.last_validators, pubKeyType);
  return rs;
}

function checkValidatorSet(t: Test, vs: any, pubKeyType: string) {
  t.same(Object.keys(vs), ['validators', 'proposer'], 'last_validators shape');
  for (const v of vs.validators) checkValidator(t, v, 'last_validators[]', pubKeyType);
}

t.test('dump_consensus_state on a chain at rest', async (t) => {
  // Without empty blocks the chain stops after the first blocks and waits for txs, so the three
  // transports see the same round state.
  const tn = await startTestNode({ flags: { 'consensus.create_empty_blocks': false } });
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);
  let rs: any;
  await waitAtRest(tn);
  const r = await ok3(t, tn, 'dump_consensus_state', '', {});
  t.same(r.post, r.uri, 'JSON-RPC = URI');
  t.same(r.ws, r.uri, 'websocket = URI');
  t.same(r.cache, [null, null], 'not cacheable');
  rs = checkDump(t, r.uri, tn);

  const snap = tn.ctx.consensus.getRoundState();
  t.equal(rs.height, String(snap.height), 'height is the consensus height');
  t.equal(rs.step, snap.step as number, 'step is the numeric RoundStep');
  t.equal(BigInt(rs.height), tn.ctx.storage.blocks.height() + 1n, 'one above the store');

  // last_commit: our precommit for the previous height, and its bit array.
  const lc = rs.last_commit;
  t.same(Object.keys(lc), ['votes', 'votes_bit_array', 'peer_maj_23s']);
  t.same(lc.peer_maj_23s, {});
  t.equal(lc.votes.length, 1);
  const m = VOTE.exec(lc.votes[0]);
  t.ok(m, `last_commit vote string ${lc.votes[0]}`);
  const addr = Buffer.from(tn.ctx.validator.address).toString('hex').toUpperCase();
  t.same([m?.[1], m?.[2], m?.[3], m?.[4], m?.[5]], ['0', addr.slice(0, 12), String(BigInt(rs.height) - 1n), '00', 'PRECOMMIT(Precommit)'], 'index, address prefix, H/RR/type');
  t.match(m?.[6], TIME, 'vote timestamp');
  t.equal(lc.votes_bit_array, 'BA{1:x} 10/10 = 1.00', 'the full power voted');
  t.same(rs.last_validators.validators.map((v: any) => v.address), [addr]);
});

t.test('dump_consensus_state while blocks are made: proposal and part sets', async (t) => {
  const tn = await startTestNode({ timeoutCommit: '50ms' });
  t.teardown(() => tn.close());
  await waitHeight(tn, 2n);
  // Poll until a dump catches a proposal with its block (between Propose and Commit).
  let rs: any = null;
  const deadline = Date.now() + 30_000; // generous: the loop ends as soon as it sees it
  while (Date.now() < deadline) {
    const r = await viaPost(tn, 'dump_consensus_state', {});
    if (r.body.result.round_state.proposal_block !== null) {
      rs = checkDump(t, r.body.result, tn);
      break;
    }
  }
  t.ok(rs, 'a dump with a proposal block');
  if (!rs) return;
  t.same(rs.proposal_block_parts, { 'count/total': '1/1', parts_bit_array: 'x' }, 'PartSet JSON: count/total and bits');
  t.equal(rs.proposal.height, rs.height, 'proposal of this height');
  t.equal(rs.proposal_block.header.height, rs.height, 'proposal block of this height');
  t.equal(rs.proposal.block_id.parts.total, 1);
});

t.test('dump_consensus_state with [compat] upstream-names emits the upstream key type', async (t) => {
  const tn = await startTestNode({ flags: { 'consensus.create_empty_blocks': false, 'compat.upstream-names': true } });
  t.teardown(() => tn.close());
  // At rest, not in the middle of the proof block (where locked_round would be 0).
  await waitAtRest(tn);
  const r = await viaWs(tn, 'dump_consensus_state', {});
  checkDump(t, r.result, tn, 'tendermint/PubKeyEd25519');
});

t.test('dump_consensus_state takes no parameters', async (t) => {
  const tn = await startTestNode({ flags: { 'consensus.create_empty_blocks': false } });
  t.teardown(() => tn.close());
  const r = await viaPost(tn, 'dump_consensus_state', ['1']);
  t.same(r.body.error, { code: -32602, message: 'Invalid params', data: 'error converting json params to arguments: expected 0 parameters ([]), got 1 ([[34 49 34]])' });
});
