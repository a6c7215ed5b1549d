/**
 * The trie commit of src/evm/trie.ts against @ethereumjs/mpt, the reference it replaced, on every
 * crypto backend that loads here (native and JS must also agree with each other):
 *
 *  - raw tries (unhashed keys chosen to share long prefixes, short values): embedded nodes under
 *    32 bytes, extension splits, deletes that collapse a branch into its last child, the empty
 *    trie again; with the node cache on, and off (so stored nodes are decoded from the store);
 *  - StateTrie over accounts and storage with wipes and deletes: the state root, the nodes written
 *    (each is keccak(value) → value, nothing missing from the new root, nothing @ethereumjs/mpt
 *    would not have written), and getProof equal to createMerkleProof on the reference trie.
 *
 * Sizes are small (a few hundred keys): the test takes about a second.
 */
import { createMPT, createMerkleProof, type MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { Account, KECCAK256_NULL, KECCAK256_RLP, bytesToHex } from '@ethereumjs/util';
import t from 'tap';
import { availableCryptoBackends, type CryptoBackend } from '../../src/crypto/backend.js';
import {
  type AccountRecord,
  MemoryKV,
  type StateChanges,
  StateTrie,
  TrieNodeCache,
  TrieNodeReader,
  type TrieNode,
  hashTries,
  nibblesOf,
  nodeDbKey,
  refNode,
} from '../../src/evm/index.js';
import { seededRandom as rng } from '../helpers/fuzz/prng.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** Every node reachable from `root` in `kv` (throws on a missing one); embedded nodes are skipped. */
function walk(kv: MemoryKV, root: Uint8Array, out = new Set<string>()): Set<string> {
  if (hex(root) === hex(KECCAK256_RLP)) return out;
  const visitRef = (r: unknown): void => {
    if (r instanceof Uint8Array) {
      if (r.length === 32) visitHash(r);
    } else visitNode(r as unknown[]);
  };
  const visitNode = (raw: unknown[]): void => {
    if (raw.length === 17) for (let i = 0; i < 16; i++) visitRef(raw[i]);
    else if (raw.length === 2 && (raw[0] as Uint8Array)[0]! >> 4 < 2) visitRef(raw[1]);
  };
  const visitHash = (h: Uint8Array): void => {
    const k = hex(h);
    if (out.has(k)) return;
    const v = kv.get(nodeDbKey(h));
    if (v === undefined) throw new Error(`node ${k} missing`);
    out.add(k);
    visitNode(RLP.decode(v) as unknown[]);
  };
  visitHash(root);
  return out;
}

for (const crypto of availableCryptoBackends()) {
  t.test(`raw tries against @ethereumjs/mpt (${crypto.name} backend)`, async (tt) => {
    for (const cacheNodes of [300_000, 0]) {
      const r = rng(7 + cacheNodes);
      const kv = new MemoryKV();
      const cache = new TrieNodeCache(cacheNodes);
      const ref = await createMPT({ useKeyHashing: false });
      // Keys in a few families that share 0..31 leading bytes, so leaves sit deep and short.
      const prefixes = Array.from({ length: 4 }, () => Uint8Array.from({ length: 32 }, () => Math.floor(r() * 256)));
      const key = (): Uint8Array => {
        const k = Uint8Array.from(prefixes[Math.floor(r() * prefixes.length)]!);
        const share = [31, 31, 30, 28, 16, 1, 0][Math.floor(r() * 7)]!;
        for (let i = share; i < 32; i++) k[i] = Math.floor(r() * 256);
        return k;
      };
      const live: Uint8Array[] = [];
      let root: Uint8Array = KECCAK256_RLP;
      let embeddedSeen = 0;
      for (let round = 0; round < 8; round++) {
        const ops: [Uint8Array, Uint8Array | null][] = [];
        const n = round === 7 ? live.length : 10 + Math.floor(r() * 60);
        for (let i = 0; i < n; i++) {
          if (round === 7) ops.push([live[i]!, null]); // the last round deletes everything
          else if (live.length > 0 && r() < 0.3) ops.push([live[Math.floor(r() * live.length)]!, null]);
          else if (live.length > 0 && r() < 0.2) ops.push([live[Math.floor(r() * live.length)]!, Uint8Array.from({ length: 1 + Math.floor(r() * 3) }, () => Math.floor(r() * 256))]);
          else {
            const k = key();
            live.push(k);
            ops.push([k, Uint8Array.from({ length: 1 + Math.floor(r() * 40) }, () => Math.floor(r() * 256))]);
          }
        }
        // Ours: one batch. Keys are used as they are (nibbles of the key, not of its hash).
        const reader = new TrieNodeReader(kv, cache);
        const keys = new Uint8Array(32 * ops.length);
        ops.forEach(([k], i) => keys.set(k, 32 * i));
        const nibs = nibblesOf(keys, ops.length);
        let node: TrieNode | null = hex(root) === hex(KECCAK256_RLP) ? null : refNode(root);
        ops.forEach(([, v], i) => {
          node = v === null ? reader.del(node, nibs[i]!, 0) : reader.put(node, nibs[i]!, 0, v);
        });
        const res = hashTries([{ root: node }], crypto, cache, KECCAK256_RLP);
        const refWrites = new Set<string>();
        const refDb = (ref as unknown as { _db: { db: { _database: Map<string, unknown> } } });
        for (const [k, v] of ops) {
          if (v === null) await ref.del(k);
          else await ref.put(k, v);
        }
        for (const k of refDb._db.db._database.keys()) refWrites.add(k.replace(/^0x/, ''));
        let misplaced = 0;
        let foreign = 0;
        for (const [k, v] of res.nodes) {
          if (v.length < 32) embeddedSeen++; // a short root
          if (hex(crypto.keccak256(v)) !== hex(k.subarray(1))) misplaced++;
          if (!refWrites.has(hex(k.subarray(1)))) foreign++;
          kv.put(k, v);
        }
        tt.equal(misplaced, 0, `round ${round}: every node stored under its keccak`);
        tt.equal(foreign, 0, `round ${round}: no node @ethereumjs/mpt would not have written`);
        root = res.roots[0]!;
        tt.equal(hex(root), hex(ref.root()), `round ${round} (${ops.length} ops, cache ${cacheNodes}): root equals @ethereumjs/mpt`);
        walk(kv, root); // throws if a node is missing
        // Embedded children: visible as short nodes inside stored parents.
        for (const [, v] of res.nodes) {
          const raw = RLP.decode(v) as unknown[];
          if (raw.length === 17 && raw.slice(0, 16).some((c) => Array.isArray(c))) embeddedSeen++;
        }
        if (round === 7) tt.equal(hex(root), hex(KECCAK256_RLP), 'everything deleted: the empty root');
      }
      tt.ok(embeddedSeen > 0, `embedded (< 32 byte) nodes were exercised (${embeddedSeen})`);
    }
  });

  t.test(`StateTrie commits, nodes and proofs against @ethereumjs/mpt (${crypto.name} backend)`, async (tt) => {
    const r = rng(42);
    const kv = new MemoryKV();
    const trie = new StateTrie({ nodes: kv, crypto, cache: new TrieNodeCache() });
    const refAccounts = await createMPT({ useKeyHashing: true });
    const refStorage = new Map<string, MerklePatriciaTrie>();
    const accounts = new Map<string, AccountRecord>();
    const addr = (i: number) => {
      const a = new Uint8Array(20);
      a[0] = 0xaa;
      a[18] = i >> 8;
      a[19] = i & 0xff;
      return a;
    };
    const slot = (i: number) => {
      const s = new Uint8Array(32);
      s[31] = i;
      return s;
    };
    for (let block = 0; block < 6; block++) {
      const changes: StateChanges = { accounts: [], storage: [], code: [] };
      const touched = new Set<number>();
      for (let i = 0; i < 60; i++) touched.add(Math.floor(r() * 120));
      for (const i of touched) {
        const a = addr(i);
        const k = hex(a);
        if (accounts.has(k) && r() < 0.15) {
          changes.accounts.push({ address: a, account: undefined });
          changes.storage.push({ address: a, wiped: true, slots: [] });
          accounts.delete(k);
          refStorage.delete(k);
          await refAccounts.del(a);
          continue;
        }
        const prev = accounts.get(k);
        const wiped = prev !== undefined && r() < 0.1;
        const slots: { slot: Uint8Array; value: Uint8Array }[] = [];
        if (r() < 0.5) {
          for (let s = 0; s < 1 + Math.floor(r() * 6); s++) {
            const v = r() < 0.25 ? new Uint8Array(0) : Uint8Array.from({ length: 1 + Math.floor(r() * 32) }, (_, j) => (j === 0 ? 1 + Math.floor(r() * 255) : Math.floor(r() * 256)));
            slots.push({ slot: slot(Math.floor(r() * 40)), value: v });
          }
        }
        if (wiped || slots.length > 0) {
          changes.storage.push({ address: a, wiped, slots });
          if (wiped || !refStorage.has(k)) refStorage.set(k, await createMPT({ useKeyHashing: true }));
          const st = refStorage.get(k)!;
          for (const { slot: s, value } of slots) {
            if (value.length === 0) await st.del(s);
            else await st.put(s, RLP.encode(value));
          }
        }
        const rec: AccountRecord = {
          nonce: BigInt(Math.floor(r() * 5)),
          balance: r() < 0.1 ? 0n : BigInt(Math.floor(r() * 1e9)) * 10n ** 12n,
          storageRoot: prev?.storageRoot ?? KECCAK256_RLP,
          codeHash: r() < 0.3 ? crypto.keccak256(Uint8Array.of(i)) : KECCAK256_NULL,
        };
        changes.accounts.push({ address: a, account: rec });
      }
      const before = kv.size;
      const { stateRoot, nodes } = await trie.commit(changes, {
        getAccount: (a) => accounts.get(hex(a)),
        getCode: () => undefined,
        getStorage: () => undefined,
        storageEntries: () => [],
        apply: () => {},
      });
      // Reference: account records with the reference storage roots.
      let storageChecked = 0;
      for (const c of changes.accounts) {
        if (c.account === undefined) continue;
        const k = hex(c.address);
        const sr = refStorage.get(k)?.root() ?? KECCAK256_RLP;
        if (hex(c.account.storageRoot) !== hex(sr)) tt.fail(`block ${block}: storage root of ${k}`);
        else storageChecked++;
        accounts.set(k, c.account);
        await refAccounts.put(c.address, new Account(c.account.nonce, c.account.balance, c.account.storageRoot, c.account.codeHash).serialize());
      }
      tt.ok(storageChecked > 0, `block ${block}: ${storageChecked} storage roots equal @ethereumjs/mpt's`);
      tt.equal(hex(stateRoot), hex(refAccounts.root()), `block ${block}: state root equals @ethereumjs/mpt`);
      trie.writeNodes(nodes);
      tt.equal(nodes.filter(([k, v]) => hex(crypto.keccak256(v)) !== hex(k.subarray(1))).length, 0, `block ${block}: every node stored under its keccak`);
      // Nothing missing below the new roots, and every written node is reachable from them.
      const reach = walk(kv, stateRoot);
      for (const [, acc] of accounts) walk(kv, acc.storageRoot, reach);
      let unreachable = 0;
      for (const [k] of nodes) if (!reach.has(hex(k.subarray(1)))) unreachable++;
      tt.equal(unreachable, 0, `block ${block}: every node written is reachable from the new roots (${nodes.length} written, ${kv.size - before} new in the store)`);
      // Proofs: equal to the reference's, for present and absent accounts and slots.
      for (const i of [...touched].slice(0, 5).concat([999])) {
        const a = addr(i);
        const p = await trie.getProof(a, [slot(1), slot(7)]);
        const want = (await createMerkleProof(refAccounts, a)).map((x) => bytesToHex(x));
        tt.same(p.accountProof, want, `block ${block}: account proof of ${i}`);
        const st = refStorage.get(hex(a));
        if (st) tt.same(p.storageProof[1]!.proof, (await createMerkleProof(st, slot(7))).map((x) => bytesToHex(x)), `block ${block}: storage proof of ${i}`);
      }
    }
    tt.ok(trie.lastCommit!.keccakCalls < 30, `keccak calls per commit are per level, not per node (${trie.lastCommit!.keccakCalls})`);
    tt.ok(trie.lastCommit!.cacheHits > 0, 'a later block finds the earlier nodes in the cache');
  });
}

t.test('native and JS commit the same roots and nodes', async (tt) => {
  const backends = availableCryptoBackends();
  if (backends.length < 2) {
    tt.pass('only the JS backend here');
    return;
  }
  const results = await Promise.all(
    backends.map(async (crypto: CryptoBackend) => {
      const kv = new MemoryKV();
      const trie = new StateTrie({ nodes: kv, crypto, cache: new TrieNodeCache(0) });
      const changes: StateChanges = { accounts: [], storage: [], code: [] };
      for (let i = 0; i < 300; i++) {
        const a = new Uint8Array(20).fill(i & 0xff);
        a[0] = i >> 8;
        changes.accounts.push({ address: a, account: { nonce: BigInt(i), balance: BigInt(i) * 10n ** 18n, storageRoot: KECCAK256_RLP, codeHash: KECCAK256_NULL } });
        if (i % 3 === 0) changes.storage.push({ address: a, wiped: false, slots: [{ slot: new Uint8Array(32).fill(i & 0xff), value: Uint8Array.of(i & 0xff || 1) }] });
      }
      const { stateRoot, nodes } = await trie.commit(changes, { getAccount: () => undefined, getCode: () => undefined, getStorage: () => undefined, storageEntries: () => [], apply: () => {} });
      return { root: hex(stateRoot), nodes: nodes.map(([k, v]) => hex(k) + ':' + hex(v)).sort().join(',') };
    }),
  );
  tt.equal(results[0]!.root, results[1]!.root, 'same state root');
  tt.equal(results[0]!.nodes, results[1]!.nodes, 'same nodes, byte for byte');
});
