/**
 * Loader for the native addon native/chaind-native.linux-x64-gnu.node (see native/README.md).
 *
 * napi-rs normally generates this loader, but its CLI skips generation when the crate does not
 * use napi-derive (ours is hand-declared N-API, since no napi crate is available offline), so it
 * is written here. The path is resolved from this file's location up to the package root, never
 * from process.cwd(): chaind is started from anywhere (`chaind start --home ...`) and Piscina
 * workers inherit whatever cwd the parent had.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CryptoBackend } from './backend.js';
import { argError, bytesArg } from './args.js';
import { ed25519VerifyChecked, ltHashMixChecked } from './js.js';

/** What the addon exports (native/src/lib.rs). */
export interface NativeAddon {
  keccak256(data: Uint8Array): Buffer;
  keccak256Into(data: Uint8Array, out: Uint8Array, offset: number): void;
  keccak256Batch(concat: Uint8Array, itemLen: number, out: Uint8Array): number;
  /** Since chaind-native 0.1.0 + keccak256Spans; an older build lacks it (see createNativeBackend). */
  keccak256Spans?(concat: Uint8Array, ends: Uint32Array, out: Uint8Array): number;
  sha256(data: Uint8Array): Buffer;
  sha256Into(data: Uint8Array, out: Uint8Array, offset: number): void;
  merkleRoot(items: readonly Uint8Array[]): Buffer;
  secp256k1Verify(digest: Uint8Array, sig: Uint8Array, pubKey: Uint8Array): boolean;
  secp256k1Recover(digest: Uint8Array, sig: Uint8Array, recid: number): Buffer | null;
  secp256k1Decompress(pubKey: Uint8Array): Buffer | null;
  /** Since ltHashMix was added; an older build lacks it (see createNativeBackend). */
  ltHashMix?(lanes: Uint8Array, key: Uint8Array, value: Uint8Array, subtract: number): void;
  /**
   * The calling thread's scheduler slice set to `ns` (0: only read), then read back in ns; a
   * negative errno when the kernel refused (native/src/sched.rs; src/pool/sched.ts uses it). Not a
   * crypto primitive: the addon is the node's one native module. An older build lacks it.
   */
  threadSlice?(ns: number): number;
}

const ADDON_EXPORTS: readonly (keyof NativeAddon)[] = [
  'keccak256',
  'keccak256Into',
  'keccak256Batch',
  'sha256',
  'sha256Into',
  'merkleRoot',
  'secp256k1Verify',
  'secp256k1Recover',
  'secp256k1Decompress',
];

/** `<binaryName>.<platform>-<arch>-gnu.node`, as `napi build --platform` names it. */
export function nativeAddonFileName(): string {
  return `chaind-native.${process.platform}-${process.arch}-gnu.node`;
}

/** The directory holding chaind's package.json, found by walking up from this module. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pj = join(dir, 'package.json');
    if (existsSync(pj)) {
      try {
        if ((JSON.parse(readFileSync(pj, 'utf8')) as { name?: string }).name === 'chaind') return dir;
      } catch {
        // An unreadable package.json on the way up is not ours; keep walking.
      }
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find chaind's package.json above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

/** CHAIND_NATIVE_PATH overrides the location (an absolute path to the .node file). */
export function nativeAddonPath(): string {
  const override = process.env['CHAIND_NATIVE_PATH'];
  if (override) return override;
  return join(packageRoot(), 'native', nativeAddonFileName());
}

/** Loads the addon; throws (with the dlopen or missing-file reason) when it cannot. */
export function loadNativeAddon(path = nativeAddonPath()): NativeAddon {
  if (!existsSync(path)) throw new Error(`native addon not built: ${path} is missing`);
  const require = createRequire(import.meta.url);
  const addon = require(path) as Partial<NativeAddon>;
  for (const name of ADDON_EXPORTS) {
    // A stale build from an older crate would miss exports; refuse it rather than fail later.
    if (typeof addon[name] !== 'function') throw new Error(`native addon ${path} lacks ${name}(); rebuild it`);
  }
  return addon as NativeAddon;
}

function spansByItem(addon: NativeAddon): CryptoBackend['keccak256Spans'] {
  return (concat, ends, out) => {
    const fn = 'keccak256Spans';
    const c = bytesArg(fn, 'concat', concat);
    if (!(ends instanceof Uint32Array)) throw argError(fn, 'ends must be a Uint32Array');
    const o = bytesArg(fn, 'out', out);
    if (ends.length * 32 > o.length) throw argError(fn, `out too small: ${ends.length} items need ${ends.length * 32} bytes, got ${o.length}`);
    let prev = 0;
    for (let i = 0; i < ends.length; i++) {
      const e = ends[i]!;
      if (e < prev || e > c.length) throw argError(fn, `ends[${i}] = ${e} is out of order or past concat length ${c.length}`);
      prev = e;
    }
    let start = 0;
    for (let i = 0; i < ends.length; i++) {
      addon.keccak256Into(c.subarray(start, ends[i]!), o, 32 * i);
      start = ends[i]!;
    }
    return ends.length;
  };
}

export function createNativeBackend(addon: NativeAddon): CryptoBackend {
  return {
    name: 'native',
    keccak256: (d) => addon.keccak256(d),
    keccak256Into: (d, out, off) => addon.keccak256Into(d, out, off),
    keccak256Batch: (c, itemLen, out) => addon.keccak256Batch(c, itemLen, out),
    // An addon built before keccak256Spans existed (a stale .node next to newer sources) still
    // loads: its spans are hashed one keccak256Into call each, same digests, one crossing per item.
    keccak256Spans: addon.keccak256Spans ? (c, ends, out) => addon.keccak256Spans!(c, ends, out) : spansByItem(addon),
    sha256: (d) => addon.sha256(d),
    sha256Into: (d, out, off) => addon.sha256Into(d, out, off),
    merkleRoot: (items) => addon.merkleRoot(items),
    secp256k1Verify: (digest, sig, pub) => addon.secp256k1Verify(digest, sig, pub),
    secp256k1Recover: (digest, sig, recid) => addon.secp256k1Recover(digest, sig, recid),
    secp256k1Decompress: (pub) => addon.secp256k1Decompress(pub),
    // OpenSSL through node:crypto is already native; the addon has no ed25519 of its own.
    ed25519Verify: ed25519VerifyChecked,
    // An older addon without ltHashMix: node:crypto's SHAKE256, the same lanes.
    ltHashMix: addon.ltHashMix ? (lanes, key, value, subtract) => addon.ltHashMix!(lanes, key, value, subtract ? 1 : 0) : ltHashMixChecked,
  };
}

export function loadNativeBackend(): CryptoBackend {
  return createNativeBackend(loadNativeAddon());
}
