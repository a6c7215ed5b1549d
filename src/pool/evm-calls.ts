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
 * Loads the call worker on every thread now (modules, LMDB, app, VM: seconds on a loaded machine),
 * so that the first eth_call does not spend its `evm-timeout` on it. Resolves when all answered.
 */
export async function warmEvmCalls(pool: PiscinaCryptoPool, setup: Job['setup']): Promise<void> {
  const answers = await Promise.all(Array.from({ length: pool.threads }, () => pool.runTask<Job, Answer>('evmCall', { setup, req: null })));
  for (const a of answers) if (!a.ok) throw new EvmCallPoolError(`evm call worker failed to load: ${a.internal ?? a.message}`);
}

export function poolEvmCalls(pool: PiscinaCryptoPool, setup: Job['setup']): (req: CallRequest) => Promise<CallValue> {
  return async (req) => {
    const a = await pool.runTask<Job, Answer>('evmCall', { setup, req });
    if (a.ok) return a.value;
    if (a.internal !== undefined) throw new EvmCallPoolError(`evm call worker failed: ${a.internal}`);
    throw new CallError(a.rpcCode ?? -32000, a.message ?? 'execution failed', a.data);
  };
}
