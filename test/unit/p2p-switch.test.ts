/**
 * The Switch and the consensus reactor over real loopback connections (SecretConnection +
 * MConnection): a persistent peer connects, only the reactors' channels are advertised, a signed
 * proposal crosses as Proposal + BlockParts of a 3-part block and is handed over whole, votes are
 * not sent twice, NewRoundStep updates the PeerState, a lagging peer gets the committed block and
 * its precommits from the block store, and an invalid message disconnects the peer, which the
 * persistent dialler then reconnects.
 */
import t, { type Test } from 'tap';
import { defaultNodeConfig, type P2PConfig } from '../../src/config/node-config.js';
import type { ConsensusEventData, ConsensusEventName, ConsensusMessage } from '../../src/consensus/types.js';
import { commitSigToVote } from '../../src/consensus/vote_set.js';
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import { ConsensusReactor } from '../../src/p2p/reactors/consensus.js';
import { Switch } from '../../src/p2p/switch.js';
import { MempoolReactor } from '../../src/p2p/reactors/mempool.js';
import { EvidenceReactor } from '../../src/p2p/reactors/evidence.js';
import { EVIDENCE_CHANNEL } from '../../src/p2p/messages/evidence.js';
import type { Mempool } from '../../src/mempool/mempool.js';
import { DATA_CHANNEL } from '../../src/p2p/messages/consensus.js';
import { SignedMsgType, type Block, type Commit, type Proposal, type Vote } from '../../src/types/block.js';
import { encodeBlock } from '../../src/types/codec.js';
import { blockIdOf } from '../../src/types/partset.js';
import { BLOCKS, commitFromJSON, headerFromJSON } from '../helpers/comet-json.js';
import { makeNodeInfo, waitFor } from '../helpers/p2p.js';

function blockFromJSON(j: any, extraTx?: Uint8Array): Block {
  return {
    header: headerFromJSON(j.header),
    data: { txs: [...j.data.txs.map((x: string) => Uint8Array.from(Buffer.from(x, 'base64'))), ...(extraTx ? [extraTx] : [])] },
    evidence: [],
    lastCommit: commitFromJSON(j.last_commit),
  };
}

class FakeConsensus {
  readonly got: { msg: ConsensusMessage; peer: string }[] = [];
  /** What a consensus being swapped drops (SyncController.receive while not running). */
  readonly dropped: ConsensusMessage[] = [];
  deaf = false;
  syncing = false;
  private fn: ((n: ConsensusEventName, d: ConsensusEventData) => void) | null = null;
  receive(msg: ConsensusMessage, peer: string): void {
    if (this.deaf) this.dropped.push(msg);
    else this.got.push({ msg, peer });
  }
  subscribe(fn: (n: ConsensusEventName, d: ConsensusEventData) => void): () => void {
    this.fn = fn;
    return () => (this.fn = null);
  }
  emit(n: ConsensusEventName, d: ConsensusEventData): void {
    this.fn?.(n, d);
  }
}

function p2pConfig(over: Partial<P2PConfig> = {}): P2PConfig {
  return { ...defaultNodeConfig().p2p, laddr: 'tcp://127.0.0.1:0', allowDuplicateIp: true, ...over };
}

const block1 = blockFromJSON(BLOCKS[0]!.block);
const commit1: Commit = commitFromJSON(BLOCKS[1]!.block.last_commit);

function node(over: Partial<P2PConfig> = {}, store: { loadBlock: (h: bigint) => Block | null; loadSeenCommit: (h: bigint) => Commit | null } = { loadBlock: () => null, loadSeenCommit: () => null }) {
  const key = Ed25519PrivKey.generate();
  const cons = new FakeConsensus();
  const reactor = new ConsensusReactor({ blockStore: store });
  reactor.setConsensus(cons);
  const sw = new Switch({ nodeKey: key, nodeInfo: makeNodeInfo(key, { channels: new Uint8Array(0) }), config: p2pConfig(over), reconnectBaseMs: 100 });
  sw.addReactor(reactor);
  return { sw, cons, reactor, id: sw.nodeInfo.id };
}

type TestNode = ReturnType<typeof node>;

/** A started switch, stopped with the test. */
async function started(t: Test, over: Partial<P2PConfig> = {}, store?: Parameters<typeof node>[1]): Promise<TestNode> {
  const n = node(over, store);
  await n.sw.start();
  t.teardown(() => n.sw.stop());
  return n;
}

/** A started switch that has `a` as its persistent peer. */
function dialling(t: Test, a: TestNode): Promise<TestNode> {
  return started(t, { persistentPeers: [`${a.id}@127.0.0.1:${a.sw.listenPort}`] });
}

/** Both consensus reactors hold the other's PeerState. */
function connected(a: TestNode, b: TestNode): Promise<unknown> {
  return waitFor(() => a.reactor.peerState(b.id) !== undefined && b.reactor.peerState(a.id) !== undefined, 20_000, 'connected');
}

/** Block 1 and its commit, as a block store serves them for catch-up. */
const STORE1 = {
  loadBlock: (h: bigint) => (h === 1n ? block1 : null),
  loadSeenCommit: () => null,
  loadBlockCommit: (h: bigint) => (h === 1n ? commit1 : null),
};

/** a (over `store`) and b, which has a as persistent peer; both started. */
async function pair(t: Test, store?: Parameters<typeof node>[1]): Promise<{ a: TestNode; b: TestNode }> {
  const a = await started(t, {}, store);
  return { a, b: await dialling(t, a) };
}

t.test('switch + consensus reactor over loopback', async (t) => {
  const { a, b } = await pair(t, STORE1);

  await waitFor(() => a.sw.peerList().length === 1 && b.sw.peerList().length === 1, 20_000, 'connected');
  const bOnA = a.sw.getPeer(b.id)!;
  const aOnB = b.sw.getPeer(a.id)!;
  t.equal(aOnB.outbound, true, 'b dialled a');
  t.equal(bOnA.outbound, false, 'a accepted b');
  t.same([...aOnB.nodeInfo.channels], [0x20, 0x21, 0x22, 0x23], 'a advertises exactly its reactor\'s channels');
  t.ok(aOnB.persistent, 'a is a persistent peer of b');

  // NewRoundStep → PeerState.
  a.cons.emit('NewRoundStep', { height: 5n, round: 0, step: 'RoundStepPropose' });
  await waitFor(() => b.reactor.peerState(a.id)?.height === 5n, 10_000, 'b learns a\'s height');
  t.equal(b.reactor.peerState(a.id)!.step, 3, 'step Propose');

  // A signed proposal of a 3-part block: Proposal + 3 BlockParts, handed over whole.
  const big = blockFromJSON(BLOCKS[1]!.block, new Uint8Array(150_000).fill(7));
  const { blockId, parts } = blockIdOf(big);
  t.equal(parts.length, 3, 'the block has three parts');
  const proposal: Proposal = { type: SignedMsgType.Proposal, height: 2n, round: 0, polRound: -1, blockId, timestamp: big.header.time, signature: new Uint8Array(64).fill(1) };
  a.reactor.broadcast({ kind: 'proposal', proposal, block: big });
  await waitFor(() => b.cons.got.some((g) => g.msg.kind === 'proposal'), 20_000, 'proposal delivered');
  const got = b.cons.got.find((g) => g.msg.kind === 'proposal')!;
  t.equal(got.peer, a.id, 'from a');
  if (got.msg.kind === 'proposal') {
    t.same(got.msg.proposal.signature, proposal.signature, 'the signed proposal');
    t.same(Buffer.from(encodeBlock(got.msg.block)), Buffer.from(encodeBlock(big)), 'the whole block, reassembled from its parts');
  }

  // Catch-up: b says it is at height 1 while a is at 5 → a sends block 1's parts and its precommits.
  const before = b.cons.got.length;
  b.cons.emit('NewRoundStep', { height: 1n, round: 0, step: 'RoundStepNewHeight' });
  await waitFor(() => b.cons.got.slice(before).some((g) => g.msg.kind === 'proposal' && g.msg.proposal.height === 1n), 20_000, 'catch-up block');
  const cu = b.cons.got.slice(before).find((g) => g.msg.kind === 'proposal')!;
  if (cu.msg.kind === 'proposal') {
    t.equal(cu.msg.proposal.signature.length, 0, 'a catch-up proposal is unsigned');
    t.same(cu.msg.proposal.blockId, commit1.blockId, 'for the committed BlockID');
  }
  await waitFor(() => b.cons.got.slice(before).some((g) => g.msg.kind === 'vote' && g.msg.vote.height === 1n && g.msg.vote.type === SignedMsgType.Precommit), 10_000, 'precommits');
  t.pass('the commit\'s precommits follow');

  // An invalid message disconnects; b redials its persistent peer.
  const oldPeer = b.sw.getPeer(a.id)!;
  bOnA.mconn.trySend(DATA_CHANNEL, Uint8Array.of(0xff, 0xff, 0xff));
  await waitFor(() => b.sw.getPeer(a.id) !== undefined && b.sw.getPeer(a.id) !== oldPeer, 30_000, 'reconnected');
  t.pass('b dropped a for the invalid message and reconnected');
});

t.test('a catch-up block consensus dropped is handed over again when the peer sends it again; nothing is taken while syncing', async (t) => {
  const { a, b } = await pair(t, STORE1);
  await connected(a, b);
  a.cons.emit('NewRoundStep', { height: 5n, round: 0, step: 'RoundStepPropose' });

  // b is block-syncing: a's catch-up for height 1 reaches b's reactor and is not assembled.
  b.cons.syncing = true;
  b.cons.emit('NewRoundStep', { height: 1n, round: 0, step: 'RoundStepNewHeight' });
  await waitFor(() => (a.reactor.peerState(b.id)?.catchupSent.size ?? 0) > 0, 20_000, 'a sends catch-up');
  await new Promise((r) => setTimeout(r, 300));
  t.equal(b.cons.got.length + b.cons.dropped.length, 0, 'nothing is handed to consensus while block sync runs');

  // Consensus listens but drops the block (as one being swapped does); a sends the parts again
  // every 500 ms while b stays at height 1, and the complete block is handed over again.
  b.cons.syncing = false;
  b.cons.deaf = true;
  await waitFor(() => b.cons.dropped.some((m) => m.kind === 'proposal' && m.proposal.height === 1n), 20_000, 'dropped once');
  b.cons.deaf = false;
  await waitFor(() => b.cons.got.some((g) => g.msg.kind === 'proposal' && g.msg.proposal.height === 1n), 20_000, 'delivered again');
  const again = b.cons.got.find((g) => g.msg.kind === 'proposal')!;
  if (again.msg.kind === 'proposal') t.same(again.msg.proposal.blockId, commit1.blockId, 'the committed block, handed over again after consensus dropped it');
});

t.test('a peer that connects after a vote was added gets the votes of its round it lacks', async (t) => {
  const votes = commit1.signatures.map((s, i) => commitSigToVote(commit1, s, i)).filter((v): v is Vote => v !== null);
  const v = votes[0]!;
  const a = await started(t);
  // a is in the Precommit step and consensus added a vote before b was connected.
  a.cons.emit('NewRoundStep', { height: v.height, round: v.round, step: 'RoundStepPrecommit' });
  a.cons.emit('Vote', { vote: v });
  const b = await dialling(t, a);
  await waitFor(() => a.reactor.peerState(b.id) !== undefined, 20_000, 'connected');
  // b at another round: not sent (votes go to a peer for its own round).
  b.cons.emit('NewRoundStep', { height: v.height, round: v.round + 1, step: 'RoundStepPropose' });
  await waitFor(() => a.reactor.peerState(b.id)!.round === v.round + 1, 20_000, 'b\'s round on a');
  await new Promise((r) => setTimeout(r, 600));
  t.notOk(b.cons.got.some((g) => g.msg.kind === 'vote'), 'no vote of another round');
  b.cons.emit('NewRoundStep', { height: v.height + 1n, round: v.round, step: 'RoundStepPrecommit' });
  await waitFor(() => a.reactor.peerState(b.id)!.height === v.height + 1n, 20_000, 'b\'s height on a');
  // A peer's NewRoundStep never goes back, so a second b-like peer shows the same-round case.
  const c = await dialling(t, a);
  await waitFor(() => a.reactor.peerState(c.id) !== undefined, 20_000, 'c connected');
  c.cons.emit('NewRoundStep', { height: v.height, round: v.round, step: 'RoundStepPrecommit' });
  await waitFor(() => c.cons.got.some((g) => g.msg.kind === 'vote'), 20_000, 'c gets the vote');
  const got = c.cons.got.find((g) => g.msg.kind === 'vote')!;
  if (got.msg.kind === 'vote') t.same(got.msg.vote.signature, v.signature, 'the vote consensus added before c connected');
  await new Promise((r) => setTimeout(r, 600));
  t.equal(c.cons.got.filter((g) => g.msg.kind === 'vote').length, 1, 'sent once');
  t.notOk(b.cons.got.some((g) => g.msg.kind === 'vote'), 'nor to b, now a height ahead');
});

t.test('to a peer at their height, a proposal and a vote go once', async (t) => {
  const a = await started(t);
  const b = await dialling(t, a);
  await connected(a, b);
  a.cons.emit('NewRoundStep', { height: 2n, round: 0, step: 'RoundStepPropose' });
  b.cons.emit('NewRoundStep', { height: 2n, round: 0, step: 'RoundStepPropose' });
  await waitFor(() => a.reactor.peerState(b.id)?.height === 2n, 10_000, 'a learns b\'s height');
  const big = blockFromJSON(BLOCKS[1]!.block, new Uint8Array(150_000).fill(5));
  const { blockId } = blockIdOf(big);
  const proposal: Proposal = { type: SignedMsgType.Proposal, height: 2n, round: 0, polRound: -1, blockId, timestamp: big.header.time, signature: new Uint8Array(64).fill(3) };
  a.reactor.broadcast({ kind: 'proposal', proposal, block: big });
  await waitFor(() => b.cons.got.some((g) => g.msg.kind === 'proposal'), 20_000, 'proposal delivered');
  a.reactor.broadcast({ kind: 'proposal', proposal, block: big });
  // Votes: the same vote twice reaches b once (ordered channel: v2 after both).
  const votes = commit1.signatures.map((s, i) => commitSigToVote(commit1, s, i)).filter((v): v is Vote => v !== null);
  const v1 = { ...votes[0]!, height: 2n };
  const v2 = { ...v1, round: 1 };
  a.reactor.broadcast({ kind: 'vote', vote: v1 });
  a.reactor.broadcast({ kind: 'vote', vote: v1 });
  a.reactor.broadcast({ kind: 'vote', vote: v2 });
  await waitFor(() => b.cons.got.some((g) => g.msg.kind === 'vote' && g.msg.vote.round === 1), 10_000, 'v2');
  // Longer than the 500 ms after which a complete block whose parts came again is handed over again.
  await new Promise((r) => setTimeout(r, 800));
  t.equal(b.cons.got.filter((g) => g.msg.kind === 'vote' && g.msg.vote.round === 0).length, 1, 'v1 delivered once');
  t.equal(b.cons.got.filter((g) => g.msg.kind === 'proposal').length, 1, 'the repeated proposal was not resent');
});

t.test('a vote sent while the peer was still block-syncing is sent again once it is at that height', async (t) => {
  const votes = commit1.signatures.map((s, i) => commitSigToVote(commit1, s, i)).filter((v): v is Vote => v !== null);
  const v = votes[0]!;
  const a = await started(t);
  const b = await dialling(t, a);
  await connected(a, b);
  a.cons.emit('NewRoundStep', { height: v.height, round: v.round, step: 'RoundStepPrevote' });
  // b's consensus is not running (block sync): it ignores the vote a pushes when consensus adds it.
  b.cons.syncing = true;
  a.cons.emit('Vote', { vote: v });
  a.reactor.broadcast({ kind: 'vote', vote: v });
  await new Promise((r) => setTimeout(r, 500));
  t.equal(b.cons.got.length, 0, 'nothing reached b\'s consensus while it synced');
  // b switches to consensus and announces its height and round: a sends the vote again.
  b.cons.syncing = false;
  b.cons.emit('NewRoundStep', { height: v.height, round: v.round, step: 'RoundStepPrevote' });
  await waitFor(() => b.cons.got.some((g) => g.msg.kind === 'vote'), 20_000, 'the vote reaches b');
  t.pass('the vote a pushed while b was syncing reached b once it was in consensus');
});

t.test('max_num_inbound_peers = 0 refuses a non-persistent peer; dial to self fails', async (t) => {
  const a = node({ maxNumInboundPeers: 0 });
  await a.sw.start();
  t.teardown(() => a.sw.stop());
  const b = node();
  await b.sw.start();
  t.teardown(() => b.sw.stop());
  await b.sw.dialPeer({ id: a.id, host: '127.0.0.1', port: a.sw.listenPort }).catch(() => null);
  await waitFor(() => b.sw.peerList().length === 0, 20_000, 'b sees the connection closed');
  t.equal(a.sw.peerList().length, 0, 'a kept no inbound peer');
  await t.rejects(a.sw.dialPeer({ id: a.id, host: '127.0.0.1', port: a.sw.listenPort }), { code: 'SELF' });
});

t.test('mempool reactor: txs gossiped once, never back to their sender; evidence reactor: a bad EvidenceList disconnects', async (t) => {
  const mk = (pool: unknown) => {
    const key = Ed25519PrivKey.generate();
    const sw = new Switch({ nodeKey: key, nodeInfo: makeNodeInfo(key, { channels: new Uint8Array(0) }), config: p2pConfig(), reconnectBaseMs: 100 });
    sw.addReactor(new MempoolReactor({ mempool: pool as Mempool, broadcast: true, intervalMs: 20 }));
    sw.addReactor(new EvidenceReactor({ pool: { pendingEvidence: () => ({ evidence: [] }), addEvidence: () => new Uint8Array(0) }, intervalMs: 20 }));
    return sw;
  };
  const entriesA: { key: Uint8Array; tx: Uint8Array; senders: Set<string> }[] = [];
  const gotB: { tx: string; sender?: string }[] = [];
  const a = mk({ entries: () => entriesA.values(), checkTx: async () => ({}) });
  const b = mk({ entries: () => [].values(), checkTx: async (tx: Uint8Array, info: { sender?: string }) => (gotB.push({ tx: Buffer.from(tx).toString(), sender: info.sender }), {}) });
  await a.start();
  t.teardown(() => a.stop());
  await b.start();
  t.teardown(() => b.stop());
  const bId = b.nodeInfo.id;
  const aId = a.nodeInfo.id;
  const tx = (s: string, senders: string[] = []) => ({ key: Uint8Array.from(Buffer.from(s.padEnd(32, '_'))), tx: Uint8Array.from(Buffer.from(s)), senders: new Set(senders) });
  entriesA.push(tx('tx1'), tx('tx2-from-b', [bId]));
  await b.dialPeer({ id: aId, host: '127.0.0.1', port: a.listenPort });
  await waitFor(() => gotB.some((g) => g.tx === 'tx1'), 20_000, 'tx1 at b');
  entriesA.push(tx('tx3'));
  await waitFor(() => gotB.some((g) => g.tx === 'tx3'), 20_000, 'tx3 at b');
  t.same(gotB.filter((g) => g.tx === 'tx1'), [{ tx: 'tx1', sender: aId }], 'tx1 arrived once, with a as its sender');
  t.notOk(gotB.some((g) => g.tx === 'tx2-from-b'), 'a tx b sent is never sent back to b');

  const peerOnA = a.getPeer(bId)!;
  peerOnA.mconn.trySend(EVIDENCE_CHANNEL, Uint8Array.of(0x0a, 0x03, 0xff, 0xff, 0xff));
  await waitFor(() => a.peerList().length === 0 && b.peerList().length === 0, 20_000, 'disconnected');
  t.pass('b dropped a over an undecodable EvidenceList');
});

t.test('a peer left in the Propose step gets the complete proposal forwarded', async (t) => {
  const a = await started(t);
  // a holds a complete signed proposal (its own, broadcast while it had no peers).
  const big = blockFromJSON(BLOCKS[1]!.block, new Uint8Array(150_000).fill(9));
  const { blockId } = blockIdOf(big);
  const proposal: Proposal = { type: SignedMsgType.Proposal, height: 2n, round: 0, polRound: -1, blockId, timestamp: big.header.time, signature: new Uint8Array(64).fill(2) };
  a.reactor.broadcast({ kind: 'proposal', proposal, block: big });

  const b = await dialling(t, a);
  await connected(a, b);
  b.cons.emit('NewRoundStep', { height: 2n, round: 0, step: 'RoundStepNewHeight' });
  await waitFor(() => a.reactor.peerState(b.id)!.height === 2n, 20_000, 'b at height 2 on a');
  await new Promise((r) => setTimeout(r, 800));
  t.notOk(b.cons.got.some((g) => g.msg.kind === 'proposal'), 'not forwarded while b is not in Propose');
  b.cons.emit('NewRoundStep', { height: 2n, round: 0, step: 'RoundStepPropose' });
  await waitFor(() => b.cons.got.some((g) => g.msg.kind === 'proposal'), 20_000, 'proposal forwarded');
  const got = b.cons.got.find((g) => g.msg.kind === 'proposal')!;
  if (got.msg.kind === 'proposal') {
    t.same(got.msg.proposal.signature, proposal.signature, 'the signed proposal, whole block');
    t.equal(got.msg.block.data.txs.length, big.data.txs.length, 'with all its parts');
  }
});
