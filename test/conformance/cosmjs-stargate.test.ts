/**
 * Unmodified CosmJS (@cosmjs/stargate 0.39 SigningStargateClient/StargateClient, @cosmjs/proto-signing
 * DirectSecp256k1HdWallet, @cosmjs/amino Secp256k1HdWallet) against a real in-process node with
 * `[compat] upstream-names = true`: the setting under which CosmJS needs no customisation at all
 * (cosmos/cosmjs:packages/stargate/src/signingstargateclient.ts lists what it would need otherwise). Nothing here rewrites
 * requests or answers: CosmJS asks `/cosmos.*` abci_query paths, signs `/cosmos.*` type URLs and
 * `cosmos-sdk/*` amino names, parses `/cosmos.auth.v1beta1.BaseAccount`, and polls tx_search.
 *
 * Covered: chain id, balances, accounts (number, sequence, pubkey after the first tx), sendTokens
 * DIRECT and AMINO, fee "auto" (tx Service/Simulate), the authz life cycle of spec §3 with a
 * SendAuthorization (grant → exec within the limit → exec beyond it refused → revoke → exec without
 * a grant refused; a second grant of the same triple overwrites; an expiration in the past is
 * refused; an expired grant is pruned), getTx/searchTx with string queries, and the
 * auth/bank/authz/tx query extensions.
 *
 * One thing stays in the spec spelling under upstream-names: the type URLs inside a result's `data`
 * (TxMsgData.msg_responses, which CosmJS exposes as `msgResponses`), because `data` is hashed into
 * LastResultsHash and cannot depend on a node's config (src/app/baseapp.ts runMsgs).
 */
import { Secp256k1HdWallet, encodeSecp256k1Pubkey, makeCosmoshubPath } from '@cosmjs/amino';
import { DirectSecp256k1HdWallet, encodePubkey, decodeTxRaw } from '@cosmjs/proto-signing';
import {
  GasPrice,
  QueryClient,
  SigningStargateClient,
  StargateClient,
  assertIsDeliverTxFailure,
  assertIsDeliverTxSuccess,
  defaultRegistryTypes,
  setupAuthExtension,
  setupAuthzExtension,
  setupBankExtension,
  setupTxExtension,
  type DeliverTxResponse,
  type StdFee,
} from '@cosmjs/stargate';
import { Comet38Client } from '@cosmjs/tendermint-rpc';
import { MsgExec, MsgExecResponse, MsgGrant, MsgRevoke } from 'cosmjs-types/cosmos/authz/v1beta1/tx';
import { SendAuthorization } from 'cosmjs-types/cosmos/bank/v1beta1/authz';
import { MsgSend } from 'cosmjs-types/cosmos/bank/v1beta1/tx';
import { BaseAccount } from 'cosmjs-types/cosmos/auth/v1beta1/auth';
import { Timestamp } from 'cosmjs-types/google/protobuf/timestamp';
import t from 'tap';
import { DEV_MNEMONIC } from '../../src/keys/devaccounts.js';
import { startTestNode, waitHeight } from '../helpers/inproc.js';
import { devKeys, freshKey } from '../helpers/txsign.js';

const DENOM = 'achain';
const DEV_BALANCE = 10n ** 24n;
const KEYS = devKeys();
const FEE: StdFee = { amount: [{ denom: DENOM, amount: '5000' }], gas: '200000' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function big(s: string | undefined): bigint {
  return BigInt(s ?? '0');
}

/** Events of a DeliverTxResponse as `type.key=value` strings. */
function flatEvents(r: DeliverTxResponse): string[] {
  return r.events.flatMap((e) => e.attributes.map((a) => `${e.type}.${a.key}=${a.value}`));
}

t.test('CosmJS SigningStargateClient against chaind with upstream names', async (t) => {
  const tn = await startTestNode({ flags: { 'compat.upstream-names': true } });
  t.teardown(() => tn.close());
  await waitHeight(tn, 2n);

  // Three DIRECT keys (m/44'/118'/0'/0/0..2 = the secp256k1 dev accounts 10..12) and one AMINO key (…/3).
  const direct = await DirectSecp256k1HdWallet.fromMnemonic(DEV_MNEMONIC, { prefix: 'chain', hdPaths: [0, 1, 2].map((i) => makeCosmoshubPath(i)) });
  const amino = await Secp256k1HdWallet.fromMnemonic(DEV_MNEMONIC, { prefix: 'chain', hdPaths: [makeCosmoshubPath(3)] });
  const [a0, a1, a2] = await direct.getAccounts();
  const [b0] = await amino.getAccounts();
  t.same([a0!.address, a1!.address, a2!.address, b0!.address], [KEYS[10]!.bech32, KEYS[11]!.bech32, KEYS[12]!.bech32, KEYS[13]!.bech32], 'CosmJS derives the dev addresses');
  const granter = a0!.address;
  const grantee = a1!.address;
  const recipient = freshKey(0x51).bech32; // no account until it receives funds

  const opts = { broadcastPollIntervalMs: 100, broadcastTimeoutMs: 60_000, gasPrice: GasPrice.fromString(`0.025${DENOM}`) };
  const client = await SigningStargateClient.connectWithSigner(tn.base, direct, opts);
  const aminoClient = await SigningStargateClient.connectWithSigner(tn.base, amino, opts);
  const reader = await StargateClient.connect(tn.base);
  const comet = await Comet38Client.connect(tn.base);
  const q = QueryClient.withExtensions(comet, setupAuthExtension, setupBankExtension, setupAuthzExtension, setupTxExtension);

  await t.test('chain id, balances, accounts before any tx', async (t) => {
    t.equal(await reader.getChainId(), 'inproc-1');
    t.ok((await reader.getHeight()) >= 2);
    const bal = await reader.getBalance(granter, DENOM);
    t.same(bal, { denom: DENOM, amount: DEV_BALANCE.toString() });
    t.same(await reader.getBalance(granter, 'nosuchdenom'), { denom: 'nosuchdenom', amount: '0' }, 'unknown denom is zero');
    t.same(await reader.getAllBalances(granter), [{ denom: DENOM, amount: DEV_BALANCE.toString() }]);
    t.same(await reader.getAllBalances(recipient), [], 'no balances for an unknown address');

    const acct = await reader.getAccount(granter);
    t.strictSame(acct, { address: granter, pubkey: null, accountNumber: 10n, sequence: 0 }, 'genesis account: number 10, sequence 0, no key yet');
    t.equal(await reader.getAccount(recipient), null, 'missing account is null (NotFound text CosmJS matches)');
    await t.rejects(reader.getSequence(recipient), /does not exist on chain/);
  });

  let firstSend: DeliverTxResponse;
  await t.test('sendTokens DIRECT', async (t) => {
    const r = await client.sendTokens(granter, recipient, [{ denom: DENOM, amount: '1000000' }], FEE, 'cosmjs direct');
    assertIsDeliverTxSuccess(r);
    firstSend = r;
    t.equal(r.code, 0);
    t.ok(r.height > 2);
    t.match(r.transactionHash, /^[0-9A-F]{64}$/);
    t.equal(r.gasWanted, 200000n);
    t.ok(r.gasUsed > 0n && r.gasUsed < 200000n, `gas used ${r.gasUsed}`);
    t.equal(r.msgResponses.length, 1, 'TxMsgData decoded by CosmJS');
    // `data` (TxMsgData) keeps the canonical spelling even under upstream-names: it is hashed into
    // LastResultsHash, so it cannot depend on a node's config (src/app/baseapp.ts runMsgs).
    t.equal(r.msgResponses[0]!.typeUrl, '/chain.bank.v1beta1.MsgSendResponse');
    const ev = flatEvents(r);
    t.ok(ev.includes('message.action=/cosmos.bank.v1beta1.MsgSend'), 'action in the upstream spelling');
    t.ok(ev.includes(`transfer.recipient=${recipient}`));
    t.ok(ev.includes('transfer.amount=1000000achain'));
    t.ok(ev.includes(`tx.fee=5000${DENOM}`));

    t.same(await reader.getBalance(recipient, DENOM), { denom: DENOM, amount: '1000000' });
    t.same(await reader.getBalance(granter, DENOM), { denom: DENOM, amount: (DEV_BALANCE - 1_000_000n - 5000n).toString() });
    const acct = await reader.getAccount(granter);
    t.equal(acct?.sequence, 1, 'sequence incremented');
    t.equal(acct?.accountNumber, 10n);
    t.same(acct?.pubkey, encodeSecp256k1Pubkey(a0!.pubkey), 'pubkey stored on the first tx');
    const rec = await reader.getAccount(recipient);
    t.ok(rec, 'recipient account created');
    t.ok((rec?.accountNumber ?? 0n) >= 20n, `new account number ${rec?.accountNumber} after the 20 dev accounts`);
    t.equal(rec?.sequence, 0);
  });

  await t.test('sendTokens AMINO (LEGACY_AMINO_JSON with cosmos-sdk/MsgSend)', async (t) => {
    const before = big((await reader.getBalance(recipient, DENOM)).amount);
    const r = await aminoClient.sendTokens(b0!.address, recipient, [{ denom: DENOM, amount: '777' }], FEE, 'cosmjs amino');
    assertIsDeliverTxSuccess(r);
    const tx = await reader.getTx(r.transactionHash);
    t.ok(tx, 'found by hash');
    const raw = decodeTxRaw(tx!.tx);
    t.equal(raw.authInfo.signerInfos[0]!.modeInfo?.single?.mode, 127, 'SIGN_MODE_LEGACY_AMINO_JSON');
    t.equal(raw.body.memo, 'cosmjs amino');
    t.equal(big((await reader.getBalance(recipient, DENOM)).amount), before + 777n);
    t.equal((await reader.getAccount(b0!.address))?.sequence, 1);
  });

  await t.test('fee "auto" simulates through cosmos.tx.v1beta1.Service/Simulate', async (t) => {
    const gas = await client.simulate(granter, [{ typeUrl: '/cosmos.bank.v1beta1.MsgSend', value: MsgSend.fromPartial({ fromAddress: granter, toAddress: recipient, amount: [{ denom: DENOM, amount: '1' }] }) }], '');
    t.ok(gas > 10_000 && gas < 200_000, `simulated gas ${gas}`);
    const r = await client.sendTokens(granter, recipient, [{ denom: DENOM, amount: '1' }], 'auto');
    assertIsDeliverTxSuccess(r);
    t.equal(Number(r.gasWanted), Math.ceil(gas * 1.4), 'gas limit = ceil(simulated × 1.4)');
    t.ok(r.gasUsed <= r.gasWanted);
  });

  const expiration = BigInt(Math.floor(Date.now() / 1000) + 3600);
  await t.test('MsgGrant of a SendAuthorization, then the authz queries', async (t) => {
    // CosmJS 0.39's default registry has the authz messages, not the authorization types: the
    // SendAuthorization Any is built with the cosmjs-types encoder, as a CosmJS user does.
    t.ok(defaultRegistryTypes.some(([url]) => url === '/cosmos.authz.v1beta1.MsgGrant'), 'MsgGrant in defaultRegistryTypes');
    t.equal(client.registry.lookupType('/cosmos.bank.v1beta1.SendAuthorization'), undefined);
    const auth = SendAuthorization.fromPartial({ spendLimit: [{ denom: DENOM, amount: '1000' }], allowList: [] });
    const r = await client.signAndBroadcast(
      granter,
      [
        {
          typeUrl: '/cosmos.authz.v1beta1.MsgGrant',
          value: MsgGrant.fromPartial({
            granter,
            grantee,
            grant: {
              authorization: { typeUrl: '/cosmos.bank.v1beta1.SendAuthorization', value: SendAuthorization.encode(auth).finish() },
              expiration: Timestamp.fromPartial({ seconds: expiration, nanos: 0 }),
            },
          }),
        },
      ],
      FEE,
    );
    assertIsDeliverTxSuccess(r);
    t.equal(r.msgResponses[0]?.typeUrl, '/chain.authz.v1beta1.MsgGrantResponse', 'canonical spelling in data (see above)');
    const ev = flatEvents(r);
    t.ok(ev.includes('message.action=/cosmos.authz.v1beta1.MsgGrant'), 'message.action');
    t.ok(ev.includes('cosmos.authz.v1beta1.EventGrant.msg_type_url="/cosmos.bank.v1beta1.MsgSend"'), `typed EventGrant, JSON values: ${ev.filter((e) => e.includes('EventGrant')).join(' ')}`);

    const g = await q.authz.grants(granter, grantee, '');
    t.equal(g.grants.length, 1);
    t.equal(g.grants[0]!.authorization?.typeUrl, '/cosmos.bank.v1beta1.SendAuthorization');
    t.same(SendAuthorization.decode(g.grants[0]!.authorization!.value).spendLimit, [{ denom: DENOM, amount: '1000' }]);
    t.equal(g.grants[0]!.expiration?.seconds, expiration);
    const byUrl = await q.authz.grants(granter, grantee, '/cosmos.bank.v1beta1.MsgSend');
    t.equal(byUrl.grants.length, 1, 'filter by msg type url (upstream spelling)');
    const byGranter = await q.authz.granterGrants(granter);
    t.same(byGranter.grants.map((x) => [x.granter, x.grantee, x.authorization?.typeUrl]), [[granter, grantee, '/cosmos.bank.v1beta1.SendAuthorization']]);
    const byGrantee = await q.authz.granteeGrants(grantee);
    t.same(byGrantee.grants.map((x) => [x.granter, x.grantee]), [[granter, grantee]]);
    t.same((await q.authz.granteeGrants(granter)).grants, [], 'the granter is nobody’s grantee');
  });

  const execMsg = (amount: string) => ({
    typeUrl: '/cosmos.authz.v1beta1.MsgExec',
    value: MsgExec.fromPartial({
      grantee,
      msgs: [client.registry.encodeAsAny({ typeUrl: '/cosmos.bank.v1beta1.MsgSend', value: MsgSend.fromPartial({ fromAddress: granter, toAddress: recipient, amount: [{ denom: DENOM, amount }] }) })],
    }),
  });

  await t.test('MsgExec of a MsgSend within the grant', async (t) => {
    const gBefore = big((await reader.getBalance(granter, DENOM)).amount);
    const eBefore = big((await reader.getBalance(grantee, DENOM)).amount);
    const rBefore = big((await reader.getBalance(recipient, DENOM)).amount);
    const r = await client.signAndBroadcast(grantee, [execMsg('400')], FEE);
    assertIsDeliverTxSuccess(r);
    t.equal(r.msgResponses[0]?.typeUrl, '/chain.authz.v1beta1.MsgExecResponse', 'canonical spelling in data');
    const execRes = MsgExecResponse.decode(r.msgResponses[0]!.value);
    t.equal(execRes.results.length, 1, 'one result per inner message');
    const ev = flatEvents(r);
    t.ok(ev.includes(`transfer.sender=${granter}`), 'the granter pays');
    t.ok(ev.includes('transfer.authz_msg_index=0'), 'inner events carry authz_msg_index');
    t.equal(big((await reader.getBalance(granter, DENOM)).amount), gBefore - 400n, 'granter −400');
    t.equal(big((await reader.getBalance(grantee, DENOM)).amount), eBefore - 5000n, 'grantee pays only the fee');
    t.equal(big((await reader.getBalance(recipient, DENOM)).amount), rBefore + 400n);
    const g = await q.authz.grants(granter, grantee, '/cosmos.bank.v1beta1.MsgSend');
    t.same(SendAuthorization.decode(g.grants[0]!.authorization!.value).spendLimit, [{ denom: DENOM, amount: '600' }], 'spend limit reduced to 600');
  });

  await t.test('MsgExec beyond the spend limit is refused', async (t) => {
    const gBefore = big((await reader.getBalance(granter, DENOM)).amount);
    const r = await client.signAndBroadcast(grantee, [execMsg('601')], FEE);
    assertIsDeliverTxFailure(r);
    t.equal(r.code, 5, 'sdk ErrInsufficientFunds');
    // baseapp's wrap around SendAuthorization.Accept's error (x/bank/types/send_authorization.go).
    t.equal(r.rawLog, 'failed to execute message; message index: 0: requested amount is more than spend limit: insufficient funds');
    t.equal(big((await reader.getBalance(granter, DENOM)).amount), gBefore, 'nothing moved');
    const g = await q.authz.grants(granter, grantee, '/cosmos.bank.v1beta1.MsgSend');
    t.same(SendAuthorization.decode(g.grants[0]!.authorization!.value).spendLimit, [{ denom: DENOM, amount: '600' }], 'limit unchanged');
    const tx = await reader.getTx(r.transactionHash);
    t.equal(tx?.code, 5, 'getTx shows the failure too');
  });

  await t.test('MsgRevoke, then Exec without a grant', async (t) => {
    const r = await client.signAndBroadcast(
      granter,
      [{ typeUrl: '/cosmos.authz.v1beta1.MsgRevoke', value: MsgRevoke.fromPartial({ granter, grantee, msgTypeUrl: '/cosmos.bank.v1beta1.MsgSend' }) }],
      FEE,
    );
    assertIsDeliverTxSuccess(r);
    t.ok(flatEvents(r).some((e) => e.startsWith('cosmos.authz.v1beta1.EventRevoke.')), 'EventRevoke');
    t.same((await q.authz.grants(granter, grantee, '')).grants, []);
    t.same((await q.authz.granterGrants(granter)).grants, []);
    await t.rejects(q.authz.grants(granter, grantee, '/cosmos.bank.v1beta1.MsgSend'), /authorization not found/);

    const again = await client.signAndBroadcast(grantee, [execMsg('1')], FEE);
    assertIsDeliverTxFailure(again);
    t.equal(again.code, 2);
    t.match(again.rawLog ?? '', /^failed to execute message; message index: 0: failed to get grant with given granter: chain1\w+, grantee: chain1\w+ & msgType: \/cosmos\.bank\.v1beta1\.MsgSend ?: authorization not found$/);

    const twice = await client.signAndBroadcast(
      granter,
      [{ typeUrl: '/cosmos.authz.v1beta1.MsgRevoke', value: MsgRevoke.fromPartial({ granter, grantee, msgTypeUrl: '/cosmos.bank.v1beta1.MsgSend' }) }],
      FEE,
    );
    assertIsDeliverTxFailure(twice);
    t.equal(twice.code, 2, 'revoking a missing grant: authz 2');
    t.match(twice.rawLog ?? '', /failed to delete grant with given granter: .*: authorization not found$/);
  });

  await t.test('grant lifecycle (spec §3): overwrite, expiration refused in the past, pruning', async (t) => {
    const holder = a2!.address;
    const to = freshKey(0x54).bech32;
    const grant = (limit: string, expSeconds?: bigint) => ({
      typeUrl: '/cosmos.authz.v1beta1.MsgGrant',
      value: MsgGrant.fromPartial({
        granter,
        grantee: holder,
        grant: {
          authorization: { typeUrl: '/cosmos.bank.v1beta1.SendAuthorization', value: SendAuthorization.encode(SendAuthorization.fromPartial({ spendLimit: [{ denom: DENOM, amount: limit }] })).finish() },
          expiration: expSeconds === undefined ? undefined : Timestamp.fromPartial({ seconds: expSeconds, nanos: 0 }),
        },
      }),
    });
    const exec = (amount: string) => ({
      typeUrl: '/cosmos.authz.v1beta1.MsgExec',
      value: MsgExec.fromPartial({ grantee: holder, msgs: [client.registry.encodeAsAny({ typeUrl: '/cosmos.bank.v1beta1.MsgSend', value: MsgSend.fromPartial({ fromAddress: granter, toAddress: to, amount: [{ denom: DENOM, amount }] }) })] }),
    });
    const limitOf = async () => {
      const gs = (await q.authz.granterGrants(granter)).grants.filter((g) => g.grantee === holder);
      return gs.map((g) => [SendAuthorization.decode(g.authorization!.value).spendLimit[0]?.amount, g.expiration?.seconds]);
    };
    const blockSeconds = async () => BigInt(Math.floor(Date.parse((await reader.getBlock()).header.time) / 1000));

    assertIsDeliverTxSuccess(await client.signAndBroadcast(granter, [grant('1000')], FEE));
    t.same(await limitOf(), [['1000', undefined]]);
    assertIsDeliverTxSuccess(await client.signAndBroadcast(granter, [grant('50')], FEE));
    t.same(await limitOf(), [['50', undefined]], 'the same (granter, grantee, type) triple overwrites the grant');

    const past = await client.signAndBroadcast(granter, [grant('50', (await blockSeconds()) - 60n)], FEE);
    assertIsDeliverTxFailure(past);
    t.equal(past.code, 3, 'authz ErrInvalidExpirationTime');
    t.match(past.rawLog ?? '', /expiration must be after the current block time \(.+\), got .+: expiration time of authorization should be more than current time$/);
    t.same(await limitOf(), [['50', undefined]], 'the refused grant changed nothing');

    // An expiration far ahead while the grant is used (no race with the chain's clock)...
    const far = (await blockSeconds()) + 3600n;
    assertIsDeliverTxSuccess(await client.signAndBroadcast(granter, [grant('50', far)], FEE));
    t.same(await limitOf(), [['50', far]], 'overwritten again, now with an expiration');
    const within = await client.signAndBroadcast(holder, [exec('20')], FEE);
    assertIsDeliverTxSuccess(within);
    t.same(await limitOf(), [['30', far]], 'Accept → Updated keeps the expiration');

    // ...then a near one: only this grant tx has to land before it (8 s of chain time), and the
    // expiry is waited for rather than raced.
    const exp = (await blockSeconds()) + 8n;
    assertIsDeliverTxSuccess(await client.signAndBroadcast(granter, [grant('30', exp)], FEE));
    t.same(await limitOf(), [['30', exp]], 'overwritten with a near expiration');

    // Wait for a block past the expiration: its BeginBlock prunes the grant (the expiry queue).
    const deadline = Date.now() + 60_000;
    while ((await blockSeconds()) <= exp && Date.now() < deadline) await sleep(200);
    t.ok((await blockSeconds()) > exp, 'chain time passed the expiration');
    t.same(await limitOf(), [], 'expired grant pruned');
    const late = await client.signAndBroadcast(holder, [exec('1')], FEE);
    assertIsDeliverTxFailure(late);
    t.equal(late.code, 2, 'no grant any more: authorization not found');
    t.same(await reader.getBalance(to, DENOM), { denom: DENOM, amount: '20' }, 'only the in-time exec moved funds');
  });

  await t.test('getTx and searchTx with string queries', async (t) => {
    const tx = await reader.getTx(firstSend.transactionHash);
    t.ok(tx);
    t.equal(tx!.hash, firstSend.transactionHash);
    t.equal(tx!.height, firstSend.height);
    t.equal(tx!.code, 0);
    t.equal(tx!.gasUsed, firstSend.gasUsed);
    t.same(tx!.msgResponses.map((m) => m.typeUrl), ['/chain.bank.v1beta1.MsgSendResponse']);
    const body = decodeTxRaw(tx!.tx).body;
    t.equal(body.messages[0]!.typeUrl, '/cosmos.bank.v1beta1.MsgSend');
    t.same(MsgSend.decode(body.messages[0]!.value).toAddress, recipient);
    t.equal(await reader.getTx('00'.repeat(32)), null, 'unknown hash is null');

    // sentFromOrTo, as CosmJS's removed helper did it: both queries, merged by hash.
    const sent = await reader.searchTx(`message.sender='${granter}'`);
    const received = await reader.searchTx(`transfer.recipient='${recipient}'`);
    t.ok(sent.some((x) => x.hash === firstSend.transactionHash), 'found by message.sender');
    t.ok(received.some((x) => x.hash === firstSend.transactionHash), 'found by transfer.recipient');
    // The recipient got: DIRECT send, AMINO send, the auto-fee send, one Exec — four successful txs.
    const okToRecipient = received.filter((x) => x.code === 0);
    t.equal(okToRecipient.length, 4, `successful transfers to the recipient: ${okToRecipient.map((x) => x.height).join(',')}`);
    const fromOrTo = new Map([...sent, ...received].map((x) => [x.hash, x]));
    t.ok(fromOrTo.size >= 5);
    const atHeight = await reader.searchTx(`tx.height=${firstSend.height}`);
    t.ok(atHeight.some((x) => x.hash === firstSend.transactionHash));
    const exact = await reader.searchTx(`tx.hash='${firstSend.transactionHash}'`);
    t.equal(exact.length, 1);
    const both = await reader.searchTx(`message.sender='${granter}' AND tx.height=${firstSend.height}`);
    t.same(both.map((x) => x.hash), [firstSend.transactionHash]);
    // Array form of SearchTxQuery.
    const pairs = await reader.searchTx([{ key: 'transfer.recipient', value: recipient }, { key: 'tx.height', value: firstSend.height }]);
    t.same(pairs.map((x) => x.hash), [firstSend.transactionHash]);
    t.same(await reader.searchTx(`message.sender='${freshKey(0x52).bech32}'`), []);
    // Indexed under the emitted (upstream) spelling.
    const byAction = await reader.searchTx(`message.action='/cosmos.bank.v1beta1.MsgSend' AND message.sender='${granter}'`);
    t.ok(byAction.some((x) => x.hash === firstSend.transactionHash), 'message.action in the upstream spelling is searchable');
  });

  await t.test('auth, bank, authz and tx query extensions', async (t) => {
    const any = await q.auth.account(granter);
    t.equal(any?.typeUrl, '/cosmos.auth.v1beta1.BaseAccount');
    const ba = BaseAccount.decode(any!.value);
    t.equal(ba.address, granter);
    t.equal(ba.accountNumber, 10n);
    t.equal(ba.pubKey?.typeUrl, '/cosmos.crypto.secp256k1.PubKey');
    t.same(ba.pubKey, encodePubkey(encodeSecp256k1Pubkey(a0!.pubkey)), 'stored key as CosmJS encodes it');
    t.ok(ba.sequence >= 4n);
    await t.rejects(q.auth.account(freshKey(0x53).bech32), /rpc error: code = NotFound desc = account chain1\w+ not found: key not found/);

    t.same(await q.bank.balance(grantee, DENOM), { denom: DENOM, amount: big((await reader.getBalance(grantee, DENOM)).amount).toString() });
    const all = await q.bank.allBalances(recipient);
    t.equal(all.length, 1);
    const supply = await q.bank.supplyOf(DENOM);
    t.equal(supply.denom, DENOM);
    t.ok(big(supply.amount) >= 20n * DEV_BALANCE, `supply ${supply.amount}`);
    const total = await q.bank.totalSupply();
    t.ok(total.supply.some((c) => c.denom === DENOM && c.amount === supply.amount), 'total supply lists the denom');

    // No grants left after the revoke.
    t.same((await q.authz.granteeGrants(grantee)).grants, []);

    const tx = await q.tx.getTx(firstSend.transactionHash);
    t.equal(tx.txResponse?.txhash, firstSend.transactionHash);
    t.equal(tx.txResponse?.height, BigInt(firstSend.height));
    t.equal(tx.tx?.body?.messages[0]?.typeUrl, '/cosmos.bank.v1beta1.MsgSend');
  });

  // Close every client before the node stops (the node's teardown runs after this body).
  client.disconnect();
  aminoClient.disconnect();
  reader.disconnect();
  comet.disconnect();
  await sleep(50);
});
