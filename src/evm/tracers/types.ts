/**
 * geth's tracing hooks (ethereum/go-ethereum:core/tracing/hooks.go: OnTxStart, OnEnter, OnExit,
 * OnOpcode, OnLog, OnTxEnd) restated over @ethereumjs/evm's events, and the small pieces every
 * tracer here shares: hex formatting and geth's wording of VM errors.
 *
 * driver.ts turns the EVM's `step`, `beforeMessage`, `afterMessage` and `newContract` events into
 * these hooks; each tracer (struct-logger.ts, call.ts, prestate.ts, four-byte.ts, index.ts) is a
 * set of hooks plus `result()`, which returns geth's JSON value for the traced transaction.
 */

/** geth's call frame types (core/vm/opcodes.go names). */
export type FrameType = 'CALL' | 'CALLCODE' | 'DELEGATECALL' | 'STATICCALL' | 'CREATE' | 'CREATE2' | 'SELFDESTRUCT';

/** A call frame as OnEnter sees it; `to` of a CREATE is filled in once the address is known. */
export interface Frame {
  type: FrameType;
  /** 0 for the transaction's own frame (geth's depth). */
  depth: number;
  from: Uint8Array;
  to: Uint8Array | undefined;
  input: Uint8Array;
  gas: bigint;
  /** Absent for STATICCALL (geth passes no value). */
  value: bigint | undefined;
}

export interface FrameExit {
  depth: number;
  output: Uint8Array;
  gasUsed: bigint;
  /** geth's error text (execution reverted, out of gas, …), or undefined. */
  error: string | undefined;
  /** geth's `reverted`: the frame's state changes were undone. */
  reverted: boolean;
}

/** One opcode as OnOpcode sees it, before it runs. */
export interface OpStep {
  pc: number;
  op: number;
  /** geth's opcode name (PUSH1, KECCAK256, …). */
  opName: string;
  /** Gas left before the op. */
  gas: bigint;
  /** The op's cost as geth counts it (CALL-type: with the gas handed to the callee). */
  cost: bigint;
  /** geth's depth: 1 for the transaction's frame. */
  depth: number;
  /** Bottom to top. Shared with the EVM: copy what you keep. */
  stack: bigint[];
  /** Memory before the op (a copy). */
  memory: Uint8Array;
  /** The address whose storage the frame uses (the contract; under DELEGATECALL the caller's). */
  address: Uint8Array;
  /** The code's own address. */
  codeAddress: Uint8Array;
  /** The refund counter. */
  refund: bigint;
  /** The return data of the frame's last call. */
  returnData: Uint8Array;
  /** geth's error when the op fails before it runs (out of gas, stack underflow, write protection…). */
  error?: string;
}

export interface LogEntry {
  address: Uint8Array;
  topics: Uint8Array[];
  data: Uint8Array;
  /** The log's index in the block (geth's log.Index). */
  index: number;
}

/** The transaction being traced and its block. */
export interface TxContext {
  from: Uint8Array;
  /** Absent for a contract creation. */
  to: Uint8Array | undefined;
  /** The created contract of a creation (known before it runs: sender and nonce). */
  created: Uint8Array | undefined;
  gasLimit: bigint;
  gasPrice: bigint;
  value: bigint;
  input: Uint8Array;
  nonce: bigint;
  coinbase: Uint8Array;
  blockNumber: bigint;
  blockHash: Uint8Array | undefined;
  time: bigint;
  txHash: Uint8Array | undefined;
  txIndex: number;
  /** EIP-7702 authorities of a set-code transaction (recovered). */
  authorities: Uint8Array[];
}

export interface TxEnd {
  /** The receipt's gas used. */
  gasUsed: bigint;
  output: Uint8Array;
  /** geth's error text of the top frame, or undefined. */
  error: string | undefined;
}

/** Reads of the state as it is at the moment of the call (pre-state, during the run, after it). */
export interface StateReader {
  /** The same reads without promises (JavaScript tracers' `db`), where the state allows it. */
  sync?: import('./js.js').SyncState;
  account(addr: Uint8Array): Promise<{ balance: bigint; nonce: bigint; codeHash: Uint8Array; code: Uint8Array } | undefined>;
  storage(addr: Uint8Array, slot: Uint8Array): Promise<Uint8Array>;
}

export interface Tracer {
  /** The tracer needs OnOpcode (the `step` event, which slows the EVM down). */
  readonly steps: boolean;
  /** OnOpcode returns a promise the EVM must wait for (it reads the state). */
  readonly asyncSteps?: boolean;
  onTxStart?(tx: TxContext, state: StateReader): void | Promise<void>;
  onEnter?(frame: Frame): void;
  onExit?(exit: FrameExit): void;
  onOpcode?(step: OpStep, state: StateReader): void | Promise<void>;
  /** The op that was last given to OnOpcode at `depth` (geth's) failed before it ran (geth logs the error on it). */
  onFault?(depth: number, error: string): void;
  onLog?(log: LogEntry): void;
  onTxEnd?(end: TxEnd, state: StateReader): void | Promise<void>;
  /** geth's JSON value of the trace. */
  result(): unknown;
}

export class TracerError extends Error {
  override readonly name = 'TracerError';
  readonly code = 'TRACER_ERROR';
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function hex(b: Uint8Array): string {
  let s = '0x';
  for (let i = 0; i < b.length; i++) s += HEX[b[i]!];
  return s;
}

/** A 32-byte word, 0x + 64 hex. */
export function word(b: Uint8Array): string {
  if (b.length === 32) return hex(b);
  const w = new Uint8Array(32);
  w.set(b.subarray(Math.max(0, b.length - 32)), 32 - Math.min(32, b.length));
  return hex(w);
}

export function wordOf(x: bigint): string {
  return `0x${x.toString(16).padStart(64, '0')}`;
}

export function wordBytes(x: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let v = x;
  for (let i = 31; i >= 0 && v > 0n; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

export const qty = (x: bigint | number): string => `0x${x.toString(16)}`;

/** The low 20 bytes of a stack word. */
export function addressOf(x: bigint): Uint8Array {
  return wordBytes(x).subarray(12);
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Prague's precompiles, 0x01–0x11 (geth's vm.ActivePrecompiles for the rules). */
export function isPrecompile(addr: Uint8Array): boolean {
  for (let i = 0; i < 19; i++) if (addr[i] !== 0) return false;
  const last = addr[19]!;
  return last >= 1 && last <= 0x11;
}

/**
 * geth's error text (core/vm/errors.go) for an @ethereumjs/evm error string. Stack underflow
 * carries the stack length and the op's requirement as geth words it, when known.
 */
export function gethVmError(err: string, ctx?: { stackLen?: number; required?: number; op?: number }): string {
  switch (err) {
    case 'revert':
      return 'execution reverted';
    case 'invalid JUMP':
      return 'invalid jump destination';
    case 'stack underflow':
      return ctx?.stackLen !== undefined && ctx.required !== undefined ? `stack underflow (${ctx.stackLen} <=> ${ctx.required})` : 'stack underflow';
    case 'stack overflow':
      return 'stack limit reached 1024 (1023)';
    case 'invalid opcode':
      return ctx?.op === undefined || ctx.op === 0xfe ? 'invalid opcode: INVALID' : `invalid opcode: opcode 0x${ctx.op.toString(16)} not defined`;
    case 'static state change':
      return 'write protection';
    case 'code store out of gas':
      return 'contract creation code storage out of gas';
    case 'code size to deposit exceeds maximum code size':
      return 'max code size exceeded';
    case 'insufficient balance':
      return 'insufficient balance for transfer';
    case 'create collision':
      return 'contract address collision';
    case 'invalid bytecode deployed':
      return 'invalid code: must not begin with 0xef';
    case 'initcode exceeds max initcode size':
      return 'max initcode size exceeded';
    case 'value out of range':
    case 'value overflow':
      return 'gas uint64 overflow';
    default:
      return err;
  }
}

/** Errors geth finds before it calls OnOpcode, so that the step carries the error. */
export function failsBeforeStep(err: string): boolean {
  return err === 'out of gas' || err === 'stack underflow' || err === 'stack overflow' || err === 'invalid opcode' || err === 'static state change';
}
