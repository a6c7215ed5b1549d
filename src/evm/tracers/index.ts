/**
 * geth's tracers by name (ethereum/go-ethereum:eth/tracers/native: 4byte.go, noop.go, mux.go, and
 * the ones in their own files here), and the config a trace call gives them
 * (eth/tracers/api.go TraceConfig: the logger options, `tracer`, `tracerConfig`, `timeout`).
 */
import { CallTracer, FlatCallTracer } from './call.js';
import { JsTracer, type SyncState } from './js.js';
import { PrestateTracer } from './prestate.js';
import { StructLogger, type StructLoggerConfig } from './struct-logger.js';
import type { Frame, FrameExit, LogEntry, OpStep, StateReader, Tracer, TxContext, TxEnd } from './types.js';
import { TracerError, hex, isPrecompile } from './types.js';

export { drive, TraceAbort } from './driver.js';
export { RawJson, toJsonText, toJsonParts } from './raw-json.js';
export { StructLogger } from './struct-logger.js';
export { TracerError } from './types.js';
export type { SyncState } from './js.js';
export type { Tracer, TxContext, TxEnd, StateReader } from './types.js';

/** geth's 4byteTracer: `{"0xselector-<input length - 4>": count}` over CALL-type frames, precompiles left out. */
export class FourByteTracer implements Tracer {
  readonly steps = false;
  private readonly ids = new Map<string, number>();
  onEnter(f: Frame): void {
    if (f.input.length < 4) return;
    if (f.type !== 'CALL' && f.type !== 'CALLCODE' && f.type !== 'DELEGATECALL' && f.type !== 'STATICCALL') return;
    if (f.to !== undefined && isPrecompile(f.to)) return;
    const key = `${hex(f.input.subarray(0, 4))}-${f.input.length - 4}`;
    this.ids.set(key, (this.ids.get(key) ?? 0) + 1);
  }
  result(): unknown {
    return Object.fromEntries([...this.ids].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
}

/** geth's noopTracer: nothing, `{}`. */
export class NoopTracer implements Tracer {
  readonly steps = false;
  result(): unknown {
    return {};
  }
}

/** geth's muxTracer: several tracers at once, `{name: result}` (tracerConfig: `{name: config}`). */
export class MuxTracer implements Tracer {
  readonly steps: boolean;
  readonly asyncSteps: boolean;
  constructor(private readonly tracers: [string, Tracer][]) {
    this.steps = tracers.some(([, t]) => t.steps);
    this.asyncSteps = tracers.some(([, t]) => t.asyncSteps);
  }
  async onTxStart(tx: TxContext, st: StateReader): Promise<void> {
    for (const [, t] of this.tracers) await t.onTxStart?.(tx, st);
  }
  onEnter(f: Frame): void {
    for (const [, t] of this.tracers) t.onEnter?.(f);
  }
  onExit(x: FrameExit): void {
    for (const [, t] of this.tracers) t.onExit?.(x);
  }
  async onOpcode(s: OpStep, st: StateReader): Promise<void> {
    for (const [, t] of this.tracers) if (t.steps) await t.onOpcode?.(s, st);
  }
  onFault(depth: number, error: string): void {
    for (const [, t] of this.tracers) t.onFault?.(depth, error);
  }
  onLog(l: LogEntry): void {
    for (const [, t] of this.tracers) t.onLog?.(l);
  }
  async onTxEnd(e: TxEnd, st: StateReader): Promise<void> {
    for (const [, t] of this.tracers) await t.onTxEnd?.(e, st);
  }
  result(): unknown {
    return Object.fromEntries([...this.tracers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([n, t]) => [n, t.result()]));
  }
}

/** TraceConfig as the RPC parsed it (plain data: it crosses to the worker). */
export interface TraceConfig {
  tracer?: string;
  tracerConfig?: unknown;
  logger: StructLoggerConfig;
  /** ms. */
  timeoutMs: number;
}

export const NATIVE_TRACERS = ['callTracer', 'flatCallTracer', 'prestateTracer', '4byteTracer', 'muxTracer', 'noopTracer'] as const;

function objectConfig(name: string, cfg: unknown): Record<string, unknown> {
  if (cfg === undefined || cfg === null) return {};
  if (typeof cfg !== 'object' || Array.isArray(cfg)) throw new TracerError(`json: cannot unmarshal ${Array.isArray(cfg) ? 'array' : typeof cfg} into Go value of type native.${name}Config`);
  return cfg as Record<string, unknown>;
}

function bool(o: Record<string, unknown>, k: string): boolean {
  const v = o[k];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new TracerError(`json: cannot unmarshal ${typeof v} into Go struct field .${k} of type bool`);
  return v;
}

/** What a JavaScript tracer runs with: the trace's deadline (ms since the epoch) and `db`'s reads. */
export interface TracerEnv {
  deadline?: number;
  sync?: SyncState;
}

/**
 * A tracer for `name` (undefined: the struct logger); any other name is JavaScript, as in geth
 * (js.ts). Throws TracerError (geth's words).
 */
export function createTracer(name: string | undefined, tracerConfig: unknown, logger: StructLoggerConfig, env: TracerEnv = {}): Tracer {
  if (name === undefined || name === '') return new StructLogger(logger);
  switch (name) {
    case 'callTracer': {
      const o = objectConfig('callTracer', tracerConfig);
      return new CallTracer({ onlyTopCall: bool(o, 'onlyTopCall'), withLog: bool(o, 'withLog') });
    }
    case 'flatCallTracer': {
      const o = objectConfig('flatCallTracer', tracerConfig);
      return new FlatCallTracer({ convertParityErrors: bool(o, 'convertParityErrors'), includePrecompiles: bool(o, 'includePrecompiles') });
    }
    case 'prestateTracer': {
      const o = objectConfig('prestateTracer', tracerConfig);
      return new PrestateTracer({ diffMode: bool(o, 'diffMode'), disableCode: bool(o, 'disableCode'), disableStorage: bool(o, 'disableStorage'), includeEmpty: bool(o, 'includeEmpty') });
    }
    case '4byteTracer':
      return new FourByteTracer();
    case 'noopTracer':
      return new NoopTracer();
    case 'muxTracer': {
      const o = objectConfig('muxTracer', tracerConfig);
      return new MuxTracer(Object.entries(o).map(([n, c]) => [n, createTracer(n, c, {}, env)]));
    }
    default:
      // geth's directory evaluates any other name as JavaScript (eth/tracers/dir.go New): a bare
      // unknown name fails as `ReferenceError: <name> is not defined`.
      return new JsTracer(name, tracerConfig, env.deadline ?? Date.now() + 5_000, env.sync);
  }
}
