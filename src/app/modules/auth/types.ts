/**
 * x/auth types: params with the SDK 0.55 defaults and their validation, the account shape the
 * keeper works with, the error x/auth borrows from x/gov, and the names the module registers
 * (cosmos-sdk: x/auth/types/params.go, x/auth/types/account.go, x/gov/types/errors.go;
 * cosmos/cosmos-sdk:proto/cosmos/auth/v1beta1/auth.proto).
 */
import { create } from '@bufbuild/protobuf';
import type { Any } from '@bufbuild/protobuf/wkt';
import type { Bytes } from '../../bytes.js';
import { lookupError, registerError, type RegisteredError } from '../../errors.js';
import { ParamsSchema, type Params } from '../../../gen/chain/auth/v1beta1/auth_pb.js';

export type { Params };

/** Module name (genesis app_state key) and store key, as the SDK names them (x/auth/types/keys.go). */
export const AUTH_MODULE_NAME = 'auth';
export const AUTH_STORE_KEY = 'acc';

/** Module account names the chain knows (x/auth/types/keys.go FeeCollectorName; x/gov, x/mint ModuleName). */
export const FEE_COLLECTOR_NAME = 'fee_collector';
export const GOV_MODULE_NAME = 'gov';
export const MINT_MODULE_NAME = 'mint';

/**
 * x/auth/types/params.go defaults. sig_verify_cost_mldsa65 = 750: ML-DSA-65 verifies in about 0.8×
 * the time of secp256k1 (95.5 µs against 120 µs), so 0.8 × 1000 (cosmos/cosmos-sdk:proto/cosmos/auth/v1beta1/auth.proto).
 */
export const DEFAULT_MAX_MEMO_CHARACTERS = 256n;
export const DEFAULT_TX_SIG_LIMIT = 7n;
export const DEFAULT_TX_SIZE_COST_PER_BYTE = 10n;
export const DEFAULT_SIG_VERIFY_COST_ED25519 = 590n;
export const DEFAULT_SIG_VERIFY_COST_SECP256K1 = 1000n;
export const DEFAULT_SIG_VERIFY_COST_MLDSA65 = 750n;

export function defaultParams(): Params {
  return create(ParamsSchema, {
    maxMemoCharacters: DEFAULT_MAX_MEMO_CHARACTERS,
    txSigLimit: DEFAULT_TX_SIG_LIMIT,
    txSizeCostPerByte: DEFAULT_TX_SIZE_COST_PER_BYTE,
    sigVerifyCostEd25519: DEFAULT_SIG_VERIFY_COST_ED25519,
    sigVerifyCostSecp256k1: DEFAULT_SIG_VERIFY_COST_SECP256K1,
    sigVerifyCostMldsa65: DEFAULT_SIG_VERIFY_COST_MLDSA65,
  });
}

/**
 * Params.Validate: every field must be non-zero. The SDK returns plain errors here (no codespace),
 * so a bad MsgUpdateParams fails with (undefined, 1) and the text below; so do we.
 */
export function validateParams(p: Params): void {
  const checks: [bigint, string][] = [
    [p.maxMemoCharacters, 'invalid max memo characters'],
    [p.txSigLimit, 'invalid tx signature limit'],
    [p.txSizeCostPerByte, 'invalid tx size cost per byte'],
    [p.sigVerifyCostEd25519, 'invalid ED25519 signature verification cost'],
    [p.sigVerifyCostSecp256k1, 'invalid SECP256k1 signature verification cost'],
    [p.sigVerifyCostMldsa65, 'invalid ML-DSA-65 signature verification cost'],
  ];
  for (const [v, what] of checks) if (v === 0n) throw new Error(`${what}: ${v}`);
}

/**
 * An account as the keeper holds it: a BaseAccount, or a ModuleAccount when `name` is set. The
 * public key is its Any with the canonical (`/chain.…`) type URL; the account's address is the
 * key it is stored under.
 */
export interface Account {
  address: Bytes;
  pubKey?: Any;
  accountNumber: bigint;
  sequence: bigint;
  /** Module accounts: the module name. */
  name?: string;
  /** Module accounts: their permissions. */
  permissions?: string[];
}

function registerOnce(codespace: string, code: number, description: string): RegisteredError {
  return lookupError(codespace, code) ?? registerError(codespace, code, description);
}

/**
 * x/gov/types/errors.go ErrInvalidSigner (gov, 13): every `MsgUpdateParams` of the SDK fails with
 * it when the authority is wrong. Registered once, whichever module asks first.
 */
export const govErrInvalidSigner: RegisteredError = registerOnce('gov', 13, 'expected gov account as only signer for proposal message');

/** The type URL and query service the module registers (spec spelling; the names registry maps upstream). */
export interface AuthNames {
  msgUpdateParams: string;
  queryService: string;
  baseAccount: string;
  moduleAccount: string;
}

export const DEFAULT_AUTH_NAMES: AuthNames = {
  msgUpdateParams: '/chain.auth.v1beta1.MsgUpdateParams',
  queryService: '/chain.auth.v1beta1.Query',
  baseAccount: '/chain.auth.v1beta1.BaseAccount',
  moduleAccount: '/chain.auth.v1beta1.ModuleAccount',
};
