/**
 * Gas meters and the store gas schedule (cosmos-sdk: store/types/gas.go, store/gaskv/store.go).
 *
 * Gas is a uint64 in the SDK; it is a bigint here so that a tx may ask for any uint64 limit.
 */
import { sdkErrors, type AbciError } from './errors.js';

export const MAX_GAS = (1n << 64n) - 1n;

/**
 * Thrown by `consume` when the meter passes its limit; runTx turns it into sdk code 11
 * (`out of gas in location: <desc>; gasWanted: <limit>, gasUsed: <used>: out of gas`,
 * cosmos-sdk: baseapp/baseapp.go runTx's recovery and x/auth/ante/setup.go).
 */
export class OutOfGasError extends Error {
  readonly code = 'OUT_OF_GAS';
  constructor(readonly descriptor: string) {
    super(`out of gas in location: ${descriptor}`);
    this.name = 'OutOfGasError';
  }
}

/** Thrown when consumed gas would exceed uint64 (store/types/gas.go ErrorGasOverflow). */
export class GasOverflowError extends Error {
  readonly code = 'GAS_OVERFLOW';
  constructor(readonly descriptor: string) {
    super(`gas overflow in location: ${descriptor}`);
    this.name = 'GasOverflowError';
  }
}

export interface GasMeter {
  /** Gas consumed so far; may exceed the limit after an out-of-gas (the SDK reports it so). */
  consumed(): bigint;
  /** The limit, or null for an infinite meter. */
  limit(): bigint | null;
  consume(amount: bigint, descriptor: string): void;
  /** Gives gas back, as the SDK does for refunds; never below zero. */
  refund(amount: bigint, descriptor: string): void;
  isOutOfGas(): boolean;
}

/** basicGasMeter: consumption above the limit throws OutOfGasError after recording the amount. */
export class BasicGasMeter implements GasMeter {
  private used = 0n;
  constructor(private readonly max: bigint) {}
  consumed(): bigint {
    return this.used;
  }
  limit(): bigint {
    return this.max;
  }
  consume(amount: bigint, descriptor: string): void {
    const next = this.used + amount;
    if (next > MAX_GAS) {
      this.used = MAX_GAS;
      throw new GasOverflowError(descriptor);
    }
    this.used = next;
    if (next > this.max) throw new OutOfGasError(descriptor);
  }
  refund(amount: bigint, descriptor: string): void {
    if (amount > this.used) throw new Error(`refund ${amount} exceeds consumed gas in ${descriptor}`);
    this.used -= amount;
  }
  isOutOfGas(): boolean {
    return this.used >= this.max;
  }
}

/** infiniteGasMeter: counts but never runs out (genesis, begin/end block, simulation, queries). */
export class InfiniteGasMeter implements GasMeter {
  private used = 0n;
  consumed(): bigint {
    return this.used;
  }
  limit(): null {
    return null;
  }
  consume(amount: bigint, descriptor: string): void {
    const next = this.used + amount;
    if (next > MAX_GAS) throw new GasOverflowError(descriptor);
    this.used = next;
  }
  refund(amount: bigint): void {
    this.used = amount > this.used ? 0n : this.used - amount;
  }
  isOutOfGas(): boolean {
    return false;
  }
}

/** Store access costs (store/types/gas.go KVGasConfig, the SDK defaults). */
export interface KVGasConfig {
  hasCost: bigint;
  deleteCost: bigint;
  readCostFlat: bigint;
  readCostPerByte: bigint;
  writeCostFlat: bigint;
  writeCostPerByte: bigint;
  iterNextCostFlat: bigint;
}

export const DEFAULT_KV_GAS_CONFIG: Readonly<KVGasConfig> = Object.freeze({
  hasCost: 1000n,
  deleteCost: 1000n,
  readCostFlat: 1000n,
  readCostPerByte: 3n,
  writeCostFlat: 2000n,
  writeCostPerByte: 30n,
  iterNextCostFlat: 30n,
});

/** The SDK's gas descriptors (store/types/gas.go), which out-of-gas logs name. */
export const GasDesc = {
  has: 'Has',
  readFlat: 'ReadFlat',
  readPerByte: 'ReadPerByte',
  writeFlat: 'WriteFlat',
  writePerByte: 'WritePerByte',
  delete: 'Delete',
  iterNextFlat: 'IterNextFlat',
  valuePerByte: 'ValuePerByte',
} as const;

/** The sdk code 11 error for an out-of-gas at `descriptor` under a meter of `limit`. */
export function outOfGasAbciError(descriptor: string, limit: bigint, used: bigint): AbciError {
  return sdkErrors.outOfGas.wrap(`out of gas in location: ${descriptor}; gasWanted: ${limit}, gasUsed: ${used}`);
}
