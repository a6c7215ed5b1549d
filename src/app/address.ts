/**
 * Bech32 account addresses (`chain1…`), as the SDK's address codec (cosmos-sdk: types/address.go,
 * codec/address/bech32_codec.go; cosmos/cosmos-sdk:x/auth/keeper/account.go): BIP-173 bech32 (not
 * bech32m), lowercase output, strings up to 1023 characters so 32-byte ADR-028 addresses work,
 * payloads of 1–255 bytes.
 */
import { bech32 } from '@scure/base';
import { createHash } from 'node:crypto';
import { sdkErrors, type AbciError } from './errors.js';
import { bytesToKey, type Bytes } from './bytes.js';

/** The SDK's bech32 decode limit (types/bech32/bech32.go). */
const BECH32_MAX_LEN = 1023;
/** types/address.go MaxAddrLen. */
export const MAX_ADDR_LEN = 255;

export interface AddressCodec {
  readonly prefix: string;
  encode(addr: Bytes): string;
  /** Throws an AbciError (sdk code 7, invalid address) naming what is wrong. */
  decode(text: string): Bytes;
  /** The bytes, or the reason (without the `: invalid address` suffix) the text is not an address. */
  tryDecode(text: string): { bytes: Bytes } | { error: string };
}

function invalid(msg: string): AbciError {
  return sdkErrors.invalidAddress.wrap(msg);
}

/** How many encoded addresses a codec remembers before it starts over. */
const ENCODE_MEMO_MAX = 16_384;

export class Bech32Codec implements AddressCodec {
  /**
   * Encoded addresses by their bytes (latin1). A bank send encodes the same few addresses eight
   * times (coin_spent, coin_received, transfer, message for the fee and for the send), and a
   * bech32 encode (5-bit regrouping, checksum) costs far more than the lookup. Pure function of the
   * bytes, so the memo cannot change an answer.
   */
  private readonly encoded = new Map<string, string>();

  constructor(readonly prefix: string) {
    if (prefix.length === 0) throw new Error('bech32 prefix must not be empty');
  }

  encode(addr: Bytes): string {
    if (addr.length === 0) return '';
    const k = bytesToKey(addr);
    let s = this.encoded.get(k);
    if (s === undefined) {
      s = bech32.encode(this.prefix, bech32.toWords(addr), BECH32_MAX_LEN);
      if (this.encoded.size >= ENCODE_MEMO_MAX) this.encoded.clear();
      this.encoded.set(k, s);
    }
    return s;
  }

  decode(text: string): Bytes {
    const r = this.tryDecode(text);
    if ('error' in r) throw invalid(r.error);
    return r.bytes;
  }

  /** The bytes, or the reason (without the `: invalid address` suffix) the text is not an address. */
  tryDecode(text: string): { bytes: Bytes } | { error: string } {
    if (text.trim().length === 0) return { error: 'empty address string is not allowed' };
    let prefix: string;
    let bytes: Bytes;
    try {
      const d = bech32.decode(text, BECH32_MAX_LEN);
      prefix = d.prefix;
      bytes = bech32.fromWords(d.words);
    } catch (e) {
      return { error: `decoding bech32 failed: ${(e as Error).message}` };
    }
    if (prefix !== this.prefix) return { error: `invalid Bech32 prefix; expected ${this.prefix}, got ${prefix}` };
    if (bytes.length === 0) return { error: 'addresses cannot be empty' };
    if (bytes.length > MAX_ADDR_LEN) return { error: `address max length is ${MAX_ADDR_LEN}, got ${bytes.length}` };
    return { bytes };
  }
}

/** Module account address: SHA-256(module name)[:20] (cosmos-sdk: types/address/hash.go Module). */
export function moduleAddress(name: string): Bytes {
  return createHash('sha256').update(name).digest().subarray(0, 20);
}
