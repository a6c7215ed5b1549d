/**
 * Coins with bigint amounts (cosmos-sdk: types/coin.go). A coin's text form is `<amount><denom>`
 * and a list joins them with commas: `10stake,5uatom`; that is what events and error logs print.
 */
import { sdkErrors } from './errors.js';

export interface Coin {
  denom: string;
  amount: bigint;
}

/** types/coin.go reDnmString: a letter, then 2–127 of [a-zA-Z0-9/:._-]. */
const DENOM_RE = /^[a-zA-Z][a-zA-Z0-9/:._-]{2,127}$/;
/** cosmos.Int is a 256-bit integer (math/int.go MaxBitLen). */
export const MAX_INT_BITS = 256n;
const INT_RE = /^-?[0-9]+$/;

/** ValidateDenom; returns an error message or null. */
export function denomError(denom: string): string | null {
  return DENOM_RE.test(denom) ? null : `invalid denom: ${denom}`;
}

export function coinToString(c: Coin): string {
  return `${c.amount}${c.denom}`;
}

export function coinsToString(cs: readonly Coin[]): string {
  return cs.map(coinToString).join(',');
}

/** Parses a cosmos.Int decimal string; throws on anything else or on more than 256 bits. */
export function parseInt256(s: unknown): bigint {
  if (typeof s === 'bigint') return s;
  if (typeof s === 'number' && Number.isSafeInteger(s)) return BigInt(s);
  if (typeof s !== 'string' || !INT_RE.test(s)) throw new Error(`invalid integer: ${String(s)}`);
  const v = BigInt(s);
  if ((v < 0n ? -v : v) >> MAX_INT_BITS !== 0n) throw new Error(`integer out of range: ${s}`);
  return v;
}

/** A coin from JSON or an already-decoded object (`{denom, amount: "10"}` or `{denom, amount: 10n}`). */
export function coinFromJson(j: unknown): Coin {
  if (typeof j !== 'object' || j === null) throw new Error('coin must be an object');
  const o = j as { denom?: unknown; amount?: unknown };
  if (typeof o.denom !== 'string') throw new Error('coin denom must be a string');
  return { denom: o.denom, amount: parseInt256(o.amount) };
}

export function coinsFromJson(j: unknown): Coin[] {
  if (j === undefined || j === null) return [];
  if (!Array.isArray(j)) throw new Error('coins must be an array');
  return j.map(coinFromJson);
}

/**
 * Coins.Validate (types/coin.go): each denom valid, each amount positive, denoms strictly sorted.
 * Returns an error message or null.
 */
export function coinsError(cs: readonly Coin[]): string | null {
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i]!;
    const d = denomError(c.denom);
    if (d !== null) return d;
    if (c.amount <= 0n) return `coin ${coinToString(c)} amount is not positive`;
    if (i > 0) {
      const prev = cs[i - 1]!.denom;
      if (prev === c.denom) return `duplicate denomination ${c.denom}`;
      if (prev > c.denom) return `denomination ${c.denom} is not sorted`;
    }
  }
  return null;
}

/** Throws sdk code 10 `<coins>: invalid coins` unless the list is valid (msg_server Send). */
export function assertValidCoins(cs: readonly Coin[]): void {
  if (coinsError(cs) !== null || cs.length === 0) throw sdkErrors.invalidCoins.wrap(coinsToString(cs));
}

/** Sorted copy with equal denoms merged (NewCoins without the validation). */
export function normalizeCoins(cs: readonly Coin[]): Coin[] {
  const m = new Map<string, bigint>();
  for (const c of cs) m.set(c.denom, (m.get(c.denom) ?? 0n) + c.amount);
  return [...m.entries()]
    .filter(([, a]) => a !== 0n)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([denom, amount]) => ({ denom, amount }));
}
