/**
 * The debug namespace's tracing methods (ethereum/go-ethereum:eth/tracers/api.go):
 * debug_traceTransaction, debug_traceCall, debug_traceBlockByNumber, debug_traceBlockByHash,
 * debug_traceBlock, debug_intermediateRoots.
 * Arguments are parsed here, on the RPC thread; the trace runs where eth_call runs (the EVM call
 * workers, src/app/modules/evm/trace.ts) over the committed state after the block's parent, the
 * block's earlier txs replayed first (its EVM txs; for a block with Cosmos txs too, all of them
 * through BaseApp: trace.ts). The result comes back as JSON text and goes into the
 * response as it is (RawJson).
 *
 * TraceConfig: `tracer` (a native tracer's name; none: the struct logger), `tracerConfig`,
 * `timeout` (a Go duration, default 5s), the struct logger's disableStack, disableStorage,
 * enableMemory, enableReturnData, limit; TraceCallConfig adds stateOverrides and blockOverrides.
 * Errors as geth words them: `genesis is not traceable`, `transaction not found`,
 * `block #N not found`, `block 0x… not found`, `tracer X not found`-style lookup errors,
 * `execution timeout`, `time: invalid duration "x"`.
 */
import { RLP } from '@ethereumjs/rlp';
import { CallError, type CallRequest } from '../../app/modules/evm/calls.js';
import type { TraceSpec, TraceValue } from '../../app/modules/evm/trace.js';
import { RawJson, type TraceConfig } from '../../evm/tracers/index.js';
import { partsSource, portSource, STREAM_MIN_CHARS, type StreamScope } from '../../evm/tracers/raw-json.js';
import { MessageChannel } from 'node:worker_threads';
import { GethRpcError, gethMethod } from '../jsonrpc/geth.js';
import type { Route } from '../jsonrpc/methods.js';
import { callTime, inlineEngine, parseBlockOverrides, parseCallArgs, parseStateOverride } from './call.js';
import type { EvmRpcDeps } from './deps.js';
import { arg, argError, gethError, hex, parseBlockRef } from './format.js';
import { stateHeight } from './eth.js';
import { gasLimitOf, heightByBlockHash, loadBlock, type LoadedBlock } from './view.js';

/** geth's default per-tx trace timeout (eth/tracers/api.go defaultTraceTimeout). */
export const DEFAULT_TRACE_TIMEOUT_MS = 5_000;

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration (time/format.go), in milliseconds; its error text when it does not parse. */
export function parseGoDuration(orig: string): number {
  const q = JSON.stringify(orig);
  const invalid = () => new Error(`time: invalid duration ${q}`);
  let s = orig;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') throw invalid();
  let total = 0;
  while (s !== '') {
    if (!(s[0] === '.' || (s[0]! >= '0' && s[0]! <= '9'))) throw invalid();
    const num = /^(\d*)(\.(\d*))?/.exec(s)!;
    if ((num[1] ?? '') === '' && (num[3] ?? '') === '') throw invalid();
    s = s.slice(num[0].length);
    let i = 0;
    while (i < s.length && s[i] !== '.' && !(s[i]! >= '0' && s[i]! <= '9')) i++;
    const unit = s.slice(0, i);
    if (unit === '') throw new Error(`time: missing unit in duration ${q}`);
    const ms = UNITS[unit];
    if (ms === undefined) throw new Error(`time: unknown unit ${JSON.stringify(unit)} in duration ${q}`);
    total += Number(`${num[1] || '0'}.${num[3] || '0'}`) * ms;
    s = s.slice(i);
  }
  return neg ? -total : total;
}

function bool(i: number, o: Record<string, unknown>, k: string): boolean {
  const v = o[k];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw argError(i, `json: cannot unmarshal ${typeof v} into Go struct field TraceConfig.${k} of type bool`);
  return v;
}

/** TraceConfig / TraceCallConfig (eth/tracers/api.go), as plain data for the worker. */
export function parseTraceConfig(i: number, v: unknown): TraceConfig & { raw: Record<string, unknown> } {
  if (v === undefined || v === null) return { logger: {}, timeoutMs: DEFAULT_TRACE_TIMEOUT_MS, raw: {} };
  if (typeof v !== 'object' || Array.isArray(v)) throw argError(i, 'json: cannot unmarshal non-object into Go value of type tracers.TraceConfig');
  const o = v as Record<string, unknown>;
  if (o.tracer !== undefined && o.tracer !== null && typeof o.tracer !== 'string') throw argError(i, `json: cannot unmarshal ${typeof o.tracer} into Go struct field TraceConfig.tracer of type string`);
  if (o.timeout !== undefined && o.timeout !== null && typeof o.timeout !== 'string') throw argError(i, `json: cannot unmarshal ${typeof o.timeout} into Go struct field TraceConfig.timeout of type string`);
  let limit = 0;
  if (o.limit !== undefined && o.limit !== null) {
    if (typeof o.limit !== 'number' || !Number.isInteger(o.limit)) throw argError(i, `json: cannot unmarshal ${typeof o.limit} into Go struct field TraceConfig.limit of type int`);
    limit = o.limit;
  }
  let timeoutMs = DEFAULT_TRACE_TIMEOUT_MS;
  if (typeof o.timeout === 'string') {
    try {
      timeoutMs = parseGoDuration(o.timeout);
    } catch (e) {
      throw gethError((e as Error).message);
    }
  }
  const tracer = typeof o.tracer === 'string' ? o.tracer : undefined;
  return {
    ...(tracer !== undefined ? { tracer } : {}),
    ...(o.tracerConfig !== undefined && o.tracerConfig !== null ? { tracerConfig: o.tracerConfig } : {}),
    logger: {
      disableStack: bool(i, o, 'disableStack'),
      disableStorage: bool(i, o, 'disableStorage'),
      enableMemory: bool(i, o, 'enableMemory'),
      enableReturnData: bool(i, o, 'enableReturnData'),
      limit,
    },
    // geth: a timeout that has passed stops the trace at once.
    timeoutMs: timeoutMs <= 0 ? 1e-9 : timeoutMs,
    raw: o,
  };
}

/** The gas of a call without `gas`: `[json-rpc] gas-cap`, or the block gas limit. */
function gasCap(deps: EvmRpcDeps): bigint {
  const limit = gasLimitOf(deps);
  return deps.gasCap > 0n && deps.gasCap < limit ? deps.gasCap : limit;
}

/** The block's EVM txs (raw envelopes) in execution order. */
function blockRawTxs(deps: EvmRpcDeps, b: LoadedBlock): Uint8Array[] {
  const receipts = deps.keeper.blockReceipts(b.height);
  if (receipts.length === 0) return [];
  const byComet = new Map<string, Uint8Array>();
  for (const raw of b.block.data.txs) byComet.set(hex(deps.keeper.crypto.sha256(raw)), raw);
  const out: Uint8Array[] = [];
  for (const r of receipts) {
    const raw = byComet.get(hex(r.cometHash));
    if (raw === undefined) throw gethError(`transaction ${hex(r.ethHash)} of block ${b.height} is missing from the block store`);
    out.push(raw);
  }
  return out;
}

/**
 * For a block that holds Cosmos txs too: its txs in block order and where each EVM tx of `txs` is
 * among them, so that the txs before a traced one are all replayed (trace.ts traceReplayed).
 * Nothing for a block of EVM txs only.
 */
function mixedBlock(b: LoadedBlock, evmTxs: Uint8Array[], txs: Uint8Array[]): Pick<TraceSpec, 'blockTxs' | 'positions' | 'timeNs'> {
  const all = b.block.data.txs;
  if (all.length === evmTxs.length) return {};
  const at = new Map<string, number>();
  all.forEach((raw, i) => {
    const k = hex(raw);
    if (!at.has(k)) at.set(k, i);
  });
  return { blockTxs: all, positions: txs.map((raw) => at.get(hex(raw))!), timeNs: b.block.header.time };
}

/** The parent state of `height` must be kept (geth: historical state unavailable). */
function parentState(deps: EvmRpcDeps, height: bigint): bigint {
  if (height <= 0n) throw gethError('genesis is not traceable');
  const parent = height - 1n;
  if (parent < 1n) throw gethError('genesis is not traceable');
  if (parent !== deps.lastHeight() && deps.resolveQueryHeight !== undefined) {
    try {
      deps.resolveQueryHeight(parent);
    } catch {
      throw gethError('required historical state unavailable (reexec=128)');
    }
  }
  return parent;
}

function blockEnv(deps: EvmRpcDeps, b: LoadedBlock): TraceSpec['block'] {
  return {
    number: b.height,
    time: b.block.header.time / 1_000_000_000n,
    gasLimit: gasLimitOf(deps),
    ...(b.header !== undefined ? { hash: b.header.hash } : {}),
  };
}

/** How long a trace waits for the pool's threads to load before it runs on this thread. */
const POOL_WAIT_MS = 30_000;

/**
 * The request on the pool. A trace can take seconds: while the pool's threads are still loading
 * (they load on the first EVM JSON-RPC call), it waits for them rather than run on the RPC thread;
 * without a pool (CHAIND_POOL=single), or one that does not load in time, it runs here.
 */
async function onPool(deps: EvmRpcDeps, req: CallRequest): Promise<unknown> {
  if (deps.calls === undefined) return inlineEngine(deps).handle(req);
  const until = Date.now() + POOL_WAIT_MS;
  for (;;) {
    const p = deps.calls(req);
    if (p !== undefined) return p;
    if (Date.now() > until) return inlineEngine(deps).handle(req);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The trace, as JSON text in parts. With the HTTP server's stream scope (`scope`: the call
 * context's, for a single request, not a batch nor a websocket frame), a large result is streamed
 * to the socket: from a pool thread through a MessageChannel whose far end travels in the job, or
 * from the parts in hand on this thread; the envelope holds a placeholder the server writes the
 * chunks in place of.
 */
async function run(deps: EvmRpcDeps, height: bigint, spec: TraceSpec, time: bigint, scope: StreamScope | undefined): Promise<RawJson> {
  const channel = scope !== undefined && deps.calls !== undefined ? new MessageChannel() : undefined;
  const traced: TraceSpec = channel === undefined ? spec : { ...spec, stream: channel.port2 };
  const req: CallRequest = { kind: 'trace', height, latest: deps.lastHeight(), time, gasLimit: gasLimitOf(deps), gasCap: gasCap(deps), args: { value: 0n, data: new Uint8Array(0) }, trace: traced };
  const source = channel === undefined ? undefined : portSource(channel.port1);
  try {
    const job = onPool(deps, req) as Promise<TraceValue>;
    // A streamed result starts arriving while the job still runs (it ends with the stream).
    const first = source === undefined ? await job : await Promise.race([job, source.started.then(() => 'streaming' as const)]);
    if (first === 'streaming' || first.streamed === true) {
      job.catch(() => source!.cancel());
      return scope!.adopt(source!);
    }
    const v = first;
    source?.cancel();
    if (scope !== undefined && v.traceParts.length > 1 && v.traceParts.reduce((n, p) => n + p.length, 0) >= STREAM_MIN_CHARS) return scope.adopt(partsSource(v.traceParts));
    return new RawJson(v.traceParts);
  } catch (e) {
    source?.cancel();
    if (e instanceof CallError || (e as { code?: unknown })?.code === 'EVM_CALL_ERROR') {
      const c = e as CallError;
      throw new GethRpcError(c.rpcCode, c.message, c.data);
    }
    throw e;
  }
}

function config(cfg: TraceConfig & { raw?: unknown }): TraceConfig {
  const { raw: _raw, ...rest } = cfg;
  return rest;
}

async function traceBlock(deps: EvmRpcDeps, b: LoadedBlock, cfgArg: unknown, scope: StreamScope | undefined): Promise<RawJson> {
  const cfg = parseTraceConfig(1, cfgArg);
  const parent = parentState(deps, b.height);
  const txs = blockRawTxs(deps, b);
  if (txs.length === 0) return new RawJson('[]');
  return run(deps, parent, { mode: 'block', block: blockEnv(deps, b), txs, ...mixedBlock(b, txs, txs), config: config(cfg) }, b.block.header.time / 1_000_000_000n, scope);
}

export function debugTraceMethods(deps: EvmRpcDeps): Route[] {
  const cfgParam = { name: 'config', type: 'any', optional: true } as const;
  return [
    gethMethod({
      name: 'debug_traceTransaction',
      params: [{ name: 'hash', type: 'hash' }, cfgParam],
      handler: async ({ hash, config: c }, ctx) => {
        const cfg = parseTraceConfig(1, c);
        const r = deps.keeper.receiptByHash(hash);
        if (r === undefined || r.height > deps.lastHeight()) throw gethError('transaction not found');
        const b = loadBlock(deps, r.height);
        if (b === undefined) throw gethError('transaction not found');
        const parent = parentState(deps, r.height);
        const all = blockRawTxs(deps, b);
        const txs = all.slice(0, r.index + 1);
        return run(deps, parent, { mode: 'tx', block: blockEnv(deps, b), txs, target: r.index, ...mixedBlock(b, all, txs), config: config(cfg) }, b.block.header.time / 1_000_000_000n, ctx.stream);
      },
    }),
    gethMethod({
      name: 'debug_traceCall',
      params: [{ name: 'args', type: 'any' }, { name: 'block', type: 'any' }, cfgParam],
      handler: async ({ args, block, config: c }, ctx) => {
        const cfg = parseTraceConfig(2, c);
        const ref = parseBlockRef(1, block);
        if ('tag' in ref && ref.tag === 'pending') throw gethError('tracing on top of pending is not supported');
        const a = {
          ...parseCallArgs(0, args),
          overrides: parseStateOverride(2, cfg.raw.stateOverrides),
          blockOverrides: parseBlockOverrides(2, cfg.raw.blockOverrides),
        };
        let h: bigint;
        try {
          h = stateHeight(deps, ref);
        } catch (e) {
          if ('number' in ref) throw gethError(`block #${ref.number} not found`);
          if ('hash' in ref) throw gethError(`block ${hex(ref.hash)} not found`);
          throw e;
        }
        const b = loadBlock(deps, h);
        if (b === undefined) throw gethError(`block #${h} not found`);
        const env = blockEnv(deps, b);
        const bo = a.blockOverrides;
        const blockSpec: TraceSpec['block'] = {
          number: bo?.number ?? env.number,
          time: bo?.time ?? env.time,
          gasLimit: bo?.gasLimit ?? env.gasLimit,
        };
        return run(deps, h, { mode: 'call', block: blockSpec, txs: [], call: a, config: config(cfg) }, callTime(deps, h), ctx.stream);
      },
    }),
    gethMethod({
      name: 'debug_traceBlockByNumber',
      params: [{ name: 'number', type: 'any' }, cfgParam],
      handler: async ({ number, config: c }, ctx) => {
        const n = arg<bigint | string>(0, 'block', number);
        if (n === 'pending') throw gethError('tracing on top of pending is not supported');
        const h = typeof n === 'bigint' ? n : n === 'earliest' ? 0n : deps.lastHeight();
        if (h === 0n) throw gethError('genesis is not traceable');
        const b = loadBlock(deps, h);
        if (b === undefined) throw gethError(`block #${h} not found`);
        return traceBlock(deps, b, c, ctx.stream);
      },
    }),
    gethMethod({
      // eth/tracers/api.go TraceBlock: a block as RLP, traced over the state of its parent.
      name: 'debug_traceBlock',
      params: [{ name: 'blob', type: 'data' }, cfgParam],
      handler: async ({ blob, config: c }, ctx) => {
        const cfg = parseTraceConfig(1, c);
        let header: Uint8Array[];
        let txList: (Uint8Array | Uint8Array[])[];
        try {
          const d = RLP.decode(blob) as unknown as [Uint8Array[], (Uint8Array | Uint8Array[])[]];
          if (!Array.isArray(d) || !Array.isArray(d[0]) || !Array.isArray(d[1]) || d[0].length < 15) throw new Error('rlp: too few elements for types.Header');
          [header, txList] = d;
        } catch (e) {
          throw gethError(`could not decode block: ${(e as Error).message}`);
        }
        const num = (b: Uint8Array) => (b.length === 0 ? 0n : BigInt(hex(b)));
        const number = num(header[8]!);
        if (number === 0n) throw gethError('genesis is not traceable');
        const parentHash = header[0]!;
        const parent = heightByBlockHash(deps, parentHash);
        if (parent === null) throw gethError(`parent ${hex(parentHash)} not found`);
        if (parent !== deps.lastHeight() && deps.resolveQueryHeight !== undefined) {
          try {
            deps.resolveQueryHeight(parent);
          } catch {
            throw gethError('required historical state unavailable (reexec=128)');
          }
        }
        // Typed txs are byte strings in the block's list, legacy ones RLP lists.
        const txs = txList.map((x) => (x instanceof Uint8Array ? x : RLP.encode(x)));
        if (txs.length === 0) return new RawJson('[]');
        const time = num(header[11]!);
        const spec: TraceSpec = { mode: 'block', block: { number, time, gasLimit: num(header[9]!) }, txs, config: config(cfg) };
        return run(deps, parent, spec, time, ctx.stream);
      },
    }),
    gethMethod({
      // eth/tracers/api.go IntermediateRoots: the state root after each EVM tx of the block, over
      // its parent's state. The config is accepted and unused (geth reads only its reexec).
      name: 'debug_intermediateRoots',
      params: [{ name: 'hash', type: 'hash' }, cfgParam],
      handler: async ({ hash, config: c }, ctx) => {
        parseTraceConfig(1, c);
        const h = heightByBlockHash(deps, hash);
        const b = h === null ? undefined : loadBlock(deps, h);
        if (b === undefined) throw gethError(`block ${hex(hash)} not found`);
        const parent = parentState(deps, b.height);
        const parentRoot = deps.keeper.stateRootAt(parent);
        if (parentRoot === undefined) throw gethError('required historical state unavailable (reexec=128)');
        const txs = blockRawTxs(deps, b);
        if (txs.length === 0) return new RawJson('[]');
        const spec: TraceSpec = { mode: 'roots', block: blockEnv(deps, b), txs, ...mixedBlock(b, txs, txs), parentRoot, config: { logger: {}, timeoutMs: DEFAULT_TRACE_TIMEOUT_MS } };
        return run(deps, parent, spec, b.block.header.time / 1_000_000_000n, ctx.stream);
      },
    }),
    gethMethod({
      name: 'debug_traceBlockByHash',
      params: [{ name: 'hash', type: 'hash' }, cfgParam],
      handler: async ({ hash, config: c }, ctx) => {
        const h = heightByBlockHash(deps, hash);
        const b = h === null ? undefined : loadBlock(deps, h);
        if (b === undefined) throw gethError(`block ${hex(hash)} not found`);
        return traceBlock(deps, b, c, ctx.stream);
      },
    }),
  ];
}
