/**
 * Argument rules shared by the chain read methods, with CometBFT 0.38's error texts:
 * - heights: rpc/core/env.go getHeight and latestUncommittedHeight, rpc/core/blocks.go
 *   filterMinMax (`blockchain`);
 * - pages: rpc/core/env.go validatePage / validatePerPage / validateSkipCount
 *   (cometbft/cometbft:rpc/core/routes.go).
 *
 * Arguments arrive as bigint (the transports decode Go's int64/int into bigint), so errors quote
 * the exact number the client sent, even beyond 2^53.
 */

/** rpc/core/env.go defaultPerPage and maxPerPage. */
export const DEFAULT_PER_PAGE = 30;
export const MAX_PER_PAGE = 100;

/** blocks.go BlockchainInfo: at most 20 block metas per call. */
export const BLOCKCHAIN_LIMIT = 20n;

/** The height store the chain methods read: the block store's range. */
export interface HeightRange {
  base(): bigint;
  height(): bigint;
}

/**
 * env.go getHeight: an absent height is `latest`; a given one must be in [base, latest].
 * `latest` is the store height, or store height + 1 for `validators` and `consensus_params`
 * (the set and params of the next height are already known).
 */
export function resolveHeight(store: HeightRange, latest: bigint, height: bigint | undefined): bigint {
  if (height === undefined) return latest;
  if (height <= 0n) throw new Error(`height must be greater than 0, but got ${height}`);
  if (height > latest) throw new Error(`height ${height} must be less than or equal to the current blockchain height ${latest}`);
  const base = store.base();
  if (height < base) throw new Error(`height ${height} is not available, lowest height is ${base}`);
  return height;
}

/**
 * env.go latestUncommittedHeight: store height + 1 unless the node is catching up. chaind has no
 * block sync yet, so it never is.
 */
export function latestUncommittedHeight(store: HeightRange): bigint {
  return store.height() + 1n;
}

/**
 * blocks.go filterMinMax: 0 means "default" (1 and the store height), min is raised to the base
 * and to max-19, max is lowered to the store height.
 */
export function filterMinMax(base: bigint, height: bigint, min: bigint, max: bigint, limit = BLOCKCHAIN_LIMIT): { min: bigint; max: bigint } {
  if (min < 0n || max < 0n) throw new Error('heights must be non-negative');
  if (min === 0n) min = 1n;
  if (max === 0n) max = height;
  if (height < max) max = height;
  if (base > min) min = base;
  if (max - limit + 1n > min) min = max - limit + 1n;
  if (min > max) throw new Error(`min height ${min} can't be greater than max height ${max}`);
  return { min, max };
}

/** env.go validatePerPage: absent or below 1 → 30, above 100 → 100; never an error. */
export function perPageOf(perPage: bigint | undefined): number {
  if (perPage === undefined || perPage < 1n) return DEFAULT_PER_PAGE;
  if (perPage > BigInt(MAX_PER_PAGE)) return MAX_PER_PAGE;
  return Number(perPage);
}

/** The page count CometBFT reports for `total` items (at least 1: page 1 of nothing is fine). */
export function pageCount(perPage: number, total: number): number {
  const pages = Math.trunc((total - 1) / perPage) + 1;
  return pages === 0 ? 1 : pages;
}

/** env.go validatePage: absent → 1; outside [1, pages] → `page should be within [1, N] range, given P`. */
export function pageOf(page: bigint | undefined, perPage: number, total: number): number {
  if (page === undefined) return 1;
  const pages = pageCount(perPage, total);
  if (page <= 0n || page > BigInt(pages)) throw pageError(pages, page);
  return Number(page);
}

export function pageError(pages: number, page: bigint): Error {
  return new Error(`page should be within [1, ${pages}] range, given ${page}`);
}

/** env.go validateSkipCount. */
export function skipCount(page: number, perPage: number): number {
  const skip = (page - 1) * perPage;
  return skip < 0 ? 0 : skip;
}
