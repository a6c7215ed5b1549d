/**
 * TxEncodeAmino / TxDecodeAmino (src/app/txservice/amino.ts): go-amino binary of a legacy StdTx.
 *
 * Vectors from public material:
 * - prefix bytes of registered key types, CometBFT encoding spec (docs/spec/blockchain/encoding.md):
 *   tendermint/PubKeyEd25519 1624DE64, tendermint/PubKeySecp256k1 EB5AE987,
 *   tendermint/PrivKeySecp256k1 E1B0F79B, tendermint/PubKeyMultisigThreshold 22C1F7E2;
 * - the TxEncodeAmino / TxDecodeAmino examples of cosmos-sdk x/auth/tx/README.md (one MsgSend StdTx,
 *   memo "foobar", no signatures): its binary starts with cosmos-sdk/StdTx's prefix 282816A9 and
 *   carries cosmos-sdk/MsgSend's prefix A8A3619A at bytes 6..9.
 */
import { create } from '@bufbuild/protobuf';
import t, { type Test } from 'tap';
import { GrpcCode, GrpcStatusError } from '../../src/app/errors.js';
import { TxDecodeAminoRequestSchema, TxEncodeAminoRequestSchema } from '../../src/gen/chain/tx/v1beta1/service_pb.js';
import { aminoPrefix, decodeStdTxAmino, encodeStdTxAmino, txDecodeAmino, txEncodeAmino } from '../../src/app/txservice/amino.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex').toUpperCase();
const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');

const encode = (aminoJson: string): Uint8Array => txEncodeAmino(create(TxEncodeAminoRequestSchema, { aminoJson })).aminoBinary;
const decode = (aminoBinary: Uint8Array): string => txDecodeAmino(create(TxDecodeAminoRequestSchema, { aminoBinary })).aminoJson;

function grpcError(t: Test, fn: () => unknown, code: GrpcCode, match?: RegExp | string): void {
  try {
    fn();
    t.fail('expected a GrpcStatusError');
  } catch (e) {
    t.type(e, GrpcStatusError);
    const err = e as GrpcStatusError;
    t.equal(GrpcCode[err.grpcCode], GrpcCode[code]);
    if (match !== undefined) t.match(err.desc, match);
  }
}

// cosmos-sdk x/auth/tx/README.md, gRPC TxEncodeAmino / TxDecodeAmino examples.
const UPSTREAM_JSON =
  '{"type":"cosmos-sdk/StdTx","value":{"msg":[{"type":"cosmos-sdk/MsgSend","value":{"from_address":"cosmos1tszz7p2zgd7vvkahyfre4wn5xyu80rptg6v9h5","to_address":"cosmos1tszz7p2zgd7vvkahyfre4wn5xyu80rptg6v9h5","amount":[{"denom":"stake","amount":"10"}]}}],"fee":{"amount":[{"denom":"stake","amount":"10"}],"gas":"200000"},"signatures":null,"memo":"foobar","timeout_height":"0"}}';
const UPSTREAM_BINARY =
  'KCgWqQpvqKNhmgotY29zbW9zMXRzeno3cDJ6Z2Q3dnZrYWh5ZnJlNHduNXh5dTgwcnB0ZzZ2OWg1Ei1jb3Ntb3MxdHN6ejdwMnpnZDd2dmthaHlmcmU0d241eHl1ODBycHRnNnY5aDUaCwoFc3Rha2USAjEwEhEKCwoFc3Rha2USAjEwEMCaDCIGZm9vYmFy';

// Compressed secp256k1 point of private key 1 (cosmos/cosmos-sdk:proto/cosmos/crypto/secp256k1/keys.proto) and a 64-byte r‖s.
const SECP_PUB = Buffer.from('0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798', 'hex');
const SIG = Buffer.alloc(64, 7);
const ED_PUB = Buffer.alloc(32, 0x11);

function sendTx(spelling: 'upstream' | 'spec'): string {
  const sdk = spelling === 'upstream' ? 'cosmos-sdk' : 'chain-sdk';
  const key = spelling === 'upstream' ? 'tendermint' : 'consensus';
  return JSON.stringify({
    type: `${sdk}/StdTx`,
    value: {
      msg: [{ type: `${sdk}/MsgSend`, value: { from_address: 'chain1from', to_address: 'chain1to', amount: [{ denom: 'ustake', amount: '1000' }] } }],
      fee: { amount: [{ denom: 'ustake', amount: '5' }], gas: '200000' },
      signatures: [{ pub_key: { type: `${key}/PubKeySecp256k1`, value: b64(SECP_PUB) }, signature: b64(SIG) }],
      memo: 'hi <there>',
      timeout_height: '42',
    },
  });
}

t.test('prefix rule against published prefixes', async (t) => {
  t.equal(hex(aminoPrefix('tendermint/PubKeySecp256k1')), 'EB5AE987');
  t.equal(hex(aminoPrefix('tendermint/PubKeyEd25519')), '1624DE64');
  t.equal(hex(aminoPrefix('tendermint/PrivKeySecp256k1')), 'E1B0F79B');
  t.equal(hex(aminoPrefix('tendermint/PubKeyMultisigThreshold')), '22C1F7E2');
  const upstream = Buffer.from(UPSTREAM_BINARY, 'base64');
  t.equal(hex(aminoPrefix('cosmos-sdk/StdTx')), '282816A9');
  t.equal(hex(upstream.subarray(0, 4)), '282816A9');
  t.equal(hex(aminoPrefix('cosmos-sdk/MsgSend')), 'A8A3619A');
  t.equal(hex(upstream.subarray(6, 10)), 'A8A3619A');
});

t.test('upstream x/auth/tx README example, both directions', async (t) => {
  t.equal(b64(encode(UPSTREAM_JSON)), UPSTREAM_BINARY);
  t.equal(decode(Buffer.from(UPSTREAM_BINARY, 'base64')), UPSTREAM_JSON);
});

t.test('MsgSend StdTx with a secp256k1 signature round-trips in both spellings', async (t) => {
  for (const spelling of ['upstream', 'spec'] as const) {
    const json = sendTx(spelling);
    const bin = encode(json);
    const stdTx = spelling === 'upstream' ? 'cosmos-sdk/StdTx' : 'chain-sdk/StdTx';
    const pub = spelling === 'upstream' ? 'tendermint/PubKeySecp256k1' : 'consensus/PubKeySecp256k1';
    t.equal(hex(bin.subarray(0, 4)), hex(aminoPrefix(stdTx)), `${spelling}: StdTx prefix`);
    // signatures (field 3) → StdSignature{1 pub_key: len 0x26 = prefix(4) + 0x21 + 33 key bytes, 2 signature}
    const sigField = `1A6A0A26${hex(aminoPrefix(pub))}21${hex(SECP_PUB)}1240${hex(SIG)}`;
    t.ok(hex(bin).includes(sigField), `${spelling}: signature field`);
    t.ok(hex(bin).endsWith(`220A${Buffer.from('hi <there>').toString('hex').toUpperCase()}282A`), `${spelling}: memo and timeout_height`);
    // Go's encoding/json escapes < and > in strings.
    t.equal(decode(bin), json.replace('<', '\\u003c').replace('>', '\\u003e'), `${spelling}: decode gives the same JSON`);
  }
  t.not(hex(encode(sendTx('upstream'))), hex(encode(sendTx('spec'))), 'the spellings have different prefixes');
});

t.test('authz, auth and ed25519 types round-trip', async (t) => {
  const send = { type: 'cosmos-sdk/MsgSend', value: { from_address: 'chain1g', to_address: 'chain1e', amount: [{ denom: 'u', amount: '1' }] } };
  const msgs = [
    {
      type: 'cosmos-sdk/MsgGrant',
      value: {
        granter: 'chain1g',
        grantee: 'chain1e',
        grant: { authorization: { type: 'cosmos-sdk/GenericAuthorization', value: { msg: '/cosmos.bank.v1beta1.MsgSend' } }, expiration: '2030-01-02T03:04:05.5Z' },
      },
    },
    {
      type: 'chain-sdk/MsgGrant',
      value: {
        granter: 'chain1g',
        grantee: 'chain1e',
        grant: { authorization: { type: 'chain-sdk/SendAuthorization', value: { spend_limit: [{ denom: 'u', amount: '99' }], allow_list: ['chain1x', 'chain1y'] } } },
      },
    },
    { type: 'cosmos-sdk/MsgExec', value: { grantee: 'chain1e', msgs: [send, send] } },
    { type: 'cosmos-sdk/MsgRevoke', value: { granter: 'chain1g', grantee: 'chain1e', msg_type_url: '/chain.bank.v1beta1.MsgSend' } },
    {
      type: 'cosmos-sdk/x/auth/MsgUpdateParams',
      value: {
        authority: 'chain1gov',
        params: {
          max_memo_characters: '256',
          tx_sig_limit: '7',
          tx_size_cost_per_byte: '10',
          sig_verify_cost_ed25519: '590',
          sig_verify_cost_secp256k1: '1000',
          sig_verify_cost_mldsa65: '750',
        },
      },
    },
  ];
  const json = JSON.stringify({
    type: 'cosmos-sdk/StdTx',
    value: {
      msg: msgs,
      fee: { amount: null, gas: '1', payer: 'chain1p', granter: 'chain1q' },
      signatures: [
        { pub_key: { type: 'tendermint/PubKeyEd25519', value: b64(ED_PUB) }, signature: b64(SIG) },
        { pub_key: null, signature: b64(SIG) },
      ],
      memo: '',
      timeout_height: '0',
    },
  });
  const bin = encode(json);
  t.equal(decode(bin), json);
  t.ok(hex(bin).includes(`0A251624DE6420${hex(ED_PUB)}`), 'ed25519 pub_key field: len 0x25 = prefix(4) + 0x20 + 32');
  // Grant.expiration: {1 seconds, 2 nanos} as uvarints.
  const secs = BigInt(Date.UTC(2030, 0, 2, 3, 4, 5) / 1000);
  t.ok(hex(bin).includes(`08${hex(uvarint(secs))}10${hex(uvarint(500_000_000n))}`), 'expiration encoding');
  // Absent non-nullable struct (MsgUpdateParams.params) decodes to its zero value; zero uint64s are omitted in JSON.
  const empty = '{"type":"cosmos-sdk/StdTx","value":{"msg":[{"type":"cosmos-sdk/x/auth/MsgUpdateParams","value":{"authority":"a"}}]}}';
  t.equal(
    decode(encode(empty)),
    '{"type":"cosmos-sdk/StdTx","value":{"msg":[{"type":"cosmos-sdk/x/auth/MsgUpdateParams","value":{"authority":"a","params":{}}}],"fee":{"amount":null,"gas":"0"},"signatures":null,"memo":"","timeout_height":"0"}}',
  );
});

function uvarint(v: bigint): Uint8Array {
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Uint8Array.from(out);
}

t.test('empty input is InvalidArgument (as upstream)', async (t) => {
  grpcError(t, () => encode(''), GrpcCode.InvalidArgument, /^invalid empty tx json$/);
  grpcError(t, () => decode(new Uint8Array(0)), GrpcCode.InvalidArgument, /^invalid empty tx bytes$/);
});

t.test('malformed JSON is InvalidArgument', async (t) => {
  grpcError(t, () => encode('{'), GrpcCode.InvalidArgument, /invalid amino JSON/);
  grpcError(t, () => encode('[]'), GrpcCode.InvalidArgument, /StdTx/);
  grpcError(t, () => encode('{"type":"cosmos-sdk/MsgSend","value":{}}'), GrpcCode.InvalidArgument, /StdTx/);
  grpcError(t, () => encode('{"type":"cosmos-sdk/StdTx","value":{"msg":[{"type":"cosmos-sdk/Nope","value":{}}]}}'), GrpcCode.InvalidArgument, /unknown msg type/);
  grpcError(t, () => encode('{"type":"cosmos-sdk/StdTx","value":{"msg":[{"type":"tendermint/PubKeyEd25519","value":""}]}}'), GrpcCode.InvalidArgument, /unknown msg type/);
  grpcError(t, () => encode('{"type":"cosmos-sdk/StdTx","value":{"fee":{"gas":200000}}}'), GrpcCode.InvalidArgument, /gas: expected an unsigned integer string/);
  grpcError(t, () => encode('{"type":"cosmos-sdk/StdTx","value":{"fee":{"gas":"18446744073709551616"}}}'), GrpcCode.InvalidArgument, /out of range/);
  grpcError(t, () => encode('{"type":"cosmos-sdk/StdTx","value":{"signatures":[{"signature":"***"}]}}'), GrpcCode.InvalidArgument, /base64/);
  grpcError(t, () => encode('{"type":"cosmos-sdk/StdTx","value":{"fee":{"amount":[{"denom":"u","amount":"1.5"}]}}}'), GrpcCode.InvalidArgument, /invalid integer/);
  grpcError(t, () => encode('{"type":"cosmos-sdk/StdTx","value":{"msg":{}}}'), GrpcCode.InvalidArgument, /expected a list/);
});

t.test('malformed binary is InvalidArgument', async (t) => {
  const good = Buffer.from(UPSTREAM_BINARY, 'base64');
  grpcError(t, () => decode(Uint8Array.of(1, 2)), GrpcCode.InvalidArgument, /too short/);
  grpcError(t, () => decode(Uint8Array.of(1, 2, 3, 4, 5)), GrpcCode.InvalidArgument, /unknown stdtx prefix 01020304/);
  grpcError(t, () => decode(good.subarray(0, good.length - 3)), GrpcCode.InvalidArgument, /past the end/);
  grpcError(t, () => decode(Buffer.concat([good, Uint8Array.of(0x7a)])), GrpcCode.InvalidArgument, /unknown field 15/);
  grpcError(t, () => decode(Buffer.concat([good, Uint8Array.of(0x0a, 0x00)])), GrpcCode.InvalidArgument, /out of order/);
  grpcError(t, () => decode(Uint8Array.of(0x28, 0x28, 0x16, 0xa9, 0x28)), GrpcCode.InvalidArgument, /truncated varint/);
  grpcError(t, () => decode(Uint8Array.of(0x28, 0x28, 0x16, 0xa9, 0x0a, 0x04, 1, 2, 3, 4)), GrpcCode.InvalidArgument, /unknown msg prefix/);
  grpcError(t, () => decode(Uint8Array.of(0x28, 0x28, 0x16, 0xa9, 0x22, 0x01, 0xff)), GrpcCode.InvalidArgument, /invalid UTF-8/);
});

t.test('codec helpers agree with the service methods', async (t) => {
  t.equal(b64(encodeStdTxAmino(UPSTREAM_JSON)), UPSTREAM_BINARY);
  t.equal(decodeStdTxAmino(Buffer.from(UPSTREAM_BINARY, 'base64')), UPSTREAM_JSON);
});
