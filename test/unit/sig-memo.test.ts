/**
 * The main thread stops repeating work on a tx's keys and signatures (src/tx/pubkey.ts key memos,
 * src/app/modules/auth/sigverify.ts memo of valid checks, the recheck path of BaseApp.checkTx):
 * a key is decompressed once however many stages look at it, what CheckTx verified is not
 * verified again in FinalizeBlock, a block from another proposer is still verified (a bad
 * signature still fails), recheck skips signatures but not the sequence, and every memo is bounded.
 */
import t, { type Test } from 'tap';
import { getCryptoBackend } from '../../src/crypto/backend.js';
import { LruMemo } from '../../src/tx/memo.js';
import { pubKeyAnyMemo, secp256k1Keys, Secp256k1KeyMemo } from '../../src/tx/pubkey.js';
import { startChain, CHAIN_ID, DENOM } from '../helpers/chainapp.js';
import { buildTx, devKeys, freshKey, msgSend, sendTx, type DevAccount } from '../helpers/txsign.js';

const KEYS = devKeys();
const E0 = KEYS[0]!; // eth_secp256k1, account 0
const S0 = KEYS[10]!; // secp256k1, account 10
const S1 = KEYS[11]!;
const S2 = KEYS[12]!;

function send(from: DevAccount, accountNumber: bigint, sequence: bigint, extra: { corrupt?: boolean; amount?: number } = {}): Uint8Array {
  return buildTx({
    chainId: CHAIN_ID,
    msgs: [msgSend(from.bech32, S2.bech32, [{ denom: DENOM, amount: extra.amount ?? 7 }])],
    signers: [{ key: from, accountNumber, sequence, corrupt: extra.corrupt }],
  }).bytes;
}

/** Counts calls through the process-wide key memo's decompressor, from empty memos. */
function countDecompressions(t: Test): { readonly calls: number; readonly keys: string[] } {
  const orig = secp256k1Keys.decompressor;
  const keys: string[] = [];
  secp256k1Keys.clear();
  pubKeyAnyMemo.clear();
  secp256k1Keys.decompressor = (k) => {
    keys.push(Buffer.from(k).toString('hex'));
    return orig(k);
  };
  t.teardown(() => {
    secp256k1Keys.decompressor = orig;
  });
  return {
    get calls() {
      return keys.length;
    },
    keys,
  };
}

t.test('a key is decompressed once: CheckTx (pre-verification + four decorators), the block, the next txs', async (t) => {
  const h = await startChain(t);
  const c = countDecompressions(t);
  const tx0 = send(S0, 10n, 0n);
  t.equal((await h.check(tx0)).code, 0);
  t.same(c.keys, [Buffer.from(S0.publicKey).toString('hex')], "CheckTx decompressed the signer's key once");
  const res = await h.block([tx0]);
  t.equal(res.txResults[0]!.code, 0, res.txResults[0]!.log);
  t.equal(c.calls, 1, 'FinalizeBlock (pre-verification and the ante chain) did not decompress it again');
  t.equal((await h.check(send(S0, 10n, 1n), false)).code, 0);
  // A commit resets the check state; the mempool then rechecks what it holds.
  await h.block([]);
  t.equal((await h.check(send(S0, 10n, 1n), true)).code, 0, 'recheck');
  t.equal(c.calls, 1, 'nor did the next tx, or its recheck');

  // An eth_secp256k1 key: its address needs the uncompressed point, from the same memo.
  t.equal((await h.check(sendTx({ chainId: CHAIN_ID, from: E0, to: S2.bech32, amount: [{ denom: DENOM, amount: 1 }], accountNumber: 0n, sequence: 0n }))).code, 0);
  t.equal(c.calls, 2, 'one decompression for the eth key, address included');
});

t.test('without the memos (each tx a new memo) a tx still decompresses its key once', async (t) => {
  // Every stage of one tx finds the key that the first stage decoded: clearing between txs
  // (a memo too small to keep it) costs one decompression per tx, never one per stage.
  const h = await startChain(t);
  const c = countDecompressions(t);
  for (let seq = 0n; seq < 3n; seq++) {
    secp256k1Keys.clear();
    pubKeyAnyMemo.clear();
    const before = c.calls;
    const tx = send(S1, 11n, seq);
    t.equal((await h.check(tx)).code, 0);
    t.equal(c.calls - before, 1, `CheckTx of seq ${seq}: one decompression`);
    secp256k1Keys.clear();
    pubKeyAnyMemo.clear();
    const res = await h.block([tx]);
    t.equal(res.txResults[0]!.code, 0);
    t.equal(c.calls - before, 2, `its block: one more`);
  }
});

t.test('recheck skips the signature but still rejects a stale sequence', async (t) => {
  const h = await startChain(t);
  const v = h.app.sigVerifier.stats;
  const good = send(S0, 10n, 0n);
  t.equal((await h.check(good)).code, 0);
  // An empty block commits: the check state starts over and the mempool rechecks `good`.
  await h.block([]);
  const before = { ...v };
  t.equal((await h.check(good, true)).code, 0, 'recheck passes');
  t.same({ ...v }, before, 'recheck asked the verifier nothing (no pool, no memo, no inline check)');

  // A tx whose signature is bad passes recheck: CheckTx vouched for the bytes once
  // (x/auth/ante/sigverify.go skips verification when ctx.IsReCheckTx()).
  const badSig = send(S1, 11n, 0n, { corrupt: true });
  t.equal((await h.check(badSig)).code, 4, 'CheckTx refuses a bad signature');
  const afterCheck = { ...v };
  t.equal((await h.check(badSig, true)).code, 0, 'recheck does not verify signatures');
  t.same({ ...v }, afterCheck, 'recheck asked the verifier nothing');

  // Another proposer's block spends S0's sequence 0 with a different tx: `good` is now stale.
  const other = send(S0, 10n, 0n, { amount: 8 });
  const res = await h.block([other]);
  t.equal(res.txResults[0]!.code, 0, res.txResults[0]!.log);
  const r = await h.check(good, true);
  t.same([r.code, r.log], [32, 'account sequence mismatch, expected 1, got 0: incorrect account sequence'], 'recheck rejects the stale sequence');
});

t.test("a tx from another proposer's block with a bad signature is rejected in FinalizeBlock", async (t) => {
  const h = await startChain(t);
  const good = send(S0, 10n, 0n);
  t.equal((await h.check(good)).code, 0, 'CheckTx verified (and remembered) the good signature');
  // Same body, same signer, same sign bytes: only the signature differs. Never seen by CheckTx.
  const forged = send(S0, 10n, 0n, { corrupt: true });
  const before = h.lastAppHash();
  const res = await h.block([forged]);
  const r = res.txResults[0]!;
  t.equal(r.code, 4, r.log);
  t.match(r.log, /signature verification failed/);
  t.equal(h.lastAppHash(), before, 'no state change');
  // The good one still goes through afterwards, from the memo.
  const memo0 = h.app.sigVerifier.stats.memoHits;
  t.equal((await h.block([good])).txResults[0]!.code, 0);
  t.equal(h.app.sigVerifier.stats.memoHits - memo0, 1, 'answered from the memo of valid checks');
});

t.test('the same block gives the same results and app hash with and without the memo', async (t) => {
  const txs = [send(S0, 10n, 0n), send(S0, 10n, 1n, { corrupt: true }), send(S1, 11n, 0n), send(S1, 11n, 0n, { amount: 9 })];
  const run = async (checkFirst: boolean) => {
    const h = await startChain(t, { verifiedSigMemoSize: checkFirst ? undefined : 1 });
    if (checkFirst) for (const tx of txs) await h.check(tx);
    const res = await h.block(txs);
    return { codes: res.txResults.map((r) => [r.code, r.log, r.gasUsed]), hash: Buffer.from(h.lastAppHash()).toString('hex') };
  };
  const a = await run(true);
  const b = await run(false);
  t.same(a, b);
  t.same(a.codes.map((c) => c[0]), [0, 4, 0, 32]);
});

t.test('the memos are bounded', async (t) => {
  t.test('LruMemo drops the least recently used', async (t) => {
    const m = new LruMemo<string, number>(3);
    for (const [i, k] of ['a', 'b', 'c'].entries()) m.set(k, i);
    t.equal(m.get('a'), 0, 'a becomes most recent');
    m.set('d', 3);
    t.equal(m.size, 3);
    t.equal(m.has('b'), false, 'b (least recent) evicted');
    t.same(['a', 'c', 'd'].map((k) => m.has(k)), [true, true, true]);
    for (let i = 0; i < 1000; i++) m.set(`k${i}`, i);
    t.equal(m.size, 3);
    t.throws(() => new LruMemo(0), RangeError);
  });

  t.test('Secp256k1KeyMemo keeps at most its capacity and never an invalid key', async (t) => {
    let calls = 0;
    const backend = getCryptoBackend();
    const memo = new Secp256k1KeyMemo(4, (k) => {
      calls++;
      return backend.secp256k1Decompress(k);
    });
    const keys = Array.from({ length: 10 }, (_, i) => freshKey(100 + i).publicKey);
    for (const k of keys) t.not(memo.uncompressed(k), null);
    t.equal(memo.size, 4);
    t.equal(calls, 10);
    memo.uncompressed(keys[9]!);
    t.equal(calls, 10, 'a recent key is answered from the memo');
    memo.uncompressed(keys[0]!);
    t.equal(calls, 11, 'an evicted key is decompressed again');
    const offCurve = Uint8Array.from([2, ...new Uint8Array(31), 5]);
    t.equal(memo.uncompressed(offCurve), null);
    t.equal(memo.uncompressed(offCurve), null);
    t.equal(calls, 13, 'an invalid key is not remembered');
    t.equal(memo.size, 4);
  });

  t.test("the verifier's memo of valid checks stays within its capacity", async (t) => {
    const h = await startChain(t, { verifiedSigMemoSize: 2 });
    const txs = [send(S0, 10n, 0n), send(S0, 10n, 1n), send(S0, 10n, 2n), send(S1, 11n, 0n), send(S1, 11n, 1n)];
    for (const tx of txs) t.equal((await h.check(tx)).code, 0);
    t.equal(h.app.sigVerifier.verifiedMemoSize, 2);
    const s0 = { ...h.app.sigVerifier.stats };
    const res = await h.block(txs);
    t.same(res.txResults.map((r) => r.code), [0, 0, 0, 0, 0], 'evicted checks are simply verified again');
    t.equal(h.app.sigVerifier.stats.pooled - s0.pooled, 3, 'the three evicted ones went to the pool');
    t.equal(h.app.sigVerifier.verifiedMemoSize, 2);
  });
});
