/**
 * The validator set and proposer rotation, replicating cometbft types/validator_set.go and
 * types/validator.go (cometbft/cometbft:types/validator_set.go) with int64 arithmetic done in BigInt:
 *
 * - canonical order is voting power descending, then address ascending (bytes.Compare);
 * - IncrementProposerPriority(times): rescale so max-min <= 2*total (Go `/`, truncating), shift
 *   by the average (big.Int Div: Euclidean, i.e. floor for a positive divisor), then `times`
 *   rounds of "add own power (clipped to int64), pick the highest priority (ties: smaller
 *   address), subtract the total";
 * - a new validator starts at -(P + P>>3) where P is the total power after updates but before
 *   removals; an updated validator keeps its priority; power 0 removes.
 *
 * Like the Go type it is not safe to mutate `validators` from outside: use the methods.
 */
import type { Bytes } from './block.js';
import type { PubKey, Validator, ValidatorUpdate } from './validator.js';
import { addressFromPubKey } from '../crypto/hash.js';
import { validatorsHash } from './hashing.js';
import { decodeValidatorSet, encodeValidatorSet } from './codec.js';
import { bytesToKey, hexUpper } from '../crypto/bytes.js';

const MAX_INT64 = (1n << 63n) - 1n;
const MIN_INT64 = -(1n << 63n);

/** MaxTotalVotingPower = MaxInt64 / 8. */
export const MAX_TOTAL_VOTING_POWER = MAX_INT64 / 8n;
/** PriorityWindowSizeFactor. */
export const PRIORITY_WINDOW_SIZE_FACTOR = 2n;

export class ValidatorSetError extends Error {
  constructor(
    readonly code: 'VALSET_EMPTY' | 'VALSET_INVALID_CHANGES' | 'VALSET_INVALID_ARGUMENT' | 'VALSET_TOTAL_POWER_OVERFLOW' | 'VALSET_PROPOSER_NOT_IN_SET',
    message: string,
  ) {
    super(message);
    this.name = 'ValidatorSetError';
  }
}

/** bytes.Compare. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** ValidatorsByVotingPower: power descending, then address ascending. */
export function compareByVotingPower(a: Validator, b: Validator): number {
  if (a.votingPower === b.votingPower) return compareBytes(a.address, b.address);
  return a.votingPower > b.votingPower ? -1 : 1;
}

function clip64(v: bigint): bigint {
  return v > MAX_INT64 ? MAX_INT64 : v < MIN_INT64 ? MIN_INT64 : v;
}

/** Go int64 wrap-around (two's complement), for the few places Go does not guard. */
function wrap64(v: bigint): bigint {
  return BigInt.asIntN(64, v);
}

/** safeAddClip. */
export function safeAddClip(a: bigint, b: bigint): bigint {
  return clip64(a + b);
}

/** safeSubClip. */
export function safeSubClip(a: bigint, b: bigint): bigint {
  return clip64(a - b);
}

function copyValidator(v: Validator): Validator {
  return { address: v.address, pubKey: v.pubKey, votingPower: v.votingPower, proposerPriority: v.proposerPriority };
}

/** Validator.CompareProposerPriority: the one with the higher priority, ties to the smaller address. */
function moreProposerPriority(a: Validator | null, b: Validator): Validator {
  if (a === null) return b;
  if (a.proposerPriority > b.proposerPriority) return a;
  if (a.proposerPriority < b.proposerPriority) return b;
  const c = compareBytes(a.address, b.address);
  if (c < 0) return a;
  if (c > 0) return b;
  throw new ValidatorSetError('VALSET_INVALID_CHANGES', 'cannot compare identical validators');
}

/** A ValidatorUpdate (pubkey + power) or a Validator (address + votingPower) as a change. */
export type ValidatorChange = ValidatorUpdate | Validator;

function changeToValidator(c: ValidatorChange): Validator {
  if ('votingPower' in c) return copyValidator(c);
  return { address: addressFromPubKey(c.pubKey), pubKey: c.pubKey, votingPower: c.power, proposerPriority: 0n };
}

export class ValidatorSet {
  /** In canonical order. Read-only for callers. */
  validators: Validator[];
  private _proposer: Validator | null;
  private _total = 0n;
  private index: Map<string, number> | null = null;

  /**
   * NewValidatorSet: validators are copied and sorted canonically, every priority is recomputed as
   * for new validators, and a non-empty set gets IncrementProposerPriority(1).
   * Throws ValidatorSetError on duplicates, negative or zero power, or too much total power.
   */
  constructor(validators: readonly ValidatorChange[] = []) {
    this.validators = [];
    this._proposer = null;
    if (validators.length > 0) {
      this.applyChangeSet(validators.map(changeToValidator), false);
      this.incrementProposerPriority(1);
    }
  }

  /**
   * Reloads a stored set (ValidatorSetFromProto): order and priorities are kept, nothing is
   * incremented. `proposer` is the proposer's address or a Validator (matched by address); null
   * lets the proposer be found on first use (findProposer).
   */
  static restore(validators: readonly Validator[], proposer: Bytes | Validator | null): ValidatorSet {
    const vs = Object.create(ValidatorSet.prototype) as ValidatorSet;
    vs.validators = validators.map(copyValidator);
    vs._proposer = null;
    vs._total = 0n;
    vs.index = null;
    vs.totalVotingPower(); // rejects an over-limit set, as TotalVotingPowerSafe does
    if (proposer !== null) {
      const addr = proposer instanceof Uint8Array ? proposer : proposer.address;
      const found = vs.getByAddress(addr);
      if (!found) throw new ValidatorSetError('VALSET_PROPOSER_NOT_IN_SET', 'proposer not in validator set');
      vs._proposer = vs.validators[found.index]!;
    }
    return vs;
  }

  /** Decodes the stored proto ValidatorSet (codec.encodeValidatorSet). */
  static fromBytes(bytes: Uint8Array): ValidatorSet {
    const { validators, proposer } = decodeValidatorSet(bytes);
    return ValidatorSet.restore(validators, validators.length === 0 ? null : proposer);
  }

  toBytes(): Uint8Array {
    return encodeValidatorSet({ validators: this.validators, proposer: this.proposerOrNull() });
  }

  get size(): number {
    return this.validators.length;
  }

  isEmpty(): boolean {
    return this.validators.length === 0;
  }

  /**
   * GetProposer (do not mutate it). Throws ValidatorSetError VALSET_EMPTY for an empty set, where
   * cometbft returns nil: check isEmpty() first where a set may be empty (lastValidators at the
   * initial height).
   */
  get proposer(): Validator {
    if (this.validators.length === 0) throw new ValidatorSetError('VALSET_EMPTY', 'empty validator set has no proposer');
    if (this._proposer === null) this._proposer = this.findProposer();
    return this._proposer;
  }

  /** The proposer, or null for an empty set (cometbft GetProposer). */
  proposerOrNull(): Validator | null {
    return this.validators.length === 0 ? null : this.proposer;
  }

  private findProposer(): Validator {
    let p: Validator | null = null;
    for (const v of this.validators) p = moreProposerPriority(p, v);
    return p!;
  }

  /** TotalVotingPower; throws past MaxTotalVotingPower. */
  totalVotingPower(): bigint {
    if (this._total === 0n) {
      let sum = 0n;
      for (const v of this.validators) {
        sum = safeAddClip(sum, v.votingPower);
        if (sum > MAX_TOTAL_VOTING_POWER) {
          throw new ValidatorSetError('VALSET_TOTAL_POWER_OVERFLOW', `total voting power ${sum} exceeds maximum ${MAX_TOTAL_VOTING_POWER}`);
        }
      }
      this._total = sum;
    }
    return this._total;
  }

  /** ValidatorSet.Hash: merkle over SimpleValidator{pub_key, voting_power}. */
  hash(): Uint8Array {
    return validatorsHash(this.validators);
  }

  private addressIndex(): Map<string, number> {
    if (this.index === null || this.index.size !== this.validators.length) {
      const m = new Map<string, number>();
      for (let i = 0; i < this.validators.length; i++) m.set(bytesToKey(this.validators[i]!.address), i);
      this.index = m;
    }
    return this.index;
  }

  hasAddress(address: Uint8Array): boolean {
    return this.getByAddress(address) !== null;
  }

  /** GetByAddress: the index and the validator (do not mutate it), or null. */
  getByAddress(address: Uint8Array): { index: number; validator: Validator } | null {
    const i = this.addressIndex().get(bytesToKey(address));
    if (i === undefined) return null;
    const v = this.validators[i]!;
    // Guard against a stale index if someone reordered `validators` behind our back.
    if (compareBytes(v.address, address) !== 0) {
      this.index = null;
      const j = this.addressIndex().get(bytesToKey(address));
      return j === undefined ? null : { index: j, validator: this.validators[j]! };
    }
    return { index: i, validator: v };
  }

  /** GetByIndex (do not mutate it); throws RangeError out of range, where cometbft returns nil. */
  getByIndex(i: number): Validator {
    if (!Number.isInteger(i) || i < 0 || i >= this.validators.length) {
      throw new RangeError(`validator index ${i} out of range [0, ${this.validators.length})`);
    }
    return this.validators[i]!;
  }

  /** Sum of the voting power of the given addresses; each address counts once, unknown ones 0. */
  votingPowerOf(addresses: Iterable<Uint8Array>): bigint {
    const seen = new Set<string>();
    let sum = 0n;
    for (const a of addresses) {
      const k = bytesToKey(a);
      if (seen.has(k)) continue;
      seen.add(k);
      const f = this.getByAddress(a);
      if (f) sum += f.validator.votingPower;
    }
    return sum;
  }

  /** Copy: validators are copied; the proposer maps to the copy's validator with its address. */
  copy(): ValidatorSet {
    const vs = Object.create(ValidatorSet.prototype) as ValidatorSet;
    vs.validators = this.validators.map(copyValidator);
    vs._total = this._total;
    vs.index = this.index;
    vs._proposer = null;
    if (this._proposer !== null) {
      const i = this.validators.indexOf(this._proposer);
      vs._proposer = i >= 0 ? vs.validators[i]! : copyValidator(this._proposer);
    }
    return vs;
  }

  copyIncrementProposerPriority(times: number): ValidatorSet {
    const c = this.copy();
    c.incrementProposerPriority(times);
    return c;
  }

  /** IncrementProposerPriority. Throws for an empty set or times <= 0. */
  incrementProposerPriority(times: number): void {
    if (this.validators.length === 0) throw new ValidatorSetError('VALSET_EMPTY', 'empty validator set');
    if (!(times > 0)) throw new ValidatorSetError('VALSET_INVALID_ARGUMENT', 'Cannot call IncrementProposerPriority with non-positive times');
    const total = this.totalVotingPower();
    this.rescalePriorities(PRIORITY_WINDOW_SIZE_FACTOR * total);
    this.shiftByAvgProposerPriority();
    let proposer: Validator | null = null;
    for (let i = 0; i < times; i++) {
      for (const v of this.validators) v.proposerPriority = safeAddClip(v.proposerPriority, v.votingPower);
      let most: Validator | null = null;
      for (const v of this.validators) most = moreProposerPriority(most, v);
      most!.proposerPriority = safeSubClip(most!.proposerPriority, total);
      proposer = most;
    }
    this._proposer = proposer;
  }

  /** RescalePriorities: divide every priority by ceil(diff/diffMax) when max-min exceeds diffMax. */
  rescalePriorities(diffMax: bigint): void {
    if (this.validators.length === 0) throw new ValidatorSetError('VALSET_EMPTY', 'empty validator set');
    if (diffMax <= 0n) return;
    let max = MIN_INT64;
    let min = MAX_INT64;
    for (const v of this.validators) {
      if (v.proposerPriority < min) min = v.proposerPriority;
      if (v.proposerPriority > max) max = v.proposerPriority;
    }
    let diff = wrap64(max - min);
    if (diff < 0n) diff = wrap64(-diff);
    const ratio = wrap64(diff + diffMax - 1n) / diffMax; // BigInt `/` truncates like Go
    if (diff > diffMax) {
      for (const v of this.validators) v.proposerPriority = v.proposerPriority / ratio;
    }
  }

  /** computeAvgProposerPriority: floor(sum / n) (big.Int Div is Euclidean). */
  avgProposerPriority(): bigint {
    const n = BigInt(this.validators.length);
    let sum = 0n;
    for (const v of this.validators) sum += v.proposerPriority;
    let q = sum / n;
    if (sum % n !== 0n && sum < 0n) q -= 1n;
    return q;
  }

  private shiftByAvgProposerPriority(): void {
    const avg = this.avgProposerPriority();
    for (const v of this.validators) v.proposerPriority = safeSubClip(v.proposerPriority, avg);
  }

  /**
   * UpdateWithChangeSet: apply ABCI validator updates (power 0 removes). On error nothing is
   * changed and a ValidatorSetError is thrown. The proposer is left as it was; callers
   * increment priorities next (state/execution.go), which picks the new proposer.
   */
  updateWithChangeSet(changes: readonly ValidatorChange[]): void {
    this.applyChangeSet(changes.map(changeToValidator), true);
  }

  private applyChangeSet(changes: Validator[], allowDeletes: boolean): void {
    if (changes.length === 0) return;
    const invalid = (msg: string) => new ValidatorSetError('VALSET_INVALID_CHANGES', msg);

    // processChanges: sort by address, reject duplicates and bad powers, split updates/removals.
    changes.sort((a, b) => compareBytes(a.address, b.address));
    const updates: Validator[] = [];
    const removals: Validator[] = [];
    for (let i = 0; i < changes.length; i++) {
      const c = changes[i]!;
      if (i > 0 && compareBytes(c.address, changes[i - 1]!.address) === 0) throw invalid(`duplicate entry ${hexUpper(c.address)} in changes`);
      if (c.votingPower < 0n) throw invalid(`voting power can't be negative: ${c.votingPower}`);
      if (c.votingPower > MAX_TOTAL_VOTING_POWER) {
        throw invalid(`to prevent clipping/overflow, voting power can't be higher than ${MAX_TOTAL_VOTING_POWER}, got ${c.votingPower}`);
      }
      if (c.votingPower === 0n) removals.push(c);
      else updates.push(c);
    }
    if (!allowDeletes && removals.length > 0) throw invalid('cannot process validators with voting power 0');

    const existing = new Map<string, Validator>();
    for (const v of this.validators) existing.set(bytesToKey(v.address), v);

    let numNew = 0;
    for (const u of updates) if (!existing.has(bytesToKey(u.address))) numNew++;
    if (numNew === 0 && this.validators.length === removals.length) {
      throw invalid('applying the validator changes would result in empty set');
    }

    // verifyRemovals.
    let removedPower = 0n;
    for (const r of removals) {
      const v = existing.get(bytesToKey(r.address));
      if (!v) throw invalid(`failed to find validator ${hexUpper(r.address)} to remove`);
      removedPower += v.votingPower;
    }

    // verifyUpdates: apply deltas smallest first and reject any step past the limit.
    const delta = (u: Validator) => u.votingPower - (existing.get(bytesToKey(u.address))?.votingPower ?? 0n);
    const deltas = updates.map(delta).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    let tvp = this.totalVotingPower() - removedPower;
    for (const d of deltas) {
      tvp += d;
      if (tvp > MAX_TOTAL_VOTING_POWER) {
        throw new ValidatorSetError('VALSET_TOTAL_POWER_OVERFLOW', `total voting power of resulting valset exceeds max ${MAX_TOTAL_VOTING_POWER}`);
      }
    }
    const tvpAfterUpdatesBeforeRemovals = tvp + removedPower;

    // computeNewPriorities.
    for (const u of updates) {
      const v = existing.get(bytesToKey(u.address));
      u.proposerPriority = v ? v.proposerPriority : -(tvpAfterUpdatesBeforeRemovals + (tvpAfterUpdatesBeforeRemovals >> 3n));
    }

    // applyUpdates + applyRemovals.
    for (const u of updates) existing.set(bytesToKey(u.address), u);
    for (const r of removals) existing.delete(bytesToKey(r.address));
    this.validators = [...existing.values()];
    this.index = null;
    this._total = 0n;
    this.totalVotingPower();

    // Scale and center, then canonical order.
    this.rescalePriorities(PRIORITY_WINDOW_SIZE_FACTOR * this.totalVotingPower());
    this.shiftByAvgProposerPriority();
    this.validators.sort(compareByVotingPower);
  }
}

/** Builds a validator (address derived from the key) for genesis and tests. */
export function newValidator(pubKey: PubKey, votingPower: bigint): Validator {
  return { address: addressFromPubKey(pubKey), pubKey, votingPower, proposerPriority: 0n };
}
