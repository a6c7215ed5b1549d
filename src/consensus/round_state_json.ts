/**
 * JSON renderings of the round state for the node RPC: dump_consensus_state `round_state`
 * (cometbft: consensus/types/round_state.go RoundState; spec §2.2) and consensus_state
 * `round_state` (RoundStateSimple). Field order follows the Go structs.
 *
 * Where the spec and CometBFT disagree on a type the spec wins: `valid_round` and each
 * `votes[].round` are strings.
 */
import type { Block, BlockID } from '../types/block.js';
import type { ValidatorSet } from '../types/validator_set.js';
import { blockJSON, formatTime, proposalJSON, validatorJSON, type BlockJSONOptions, type PubKeyTypeName } from '../types/json.js';
import type { RoundStateSnapshot } from './state.js';
import { hexUpper, proposerOf } from './util.js';

export interface RoundStateJSONOptions {
  /** `consensus/PubKeyEd25519` from the names registry. */
  pubKeyTypeName: PubKeyTypeName;
  block?: BlockJSONOptions;
}

function validatorSetJSON(vs: ValidatorSet, typeName: PubKeyTypeName) {
  const proposer = proposerOf(vs);
  return {
    validators: vs.validators.map((v) => validatorJSON(v, typeName)),
    proposer: proposer ? validatorJSON(proposer, typeName) : null,
  };
}

/**
 * PartSet.MarshalJSON: `{"count/total":"1/1","parts_bit_array":"x"}`. Blocks arrive whole here,
 * so every part is present or none is.
 */
function partSetJSON(id: BlockID | null, have: Block | null) {
  if (id === null) return null;
  const total = id.partSetHeader.total;
  const count = have !== null ? total : 0;
  return { 'count/total': `${count}/${total}`, parts_bit_array: (have !== null ? 'x' : '_').repeat(total) };
}

export function roundStateJSON(rs: RoundStateSnapshot, opts: RoundStateJSONOptions) {
  const bj = (b: Block | null) => (b ? blockJSON(b, opts.block) : null);
  return {
    height: rs.height.toString(),
    round: rs.round,
    step: rs.step as number,
    start_time: formatTime(rs.startTime),
    commit_time: formatTime(rs.commitTime),
    validators: validatorSetJSON(rs.validators, opts.pubKeyTypeName),
    proposal: rs.proposal ? proposalJSON(rs.proposal) : null,
    proposal_block: bj(rs.proposalBlock),
    proposal_block_parts: partSetJSON(rs.proposalBlockId ?? rs.wantedBlockId, rs.proposalBlock),
    locked_round: rs.lockedRound,
    locked_block: bj(rs.lockedBlock),
    locked_block_parts: partSetJSON(rs.lockedBlockId, rs.lockedBlock),
    valid_round: String(rs.validRound),
    valid_block: bj(rs.validBlock),
    valid_block_parts: partSetJSON(rs.validBlockId, rs.validBlock),
    votes: rs.votes.toJSON(),
    commit_round: rs.commitRound,
    last_commit: rs.lastCommit ? rs.lastCommit.toJSON() : null,
    last_validators: validatorSetJSON(rs.lastValidators, opts.pubKeyTypeName),
    triggered_timeout_precommit: rs.triggeredTimeoutPrecommit,
  };
}

/** RoundStateSimple (consensus_state). */
export function roundStateSimpleJSON(rs: RoundStateSnapshot) {
  const proposer = proposerOf(rs.validators);
  const idx = proposer ? (rs.validators.getByAddress(proposer.address)?.index ?? -1) : -1;
  return {
    'height/round/step': `${rs.height}/${rs.round}/${rs.step}`,
    start_time: formatTime(rs.startTime),
    proposal_block_hash: rs.proposalBlockId ? hexUpper(rs.proposalBlockId.hash) : '',
    locked_block_hash: rs.lockedBlockId ? hexUpper(rs.lockedBlockId.hash) : '',
    valid_block_hash: rs.validBlockId ? hexUpper(rs.validBlockId.hash) : '',
    height_vote_set: rs.votes.toJSON(false),
    proposer: { address: proposer ? hexUpper(proposer.address) : '', index: idx },
  };
}
