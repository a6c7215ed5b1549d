/**
 * The executor thread (src/state/executor-thread.ts): opens the node's LMDB environment, builds the
 * chain app, the evidence pool's writer and the indexers over it, and writes the blocks the main
 * thread sends, one at a time, with src/state/block-writer.ts's InlineBlockWriter (FinalizeBlock,
 * then the block's one write transaction).
 *
 * Signatures: this app has no worker pool. A block's signatures that the main thread's CheckTx
 * verified arrive as memo keys with the block (SignatureVerifier.addVerified); the rest (txs this
 * node never saw) are verified here, off the RPC thread.
 *
 * Errors: a block that fails is answered `failed` (nothing was written, the app reloaded); a
 * failure to start is answered `fatal`. Nothing is thrown across the boundary.
 */
// First: the main thread's CHAIND_CRYPTO for this thread (./crypto-setting.ts).
import { cryptoSettingError } from './crypto-setting.js';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { getCryptoBackend } from '../src/crypto/backend.js';
import { EvidencePool } from '../src/evidence/pool.js';
import type { LogFields, Logger } from '../src/log.js';
import { threadLogger as threadLoggerOf } from './thread-logger.js';
import { InlineBlockWriter, kvIndexHook, type InlineBatch, type WriteOutcome } from '../src/state/block-writer.js';
import {
  BATCH_IDLE_MS,
  createNodeApp,
  packWritten,
  stateFromWire,
  stateToWire,
  type WrittenBlock,
  type ExecutorWorkerData,
  type FromWorker,
  type ToWorker,
} from '../src/state/executor-thread.js';
import { BlockIndexer, TxIndexer } from '../src/indexer/indexer.js';
import { Storage } from '../src/store/storage.js';
import { decodeBlock } from '../src/types/codec.js';

const port = parentPort!;
const data = workerData as ExecutorWorkerData;
const send = (m: FromWorker) => port.postMessage(m);

/** A Logger whose lines the main thread writes (./thread-logger.ts). */
function threadLogger(module: string, context: LogFields): Logger {
  return threadLoggerOf(send, data.logLevels, module, context);
}

/** Opens the store and builds the app at once (while the main thread starts up), then waits for `init`. */
/**
 * This thread's nice value. On Linux setpriority(PRIO_PROCESS, 0) acts on the calling thread only
 * (nice is per thread there), so the main thread keeps its priority; raising one's own nice needs
 * no privilege. Elsewhere it would renice the whole process: left alone.
 */
function lowerPriority(nice: number, log: Logger): void {
  if (nice <= 0 || process.platform !== 'linux') return;
  try {
    os.setPriority(0, nice);
  } catch (e) {
    log.debug('could not lower the executor thread priority', { err: (e as Error).message });
  }
}

function main(): void {
  const log = threadLogger('executor', {});
  lowerPriority(data.nice ?? 0, log);
  let storage: Storage;
  let app: ReturnType<typeof createNodeApp>;
  try {
    if (cryptoSettingError !== null) throw new Error(cryptoSettingError);
    storage = Storage.open({ file: data.dbFile, noSync: data.noSync });
    app = createNodeApp(storage, data.app);
  } catch (e) {
    send({ type: 'fatal', message: (e as Error)?.stack ?? String(e) });
    return;
  }
  let writer: InlineBlockWriter | null = null;

  const init = async (m: Extract<ToWorker, { type: 'init' }>): Promise<void> => {
    const s = storage;
    // The main thread may have written since this thread opened the store (evidence on start-up).
    s.resetReadTxn();
    app.reload();
    const state = stateFromWire(m.state);
    if (m.initChain !== undefined) await app.initChain(m.initChain);
    else app.setConsensusParams(state.consensusParams);
    const evidence = new EvidencePool({
      store: s.evidence,
      chain: { loadBlockMeta: (h) => s.blocks.loadBlockMeta(h), loadValidators: (h) => s.state.loadValidators(h) },
      state,
      logger: threadLogger('evidence', {}),
    });
    const indexer = m.indexer ? kvIndexHook(new TxIndexer(s), new BlockIndexer(s), threadLogger('txindex', {})) : undefined;
    writer = new InlineBlockWriter({ storage: s, app, evidence, indexer });
  };

  const write = async (m: Extract<ToWorker, { type: 'write' }>): Promise<void> => {
    try {
      if (writer === null) throw new Error('executor thread not initialised');
      // A fresh snapshot: the block reads what the last commit wrote, whoever wrote it.
      storage.resetReadTxn();
      app.sigVerifier.addVerified(m.verified);
      app.evm?.keeper.addSenderHints(m.evmHints);
      const block = decodeBlock(m.blockBytes);
      const t0 = performance.now();
      const before = { ...app.sigVerifier.stats };
      const hb = { ...(app.evm?.keeper.hintStats ?? { hinted: 0, recovered: 0 }) };
      const { resp, newState } = await writer.writeWith(
        { state: stateFromWire(m.state), blockId: m.blockId, block, seenCommit: m.seenCommit, blockBytes: m.blockBytes },
        m.votes,
      );
      const { answer, transfer } = packWritten(resp, newState, m.pack);
      port.postMessage({ type: 'written', id: m.id, answer } satisfies FromWorker, transfer);
      const st = app.sigVerifier.stats;
      log.info('executed block', {
        height: block.header.height,
        txs: block.data.txs.length,
        ms: Math.round(performance.now() - t0),
        sigs_from_checktx: st.memoHits - before.memoHits,
        sigs_verified_here: st.syncVerified - before.syncVerified,
        ...(app.evm === undefined ? {} : { evm_senders_hinted: app.evm.keeper.hintStats.hinted - hb.hinted, evm_senders_recovered: app.evm.keeper.hintStats.recovered - hb.recovered }),
      });
    } catch (e) {
      const err = e as Error & { code?: unknown };
      log.error('block failed on the executor thread', { height: m.state.lastBlockHeight + 1n, err: err?.message ?? String(e) });
      send({ type: 'failed', id: m.id, message: err?.message ?? String(e), code: typeof err?.code === 'string' ? err.code : undefined });
    }
  };

  // Block sync's batch (src/state/block-writer.ts BlockBatch): its write transaction stays open
  // from the first `stage` to `commitBatch` / `abortBatch`; the messages in between are served.
  // The open part of the batch; the outcomes of parts committed by the idle timer before it.
  let batch: InlineBatch | null = null;
  let batchStart = 0;
  let committedParts: WriteOutcome[] = [];
  let idleTimer: NodeJS.Timeout | null = null;

  /** The idle timer: commits the open part (see BATCH_IDLE_MS). */
  const commitOpenPart = async (): Promise<void> => {
    const b = batch;
    if (b === null) return;
    batch = null;
    try {
      await b.commit();
      committedParts.push(...b.outcomes());
      log.debug('block sync batch committed while idle', { blocks: b.size });
    } catch (e) {
      log.error('block sync batch failed to commit on the executor thread', { err: (e as Error)?.message ?? String(e) });
    }
  };

  const stage = async (m: Extract<ToWorker, { type: 'stage' }>): Promise<void> => {
    let height: bigint | undefined;
    try {
      if (writer === null) throw new Error('executor thread not initialised');
      if (batch === null) {
        storage.resetReadTxn();
        batch = writer.beginBatch();
        batchStart = performance.now();
      }
      app.sigVerifier.addVerified(m.verified);
      app.evm?.keeper.addSenderHints(m.evmHints);
      const block = decodeBlock(m.blockBytes);
      height = block.header.height;
      // After the first block the state is the one the block before left (in this batch, or in a
      // part the idle timer committed).
      const prev = batch.outcomes().at(-1)?.newState ?? committedParts.at(-1)?.newState;
      const state = m.state !== undefined ? stateFromWire(m.state) : prev;
      if (state === undefined) throw new Error('block sync batch: no state for the block');
      await batch.add({ state, blockId: m.blockId, block, seenCommit: m.seenCommit, blockBytes: m.blockBytes }, m.votes);
      const out = batch.outcomes();
      send({ type: 'staged', id: m.id, state: stateToWire(out[out.length - 1]!.newState) });
      idleTimer = setTimeout(() => {
        idleTimer = null;
        queue = queue.then(commitOpenPart);
      }, BATCH_IDLE_MS);
    } catch (e) {
      // The batch dropped itself: nothing of it is written, the app reloaded.
      batch = null;
      const err = e as Error & { code?: unknown };
      log.error('block failed on the executor thread (block sync batch dropped)', { height, err: err?.message ?? String(e) });
      send({ type: 'failed', id: m.id, message: err?.message ?? String(e), code: typeof err?.code === 'string' ? err.code : undefined });
    }
  };

  const endBatch = async (m: Extract<ToWorker, { type: 'commitBatch' | 'abortBatch' }>): Promise<void> => {
    const b = batch;
    batch = null;
    try {
      const parts = committedParts;
      committedParts = [];
      const t0 = performance.now();
      let outs = parts;
      if (m.type === 'abortBatch') await b?.abort();
      else if (b !== null) {
        await b.commit();
        outs = [...parts, ...b.outcomes()];
      }
      const answers: WrittenBlock[] = [];
      const transfer: ArrayBuffer[] = [];
      for (const { resp, newState } of outs) {
        const packed = packWritten(resp, newState);
        answers.push(packed.answer);
        transfer.push(...packed.transfer);
      }
      port.postMessage({ type: 'batchWritten', id: m.id, answers } satisfies FromWorker, transfer);
      if (outs.length > 0) log.info(m.type === 'abortBatch' ? 'executed blocks (batch aborted after them)' : 'executed blocks', {
        from: outs[0]?.newState.lastBlockHeight,
        to: outs[outs.length - 1]?.newState.lastBlockHeight,
        ms: Math.round(performance.now() - batchStart),
        commit_ms: Math.round(performance.now() - t0),
      });
    } catch (e) {
      const err = e as Error & { code?: unknown };
      log.error('block sync batch failed on the executor thread', { err: err?.message ?? String(e) });
      send({ type: 'failed', id: m.id, message: err?.message ?? String(e), code: typeof err?.code === 'string' ? err.code : undefined });
    }
  };

  // One message at a time, in arrival order: a chain of promises.
  let queue: Promise<void> = Promise.resolve();
  port.on('message', (m: ToWorker) => {
    // Memo keys only: taken at once (before any block that follows them), and they leave an
    // open batch's idle timer alone.
    if (m.type === 'verified') return void app.sigVerifier.addVerified(m.verified);
    if (idleTimer !== null) clearTimeout(idleTimer);
    idleTimer = null;
    queue = queue.then(async () => {
      switch (m.type) {
        case 'init':
          try {
            await init(m);
            send({ type: 'ready', backend: getCryptoBackend().name });
          } catch (e) {
            send({ type: 'fatal', message: (e as Error)?.stack ?? String(e) });
          }
          return;
        case 'write':
          return write(m);
        case 'stage':
          return stage(m);
        case 'commitBatch':
        case 'abortBatch':
          return endBatch(m);
        case 'close':
          if (batch !== null) {
            await batch.abort();
            batch = null;
          }
          await storage.close();
          send({ type: 'closed' });
          port.close();
          return;
      }
    });
  });
}

main();
