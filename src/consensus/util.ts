/** Small helpers shared by the consensus files. */
import type { BlockID } from '../types/block.js';
import type { Validator } from '../types/validator.js';
import type { ValidatorSet } from '../types/validator_set.js';
import { bytesEqual, hexUpper } from '../crypto/bytes.js';

export { bytesEqual, hexUpper };

/** bytes.Compare (src/crypto/bytes.ts). */
export { compareBytes as compareBytesLex } from '../crypto/bytes.js';

/** A map key for a BlockID: hash and part-set header (votes count per full BlockID, types/vote_set.go). */
export function blockIdKey(id: BlockID): string {
  return `${hexUpper(id.hash)}:${id.partSetHeader.total}:${hexUpper(id.partSetHeader.hash)}`;
}

export function blockIdEqual(a: BlockID, b: BlockID): boolean {
  return (
    bytesEqual(a.hash, b.hash) &&
    a.partSetHeader.total === b.partSetHeader.total &&
    bytesEqual(a.partSetHeader.hash, b.partSetHeader.hash)
  );
}

/** BlockID.IsNil: a nil vote has an empty hash (and a zero part-set header). */
export function isNilBlockId(id: BlockID): boolean {
  return id.hash.length === 0;
}

/** BlockID.IsComplete: 32-byte hash, 32-byte part-set hash, total > 0. */
export function isCompleteBlockId(id: BlockID): boolean {
  return id.hash.length === 32 && id.partSetHeader.total > 0 && id.partSetHeader.hash.length === 32;
}

/** BlockID.IsZero. */
export function isZeroBlockId(id: BlockID): boolean {
  return id.hash.length === 0 && id.partSetHeader.total === 0 && id.partSetHeader.hash.length === 0;
}

export function nilBlockId(): BlockID {
  return { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } };
}

export { blockIdKeyBytes } from '../types/block.js';

/**
 * Go's fmt `%.2f` of a float64: the exact binary value rounded half-to-even (JS toFixed rounds
 * exact ties up, so 5/40 = 0.125 would print 0.13 where Go prints 0.12).
 */
export function formatGoFixed2(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  const neg = x < 0 || Object.is(x, -0);
  const ax = Math.abs(x);
  // Exact rational ax = mant / 2^shift.
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, ax);
  const hi = dv.getUint32(0);
  const lo = dv.getUint32(4);
  const exp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e: number;
  if (exp === 0) e = -1074;
  else {
    mant |= 1n << 52n;
    e = exp - 1075;
  }
  let num = mant * 100n;
  let den = 1n;
  if (e >= 0) num <<= BigInt(e);
  else den <<= BigInt(-e);
  let q = num / den;
  const r2 = (num % den) * 2n;
  if (r2 > den || (r2 === den && q % 2n === 1n)) q += 1n;
  const s = q.toString().padStart(3, '0');
  const out = `${s.slice(0, -2)}.${s.slice(-2)}`;
  return neg && q !== 0n ? `-${out}` : neg ? `-${out}` : out;
}

/** Nanoseconds since the epoch: wall clock at start-up plus the monotonic clock since then. */
const BASE_WALL_NS = BigInt(Date.now()) * 1_000_000n;
const BASE_HR = process.hrtime.bigint();
export function nowNs(): bigint {
  return BASE_WALL_NS + (process.hrtime.bigint() - BASE_HR);
}

/**
 * ValidatorSet accessors that do not depend on how the set reports "none" (getByIndex throws
 * RangeError out of range, proposer throws for an empty set): null instead.
 */
export function validatorAt(vs: ValidatorSet, i: number): Validator | null {
  if (!Number.isInteger(i) || i < 0 || i >= vs.size) return null;
  return vs.validators[i] ?? null;
}

export function proposerOf(vs: ValidatorSet): Validator | null {
  return vs.isEmpty() ? null : vs.proposer;
}
