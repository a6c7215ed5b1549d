/**
 * The evidence pool's database (the `evidence` named database): pending and committed evidence
 * by height and hash (cometbft/cometbft:evidence/pool.go keeps the same two lists).
 *
 * Keys are `prefix || height (8-byte BE) || evidence hash`, prefix 0x00 committed and 0x01
 * pending, so a range scan lists pending evidence oldest height first, the order CometBFT's
 * `%016X/%X` text keys give. A pending value is the proto `Evidence` item as it goes into a block;
 * a committed value is the height (CometBFT stores only that too: the block store has the rest).
 * The store knows bytes, heights and hashes only; what evidence means is src/evidence's business.
 */
import type { BinaryDB } from './db.js';

const PREFIX_COMMITTED = 0x00;
const PREFIX_PENDING = 0x01;

function key(prefix: number, height: bigint, hash: Uint8Array): Buffer {
  const k = Buffer.allocUnsafe(9 + hash.length);
  k[0] = prefix;
  k.writeBigUInt64BE(height, 1);
  k.set(hash, 9);
  return k;
}

function heightValue(height: bigint): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeBigUInt64BE(height);
  return b;
}

/** The pending key range; a fresh object per call, because lmdb-js keeps state in the options it is given. */
const pendingRange = () => ({ start: Buffer.from([PREFIX_PENDING]), end: Buffer.from([PREFIX_PENDING + 1]) });

export interface PendingEvidence {
  height: bigint;
  hash: Uint8Array;
  /** The proto `Evidence` item. */
  item: Uint8Array;
}

export class EvidenceStore {
  constructor(private readonly db: BinaryDB) {}

  /** Runs fn in the environment's one write transaction (the same one the block executor uses). */
  transactionSync<T>(fn: () => T): T {
    return this.db.transactionSync(fn);
  }

  pendingCount(): number {
    return this.db.getKeysCount(pendingRange());
  }

  isPending(height: bigint, hash: Uint8Array): boolean {
    return this.db.doesExist(key(PREFIX_PENDING, height, hash));
  }

  isCommitted(height: bigint, hash: Uint8Array): boolean {
    return this.db.doesExist(key(PREFIX_COMMITTED, height, hash));
  }

  /** Writes with putSync: call inside a write transaction (or accept a transaction of its own). */
  addPending(height: bigint, hash: Uint8Array, item: Uint8Array): void {
    this.db.putSync(key(PREFIX_PENDING, height, hash), item);
  }

  removePending(height: bigint, hash: Uint8Array): void {
    this.db.removeSync(key(PREFIX_PENDING, height, hash));
  }

  /** Moves an item from pending (if there) to committed. */
  markCommitted(height: bigint, hash: Uint8Array): void {
    this.db.removeSync(key(PREFIX_PENDING, height, hash));
    this.db.putSync(key(PREFIX_COMMITTED, height, hash), heightValue(height));
  }

  /** Pending evidence, oldest height first (then by hash). Copy before writing while iterating. */
  *pending(): Iterable<PendingEvidence> {
    for (const { key: k, value } of this.db.getRange(pendingRange())) {
      const kb = k as Buffer;
      yield { height: kb.readBigUInt64BE(1), hash: new Uint8Array(kb.subarray(9)), item: new Uint8Array(value) };
    }
  }
}
