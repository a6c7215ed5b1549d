/**
 * The EVM call worker: eth_call, eth_estimateGas and eth_createAccessList on a Piscina thread
 * (src/pool/evm-calls.ts sends them; workers/crypto.worker.ts exports `evmCall`, which loads this
 * module on first use, so the pool's threads serve both kinds of job).
 *
 * On its first job the thread opens the node's LMDB environment (lmdb-js shares one environment
 * per file between the threads of a process, as the executor thread does) and builds the chain app
 * over it, read-only in use: only queryContext and the EVM keeper's reads are touched. It keeps
 * ONE warm CallEngine (src/app/modules/evm/calls.ts). When the RPC thread reports a newer latest
 * height than this thread has seen, it renews its LMDB read snapshot and the app's committed view
 * before it binds the height; the engine then drops its caches.
 *
 * Nothing is thrown across the boundary: a geth error comes back as data (CallError's fields), any
 * other failure as `internal`.
 */
import type { NodeAppSpec } from '../src/state/executor-thread.js';
import type { CallRequest, CallValue } from '../src/app/modules/evm/calls.js';

/** What the RPC thread sends: where the store is and how to build the app, and the request. */
export interface EvmCallJob {
  setup: { dbFile: string; app: NodeAppSpec };
  /** null: only load (start-up warm-up: modules, LMDB, app, VM), answered with value ''. */
  req: CallRequest | null;
  /**
   * With req null, after loading: this many throw-away calls that get V8 to compile the call path
   * (CallEngine.warmUp). src/pool/evm-calls.ts sends them in slices once the threads have loaded,
   * only while no call waits (EVM_WARM_CALLS, EVM_WARM_SLICE).
   */
  warmCalls?: number;
  /**
   * Several requests in one job (src/pool/evm-calls.ts batches the calls that queued while the
   * thread was busy): answered as `batch`, one answer per request in order. One message each way
   * for the lot instead of one per call, and no idle round trip to the RPC thread between calls.
   */
  reqs?: CallRequest[];
}

export type EvmCallAnswer =
  | { ok: true; value: CallValue }
  | { ok: false; rpcCode: number; message: string; data?: string }
  | { ok: false; internal: string }
  | { ok: true; value: ''; batch: EvmCallAnswer[] };

interface Loaded {
  dbFile: string;
  handle(req: CallRequest): Promise<CallValue>;
  warmUp(calls: number): Promise<void>;
}

let loading: Promise<Loaded> | undefined;

async function load(setup: EvmCallJob['setup']): Promise<Loaded> {
  const [{ Storage }, { createNodeApp }, { CallEngine, appBlockReplay }] = await Promise.all([
    import('../src/store/storage.js'),
    import('../src/state/executor-thread.js'),
    import('../src/app/modules/evm/calls.js'),
  ]);
  const storage = Storage.open({ file: setup.dbFile });
  const app = createNodeApp(storage, setup.app);
  const evm = app.evm;
  if (!evm) throw new Error('the chain app has no EVM module');
  const engine = new CallEngine({ keeper: evm.keeper, queryContext: (h) => app.queryContext(h), replayBlock: appBlockReplay(app) });
  return {
    dbFile: setup.dbFile,
    // Start-up: the VM built; with `calls`, the call path compiled by V8 on throw-away calls
    // (CallEngine.warmUp) over the latest committed state.
    warmUp: (calls) => {
      if (calls === 0) return engine.warmUp();
      storage.resetReadTxn();
      app.reload();
      if (app.lastBlockHeight === 0n) return engine.warmUp();
      return engine.warmUp({ height: app.lastBlockHeight, latest: app.lastBlockHeight, time: 0n, calls });
    },
    handle: (req) => {
      if (req.latest > app.lastBlockHeight) {
        // The executor thread committed since: read from a fresh snapshot.
        storage.resetReadTxn();
        app.reload();
      }
      return engine.handle(req);
    },
  };
}

/** A failure as data (nothing is thrown across the boundary). */
function failed(e: unknown): EvmCallAnswer {
  const err = e as { code?: unknown; rpcCode?: unknown; message?: unknown; data?: unknown };
  if (err?.code === 'EVM_CALL_ERROR' && typeof err.rpcCode === 'number') {
    return { ok: false, rpcCode: err.rpcCode, message: String(err.message), ...(typeof err.data === 'string' ? { data: err.data } : {}) };
  }
  return { ok: false, internal: e instanceof Error ? (e.stack ?? e.message) : String(e) };
}

export default async function evmCallWorker(job: EvmCallJob): Promise<EvmCallAnswer> {
  try {
    loading ??= load(job.setup);
    const l = await loading.catch((e: unknown) => {
      loading = undefined; // a later job tries again
      throw e;
    });
    if (l.dbFile !== job.setup.dbFile) throw new Error(`evm call worker serves ${l.dbFile}, not ${job.setup.dbFile}`);
    if (job.reqs !== undefined) {
      const batch: EvmCallAnswer[] = [];
      for (const req of job.reqs) {
        try {
          batch.push({ ok: true, value: await l.handle(req) });
        } catch (e) {
          batch.push(failed(e));
        }
      }
      return { ok: true, value: '', batch };
    }
    if (job.req === null) {
      await l.warmUp(job.warmCalls ?? 0);
      return { ok: true, value: '' };
    }
    return { ok: true, value: await l.handle(job.req) };
  } catch (e) {
    return failed(e);
  }
}
