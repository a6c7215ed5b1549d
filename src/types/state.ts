/**
 * The consensus-side chain state after a height (cometbft/cometbft:state/state.go), as plain data:
 * the executor computes it (src/state), the store keeps it (src/store/statestore.ts).
 */
import type { BlockID, Bytes } from './block.js';
import type { ConsensusParams } from './params.js';
import type { ValidatorSet } from './validator_set.js';

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
