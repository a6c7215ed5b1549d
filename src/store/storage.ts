/**
 * The node's one LMDB environment under <home>/data and its named databases.
 *
 * Every database shares the environment's single write transaction, so the block executor can
 * store a block, its commit, the new consensus state, the application state and the indexes in
 * one `transactionSync` (ARCHITECTURE.md, Storage): after a crash either all of them are there or
 * none is. Reads are synchronous and lock-free (lmdb-js reads ~400k gets/s on this machine,
 * kriszyp/lmdb-js:README.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { BlockStore } from './blockstore.js';
import { DB_NAMES, type BinaryDB, type DbName } from './db.js';
import { EvidenceStore } from './evidencestore.js';
import { StateStore } from './statestore.js';

export { DB_NAMES, type BinaryDB, type DbName } from './db.js';

/** How many more named databases openNamedDb may open beyond DB_NAMES (LMDB's maxDbs is fixed at open). */
export const MAX_NAMED_DBS = 16;
const NAMED_DB_RE = /^[a-z][a-z0-9_]{0,62}$/;

export interface StorageOptions {
  /** The environment's file: <home>/data/chaind.mdb (LMDB adds chaind.mdb-lock beside it). */
  file: string;
  /** Map size in bytes; LMDB grows the file up to this. */
  mapSize?: number;
  /**
   * Skip fsync on commit. Only for tests and benchmarks: a crash can lose or corrupt recent blocks.
   */
  noSync?: boolean;
}

/**
 * The event index's databases (src/indexer reads and writes them; their key layout is
 * src/store/indexer-keys.ts and indexer-codec.ts).
 */
export interface IndexDbs {
  /** tx hash → TxRecord (indexer-codec.ts). */
  txResults: BinaryDB;
  /** tx_search rows (indexer-keys.ts). */
  tx: BinaryDB;
  /** block_search rows (indexer-keys.ts). */
  block: BinaryDB;
}

/** The application's databases (module state and its versions). */
export interface AppDbs {
  latest: BinaryDB;
  history: BinaryDB;
  changes: BinaryDB;
}

/**
 * The node's storage: one repository per named database (or group of databases that one owner
 * writes). No raw database is handed out except through these typed fields.
 */
export class Storage {
  private readonly env: RootDatabase;
  private readonly dbs: Record<DbName, BinaryDB>;
  /** Blocks, block metas, commits, seen commits and the hash → height map. */
  readonly blocks: BlockStore;
  /** The chain state, validator sets, consensus params and FinalizeBlock responses by height. */
  readonly state: StateStore;
  /** The evidence pool's pending and committed evidence. */
  readonly evidence: EvidenceStore;
  /**
   * The application's module state: `latest` (flat, plus BaseApp's meta rows), `history` and
   * `changes` (src/store/versioned.ts VersionedStore keeps those two).
   */
  readonly app: AppDbs;
  /** The tx and block event index. */
  readonly index: IndexDbs;

  private constructor(env: RootDatabase, dbs: Record<DbName, BinaryDB>) {
    this.env = env;
    this.dbs = dbs;
    this.blocks = new BlockStore(dbs);
    this.state = new StateStore(dbs);
    this.evidence = new EvidenceStore(dbs.evidence);
    this.app = { latest: dbs.app, history: dbs.app_history, changes: dbs.app_changes };
    this.index = { txResults: dbs.tx_results, tx: dbs.tx_index, block: dbs.block_index };
  }

  static open(opts: StorageOptions): Storage {
    fs.mkdirSync(path.dirname(opts.file), { recursive: true });
    const env = open({
      path: opts.file,
      maxDbs: DB_NAMES.length + MAX_NAMED_DBS + 4,
      mapSize: opts.mapSize ?? 64 * 1024 * 1024 * 1024,
      noSync: opts.noSync ?? false,
      // Values are our own encodings (proto, tagged JSON); msgpack would only add work.
      encoding: 'binary',
    });
    const dbs = {} as Record<DbName, BinaryDB>;
    for (const name of DB_NAMES) {
      dbs[name] = env.openDB<Uint8Array, Uint8Array>({ name, encoding: 'binary', keyEncoding: 'binary' });
    }
    return new Storage(env, dbs);
  }

  private readonly named = new Map<string, BinaryDB>();

  /**
   * Opens (creating if needed) a further named database in the same environment, e.g. one an app
   * module declares (`evm_state`). Its writes join the same one write transaction as every other
   * database. The store knows nothing of who asks: a name is all it takes. Call outside a
   * transaction; opening a name twice returns the same handle.
   */
  openNamedDb(name: string): BinaryDB {
    const had = this.named.get(name);
    if (had !== undefined) return had;
    if (!NAMED_DB_RE.test(name)) throw new Error(`database name ${JSON.stringify(name)}: lower-case letters, digits and _ only, starting with a letter`);
    if ((DB_NAMES as readonly string[]).includes(name)) throw new Error(`database name ${name} is one of the node's own`);
    if (this.named.size >= MAX_NAMED_DBS) throw new Error(`more than ${MAX_NAMED_DBS} named databases`);
    const db = this.env.openDB<Uint8Array, Uint8Array>({ name, encoding: 'binary', keyEncoding: 'binary' });
    this.named.set(name, db);
    return db;
  }

  /** Runs fn in the environment's one write transaction; writes inside must use putSync/removeSync. */
  transactionSync<T>(fn: () => T): T {
    return this.env.transactionSync(fn);
  }

  /**
   * Drops this thread's cached read snapshot, so the next read sees what another thread (the
   * executor thread) committed since (lmdb-js keeps one read transaction per thread open).
   */
  resetReadTxn(): void {
    this.env.resetReadTxn();
  }

  async close(): Promise<void> {
    await this.env.flushed;
    await this.env.close();
  }
}
