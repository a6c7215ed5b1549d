/**
 * Tx kinds, module commitments and module databases (src/app/txkinds.ts, AppModule.commitment /
 * databases / commit): the chain app (signed protobuf txs) with the test-only notes module
 * (test/helpers/notes-module.ts), over a real Storage (one LMDB environment, the module's own
 * named database in it).
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CheckTxType, type ExecTxResult, type RequestFinalizeBlock } from '../../src/abci/types.js';
import { createChainApp, type ChainApp } from '../../src/app/chain.js';
import { fromUtf8, utf8 } from '../../src/app/bytes.js';
import { COSMOS_LEAD_BYTES, TxKindRegistry, kindMatches, type TxKind } from '../../src/app/txkinds.js';
import { moduleLeafRoot } from '../../src/app/apphash.js';
import { buildAppState } from '../../src/config/app-genesis.js';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { createNames } from '../../src/names/index.js';
import { createCryptoPool } from '../../src/pool/index.js';
import { Storage } from '../../src/store/storage.js';
import { defaultConsensusParams } from '../../src/types/params.js';
import { CHAIN_ID, DENOM, DEV_BALANCE, GENESIS_TIME } from '../helpers/chainapp.js';
import { devKeys, sendTx } from '../helpers/txsign.js';
import { NotesModule, noteTx, NOTES_DB, NOTE_LEAD, ROOT_KEY } from '../helpers/notes-module.js';

const KEYS = devKeys();
const S0 = KEYS[10]!;
const S2 = KEYS[12]!;
const fee = { amount: [{ denom: DENOM, amount: 100 }], gasLimit: 200_000n };
const send = (amount: number, sequence: bigint) => sendTx({ chainId: CHAIN_ID, from: S0, to: S2.bech32, amount: [{ denom: DENOM, amount }], accountNumber: 10n, sequence, fee });
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const attrs = (r: ExecTxResult, type: string) => r.events.filter((e) => e.type === type).map((e) => Object.fromEntries(e.attributes.map((a) => [a.key, a.value])));

interface Node {
  storage: Storage;
  app: ChainApp;
  notes: NotesModule;
  finalize(txs: Uint8Array[], height: bigint): ReturnType<ChainApp['finalizeBlock']>;
  block(txs?: Uint8Array[]): ReturnType<ChainApp['finalizeBlock']>;
  height(): bigint;
}

async function startNode(t: Test, o: { salt?: string; dir?: string; noInit?: boolean } = {}): Promise<Node> {
  const dir = o.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  const storage = Storage.open({ file: path.join(dir, 'chaind.mdb'), noSync: true });
  const pool = createCryptoPool({ kind: 'single' });
  t.teardown(async () => {
    await pool.close();
    await storage.close();
    if (o.dir === undefined) fs.rmSync(dir, { recursive: true, force: true });
  });
  const names = createNames({ upstreamNames: false });
  let notes!: NotesModule;
  // The kind is resolved from the module lazily: the module is built inside the app's constructor.
  const app2 = createChainApp({
    db: storage.app.latest,
    names,
    pool,
    bech32Prefix: 'chain',
    openDatabase: (name) => storage.openNamedDb(name),
    extraModules: ({ bank }) => [(notes = new NotesModule(bank, o.salt))],
    txKinds: [lazyKind(() => notes)],
  });
  if (!o.noInit) {
    const appState = buildAppState({ accounts: devAccounts().map((a) => ({ address: a.address, balance: DEV_BALANCE })), names });
    await app2.initChain({ time: GENESIS_TIME, chainId: CHAIN_ID, consensusParams: defaultConsensusParams(), validators: [], appStateBytes: utf8(JSON.stringify(appState)), initialHeight: 1n });
  }
  app2.setConsensusParams(defaultConsensusParams());
  let height = app2.lastBlockHeight;
  const req = (txs: Uint8Array[], h: bigint): RequestFinalizeBlock => ({
    txs,
    decidedLastCommit: { round: 0, votes: [] },
    hash: new Uint8Array(32),
    height: h,
    time: GENESIS_TIME + h * 1_000_000_000n,
    nextValidatorsHash: new Uint8Array(32),
    proposerAddress: new Uint8Array(20),
  });
  return {
    storage,
    app: app2,
    notes,
    finalize: (txs, h) => app2.finalizeBlock(req(txs, h)),
    async block(txs = []) {
      const res = await app2.finalizeBlock(req(txs, height + 1n));
      storage.transactionSync(() => app2.commit());
      height++;
      return res;
    },
    height: () => height,
  };
}

/** The notes kind, resolved from the module when first used (the app is built before the module exists). */
function lazyKind(get: () => NotesModule): TxKind {
  return {
    name: 'notes',
    leadBytes: [NOTE_LEAD],
    decode: (b) => get().kind.decode(b),
    gasLimit: (tx) => get().kind.gasLimit(tx as never),
    ante: (ctx, tx, sim) => get().kind.ante(ctx, tx as never, sim),
    run: (ctx, tx) => get().kind.run(ctx, tx as never),
  };
}

t.test('registry: lead bytes, Cosmos bytes refused, no byte claimed twice', async (t) => {
  const k = (name: string, leadBytes: number[]): TxKind => ({ name, leadBytes, decode: () => 0, gasLimit: () => 0n, ante: () => {}, run: () => {} });
  for (const b of COSMOS_LEAD_BYTES) t.throws(() => new TxKindRegistry([k('x', [b])]), /can start a Cosmos TxRaw/);
  t.throws(() => new TxKindRegistry([k('a', [0x02]), k('b', [0x01, 0x02])]), /already claimed by a/);
  t.throws(() => new TxKindRegistry([k('a', [0x02]), k('a', [0x03])]), /registered twice/);
  t.throws(() => new TxKindRegistry([k('cosmos', [0x03])]), /registered twice/);
  t.throws(() => new TxKindRegistry([k('a', [256])]), /not a byte/);
  t.throws(() => new TxKindRegistry([k('a', [])]), /no lead byte/);
  // The EVM kind's future claim fits: typed envelopes 0x01, 0x02, 0x04 and RLP lists 0xc0–0xff.
  const evmBytes = [0x01, 0x02, 0x04, ...Array.from({ length: 64 }, (_, i) => 0xc0 + i)];
  const r = new TxKindRegistry([k('evm', evmBytes), k('notes', [NOTE_LEAD])]);
  t.equal(r.size, 2);
  t.equal(r.kindOf(Uint8Array.of(0x02, 0xf8))?.name, 'evm');
  t.equal(r.kindOf(Uint8Array.of(0xf8, 0x6c))?.name, 'evm');
  t.equal(r.kindOf(Uint8Array.of(NOTE_LEAD))?.name, 'notes');
  t.equal(r.kindOf(Uint8Array.of(0x0a, 0x01)), undefined, 'TxRaw → Cosmos');
  t.equal(r.kindOf(utf8('{"body":{}}')), undefined, 'JSON test txs → Cosmos');
  t.equal(r.kindOf(new Uint8Array(0)), undefined, 'the empty tx → Cosmos');
  t.equal(kindMatches(k('n', [NOTE_LEAD]), Uint8Array.of(NOTE_LEAD, 1)), true);
  t.equal(kindMatches(k('n', [NOTE_LEAD]), new Uint8Array(0)), false);
  // A real signed TxRaw starts with one of the Cosmos bytes.
  t.ok(COSMOS_LEAD_BYTES.includes(send(1, 0n)[0]!));
});

t.test('mixed block: Cosmos and notes txs run in block order, results and events per tx', async (t) => {
  const n = await startNode(t);
  await n.block();
  const before = n.app.bank.keeper.getBalance(n.app.queryContext(), S2.address, DENOM).amount;
  const txs = [
    noteTx({ key: 'a', value: 'first', watch: S2.bech32 }),
    send(1000, 0n),
    noteTx({ key: 'b', value: 'second', watch: S2.bech32 }),
    noteTx({ key: 'c', value: 'fail' }),
    Uint8Array.of(NOTE_LEAD, 0x7b), // a notes tx that does not decode
    send(7, 1n),
    noteTx({ key: 'd', value: 'tiny gas', gas: 10 }),
  ];
  const res = await n.block(txs);
  t.same(res.txResults.map((r) => [r.code, r.codespace]), [[0, ''], [0, ''], [0, ''], [18, 'sdk'], [2, 'sdk'], [0, ''], [11, 'sdk']]);
  t.same(attrs(res.txResults[0]!, 'note'), [{ key: 'a', value: 'first', balance: String(before) }], 'before the send');
  t.same(attrs(res.txResults[2]!, 'note'), [{ key: 'b', value: 'second', balance: String(before + 1000n) }], 'after the send');
  t.equal(fromUtf8(res.txResults[0]!.data), 'stored a');
  t.equal(res.txResults[0]!.gasWanted, 100_000n);
  t.equal(res.txResults[0]!.gasUsed >= 1000n, true);
  t.same(attrs(res.txResults[0]!, 'note_ante'), [{ key: 'a', count: '1' }]);
  t.same(attrs(res.txResults[2]!, 'note_ante'), [{ key: 'b', count: '2' }]);
  // The failing run keeps its ante effects (the counter) and events, not the run's.
  t.same(attrs(res.txResults[3]!, 'note_ante'), [{ key: 'c', count: '3' }]);
  t.same(attrs(res.txResults[3]!, 'note'), []);
  t.match(res.txResults[4]!.log, /note: /);
  t.match(res.txResults[6]!.log, /out of gas/);
  t.ok(res.txResults[1]!.events.some((e) => e.type === 'transfer'), 'the Cosmos tx has its own events');
  t.same(attrs(res.txResults[1]!, 'note'), []);
  t.equal(n.app.bank.keeper.getBalance(n.app.queryContext(), S2.address, DENOM).amount, before + 1007n);
  t.equal(n.notes.note('a'), 'first');
  t.equal(n.notes.note('b'), 'second');
  t.equal(n.notes.note('c'), undefined);
  t.equal(n.notes.note('d'), undefined);
});

t.test('CheckTx and Simulate of a notes tx: ante only in CheckTx, nothing reaches the module database', async (t) => {
  const n = await startNode(t);
  await n.block();
  const c = await n.app.checkTx(noteTx({ key: 'x', value: 'y' }), CheckTxType.New);
  t.equal(c.code, 0, c.log);
  t.equal(c.gasWanted, 100_000n);
  t.ok(c.gasUsed > 1000n && c.gasUsed < 100_000n, 'the ante 1000 plus its metered store access');
  const bad = await n.app.checkTx(Uint8Array.of(NOTE_LEAD), CheckTxType.New);
  t.equal(bad.code, 2);
  const sim = await n.app.simulate(noteTx({ key: 'x', value: 'y' }));
  t.equal(sim.code, 0, sim.log);
  t.same(attrs(sim, 'note'), [{ key: 'x', value: 'y' }]);
  t.same(attrs(sim, 'note_ante'), [{ key: 'x', count: '2' }], 'simulated over the check state, after the CheckTx');
  const proposal = [noteTx({ key: 'x', value: 'y', gas: 5 }), send(1, 0n)];
  t.equal(await n.app.processProposal({ txs: proposal } as never), true);
  t.equal(await n.app.processProposal({ txs: [Uint8Array.of(NOTE_LEAD)] } as never), false, 'an undecodable notes tx fails the proposal');
  await n.block();
  t.equal(n.notes.note('x'), undefined);
});

t.test('module commitment: combined into the module leaf, changes the app hash, survives a restart', async (t) => {
  t.equal(hex(moduleLeafRoot(new Uint8Array(32), new Uint8Array(32))), hex(Buffer.from(await crypto.subtle.digest('SHA-256', new Uint8Array(65).fill(0, 1).map((_, i) => (i === 0 ? 1 : 0))))));
  t.throws(() => moduleLeafRoot(new Uint8Array(31), new Uint8Array(32)), /32 bytes/);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const a = await startNode(t, { dir });
  const b = await startNode(t);
  const c = await startNode(t, { salt: 'other' });
  const blocks = [[], [noteTx({ key: 'k', value: 'v' })], [send(5, 0n), noteTx({ key: 'k2', value: 'v2' })]];
  for (const txs of blocks) {
    const ra = await a.block(txs);
    const rb = await b.block(txs);
    const rc = await c.block(txs);
    t.equal(hex(ra.appHash), hex(rb.appHash), 'same state, same app hash');
    t.not(hex(ra.appHash), hex(rc.appHash), 'a different commitment, a different app hash');
  }
  t.equal(hex(a.storage.openNamedDb(NOTES_DB).getBinary(ROOT_KEY)!), hex(a.notes.committedRoot()));
  const info = await a.app.info();
  // Restart a's app over the same storage: the same last app hash, and the next block hashes as on b.
  await a.storage.close();
  const a2 = await startNode(t, { dir, noInit: true });
  t.equal(hex((await a2.app.info()).lastBlockAppHash), hex(info.lastBlockAppHash));
  t.equal(a2.notes.note('k2'), 'v2');
  const next = [noteTx({ key: 'k3', value: 'v3' })];
  const r2 = await a2.block(next);
  const rb = await b.block(next);
  t.equal(hex(r2.appHash), hex(rb.appHash), 'after a restart');
});

t.test('module database: written in the block transaction, visible exactly when the block is', async (t) => {
  const n = await startNode(t);
  await n.block();
  const db = n.storage.openNamedDb(NOTES_DB);
  const h = n.height() + 1n;
  const res = await n.finalize([noteTx({ key: 'crash', value: 'safe' })], h);
  t.equal(res.txResults[0]!.code, 0);
  t.equal(n.notes.note('crash'), undefined, 'not before commit');
  const rerun = await n.finalize([noteTx({ key: 'crash', value: 'safe' })], h);
  t.equal(hex(rerun.appHash), hex(res.appHash), 'a re-run of the height does not double the module\'s pending notes');
  // The block's transaction fails after commit() wrote: neither the app state nor the note is there.
  t.throws(() =>
    n.storage.transactionSync(() => {
      n.app.commit();
      throw new Error('crash inside the block transaction');
    }),
  );
  n.app.reload();
  t.equal(n.app.lastBlockHeight, h - 1n);
  t.equal(db.getBinary(utf8('crash')), undefined, 'the note went with the aborted transaction');
  // The same block again, committed: both together.
  const again = await n.finalize([noteTx({ key: 'crash', value: 'safe' })], h);
  t.equal(hex(again.appHash), hex(res.appHash), 're-running the height gives the same app hash');
  let seenInside: string | undefined;
  n.storage.transactionSync(() => {
    n.app.commit();
    seenInside = n.notes.note('crash');
  });
  t.equal(seenInside, 'safe');
  t.equal(n.app.lastBlockHeight, h);
  t.equal(fromUtf8(db.getBinary(utf8('crash'))!), 'safe');
  // A write handle kept past commit() is dead.
  let kept: { putSync(k: Uint8Array, v: Uint8Array): void } | undefined;
  const orig = n.notes.commit.bind(n.notes);
  n.notes.commit = (c) => {
    kept = c.db(NOTES_DB);
    t.throws(() => c.db('evm_state'), /did not declare/);
    orig(c);
  };
  await n.finalize([], h + 1n);
  n.storage.transactionSync(() => n.app.commit());
  t.throws(() => n.storage.transactionSync(() => kept!.putSync(utf8('late'), utf8('x'))), /outside commit/);
  t.equal(db.getBinary(utf8('late')), undefined);
});

t.test('module databases: declared names are opened by the store layer and checked', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  const storage = Storage.open({ file: path.join(dir, 'chaind.mdb'), noSync: true });
  t.teardown(async () => {
    await storage.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  t.throws(() => storage.openNamedDb('app'), /node's own/);
  t.throws(() => storage.openNamedDb('Bad-Name'), /lower-case/);
  t.equal(storage.openNamedDb('evm_state'), storage.openNamedDb('evm_state'));
  // A module declaring databases needs an opener.
  t.throws(() => createChainApp({ db: storage.app.latest, bech32Prefix: 'chain', extraModules: ({ bank }) => [new NotesModule(bank)] }), /openDatabase/);
});
