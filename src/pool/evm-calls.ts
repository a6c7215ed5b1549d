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
}
type Answer = { ok: true; value: CallValue } | { ok: false; rpcCode?: number; message?: string; data?: string; internal?: string };

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
        return true;
      },
      (e: unknown) => {
        state = 'failed';
        onLoadError?.(e as Error);
        return false;
      },
    );
  };
  const run = async (req: CallRequest): Promise<CallValue> => {
    // A debug trace may carry the port its result streams through (trace.ts TraceSpec.stream).
    const port = req.trace?.stream;
    const a = await pool.runTask<Job, Answer>('evmCall', { setup, req }, port === undefined ? undefined : [port]);
    if (a.ok) return a.value;
    if (a.internal !== undefined) throw new EvmCallPoolError(`evm call worker failed: ${a.internal}`);
    throw new CallError(a.rpcCode ?? -32000, a.message ?? 'execution failed', a.data);
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
