/**
 * VoteSet and HeightVoteSet (cometbft: types/vote_set.go, consensus/types/height_vote_set.go):
 * +2/3 thresholds (strictly more than 2/3 of the power) with equal and unequal powers, nil
 * majorities, conflicting votes, makeCommit, bit-array strings, catch-up rounds, and the crc32c
 * and %.2f helpers they rely on.
 */
import t from 'tap';
import { BlockIDFlag, SignedMsgType, ZERO_TIME, type BlockID, type Vote } from '../../src/types/block.js';
import { ValidatorSet } from '../../src/types/validator_set.js';
import { Ed25519PrivKey, ed25519Verify } from '../../src/crypto/ed25519.js';
import { voteSignBytes } from '../../src/types/signbytes.js';
import { VoteSet, commitToVoteSet } from '../../src/consensus/vote_set.js';
import { HeightVoteSet } from '../../src/consensus/height_vote_set.js';
import { formatGoFixed2, nilBlockId } from '../../src/consensus/util.js';
import { crc32c } from '../../src/consensus/crc32c.js';
import type { DuplicateVoteEvidence } from '../../src/consensus/types.js';

const CHAIN = 'test-chain';

function makeVals(powers: bigint[]) {
  const keys = powers.map((_, i) => Ed25519PrivKey.fromSeed(new Uint8Array(32).fill(i + 1)));
  const vs = new ValidatorSet(keys.map((k, i) => ({ pubKey: { type: 'ed25519' as const, bytes: k.pubKey }, power: powers[i]! })));
  // Key for each set index.
  const keyAt = (i: number) => keys.find((k) => Buffer.from(k.address).equals(Buffer.from(vs.validators[i]!.address)))!;
  return { vs, keyAt };
}

function blockId(tag: number): BlockID {
  return { hash: new Uint8Array(32).fill(tag), partSetHeader: { total: 1, hash: new Uint8Array(32).fill(tag + 100) } };
}

function vote(env: ReturnType<typeof makeVals>, idx: number, type: SignedMsgType, bid: BlockID, round = 0, height = 1n, ts = 1_700_000_000_000_000_000n): Vote {
  const key = env.keyAt(idx);
  const v: Vote = {
    type,
    height,
    round,
    blockId: bid,
    timestamp: ts,
    validatorAddress: key.address,
    validatorIndex: idx,
    signature: new Uint8Array(0),
    extension: new Uint8Array(0),
    extensionSignature: new Uint8Array(0),
  };
  return { ...v, signature: key.sign(voteSignBytes(CHAIN, v)) };
}

t.test('four equal validators: 3 of 4 is +2/3, 2 of 4 is not', async (t) => {
  const env = makeVals([10n, 10n, 10n, 10n]);
  const vs = new VoteSet(CHAIN, 1n, 0, SignedMsgType.Prevote, env.vs);
  const A = blockId(1);
  t.equal(vs.twoThirdsMajority(), null);
  t.ok(vs.addVote(vote(env, 0, SignedMsgType.Prevote, A)).added);
  t.ok(vs.addVote(vote(env, 1, SignedMsgType.Prevote, A)).added);
  t.equal(vs.twoThirdsMajority(), null, '20/40 is not a majority');
  t.notOk(vs.hasTwoThirdsAny());
  t.equal(vs.bitArrayString(), 'BA{4:xx__} 20/40 = 0.50');
  t.ok(vs.addVote(vote(env, 2, SignedMsgType.Prevote, A)).added);
  t.same(vs.twoThirdsMajority(), A, '30/40 > 2/3');
  t.ok(vs.hasTwoThirdsAny());
  t.notOk(vs.hasAll());
  t.ok(vs.addVote(vote(env, 3, SignedMsgType.Prevote, nilBlockId())).added);
  t.ok(vs.hasAll());
  t.same(vs.twoThirdsMajority(), A, 'majority stays');
  t.equal(vs.bitArrayString(), 'BA{4:xxxx} 40/40 = 1.00');
  t.equal(vs.bitArrayByBlockId(A)!.toString(), 'BA{4:xxx_}');
  t.equal(vs.voteStrings().length, 4);
  t.match(vs.voteStrings()[0]!, /^Vote\{0:[0-9A-F]{12} 1\/00\/SIGNED_MSG_TYPE_PREVOTE\(Prevote\) 010101010101 /);
});

t.test('exactly 2/3 is not enough (3 validators of power 1: 2 of 3 is 66.7% < needed)', async (t) => {
  // total 3: need 3*sum > 6, i.e. sum >= 3: all three.
  const env = makeVals([1n, 1n, 1n]);
  const vs = new VoteSet(CHAIN, 1n, 0, SignedMsgType.Precommit, env.vs);
  const A = blockId(7);
  vs.addVote(vote(env, 0, SignedMsgType.Precommit, A));
  vs.addVote(vote(env, 1, SignedMsgType.Precommit, A));
  t.equal(vs.twoThirdsMajority(), null, '2/3 exactly is not +2/3');
  t.notOk(vs.hasTwoThirdsAny());
  vs.addVote(vote(env, 2, SignedMsgType.Precommit, A));
  t.same(vs.twoThirdsMajority(), A);
});

t.test('unequal powers 40/30/20/10: thresholds follow power, not count', async (t) => {
  const env = makeVals([40n, 30n, 20n, 10n]);
  t.equal(env.vs.validators[0]!.votingPower, 40n, 'set sorted by power');
  const A = blockId(2);
  {
    // 40 + 30 = 70 > 66.67: two validators suffice.
    const vs = new VoteSet(CHAIN, 1n, 0, SignedMsgType.Prevote, env.vs);
    vs.addVote(vote(env, 0, SignedMsgType.Prevote, A));
    t.equal(vs.twoThirdsMajority(), null);
    vs.addVote(vote(env, 1, SignedMsgType.Prevote, A));
    t.same(vs.twoThirdsMajority(), A, '70/100');
    t.equal(vs.bitArrayString(), 'BA{4:xx__} 70/100 = 0.70');
  }
  {
    // 30 + 20 + 10 = 60: three of four validators are not enough.
    const vs = new VoteSet(CHAIN, 1n, 0, SignedMsgType.Prevote, env.vs);
    for (const i of [1, 2, 3]) vs.addVote(vote(env, i, SignedMsgType.Prevote, A));
    t.equal(vs.twoThirdsMajority(), null, '60/100 is not +2/3');
    t.notOk(vs.hasTwoThirdsAny());
  }
  {
    // 40 for A + 30 nil: +2/3 any, but no majority for either.
    const vs = new VoteSet(CHAIN, 1n, 0, SignedMsgType.Prevote, env.vs);
    vs.addVote(vote(env, 0, SignedMsgType.Prevote, A));
    vs.addVote(vote(env, 1, SignedMsgType.Prevote, nilBlockId()));
    t.ok(vs.hasTwoThirdsAny());
    t.equal(vs.twoThirdsMajority(), null);
    t.equal(vs.powerFor(A), 40n);
  }
  {
    // 40 + 20 nil = 60 is not enough; + 10 = 70 is a nil majority, and a later block vote cannot change it.
    const vs = new VoteSet(CHAIN, 1n, 0, SignedMsgType.Prevote, env.vs);
    vs.addVote(vote(env, 0, SignedMsgType.Prevote, nilBlockId()));
    vs.addVote(vote(env, 2, SignedMsgType.Prevote, nilBlockId()));
    t.equal(vs.twoThirdsMajority(), null, '60 nil');
    vs.addVote(vote(env, 3, SignedMsgType.Prevote, nilBlockId()));
    t.equal(vs.twoThirdsMajority()?.hash.length, 0, '70 nil (40+20+10) is a nil majority');
    vs.addVote(vote(env, 1, SignedMsgType.Prevote, A));
    t.equal(vs.twoThirdsMajority()?.hash.length, 0, 'still nil after 30 for A');
    t.ok(vs.hasAll());
  }
  {
    const vs = new VoteSet(CHAIN, 1n, 0, SignedMsgType.Prevote, env.vs);
    vs.addVote(vote(env, 0, SignedMsgType.Prevote, nilBlockId()));
    vs.addVote(vote(env, 1, SignedMsgType.Prevote, nilBlockId()));
    const maj = vs.twoThirdsMajority();
    t.not(maj, null);
    t.equal(maj!.hash.length, 0, 'nil majority = empty hash');
  }
});

t.test('votes that do not belong are refused', async (t) => {
  const env = makeVals([10n, 10n, 10n, 10n]);
  const vs = new VoteSet(CHAIN, 1n, 0, SignedMsgType.Prevote, env.vs);
  const A = blockId(3);
  t.equal(vs.addVote(vote(env, 0, SignedMsgType.Prevote, A, 1)).code, 'VOTE_UNEXPECTED_STEP', 'wrong round');
  t.equal(vs.addVote(vote(env, 0, SignedMsgType.Prevote, A, 0, 2n)).code, 'VOTE_UNEXPECTED_STEP', 'wrong height');
  t.equal(vs.addVote(vote(env, 0, SignedMsgType.Precommit, A)).code, 'VOTE_UNEXPECTED_STEP', 'wrong type');
  t.equal(vs.addVote({ ...vote(env, 0, SignedMsgType.Prevote, A), validatorIndex: 9 }).code, 'VOTE_INVALID_VALIDATOR_INDEX');
  t.equal(vs.addVote({ ...vote(env, 0, SignedMsgType.Prevote, A), validatorIndex: 1 }).code, 'VOTE_INVALID_VALIDATOR_ADDRESS');
  const partial = { hash: new Uint8Array(32).fill(1), partSetHeader: { total: 0, hash: new Uint8Array(0) } };
  t.equal(vs.addVote(vote(env, 0, SignedMsgType.Prevote, partial)).code, 'VOTE_INVALID_BLOCK_ID');
  t.equal(vs.votedPower, 0n, 'nothing counted');
  const v = vote(env, 0, SignedMsgType.Prevote, A);
  t.ok(vs.addVote(v).added);
  const dup = vs.addVote(v);
  t.same(dup, { added: false }, 'exact duplicate: not added, no error');
  const later = vote(env, 0, SignedMsgType.Prevote, A, 0, 1n, v.timestamp + 1n);
  t.equal(vs.addVote(later).code, 'VOTE_NON_DETERMINISTIC_SIGNATURE', 'same block, other signature');
  t.equal(vs.votedPower, 10n);
});

t.test('signature check inside the set when asked', async (t) => {
  const env = makeVals([10n, 10n, 10n, 10n]);
  const vs = new VoteSet(CHAIN, 1n, 0, SignedMsgType.Prevote, env.vs, {
    verifySignature: (v, pub) => ed25519Verify(pub, voteSignBytes(CHAIN, v), v.signature),
  });
  const good = vote(env, 0, SignedMsgType.Prevote, blockId(4));
  const bad = { ...vote(env, 1, SignedMsgType.Prevote, blockId(4)), signature: new Uint8Array(64).fill(9) };
  t.ok(vs.addVote(good).added);
  t.equal(vs.addVote(bad).code, 'VOTE_INVALID_SIGNATURE');
});

t.test('conflicting votes: first stays counted, evidence goes to the callback in BlockID-key order', async (t) => {
  const env = makeVals([10n, 10n, 10n, 10n]);
  const seen: DuplicateVoteEvidence[] = [];
  const vs = new VoteSet(CHAIN, 1n, 0, SignedMsgType.Precommit, env.vs, { onConflict: (e) => seen.push(e) });
  const hi = blockId(9);
  const lo = blockId(2);
  const first = vote(env, 1, SignedMsgType.Precommit, hi);
  const second = vote(env, 1, SignedMsgType.Precommit, lo);
  t.ok(vs.addVote(first).added);
  const r = vs.addVote(second);
  t.equal(r.added, false);
  t.equal(r.code, 'VOTE_CONFLICTING');
  t.equal(seen.length, 1);
  t.equal(seen[0]!.voteA, second, 'smaller BlockID key first');
  t.equal(seen[0]!.voteB, first);
  t.equal(seen[0]!.validatorPower, 10n);
  t.equal(seen[0]!.totalVotingPower, 40n);
  t.equal(vs.powerFor(hi), 10n, 'first vote counted');
  t.equal(vs.powerFor(lo), 0n, 'conflicting vote not counted');
  t.equal(vs.getByIndex(1), first);
  // A nil vote conflicts with a block vote, nil sorts first.
  const vs2 = new VoteSet(CHAIN, 1n, 0, SignedMsgType.Precommit, env.vs, { onConflict: (e) => seen.push(e) });
  vs2.addVote(vote(env, 2, SignedMsgType.Precommit, hi));
  vs2.addVote(vote(env, 2, SignedMsgType.Precommit, nilBlockId()));
  t.equal(seen.length, 2);
  t.equal(seen[1]!.voteA.blockId.hash.length, 0);
});

t.test('makeCommit: validator order, Commit/Nil/Absent flags; refuses without a block majority', async (t) => {
  const env = makeVals([10n, 10n, 10n, 10n, 10n]);
  const vs = new VoteSet(CHAIN, 5n, 2, SignedMsgType.Precommit, env.vs);
  const A = blockId(5);
  const B = blockId(6);
  t.throws(() => vs.makeCommit(), /unless a blockhash has \+2\/3/);
  const v0 = vote(env, 0, SignedMsgType.Precommit, A, 2, 5n);
  const v1 = vote(env, 1, SignedMsgType.Precommit, nilBlockId(), 2, 5n);
  const v2 = vote(env, 2, SignedMsgType.Precommit, A, 2, 5n);
  const v3 = vote(env, 3, SignedMsgType.Precommit, A, 2, 5n);
  const v4 = vote(env, 4, SignedMsgType.Precommit, B, 2, 5n);
  for (const v of [v3, v1, v0]) vs.addVote(v);
  t.throws(() => vs.makeCommit(), /unless a blockhash/, '20 of 50 for A');
  vs.addVote(v2);
  vs.addVote(v4);
  t.equal(vs.twoThirdsMajority(), null, '30 of 50 for A is not +2/3');
  t.ok(vs.hasTwoThirdsAny(), '50 of 50 voted');
  t.throws(() => vs.makeCommit(), /unless a blockhash/);
});

t.test('makeCommit with a majority', async (t) => {
  const env = makeVals([10n, 10n, 10n, 10n, 10n]);
  const vs = new VoteSet(CHAIN, 5n, 2, SignedMsgType.Precommit, env.vs);
  const A = blockId(5);
  const B = blockId(6);
  const v = [0, 2, 3, 4].map((i) => vote(env, i, SignedMsgType.Precommit, A, 2, 5n));
  for (const x of v) vs.addVote(x);
  t.same(vs.twoThirdsMajority(), A, '40 of 50');
  const c = vs.makeCommit();
  t.equal(c.height, 5n);
  t.equal(c.round, 2);
  t.same(c.blockId, A);
  t.equal(c.signatures.length, 5);
  t.same(
    c.signatures.map((s) => s.blockIdFlag),
    [BlockIDFlag.Commit, BlockIDFlag.Absent, BlockIDFlag.Commit, BlockIDFlag.Commit, BlockIDFlag.Commit],
  );
  t.equal(c.signatures[1]!.timestamp, ZERO_TIME, 'absent: zero time');
  t.equal(c.signatures[1]!.validatorAddress.length, 0, 'absent: no address');
  t.same(c.signatures[0]!.signature, v[0]!.signature);
  t.same(c.signatures[0]!.validatorAddress, env.vs.validators[0]!.address);

  // Nil precommit → Nil flag with its signature; a precommit for another block → Absent.
  const vs2 = new VoteSet(CHAIN, 5n, 0, SignedMsgType.Precommit, env.vs);
  for (const i of [0, 1, 2, 3]) vs2.addVote(vote(env, i, SignedMsgType.Precommit, A, 0, 5n));
  const nilV = vote(env, 4, SignedMsgType.Precommit, nilBlockId(), 0, 5n);
  vs2.addVote(nilV);
  const c2 = vs2.makeCommit();
  t.equal(c2.signatures[4]!.blockIdFlag, BlockIDFlag.Nil);
  t.same(c2.signatures[4]!.signature, nilV.signature);
  const vs3 = new VoteSet(CHAIN, 5n, 0, SignedMsgType.Precommit, env.vs);
  for (const i of [0, 1, 2, 3]) vs3.addVote(vote(env, i, SignedMsgType.Precommit, A, 0, 5n));
  vs3.addVote(vote(env, 4, SignedMsgType.Precommit, B, 0, 5n));
  t.equal(vs3.makeCommit().signatures[4]!.blockIdFlag, BlockIDFlag.Absent, 'other block → absent');

  // Prevotes cannot make a commit.
  const pv = new VoteSet(CHAIN, 5n, 0, SignedMsgType.Prevote, env.vs);
  t.throws(() => pv.makeCommit(), /PrecommitType/);

  // The commit converts back to the same votes.
  const back = commitToVoteSet(CHAIN, c, env.vs);
  t.same(back.twoThirdsMajority(), A);
  t.equal(back.bitArrayString(), 'BA{5:x_xxx} 40/50 = 0.80');
  for (const i of [0, 2, 3, 4]) {
    const bv = back.getByIndex(i)!;
    t.ok(ed25519Verify(env.vs.validators[i]!.pubKey.bytes, voteSignBytes(CHAIN, bv), bv.signature), `vote ${i} verifies`);
  }
  t.equal(vs.toJSON().votes_bit_array, 'BA{5:x_xxx} 40/50 = 0.80');
  t.same(vs.toJSON().peer_maj_23s, {});
});

t.test('HeightVoteSet: rounds, catch-up allowance per peer, POL info, JSON', async (t) => {
  const env = makeVals([10n, 10n, 10n, 10n]);
  const hvs = new HeightVoteSet(CHAIN, 1n, env.vs);
  const A = blockId(1);
  t.ok(hvs.prevotes(0));
  t.equal(hvs.prevotes(1), null, 'round 1 not tracked before setRound');
  hvs.setRound(1);
  t.ok(hvs.prevotes(1));
  // Votes for far rounds: each peer may open 2 extra rounds.
  t.ok(hvs.addVote(vote(env, 0, SignedMsgType.Prevote, A, 5), 'p1').added);
  t.ok(hvs.addVote(vote(env, 0, SignedMsgType.Prevote, A, 6), 'p1').added);
  const r = hvs.addVote(vote(env, 0, SignedMsgType.Prevote, A, 7), 'p1');
  t.equal(r.added, false);
  t.equal((r as { code: string }).code, 'VOTE_UNWANTED_ROUND');
  t.ok(hvs.addVote(vote(env, 1, SignedMsgType.Prevote, A, 7), 'p2').added, 'another peer has its own allowance');
  t.ok(hvs.addVote(vote(env, 1, SignedMsgType.Prevote, A, 5), 'p1').added, 'an opened round takes anyone');
  // POL: +2/3 prevotes for A at round 5.
  t.same(hvs.polInfo(), { round: -1, blockId: null }, 'polInfo looks at rounds <= round only');
  for (const i of [2, 3]) hvs.addVote(vote(env, i, SignedMsgType.Prevote, A, 1), 'p3');
  hvs.addVote(vote(env, 0, SignedMsgType.Prevote, A, 1), 'p3');
  t.same(hvs.polInfo(), { round: 1, blockId: A });
  t.equal(hvs.addVote({ ...vote(env, 0, SignedMsgType.Prevote, A, 1), type: SignedMsgType.Proposal }, 'p3').added, false);
  const j = hvs.toJSON();
  t.equal(j.length, 2, 'rounds 0..round');
  t.equal(j[1]!.round, '1');
  t.equal(j[1]!.prevotes_bit_array, 'BA{4:x_xx} 30/40 = 0.75');
  t.equal(j[0]!.precommits![0], 'nil-Vote');
  hvs.reset(2n, env.vs);
  t.equal(hvs.height, 2n);
  t.equal(hvs.round, 0);
  t.equal(hvs.toJSON().length, 1);
});

t.test('formatGoFixed2 rounds half to even on the exact binary value (Go %.2f)', async (t) => {
  t.equal(formatGoFixed2(0.125), '0.12', '5/40: exact tie rounds to even');
  t.equal(formatGoFixed2(0.375), '0.38');
  t.equal(formatGoFixed2(0.625), '0.62');
  t.equal(formatGoFixed2(0.875), '0.88');
  t.equal(formatGoFixed2(2 / 3), '0.67');
  t.equal(formatGoFixed2(1), '1.00');
  t.equal(formatGoFixed2(0), '0.00');
  t.equal(formatGoFixed2(0.005), '0.01', '0.005 is slightly above the tie in binary');
  t.equal(formatGoFixed2(0.015), '0.01', '0.015 is slightly below the tie in binary');
});

t.test('crc32c check values', async (t) => {
  t.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
  t.equal(crc32c(new Uint8Array(0)), 0);
  t.equal(crc32c(new Uint8Array(32)), 0x8a9136aa, '32 zero bytes (RFC 3720 B.4)');
  t.equal(crc32c(new Uint8Array(32).fill(0xff)), 0x62a8ab43, '32 0xFF bytes (RFC 3720 B.4)');
  const inc = Uint8Array.from({ length: 32 }, (_, i) => i);
  t.equal(crc32c(inc), 0x46dd794e, 'incrementing bytes (RFC 3720 B.4)');
  // Incremental == one shot, across the 8-byte fast path boundary.
  const data = Uint8Array.from({ length: 1000 }, (_, i) => (i * 31) & 0xff);
  t.equal(crc32c(data.subarray(13), crc32c(data.subarray(0, 13))), crc32c(data));
});

t.test("a peer's +2/3 claim lets a conflicting precommit count for the claimed block (vote_set.go SetPeerMaj23)", async (t) => {
  // Validator 3 equivocated: we got its precommit for F (a fake block) first; the commit of B that
  // a peer sends in catch-up holds its precommit for B. Without the claim, B stays at 20/40.
  const env = makeVals([10n, 10n, 10n, 10n]);
  const B = blockId(1);
  const F = blockId(2);
  const evidence: DuplicateVoteEvidence[] = [];
  const plain = new VoteSet(CHAIN, 1n, 0, SignedMsgType.Precommit, env.vs, { onConflict: (e) => evidence.push(e) });
  const claimed = new VoteSet(CHAIN, 1n, 0, SignedMsgType.Precommit, env.vs);
  for (const vs of [plain, claimed]) {
    t.ok(vs.addVote(vote(env, 3, SignedMsgType.Precommit, F)).added);
    t.ok(vs.addVote(vote(env, 0, SignedMsgType.Precommit, B)).added);
    t.ok(vs.addVote(vote(env, 1, SignedMsgType.Precommit, B)).added);
  }
  const r = plain.addVote(vote(env, 3, SignedMsgType.Precommit, B));
  t.same([r.added, r.code], [false, 'VOTE_CONFLICTING'], 'without a claim the conflicting vote is refused');
  t.equal(plain.twoThirdsMajority(), null, 'and B has no majority');
  t.equal(evidence.length, 1, 'evidence reported');

  claimed.setPeerMaj23(B);
  t.equal(claimed.powerFor(B), 20n, 'the claim alone counts nothing');
  const c = claimed.addVote(vote(env, 3, SignedMsgType.Precommit, B));
  t.same([c.added, c.code], [true, 'VOTE_CONFLICTING'], 'counted for the claimed block, still reported as a conflict');
  t.ok(c.evidence, 'with its evidence');
  t.same(claimed.twoThirdsMajority(), B, '30/40 for B');
  t.equal(claimed.votedPower, 30n, 'the validator counts once in the total');
  const commit = claimed.makeCommit();
  t.same(commit.signatures.map((s) => s.blockIdFlag), [BlockIDFlag.Commit, BlockIDFlag.Commit, BlockIDFlag.Absent, BlockIDFlag.Commit], 'the commit carries the B precommit of validator 3');
  t.same(claimed.addVote(vote(env, 3, SignedMsgType.Precommit, B)), { added: false }, 'a resend is a plain duplicate');
  t.same(claimed.addVote(vote(env, 3, SignedMsgType.Precommit, F)), { added: false }, 'so is the fake one (vote_set.go getVote looks in votesByBlock too)');
  t.same(claimed.twoThirdsMajority(), B);

  // HeightVoteSet keeps a claim for a round it has not created yet.
  const hvs = new HeightVoteSet(CHAIN, 1n, env.vs);
  hvs.setPeerMaj23Precommits(2, B);
  hvs.setRound(2);
  const p2 = hvs.precommits(2)!;
  p2.addVote(vote(env, 3, SignedMsgType.Precommit, F, 2));
  p2.addVote(vote(env, 0, SignedMsgType.Precommit, B, 2));
  p2.addVote(vote(env, 1, SignedMsgType.Precommit, B, 2));
  t.ok(hvs.addVote(vote(env, 3, SignedMsgType.Precommit, B, 2), 'peer').added, 'the pending claim applies to the new round');
  t.same(p2.twoThirdsMajority(), B);
});
