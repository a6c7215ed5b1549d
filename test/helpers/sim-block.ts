/**
 * State transitions for the consensus tests' own executors (no app, no store): the state after a
 * block as state/execution.go moves it on. Their blocks come from src/state/execution.ts makeBlock.
 */
import type { Block, BlockID } from '../../src/types/block.js';
import type { State } from '../../src/types/state.js';

/** The state after `block` (validator sets rotate; nothing else changes unless `changes` says). */
export function stateAfter(state: State, blockId: BlockID, block: Block, changes: Partial<State> = {}): State {
  return {
    ...state,
    lastBlockHeight: block.header.height,
    lastBlockId: blockId,
    lastBlockTime: block.header.time,
    validators: state.nextValidators.copy(),
    nextValidators: state.nextValidators.copyIncrementProposerPriority(1),
    lastValidators: state.validators.copy(),
    ...changes,
  };
}
