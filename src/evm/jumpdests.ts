/**
 * The interpreter's jump-destination analysis, once per code instead of once per call frame.
 *
 * @ethereumjs/evm 10's Interpreter scans the whole bytecode (valid JUMPDESTs, PUSH immediates as
 * bigints, the opcode of every byte) every time a frame starts running code that has a JUMP
 * (ethereumjs/ethereumjs-monorepo:packages/evm/src/interpreter.ts, _getValidJumpDestinations):
 * for a 2-4 kB ERC-20 that is thousands of steps and allocations per eth_call and per tx, 3.5-5 %
 * of the call worker's profile. The result depends only on the code bytes and on the EVM's opcode
 * table, and the interpreter only reads it; so it is kept per (opcode table, code array). The
 * state manager (state-manager.ts) hands out one Uint8Array per code hash and keeps it across
 * blocks, so the key is stable for deployed code; init code and code of overrides are fresh arrays
 * and simply miss. Weak maps: nothing is kept alive by the cache.
 *
 * The Interpreter class is not exported by the package; it is reached through the file next to
 * the package's entry point, which is the same module instance the EVM itself imports.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

interface Analysis {
  jumps: Uint8Array;
  pushes: Record<number, bigint>;
  opcodesCached: unknown[];
}

interface InterpreterProto {
  _getValidJumpDestinations(this: { _evm: { _opcodeMap: object } }, code: Uint8Array): Analysis;
  __chaindJumpCache?: true;
}

/** Code under this many bytes is analysed afresh (the map costs more than the scan). */
const MIN_CACHED_CODE = 64;

let installed = false;

/** Installs the cache (idempotent). Returns whether it is active. */
export async function installJumpDestCache(): Promise<boolean> {
  if (installed) return true;
  let proto: InterpreterProto | undefined;
  try {
    // The ESM entry (dist/esm/index.js) and its sibling interpreter.js: resolved from the CJS
    // entry's directory, which sits beside it (dist/cjs → dist/esm).
    const require = createRequire(import.meta.url);
    const cjs = require.resolve('@ethereumjs/evm');
    const esm = cjs.replace(/[\\/]dist[\\/]cjs[\\/]index\.js$/, '/dist/esm/interpreter.js');
    if (esm === cjs) return false;
    const mod = (await import(pathToFileURL(esm).href)) as { Interpreter?: { prototype: InterpreterProto } };
    proto = mod.Interpreter?.prototype;
  } catch {
    return false;
  }
  if (proto === undefined || typeof proto._getValidJumpDestinations !== 'function') return false;
  if (proto.__chaindJumpCache) return (installed = true);
  const analyse = proto._getValidJumpDestinations;
  const byTable = new WeakMap<object, WeakMap<Uint8Array, Analysis>>();
  proto._getValidJumpDestinations = function (code: Uint8Array): Analysis {
    if (code.length < MIN_CACHED_CODE) return analyse.call(this, code);
    const table = this._evm._opcodeMap;
    let m = byTable.get(table);
    if (m === undefined) {
      m = new WeakMap();
      byTable.set(table, m);
    }
    let a = m.get(code);
    if (a === undefined) {
      a = analyse.call(this, code);
      m.set(code, a);
    }
    return a;
  };
  proto.__chaindJumpCache = true;
  installed = true;
  return true;
}
