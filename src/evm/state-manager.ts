/**
 * A StateManager for @ethereumjs/vm v10 over the flat state, with no trie work during execution.
 *
 * Why not @ethereumjs/statemanager's MerkleStateManager: it writes its trie whenever its
 * checkpoint depth returns to 0 (after every tx unless the block is wrapped in one checkpoint),
 * and its trie bookkeeping (RLP, hex-string keys, hashing) was 34 % of a tuned ERC-20 transfer.
 * Here the trie is updated once per block from flush() (src/evm/trie.ts).
 *
 * Model: one current-value cache per kind (accounts, storage per address, code by hash), filled
 * from the flat state on a miss; every write goes to the cache, is marked dirty, and, when a
 * checkpoint is open, journaled with the value it had when that checkpoint opened (first write
 * wins). commit() merges the top journal into the one below (keeping the older value), revert()
 * puts the recorded values back. A block runs inside ONE checkpoint opened by the caller
 * (src/evm/block.ts), so the VM's per-tx and per-call checkpoints nest under it and per-tx reverts
 * still work; flush() then hands over the block's dirty accounts, slots and code.
 *
 * The flat state is not written while a block runs, so "not in the cache" always means "as at the
 * start of the block": reverting an entry to "not cached" is exact.
 *
 * Accounts are kept as immutable AccountRecords and handed to the VM as fresh Account objects,
 * because the VM mutates the Account it got and then puts it back.
 *
 * storageRoot in the records is the one from the flat state (the root at the start of the block,
 * or the empty root after a wipe); the VM reads it only for EIP-7610's create-collision check.
 */
import type { StateManagerInterface, AccountFields } from '@ethereumjs/common';
import { Account, type Address, KECCAK256_NULL, KECCAK256_RLP, equalsBytes, unpadBytes } from '@ethereumjs/util';
import { getCryptoBackend } from '../crypto/backend.js';
import type { AccountRecord, FlatState, StateChanges, StorageChange } from './flat-state.js';
import { keyBytes } from './kv.js';
import { bytesToKey } from '../crypto/bytes.js';

const EMPTY = new Uint8Array(0);
/** Codes kept across clearCaches before the code cache starts over. */
const MAX_KEPT_CODES = 4096;

/** A journal entry's key: 'a'+addr, 's'+addr+slot, 'w'+addr (the wiped flag). */
type JournalMap = Map<string, unknown>;
/** Marks "was not in the cache" in a journal (undefined is a legal cached value nowhere). */
const NOT_CACHED = Symbol('not-cached');

export interface FlatStateManagerOptions {
  /** keccak256 for code hashes; defaults to chaind's crypto backend. */
  keccak256?: (data: Uint8Array) => Uint8Array;
  /** The state root the flat state corresponds to (what getStateRoot answers between blocks). */
  stateRoot?: Uint8Array;
}

export class StateManagerError extends Error {
  override readonly name = 'StateManagerError';
  constructor(
    message: string,
    readonly code: 'EVM_STATE_DIRTY' | 'EVM_STATE_OPEN_CHECKPOINT' | 'EVM_STATE_UNSUPPORTED' | 'EVM_STATE_BAD_KEY',
  ) {
    super(message);
  }
}

class OriginalStorage {
  private readonly map = new Map<string, Uint8Array>();
  constructor(private readonly sm: FlatStateManager) {}
  async get(address: Address, key: Uint8Array): Promise<Uint8Array> {
    const k = bytesToKey(address.bytes) + bytesToKey(key);
    let v = this.map.get(k);
    if (v === undefined) {
      v = await this.sm.getStorage(address, key);
      this.map.set(k, v);
    }
    return v;
  }
  clear(): void {
    if (this.map.size > 0) this.map.clear();
  }
}

export class FlatStateManager implements StateManagerInterface {
  readonly flat: FlatState;
  readonly originalStorageCache: OriginalStorage;
  private readonly keccak: (data: Uint8Array) => Uint8Array;
  /** addrKey → record, or null for "no account". */
  private accounts = new Map<string, AccountRecord | null>();
  /** addrKey → slotKey → value (unpadded; empty = zero). */
  private storage = new Map<string, Map<string, Uint8Array>>();
  /** addrKeys whose storage was wiped in this block: slot misses read as zero, not from flat. */
  private wiped = new Set<string>();
  private code = new Map<string, Uint8Array>();
  private dirtyAccounts = new Set<string>();
  private dirtyStorage = new Map<string, Set<string>>();
  private dirtyWiped = new Set<string>();
  private newCode = new Map<string, Uint8Array>();
  private journal: JournalMap[] = [];
  private root: Uint8Array;

  constructor(flat: FlatState, opts: FlatStateManagerOptions = {}) {
    this.flat = flat;
    this.keccak = opts.keccak256 ?? getCryptoBackend().keccak256.bind(getCryptoBackend());
    this.root = opts.stateRoot ?? KECCAK256_RLP;
    this.originalStorageCache = new OriginalStorage(this);
  }

  // ---- journal ----------------------------------------------------------------------------

  get checkpointDepth(): number {
    return this.journal.length;
  }

  private record(jk: string, prev: unknown): void {
    const top = this.journal[this.journal.length - 1];
    if (top !== undefined && !top.has(jk)) top.set(jk, prev);
  }

  async checkpoint(): Promise<void> {
    this.journal.push(new Map());
  }

  async commit(): Promise<void> {
    const top = this.journal.pop();
    if (top === undefined) throw new StateManagerError('commit without a checkpoint', 'EVM_STATE_OPEN_CHECKPOINT');
    const below = this.journal[this.journal.length - 1];
    if (below === undefined) return;
    for (const [k, v] of top) if (!below.has(k)) below.set(k, v);
  }

  async revert(): Promise<void> {
    const top = this.journal.pop();
    if (top === undefined) throw new StateManagerError('revert without a checkpoint', 'EVM_STATE_OPEN_CHECKPOINT');
    for (const [k, prev] of top) {
      const kind = k.charCodeAt(0);
      const addr = k.slice(1, 21);
      if (kind === 0x61 /* a */) {
        if (prev === NOT_CACHED) this.accounts.delete(addr);
        else this.accounts.set(addr, prev as AccountRecord | null);
      } else if (kind === 0x77 /* w */) {
        if (prev === true) this.wiped.add(addr);
        else this.wiped.delete(addr);
      } else {
        const slots = this.storage.get(addr);
        if (prev === NOT_CACHED) slots?.delete(k.slice(21));
        else this.slotMap(addr).set(k.slice(21), prev as Uint8Array);
      }
    }
  }

  // ---- accounts ---------------------------------------------------------------------------

  private loadAccount(ak: string, address: Uint8Array): AccountRecord | null {
    let rec = this.accounts.get(ak);
    if (rec === undefined) {
      rec = this.flat.getAccount(address) ?? null;
      this.accounts.set(ak, rec);
    }
    return rec;
  }

  private setAccount(ak: string, rec: AccountRecord | null): void {
    if (this.journal.length > 0) {
      const prev = this.accounts.get(ak);
      this.record('a' + ak, prev === undefined ? NOT_CACHED : prev);
    }
    this.accounts.set(ak, rec);
    this.dirtyAccounts.add(ak);
  }

  async getAccount(address: Address): Promise<Account | undefined> {
    const rec = this.loadAccount(bytesToKey(address.bytes), address.bytes);
    if (rec === null) return undefined;
    return new Account(rec.nonce, rec.balance, rec.storageRoot, rec.codeHash);
  }

  /** The account as a record (no Account object), for readers outside the VM. */
  getAccountRecord(address: Uint8Array): AccountRecord | undefined {
    return this.loadAccount(bytesToKey(address), address) ?? undefined;
  }

  /** putAccount (or deleteAccount's account half, for null) without the promise and the Account. */
  putAccountRecord(address: Uint8Array, rec: AccountRecord | null): void {
    this.setAccount(bytesToKey(address), rec);
  }

  async putAccount(address: Address, account?: Account): Promise<void> {
    const ak = bytesToKey(address.bytes);
    if (account === undefined) {
      this.setAccount(ak, null);
      return;
    }
    this.setAccount(ak, {
      nonce: account.nonce,
      balance: account.balance,
      storageRoot: account.storageRoot,
      codeHash: account.codeHash,
    });
  }

  async deleteAccount(address: Address): Promise<void> {
    this.deleteAccountSync(address.bytes);
  }

  deleteAccountSync(address: Uint8Array): void {
    const ak = bytesToKey(address);
    this.setAccount(ak, null);
    this.wipeStorage(ak);
  }

  async modifyAccountFields(address: Address, fields: AccountFields): Promise<void> {
    const ak = bytesToKey(address.bytes);
    const cur = this.loadAccount(ak, address.bytes);
    this.setAccount(ak, {
      nonce: fields.nonce ?? cur?.nonce ?? 0n,
      balance: fields.balance ?? cur?.balance ?? 0n,
      storageRoot: fields.storageRoot ?? cur?.storageRoot ?? KECCAK256_RLP,
      codeHash: fields.codeHash ?? cur?.codeHash ?? KECCAK256_NULL,
    });
  }

  // ---- code ---------------------------------------------------------------------------------

  async putCode(address: Address, value: Uint8Array): Promise<void> {
    const hash = this.keccak(value);
    const hk = bytesToKey(hash);
    this.code.set(hk, value);
    if (value.length > 0) this.newCode.set(hk, value);
    await this.modifyAccountFields(address, { codeHash: hash });
  }

  private codeByHash(hash: Uint8Array): Uint8Array {
    if (equalsBytes(hash, KECCAK256_NULL)) return EMPTY;
    const hk = bytesToKey(hash);
    let c = this.code.get(hk);
    if (c === undefined) {
      c = this.flat.getCode(hash) ?? EMPTY;
      this.code.set(hk, c);
    }
    return c;
  }

  async getCode(address: Address): Promise<Uint8Array> {
    return this.getCodeSync(address.bytes);
  }

  /** getCode without the promise (the reads are synchronous underneath): JS tracers' `db`. */
  getCodeSync(address: Uint8Array): Uint8Array {
    const rec = this.loadAccount(bytesToKey(address), address);
    return rec === null ? EMPTY : this.codeByHash(rec.codeHash);
  }

  async getCodeSize(address: Address): Promise<number> {
    return (await this.getCode(address)).length;
  }

  // ---- storage ------------------------------------------------------------------------------

  private slotMap(ak: string): Map<string, Uint8Array> {
    let m = this.storage.get(ak);
    if (m === undefined) {
      m = new Map();
      this.storage.set(ak, m);
    }
    return m;
  }

  async getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    return this.getStorageSync(address, key);
  }

  /** getStorage without the promise: JS tracers' `db`. */
  getStorageSync(address: Address, key: Uint8Array): Uint8Array {
    if (key.length !== 32) throw new StateManagerError('storage key must be 32 bytes', 'EVM_STATE_BAD_KEY');
    const ak = bytesToKey(address.bytes);
    const m = this.slotMap(ak);
    const sk = bytesToKey(key);
    let v = m.get(sk);
    if (v === undefined) {
      // Under a wipe a miss is zero, and is not cached: if the wipe is reverted, the slot must
      // read the flat value again, and a cached zero would not be journaled.
      if (this.wiped.has(ak)) return EMPTY;
      v = this.flat.getStorage(address.bytes, key) ?? EMPTY;
      m.set(sk, v);
    }
    return v;
  }

  async putStorage(address: Address, key: Uint8Array, value: Uint8Array): Promise<void> {
    this.putStorageSync(address.bytes, key, value);
  }

  /** putStorage without the promise (src/evm/fast-tx.ts). */
  putStorageSync(address: Uint8Array, key: Uint8Array, value: Uint8Array): void {
    if (key.length !== 32) throw new StateManagerError('storage key must be 32 bytes', 'EVM_STATE_BAD_KEY');
    const ak = bytesToKey(address);
    const sk = bytesToKey(key);
    const m = this.slotMap(ak);
    if (this.journal.length > 0) {
      const prev = m.get(sk);
      this.record('s' + ak + sk, prev === undefined ? NOT_CACHED : prev);
    }
    m.set(sk, unpadBytes(value));
    let d = this.dirtyStorage.get(ak);
    if (d === undefined) {
      d = new Set();
      this.dirtyStorage.set(ak, d);
    }
    d.add(sk);
  }

  /** All of an account's storage reads as zero from here on (journaled). */
  private wipeStorage(ak: string): void {
    const m = this.slotMap(ak);
    if (this.journal.length > 0) {
      for (const [sk, v] of m) this.record('s' + ak + sk, v);
      this.record('w' + ak, this.wiped.has(ak));
    }
    m.clear();
    this.wiped.add(ak);
    this.dirtyWiped.add(ak);
  }

  async clearStorage(address: Address): Promise<void> {
    this.wipeStorage(bytesToKey(address.bytes));
  }

  // ---- roots, copies, caches ------------------------------------------------------------------

  async getStateRoot(): Promise<Uint8Array> {
    if (this.isDirty()) {
      throw new StateManagerError('state root is computed per block (flush, then StateTrie.commit)', 'EVM_STATE_DIRTY');
    }
    return this.root;
  }

  async setStateRoot(stateRoot: Uint8Array): Promise<void> {
    if (!equalsBytes(stateRoot, this.root)) {
      throw new StateManagerError('the flat state holds only the latest state', 'EVM_STATE_UNSUPPORTED');
    }
  }

  async hasStateRoot(root: Uint8Array): Promise<boolean> {
    return equalsBytes(root, this.root);
  }

  isDirty(): boolean {
    return this.dirtyAccounts.size > 0 || this.dirtyStorage.size > 0 || this.dirtyWiped.size > 0;
  }

  /**
   * Drops the account and storage caches. Code is addressed by its hash, so what is cached stays
   * right at any height: it is kept (bounded), which also keeps each code's Uint8Array the same
   * object from call to call and block to block, the key of the jump-destination cache
   * (jumpdests.ts). A hash read as "no code" is forgotten: that code may be stored later.
   */
  clearCaches(): void {
    if (this.isDirty() || this.journal.length > 0) return;
    this.accounts.clear();
    this.storage.clear();
    this.wiped.clear();
    if (this.code.size > MAX_KEPT_CODES) this.code.clear();
    else for (const [hk, c] of this.code) if (c.length === 0) this.code.delete(hk);
  }

  /** Drops the cached record of an account (latin1 address): written outside this manager. */
  forgetAccount(ak: string): void {
    this.accounts.delete(ak);
  }

  /** Drops a cached slot (latin1 address and 32-byte slot): written outside this manager. */
  forgetSlot(ak: string, sk: string): void {
    this.storage.get(ak)?.delete(sk);
  }

  /** Number of cached accounts (for cache bounding by the caller). */
  get cachedAccounts(): number {
    return this.accounts.size;
  }

  /** A manager over the same flat state with empty caches (reads what was last applied). */
  shallowCopy(): FlatStateManager {
    return new FlatStateManager(this.flat, { keccak256: this.keccak, stateRoot: this.root });
  }

  // ---- block boundary -----------------------------------------------------------------------

  /**
   * The block's changes, and the dirty marks cleared. Every address with storage changes is also
   * in `accounts` (its storageRoot changes); records carry the storageRoot from before the block
   * (or the empty root after a wipe) until the trie fills in the new one (`setStorageRoots`).
   */
  flush(): StateChanges {
    if (this.journal.length > 0) {
      throw new StateManagerError(`flush with ${this.journal.length} open checkpoint(s)`, 'EVM_STATE_OPEN_CHECKPOINT');
    }
    const storage: StorageChange[] = [];
    const storageAddrs = new Set<string>([...this.dirtyWiped, ...this.dirtyStorage.keys()]);
    for (const ak of storageAddrs) {
      const address = keyBytes(ak);
      const rec = this.loadAccount(ak, address);
      if (rec === null) {
        // Deleted (or never created): its storage goes with it.
        storage.push({ address, wiped: true, slots: [] });
        this.dirtyAccounts.add(ak);
        continue;
      }
      // The current (journaled) flag, not dirtyWiped: a wipe that was reverted is no wipe.
      const wiped = this.wiped.has(ak);
      const m = this.storage.get(ak);
      const slots: { slot: Uint8Array; value: Uint8Array }[] = [];
      for (const sk of this.dirtyStorage.get(ak) ?? []) {
        const v = m?.get(sk);
        // A slot written then reverted to "not cached" still reads its block-start value.
        if (v === undefined) continue;
        slots.push({ slot: keyBytes(sk), value: v });
      }
      if (!wiped && slots.length === 0) continue;
      storage.push({ address, wiped, slots });
      this.dirtyAccounts.add(ak);
    }
    const accounts: StateChanges['accounts'] = [];
    const referenced = new Set<string>();
    for (const ak of this.dirtyAccounts) {
      let rec = this.accounts.get(ak);
      if (rec === undefined) continue; // reverted to "as at block start"
      if (rec !== null && this.wiped.has(ak)) rec = { ...rec, storageRoot: KECCAK256_RLP };
      accounts.push({ address: keyBytes(ak), account: rec ?? undefined });
      if (rec) referenced.add(bytesToKey(rec.codeHash));
    }
    const code: StateChanges['code'] = [];
    for (const [hk, c] of this.newCode) if (referenced.has(hk)) code.push({ hash: keyBytes(hk), code: c });
    // After the block, flat state will hold exactly what the caches hold; wiped addresses
    // now have all their live slots in the cache, so reading the flat state for misses is right.
    this.clearMarks();
    return { accounts, storage, code };
  }

  /**
   * After a read-only run whose every checkpoint was reverted (eth_call, src/app/modules/evm/calls.ts):
   * the dirty marks its writes left are dropped. The caches hold the values from before the run
   * again, so what flush() would hand over is nothing new; this skips building it.
   */
  discardReverted(): void {
    if (this.journal.length > 0) {
      throw new StateManagerError(`discardReverted with ${this.journal.length} open checkpoint(s)`, 'EVM_STATE_OPEN_CHECKPOINT');
    }
    this.clearMarks();
  }

  /** Drops the dirty marks, the new code and the wipe flags (flush, discardReverted). */
  private clearMarks(): void {
    // clear() allocates a fresh table even for an empty collection: only the non-empty ones.
    if (this.dirtyAccounts.size > 0) this.dirtyAccounts.clear();
    if (this.dirtyStorage.size > 0) this.dirtyStorage.clear();
    if (this.dirtyWiped.size > 0) this.dirtyWiped.clear();
    if (this.newCode.size > 0) this.newCode.clear();
    if (this.wiped.size > 0) this.wiped.clear();
  }

  /**
   * What flush() would hand over now, without clearing anything and with checkpoints open: the
   * accounts and slots changed since the last flush, at their current values (code left out).
   * For debug_intermediateRoots (src/app/modules/evm/trace.ts), which needs the state after each
   * tx of a block replayed under one open checkpoint.
   */
  pendingChanges(): Omit<StateChanges, 'code'> {
    const storage: StorageChange[] = [];
    const accountKeys = new Set(this.dirtyAccounts);
    for (const ak of new Set<string>([...this.dirtyWiped, ...this.dirtyStorage.keys()])) {
      const rec = this.accounts.get(ak);
      if (rec === undefined) continue;
      const address = keyBytes(ak);
      if (rec === null) {
        storage.push({ address, wiped: true, slots: [] });
        accountKeys.add(ak);
        continue;
      }
      const wiped = this.wiped.has(ak);
      const m = this.storage.get(ak);
      const slots: { slot: Uint8Array; value: Uint8Array }[] = [];
      for (const sk of this.dirtyStorage.get(ak) ?? []) {
        const v = m?.get(sk);
        if (v !== undefined) slots.push({ slot: keyBytes(sk), value: v });
      }
      if (!wiped && slots.length === 0) continue;
      storage.push({ address, wiped, slots });
      accountKeys.add(ak);
    }
    const accounts: StateChanges['accounts'] = [];
    for (const ak of accountKeys) {
      let rec = this.accounts.get(ak);
      if (rec === undefined) continue;
      if (rec !== null && this.wiped.has(ak)) rec = { ...rec, storageRoot: KECCAK256_RLP };
      accounts.push({ address: keyBytes(ak), account: rec ?? undefined });
    }
    return { accounts, storage };
  }

  /**
   * After the trie computed the block's storage roots (StateTrie.commit set them on the
   * records in `changes`): the cache takes the new records and the new state root.
   */
  afterCommit(changes: StateChanges, stateRoot: Uint8Array): void {
    for (const a of changes.accounts) this.accounts.set(bytesToKey(a.address), a.account ?? null);
    this.root = stateRoot;
  }
}
