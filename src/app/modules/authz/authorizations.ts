/**
 * The three Authorization implementations a grant may hold (the spec §2.4: Generic, Send,
 * Stake): decoding from an Any, MsgTypeURL, ValidateBasic and Accept (cosmos-sdk:
 * x/authz/generic_authorization.go, x/bank/types/send_authorization.go,
 * x/staking/types/authz.go; cosmos/cosmos-sdk:x/authz/keeper/keeper.go "Accept rules").
 *
 * Authorizations are kept as their generated protobuf messages; type URLs inside them (the
 * GenericAuthorization `msg`) are stored in the canonical `/chain.…` spelling, so a grant made
 * with `/cosmos.bank.v1beta1.MsgSend` is found by an Exec of `/chain.bank.v1beta1.MsgSend` and the
 * reverse.
 */
import { create, fromBinary, type DescMessage } from '@bufbuild/protobuf';
import type { Any } from '@bufbuild/protobuf/wkt';
import type { AddressCodec } from '../../address.js';
import { coinFromJson, coinsFromJson, coinToString, parseInt256, type Coin } from '../../coins.js';
import type { Context } from '../../context.js';
import { AbciError, sdkErrors } from '../../errors.js';
import { GenericAuthorizationSchema, type GenericAuthorization } from '../../../gen/chain/authz/v1beta1/authz_pb.js';
import { SendAuthorizationSchema, type SendAuthorization } from '../../../gen/chain/bank/v1beta1/authz_pb.js';
import { MsgSendSchema } from '../../../gen/chain/bank/v1beta1/tx_pb.js';
import { CoinSchema } from '../../../gen/chain/base/v1beta1/coin_pb.js';
import { AuthorizationType, StakeAuthorizationSchema, type StakeAuthorization } from '../../../gen/chain/staking/v1beta1/authz_pb.js';
import { parseTypeUrl } from '../../../names/index.js';
import { canonicalTypeName, packAny, resolveTypeUrl } from '../../../proto/registry.js';
import { bankErrors } from '../bank/types.js';
import { authzErrors } from './errors.js';

export type Authorization =
  | { kind: 'generic'; value: GenericAuthorization }
  | { kind: 'send'; value: SendAuthorization }
  | { kind: 'stake'; value: StakeAuthorization };

export const MSG_SEND_URL = `/${MsgSendSchema.typeName}`;

/**
 * The staking messages of StakeAuthorization (x/staking/types/authz.go normalizeAuthzType). chaind
 * has no staking module: these are names, not routes.
 */
export const STAKING_MSG_URLS: Readonly<Record<Exclude<AuthorizationType, AuthorizationType.UNSPECIFIED>, string>> = {
  [AuthorizationType.DELEGATE]: '/chain.staking.v1beta1.MsgDelegate',
  [AuthorizationType.UNDELEGATE]: '/chain.staking.v1beta1.MsgUndelegate',
  [AuthorizationType.REDELEGATE]: '/chain.staking.v1beta1.MsgBeginRedelegate',
  [AuthorizationType.CANCEL_UNBONDING_DELEGATION]: '/chain.staking.v1beta1.MsgCancelUnbondingDelegation',
};

/** x/authz/keeper/keeper.go gasCostPerIteration is 20; bank's and staking's Accept charge 10. */
export const SEND_AUTHORIZATION_GAS_PER_ENTRY = 10n;
export const STAKE_AUTHORIZATION_GAS_PER_ENTRY = 10n;

const IFACE = '*authz.Authorization';

/**
 * An Any holding one of the three authorizations, in either type-URL spelling. Anything else is
 * what the SDK's interface registry refuses while decoding the tx (`no concrete type registered
 * for type URL … against interface *authz.Authorization`); a missing Any is Grant.ValidateBasic's
 * `expected authz.Authorization, got <nil>: invalid type`. Throws AbciError.
 */
export function authorizationFromAny(any: Any | undefined): Authorization {
  if (any === undefined || any.typeUrl === '') throw sdkErrors.invalidType.wrap('expected authz.Authorization, got <nil>');
  const desc: DescMessage | undefined = resolveTypeUrl(any.typeUrl);
  const name = desc?.typeName ?? canonicalTypeName(any.typeUrl);
  let value: Authorization;
  try {
    switch (name) {
      case GenericAuthorizationSchema.typeName: {
        const g = fromBinary(GenericAuthorizationSchema, any.value);
        // Canonical spelling of the granted type URL (keys and Exec lookups use it).
        value = { kind: 'generic' as const, value: create(GenericAuthorizationSchema, { msg: parseTypeUrl(g.msg) }) };
        break;
      }
      case SendAuthorizationSchema.typeName:
        value = { kind: 'send' as const, value: fromBinary(SendAuthorizationSchema, any.value) };
        break;
      case StakeAuthorizationSchema.typeName:
        value = { kind: 'stake' as const, value: fromBinary(StakeAuthorizationSchema, any.value) };
        break;
      default:
        throw sdkErrors.txDecode.wrap(`no concrete type registered for type URL ${any.typeUrl} against interface ${IFACE}`);
    }
  } catch (e) {
    if (e instanceof AbciError) throw e;
    throw sdkErrors.txDecode.wrap(`${any.typeUrl}: ${(e as Error).message}`);
  }
  return value;
}

/** The authorization packed in the canonical spelling (codectypes.NewAnyWithValue). */
export function authorizationToAny(a: Authorization): Any {
  switch (a.kind) {
    case 'generic':
      return packAny(GenericAuthorizationSchema, a.value);
    case 'send':
      return packAny(SendAuthorizationSchema, a.value);
    case 'stake':
      return packAny(StakeAuthorizationSchema, a.value);
  }
}

/**
 * Authorization.MsgTypeURL, canonical. A StakeAuthorization of an unknown type has none (the SDK
 * panics; ValidateBasic refuses it first): authz 4.
 */
export function msgTypeUrlOf(a: Authorization): string {
  switch (a.kind) {
    case 'generic':
      return a.value.msg;
    case 'send':
      return MSG_SEND_URL;
    case 'stake': {
      const url = STAKING_MSG_URLS[a.value.authorizationType as keyof typeof STAKING_MSG_URLS];
      if (url === undefined) throw authzErrors.unknownAuthorizationType.wrap(`cannot normalize authz type with ${a.value.authorizationType}`);
      return url;
    }
  }
}

export interface ValidateOptions {
  /** Account addresses (SendAuthorization allow_list). */
  addressCodec: AddressCodec;
  /** Validator operator addresses (StakeAuthorization allow/deny lists). */
  valoperCodec: AddressCodec;
}

function coinAmount(c: { denom: string; amount: string }): bigint {
  try {
    return parseInt256(c.amount);
  } catch {
    throw sdkErrors.invalidCoins.wrap(`invalid coin amount: ${c.amount}${c.denom}`);
  }
}

/**
 * Authorization.ValidateBasic, with chaind's additions marked:
 * - Generic: nothing.
 * - Send (send_authorization.go): spend limit non-empty (`spend limit cannot be nil`) and every
 *   amount positive (`spend limit must be positive`, invalid coins 10); allow_list without
 *   duplicates (bank `duplicate entry`, 8). chaind: allow_list entries must be account addresses
 *   (invalid address 7); upstream stores anything, and an entry that is not an address can never
 *   match a recipient.
 * - Stake (staking/types/authz.go): max_tokens not negative (authz 12), type not UNSPECIFIED
 *   (authz 4). chaind: a type outside 1–4 is authz 4 too (upstream panics in MsgTypeURL later),
 *   and the validator list must be set, non-empty and hold operator addresses, the rule that
 *   upstream's NewStakeAuthorization (every CLI and client grant) enforces (`both allowed & deny
 *   list cannot be empty`, invalid request 18).
 */
export function validateAuthorization(a: Authorization, opts: ValidateOptions): void {
  switch (a.kind) {
    case 'generic':
      return;
    case 'send': {
      const s = a.value;
      if (s.spendLimit.length === 0) throw sdkErrors.invalidCoins.wrap('spend limit cannot be nil');
      for (const c of s.spendLimit) if (coinAmount(c) <= 0n) throw sdkErrors.invalidCoins.wrap('spend limit must be positive');
      const seen = new Set<string>();
      for (const addr of s.allowList) {
        if (seen.has(addr)) throw bankErrors.duplicateEntry;
        seen.add(addr);
      }
      for (const addr of s.allowList) {
        const r = opts.addressCodec.tryDecode(addr);
        if ('error' in r) throw sdkErrors.invalidAddress.wrap(`invalid allow list address ${JSON.stringify(addr)}: ${r.error}`);
      }
      return;
    }
    case 'stake': {
      const s = a.value;
      if (s.maxTokens !== undefined && coinAmount(s.maxTokens) < 0n) {
        throw authzErrors.negativeMaxTokens.wrap(`negative coin amount: ${s.maxTokens.amount}${s.maxTokens.denom}`);
      }
      if (s.authorizationType === AuthorizationType.UNSPECIFIED) throw authzErrors.unknownAuthorizationType;
      msgTypeUrlOf(a);
      const list = s.validators.case === undefined ? [] : s.validators.value.address;
      if (list.length === 0) throw sdkErrors.invalidRequest.wrap('both allowed & deny list cannot be empty');
      for (const v of list) {
        const r = opts.valoperCodec.tryDecode(v);
        if ('error' in r) throw sdkErrors.invalidAddress.wrap(`invalid validator address ${JSON.stringify(v)}: ${r.error}`);
      }
      return;
    }
  }
}

/** authz.AcceptResponse. */
export interface AcceptResponse {
  accept: boolean;
  delete: boolean;
  updated?: Authorization;
}

/** A message as Accept sees it: its canonical type URL and the route's decoded value. */
export interface AcceptMsg {
  typeUrl: string;
  value: unknown;
}

function field(v: unknown, camel: string, snake: string): unknown {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  return o[camel] ?? o[snake];
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Sorted, zero-free coins of a denom → amount map (sdk.Coins after SafeSub). */
function coinsOfMap(m: Map<string, bigint>): Coin[] {
  return [...m.entries()]
    .filter(([, a]) => a !== 0n)
    .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
    .map(([denom, amount]) => ({ denom, amount }));
}

function protoCoin(c: Coin) {
  return create(CoinSchema, { denom: c.denom, amount: c.amount.toString() });
}

/** SendAuthorization.Accept (x/bank/types/send_authorization.go). */
function acceptSend(ctx: Context, s: SendAuthorization, msg: AcceptMsg): AcceptResponse {
  if (msg.typeUrl !== MSG_SEND_URL) throw sdkErrors.invalidType.wrap('type mismatch');
  const toAddr = str(field(msg.value, 'toAddress', 'to_address'));
  const amount = coinsFromJson(field(msg.value, 'amount', 'amount'));
  // SpendLimit.SafeSub(amount): any negative denom, including one the limit lacks, is refused.
  const left = new Map<string, bigint>();
  for (const c of s.spendLimit) left.set(c.denom, (left.get(c.denom) ?? 0n) + coinAmount(c));
  for (const c of amount) left.set(c.denom, (left.get(c.denom) ?? 0n) - c.amount);
  for (const v of left.values()) if (v < 0n) throw sdkErrors.insufficientFunds.wrap('requested amount is more than spend limit');

  let found = false;
  for (const addr of s.allowList) {
    ctx.gasMeter.consume(SEND_AUTHORIZATION_GAS_PER_ENTRY, 'send authorization');
    if (addr === toAddr) {
      found = true;
      break;
    }
  }
  if (s.allowList.length > 0 && !found) throw sdkErrors.unauthorized.wrap(`cannot send to ${toAddr} address`);

  const remaining = coinsOfMap(left);
  if (remaining.length === 0) return { accept: true, delete: true };
  return {
    accept: true,
    delete: false,
    updated: { kind: 'send', value: create(SendAuthorizationSchema, { spendLimit: remaining.map(protoCoin), allowList: [...s.allowList] }) },
  };
}

/** StakeAuthorization.Accept (x/staking/types/authz.go): which field names the validator. */
function stakingTarget(msg: AcceptMsg): { validator: string; amount: Coin } {
  let validator: string;
  switch (msg.typeUrl) {
    case STAKING_MSG_URLS[AuthorizationType.DELEGATE]:
    case STAKING_MSG_URLS[AuthorizationType.UNDELEGATE]:
    case STAKING_MSG_URLS[AuthorizationType.CANCEL_UNBONDING_DELEGATION]:
      validator = str(field(msg.value, 'validatorAddress', 'validator_address'));
      break;
    case STAKING_MSG_URLS[AuthorizationType.REDELEGATE]:
      validator = str(field(msg.value, 'validatorDstAddress', 'validator_dst_address'));
      break;
    default:
      throw sdkErrors.invalidRequest.wrap('unknown msg type');
  }
  const raw = field(msg.value, 'amount', 'amount');
  return { validator, amount: raw === undefined ? { denom: '', amount: 0n } : coinFromJson(raw) };
}

function acceptStake(ctx: Context, s: StakeAuthorization, msg: AcceptMsg): AcceptResponse {
  const { validator, amount } = stakingTarget(msg);
  const allow = s.validators.case === 'allowList' ? s.validators.value.address : [];
  const deny = s.validators.case === 'denyList' ? s.validators.value.address : [];
  let allowed = false;
  for (const v of allow) {
    ctx.gasMeter.consume(STAKE_AUTHORIZATION_GAS_PER_ENTRY, 'stake authorization');
    if (v === validator) {
      allowed = true;
      break;
    }
  }
  for (const v of deny) {
    ctx.gasMeter.consume(STAKE_AUTHORIZATION_GAS_PER_ENTRY, 'stake authorization');
    if (v === validator) throw sdkErrors.unauthorized.wrap(`cannot delegate/undelegate to ${v} validator`);
  }
  if (allow.length > 0 && !allowed) throw sdkErrors.unauthorized.wrap(`cannot delegate/undelegate to ${validator} validator`);

  if (s.maxTokens === undefined) {
    return {
      accept: true,
      delete: false,
      updated: { kind: 'stake', value: create(StakeAuthorizationSchema, { validators: s.validators, authorizationType: s.authorizationType }) },
    };
  }
  // Coin.SafeSub: plain errors upstream (code 1 when they reach a tx result).
  if (s.maxTokens.denom !== amount.denom) throw new Error(`invalid coin denoms: ${s.maxTokens.denom}, ${amount.denom}`);
  const left = coinAmount(s.maxTokens) - amount.amount;
  if (left < 0n) throw new Error(`negative coin amount: ${coinToString({ denom: amount.denom, amount: left })}`);
  if (left === 0n) return { accept: true, delete: true };
  return {
    accept: true,
    delete: false,
    updated: {
      kind: 'stake',
      value: create(StakeAuthorizationSchema, {
        validators: s.validators,
        authorizationType: s.authorizationType,
        maxTokens: protoCoin({ denom: amount.denom, amount: left }),
      }),
    },
  };
}

/** Authorization.Accept. Throws the refusal as the SDK returns it (an AbciError, or a plain Error). */
export function acceptAuthorization(ctx: Context, a: Authorization, msg: AcceptMsg): AcceptResponse {
  switch (a.kind) {
    case 'generic':
      // GenericAuthorization.Accept: always, never updated or deleted.
      return { accept: true, delete: false };
    case 'send':
      return acceptSend(ctx, a.value, msg);
    case 'stake':
      return acceptStake(ctx, a.value, msg);
  }
}
