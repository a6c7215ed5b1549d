/**
 * x/bank messages, params, metadata and genesis as plain objects (cosmos-sdk:
 * proto/cosmos/bank/v1beta1/{bank,tx,genesis}.proto; cosmos/cosmos-sdk:proto/cosmos/bank/v1beta1/bank.proto). JSON
 * forms use the proto field names, as the SDK's genesis and REST JSON do.
 */
import { fromBinary } from '@bufbuild/protobuf';
import { coinsFromJson, type Coin } from '../../coins.js';
import { MsgSendSchema } from '../../../gen/chain/bank/v1beta1/tx_pb.js';
import { registerError } from '../../errors.js';

/** x/bank/types/errors.go, codespace `bank`. */
export const BANK_CODESPACE = 'bank';
export const bankErrors = {
  noInputs: registerError(BANK_CODESPACE, 2, 'no inputs to send transaction'),
  noOutputs: registerError(BANK_CODESPACE, 3, 'no outputs to send transaction'),
  inputOutputMismatch: registerError(BANK_CODESPACE, 4, 'sum inputs != sum outputs'),
  sendDisabled: registerError(BANK_CODESPACE, 5, 'send transactions are disabled'),
  denomMetadataNotFound: registerError(BANK_CODESPACE, 6, 'client denom metadata not found'),
  invalidKey: registerError(BANK_CODESPACE, 7, 'invalid key'),
  duplicateEntry: registerError(BANK_CODESPACE, 8, 'duplicate entry'),
  multipleSenders: registerError(BANK_CODESPACE, 9, 'multiple senders not allowed'),
} as const;

/** MsgSend, decoded (signer = fromAddress). */
export interface MsgSend {
  fromAddress: string;
  toAddress: string;
  amount: Coin[];
}

export interface SendEnabled {
  denom: string;
  enabled: boolean;
}

export interface BankParams {
  /** Deprecated in the SDK (moved to the send_enabled store); kept for the JSON shape. */
  send_enabled: SendEnabled[];
  default_send_enabled: boolean;
}

export interface DenomUnit {
  denom: string;
  exponent: number;
  aliases: string[];
}

export interface Metadata {
  description: string;
  denom_units: DenomUnit[];
  base: string;
  display: string;
  name: string;
  symbol: string;
  uri: string;
  uri_hash: string;
}

export interface Balance {
  address: string;
  coins: Coin[];
}

export interface BankGenesis {
  params: BankParams;
  balances: Balance[];
  supply: Coin[];
  denom_metadata: Metadata[];
  send_enabled: SendEnabled[];
}

export function defaultBankParams(): BankParams {
  return { send_enabled: [], default_send_enabled: true };
}

export function defaultBankGenesis(): BankGenesis {
  return { params: defaultBankParams(), balances: [], supply: [], denom_metadata: [], send_enabled: [] };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function field(o: Record<string, unknown>, snake: string, camel: string): unknown {
  return o[snake] ?? o[camel];
}

function str(v: unknown, what: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new Error(`${what} must be a string`);
  return v;
}

function arr(v: unknown, what: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new Error(`${what} must be an array`);
  return v;
}

/**
 * MsgSend from the protobuf tx decoder's `chain.bank.v1beta1.MsgSend` message (lowerCamel fields,
 * amounts as strings), its protobuf bytes, or JSON (`from_address`/`fromAddress`).
 */
export function parseMsgSend(v: unknown): MsgSend {
  if (v instanceof Uint8Array) v = fromBinary(MsgSendSchema, v);
  if (!isObject(v)) throw new Error('MsgSend must be an object');
  return {
    fromAddress: str(field(v, 'from_address', 'fromAddress'), 'from_address'),
    toAddress: str(field(v, 'to_address', 'toAddress'), 'to_address'),
    amount: coinsFromJson(v['amount']),
  };
}

function parseSendEnabled(v: unknown): SendEnabled {
  if (!isObject(v)) throw new Error('send_enabled entry must be an object');
  const enabled = v['enabled'] ?? false;
  if (typeof enabled !== 'boolean') throw new Error('send_enabled.enabled must be a boolean');
  return { denom: str(v['denom'], 'send_enabled.denom'), enabled };
}

export function parseBankParams(v: unknown): BankParams {
  if (v === undefined || v === null) return defaultBankParams();
  if (!isObject(v)) throw new Error('bank params must be an object');
  const d = field(v, 'default_send_enabled', 'defaultSendEnabled') ?? true;
  if (typeof d !== 'boolean') throw new Error('default_send_enabled must be a boolean');
  return { send_enabled: arr(field(v, 'send_enabled', 'sendEnabled'), 'params.send_enabled').map(parseSendEnabled), default_send_enabled: d };
}

export function parseMetadata(v: unknown): Metadata {
  if (!isObject(v)) throw new Error('denom metadata must be an object');
  return {
    description: str(v['description'], 'description'),
    denom_units: arr(field(v, 'denom_units', 'denomUnits'), 'denom_units').map((u) => {
      if (!isObject(u)) throw new Error('denom unit must be an object');
      const exponent = u['exponent'] ?? 0;
      if (typeof exponent !== 'number' || !Number.isInteger(exponent) || exponent < 0 || exponent > 0xffffffff) throw new Error('denom unit exponent must be a uint32');
      return { denom: str(u['denom'], 'denom unit denom'), exponent, aliases: arr(u['aliases'], 'aliases').map((a) => str(a, 'alias')) };
    }),
    base: str(v['base'], 'base'),
    display: str(v['display'], 'display'),
    name: str(v['name'], 'name'),
    symbol: str(v['symbol'], 'symbol'),
    uri: str(v['uri'], 'uri'),
    uri_hash: str(field(v, 'uri_hash', 'uriHash'), 'uri_hash'),
  };
}

/** The bank section of genesis app_state; absent → the default genesis. */
export function parseBankGenesis(v: unknown): BankGenesis {
  if (v === undefined || v === null) return defaultBankGenesis();
  if (!isObject(v)) throw new Error('bank genesis must be an object');
  return {
    params: parseBankParams(v['params']),
    balances: arr(v['balances'], 'balances').map((b) => {
      if (!isObject(b)) throw new Error('balance must be an object');
      return { address: str(b['address'], 'balance address'), coins: coinsFromJson(b['coins']) };
    }),
    supply: coinsFromJson(v['supply']),
    denom_metadata: arr(field(v, 'denom_metadata', 'denomMetadata'), 'denom_metadata').map(parseMetadata),
    send_enabled: arr(field(v, 'send_enabled', 'sendEnabled'), 'send_enabled').map(parseSendEnabled),
  };
}
