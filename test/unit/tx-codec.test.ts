/**
 * The tx codec: TxRaw decoding with the SDK's checks (ADR-027, unknown fields), byte equality with
 * CosmJS-built txs, signer extraction, and account keys → addresses.
 */
import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { AnySchema } from '@bufbuild/protobuf/wkt';
import { encodeSecp256k1Pubkey, createMultisigThresholdPubkey, pubkeyToAddress, rawEd25519PubkeyToRawAddress, encodeEd25519Pubkey } from '@cosmjs/amino';
import { encodePubkey, makeAuthInfoBytes } from '@cosmjs/proto-signing';
import { TxBody as CjTxBody, TxRaw as CjTxRaw } from 'cosmjs-types/cosmos/tx/v1beta1/tx';
import { MsgSend as CjMsgSend } from 'cosmjs-types/cosmos/bank/v1beta1/tx';
import { bech32 } from '@scure/base';
import { MsgSendSchema } from '../../src/gen/chain/bank/v1beta1/tx_pb.js';
import { MsgExecSchema, MsgGrantSchema, MsgRevokeSchema } from '../../src/gen/chain/authz/v1beta1/tx_pb.js';
import { MsgUpdateParamsSchema } from '../../src/gen/chain/auth/v1beta1/tx_pb.js';
import { AuthInfoSchema, TxBodySchema } from '../../src/gen/chain/tx/v1beta1/tx_pb.js';
import { SignMode } from '../../src/gen/chain/tx/signing/v1beta1/signing_pb.js';
import { LegacyAminoPubKeySchema } from '../../src/gen/chain/crypto/multisig/keys_pb.js';
import { packAny } from '../../src/proto/registry.js';
import {
  decodeTx,
  encodeAuthInfo,
  encodeTxBody,
  encodeTxRaw,
  msgSignerStrings,
  protoTxDecoder,
  rejectNonAdr027TxRaw,
  txHash,
} from '../../src/tx/codec.js';
import { countSubKeys, decodePubKey, encodePubKey, pubKeyAddress, pubKeyAlgoOfTypeUrl, type PubKey } from '../../src/tx/pubkey.js';
import { AbciError } from '../../src/app/errors.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const fromHex = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));
const b32 = (prefix: string, b: Uint8Array): string => bech32.encode(prefix, bech32.toWords(b));

/** Compressed public key of private key 1 (the generator G; cosmos/cosmos-sdk:proto/cosmos/crypto/secp256k1/keys.proto vectors). */
const G = fromHex('0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798');
/** Compressed public key of private key 2 (2G). */
const G2 = fromHex('02c6047f9441ed7d6d3045406e95c07cd85c778e4b8cef3ca7abac09b95c709ee5');

// ---- tiny protobuf writer for hand-made malformed bytes ----
function varint(n: number | bigint): number[] {
  let v = BigInt(n);
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}
const tag = (num: number, wt: number): number[] => varint((num << 3) | wt);
const ld = (num: number, payload: Uint8Array | number[]): Uint8Array => Uint8Array.from([...tag(num, 2), ...varint(payload.length), ...payload]);
const vf = (num: number, v: number): Uint8Array => Uint8Array.from([...tag(num, 0), ...varint(v)]);
const cat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));

function expectParseError(t: Test, fn: () => unknown, re: RegExp, what: string): void {
  try {
    fn();
    t.fail(`${what}: expected a tx parse error`);
  } catch (e) {
    t.ok(e instanceof AbciError, `${what}: AbciError`);
    t.equal((e as AbciError).code, 'sdk:2', `${what}: sdk code 2`);
    t.match((e as Error).message, re, `${what}: message`);
    t.match((e as Error).message, /: tx parse error$/, `${what}: wrapped in tx parse error`);
  }
}

const msgSend = { fromAddress: 'cosmos1w508d6qejxtdg4y5r3zarvary0c5xw7k6ah60c', toAddress: 'cosmos17xpfvakm2amg962yls6f84z3kell8c5lserqta', amount: [{ denom: 'ucosm', amount: '1234' }] };
const sig = new Uint8Array(64).fill(7);

/** A MsgSend tx built with cosmjs-types and @cosmjs/proto-signing, as an unmodified client does. */
function cosmjsTx(): { bodyBytes: Uint8Array; authInfoBytes: Uint8Array; txBytes: Uint8Array } {
  const bodyBytes = CjTxBody.encode(
    CjTxBody.fromPartial({ messages: [{ typeUrl: '/cosmos.bank.v1beta1.MsgSend', value: CjMsgSend.encode(CjMsgSend.fromPartial(msgSend)).finish() }], memo: 'for lunch', timeoutHeight: 77n }),
  ).finish();
  const authInfoBytes = makeAuthInfoBytes([{ pubkey: encodePubkey(encodeSecp256k1Pubkey(G)), sequence: 3 }], [{ denom: 'ucosm', amount: '2000' }], 200000, undefined, undefined);
  const txBytes = CjTxRaw.encode(CjTxRaw.fromPartial({ bodyBytes, authInfoBytes, signatures: [sig] })).finish();
  return { bodyBytes, authInfoBytes, txBytes };
}

/** The same tx built with our generated types; upstreamNames picks the type URL spelling. */
function ourTx(upstreamNames: boolean): { bodyBytes: Uint8Array; authInfoBytes: Uint8Array; txBytes: Uint8Array } {
  const names = { upstreamNames };
  const body = create(TxBodySchema, { messages: [packAny(MsgSendSchema, create(MsgSendSchema, msgSend), names)], memo: 'for lunch', timeoutHeight: 77n });
  const authInfo = create(AuthInfoSchema, {
    signerInfos: [{ publicKey: encodePubKey({ algo: 'secp256k1', key: G }, names), modeInfo: { sum: { case: 'single', value: { mode: SignMode.DIRECT } } }, sequence: 3n }],
    fee: { amount: [{ denom: 'ucosm', amount: '2000' }], gasLimit: 200000n },
  });
  const bodyBytes = encodeTxBody(body);
  const authInfoBytes = encodeAuthInfo(authInfo);
  return { bodyBytes, authInfoBytes, txBytes: encodeTxRaw({ bodyBytes, authInfoBytes, signatures: [sig] }) };
}

t.test('TxRaw bytes equal CosmJS for upstream type URLs', async (t) => {
  const a = cosmjsTx();
  const b = ourTx(true);
  t.equal(hex(b.bodyBytes), hex(a.bodyBytes), 'TxBody');
  t.equal(hex(b.authInfoBytes), hex(a.authInfoBytes), 'AuthInfo');
  t.equal(hex(b.txBytes), hex(a.txBytes), 'TxRaw');
  const spec = ourTx(false);
  t.not(hex(spec.txBytes), hex(a.txBytes), 'the spec spelling changes the type URLs');
  const ds = decodeTx(spec.txBytes);
  const da = decodeTx(a.txBytes);
  t.equal(ds.body.messages[0]?.typeUrl, '/chain.bank.v1beta1.MsgSend');
  t.equal(ds.authInfo.signerInfos[0]?.publicKey?.typeUrl, '/chain.crypto.secp256k1.PubKey');
  t.equal(hex(ds.body.messages[0]!.value), hex(da.body.messages[0]!.value), 'and nothing else');
});

t.test('decodeTx: a CosmJS tx and a spec-spelled one', async (t) => {
  for (const [what, tx] of [
    ['cosmjs', cosmjsTx()],
    ['spec names', ourTx(false)],
  ] as const) {
    const d = decodeTx(tx.txBytes);
    t.equal(hex(d.bodyBytes), hex(tx.bodyBytes), `${what}: body bytes exact`);
    t.equal(hex(d.authInfoBytes), hex(tx.authInfoBytes), `${what}: auth info bytes exact`);
    t.same(d.signatures.map(hex), [hex(sig)]);
    t.equal(d.body.memo, 'for lunch');
    t.equal(d.body.timeoutHeight, 77n);
    t.equal(d.msgs.length, 1);
    t.equal(d.msgs[0]!.$typeName, 'chain.bank.v1beta1.MsgSend', `${what}: message resolved`);
    t.same((d.msgs[0] as unknown as { amount: unknown }).amount, [{ $typeName: 'chain.base.v1beta1.Coin', denom: 'ucosm', amount: '1234' }]);
    t.equal(d.authInfo.signerInfos[0]?.sequence, 3n);
    t.equal(d.authInfo.fee?.gasLimit, 200000n);
    t.equal(d.hasUnknownNonCriticals, false);
    const pk = decodePubKey(d.authInfo.signerInfos[0]!.publicKey!);
    t.equal(pk.algo, 'secp256k1');
    t.equal(b32('cosmos', pubKeyAddress(pk)), 'cosmos1w508d6qejxtdg4y5r3zarvary0c5xw7k6ah60c', `${what}: signer address from the SignerInfo key`);
    t.same(msgSignerStrings(d.msgs[0]!), [msgSend.fromAddress]);
  }
  const { txBytes } = cosmjsTx();
  t.equal(txHash(txBytes), createHash('sha256').update(txBytes).digest('hex').toUpperCase());
  t.match(txHash(txBytes), /^[0-9A-F]{64}$/);
});

t.test('protoTxDecoder feeds BaseApp', async (t) => {
  const d = protoTxDecoder.decode(cosmjsTx().txBytes);
  t.equal(d.msgs[0]?.typeUrl, '/cosmos.bank.v1beta1.MsgSend', 'type URL as sent; BaseApp maps the spelling');
  t.same(d.fee, { amount: [{ denom: 'ucosm', amount: 2000n }], payer: '', granter: '' });
  t.equal(d.gas, 200000n);
  t.equal(d.memo, 'for lunch');
  t.equal(d.timeoutHeight, 77n);
  t.ok(d.auth);
  // No fee at all decodes as zero gas (ValidateBasic / DeductFee reject it later).
  const bodyBytes = ourTx(false).bodyBytes;
  const d2 = protoTxDecoder.decode(encodeTxRaw({ bodyBytes, authInfoBytes: new Uint8Array(), signatures: [] }));
  t.equal(d2.gas, 0n);
  t.same(d2.fee.amount, []);
  expectParseError(
    t,
    () => protoTxDecoder.decode(encodeTxRaw({ bodyBytes, authInfoBytes: encodeAuthInfo(create(AuthInfoSchema, { fee: { amount: [{ denom: 'x', amount: '1.5' }] } })), signatures: [] })),
    /fee: invalid integer: 1\.5/,
    'non-integer fee amount',
  );
});

t.test('ADR-027 checks on TxRaw', async (t) => {
  const { bodyBytes, authInfoBytes } = cosmjsTx();
  expectParseError(t, () => decodeTx(new Uint8Array()), /^tx bytes are empty/, 'empty');
  expectParseError(t, () => decodeTx(cat(ld(2, authInfoBytes), ld(1, bodyBytes))), /txRaw must follow ADR-027, got tagNum 1 after tagNum 2/, 'out of order');
  expectParseError(t, () => decodeTx(cat(ld(1, bodyBytes), vf(2, 1))), /expected 2 wire type, got 0/, 'varint field');
  const memoBody = Uint8Array.of(0x12, 0x01, 0x61);
  const longPrefix = Uint8Array.from([...tag(1, 2), 0x80 | memoBody.length, 0x00, ...memoBody]);
  expectParseError(t, () => decodeTx(longPrefix), /length prefix varint for tagNum 1 is not as short as possible, read 2, only need 1/, 'non-minimal length');
  expectParseError(t, () => decodeTx(ld(1, bodyBytes).subarray(0, 10)), /invalid length; unexpected EOF/, 'truncated');
  expectParseError(t, () => decodeTx(cat(ld(1, bodyBytes), ld(2, authInfoBytes), ld(4, [1]))), /chain\.tx\.v1beta1\.TxRaw: \{TagNum: 4, WireType:"bytes"\}: unknown protobuf field/, 'unknown TxRaw field');
  // Several signatures (3, 3) are in order.
  const two = decodeTx(cat(ld(1, bodyBytes), ld(2, authInfoBytes), ld(3, sig), ld(3, sig)));
  t.equal(two.signatures.length, 2);
  t.doesNotThrow(() => rejectNonAdr027TxRaw(new Uint8Array()));
});

t.test('unknown fields: critical refused, non-critical allowed only in the body', async (t) => {
  const { bodyBytes, authInfoBytes } = cosmjsTx();
  const raw = (body: Uint8Array, auth: Uint8Array = authInfoBytes): Uint8Array => cat(ld(1, body), ld(2, auth), ld(3, sig));
  expectParseError(t, () => decodeTx(raw(cat(bodyBytes, vf(6, 1)))), /^chain\.tx\.v1beta1\.TxBody: \{TagNum: 6, WireType:"varint"\}: unknown protobuf field: tx parse error$/, 'critical field 6');
  expectParseError(t, () => decodeTx(raw(cat(bodyBytes, vf(2048, 1)))), /TagNum: 2048/, 'field 2048 has bit 11 clear: critical');
  const nc = decodeTx(raw(cat(bodyBytes, vf(1025, 1))));
  t.equal(nc.hasUnknownNonCriticals, true, 'field 1025 is non-critical');
  t.equal(nc.body.memo, 'for lunch');
  expectParseError(t, () => decodeTx(raw(bodyBytes, cat(authInfoBytes, vf(1025, 1)))), /chain\.tx\.v1beta1\.AuthInfo: \{TagNum: 1025/, 'AuthInfo is strict');
  // Inside the message's Any.
  const sendWith = (extra: Uint8Array): Uint8Array =>
    CjTxBody.encode(CjTxBody.fromPartial({ messages: [{ typeUrl: '/cosmos.bank.v1beta1.MsgSend', value: cat(CjMsgSend.encode(CjMsgSend.fromPartial(msgSend)).finish(), extra) }] })).finish();
  expectParseError(t, () => decodeTx(raw(sendWith(vf(4, 1)))), /chain\.bank\.v1beta1\.MsgSend: \{TagNum: 4, WireType:"varint"\}: unknown protobuf field/, 'critical field in a message');
  t.equal(decodeTx(raw(sendWith(vf(1024, 1)))).hasUnknownNonCriticals, true, 'non-critical field in a message');
  expectParseError(t, () => decodeTx(raw(cat(bodyBytes, vf(2, 5)))), /TagNum: 2, WireType:"varint"\} != "bytes": mismatched wire type/, 'memo as a varint');
  const unknownUrl = CjTxBody.encode(CjTxBody.fromPartial({ messages: [{ typeUrl: '/cosmos.nope.v1.MsgNope', value: new Uint8Array() }] })).finish();
  expectParseError(t, () => decodeTx(raw(unknownUrl)), /unable to resolve type URL \/cosmos\.nope\.v1\.MsgNope/, 'unregistered message type');
  const hostUrl = CjTxBody.encode(CjTxBody.fromPartial({ messages: [{ typeUrl: 'type.googleapis.com/cosmos.bank.v1beta1.MsgSend', value: new Uint8Array() }] })).finish();
  expectParseError(t, () => decodeTx(raw(hostUrl)), /unable to resolve type URL/, 'host-form type URL');
  const badKey = makeAuthInfoBytes([{ pubkey: { typeUrl: '/cosmos.crypto.nope.PubKey', value: new Uint8Array() }, sequence: 0 }], [], 1, undefined, undefined);
  expectParseError(t, () => decodeTx(raw(bodyBytes, badKey)), /unable to resolve type URL \/cosmos\.crypto\.nope\.PubKey/, 'unregistered pubkey type');
  expectParseError(t, () => decodeTx(raw(Uint8Array.of(0x0a, 0x05, 0x01))), /could not read field|EOF/, 'truncated body');
  expectParseError(t, () => decodeTx(raw(Uint8Array.of(0x12, 0x02, 0xff, 0xfe))), /utf-8/i, 'memo that is not UTF-8');
});

t.test('message signers from (chain.msg.v1.signer)', async (t) => {
  t.same(msgSignerStrings(create(MsgSendSchema, { fromAddress: 'f', toAddress: 't' })), ['f']);
  t.same(msgSignerStrings(create(MsgGrantSchema, { granter: 'g', grantee: 'e' })), ['g']);
  t.same(msgSignerStrings(create(MsgExecSchema, { grantee: 'e' })), ['e']);
  t.same(msgSignerStrings(create(MsgRevokeSchema, { granter: 'g', grantee: 'e' })), ['g']);
  t.same(msgSignerStrings(create(MsgUpdateParamsSchema, { authority: 'gov' })), ['gov']);
  t.throws(() => msgSignerStrings(create(LegacyAminoPubKeySchema)), /no chain\.msg\.v1\.signer/);
});

t.test('pubkeys and addresses (cosmos/cosmos-sdk:proto/cosmos/crypto/secp256k1/keys.proto vectors)', async (t) => {
  const up = { upstreamNames: true };
  // secp256k1
  const secp = decodePubKey(encodePubKey({ algo: 'secp256k1', key: G }, up));
  t.equal(b32('cosmos', pubKeyAddress(secp)), 'cosmos1w508d6qejxtdg4y5r3zarvary0c5xw7k6ah60c');
  const cjAny = encodePubkey(encodeSecp256k1Pubkey(G));
  const ours = encodePubKey({ algo: 'secp256k1', key: G }, up);
  t.equal(ours.typeUrl, cjAny.typeUrl);
  t.equal(hex(ours.value), hex(cjAny.value));
  t.equal(encodePubKey({ algo: 'secp256k1', key: G }).typeUrl, '/chain.crypto.secp256k1.PubKey');
  // eth_secp256k1: the Ethereum address, the same 20 bytes behind chain1… and 0x…
  for (const url of ['/chain.evm.crypto.v1.ethsecp256k1.PubKey', '/cosmos.evm.crypto.v1.ethsecp256k1.PubKey', '/ethermint.crypto.v1.ethsecp256k1.PubKey']) {
    const eth = decodePubKey({ ...encodePubKey({ algo: 'eth_secp256k1', key: G }), typeUrl: url } as ReturnType<typeof encodePubKey>);
    t.equal(eth.algo, 'eth_secp256k1', url);
    t.equal(hex(pubKeyAddress(eth)), '7e5f4552091a69125d5dfcb7b8c2659029395bdf', url);
    t.equal(b32('cosmos', pubKeyAddress(eth)), 'cosmos10e0525sfrf53yh2aljmm3sn9jq5njk7lyqvxq3');
  }
  t.equal(encodePubKey({ algo: 'eth_secp256k1', key: G }, up).typeUrl, '/cosmos.evm.crypto.v1.ethsecp256k1.PubKey');
  // ed25519
  const edKey = new Uint8Array(32).fill(0x11);
  const ed = decodePubKey(encodePubKey({ algo: 'ed25519', key: edKey }, up));
  t.equal(hex(pubKeyAddress(ed)), hex(rawEd25519PubkeyToRawAddress(edKey)));
  t.equal(hex(encodePubKey({ algo: 'ed25519', key: edKey }, up).value), hex(encodePubkey(encodeEd25519Pubkey(edKey)).value));
  // ML-DSA-65: recognised, SHA256(key)[:20].
  const mlKey = new Uint8Array(1952).fill(3);
  const ml = decodePubKey(encodePubKey({ algo: 'mldsa65', key: mlKey }));
  t.equal(ml.algo, 'mldsa65');
  t.equal(hex(pubKeyAddress(ml)), createHash('sha256').update(mlKey).digest('hex').slice(0, 40));
  t.equal(pubKeyAlgoOfTypeUrl('/cosmos.crypto.mldsa65.PubKey'), 'mldsa65');
  // Errors: sdk code 8, invalid pubkey.
  const bad: Array<[string, () => unknown, RegExp]> = [
    ['unknown type', () => decodePubKey({ ...cjAny, typeUrl: '/cosmos.crypto.secp256r1.PubKey' } as ReturnType<typeof encodePubKey>), /unrecognized public key type: \/cosmos\.crypto\.secp256r1\.PubKey: invalid pubkey/],
    ['short secp256k1', () => decodePubKey(encodePubKey({ algo: 'secp256k1', key: G.subarray(0, 32) })), /invalid secp256k1 public key length: 32, expected 33/],
    ['not on curve', () => decodePubKey(encodePubKey({ algo: 'secp256k1', key: Uint8Array.from([2, ...new Uint8Array(32).fill(0xff)]) })), /not a compressed curve point/],
    ['short mldsa65', () => decodePubKey(encodePubKey({ algo: 'mldsa65', key: mlKey.subarray(1) })), /expected 1952/],
    ['garbage bytes', () => decodePubKey({ ...cjAny, value: Uint8Array.of(0x0a, 0x30, 1) } as ReturnType<typeof encodePubKey>), /invalid pubkey/],
  ];
  for (const [what, fn, re] of bad) {
    try {
      fn();
      t.fail(what);
    } catch (e) {
      t.equal((e as AbciError).code, 'sdk:8', what);
      t.match((e as Error).message, re, what);
    }
  }
});

t.test('multisig: LegacyAminoPubKey address equals CosmJS', async (t) => {
  const cjMulti = createMultisigThresholdPubkey([encodeSecp256k1Pubkey(G), encodeSecp256k1Pubkey(G2)], 2, true);
  const any = packAny(
    LegacyAminoPubKeySchema,
    create(LegacyAminoPubKeySchema, { threshold: 2, publicKeys: [encodePubKey({ algo: 'secp256k1', key: G }), encodePubKey({ algo: 'secp256k1', key: G2 })] }),
  );
  const pk = decodePubKey(any) as Extract<PubKey, { algo: 'multisig' }>;
  t.equal(pk.algo, 'multisig');
  t.equal(pk.threshold, 2);
  t.equal(countSubKeys(pk), 2);
  t.equal(b32('cosmos', pubKeyAddress(pk)), pubkeyToAddress(cjMulti, 'cosmos'));
  // And with CosmJS's own Any (upstream URLs inside).
  const cjAny = encodePubkey(cjMulti);
  t.equal(cjAny.typeUrl, '/cosmos.crypto.multisig.LegacyAminoPubKey');
  t.equal(b32('cosmos', pubKeyAddress(decodePubKey(create(AnySchema, { typeUrl: cjAny.typeUrl, value: cjAny.value })))), pubkeyToAddress(cjMulti, 'cosmos'));
});
