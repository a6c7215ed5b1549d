/**
 * The signature-checking ante chain (src/app/modules/auth/ante.ts, sigverify.ts) on the real chain
 * app: signed DIRECT and LEGACY_AMINO_JSON txs with secp256k1 and eth_secp256k1 dev keys, the tx
 * events of cosmos/cosmos-sdk:baseapp/baseapp.go, and every ante failure with the SDK's exact codespace, code and log —
 * in CheckTx (the check state is not touched) and in FinalizeBlock (the app hash stays as it was).
 * Signatures go through the crypto pool in one call per block.
 */
import t, { type Test } from 'tap';
import { create, toBinary } from '@bufbuild/protobuf';
import { moduleAddress } from '../../src/app/address.js';
import type { ExecTxResult } from '../../src/abci/types.js';
import { ParamsSchema } from '../../src/gen/chain/auth/v1beta1/auth_pb.js';
import { MsgSendSchema } from '../../src/gen/chain/bank/v1beta1/tx_pb.js';
import { SignMode } from '../../src/gen/chain/tx/signing/v1beta1/signing_pb.js';
import { AuthInfoSchema, FeeSchema, ModeInfoSchema, ModeInfo_MultiSchema, ModeInfo_SingleSchema, SignerInfoSchema, TxBodySchema } from '../../src/gen/chain/tx/v1beta1/tx_pb.js';
import { LegacyAminoPubKeySchema } from '../../src/gen/chain/crypto/multisig/keys_pb.js';
import { CompactBitArraySchema, MultiSignatureSchema } from '../../src/gen/chain/crypto/multisig/v1beta1/multisig_pb.js';
import { packAny } from '../../src/proto/registry.js';
import { signBytesDirect } from '../../src/tx/signbytes.js';
import type { CryptoPool, SigItem } from '../../src/pool/types.js';
import { createCryptoPool } from '../../src/pool/index.js';
import { defaultParams } from '../../src/app/modules/auth/types.js';
import { encodeTxRaw } from '../../src/tx/codec.js';
import { encodePubKey, pubKeyAddress, type PubKey } from '../../src/tx/pubkey.js';
import { startChain, CHAIN_ID, DENOM, DEV_BALANCE, GENESIS_TIME, type ChainHarness } from '../helpers/chainapp.js';
import { anyOf, buildTx, devKeys, freshKey, msgSend, sendTx, signWith, type DevAccount } from '../helpers/txsign.js';

const KEYS = devKeys();
/** eth_secp256k1 dev keys are accounts 0–9, secp256k1 ones 10–19 (genesis order). */
const E0 = KEYS[0]!;
const E1 = KEYS[1]!;
const S0 = KEYS[10]!;
const S1 = KEYS[11]!;
const S2 = KEYS[12]!;
const FEE_COLLECTOR = moduleAddress('fee_collector');

const attrs = (r: ExecTxResult, type: string) => r.events.filter((e) => e.type === type).map((e) => Object.fromEntries(e.attributes.map((a) => [a.key, a.value])));

interface Want {
  code: number;
  codespace?: string;
  log: string | RegExp;
}

function expectResult(t: Test, r: ExecTxResult, want: Want, what: string): void {
  t.equal(r.codespace, want.codespace ?? 'sdk', `${what}: codespace`);
  t.equal(r.code, want.code, `${what}: code`);
  if (typeof want.log === 'string') t.equal(r.log, want.log, `${what}: log`);
  else t.match(r.log, want.log, `${what}: log`);
  t.same(r.events, [], `${what}: no events from a failed ante chain`);
}

/** The tx fails in CheckTx and in FinalizeBlock with `want`, and neither changes any state. */
async function expectFail(t: Test, h: ChainHarness, tx: Uint8Array, want: Want, opts: { finalize?: Want | null } = {}): Promise<void> {
  const writes = h.checkStateWrites();
  expectResult(t, await h.check(tx), want, 'CheckTx');
  t.equal(h.checkStateWrites(), writes, 'CheckTx: the check state is untouched');
  const finalize = opts.finalize === undefined ? want : opts.finalize;
  if (finalize === null) return;
  const before = h.lastAppHash();
  const res = await h.block([tx]);
  expectResult(t, res.txResults[0]!, finalize, 'FinalizeBlock');
  t.equal(h.lastAppHash(), before, 'FinalizeBlock: the app hash is unchanged (no state change)');
}

function send(from: DevAccount, accountNumber: bigint, sequence: bigint, extra: Partial<Parameters<typeof sendTx>[0]> = {}): Uint8Array {
  return sendTx({ chainId: CHAIN_ID, from, to: S2.bech32, amount: [{ denom: DENOM, amount: 7 }], accountNumber, sequence, ...extra });
}

/** A pool wrapper that counts calls and items. */
function countingPool(inner: CryptoPool): CryptoPool & { calls: number[] } {
  const calls: number[] = [];
  return Object.assign(Object.create(inner) as CryptoPool, {
    calls,
    kind: inner.kind,
    verifySignatures(items: readonly SigItem[]) {
      calls.push(items.length);
      return inner.verifySignatures(items);
    },
    close: () => inner.close(),
  });
}

t.test('a signed MsgSend (DIRECT, secp256k1): balances, fee, pubkey, sequence, events', async (t) => {
  const h = await startChain(t);
  const tx = buildTx({
    chainId: CHAIN_ID,
    msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 1000 }])],
    signers: [{ key: S0, accountNumber: 10n, sequence: 0n }],
    fee: { amount: [{ denom: DENOM, amount: 250 }], gasLimit: 150_000n },
  }).bytes;
  const c = await h.check(tx);
  t.equal(c.code, 0, c.log);
  t.equal(c.gasWanted, 150_000n);
  t.ok(c.gasUsed > 1000n, 'gas for size, reads and the signature');
  const res = await h.block([tx]);
  const r = res.txResults[0]!;
  t.equal(r.code, 0, r.log);
  t.equal(h.balance(S0.address), DEV_BALANCE - 1000n - 250n, 'sender paid amount and fee');
  t.equal(h.balance(S2.address), DEV_BALANCE + 1000n);
  t.equal(h.balance(FEE_COLLECTOR), 250n, 'the fee went to fee_collector');
  const acc = h.account(S0.address)!;
  t.equal(acc.sequence, 1n, 'sequence incremented');
  t.equal(acc.accountNumber, 10n);
  t.equal(acc.pubKey?.typeUrl, '/chain.crypto.secp256k1.PubKey', 'the key is stored (canonical spelling)');

  const txEvents = attrs(r, 'tx');
  t.same(txEvents[0], { fee: `250${DENOM}`, fee_payer: S0.bech32 });
  t.same(txEvents[1], { acc_seq: `${S0.bech32}/0` });
  t.match(txEvents[2], { signature: /^[A-Za-z0-9+/]{86}==$/ });
  t.same(attrs(r, 'message').find((m) => m['action'] !== undefined), { action: '/chain.bank.v1beta1.MsgSend', sender: S0.bech32, module: 'bank', msg_index: '0' });
  t.same(attrs(r, 'transfer').at(-1), { recipient: S2.bech32, sender: S0.bech32, amount: `1000${DENOM}`, msg_index: '0' });
  t.same(attrs(r, 'transfer')[0], { recipient: FEE_COLLECTOR && h.app.addressCodec.encode(FEE_COLLECTOR), sender: S0.bech32, amount: `250${DENOM}` }, 'the fee transfer (ante event, no msg_index)');

  // The next tx needs sequence 1 and no key any more.
  const next = buildTx({ chainId: CHAIN_ID, msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 1n, withPubKey: false }] }).bytes;
  t.equal((await h.block([next])).txResults[0]!.code, 0, 'a later tx without a signer-info key verifies against the stored key');
  t.equal(h.account(S0.address)!.sequence, 2n);
});

t.test('eth_secp256k1 (keccak256), LEGACY_AMINO_JSON in both spellings, upstream key type URLs', async (t) => {
  const h = await startChain(t);
  const cases: [string, Uint8Array, DevAccount][] = [
    ['eth_secp256k1 DIRECT', send(E0, 0n, 0n), E0],
    ['eth_secp256k1 amino (chain-sdk names)', send(E0, 0n, 1n, { mode: 'amino' }), E0],
    ['secp256k1 amino (chain-sdk names)', send(S0, 10n, 0n, { mode: 'amino' }), S0],
    ['secp256k1 amino signed as CosmJS/Keplr do (cosmos-sdk names, /cosmos. type URLs)', send(S0, 10n, 1n, { mode: 'amino', upstream: true }), S0],
    ['eth_secp256k1 DIRECT with /cosmos.evm… key and /cosmos.bank… message', send(E1, 1n, 0n, { upstream: true }), E1],
  ];
  for (const [what, tx] of cases) {
    const c = await h.check(tx);
    t.equal(c.code, 0, `${what}: CheckTx ${c.log}`);
  }
  const res = await h.block(cases.map((c) => c[1]));
  res.txResults.forEach((r, i) => t.equal(r.code, 0, `${cases[i]![0]}: ${r.log}`));
  t.equal(h.account(E0.address)!.sequence, 2n);
  t.equal(h.account(E0.address)!.pubKey?.typeUrl, '/chain.evm.crypto.v1.ethsecp256k1.PubKey');
  t.equal(h.account(E1.address)!.pubKey?.typeUrl, '/chain.evm.crypto.v1.ethsecp256k1.PubKey', 'an upstream key URL is stored canonically');
  t.equal(h.account(S0.address)!.sequence, 2n);
  t.equal(h.balance(S2.address), DEV_BALANCE + 5n * 7n);
  // eth_secp256k1 gas: 21000 per signature (Cosmos EVM), secp256k1: sig_verify_cost_secp256k1.
  t.ok(res.txResults[0]!.gasUsed > 21_000n, 'eth_secp256k1 signature gas');
});

t.test('signatures go through the pool: one call per CheckTx, one per block of unseen txs', async (t) => {
  const pool = countingPool(createCryptoPool({ kind: 'single' }));
  const h = await startChain(t, { pool, checkTxOnPool: true });
  const txs = [send(S0, 10n, 0n), send(S0, 10n, 1n), send(S1, 11n, 0n), send(E0, 0n, 0n, { mode: 'amino' })];
  const before = { ...h.app.sigVerifier.stats };
  // Another proposer's block: nothing of it went through this node's CheckTx.
  const res = await h.block(txs);
  t.same(res.txResults.map((r) => r.code), [0, 0, 0, 0]);
  t.same(pool.calls, [5], 'the whole block in one pool call (both amino spellings for the amino tx)');
  t.equal(h.app.sigVerifier.stats.syncVerified, before.syncVerified, 'nothing verified outside the pool');
  t.equal(h.app.sigVerifier.stats.cacheHits - before.cacheHits, 4, 'each signature answered from the pool');
});

t.test('what CheckTx verified is not verified again in the block', async (t) => {
  const pool = countingPool(createCryptoPool({ kind: 'single' }));
  const h = await startChain(t, { pool, checkTxOnPool: true });
  const txs = [send(S0, 10n, 0n), send(S0, 10n, 1n), send(S1, 11n, 0n), send(E0, 0n, 0n, { mode: 'amino' })];
  for (const tx of txs) t.equal((await h.check(tx)).code, 0);
  t.same(pool.calls, [1, 1, 1, 2], 'one item per DIRECT tx; both amino spellings for an amino one');
  pool.calls.length = 0;
  const before = { ...h.app.sigVerifier.stats };
  const res = await h.block(txs);
  t.same(res.txResults.map((r) => r.code), [0, 0, 0, 0]);
  t.same(pool.calls, [], 'no pool call: every check passed in CheckTx');
  t.equal(h.app.sigVerifier.stats.syncVerified, before.syncVerified, 'nothing verified on the spot');
  t.equal(h.app.sigVerifier.stats.memoHits - before.memoHits, 4, 'each signature answered from the memo of valid checks');
  t.equal(h.app.sigVerifier.stats.cacheHits, before.cacheHits);
});

t.test('with CheckTx off the pool, CheckTx verifies on the spot, a bad signature is still refused, and the block does not verify again', async (t) => {
  const pool = countingPool(createCryptoPool({ kind: 'single' }));
  const h = await startChain(t, { pool, checkTxOnPool: false });
  const txs = [send(S0, 10n, 0n), send(S1, 11n, 0n), send(E0, 0n, 0n, { mode: 'amino' })];
  const before = { ...h.app.sigVerifier.stats };
  for (const tx of txs) t.equal((await h.check(tx)).code, 0);
  t.same(pool.calls, [], 'no pool call in CheckTx');
  t.ok(h.app.sigVerifier.stats.syncVerified - before.syncVerified >= 3, 'verified on the calling thread');
  const bad = await h.check(buildTx({ chainId: CHAIN_ID, msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 7 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 1n, corrupt: true }] }).bytes);
  t.equal(bad.code, 4, 'a bad signature is refused (unauthorized)');
  const s1 = { ...h.app.sigVerifier.stats };
  const res = await h.block(txs);
  t.same(res.txResults.map((r) => r.code), [0, 0, 0]);
  t.same(pool.calls, [], 'no pool call in the block: every check was remembered');
  t.equal(h.app.sigVerifier.stats.memoHits - s1.memoHits, 3, 'each signature answered from the memo of valid checks');
});

t.test('an account created earlier in the same block is verified on the spot', async (t) => {
  const h = await startChain(t);
  const fresh = freshKey(1);
  t.equal(h.account(fresh.address), undefined);
  const fund = sendTx({ chainId: CHAIN_ID, from: S0, to: fresh.bech32, amount: [{ denom: DENOM, amount: 5000 }], accountNumber: 10n, sequence: 0n });
  // The fresh account gets the next account number: 20 dev accounts + 3 module accounts = 23.
  const spend = sendTx({ chainId: CHAIN_ID, from: fresh, to: S2.bech32, amount: [{ denom: DENOM, amount: 100 }], accountNumber: 23n, sequence: 0n });
  const before = h.app.sigVerifier.stats.syncVerified;
  const res = await h.block([fund, spend]);
  t.same(res.txResults.map((r) => [r.code, r.log]), [
    [0, ''],
    [0, ''],
  ]);
  t.equal(h.app.sigVerifier.stats.syncVerified - before, 1, 'the second signature missed the pre-verification and was verified inline');
  t.equal(h.account(fresh.address)!.accountNumber, 23n);
  t.equal(h.balance(fresh.address), 4900n);
});

t.test('every ante failure: exact codespace, code and log; no state change', async (t) => {
  const h = await startChain(t, {
    appState: (s) => {
      s['auth'].params.tx_sig_limit = '2';
    },
  });
  const chainId = CHAIN_ID;

  await t.test('wrong sequence (32)', async (t) => {
    await expectFail(t, h, send(S0, 10n, 1n), { code: 32, log: 'account sequence mismatch, expected 0, got 1: incorrect account sequence' });
  });
  await t.test('bad signature, DIRECT (4)', async (t) => {
    const tx = buildTx({ chainId, msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 0n, corrupt: true }] }).bytes;
    await expectFail(t, h, tx, {
      code: 4,
      log: `signature verification failed; please verify account number (10) and chain-id (${chainId}): (unable to verify single signer signature): unauthorized`,
    });
  });
  await t.test('bad signature, LEGACY_AMINO_JSON (4): the message names the sequence', async (t) => {
    const tx = buildTx({ chainId, msgs: [msgSend(E0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: E0, accountNumber: 0n, sequence: 0n, mode: 'amino', corrupt: true }] }).bytes;
    await expectFail(t, h, tx, { code: 4, log: `signature verification failed; please verify account number (0), sequence (0) and chain-id (${chainId}): unauthorized` });
  });
  await t.test('wrong chain id (4)', async (t) => {
    const tx = buildTx({ chainId, msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 0n, signAs: { chainId: 'other-chain' } }] }).bytes;
    await expectFail(t, h, tx, {
      code: 4,
      log: `signature verification failed; please verify account number (10) and chain-id (${chainId}): (unable to verify single signer signature): unauthorized`,
    });
  });
  await t.test('wrong account number (4)', async (t) => {
    const tx = buildTx({ chainId, msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 0n, signAs: { accountNumber: 11n } }] }).bytes;
    await expectFail(t, h, tx, { code: 4, log: /^signature verification failed; please verify account number \(10\) and chain-id/ });
  });
  await t.test('amino signed over a wrong sequence (4)', async (t) => {
    const tx = buildTx({ chainId, msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 0n, mode: 'amino', signAs: { sequence: 3n } }] }).bytes;
    await expectFail(t, h, tx, { code: 4, log: `signature verification failed; please verify account number (10), sequence (0) and chain-id (${chainId}): unauthorized` });
  });
  await t.test('memo too long (12), counted in bytes', async (t) => {
    await expectFail(t, h, send(S0, 10n, 0n, { memo: 'x'.repeat(257) }), { code: 12, log: 'maximum number of characters is 256 but received 257 characters: memo too large' });
    await expectFail(t, h, send(S0, 10n, 0n, { memo: 'é'.repeat(129) }), { code: 12, log: 'maximum number of characters is 256 but received 258 characters: memo too large' });
  });
  await t.test('signature limit (14)', async (t) => {
    const tx = buildTx({
      chainId,
      msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }]), msgSend(S1.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }]), msgSend(E0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])],
      signers: [
        { key: S0, accountNumber: 10n, sequence: 0n },
        { key: S1, accountNumber: 11n, sequence: 0n },
        { key: E0, accountNumber: 0n, sequence: 0n },
      ],
    }).bytes;
    await expectFail(t, h, tx, { code: 14, log: 'signatures: 3, limit: 2: maximum number of signatures exceeded' });
  });
  await t.test('out of gas (11)', async (t) => {
    const tx = send(S0, 10n, 0n, { fee: { gasLimit: 1500n } });
    // Params read (ReadFlat 1000 + 3/byte of key and value), then txSize = 10 × tx bytes.
    const paramsRead = 1000n + 3n * (1n + BigInt(toBinary(ParamsSchema, defaultParams()).length));
    const used = paramsRead + 10n * BigInt(tx.length);
    await expectFail(t, h, tx, { code: 11, log: `out of gas in location: txSize; gasWanted: 1500, gasUsed: ${used}: out of gas` });
  });
  await t.test('insufficient funds for the fee (5)', async (t) => {
    const fee = DEV_BALANCE * 10n;
    await expectFail(t, h, send(S0, 10n, 0n, { fee: { amount: [{ denom: DENOM, amount: fee }] } }), {
      code: 5,
      log: `spendable balance ${DEV_BALANCE}${DENOM} is smaller than ${fee}${DENOM}: insufficient funds: insufficient funds`,
    });
  });
  await t.test('fee payer without an account (9)', async (t) => {
    const ghost = freshKey(9);
    await expectFail(t, h, sendTx({ chainId, from: ghost, to: S2.bech32, amount: [{ denom: DENOM, amount: 1 }], accountNumber: 0n, sequence: 0n }), {
      code: 9,
      log: `fee payer address: ${ghost.bech32} does not exist: unknown address`,
    });
  });
  await t.test('extension options (31)', async (t) => {
    const tx = buildTx({
      chainId,
      msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])],
      signers: [{ key: S0, accountNumber: 10n, sequence: 0n }],
      extensionOptions: [anyOf(MsgSendSchema, create(MsgSendSchema))],
    }).bytes;
    await expectFail(t, h, tx, { code: 31, log: 'unknown extension options' });
  });
  await t.test('no signatures (15), one signature too many (4)', async (t) => {
    const spec = { chainId, msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 0n }] };
    await expectFail(t, h, buildTx({ ...spec, signatures: () => [] }).bytes, { code: 15, log: 'empty signatures: no signatures supplied' });
    await expectFail(t, h, buildTx({ ...spec, signatures: (s) => [...s, s[0]!] }).bytes, { code: 4, log: 'invalid number of signatures: got 2 signatures and 1 signers: unauthorized' });
  });
  await t.test('a key that is not the signer’s (8); no key at all (8)', async (t) => {
    const other = encodePubKey({ algo: 'secp256k1', key: S1.publicKey });
    const tx = buildTx({ chainId, msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 0n, pubKeyOverride: other }] }).bytes;
    await expectFail(t, h, tx, { code: 8, log: `pubKey does not match signer address ${S0.bech32} with signer index: 0: invalid pubkey` });
    // An eth key offered as a plain secp256k1 key hashes to another address.
    const wrongAlgo = encodePubKey({ algo: 'secp256k1', key: E0.publicKey });
    const tx2 = buildTx({ chainId, msgs: [msgSend(E0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: E0, accountNumber: 0n, sequence: 0n, pubKeyOverride: wrongAlgo }] }).bytes;
    await expectFail(t, h, tx2, { code: 8, log: `pubKey does not match signer address ${E0.bech32} with signer index: 0: invalid pubkey` });
    const nokey = buildTx({ chainId, msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 0n, withPubKey: false }] }).bytes;
    // The SDK's SigGasConsume meets the nil key first (its SigVerification check never runs).
    await expectFail(t, h, nokey, { code: 8, log: 'unrecognized public key type: <nil>: invalid pubkey' });
  });
  await t.test('timeout height (30)', async (t) => {
    const height = h.height() + 1n;
    const tx = buildTx({ chainId, msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 0n }], timeoutHeight: height - 1n }).bytes;
    await expectFail(t, h, tx, { code: 30, log: `block height: ${height}, timeout height: ${height - 1n}: tx timeout height` });
  });
  await t.test('a valid tx still passes after all that: nothing moved', async (t) => {
    t.equal(h.account(S0.address)!.sequence, 0n);
    t.equal(h.balance(S0.address), DEV_BALANCE);
    t.equal((await h.block([send(S0, 10n, 0n)])).txResults[0]!.code, 0);
  });
});

t.test('minimum gas prices: CheckTx refuses a low fee (13); FinalizeBlock does not check it', async (t) => {
  const h = await startChain(t, { minGasPrices: '0.0015achain' });
  // 200000 gas × 0.0015 = 300.
  const low = send(S0, 10n, 0n, { fee: { amount: [{ denom: DENOM, amount: 299 }], gasLimit: 200_000n } });
  await expectFail(t, h, low, { code: 13, log: `insufficient fees; got: 299${DENOM} required: 300${DENOM}: insufficient fee` }, { finalize: null });
  const none = send(S0, 10n, 0n, { fee: { amount: [], gasLimit: 100_001n } });
  await expectFail(t, h, none, { code: 13, log: `insufficient fees; got:  required: 151${DENOM}: insufficient fee` }, { finalize: null });
  const other = send(S0, 10n, 0n, { fee: { amount: [{ denom: 'uother', amount: 10_000 }], gasLimit: 200_000n } });
  await expectFail(t, h, other, { code: 13, log: `insufficient fees; got: 10000uother required: 300${DENOM}: insufficient fee` }, { finalize: null });
  t.equal((await h.check(send(S0, 10n, 0n, { fee: { amount: [{ denom: DENOM, amount: 300 }], gasLimit: 200_000n } }))).code, 0, 'exactly the minimum');
  // A proposer may include a low-fee tx: DeliverTx does not apply the node's min gas prices.
  const r = (await h.block([low])).txResults[0]!;
  t.equal(r.code, 0, r.log);
  t.equal(h.balance(FEE_COLLECTOR), 299n);
});

t.test('ante state is kept when the message fails: sequence and fee', async (t) => {
  const h = await startChain(t);
  const tx = sendTx({ chainId: CHAIN_ID, from: S0, to: S2.bech32, amount: [{ denom: DENOM, amount: DEV_BALANCE * 2n }], accountNumber: 10n, sequence: 0n, fee: { amount: [{ denom: DENOM, amount: 40 }] } });
  t.equal((await h.check(tx)).code, 0, 'CheckTx does not run messages');
  const r = (await h.block([tx])).txResults[0]!;
  t.equal(r.code, 5);
  t.equal(r.log, `failed to execute message; message index: 0: spendable balance ${DEV_BALANCE - 40n}${DENOM} is smaller than ${DEV_BALANCE * 2n}${DENOM}: insufficient funds`);
  t.same(attrs(r, 'tx')[1], { acc_seq: `${S0.bech32}/0` }, 'the ante events are kept');
  t.equal(h.account(S0.address)!.sequence, 1n, 'sequence incremented');
  t.equal(h.balance(S0.address), DEV_BALANCE - 40n, 'fee paid, nothing sent');
});

t.test('CheckTx state: sequences advance between checks; recheck skips the signature', async (t) => {
  const h = await startChain(t);
  t.equal((await h.check(send(S0, 10n, 0n))).code, 0);
  t.equal((await h.check(send(S0, 10n, 0n))).code, 32, 'the same sequence again is stale in the check state');
  t.equal((await h.check(send(S0, 10n, 1n))).code, 0);
  const bad = buildTx({ chainId: CHAIN_ID, msgs: [msgSend(S1.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S1, accountNumber: 11n, sequence: 0n, corrupt: true }] }).bytes;
  t.equal((await h.check(bad)).code, 4);
  t.equal((await h.check(bad, true)).code, 0, 'ReCheckTx does not verify signatures (SigVerificationDecorator)');
});

t.test('a fee payer other than the signer must sign too, and pays', async (t) => {
  const h = await startChain(t);
  const spec = {
    chainId: CHAIN_ID,
    msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 3 }])],
    fee: { amount: [{ denom: DENOM, amount: 77 }], payer: S1.bech32 },
  };
  const one = buildTx({ ...spec, signers: [{ key: S0, accountNumber: 10n, sequence: 0n }] }).bytes;
  await expectFail(t, h, one, { code: 4, log: 'invalid number of signatures: got 1 signatures and 2 signers: unauthorized' });
  const both = buildTx({ ...spec, signers: [{ key: S0, accountNumber: 10n, sequence: 0n }, { key: S1, accountNumber: 11n, sequence: 0n }] }).bytes;
  const r = (await h.block([both])).txResults[0]!;
  t.equal(r.code, 0, r.log);
  t.equal(h.balance(S1.address), DEV_BALANCE - 77n, 'the payer paid');
  t.equal(h.balance(S0.address), DEV_BALANCE - 3n);
  t.same([h.account(S0.address)!.sequence, h.account(S1.address)!.sequence], [1n, 1n], 'both sequences advance');
  const granter = buildTx({ chainId: CHAIN_ID, msgs: spec.msgs, signers: [{ key: S0, accountNumber: 10n, sequence: 1n }], fee: { granter: S1.bech32 } }).bytes;
  await expectFail(t, h, granter, { code: 18, log: 'fee grants are not enabled: invalid request' });
});

t.test('simulate: no signature needed, gas estimated with a stand-in key', async (t) => {
  const h = await startChain(t);
  const body = toBinary(TxBodySchema, create(TxBodySchema, { messages: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])] }));
  const authInfo = toBinary(
    AuthInfoSchema,
    create(AuthInfoSchema, {
      signerInfos: [
        create(SignerInfoSchema, {
          publicKey: encodePubKey({ algo: 'secp256k1', key: S0.publicKey }),
          modeInfo: create(ModeInfoSchema, { sum: { case: 'single', value: create(ModeInfo_SingleSchema, { mode: SignMode.UNSPECIFIED }) } }),
          sequence: 0n,
        }),
      ],
      fee: create(FeeSchema, { gasLimit: 200_000n }),
    }),
  );
  const tx = encodeTxRaw({ bodyBytes: body, authInfoBytes: authInfo, signatures: [new Uint8Array(0)] });
  const r = await h.app.simulate(tx);
  t.equal(r.code, 0, r.log);
  t.ok(r.gasUsed > 10n * BigInt(tx.length) + 1000n, 'size, the missing signature, signature gas and the send');
  t.equal(h.account(S0.address)!.sequence, 0n, 'nothing is kept');
  t.equal((await h.check(tx)).code, 4, 'the same tx is refused outside simulation');
});

t.test('timeout timestamp (42) against the block time; unordered txs are not enabled (37)', async (t) => {
  const h = await startChain(t);
  // Block 1 is at GENESIS_TIME + 1 s; CheckTx sees that time, block 2 is one second later.
  const ts = GENESIS_TIME + 500_000_000n;
  const tx = buildTx({ chainId: CHAIN_ID, msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 0n }], timeoutTimestamp: ts }).bytes;
  await expectFail(
    t,
    h,
    tx,
    { code: 42, log: 'block time: 2023-11-14 22:13:21 +0000 UTC, timeout timestamp: 2023-11-14 22:13:20.5 +0000 UTC: tx timeout' },
    { finalize: { code: 42, log: 'block time: 2023-11-14 22:13:22 +0000 UTC, timeout timestamp: 2023-11-14 22:13:20.5 +0000 UTC: tx timeout' } },
  );
  const later = buildTx({ chainId: CHAIN_ID, msgs: [msgSend(S0.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 0n }], timeoutTimestamp: GENESIS_TIME + 60_000_000_000n }).bytes;
  t.equal((await h.block([later])).txResults[0]!.code, 0, 'a timestamp still ahead is fine');
  const unordered = buildTx({ chainId: CHAIN_ID, msgs: [msgSend(S1.bech32, S2.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S1, accountNumber: 11n, sequence: 0n }], unordered: true, timeoutTimestamp: GENESIS_TIME + 60_000_000_000n }).bytes;
  await expectFail(t, h, unordered, { code: 37, log: 'unordered transactions are not enabled: feature not supported' });
});

t.test('a 2-of-3 multisig account (LegacyAminoPubKey, DIRECT parts)', async (t) => {
  const h = await startChain(t);
  const K3 = KEYS[13]!;
  const members: PubKey[] = [S0, S1, K3].map((k) => ({ algo: 'secp256k1', key: k.publicKey }));
  const msKey = create(LegacyAminoPubKeySchema, { threshold: 2, publicKeys: members.map((m) => encodePubKey(m as never)) });
  const msAny = packAny(LegacyAminoPubKeySchema, msKey);
  const msAddr = pubKeyAddress({ algo: 'multisig', threshold: 2, pubKeys: members });
  const ms = h.app.addressCodec.encode(msAddr);
  t.equal((await h.block([sendTx({ chainId: CHAIN_ID, from: S2, to: ms, amount: [{ denom: DENOM, amount: 100_000 }], accountNumber: 12n, sequence: 0n })])).txResults[0]!.code, 0, 'funded');
  t.equal(h.account(msAddr)!.accountNumber, 23n);

  const build = (bits: number[], signersOf: DevAccount[], seq: bigint, corruptLast = false) => {
    const bodyBytes = toBinary(TxBodySchema, create(TxBodySchema, { messages: [msgSend(ms, S2.bech32, [{ denom: DENOM, amount: 10 }])] }));
    const single = () => create(ModeInfoSchema, { sum: { case: 'single', value: create(ModeInfo_SingleSchema, { mode: SignMode.DIRECT }) } });
    const elems = Uint8Array.of(bits.reduce((acc, i) => acc | (0x80 >> i), 0));
    const modeInfo = create(ModeInfoSchema, {
      sum: { case: 'multi', value: create(ModeInfo_MultiSchema, { bitarray: create(CompactBitArraySchema, { extraBitsStored: 3, elems }), modeInfos: signersOf.map(single) }) },
    });
    const authInfoBytes = toBinary(
      AuthInfoSchema,
      create(AuthInfoSchema, { signerInfos: [create(SignerInfoSchema, { publicKey: msAny, modeInfo, sequence: seq })], fee: create(FeeSchema, { gasLimit: 300_000n }) }),
    );
    const signBytes = signBytesDirect(bodyBytes, authInfoBytes, CHAIN_ID, 23n);
    const sigs = signersOf.map((k) => signWith(k, signBytes));
    if (corruptLast) sigs[sigs.length - 1]![3] ^= 1;
    const multi = toBinary(MultiSignatureSchema, create(MultiSignatureSchema, { signatures: sigs }));
    return encodeTxRaw({ bodyBytes, authInfoBytes, signatures: [multi] });
  };
  const ok = (await h.block([build([0, 2], [S0, K3], 0n)])).txResults[0]!;
  t.equal(ok.code, 0, ok.log);
  t.equal(attrs(ok, 'tx').filter((a) => a['signature'] !== undefined).length, 3, 'tx.signature: both parts, then the MultiSignature');
  t.equal(h.account(msAddr)!.sequence, 1n);
  t.equal(h.account(msAddr)!.pubKey?.typeUrl, '/chain.crypto.multisig.LegacyAminoPubKey');
  await expectFail(t, h, build([1], [S1], 1n), { code: 4, log: `signature verification failed; please verify account number (23) and chain-id (${CHAIN_ID}): (signature size is incorrect 1): unauthorized` });
  await expectFail(t, h, build([0, 1], [S0, S1], 1n, true), { code: 4, log: `signature verification failed; please verify account number (23) and chain-id (${CHAIN_ID}): (unable to verify signature at index 1): unauthorized` });
  t.equal((await h.block([build([1, 2], [S1, K3], 1n)])).txResults[0]!.code, 0, 'another pair of members');
});
