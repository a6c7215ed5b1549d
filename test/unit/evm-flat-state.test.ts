/**
 * Flat state over both KV stores: the same writes read back the same, a storage wipe removes
 * exactly one account's slots (prefix ranges, including an address ending in 0xff bytes), and
 * the LMDB store commits inside the caller's transaction.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KECCAK256_NULL, KECCAK256_RLP, bytesToHex } from '@ethereumjs/util';
import { open } from 'lmdb';
import t, { type Test as Tap } from 'tap';
import { type FlatState, KVFlatState, LmdbKV, MemoryKV, prefixEnd } from '../../src/evm/index.js';

const addr = (last: number, fill = 0) => {
  const a = new Uint8Array(20).fill(fill);
  a[19] = last;
  return a;
};
const slot = (n: number) => {
  const s = new Uint8Array(32);
  s[31] = n;
  return s;
};

function exercise(t: Tap, flat: FlatState, write: (fn: () => void) => void): void {
  const A = addr(1);
  const B = addr(2);
  const F = addr(0xff, 0xff); // all 0xff: its prefix range has no upper bound
  write(() =>
    flat.apply({
      accounts: [
        { address: A, account: { nonce: 1n, balance: 2n, storageRoot: KECCAK256_RLP, codeHash: KECCAK256_NULL } },
        { address: B, account: { nonce: 0n, balance: 5n, storageRoot: new Uint8Array(32).fill(1), codeHash: new Uint8Array(32).fill(2) } },
      ],
      storage: [
        { address: A, wiped: false, slots: [1, 2, 3].map((n) => ({ slot: slot(n), value: new Uint8Array([n]) })) },
        { address: B, wiped: false, slots: [1, 2].map((n) => ({ slot: slot(n), value: new Uint8Array([10 + n]) })) },
        { address: F, wiped: false, slots: [7].map((n) => ({ slot: slot(n), value: new Uint8Array([n]) })) },
      ],
      code: [{ hash: new Uint8Array(32).fill(2), code: new Uint8Array([0x60, 0x00]) }],
    }),
  );
  t.equal(flat.getAccount(A)!.balance, 2n);
  t.same(flat.getAccount(B)!.codeHash, new Uint8Array(32).fill(2));
  t.same(flat.getCode(new Uint8Array(32).fill(2)), new Uint8Array([0x60, 0x00]));
  t.equal(bytesToHex(flat.getStorage(A, slot(2))!), '0x02');
  t.same([...flat.storageEntries(A)].map((e) => e.slot[31]), [1, 2, 3], 'slots in order');
  write(() =>
    flat.apply({
      accounts: [{ address: B, account: undefined }],
      storage: [
        { address: A, wiped: true, slots: [{ slot: slot(9), value: new Uint8Array([9]) }] },
        { address: B, wiped: true, slots: [] },
        { address: F, wiped: true, slots: [] },
      ],
      code: [],
    }),
  );
  t.same([...flat.storageEntries(A)].map((e) => e.slot[31]), [9], 'A wiped, then slot 9 written');
  t.same([...flat.storageEntries(B)], [], 'B wiped');
  t.same([...flat.storageEntries(F)], [], 'the 0xff… address wiped');
  t.equal(flat.getAccount(B), undefined, 'B deleted');
  t.equal(flat.getStorage(A, slot(1)), undefined);
  write(() => flat.apply({ accounts: [], storage: [{ address: A, wiped: false, slots: [{ slot: slot(9), value: new Uint8Array(0) }] }], code: [] }));
  t.equal(flat.getStorage(A, slot(9)), undefined, 'an empty value deletes the slot');
}



// Signing with @noble and running blocks on both crypto backends takes seconds alone and many
// times that on a loaded 2-core machine: more than tap's default 30 s per file.
t.setTimeout(240_000);

t.test('prefixEnd', async (t) => {
  t.same(prefixEnd(new Uint8Array([1, 2])), new Uint8Array([1, 3]));
  t.same(prefixEnd(new Uint8Array([1, 0xff])), new Uint8Array([2]));
  t.equal(prefixEnd(new Uint8Array([0xff, 0xff])), undefined);
});

t.test('memory flat state', async (t) => {
  exercise(t, new KVFlatState(new MemoryKV()), (fn) => fn());
});

t.test('LMDB flat state inside the caller transaction', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'chaind-'));
  const env = open({ path: dir });
  t.teardown(async () => {
    await env.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const db = env.openDB({ name: 'evm', keyEncoding: 'binary', encoding: 'binary' });
  // A neighbour entry after every storage key (prefix 0x04) must survive the 0xff… wipe.
  db.transactionSync(() => void db.put(new Uint8Array([0x04, 1]), new Uint8Array([1])));
  exercise(t, new KVFlatState(new LmdbKV(db as never)), (fn) => db.transactionSync(fn));
  t.same(db.get(new Uint8Array([0x04, 1])), new Uint8Array([1]));
});
