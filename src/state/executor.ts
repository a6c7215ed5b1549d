/** What consensus needs from block execution (state/execution.go). */
import type { Block, BlockID, Commit } from '../types/block.js';
import type { State } from './state.js';

export interface BlockExecutor {
  /** Builds a proposal for state.lastBlockHeight + 1 from the mempool through PrepareProposal. */
  createProposalBlock(state: State, lastCommit: Commit, proposerAddress: Uint8Array, time: bigint): Promise<Block>;
  /** Throws an Error naming the first invalid field. */
  validateBlock(state: State, block: Block): void;
  /** The application's ProcessProposal. */
  processProposal(state: State, block: Block): Promise<boolean>;
  /**
   * FinalizeBlock, then one write transaction with the block, its seen commit, the new state, the
   * app state and the indexes; then mempool update and events. Returns the new state.
   * `blockBytes`, when given, is the block's proto encoding (not encoded again).
   */
  applyBlock(state: State, blockId: BlockID, block: Block, seenCommit: Commit, blockBytes?: Uint8Array): Promise<State>;
}
