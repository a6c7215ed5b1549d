/**
 * The x/auth store layout, as the SDK's collections lay it out (cosmos-sdk: x/auth/types/keys.go,
 * x/auth/keeper/keeper.go), relative to the `acc` store:
 *
 *   0x00                 → Params (protobuf)
 *   0x01 address         → the account, an Any (BaseAccount or ModuleAccount) in protobuf
 *   0x02                 → the global account number: the next number to hand out, u64 big-endian
 *   0x03 u64be(number)   → address (the unique account-number index)
 *
 * Addresses are the sole key part, so a page key of the Accounts query is the raw address.
 */
import { concatBytes, u64be, type Bytes } from '../../bytes.js';

export const PARAMS_KEY = Uint8Array.of(0x00);
export const ACCOUNTS_PREFIX = Uint8Array.of(0x01);
export const GLOBAL_ACCOUNT_NUMBER_KEY = Uint8Array.of(0x02);
export const ACCOUNT_NUMBER_PREFIX = Uint8Array.of(0x03);

export function accountKey(addr: Bytes): Bytes {
  return concatBytes(ACCOUNTS_PREFIX, addr);
}

export function accountNumberKey(n: bigint): Bytes {
  return concatBytes(ACCOUNT_NUMBER_PREFIX, u64be(n));
}
