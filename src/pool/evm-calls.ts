/**
 * eth_call, eth_estimateGas and eth_createAccessList on the Piscina pool's threads: the function
 * the EVM JSON-RPC takes as `deps.calls` (src/rpc/evm/deps.ts). Each request goes as one job to the
 * workers' `evmCall` export (workers/evm-call.worker.ts), which opens the node's LMDB and keeps a
 * warm EVM; the answer comes back as data and a geth error is thrown again here as CallError.
 */
import { CallError, type CallRequest, type CallValue } from '../app/modules/evm/calls.js';
import type { NodeAppSpec } from '../state/executor-thread.js';
import type { PiscinaCryptoPool } from './piscina.js';

/** workers/evm-call.worker.ts EvmCallJob / EvmCallAnswer, restated (src/ does not import workers/). */
interface Job {
  setup: { dbFile: string; app: NodeAppSpec };
  req: CallRequest | null;
  warmCalls?: number;
  reqs?: CallRequest[];
}
type Answer = { ok: true; value: CallValue; batch?: Answer[] } | { ok: false; rpcCode?: number; message?: string; data?: string; internal?: string };

/**
 * Calls per job at most. The calls that arrive while the threads are busy wait here and go
 * together in the next job: one structured-clone message each way for the lot, and the thread
 * runs them back to back instead of waiting on this thread between calls (with one call per job,
 * the worker sat idle for every round trip through a loaded RPC thread: its profile showed
 * postMessage at 15 % and most of its time idle while 64 calls waited). Small enough that a crypto
 * job queued behind a batch waits a few tens of ms at most.
 */
export const EVM_CALLS_PER_JOB = 32;

/**
 * Throw-away calls per thread once the threads have loaded (CallEngine.warmUp): enough for V8 to
 * have optimised the call path (EVM runCall, _executeCall, runInterpreter, the interpreter loop,
 * the engine), about 0.5 s of CPU a thread. Without it a new thread compiled while it served its
 * first few thousand calls: in a 4 s eth_call run from cold, TurboFan on V8's helper threads was
 * ~40 % of their CPU, a third of the process's CPU per call. They run in jobs of
 * EVM_WARM_SLICE, and only while no call waits and a thread is free: a real call never queues
 * behind more than one slice (under load the first real calls warm the threads anyway).
 */
export const EVM_WARM_CALLS = 600;
export const EVM_WARM_SLICE = 50;

export class EvmCallPoolError extends Error {
  override readonly name = 'EvmCallPoolError';
  readonly code = 'EVM_CALL_WORKER_ERROR';
}

/**
 * Loads the call worker on every thread (modules, LMDB, app, VM: about 2 s of CPU a thread, more
 * on a loaded machine). Resolves when all answered.
 */
export async function warmEvmCalls(pool: PiscinaCryptoPool, setup: Job['setup']): Promise<void> {
  const answers = await Promise.all(Array.from({ length: pool.threads }, () => pool.runTask<Job, Answer>('evmCall', { setup, req: null })));
  for (const a of answers) if (!a.ok) throw new EvmCallPoolError(`evm call worker failed to load: ${a.internal ?? a.message}`);
}

export interface PoolEvmCalls {
  /** Starts loading the workers (once); the node calls it on the first EVM JSON-RPC call. */
  warm(): void;
  /**
   * `deps.calls`: the request on the pool once every thread has loaded, else undefined (the
   * caller runs it inline), so that no call waits for the loading or spends its `evm-timeout` on
   * it. A pool that failed to load leaves every call inline.
   */
  calls(req: CallRequest): Promise<CallValue> | undefined;
  /** Starts loading if it has not, and resolves true once the pool takes calls (false: it failed). */
  whenReady(): Promise<boolean>;
}

export function poolEvmCalls(pool: PiscinaCryptoPool, setup: Job['setup'], onLoadError?: (e: Error) => void): PoolEvmCalls {
  let state: 'cold' | 'loading' | 'ready' | 'failed' = 'cold';
  let loaded: Promise<boolean> | undefined;
  const warm = () => {
    if (state !== 'cold') return;
    state = 'loading';
    loaded = warmEvmCalls(pool, setup).then(
      () => {
        state = 'ready';
        warmLeft = EVM_WARM_CALLS * pool.threads;
        dispatch();
        return true;
      },
      (e: unknown) => {
        state = 'failed';
        onLoadError?.(e as Error);
        return false;
      },
    );
  };
  const settle = (a: Answer): CallValue => {
    if (a.ok) return a.value;
    if (a.internal !== undefined) throw new EvmCallPoolError(`evm call worker failed: ${a.internal}`);
    throw new CallError(a.rpcCode ?? -32000, a.message ?? 'execution failed', a.data);
  };
  // Calls waiting for a thread, and jobs in flight (at most one per thread).
  let waiting: { req: CallRequest; resolve: (v: CallValue) => void; reject: (e: unknown) => void }[] = [];
  let inFlight = 0;
  // Warm-up calls still to run (EVM_WARM_CALLS), a slice at a time while the threads are idle.
  let warmLeft = 0;
  const warmSlice = (): void => {
    if (warmLeft <= 0 || waiting.length > 0 || inFlight >= pool.threads) return;
    const n = Math.min(EVM_WARM_SLICE, warmLeft);
    warmLeft -= n;
    inFlight++;
    // A failure is only a colder start (the threads loaded); the calls' own jobs report real ones.
    void pool
      .runTask<Job, Answer>('evmCall', { setup, req: null, warmCalls: n })
      .catch(() => undefined)
      .then(() => {
        inFlight--;
        dispatch();
      });
  };
  const dispatch = (): void => {
    while (waiting.length > 0 && inFlight < pool.threads) {
      const part = waiting.length <= EVM_CALLS_PER_JOB ? waiting : waiting.slice(0, EVM_CALLS_PER_JOB);
      waiting = part === waiting ? [] : waiting.slice(EVM_CALLS_PER_JOB);
      inFlight++;
      const job: Job = part.length === 1 ? { setup, req: part[0]!.req } : { setup, req: null, reqs: part.map((w) => w.req) };
      pool.runTask<Job, Answer>('evmCall', job).then(
        (a) => {
          inFlight--;
          dispatch();
          if (part.length === 1) {
            try {
              part[0]!.resolve(settle(a));
            } catch (e) {
              part[0]!.reject(e);
            }
            return;
          }
          const batch = a.ok ? a.batch : undefined;
          for (let i = 0; i < part.length; i++) {
            const one = batch?.[i] ?? (a.ok ? { ok: false as const, internal: 'no answer in the batch' } : a);
            try {
              part[i]!.resolve(settle(one));
            } catch (e) {
              part[i]!.reject(e);
            }
          }
        },
        (e: unknown) => {
          inFlight--;
          dispatch();
          for (const w of part) w.reject(e);
        },
      );
    }
    warmSlice();
  };
  const run = (req: CallRequest): Promise<CallValue> => {
    // A debug trace may carry the port its result streams through (trace.ts TraceSpec.stream):
    // a port is transferred with its job, so such a trace goes alone.
    const port = req.trace?.stream;
    if (port !== undefined) return pool.runTask<Job, Answer>('evmCall', { setup, req }, [port]).then(settle);
    return new Promise<CallValue>((resolve, reject) => {
      waiting.push({ req, resolve, reject });
      dispatch();
    });
  };
  return {
    warm,
    calls: (req) => {
      if (state === 'ready') return run(req);
      warm();
      return undefined;
    },
    whenReady: () => {
      warm();
      return loaded!;
    },
  };
}
