/**
 * BaseApp: genesis import and the app hash across an LMDB reopen, tx branches (ante state kept,
 * message state discarded on failure), gas, results and events in the SDK's shape, commit inside
 * one transactionSync, query routing and the SDK error table.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { open, type RootDatabase, type Database } from 'lmdb';
import { BaseApp, encodeTxMsgData } from '../../src/app/baseapp.js';
import { CheckTxType, type RequestFinalizeBlock } from '../../src/abci/types.js';
import { Bech32Codec } from '../../src/app/address.js';
import { defaultAnteChain, type AnteDecorator } from '../../src/app/ante.js';
import { fromUtf8, utf8 } from '../../src/app/bytes.js';
import { AbciError, GrpcCode, GrpcStatusError, lookupError, sdkErrors } from '../../src/app/errors.js';
import type { AppModule, ServiceRegistrar } from '../../src/app/module.js';
import { jsonTxDecoder } from '../../src/app/tx.js';
import { defaultConsensusParams } from '../../src/types/params.js';

const codec = new Bech32Codec('chain');
const ALICE = codec.encode(new Uint8Array(20).fill(1));
const BOB = codec.encode(new Uint8Array(20).fill(2));
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

interface MsgIncr {
  signer: string;
  key: string;
  by: number;
  fail?: boolean;
  burn?: number;
  throwPlain?: boolean;
}

/** A test module: counters by name, begin/end-block events, one query. */
class CounterModule implements AppModule {
  readonly name = 'counter';
  initGenesis(ctx: Parameters<NonNullable<AppModule['initGenesis']>>[0], g: unknown): void {
    const counters = (g as { counters?: Record<string, number> } | undefined)?.counters ?? {};
    for (const [k, v] of Object.entries(counters)) ctx.store('counter').set(utf8(`c/${k}`), utf8(String(v)));
  }
  registerServices(r: ServiceRegistrar): void {
    r.registerMsg<MsgIncr>({
      typeUrl: '/chain.counter.v1.MsgIncr',
      decode: (v) => {
        const m = v as MsgIncr;
        if (typeof m.key !== 'string' || typeof m.by !== 'number') throw new Error('bad MsgIncr');
        return m;
      },
      signers: (m, c) => [c.decode(m.signer)],
      handler: (ctx, m) => {
        const s = ctx.store('counter');
        const cur = s.get(utf8(`c/${m.key}`));
        const next = (cur === undefined ? 0 : Number(fromUtf8(cur))) + m.by;
        s.set(utf8(`c/${m.key}`), utf8(String(next)));
        ctx.events.emit('incr', [
          ['key', m.key],
          ['value', String(next)],
        ]);
        if (m.burn) ctx.gasMeter.consume(BigInt(m.burn), 'burn');
        if (m.fail) throw sdkErrors.invalidRequest.wrap('asked to fail');
        if (m.throwPlain) throw new Error('boom');
      },
    });
    r.registerQuery<{ key?: string }, { value: string }>({
      path: '/chain.counter.v1.Query/Get',
      handler: (ctx, req) => {
        const v = ctx.store('counter').get(utf8(`c/${req.key ?? ''}`));
        if (v === undefined) throw new GrpcStatusError(GrpcCode.NotFound, `counter ${req.key} not found`);
        return { value: fromUtf8(v) };
      },
    });
  }
  beginBlock(ctx: Parameters<NonNullable<AppModule['beginBlock']>>[0]): void {
    ctx.events.emit('begin', [['height', String(ctx.height)]]);
  }
  endBlock(ctx: Parameters<NonNullable<AppModule['endBlock']>>[0]): void {
    ctx.events.emit('end', [['height', String(ctx.height)]]);
  }
}

/** A second module so the app hash has two leaves. */
class NoteModule implements AppModule {
  readonly name = 'note';
  initGenesis(ctx: Parameters<NonNullable<AppModule['initGenesis']>>[0], g: unknown): void {
    if (typeof g === 'string') ctx.store('note').set(utf8('n'), utf8(g));
  }
}

/** Ante state that must survive a message failure: a per-signer sequence, plus an ante event. */
const seqDecorator: AnteDecorator = (ctx, tx) => {
  for (const s of tx.signers) {
    const k = utf8(`seq/${hex(s)}`);
    const cur = ctx.store('counter').get(k);
    const next = (cur === undefined ? 0 : Number(fromUtf8(cur))) + 1;
    ctx.store('counter').set(k, utf8(String(next)));
    ctx.events.emit('tx', [['acc_seq', `${ctx.addressCodec.encode(s)}/${next - 1}`]]);
  }
};

function tmpDir(t: Test): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function openEnv(dir: string): { env: RootDatabase; db: Database<Uint8Array, Uint8Array> } {
  const env = open({ path: dir, maxDbs: 16 });
  const db = env.openDB<Uint8Array, Uint8Array>({ name: 'app', encoding: 'binary', keyEncoding: 'binary' });
  return { env, db };
}

function makeApp(db: Database<Uint8Array, Uint8Array>): BaseApp {
  return new BaseApp(
    { version: '1.2.3', bech32Prefix: 'chain' },
    { db, modules: [new NoteModule(), new CounterModule()], txDecoder: jsonTxDecoder, anteDecorators: [...defaultAnteChain(), seqDecorator] },
  );
}

const GENESIS = { counter: { counters: { a: 5 } }, note: 'hello' };

async function initChain(app: BaseApp, appState: unknown = GENESIS) {
  return app.initChain({
    time: 1_700_000_000_000_000_000n,
    chainId: 'test-1',
    consensusParams: defaultConsensusParams(),
    validators: [],
    appStateBytes: utf8(JSON.stringify(appState)),
    initialHeight: 1n,
  });
}

function blockReq(height: bigint, txs: Uint8Array[]): RequestFinalizeBlock {
  return {
    txs,
    decidedLastCommit: { round: 0, votes: [] },
    hash: new Uint8Array(32),
    height,
    time: 1_700_000_000_000_000_000n + height * 1_000_000_000n,
    nextValidatorsHash: new Uint8Array(32),
    proposerAddress: new Uint8Array(20),
  };
}

async function block(env: RootDatabase, app: BaseApp, height: bigint, txs: Uint8Array[] = []) {
  const res = await app.finalizeBlock(blockReq(height, txs));
  env.transactionSync(() => app.commit());
  return res;
}

function tx(msgs: Record<string, unknown>[], opts: { gas?: number; memo?: string; timeoutHeight?: number } = {}): Uint8Array {
  return utf8(
    JSON.stringify({
      body: { messages: msgs, memo: opts.memo ?? '', timeout_height: String(opts.timeoutHeight ?? 0) },
      auth_info: { fee: { amount: [], gas_limit: String(opts.gas ?? 200000) } },
    }),
  );
}

const incr = (key: string, by: number, extra: Partial<MsgIncr> = {}) => ({ '@type': '/chain.counter.v1.MsgIncr', signer: ALICE, key, by, ...extra });

async function counter(app: BaseApp, key: string): Promise<string | undefined> {
  const r = await app.query({ path: '/chain.counter.v1.Query/Get', data: utf8(JSON.stringify({ key })), height: 0n, prove: false });
  return r.code === 0 ? (JSON.parse(fromUtf8(r.value)) as { value: string }).value : undefined;
}

t.test('genesis import, info before the first block, app hash stable across a reopen', async (t) => {
  const dir = tmpDir(t);
  let { env, db } = openEnv(dir);
  let app = makeApp(db);
  t.same(await app.info(), { data: 'chaind', version: '1.2.3', appVersion: 0n, lastBlockHeight: 0n, lastBlockAppHash: new Uint8Array(0) }, 'fresh app');
  const init = await initChain(app);
  t.equal(init.appHash.length, 32);
  const info0 = await app.info();
  t.equal(info0.lastBlockHeight, 0n);
  t.equal(hex(info0.lastBlockAppHash), hex(init.appHash), 'info reports the genesis hash before block 1');
  t.equal([...db.getRange({})].length, 0, 'initChain writes nothing to LMDB');

  const b1 = await block(env, app, 1n);
  t.equal(hex(b1.appHash), hex(init.appHash), 'an empty block keeps the hash');
  const b2 = await block(env, app, 2n, [tx([incr('a', 2)])]);
  t.equal(b2.txResults[0]!.code, 0, b2.txResults[0]!.log);
  t.not(hex(b2.appHash), hex(b1.appHash), 'a state change moves the hash');
  t.equal(await counter(app, 'a'), '7');
  await env.close();

  ({ env, db } = openEnv(dir));
  app = makeApp(db);
  const info = await app.info();
  t.equal(info.lastBlockHeight, 2n, 'height survives the reopen');
  t.equal(hex(info.lastBlockAppHash), hex(b2.appHash), 'hash survives the reopen');
  t.equal(await counter(app, 'a'), '7');
  const b3 = await block(env, app, 3n, [tx([incr('b', 1)])]);
  await env.close();

  // A second node that never restarts reaches the same hashes.
  const dir2 = tmpDir(t);
  const other = openEnv(dir2);
  const app2 = makeApp(other.db);
  t.equal(hex((await initChain(app2)).appHash), hex(init.appHash), 'genesis hash is deterministic');
  await block(other.env, app2, 1n);
  await block(other.env, app2, 2n, [tx([incr('a', 2)])]);
  const c3 = await block(other.env, app2, 3n, [tx([incr('b', 1)])]);
  t.equal(hex(c3.appHash), hex(b3.appHash), 'same blocks, same hash, restart or not');
  await other.env.close();
});

t.test('the app hash is a function of state, not history', async (t) => {
  const mk = async (txs: Uint8Array[][]) => {
    const { env, db } = openEnv(tmpDir(t));
    const app = makeApp(db);
    await initChain(app, { counter: { counters: { a: 1 } } });
    let h: Uint8Array = new Uint8Array();
    for (let i = 0; i < txs.length; i++) h = (await block(env, app, BigInt(i + 1), txs[i])).appHash;
    await env.close();
    return hex(h);
  };
  // Same final counters and sequences, written in a different order and grouping.
  const x = await mk([[tx([incr('a', 1)])], [tx([incr('b', 3)])]]);
  const y = await mk([[tx([incr('b', 3)]), tx([incr('a', 1)])], []]);
  t.equal(x, y);
  const z = await mk([[tx([incr('b', 4)])], [tx([incr('a', 1)])]]);
  t.not(x, z);
});

t.test('finalizeBlock: results, events, ante state kept and message state discarded on failure', async (t) => {
  const { env, db } = openEnv(tmpDir(t));
  const app = makeApp(db);
  await initChain(app);
  const okTx = tx([incr('a', 1)]);
  const failTx = tx([incr('a', 100), incr('z', 1, { fail: true })]);
  const res = await block(env, app, 1n, [okTx, failTx, utf8('not json'), tx([{ '@type': '/chain.nope.v1.MsgX' }]), tx([])]);

  t.same(res.events.map((e) => [e.type, e.attributes.map((a) => `${a.key}=${a.value}`)]), [
    ['begin', ['height=1', 'mode=BeginBlock']],
    ['end', ['height=1', 'mode=EndBlock']],
  ], 'block events carry mode');

  const ok = res.txResults[0]!;
  t.equal(ok.code, 0);
  t.equal(ok.log, '', 'success log is empty since 0.50');
  t.equal(ok.codespace, '');
  t.equal(ok.gasWanted, 200000n);
  t.ok(ok.gasUsed > 0n && ok.gasUsed < 200000n);
  t.same(ok.events.map((e) => [e.type, e.attributes.map((a) => `${a.key}=${a.value}`)]), [
    ['tx', [`acc_seq=${ALICE}/0`]],
    ['message', ['action=/chain.counter.v1.MsgIncr', `sender=${ALICE}`, 'module=counter', 'msg_index=0']],
    ['incr', ['key=a', 'value=6', 'msg_index=0']],
  ]);
  t.ok(ok.events.every((e) => e.attributes.every((a) => a.index)), 'attributes indexed');
  t.equal(hex(ok.data), hex(encodeTxMsgData([{ typeUrl: '/chain.counter.v1.MsgIncrResponse', value: new Uint8Array() }])));
  t.equal(hex(ok.data), '12230a212f636861696e2e636f756e7465722e76312e4d7367496e6372526573706f6e7365', 'TxMsgData proto bytes');

  const fail = res.txResults[1]!;
  t.equal(fail.code, 18);
  t.equal(fail.codespace, 'sdk');
  t.equal(fail.log, 'failed to execute message; message index: 1: asked to fail: invalid request');
  t.same(fail.events.map((e) => e.type), ['tx'], 'a failed tx keeps only its ante events');
  t.equal(fail.data.length, 0);

  t.same([res.txResults[2]!.code, res.txResults[2]!.codespace, res.txResults[2]!.gasWanted, res.txResults[2]!.gasUsed], [2, 'sdk', 0n, 0n], 'undecodable');
  t.match(res.txResults[2]!.log, /: tx parse error$/);
  t.same([res.txResults[3]!.code, res.txResults[3]!.log], [6, 'no message handler found for /chain.nope.v1.MsgX: unknown request']);
  t.same([res.txResults[4]!.code, res.txResults[4]!.log], [18, 'must contain at least one message: invalid request']);

  t.equal(await counter(app, 'a'), '6', 'the failed tx did not add 100');
  t.equal(await counter(app, 'z'), undefined, 'nor create z');
  const seq = db.getBinary(Buffer.concat([Buffer.from([1, 7]), Buffer.from('counter'), Buffer.from(`seq/${'01'.repeat(20)}`)]));
  t.equal(seq && fromUtf8(seq), '2', 'both txs that passed the ante chain bumped the sequence');
});

t.test('gas: out of gas is sdk 11 with the SDK log, and rolls the messages back', async (t) => {
  const { env, db } = openEnv(tmpDir(t));
  const app = makeApp(db);
  await initChain(app);
  const res = await block(env, app, 1n, [tx([incr('a', 1, { burn: 50_000 })], { gas: 30_000 }), tx([incr('a', 1)], { gas: 10 })]);
  const r = res.txResults[0]!;
  t.equal(r.code, 11);
  t.equal(r.codespace, 'sdk');
  t.match(r.log, /^out of gas in location: burn; gasWanted: 30000, gasUsed: \d+: out of gas$/);
  t.ok(r.gasUsed > r.gasWanted, 'gasUsed reports the overshoot, as the SDK does');
  const r2 = res.txResults[1]!;
  t.equal(r2.code, 11, 'the ante chain runs out too');
  t.match(r2.log, /^out of gas in location: txSize; gasWanted: 10, gasUsed: \d+: out of gas$/);
  t.same(r2.events, [], 'an ante failure has no events');
  t.equal(await counter(app, 'a'), '5');
});

t.test('ante decorators: memo, timeout height, handler exceptions', async (t) => {
  const { env, db } = openEnv(tmpDir(t));
  const app = makeApp(db);
  await initChain(app);
  const res = await block(env, app, 1n, [
    tx([incr('a', 1)], { memo: 'x'.repeat(257) }),
    tx([incr('a', 1)], { timeoutHeight: 0 }),
    tx([incr('a', 1)], { timeoutHeight: 1 }),
  ]);
  t.same([res.txResults[0]!.code, res.txResults[0]!.log], [12, 'maximum number of characters is 256 but received 257 characters: memo too large']);
  t.equal(res.txResults[1]!.code, 0);
  t.equal(res.txResults[2]!.code, 0, 'timeout height equal to the block height is fine');
  const res2 = await block(env, app, 2n, [tx([incr('a', 1)], { timeoutHeight: 1 }), tx([incr('a', 1, { throwPlain: true })])]);
  t.same([res2.txResults[0]!.code, res2.txResults[0]!.log], [30, 'block height: 2, timeout height: 1: tx timeout height']);
  t.same([res2.txResults[1]!.code, res2.txResults[1]!.codespace, res2.txResults[1]!.log], [1, 'undefined', 'failed to execute message; message index: 0: boom']);
});

t.test('checkTx runs the ante chain, not the messages, and keeps ante state until commit', async (t) => {
  const { env, db } = openEnv(tmpDir(t));
  const app = makeApp(db);
  await initChain(app);
  await block(env, app, 1n);
  const r = await app.checkTx(tx([incr('a', 1, { fail: true })]), CheckTxType.New);
  t.equal(r.code, 0, 'message failures are not seen in CheckTx');
  t.equal(r.gasWanted, 200000n);
  t.ok(r.gasUsed > 0n);
  t.same(r.events, []);
  const bad = await app.checkTx(utf8('{'), CheckTxType.New);
  t.same([bad.code, bad.codespace], [2, 'sdk']);
  const rc = await app.checkTx(tx([incr('a', 1)]), CheckTxType.Recheck);
  t.equal(rc.code, 0);
  t.equal(await counter(app, 'a'), '5', 'CheckTx writes nothing committed');
});

t.test('commit writes only inside the block transaction, atomically', async (t) => {
  const dir = tmpDir(t);
  let { env, db } = openEnv(dir);
  let app = makeApp(db);
  await initChain(app);
  const b1 = await block(env, app, 1n, [tx([incr('a', 1)])]);
  const keys1 = [...db.getRange({})].length;

  await app.finalizeBlock(blockReq(2n, [tx([incr('q', 1)])]));
  t.equal([...db.getRange({})].length, keys1, 'finalizeBlock does not touch LMDB');
  t.throws(
    () =>
      env.transactionSync(() => {
        app.commit();
        throw new Error('executor failed after commit');
      }),
    /executor failed/,
  );
  t.equal([...db.getRange({})].length, keys1, 'the aborted transaction took the app writes with it');
  app.reload();
  t.equal((await app.info()).lastBlockHeight, 1n, 'reload() re-reads the committed state');
  t.equal(hex((await app.info()).lastBlockAppHash), hex(b1.appHash));
  t.throws(() => app.commit(), /commit without a finalized block/);

  const b2 = await block(env, app, 2n, [tx([incr('q', 1)])]);
  await env.close();
  ({ env, db } = openEnv(dir));
  app = makeApp(db);
  t.equal((await app.info()).lastBlockHeight, 2n);
  t.equal(hex((await app.info()).lastBlockAppHash), hex(b2.appHash));
  t.equal(await counter(app, 'q'), '1');
  await t.rejects(app.finalizeBlock(blockReq(4n, [])), /expected 3/);
  await t.rejects(initChain(app), /committed height 2/);
  await env.close();
});

t.test('query routing, heights and error mapping', async (t) => {
  const { env, db } = openEnv(tmpDir(t));
  const app = makeApp(db);
  await initChain(app);
  const early = await app.query({ path: '/chain.counter.v1.Query/Get', data: utf8('{"key":"a"}'), height: 0n, prove: false });
  t.same([early.code, early.codespace, early.log], [26, 'sdk', 'chaind is not ready; please wait for first block: invalid height']);
  await block(env, app, 1n);

  const ok = await app.query({ path: '/chain.counter.v1.Query/Get', data: utf8('{"key":"a"}'), height: 0n, prove: false });
  t.same([ok.code, fromUtf8(ok.value), ok.height], [0, '{"value":"5"}', 1n]);
  const upstream = await app.query({ path: '/cosmos.counter.v1.Query/Get', data: utf8('{"key":"a"}'), height: 1n, prove: false });
  t.equal(upstream.code, 0, 'upstream spelling routes to the same handler');

  const unknown = await app.query({ path: '/chain.nope.v1.Query/X', data: new Uint8Array(), height: 0n, prove: false });
  t.same([unknown.code, unknown.codespace, unknown.log], [6, 'sdk', 'unknown query path: unknown request']);
  const nf = await app.query({ path: '/chain.counter.v1.Query/Get', data: utf8('{"key":"zz"}'), height: 0n, prove: false });
  t.same([nf.code, nf.codespace, nf.log], [22, 'sdk', 'rpc error: code = NotFound desc = counter zz not found: key not found']);
  const future = await app.query({ path: '/chain.counter.v1.Query/Get', data: utf8('{"key":"a"}'), height: 9n, prove: false });
  t.same([future.code, future.log], [26, 'cannot query with height in the future; please provide a valid height: invalid height']);
  const neg = await app.query({ path: '/chain.counter.v1.Query/Get', data: utf8('{"key":"a"}'), height: -1n, prove: false });
  t.same([neg.code, neg.log], [18, 'cannot query with height < 0; please provide a valid height: invalid request']);
  const badData = await app.query({ path: '/chain.counter.v1.Query/Get', data: utf8('{'), height: 0n, prove: false });
  t.equal(badData.code, 18);
  const ver = await app.query({ path: '/app/version', data: new Uint8Array(), height: 0n, prove: false });
  t.equal(fromUtf8(ver.value), '1.2.3');
  t.same(app.queryObject('/chain.counter.v1.Query/Get', { key: 'a' }), { height: 1n, response: { value: '5' } });
  t.throws(() => app.queryObject('/chain.counter.v1.Query/Get', { key: 'nope' }), GrpcStatusError);
  await env.close();
});

t.test('prepareProposal and processProposal', async (t) => {
  const { env, db } = openEnv(tmpDir(t));
  const app = makeApp(db);
  await initChain(app);
  const a = tx([incr('a', 1)]);
  const bad = utf8('garbage');
  const size = a.length + 1 + 2; // tag byte + 2-byte length varint (len >= 128)
  t.ok(a.length >= 128 && a.length < 16384);
  const common = { localLastCommit: { round: 0, votes: [] }, height: 1n, time: 0n, nextValidatorsHash: new Uint8Array(), proposerAddress: new Uint8Array() };
  t.same(await app.prepareProposal({ ...common, maxTxBytes: BigInt(2 * size), txs: [a, bad, a] }), [a, a], 'undecodable skipped, both fit exactly');
  t.same(await app.prepareProposal({ ...common, maxTxBytes: BigInt(2 * size - 1), txs: [a, a] }), [a], 'proto overhead counted');
  const pp = { proposedLastCommit: { round: 0, votes: [] }, hash: new Uint8Array(), height: 1n, time: 0n, nextValidatorsHash: new Uint8Array(), proposerAddress: new Uint8Array() };
  t.equal(await app.processProposal({ ...pp, txs: [a] }), true);
  t.equal(await app.processProposal({ ...pp, txs: [a, bad] }), false);
  // Block max gas from consensus params bounds both.
  app.setConsensusParams({ ...defaultConsensusParams(), block: { maxBytes: 22020096n, maxGas: 300000n } });
  t.same(await app.prepareProposal({ ...common, maxTxBytes: 1000000n, txs: [a, a] }), [a], 'second tx would exceed max gas');
  t.equal(await app.processProposal({ ...pp, txs: [a, a] }), false);
  await env.close();
});

t.test('the SDK error table', async (t) => {
  const want: [keyof typeof sdkErrors, number, string][] = [
    ['txDecode', 2, 'tx parse error'],
    ['invalidSequence', 3, 'invalid sequence'],
    ['unauthorized', 4, 'unauthorized'],
    ['insufficientFunds', 5, 'insufficient funds'],
    ['unknownRequest', 6, 'unknown request'],
    ['invalidAddress', 7, 'invalid address'],
    ['invalidPubKey', 8, 'invalid pubkey'],
    ['unknownAddress', 9, 'unknown address'],
    ['invalidCoins', 10, 'invalid coins'],
    ['outOfGas', 11, 'out of gas'],
    ['memoTooLarge', 12, 'memo too large'],
    ['insufficientFee', 13, 'insufficient fee'],
    ['tooManySignatures', 14, 'maximum number of signatures exceeded'],
    ['noSignatures', 15, 'no signatures supplied'],
    ['invalidRequest', 18, 'invalid request'],
    ['txInMempoolCache', 19, 'tx already in mempool'],
    ['mempoolIsFull', 20, 'mempool is full'],
    ['txTooLarge', 21, 'tx too large'],
    ['keyNotFound', 22, 'key not found'],
    ['invalidHeight', 26, 'invalid height'],
    ['invalidType', 29, 'invalid type'],
    ['txTimeoutHeight', 30, 'tx timeout height'],
    ['unknownExtensionOptions', 31, 'unknown extension options'],
    ['wrongSequence', 32, 'incorrect account sequence'],
    ['notSupported', 37, 'feature not supported'],
    ['invalidGasLimit', 41, 'invalid gas limit'],
    ['txTimeout', 42, 'tx timeout'],
  ];
  for (const [name, code, desc] of want) {
    const e = sdkErrors[name];
    t.same([e.codespace, e.abciCode, e.description, e.message], ['sdk', code, desc, desc], name);
    t.equal(lookupError('sdk', code), e);
  }
  t.equal(Object.keys(sdkErrors).length, 41, 'codes 2–42 are all registered');
  const w = sdkErrors.wrongSequence.wrap('account sequence mismatch, expected 1, got 0');
  t.ok(w instanceof AbciError && w instanceof Error);
  t.same([w.message, w.code, w.abciCode], ['account sequence mismatch, expected 1, got 0: incorrect account sequence', 'sdk:32', 32]);
  t.ok(sdkErrors.wrongSequence.is(w));
  t.notOk(sdkErrors.unauthorized.is(w));
});
