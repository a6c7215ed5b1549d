/**
 * The executor thread (src/state/executor-thread.ts, workers/executor.worker.ts): a real worker
 * thread over a real LMDB environment writes blocks for the main thread's Executor; after each
 * write the main thread's views (block store height, app's committed view, stored state) show the
 * new height; a block the thread cannot write comes back to the caller as an error and nothing is
 * written; close() lets the thread go.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { RequestInitChain } from '../../src/abci/types.js';
import { getCryptoBackend } from '../../src/crypto/backend.js';
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import { EvidencePool } from '../../src/evidence/pool.js';
import { Executor, emptyCommit, makeBlock, type ExecutorMempool } from '../../src/state/execution.js';
import { createNodeApp, ExecutorThread, type NodeAppSpec } from '../../src/state/executor-thread.js';
import type { State } from '../../src/state/state.js';
import { pruningOptions } from '../../src/store/pruning.js';
import { Storage } from '../../src/store/storage.js';
import { nullLogger } from '../../src/log.js';
import type { Block, Commit } from '../../src/types/block.js';
import { blockIdOf } from '../../src/types/partset.js';
import { defaultConsensusParams } from '../../src/types/params.js';
import { ValidatorSet } from '../../src/types/validator_set.js';

const CHAIN_ID = 'exec-thread';
const key = Ed25519PrivKey.fromSeed(new Uint8Array(32).fill(7));
const vals = new ValidatorSet([{ pubKey: { type: 'ed25519', bytes: key.pubKey }, power: 10n }]);
const GENESIS_TIME = 1_700_000_000_000_000_000n;

function genesisState(): State {
  return {
    chainId: CHAIN_ID,
    initialHeight: 1n,
    lastBlockHeight: 0n,
    lastBlockId: { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } },
    lastBlockTime: GENESIS_TIME,
    validators: vals,
    nextValidators: vals.copyIncrementProposerPriority(1),
    lastValidators: new ValidatorSet([]),
    lastHeightValidatorsChanged: 1n,
    consensusParams: defaultConsensusParams(),
    lastHeightConsensusParamsChanged: 1n,
    lastResultsHash: new Uint8Array(0),
    appHash: new Uint8Array(0),
    appVersion: 0n,
  };
}

/** A commit for `block` (the writer stores it; signatures are consensus's business). */
function commitFor(block: Block): Commit {
  return { height: block.header.height, round: 0, blockId: blockIdOf(block).blockId, signatures: [] };
}

t.test('blocks are written on the executor thread and the main thread sees them', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  const file = path.join(dir, 'chaind.mdb');
  const storage = Storage.open({ file, noSync: true });
  const spec: NodeAppSpec = { pruning: pruningOptions('default'), upstreamNames: false, minGasPrices: [], appVersion: 0n, evm: { allowUnprotectedTxs: false } };
  const app = createNodeApp(storage, spec);
  const initChain: RequestInitChain = {
    time: GENESIS_TIME,
    chainId: CHAIN_ID,
    consensusParams: defaultConsensusParams(),
    validators: [{ pubKey: { type: 'ed25519', bytes: key.pubKey }, power: 10n }],
    appStateBytes: new Uint8Array(0),
    initialHeight: 1n,
  };
  await app.initChain(initChain);
  const state0 = genesisState();
  const evidence = new EvidencePool({
    store: storage.evidence,
    chain: { loadBlockMeta: (h) => storage.blocks.loadBlockMeta(h), loadValidators: (h) => storage.state.loadValidators(h) },
    state: state0,
  });
  const thread = new ExecutorThread({ dbFile: file, noSync: true, appSpec: spec, logger: nullLogger, nice: 7 });
  t.teardown(async () => {
    await thread.close();
    await storage.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await thread.init({ state: state0, initChain, indexer: true, storage, app, evidence });
  t.equal(thread.backend, getCryptoBackend().name, "the thread's app hashes with this thread's crypto backend (CHAIND_CRYPTO reaches it)");
  const startNice = process.platform === 'linux' ? Number(fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[16]) : NaN;
  if (startNice + 7 <= 19) {
    // Nice is per thread on Linux: the executor thread's is raised, this (the RPC) thread's is not.
    const nice = (tid: string) => {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    };
    const mine = nice(String(process.pid));
    const niced = fs.readdirSync('/proc/self/task').filter((tid) => nice(tid) === mine + 7);
    t.equal(niced.length, 1, 'one thread (the executor) runs at nice +7');
    t.equal(nice(String(process.pid)), mine, 'the main thread keeps its nice value');
  }

  const updates: { height: bigint; codes: number[] }[] = [];
  const mempool: ExecutorMempool = {
    reapMaxBytesMaxGas: () => [],
    lock: async () => {},
    unlock: () => {},
    update: async (height, _txs, results) => void updates.push({ height, codes: results.map((r) => r.code) }),
  };
  const exec = new Executor({ storage, app, mempool, evidence, writer: thread });

  const block1 = makeBlock(state0, 1n, GENESIS_TIME, emptyCommit(), vals.getByIndex(0).address, [], []);
  const id1 = blockIdOf(block1).blockId;
  const state1 = await exec.applyBlock(state0, id1, block1, commitFor(block1));
  t.equal(state1.lastBlockHeight, 1n);
  t.equal(storage.blocks.height(), 1n, 'the main block store sees height 1');
  t.equal(app.lastBlockHeight, 1n, 'the main app reloaded its committed view');
  t.same((await app.info()).lastBlockAppHash, state1.appHash, 'with the app hash the thread committed');
  t.equal(storage.state.load()?.lastBlockHeight, 1n, 'the state is stored');
  t.equal(evidence.state.lastBlockHeight, 1n, 'the evidence pool follows');
  t.same(updates, [{ height: 1n, codes: [] }]);

  await t.test('a block the thread cannot write throws back and writes nothing', async (t) => {
    // Height 1 again: the thread's app refuses FinalizeBlock (expected height 2).
    await t.rejects(exec.applyBlock(state0, id1, block1, commitFor(block1)), { code: 'EXECUTOR_BLOCK_FAILED', message: /finalizeBlock at height 1, expected 2/ });
    t.equal(storage.blocks.height(), 1n);
    t.equal(app.lastBlockHeight, 1n);
    t.equal(updates.length, 1, 'no mempool update for a failed block');
  });

  await t.test('the next block: tx results come back, the response decodes for events', async (t) => {
    const txs = [Uint8Array.of(1, 2, 3), Uint8Array.of(4, 5)];
    const block2 = makeBlock(state1, 2n, GENESIS_TIME + 1_000_000_000n, commitFor(block1), vals.getByIndex(0).address, txs, []);
    const id2 = blockIdOf(block2).blockId;
    // The executor takes the mempool lock in this hook: the main app must not have moved yet (its
    // check state reset before the lock would let CheckTx run against a state without the
    // mempool's txs), and the block must be committed by then.
    let seenInHook: bigint[] = [];
    const res = await thread.write({ state: state1, blockId: id2, block: block2, seenCommit: commitFor(block2) }, async () => {
      seenInHook = [app.lastBlockHeight, storage.blocks.height()];
    });
    t.same(seenInHook, [1n, 1n], 'the hook runs before the main views move to height 2');
    t.equal(res.newState.lastBlockHeight, 2n);
    t.equal(res.codes.length, 2);
    t.ok(Array.from(res.codes).every((c) => c !== 0), 'undecodable txs fail in the block');
    const resp = await res.response();
    t.equal(resp.txResults.length, 2);
    t.same(resp.txResults.map((r) => r.code), Array.from(res.codes));
    t.same(resp.appHash, res.newState.appHash);
    t.same(storage.state.loadFinalizeBlockResponse(2n)?.txResults.map((r) => r.code), Array.from(res.codes), "the response is stored");
    t.equal(storage.blocks.height(), 2n);
    t.same(storage.blocks.loadBlock(2n)?.data.txs, txs, 'the block is stored');
  });

  /** The next empty block on `state`, with the commit that decides it. */
  const next = (state: State, prevCommit: Commit) => {
    const h = state.lastBlockHeight + 1n;
    const block = makeBlock(state, h, state.lastBlockTime + 1_000_000_000n, prevCommit, vals.getByIndex(0).address, [], []);
    return { block, blockId: blockIdOf(block).blockId, commit: commitFor(block) };
  };
  /** What another reader sees on disk: the stored state's height. */
  const onDisk = () => {
    storage.resetReadTxn();
    return storage.state.load()?.lastBlockHeight;
  };
  let tip = { state: storage.state.load()!, commit: commitFor(storage.blocks.loadBlock(2n)!) };

  await t.test('block sync batch: several blocks in one transaction, seen by others only once committed', async (t) => {
    const batch = exec.beginBatch()!;
    t.ok(batch, 'the thread writer batches');
    let state = tip.state;
    let commit = tip.commit;
    for (let i = 0; i < 3; i++) {
      const b = next(state, commit);
      state = await batch.add(state, b.blockId, b.block, b.commit);
      commit = b.commit;
      t.equal(state.lastBlockHeight, 3n + BigInt(i), 'add answers the state after the block');
    }
    // The thread commits an idle batch by itself after BATCH_IDLE_MS; right after the adds it is
    // still open (a slow machine may have committed it: then the next check shows 5 already).
    const seen = onDisk();
    t.ok(seen === 2n || seen === 5n, `other readers see all of the batch or none of it (${seen})`);
    const states = await batch.commit();
    t.same(states.map((s) => s.lastBlockHeight), [3n, 4n, 5n]);
    t.equal(onDisk(), 5n);
    t.equal(storage.blocks.height(), 5n, 'the main block store sees the last height');
    t.equal(app.lastBlockHeight, 5n, 'the main app reloaded');
    t.same((await app.info()).lastBlockAppHash, states[2]!.appHash);
    t.same(updates.slice(-3).map((u) => u.height), [3n, 4n, 5n], 'one mempool update per block');
    for (const h of [3n, 4n, 5n]) t.equal(storage.blocks.loadBlock(h)?.header.height, h, `block ${h} stored`);
    tip = { state, commit };
  });

  await t.test('an aborted batch writes nothing (but what the thread had committed by itself)', async (t) => {
    const batch = exec.beginBatch()!;
    let state = tip.state;
    let commit = tip.commit;
    for (let i = 0; i < 2; i++) {
      const b = next(state, commit);
      state = await batch.add(state, b.blockId, b.block, b.commit);
      commit = b.commit;
    }
    const kept = await batch.abort();
    const h = 5n + BigInt(kept.length);
    t.equal(onDisk(), h, 'the disk has the kept blocks only');
    t.equal(storage.blocks.height(), h);
    t.equal(app.lastBlockHeight, h);
    t.equal(storage.blocks.loadBlock(h + 1n), null);
    tip = { state: storage.state.load()!, commit: commitFor(storage.blocks.loadBlock(h)!) };
  });

  await t.test("a main-thread write while a batch is open: the thread commits the idle batch, no deadlock", async (t) => {
    const scratch = storage.openNamedDb('scratch');
    const batch = exec.beginBatch()!;
    const b = next(tip.state, tip.commit);
    const state = await batch.add(tip.state, b.blockId, b.block, b.commit);
    // Blocks this thread until the executor thread's transaction ends: without the thread's idle
    // commit, nobody would ever end it.
    scratch.putSync(Uint8Array.of(1), Uint8Array.of(2));
    t.same(scratch.getBinary(Uint8Array.of(1)), Uint8Array.of(2));
    t.equal(onDisk(), state.lastBlockHeight, 'the batch was committed by the thread');
    const states = await batch.commit();
    t.same(states.map((s) => s.lastBlockHeight), [state.lastBlockHeight], 'commit answers the block the thread committed');
    t.equal(storage.blocks.height(), state.lastBlockHeight);
    t.equal(app.lastBlockHeight, state.lastBlockHeight);
  });

  await t.test('a block nobody listens to: the answer carries no response, a late reader gets the stored one', async (t) => {
    let asked = 0;
    thread.wantsResponse = () => {
      asked++;
      return false;
    };
    t.teardown(() => {
      thread.wantsResponse = () => true;
    });
    const state = storage.state.load()!;
    const h = state.lastBlockHeight + 1n;
    const txs = [Uint8Array.of(9, 9), Uint8Array.of(7)];
    const block = makeBlock(state, h, state.lastBlockTime + 1_000_000_000n, commitFor(storage.blocks.loadBlock(state.lastBlockHeight)!), vals.getByIndex(0).address, txs, []);
    const res = await thread.write({ state, blockId: blockIdOf(block).blockId, block, seenCommit: commitFor(block) });
    t.equal(asked, 1, 'asked once, as the block went to the thread');
    t.equal(res.codes.length, 2);
    const resp = await res.response();
    t.same(resp, storage.state.loadFinalizeBlockResponse(h), 'the stored response');
    t.same(resp.txResults.map((r) => r.code), Array.from(res.codes));
    t.same(resp.appHash, res.newState.appHash);
  });

  await thread.close();
  await t.rejects(thread.write({ state: state0, blockId: id1, block: block1, seenCommit: commitFor(block1) }), { code: 'EXECUTOR_DEAD' });
});
