/** The consensus-side chain state after a height (state/state.go). */
import type { BlockID, Bytes } from '../types/block.js';
import type { ConsensusParams } from '../types/params.js';
import type { ValidatorSet } from '../types/validator_set.js';

export interface State {
  chainId: string;
  initialHeight: bigint;
  /** 0 before the first block. */
  lastBlockHeight: bigint;
  lastBlockId: BlockID;
  lastBlockTime: bigint;
  /** Validators of lastBlockHeight + 1. */
  validators: ValidatorSet;
  /** Validators of lastBlockHeight + 2. */
  nextValidators: ValidatorSet;
  /** Validators of lastBlockHeight (signed the last commit); empty set at the initial height. */
  lastValidators: ValidatorSet;
  lastHeightValidatorsChanged: bigint;
  consensusParams: ConsensusParams;
  lastHeightConsensusParamsChanged: bigint;
  lastResultsHash: Bytes;
  appHash: Bytes;
  appVersion: bigint;
}
