/**
 * RFC 6962 Merkle tree over SHA-256, as cometbft crypto/merkle (tree.go, hash.go, proof.go):
 * leaf = sha256(0x00 || item), inner = sha256(0x01 || left || right), the left subtree holds the
 * largest power of two strictly less than n items, and the empty tree hashes to sha256("").
 *
 * The tree is built bottom-up: pairing neighbours level by level and carrying an odd last node up
 * unchanged gives exactly the split-at-largest-power-of-two tree (cometbft's
 * HashFromByteSlicesIterative relies on the same equivalence), without recursion or slicing.
 */
import { createHash } from 'node:crypto';
import { bytesEqual } from './bytes.js';

const LEAF_PREFIX = new Uint8Array([0]);
const INNER_PREFIX = new Uint8Array([1]);
const EMPTY_HASH = createHash('sha256').digest();

/** crypto/merkle MaxAunts: a proof with more aunts is rejected. */
export const MAX_AUNTS = 100;

export interface MerkleProof {
  total: number;
  index: number;
  leafHash: Uint8Array;
  /** Sibling hashes from the leaf up to just below the root. */
  aunts: Uint8Array[];
}

export function emptyHash(): Uint8Array {
  return Uint8Array.from(EMPTY_HASH);
}

export function leafHash(item: Uint8Array): Uint8Array {
  return createHash('sha256').update(LEAF_PREFIX).update(item).digest();
}

export function innerHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return createHash('sha256').update(INNER_PREFIX).update(left).update(right).digest();
}

/** getSplitPoint: the largest power of two strictly less than n (n >= 1). */
export function splitPoint(n: number): number {
  if (n < 1) throw new Error('splitPoint of a non-positive length');
  let k = 1;
  while (k * 2 < n) k *= 2;
  return n === 1 ? 0 : k;
}

/** Reduces a level of hashes to the root in place (the array is overwritten). */
function reduceLevels(nodes: Uint8Array[]): Uint8Array {
  let n = nodes.length;
  while (n > 1) {
    let w = 0;
    for (let i = 0; i + 1 < n; i += 2) nodes[w++] = innerHash(nodes[i]!, nodes[i + 1]!);
    if (n & 1) nodes[w++] = nodes[n - 1]!;
    n = w;
  }
  return nodes[0]!;
}

/** HashFromByteSlices. */
export function merkleRoot(items: readonly Uint8Array[]): Uint8Array {
  const n = items.length;
  if (n === 0) return emptyHash();
  const nodes = new Array<Uint8Array>(n);
  for (let i = 0; i < n; i++) nodes[i] = leafHash(items[i]!);
  return reduceLevels(nodes);
}

/** Root and a proof for every item (ProofsFromByteSlices), in O(n) hashes. */
export function merkleProofs(items: readonly Uint8Array[]): { root: Uint8Array; proofs: MerkleProof[] } {
  const n = items.length;
  if (n === 0) return { root: emptyHash(), proofs: [] };
  const leaves = new Array<Uint8Array>(n);
  for (let i = 0; i < n; i++) leaves[i] = leafHash(items[i]!);
  const proofs: MerkleProof[] = new Array(n);
  for (let i = 0; i < n; i++) proofs[i] = { total: n, index: i, leafHash: leaves[i]!, aunts: [] };
  // pos[i]: the index of item i's ancestor in the current level.
  const pos = new Int32Array(n);
  for (let i = 0; i < n; i++) pos[i] = i;
  let level = leaves.slice();
  while (level.length > 1) {
    const len = level.length;
    for (let i = 0; i < n; i++) {
      const p = pos[i]!;
      if (p & 1) proofs[i]!.aunts.push(level[p - 1]!);
      else if (p + 1 < len) proofs[i]!.aunts.push(level[p + 1]!);
      pos[i] = p >> 1;
    }
    const next: Uint8Array[] = [];
    for (let i = 0; i + 1 < len; i += 2) next.push(innerHash(level[i]!, level[i + 1]!));
    if (len & 1) next.push(level[len - 1]!);
    level = next;
  }
  return { root: level[0]!, proofs };
}

/** A proof for one item. */
export function merkleProof(items: readonly Uint8Array[], index: number): MerkleProof {
  const n = items.length;
  if (!Number.isInteger(index) || index < 0 || index >= n) throw new RangeError(`index ${index} out of range [0, ${n})`);
  let level = new Array<Uint8Array>(n);
  for (let i = 0; i < n; i++) level[i] = leafHash(items[i]!);
  const leaf = level[index]!;
  const aunts: Uint8Array[] = [];
  let p = index;
  while (level.length > 1) {
    const len = level.length;
    if (p & 1) aunts.push(level[p - 1]!);
    else if (p + 1 < len) aunts.push(level[p + 1]!);
    p >>= 1;
    const next: Uint8Array[] = [];
    for (let i = 0; i + 1 < len; i += 2) next.push(innerHash(level[i]!, level[i + 1]!));
    if (len & 1) next.push(level[len - 1]!);
    level = next;
  }
  return { total: n, index, leafHash: leaf, aunts };
}

/**
 * computeHashFromAunts: the root implied by a leaf hash and its aunts, or null when the aunt count
 * does not fit (index, total). Walks top-down like cometbft so that too many or too few aunts fail.
 */
export function rootFromAunts(index: number, total: number, leaf: Uint8Array, aunts: readonly Uint8Array[]): Uint8Array | null {
  if (!(index >= 0 && index < total && total > 0)) return null;
  // Find the path from the root down, recording which side we go.
  const sides: boolean[] = []; // true: the leaf is in the left subtree at that depth
  let idx = index;
  let tot = total;
  while (tot > 1) {
    const k = splitPoint(tot);
    if (idx < k) {
      sides.push(true);
      tot = k;
    } else {
      sides.push(false);
      idx -= k;
      tot -= k;
    }
  }
  if (sides.length !== aunts.length) return null;
  // aunts[0] is the deepest sibling; sides[last] is the deepest step.
  let h = leaf;
  for (let i = 0; i < aunts.length; i++) {
    const left = sides[sides.length - 1 - i]!;
    h = left ? innerHash(h, aunts[i]!) : innerHash(aunts[i]!, h);
  }
  return h;
}

/** Proof.ValidateBasic: an error message, or null when the proof is well-formed. */
export function validateProof(proof: MerkleProof): string | null {
  if (proof.total < 0) return 'negative Total';
  if (proof.index < 0) return 'negative Index';
  if (proof.leafHash.length !== 32) return `expected LeafHash size to be 32, got ${proof.leafHash.length}`;
  if (proof.aunts.length > MAX_AUNTS) return `expected no more than ${MAX_AUNTS} aunts, got ${proof.aunts.length}`;
  for (let i = 0; i < proof.aunts.length; i++) {
    if (proof.aunts[i]!.length !== 32) return `expected Aunts#${i} size to be 32, got ${proof.aunts[i]!.length}`;
  }
  return null;
}

/** Proof.Verify: true iff `item` is at proof.index of a tree with root `root`. */
export function verifyMerkleProof(root: Uint8Array, item: Uint8Array, proof: MerkleProof): boolean {
  if (proof.total < 0 || proof.index < 0) return false;
  if (!bytesEqual(leafHash(item), proof.leafHash)) return false;
  const computed = rootFromAunts(proof.index, proof.total, proof.leafHash, proof.aunts);
  return computed !== null && bytesEqual(computed, root);
}
