/**
 * Blocks, block metas, commits and seen commits by height (store/store.go in CometBFT).
 *
 * Blocks are kept as their proto bytes, the same bytes the part set hashes, so a block read back
 * hashes to the BlockID it was committed under. The commit for height h is the last_commit of
 * block h+1 (canonical); the seen commit is the +2/3 precommits this node itself collected, the
 * only commit there is for the latest height.
 */
import type { Block, BlockID, BlockMeta, Commit } from '../types/block.js';
import { decodeBlock, decodeCommit, encodeCommit } from '../types/codec.js';
import { heightKey, strKey } from './keys.js';
import type { BinaryDB, DbName } from './db.js';
import { decodeTagged, encodeTagged } from './tagged.js';

const BASE_KEY = strKey('blockstore.base');
const HEIGHT_KEY = strKey('blockstore.height');

export class BlockStore {
  private readonly dbs: Record<DbName, BinaryDB>;
  private _base: bigint;
  private _height: bigint;

  constructor(dbs: Record<DbName, BinaryDB>) {
    this.dbs = dbs;
    this._base = 0n;
    this._height = 0n;
    this.reload();
  }

  /** Re-reads base and height: after a write transaction on another thread stored a block. */
  reload(): void {
    const base = this.dbs.meta.getBinary(BASE_KEY);
    const height = this.dbs.meta.getBinary(HEIGHT_KEY);
    this._base = base ? BigInt(Buffer.from(base).toString()) : 0n;
    this._height = height ? BigInt(Buffer.from(height).toString()) : 0n;
  }

  /** Lowest stored height; 0 when empty. */
  base(): bigint {
    return this._base;
  }

  /** Highest stored height; 0 when empty. */
  height(): bigint {
    return this._height;
  }

  /**
   * Stores a committed block. Must run inside Storage.transactionSync together with the state it
   * produced, so the store height and the state height never disagree after a crash.
   */
  saveBlock(block: Block, blockId: BlockID, blockBytes: Uint8Array, seenCommit: Commit): void {
    const h = block.header.height;
    const k = heightKey(h);
    const meta: BlockMeta = { blockId, blockSize: blockBytes.length, header: block.header, numTxs: block.data.txs.length };
    this.dbs.blocks.putSync(k, blockBytes);
    this.dbs.block_meta.putSync(k, encodeTagged(meta));
    this.dbs.block_hash.putSync(Buffer.from(blockId.hash), k);
    if (block.lastCommit.height > 0n) {
      this.dbs.commits.putSync(heightKey(block.lastCommit.height), encodeCommit(block.lastCommit));
    }
    this.dbs.seen_commits.putSync(k, encodeCommit(seenCommit));
    // The previous seen commit is superseded by the canonical one just stored; keep only the
    // latest, as CometBFT does, so the database does not hold two commits per height.
    if (h > 1n) this.dbs.seen_commits.removeSync(heightKey(h - 1n));
    if (this._base === 0n) {
      this._base = h;
      this.dbs.meta.putSync(BASE_KEY, strKey(h.toString()));
    }
    this._height = h;
    this.dbs.meta.putSync(HEIGHT_KEY, strKey(h.toString()));
  }

  loadBlockBytes(height: bigint): Uint8Array | null {
    const v = this.dbs.blocks.getBinary(heightKey(height));
    return v ? new Uint8Array(v) : null;
  }

  loadBlock(height: bigint): Block | null {
    const v = this.dbs.blocks.getBinary(heightKey(height));
    return v ? decodeBlock(v) : null;
  }

  loadBlockMeta(height: bigint): BlockMeta | null {
    const v = this.dbs.block_meta.getBinary(heightKey(height));
    return v ? decodeTagged<BlockMeta>(v) : null;
  }

  heightByHash(hash: Uint8Array): bigint | null {
    const v = this.dbs.block_hash.getBinary(Buffer.from(hash));
    return v ? Buffer.from(v).readBigUInt64BE(0) : null;
  }

  loadBlockByHash(hash: Uint8Array): Block | null {
    const h = this.heightByHash(hash);
    return h === null ? null : this.loadBlock(h);
  }

  /** The canonical commit for `height` (from block height+1). */
  loadBlockCommit(height: bigint): Commit | null {
    const v = this.dbs.commits.getBinary(heightKey(height));
    return v ? decodeCommit(v) : null;
  }

  /** The commit this node saw for `height`; only the latest height keeps one. */
  loadSeenCommit(height: bigint): Commit | null {
    const v = this.dbs.seen_commits.getBinary(heightKey(height));
    return v ? decodeCommit(v) : null;
  }
}
