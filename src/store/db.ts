/**
 * The names and the handle type of the node's named databases. Its own file, importing nothing, so
 * that Storage and the repositories it builds (blockstore, statestore, …) do not import each other.
 */
import type { Database } from 'lmdb';

export type BinaryDB = Database<Uint8Array, Uint8Array>;

/** Named databases; adding one here is all it takes to get it opened. */
export const DB_NAMES = [
  'blocks', // height -> proto Block
  'block_meta', // height -> BlockMeta record
  'block_hash', // block hash -> height
  'commits', // height -> proto Commit for that height (taken from block height+1's last_commit)
  'seen_commits', // height -> proto Commit this node saw +2/3 precommits for
  'state', // 'state' -> latest consensus State
  'validators', // height -> validator set of that height
  'params', // height -> consensus params of that height
  'abci_responses', // height -> FinalizeBlock response
  'tx_results', // tx hash -> {height, index, result}
  'tx_index', // event index for tx_search (ordered composite keys)
  'block_index', // event index for block_search
  'app', // application state (module stores), latest version (src/store/versioned.ts)
  'app_history', // esc(app key) 00 00 | height -> the key's value before that height changed it
  'app_changes', // height | chunk -> keys that height changed (pruning index); version markers
  'meta', // store metadata (base, height, version)
  'evidence', // evidence pool: 00|height|hash -> committed height, 01|height|hash -> pending proto Evidence
] as const;
export type DbName = (typeof DB_NAMES)[number];
