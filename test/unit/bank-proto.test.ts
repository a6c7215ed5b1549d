/**
 * x/bank over protobuf on the chain app: the `/chain.bank.v1beta1.MsgSend` route fed by the
 * protobuf tx decoder (and by a CosmJS-signed `/cosmos.bank.v1beta1.MsgSend`), recipient accounts
 * created through the auth hooks, the SDK's send errors, and the Query service with protobuf
 * request/response codecs (cosmos-sdk: x/bank/keeper/msg_server.go, grpc_query.go).
 */
import t from 'tap';
import { create, fromBinary } from '@bufbuild/protobuf';
import { CoinSchema } from '../../src/gen/chain/base/v1beta1/coin_pb.js';
import { MsgExecSchema, MsgGrantSchema } from '../../src/gen/chain/authz/v1beta1/tx_pb.js';
import { GrantSchema } from '../../src/gen/chain/authz/v1beta1/authz_pb.js';
import { SendAuthorizationSchema } from '../../src/gen/chain/bank/v1beta1/authz_pb.js';
import { DirectSecp256k1Wallet, makeAuthInfoBytes, makeSignDoc, encodePubkey } from '@cosmjs/proto-signing';
import { encodeSecp256k1Pubkey } from '@cosmjs/amino';
import { TxBody as CjTxBody, TxRaw as CjTxRaw } from 'cosmjs-types/cosmos/tx/v1beta1/tx';
import { MsgSend as CjMsgSend } from 'cosmjs-types/cosmos/bank/v1beta1/tx';
import { moduleAddress } from '../../src/app/address.js';
import { TxMsgDataSchema } from '../../src/gen/chain/base/abci/v1beta1/abci_pb.js';
import {
  QueryAllBalancesRequestSchema,
  QueryAllBalancesResponseSchema,
  QueryBalanceRequestSchema,
  QueryBalanceResponseSchema,
  QueryDenomMetadataRequestSchema,
  QueryDenomMetadataResponseSchema,
  QueryDenomOwnersRequestSchema,
  QueryDenomOwnersResponseSchema,
  QueryDenomsMetadataRequestSchema,
  QueryDenomsMetadataResponseSchema,
  QueryParamsRequestSchema,
  QueryParamsResponseSchema,
  QuerySendEnabledRequestSchema,
  QuerySendEnabledResponseSchema,
  QuerySpendableBalanceByDenomRequestSchema,
  QuerySpendableBalanceByDenomResponseSchema,
  QuerySpendableBalancesRequestSchema,
  QuerySpendableBalancesResponseSchema,
  QuerySupplyOfRequestSchema,
  QuerySupplyOfResponseSchema,
  QueryTotalSupplyRequestSchema,
  QueryTotalSupplyResponseSchema,
} from '../../src/gen/chain/bank/v1beta1/query_pb.js';
import { QueryAccountRequestSchema, QueryAccountResponseSchema } from '../../src/gen/chain/auth/v1beta1/query_pb.js';
import { BaseAccountSchema } from '../../src/gen/chain/auth/v1beta1/auth_pb.js';
import { toProtoJson } from '../../src/proto/json.js';
import { addressBytesToString } from '../../src/app/modules/auth/module.js';
import { startChain, CHAIN_ID, DENOM, DEV_BALANCE } from '../helpers/chainapp.js';
import { anyOf, buildTx, devKeys, freshKey, msgSend, sendTx } from '../helpers/txsign.js';

const KEYS = devKeys();
const S0 = KEYS[10]!;
const S1 = KEYS[11]!;
const E0 = KEYS[0]!;
const B = '/chain.bank.v1beta1.Query';
const TOTAL = DEV_BALANCE * 20n;

t.test('MsgSend from the protobuf decoder: transfer, events, MsgSendResponse, recipient account created', async (t) => {
  const h = await startChain(t);
  const fresh = freshKey(3);
  const tx = sendTx({ chainId: CHAIN_ID, from: S0, to: fresh.bech32, amount: [{ denom: DENOM, amount: 12345 }], accountNumber: 10n, sequence: 0n });
  const r = (await h.block([tx])).txResults[0]!;
  t.equal(r.code, 0, r.log);
  const data = fromBinary(TxMsgDataSchema, r.data);
  t.same(data.msgResponses.map((a) => [a.typeUrl, a.value.length]), [['/chain.bank.v1beta1.MsgSendResponse', 0]], 'TxMsgData.msg_responses');
  const ev = r.events.filter((e) => e.attributes.some((a) => a.key === 'msg_index')).map((e) => [e.type, Object.fromEntries(e.attributes.map((a) => [a.key, a.value]))]);
  t.same(ev, [
    ['message', { action: '/chain.bank.v1beta1.MsgSend', sender: S0.bech32, module: 'bank', msg_index: '0' }],
    ['coin_spent', { spender: S0.bech32, amount: `12345${DENOM}`, msg_index: '0' }],
    ['coin_received', { receiver: fresh.bech32, amount: `12345${DENOM}`, msg_index: '0' }],
    ['transfer', { recipient: fresh.bech32, sender: S0.bech32, amount: `12345${DENOM}`, msg_index: '0' }],
    ['message', { sender: S0.bech32, msg_index: '0' }],
  ]);
  const acc = h.account(fresh.address)!;
  t.same([acc.accountNumber, acc.sequence, acc.pubKey], [23n, 0n, undefined], 'the recipient got the next account number');
  const q = await h.query('/chain.auth.v1beta1.Query/Account', QueryAccountRequestSchema, { address: fresh.bech32 }, QueryAccountResponseSchema);
  t.equal(fromBinary(BaseAccountSchema, q.res!.account!.value).accountNumber, 23n);
  t.equal(h.balance(fresh.address), 12345n);
  // A second send to an existing account creates nothing.
  await h.block([sendTx({ chainId: CHAIN_ID, from: S0, to: fresh.bech32, amount: [{ denom: DENOM, amount: 1 }], accountNumber: 10n, sequence: 1n })]);
  t.equal(h.app.auth.keeper.peekAccountNumber(h.ctx()), 24n);
});

t.test('a CosmJS-signed /cosmos.bank.v1beta1.MsgSend (DirectSecp256k1Wallet, cosmjs-types) is accepted', async (t) => {
  const h = await startChain(t);
  const wallet = await DirectSecp256k1Wallet.fromKey(S0.privateKey, 'chain');
  const [account] = await wallet.getAccounts();
  t.equal(account!.address, S0.bech32);
  const msg = CjMsgSend.fromPartial({ fromAddress: S0.bech32, toAddress: S1.bech32, amount: [{ denom: DENOM, amount: '4242' }] });
  const bodyBytes = CjTxBody.encode(CjTxBody.fromPartial({ messages: [{ typeUrl: '/cosmos.bank.v1beta1.MsgSend', value: CjMsgSend.encode(msg).finish() }], memo: 'cosmjs' })).finish();
  const authInfoBytes = makeAuthInfoBytes([{ pubkey: encodePubkey(encodeSecp256k1Pubkey(account!.pubkey)), sequence: 0 }], [{ denom: DENOM, amount: '500' }], 100_000, undefined, undefined);
  const { signature } = await wallet.signDirect(S0.bech32, makeSignDoc(bodyBytes, authInfoBytes, CHAIN_ID, 10));
  const tx = CjTxRaw.encode(CjTxRaw.fromPartial({ bodyBytes, authInfoBytes, signatures: [Buffer.from(signature.signature, 'base64')] })).finish();
  t.equal((await h.check(tx)).code, 0);
  const r = (await h.block([tx])).txResults[0]!;
  t.equal(r.code, 0, r.log);
  t.equal(h.balance(S1.address), DEV_BALANCE + 4242n);
  t.equal(h.balance(S0.address), DEV_BALANCE - 4242n - 500n);
  t.equal(h.account(S0.address)!.pubKey!.typeUrl, '/chain.crypto.secp256k1.PubKey');
});

t.test('send errors: blocked module accounts, invalid coins, disabled denoms', async (t) => {
  const h = await startChain(t, {
    appState: (s) => {
      s['bank'].send_enabled = [{ denom: 'locked', enabled: false }];
    },
  });
  const fc = addressBytesToString('chain', moduleAddress('fee_collector'));
  const gov = addressBytesToString('chain', moduleAddress('gov'));
  let seq = 0n;
  const run = async (to: string, amount: { denom: string; amount: number | string }[]) => {
    const tx = buildTx({ chainId: CHAIN_ID, msgs: [msgSend(S0.bech32, to, amount)], signers: [{ key: S0, accountNumber: 10n, sequence: seq++ }] }).bytes;
    return (await h.block([tx])).txResults[0]!;
  };
  const blocked = await run(fc, [{ denom: DENOM, amount: 1 }]);
  t.same([blocked.code, blocked.log], [4, `failed to execute message; message index: 0: ${fc} is not allowed to receive funds: unauthorized`]);
  t.equal((await run(gov, [{ denom: DENOM, amount: 1 }])).code, 0, 'gov may receive funds (app.go BlockedAddresses)');
  const zero = await run(S1.bech32, [{ denom: DENOM, amount: 0 }]);
  t.same([zero.code, zero.log], [10, `failed to execute message; message index: 0: 0${DENOM}: invalid coins`]);
  const locked = await run(S1.bech32, [{ denom: 'locked', amount: 1 }]);
  t.same([locked.codespace, locked.code, locked.log], ['bank', 5, 'failed to execute message; message index: 0: locked transfers are currently disabled: send transactions are disabled']);
  const badTo = await run('chain1xyz', [{ denom: DENOM, amount: 1 }]);
  t.equal(badTo.code, 7);
  t.match(badTo.log, /^failed to execute message; message index: 0: invalid to address: decoding bech32 failed/);
  t.equal(h.account(S0.address)!.sequence, 5n, 'each failed message still took a sequence');
});

t.test('Query service in protobuf', async (t) => {
  const h = await startChain(t);
  await h.block([sendTx({ chainId: CHAIN_ID, from: E0, to: S1.bech32, amount: [{ denom: DENOM, amount: 10 }], accountNumber: 0n, sequence: 0n, fee: { amount: [{ denom: DENOM, amount: 3 }] } })]);

  const bal = await h.query(`${B}/Balance`, QueryBalanceRequestSchema, { address: S1.bech32, denom: DENOM }, QueryBalanceResponseSchema);
  t.same(toProtoJson(QueryBalanceResponseSchema, bal.res!), { balance: { denom: DENOM, amount: String(DEV_BALANCE + 10n) } });
  const upstream = await h.query(`/cosmos.bank.v1beta1.Query/Balance`, QueryBalanceRequestSchema, { address: S1.bech32, denom: DENOM }, QueryBalanceResponseSchema);
  t.same(upstream.res, bal.res, 'the upstream path is an alias');
  const zero = await h.query(`${B}/Balance`, QueryBalanceRequestSchema, { address: S1.bech32, denom: 'uother' }, QueryBalanceResponseSchema);
  t.same(toProtoJson(QueryBalanceResponseSchema, zero.res!), { balance: { denom: 'uother', amount: '0' } });
  const badDenom = await h.query(`${B}/Balance`, QueryBalanceRequestSchema, { address: S1.bech32, denom: '1x' }, QueryBalanceResponseSchema);
  t.same([badDenom.code, badDenom.log], [18, 'rpc error: code = InvalidArgument desc = invalid denom: 1x: invalid request']);
  const badAddr = await h.query(`${B}/Balance`, QueryBalanceRequestSchema, { address: 'cosmos1w508d6qejxtdg4y5r3zarvary0c5xw7k6ah60c', denom: DENOM }, QueryBalanceResponseSchema);
  t.same([badAddr.code, badAddr.log], [18, 'rpc error: code = InvalidArgument desc = invalid address: invalid Bech32 prefix; expected chain, got cosmos: invalid request']);

  const all = await h.query(`${B}/AllBalances`, QueryAllBalancesRequestSchema, { address: S1.bech32 }, QueryAllBalancesResponseSchema);
  t.same(toProtoJson(QueryAllBalancesResponseSchema, all.res!), { balances: [{ denom: DENOM, amount: String(DEV_BALANCE + 10n) }], pagination: { next_key: null, total: '1' } });
  const resolved = await h.query(`${B}/AllBalances`, QueryAllBalancesRequestSchema, { address: S1.bech32, resolveDenom: true }, QueryAllBalancesResponseSchema);
  t.equal(resolved.res!.balances[0]!.denom, 'chain', 'resolve_denom: the metadata display denom');
  const spendable = await h.query(`${B}/SpendableBalances`, QuerySpendableBalancesRequestSchema, { address: S1.bech32 }, QuerySpendableBalancesResponseSchema);
  t.same(spendable.res!.balances, all.res!.balances);
  const byDenom = await h.query(`${B}/SpendableBalanceByDenom`, QuerySpendableBalanceByDenomRequestSchema, { address: S1.bech32, denom: DENOM }, QuerySpendableBalanceByDenomResponseSchema);
  t.equal(byDenom.res!.balance!.amount, String(DEV_BALANCE + 10n));

  const supply = await h.query(`${B}/TotalSupply`, QueryTotalSupplyRequestSchema, {}, QueryTotalSupplyResponseSchema);
  t.same(toProtoJson(QueryTotalSupplyResponseSchema, supply.res!), { supply: [{ denom: DENOM, amount: String(TOTAL) }], pagination: { next_key: null, total: '1' } });
  const supplyOf = await h.query(`${B}/SupplyOf`, QuerySupplyOfRequestSchema, { denom: DENOM }, QuerySupplyOfResponseSchema);
  t.equal(supplyOf.res!.amount!.amount, String(TOTAL), 'fees move coins, not supply');

  const params = await h.query(`${B}/Params`, QueryParamsRequestSchema, {}, QueryParamsResponseSchema);
  t.same(toProtoJson(QueryParamsResponseSchema, params.res!), { params: { send_enabled: [], default_send_enabled: true } });
  const meta = await h.query(`${B}/DenomMetadata`, QueryDenomMetadataRequestSchema, { denom: DENOM }, QueryDenomMetadataResponseSchema);
  t.same([meta.res!.metadata!.display, meta.res!.metadata!.denomUnits.map((u) => [u.denom, u.exponent])], ['chain', [[DENOM, 0], ['chain', 18]]]);
  const metaNf = await h.query(`${B}/DenomMetadata`, QueryDenomMetadataRequestSchema, { denom: 'nope' }, QueryDenomMetadataResponseSchema);
  t.same([metaNf.code, metaNf.log], [22, 'rpc error: code = NotFound desc = client metadata for denom nope: key not found']);
  const metas = await h.query(`${B}/DenomsMetadata`, QueryDenomsMetadataRequestSchema, {}, QueryDenomsMetadataResponseSchema);
  t.same(metas.res!.metadatas.map((m) => m.base), [DENOM]);

  const owners = await h.query(`${B}/DenomOwners`, QueryDenomOwnersRequestSchema, { denom: DENOM, pagination: { limit: 2n, countTotal: true } as never }, QueryDenomOwnersResponseSchema);
  t.equal(owners.res!.denomOwners.length, 2);
  t.equal(owners.res!.pagination!.total, 21n, '20 dev accounts and the fee collector hold achain');
  t.ok(owners.res!.pagination!.nextKey.length > 0);

  const se = await h.query(`${B}/SendEnabled`, QuerySendEnabledRequestSchema, {}, QuerySendEnabledResponseSchema);
  t.same(toProtoJson(QuerySendEnabledResponseSchema, se.res!), { send_enabled: [], pagination: { next_key: null, total: '0' } });

  // BaseApp.queryObject callers may pass the JSON shape.
  const obj = h.app.queryObject<{ balance?: { amount: string } }>(`${B}/Balance`, { address: S1.bech32, denom: DENOM }).response;
  t.equal(obj.balance!.amount, String(DEV_BALANCE + 10n));
  // An undecodable request is an invalid request.
  const raw = await h.app.query({ path: `${B}/Balance`, data: Uint8Array.of(0x0a, 0x05, 0x01), height: 0n, prove: false });
  t.same([raw.code, raw.codespace], [18, 'sdk']);
});

t.test('authz in the chain app: a SendAuthorization grant, then MsgExec of the granter’s MsgSend signed by the grantee', async (t) => {
  const h = await startChain(t);
  const grantee = freshKey(21);
  const spendLimit = [create(CoinSchema, { denom: DENOM, amount: '1000' })];
  const grant = create(MsgGrantSchema, {
    granter: S0.bech32,
    grantee: grantee.bech32,
    grant: create(GrantSchema, { authorization: anyOf(SendAuthorizationSchema, create(SendAuthorizationSchema, { spendLimit })) }),
  });
  const g = (await h.block([buildTx({ chainId: CHAIN_ID, msgs: [anyOf(MsgGrantSchema, grant)], signers: [{ key: S0, accountNumber: 10n, sequence: 0n }] }).bytes])).txResults[0]!;
  t.equal(g.code, 0, g.log);
  const acc = h.account(grantee.address)!;
  t.equal(acc.accountNumber, 23n, 'MsgGrant created the grantee account through the auth hooks');
  const exec = create(MsgExecSchema, { grantee: grantee.bech32, msgs: [msgSend(S0.bech32, S1.bech32, [{ denom: DENOM, amount: 600 }])] });
  const e = (await h.block([buildTx({ chainId: CHAIN_ID, msgs: [anyOf(MsgExecSchema, exec)], signers: [{ key: grantee, accountNumber: 23n, sequence: 0n }] }).bytes])).txResults[0]!;
  t.equal(e.code, 0, e.log);
  t.equal(h.balance(S1.address), DEV_BALANCE + 600n, 'the granter’s coins moved');
  t.equal(h.account(grantee.address)!.sequence, 1n, 'the grantee signed');
  t.equal(h.account(S0.address)!.sequence, 1n, 'the granter did not sign the exec');
  const over = create(MsgExecSchema, { grantee: grantee.bech32, msgs: [msgSend(S0.bech32, S1.bech32, [{ denom: DENOM, amount: 600 }])] });
  const o = (await h.block([buildTx({ chainId: CHAIN_ID, msgs: [anyOf(MsgExecSchema, over)], signers: [{ key: grantee, accountNumber: 23n, sequence: 1n }] }).bytes])).txResults[0]!;
  t.equal(o.code, 5, `over the remaining limit: ${o.log}`);
});
