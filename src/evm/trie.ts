/**
 * The state root: a secure Merkle-Patricia trie (@ethereumjs/mpt) over every account, keyed by
 * keccak(address) with value RLP [nonce, balance, storageRoot, codeHash], and one storage trie per
 * account keyed by keccak(slot) with value RLP(value without leading zeros) — the layout of the
 * Ethereum yellow paper §4.1, so the root equals what any Ethereum client computes for the state.
 *
 * It is touched once per block, from the state manager's flush(): storage tries of the changed
 * accounts first (their new roots go into the account records), then the account trie.
 *
 * Nodes are content-addressed (keccak of the node's RLP) and live in a KVStore given by the caller
 * under a one-byte prefix (0x04 | hash), so storage tries of all accounts share one node space
 * (geth's hash scheme). During a commit, node writes go to a pending map (the trie rewrites the
 * upper nodes once per key put, so most of them are garbage by the end); after the new roots are
 * known, only the pending nodes reachable from them are handed back to be written in the block's
 * LMDB transaction. Nodes of older roots are kept (no pruning yet), so proofs at an old root work
 * as long as nobody deletes them.
 *
 * keccak is chaind's crypto backend (native where the addon loads), passed to the trie through
 * @ethereumjs/mpt's useKeyHashingFunction, which it also uses to hash nodes
 * (ethereumjs/ethereumjs-monorepo:packages/mpt/src/mpt.ts).
 */
import { MerklePatriciaTrie, createMerkleProof } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import {
  Account,
  type BatchDBOp,
  type DB,
  KECCAK256_RLP,
  ValueEncoding,
  bigIntToHex,
  bytesToHex,
  setLengthLeft,
} from '@ethereumjs/util';
import { type CryptoBackend, getCryptoBackend } from '../crypto/backend.js';
import type { AccountRecord, FlatState, StateChanges } from './flat-state.js';
import type { KVStore } from './kv.js';

export const PREFIX_TRIE_NODE = 0x04;
export const EMPTY_TRIE_ROOT = KECCAK256_RLP;

/** @ethereumjs/mpt's DB over a KVStore: hex-string keys in, binary keys out; writes buffered. */
class NodeDB implements DB<string, string | Uint8Array> {
  readonly pending = new Map<string, Uint8Array>();
  constructor(private readonly kv: KVStore) {}

  static dbKey(hexKey: string): Uint8Array {
    const k = new Uint8Array(1 + hexKey.length / 2);
    k[0] = PREFIX_TRIE_NODE;
    Buffer.from(k.buffer, k.byteOffset + 1, k.length - 1).write(hexKey, 'hex');
    return k;
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    return this.pending.get(key) ?? this.kv.get(NodeDB.dbKey(key));
  }
  async put(key: string, val: string | Uint8Array): Promise<void> {
    this.pending.set(key, typeof val === 'string' ? Buffer.from(val, 'hex') : val);
  }
  async del(_key: string): Promise<void> {
    // Only reached with node pruning, which is off: nodes may be shared between tries.
  }
  async batch(ops: BatchDBOp<string, string | Uint8Array>[]): Promise<void> {
    for (const op of ops) if (op.type === 'put') await this.put(op.key, op.value);
  }
  shallowCopy(): DB<string, string | Uint8Array> {
    return this;
  }
  async open(): Promise<void> {}
}

function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

type RawNode = Uint8Array | RawNode[];

/** The pending nodes reachable from `roots` (the others were overwritten within the commit). */
function reachablePending(pending: Map<string, Uint8Array>, roots: Uint8Array[]): [string, Uint8Array][] {
  const out: [string, Uint8Array][] = [];
  const seen = new Set<string>();
  const visitRef = (ref: RawNode): void => {
    if (ref instanceof Uint8Array) {
      if (ref.length !== 32) return;
      const k = hex(ref);
      if (seen.has(k)) return;
      const node = pending.get(k);
      if (node === undefined) return; // already stored by an earlier block
      seen.add(k);
      out.push([k, node]);
      visitNode(RLP.decode(node) as RawNode[]);
    } else {
      visitNode(ref); // embedded (< 32 bytes) node
    }
  };
  const visitNode = (raw: RawNode[]): void => {
    if (raw.length === 17) {
      for (let i = 0; i < 16; i++) visitRef(raw[i]!);
    } else if (raw.length === 2) {
      const path = raw[0] as Uint8Array;
      const isLeaf = path.length > 0 && path[0]! >> 4 >= 2;
      if (!isLeaf) visitRef(raw[1]!);
    }
  };
  for (const r of roots) visitRef(r);
  return out;
}

export interface TrieCommitResult {
  stateRoot: Uint8Array;
  /** New trie nodes to store in the caller's transaction (see writeNodes). */
  nodes: [key: Uint8Array, value: Uint8Array][];
}

export interface AccountProof {
  address: string;
  accountProof: string[];
  balance: string;
  codeHash: string;
  nonce: string;
  storageHash: string;
  storageProof: { key: string; value: string; proof: string[] }[];
}

export interface StateTrieOptions {
  /** Where trie nodes live (0x04 | hash → node). */
  nodes: KVStore;
  /** The current state root (the empty root for a new chain). */
  root?: Uint8Array;
  crypto?: CryptoBackend;
}

export class StateTrie {
  readonly kv: KVStore;
  private rootHash: Uint8Array;
  private readonly keccak: (data: Uint8Array) => Uint8Array;

  constructor(opts: StateTrieOptions) {
    this.kv = opts.nodes;
    this.rootHash = opts.root ?? EMPTY_TRIE_ROOT;
    const crypto = opts.crypto ?? getCryptoBackend();
    this.keccak = (d) => crypto.keccak256(d);
  }

  get root(): Uint8Array {
    return this.rootHash;
  }

  private open(db: NodeDB | KVStore, root: Uint8Array): MerklePatriciaTrie {
    const ndb = db instanceof NodeDB ? db : new NodeDB(db);
    return new MerklePatriciaTrie({
      db: ndb,
      root,
      useKeyHashing: true,
      useKeyHashingFunction: this.keccak,
      valueEncoding: ValueEncoding.Bytes,
    });
  }

  /**
   * Applies one block's changes: computes the storage roots of the changed accounts (and sets
   * them on the account records in `changes`, which are replaced by new objects), then the
   * account trie. `flat` must still hold the state from before the block (for storage roots of
   * accounts whose storage was not wiped). Nothing is written to the KVStore: the caller writes
   * `nodes` (writeNodes) together with the flat state in one transaction.
   */
  async commit(changes: StateChanges, flat: FlatState): Promise<TrieCommitResult> {
    const db = new NodeDB(this.kv);
    const newRoots: Uint8Array[] = [];
    const storageRoots = new Map<string, Uint8Array>();
    for (const s of changes.storage) {
      const ak = hex(s.address);
      const base = s.wiped ? EMPTY_TRIE_ROOT : (flat.getAccount(s.address)?.storageRoot ?? EMPTY_TRIE_ROOT);
      const trie = this.open(db, base);
      for (const { slot, value } of s.slots) {
        if (value.length === 0) await trie.del(slot);
        else await trie.put(slot, RLP.encode(value));
      }
      const r = trie.root();
      storageRoots.set(ak, r);
      newRoots.push(r);
    }
    const accountTrie = this.open(db, this.rootHash);
    for (const a of changes.accounts) {
      if (a.account === undefined) {
        await accountTrie.del(a.address);
        continue;
      }
      const sr = storageRoots.get(hex(a.address));
      if (sr !== undefined) a.account = { ...a.account, storageRoot: sr };
      const rec: AccountRecord = a.account;
      await accountTrie.put(a.address, new Account(rec.nonce, rec.balance, rec.storageRoot, rec.codeHash).serialize());
    }
    const stateRoot = accountTrie.root();
    newRoots.push(stateRoot);
    const nodes = reachablePending(db.pending, newRoots).map(
      ([k, v]) => [NodeDB.dbKey(k), v] as [Uint8Array, Uint8Array],
    );
    this.rootHash = stateRoot;
    return { stateRoot, nodes };
  }

  /** Stores the nodes of a commit (call inside the block's transaction). */
  writeNodes(nodes: TrieCommitResult['nodes']): void {
    for (const [k, v] of nodes) this.kv.put(k, v);
  }

  /**
   * An EIP-1186 proof (eth_getProof's result shape) for `address` and 32-byte `slots` at the
   * current root. The nodes must be stored (writeNodes) before proofs of a new root are asked.
   */
  async getProof(address: Uint8Array, slots: Uint8Array[] = [], root: Uint8Array = this.rootHash): Promise<AccountProof> {
    const accountTrie = this.open(this.kv, root);
    const accountProof = await createMerkleProof(accountTrie, address);
    const raw = await accountTrie.get(address);
    const account = raw === null ? undefined : (RLP.decode(raw) as Uint8Array[]);
    const nonce = account ? bytesToBigIntSafe(account[0]!) : 0n;
    const balance = account ? bytesToBigIntSafe(account[1]!) : 0n;
    const storageRoot = account ? account[2]! : EMPTY_TRIE_ROOT;
    const codeHash = account ? account[3]! : this.keccak(new Uint8Array(0));
    const storageTrie = this.open(this.kv, storageRoot);
    const storageProof: AccountProof['storageProof'] = [];
    for (const slot of slots) {
      const key = setLengthLeft(slot, 32);
      const proof = await createMerkleProof(storageTrie, key);
      const v = await storageTrie.get(key);
      const value = v === null ? 0n : bytesToBigIntSafe(RLP.decode(v) as Uint8Array);
      storageProof.push({ key: bytesToHex(slot), value: bigIntToHex(value), proof: proof.map((p) => bytesToHex(p)) });
    }
    return {
      address: bytesToHex(address),
      accountProof: accountProof.map((p) => bytesToHex(p)),
      balance: bigIntToHex(balance),
      codeHash: bytesToHex(codeHash),
      nonce: bigIntToHex(nonce),
      storageHash: bytesToHex(storageRoot),
      storageProof,
    };
  }
}

function bytesToBigIntSafe(b: Uint8Array): bigint {
  return b.length === 0 ? 0n : BigInt('0x' + hex(b));
}
