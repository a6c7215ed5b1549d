/**
 * RFC 6962 Merkle tree vectors from cometbft crypto/merkle/rfc6962_test.go (TestRFC6962Hasher),
 * tree_test.go (TestHashFromByteSlices, Test_getSplitPoint, TestProof) and a single-tx TxProof
 * from a real CometBFT v0.38 kvstore node (tx_search?prove=true).
 */
import t from 'tap';
import { createHash } from 'node:crypto';
import {
  innerHash,
  leafHash,
  merkleProof,
  merkleProofs,
  merkleRoot,
  rootFromAunts,
  splitPoint,
  validateProof,
  verifyMerkleProof,
} from '../../src/crypto/merkle.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const enc = (s: string) => new TextEncoder().encode(s);

t.test('RFC 6962 hasher (rfc6962_test.go)', async (t) => {
  t.equal(hex(merkleRoot([])), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'empty tree');
  t.equal(hex(merkleRoot([new Uint8Array(0)])), '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d', 'empty leaf');
  t.equal(hex(leafHash(enc('L123456'))), '395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad547639252b4d56', 'leaf');
  t.equal(hex(innerHash(enc('N123'), enc('N456'))), 'aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb', 'node');
});

t.test('HashFromByteSlices (tree_test.go)', async (t) => {
  const cases: [string, number[][], string][] = [
    ['empty', [], 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['single', [[1, 2, 3]], '054edec1d0211f624fed0cbca9d4f9400b0e491c43742af2c5b0abebf0c990d8'],
    ['single blank', [[]], '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d'],
    ['two', [[1, 2, 3], [4, 5, 6]], '82e6cfce00453804379b53962939eaa7906b39904be0813fcadd31b100773c4b'],
    ['many', [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]], 'f326493eceab4f2d9ffbc78c59432a0a005d6ea98392045c74df5d14a113be18'],
  ];
  for (const [name, items, want] of cases) {
    t.equal(hex(merkleRoot(items.map((i) => Uint8Array.from(i)))), want, name);
  }
});

t.test('getSplitPoint (tree_test.go)', async (t) => {
  const cases: [number, number][] = [
    [1, 0], [2, 1], [3, 2], [4, 2], [5, 4], [10, 8], [20, 16], [100, 64], [255, 128], [256, 128], [257, 256],
  ];
  for (const [n, want] of cases) t.equal(splitPoint(n), want, `splitPoint(${n})`);
});

// A straightforward recursive reference of the definition, to cross-check the iterative tree.
function recursiveRoot(items: Uint8Array[]): Uint8Array {
  if (items.length === 0) return createHash('sha256').digest();
  if (items.length === 1) return leafHash(items[0]!);
  const k = splitPoint(items.length);
  return innerHash(recursiveRoot(items.slice(0, k)), recursiveRoot(items.slice(k)));
}

t.test('iterative root equals the recursive definition for 0..70 items', async (t) => {
  for (let n = 0; n <= 70; n++) {
    const items = Array.from({ length: n }, (_, i) => enc(`item-${i}`));
    t.equal(hex(merkleRoot(items)), hex(recursiveRoot(items)), `n=${n}`);
  }
});

t.test('proofs (TestProof): every item verifies; tampering fails', async (t) => {
  const { root: r0, proofs: p0 } = merkleProofs([]);
  t.equal(hex(r0), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  t.same(p0, []);
  for (const total of [1, 2, 3, 5, 7, 8, 9, 100]) {
    const items = Array.from({ length: total }, (_, i) => createHash('sha256').update(`x${i}`).digest());
    const root = merkleRoot(items);
    const { root: root2, proofs } = merkleProofs(items);
    t.equal(hex(root2), hex(root), `roots match, total=${total}`);
    for (let i = 0; i < total; i++) {
      const proof = proofs[i]!;
      t.equal(proof.index, i);
      t.equal(proof.total, total);
      t.ok(verifyMerkleProof(root, items[i]!, proof), `verify ${i}/${total}`);
      t.same(merkleProof(items, i), proof, `single proof equals batch proof ${i}/${total}`);
      t.equal(validateProof(proof), null);
      // Trail too long.
      t.notOk(verifyMerkleProof(root, items[i]!, { ...proof, aunts: [...proof.aunts, new Uint8Array(32)] }));
      // Trail too short.
      if (proof.aunts.length > 0) t.notOk(verifyMerkleProof(root, items[i]!, { ...proof, aunts: proof.aunts.slice(0, -1) }));
      // Mutated item.
      const mutated = Uint8Array.from(items[i]!);
      mutated[0]! ^= 1;
      t.notOk(verifyMerkleProof(root, mutated, proof));
      // Mutated root.
      const badRoot = Uint8Array.from(root);
      badRoot[31]! ^= 1;
      t.notOk(verifyMerkleProof(badRoot, items[i]!, proof));
      // Wrong index.
      if (total > 1) t.notOk(verifyMerkleProof(root, items[i]!, { ...proof, index: (i + 1) % total }));
    }
  }
});

t.test('computeHashFromAunts rejects bad index/total', async (t) => {
  const leaf = leafHash(enc('a'));
  t.equal(rootFromAunts(0, 0, leaf, []), null);
  t.equal(rootFromAunts(1, 1, leaf, []), null);
  t.equal(rootFromAunts(-1, 2, leaf, [leaf]), null);
  t.equal(hex(rootFromAunts(0, 1, leaf, [])!), hex(leaf));
  t.equal(rootFromAunts(0, 1, leaf, [leaf]), null, 'unexpected inner hashes');
  t.equal(rootFromAunts(0, 2, leaf, []), null, 'expected at least one inner hash');
});

t.test('ValidateBasic', async (t) => {
  const ok = { total: 1, index: 0, leafHash: new Uint8Array(32), aunts: [] };
  t.equal(validateProof(ok), null);
  t.match(validateProof({ ...ok, total: -1 }), /negative Total/);
  t.match(validateProof({ ...ok, index: -1 }), /negative Index/);
  t.match(validateProof({ ...ok, leafHash: new Uint8Array(31) }), /LeafHash size/);
  t.match(validateProof({ ...ok, aunts: Array.from({ length: 101 }, () => new Uint8Array(32)) }), /no more than 100 aunts/);
  t.match(validateProof({ ...ok, aunts: [new Uint8Array(5)] }), /Aunts#0/);
});

t.test('real CometBFT TxProof: single-tx block data hash', async (t) => {
  // tx_search?prove=true on a v0.38 kvstore node: tx "async-key=value" at height 223.
  const tx = enc('async-key=value');
  const txHash = createHash('sha256').update(tx).digest();
  t.equal(hex(txHash).toUpperCase(), '9F28904F9C0F3AB74A81CBA48E39124DA1C680B47FBFCBA0126870DB722BCC30');
  const { root, proofs } = merkleProofs([txHash]);
  t.equal(hex(root).toUpperCase(), '3081F9915040D138B3AD7F895732D2767C29E85BA5D84388D04E17A5D8262B7A');
  t.equal(Buffer.from(proofs[0]!.leafHash).toString('base64'), 'MIH5kVBA0TizrX+JVzLSdnwp6Ful2EOI0E4XpdgmK3o=');
  t.same(proofs[0]!.aunts, []);
});
