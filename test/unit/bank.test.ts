/**
 * x/bank through BaseApp: genesis balances and supply, MsgSend with the SDK's events, insufficient
 * funds leaving state unchanged, mint/burn and supply, the balance key layout, and the queries.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { BaseApp } from '../../src/app/baseapp.js';
import type { RequestFinalizeBlock } from '../../src/abci/types.js';
import { Bech32Codec, moduleAddress } from '../../src/app/address.js';
import { fromUtf8, utf8 } from '../../src/app/bytes.js';
import { Context, ExecMode } from '../../src/app/context.js';
import { InfiniteGasMeter } from '../../src/app/gas.js';
import { CacheKVStore, LmdbReadStore, PrefixStore } from '../../src/app/store.js';
import { jsonTxDecoder } from '../../src/app/tx.js';
import { BankModule } from '../../src/app/modules/bank/index.js';
import { defaultConsensusParams } from '../../src/types/params.js';
import { fromBinary, toBinary, type JsonValue } from '@bufbuild/protobuf';
import { protoRegistry } from '../../src/proto/registry.js';
import { fromProtoJson, toProtoJson } from '../../src/proto/json.js';

const codec = new Bech32Codec('chain');
const A = new Uint8Array(20).fill(0xa1);
const B = new Uint8Array(20).fill(0xb2);
const C = new Uint8Array(32).fill(0xc3); // a 32-byte (ADR-028 style) address
const ALICE = codec.encode(A);
const BOB = codec.encode(B);
const CAROL = codec.encode(C);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function setup(t: Test, genesis: unknown) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  const env: RootDatabase = open({ path: dir, maxDbs: 16 });
  const db: Database<Uint8Array, Uint8Array> = env.openDB({ name: 'app', encoding: 'binary', keyEncoding: 'binary' });
  const bank = new BankModule({ moduleAccountPermissions: { mint: ['minter'], burner: ['burner'], fee_collector: [] } });
  const app = new BaseApp({ bech32Prefix: 'chain' }, { db, modules: [bank], txDecoder: jsonTxDecoder });
  t.teardown(async () => {
    await env.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  let height = 0n;
  const init = () =>
    app.initChain({
      time: 0n,
      chainId: 'bank-test',
      consensusParams: defaultConsensusParams(),
      validators: [],
      appStateBytes: utf8(JSON.stringify({ bank: genesis })),
      initialHeight: 1n,
    });
  const block = async (txs: Uint8Array[] = []) => {
    height++;
    const req: RequestFinalizeBlock = {
      txs,
      decidedLastCommit: { round: 0, votes: [] },
      hash: new Uint8Array(32),
      height,
      time: height * 1_000_000_000n,
      nextValidatorsHash: new Uint8Array(32),
      proposerAddress: new Uint8Array(20),
    };
    const res = await app.finalizeBlock(req);
    env.transactionSync(() => app.commit());
    return res;
  };
  /** A context over committed state that may write (for keeper-level tests); discarded after. */
  const scratch = () => {
    const cache = new CacheKVStore(new LmdbReadStore(db));
    return new Context({
      mode: ExecMode.Finalize,
      chainId: 'bank-test',
      height: height + 1n,
      time: 0n,
      gasMeter: new InfiniteGasMeter(),
      addressCodec: codec,
      stores: (sk) => new PrefixStore(cache, Uint8Array.from([1, sk.length, ...Buffer.from(sk)])),
    });
  };
  /** A query in protobuf (request built from its SDK JSON, the answer printed as SDK JSON). */
  const q = async (method: string, req: unknown) => {
    const reqSchema = protoRegistry.getMessage(`chain.bank.v1beta1.Query${method}Request`)!;
    const resSchema = protoRegistry.getMessage(`chain.bank.v1beta1.Query${method}Response`)!;
    const data = toBinary(reqSchema, fromProtoJson(reqSchema, req as JsonValue));
    const r = await app.query({ path: `/chain.bank.v1beta1.Query/${method}`, data, height: 0n, prove: false });
    return { code: r.code, log: r.log, body: r.code === 0 ? (toProtoJson(resSchema, fromBinary(resSchema, r.value)) as any) : undefined };
  };
  return { env, db, app, bank, init, block, scratch, q };
}

const GENESIS = {
  params: { send_enabled: [], default_send_enabled: true },
  balances: [
    { address: BOB, coins: [{ denom: 'stake', amount: '50' }] },
    { address: ALICE, coins: [{ denom: 'atom', amount: '7' }, { denom: 'stake', amount: '1000' }] },
  ],
  supply: [],
  denom_metadata: [{ description: 'the staking token', denom_units: [{ denom: 'stake', exponent: 0, aliases: [] }], base: 'stake', display: 'stake', name: 'Stake', symbol: 'STK', uri: '', uri_hash: '' }],
  send_enabled: [{ denom: 'locked', enabled: false }],
};

function sendTx(from: string, to: string, amount: { denom: string; amount: string }[]): Uint8Array {
  return utf8(
    JSON.stringify({
      body: { messages: [{ '@type': '/chain.bank.v1beta1.MsgSend', from_address: from, to_address: to, amount }], memo: '' },
      auth_info: { fee: { amount: [], gas_limit: '200000' } },
    }),
  );
}

t.test('genesis: balances, computed supply, metadata', async (t) => {
  const s = setup(t, GENESIS);
  await s.init();
  await s.block();
  const ctx = s.scratch();
  t.same(s.bank.keeper.getBalance(ctx, A, 'stake'), { denom: 'stake', amount: 1000n });
  t.same(s.bank.keeper.getBalance(ctx, A, 'nope'), { denom: 'nope', amount: 0n });
  t.same(s.bank.keeper.getAllBalances(ctx, A), [
    { denom: 'atom', amount: 7n },
    { denom: 'stake', amount: 1000n },
  ]);
  t.same(s.bank.keeper.getTotalSupply(ctx), [
    { denom: 'atom', amount: 7n },
    { denom: 'stake', amount: 1050n },
  ]);
  t.equal(s.bank.keeper.getDenomMetadata(ctx, 'stake')?.symbol, 'STK');
  t.equal(s.bank.keeper.isSendEnabledDenom(ctx, 'locked'), false);
  // Layout: app prefix 0x01 len("bank") "bank", then 0x02 len(addr) addr denom → "1000".
  const key = Buffer.concat([Buffer.from([1, 4]), Buffer.from('bank'), Buffer.from([2, 20]), Buffer.from(A), Buffer.from('stake')]);
  t.equal(fromUtf8(s.db.getBinary(key)!), '1000', 'SDK balance key layout');
  const supplyKey = Buffer.concat([Buffer.from([1, 4]), Buffer.from('bank'), Buffer.from([0]), Buffer.from('stake')]);
  t.equal(fromUtf8(s.db.getBinary(supplyKey)!), '1050');
});

t.test('genesis validation', async (t) => {
  await t.rejects(setup(t, { ...GENESIS, supply: [{ denom: 'stake', amount: '1' }] }).init(), /genesis supply is incorrect, expected 1stake, got 7atom,1050stake/);
  await t.rejects(setup(t, { balances: [{ address: ALICE, coins: [] }, { address: ALICE, coins: [] }] }).init(), /duplicate balance for address/);
  await t.rejects(setup(t, { balances: [{ address: 'cosmos1qqqq', coins: [] }] }).init(), /invalid address/);
  await t.rejects(setup(t, { balances: [{ address: ALICE, coins: [{ denom: 'stake', amount: '0' }] }] }).init(), /amount is not positive/);
  const ok = setup(t, { ...GENESIS, supply: [{ denom: 'stake', amount: '1050' }, { denom: 'atom', amount: '7' }] });
  await ok.init();
  await ok.block();
  t.same(ok.bank.keeper.getSupply(ok.scratch(), 'stake'), { denom: 'stake', amount: 1050n }, 'matching supply accepted');
  const empty = setup(t, undefined);
  await empty.init();
  await empty.block();
  t.same(empty.bank.keeper.getTotalSupply(empty.scratch()), [], 'absent section = default genesis');
});

t.test('MsgSend moves funds and emits the SDK events', async (t) => {
  const s = setup(t, GENESIS);
  await s.init();
  const res = await s.block([sendTx(ALICE, CAROL, [{ denom: 'atom', amount: '7' }, { denom: 'stake', amount: '100' }])]);
  const r = res.txResults[0]!;
  t.equal(r.code, 0, r.log);
  t.same(r.events.map((e) => [e.type, e.attributes.map((a) => `${a.key}=${a.value}`)]), [
    ['message', ['action=/chain.bank.v1beta1.MsgSend', `sender=${ALICE}`, 'module=bank', 'msg_index=0']],
    ['coin_spent', [`spender=${ALICE}`, 'amount=7atom,100stake', 'msg_index=0']],
    ['coin_received', [`receiver=${CAROL}`, 'amount=7atom,100stake', 'msg_index=0']],
    ['transfer', [`recipient=${CAROL}`, `sender=${ALICE}`, 'amount=7atom,100stake', 'msg_index=0']],
    ['message', [`sender=${ALICE}`, 'msg_index=0']],
  ]);
  const ctx = s.scratch();
  t.same(s.bank.keeper.getAllBalances(ctx, A), [{ denom: 'stake', amount: 900n }], 'a zero balance disappears');
  t.same(s.bank.keeper.getAllBalances(ctx, C), [
    { denom: 'atom', amount: 7n },
    { denom: 'stake', amount: 100n },
  ], '32-byte addresses work');
  t.same(s.bank.keeper.getTotalSupply(ctx), [
    { denom: 'atom', amount: 7n },
    { denom: 'stake', amount: 1050n },
  ], 'a send does not change supply');
  const atomKey = Buffer.concat([Buffer.from([1, 4]), Buffer.from('bank'), Buffer.from([2, 20]), Buffer.from(A), Buffer.from('atom')]);
  t.equal(s.db.getBinary(atomKey), undefined, 'the zero balance key is deleted');
});

t.test('insufficient funds: code 5, SDK log, state unchanged', async (t) => {
  const s = setup(t, GENESIS);
  await s.init();
  await s.block();
  const before = (await s.app.info()).lastBlockAppHash;
  // The first coin fits, the second does not: nothing may move.
  const res = await s.block([
    sendTx(BOB, ALICE, [{ denom: 'atom', amount: '0' }]),
    sendTx(ALICE, BOB, [{ denom: 'atom', amount: '1' }, { denom: 'stake', amount: '5000' }]),
    sendTx(BOB, ALICE, [{ denom: 'atom', amount: '1' }]),
  ]);
  t.same([res.txResults[0]!.code, res.txResults[0]!.log], [10, 'failed to execute message; message index: 0: 0atom: invalid coins']);
  const r = res.txResults[1]!;
  t.same([r.code, r.codespace], [5, 'sdk']);
  t.equal(r.log, 'failed to execute message; message index: 0: spendable balance 1000stake is smaller than 5000stake: insufficient funds');
  t.same([res.txResults[2]!.code, res.txResults[2]!.log], [5, 'failed to execute message; message index: 0: spendable balance 0atom is smaller than 1atom: insufficient funds']);
  t.equal(hex(res.appHash), hex(before), 'failed sends leave the app hash as it was');
  const ctx = s.scratch();
  t.same(s.bank.keeper.getAllBalances(ctx, A), [
    { denom: 'atom', amount: 7n },
    { denom: 'stake', amount: 1000n },
  ]);
  t.same(s.bank.keeper.getAllBalances(ctx, B), [{ denom: 'stake', amount: 50n }]);
});

t.test('MsgSend checks: send-disabled denom, blocked recipient, bad addresses', async (t) => {
  const s = setup(t, { ...GENESIS, balances: [...GENESIS.balances, { address: CAROL, coins: [{ denom: 'locked', amount: '5' }] }] });
  await s.init();
  const res = await s.block([
    sendTx(CAROL, ALICE, [{ denom: 'locked', amount: '1' }]),
    sendTx(ALICE, codec.encode(moduleAddress('fee_collector')), [{ denom: 'stake', amount: '1' }]),
    sendTx(ALICE, 'chain1xyz', [{ denom: 'stake', amount: '1' }]),
    sendTx('cosmos1qqqq', ALICE, [{ denom: 'stake', amount: '1' }]),
  ]);
  t.same([res.txResults[0]!.code, res.txResults[0]!.codespace, res.txResults[0]!.log], [5, 'bank', 'failed to execute message; message index: 0: locked transfers are currently disabled: send transactions are disabled']);
  t.same([res.txResults[1]!.code, res.txResults[1]!.log], [4, `failed to execute message; message index: 0: ${codec.encode(moduleAddress('fee_collector'))} is not allowed to receive funds: unauthorized`]);
  t.equal(res.txResults[2]!.code, 7);
  t.match(res.txResults[2]!.log, /^failed to execute message; message index: 0: invalid to address: decoding bech32 failed: .*: invalid address$/);
  t.equal(res.txResults[3]!.code, 7, 'a bad signer address fails before the ante chain');
  t.match(res.txResults[3]!.log, /^invalid from address: decoding bech32 failed/);
});

t.test('mint, burn and supply', async (t) => {
  const s = setup(t, GENESIS);
  await s.init();
  await s.block();
  const ctx = s.scratch();
  const k = s.bank.keeper;
  k.mintCoins(ctx, 'mint', [{ denom: 'stake', amount: 10n }]);
  t.same(k.getSupply(ctx, 'stake'), { denom: 'stake', amount: 1060n });
  t.same(k.getBalance(ctx, moduleAddress('mint'), 'stake').amount, 10n);
  k.sendCoinsFromModuleToModule(ctx, 'mint', 'burner', [{ denom: 'stake', amount: 4n }]);
  k.burnCoins(ctx, 'burner', [{ denom: 'stake', amount: 4n }]);
  t.same(k.getSupply(ctx, 'stake'), { denom: 'stake', amount: 1056n });
  k.sendCoinsFromAccountToModule(ctx, A, 'burner', [{ denom: 'atom', amount: 7n }]);
  k.burnCoins(ctx, 'burner', [{ denom: 'atom', amount: 7n }]);
  t.same(k.getTotalSupply(ctx), [{ denom: 'stake', amount: 1056n }], 'a supply of zero disappears');
  t.throws(() => k.mintCoins(ctx, 'burner', [{ denom: 'stake', amount: 1n }]), /module account burner does not have permissions to mint tokens: unauthorized/);
  t.throws(() => k.burnCoins(ctx, 'mint', [{ denom: 'stake', amount: 1n }]), /does not have permissions to burn tokens/);
  t.throws(() => k.mintCoins(ctx, 'nobody', [{ denom: 'stake', amount: 1n }]), /module account nobody does not exist: unknown address/);
  t.throws(() => k.sendCoinsFromModuleToAccount(ctx, 'mint', moduleAddress('burner'), [{ denom: 'stake', amount: 1n }]), /is not allowed to receive funds/);
  const evs = ctx.events.events().map((e) => e.type);
  t.same(evs.slice(0, 2), ['coin_received', 'coinbase']);
  t.ok(evs.includes('burn'));
});

t.test('queries', async (t) => {
  const s = setup(t, GENESIS);
  await s.init();
  await s.block();
  t.same(await s.q('Balance', { address: ALICE, denom: 'stake' }), { code: 0, log: '', body: { balance: { denom: 'stake', amount: '1000' } } });
  t.same((await s.q('AllBalances', { address: ALICE })).body, {
    balances: [
      { denom: 'atom', amount: '7' },
      { denom: 'stake', amount: '1000' },
    ],
    pagination: { next_key: null, total: '2' },
  });
  const page = (await s.q('AllBalances', { address: ALICE, pagination: { limit: '1' } })).body;
  t.same(page.balances, [{ denom: 'atom', amount: '7' }]);
  t.equal(Buffer.from(page.pagination.next_key, 'base64').toString(), 'stake', 'next_key is the denom');
  const page2 = (await s.q('AllBalances', { address: ALICE, pagination: { key: page.pagination.next_key, limit: '1' } })).body;
  t.same(page2.balances, [{ denom: 'stake', amount: '1000' }]);
  t.same((await s.q('TotalSupply', {})).body.supply, [
    { denom: 'atom', amount: '7' },
    { denom: 'stake', amount: '1050' },
  ]);
  t.same((await s.q('SupplyOf', { denom: 'stake' })).body, { amount: { denom: 'stake', amount: '1050' } });
  t.same((await s.q('Params', {})).body, { params: { send_enabled: [], default_send_enabled: true } });
  t.equal((await s.q('DenomMetadata', { denom: 'stake' })).body.metadata.name, 'Stake');
  t.same((await s.q('DenomOwners', { denom: 'stake' })).body.denom_owners.map((o: { address: string }) => o.address).sort(), [ALICE, BOB].sort());
  t.same(await s.q('DenomMetadata', { denom: 'nope' }), { code: 22, log: 'rpc error: code = NotFound desc = client metadata for denom nope: key not found', body: undefined });
  const bad = await s.q('Balance', { address: 'chain1bad', denom: 'stake' });
  t.equal(bad.code, 18);
  t.match(bad.log, /^rpc error: code = InvalidArgument desc = invalid address: decoding bech32 failed: .*: invalid request$/);
  t.same(await s.q('Balance', { address: ALICE, denom: '1x' }), { code: 18, log: 'rpc error: code = InvalidArgument desc = invalid denom: 1x: invalid request', body: undefined });
  // queryObject callers may pass the JSON shape; the answer is the response message.
  t.match(s.app.queryObject('/chain.bank.v1beta1.Query/Balance', { address: BOB, denom: 'stake' }).response, { balance: { denom: 'stake', amount: '50' } });
});
