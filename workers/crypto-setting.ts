/**
 * Applies the main thread's CHAIND_CRYPTO setting (src/config/env.ts reads it there) to this worker
 * thread's process-wide backend (src/crypto/backend.ts getCryptoBackend), from `workerData.crypto`.
 *
 * A worker thread starts with its own copy of src/crypto/backend.ts, whose setting is `auto`: without
 * this, code on the thread that hashes through getCryptoBackend() (the executor's app: state roots,
 * tx hashes, signature checks; the pool's eth_call engine) ran native while the main thread ran
 * CHAIND_CRYPTO=js. Import it FIRST in a worker's entry module: ES modules evaluate their imports in
 * order, and some modules hash at load (constant topics and code hashes), which fixes the choice.
 *
 * Never throws (nothing may cross the thread boundary as an exception): a bad setting is kept in
 * `cryptoSettingError` and the thread stays on `auto`; the pool's worker reports it with each job.
 */
import { workerData } from 'node:worker_threads';
import { parseCryptoSetting, setCryptoBackendSetting } from '../src/crypto/backend.js';

export let cryptoSettingError: string | null = null;
try {
  const raw = (workerData as { crypto?: unknown } | null | undefined)?.crypto;
  setCryptoBackendSetting(parseCryptoSetting(typeof raw === 'string' ? raw : undefined));
} catch (e) {
  cryptoSettingError = e instanceof Error ? e.message : String(e);
}
