/**
 * Shared consensus types: round steps, configuration, messages, timeouts and events
 * (cometbft: consensus/types/round_state.go, config/config.go ConsensusConfig, types/events.go;
 * cometbft/cometbft:consensus/state.go).
 */
import type { Block, BlockID, Proposal, Vote } from '../types/block.js';
import type { Part } from '../types/codec.js';
import type { ConsensusEventTypeValue } from '../names/index.js';

/** RoundStepType; the numbers appear in RoundState JSON, the names in events. */
export enum RoundStep {
  NewHeight = 1,
  NewRound = 2,
  Propose = 3,
  Prevote = 4,
  PrevoteWait = 5,
  Precommit = 6,
  PrecommitWait = 7,
  Commit = 8,
}

const STEP_NAMES: Record<RoundStep, string> = {
  [RoundStep.NewHeight]: 'RoundStepNewHeight',
  [RoundStep.NewRound]: 'RoundStepNewRound',
  [RoundStep.Propose]: 'RoundStepPropose',
  [RoundStep.Prevote]: 'RoundStepPrevote',
  [RoundStep.PrevoteWait]: 'RoundStepPrevoteWait',
  [RoundStep.Precommit]: 'RoundStepPrecommit',
  [RoundStep.PrecommitWait]: 'RoundStepPrecommitWait',
  [RoundStep.Commit]: 'RoundStepCommit',
};

/** `RoundStepPropose` etc. (cometbft: consensus/types/round_state.go RoundStepType.String). */
export function roundStepName(step: RoundStep): string {
  return STEP_NAMES[step] ?? 'RoundStepUnknown';
}

/**
 * The `[consensus]` section of config.toml, durations in milliseconds. config/node-config.ts maps
 * the TOML names and holds the defaults (cometbft/cometbft:config/config.go ConsensusConfig).
 */
export interface ConsensusConfig {
  /** Consensus write-ahead log (relative paths are relative to the home directory). */
  walFile: string;
  timeoutPropose: number;
  timeoutProposeDelta: number;
  timeoutPrevote: number;
  timeoutPrevoteDelta: number;
  timeoutPrecommit: number;
  timeoutPrecommitDelta: number;
  /** Wait after a commit before round 0 of the next height starts (collects the slow precommits). */
  timeoutCommit: number;
  /** How many blocks to look back for this validator's own signature before signing; 0 = off. */
  doubleSignCheckHeight: number;
  /** Start the next height as soon as precommits of all validators are in. */
  skipTimeoutCommit: boolean;
  createEmptyBlocks: boolean;
  /** With create_empty_blocks=false or an interval, round 0 waits for txs at most this long (0 = forever). */
  createEmptyBlocksInterval: number;
  /** Reactor sleep between gossip rounds. */
  peerGossipSleepDuration: number;
  /** Reactor sleep between maj23 queries. */
  peerQueryMaj23SleepDuration: number;
}

/** TestConsensusConfig: propose 40ms (+1ms), prevote/precommit 10ms (+1ms), commit 10ms, skip on. */
export function testConsensusConfig(): ConsensusConfig {
  return {
    timeoutPropose: 40,
    timeoutProposeDelta: 1,
    timeoutPrevote: 10,
    timeoutPrevoteDelta: 1,
    timeoutPrecommit: 10,
    timeoutPrecommitDelta: 1,
    timeoutCommit: 10,
    skipTimeoutCommit: true,
    createEmptyBlocks: true,
    createEmptyBlocksInterval: 0,
    walFile: 'data/cs.wal/wal',
    doubleSignCheckHeight: 0,
    peerGossipSleepDuration: 5,
    peerQueryMaj23SleepDuration: 250,
  };
}

export function proposeTimeout(c: ConsensusConfig, round: number): number {
  return c.timeoutPropose + c.timeoutProposeDelta * round;
}
export function prevoteTimeout(c: ConsensusConfig, round: number): number {
  return c.timeoutPrevote + c.timeoutPrevoteDelta * round;
}
export function precommitTimeout(c: ConsensusConfig, round: number): number {
  return c.timeoutPrecommit + c.timeoutPrecommitDelta * round;
}

// ---------------------------------------------------------------------------------------------
// Messages

/**
 * A proposal together with its whole block. CometBFT gossips the block as 64 KiB parts; here the
 * block travels with the proposal, and proposal.blockId still names the real PartSetHeader, so
 * votes and commits are byte-identical to CometBFT's. A receiver recomputes the BlockID of
 * `block` and drops the message when it differs from proposal.blockId.
 *
 * A ProposalMessage whose proposal has an empty signature is a catch-up message: it only hands a
 * committed block to a peer that is one or more heights behind (the receiver accepts the block
 * only for a BlockID that +2/3 precommitted).
 */
export interface ProposalMessage {
  kind: 'proposal';
  proposal: Proposal;
  block: Block;
  /**
   * The block's part set, when the sender already made it (consensus hands its own to the P2P
   * reactor): the reactor gossips these instead of encoding the block again.
   */
  parts?: Part[];
}

export interface VoteMessage {
  kind: 'vote';
  vote: Vote;
}

export type ConsensusMessage = ProposalMessage | VoteMessage;

/** Peer id of messages this node created itself (cometbft uses the empty peer id too). */
export const OWN_PEER = '';

/** A scheduled timeout (cometbft: consensus/state.go timeoutInfo). */
export interface TimeoutInfo {
  /** Milliseconds. */
  duration: number;
  height: bigint;
  round: number;
  step: RoundStep;
}

// ---------------------------------------------------------------------------------------------
// Events

/** Event names as CometBFT publishes them from consensus (types/events.go). NewBlock comes from the executor. */
export type ConsensusEventName = ConsensusEventTypeValue;

/** EventDataRoundState: step is the name (`RoundStepPropose`). */
export interface EventDataRoundState {
  height: bigint;
  round: number;
  step: string;
}

/** EventDataNewRound. */
export interface EventDataNewRound extends EventDataRoundState {
  proposer: { address: Uint8Array; index: number };
}

/** EventDataCompleteProposal. */
export interface EventDataCompleteProposal extends EventDataRoundState {
  blockId: BlockID;
}

export interface EventDataVote {
  vote: Vote;
}

export type ConsensusEventData = EventDataRoundState | EventDataNewRound | EventDataCompleteProposal | EventDataVote;

/**
 * Two votes of one validator for the same height, round and type but different blocks
 * (cometbft: types/evidence.go NewDuplicateVoteEvidence orders them by BlockID.Key()). The
 * evidence pool adds the block time and builds the proto evidence.
 */
export interface DuplicateVoteEvidence {
  voteA: Vote;
  voteB: Vote;
  validatorPower: bigint;
  totalVotingPower: bigint;
}

/** Errors that leave the consensus module: a code string plus the message. */
export class ConsensusError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConsensusError';
  }
}
