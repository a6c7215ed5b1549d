/**
 * FlatStateManager journaling: nested checkpoints under a block checkpoint, storage wipes and
 * their revert, deletion, flush contents and its refusal with an open checkpoint, the
 * original-storage cache, and the flat state's key layout round trip.
 */
import { Address, KECCAK256_NULL, KECCAK256_RLP, bytesToHex, hexToBytes } from '@ethereumjs/util';
import t from 'tap';
import {
  FlatStateManager,
  KVFlatState,
  MemoryKV,
  decodeAccountRecord,
  encodeAccountRecord,
  type StateChanges,
} from '../../src/evm/index.js';

const A = new Address(hexToBytes('0x00000000000000000000000000000000000000aa'));
const C = new Address(hexToBytes('0x00000000000000000000000000000000000000cc'));
const slot = (n: number) => {
  const s = new Uint8Array(32);
  s[31] = n;
  return s;
};

function seeded(): { flat: KVFlatState; sm: FlatStateManager } {
  const flat = new KVFlatState(new MemoryKV());
  const code = new Uint8Array([0x60, 0x00]);
  const codeHash = new Uint8Array(32).fill(9);
  flat.apply({
    accounts: [
      { address: A.bytes, account: { nonce: 1n, balance: 100n, storageRoot: KECCAK256_RLP, codeHash: KECCAK256_NULL } },
      { address: C.bytes, account: { nonce: 1n, balance: 0n, storageRoot: new Uint8Array(32).fill(3), codeHash } },
    ],
    storage: [{ address: C.bytes, wiped: false, slots: [{ slot: slot(1), value: new Uint8Array([5]) }, { slot: slot(2), value: new Uint8Array([6]) }] }],
    code: [{ hash: codeHash, code }],
  });
  return { flat, sm: new FlatStateManager(flat) };
}

const val = async (sm: FlatStateManager, a: Address, n: number) => bytesToHex(await sm.getStorage(a, slot(n)));

// Signing with @noble and running blocks on both crypto backends takes seconds alone and many
// times that on a loaded 2-core machine: more than tap's default 30 s per file.
t.setTimeout(240_000);

t.test('nested checkpoints under the block checkpoint', async (t) => {
  const { sm } = seeded();
  await sm.checkpoint(); // block
  await sm.modifyAccountFields(A, { balance: 90n });
  await sm.checkpoint(); // tx
  await sm.modifyAccountFields(A, { balance: 10n, nonce: 2n });
  await sm.putStorage(C, slot(1), new Uint8Array([0, 0, 7])); // stored unpadded
  t.equal(await val(sm, C, 1), '0x07');
  await sm.checkpoint(); // call
  await sm.putStorage(C, slot(1), new Uint8Array([8]));
  await sm.revert(); // call reverted
  t.equal(await val(sm, C, 1), '0x07', 'inner revert restores the tx-level value');
  await sm.revert(); // tx reverted
  t.equal((await sm.getAccount(A))!.balance, 90n, 'tx revert restores the block-level value');
  t.equal((await sm.getAccount(A))!.nonce, 1n);
  t.equal(await val(sm, C, 1), '0x05', 'slot back to the flat value');
  await sm.checkpoint(); // tx 2
  await sm.putStorage(C, slot(2), new Uint8Array(0)); // zero it
  await sm.commit();
  await sm.commit(); // block
  t.equal(sm.checkpointDepth, 0);
  const ch = sm.flush();
  t.same(
    ch.accounts.map((a) => [bytesToHex(a.address), a.account?.balance]),
    [
      [A.toString(), 90n],
      [C.toString(), 0n],
    ],
  );
  t.same(ch.storage.length, 1);
  const sc = ch.storage[0]!;
  t.equal(sc.wiped, false);
  // slot 1 was written then reverted: it may appear with its block-start value; slot 2 zeroed.
  const slots = Object.fromEntries(sc.slots.map((s) => [bytesToHex(s.slot), bytesToHex(s.value)]));
  t.equal(slots[bytesToHex(slot(2))], '0x');
  t.ok(slots[bytesToHex(slot(1))] === undefined || slots[bytesToHex(slot(1))] === '0x05');
  t.equal(sm.isDirty(), false, 'flush clears the dirty marks');
});

t.test('account mutation after getAccount does not leak into the journal', async (t) => {
  const { sm } = seeded();
  await sm.checkpoint();
  await sm.checkpoint();
  const acc = (await sm.getAccount(A))!;
  acc.balance = 1n; // the VM mutates what it got, then puts it back
  await sm.putAccount(A, acc);
  await sm.revert();
  t.equal((await sm.getAccount(A))!.balance, 100n);
  await sm.commit();
});

t.test('storage wipe and its revert', async (t) => {
  const { sm, flat } = seeded();
  await sm.checkpoint();
  t.equal(await val(sm, C, 1), '0x05'); // cached before the wipe
  await sm.checkpoint();
  await sm.clearStorage(C);
  t.equal(await val(sm, C, 1), '0x', 'cached slot reads zero after the wipe');
  t.equal(await val(sm, C, 2), '0x', 'uncached slot reads zero, not the flat value');
  await sm.putStorage(C, slot(3), new Uint8Array([1]));
  await sm.revert();
  t.equal(await val(sm, C, 1), '0x05');
  t.equal(await val(sm, C, 2), '0x06', 'the flat value is visible again');
  t.equal(await val(sm, C, 3), '0x');
  await sm.checkpoint();
  await sm.clearStorage(C);
  await sm.putStorage(C, slot(3), new Uint8Array([1]));
  await sm.commit();
  await sm.commit();
  const ch = sm.flush();
  t.same(
    ch.storage.map((s) => [bytesToHex(s.address), s.wiped, s.slots.map((x) => bytesToHex(x.slot) + '=' + bytesToHex(x.value))]),
    [[C.toString(), true, [bytesToHex(slot(3)) + '=0x01']]],
  );
  const cRec = ch.accounts.find((a) => bytesToHex(a.address) === C.toString())!.account!;
  t.same(cRec.storageRoot, KECCAK256_RLP, 'a wiped account leaves flush with the empty root until the trie sets it');
  flat.apply(ch);
  t.same([...flat.storageEntries(C.bytes)].map((e) => bytesToHex(e.slot)), [bytesToHex(slot(3))], 'wipe applied to the flat state');
  t.equal(await val(sm, C, 2), '0x', 'after the block, reads agree with the flat state');
});

t.test('a reverted wipe or delete is no wipe at flush', async (t) => {
  const { sm, flat } = seeded();
  await sm.checkpoint();
  await sm.checkpoint();
  await sm.clearStorage(C);
  await sm.revert();
  await sm.checkpoint();
  await sm.deleteAccount(C);
  await sm.revert();
  await sm.putStorage(C, slot(3), new Uint8Array([4]));
  await sm.commit();
  const ch = sm.flush();
  t.same(
    ch.storage.map((s) => [bytesToHex(s.address), s.wiped, s.slots.length]),
    [[C.toString(), false, 1]],
  );
  const cRec = ch.accounts.find((a) => bytesToHex(a.address) === C.toString())!.account!;
  t.same(cRec.storageRoot, new Uint8Array(32).fill(3), 'storage root untouched (the trie updates it from the old one)');
  flat.apply(ch);
  t.equal([...flat.storageEntries(C.bytes)].length, 3, 'slots 1, 2 kept, 3 added');
});

t.test('deleting an account deletes its storage', async (t) => {
  const { sm } = seeded();
  await sm.checkpoint();
  await sm.deleteAccount(C);
  t.equal(await sm.getAccount(C), undefined);
  t.same(await sm.getCode(C), new Uint8Array(0));
  await sm.commit();
  const ch: StateChanges = sm.flush();
  t.same(
    ch.accounts.map((a) => [bytesToHex(a.address), a.account]),
    [[C.toString(), undefined]],
  );
  t.same(
    ch.storage.map((s) => [bytesToHex(s.address), s.wiped, s.slots.length]),
    [[C.toString(), true, 0]],
  );
});

t.test('flush refuses an open checkpoint; getStateRoot refuses a dirty state', async (t) => {
  const { sm } = seeded();
  await sm.checkpoint();
  await sm.modifyAccountFields(A, { balance: 1n });
  t.throws(() => sm.flush(), { code: 'EVM_STATE_OPEN_CHECKPOINT' });
  await sm.commit();
  await t.rejects(sm.getStateRoot(), { code: 'EVM_STATE_DIRTY' });
  sm.flush();
  t.same(await sm.getStateRoot(), KECCAK256_RLP);
});

t.test('original storage is the value at the first access in the tx', async (t) => {
  const { sm } = seeded();
  t.equal(bytesToHex(await sm.originalStorageCache.get(C, slot(1))), '0x05');
  await sm.putStorage(C, slot(1), new Uint8Array([9]));
  t.equal(bytesToHex(await sm.originalStorageCache.get(C, slot(1))), '0x05');
  sm.originalStorageCache.clear();
  t.equal(bytesToHex(await sm.originalStorageCache.get(C, slot(1))), '0x09');
});

t.test('code by hash; putCode sets the account hash', async (t) => {
  const { sm } = seeded();
  t.same(await sm.getCode(C), new Uint8Array([0x60, 0x00]));
  t.equal(await sm.getCodeSize(C), 2);
  t.same(await sm.getCode(A), new Uint8Array(0));
  const code = new Uint8Array([0x60, 0x01, 0x00]);
  await sm.putCode(A, code);
  t.same(await sm.getCode(A), code);
  const ch = sm.flush();
  t.equal(ch.code.length, 1);
  t.same(ch.code[0]!.code, code);
});

t.test('account records round-trip, empty root and empty code hash stored as ""', async (t) => {
  const rec = { nonce: 7n, balance: 10n ** 20n, storageRoot: KECCAK256_RLP, codeHash: KECCAK256_NULL };
  const enc = encodeAccountRecord(rec);
  t.ok(enc.length < 20, `slim encoding: ${enc.length} bytes`);
  t.same(decodeAccountRecord(enc), rec);
  const rec2 = { nonce: 0n, balance: 0n, storageRoot: new Uint8Array(32).fill(1), codeHash: new Uint8Array(32).fill(2) };
  t.same(decodeAccountRecord(encodeAccountRecord(rec2)), rec2);
});
