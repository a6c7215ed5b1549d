/**
 * Sign bytes of the tx sign modes (cosmos/cosmos-sdk:x/auth/tx/direct.go).
 *
 * - SIGN_MODE_DIRECT: `SignDoc{body_bytes, auth_info_bytes, chain_id, account_number}` in
 *   protobuf, with the exact body and auth-info bytes of the TxRaw (cosmos-sdk: x/tx/signing/direct).
 * - SIGN_MODE_DIRECT_AUX: `SignDocDirectAux{body_bytes, public_key, chain_id, account_number,
 *   sequence}` (x/tx/signing/directaux).
 * - SIGN_MODE_LEGACY_AMINO_JSON: the canonical StdSignDoc JSON (x/tx/signing/aminojson
 *   sign mode handler; legacy x/auth/migrations/legacytx StdSignBytes):
 *   `{"account_number":"N","chain_id":"…","fee":{"amount":[…],"gas":"N"},"memo":"…",
 *   "msgs":[{"type":"chain-sdk/MsgSend","value":{…}}],"sequence":"N"}` with keys sorted, plus
 *   `timeout_height`, `timeout_timestamp`, `unordered`, `fee.payer`, `fee.granter` only when set.
 *
 * Amino names are the spec's (`chain-sdk/…`) unless `upstreamNames` is set (`cosmos-sdk/…`, what
 * unmodified CosmJS/Keplr amino signers produce). A verifier that accepts both spellings tries
 * the spec form first, then the upstream one: the two sign docs differ only in those names.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import type { Any } from '@bufbuild/protobuf/wkt';
import { sdkErrors } from '../app/errors.js';
import { SignDocDirectAuxSchema, SignDocSchema, type AuthInfo, type TxBody } from '../gen/chain/tx/v1beta1/tx_pb.js';
import { CoinSchema } from '../gen/chain/base/v1beta1/coin_pb.js';
import { anyToAmino, formatRfc3339Nano, messageToAminoValue, sortedJsonStringify, type AminoJson, type AminoOptions } from './amino.js';

function varintLength(v: bigint): number {
  let n = 1;
  while (v >= 0x80n) {
    v >>= 7n;
    n++;
  }
  return n;
}

function putVarint(out: Uint8Array, pos: number, v: bigint): number {
  while (v >= 0x80n) {
    out[pos++] = Number(v & 0x7fn) | 0x80;
    v >>= 7n;
  }
  out[pos++] = Number(v);
  return pos;
}

const utf8Encoder = new TextEncoder();

/**
 * SIGN_MODE_DIRECT sign bytes (CosmJS makeSignBytes): the SignDoc protobuf, written by hand
 * because every signature verification builds one (proto3: empty fields are left out; the tests
 * hold it equal to CosmJS and to the generated SignDoc encoder).
 */
export function signBytesDirect(bodyBytes: Uint8Array, authInfoBytes: Uint8Array, chainId: string, accountNumber: bigint): Uint8Array {
  if (accountNumber < 0n || accountNumber >= 1n << 64n) throw new RangeError(`account number out of uint64 range: ${accountNumber}`);
  const chain = utf8Encoder.encode(chainId);
  const parts: Array<[number, Uint8Array]> = [
    [0x0a, bodyBytes],
    [0x12, authInfoBytes],
    [0x1a, chain],
  ];
  let size = 0;
  for (const [, b] of parts) if (b.length > 0) size += 1 + varintLength(BigInt(b.length)) + b.length;
  if (accountNumber !== 0n) size += 1 + varintLength(accountNumber);
  const out = new Uint8Array(size);
  let pos = 0;
  for (const [tag, b] of parts) {
    if (b.length === 0) continue;
    out[pos++] = tag;
    pos = putVarint(out, pos, BigInt(b.length));
    out.set(b, pos);
    pos += b.length;
  }
  if (accountNumber !== 0n) {
    out[pos++] = 0x20;
    pos = putVarint(out, pos, accountNumber);
  }
  return out;
}

/** The same bytes through the generated encoder (kept for tests and as the reference). */
export function signBytesDirectGenerated(bodyBytes: Uint8Array, authInfoBytes: Uint8Array, chainId: string, accountNumber: bigint): Uint8Array {
  return toBinary(SignDocSchema, create(SignDocSchema, { bodyBytes, authInfoBytes, chainId, accountNumber }));
}

/** SIGN_MODE_DIRECT_AUX sign bytes. */
export function signBytesDirectAux(
  bodyBytes: Uint8Array,
  publicKey: Any | undefined,
  chainId: string,
  accountNumber: bigint,
  sequence: bigint,
): Uint8Array {
  return toBinary(SignDocDirectAuxSchema, create(SignDocDirectAuxSchema, { bodyBytes, publicKey, chainId, accountNumber, sequence }));
}

/** What the amino sign doc reads from a tx (a DecodedTxRaw from decodeTx fits). */
export interface AminoSignableTx {
  body: TxBody;
  authInfo: AuthInfo;
}

/**
 * The StdSignDoc as a JSON value (keys unsorted; sortedJsonStringify sorts). Throws an AbciError
 * (invalid request) for a tx amino JSON cannot represent: extension options, or no fee.
 */
export function stdSignDoc(tx: AminoSignableTx, chainId: string, accountNumber: bigint, sequence: bigint, opts: AminoOptions = {}): AminoJson {
  const { body, authInfo } = tx;
  if (body.extensionOptions.length > 0 || body.nonCriticalExtensionOptions.length > 0) {
    throw sdkErrors.invalidRequest.wrap('SIGN_MODE_LEGACY_AMINO_JSON does not support protobuf extension options');
  }
  const fee = authInfo.fee;
  if (fee === undefined) throw sdkErrors.invalidRequest.wrap('fee cannot be nil');
  const aminoFee: { [k: string]: AminoJson } = {
    amount: fee.amount.map((c) => messageToAminoValue(CoinSchema, c, opts)),
    gas: fee.gasLimit.toString(),
  };
  if (fee.payer !== '') aminoFee['payer'] = fee.payer;
  if (fee.granter !== '') aminoFee['granter'] = fee.granter;
  const doc: { [k: string]: AminoJson } = {
    account_number: accountNumber.toString(),
    chain_id: chainId,
    fee: aminoFee,
    memo: body.memo,
    msgs: body.messages.map((m) => anyToAmino(m, opts)),
    sequence: sequence.toString(),
  };
  if (body.timeoutHeight !== 0n) doc['timeout_height'] = body.timeoutHeight.toString();
  if (body.timeoutTimestamp !== undefined) doc['timeout_timestamp'] = formatRfc3339Nano(body.timeoutTimestamp.seconds, body.timeoutTimestamp.nanos);
  if (body.unordered) doc['unordered'] = true;
  return doc;
}

/** SIGN_MODE_LEGACY_AMINO_JSON sign bytes: UTF-8 of the sorted StdSignDoc JSON. */
export function signBytesLegacyAmino(tx: AminoSignableTx, chainId: string, accountNumber: bigint, sequence: bigint, opts: AminoOptions = {}): Uint8Array {
  return new TextEncoder().encode(sortedJsonStringify(stdSignDoc(tx, chainId, accountNumber, sequence, opts)));
}
