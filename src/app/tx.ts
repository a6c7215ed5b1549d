/**
 * Transactions as the base app sees them, and the pluggable decoder that produces them
 * (cosmos-sdk: types/tx_msg.go Tx/FeeTx/TxWithMemo, x/auth/tx/decoder.go).
 *
 * The real decoder (protobuf TxRaw → TxBody/AuthInfo, ADR-027 checks) is the auth module's; a
 * BaseApp given none defaults to `rejectingTxDecoder`, and tests may use the unauthenticated
 * `jsonTxDecoder`.
 */
import type { Bytes } from './bytes.js';
import { fromUtf8 } from './bytes.js';
import { coinsFromJson, parseInt256, type Coin } from './coins.js';
import { sdkErrors } from './errors.js';

/** One message: its type URL and its value, either still encoded (bytes) or a decoded object. */
export interface TxMsg {
  typeUrl: string;
  value: unknown;
}

export interface Fee {
  amount: Coin[];
  /** bech32 fee payer, '' when the first signer pays. */
  payer: string;
  /** bech32 fee granter (x/feegrant), '' when none. */
  granter: string;
}

/** What a TxDecoder produces. */
export interface DecodedTx {
  msgs: TxMsg[];
  fee: Fee;
  /** Gas limit (AuthInfo.fee.gas_limit). */
  gas: bigint;
  memo: string;
  /** 0 = none. */
  timeoutHeight: bigint;
  /** Decoder-specific signature data for the auth ante decorators (signer infos, signatures). */
  auth?: unknown;
}

/** A decoded tx after message routing: values are the handlers' message objects. */
export interface Tx extends DecodedTx {
  /** The raw tx bytes (TxRaw), as CometBFT hashes them. */
  bytes: Bytes;
  /** Each message's signers, in message order (GetSigners). */
  msgSigners: Bytes[][];
  /** Unique signers in first-appearance order (sdk.Tx GetSigners). */
  signers: Bytes[];
}

/** Decodes tx bytes; throws an AbciError (`… : tx parse error`, sdk code 2) on bad input. */
export interface TxDecoder {
  decode(txBytes: Bytes): DecodedTx;
}

/** BaseApp's default when it is given no decoder: every tx is undecodable. */
export const rejectingTxDecoder: TxDecoder = {
  decode(): DecodedTx {
    throw sdkErrors.txDecode.wrap('no tx decoder configured');
  },
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown, what: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new Error(`${what} must be a string`);
  return v;
}

/**
 * A decoder for the proto3-JSON shape of a Tx, UTF-8 encoded:
 * `{"body":{"messages":[{"@type":"/chain.bank.v1beta1.MsgSend",…}],"memo":"","timeout_height":"0"},
 *   "auth_info":{"fee":{"amount":[…],"gas_limit":"200000","payer":"","granter":""}},"signatures":[]}`.
 *
 * It carries no authentication: for tests and local devnets only, until TxRaw decoding exists.
 * A message value is the JSON object without `@type`; the route's `decode` turns it into the
 * handler's message type.
 */
export const jsonTxDecoder: TxDecoder = {
  decode(txBytes: Bytes): DecodedTx {
    try {
      const j: unknown = JSON.parse(fromUtf8(txBytes));
      if (!isObject(j)) throw new Error('tx must be a JSON object');
      const body = j['body'];
      if (!isObject(body)) throw new Error('missing body');
      const messages = body['messages'];
      if (!Array.isArray(messages)) throw new Error('body.messages must be an array');
      const msgs: TxMsg[] = messages.map((m, i) => {
        if (!isObject(m) || typeof m['@type'] !== 'string') throw new Error(`message ${i} has no @type`);
        const { ['@type']: typeUrl, ...value } = m;
        return { typeUrl: typeUrl as string, value };
      });
      const authInfo = j['auth_info'] ?? {};
      if (!isObject(authInfo)) throw new Error('auth_info must be an object');
      const fee = authInfo['fee'] ?? {};
      if (!isObject(fee)) throw new Error('auth_info.fee must be an object');
      const gas = parseInt256(fee['gas_limit'] ?? '0');
      if (gas < 0n || gas >= 1n << 64n) throw new Error('gas_limit out of range');
      const timeoutHeight = parseInt256(body['timeout_height'] ?? '0');
      if (timeoutHeight < 0n || timeoutHeight >= 1n << 64n) throw new Error('timeout_height out of range');
      return {
        msgs,
        fee: {
          amount: coinsFromJson(fee['amount']),
          payer: str(fee['payer'], 'fee.payer'),
          granter: str(fee['granter'], 'fee.granter'),
        },
        gas,
        memo: str(body['memo'], 'memo'),
        timeoutHeight,
        auth: { signatures: j['signatures'] ?? [], signerInfos: authInfo['signer_infos'] ?? [] },
      };
    } catch (e) {
      throw sdkErrors.txDecode.wrap((e as Error).message);
    }
  },
};
