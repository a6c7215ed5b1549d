/**
 * The consensus reactor (cometbft/cometbft:consensus/reactor.go) on channels 0x20 State, 0x21
 * Data, 0x22 Vote and 0x23 VoteSetBits, adapting the state machine of src/consensus/state.ts
 * (which hands whole blocks with its proposals) to CometBFT's wire messages:
 *
 * - our signed ProposalMessage → Proposal (0x21) + every BlockPart of the block (0x21, 64 KiB
 *   parts with Merkle proofs);
 * - a catch-up ProposalMessage (empty signature, sent to one peer) → the block's BlockParts only,
 *   as CometBFT's gossipDataForCatchup, followed by the commit's precommits as Votes;
 * - received parts are collected per (height, round, PartSetHeader); once complete the block is
 *   handed to consensus with the peer's signed Proposal if one came, else as an unsigned catch-up
 *   ProposalMessage (consensus takes that block only for a +2/3-precommitted BlockID); parts of a
 *   complete block that arrive again (a peer's catch-up) hand it over again, at most every 500 ms;
 * - while block sync runs, Proposal, BlockPart and Vote messages are ignored (CometBFT's WaitSync);
 * - votes go both ways on 0x22; each step change is announced with NewRoundStep, each vote
 *   consensus adds with HasVote; every 250 ms a peer at our height is sent the votes of its round
 *   it lacks (a reduced gossipVotesRoutine: it heals votes lost with a dropped connection).
 *
 * PeerState keeps the peer's height/round/step (from NewRoundStep) and which votes, proposals and
 * parts it has (what it sent us, what we sent it, its HasVotes), so nothing is sent twice. A peer
 * whose NewRoundStep shows a lower height is sent the committed block of its height from the
 * block store plus that commit's precommits (at most once per 500 ms per height; a peer only one
 * height behind first gets 300 ms to finish the commit it is most likely applying).
 *
 * Simplified versus CometBFT: no per-peer data/vote/maj23 goroutines picking one missing item at a
 * time; we push each proposal, part and vote to every peer that lacks it when consensus emits it,
 * and a 250 ms pass fills in what a peer still lacks (catch-up blocks, forwarded proposals, votes).
 * NewValidBlock, ProposalPOL, VoteSetMaj23 and VoteSetBits are decoded and validated, not acted on.
 */
import type { ConsensusBlockStore } from '../../consensus/state.js';
import { RoundStep, roundStepName, type ConsensusEventData, type ConsensusEventName, type ConsensusMessage as SmMessage, type EventDataRoundState } from '../../consensus/types.js';
import { commitSigToVote } from '../../consensus/vote_set.js';
import { leafHash, rootFromAunts } from '../../crypto/merkle.js';
import type { Logger } from '../../log.js';
import { nullLogger } from '../../log.js';
import { SignedMsgType, type Block, type Proposal, type Vote } from '../../types/block.js';
import { decodeBlock, type Part } from '../../types/codec.js';
import { headerHash } from '../../types/hashing.js';
import { PartSet, blockIdOf } from '../../types/partset.js';
import { P2PError } from '../errors.js';
import type { ChannelDescriptor } from '../mconnection.js';
import {
  DATA_CHANNEL,
  MAX_BLOCK_PARTS_COUNT,
  STATE_CHANNEL,
  VOTE_CHANNEL,
  VOTE_SET_BITS_CHANNEL,
  decodeConsensusMessage,
  encodeConsensusMessage,
  validateConsensusMessage,
  type ConsensusMessage as WireMessage,
} from '../messages/consensus.js';
import type { Peer, Reactor, Switch } from '../switch.js';

/** Consensus messages are capped at 1 MiB (cometbft/cometbft:consensus/reactor.go maxMsgSize). */
export const MAX_CONSENSUS_MSG_SIZE = 1_048_576;

/** Channel descriptors of cometbft/cometbft:consensus/reactor.go GetChannels. */
export const CONSENSUS_CHANNELS: readonly ChannelDescriptor[] = [
  { id: STATE_CHANNEL, priority: 6, sendQueueCapacity: 100, recvMessageCapacity: MAX_CONSENSUS_MSG_SIZE },
  { id: DATA_CHANNEL, priority: 10, sendQueueCapacity: 100, recvBufferCapacity: 50 * 4096, recvMessageCapacity: MAX_CONSENSUS_MSG_SIZE },
  { id: VOTE_CHANNEL, priority: 7, sendQueueCapacity: 100, recvBufferCapacity: 100 * 100, recvMessageCapacity: MAX_CONSENSUS_MSG_SIZE },
  { id: VOTE_SET_BITS_CHANNEL, priority: 1, sendQueueCapacity: 2, recvBufferCapacity: 1024, recvMessageCapacity: MAX_CONSENSUS_MSG_SIZE },
];

/** What the reactor needs of the state machine. */
export interface ConsensusSink {
  receive(msg: SmMessage, peerId: string): void;
  subscribe(fn: (name: ConsensusEventName, data: ConsensusEventData) => void): () => void;
  /**
   * True while block sync drives the node and consensus does not listen: proposals, parts and
   * votes are then ignored (cometbft/cometbft:consensus/reactor.go Receive, WaitSync).
   */
  readonly syncing?: boolean;
}

const STEP_BY_NAME = new Map<string, number>();
for (let s = RoundStep.NewHeight; s <= RoundStep.Commit; s++) STEP_BY_NAME.set(roundStepName(s), s);

/** What we know of one peer (cometbft/cometbft:consensus/reactor.go PeerState, reduced). */
export class PeerState {
  height = 0n;
  round = -1;
  step = 0;
  /** Keys of votes, proposals and parts the peer has. */
  readonly known = new Set<string>();
  readonly catchupSent = new Map<bigint, number>();
  /** When we first saw the peer below our height (0: it is not). */
  behindSince = 0;

  has(key: string): boolean {
    return this.known.has(key);
  }

  mark(key: string): void {
    if (this.known.size > 50_000) this.known.clear();
    this.known.add(key);
  }

  /** Forgets what belongs to heights below `h`. */
  prune(h: bigint): void {
    for (const k of this.known) {
      const hk = BigInt(k.split('/')[1]!);
      if (hk < h) this.known.delete(k);
    }
    for (const hk of this.catchupSent.keys()) if (hk < h) this.catchupSent.delete(hk);
  }
}

const hexOf = (b: Uint8Array) => Buffer.from(b).toString('hex');
const voteKey = (v: { height: bigint; round: number; type: number; validatorIndex: number }) => `v/${v.height}/${v.round}/${v.type}/${v.validatorIndex}`;
const proposalKey = (h: bigint, r: number) => `p/${h}/${r}`;
const partKey = (h: bigint, r: number, root: string, i: number) => `b/${h}/${r}/${root}/${i}`;

interface Assembly {
  height: bigint;
  round: number;
  root: string;
  parts: PartSet;
  proposal: Proposal | null;
  block: Block | null;
  deliveredSigned: boolean;
  deliveredBlock: boolean;
  /** When the block was last handed to consensus (ms since the epoch; 0: never). */
  deliveredAt: number;
}

/** How long a peer one height behind may stay there before it is sent the block (ms). */
const CATCHUP_GRACE_MS = 300;

/**
 * How long a peer may sit in the Propose step of the round whose complete proposal we hold
 * before we forward it (ms). A peer the proposer is not connected to (a full node behind one
 * validator) gets the proposal this way; peers the proposer reached leave Propose first.
 */
const PROPOSAL_FORWARD_GRACE_MS = 300;

/**
 * A complete block whose parts a peer sends again (its catch-up for a height we still lack) is
 * handed to consensus again at most this often (ms). Consensus drops a block it gets while it is
 * being swapped (block sync ↔ consensus) or before it reached that height's commit; without a
 * second delivery a node holding +2/3 precommits for that block would wait for it for ever.
 */
const REDELIVER_MS = 500;

/** Votes of the current height kept for re-gossip (bounds memory under a flood of rounds). */
const MAX_HEIGHT_VOTES = 20_000;

/** Votes re-gossiped to one peer per tick (250 ms). */
const VOTES_PER_TICK = 64;

/** Assemblies kept at once (a peer cannot make us hold more than this many part sets). */
const MAX_ASSEMBLIES = 16;

export interface ConsensusReactorOptions {
  blockStore: ConsensusBlockStore;
  logger?: Logger;
  /** Minimum gap between two catch-up sends of one height to one peer (default 500 ms). */
  catchupResendMs?: number;
}

export class ConsensusReactor implements Reactor {
  readonly name = 'consensus';
  readonly channels = CONSENSUS_CHANNELS;
  private readonly log: Logger;
  private sw: Switch | null = null;
  private timer: NodeJS.Timeout | null = null;
  private consensus: ConsensusSink | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly peers = new Map<string, { peer: Peer; ps: PeerState }>();
  private readonly assemblies = new Map<string, Assembly>();
  /** Our latest NewRoundStep. */
  private ours: { height: bigint; round: number; step: number; startedAt: number } | null = null;
  /** Parts of our own recent proposals, by proposal key. */
  private readonly ownParts = new Map<string, Part[]>();
  /** The newest complete signed proposal we hold (own or received), for forwarding. */
  private complete: { proposal: Proposal; parts: Part[]; at: number } | null = null;
  /** Votes consensus added at our current height (own and peers'), by vote key, for re-gossip. */
  private readonly heightVotes = new Map<string, Vote>();

  constructor(private readonly opts: ConsensusReactorOptions) {
    this.log = opts.logger ?? nullLogger;
  }

  /** Connects the state machine: its events drive NewRoundStep/HasVote, peers' messages go to it. */
  setConsensus(c: ConsensusSink): void {
    this.consensus = c;
    this.unsubscribe?.();
    this.unsubscribe = c.subscribe((name, data) => this.onEvent(name, data));
  }

  start(sw: Switch): void {
    this.sw = sw;
    this.timer = setInterval(() => this.tick(), 250);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.sw = null;
  }

  peerState(id: string): PeerState | undefined {
    return this.peers.get(id)?.ps;
  }

  addPeer(peer: Peer): void {
    const ps = new PeerState();
    peer.data.set('consensus', ps);
    this.peers.set(peer.id, { peer, ps });
    if (this.ours) this.sendTo1(peer, this.newRoundStepMsg());
  }

  removePeer(peer: Peer): void {
    const e = this.peers.get(peer.id);
    if (e && e.peer === peer) this.peers.delete(peer.id);
  }

  // -------------------------------------------------------------------------------------------
  // Outgoing: the state machine's broadcast / sendTo callbacks

  /** ConsensusStateOptions.broadcast. */
  broadcast = (msg: SmMessage): void => {
    if (msg.kind === 'proposal' && msg.proposal.signature.length > 0) this.noteComplete(msg.proposal, this.partsOf(msg.proposal, msg.block, msg.parts));
    for (const { peer, ps } of this.peers.values()) this.sendSm(peer, ps, msg);
  };

  /** ConsensusStateOptions.sendTo. */
  sendTo = (peerId: string, msg: SmMessage): void => {
    const e = this.peers.get(peerId);
    if (e) this.sendSm(e.peer, e.ps, msg);
  };

  private sendTo1(peer: Peer, m: WireMessage): boolean {
    return peer.trySend(channelOf(m), encodeConsensusMessage(m));
  }

  /**
   * Pushes a proposal (with its parts) or a vote to one peer. What is sent counts as the peer's
   * only when its NewRoundStep put it at that height: a peer still block-syncing (or not yet
   * heard from) ignores consensus messages, so they stay unmarked and the 250 ms pass (votes,
   * forwarded proposals) sends them again once the peer is there. Marking them made a validator
   * that switched to consensus a moment after its peers miss their round-0 votes for good: at
   * height 1 all four then waited in round 0, none with +2/3 of any votes to start a timeout.
   */
  private sendSm(peer: Peer, ps: PeerState, msg: SmMessage): void {
    if (msg.kind === 'vote') {
      const k = voteKey(msg.vote);
      if (ps.has(k)) return;
      if (this.sendTo1(peer, { type: 'Vote', vote: msg.vote }) && ps.height === msg.vote.height) ps.mark(k);
      return;
    }
    const p = msg.proposal;
    const there = ps.height === p.height;
    const parts = this.partsOf(p, msg.block, msg.parts);
    const root = hexOf(p.blockId.partSetHeader.hash);
    if (p.signature.length > 0) {
      const pk = proposalKey(p.height, p.round);
      if (!ps.has(pk)) {
        if (!this.sendTo1(peer, { type: 'Proposal', proposal: p })) return;
        if (there) ps.mark(pk);
      }
    }
    for (const part of parts) {
      const k = partKey(p.height, p.round, root, part.index);
      if (ps.has(k)) continue;
      // Parts wait for queue space (send, not trySend): a block may have more parts than the queue.
      void peer.send(DATA_CHANNEL, encodeConsensusMessage({ type: 'BlockPart', height: p.height, round: p.round, part }));
      if (there) ps.mark(k);
    }
  }

  /** The proposal's parts: as consensus made them (`made`), else cut from the block once. */
  private partsOf(p: Proposal, block: Block, made?: Part[]): Part[] {
    const key = `${proposalKey(p.height, p.round)}/${hexOf(p.blockId.hash)}`;
    let parts = this.ownParts.get(key);
    if (!parts) {
      parts = made ?? blockIdOf(block).parts;
      if (this.ownParts.size > 8) this.ownParts.delete(this.ownParts.keys().next().value!);
      this.ownParts.set(key, parts);
    }
    return parts;
  }

  private newRoundStepMsg(): WireMessage {
    const o = this.ours!;
    return {
      type: 'NewRoundStep',
      height: o.height,
      round: o.round,
      step: o.step,
      secondsSinceStartTime: BigInt(Math.floor((Date.now() - o.startedAt) / 1000)),
      lastCommitRound: -1,
    };
  }

  private onEvent(name: ConsensusEventName, data: ConsensusEventData): void {
    if (name === 'NewRoundStep') {
      const d = data as EventDataRoundState;
      const step = STEP_BY_NAME.get(d.step) ?? 0;
      if (step === 0) return;
      const newHeight = this.ours === null || this.ours.height !== d.height;
      this.ours = { height: d.height, round: d.round, step, startedAt: newHeight ? Date.now() : this.ours!.startedAt };
      const m = this.newRoundStepMsg();
      const bytes = encodeConsensusMessage(m);
      for (const { peer, ps } of this.peers.values()) {
        peer.trySend(STATE_CHANNEL, bytes);
        if (newHeight) ps.prune(d.height - 1n);
      }
      if (newHeight) {
        this.pruneAssemblies(d.height);
        for (const [k, v] of this.heightVotes) if (v.height < d.height) this.heightVotes.delete(k);
      }
    } else if (name === 'Vote') {
      const v = (data as { vote: Vote }).vote;
      const k = voteKey(v);
      if (this.ours === null || v.height >= this.ours.height) {
        if (this.heightVotes.size < MAX_HEIGHT_VOTES) this.heightVotes.set(k, v);
      }
      const bytes = encodeConsensusMessage({ type: 'HasVote', height: v.height, round: v.round, voteType: v.type, index: v.validatorIndex });
      for (const { peer, ps } of this.peers.values()) {
        if (ps.has(k)) continue;
        peer.trySend(STATE_CHANNEL, bytes);
      }
    }
  }

  private pruneAssemblies(h: bigint): void {
    for (const [k, a] of this.assemblies) if (a.height < h) this.assemblies.delete(k);
  }

  // -------------------------------------------------------------------------------------------
  // Incoming

  receive(channelId: number, peer: Peer, bytes: Uint8Array): void {
    const e = this.peers.get(peer.id);
    if (!e || e.peer !== peer) return;
    const ps = e.ps;
    let m: WireMessage;
    try {
      m = decodeConsensusMessage(bytes);
    } catch (err) {
      throw new P2PError('INVALID_MESSAGE', `consensus: undecodable message: ${(err as Error).message}`);
    }
    const bad = validateConsensusMessage(m);
    if (bad !== null) throw new P2PError('INVALID_MESSAGE', `consensus: invalid ${m.type}: ${bad}`);
    if (channelOf(m) !== channelId) throw new P2PError('INVALID_MESSAGE', `consensus: ${m.type} on channel ${channelId}`);
    // While block sync runs, only the peer's state is followed: a block assembled now would be
    // handed to no one (the catch-up of peers ahead sends it again once consensus runs).
    if (this.consensus?.syncing === true && (m.type === 'Proposal' || m.type === 'BlockPart' || m.type === 'Vote')) return;
    switch (m.type) {
      case 'NewRoundStep':
        if (m.height < ps.height || (m.height === ps.height && (m.round < ps.round || (m.round === ps.round && m.step < ps.step)))) return;
        if (m.height !== ps.height) {
          ps.prune(m.height - 1n);
          ps.behindSince = 0;
        }
        ps.height = m.height;
        ps.round = m.round;
        ps.step = m.step;
        this.maybeCatchup(peer, ps);
        return;
      case 'HasVote':
        ps.mark(voteKey({ height: m.height, round: m.round, type: m.voteType, validatorIndex: m.index }));
        return;
      case 'Vote':
        ps.mark(voteKey(m.vote));
        this.consensus?.receive({ kind: 'vote', vote: m.vote }, peer.id);
        return;
      case 'Proposal':
        this.onProposal(peer, ps, m.proposal);
        return;
      case 'BlockPart':
        this.onBlockPart(peer, ps, m.height, m.round, m.part);
        return;
      default:
        // NewValidBlock, ProposalPOL, VoteSetMaj23, VoteSetBits: valid, not acted on (see the file comment).
        return;
    }
  }

  private assembly(height: bigint, round: number, total: number, root: Uint8Array): Assembly | null {
    const rootHex = hexOf(root);
    const key = `${height}/${round}/${rootHex}/${total}`;
    let a = this.assemblies.get(key);
    if (a) return a;
    if (total < 1 || total > MAX_BLOCK_PARTS_COUNT) return null;
    if (this.ours && (height + 2n < this.ours.height || height > this.ours.height + 1n)) return null;
    if (this.assemblies.size >= MAX_ASSEMBLIES) {
      // Drop the lowest height's set.
      let low: string | null = null;
      let lowH = 0n;
      for (const [k, x] of this.assemblies) if (low === null || x.height < lowH) (low = k), (lowH = x.height);
      if (low !== null) this.assemblies.delete(low);
    }
    a = { height, round, root: rootHex, parts: PartSet.fromHeader({ total, hash: root }), proposal: null, block: null, deliveredSigned: false, deliveredBlock: false, deliveredAt: 0 };
    this.assemblies.set(key, a);
    return a;
  }

  private onProposal(peer: Peer, ps: PeerState, p: Proposal): void {
    ps.mark(proposalKey(p.height, p.round));
    const a = this.assembly(p.height, p.round, p.blockId.partSetHeader.total, p.blockId.partSetHeader.hash);
    if (!a) return;
    if (a.proposal === null) a.proposal = p;
    this.deliver(a, peer);
  }

  private onBlockPart(peer: Peer, ps: PeerState, height: bigint, round: number, part: Part): void {
    const root = rootFromAunts(part.index, part.proof.total, leafHash(part.bytes), part.proof.aunts);
    if (root === null) throw new P2PError('INVALID_MESSAGE', 'consensus: block part proof does not fit its index/total');
    ps.mark(partKey(height, round, hexOf(root), part.index));
    const a = this.assembly(height, round, part.proof.total, root);
    if (!a) return;
    if (a.parts.isComplete()) {
      // A part of a block we hold whole: a peer ahead of us is sending it again as catch-up, so
      // consensus may still lack it (see REDELIVER_MS).
      if (a.block !== null && Date.now() - a.deliveredAt >= REDELIVER_MS) {
        a.deliveredBlock = false;
        this.deliver(a, peer);
      }
      return;
    }
    a.parts.addPart(part);
    if (a.parts.isComplete()) {
      try {
        a.block = decodeBlock(a.parts.assemble());
      } catch (err) {
        this.log.debug('undecodable block from parts', { peer: peer.id, err: (err as Error).message });
        return;
      }
      this.deliver(a, peer);
    }
  }

  private deliver(a: Assembly, peer: Peer): void {
    if (a.block === null || this.consensus === null) return;
    a.deliveredAt = Date.now();
    if (a.proposal !== null && !a.deliveredSigned) {
      a.deliveredSigned = true;
      a.deliveredBlock = true;
      this.noteComplete(a.proposal, Array.from({ length: a.parts.total }, (_, i) => a.parts.getPart(i)!));
      this.consensus.receive({ kind: 'proposal', proposal: a.proposal, block: a.block }, peer.id);
      return;
    }
    if (a.deliveredBlock) return;
    a.deliveredBlock = true;
    const blockId = { hash: headerHash(a.block.header), partSetHeader: { total: a.parts.total, hash: a.parts.hash } };
    this.consensus.receive(
      {
        kind: 'proposal',
        proposal: { type: SignedMsgType.Proposal, height: a.height, round: a.round, polRound: -1, blockId, timestamp: a.block.header.time, signature: new Uint8Array(0) },
        block: a.block,
      },
      peer.id,
    );
  }

  /**
   * gossipDataForCatchup + the commit's precommits: a peer behind us gets the committed block of
   * its height and the precommits for it.
   */
  private maybeCatchup(peer: Peer, ps: PeerState): void {
    if (this.ours === null || ps.height < 1n || ps.height >= this.ours.height) {
      ps.behindSince = 0;
      return;
    }
    const h = ps.height;
    const now = Date.now();
    // A peer one height behind is usually just finishing the same commit: give it a moment before
    // sending it a whole block. Two or more heights behind, send at once.
    if (ps.behindSince === 0) ps.behindSince = now;
    if (h + 1n === this.ours.height && now - ps.behindSince < CATCHUP_GRACE_MS) return;
    const last = ps.catchupSent.get(h);
    if (last !== undefined && now - last < (this.opts.catchupResendMs ?? 500)) return;
    let block: Block | null;
    let commit;
    try {
      block = this.opts.blockStore.loadBlock(h);
      commit = this.opts.blockStore.loadBlockCommit?.(h) ?? this.opts.blockStore.loadSeenCommit(h);
    } catch (err) {
      this.log.debug('catch-up: block store read failed', { height: h, err: (err as Error).message });
      return;
    }
    if (block === null || commit === null) return;
    ps.catchupSent.set(h, now);
    const { parts } = blockIdOf(block);
    for (const part of parts) {
      void peer.send(DATA_CHANNEL, encodeConsensusMessage({ type: 'BlockPart', height: h, round: commit.round, part }));
    }
    commit.signatures.forEach((s, i) => {
      const v = commitSigToVote(commit, s, i);
      if (v === null) return;
      void peer.send(VOTE_CHANNEL, encodeConsensusMessage({ type: 'Vote', vote: v }));
    });
  }

  private noteComplete(p: Proposal, parts: Part[]): void {
    const c = this.complete;
    if (c && (c.proposal.height > p.height || (c.proposal.height === p.height && c.proposal.round >= p.round))) return;
    this.complete = { proposal: p, parts, at: Date.now() };
  }

  /**
   * gossipDataRoutine's proposal branch, reduced: a peer still in the Propose step of the round
   * whose complete proposal we hold, PROPOSAL_FORWARD_GRACE_MS after we had it, gets the proposal
   * and the parts it has neither sent us nor been sent by us.
   */
  private maybeForwardProposal(peer: Peer, ps: PeerState): void {
    const c = this.complete;
    if (c === null || ps.height !== c.proposal.height || ps.round !== c.proposal.round || ps.step !== RoundStep.Propose) return;
    if (Date.now() - c.at < PROPOSAL_FORWARD_GRACE_MS) return;
    const p = c.proposal;
    const pk = proposalKey(p.height, p.round);
    if (ps.has(pk)) return;
    if (!this.sendTo1(peer, { type: 'Proposal', proposal: p })) return;
    ps.mark(pk);
    const root = hexOf(p.blockId.partSetHeader.hash);
    for (const part of c.parts) {
      const k = partKey(p.height, p.round, root, part.index);
      if (ps.has(k)) continue;
      void peer.send(DATA_CHANNEL, encodeConsensusMessage({ type: 'BlockPart', height: p.height, round: p.round, part }));
      ps.mark(k);
    }
  }

  /**
   * gossipVotesRoutine, reduced: a peer at our height gets the votes of its round that it lacks
   * (neither sent to it on this connection nor announced by its HasVote). Votes go out when
   * consensus adds them; this pass covers a peer that connected after that (a restart, a
   * reconnect), whose new PeerState is empty. Without it a validator that missed one precommit
   * can sit in the Precommit step of a round for ever: it never sees +2/3 of any precommits, so
   * its precommit timeout never starts.
   */
  private gossipVotes(peer: Peer, ps: PeerState): void {
    if (this.ours === null || ps.height !== this.ours.height || ps.round < 0) return;
    let sent = 0;
    for (const [k, v] of this.heightVotes) {
      if (v.round !== ps.round || v.height !== ps.height || ps.has(k)) continue;
      if (!this.sendTo1(peer, { type: 'Vote', vote: v })) return;
      ps.mark(k);
      if (++sent >= VOTES_PER_TICK) return;
    }
  }

  /** Periodic pass (gossipDataRoutine's catch-up branch, gossipVotesRoutine); the node calls it on a timer. */
  tick(): void {
    for (const { peer, ps } of this.peers.values()) {
      this.maybeCatchup(peer, ps);
      this.maybeForwardProposal(peer, ps);
      this.gossipVotes(peer, ps);
    }
  }
}

function channelOf(m: WireMessage): number {
  switch (m.type) {
    case 'Proposal':
    case 'ProposalPOL':
    case 'BlockPart':
      return DATA_CHANNEL;
    case 'Vote':
      return VOTE_CHANNEL;
    case 'VoteSetBits':
      return VOTE_SET_BITS_CHANNEL;
    default:
      return STATE_CHANNEL;
  }
}
