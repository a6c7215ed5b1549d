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

/** A denom's UTF-8 bytes, remembered: keys are built for the same few denoms on every send. */
const denomBytesMemo = new Map<string, Bytes>();

function denomBytes(denom: string): Bytes {
  let b = denomBytesMemo.get(denom);
  if (b === undefined) {
    b = utf8(denom);
    if (denomBytesMemo.size >= 1024) denomBytesMemo.clear();
    denomBytesMemo.set(denom, b);
  }
  return b;
}

/** 0x02 len addr denom, in one allocation (every account read of the EVM builds one). */
export function balanceKey(addr: Bytes, denom: string): Bytes {
  if (addr.length === 0 || addr.length > 255) throw new Error(`address length ${addr.length} out of range 1–255`);
  const d = denomBytes(denom);
  const out = new Uint8Array(2 + addr.length + d.length);
  out[0] = BALANCES_PREFIX[0]!;
  out[1] = addr.length;
  out.set(addr, 2);
  out.set(d, 2 + addr.length);
  return out;
}

/** 0x03 denom 0x00: every holder of `denom`. */
export function denomOwnersPrefix(denom: string): Bytes {
  return concatBytes(DENOM_ADDRESS_PREFIX, utf8(denom), Uint8Array.of(0));
}

/** 0x03 denom 0x00 len addr, in one allocation. */
export function denomAddressKey(denom: string, addr: Bytes): Bytes {
  if (addr.length === 0 || addr.length > 255) throw new Error(`address length ${addr.length} out of range 1–255`);
  const d = denomBytes(denom);
  const out = new Uint8Array(3 + d.length + addr.length);
  out[0] = DENOM_ADDRESS_PREFIX[0]!;
  out.set(d, 1);
  out[1 + d.length] = 0;
  out[2 + d.length] = addr.length;
  out.set(addr, 3 + d.length);
  return out;
}

export function sendEnabledKey(denom: string): Bytes {
  return concatBytes(SEND_ENABLED_PREFIX, utf8(denom));
}
