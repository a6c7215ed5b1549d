/**
 * CosmJS against a node with the DEFAULT (spec) names: `chain.*` type URLs and REST roots,
 * `consensus/…` key types. CosmJS is unmodified; the test uses only the hooks a CosmJS user has
 * (test/helpers/cosmjs-chain.ts; cosmos/cosmjs:packages/stargate/src/signingstargateclient.ts): a Comet38Client over a
 * wrapped HttpClient, an accountParser, a Registry of `/chain.*` type URLs (the cosmjs-types
 * encoders registered under them) and AminoTypes with `chain-sdk/MsgSend`.
 *
 * Shows: which customisations are really needed (plain `connect` fails on the key type; the query
 * path rewrite is not needed because the node accepts `/cosmos.` paths), a DIRECT send and an AMINO
 * send with `/chain.bank.v1beta1.MsgSend`, the spec names in events, results and stored accounts,
 * and a grant/exec with `/chain.authz.v1beta1.*` messages.
 */
import { Secp256k1HdWallet, encodeSecp256k1Pubkey, makeCosmoshubPath } from '@cosmjs/amino';
import { DirectSecp256k1HdWallet, decodeTxRaw } from '@cosmjs/proto-signing';
import {
  QueryClient,
  SigningStargateClient,
  StargateClient,
  assertIsDeliverTxFailure,
  assertIsDeliverTxSuccess,
  setupAuthExtension,
  setupAuthzExtension,
  setupBankExtension,
  type DeliverTxResponse,
  type StdFee,
} from '@cosmjs/stargate';
import { BaseAccount } from 'cosmjs-types/cosmos/auth/v1beta1/auth';
import { MsgExec, MsgExecResponse, MsgGrant } from 'cosmjs-types/cosmos/authz/v1beta1/tx';
import { SendAuthorization } from 'cosmjs-types/cosmos/bank/v1beta1/authz';
import { MsgSend } from 'cosmjs-types/cosmos/bank/v1beta1/tx';
import t from 'tap';
import { DEV_MNEMONIC } from '../../src/keys/devaccounts.js';
import { chainAccountParser, chainAminoTypes, chainComet, chainRegistry } from '../helpers/cosmjs-chain.js';
import { startTestNode, waitHeight } from '../helpers/inproc.js';
import { devKeys, freshKey } from '../helpers/txsign.js';

const DENOM = 'achain';
const DEV_BALANCE = 10n ** 24n;
const KEYS = devKeys();
const FEE: StdFee = { amount: [{ denom: DENOM, amount: '5000' }], gas: '200000' };

function flatEvents(r: DeliverTxResponse): string[] {
  return r.events.flatMap((e) => e.attributes.map((a) => `${e.type}.${a.key}=${a.value}`));
}

t.test('CosmJS with a /chain.* registry against chaind with the default names', async (t) => {
  const tn = await startTestNode();
  t.teardown(() => tn.close());
  await waitHeight(tn, 2n);

  const direct = await DirectSecp256k1HdWallet.fromMnemonic(DEV_MNEMONIC, { prefix: 'chain', hdPaths: [makeCosmoshubPath(4), makeCosmoshubPath(5)] });
  const amino = await Secp256k1HdWallet.fromMnemonic(DEV_MNEMONIC, { prefix: 'chain', hdPaths: [makeCosmoshubPath(6)] });
  const [d0, d1] = await direct.getAccounts();
  const [m0] = await amino.getAccounts();
  t.same([d0!.address, d1!.address, m0!.address], [KEYS[14]!.bech32, KEYS[15]!.bech32, KEYS[16]!.bech32]);
  const recipient = freshKey(0x61).bech32;

  await t.test('unmodified StargateClient.connect refuses the spec key type in /status', async (t) => {
    const st = (await (await fetch(`${tn.base}/status`)).json()) as { result: { validator_info: { pub_key: { type: string } }; node_info: { version: string } } };
    t.equal(st.result.validator_info.pub_key.type, 'consensus/PubKeyEd25519', 'spec key type on the wire');
    t.match(st.result.node_info.version, /^0\.38\./, 'CosmJS picks Comet38Client from the version');
    await t.rejects(StargateClient.connect(tn.base), /unknown pubkey type/i, 'CosmJS refuses the renamed pubkey type');
  });

  const { comet, counts } = chainComet(tn.base);
  const noRewrite = chainComet(tn.base, { rewriteQueryPaths: false });
  const reader = StargateClient.create(noRewrite.comet, { accountParser: chainAccountParser });
  const opts = { registry: chainRegistry(), aminoTypes: chainAminoTypes(), accountParser: chainAccountParser, broadcastPollIntervalMs: 100, broadcastTimeoutMs: 60_000 };
  const client = SigningStargateClient.createWithSigner(comet, direct, opts);
  const aminoComet = chainComet(tn.base);
  const aminoClient = SigningStargateClient.createWithSigner(aminoComet.comet, amino, opts);
  const q = QueryClient.withExtensions(noRewrite.comet, setupAuthExtension, setupBankExtension, setupAuthzExtension);

  await t.test('queries: chain id, account, balance (the node accepts /cosmos. query paths)', async (t) => {
    t.equal(await client.getChainId(), 'inproc-1');
    t.ok(counts.keyTypes >= 1, 'the wrapper had to rewrite consensus/PubKeyEd25519');
    t.strictSame(await reader.getAccount(d0!.address), { address: d0!.address, pubkey: null, accountNumber: 14n, sequence: 0 });
    t.equal(noRewrite.counts.queryPaths, 0, 'asked with /cosmos.auth.v1beta1.Query/Account unchanged');
    t.same(await reader.getBalance(d0!.address, DENOM), { denom: DENOM, amount: DEV_BALANCE.toString() });
    const any = await q.auth.account(d0!.address);
    t.equal(any?.typeUrl, '/chain.auth.v1beta1.BaseAccount', 'the answer is in the spec spelling');
    t.equal(await reader.getAccount(recipient), null, 'NotFound text still matches CosmJS');
  });

  let sent: DeliverTxResponse;
  await t.test('DIRECT /chain.bank.v1beta1.MsgSend', async (t) => {
    const msg = { typeUrl: '/chain.bank.v1beta1.MsgSend', value: MsgSend.fromPartial({ fromAddress: d0!.address, toAddress: recipient, amount: [{ denom: DENOM, amount: '2500' }] }) };
    const r = await client.signAndBroadcast(d0!.address, [msg], FEE, 'spec names');
    assertIsDeliverTxSuccess(r);
    sent = r;
    t.ok(counts.queryPaths >= 1, 'the signing client’s account query went out as /chain.auth.v1beta1.Query/Account');
    const ev = flatEvents(r);
    t.ok(ev.includes('message.action=/chain.bank.v1beta1.MsgSend'), 'message.action in the spec spelling');
    t.ok(ev.includes('message.module=bank'));
    t.ok(ev.includes(`message.sender=${d0!.address}`));
    t.ok(ev.includes(`transfer.recipient=${recipient}`));
    t.ok(ev.includes('transfer.amount=2500achain'));
    t.same(r.msgResponses.map((m) => m.typeUrl), ['/chain.bank.v1beta1.MsgSendResponse'], 'TxMsgData in the spec spelling');

    t.same(await reader.getBalance(recipient, DENOM), { denom: DENOM, amount: '2500' });
    t.same(await reader.getBalance(d0!.address, DENOM), { denom: DENOM, amount: (DEV_BALANCE - 2500n - 5000n).toString() });
    const acct = await reader.getAccount(d0!.address);
    t.equal(acct?.sequence, 1);
    t.same(acct?.pubkey, encodeSecp256k1Pubkey(d0!.pubkey), 'accountParser decodes the stored key');
    const raw = BaseAccount.decode((await q.auth.account(d0!.address))!.value);
    t.equal(raw.pubKey?.typeUrl, '/chain.crypto.secp256k1.PubKey', 'the key CosmJS sent as /cosmos.crypto.secp256k1.PubKey is emitted in the spec spelling');

    const tx = await reader.getTx(r.transactionHash);
    t.equal(tx?.code, 0);
    t.equal(decodeTxRaw(tx!.tx).body.messages[0]!.typeUrl, '/chain.bank.v1beta1.MsgSend');
    const found = await reader.searchTx(`message.action='/chain.bank.v1beta1.MsgSend' AND message.sender='${d0!.address}'`);
    t.same(found.map((x) => x.hash), [r.transactionHash], 'indexed under the spec action');
    // CometBFT 0.38's kv indexer rule (cometbft/cometbft:state/txindex/kv/kv.go): conditions must hold within one event, so
    // an AND across the message and transfer events finds nothing, on chaind as on CometBFT.
    t.same(await reader.searchTx(`message.action='/chain.bank.v1beta1.MsgSend' AND transfer.recipient='${recipient}'`), []);
  });

  await t.test('AMINO chain-sdk/MsgSend', async (t) => {
    const msg = { typeUrl: '/chain.bank.v1beta1.MsgSend', value: MsgSend.fromPartial({ fromAddress: m0!.address, toAddress: recipient, amount: [{ denom: DENOM, amount: '11' }] }) };
    const r = await aminoClient.signAndBroadcast(m0!.address, [msg], FEE, 'amino spec');
    assertIsDeliverTxSuccess(r);
    const tx = await reader.getTx(r.transactionHash);
    t.equal(decodeTxRaw(tx!.tx).authInfo.signerInfos[0]!.modeInfo?.single?.mode, 127, 'LEGACY_AMINO_JSON');
    t.same(await reader.getBalance(recipient, DENOM), { denom: DENOM, amount: '2511' });
  });

  await t.test('upstream /cosmos.bank.v1beta1.MsgSend is accepted and reported in the spec spelling', async (t) => {
    const r = await client.sendTokens(d0!.address, recipient, [{ denom: DENOM, amount: '9' }], FEE);
    assertIsDeliverTxSuccess(r);
    t.ok(flatEvents(r).includes('message.action=/chain.bank.v1beta1.MsgSend'));
    t.same(r.msgResponses.map((m) => m.typeUrl), ['/chain.bank.v1beta1.MsgSendResponse']);
  });

  await t.test('grant and exec with /chain.authz.v1beta1.* messages', async (t) => {
    const auth = SendAuthorization.fromPartial({ spendLimit: [{ denom: DENOM, amount: '100' }] });
    const grant = await client.signAndBroadcast(
      d0!.address,
      [
        {
          typeUrl: '/chain.authz.v1beta1.MsgGrant',
          value: MsgGrant.fromPartial({ granter: d0!.address, grantee: d1!.address, grant: { authorization: { typeUrl: '/chain.bank.v1beta1.SendAuthorization', value: SendAuthorization.encode(auth).finish() } } }),
        },
      ],
      FEE,
    );
    assertIsDeliverTxSuccess(grant);
    const gev = flatEvents(grant);
    t.ok(gev.includes('message.action=/chain.authz.v1beta1.MsgGrant'));
    t.ok(gev.includes('message.module=authz'));
    t.ok(gev.includes('chain.authz.v1beta1.EventGrant.msg_type_url="/chain.bank.v1beta1.MsgSend"'), 'typed event named and valued in the spec spelling');
    t.ok(gev.includes(`chain.authz.v1beta1.EventGrant.granter="${d0!.address}"`));
    const g = await q.authz.grants(d0!.address, d1!.address, '');
    t.equal(g.grants[0]?.authorization?.typeUrl, '/chain.bank.v1beta1.SendAuthorization');
    t.equal(g.grants[0]?.expiration, undefined, 'no expiration');
    t.equal((await q.authz.grants(d0!.address, d1!.address, '/chain.bank.v1beta1.MsgSend')).grants.length, 1);
    t.equal((await q.authz.grants(d0!.address, d1!.address, '/cosmos.bank.v1beta1.MsgSend')).grants.length, 1, 'either spelling finds it');

    const exec = (amount: string) => ({
      typeUrl: '/chain.authz.v1beta1.MsgExec',
      value: MsgExec.fromPartial({
        grantee: d1!.address,
        msgs: [client.registry.encodeAsAny({ typeUrl: '/chain.bank.v1beta1.MsgSend', value: MsgSend.fromPartial({ fromAddress: d0!.address, toAddress: recipient, amount: [{ denom: DENOM, amount }] }) })],
      }),
    });
    const before = BigInt((await reader.getBalance(recipient, DENOM)).amount);
    const r = await client.signAndBroadcast(d1!.address, [exec('60')], FEE);
    assertIsDeliverTxSuccess(r);
    t.same(r.msgResponses.map((m) => m.typeUrl), ['/chain.authz.v1beta1.MsgExecResponse']);
    t.equal(MsgExecResponse.decode(r.msgResponses[0]!.value).results.length, 1);
    t.ok(flatEvents(r).includes('message.action=/chain.authz.v1beta1.MsgExec'));
    t.equal(BigInt((await reader.getBalance(recipient, DENOM)).amount), before + 60n);
    const left = SendAuthorization.decode((await q.authz.grants(d0!.address, d1!.address, '')).grants[0]!.authorization!.value);
    t.same(left.spendLimit, [{ denom: DENOM, amount: '40' }]);

    const over = await client.signAndBroadcast(d1!.address, [exec('41')], FEE);
    assertIsDeliverTxFailure(over);
    t.equal(over.code, 5);
    // Spending exactly the rest deletes the grant (Accept → Delete).
    const rest = await client.signAndBroadcast(d1!.address, [exec('40')], FEE);
    assertIsDeliverTxSuccess(rest);
    t.ok(flatEvents(rest).some((e) => e.startsWith('chain.authz.v1beta1.EventRevoke.')), 'a used-up grant is deleted with EventRevoke');
    t.same((await q.authz.granterGrants(d0!.address)).grants, []);
  });

  t.ok(sent!, 'the send ran');
  // Close every client before the node stops (the node's teardown runs after this body).
  client.disconnect();
  aminoClient.disconnect();
  reader.disconnect();
  await new Promise((r) => setTimeout(r, 50));
});
