/**
 * Committed evidence as the application sees it: DuplicateVoteEvidence.ABCI()
 * (cometbft/cometbft:types/evidence.go). It lives here, not in src/types, because types sit
 * below the ABCI contract.
 */
import type { CheckedDuplicateVoteEvidence } from '../types/evidence.js';
import { MisbehaviorType, type Misbehavior } from './types.js';

/** DuplicateVoteEvidence.ABCI(): one Misbehavior of type DUPLICATE_VOTE. */
export function duplicateVoteMisbehavior(e: CheckedDuplicateVoteEvidence): Misbehavior {
  return {
    type: MisbehaviorType.DuplicateVote,
    validator: { address: e.voteA.validatorAddress, power: e.validatorPower },
    height: e.voteA.height,
    time: e.timestamp,
    totalVotingPower: e.totalVotingPower,
  };
}
