/**
 * Legacy amino JSON of every message and authorization type: the Cosmos SDK's own sign-bytes
 * vectors for authz (x/authz msgs_test.go TestAminoJSON, upstream names), the same documents in
 * the spec's `chain-sdk/` spelling, CosmJS's converters and pubkey encodings, and the canonical
 * JSON rules.
 */
import t from 'tap';
import { create } from '@bufbuild/protobuf';
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import { createMultisigThresholdPubkey, encodeEd25519Pubkey, encodeEthSecp256k1Pubkey, encodeSecp256k1Pubkey, serializeSignDoc, makeSignDoc } from '@cosmjs/amino';
import { AminoTypes, createBankAminoConverters } from '@cosmjs/stargate';
import { MsgSend as CjMsgSend } from 'cosmjs-types/cosmos/bank/v1beta1/tx';
import { MsgSendSchema } from '../../src/gen/chain/bank/v1beta1/tx_pb.js';
import { SendAuthorizationSchema } from '../../src/gen/chain/bank/v1beta1/authz_pb.js';
import { GenericAuthorizationSchema } from '../../src/gen/chain/authz/v1beta1/authz_pb.js';
import { MsgExecSchema, MsgGrantSchema, MsgRevokeSchema } from '../../src/gen/chain/authz/v1beta1/tx_pb.js';
import { MsgUpdateParamsSchema } from '../../src/gen/chain/auth/v1beta1/tx_pb.js';
import { BaseAccountSchema } from '../../src/gen/chain/auth/v1beta1/auth_pb.js';
import { AuthorizationType, StakeAuthorizationSchema } from '../../src/gen/chain/staking/v1beta1/authz_pb.js';
import { CoinSchema } from '../../src/gen/chain/base/v1beta1/coin_pb.js';
import { LegacyAminoPubKeySchema } from '../../src/gen/chain/crypto/multisig/keys_pb.js';
import { AuthInfoSchema, TxBodySchema } from '../../src/gen/chain/tx/v1beta1/tx_pb.js';
import { packAny, UnknownTypeUrlError, type Any } from '../../src/proto/registry.js';
import { anyToAmino, aminoNameOf, emitAminoName, formatRfc3339Nano, messageToAminoValue, msgToAmino, sortedJsonStringify } from '../../src/tx/amino.js';
import { signBytesLegacyAmino } from '../../src/tx/signbytes.js';
import { encodePubKey } from '../../src/tx/pubkey.js';

const UP = { upstreamNames: true };
const utf8 = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
const ts = (iso: string, nanos = 0): Timestamp => ({ $typeName: 'google.protobuf.Timestamp', seconds: BigInt(new Date(iso).getTime() / 1000), nanos });

/** StdSignBytes("foo", account 1, sequence 1, timeout height 1, empty fee, [msg], "memo"). */
function signDocFor(msg: Any, upstreamNames: boolean): string {
  const body = create(TxBodySchema, { messages: [msg], memo: 'memo', timeoutHeight: 1n });
  const authInfo = create(AuthInfoSchema, { fee: {} });
  return utf8(signBytesLegacyAmino({ body, authInfo }, 'foo', 1n, 1n, { upstreamNames }));
}

t.test('authz: the SDK sign-bytes vectors, upstream and spec spelling', async (t) => {
  // x/authz TestAminoJSON: block time 0001-01-01T01:01:01.000000001Z, grants expire an hour later.
  const expiresAt = ts('0001-01-01T02:01:01Z', 1);
  const msgSendUrl = '/cosmos.bank.v1beta1.MsgSend';
  const generic = packAny(GenericAuthorizationSchema, create(GenericAuthorizationSchema, { msg: msgSendUrl }), UP);
  const send = packAny(SendAuthorizationSchema, create(SendAuthorizationSchema, { spendLimit: [{ denom: 'stake', amount: '1000' }] }), UP);
  const stake = packAny(
    StakeAuthorizationSchema,
    create(StakeAuthorizationSchema, {
      maxTokens: { denom: 'stake', amount: '1000' },
      validators: { case: 'allowList', value: { address: ['cosmosvaloper1xcy3els9ua75kdm783c3qu0rfa2eples6eavqq'] } },
      authorizationType: AuthorizationType.DELEGATE,
    }),
    UP,
  );
  const grant = (authorization: Any, expiration?: Timestamp): Any =>
    packAny(MsgGrantSchema, create(MsgGrantSchema, { granter: 'cosmos1abc', grantee: 'cosmos1def', grant: { authorization, ...(expiration ? { expiration } : {}) } }), UP);
  const head = '{"account_number":"1","chain_id":"foo","fee":{"amount":[],"gas":"0"},"memo":"memo","msgs":[';
  const tail = '],"sequence":"1","timeout_height":"1"}';
  const vectors: Array<[string, Any, string]> = [
    [
      'MsgGrant GenericAuthorization',
      grant(generic, expiresAt),
      '{"type":"cosmos-sdk/MsgGrant","value":{"grant":{"authorization":{"type":"cosmos-sdk/GenericAuthorization","value":{"msg":"/cosmos.bank.v1beta1.MsgSend"}},"expiration":"0001-01-01T02:01:01.000000001Z"},"grantee":"cosmos1def","granter":"cosmos1abc"}}',
    ],
    [
      'MsgGrant SendAuthorization',
      grant(send, expiresAt),
      '{"type":"cosmos-sdk/MsgGrant","value":{"grant":{"authorization":{"type":"cosmos-sdk/SendAuthorization","value":{"spend_limit":[{"amount":"1000","denom":"stake"}]}},"expiration":"0001-01-01T02:01:01.000000001Z"},"grantee":"cosmos1def","granter":"cosmos1abc"}}',
    ],
    [
      'MsgGrant StakeAuthorization, no expiration',
      grant(stake),
      '{"type":"cosmos-sdk/MsgGrant","value":{"grant":{"authorization":{"type":"cosmos-sdk/StakeAuthorization","value":{"Validators":{"type":"cosmos-sdk/StakeAuthorization/AllowList","value":{"allow_list":{"address":["cosmosvaloper1xcy3els9ua75kdm783c3qu0rfa2eples6eavqq"]}}},"authorization_type":1,"max_tokens":{"amount":"1000","denom":"stake"}}}},"grantee":"cosmos1def","granter":"cosmos1abc"}}',
    ],
    [
      'MsgRevoke',
      packAny(MsgRevokeSchema, create(MsgRevokeSchema, { granter: 'cosmos1abc', grantee: 'cosmos1def', msgTypeUrl: msgSendUrl }), UP),
      '{"type":"cosmos-sdk/MsgRevoke","value":{"grantee":"cosmos1def","granter":"cosmos1abc","msg_type_url":"/cosmos.bank.v1beta1.MsgSend"}}',
    ],
    [
      'MsgExec with a MsgSend without coins',
      packAny(MsgExecSchema, create(MsgExecSchema, { grantee: 'cosmos1def', msgs: [packAny(MsgSendSchema, create(MsgSendSchema, { fromAddress: 'cosmos1ghi', toAddress: 'cosmos1jkl' }), UP)] }), UP),
      '{"type":"cosmos-sdk/MsgExec","value":{"grantee":"cosmos1def","msgs":[{"type":"cosmos-sdk/MsgSend","value":{"amount":[],"from_address":"cosmos1ghi","to_address":"cosmos1jkl"}}]}}',
    ],
  ];
  for (const [what, msg, json] of vectors) {
    t.equal(signDocFor(msg, true), head + json + tail, `${what}: upstream`);
    // Spec spelling: only the amino names change (the data, type URL strings included, does not).
    t.equal(signDocFor(msg, false), head + json.replaceAll('"cosmos-sdk/', '"chain-sdk/') + tail, `${what}: spec`);
  }
});

t.test('MsgSend: equal to CosmJS AminoTypes', async (t) => {
  const value = { fromAddress: 'chain1from', toAddress: 'chain1to', amount: [{ denom: 'stake', amount: '10' }] };
  const cj = new AminoTypes(createBankAminoConverters()).toAmino({ typeUrl: '/cosmos.bank.v1beta1.MsgSend', value: CjMsgSend.fromPartial(value) });
  const msg = create(MsgSendSchema, value);
  t.same(msgToAmino(MsgSendSchema, msg, UP), cj);
  t.same(msgToAmino(MsgSendSchema, msg), { ...cj, type: 'chain-sdk/MsgSend' });
  t.same(anyToAmino(packAny(MsgSendSchema, msg)), { ...cj, type: 'chain-sdk/MsgSend' }, 'Any spelling does not matter');
});

t.test('MsgUpdateParams: chain-sdk/x/auth/MsgUpdateParams with sig_verify_cost_mldsa65', async (t) => {
  const params = { maxMemoCharacters: 256n, txSigLimit: 7n, txSizeCostPerByte: 10n, sigVerifyCostEd25519: 590n, sigVerifyCostSecp256k1: 1000n, sigVerifyCostMldsa65: 750n };
  const msg = create(MsgUpdateParamsSchema, { authority: 'chain10d07y265gmmuvt4z0w9aw880jnsr700j6zn9kn', params });
  t.equal(
    sortedJsonStringify(msgToAmino(MsgUpdateParamsSchema, msg)),
    '{"type":"chain-sdk/x/auth/MsgUpdateParams","value":{"authority":"chain10d07y265gmmuvt4z0w9aw880jnsr700j6zn9kn","params":{"max_memo_characters":"256","sig_verify_cost_ed25519":"590","sig_verify_cost_mldsa65":"750","sig_verify_cost_secp256k1":"1000","tx_sig_limit":"7","tx_size_cost_per_byte":"10"}}}',
  );
  t.equal(aminoNameOf(MsgUpdateParamsSchema, UP), 'cosmos-sdk/x/auth/MsgUpdateParams');
  // params is dont_omitempty: written even when unset; its zero fields are omitted.
  t.equal(sortedJsonStringify(msgToAmino(MsgUpdateParamsSchema, create(MsgUpdateParamsSchema, { authority: 'a' }))), '{"type":"chain-sdk/x/auth/MsgUpdateParams","value":{"authority":"a","params":{}}}');
  t.equal(
    sortedJsonStringify(msgToAmino(MsgUpdateParamsSchema, create(MsgUpdateParamsSchema, { authority: 'a', params: { txSigLimit: 7n } }))),
    '{"type":"chain-sdk/x/auth/MsgUpdateParams","value":{"authority":"a","params":{"tx_sig_limit":"7"}}}',
  );
});

t.test('authorizations: omitempty, legacy_coins, oneofs', async (t) => {
  const sa = (v: Parameters<typeof create<typeof SendAuthorizationSchema>>[1]): string => sortedJsonStringify(anyToAmino(packAny(SendAuthorizationSchema, create(SendAuthorizationSchema, v))));
  t.equal(sa({}), '{"type":"chain-sdk/SendAuthorization","value":{"spend_limit":[]}}', 'empty spend limit is []');
  t.equal(
    sa({ spendLimit: [{ denom: 'a', amount: '1' }], allowList: ['chain1x', 'chain1y'] }),
    '{"type":"chain-sdk/SendAuthorization","value":{"allow_list":["chain1x","chain1y"],"spend_limit":[{"amount":"1","denom":"a"}]}}',
  );
  const stake = (v: Parameters<typeof create<typeof StakeAuthorizationSchema>>[1], opts = {}): string =>
    sortedJsonStringify(anyToAmino(packAny(StakeAuthorizationSchema, create(StakeAuthorizationSchema, v)), opts));
  t.equal(
    stake({ validators: { case: 'denyList', value: { address: ['v1'] } }, authorizationType: AuthorizationType.UNDELEGATE }),
    '{"type":"chain-sdk/StakeAuthorization","value":{"Validators":{"type":"chain-sdk/StakeAuthorization/DenyList","value":{"deny_list":{"address":["v1"]}}},"authorization_type":2}}',
    'deny list, no max tokens',
  );
  t.equal(
    stake({ validators: { case: 'denyList', value: { address: ['v1'] } }, authorizationType: AuthorizationType.UNDELEGATE }, UP),
    '{"type":"cosmos-sdk/StakeAuthorization","value":{"Validators":{"type":"cosmos-sdk/StakeAuthorization/DenyList","value":{"deny_list":{"address":["v1"]}}},"authorization_type":2}}',
  );
  t.equal(stake({}), '{"type":"chain-sdk/StakeAuthorization","value":{"Validators":null}}', 'an unset oneof is null, a zero enum omitted');
  t.equal(sortedJsonStringify(anyToAmino(packAny(GenericAuthorizationSchema, create(GenericAuthorizationSchema)))), '{"type":"chain-sdk/GenericAuthorization","value":{}}');
});

t.test('keys: key_field and threshold_string encodings equal CosmJS', async (t) => {
  const G = Uint8Array.from(Buffer.from('0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798', 'hex'));
  const ed = new Uint8Array(32).fill(9);
  t.same(anyToAmino(encodePubKey({ algo: 'secp256k1', key: G }), UP), encodeSecp256k1Pubkey(G));
  t.same(anyToAmino(encodePubKey({ algo: 'secp256k1', key: G })), { ...encodeSecp256k1Pubkey(G), type: 'consensus/PubKeySecp256k1' });
  t.same(anyToAmino(encodePubKey({ algo: 'ed25519', key: ed }), UP), encodeEd25519Pubkey(ed));
  t.same(anyToAmino(encodePubKey({ algo: 'eth_secp256k1', key: G }), UP), encodeEthSecp256k1Pubkey(G));
  const ml = new Uint8Array(1952).fill(1);
  t.same(anyToAmino(encodePubKey({ algo: 'mldsa65', key: ml }), UP), { type: 'cometbft/PubKeyMlDsa65', value: Buffer.from(ml).toString('base64') });
  t.same(anyToAmino(encodePubKey({ algo: 'mldsa65', key: ml })), { type: 'consensus/PubKeyMlDsa65', value: Buffer.from(ml).toString('base64') });
  const G2 = Uint8Array.from(Buffer.from('02c6047f9441ed7d6d3045406e95c07cd85c778e4b8cef3ca7abac09b95c709ee5', 'hex'));
  const multi = packAny(
    LegacyAminoPubKeySchema,
    create(LegacyAminoPubKeySchema, { threshold: 2, publicKeys: [encodePubKey({ algo: 'secp256k1', key: G }, UP), encodePubKey({ algo: 'secp256k1', key: G2 }, UP)] }),
    UP,
  );
  t.same(anyToAmino(multi, UP), createMultisigThresholdPubkey([encodeSecp256k1Pubkey(G), encodeSecp256k1Pubkey(G2)], 2, true));
  // BaseAccount: pub_key is written as public_key; zero numbers omitted.
  const acc = create(BaseAccountSchema, { address: 'chain1x', pubKey: encodePubKey({ algo: 'secp256k1', key: G }), accountNumber: 7n });
  t.equal(
    sortedJsonStringify(anyToAmino(packAny(BaseAccountSchema, acc))),
    `{"type":"chain-sdk/BaseAccount","value":{"account_number":"7","address":"chain1x","public_key":{"type":"consensus/PubKeySecp256k1","value":"${Buffer.from(G).toString('base64')}"}}}`,
  );
});

t.test('canonical JSON and formats', async (t) => {
  const doc = makeSignDoc(
    [{ type: 'z/Last', value: { b: '<&>', a: [{ y: '1', x: '2' }] } }],
    { amount: [{ denom: 'stake', amount: '1' }], gas: '5' },
    'chain-<1>',
    'a & b',
    3,
    4,
  );
  t.equal(sortedJsonStringify(doc as never), utf8(serializeSignDoc(doc)), 'same as @cosmjs/amino for <, >, &');
  // Go also escapes U+2028/U+2029; CosmJS does not (the only difference; the SDK verifies).
  t.equal(sortedJsonStringify({ memo: 'a\u2028b\u2029' }), '{"memo":"a\\u2028b\\u2029"}');
  t.equal(sortedJsonStringify({ b: { d: 1, c: [{ f: true, e: null }] }, a: 'x' }), '{"a":"x","b":{"c":[{"e":null,"f":true}],"d":1}}');
  t.equal(formatRfc3339Nano(0n, 0), '1970-01-01T00:00:00Z');
  t.equal(formatRfc3339Nano(1798761600n, 120_000_000), '2027-01-01T00:00:00.12Z');
  t.equal(formatRfc3339Nano(1798761600n, 1), '2027-01-01T00:00:00.000000001Z');
  t.equal(formatRfc3339Nano(1798761600n, 999_999_999), '2027-01-01T00:00:00.999999999Z');
  t.equal(emitAminoName('chain-sdk/MsgSend', UP), 'cosmos-sdk/MsgSend');
  t.equal(emitAminoName('cosmos-sdk/MsgSend'), 'chain-sdk/MsgSend');
  t.equal(emitAminoName('os/PubKeyEthSecp256k1', UP), 'os/PubKeyEthSecp256k1');
  // A message without an amino name inside an Any is tagged with its type URL.
  t.same(anyToAmino(packAny(CoinSchema, create(CoinSchema, { denom: 'a', amount: '0' }))), { type: '/chain.base.v1beta1.Coin', value: { amount: '0', denom: 'a' } });
  t.same(messageToAminoValue(CoinSchema, create(CoinSchema)), { amount: '0' }, 'amount is dont_omitempty (an empty Int is "0"), denom is not');
  t.same(messageToAminoValue(CoinSchema, create(CoinSchema, { denom: 'a', amount: '5' })), { amount: '5', denom: 'a' });
  t.throws(() => anyToAmino({ $typeName: 'google.protobuf.Any', typeUrl: '/chain.none.Nope', value: new Uint8Array() }), UnknownTypeUrlError);
  t.throws(() => msgToAmino(CoinSchema, create(CoinSchema)), /has no amino name/);
});
