/**
 * The bank store layout, as x/bank's collections lay it out (cosmos-sdk: x/bank/types/keys.go,
 * x/bank/keeper/view.go), relative to the module's store prefix:
 *
 *   0x00 denom                           → supply, decimal string   (SupplyKey)
 *   0x01 denom                           → denom metadata           (DenomMetadataPrefix)
 *   0x02 u8(len(addr)) addr denom        → balance, decimal string  (BalancesPrefix)
 *   0x03 denom 0x00 u8(len(addr)) addr   → 0x00, owners by denom    (DenomAddressPrefix)
 *   0x04 denom                           → 0x01/0x00 send enabled   (SendEnabledPrefix)
 *   0x05                                 → params                   (ParamsKey)
 *
 * The length byte before the address is what makes "every balance of one address" a prefix
 * range. Amounts are math.Int's text form, as sdk.IntValue stores them. Metadata and params are
 * stored as JSON (the stored form is not part of any wire format).
 */
import { concatBytes, utf8, type Bytes } from '../../bytes.js';

export const SUPPLY_PREFIX = Uint8Array.of(0x00);
export const DENOM_METADATA_PREFIX = Uint8Array.of(0x01);
export const BALANCES_PREFIX = Uint8Array.of(0x02);
export const DENOM_ADDRESS_PREFIX = Uint8Array.of(0x03);
export const SEND_ENABLED_PREFIX = Uint8Array.of(0x04);
export const PARAMS_KEY = Uint8Array.of(0x05);

function lengthPrefixed(addr: Bytes): Bytes {
  if (addr.length === 0 || addr.length > 255) throw new Error(`address length ${addr.length} out of range 1–255`);
  return concatBytes(Uint8Array.of(addr.length), addr);
}

export function supplyKey(denom: string): Bytes {
  return concatBytes(SUPPLY_PREFIX, utf8(denom));
}

export function denomMetadataKey(denom: string): Bytes {
  return concatBytes(DENOM_METADATA_PREFIX, utf8(denom));
}

/** 0x02 len addr: every balance of `addr`. */
export function balancesPrefix(addr: Bytes): Bytes {
  return concatBytes(BALANCES_PREFIX, lengthPrefixed(addr));
}

export function balanceKey(addr: Bytes, denom: string): Bytes {
  return concatBytes(balancesPrefix(addr), utf8(denom));
}

/** 0x03 denom 0x00: every holder of `denom`. */
export function denomOwnersPrefix(denom: string): Bytes {
  return concatBytes(DENOM_ADDRESS_PREFIX, utf8(denom), Uint8Array.of(0));
}

export function denomAddressKey(denom: string, addr: Bytes): Bytes {
  return concatBytes(denomOwnersPrefix(denom), lengthPrefixed(addr));
}

export function sendEnabledKey(denom: string): Bytes {
  return concatBytes(SEND_ENABLED_PREFIX, utf8(denom));
}
