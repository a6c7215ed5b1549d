/**
 * The evidence pool (src/evidence/pool.ts; cometbft: evidence/pool.go, evidence/verify.go) over a
 * real LMDB environment: add, already pending, invalid, expiry by blocks AND time, committed
 * evidence never re-added or re-proposed, PendingEvidence within max_bytes, CheckEvidence, the
 * consensus-report path, pruning, and crash safety (a reopened environment keeps pending
 * evidence; a block transaction that fails leaves the pool as it was).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import t from 'tap';
import { EvidenceChain, SEC } from '../helpers/evidence-chain.js';
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import { EvidenceError, EvidencePool } from '../../src/evidence/pool.js';
import type { State } from '../../src/types/state.js';
import { Storage } from '../../src/store/storage.js';
import { SignedMsgType, type Vote } from '../../src/types/block.js';
import {
  decodeEvidenceItem,
  duplicateVoteEvidenceString,
  encodeDuplicateVoteEvidence,
  evidenceListByteSize,
  newDuplicateVoteEvidence,
  type CheckedDuplicateVoteEvidence,
} from '../../src/types/evidence.js';
import { evidenceItemHash } from '../../src/types/hashing.js';
import { defaultConsensusParams } from '../../src/types/params.js';
import { ValidatorSet } from '../../src/types/validator_set.js';

const CHAIN_ID = 'evidence-test';

const key = Ed25519PrivKey.fromSeed(new Uint8Array(32).fill(7));
const other = Ed25519PrivKey.fromSeed(new Uint8Array(32).fill(9));
const vals = new ValidatorSet([
  { pubKey: { type: 'ed25519', bytes: key.pubKey }, power: 10n },
  { pubKey: { type: 'ed25519', bytes: other.pubKey }, power: 5n },
]);
/** Heights 1..1000, block h made at T0 + h seconds. */
const ec = new EvidenceChain(CHAIN_ID, vals, 1000n);
const chain = ec.store;
const timeOf = (h: bigint) => ec.timeOf(h);
const vote = (h: bigint, signer = key) => ec.vote(h, signer);
/** Valid duplicate-vote evidence at height h. */
const dve = (h: bigint, signer = key): CheckedDuplicateVoteEvidence => ec.dve(h, signer);

function stateAt(height: bigint, time = timeOf(height), evidence: Partial<State['consensusParams']['evidence']> = {}): State {
  const params = defaultConsensusParams();
  params.evidence = { ...params.evidence, ...evidence };
  return {
    chainId: CHAIN_ID,
    initialHeight: 1n,
    lastBlockHeight: height,
    lastBlockId: { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } },
    lastBlockTime: time,
    validators: vals,
    nextValidators: vals,
    lastValidators: vals,
    lastHeightValidatorsChanged: 1n,
    consensusParams: params,
    lastHeightConsensusParamsChanged: 1n,
    lastResultsHash: new Uint8Array(0),
    appHash: new Uint8Array(0),
    appVersion: 0n,
  };
}

function openStorage(dir: string): Storage {
  return Storage.open({ file: path.join(dir, 'chaind.mdb'), noSync: true });
}

/** A block's update: inside the storage's write transaction, then the in-memory step. */
function commitUpdate(storage: Storage, pool: EvidencePool, state: State, items: Uint8Array[]): void {
  let done: (() => void) | undefined;
  storage.transactionSync(() => {
    done = pool.update(state, items);
  });
  done!();
}

t.test('DuplicateVoteEvidence proto bytes: CometBFT vector (types/evidence_test.go TestEvidenceVectors)', async (t) => {
  // exampleVote(type): height 3, round 2, 2017-12-25T03:00:01.234Z, block sha256("blockID_hash"),
  // parts {1000000, sha256("blockID_part_set_header_hash")}, address sha256("validator_address")[:20],
  // index 56789, no signature. Evidence time 2019-01-01T00:00:00Z, one validator of power 10.
  const sha = (s: string) => new Uint8Array(createHash('sha256').update(s).digest());
  const example = (type: SignedMsgType): Vote => ({
    type,
    height: 3n,
    round: 2,
    blockId: { hash: sha('blockID_hash'), partSetHeader: { total: 1000000, hash: sha('blockID_part_set_header_hash') } },
    timestamp: 1514170801234000000n,
    validatorAddress: sha('validator_address').subarray(0, 20),
    validatorIndex: 56789,
    signature: new Uint8Array(0),
    extension: new Uint8Array(0),
    extensionSignature: new Uint8Array(0),
  });
  const set = { getByAddress: () => ({ validator: { votingPower: 10n } }), totalVotingPower: () => 10n };
  const ev = newDuplicateVoteEvidence(example(SignedMsgType.Prevote), example(SignedMsgType.Precommit), 1546300800n * SEC, set)!;
  const item = encodeDuplicateVoteEvidence(ev);
  // EvidenceList{1: item}
  const list = Buffer.concat([Buffer.from([0x0a, (item.length & 0x7f) | 0x80, item.length >> 7]), item]).toString('hex');
  t.equal(
    list,
    '0a85020a82020a79080210031802224a0a208b01023386c371778ecb6368573e539afc3cc860ec3a2f614e54fe5652f4fc80122608c0843d122072db3d959635dff1bb567bedaa70573392c5159666a3f8caf11e413aac52207a2a0b08b1d381d20510809dca6f32146af1f4111082efb388211bc72c55bcd61e9ac3d538d5bb031279080110031802224a0a208b01023386c371778ecb6368573e539afc3cc860ec3a2f614e54fe5652f4fc80122608c0843d122072db3d959635dff1bb567bedaa70573392c5159666a3f8caf11e413aac52207a2a0b08b1d381d20510809dca6f32146af1f4111082efb388211bc72c55bcd61e9ac3d538d5bb03180a200a2a060880dbaae105',
  );
  t.equal(evidenceListByteSize([item]), BigInt(list.length / 2), 'EvidenceList.ByteSize');
});

t.test('evidence pool', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  let storage = openStorage(dir);
  t.teardown(async () => {
    await storage.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const newPool = (state: State) => new EvidencePool({ store: storage.evidence, chain, state });
  let pool = newPool(stateAt(10n));
  let committedItem: Uint8Array = new Uint8Array(0);

  await t.test('the proto item round-trips and ValidateBasic-passing evidence is added', async (t) => {
    const ev = dve(3n);
    const item = encodeDuplicateVoteEvidence(ev);
    const back = decodeEvidenceItem(item);
    t.same(back, { kind: 'DuplicateVoteEvidence', ...ev });
    const hash = pool.addEvidence(ev);
    t.same(hash, evidenceItemHash(item), 'AddEvidence answers Evidence.Hash()');
    t.equal(pool.size(), 1);
    t.ok(pool.isPending(item));
    t.same(pool.pendingEvidence(-1n).evidence, [item]);
  });

  await t.test('already pending: no error, same hash, not added twice', async (t) => {
    const [item] = pool.pendingEvidence(-1n).evidence;
    const ev = decodeEvidenceItem(item!) as CheckedDuplicateVoteEvidence & { kind: 'DuplicateVoteEvidence' };
    t.same(pool.addEvidence(ev), evidenceItemHash(item!));
    t.equal(pool.size(), 1);
  });

  await t.test('invalid evidence: CometBFT text', async (t) => {
    const ev = { ...dve(4n), validatorPower: 7n };
    t.throws(() => pool.addEvidence(ev), {
      code: 'INVALID_EVIDENCE',
      message: `Invalid evidence: validator power from evidence and our validator set does not match (7 != 10). Evidence: ${duplicateVoteEvidenceString(ev)}`,
    });
    const far = dve(2000n);
    t.throws(() => pool.addEvidence(far), { message: new RegExp(`^Invalid evidence: don't have header #2000\\. Evidence: `) });
    t.equal(pool.size(), 1);
  });

  await t.test('expiry needs both max_age_num_blocks and max_age_duration', async (t) => {
    const limits = { maxAgeNumBlocks: 5n, maxAgeDuration: 5n * SEC };
    // Evidence at height 3, time T0+3s. Both bounds exceeded: too old.
    const both = newPool(stateAt(100n, timeOf(100n), limits));
    const ev = dve(3n);
    t.throws(() => both.addEvidence(ev), {
      code: 'INVALID_EVIDENCE',
      message: /^Invalid evidence: evidence from height 3 \(created at: .* \+0000 UTC\) is too old; min height is 95 and evidence can not be older than /,
    });
    // Only the block bound exceeded (the chain stalled in time): still valid.
    const byBlocksOnly = newPool(stateAt(100n, timeOf(3n) + 4n * SEC, limits));
    t.doesNotThrow(() => byBlocksOnly.addEvidence(dve(3n)));
    // Only the time bound exceeded (few blocks): still valid.
    const byTimeOnly = newPool(stateAt(6n, timeOf(3n) + 100n * SEC, limits));
    t.doesNotThrow(() => byTimeOnly.addEvidence(dve(3n)));
    // Clean up what these pools added, through a committed block each would see as expired.
    commitUpdate(storage, newPool(stateAt(100n, timeOf(100n), limits)), stateAt(101n, timeOf(101n), limits), []);
  });

  await t.test('committed evidence: removed from pending, never re-added or re-proposed', async (t) => {
    // The expiry cleanup above pruned everything at low heights; start from a fresh item.
    pool = newPool(stateAt(10n));
    const ev = dve(8n);
    pool.addEvidence(ev);
    const item = encodeDuplicateVoteEvidence(ev);
    committedItem = item;
    t.ok(pool.isPending(item));
    commitUpdate(storage, pool, stateAt(11n), [item]);
    t.equal(pool.state.lastBlockHeight, 11n, 'the pool takes the new state');
    t.notOk(pool.isPending(item));
    t.ok(pool.isCommitted(item));
    t.same(pool.pendingEvidence(-1n).evidence, [], 'not proposed again');
    // AddEvidence of committed evidence is not an error in CometBFT, and adds nothing.
    t.same(pool.addEvidence(ev), evidenceItemHash(item));
    t.notOk(pool.isPending(item));
    // A block that carries it again is invalid.
    t.throws(() => pool.checkEvidence(pool.state, [item]), {
      code: 'INVALID_EVIDENCE',
      message: `Invalid evidence: evidence was already committed. Evidence: ${duplicateVoteEvidenceString(ev)}`,
    });
  });

  await t.test('CheckEvidence: verifies new evidence, adds it, refuses duplicates in one block', async (t) => {
    const ev = dve(9n, other);
    const item = encodeDuplicateVoteEvidence(ev);
    t.notOk(pool.isPending(item));
    pool.checkEvidence(pool.state, [item]);
    t.ok(pool.isPending(item), 'evidence new to this node is kept pending');
    t.throws(() => pool.checkEvidence(pool.state, [item, item]), { message: `Invalid evidence: duplicate evidence. Evidence: ${duplicateVoteEvidenceString(ev)}` });
    const bad = encodeDuplicateVoteEvidence({ ...dve(9n), totalVotingPower: 99n });
    t.throws(() => pool.checkEvidence(pool.state, [bad]), {
      code: 'INVALID_EVIDENCE',
      message: 'total voting power from the evidence and our validator set does not match (99 != 15)',
    });
    t.notOk(pool.isPending(bad));
  });

  await t.test('PendingEvidence stays within max_bytes, oldest first', async (t) => {
    const more = [dve(5n), dve(6n), dve(7n)];
    for (const ev of more) pool.addEvidence(ev);
    const all = pool.pendingEvidence(-1n);
    t.equal(all.evidence.length, 4);
    t.equal(all.size, evidenceListByteSize(all.evidence));
    const heights = all.evidence.map((i) => (decodeEvidenceItem(i) as CheckedDuplicateVoteEvidence).voteA.height);
    t.same(heights, [5n, 6n, 7n, 9n], 'ordered by height');
    const two = evidenceListByteSize(all.evidence.slice(0, 2));
    t.same(pool.pendingEvidence(two).evidence, all.evidence.slice(0, 2), 'exactly two fit');
    t.same(pool.pendingEvidence(two - 1n).evidence, all.evidence.slice(0, 1), 'one byte less: one');
    t.same(pool.pendingEvidence(0n), { evidence: [], size: 0n });
  });

  await t.test('conflicting votes from consensus become evidence at the next update', async (t) => {
    const a = vote(12n, other);
    const b = vote(12n, other);
    pool.reportConflictingVotes(a, b);
    const before = pool.size();
    const st = stateAt(12n);
    commitUpdate(storage, pool, st, []);
    t.equal(pool.size(), before + 1);
    const want = newDuplicateVoteEvidence(a, b, st.lastBlockTime, vals)!;
    t.equal(want.validatorPower, 5n);
    t.equal(want.totalVotingPower, 15n);
    t.ok(pool.isPending(encodeDuplicateVoteEvidence(want)), 'timed by the block of that height, votes in BlockID.Key() order');
    // The buffer is flushed: the next update adds nothing.
    commitUpdate(storage, pool, stateAt(13n), []);
    t.equal(pool.size(), before + 1);
  });

  await t.test('a failed block transaction leaves the pool as it was', async (t) => {
    const pending = pool.pendingEvidence(-1n).evidence;
    const h = pool.state.lastBlockHeight;
    t.throws(() =>
      storage.transactionSync(() => {
        pool.update(stateAt(h + 1n), [pending[0]!]);
        throw new Error('disk full');
      }),
    );
    t.equal(pool.state.lastBlockHeight, h);
    t.ok(pool.isPending(pending[0]!));
    t.notOk(pool.isCommitted(pending[0]!));
    t.throws(() => pool.update(stateAt(h), []), /less than or equal to previous state height/);
  });

  await t.test('a restart (reopened LMDB) keeps pending and committed evidence', async (t) => {
    const pending = pool.pendingEvidence(-1n).evidence;
    t.ok(pending.length > 0);
    const state = pool.state;
    await storage.close();
    storage = openStorage(dir);
    pool = newPool(state);
    t.same(pool.pendingEvidence(-1n).evidence, pending);
    t.ok(pool.isCommitted(committedItem), 'committed evidence is still remembered');
    t.same(pool.addEvidence(decodeEvidenceItem(committedItem) as CheckedDuplicateVoteEvidence), evidenceItemHash(committedItem));
    t.notOk(pool.isPending(committedItem), 'and still not re-added');
  });

  await t.test('expired pending evidence is pruned by update and on open', async (t) => {
    const limits = { maxAgeNumBlocks: 10n, maxAgeDuration: 10n * SEC };
    const h = pool.state.lastBlockHeight;
    const count = pool.size();
    t.ok(count > 0);
    // Params with short limits from the start; nothing has expired yet at h.
    const p = newPool(stateAt(h, timeOf(h), limits));
    t.equal(p.size(), count);
    commitUpdate(storage, p, stateAt(h + 1n, timeOf(h + 1n), limits), []);
    t.equal(p.size(), count, 'not yet');
    // Far past both bounds of every pending item.
    commitUpdate(storage, p, stateAt(h + 100n, timeOf(h + 100n), limits), []);
    t.equal(p.size(), 0, 'all pruned');
    // On open: an item that was valid when added but has expired by the time of the restart.
    const fresh = newPool(stateAt(h + 100n));
    fresh.addEvidence(dve(h + 50n));
    t.equal(fresh.size(), 1);
    const reopened = newPool(stateAt(h + 500n, timeOf(h + 500n), limits));
    t.equal(reopened.size(), 0);
  });

  t.ok(pool instanceof EvidencePool);
  t.ok(new EvidenceError('INVALID_EVIDENCE', 'x') instanceof Error);
});
