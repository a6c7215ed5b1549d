/**
 * Custom JavaScript tracers, written against geth's tracer object API
 * (ethereum/go-ethereum:eth/tracers/js/goja.go): a tracer name that is not a native tracer is
 * evaluated as `(<code>)`, an object with `result(ctx, db)` and `step(log, db)` / `fault(log, db)`
 * and/or `enter(frame)` / `exit(frameResult)` and `setup(config)`.
 *
 * It runs in its own `node:vm` context (no `require`, no `process`, no host globals), and every
 * call into it carries what is left of the trace's timeout (vm's `timeout`: an endless loop in a
 * tracer ends as `execution timeout`). What geth's objects offer is offered here:
 *  - log: op {toNumber, toString, isPush}, stack {peek, length}, memory {slice, getUint, length},
 *    contract {getCaller, getAddress, getValue, getInput}, getPC, getGas, getCost, getDepth,
 *    getRefund, getError;
 *  - db: getBalance, getNonce, getCode, getState, exists (synchronous reads of the state as it is);
 *  - frame: getType, getFrom, getTo, getInput, getGas, getValue; frameResult: getGasUsed,
 *    getOutput, getError;
 *  - ctx: type, from, to, input, gas, gasUsed, gasPrice, value, block, output, error, blockHash,
 *    txIndex, txHash;
 *  - globals: toHex, toWord, toAddress, toContract, toContract2, isPrecompiled, slice, bigInt.
 * Numbers geth hands over as big integers are BigInts here (`.toString(16)` works as with geth's
 * bigInt; its arithmetic methods do not exist).
 */
import vm from 'node:vm';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { createAddress } from './driver.js';
import type { Frame, FrameExit, OpStep, StateReader, Tracer, TxContext, TxEnd } from './types.js';
import { TraceAbort } from './driver.js';
import { TracerError, hex, isPrecompile, wordBytes } from './types.js';

/** Synchronous state reads (the JS tracer's `db`). */
export interface SyncState {
  balance(addr: Uint8Array): bigint;
  nonce(addr: Uint8Array): bigint;
  code(addr: Uint8Array): Uint8Array;
  storage(addr: Uint8Array, slot: Uint8Array): Uint8Array;
  exists(addr: Uint8Array): boolean;
}

function bytesOf(v: unknown, len?: number): Uint8Array {
  let b: Uint8Array;
  if (typeof v === 'string') b = Uint8Array.from(Buffer.from(v.replace(/^0x/, '').padStart(len !== undefined ? len * 2 : 0, '0'), 'hex'));
  else if (typeof v === 'bigint' || typeof v === 'number') b = wordBytes(BigInt(v));
  else if (v !== null && typeof v === 'object' && typeof (v as { length?: unknown }).length === 'number') b = Uint8Array.from(v as ArrayLike<number>);
  else b = new Uint8Array(0);
  if (len !== undefined && b.length !== len) b = b.length > len ? b.subarray(b.length - len) : Uint8Array.from([...new Uint8Array(len - b.length), ...b]);
  return b;
}

export class JsTracer implements Tracer {
  readonly steps: boolean;
  private readonly context: vm.Context;
  private readonly has: { step: boolean; fault: boolean; enter: boolean; exit: boolean };
  private readonly frames: Frame[] = [];
  private tx: TxContext | undefined;
  private end: TxEnd | undefined;
  private db: Record<string, (...a: unknown[]) => unknown> = {};
  private readonly scripts = new Map<string, vm.Script>();

  constructor(code: string, config: unknown, private readonly deadline: number, private readonly sync: SyncState | undefined) {
    this.context = vm.createContext(Object.create(null), { codeGeneration: { strings: false, wasm: false } });
    const g = this.context as Record<string, unknown>;
    g.toHex = (b: unknown) => hex(bytesOf(b));
    g.toWord = (b: unknown) => bytesOf(b, 32);
    g.toAddress = (b: unknown) => bytesOf(b, 20);
    g.toContract = (from: unknown, nonce: unknown) => createAddress(bytesOf(from, 20), BigInt(nonce as number));
    g.toContract2 = (from: unknown, salt: unknown, init: unknown) =>
      keccak_256(Uint8Array.from([0xff, ...bytesOf(from, 20), ...bytesOf(salt, 32), ...keccak_256(bytesOf(init))])).subarray(12);
    g.isPrecompiled = (a: unknown) => isPrecompile(bytesOf(a, 20));
    g.slice = (b: unknown, start: number, end: number) => bytesOf(b).slice(start, end);
    g.bigInt = (x: unknown) => BigInt(x as string);
    let obj: unknown;
    try {
      obj = vm.runInContext(`globalThis.__t = (${code}\n)`, this.context, { timeout: this.left(), filename: 'tracer.js' });
    } catch (e) {
      throw this.failure(e, undefined);
    }
    if (obj === null || typeof obj !== 'object') throw new TracerError('trace object must expose a function result()');
    const fn = (k: string) => typeof (obj as Record<string, unknown>)[k] === 'function';
    if (!fn('result')) throw new TracerError('trace object must expose a function result()');
    this.has = { step: fn('step'), fault: fn('fault'), enter: fn('enter'), exit: fn('exit') };
    if (!this.has.step && !(this.has.enter && this.has.exit) && !fn('fault')) {
      // geth requires step (or enter and exit); a result-only tracer still runs.
    }
    if (this.has.enter !== this.has.exit) throw new TracerError('trace object must expose either both or none of enter() and exit()');
    this.steps = this.has.step || this.has.fault;
    if (fn('setup')) this.call('setup', JSON.stringify(config ?? {}));
  }

  private left(): number {
    const ms = Math.floor(this.deadline - Date.now());
    if (ms <= 0) throw new TraceAbort('execution timeout');
    return ms;
  }

  private failure(e: unknown, fn: string | undefined): Error {
    if (e instanceof TraceAbort) return e;
    const err = e as { code?: unknown; message?: unknown; name?: unknown };
    if (err?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return new TraceAbort('execution timeout');
    const text = `${typeof err?.name === 'string' ? err.name : 'Error'}: ${String(err?.message ?? e)}`;
    return new TracerError(fn === undefined ? text : `${text} in server-side tracer function '${fn}'`);
  }

  /** Calls `__t[fn](...args)` inside the context, bounded by the timeout. */
  private call(fn: string, ...args: unknown[]): unknown {
    const g = this.context as Record<string, unknown>;
    g.__args = args;
    let s = this.scripts.get(fn);
    if (s === undefined) {
      s = new vm.Script(`__t.${fn}.apply(__t, __args)`, { filename: 'tracer.js' });
      this.scripts.set(fn, s);
    }
    try {
      return s.runInContext(this.context, { timeout: this.left() });
    } catch (e) {
      throw this.failure(e, fn);
    }
  }

  private dbObject(): Record<string, (...a: unknown[]) => unknown> {
    const st = this.sync;
    const need = () => {
      if (st === undefined) throw new TracerError('db is not available');
      return st;
    };
    return {
      getBalance: (a) => need().balance(bytesOf(a, 20)),
      getNonce: (a) => Number(need().nonce(bytesOf(a, 20))),
      getCode: (a) => need().code(bytesOf(a, 20)),
      getState: (a, k) => need().storage(bytesOf(a, 20), bytesOf(k, 32)),
      exists: (a) => need().exists(bytesOf(a, 20)),
    };
  }

  onTxStart(tx: TxContext, _st: StateReader): void {
    this.tx = tx;
    this.db = this.dbObject();
  }

  onEnter(f: Frame): void {
    this.frames.push(f);
    if (f.depth === 0 || !this.has.enter) return;
    this.call('enter', {
      getType: () => f.type,
      getFrom: () => f.from,
      getTo: () => f.to,
      getInput: () => f.input,
      getGas: () => Number(f.gas),
      getValue: () => f.value,
    });
  }

  onExit(x: FrameExit): void {
    this.frames.pop();
    if (x.depth === 0 || !this.has.exit) return;
    this.call('exit', { getGasUsed: () => Number(x.gasUsed), getOutput: () => x.output, getError: () => x.error });
  }

  private log(s: OpStep, error: string | undefined): Record<string, unknown> {
    const frame = this.frames[s.depth - 1];
    const stack = s.stack.slice();
    const mem = s.memory;
    return {
      op: { toNumber: () => s.op, toString: () => s.opName, isPush: () => s.op >= 0x5f && s.op <= 0x7f },
      stack: { peek: (i: number) => stack[stack.length - 1 - i], length: () => stack.length },
      memory: {
        slice: (a: number, b: number) => mem.slice(a, b),
        getUint: (o: number) => BigInt(hex(bytesOf(mem.slice(o, o + 32), 32))),
        length: () => mem.length,
      },
      contract: {
        getCaller: () => frame?.from,
        getAddress: () => s.address,
        getValue: () => frame?.value ?? 0n,
        getInput: () => frame?.input,
      },
      getPC: () => s.pc,
      getGas: () => Number(s.gas),
      getCost: () => Number(s.cost),
      getDepth: () => s.depth,
      getRefund: () => Number(s.refund),
      getError: () => error,
    };
  }

  private lastStep: OpStep | undefined;

  onOpcode(s: OpStep): void {
    this.lastStep = s;
    if (s.error !== undefined) {
      if (this.has.fault) this.call('fault', this.log(s, s.error), this.db);
      return;
    }
    if (this.has.step) this.call('step', this.log(s, undefined), this.db);
  }

  onFault(depth: number, error: string): void {
    const s = this.lastStep;
    if (s !== undefined && s.depth === depth && this.has.fault) this.call('fault', this.log(s, error), this.db);
  }

  onTxEnd(end: TxEnd): void {
    this.end = end;
  }

  result(): unknown {
    const tx = this.tx;
    const ctx: Record<string, unknown> = {
      type: tx?.to === undefined ? 'CREATE' : 'CALL',
      from: tx?.from,
      to: tx?.to ?? tx?.created,
      input: tx?.input,
      gas: Number(tx?.gasLimit ?? 0n),
      gasUsed: Number(this.end?.gasUsed ?? 0n),
      gasPrice: tx?.gasPrice,
      value: tx?.value,
      block: Number(tx?.blockNumber ?? 0n),
      output: this.end?.output,
      ...(this.end?.error !== undefined ? { error: this.end.error } : {}),
      ...(tx?.blockHash !== undefined ? { blockHash: tx.blockHash } : {}),
      txIndex: tx?.txIndex ?? 0,
      ...(tx?.txHash !== undefined ? { txHash: tx.txHash } : {}),
    };
    const r = this.call('result', ctx, this.db);
    // Through JSON as geth marshals the value: BigInts as numbers (strings past 2^53), bytes as arrays.
    return JSON.parse(
      JSON.stringify(r, (_k, v: unknown) => {
        if (typeof v === 'bigint') return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
        if (v instanceof Uint8Array || (v !== null && typeof v === 'object' && Object.prototype.toString.call(v) === '[object Uint8Array]')) return Array.from(v as Uint8Array);
        return v;
      }) ?? 'null',
    );
  }
}
