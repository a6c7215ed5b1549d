/**
 * The authz store layout, relative to the module's store prefix (cosmos-sdk: x/authz/keeper/keys.go;
 * cosmos/cosmos-sdk:x/authz/keeper/keeper.go):
 *
 *   0x01 | len(granter) | granter | len(grantee) | grantee | msgTypeUrl  → Grant (protobuf)
 *   0x02 | FormatTimeBytes(expiration) | len(granter) | granter | len(grantee) | grantee
 *                                                                        → GrantQueueItem (protobuf)
 *   0x03 | len(grantee) | grantee | len(granter) | granter | msgTypeUrl  → 0x00
 *
 * 0x01 and 0x02 are the SDK's. 0x03 is chaind's grantee index: upstream answers GranteeGrants by
 * scanning every grant (cosmos/cosmos-sdk:x/authz/keeper/grpc_query.go, cosmos-sdk #10943); the index makes it a prefix range. The
 * SDK has no 0x03 key on the 0.50–0.55 line.
 *
 * Type URLs in keys are the canonical (`/chain.…`) spelling, whatever spelling a client sent.
 * Every function here takes (granter, grantee) in key order; the SDK's keeper functions take
 * (grantee, granter).
 */
import { concatBytes, fromUtf8, utf8, type Bytes } from '../../bytes.js';

export const GRANT_PREFIX = Uint8Array.of(0x01);
export const GRANT_QUEUE_PREFIX = Uint8Array.of(0x02);
export const GRANTEE_INDEX_PREFIX = Uint8Array.of(0x03);
/** Value of a grantee index entry: the key is the information. */
export const INDEX_VALUE = Uint8Array.of(0x00);

/** types/address.go MaxAddrLen: one length byte. */
const MAX_ADDR_LEN = 255;

/** address.MustLengthPrefix: `len || addr` (empty stays empty). */
export function lengthPrefixed(addr: Bytes): Bytes {
  if (addr.length > MAX_ADDR_LEN) throw new Error(`address length should be max ${MAX_ADDR_LEN} bytes, got ${addr.length}`);
  if (addr.length === 0) return addr;
  return concatBytes(Uint8Array.of(addr.length), addr);
}

/** 0x01 | len | granter: every grant of a granter (GranterGrants). */
export function granterGrantsPrefix(granter: Bytes): Bytes {
  return concatBytes(GRANT_PREFIX, lengthPrefixed(granter));
}

/** 0x01 | len | granter | len | grantee: the grants of one pair (Grants without a type). */
export function pairGrantsPrefix(granter: Bytes, grantee: Bytes): Bytes {
  return concatBytes(GRANT_PREFIX, lengthPrefixed(granter), lengthPrefixed(grantee));
}

/** keys.go grantStoreKey. */
export function grantKey(granter: Bytes, grantee: Bytes, msgTypeUrl: string): Bytes {
  return concatBytes(pairGrantsPrefix(granter, grantee), utf8(msgTypeUrl));
}

export interface ParsedGrantKey {
  granter: Bytes;
  grantee: Bytes;
  msgTypeUrl: string;
}

/** keys.go parseGrantStoreKey, for a key with its 0x01 byte. */
export function parseGrantKey(key: Bytes): ParsedGrantKey {
  if (key[0] !== GRANT_PREFIX[0]) throw new Error('not a grant key');
  const n = key[1];
  if (n === undefined || key.length < 2 + n + 1) throw new Error('grant key too short');
  const granter = key.subarray(2, 2 + n);
  const m = key[2 + n]!;
  if (key.length < 3 + n + m) throw new Error('grant key too short');
  const grantee = key.subarray(3 + n, 3 + n + m);
  return { granter, grantee, msgTypeUrl: fromUtf8(key.subarray(3 + n + m)) };
}

/** 0x03 | len | grantee: every grant to a grantee. */
export function granteeIndexPrefix(grantee: Bytes): Bytes {
  return concatBytes(GRANTEE_INDEX_PREFIX, lengthPrefixed(grantee));
}

export function granteeIndexKey(granter: Bytes, grantee: Bytes, msgTypeUrl: string): Bytes {
  return concatBytes(granteeIndexPrefix(grantee), lengthPrefixed(granter), utf8(msgTypeUrl));
}

// --- time ------------------------------------------------------------------------------------

const NS_PER_S = 1_000_000_000n;

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** Seconds and nanoseconds of a ns timestamp (floor division, so nanos are never negative). */
export function splitNs(ns: bigint): { seconds: bigint; nanos: number } {
  let s = ns / NS_PER_S;
  let r = ns % NS_PER_S;
  if (r < 0n) {
    s -= 1n;
    r += NS_PER_S;
  }
  return { seconds: s, nanos: Number(r) };
}

function utcParts(ns: bigint): { date: Date; nanos: number } {
  const { seconds, nanos } = splitNs(ns);
  return { date: new Date(Number(seconds) * 1000), nanos };
}

function ymdhms(d: Date): string {
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}` +
    `T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`
  );
}

/**
 * types/utils.go FormatTimeBytes: `2006-01-02T15:04:05.000000000` in UTC, 29 bytes for years
 * 0001–9999 (the protobuf Timestamp range), so byte order is time order.
 */
export function formatTimeBytes(ns: bigint): Bytes {
  const { date, nanos } = utcParts(ns);
  return utf8(`${ymdhms(date)}.${pad(nanos, 9)}`);
}

/** Length of FormatTimeBytes output for years 0001–9999. */
export const TIME_BYTES_LEN = 29;

/** Go's `t.Format(time.RFC3339)` for a UTC time: whole seconds, `Z`. Used in error texts. */
export function formatRfc3339(ns: bigint): string {
  return `${ymdhms(utcParts(ns).date)}Z`;
}

/** 0x02 | FormatTimeBytes(t): the queue's entries expiring at t (keys.go GrantQueueTimePrefix). */
export function grantQueueTimePrefix(ns: bigint): Bytes {
  return concatBytes(GRANT_QUEUE_PREFIX, formatTimeBytes(ns));
}

/** keys.go GrantQueueKey. */
export function grantQueueKey(expirationNs: bigint, granter: Bytes, grantee: Bytes): Bytes {
  return concatBytes(grantQueueTimePrefix(expirationNs), lengthPrefixed(granter), lengthPrefixed(grantee));
}

/** keys.go parseGrantQueueKey, for a key with its 0x02 byte: the addresses (the time is not needed). */
export function parseGrantQueueKey(key: Bytes): { granter: Bytes; grantee: Bytes } {
  if (key[0] !== GRANT_QUEUE_PREFIX[0]) throw new Error('not a grant queue key');
  const o = 1 + TIME_BYTES_LEN;
  const n = key[o];
  if (n === undefined || key.length < o + 1 + n + 1) throw new Error('grant queue key too short');
  const granter = key.subarray(o + 1, o + 1 + n);
  const m = key[o + 1 + n]!;
  if (key.length !== o + 2 + n + m) throw new Error('grant queue key has a bad length');
  return { granter, grantee: key.subarray(o + 2 + n, o + 2 + n + m) };
}
