/**
 * Sign bytes: SIGN_MODE_DIRECT and DIRECT_AUX against CosmJS, SIGN_MODE_LEGACY_AMINO_JSON against
 * @cosmjs/amino serializeSignDoc, and signatures made by CosmJS wallets verifying over our bytes.
 */
import t from 'tap';
import { create } from '@bufbuild/protobuf';
import { AnySchema } from '@bufbuild/protobuf/wkt';
import { makeSignDoc as makeAminoSignDoc, serializeSignDoc, Secp256k1Wallet, encodeSecp256k1Pubkey, type AminoMsg, type StdFee } from '@cosmjs/amino';
import { DirectSecp256k1Wallet, encodePubkey, makeAuthInfoBytes, makeSignBytes, makeSignDoc } from '@cosmjs/proto-signing';
import { AminoTypes, createBankAminoConverters } from '@cosmjs/stargate';
import { TxBody as CjTxBody, SignDocDirectAux as CjSignDocDirectAux } from 'cosmjs-types/cosmos/tx/v1beta1/tx';
import { MsgSend as CjMsgSend } from 'cosmjs-types/cosmos/bank/v1beta1/tx';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { MsgSendSchema } from '../../src/gen/chain/bank/v1beta1/tx_pb.js';
import { GenericAuthorizationSchema } from '../../src/gen/chain/authz/v1beta1/authz_pb.js';
import { AuthInfoSchema, TxBodySchema } from '../../src/gen/chain/tx/v1beta1/tx_pb.js';
import { packAny } from '../../src/proto/registry.js';
import { decodeTx, encodeAuthInfo, encodeTxBody, encodeTxRaw } from '../../src/tx/codec.js';
import { signBytesDirect, signBytesDirectAux, signBytesDirectGenerated, signBytesLegacyAmino, stdSignDoc } from '../../src/tx/signbytes.js';
import { decodePubKey, pubKeyAddress } from '../../src/tx/pubkey.js';
import { AbciError } from '../../src/app/errors.js';
import { bech32 } from '@scure/base';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const utf8 = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
const PRIV = Uint8Array.from([...new Uint8Array(31), 1]);
const CHAIN_ID = 'chaind-test-1';

async function wallets(): Promise<{ direct: DirectSecp256k1Wallet; amino: Secp256k1Wallet; address: string; pubkey: Uint8Array }> {
  const direct = await DirectSecp256k1Wallet.fromKey(PRIV, 'chain');
  const amino = await Secp256k1Wallet.fromKey(PRIV, 'chain');
  const [acc] = await direct.getAccounts();
  return { direct, amino, address: acc!.address, pubkey: acc!.pubkey };
}

function verifySecp(sigB64: string, signBytes: Uint8Array, pubkey: Uint8Array): boolean {
  return secp256k1.verify(Uint8Array.from(Buffer.from(sigB64, 'base64')), sha256(signBytes), pubkey, { prehash: false });
}

t.test('SIGN_MODE_DIRECT: equal to CosmJS makeSignBytes; a CosmJS signature verifies', async (t) => {
  const { direct, address, pubkey } = await wallets();
  t.equal(address, bech32.encode('chain', bech32.toWords(pubKeyAddress({ algo: 'secp256k1', key: pubkey }))));
  const send = CjMsgSend.fromPartial({ fromAddress: address, toAddress: 'chain1xyz', amount: [{ denom: 'stake', amount: '10' }] });
  const bodyBytes = CjTxBody.encode(CjTxBody.fromPartial({ messages: [{ typeUrl: '/cosmos.bank.v1beta1.MsgSend', value: CjMsgSend.encode(send).finish() }], memo: 'm' })).finish();
  const authInfoBytes = makeAuthInfoBytes([{ pubkey: encodePubkey(encodeSecp256k1Pubkey(pubkey)), sequence: 4 }], [{ denom: 'stake', amount: '200' }], 100000, undefined, undefined);
  for (const accountNumber of [0n, 1n, 12n, (1n << 64n) - 1n]) {
    const cjDoc = makeSignDoc(bodyBytes, authInfoBytes, CHAIN_ID, accountNumber);
    t.equal(hex(signBytesDirect(bodyBytes, authInfoBytes, CHAIN_ID, accountNumber)), hex(makeSignBytes(cjDoc)), `account ${accountNumber}`);
  }
  // The hand-written encoder against the generated one, empty and extreme fields included.
  const big = new Uint8Array(300).fill(5);
  for (const [b, a, c, n] of [
    [new Uint8Array(), new Uint8Array(), '', 0n],
    [bodyBytes, new Uint8Array(), 'é', 127n],
    [big, big, 'x'.repeat(200), 128n],
    [new Uint8Array(), authInfoBytes, CHAIN_ID, (1n << 64n) - 1n],
  ] as const) {
    t.equal(hex(signBytesDirect(b, a, c, n)), hex(signBytesDirectGenerated(b, a, c, n)), `hand-written SignDoc encoder (${b.length}, ${a.length}, ${c.length}, ${n})`);
  }
  t.throws(() => signBytesDirect(bodyBytes, authInfoBytes, CHAIN_ID, -1n), RangeError);
  const { signature } = await direct.signDirect(address, makeSignDoc(bodyBytes, authInfoBytes, CHAIN_ID, 12n));
  const txBytes = encodeTxRaw({ bodyBytes, authInfoBytes, signatures: [Uint8Array.from(Buffer.from(signature.signature, 'base64'))] });
  const tx = decodeTx(txBytes);
  const pk = decodePubKey(tx.authInfo.signerInfos[0]!.publicKey!);
  t.equal(pk.algo, 'secp256k1');
  const ours = signBytesDirect(tx.bodyBytes, tx.authInfoBytes, CHAIN_ID, 12n);
  t.ok(verifySecp(signature.signature, ours, pubkey), 'signature over our sign bytes verifies');
  t.notOk(verifySecp(signature.signature, signBytesDirect(tx.bodyBytes, tx.authInfoBytes, CHAIN_ID, 13n), pubkey), 'other account number fails');
  t.notOk(verifySecp(signature.signature, signBytesDirect(tx.bodyBytes, tx.authInfoBytes, 'other-chain', 12n), pubkey), 'other chain id fails');
});

t.test('SIGN_MODE_DIRECT_AUX: equal to cosmjs-types SignDocDirectAux', async (t) => {
  const body = Uint8Array.of(1, 2, 3);
  const pk = encodePubkey(encodeSecp256k1Pubkey(secp256k1.getPublicKey(PRIV, true)));
  const cj = CjSignDocDirectAux.encode(CjSignDocDirectAux.fromPartial({ bodyBytes: body, publicKey: pk, chainId: CHAIN_ID, accountNumber: 3n, sequence: 9n })).finish();
  const ours = signBytesDirectAux(body, create(AnySchema, { typeUrl: pk.typeUrl, value: pk.value }), CHAIN_ID, 3n, 9n);
  t.equal(hex(ours), hex(cj));
});

const fee: StdFee = { amount: [{ denom: 'stake', amount: '200' }], gas: '100000' };

/** Our tx with the given messages and fee, through encode + decode as the node sees it. */
function ourTx(msgs: ReturnType<typeof packAny>[], opts: { memo?: string; timeoutHeight?: bigint; payer?: string; granter?: string; gas?: bigint } = {}): ReturnType<typeof decodeTx> {
  const body = create(TxBodySchema, { messages: msgs, memo: opts.memo ?? '', timeoutHeight: opts.timeoutHeight ?? 0n });
  const authInfo = create(AuthInfoSchema, {
    fee: { amount: [{ denom: 'stake', amount: '200' }], gasLimit: opts.gas ?? 100000n, payer: opts.payer ?? '', granter: opts.granter ?? '' },
  });
  return decodeTx(encodeTxRaw({ bodyBytes: encodeTxBody(body), authInfoBytes: encodeAuthInfo(authInfo), signatures: [] }));
}

t.test('SIGN_MODE_LEGACY_AMINO_JSON: equal to @cosmjs/amino serializeSignDoc', async (t) => {
  const { address } = await wallets();
  const aminoTypes = new AminoTypes(createBankAminoConverters());
  const sendValue = { fromAddress: address, toAddress: 'chain1recipient', amount: [{ denom: 'stake', amount: '10' }, { denom: 'uatom', amount: '3' }] };
  const cjMsg: AminoMsg = aminoTypes.toAmino({ typeUrl: '/cosmos.bank.v1beta1.MsgSend', value: CjMsgSend.fromPartial(sendValue) });
  t.equal(cjMsg.type, 'cosmos-sdk/MsgSend');
  const send = create(MsgSendSchema, sendValue);
  const cases: Array<{ what: string; memo: string; timeoutHeight?: bigint; fee: StdFee; payer?: string; granter?: string }> = [
    { what: 'plain', memo: '', fee },
    { what: 'memo with HTML characters', memo: '<script>&"quoted"</script> é', fee },
    { what: 'timeout height', memo: 'x', timeoutHeight: 99n, fee },
    { what: 'fee payer and granter', memo: '', fee: { ...fee, payer: 'chain1payer', granter: 'chain1granter' }, payer: 'chain1payer', granter: 'chain1granter' },
  ];
  for (const c of cases) {
    const ourOpts = { memo: c.memo, ...(c.timeoutHeight !== undefined ? { timeoutHeight: c.timeoutHeight } : {}), ...(c.payer ? { payer: c.payer, granter: c.granter! } : {}) };
    // Upstream names: exactly what an unmodified CosmJS amino signer signs.
    const up = ourTx([packAny(MsgSendSchema, send, { upstreamNames: true })], ourOpts);
    const cjDoc = makeAminoSignDoc([cjMsg], c.fee, CHAIN_ID, c.memo, 7, 2, c.timeoutHeight);
    t.equal(utf8(signBytesLegacyAmino(up, CHAIN_ID, 7n, 2n, { upstreamNames: true })), utf8(serializeSignDoc(cjDoc)), `${c.what}: upstream names`);
    // Spec names: the same document with chain-sdk/ amino names (and any type URL spelling in the tx).
    const spec = ourTx([packAny(MsgSendSchema, send)], ourOpts);
    const cjSpecDoc = makeAminoSignDoc([{ ...cjMsg, type: 'chain-sdk/MsgSend' }], c.fee, CHAIN_ID, c.memo, 7, 2, c.timeoutHeight);
    t.equal(utf8(signBytesLegacyAmino(spec, CHAIN_ID, 7n, 2n)), utf8(serializeSignDoc(cjSpecDoc)), `${c.what}: spec names`);
    t.equal(utf8(signBytesLegacyAmino(up, CHAIN_ID, 7n, 2n)), utf8(serializeSignDoc(cjSpecDoc)), `${c.what}: amino names do not depend on the type URL spelling`);
  }
  t.equal(
    utf8(signBytesLegacyAmino(ourTx([packAny(MsgSendSchema, send)]), CHAIN_ID, 7n, 2n)),
    `{"account_number":"7","chain_id":"${CHAIN_ID}","fee":{"amount":[{"amount":"200","denom":"stake"}],"gas":"100000"},"memo":"","msgs":[{"type":"chain-sdk/MsgSend","value":{"amount":[{"amount":"10","denom":"stake"},{"amount":"3","denom":"uatom"}],"from_address":"${address}","to_address":"chain1recipient"}}],"sequence":"2"}`,
    'the document, spelled out',
  );
});

t.test('LEGACY_AMINO_JSON: a CosmJS amino signature verifies over our bytes', async (t) => {
  const { amino, address, pubkey } = await wallets();
  const sendValue = { fromAddress: address, toAddress: 'chain1to', amount: [{ denom: 'stake', amount: '5' }] };
  const send = create(MsgSendSchema, sendValue);
  const cjMsg = new AminoTypes(createBankAminoConverters()).toAmino({ typeUrl: '/cosmos.bank.v1beta1.MsgSend', value: CjMsgSend.fromPartial(sendValue) });
  const { signature } = await amino.signAmino(address, makeAminoSignDoc([cjMsg], fee, CHAIN_ID, 'hello', 3, 8));
  const tx = ourTx([packAny(MsgSendSchema, send, { upstreamNames: true })], { memo: 'hello' });
  t.ok(verifySecp(signature.signature, signBytesLegacyAmino(tx, CHAIN_ID, 3n, 8n, { upstreamNames: true }), pubkey), 'upstream-name signature verifies with upstream names');
  t.notOk(verifySecp(signature.signature, signBytesLegacyAmino(tx, CHAIN_ID, 3n, 8n), pubkey), 'and not with spec names');
  t.notOk(verifySecp(signature.signature, signBytesLegacyAmino(tx, CHAIN_ID, 3n, 9n, { upstreamNames: true }), pubkey), 'nor another sequence');
});

t.test('LEGACY_AMINO_JSON: optional fields and refusals', async (t) => {
  const grantAuth = packAny(GenericAuthorizationSchema, create(GenericAuthorizationSchema, { msg: '/chain.bank.v1beta1.MsgSend' }));
  const body = create(TxBodySchema, { messages: [grantAuth], memo: '', unordered: true, timeoutTimestamp: timestampFromDate(new Date('2030-01-02T03:04:05.120Z')) });
  const authInfo = create(AuthInfoSchema, { fee: { gasLimit: 0n } });
  const doc = stdSignDoc({ body, authInfo }, 'c', 0n, 0n);
  t.same(doc, {
    account_number: '0',
    chain_id: 'c',
    fee: { amount: [], gas: '0' },
    memo: '',
    msgs: [{ type: 'chain-sdk/GenericAuthorization', value: { msg: '/chain.bank.v1beta1.MsgSend' } }],
    sequence: '0',
    timeout_timestamp: '2030-01-02T03:04:05.12Z',
    unordered: true,
  });
  const refuse = (what: string, b: typeof body, a: typeof authInfo, re: RegExp): void => {
    try {
      signBytesLegacyAmino({ body: b, authInfo: a }, 'c', 0n, 0n);
      t.fail(what);
    } catch (e) {
      t.ok(e instanceof AbciError, what);
      t.equal((e as AbciError).code, 'sdk:18', what);
      t.match((e as Error).message, re, what);
    }
  };
  refuse('extension options', create(TxBodySchema, { extensionOptions: [grantAuth] }), authInfo, /does not support protobuf extension options/);
  refuse('non-critical extension options', create(TxBodySchema, { nonCriticalExtensionOptions: [grantAuth] }), authInfo, /does not support protobuf extension options/);
  refuse('no fee', body, create(AuthInfoSchema), /fee cannot be nil/);
});
