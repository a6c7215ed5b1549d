/**
 * Argument checks shared by the crypto backends, so that the JS backend rejects exactly what
 * the native addon rejects (native/src/lib.rs): a TypeError with code ERR_CHAIND_CRYPTO_ARG.
 */

export const CRYPTO_ARG_ERROR = 'ERR_CHAIND_CRYPTO_ARG';

export class CryptoArgError extends TypeError {
  override readonly name = 'TypeError';
  readonly code = CRYPTO_ARG_ERROR;
}

export function argError(fn: string, msg: string): CryptoArgError {
  return new CryptoArgError(`${fn}: ${msg}`);
}

export function bytesArg(fn: string, what: string, v: unknown): Uint8Array {
  // Buffer is a Uint8Array subclass; Uint8ClampedArray and other views are refused like native.
  if (!(v instanceof Uint8Array)) throw argError(fn, `${what} must be a Uint8Array`);
  return v;
}

export function exactArg(fn: string, what: string, v: unknown, len: number): Uint8Array {
  const b = bytesArg(fn, what, v);
  if (b.length !== len) throw argError(fn, `${what} must be ${len} bytes, got ${b.length}`);
  return b;
}

/** A non-negative safe integer (offsets, lengths, recovery ids). */
export function indexArg(fn: string, what: string, v: unknown): number {
  if (typeof v !== 'number') throw argError(fn, `${what} must be a number`);
  if (!Number.isSafeInteger(v) || v < 0) throw argError(fn, `${what} must be a non-negative integer`);
  return v;
}

/** out[offset..offset+32] must fit. */
export function outArg(fn: string, out: unknown, offset: unknown): { out: Uint8Array; offset: number } {
  const o = bytesArg(fn, 'out', out);
  const off = indexArg(fn, 'offset', offset);
  if (off + 32 > o.length) throw argError(fn, `out too small: offset ${off} + 32 > length ${o.length}`);
  return { out: o, offset: off };
}
