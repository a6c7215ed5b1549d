/**
 * Store pagination for list queries (cosmos-sdk: types/query/pagination.go Paginate;
 * cosmos/cosmos-sdk:types/query/pagination.go): key mode or offset mode, limit 0 → 100 with count_total
 * forced, reverse order, next_key = the store key (relative to the prefix) of the first item not
 * returned.
 */
import type { Bytes } from './bytes.js';
import { concatBytes } from './bytes.js';
import type { KVStore } from './store.js';

/** types/query/pagination.go DefaultLimit. */
export const DEFAULT_LIMIT = 100n;

/** PageRequest as it arrives from JSON or from a decoded protobuf. */
export interface PageRequest {
  key?: Bytes | string | null;
  offset?: bigint | string | number;
  limit?: bigint | string | number;
  count_total?: boolean;
  countTotal?: boolean;
  reverse?: boolean;
}

/** PageResponse in the proto-JSON shape (`next_key` null at the end). */
export interface PageResponse {
  next_key: Bytes | null;
  total: bigint;
}

function toBig(v: bigint | string | number | undefined, what: string): bigint {
  if (v === undefined || v === '') return 0n;
  try {
    const b = BigInt(v);
    if (b < 0n) throw new Error();
    return b;
  } catch {
    throw new Error(`invalid ${what}: ${String(v)}`);
  }
}

function toKey(k: PageRequest['key']): Bytes | undefined {
  if (k === undefined || k === null) return undefined;
  if (typeof k === 'string') return k.length === 0 ? undefined : Buffer.from(k, 'base64');
  return k.length === 0 ? undefined : k;
}

/**
 * Pages over `store` (already narrowed to the listed prefix), calling `onResult` for each item
 * returned. A thrown plain Error is what the SDK returns (gRPC Unknown upstream).
 */
export function paginate(store: KVStore, req: PageRequest | null | undefined, onResult: (key: Bytes, value: Bytes) => void): PageResponse {
  const r = req ?? {};
  const key = toKey(r.key);
  const offset = toBig(r.offset, 'offset');
  let limit = toBig(r.limit, 'limit');
  let countTotal = r.count_total ?? r.countTotal ?? false;
  const reverse = r.reverse ?? false;
  if (offset > 0n && key !== undefined) throw new Error('invalid request, either offset or key is expected, got both');
  if (limit === 0n) {
    limit = DEFAULT_LIMIT;
    countTotal = true;
  }

  if (key !== undefined) {
    // Forward: [key, ∞). Reverse: (−∞, key] — the smallest key above `key` is key || 0x00.
    const it = reverse ? store.iterate(undefined, concatBytes(key, Uint8Array.of(0)), true) : store.iterate(key, undefined, false);
    let count = 0n;
    for (const p of it) {
      if (count === limit) return { next_key: Uint8Array.from(p.key), total: 0n };
      onResult(p.key, p.value);
      count++;
    }
    return { next_key: null, total: 0n };
  }

  const end = offset + limit;
  let count = 0n;
  let nextKey: Bytes | null = null;
  for (const p of store.iterate(undefined, undefined, reverse)) {
    count++;
    if (count <= offset) continue;
    if (count <= end) onResult(p.key, p.value);
    else if (count === end + 1n) {
      nextKey = Uint8Array.from(p.key);
      if (!countTotal) break;
    }
  }
  return { next_key: nextKey, total: countTotal ? count : 0n };
}
