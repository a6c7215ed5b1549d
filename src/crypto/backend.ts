/**
 * The crypto backend: one interface, a native implementation (native/, Rust + libsecp256k1 over
 * raw Node-API) and a JS one (src/crypto/js.ts), picked once per thread at start-up.
 *
 * Selection (`CHAIND_CRYPTO`, read by src/config/env.ts and handed to setCryptoBackendSetting):
 *   unset / "auto"  native if the addon loads, else JS (the reason is kept in `nativeLoadError()`)
 *   "js"            always JS (tests and benchmarks use it to cover the fallback)
 *   "native"        native, and a load failure is fatal (a CryptoBackendError)
 *
 * Why both: the addon is ~15x faster on keccak256 and ~50x on secp256k1 (paulmillr/noble-hashes:README.md, paulmillr/noble-secp256k1:README.md, and
 * bench/crypto.bench.ts), but it needs a Rust build and Debian packages; the JS path keeps chaind
 * runnable anywhere Node 20 runs. Both pass the same table in test/unit/crypto-backend.test.ts.
 *
 * Argument errors are TypeErrors with code `ERR_CHAIND_CRYPTO_ARG` in both backends (wrong type,
 * wrong length, out-of-range offset). Well-formed but invalid signatures or keys are not errors:
 * verify returns false and recover returns null.
 */
import { createJsBackend } from './js.js';

export { LTHASH_BYTES } from './js.js';
import { loadNativeBackend } from './native.js';

export type CryptoBackendName = 'native' | 'js';

export interface CryptoBackend {
  readonly name: CryptoBackendName;
  /** keccak256 (Ethereum's, not FIPS SHA3-256) into a new 32-byte array. */
  keccak256(data: Uint8Array): Uint8Array;
  /** keccak256 written to out[offset..offset+32]; saves the allocation (~0.6 µs of ~1 µs native). */
  keccak256Into(data: Uint8Array, out: Uint8Array, offset: number): void;
  /** Hashes each `itemLen`-byte item of `concat` into out[32*i..]; returns the item count. */
  keccak256Batch(concat: Uint8Array, itemLen: number, out: Uint8Array): number;
  /**
   * Variable-length items in one call: item i is concat[ends[i-1] .. ends[i]] (item 0 starts at
   * 0), hashed into out[32*i..]; returns the item count. `ends` must be non-decreasing and within
   * concat. The trie hashes a whole level of a commit this way (src/evm/trie.ts), one native
   * crossing per level instead of one per node.
   */
  keccak256Spans(concat: Uint8Array, ends: Uint32Array, out: Uint8Array): number;
  sha256(data: Uint8Array): Uint8Array;
  sha256Into(data: Uint8Array, out: Uint8Array, offset: number): void;
  /** CometBFT's RFC 6962 merkle root (cometbft: crypto/merkle/tree.go HashFromByteSlices). */
  merkleRoot(items: readonly Uint8Array[]): Uint8Array;
  /**
   * ECDSA over a 32-byte digest (no pre-hash), 64-byte r||s, 33- or 65-byte SEC1 pubkey.
   * High-S signatures are rejected (Cosmos and Ethereum transactions both require low-S).
   */
  secp256k1Verify(digest: Uint8Array, sig: Uint8Array, pubKey: Uint8Array): boolean;
  /**
   * The 65-byte uncompressed form of a 33-byte compressed or 65-byte uncompressed SEC1 key, or
   * null when it is not a curve point (hybrid 0x06/0x07 keys included). Decompression is a field
   * square root (~0.2 ms in JS, ~5 µs native): memoise per key (src/tx/pubkey.ts does).
   */
  secp256k1Decompress(pubKey: Uint8Array): Uint8Array | null;
  /** The 65-byte uncompressed signer key from r||s and recid 0..3, or null. Accepts high-S. */
  secp256k1Recover(digest: Uint8Array, sig: Uint8Array, recid: number): Uint8Array | null;
  /** Ed25519 (RFC 8032, via OpenSSL) with a 32-byte key and a 64-byte signature. */
  ed25519Verify(pubKey: Uint8Array, msg: Uint8Array, sig: Uint8Array): boolean;
  /**
   * The app hash's LtHash16 step (src/app/apphash.ts): element(key, value) = SHAKE256(u32be(len(key))
   * || key || value) to 2048 bytes, read as 1024 little-endian u16 lanes, added into `lanes` (2048
   * bytes, the same layout) lane-wise mod 2^16, or subtracted when `subtract`. Runs twice for every
   * key a block changes.
   */
  ltHashMix(lanes: Uint8Array, key: Uint8Array, value: Uint8Array, subtract: boolean): void;
}

export type CryptoBackendErrorCode =
  /** CHAIND_CRYPTO=native but the addon did not load. */
  | 'CRYPTO_NATIVE_UNAVAILABLE'
  /** CHAIND_CRYPTO holds something other than auto, native or js. */
  | 'CRYPTO_BAD_SETTING'
  /** setCryptoBackendSetting after the process-wide backend was chosen with another setting. */
  | 'CRYPTO_ALREADY_CHOSEN';

export class CryptoBackendError extends Error {
  override readonly name = 'CryptoBackendError';
  constructor(
    message: string,
    readonly code: CryptoBackendErrorCode,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export type CryptoBackendSetting = 'auto' | 'native' | 'js';

export function parseCryptoSetting(value: string | undefined): CryptoBackendSetting {
  const v = (value ?? '').trim().toLowerCase();
  if (v === '' || v === 'auto') return 'auto';
  if (v === 'native' || v === 'js') return v;
  throw new CryptoBackendError(`CHAIND_CRYPTO must be auto, native or js, got "${value}"`, 'CRYPTO_BAD_SETTING');
}

let nativeTried = false;
let nativeBackend: CryptoBackend | undefined;
let nativeError: Error | undefined;
let jsBackend: CryptoBackend | undefined;
let chosen: CryptoBackend | undefined;

/** The native backend, or undefined if the addon does not load here. Tried once per thread. */
export function tryNativeBackend(): CryptoBackend | undefined {
  if (!nativeTried) {
    nativeTried = true;
    try {
      nativeBackend = loadNativeBackend();
    } catch (e) {
      nativeError = e instanceof Error ? e : new Error(String(e));
    }
  }
  return nativeBackend;
}

/** Why the native backend is unavailable (undefined if it loaded or was never tried). */
export function nativeLoadError(): Error | undefined {
  return nativeError;
}

export function getJsBackend(): CryptoBackend {
  jsBackend ??= createJsBackend();
  return jsBackend;
}

/** Resolves a setting to a backend without caching the choice (the pool's workers use this). */
export function selectCryptoBackend(setting: CryptoBackendSetting): CryptoBackend {
  if (setting === 'js') return getJsBackend();
  const native = tryNativeBackend();
  if (native) return native;
  if (setting === 'native') {
    throw new CryptoBackendError(
      `CHAIND_CRYPTO=native but the native addon did not load: ${nativeError?.message ?? 'unknown error'} ` +
        '(build it with `bash native/build.sh`)',
      'CRYPTO_NATIVE_UNAVAILABLE',
      { cause: nativeError },
    );
  }
  return getJsBackend();
}

let setting: CryptoBackendSetting = 'auto';

/**
 * The setting the process-wide backend is chosen with (the composition root and the CLI pass
 * CHAIND_CRYPTO here, from src/config/env.ts). Call before the first getCryptoBackend(); once the
 * choice is made, a different setting is refused (CRYPTO_ALREADY_CHOSEN).
 */
export function setCryptoBackendSetting(s: CryptoBackendSetting): void {
  if (s === setting) return;
  if (chosen !== undefined) {
    throw new CryptoBackendError(`the crypto backend was already chosen with CHAIND_CRYPTO=${setting}; cannot switch to ${s}`, 'CRYPTO_ALREADY_CHOSEN');
  }
  setting = s;
}

/** The setting getCryptoBackend() chooses with (default auto). */
export function cryptoBackendSetting(): CryptoBackendSetting {
  return setting;
}

/**
 * The process-wide backend, chosen on first call from the setting and then fixed: mixing
 * backends mid-run would make timings unreadable, and every caller should see the same choice.
 */
export function getCryptoBackend(): CryptoBackend {
  chosen ??= selectCryptoBackend(setting);
  return chosen;
}

/** Every backend that works in this process, native first: for tests and benchmarks. */
export function availableCryptoBackends(): CryptoBackend[] {
  const out: CryptoBackend[] = [];
  const native = tryNativeBackend();
  if (native) out.push(native);
  out.push(getJsBackend());
  return out;
}
