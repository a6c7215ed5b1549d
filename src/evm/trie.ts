/**
 * The state root: a secure Merkle-Patricia trie over every account, keyed by keccak(address) with
 * value RLP [nonce, balance, storageRoot, codeHash], and one storage trie per account keyed by
 * keccak(slot) with value RLP(value without leading zeros) — the layout of the yellow paper §4.1,
 * so the root equals what any Ethereum client computes for the state.
 *
 * It is touched once per block, from the state manager's flush(): storage tries of the changed
 * accounts first (their new roots go into the account records), then the account trie.
 *
 * Nodes are content-addressed (keccak of the node's RLP) and live in a KVStore given by the caller
 * under a one-byte prefix (0x04 | hash), so storage tries of all accounts share one node space
 * (geth's hash scheme). A commit writes nothing: it returns the new nodes, which the caller writes
 * (writeNodes) in the block's LMDB transaction. Nodes of older roots are kept (no pruning yet), so
 * proofs at an old root work as long as nobody deletes them.
 *
 * The commit is written here (below): the changed keys build a tree of dirty nodes in memory, and
 * only the final version of each node is encoded and hashed, bottom-up: a node's encoding needs its
 * children's hashes, so nodes are grouped by height (a leaf is 0, a parent one more than its
 * highest dirty child) and each height is ONE keccak call for all the tries of the batch
 * (CryptoBackend.keccak256Spans: one native crossing per level, not one per node). The keys are
 * hashed the same way, one keccak256Batch call for all the slots and one for all the addresses.
 * @ethereumjs/mpt's put() instead re-encodes and re-hashes the path from the root on every key
 * (one keccak call per node, most results overwritten by the next key) through an async DB; it
 * cost ~340 ms CPU for the root of a 1,000-transfer ERC-20 block with the native backend, against
 * ~500 ms with the JS one (the hashing was not where the time went).
 *
 * The encoding is the yellow paper's (Appendix D; as ethereum/go-ethereum:trie/node.go and
 * ethereumjs/ethereumjs-monorepo:packages/mpt/src/node/*.ts encode it): leaf [HP(path, 1), value],
 * extension [HP(path, 0), child], branch [c0..c15, value]; a child whose RLP is shorter than 32
 * bytes is embedded in its parent, else referenced by its keccak. The root is always hashed and
 * stored under its hash, even when short (as @ethereumjs/mpt's _formatNode does with topLevel), so
 * the nodes written here are exactly the ones @ethereumjs/mpt writes, and its createMerkleProof
 * (getProof, eth_getProof) reads them unchanged. test/unit/evm-trie.test.ts checks roots and
 * stored nodes against @ethereumjs/mpt over random puts and deletes, on both backends.
 *
 * Hashed nodes are immutable (changes copy the path), so decoded trees can be shared: a bounded
 * per-thread cache (TrieNodeCache) keeps the latest roots by hash, each the top of a resident tree
 * whose stored references, once read, point at the nodes they stand for. Blocks that touch the
 * same accounts then read no node from LMDB, also when every block opens a new StateTrie (the EVM
 * keeper does). The cache is content-addressed, so it is right for any store and either crypto
 * backend; it only stands in for reads of nodes reachable from a committed root (a node made by a
 * commit is written by that commit, whatever the cache holds).
 */
import { MerklePatriciaTrie, createMerkleProof } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import {
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
import { bytesToKey } from '../crypto/bytes.js';

export const PREFIX_TRIE_NODE = 0x04;

const LEAF = 0;
const EXT = 1;
const BRANCH = 2;
/** A stored node known by its hash only, until something walks into it. */
const REF = 3;

/**
 * One class for every kind, so V8 sees one shape. Clean nodes (read from the store or hashed by
 * an earlier commit) have `enc` set and are never changed; dirty ones (made by this commit) have
 * `enc` undefined and are changed in place until they are hashed.
 */
export class TrieNode {
  /** RLP of the node; undefined while dirty. */
  enc: Uint8Array | undefined = undefined;
  /** keccak(enc); set for nodes stored under their hash (enc >= 32 bytes, or a root). */
  hash: Uint8Array | undefined = undefined;
  /** REF: the node it stands for, once read. */
  resolved: TrieNode | undefined = undefined;
  constructor(
    readonly kind: number,
    /** LEAF, EXT: the path's nibbles. */
    public path: Uint8Array,
    /** LEAF: the value; BRANCH: the value or null. */
    public value: Uint8Array | null,
    /** EXT: the child. */
    public child: TrieNode | null,
    /** BRANCH: the 16 children. */
    public children: (TrieNode | null)[] | null,
  ) {}
}

const NO_PATH = new Uint8Array(0);

function leaf(path: Uint8Array, value: Uint8Array): TrieNode {
  return new TrieNode(LEAF, path, value, null, null);
}
function ext(path: Uint8Array, child: TrieNode): TrieNode {
  return new TrieNode(EXT, path, null, child, null);
}
function branch(children: (TrieNode | null)[], value: Uint8Array | null): TrieNode {
  return new TrieNode(BRANCH, NO_PATH, value, null, children);
}
export function refNode(hash: Uint8Array): TrieNode {
  const n = new TrieNode(REF, NO_PATH, null, null, null);
  n.hash = hash;
  return n;
}

export class TrieError extends Error {
  override readonly name = 'TrieError';
  constructor(
    message: string,
    readonly code: 'EVM_TRIE_MISSING_NODE' | 'EVM_TRIE_BAD_NODE',
  ) {
    super(message);
  }
}

// ---- the node cache --------------------------------------------------------------------------

/**
 * The resident trees: the latest roots, whose nodes hold direct pointers to their children (a
 * stored reference, once read, keeps the node it stands for). Only roots are looked up: every
 * node under a root is reached through pointers, so a commit finds the trees of the previous
 * block without a key string or a map entry per node. Only the latest versions are kept: the
 * last few account-trie roots, and for each account (by address) its latest storage root, so the
 * nodes a block replaced become garbage at once. Bounded twice: at most `maxRoots` storage roots
 * (least recently used first out), and once the nodes read or made since the last clear pass
 * `maxNodes` (an over-count: replaced nodes are not subtracted) everything is dropped, and the
 * next block reads its nodes from the store again.
 */
export class TrieNodeCache {
  private accountRoots = new Map<string, TrieNode>();
  private storageRoots = new Map<string, { key: string; node: TrieNode }>();
  /** Nodes read or made since the last clear. */
  resident = 0;
  constructor(
    readonly maxNodes = 500_000,
    readonly maxRoots = 4096,
  ) {}
  /** The resident root with this hash key: an account root, or `owner`'s storage root. */
  getRoot(key: string, owner?: string): TrieNode | undefined {
    if (owner === undefined) return this.accountRoots.get(key);
    const e = this.storageRoots.get(owner);
    if (e === undefined || e.key !== key) return undefined;
    // Most recently used last, so the oldest are the ones evicted.
    this.storageRoots.delete(owner);
    this.storageRoots.set(owner, e);
    return e.node;
  }
  addRoot(key: string, node: TrieNode, owner?: string): void {
    if (this.maxNodes <= 0) return;
    if (owner === undefined) {
      this.accountRoots.delete(key);
      this.accountRoots.set(key, node);
      // A few: the latest, and the ones a re-executed or competing block may start from.
      if (this.accountRoots.size > 4) this.accountRoots.delete(this.accountRoots.keys().next().value!);
      return;
    }
    this.storageRoots.delete(owner);
    this.storageRoots.set(owner, { key, node });
    if (this.storageRoots.size > this.maxRoots) this.storageRoots.delete(this.storageRoots.keys().next().value!);
  }
  count(nodes: number): void {
    this.resident += nodes;
  }
  /** Called before a commit: drops everything once the resident count has passed its bound. */
  trim(): void {
    if (this.resident > this.maxNodes) this.clear();
  }
  clear(): void {
    this.accountRoots = new Map();
    this.storageRoots = new Map();
    this.resident = 0;
  }
  get size(): number {
    return this.accountRoots.size + this.storageRoots.size;
  }
}

let sharedCache: TrieNodeCache | undefined;
/** The per-thread cache every StateTrie uses unless given its own. */
export function sharedTrieNodeCache(): TrieNodeCache {
  sharedCache ??= new TrieNodeCache();
  return sharedCache;
}

export function nodeDbKey(hash: Uint8Array): Uint8Array {
  const k = new Uint8Array(33);
  k[0] = PREFIX_TRIE_NODE;
  k.set(hash, 1);
  return k;
}

// ---- decoding stored nodes -------------------------------------------------------------------

type Raw = Uint8Array | Raw[];

/** Nibbles of a hex-prefix encoded path, and whether it is a leaf's. */
function decodeHP(hp: Uint8Array): { path: Uint8Array; isLeaf: boolean } {
  if (hp.length === 0) throw new TrieError('empty hex-prefix path', 'EVM_TRIE_BAD_NODE');
  const flag = hp[0]! >> 4;
  const odd = flag & 1;
  const n = (hp.length - 1) * 2 + odd;
  const path = new Uint8Array(n);
  let j = 0;
  if (odd) path[j++] = hp[0]! & 0x0f;
  for (let i = 1; i < hp.length; i++) {
    path[j++] = hp[i]! >> 4;
    path[j++] = hp[i]! & 0x0f;
  }
  return { path, isLeaf: flag >= 2 };
}

function childFromRaw(x: Raw): TrieNode | null {
  if (x instanceof Uint8Array) {
    if (x.length === 0) return null;
    if (x.length === 32) return refNode(x);
    throw new TrieError(`bad child reference of ${x.length} bytes`, 'EVM_TRIE_BAD_NODE');
  }
  // An embedded node (its RLP is under 32 bytes): clean, known by its encoding.
  const n = fromRaw(x);
  n.enc = RLP.encode(x as never);
  return n;
}

function fromRaw(raw: Raw[]): TrieNode {
  if (raw.length === 17) {
    const children: (TrieNode | null)[] = new Array(16);
    for (let i = 0; i < 16; i++) children[i] = childFromRaw(raw[i]!);
    const v = raw[16] as Uint8Array;
    return branch(children, v.length === 0 ? null : v);
  }
  if (raw.length === 2) {
    const { path, isLeaf } = decodeHP(raw[0] as Uint8Array);
    if (isLeaf) return leaf(path, raw[1] as Uint8Array);
    const c = childFromRaw(raw[1]!);
    if (c === null) throw new TrieError('extension without a child', 'EVM_TRIE_BAD_NODE');
    return ext(path, c);
  }
  throw new TrieError(`bad node: a list of ${raw.length} items`, 'EVM_TRIE_BAD_NODE');
}

// ---- encoding --------------------------------------------------------------------------------

function lenOfLen(n: number): number {
  return n < 0x100 ? 1 : n < 0x10000 ? 2 : n < 0x1000000 ? 3 : 4;
}

/** RLP length of the byte string b. */
function strLen(b: Uint8Array): number {
  const n = b.length;
  if (n === 1 && b[0]! < 0x80) return 1;
  return n <= 55 ? 1 + n : 1 + lenOfLen(n) + n;
}

function writeLen(buf: Uint8Array, off: number, n: number, bytes: number): number {
  for (let i = bytes - 1; i >= 0; i--) {
    buf[off + i] = n & 0xff;
    n = Math.floor(n / 256);
  }
  return off + bytes;
}

function writeStr(buf: Uint8Array, off: number, b: Uint8Array): number {
  const n = b.length;
  if (n === 1 && b[0]! < 0x80) {
    buf[off] = b[0]!;
    return off + 1;
  }
  if (n <= 55) {
    buf[off++] = 0x80 + n;
  } else {
    const l = lenOfLen(n);
    buf[off++] = 0xb7 + l;
    off = writeLen(buf, off, n, l);
  }
  buf.set(b, off);
  return off + n;
}

function listHeaderLen(payload: number): number {
  return payload <= 55 ? 1 : 1 + lenOfLen(payload);
}

function writeListHeader(buf: Uint8Array, off: number, payload: number): number {
  if (payload <= 55) {
    buf[off] = 0xc0 + payload;
    return off + 1;
  }
  const l = lenOfLen(payload);
  buf[off++] = 0xf7 + l;
  return writeLen(buf, off, payload, l);
}

/** Length of the hex-prefix encoding of a path as an RLP string. */
function hpStrLen(path: Uint8Array): number {
  const n = (path.length >> 1) + 1;
  if (n === 1) return 1; // one byte, 0x00..0x3f: below 0x80, its own RLP
  return n <= 55 ? 1 + n : 1 + lenOfLen(n) + n;
}

function writeHP(buf: Uint8Array, off: number, path: Uint8Array, isLeaf: boolean): number {
  const n = (path.length >> 1) + 1;
  if (n > 1) {
    if (n <= 55) buf[off++] = 0x80 + n;
    else {
      const l = lenOfLen(n);
      buf[off++] = 0xb7 + l;
      off = writeLen(buf, off, n, l);
    }
  }
  const odd = path.length & 1;
  const flag = (isLeaf ? 2 : 0) + odd;
  let i = 0;
  if (odd) {
    buf[off++] = (flag << 4) | path[0]!;
    i = 1;
  } else {
    buf[off++] = flag << 4;
  }
  for (; i < path.length; i += 2) buf[off++] = (path[i]! << 4) | path[i + 1]!;
  return off;
}

/** The bytes a parent holds for a child: 0x80 for none, 0xa0 + hash, or the embedded RLP. */
function refLen(c: TrieNode | null): number {
  if (c === null) return 1;
  if (c.kind === REF) return 33;
  const enc = c.enc!;
  return enc.length >= 32 ? 33 : enc.length;
}

function writeRef(buf: Uint8Array, off: number, c: TrieNode | null): number {
  if (c === null) {
    buf[off] = 0x80;
    return off + 1;
  }
  const enc = c.kind === REF ? undefined : c.enc!;
  if (enc === undefined || enc.length >= 32) {
    buf[off++] = 0xa0;
    buf.set(c.hash!, off);
    return off + 32;
  }
  buf.set(enc, off);
  return off + enc.length;
}

function payloadLen(n: TrieNode): number {
  if (n.kind === LEAF) return hpStrLen(n.path) + strLen(n.value!);
  if (n.kind === EXT) return hpStrLen(n.path) + refLen(n.child);
  let p = n.value === null ? 1 : strLen(n.value);
  const ch = n.children!;
  for (let i = 0; i < 16; i++) p += refLen(ch[i]!);
  return p;
}

function writeNode(buf: Uint8Array, off: number, n: TrieNode, payload: number): number {
  off = writeListHeader(buf, off, payload);
  if (n.kind === LEAF) {
    off = writeHP(buf, off, n.path, true);
    return writeStr(buf, off, n.value!);
  }
  if (n.kind === EXT) {
    off = writeHP(buf, off, n.path, false);
    return writeRef(buf, off, n.child);
  }
  const ch = n.children!;
  for (let i = 0; i < 16; i++) off = writeRef(buf, off, ch[i]!);
  if (n.value === null) {
    buf[off] = 0x80;
    return off + 1;
  }
  return writeStr(buf, off, n.value);
}

// ---- updates ---------------------------------------------------------------------------------

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function concatNibbles(a: Uint8Array | number, b: Uint8Array): Uint8Array {
  if (typeof a === 'number') {
    const out = new Uint8Array(1 + b.length);
    out[0] = a;
    out.set(b, 1);
    return out;
  }
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** One trie of a batch: its root as it is being changed. */
export interface TrieUpdate {
  root: TrieNode | null;
  /** A storage trie's account (its address as a latin1 string); none for the account trie. */
  owner?: string;
}

/**
 * The node store side of a commit: reads stored nodes (through the cache), and counts what it
 * did (for tests and the bench's profile notes).
 */
export class TrieNodeReader {
  reads = 0;
  cacheHits = 0;
  constructor(
    private readonly kv: KVStore,
    readonly cache: TrieNodeCache,
  ) {}

  /** The root node of a trie by its hash: the resident tree when the cache has it, else a reference. */
  root(hash: Uint8Array, emptyRoot: Uint8Array, owner?: string): TrieNode | null {
    if (equalBytes(hash, emptyRoot)) return null;
    const n = this.cache.getRoot(bytesToKey(hash), owner);
    if (n !== undefined) {
      this.cacheHits++;
      return n;
    }
    return refNode(hash);
  }

  resolve(n: TrieNode): TrieNode {
    if (n.kind !== REF) return n;
    if (n.resolved !== undefined) return n.resolved;
    const enc = this.kv.get(nodeDbKey(n.hash!));
    if (enc === undefined) throw new TrieError(`trie node ${Buffer.from(n.hash!).toString('hex')} is missing from the store`, 'EVM_TRIE_MISSING_NODE');
    this.reads++;
    const raw = RLP.decode(enc) as Raw;
    if (!Array.isArray(raw)) throw new TrieError('a stored trie node is not a list', 'EVM_TRIE_BAD_NODE');
    const node = fromRaw(raw);
    node.enc = enc;
    node.hash = n.hash;
    this.cache.count(1);
    n.resolved = node;
    return node;
  }

  /** Sets key (64 nibbles) to value in the subtree `n` whose path starts at key[pos]. */
  put(n: TrieNode | null, key: Uint8Array, pos: number, value: Uint8Array): TrieNode {
    if (n === null) return leaf(key.subarray(pos), value);
    n = this.resolve(n);
    const dirty = n.enc === undefined;
    if (n.kind === BRANCH) {
      const i = key[pos]!;
      const ch = n.children!;
      const c = this.put(ch[i]!, key, pos + 1, value);
      if (c === ch[i]) return n;
      if (dirty) {
        ch[i] = c;
        return n;
      }
      const copy = ch.slice();
      copy[i] = c;
      return branch(copy, n.value);
    }
    const path = n.path;
    const rest = key.length - pos;
    let m = 0;
    const max = Math.min(path.length, rest);
    while (m < max && path[m] === key[pos + m]) m++;
    if (n.kind === LEAF) {
      if (m === path.length && m === rest) {
        if (equalBytes(n.value!, value)) return n;
        if (dirty) {
          n.value = value;
          return n;
        }
        return leaf(path, value);
      }
      // Keys are all 64 nibbles, so neither path is a prefix of the other: they part at m.
      if (m === path.length || m === rest) throw new TrieError('keys of different lengths in one trie', 'EVM_TRIE_BAD_NODE');
      const children: (TrieNode | null)[] = new Array(16).fill(null);
      children[path[m]!] = leaf(path.subarray(m + 1), n.value!);
      children[key[pos + m]!] = leaf(key.subarray(pos + m + 1), value);
      const b = branch(children, null);
      return m > 0 ? ext(key.subarray(pos, pos + m), b) : b;
    }
    // EXT
    if (m === path.length) {
      const c = this.put(n.child, key, pos + m, value);
      if (c === n.child) return n;
      if (dirty) {
        n.child = c;
        return n;
      }
      return ext(path, c);
    }
    if (m === rest) throw new TrieError('keys of different lengths in one trie', 'EVM_TRIE_BAD_NODE');
    const children: (TrieNode | null)[] = new Array(16).fill(null);
    children[path[m]!] = m + 1 < path.length ? ext(path.subarray(m + 1), n.child!) : n.child;
    children[key[pos + m]!] = leaf(key.subarray(pos + m + 1), value);
    const b = branch(children, null);
    return m > 0 ? ext(key.subarray(pos, pos + m), b) : b;
  }

  /** Removes key from the subtree `n`; returns `n` itself when the key is not there. */
  del(n: TrieNode | null, key: Uint8Array, pos: number): TrieNode | null {
    if (n === null) return null;
    n = this.resolve(n);
    if (n.kind === LEAF) {
      const path = n.path;
      if (path.length !== key.length - pos) return n;
      for (let i = 0; i < path.length; i++) if (path[i] !== key[pos + i]) return n;
      return null;
    }
    if (n.kind === EXT) {
      const path = n.path;
      if (path.length > key.length - pos) return n;
      for (let i = 0; i < path.length; i++) if (path[i] !== key[pos + i]) return n;
      const c = this.del(n.child, key, pos + path.length);
      if (c === n.child) return n;
      if (c === null) return null; // not reached: the child is a branch of two or more
      return this.prefixed(path, c);
    }
    const i = key[pos]!;
    const ch = n.children!;
    const c = this.del(ch[i]!, key, pos + 1);
    if (c === ch[i]) return n;
    const copy = n.enc === undefined ? ch : ch.slice();
    copy[i] = c;
    let count = 0;
    let only = -1;
    for (let j = 0; j < 16; j++) {
      if (copy[j] !== null) {
        count++;
        only = j;
      }
    }
    if (count >= 2 || (count >= 1 && n.value !== null)) return copy === ch ? n : branch(copy, n.value);
    if (count === 0) return n.value === null ? null : leaf(NO_PATH, n.value);
    // One child left and no value: the branch goes, its child takes the nibble into its path.
    return this.prefixed(Uint8Array.of(only), copy[only]!);
  }

  /** The node `c` with `prefix` in front of its path (merging into a leaf or extension). */
  private prefixed(prefix: Uint8Array, c: TrieNode): TrieNode {
    const r = this.resolve(c);
    if (r.kind === LEAF) return leaf(concatNibbles(prefix, r.path), r.value!);
    if (r.kind === EXT) return ext(concatNibbles(prefix, r.path), r.child!);
    return ext(prefix, c);
  }
}

// ---- hashing ---------------------------------------------------------------------------------

/** Puts the dirty nodes under `n` into levels[height]; returns n's height, -1 when clean. */
function collect(n: TrieNode | null, levels: TrieNode[][]): number {
  if (n === null || n.kind === REF || n.enc !== undefined) return -1;
  let h = 0;
  if (n.kind === BRANCH) {
    const ch = n.children!;
    for (let i = 0; i < 16; i++) {
      const c = collect(ch[i]!, levels);
      if (c + 1 > h) h = c + 1;
    }
  } else if (n.kind === EXT) {
    const c = collect(n.child, levels);
    if (c + 1 > h) h = c + 1;
  }
  (levels[h] ??= []).push(n);
  return h;
}

export interface HashResult {
  /** The root hash of each trie, in the order given. */
  roots: Uint8Array[];
  /** [0x04 | hash, RLP] of every new node stored under its hash. */
  nodes: [key: Uint8Array, value: Uint8Array][];
  /** How many keccak calls (levels) it took. */
  calls: number;
}

/**
 * Encodes and hashes the dirty nodes of all `tries` bottom-up, one keccak256Spans call per
 * height, and adds the new nodes to the cache. Every node is hashed (also the few embedded ones:
 * cheaper than a second pass to pick them out), but only those of 32 bytes or more, and the
 * roots, are stored.
 */
export function hashTries(tries: readonly TrieUpdate[], crypto: CryptoBackend, cache: TrieNodeCache, emptyRoot: Uint8Array): HashResult {
  const levels: TrieNode[][] = [];
  const dirtyRoot = tries.map((t) => t.root !== null && t.root.kind !== REF && t.root.enc === undefined);
  for (const t of tries) collect(t.root, levels);
  const nodes: [Uint8Array, Uint8Array][] = [];
  let calls = 0;
  for (const level of levels) {
    if (level === undefined) continue;
    const payloads = new Array<number>(level.length);
    const ends = new Uint32Array(level.length);
    let total = 0;
    for (let i = 0; i < level.length; i++) {
      const p = payloadLen(level[i]!);
      payloads[i] = p;
      total += listHeaderLen(p) + p;
      ends[i] = total;
    }
    const buf = new Uint8Array(total);
    let off = 0;
    for (let i = 0; i < level.length; i++) off = writeNode(buf, off, level[i]!, payloads[i]!);
    const out = new Uint8Array(32 * level.length);
    crypto.keccak256Spans(buf, ends, out);
    calls++;
    cache.count(level.length);
    let start = 0;
    for (let i = 0; i < level.length; i++) {
      const n = level[i]!;
      const end = ends[i]!;
      n.enc = buf.subarray(start, end);
      n.hash = out.subarray(32 * i, 32 * i + 32);
      if (end - start >= 32) nodes.push([nodeDbKey(n.hash), n.enc]);
      start = end;
    }
  }
  const roots: Uint8Array[] = [];
  for (let i = 0; i < tries.length; i++) {
    const r = tries[i]!.root;
    if (r === null) {
      roots.push(emptyRoot);
      continue;
    }
    const h = r.hash ?? crypto.keccak256(r.enc!);
    roots.push(h);
    // A new root shorter than 32 bytes is stored under its hash all the same (proofs start there).
    if (dirtyRoot[i] && r.enc!.length < 32) nodes.push([nodeDbKey(h), r.enc!]);
    const resident = r.kind === REF ? r.resolved : r;
    if (resident !== undefined) cache.addRoot(bytesToKey(h), resident, tries[i]!.owner);
  }
  return { roots, nodes, calls };
}

/** The 64 nibbles of each 32-byte hash in `hashes` (n × 32 bytes), as views of one array. */
export function nibblesOf(hashes: Uint8Array, n: number): Uint8Array[] {
  const all = new Uint8Array(64 * n);
  const out: Uint8Array[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const base = 64 * i;
    for (let j = 0; j < 32; j++) {
      const b = hashes[32 * i + j]!;
      all[base + 2 * j] = b >> 4;
      all[base + 2 * j + 1] = b & 0x0f;
    }
    out[i] = all.subarray(base, base + 64);
  }
  return out;
}

export const EMPTY_TRIE_ROOT = KECCAK256_RLP;

/** @ethereumjs/mpt's DB over a KVStore, for proofs: hex-string keys in, binary keys out; read-only. */
class NodeDB implements DB<string, string | Uint8Array> {
  constructor(private readonly kv: KVStore) {}

  static dbKey(hexKey: string): Uint8Array {
    const k = new Uint8Array(1 + hexKey.length / 2);
    k[0] = PREFIX_TRIE_NODE;
    Buffer.from(k.buffer, k.byteOffset + 1, k.length - 1).write(hexKey, 'hex');
    return k;
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    return this.kv.get(NodeDB.dbKey(key));
  }
  async put(_key: string, _val: string | Uint8Array): Promise<void> {
    // Proofs only read; commits are computed by StateTrie.commit, never through @ethereumjs/mpt.
  }
  async del(_key: string): Promise<void> {}
  async batch(_ops: BatchDBOp<string, string | Uint8Array>[]): Promise<void> {}
  shallowCopy(): DB<string, string | Uint8Array> {
    return this;
  }
  async open(): Promise<void> {}
}

function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

const EMPTY_BYTES = new Uint8Array(0);

/** A bigint as minimal big-endian bytes (0 is empty), as RLP wants integers. */
export function uintBytes(x: bigint): Uint8Array {
  if (x === 0n) return EMPTY_BYTES;
  if (x < 0n) throw new RangeError('negative integer in RLP');
  let h = x.toString(16);
  if (h.length & 1) h = '0' + h;
  return Buffer.from(h, 'hex');
}

/** RLP [nonce, balance, storageRoot, codeHash], as @ethereumjs/util's Account.serialize(). */
export function encodeAccount(a: AccountRecord): Uint8Array {
  const nonce = uintBytes(a.nonce);
  const balance = uintBytes(a.balance);
  const payload = strLen(nonce) + strLen(balance) + strLen(a.storageRoot) + strLen(a.codeHash);
  const out = new Uint8Array(listHeaderLen(payload) + payload);
  let off = writeListHeader(out, 0, payload);
  off = writeStr(out, off, nonce);
  off = writeStr(out, off, balance);
  off = writeStr(out, off, a.storageRoot);
  writeStr(out, off, a.codeHash);
  return out;
}

/** RLP of a byte string (a storage value, leading zeros already stripped). */
function encodeString(v: Uint8Array): Uint8Array {
  const out = new Uint8Array(strLen(v));
  writeStr(out, 0, v);
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
  /** Decoded nodes by hash (default: the per-thread shared cache; `new TrieNodeCache(0)` for none). */
  cache?: TrieNodeCache;
}

export class StateTrie {
  readonly kv: KVStore;
  readonly cache: TrieNodeCache;
  private rootHash: Uint8Array;
  private readonly crypto: CryptoBackend;
  private readonly keccak: (data: Uint8Array) => Uint8Array;
  /** What the last commit did: nodes read from the store, cache hits, keccak calls. */
  lastCommit: { nodeReads: number; cacheHits: number; keccakCalls: number } | undefined;

  constructor(opts: StateTrieOptions) {
    this.kv = opts.nodes;
    this.rootHash = opts.root ?? EMPTY_TRIE_ROOT;
    const crypto = opts.crypto ?? getCryptoBackend();
    this.crypto = crypto;
    this.keccak = (d) => crypto.keccak256(d);
    this.cache = opts.cache ?? sharedTrieNodeCache();
  }

  get root(): Uint8Array {
    return this.rootHash;
  }

  private open(kv: KVStore, root: Uint8Array): MerklePatriciaTrie {
    return new MerklePatriciaTrie({
      db: new NodeDB(kv),
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
   *
   * Keccak calls: one for all the slot keys, one per level of all the storage tries together,
   * one for all the addresses, one per level of the account trie (about 2 × 8 for a block).
   */
  async commit(changes: StateChanges, flat: FlatState): Promise<TrieCommitResult> {
    const cache = this.cache;
    cache.trim();
    const reader = new TrieNodeReader(this.kv, cache);
    const crypto = this.crypto;

    // Storage tries: all the slot keys hashed in one call, then every trie's puts and deletes.
    let slotCount = 0;
    for (const s of changes.storage) slotCount += s.slots.length;
    const slotIn = new Uint8Array(32 * slotCount);
    let k = 0;
    for (const s of changes.storage) {
      for (const { slot } of s.slots) {
        if (slot.length !== 32) throw new RangeError(`storage slot of ${slot.length} bytes (want 32)`);
        slotIn.set(slot, 32 * k++);
      }
    }
    const slotHashes = new Uint8Array(32 * slotCount);
    if (slotCount > 0) crypto.keccak256Batch(slotIn, 32, slotHashes);
    const slotKeys = nibblesOf(slotHashes, slotCount);
    const storageTries: TrieUpdate[] = [];
    k = 0;
    for (const s of changes.storage) {
      const base = s.wiped ? EMPTY_TRIE_ROOT : (flat.getAccount(s.address)?.storageRoot ?? EMPTY_TRIE_ROOT);
      const owner = bytesToKey(s.address);
      let root = reader.root(base, EMPTY_TRIE_ROOT, owner);
      for (const { value } of s.slots) {
        const key = slotKeys[k++]!;
        root = value.length === 0 ? reader.del(root, key, 0) : reader.put(root, key, 0, encodeString(value));
      }
      storageTries.push({ root, owner });
    }
    const storage = hashTries(storageTries, crypto, cache, EMPTY_TRIE_ROOT);
    const storageRoots = new Map<string, Uint8Array>();
    for (let i = 0; i < changes.storage.length; i++) storageRoots.set(bytesToKey(changes.storage[i]!.address), storage.roots[i]!);

    // The account trie: the addresses hashed in one call.
    const n = changes.accounts.length;
    const addrIn = new Uint8Array(20 * n);
    for (let i = 0; i < n; i++) {
      const addr = changes.accounts[i]!.address;
      if (addr.length !== 20) throw new RangeError(`address of ${addr.length} bytes (want 20)`);
      addrIn.set(addr, 20 * i);
    }
    const addrHashes = new Uint8Array(32 * n);
    if (n > 0) crypto.keccak256Batch(addrIn, 20, addrHashes);
    const addrKeys = nibblesOf(addrHashes, n);
    let root = reader.root(this.rootHash, EMPTY_TRIE_ROOT);
    for (let i = 0; i < n; i++) {
      const a = changes.accounts[i]!;
      if (a.account === undefined) {
        root = reader.del(root, addrKeys[i]!, 0);
        continue;
      }
      const sr = storageRoots.get(bytesToKey(a.address));
      if (sr !== undefined) a.account = { ...a.account, storageRoot: sr };
      root = reader.put(root, addrKeys[i]!, 0, encodeAccount(a.account));
    }
    const accounts = hashTries([{ root }], crypto, cache, EMPTY_TRIE_ROOT);
    const stateRoot = accounts.roots[0]!;
    this.rootHash = stateRoot;
    this.lastCommit = { nodeReads: reader.reads, cacheHits: reader.cacheHits, keccakCalls: storage.calls + accounts.calls + (slotCount > 0 ? 1 : 0) + (n > 0 ? 1 : 0) };
    return { stateRoot, nodes: storage.nodes.concat(accounts.nodes) };
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
