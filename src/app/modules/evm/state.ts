/**
 * The one account model, as the EVM sees it: a FlatState (src/evm/flat-state.ts) over a tx's
 * Context, so that every EVM read and write goes through the app's block state (branches per tx,
 * versioned history, LtHash) exactly like a Cosmos module's.
 *
 *   nonce       = the auth account's sequence (0 without an account)
 *   balance     = the bank balance of the EVM denom (`achain`, 18 decimals)
 *   codeHash    = the evm store's code hash of the address (empty code without one)
 *   storage     = the evm store's slots
 *   storageRoot = the committed storage root from evm_trie (only read by the VM for EIP-7610's
 *                 create-collision check; the real roots are computed per block by the keeper)
 *
 * An address "exists" for the EVM (and has a leaf in the state trie) when it has an auth
 * account, a non-zero balance, or code.
 */
import { KECCAK256_NULL, KECCAK256_RLP, equalsBytes } from '@ethereumjs/util';
import { bytesToKey, fromUtf8, prefixEnd, utf8, type Bytes } from '../../bytes.js';
import type { Context } from '../../context.js';
import type { KVStore } from '../../store.js';
import type { AccountKeeper } from '../auth/keeper.js';
import { balanceKey, denomAddressKey, supplyKey } from '../bank/keys.js';
import type { BankKeeper } from '../bank/keeper.js';
import type { AccountRecord, FlatState, StateChanges } from '../../../evm/flat-state.js';
import { codeHashKey, codeKey, slotKey, storagePrefix, EVM_STORE_KEY } from './keys.js';

const ZERO = Uint8Array.of(0);

export interface AccountModel {
  auth: AccountKeeper;
  bank: BankKeeper;
  denom: string;
  /** The committed storage root of an address (evm_trie), or undefined for the empty root. */
  storageRoot(addr: Bytes): Bytes | undefined;
}

export function evmStore(ctx: Context): KVStore {
  return ctx.store(EVM_STORE_KEY);
}

/** The account as the EVM sees it, or undefined if the address does not exist. */
export function readAccount(m: AccountModel, ctx: Context, addr: Bytes): AccountRecord | undefined {
  const acc = m.auth.getAccount(ctx, addr);
  const balance = m.bank.getBalance(ctx, addr, m.denom).amount;
  const ch = evmStore(ctx).get(codeHashKey(addr));
  if (acc === undefined && balance === 0n && ch === undefined) return undefined;
  return { nonce: acc?.sequence ?? 0n, balance, storageRoot: m.storageRoot(addr) ?? KECCAK256_RLP, codeHash: ch ?? KECCAK256_NULL };
}

/**
 * bank's setBalance (zero deletes the balance and its denom→owner entry), on the bank store.
 * `wasNonZero`: the caller read a non-zero balance of this address in this state, so its
 * denom→owner entry is there already (bank writes the two together, always with the same value):
 * it is not written again (one store write and one committed-state read at the block's end less
 * per fee paid).
 */
export function setBankBalance(m: AccountModel, ctx: Context, addr: Bytes, amount: bigint, wasNonZero = false): void {
  const s = ctx.store(m.bank.storeKey);
  if (amount === 0n) {
    s.delete(balanceKey(addr, m.denom));
    s.delete(denomAddressKey(m.denom, addr));
    return;
  }
  s.set(balanceKey(addr, m.denom), utf8(amount.toString()));
  if (!wasNonZero) s.set(denomAddressKey(m.denom, addr), ZERO);
}

/**
 * Sets the auth sequence, creating the auth account (next account number) when there is none.
 * `known`: the account as the caller just read it from this `ctx` (null: none), not read again.
 */
export function setSequence(m: AccountModel, ctx: Context, addr: Bytes, sequence: bigint, known?: ReturnType<AccountKeeper['getAccount']> | null): void {
  const acc = known === undefined ? m.auth.getAccount(ctx, addr) : (known ?? undefined);
  if (acc === undefined) {
    const created = m.auth.newAccountWithAddress(ctx, addr);
    m.auth.setAccount(ctx, { ...created, sequence });
  } else if (acc.sequence !== sequence) {
    m.auth.setAccount(ctx, { ...acc, sequence });
  }
}

/**
 * Writes one tx's state changes (FlatStateManager.flush()) into the Context's stores. A deleted
 * account (EIP-161 touch of an empty account, SELFDESTRUCT in its creation tx) loses its balance,
 * code and storage; its auth account, if any, stays (account numbers are never reused, and module
 * accounts such as the fee collector must survive being touched empty).
 */
export function applyChanges(m: AccountModel, ctx: Context, changes: StateChanges, before?: ReadonlyMap<string, AccountRecord | undefined>): void {
  const evm = evmStore(ctx);
  for (const c of changes.code) evm.set(codeKey(c.hash), c.code);
  for (const s of changes.storage) {
    if (s.wiped) {
      const p = storagePrefix(s.address);
      const keys = [...evm.iterate(p, prefixEnd(p))].map((e) => Uint8Array.from(e.key));
      for (const k of keys) evm.delete(k);
    }
    for (const { slot, value } of s.slots) {
      if (value.length === 0) evm.delete(slotKey(s.address, slot));
      else evm.set(slotKey(s.address, slot), value);
    }
  }
  // EVM execution only moves `achain`, except a SELFDESTRUCT to itself in the creating tx, which
  // burns (EIP-6780): the supply follows the net change so that it stays the sum of balances.
  let net = 0n;
  for (const a of changes.accounts) {
    const addr = a.address;
    const rec = a.account;
    // What the tx read of this account (the view records it): unchanged fields are not rewritten,
    // which spares a protobuf decode/encode of the auth account per touched account.
    const k = bytesToKey(addr);
    const old = before?.has(k) ? before.get(k) : readAccount(m, ctx, addr);
    if (rec === undefined) {
      if (old === undefined) continue;
      net -= old.balance;
      if (old.balance !== 0n) setBankBalance(m, ctx, addr, 0n);
      if (!equalsBytes(old.codeHash, KECCAK256_NULL)) evm.delete(codeHashKey(addr));
      continue;
    }
    if (old === undefined || old.nonce !== rec.nonce || !m.auth.hasAccount(ctx, addr)) setSequence(m, ctx, addr, rec.nonce);
    net += rec.balance - (old?.balance ?? 0n);
    if ((old?.balance ?? 0n) !== rec.balance) setBankBalance(m, ctx, addr, rec.balance, (old?.balance ?? 0n) !== 0n);
    if (!equalsBytes(old?.codeHash ?? KECCAK256_NULL, rec.codeHash)) {
      if (equalsBytes(rec.codeHash, KECCAK256_NULL)) evm.delete(codeHashKey(addr));
      else evm.set(codeHashKey(addr), rec.codeHash);
    }
  }
  if (net !== 0n) {
    const bank = ctx.store(m.bank.storeKey);
    const cur = bank.get(supplyKey(m.denom));
    const supply = (cur === undefined ? 0n : BigInt(fromUtf8(cur))) + net;
    if (supply <= 0n) bank.delete(supplyKey(m.denom));
    else bank.set(supplyKey(m.denom), utf8(supply.toString()));
  }
}

/** FlatState over whichever Context is bound (the keeper binds the running tx's). */
export class ContextFlatState implements FlatState {
  private bound: Context | undefined;
  /**
   * Accounts as the bound Context holds them: as first read in the tx, or as apply() wrote them
   * (what applyChanges compares against, and what getAccount answers).
   */
  readonly reads = new Map<string, AccountRecord | undefined>();
  constructor(private readonly m: AccountModel) {}

  get ctx(): Context | undefined {
    return this.bound;
  }
  /** Binds the tx's Context (and forgets the previous tx's reads). */
  set ctx(c: Context | undefined) {
    this.bound = c;
    this.reads.clear();
  }

  /**
   * Binds a Context (or none) and keeps `reads`: the next tx of the same block state, whose caller
   * keeps them what that state holds (the keeper: forget() for every write it did not make).
   */
  carryOver(c: Context | undefined): void {
    this.bound = c;
  }

  /** Forgets what `reads` holds for one address (latin1). */
  forget(ak: string): void {
    this.reads.delete(ak);
  }

  private c(): Context {
    if (this.ctx === undefined) throw new Error('evm: state read outside a tx');
    return this.ctx;
  }

  getAccount(address: Uint8Array): AccountRecord | undefined {
    const k = bytesToKey(address);
    if (this.reads.has(k)) return this.reads.get(k);
    const r = readAccount(this.m, this.c(), address);
    this.reads.set(k, r);
    return r;
  }
  getCode(codeHash: Uint8Array): Uint8Array | undefined {
    return evmStore(this.c()).get(codeKey(codeHash));
  }
  getStorage(address: Uint8Array, slot: Uint8Array): Uint8Array | undefined {
    return evmStore(this.c()).get(slotKey(address, slot));
  }
  *storageEntries(address: Uint8Array): Iterable<{ slot: Uint8Array; value: Uint8Array }> {
    const p = storagePrefix(address);
    for (const e of evmStore(this.c()).iterate(p, prefixEnd(p))) yield { slot: e.key.subarray(21, 53), value: e.value };
  }
  apply(changes: StateChanges): void {
    applyChanges(this.m, this.c(), changes, this.reads);
    // What the Context now holds: the records written, except where readAccount would answer
    // otherwise (a deleted account may keep its auth account; a wiped one its committed root).
    let wiped: Set<string> | undefined;
    for (const s of changes.storage) if (s.wiped) (wiped ??= new Set()).add(bytesToKey(s.address));
    for (const a of changes.accounts) {
      const k = bytesToKey(a.address);
      if (a.account === undefined || wiped?.has(k)) this.reads.delete(k);
      else this.reads.set(k, a.account);
    }
  }
}

/** A 20-byte address key for sets. */
export const addrKey = bytesToKey;
