/**
 * app.toml `pruning`, `pruning-keep-recent`, `pruning-interval`: which application-state versions
 * stay readable, with the Cosmos SDK's meanings and validation (cosmos/cosmos-sdk:
 * store/pruning/types/options.go NewPruningOptions/Validate, server/pruning.go
 * GetPruningOptionsFromFlags) and its schedule (cosmos/cosmos-sdk: store/pruning/manager.go):
 * after committing height h with h % interval == 0 and h > keepRecent, every version up to
 * h - keepRecent - 1 is gone.
 */

export type PruningStrategy = 'default' | 'nothing' | 'everything' | 'custom';
export const PRUNING_STRATEGIES: readonly PruningStrategy[] = ['default', 'nothing', 'everything', 'custom'];

export interface PruningOptions {
  strategy: PruningStrategy;
  /** Versions kept below the latest; 0 with `nothing`. */
  keepRecent: bigint;
  /** Pruning happens at heights divisible by this; 0 = never (`nothing`). */
  interval: bigint;
}

/** The SDK's `everything` numbers, which are also the floor for `custom`. */
const EVERYTHING_KEEP_RECENT = 2n;
const EVERYTHING_INTERVAL = 10n;
const INT64_MAX = (1n << 63n) - 1n;

export class PruningOptionsError extends Error {
  readonly code = 'INVALID_PRUNING_OPTIONS';
}

/**
 * The options of a strategy; `keepRecent`/`interval` are read only for `custom` (the SDK ignores
 * them otherwise). Throws PruningOptionsError with the SDK's text for an invalid custom pair.
 */
export function pruningOptions(strategy: string, keepRecent: bigint | number = 0n, interval: bigint | number = 0n): PruningOptions {
  switch (strategy) {
    case 'default':
      return { strategy, keepRecent: 362880n, interval: 10n };
    case 'everything':
      return { strategy, keepRecent: EVERYTHING_KEEP_RECENT, interval: EVERYTHING_INTERVAL };
    case 'nothing':
      return { strategy, keepRecent: 0n, interval: 0n };
    case 'custom': {
      const o: PruningOptions = { strategy, keepRecent: BigInt(keepRecent), interval: BigInt(interval) };
      const why = validatePruning(o);
      if (why !== undefined) throw new PruningOptionsError(`invalid custom pruning options: ${why}`);
      return o;
    }
    default:
      throw new PruningOptionsError(`unknown pruning strategy ${strategy}`);
  }
}

/** PruningOptions.Validate: the reason the options are invalid, or undefined. */
export function validatePruning(o: PruningOptions): string | undefined {
  if (o.strategy === 'nothing') return undefined;
  if (o.interval === 0n) return `'pruning-interval' must not be 0. If you want to disable pruning, select pruning = "nothing"`;
  if (o.interval < EVERYTHING_INTERVAL) {
    return `'pruning-interval' must not be less than ${EVERYTHING_INTERVAL}. For the most aggressive pruning, select pruning = "everything"`;
  }
  if (o.keepRecent < EVERYTHING_KEEP_RECENT) {
    return `'pruning-keep-recent' must not be less than ${EVERYTHING_KEEP_RECENT}. For the most aggressive pruning, select pruning = "everything"`;
  }
  if (o.keepRecent > INT64_MAX) return `'pruning-keep-recent' must not be greater than 2^63-1. Select pruning = "nothing"`;
  return undefined;
}

/**
 * The highest version that becomes unreadable when `height` commits, or 0n when this height
 * prunes nothing (manager.go: only at multiples of the interval, never the last keepRecent).
 */
export function pruneUpTo(o: PruningOptions, height: bigint): bigint {
  if (o.strategy === 'nothing' || o.interval <= 0n) return 0n;
  if (height % o.interval !== 0n || height <= o.keepRecent) return 0n;
  return height - o.keepRecent - 1n;
}
