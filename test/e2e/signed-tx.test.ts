/**
 * End to end on a real in-process node (test/helpers/inproc.ts: `chaind init --dev`, LMDB,
 * consensus, mempool, the worker pool, the node RPC on loopback): signed MsgSend txs — secp256k1
 * DIRECT and eth_secp256k1 LEGACY_AMINO_JSON — sent through `broadcast_tx_commit`, then balances
 * and the sender's account (sequence, stored key) read back through `abci_query` with protobuf
 * requests and answers, as CosmJS reads them. A stale sequence and a bad signature come back as
 * CheckTx results with the SDK's codes.
 *
 * Needs the node to run the chain app (src/app/chain.ts createChainApp with the protobuf tx
 * decoder); with the old bank-only wiring every tx fails with `no tx decoder configured`.
 */
import t from 'tap';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { BaseAccountSchema } from '../../src/gen/chain/auth/v1beta1/auth_pb.js';
import { QueryAccountRequestSchema, QueryAccountResponseSchema } from '../../src/gen/chain/auth/v1beta1/query_pb.js';
import { QueryBalanceRequestSchema, QueryBalanceResponseSchema } from '../../src/gen/chain/bank/v1beta1/query_pb.js';
import { startTestNode, waitHeight, type TestNode } from '../helpers/inproc.js';
import { buildTx, devKeys, msgSend } from '../helpers/txsign.js';

const KEYS = devKeys();
const E0 = KEYS[0]!; // eth_secp256k1, account 0
const S0 = KEYS[10]!; // secp256k1, account 10
const S1 = KEYS[11]!;
const DENOM = 'achain';
const DEV_BALANCE = 10n ** 24n;

async function rpc(tn: TestNode, method: string, params: Record<string, unknown>): Promise<any> {
  const r = await fetch(`${tn.base}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await r.json()) as { error?: unknown; result: any };
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

async function abciQuery(tn: TestNode, path: string, data: Uint8Array): Promise<{ code: number; log: string; value: Uint8Array; height: string }> {
  const r = await rpc(tn, 'abci_query', { path, data: Buffer.from(data).toString('hex') });
  return { code: r.response.code, log: r.response.log, value: Buffer.from(r.response.value ?? '', 'base64'), height: r.response.height };
}

async function balance(tn: TestNode, address: string): Promise<bigint> {
  const q = await abciQuery(tn, '/chain.bank.v1beta1.Query/Balance', toBinary(QueryBalanceRequestSchema, create(QueryBalanceRequestSchema, { address, denom: DENOM })));
  if (q.code !== 0) throw new Error(q.log);
  return BigInt(fromBinary(QueryBalanceResponseSchema, q.value).balance!.amount);
}

async function account(tn: TestNode, address: string) {
  // The upstream path, as CosmJS asks it.
  const q = await abciQuery(tn, '/cosmos.auth.v1beta1.Query/Account', toBinary(QueryAccountRequestSchema, create(QueryAccountRequestSchema, { address })));
  if (q.code !== 0) throw new Error(q.log);
  if (q.height === '0') throw new Error('abci_query answered with height 0 (CosmJS refuses that)');
  const any = fromBinary(QueryAccountResponseSchema, q.value).account!;
  return { typeUrl: any.typeUrl, ...fromBinary(BaseAccountSchema, any.value) };
}

t.test('signed MsgSend through broadcast_tx_commit: balances and sequence', async (t) => {
  const tn = await startTestNode({ timeoutCommit: '100ms' });
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);
  const chainId = tn.ctx.genesis.chainId;

  const before = { s0: await balance(tn, S0.bech32), s1: await balance(tn, S1.bech32) };
  t.same(before, { s0: DEV_BALANCE, s1: DEV_BALANCE }, 'dev accounts start funded');
  const a0 = await account(tn, S0.bech32);
  t.same([a0.accountNumber, a0.sequence, a0.pubKey], [10n, 0n, undefined]);

  // secp256k1, SIGN_MODE_DIRECT, with a fee.
  const tx1 = buildTx({
    chainId,
    msgs: [msgSend(S0.bech32, S1.bech32, [{ denom: DENOM, amount: 1_000_000 }])],
    signers: [{ key: S0, accountNumber: 10n, sequence: 0n }],
    fee: { amount: [{ denom: DENOM, amount: 5000 }], gasLimit: 200_000n },
  }).bytes;
  const r1 = await rpc(tn, 'broadcast_tx_commit', { tx: Buffer.from(tx1).toString('base64') });
  t.equal(r1.check_tx.code, 0, `check_tx: ${r1.check_tx.log}`);
  t.equal(r1.tx_result.code, 0, `tx_result: ${r1.tx_result.log}`);
  t.not(r1.height, '0', 'included in a block');
  t.equal(r1.tx_result.gas_wanted, '200000');
  const evTypes = new Set((r1.tx_result.events as { type: string }[]).map((e) => e.type));
  t.ok(['tx', 'message', 'coin_spent', 'coin_received', 'transfer'].every((x) => evTypes.has(x)), 'the SDK events are in the tx result');

  t.equal(await balance(tn, S0.bech32), DEV_BALANCE - 1_000_000n - 5000n, 'sender paid amount and fee');
  t.equal(await balance(tn, S1.bech32), DEV_BALANCE + 1_000_000n, 'recipient credited');
  const a1 = await account(tn, S0.bech32);
  t.equal(a1.sequence, 1n, 'sequence incremented');
  t.equal(a1.pubKey?.typeUrl, '/chain.crypto.secp256k1.PubKey', 'key stored on first use');

  // The same sequence again: refused by CheckTx with the SDK's code.
  const stale = buildTx({ chainId, msgs: [msgSend(S0.bech32, S1.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 0n }] }).bytes;
  const r2 = await rpc(tn, 'broadcast_tx_commit', { tx: Buffer.from(stale).toString('base64') });
  t.same([r2.check_tx.code, r2.check_tx.codespace, r2.check_tx.log, r2.height], [32, 'sdk', 'account sequence mismatch, expected 1, got 0: incorrect account sequence', '0']);

  // A bad signature.
  const bad = buildTx({ chainId, msgs: [msgSend(S0.bech32, S1.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 1n, corrupt: true }] }).bytes;
  const r3 = await rpc(tn, 'broadcast_tx_commit', { tx: Buffer.from(bad).toString('base64') });
  t.same([r3.check_tx.code, r3.check_tx.log], [4, `signature verification failed; please verify account number (10) and chain-id (${chainId}): (unable to verify single signer signature): unauthorized`]);

  // eth_secp256k1 with LEGACY_AMINO_JSON in the upstream spelling (what Keplr/CosmJS amino signers sign).
  const tx4 = buildTx({
    chainId,
    msgs: [msgSend(E0.bech32, S1.bech32, [{ denom: DENOM, amount: 777 }], true)],
    signers: [{ key: E0, accountNumber: 0n, sequence: 0n, mode: 'amino', aminoUpstream: true }],
    upstreamKeyTypes: true,
  }).bytes;
  const r4 = await rpc(tn, 'broadcast_tx_commit', { tx: Buffer.from(tx4).toString('base64') });
  t.equal(r4.tx_result.code, 0, `eth amino: ${r4.check_tx.log}${r4.tx_result.log}`);
  t.equal(await balance(tn, S1.bech32), DEV_BALANCE + 1_000_000n + 777n);
  const e0 = await account(tn, E0.bech32);
  t.same([e0.typeUrl, e0.sequence, e0.pubKey?.typeUrl], ['/chain.auth.v1beta1.BaseAccount', 1n, '/chain.evm.crypto.v1.ethsecp256k1.PubKey']);

  // The next tx of S0 (sequence 1, no key in the signer info) goes through too.
  const tx5 = buildTx({ chainId, msgs: [msgSend(S0.bech32, S1.bech32, [{ denom: DENOM, amount: 1 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 1n, withPubKey: false }] }).bytes;
  const r5 = await rpc(tn, 'broadcast_tx_commit', { tx: Buffer.from(tx5).toString('base64') });
  t.equal(r5.tx_result.code, 0, r5.tx_result.log);
  t.equal((await account(tn, S0.bech32)).sequence, 2n);
});
