/**
 * The consensus state machine step by step, driven by hand (cometbft: consensus/state_test.go):
 * a ManualTicker fires the timeouts, the test plays the other three validators by signing their
 * proposals and votes, and the node's outgoing messages and events are recorded. Covers the
 * proposer path, the v0.38 prevote rule, lock / unlock / relock across rounds, round skipping,
 * invalid and conflicting votes, and WAL catch-up replay after a restart.
 */
import { stateAfter } from '../helpers/sim-block.js';
import { makeBlock } from '../../src/state/execution.js';
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SignedMsgType, type Block, type BlockID, type Commit, type Proposal, type Vote } from '../../src/types/block.js';
import { ValidatorSet } from '../../src/types/validator_set.js';
import { defaultConsensusParams } from '../../src/types/params.js';
import type { State } from '../../src/types/state.js';
import type { BlockExecutor } from '../../src/state/executor.js';
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import { sha256 } from '../../src/crypto/hash.js';
import { dataHash } from '../../src/types/hashing.js';
import { emptyBlockId, emptyCommit } from '../../src/types/codec.js';
import { blockIdOf } from '../../src/types/partset.js';
import { proposalSignBytes, voteSignBytes } from '../../src/types/signbytes.js';
import { ConsensusState } from '../../src/consensus/state.js';
import { FilePV, MemoryPrivValidator } from '../../src/consensus/privval.js';
import { ManualTicker } from '../../src/consensus/ticker.js';
import { WAL } from '../../src/consensus/wal.js';
import { RoundStep, testConsensusConfig, type ConsensusEventName, type ConsensusMessage, type DuplicateVoteEvidence } from '../../src/consensus/types.js';
import { nilBlockId } from '../../src/consensus/util.js';

const CHAIN = 'state-chain';
const GENESIS_TIME = 1_700_000_000_000_000_000n;
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

const keys = Array.from({ length: 4 }, (_, i) => Ed25519PrivKey.fromSeed(new Uint8Array(32).fill(i + 1)));
const vals = new ValidatorSet(keys.map((k) => ({ pubKey: { type: 'ed25519' as const, bytes: k.pubKey }, power: 10n })));
/** The key of the validator at set index i. */
const keyAt = (i: number) => keys.find((k) => hex(k.address) === hex(vals.validators[i]!.address))!;
const proposerIndex = (round: number) => {
  const p = (round === 0 ? vals : vals.copyIncrementProposerPriority(round)).proposer;
  return vals.validators.findIndex((v) => hex(v.address) === hex(p.address));
};

function genesis(): State {
  return {
    chainId: CHAIN,
    initialHeight: 1n,
    lastBlockHeight: 0n,
    lastBlockId: emptyBlockId(),
    lastBlockTime: GENESIS_TIME,
    validators: vals.copy(),
    nextValidators: vals.copyIncrementProposerPriority(1),
    lastValidators: new ValidatorSet([]),
    lastHeightValidatorsChanged: 1n,
    consensusParams: defaultConsensusParams(),
    lastHeightConsensusParamsChanged: 1n,
    lastResultsHash: sha256(new Uint8Array(0)),
    appHash: new Uint8Array(0),
    appVersion: 0n,
  };
}

class TestExecutor implements BlockExecutor {
  applied: { blockId: BlockID; block: Block; seen: Commit }[] = [];
  rejectHash: string | null = null;
  private n = 0;

  async createProposalBlock(state: State, lastCommit: Commit, proposer: Uint8Array, time: bigint): Promise<Block> {
    const height = state.lastBlockHeight + 1n;
    const txs = [new TextEncoder().encode(`tx-${height}-${this.n++}-${hex(proposer).slice(0, 6)}`)];
    return makeBlock(state, height, time, lastCommit, proposer, txs, []);
  }

  validateBlock(state: State, block: Block): void {
    if (block.header.height !== state.lastBlockHeight + 1n) throw new Error('wrong height');
    if (hex(block.header.dataHash) !== hex(dataHash(block.data.txs))) throw new Error('wrong data hash');
  }

  async processProposal(_state: State, block: Block): Promise<boolean> {
    return this.rejectHash === null || this.rejectHash !== hex(blockIdOf(block).blockId.hash);
  }

  async applyBlock(state: State, blockId: BlockID, block: Block, seen: Commit): Promise<State> {
    this.applied.push({ blockId, block, seen });
    return stateAfter(state, blockId, block);
  }
}

interface Harness {
  cs: ConsensusState;
  ticker: ManualTicker;
  exec: TestExecutor;
  sent: ConsensusMessage[];
  events: { name: ConsensusEventName; round: number; step?: string }[];
  evidence: DuplicateVoteEvidence[];
  me: number;
  settle(): Promise<void>;
  fire(step?: RoundStep): Promise<void>;
  vote(i: number, type: SignedMsgType, id: BlockID, round: number, height?: bigint): Vote;
  proposal(round: number, block: Block, polRound?: number): Proposal;
  ownVotes(type: SignedMsgType, round: number): Vote[];
}

async function harness(t: Test, me: number, opts: { wal?: WAL; pv?: MemoryPrivValidator; exec?: TestExecutor } = {}): Promise<Harness> {
  const ticker = new ManualTicker();
  const exec = opts.exec ?? new TestExecutor();
  const sent: ConsensusMessage[] = [];
  const events: Harness['events'] = [];
  const evidence: DuplicateVoteEvidence[] = [];
  const cs = new ConsensusState({
    config: { ...testConsensusConfig(), skipTimeoutCommit: false },
    state: genesis(),
    executor: exec,
    privValidator: opts.pv ?? new MemoryPrivValidator(keyAt(me), undefined, { signLogPath: null }),
    broadcast: (m) => sent.push(m),
    ticker,
    wal: opts.wal ?? null,
    onEvent: (name, data) => events.push({ name, round: (data as { round?: number }).round ?? -1, step: (data as { step?: string }).step }),
    onEvidence: (ev) => evidence.push(ev),
    rebroadcastIntervalMs: 0,
    relayVotes: false,
  });
  t.teardown(() => cs.stop());
  await cs.start();
  const settle = () => cs.whenIdle();
  const h: Harness = {
    cs,
    ticker,
    exec,
    sent,
    events,
    evidence,
    me,
    settle,
    async fire(step) {
      await settle();
      if (step !== undefined && ticker.pending?.step !== step) throw new Error(`pending timeout is ${ticker.pending?.step}, wanted ${step}`);
      ticker.fire();
      await settle();
    },
    vote(i, type, id, round, height = 1n) {
      const k = keyAt(i);
      const v: Vote = {
        type,
        height,
        round,
        blockId: id,
        timestamp: GENESIS_TIME + 1_000_000_000n + BigInt(i),
        validatorAddress: k.address,
        validatorIndex: i,
        signature: new Uint8Array(0),
        extension: new Uint8Array(0),
        extensionSignature: new Uint8Array(0),
      };
      return { ...v, signature: k.sign(voteSignBytes(CHAIN, v)) };
    },
    proposal(round, block, polRound = -1) {
      const p: Proposal = { type: SignedMsgType.Proposal, height: 1n, round, polRound, blockId: blockIdOf(block).blockId, timestamp: GENESIS_TIME + 5n, signature: new Uint8Array(0) };
      return { ...p, signature: keyAt(proposerIndex(round)).sign(proposalSignBytes(CHAIN, p)) };
    },
    ownVotes(type, round) {
      return sent.filter((m): m is { kind: 'vote'; vote: Vote } => m.kind === 'vote' && m.vote.type === type && m.vote.round === round).map((m) => m.vote);
    },
  };
  return h;
}

/** A validator index that proposes in none of the given rounds. */
function nonProposer(...rounds: number[]): number {
  return [0, 1, 2, 3].find((i) => rounds.every((r) => proposerIndex(r) !== i))!;
}

async function block(exec: TestExecutor, round: number): Promise<{ block: Block; id: BlockID }> {
  const b = await exec.createProposalBlock(genesis(), emptyCommit(), keyAt(proposerIndex(round)).address, GENESIS_TIME);
  return { block: b, id: blockIdOf(b).blockId };
}

t.test('non-proposer: proposal → prevote, polka → lock + precommit, +2/3 precommits → commit', async (t) => {
  const me = nonProposer(0);
  const h = await harness(t, me);
  t.equal(h.cs.step, RoundStep.NewHeight);
  await h.fire(RoundStep.NewHeight);
  t.equal(h.cs.step, RoundStep.Propose);
  t.equal(h.ticker.pending?.step, RoundStep.Propose, 'propose timeout scheduled');
  t.equal(h.ticker.pending?.duration, 40, 'timeout_propose for round 0');
  const X = await block(h.exec, 0);
  h.cs.receive({ kind: 'proposal', proposal: h.proposal(0, X.block), block: X.block }, 'p0');
  await h.settle();
  t.equal(h.cs.step, RoundStep.Prevote);
  const pv = h.ownVotes(SignedMsgType.Prevote, 0);
  t.equal(pv.length, 1);
  t.same(pv[0]!.blockId, X.id, 'prevoted the proposal block');
  t.ok(h.events.some((e) => e.name === 'CompleteProposal'));

  const others = [0, 1, 2, 3].filter((i) => i !== me);
  h.cs.receive({ kind: 'vote', vote: h.vote(others[0]!, SignedMsgType.Prevote, X.id, 0) }, 'p1');
  await h.settle();
  t.equal(h.cs.step, RoundStep.Prevote, '2 of 4 prevotes: no polka yet');
  h.cs.receive({ kind: 'vote', vote: h.vote(others[1]!, SignedMsgType.Prevote, X.id, 0) }, 'p2');
  await h.settle();
  t.equal(h.cs.step, RoundStep.Precommit);
  t.ok(h.events.some((e) => e.name === 'Polka'));
  t.ok(h.events.some((e) => e.name === 'Lock'));
  const rs = h.cs.getRoundState();
  t.equal(rs.lockedRound, 0);
  t.same(rs.lockedBlockId, X.id);
  t.equal(rs.validRound, 0, 'polka for the proposal block sets ValidBlock');
  t.same(h.ownVotes(SignedMsgType.Precommit, 0)[0]!.blockId, X.id);

  h.cs.receive({ kind: 'vote', vote: h.vote(others[0]!, SignedMsgType.Precommit, X.id, 0) }, 'p1');
  h.cs.receive({ kind: 'vote', vote: h.vote(others[1]!, SignedMsgType.Precommit, X.id, 0) }, 'p2');
  await h.settle();
  t.equal(h.exec.applied.length, 1, 'block applied');
  t.same(h.exec.applied[0]!.blockId, X.id);
  const seen = h.exec.applied[0]!.seen;
  t.equal(seen.signatures.filter((s) => s.blockIdFlag === 2).length, 3, 'seen commit has the 3 precommits');
  t.equal(h.cs.height, 2n);
  t.equal(h.cs.step, RoundStep.NewHeight);
  t.equal(h.ticker.pending?.step, RoundStep.NewHeight, 'round 0 of height 2 scheduled after timeout_commit');
  // A late precommit for height 1 still lands in LastCommit during NewHeight.
  h.cs.receive({ kind: 'vote', vote: h.vote(others[2]!, SignedMsgType.Precommit, X.id, 0) }, 'p3');
  await h.settle();
  t.ok(h.cs.getRoundState().lastCommit!.hasAll(), 'late precommit added to LastCommit');
  const names = h.events.map((e) => e.name);
  t.ok(names.includes('NewRound') && names.includes('NewRoundStep') && names.includes('Vote'));
});

t.test('proposer: proposes on its turn and prevotes its own block', async (t) => {
  const me = proposerIndex(0);
  const h = await harness(t, me);
  await h.fire(RoundStep.NewHeight);
  const props = h.sent.filter((m) => m.kind === 'proposal');
  t.equal(props.length, 1, 'one proposal broadcast');
  const p = props[0]!;
  if (p.kind !== 'proposal') return;
  t.equal(p.proposal.polRound, -1);
  t.equal(p.block.header.time, GENESIS_TIME, 'initial height: genesis time');
  t.same(p.block.header.proposerAddress, keyAt(me).address);
  t.same(h.ownVotes(SignedMsgType.Prevote, 0)[0]?.blockId, p.proposal.blockId);
});

t.test('no proposal before timeout_propose: prevote nil; rejected by the app: prevote nil', async (t) => {
  const me = nonProposer(0);
  const h = await harness(t, me);
  await h.fire(RoundStep.NewHeight);
  await h.fire(RoundStep.Propose);
  t.ok(h.events.some((e) => e.name === 'TimeoutPropose'));
  t.equal(h.ownVotes(SignedMsgType.Prevote, 0)[0]!.blockId.hash.length, 0, 'nil prevote');

  const h2 = await harness(t, me);
  await h2.fire(RoundStep.NewHeight);
  const X = await block(h2.exec, 0);
  h2.exec.rejectHash = hex(X.id.hash);
  h2.cs.receive({ kind: 'vote', vote: h2.vote(0, SignedMsgType.Prevote, X.id, 0) }, 'x'); // noise first
  h2.cs.receive({ kind: 'proposal', proposal: h2.proposal(0, X.block), block: X.block }, 'p0');
  await h2.settle();
  t.equal(h2.ownVotes(SignedMsgType.Prevote, 0)[0]!.blockId.hash.length, 0, 'ProcessProposal said no → nil');
});

t.test('lock in round 0, prevote the locked block in round 1, unlock on a later polka, lock the new block', async (t) => {
  const me = nonProposer(0, 1);
  const h = await harness(t, me);
  const others = [0, 1, 2, 3].filter((i) => i !== me);
  await h.fire(RoundStep.NewHeight);
  const X = await block(h.exec, 0);
  h.cs.receive({ kind: 'proposal', proposal: h.proposal(0, X.block), block: X.block }, 'p');
  for (const i of others.slice(0, 2)) h.cs.receive({ kind: 'vote', vote: h.vote(i, SignedMsgType.Prevote, X.id, 0) }, 'p');
  await h.settle();
  t.same(h.cs.getRoundState().lockedBlockId, X.id, 'locked on X');
  // The others precommit nil: +2/3 precommits for anything but no majority → precommit wait.
  for (const i of others.slice(0, 2)) h.cs.receive({ kind: 'vote', vote: h.vote(i, SignedMsgType.Precommit, nilBlockId(), 0) }, 'p');
  await h.settle();
  t.ok(h.cs.getRoundState().triggeredTimeoutPrecommit, 'TriggeredTimeoutPrecommit set (step stays Precommit)');
  t.equal(h.cs.step, RoundStep.Precommit);
  t.equal(h.ticker.pending?.step, RoundStep.PrecommitWait);
  await h.fire(RoundStep.PrecommitWait);
  t.equal(h.cs.round, 1, 'precommit timeout → round 1');
  t.ok(h.events.some((e) => e.name === 'TimeoutWait'));
  t.equal(h.ticker.pending?.duration, 41, 'timeout_propose + 1 × delta');

  const Y = await block(h.exec, 1);
  h.cs.receive({ kind: 'proposal', proposal: h.proposal(1, Y.block), block: Y.block }, 'p');
  await h.settle();
  t.same(h.ownVotes(SignedMsgType.Prevote, 1)[0]!.blockId, X.id, 'locked: prevotes X, not the new proposal Y');

  // +2/3 of the others prevote Y at round 1: unlock (LockedRound 0 < 1 ≤ 1), then lock Y.
  for (const i of others) h.cs.receive({ kind: 'vote', vote: h.vote(i, SignedMsgType.Prevote, Y.id, 1) }, 'p');
  await h.settle();
  const names = h.events.map((e) => e.name);
  t.ok(names.includes('Unlock'), 'Unlock published');
  const rs = h.cs.getRoundState();
  t.same(rs.lockedBlockId, Y.id, 'locked on Y');
  t.equal(rs.lockedRound, 1);
  t.same(h.ownVotes(SignedMsgType.Precommit, 1)[0]!.blockId, Y.id);
  for (const i of others.slice(0, 2)) h.cs.receive({ kind: 'vote', vote: h.vote(i, SignedMsgType.Precommit, Y.id, 1) }, 'p');
  await h.settle();
  t.same(h.exec.applied.map((a) => hex(a.blockId.hash)), [hex(Y.id.hash)], 'Y committed');
});

t.test('polka for nil unlocks; relock on a polka for the locked block', async (t) => {
  const me = nonProposer(0, 1, 2);
  const h = await harness(t, me);
  const others = [0, 1, 2, 3].filter((i) => i !== me);
  await h.fire(RoundStep.NewHeight);
  const X = await block(h.exec, 0);
  h.cs.receive({ kind: 'proposal', proposal: h.proposal(0, X.block), block: X.block }, 'p');
  for (const i of others.slice(0, 2)) h.cs.receive({ kind: 'vote', vote: h.vote(i, SignedMsgType.Prevote, X.id, 0) }, 'p');
  for (const i of others) h.cs.receive({ kind: 'vote', vote: h.vote(i, SignedMsgType.Precommit, nilBlockId(), 0) }, 'p');
  await h.settle();
  t.equal(h.cs.round, 0);
  await h.fire(RoundStep.PrecommitWait);
  t.equal(h.cs.round, 1);
  // Round 1: a polka for X again → Relock.
  for (const i of others) h.cs.receive({ kind: 'vote', vote: h.vote(i, SignedMsgType.Prevote, X.id, 1) }, 'p');
  await h.settle();
  await h.fire(RoundStep.Propose); // no proposal in round 1: prevote the locked X
  t.same(h.ownVotes(SignedMsgType.Prevote, 1)[0]!.blockId, X.id);
  // Without a proposal the polka alone does not complete it: prevote wait, then precommit.
  await h.fire(RoundStep.PrevoteWait);
  t.ok(h.events.some((e) => e.name === 'Relock' && e.round === 1), 'Relock in round 1');
  t.same(h.ownVotes(SignedMsgType.Precommit, 1)[0]!.blockId, X.id, 'precommits the relocked block');
  t.equal(h.cs.getRoundState().lockedRound, 1);
  for (const i of others) h.cs.receive({ kind: 'vote', vote: h.vote(i, SignedMsgType.Precommit, nilBlockId(), 1) }, 'p');
  await h.settle();
  await h.fire(RoundStep.PrecommitWait);
  t.equal(h.cs.round, 2);
  // Round 2: we prevote X (still locked), then +2/3 prevote nil → unlock and precommit nil.
  await h.fire(RoundStep.Propose);
  t.same(h.ownVotes(SignedMsgType.Prevote, 2)[0]!.blockId, X.id, 'still locked when prevoting');
  for (const i of others) h.cs.receive({ kind: 'vote', vote: h.vote(i, SignedMsgType.Prevote, nilBlockId(), 2) }, 'p');
  await h.settle();
  t.equal(h.cs.getRoundState().lockedBlock, null, 'unlocked by the nil polka');
  t.equal(h.ownVotes(SignedMsgType.Precommit, 2)[0]!.blockId.hash.length, 0, 'precommit nil');
  t.ok(h.events.some((e) => e.name === 'Unlock' && e.round === 2));
});

t.test('round skipping: +2/3 prevotes of a later round move the node there', async (t) => {
  const me = nonProposer(0);
  const h = await harness(t, me);
  const others = [0, 1, 2, 3].filter((i) => i !== me);
  await h.fire(RoundStep.NewHeight);
  h.cs.receive({ kind: 'vote', vote: h.vote(others[0]!, SignedMsgType.Prevote, nilBlockId(), 3) }, 'a');
  h.cs.receive({ kind: 'vote', vote: h.vote(others[1]!, SignedMsgType.Prevote, nilBlockId(), 3) }, 'b');
  await h.settle();
  t.equal(h.cs.round, 0, '2 of 4 at round 3: stay');
  h.cs.receive({ kind: 'vote', vote: h.vote(others[2]!, SignedMsgType.Prevote, nilBlockId(), 3) }, 'c');
  await h.settle();
  t.equal(h.cs.round, 3, 'jumped to round 3');
  t.ok(h.events.some((e) => e.name === 'NewRound' && e.round === 3));
  // +2/3 precommits of a later round for a block: straight to commit once the block is here.
  const X = await block(h.exec, 0);
  for (const i of others) h.cs.receive({ kind: 'vote', vote: h.vote(i, SignedMsgType.Precommit, X.id, 5) }, `q${i}`);
  await h.settle();
  t.equal(h.cs.step, RoundStep.Commit, 'commit step, waiting for the block');
  t.equal(h.exec.applied.length, 0);
  // The block arrives in a catch-up message (unsigned proposal).
  const carrier: Proposal = { type: SignedMsgType.Proposal, height: 1n, round: 5, polRound: -1, blockId: X.id, timestamp: 0n, signature: new Uint8Array(0) };
  h.cs.receive({ kind: 'proposal', proposal: carrier, block: X.block }, 'q0');
  await h.settle();
  t.equal(h.exec.applied.length, 1, 'committed with the block from the catch-up message');
  t.equal(h.exec.applied[0]!.seen.round, 5);
});

t.test('bad signatures are dropped; conflicting votes become evidence once', async (t) => {
  const me = nonProposer(0);
  const h = await harness(t, me);
  const others = [0, 1, 2, 3].filter((i) => i !== me);
  await h.fire(RoundStep.NewHeight);
  const X = await block(h.exec, 0);
  const forged = { ...h.vote(others[0]!, SignedMsgType.Prevote, X.id, 0), signature: new Uint8Array(64).fill(1) };
  h.cs.receive({ kind: 'vote', vote: forged }, 'evil');
  await h.settle();
  t.equal(h.cs.getRoundState().votes.prevotes(0)!.bitArray().countTrue(), 0, 'forged vote not counted');
  // A forged proposal signature is refused too.
  const p = h.proposal(0, X.block);
  h.cs.receive({ kind: 'proposal', proposal: { ...p, signature: new Uint8Array(64).fill(2) }, block: X.block }, 'evil');
  await h.settle();
  t.equal(h.cs.getRoundState().proposal, null, 'forged proposal refused');
  // A block that does not match the proposal's BlockID is dropped.
  const Y = await block(h.exec, 0);
  h.cs.receive({ kind: 'proposal', proposal: p, block: Y.block }, 'evil');
  await h.settle();
  t.equal(h.cs.getRoundState().proposal, null, 'mismatched block: proposal not taken');

  const a = h.vote(others[1]!, SignedMsgType.Prevote, X.id, 0);
  const b = h.vote(others[1]!, SignedMsgType.Prevote, Y.id, 0);
  h.cs.receive({ kind: 'vote', vote: a }, 'p1');
  await h.settle();
  h.cs.receive({ kind: 'vote', vote: b }, 'p2');
  h.cs.receive({ kind: 'vote', vote: b }, 'p3');
  await h.settle();
  t.equal(h.evidence.length, 1, 'reported once');
  t.same([h.evidence[0]!.voteA, h.evidence[0]!.voteB].map((v) => hex(v.signature)).sort(), [hex(a.signature), hex(b.signature)].sort());
  t.same(h.cs.getRoundState().votes.prevotes(0)!.getByIndex(others[1]!)!.signature, a.signature, 'first vote kept');
});

t.test('restart: catch-up replay of the WAL restores the proposal and our own vote', async (t) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  const walPath = WAL.defaultPath(home);
  const me = nonProposer(0);
  const pv = new MemoryPrivValidator(keyAt(me), undefined, { signLogPath: null });
  const exec = new TestExecutor();
  const h = await harness(t, me, { wal: new WAL(walPath), pv, exec });
  await h.fire(RoundStep.NewHeight);
  const X = await block(exec, 0);
  h.cs.receive({ kind: 'proposal', proposal: h.proposal(0, X.block), block: X.block }, 'p');
  await h.settle();
  const before = h.ownVotes(SignedMsgType.Prevote, 0)[0]!;
  await h.cs.stop();

  // Same validator, same WAL, fresh process state.
  const h2 = await harness(t, me, { wal: new WAL(walPath), pv, exec });
  await h2.settle();
  const rs = h2.cs.getRoundState();
  t.equal(rs.round, 0);
  t.ok(rs.step >= RoundStep.Prevote, `back in the prevote step (${rs.step})`);
  t.not(rs.proposal, null, 'proposal replayed');
  t.same(rs.proposalBlockId, X.id, 'block reassembled from the WAL parts');
  const mine = rs.votes.prevotes(0)!.getByIndex(me);
  t.same(mine?.signature, before.signature, 'our prevote replayed, same signature');
  // After the replay, our own vote goes out again (it may never have left before the crash).
  t.ok(h2.ownVotes(SignedMsgType.Prevote, 0).length >= 1, 're-broadcast after replay');
  t.ok(fs.readdirSync(path.dirname(walPath)).includes('wal'));
});

t.test('create_empty_blocks = false: proof block at the initial height, then wait for txs (or the interval)', async (t) => {
  const key = keys[0]!;
  const one = new ValidatorSet([{ pubKey: { type: 'ed25519' as const, bytes: key.pubKey }, power: 10n }]);
  const g: State = { ...genesis(), validators: one.copy(), nextValidators: one.copyIncrementProposerPriority(1) };
  const run = async (interval: number) => {
    const ticker = new ManualTicker();
    const exec = new TestExecutor();
    const cs = new ConsensusState({
      config: { ...testConsensusConfig(), skipTimeoutCommit: false, createEmptyBlocks: false, createEmptyBlocksInterval: interval },
      state: g,
      executor: exec,
      privValidator: new MemoryPrivValidator(key, undefined, { signLogPath: null }),
      broadcast: () => {},
      ticker,
      rebroadcastIntervalMs: 0,
    });
    t.teardown(() => cs.stop());
    await cs.start();
    const fire = async () => {
      await cs.whenIdle();
      ticker.fire();
      await cs.whenIdle();
    };
    await fire(); // NewHeight → round 0 at the initial height: a proof block is needed
    t.equal(exec.applied.length, 1, 'height 1 committed without txs (proof block)');
    await fire(); // height 2 round 0: the app hash did not change, so wait for txs
    t.equal(cs.step, RoundStep.NewRound, 'waiting for txs in NewRound');
    return { cs, ticker, exec, fire };
  };
  {
    const { cs, ticker, exec } = await run(0);
    t.equal(ticker.pending, null, 'no interval: no timeout scheduled');
    cs.notifyTxsAvailable();
    await cs.whenIdle();
    t.equal(exec.applied.length, 2, 'txs available → propose and commit');
  }
  {
    const { ticker, exec, fire } = await run(30);
    t.equal(ticker.pending?.step, RoundStep.NewRound);
    t.equal(ticker.pending?.duration, 30, 'create_empty_blocks_interval');
    await fire();
    t.equal(exec.applied.length, 2, 'interval elapsed → empty block');
  }
});

t.test('a private validator that cannot save its state: no vote while it fails, the vote goes out once it works (no restart)', async (t) => {
  const me = nonProposer(0);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  const { keyFile, stateFile } = FilePV.defaultPaths(home);
  const pv = FilePV.generate(keyFile, stateFile, { key: keyAt(me), signLogPath: null, persistAttempts: 1 });
  t.teardown(() => pv.close());
  const h = await harness(t, me, { pv });
  await h.fire(RoundStep.NewHeight);
  const X = await block(h.exec, 0);
  const dataDir = path.dirname(stateFile);
  fs.renameSync(dataDir, `${dataDir}.away`);
  h.cs.receive({ kind: 'proposal', proposal: h.proposal(0, X.block), block: X.block }, 'p0');
  await h.settle();
  t.equal(h.cs.step, RoundStep.Prevote);
  t.equal(h.ownVotes(SignedMsgType.Prevote, 0).length, 0, 'no prevote: its state could not be saved');
  fs.renameSync(`${dataDir}.away`, dataDir);
  const deadline = Date.now() + 60_000;
  while (h.ownVotes(SignedMsgType.Prevote, 0).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const pvs = h.ownVotes(SignedMsgType.Prevote, 0);
  t.equal(pvs.length, 1, 'the prevote went out after the state could be saved');
  t.same(pvs[0]!.blockId, X.id, 'for the proposal block');
  t.equal(JSON.parse(fs.readFileSync(stateFile, 'utf8')).step, 2, 'the prevote is on disk');
  // Consensus goes on: the polka and the commit follow as usual.
  const others = [0, 1, 2, 3].filter((i) => i !== me);
  for (const i of others.slice(0, 2)) h.cs.receive({ kind: 'vote', vote: h.vote(i, SignedMsgType.Prevote, X.id, 0) }, `p${i}`);
  await h.settle();
  t.equal(h.ownVotes(SignedMsgType.Precommit, 0).length, 1, 'precommit signed');
  for (const i of others.slice(0, 2)) h.cs.receive({ kind: 'vote', vote: h.vote(i, SignedMsgType.Precommit, X.id, 0) }, `p${i}`);
  await h.settle();
  t.equal(h.cs.height, 2n, 'the block was committed');
});
