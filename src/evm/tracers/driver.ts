/**
 * geth's tracing hooks over @ethereumjs/evm 10's events. The EVM emits `step` before each opcode
 * (after its gas is computed, before it is charged), `beforeMessage` / `afterMessage` around every
 * call frame (precompiles included) and `newContract` once a CREATE's address is known; this maps
 * them onto geth's OnOpcode / OnEnter / OnExit / OnLog (ethereum/go-ethereum:core/tracing/hooks.go,
 * core/vm/interpreter.go, core/vm/evm.go):
 *  - depth: the EVM counts from 0, geth's OnOpcode from 1 (OnEnter from 0, as here);
 *  - the cost of CALL, CALLCODE, DELEGATECALL and STATICCALL includes the gas handed to the callee
 *    (geth's gasCall adds callGasTemp: all but 1/64 of what is left after the op's own cost, capped
 *    by the requested gas; the 2300 stipend of a value call is not part of it);
 *  - the frame type comes from the op that opened it (a STATICCALL inside a static frame is still
 *    a STATICCALL), or from the message when no step was seen;
 *  - SELFDESTRUCT is a frame of its own in geth (OnEnter/OnExit with the balance as value);
 *  - LOGn: geth's OnLog once the op ran; here the log is read from the step's stack and memory
 *    and reported at the next event, unless the op itself failed;
 *  - an error geth finds before OnOpcode (out of gas, stack under/overflow, invalid opcode) is
 *    reported on the failing step (onFault).
 */
import { generateAddress, generateAddress2 } from '@ethereumjs/util';
import type { Frame, FrameType, LogEntry, OpStep, StateReader, Tracer } from './types.js';
import { addressOf, bytesEqual, failsBeforeStep, gethVmError, wordBytes } from './types.js';

/** Items each op takes from the stack (geth's minStack), for the underflow error text. */
export function stackIn(op: number): number {
  if (op >= 0x60 && op <= 0x7f) return 0;
  if (op >= 0x80 && op <= 0x8f) return op - 0x7f;
  if (op >= 0x90 && op <= 0x9f) return op - 0x8e;
  if (op >= 0xa0 && op <= 0xa4) return op - 0xa0 + 2;
  const t: Record<number, number> = {
    0x01: 2, 0x02: 2, 0x03: 2, 0x04: 2, 0x05: 2, 0x06: 2, 0x07: 2, 0x08: 3, 0x09: 3, 0x0a: 2, 0x0b: 2,
    0x10: 2, 0x11: 2, 0x12: 2, 0x13: 2, 0x14: 2, 0x15: 1, 0x16: 2, 0x17: 2, 0x18: 2, 0x19: 1, 0x1a: 2, 0x1b: 2, 0x1c: 2, 0x1d: 2, 0x1e: 1,
    0x20: 2, 0x31: 1, 0x35: 1, 0x37: 3, 0x39: 3, 0x3b: 1, 0x3c: 4, 0x3e: 3, 0x3f: 1, 0x40: 1, 0x49: 1,
    0x50: 1, 0x51: 1, 0x52: 2, 0x53: 2, 0x54: 1, 0x55: 2, 0x56: 1, 0x57: 2, 0x5c: 1, 0x5d: 2, 0x5e: 3,
    0xf0: 3, 0xf1: 7, 0xf2: 7, 0xf3: 2, 0xf4: 6, 0xf5: 4, 0xfa: 6, 0xfd: 2, 0xff: 1,
  };
  return t[op] ?? 0;
}

const CALL_OPS = new Set([0xf1, 0xf2, 0xf4, 0xfa]);

/** Ops a static frame may not run: SSTORE, LOGn, CREATE, CREATE2, SELFDESTRUCT, a CALL with value. */
function writesState(op: number, stack: bigint[]): boolean {
  if (op === 0x55 || (op >= 0xa0 && op <= 0xa4) || op === 0xf0 || op === 0xf5 || op === 0xff) return true;
  return op === 0xf1 && stack.length >= 3 && stack[stack.length - 3]! !== 0n;
}
const OPENING: Record<number, FrameType> = { 0xf0: 'CREATE', 0xf1: 'CALL', 0xf2: 'CALLCODE', 0xf4: 'DELEGATECALL', 0xf5: 'CREATE2', 0xfa: 'STATICCALL' };

/** geth's opcode names where @ethereumjs's differ. */
function opName(name: string, code: number): string {
  if (code === 0x44) return 'DIFFICULTY';
  if (name === 'INVALID' && code !== 0xfe) return `opcode 0x${code.toString(16)} not defined`;
  return name;
}

/** What the EVM's events carry (the parts used here). */
interface StepEvent {
  pc: number;
  gasLeft: bigint;
  gasRefund: bigint;
  opcode: { name: string; dynamicFee: bigint; code: number };
  stack: bigint[];
  depth: number;
  address: { bytes: Uint8Array };
  codeAddress?: { bytes: Uint8Array };
  memory: Uint8Array;
  memoryWordCount: bigint;
}
interface MessageEvent {
  to?: { bytes: Uint8Array };
  caller: { bytes: Uint8Array };
  value: bigint;
  gasLimit: bigint;
  data: Uint8Array;
  depth: number;
  isStatic: boolean;
  delegatecall: boolean;
  salt?: Uint8Array;
  _codeAddress?: { bytes: Uint8Array };
}
interface ResultEvent {
  createdAddress?: { bytes: Uint8Array };
  execResult: { returnValue: Uint8Array; executionGasUsed: bigint; exceptionError?: { error: string } };
}
export interface EventSource {
  on(event: string, listener: (...a: never[]) => void): unknown;
  off(event: string, listener: (...a: never[]) => void): unknown;
}

/** Thrown from a hook to stop the run (the timeout). */
export class TraceAbort extends Error {
  override readonly name = 'TraceAbort';
  readonly code = 'TRACE_ABORT';
}

interface Level {
  frame: Frame;
  /** The last step seen in this frame (geth depth = level index + 1). */
  lastOp: number;
  lastStackLen: number;
  stepped: boolean;
  /** The last step already carried its error. */
  stepError: boolean;
  returnData: Uint8Array;
  /** The number of block logs when the frame began (a failed frame's logs are undone). */
  logsAtEntry: number;
  isStatic: boolean;
}

export interface DriverOptions {
  /** The index of the tx's first log in the block. */
  firstLogIndex: number;
  /** Called at each step and frame: throw TraceAbort to stop (the timeout). */
  check?: () => void;
}

/**
 * Attaches `tracer` to the EVM's events for the run of `run()`, then detaches it. OnTxStart and
 * OnTxEnd are the caller's (it knows the tx and its receipt).
 */
export async function drive<T>(events: EventSource, tracer: Tracer, state: StateReader, opts: DriverOptions, run: () => Promise<T>): Promise<T> {
  const levels: Level[] = [];
  let lastOpcode = -1;
  let lastDepth = -1;
  let logCount = opts.firstLogIndex;
  let pendingLog: { log: LogEntry; depth: number } | undefined;
  let abort: unknown;
  const check = opts.check;

  const flushLog = () => {
    if (pendingLog !== undefined) {
      tracer.onLog?.(pendingLog.log);
      pendingLog = undefined;
    }
  };

  const readLog = (e: StepEvent, n: number): LogEntry => {
    const s = e.stack;
    const top = s.length - 1;
    const offset = Number(s[top]!);
    const size = Number(s[top - 1]!);
    const topics: Uint8Array[] = [];
    for (let i = 0; i < n; i++) topics.push(wordBytes(s[top - 2 - i]!));
    const data = new Uint8Array(size);
    if (size > 0 && offset < e.memory.length) data.set(e.memory.subarray(offset, Math.min(e.memory.length, offset + size)));
    return { address: Uint8Array.from(e.address.bytes), topics, data, index: logCount++ };
  };

  const onStepSync = (e: StepEvent): OpStep | undefined => {
    // A throw here fails the EVM's emit (sync, or inside its promise executor): the run stops.
    if (abort !== undefined) throw abort;
    try {
      check?.();
    } catch (err) {
      abort = err;
      throw err;
    }
    flushLog();
    const code = e.opcode.code;
    const level = levels[e.depth];
    const stack = e.stack;
    let cost = e.opcode.dynamicFee;
    if (CALL_OPS.has(code) && stack.length >= 1 && e.gasLeft >= cost) {
      const avail = e.gasLeft - cost;
      const all = avail - avail / 64n;
      const want = stack[stack.length - 1]!;
      cost += want < all ? want : all;
    }
    // The errors geth finds before OnOpcode, which it reports on the step (core/vm/interpreter.go:
    // stack validation, then the constant and dynamic gas, whose functions also refuse state
    // changes in a static frame, core/vm/operations_acl.go, gas_table.go).
    let error: string | undefined;
    const need = stackIn(code);
    if (e.opcode.name === 'INVALID') error = gethVmError('invalid opcode', { op: code });
    else if (stack.length < need) error = gethVmError('stack underflow', { stackLen: stack.length, required: need });
    else if ((level?.isStatic ?? false) && writesState(code, stack)) error = 'write protection';
    else if (e.gasLeft < e.opcode.dynamicFee) error = 'out of gas';
    if (level !== undefined) {
      level.lastOp = code;
      level.stepError = error !== undefined;
      level.lastStackLen = stack.length;
      level.stepped = true;
    }
    lastOpcode = code;
    lastDepth = e.depth;
    if (code >= 0xa0 && code <= 0xa4 && stack.length >= code - 0xa0 + 2 && !(level?.isStatic ?? false)) {
      pendingLog = { log: readLog(e, code - 0xa0), depth: e.depth };
    }
    if (!tracer.steps) return undefined;
    return {
      pc: e.pc,
      op: code,
      opName: opName(e.opcode.name, code),
      gas: e.gasLeft,
      cost,
      depth: e.depth + 1,
      stack,
      memory: e.memory,
      address: e.address.bytes,
      codeAddress: e.codeAddress?.bytes ?? e.address.bytes,
      refund: e.gasRefund,
      returnData: level?.returnData ?? new Uint8Array(0),
      ...(error !== undefined ? { error } : {}),
    };
  };

  // SELFDESTRUCT: geth's frame of its own, entered and exited inside the op (needs the balance).
  const selfdestruct = async (e: StepEvent) => {
    if (e.opcode.code !== 0xff || e.stack.length < 1 || levels[e.depth]?.isStatic) return;
    const acct = await state.account(e.address.bytes);
    const frame: Frame = { type: 'SELFDESTRUCT', depth: e.depth + 1, from: Uint8Array.from(e.address.bytes), to: addressOf(e.stack[e.stack.length - 1]!), input: new Uint8Array(0), gas: 0n, value: acct?.balance ?? 0n };
    tracer.onEnter?.(frame);
    tracer.onExit?.({ depth: e.depth + 1, output: new Uint8Array(0), gasUsed: 0n, error: undefined, reverted: false });
  };

  const wantsFrames = tracer.onEnter !== undefined || tracer.onExit !== undefined;
  const stepListener =
    tracer.asyncSteps || wantsFrames
      ? (e: StepEvent, resolve: (v?: unknown) => void) => {
          const s = onStepSync(e);
          const after = async () => {
            if (s !== undefined) await tracer.onOpcode?.(s, state);
            if (wantsFrames) await selfdestruct(e);
          };
          after().then(
            () => resolve(),
            (err: unknown) => {
              abort ??= err;
              resolve();
            },
          );
        }
      : (e: StepEvent) => {
          const s = onStepSync(e);
          if (s !== undefined) void tracer.onOpcode?.(s, state);
        };

  const onBefore = (m: MessageEvent) => {
    if (abort !== undefined) return;
    flushLog();
    const depth = m.depth;
    const parent = levels[depth - 1];
    let type: FrameType;
    if (parent !== undefined && parent.stepped && lastDepth === depth - 1 && OPENING[lastOpcode] !== undefined) type = OPENING[lastOpcode]!;
    else if (m.salt !== undefined) type = 'CREATE2';
    else if (m.to === undefined) type = 'CREATE';
    else if (m.delegatecall) type = 'DELEGATECALL';
    else if (m.isStatic && !(parent?.isStatic ?? false)) type = 'STATICCALL';
    else if (m._codeAddress !== undefined && !bytesEqual(m._codeAddress.bytes, m.to.bytes)) type = 'CALLCODE';
    else type = 'CALL';
    // geth's from/to: DELEGATECALL is entered from the calling contract (the EVM's message keeps
    // the original sender as caller and the contract as `to`) into the code's address; CALLCODE
    // goes to the code's address too.
    const code = m._codeAddress?.bytes;
    const from = type === 'DELEGATECALL' && m.to !== undefined ? m.to.bytes : m.caller.bytes;
    const to = (type === 'DELEGATECALL' || type === 'CALLCODE') && code !== undefined ? code : m.to?.bytes;
    const frame: Frame = {
      type,
      depth,
      from: Uint8Array.from(from),
      to: to === undefined ? undefined : Uint8Array.from(to),
      // The message's data may be a view of the caller's memory, which later ops overwrite.
      input: Uint8Array.from(m.data),
      gas: m.gasLimit,
      value: type === 'STATICCALL' ? undefined : m.value,
    };
    // geth's CREATE2 address is known at OnEnter: keccak(0xff ‖ caller ‖ salt ‖ keccak(init)).
    if (type === 'CREATE2' && m.salt !== undefined) frame.to = generateAddress2(m.caller.bytes, m.salt, m.data);
    levels[depth] = { frame, lastOp: -1, lastStackLen: 0, stepped: false, stepError: false, returnData: new Uint8Array(0), logsAtEntry: logCount, isStatic: m.isStatic };
    levels.length = depth + 1;
    tracer.onEnter?.(frame);
  };

  const onNewContract = (c: { address: { bytes: Uint8Array } }) => {
    const level = levels[levels.length - 1];
    if (level !== undefined && level.frame.to === undefined) level.frame.to = Uint8Array.from(c.address.bytes);
  };

  const onAfter = (r: ResultEvent) => {
    if (abort !== undefined) return;
    const depth = levels.length - 1;
    const level = levels[depth];
    if (level === undefined) return;
    const raw = r.execResult.exceptionError?.error;
    if (pendingLog !== undefined) {
      // A LOG that was the failing op of this frame never happened.
      if (raw !== undefined && pendingLog.depth === depth && level.lastOp >= 0xa0 && level.lastOp <= 0xa4) {
        pendingLog = undefined;
        logCount--;
      } else flushLog();
    }
    if (r.createdAddress !== undefined && level.frame.to === undefined) level.frame.to = Uint8Array.from(r.createdAddress.bytes);
    let error: string | undefined;
    if (raw !== undefined) {
      error = gethVmError(raw, { stackLen: level.lastStackLen, required: stackIn(level.lastOp), op: level.lastOp });
      if (level.stepped && !level.stepError && failsBeforeStep(raw)) tracer.onFault?.(depth + 1, error);
      logCount = level.logsAtEntry;
    }
    levels.length = depth;
    const parent = levels[depth - 1];
    if (parent !== undefined) {
      const created = level.frame.type === 'CREATE' || level.frame.type === 'CREATE2';
      parent.returnData = created && raw !== 'revert' ? new Uint8Array(0) : r.execResult.returnValue;
    }
    tracer.onExit?.({ depth, output: r.execResult.returnValue, gasUsed: r.execResult.executionGasUsed, error, reverted: raw !== undefined });
  };

  const needSteps = tracer.steps || wantsFrames || tracer.onLog !== undefined || check !== undefined;
  if (needSteps) events.on('step', stepListener as never);
  events.on('beforeMessage', onBefore as never);
  events.on('afterMessage', onAfter as never);
  events.on('newContract', onNewContract as never);
  try {
    const out = await run();
    if (abort !== undefined) throw abort;
    return out;
  } catch (e) {
    throw abort ?? e;
  } finally {
    if (needSteps) events.off('step', stepListener as never);
    events.off('beforeMessage', onBefore as never);
    events.off('afterMessage', onAfter as never);
    events.off('newContract', onNewContract as never);
  }
}

/** The address a CREATE from `caller` at `nonce` gets. */
export function createAddress(caller: Uint8Array, nonce: bigint): Uint8Array {
  return generateAddress(caller, wordBytes(nonce).subarray(32 - byteLen(nonce)));
}

function byteLen(x: bigint): number {
  let n = 0;
  for (let v = x; v > 0n; v >>= 8n) n++;
  return n;
}
