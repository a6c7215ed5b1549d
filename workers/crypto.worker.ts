/**
 * Piscina worker for the crypto pool (src/pool/piscina.ts). Loads the crypto backend once per
 * thread, then answers each job with per-item result codes and timestamps (src/pool/job.ts).
 *
 * It never throws across the thread boundary: if the backend cannot load (CHAIND_CRYPTO=native
 * without a built addon), every job is answered with `error` set, which the pool turns into a
 * typed POOL_WORKER_ERROR; a thrown exception would instead surface as an untyped Piscina error.
 */
// First: the main thread's CHAIND_CRYPTO for this thread's getCryptoBackend() (./crypto-setting.ts).
import { cryptoSettingError } from './crypto-setting.js';
import { getCryptoBackend, type CryptoBackend } from '../src/crypto/backend.js';
import { failedJobResult, nowMs, runCryptoJob, type CryptoJob, type CryptoJobResult } from '../src/pool/job.js';

let backend: CryptoBackend | null = null;
let loadError: string | null = null;
try {
  // The pool passes the main thread's setting (workerData.crypto, applied by ./crypto-setting.ts):
  // the jobs and the thread's other hashing (eth_call below) use the same backend.
  if (cryptoSettingError !== null) throw new Error(cryptoSettingError);
  backend = getCryptoBackend();
} catch (e) {
  loadError = e instanceof Error ? e.message : String(e);
}

export default function cryptoWorker(job: CryptoJob): CryptoJobResult {
  const start = nowMs();
  if (backend === null) return failedJobResult(typeof job?.n === 'number' ? job.n : 0, loadError ?? 'no crypto backend', start);
  try {
    return runCryptoJob(job, backend);
  } catch (e) {
    // runCryptoJob catches per item; this is the last guard for the boundary rule.
    return failedJobResult(typeof job?.n === 'number' ? job.n : 0, e instanceof Error ? e.message : String(e), start);
  }
}

/**
 * eth_call / eth_estimateGas / eth_createAccessList jobs on the same threads (src/pool/evm-calls.ts
 * runs them by this export's name): the EVM call worker loads on the first such job, so a pool that
 * only checks signatures never loads the EVM.
 */
let evmCallModule: Promise<typeof import('./evm-call.worker.js')> | undefined;
export async function evmCall(job: import('./evm-call.worker.js').EvmCallJob): Promise<import('./evm-call.worker.js').EvmCallAnswer> {
  evmCallModule ??= import('./evm-call.worker.js');
  return (await evmCallModule).default(job);
}
