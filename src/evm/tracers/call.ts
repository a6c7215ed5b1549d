/**
 * geth's callTracer and flatCallTracer (ethereum/go-ethereum:eth/tracers/native/call.go,
 * call_flat.go, gen_callframe_json.go).
 *
 * callTracer: the tree of call frames, each `{from, gas, gasUsed, to?, input, output?, error?,
 * revertReason?, calls?, logs?, value?, type}`; the top frame's gas is the tx's gas limit and its
 * gasUsed the receipt's. A failed frame keeps its output only for a revert (with the decoded
 * `Error(string)` as revertReason); a failed CREATE loses `to`. Config: onlyTopCall, withLog (each
 * frame's logs with their block index and `position`, the number of child calls before them; logs
 * of failed frames and of their children removed).
 *
 * flatCallTracer: the same frames as parity's flat list (`action`, `blockHash`, `blockNumber`,
 * `error?`, `result?`, `subtraces`, `traceAddress`, `transactionHash`, `transactionPosition`,
 * `type`). Config: convertParityErrors, includePrecompiles (calls to precompiles are left out
 * unless it is set).
 */
import type { Frame, FrameExit, LogEntry, Tracer, TxContext, TxEnd } from './types.js';
import { TracerError, hex, isPrecompile, qty } from './types.js';

interface CallFrame {
  type: Frame['type'];
  from: Uint8Array;
  frame: Frame;
  gas: bigint;
  gasUsed: bigint;
  input: Uint8Array;
  output?: Uint8Array;
  error?: string;
  revertReason?: string;
  calls: CallFrame[];
  logs: { address: string; topics: string[]; data: string; index: string; position: string }[];
  value: bigint | undefined;
  reverted: boolean;
  dropTo: boolean;
}

export interface CallTracerConfig {
  onlyTopCall?: boolean;
  withLog?: boolean;
}

/** accounts/abi UnpackRevert: the reason of `Error(string)`, or of `Panic(uint256)`. */
export function unpackRevert(data: Uint8Array): string | undefined {
  if (data.length < 4) return undefined;
  const sel = hex(data.subarray(0, 4));
  if (sel === '0x08c379a0' && data.length >= 68) {
    const off = Number(BigInt(hex(data.subarray(4, 36))));
    if (4 + off + 32 > data.length) return undefined;
    const len = Number(BigInt(hex(data.subarray(4 + off, 4 + off + 32))));
    if (4 + off + 32 + len > data.length) return undefined;
    return Buffer.from(data.subarray(4 + off + 32, 4 + off + 32 + len)).toString('utf8');
  }
  if (sel === '0x4e487b71' && data.length === 36) {
    const code = BigInt(hex(data.subarray(4)));
    const panics: Record<string, string> = {
      '0': 'generic panic', '1': 'assert(false)', '17': 'arithmetic underflow or overflow', '18': 'division or modulo by zero',
      '33': 'enum overflow', '34': 'invalid encoded storage byte array accessed', '49': 'out-of-bounds array access; popping on an empty array',
      '50': 'out-of-bounds access of an array or bytesN', '65': 'out of memory', '81': 'uninitialized function',
    };
    return panics[code.toString()] ?? `unknown panic code: 0x${code.toString(16)}`;
  }
  return undefined;
}

export class CallTracer implements Tracer {
  readonly steps = false;
  readonly stack: CallFrame[] = [];
  private top: CallFrame | undefined;
  private gasLimit = 0n;
  private depth = 0;

  constructor(private readonly cfg: CallTracerConfig = {}) {}

  onTxStart(tx: TxContext): void {
    this.gasLimit = tx.gasLimit;
  }

  onEnter(f: Frame): void {
    this.depth = f.depth;
    if (this.cfg.onlyTopCall && f.depth > 0) return;
    const c: CallFrame = { type: f.type, from: f.from, frame: f, gas: f.depth === 0 ? this.gasLimit : f.gas, gasUsed: 0n, input: f.input, calls: [], logs: [], value: f.value, reverted: false, dropTo: false };
    if (f.depth === 0) this.top = c;
    this.stack.push(c);
  }

  onExit(x: FrameExit): void {
    if (x.depth === 0) {
      if (this.stack.length === 1) process(this.stack[0]!, x);
      return;
    }
    this.depth = x.depth - 1;
    if (this.cfg.onlyTopCall) return;
    if (this.stack.length <= 1) return;
    const c = this.stack.pop()!;
    c.gasUsed = x.gasUsed;
    process(c, x);
    this.stack[this.stack.length - 1]!.calls.push(c);
  }

  onLog(l: LogEntry): void {
    if (!this.cfg.withLog) return;
    if (this.cfg.onlyTopCall && this.depth > 0) return;
    const c = this.stack[this.stack.length - 1];
    if (c === undefined) return;
    c.logs.push({ address: hex(l.address), topics: l.topics.map(hex), data: hex(l.data), index: qty(l.index), position: qty(c.calls.length) });
  }

  onTxEnd(end: TxEnd): void {
    if (this.top !== undefined) this.top.gasUsed = end.gasUsed;
    if (this.cfg.withLog && this.top !== undefined) clearFailedLogs(this.top, false);
  }

  /** The top frame (flatCallTracer reads the tree). */
  root(): CallFrame {
    if (this.stack.length !== 1 || this.top === undefined) throw new TracerError('incorrect number of top-level calls');
    return this.top;
  }

  result(): unknown {
    return frameJson(this.root());
  }
}

function process(c: CallFrame, x: FrameExit): void {
  const err = x.reverted ? x.error : undefined;
  if (err === undefined) {
    c.output = x.output;
    return;
  }
  c.error = err;
  c.reverted = true;
  if (c.type === 'CREATE' || c.type === 'CREATE2') c.dropTo = true;
  if (err !== 'execution reverted' || x.output.length === 0) return;
  c.output = x.output;
  const reason = unpackRevert(x.output);
  if (reason !== undefined) c.revertReason = reason;
}

function clearFailedLogs(c: CallFrame, parentFailed: boolean): void {
  const failed = (c.error !== undefined && c.reverted) || parentFailed;
  if (failed) c.logs = [];
  for (const k of c.calls) clearFailedLogs(k, failed);
}

function frameJson(c: CallFrame): Record<string, unknown> {
  const to = c.dropTo ? undefined : c.frame.to;
  const o: Record<string, unknown> = { from: hex(c.from), gas: qty(c.gas), gasUsed: qty(c.gasUsed) };
  if (to !== undefined) o.to = hex(to);
  o.input = hex(c.input);
  if (c.output !== undefined && c.output.length > 0) o.output = hex(c.output);
  if (c.error !== undefined) o.error = c.error;
  if (c.revertReason !== undefined) o.revertReason = c.revertReason;
  if (c.calls.length > 0) o.calls = c.calls.map(frameJson);
  if (c.logs.length > 0) o.logs = c.logs;
  if (c.value !== undefined) o.value = qty(c.value);
  o.type = c.type;
  return o;
}

export interface FlatCallTracerConfig {
  convertParityErrors?: boolean;
  includePrecompiles?: boolean;
}

const PARITY_ERRORS: Record<string, string> = {
  'contract creation code storage out of gas': 'Out of gas',
  'out of gas': 'Out of gas',
  'gas uint64 overflow': 'Out of gas',
  'max code size exceeded': 'Out of gas',
  'invalid jump destination': 'Bad jump destination',
  'execution reverted': 'Reverted',
  'return data out of bounds': 'Out of bounds',
  'stack limit reached 1024 (1023)': 'Out of stack',
  'precompiled failed': 'Built-in failed',
  'invalid input length': 'Built-in failed',
};
const PARITY_PREFIXES: [string, string][] = [
  ['out of gas:', 'Out of gas'],
  ['invalid opcode:', 'Bad instruction'],
  ['stack underflow', 'Stack underflow'],
];

export class FlatCallTracer implements Tracer {
  readonly steps = false;
  private readonly inner = new CallTracer();
  private tx: TxContext | undefined;

  constructor(private readonly cfg: FlatCallTracerConfig = {}) {}

  onTxStart(tx: TxContext): void {
    this.tx = tx;
    this.inner.onTxStart(tx);
  }

  onEnter(f: Frame): void {
    this.inner.onEnter(f);
    if (f.depth === 0) return;
    const c = this.inner.stack[this.inner.stack.length - 1]!;
    if (c.value === undefined) c.value = 0n;
  }

  onExit(x: FrameExit): void {
    this.inner.onExit(x);
    if (x.depth === 0 || this.cfg.includePrecompiles) return;
    const parent = this.inner.stack[this.inner.stack.length - 1]!;
    const call = parent.calls[parent.calls.length - 1];
    if (call !== undefined && (call.type === 'CALL' || call.type === 'STATICCALL') && call.frame.to !== undefined && isPrecompile(call.frame.to)) parent.calls.pop();
  }

  onTxEnd(end: TxEnd): void {
    this.inner.onTxEnd(end);
  }

  result(): unknown {
    const out: unknown[] = [];
    this.flatten(this.inner.root(), [], out);
    return out;
  }

  private flatten(c: CallFrame, traceAddress: number[], out: unknown[]): void {
    const tx = this.tx;
    const to = c.dropTo ? undefined : c.frame.to;
    let action: Record<string, unknown>;
    let result: Record<string, unknown> | undefined;
    let type: string;
    if (c.type === 'CREATE' || c.type === 'CREATE2') {
      type = 'create';
      action = { creationMethod: c.type.toLowerCase(), from: hex(c.from), gas: qty(c.gas), init: hex(c.input), ...(c.value !== undefined ? { value: qty(c.value) } : {}) };
      result = { ...(to !== undefined ? { address: hex(to) } : {}), code: hex(c.output ?? new Uint8Array(0)), gasUsed: qty(c.gasUsed) };
    } else if (c.type === 'SELFDESTRUCT') {
      type = 'suicide';
      action = { address: hex(c.from), ...(c.value !== undefined ? { balance: qty(c.value) } : {}), ...(to !== undefined ? { refundAddress: hex(to) } : {}) };
      result = undefined;
    } else {
      type = 'call';
      action = { callType: c.type.toLowerCase(), from: hex(c.from), gas: qty(c.gas), input: hex(c.input), ...(to !== undefined ? { to: hex(to) } : {}), ...(c.value !== undefined ? { value: qty(c.value) } : {}) };
      result = { gasUsed: qty(c.gasUsed), output: hex(c.output ?? new Uint8Array(0)) };
    }
    let error = c.error;
    if (error !== undefined && this.cfg.convertParityErrors) {
      error = PARITY_ERRORS[error] ?? PARITY_PREFIXES.find(([p]) => error!.startsWith(p))?.[1] ?? error;
    }
    if (c.error !== undefined && c.error !== 'execution reverted') result = undefined;
    const f: Record<string, unknown> = {
      action,
      blockHash: tx?.blockHash !== undefined ? hex(tx.blockHash) : null,
      blockNumber: Number(tx?.blockNumber ?? 0n),
    };
    if (error !== undefined) f.error = error;
    if (result !== undefined) f.result = result;
    f.subtraces = c.calls.length;
    f.traceAddress = traceAddress;
    f.transactionHash = tx?.txHash !== undefined ? hex(tx.txHash) : null;
    f.transactionPosition = tx?.txIndex ?? 0;
    f.type = type;
    out.push(f);
    c.calls.forEach((k, i) => this.flatten(k, [...traceAddress, i], out));
  }
}
