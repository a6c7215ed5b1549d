/**
 * The latest EVM state as flat key/values: what execution reads (one KV get per account, slot or
 * code), as opposed to the Merkle-Patricia trie (src/evm/trie.ts), which only exists to produce
 * the state root and proofs and is touched once per block.
 *
 * Key layouts (binary, big-endian-free because nothing is numeric; one-byte prefix per kind):
 *   0x01 | address(20)               → account: RLP [nonce, balance, storageRoot | "", codeHash | ""]
 *                                     (an empty root / empty-code hash is stored as "", 1 byte
 *                                     instead of 33 each, like the "slim" accounts of snap sync)
 *   0x02 | codeHash(32)              → code
 *   0x03 | address(20) | slot(32)    → slot value, leading zeros stripped (zero = no entry)
 * The storage layout keeps one account's slots contiguous, so wiping an account's storage
 * (SELFDESTRUCT of a contract created in the same tx, CREATE over an old address) is one range.
 */
import { RLP } from '@ethereumjs/rlp';
import { KECCAK256_NULL, KECCAK256_RLP, bigIntToUnpaddedBytes, bytesToBigInt, equalsBytes } from '@ethereumjs/util';
import type { KVStore } from './kv.js';

export const PREFIX_ACCOUNT = 0x01;
export const PREFIX_CODE = 0x02;
export const PREFIX_STORAGE = 0x03;

/** An account as the state holds it. storageRoot and codeHash are 32 bytes. */
export interface AccountRecord {
  readonly nonce: bigint;
  readonly balance: bigint;
  readonly storageRoot: Uint8Array;
  readonly codeHash: Uint8Array;
}

export interface AccountChange {
  address: Uint8Array;
  /** undefined: the account is deleted. */
  account: AccountRecord | undefined;
}

export interface StorageChange {
  address: Uint8Array;
  /** All of the account's previous storage is gone (before `slots` are applied). */
  wiped: boolean;
  /** 32-byte slot → value with leading zeros stripped; an empty value deletes the slot. */
  slots: { slot: Uint8Array; value: Uint8Array }[];
}

/** What one block changed, as the state manager's flush() yields it. */
export interface StateChanges {
  accounts: AccountChange[];
  storage: StorageChange[];
  code: { hash: Uint8Array; code: Uint8Array }[];
}

export interface FlatState {
  getAccount(address: Uint8Array): AccountRecord | undefined;
  getCode(codeHash: Uint8Array): Uint8Array | undefined;
  /** The value with leading zeros stripped, or undefined for zero. */
  getStorage(address: Uint8Array, slot: Uint8Array): Uint8Array | undefined;
  /** The account's non-zero slots in slot order. */
  storageEntries(address: Uint8Array): Iterable<{ slot: Uint8Array; value: Uint8Array }>;
  /** Writes a block's changes (account records must carry their final storageRoot). */
  apply(changes: StateChanges): void;
}

export function accountKey(address: Uint8Array): Uint8Array {
  const k = new Uint8Array(21);
  k[0] = PREFIX_ACCOUNT;
  k.set(address, 1);
  return k;
}

export function codeKey(hash: Uint8Array): Uint8Array {
  const k = new Uint8Array(33);
  k[0] = PREFIX_CODE;
  k.set(hash, 1);
  return k;
}

export function storageKey(address: Uint8Array, slot: Uint8Array): Uint8Array {
  const k = new Uint8Array(53);
  k[0] = PREFIX_STORAGE;
  k.set(address, 1);
  k.set(slot, 21);
  return k;
}

function storagePrefix(address: Uint8Array): Uint8Array {
  const k = new Uint8Array(21);
  k[0] = PREFIX_STORAGE;
  k.set(address, 1);
  return k;
}

const EMPTY = new Uint8Array(0);

export function encodeAccountRecord(a: AccountRecord): Uint8Array {
  return RLP.encode([
    bigIntToUnpaddedBytes(a.nonce),
    bigIntToUnpaddedBytes(a.balance),
    equalsBytes(a.storageRoot, KECCAK256_RLP) ? EMPTY : a.storageRoot,
    equalsBytes(a.codeHash, KECCAK256_NULL) ? EMPTY : a.codeHash,
  ]);
}

export function decodeAccountRecord(b: Uint8Array): AccountRecord {
  const f = RLP.decode(b) as Uint8Array[];
  if (!Array.isArray(f) || f.length !== 4) throw new Error('flat state: malformed account record');
  return {
    nonce: bytesToBigInt(f[0]!),
    balance: bytesToBigInt(f[1]!),
    storageRoot: f[2]!.length === 0 ? KECCAK256_RLP : f[2]!,
    codeHash: f[3]!.length === 0 ? KECCAK256_NULL : f[3]!,
  };
}

/** FlatState over any KVStore (memory for tests, LMDB in production). */
export class KVFlatState implements FlatState {
  constructor(readonly kv: KVStore) {}

  getAccount(address: Uint8Array): AccountRecord | undefined {
    const v = this.kv.get(accountKey(address));
    return v === undefined ? undefined : decodeAccountRecord(v);
  }

  getCode(codeHash: Uint8Array): Uint8Array | undefined {
    return this.kv.get(codeKey(codeHash));
  }

  getStorage(address: Uint8Array, slot: Uint8Array): Uint8Array | undefined {
    return this.kv.get(storageKey(address, slot));
  }

  *storageEntries(address: Uint8Array): Iterable<{ slot: Uint8Array; value: Uint8Array }> {
    for (const [k, v] of this.kv.range(storagePrefix(address))) yield { slot: k.subarray(21, 53), value: v };
  }

  apply(changes: StateChanges): void {
    for (const c of changes.code) this.kv.put(codeKey(c.hash), c.code);
    for (const s of changes.storage) {
      if (s.wiped) {
        const keys = [...this.kv.range(storagePrefix(s.address))].map(([k]) => k);
        for (const k of keys) this.kv.del(k);
      }
      for (const { slot, value } of s.slots) {
        if (value.length === 0) this.kv.del(storageKey(s.address, slot));
        else this.kv.put(storageKey(s.address, slot), value);
      }
    }
    for (const a of changes.accounts) {
      if (a.account === undefined) this.kv.del(accountKey(a.address));
      else this.kv.put(accountKey(a.address), encodeAccountRecord(a.account));
    }
  }
}
