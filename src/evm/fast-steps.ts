/**
 * The interpreter's loop without an awaited async call for every cheap opcode.
 *
 * @ethereumjs/evm 10's Interpreter.run awaits the `async` Interpreter.runStep once per executed
 * opcode (ethereumjs/ethereumjs-monorepo:packages/evm/src/interpreter.ts): every PUSH, DUP, ADD or
 * JUMP allocates runStep's promise and resumes through a microtask, which is most of what a cheap
 * opcode costs (an ERC-20 balanceOf runs a few hundred of them). For an opcode whose gas is static
 * (no dynamic gas handler) and whose handler is synchronous, nothing in the step waits; the loop
 * here runs such a step inline, doing what runStep does for it in the same order: base fee
 * (useGas, which traps on out of gas), program counter, handler, access witness commit. Every
 * other step is the library's runStep, awaited, unchanged: dynamic gas, async handlers, invalid
 * opcodes, a pending EIP-7928 call charge. The rest of the loop is run()'s for legacy code: the
 * jump analysis at the first JUMP/JUMPI (then the cached opcode table), a thrown VM error ending
 * the frame (STOP is no error), anything else rethrown, EIP-8037's leftover burn after the loop.
 *
 * The library's own run() serves, untouched, whatever this loop does not cover: EOF containers
 * (EIP-3540), anything observing steps (a `step` listener: the debug tracers; the EVM's DEBUG
 * logging; the performance profiler), charged code accesses (EIP-6800/7864 witnesses, neither active at Prague). It is
 * installed only over the @ethereumjs/evm version it was written against (package.json), so an
 * upgrade falls back to the library until this is checked again.
 *
 * The Interpreter class is reached as in jumpdests.ts (the module next to the package's entry).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { EthereumJSErrorWithoutCode } from '@ethereumjs/util';

/** The @ethereumjs/evm version whose Interpreter.run/runStep this loop reproduces. */
const CHECKED_VERSION = '10.1.3';

interface OpInfo {
  code: number;
  dynamicGas: boolean;
  isAsync: boolean;
  isInvalid: boolean;
  feeBigInt: bigint;
}
interface OpEntry {
  opcodeInfo: OpInfo;
  opHandler: (runState: RunState, common: unknown) => void;
}
interface RunState {
  opCode: number;
  programCounter: number;
  code: Uint8Array;
  gasLeft: bigint;
  validJumps: Uint8Array;
  cachedPushes: Record<number, bigint>;
  shouldDoJumpAnalysis: boolean;
  eip7928PostTargetCallOog?: unknown;
  eip8037BurnLeftoverAfterCreateHaltOntoAlive?: boolean;
  env: { accessWitness?: { commit(): void }; chargeCodeAccesses?: boolean };
}
interface VmError {
  errorType?: string;
  error?: string;
}
interface InterpreterLike {
  _runState: RunState;
  _evm: { DEBUG: boolean; events: { listenerCount(e: string): number } };
  common: { isActivatedEIP(eip: number): boolean };
  profilerOpts?: { enabled?: boolean };
  lookupOpInfo(op: number): OpEntry;
  useGas(amount: bigint, context?: unknown): void;
  runStep(opcodeObj?: OpEntry): Promise<void>;
  _getValidJumpDestinations(code: Uint8Array): { jumps: Uint8Array; pushes: Record<number, bigint>; opcodesCached: OpEntry[] };
}
type Run = (this: InterpreterLike, code: Uint8Array, opts?: { pc?: number }) => Promise<{ runState: RunState; exceptionError: unknown }>;
interface InterpreterProto {
  run: Run;
  __chaindFastLoop?: { original: Run; fast: Run };
}
interface EvmModule {
  Interpreter?: { prototype: InterpreterProto };
}
interface ErrorsModule {
  EVMError: { new (error: string): unknown; errorMessages: { STOP: string; OUT_OF_GAS: string } };
}

let loaded: Promise<{ proto: InterpreterProto; errors: ErrorsModule } | undefined> | undefined;

function load(): Promise<{ proto: InterpreterProto; errors: ErrorsModule } | undefined> {
  loaded ??= (async () => {
    try {
      const require = createRequire(import.meta.url);
      const cjs = require.resolve('@ethereumjs/evm');
      const dir = cjs.replace(/[\\/]dist[\\/]cjs[\\/]index\.js$/, '');
      if (dir === cjs) return undefined;
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: string };
      if (pkg.version !== CHECKED_VERSION) return undefined;
      const mod = (await import(pathToFileURL(path.join(dir, 'dist/esm/interpreter.js')).href)) as EvmModule;
      const errors = (await import(pathToFileURL(path.join(dir, 'dist/esm/errors.js')).href)) as ErrorsModule;
      const proto = mod.Interpreter?.prototype;
      if (proto === undefined || typeof proto.run !== 'function' || typeof errors.EVMError !== 'function') return undefined;
      return { proto, errors };
    } catch {
      return undefined;
    }
  })();
  return loaded;
}

const JUMP = 0x56;
const JUMPI = 0x57;
const JUMPSUB = 0x5e;
const EOF_FORMAT = 0xef;
const VM_ERROR = 'EVMError';

function makeLoop(original: Run, errors: ErrorsModule): Run {
  const { EVMError } = errors;
  const STOP = EVMError.errorMessages.STOP;
  return async function run(this: InterpreterLike, code: Uint8Array, opts: { pc?: number } = {}) {
    const rs = this._runState;
    const evm = this._evm;
    if (
      (code[0] === EOF_FORMAT && this.common.isActivatedEIP(3540)) ||
      (rs.env.chargeCodeAccesses === true && (this.common.isActivatedEIP(6800) || this.common.isActivatedEIP(7864))) ||
      evm.DEBUG ||
      this.profilerOpts?.enabled === true ||
      evm.events.listenerCount('step') > 0
    ) {
      return original.call(this, code, opts);
    }
    rs.code = code;
    rs.programCounter = opts.pc ?? rs.programCounter;
    const start = rs.programCounter;
    if (start !== 0 && (start < 0 || start >= code.length)) throw EthereumJSErrorWithoutCode('Internal error: program counter not in range');
    const common = this.common;
    let table: OpEntry[] | undefined;
    let err: unknown;
    while (rs.programCounter < rs.code.length) {
      const pc = rs.programCounter;
      let entry: OpEntry | undefined;
      let op: number;
      if (table === undefined) {
        op = rs.code[pc]!;
        if (op === JUMP || op === JUMPI || op === JUMPSUB) {
          const a = this._getValidJumpDestinations(rs.code);
          rs.validJumps = a.jumps;
          rs.cachedPushes = a.pushes;
          rs.shouldDoJumpAnalysis = false;
          table = a.opcodesCached;
        }
      } else {
        entry = table[pc]!;
        op = entry.opcodeInfo.code;
      }
      rs.opCode = op;
      try {
        const e = entry ?? this.lookupOpInfo(op);
        const info = e.opcodeInfo;
        if (info.dynamicGas || info.isAsync || info.isInvalid || rs.eip7928PostTargetCallOog !== undefined) {
          await this.runStep(entry);
        } else {
          this.useGas(info.feeBigInt, info);
          rs.programCounter++;
          e.opHandler(rs, common);
          rs.env.accessWitness?.commit();
        }
      } catch (e) {
        const ve = e as VmError;
        if (ve === null || typeof ve !== 'object' || ve.errorType !== VM_ERROR) throw e;
        if (ve.error !== STOP) err = e;
        break;
      }
    }
    if (err === undefined && rs.eip8037BurnLeftoverAfterCreateHaltOntoAlive === true && rs.gasLeft > 0n) {
      rs.gasLeft = 0n;
      err = new EVMError(EVMError.errorMessages.OUT_OF_GAS);
    }
    return { runState: rs, exceptionError: err };
  };
}

/**
 * Installs the loop (idempotent); `on: false` puts the library's run back (benchmarks compare the
 * two). Returns whether the loop is active: false when the package is not the checked version.
 */
export async function installFastSteps(on = true): Promise<boolean> {
  const l = await load();
  if (l === undefined) return false;
  const p = l.proto;
  if (p.__chaindFastLoop === undefined) {
    const original = p.run;
    p.__chaindFastLoop = { original, fast: makeLoop(original, l.errors) };
  }
  p.run = on ? p.__chaindFastLoop.fast : p.__chaindFastLoop.original;
  return on;
}
