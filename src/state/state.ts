/**
 * The chain state's shape lives in the ground floor (src/types/state.ts) so the store can keep it
 * without importing src/state; the executor's files read it from here.
 */
export type { State } from '../types/state.js';
