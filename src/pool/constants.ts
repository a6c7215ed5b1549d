/**
 * Batching and sizing constants of the crypto pool, with the costs they are derived from.
 *
 * Costs (paulmillr/noble-secp256k1:README.md; 2-core x86-64, Node 20; re-measured by bench/crypto.bench.ts):
 *   Piscina task overhead      ~17 µs per task when tasks are pipelined, ~32 µs awaited one by one
 *   ed25519 verify             ~80 µs (node:crypto, cached KeyObject)
 *   secp256k1 verify           ~42 µs native (libsecp256k1), ~2,100 µs JS (@noble/secp256k1)
 *   secp256k1 recover          ~44 µs native, ~1,900 µs JS
 */

/**
 * Items per job. At 128, the 17 µs task overhead is 0.17% of an ed25519 job (128 × 80 µs ≈ 10 ms)
 * and 0.3% of a native secp256k1 job (≈ 5.4 ms), so larger jobs gain nothing measurable, while a
 * 10 ms job still lets a second job start on the other thread soon and keeps one slow batch from
 * holding a block's signatures hostage. (lodestar uses the same 128 for BLS sets.)
 */
export const MAX_ITEMS_PER_JOB = 128;

/**
 * Calls with fewer items than this are buffered and merged with other calls; larger calls are
 * already worth a job of their own (32 × 80 µs = 2.6 ms of work against 17 µs of overhead).
 */
export const MIN_ITEMS_TO_SKIP_BUFFER = 32;

/**
 * Longest a buffered call waits for company before its job is sent. A lone ed25519 verify sent
 * as its own task pays ~32 µs of round trip for 80 µs of work (40%); merging calls that arrive
 * within 5 ms removes most of that under load, and 5 ms is noise next to a 1 s block time or an
 * RPC round trip. Under real load the buffer fills to MAX_ITEMS_PER_JOB before the timer fires.
 */
export const MAX_BUFFER_WAIT_MS = 5;

/**
 * Jobs allowed to wait or run before new calls are refused with POOL_QUEUE_FULL. 256 full jobs
 * are 256 × 128 × 80 µs ≈ 2.6 s of ed25519 work on one worker (~1.3 s on two): about one block
 * time of backlog. Past that, queuing more only adds latency and memory (each job holds its
 * packed bytes), so the RPC layer should answer "busy" instead. (lodestar refuses at 512 jobs.)
 */
export const MAX_QUEUED_JOBS = 256;

/**
 * Idle time before Piscina may stop a worker. The pool is fixed-size (minThreads = maxThreads),
 * so this only matters if someone lowers minThreads; Piscina's default of 0 would tear a worker
 * down the moment it idles and pay ~40 ms to respawn it and reload the addon on the next burst.
 */
export const IDLE_TIMEOUT_MS = 60_000;
