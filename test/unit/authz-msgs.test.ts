/**
 * x/authz messages through a real BaseApp (LMDB, bank + authz, JSON and protobuf txs; and the chain
 * app with auth and signed txs, test/helpers/chainapp.ts): the spec §3
 * grant lifecycle (grant, overwrite, exec within the grant, exec beyond it refused, revoke,
 * expiry pruned at BeginBlock) and the SDK's errors and events for MsgGrant, MsgExec, MsgRevoke
 * (cosmos/cosmos-sdk:x/authz/keeper/keeper.go, cosmos/cosmos-sdk:baseapp/baseapp.go).
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { AnySchema } from '@bufbuild/protobuf/wkt';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { AbciEvent, ExecTxResult, RequestFinalizeBlock } from '../../src/abci/types.js';
import { Bech32Codec } from '../../src/app/address.js';
import { BaseApp } from '../../src/app/baseapp.js';
import { utf8 } from '../../src/app/bytes.js';
import { Context, ExecMode } from '../../src/app/context.js';
import { InfiniteGasMeter } from '../../src/app/gas.js';
import { CacheKVStore, LmdbReadStore, PrefixStore } from '../../src/app/store.js';
import { jsonTxDecoder, type TxDecoder } from '../../src/app/tx.js';
import { BankModule } from '../../src/app/modules/bank/index.js';
import { AuthzModule, GRANT_QUEUE_PREFIX, GRANTEE_INDEX_PREFIX, grantKey } from '../../src/app/modules/authz/index.js';
import { GenericAuthorizationSchema, GrantSchema } from '../../src/gen/chain/authz/v1beta1/authz_pb.js';
import { QueryGrantsRequestSchema, QueryGrantsResponseSchema } from '../../src/gen/chain/authz/v1beta1/query_pb.js';
import { MsgExecResponseSchema, MsgExecSchema, MsgGrantSchema } from '../../src/gen/chain/authz/v1beta1/tx_pb.js';
import { TxMsgDataSchema } from '../../src/gen/chain/base/abci/v1beta1/abci_pb.js';
import { SendAuthorizationSchema } from '../../src/gen/chain/bank/v1beta1/authz_pb.js';
import { MsgSendSchema } from '../../src/gen/chain/bank/v1beta1/tx_pb.js';
import { AuthInfoSchema, TxBodySchema } from '../../src/gen/chain/tx/v1beta1/tx_pb.js';
import { SPEC_NAMES } from '../../src/names/index.js';
import { packAny } from '../../src/proto/registry.js';
import { encodeAuthInfo, encodeTxBody, encodeTxRaw, protoTxDecoder } from '../../src/tx/codec.js';
import { defaultConsensusParams } from '../../src/types/params.js';
import { CHAIN_ID, DENOM, DEV_BALANCE, GENESIS_TIME, startChain } from '../helpers/chainapp.js';
import { anyOf, buildTx, devKeys, freshKey, msgSend as msgSendAny, type DevAccount } from '../helpers/txsign.js';

/**
 * BaseApp keeps its routes private; authz asks it for `msgRoute(typeUrl)` (requested of the lead).
 * Until BaseApp has it, the test app gets it here, over the same route table BaseApp dispatches
 * through, so MsgExec runs the real bank route.
 */
const baseProto = BaseApp.prototype as unknown as { msgRoute?: (url: string) => unknown };
if (typeof baseProto.msgRoute !== 'function') {
  baseProto.msgRoute = function (this: { msgRoutes: Map<string, unknown> }, url: string) {
    return this.msgRoutes.get(SPEC_NAMES.parseTypeUrl(url));
  };
}

const codec = new Bech32Codec('chain');
const A = new Uint8Array(20).fill(0xa1);
const B = new Uint8Array(20).fill(0xb2);
const C = new Uint8Array(20).fill(0xc3);
const D = new Uint8Array(20).fill(0xd4);
const ALICE = codec.encode(A);
const BOB = codec.encode(B);
const CAROL = codec.encode(C);
const DAVE = codec.encode(D);
const SEC = 1_000_000_000n;
/** 2026-01-01T00:00:00Z */
const T0 = 1_767_225_600n * SEC;
const iso = (ns: bigint) => new Date(Number(ns / 1_000_000n)).toISOString().replace('.000Z', 'Z');

const SEND_AUTH = '/chain.bank.v1beta1.SendAuthorization';
const GENERIC_AUTH = '/chain.authz.v1beta1.GenericAuthorization';
const STAKE_AUTH = '/chain.staking.v1beta1.StakeAuthorization';
const MSG_SEND = '/chain.bank.v1beta1.MsgSend';

const BANK_GENESIS = {
  params: { send_enabled: [], default_send_enabled: true },
  balances: [
    { address: ALICE, coins: [{ denom: 'stake', amount: '1000' }] },
    { address: DAVE, coins: [{ denom: 'stake', amount: '50' }] },
  ],
  supply: [],
  denom_metadata: [],
  send_enabled: [],
};

function setup(t: Test, opts: { txDecoder?: TxDecoder; authzGenesis?: unknown } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  const env: RootDatabase = open({ path: dir, maxDbs: 16 });
  const db: Database<Uint8Array, Uint8Array> = env.openDB({ name: 'app', encoding: 'binary', keyEncoding: 'binary' });
  const bank = new BankModule({ moduleAccountPermissions: { fee_collector: [] } });
  const authz = new AuthzModule({ bank: bank.keeper });
  const app = new BaseApp({ bech32Prefix: 'chain' }, { db, modules: [bank, authz], txDecoder: opts.txDecoder ?? jsonTxDecoder });
  t.teardown(async () => {
    await env.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  let height = 0n;
  let time = T0;
  const init = () =>
    app.initChain({
      time: T0,
      chainId: 'authz-test',
      consensusParams: defaultConsensusParams(),
      validators: [],
      appStateBytes: utf8(JSON.stringify({ bank: BANK_GENESIS, authz: opts.authzGenesis ?? { authorization: [] } })),
      initialHeight: 1n,
    });
  /** One block at `at` (default: one second after the last). */
  const block = async (txs: Uint8Array[] = [], at?: bigint) => {
    height++;
    time = at ?? time + SEC;
    const req: RequestFinalizeBlock = {
      txs,
      decidedLastCommit: { round: 0, votes: [] },
      hash: new Uint8Array(32),
      height,
      time,
      nextValidatorsHash: new Uint8Array(32),
      proposerAddress: new Uint8Array(20),
    };
    const res = await app.finalizeBlock(req);
    env.transactionSync(() => app.commit());
    return res;
  };
  /** One tx in its own block; its result. */
  const run = async (msgs: unknown[], at?: bigint): Promise<ExecTxResult> => (await block([jsonTx(msgs)], at)).txResults[0]!;
  const scratch = () => {
    const cache = new CacheKVStore(new LmdbReadStore(db));
    return new Context({
      mode: ExecMode.Finalize,
      chainId: 'authz-test',
      height: height + 1n,
      time,
      gasMeter: new InfiniteGasMeter(),
      addressCodec: codec,
      stores: (sk) => new PrefixStore(cache, Uint8Array.from([1, sk.length, ...Buffer.from(sk)])),
    });
  };
  const balance = (addr: Uint8Array) => bank.keeper.getBalance(scratch(), addr, 'stake').amount;
  const grants = async (granter: string, grantee: string, msgTypeUrl = '') => {
    const r = await app.query({
      path: '/chain.authz.v1beta1.Query/Grants',
      data: toBinary(QueryGrantsRequestSchema, create(QueryGrantsRequestSchema, { granter, grantee, msgTypeUrl })),
      height: 0n,
      prove: false,
    });
    return { code: r.code, log: r.log, res: r.code === 0 ? fromBinary(QueryGrantsResponseSchema, r.value) : undefined };
  };
  /** Raw authz store keys under a one-byte prefix. */
  const keysUnder = (prefix: Uint8Array) => [...new PrefixStore(scratch().store('authz'), prefix).iterate()].map((p) => Buffer.from(p.key));
  return { app, bank, authz, init, block, run, scratch, balance, grants, keysUnder, now: () => time };
}

function jsonTx(msgs: unknown[], gas = '1000000'): Uint8Array {
  return utf8(JSON.stringify({ body: { messages: msgs, memo: '' }, auth_info: { fee: { amount: [], gas_limit: gas } } }));
}

const coins = (n: number, denom = 'stake') => [{ denom, amount: String(n) }];
const sendAuth = (limit: number, allow: string[] = []) => ({ '@type': SEND_AUTH, spend_limit: coins(limit), allow_list: allow });
const grantMsg = (granter: string, grantee: string, authorization: unknown, expiration?: bigint) => ({
  '@type': '/chain.authz.v1beta1.MsgGrant',
  granter,
  grantee,
  grant: { authorization, expiration: expiration === undefined ? null : iso(expiration) },
});
const send = (from: string, to: string, n: number, typeUrl = MSG_SEND) => ({ '@type': typeUrl, from_address: from, to_address: to, amount: coins(n) });
const execMsg = (grantee: string, msgs: unknown[]) => ({ '@type': '/chain.authz.v1beta1.MsgExec', grantee, msgs });
const revokeMsg = (granter: string, grantee: string, url: string) => ({ '@type': '/chain.authz.v1beta1.MsgRevoke', granter, grantee, msg_type_url: url });

function eventsOf(r: ExecTxResult, type: string): AbciEvent[] {
  return r.events.filter((e) => e.type === type);
}
function attrs(e: AbciEvent): Record<string, string> {
  return Object.fromEntries(e.attributes.map((a) => [a.key, a.value]));
}
function spendLimit(res: { grants: { authorization?: { typeUrl: string; value: Uint8Array } }[] } | undefined): string {
  const a = res?.grants[0]?.authorization;
  if (a === undefined) return 'none';
  return fromBinary(SendAuthorizationSchema, a.value)
    .spendLimit.map((c) => `${c.amount}${c.denom}`)
    .join(',');
}
function ok(t: Test, r: ExecTxResult, what: string): void {
  t.equal(r.code, 0, `${what}: code 0${r.code === 0 ? '' : ` (${r.codespace} ${r.code}: ${r.log})`}`);
}

t.test('spec §3 lifecycle: grant, overwrite, exec within, exec beyond refused, spend to zero, revoke', async (t) => {
  const s = setup(t);
  await s.init();
  await s.block();

  // grant absent → MsgGrant → grant present, EventGrant with JSON-quoted values in key order.
  let r = await s.run([grantMsg(ALICE, BOB, sendAuth(100), T0 + 3600n * SEC)]);
  ok(t, r, 'grant');
  const [ev] = eventsOf(r, 'chain.authz.v1beta1.EventGrant');
  t.ok(ev, 'EventGrant emitted');
  t.same(
    ev!.attributes.map((a) => [a.key, a.value]),
    [
      ['grantee', JSON.stringify(BOB)],
      ['granter', JSON.stringify(ALICE)],
      ['msg_type_url', JSON.stringify(MSG_SEND)],
      ['msg_index', '0'],
    ],
  );
  t.same(attrs(eventsOf(r, 'message')[0]!), { action: '/chain.authz.v1beta1.MsgGrant', sender: ALICE, module: 'authz', msg_index: '0' });
  let g = await s.grants(ALICE, BOB, MSG_SEND);
  t.equal(spendLimit(g.res), '100stake');
  t.equal(g.res!.grants[0]!.expiration?.seconds, (T0 + 3600n * SEC) / SEC);
  t.equal(g.res!.grants[0]!.authorization?.typeUrl, SEND_AUTH, 'the spec spelling is emitted');

  // Same (granter, grantee, type) triple: overwritten, one grant, the queue entry moved.
  r = await s.run([grantMsg(ALICE, BOB, sendAuth(300), T0 + 7200n * SEC)]);
  ok(t, r, 'overwrite');
  g = await s.grants(ALICE, BOB);
  t.equal(g.res!.grants.length, 1, 'one grant for the triple');
  t.equal(spendLimit(g.res), '300stake');
  t.equal(g.res!.grants[0]!.expiration?.seconds, (T0 + 7200n * SEC) / SEC);
  const queue = s.keysUnder(GRANT_QUEUE_PREFIX);
  t.equal(queue.length, 1, 'one queue item');
  t.equal(queue[0]!.subarray(0, 29).toString(), '2026-01-01T02:00:00.000000000', 'queued at the new expiration');

  // Exec within the grant: the send runs, the limit goes down, events carry authz_msg_index.
  r = await s.run([execMsg(BOB, [send(ALICE, CAROL, 120)])]);
  ok(t, r, 'exec within');
  t.equal(s.balance(A), 880n);
  t.equal(s.balance(C), 120n);
  t.equal(spendLimit((await s.grants(ALICE, BOB, MSG_SEND)).res), '180stake');
  const transfer = eventsOf(r, 'transfer')[0]!;
  t.same(attrs(transfer), { recipient: CAROL, sender: ALICE, amount: '120stake', authz_msg_index: '0', msg_index: '0' });
  t.same(attrs(eventsOf(r, 'message')[0]!), { action: '/chain.authz.v1beta1.MsgExec', sender: BOB, module: 'authz', msg_index: '0' }, 'the tx-level message event leads');
  t.same(attrs(eventsOf(r, 'message')[1]!), { sender: ALICE, authz_msg_index: '0', msg_index: '0' }, "bank's own message event, re-emitted");
  t.equal(eventsOf(r, 'chain.authz.v1beta1.EventRevoke').length, 0, 'an update emits nothing');
  const data = fromBinary(TxMsgDataSchema, r.data);
  t.equal(data.msgResponses[0]!.typeUrl, '/chain.authz.v1beta1.MsgExecResponse');
  const execRes = fromBinary(MsgExecResponseSchema, data.msgResponses[0]!.value);
  t.same(execRes.results.map((b) => b.length), [0], 'results[0] = MsgSendResponse bytes (empty)');

  // Beyond the grant: refused with the SDK's error, nothing moves.
  r = await s.run([execMsg(BOB, [send(ALICE, CAROL, 200)])]);
  t.equal(r.code, 5, 'insufficient funds');
  t.equal(r.codespace, 'sdk');
  t.match(r.log, /requested amount is more than spend limit: insufficient funds$/);
  t.equal(s.balance(A), 880n);
  t.equal(spendLimit((await s.grants(ALICE, BOB, MSG_SEND)).res), '180stake', 'grant unchanged');

  // Spending exactly what is left deletes the grant (Accept → Delete) and emits EventRevoke.
  r = await s.run([execMsg(BOB, [send(ALICE, CAROL, 180)])]);
  ok(t, r, 'exec to zero');
  t.same(attrs(eventsOf(r, 'chain.authz.v1beta1.EventRevoke')[0]!), {
    grantee: JSON.stringify(BOB),
    granter: JSON.stringify(ALICE),
    msg_type_url: JSON.stringify(MSG_SEND),
    msg_index: '0',
  });
  g = await s.grants(ALICE, BOB, MSG_SEND);
  t.equal(g.code, 6);
  t.equal(g.log, `authorization not found for ${MSG_SEND} type: authorization not found: unknown request`);
  t.same(s.keysUnder(GRANT_QUEUE_PREFIX), [], 'queue entry gone with the grant');
  t.same(s.keysUnder(GRANTEE_INDEX_PREFIX), [], 'index entry gone with the grant');

  // Re-grant (generic), revoke, revoke again.
  ok(t, await s.run([grantMsg(ALICE, BOB, { '@type': GENERIC_AUTH, msg: MSG_SEND })]), 'generic grant');
  r = await s.run([revokeMsg(ALICE, BOB, MSG_SEND)]);
  ok(t, r, 'revoke');
  t.equal(eventsOf(r, 'chain.authz.v1beta1.EventRevoke').length, 1);
  t.same(attrs(eventsOf(r, 'message')[0]!), { action: '/chain.authz.v1beta1.MsgRevoke', sender: ALICE, module: 'authz', msg_index: '0' });
  t.equal((await s.grants(ALICE, BOB)).res!.grants.length, 0);
  r = await s.run([revokeMsg(ALICE, BOB, MSG_SEND)]);
  t.equal(r.codespace, 'authz');
  t.equal(r.code, 2);
  t.match(r.log, /failed to delete grant with given granter: chain1.*, grantee: chain1.* & msgType: \/chain\.bank\.v1beta1\.MsgSend: authorization not found$/);
  // After the revoke an Exec has no grant.
  r = await s.run([execMsg(BOB, [send(ALICE, CAROL, 1)])]);
  t.equal(r.codespace, 'authz');
  t.equal(r.code, 2);
  t.match(r.log, /failed to get grant with given granter: .* authorization not found$/);
});

t.test('expiry: live at its own time, pruned by the first BeginBlock after it', async (t) => {
  const s = setup(t);
  await s.init();
  await s.block([], T0 + SEC);
  const exp = T0 + 10n * SEC;
  ok(t, await s.run([grantMsg(ALICE, BOB, sendAuth(100), exp), grantMsg(ALICE, CAROL, { '@type': GENERIC_AUTH, msg: MSG_SEND })], T0 + 2n * SEC), 'grants');
  t.equal(s.keysUnder(GRANT_QUEUE_PREFIX).length, 1, 'only the expiring grant is queued');

  // Block time == expiration: not expired (Before is strict), and pruning leaves it.
  const r = await s.run([execMsg(BOB, [send(ALICE, DAVE, 10)])], exp);
  ok(t, r, 'exec at the expiration time');
  t.equal(spendLimit((await s.grants(ALICE, BOB, MSG_SEND)).res), '90stake');

  // The next block is past it: BeginBlock prunes grant, queue item and index entry, silently.
  const res = await s.block([], exp + 1n);
  t.equal(res.events.length, 0, 'pruning emits no events');
  t.equal((await s.grants(ALICE, BOB, MSG_SEND)).code, 6, 'pruned');
  t.same(s.keysUnder(GRANT_QUEUE_PREFIX), []);
  t.equal(s.keysUnder(GRANTEE_INDEX_PREFIX).length, 1, "only CAROL's index entry is left");
  t.equal((await s.grants(ALICE, CAROL, MSG_SEND)).code, 0, 'the grant without expiration stays');
  const after = await s.run([execMsg(BOB, [send(ALICE, DAVE, 10)])]);
  t.equal(after.codespace, 'authz');
  t.equal(after.code, 2, 'exec after pruning: no grant');
});

t.test('MsgGrant refusals, in the SDK order and with its codes', async (t) => {
  const s = setup(t);
  await s.init();
  await s.block();
  const cases: [string, unknown, string, number, RegExp][] = [
    ['granter == grantee', grantMsg(ALICE, ALICE, sendAuth(1)), 'authz', 7, /^grantee and granter should be different$/],
    ['granter == grantee, other case', grantMsg(ALICE, ALICE.toUpperCase(), sendAuth(1)), 'authz', 7, /should be different/],
    ['bad grantee', grantMsg(ALICE, 'chain1xyz', sendAuth(1)), 'sdk', 7, /^invalid grantee address: .*: invalid address$/],
    ['expiration in the past', grantMsg(ALICE, BOB, sendAuth(1), T0), 'authz', 3, /^expiration must be after the current block time \(2026-01-01T00:00:\d\dZ\), got 2026-01-01T00:00:00Z: expiration time/],
    ['expiration == block time', (at: bigint) => grantMsg(ALICE, BOB, sendAuth(1), at), 'authz', 3, /^expiration must be after the current block time \((.*)\), got \1: /],
    ['no authorization', { ...grantMsg(ALICE, BOB, null), grant: {} }, 'sdk', 29, /^expected authz.Authorization, got <nil>: invalid type$/],
    ['not an authorization type', grantMsg(ALICE, BOB, send(ALICE, BOB, 1)), 'sdk', 2, /no concrete type registered for type URL \/chain.bank.v1beta1.MsgSend against interface \*authz.Authorization: tx parse error/],
    ['unregistered type', grantMsg(ALICE, BOB, { '@type': '/chain.foo.v1.Bar' }), 'sdk', 2, /tx parse error/],
    ['empty spend limit', grantMsg(ALICE, BOB, { '@type': SEND_AUTH, spend_limit: [] }), 'sdk', 10, /^spend limit cannot be nil: invalid coins$/],
    ['zero spend limit', grantMsg(ALICE, BOB, sendAuth(0)), 'sdk', 10, /^spend limit must be positive: invalid coins$/],
    ['duplicate allow list', grantMsg(ALICE, BOB, sendAuth(5, [CAROL, CAROL])), 'bank', 8, /^duplicate entry$/],
    ['allow list not addresses', grantMsg(ALICE, BOB, sendAuth(5, ['nope'])), 'sdk', 7, /invalid allow list address/],
    ['stake type unspecified', grantMsg(ALICE, BOB, { '@type': STAKE_AUTH, allow_list: { address: [codec.encode(A).replace('chain', 'chainvaloper')] } }), 'authz', 4, /^unknown authorization type$/],
    ['stake negative max tokens', grantMsg(ALICE, BOB, { '@type': STAKE_AUTH, max_tokens: { denom: 'stake', amount: '-1' }, authorization_type: 'AUTHORIZATION_TYPE_DELEGATE' }), 'authz', 12, /^negative coin amount: -1stake: max tokens/],
    ['stake without validators', grantMsg(ALICE, BOB, { '@type': STAKE_AUTH, authorization_type: 'AUTHORIZATION_TYPE_DELEGATE' }), 'sdk', 18, /both allowed & deny list cannot be empty/],
    ['generic for an unroutable message', grantMsg(ALICE, BOB, { '@type': GENERIC_AUTH, msg: '/chain.foo.v1.MsgBar' }), 'sdk', 29, /^\/chain.foo.v1.MsgBar doesn't exist.: invalid type$/],
  ];
  for (const [name, m, codespace, code, log] of cases) {
    const at = s.now() + SEC;
    const r = await s.run([typeof m === 'function' ? (m as (at: bigint) => unknown)(at) : m], at);
    t.equal(`${r.codespace}/${r.code}`, `${codespace}/${code}`, `${name}: code`);
    t.match(r.log.replace(/^failed to execute message; message index: 0: /, ''), log, `${name}: log`);
  }
  t.equal((await s.grants(ALICE, BOB)).res!.grants.length, 0, 'nothing was stored');
});

t.test('MsgExec: own messages need no grant, allow list, atomicity, unknown routes', async (t) => {
  const s = setup(t);
  await s.init();
  await s.block();

  // The signer is the executor itself: runs without any grant (keeper.go DispatchActions).
  let r = await s.run([execMsg(DAVE, [send(DAVE, CAROL, 5)])]);
  ok(t, r, 'own message');
  t.equal(s.balance(C), 5n);

  // allow_list: only CAROL may receive.
  ok(t, await s.run([grantMsg(ALICE, BOB, sendAuth(100, [CAROL]))]), 'grant with allow list');
  r = await s.run([execMsg(BOB, [send(ALICE, DAVE, 10)])]);
  t.equal(`${r.codespace}/${r.code}`, 'sdk/4');
  t.match(r.log, new RegExp(`cannot send to ${DAVE} address: unauthorized$`));
  ok(t, await s.run([execMsg(BOB, [send(ALICE, CAROL, 10)])]), 'allowed recipient');

  // Two messages, the second fails: neither the send nor the grant update survives.
  const before = [s.balance(A), s.balance(C)];
  r = await s.run([execMsg(BOB, [send(ALICE, CAROL, 30), send(ALICE, CAROL, 100)])]);
  t.equal(r.code, 5);
  t.same([s.balance(A), s.balance(C)], before, 'atomic');
  t.equal(spendLimit((await s.grants(ALICE, BOB, MSG_SEND)).res), '90stake');

  // Both within the limit: results for each, authz_msg_index 0 and 1.
  r = await s.run([execMsg(BOB, [send(ALICE, CAROL, 30), send(ALICE, CAROL, 40)])]);
  ok(t, r, 'two messages');
  t.same(eventsOf(r, 'transfer').map((e) => attrs(e)['authz_msg_index']), ['0', '1']);
  t.equal(spendLimit((await s.grants(ALICE, BOB, MSG_SEND)).res), '20stake');

  // The inner message fails in its handler: the error is wrapped with the message text.
  ok(t, await s.run([grantMsg(DAVE, BOB, { '@type': GENERIC_AUTH, msg: MSG_SEND })]), 'generic grant from DAVE');
  r = await s.run([execMsg(BOB, [send(DAVE, CAROL, 10_000)])]);
  t.equal(r.code, 5);
  t.match(r.log, /^failed to execute message; message index: 0: failed to execute message; message from_address:"chain1.*" to_address:"chain1.*" amount:<denom:"stake" amount:"10000" > : spendable balance/);

  // Empty msgs.
  r = await s.run([execMsg(BOB, [])]);
  t.equal(`${r.codespace}/${r.code}`, 'sdk/18');
  t.match(r.log, /messages cannot be empty: invalid request$/);

  // StakeAuthorization grants are stored and queryable; Exec of a staking message has no route.
  const valoper = new Bech32Codec('chainvaloper').encode(C);
  r = await s.run([grantMsg(ALICE, BOB, { '@type': STAKE_AUTH, allow_list: { address: [valoper] }, authorization_type: 'AUTHORIZATION_TYPE_DELEGATE' })]);
  ok(t, r, 'stake grant');
  const sg = await s.grants(ALICE, BOB, '/chain.staking.v1beta1.MsgDelegate');
  t.equal(sg.res?.grants[0]?.authorization?.typeUrl, STAKE_AUTH);
  r = await s.run([execMsg(BOB, [{ '@type': '/chain.staking.v1beta1.MsgDelegate', delegator_address: ALICE, validator_address: valoper, amount: { denom: 'stake', amount: '1' } }])]);
  t.equal(`${r.codespace}/${r.code}`, 'sdk/6');
  t.match(r.log, /unrecognized message route: \/chain.staking.v1beta1.MsgDelegate: unknown request$/);
});

t.test('upstream spellings are accepted, the spec spelling is stored and emitted', async (t) => {
  const s = setup(t);
  await s.init();
  await s.block();
  const r = await s.run([
    {
      '@type': '/cosmos.authz.v1beta1.MsgGrant',
      granter: ALICE,
      grantee: BOB,
      grant: { authorization: { '@type': '/cosmos.authz.v1beta1.GenericAuthorization', msg: '/cosmos.bank.v1beta1.MsgSend' }, expiration: null },
    },
  ]);
  ok(t, r, 'grant in upstream spelling');
  t.same(attrs(eventsOf(r, 'chain.authz.v1beta1.EventGrant')[0]!)['msg_type_url'], JSON.stringify(MSG_SEND));
  const g = await s.grants(ALICE, BOB, '/cosmos.bank.v1beta1.MsgSend');
  t.equal(g.code, 0, 'found by the upstream type URL');
  t.equal(g.res!.grants[0]!.authorization!.typeUrl, GENERIC_AUTH);
  t.equal(fromBinary(GenericAuthorizationSchema, g.res!.grants[0]!.authorization!.value).msg, MSG_SEND);
  t.equal(g.res!.grants[0]!.expiration, undefined, 'no expiration');
  ok(t, await s.run([execMsg(BOB, [send(ALICE, CAROL, 7, '/cosmos.bank.v1beta1.MsgSend')])]), 'exec in upstream spelling');
  t.equal(s.balance(C), 7n);
  const stored = s.scratch().store('authz').get(grantKey(A, B, MSG_SEND));
  t.equal(fromBinary(GrantSchema, stored!).authorization!.typeUrl, GENERIC_AUTH, 'canonical in state');
});

t.test('protobuf txs (protoTxDecoder): MsgGrant and a MsgExec of a packed MsgSend', async (t) => {
  const s = setup(t, { txDecoder: protoTxDecoder });
  await s.init();
  await s.block();
  const tx = (msgs: ReturnType<typeof packAny>[]) =>
    encodeTxRaw({
      bodyBytes: encodeTxBody(create(TxBodySchema, { messages: msgs })),
      authInfoBytes: encodeAuthInfo(create(AuthInfoSchema, { fee: { amount: [], gasLimit: 1_000_000n } })),
      signatures: [],
    });
  const grant = packAny(
    MsgGrantSchema,
    create(MsgGrantSchema, {
      granter: ALICE,
      grantee: BOB,
      grant: {
        authorization: packAny(SendAuthorizationSchema, create(SendAuthorizationSchema, { spendLimit: [{ denom: 'stake', amount: '50' }] })),
        expiration: { seconds: T0 / SEC + 3600n, nanos: 0 },
      },
    }),
  );
  let res = await s.block([tx([grant])]);
  ok(t, res.txResults[0]!, 'protobuf grant');
  const sendAny = packAny(MsgSendSchema, create(MsgSendSchema, { fromAddress: ALICE, toAddress: CAROL, amount: [{ denom: 'stake', amount: '20' }] }));
  const exec = packAny(MsgExecSchema, create(MsgExecSchema, { grantee: BOB, msgs: [sendAny] }));
  res = await s.block([tx([exec])]);
  ok(t, res.txResults[0]!, 'protobuf exec');
  t.equal(s.balance(C), 20n);
  t.equal(spendLimit((await s.grants(ALICE, BOB, MSG_SEND)).res), '30stake');
  // An Any that is not a registered type never reaches authz: the tx decoder refuses it.
  const bad = packAny(MsgExecSchema, create(MsgExecSchema, { grantee: BOB, msgs: [create(AnySchema, { typeUrl: '/chain.staking.v1beta1.MsgDelegate', value: new Uint8Array() })] }));
  res = await s.block([tx([bad])]);
  t.equal(`${res.txResults[0]!.codespace}/${res.txResults[0]!.code}`, 'sdk/2');
});

t.test('signed txs through the chain app (auth + bank + authz): direct and amino, grantee account created', async (t) => {
  const h = await startChain(t);
  const [alice, bob] = devKeys();
  const carol = freshKey(7);
  const signer = (key: DevAccount, mode: 'direct' | 'amino') => {
    const acc = h.account(key.address)!;
    return { key, accountNumber: acc.accountNumber, sequence: acc.sequence, mode };
  };
  const grant = anyOf(
    MsgGrantSchema,
    create(MsgGrantSchema, {
      granter: alice!.bech32,
      grantee: carol.bech32,
      grant: {
        authorization: packAny(SendAuthorizationSchema, create(SendAuthorizationSchema, { spendLimit: [{ denom: DENOM, amount: '1000' }] })),
        expiration: { seconds: GENESIS_TIME / SEC + 86_400n, nanos: 0 },
      },
    }),
  );
  t.equal(h.account(carol.address), undefined, 'the grantee has no account yet');
  for (const mode of ['direct', 'amino'] as const) {
    const r = await h.block([buildTx({ chainId: CHAIN_ID, msgs: [grant], signers: [signer(alice!, mode)] }).bytes]);
    ok(t, r.txResults[0]!, `${mode} MsgGrant`);
  }
  t.ok(h.account(carol.address), 'MsgGrant created the grantee account');
  for (const mode of ['direct', 'amino'] as const) {
    const exec = anyOf(MsgExecSchema, create(MsgExecSchema, { grantee: carol.bech32, msgs: [msgSendAny(alice!.bech32, bob!.bech32, [{ denom: DENOM, amount: '100' }])] }));
    const r = await h.block([buildTx({ chainId: CHAIN_ID, msgs: [exec], signers: [signer(carol, mode)] }).bytes]);
    ok(t, r.txResults[0]!, `${mode} MsgExec`);
  }
  t.equal(h.balance(bob!.address), DEV_BALANCE + 200n);
});
