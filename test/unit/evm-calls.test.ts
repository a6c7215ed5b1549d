/**
 * eth_call's engine (src/app/modules/evm/calls.ts) inline and on the Piscina pool's thread
 * (src/pool/evm-calls.ts, workers/evm-call.worker.ts), over a real LMDB with the ERC-20 fixture:
 * both answer alike (values and geth's revert error), a state override never outlives its call,
 * and the worker follows the chain (a new block: the new balance at latest, the old one at the
 * older height).
 */
import t from 'tap';
import { createContractAddress, Address } from '@ethereumjs/util';
import { CallEngine, CallError, type CallRequest } from '../../src/app/modules/evm/calls.js';
import { createEvmCommon } from '../../src/evm/common.js';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { poolEvmCalls } from '../../src/pool/evm-calls.js';
import { startNodeApp } from '../helpers/node-app.js';
import { balanceOfData, balanceSlot, deployData, signTx, transferData, word } from '../helpers/evm.js';

const common = createEvmCommon({ chainId: 9000n });
const [A, B] = devAccounts().filter((a) => a.keyType === 'eth_secp256k1');
const token = createContractAddress(new Address(A!.address), 0n).bytes;

t.setTimeout(180_000);

t.test('the call engine inline and on the pool thread', async (t) => {
  const { file, spec, app, pool, block } = await startNodeApp(t);
  const tx = (nonce: bigint, data: Uint8Array, to?: Uint8Array) => signTx(common, { priv: A!.privateKey }, { nonce, data, gasLimit: 3_000_000n, price: 0n, ...(to ? { to } : {}) }).serialize();
  await block([tx(0n, deployData(1000n))]);
  await block([tx(1n, transferData(B!.address, 25n), token)]);

  const inline = new CallEngine({ keeper: app.evm!.keeper, queryContext: (h) => app.queryContext(h) });
  const poolCalls = poolEvmCalls(pool, { dbFile: file, app: spec });
  const req = (args: Partial<CallRequest['args']>, height = app.lastBlockHeight, kind: CallRequest['kind'] = 'call'): CallRequest => ({
    kind,
    height,
    latest: app.lastBlockHeight,
    time: 0n,
    gasLimit: 1n << 62n,
    gasCap: 50_000_000n,
    args: { value: 0n, data: new Uint8Array(0), ...args },
  });
  const bal = (who: Uint8Array) => req({ to: token, data: balanceOfData(who) });
  // Until its threads have loaded, the pool takes no call (the RPC runs it inline meanwhile).
  t.equal(poolCalls.calls(bal(B!.address)), undefined, 'a cold pool hands the call back (inline)');
  t.equal(await poolCalls.whenReady(), true, 'the call workers load');
  const onPool = (r: CallRequest) => {
    const p = poolCalls.calls(r);
    if (p === undefined) throw new Error('the loaded pool handed a call back');
    return p;
  };
  const both = async (r: CallRequest) => [await inline.handle(r).catch((e: unknown) => e), await onPool(r).catch((e: unknown) => e)];

  const [i1, p1] = await both(bal(B!.address));
  t.equal(BigInt(i1 as string), 25n, 'inline: balanceOf(B)');
  t.equal(p1, i1, 'pool: the same');

  // The start-up warm-up (CallEngine.warmUp: throw-away calls of a contract placed by a state
  // override at a scratch address) leaves nothing behind: no code there, in the engine's caches
  // or in the store, and the token reads as before.
  const scratch = Uint8Array.from({ length: 20 }, (_, i) => (i === 19 ? 0x0e : 0xee));
  await inline.warmUp({ height: app.lastBlockHeight, latest: app.lastBlockHeight, time: 0n, calls: 20 });
  t.equal(await inline.handle(req({ to: scratch, data: balanceOfData(B!.address) })), '0x', 'after the warm-up: no code at its scratch address (engine)');
  t.equal(app.evm!.keeper.code(app.queryContext(), scratch).length, 0, 'nor in the store');
  t.equal(BigInt((await inline.handle(bal(B!.address))) as string), 25n, 'after the warm-up: balanceOf(B) as before');

  // A stateDiff override is seen by its call only.
  const over = { ...bal(B!.address), args: { ...bal(B!.address).args, overrides: [{ address: token, stateDiff: [[balanceSlot(B!.address), word(777n)]] as [Uint8Array, Uint8Array][] }] } };
  const [i2, p2] = await both(over);
  t.equal(BigInt(i2 as string), 777n, 'inline: override seen');
  t.equal(p2, i2, 'pool: override seen');
  const [i3, p3] = await both(bal(B!.address));
  t.equal(BigInt(i3 as string), 25n, 'inline: and gone afterwards');
  t.equal(p3, i3, 'pool: and gone afterwards');

  // A revert: geth's code 3 with the revert data, alike on both.
  const rev = req({ from: B!.address, to: token, data: transferData(A!.address, 10_000n) });
  const [i4, p4] = await both(rev);
  t.ok(i4 instanceof CallError && i4.rpcCode === 3 && i4.message.startsWith('execution reverted'), `inline: revert (${(i4 as Error).message})`);
  t.ok(p4 instanceof CallError, 'pool: a CallError too');
  t.same({ code: (p4 as CallError).rpcCode, message: (p4 as CallError).message, data: (p4 as CallError).data }, { code: (i4 as CallError).rpcCode, message: (i4 as CallError).message, data: (i4 as CallError).data });
  t.match((i4 as CallError).data, /^0x[0-9a-f]+$/, 'with the revert data');

  // These (a value, a revert before any write, a selector the token lacks) go through
  // src/evm/fast-call.ts: the same answers as @ethereumjs/evm's runCall through the same engine.
  const plain = (x: unknown) => (x instanceof CallError ? { code: x.rpcCode, message: x.message, data: x.data } : x);
  for (const r of [bal(B!.address), rev, req({ to: token, data: Uint8Array.from([1, 2, 3, 4]) })]) {
    const fast = plain(await inline.handle(r).catch((e: unknown) => e));
    inline.fastCalls = false;
    const lib = plain(await inline.handle(r).catch((e: unknown) => e));
    inline.fastCalls = true;
    t.same(fast, lib, 'the fast interpreter answers as the library');
  }

  // estimateGas and createAccessList agree.
  const est = req({ from: A!.address, to: token, data: transferData(B!.address, 1n) }, app.lastBlockHeight, 'estimate');
  const [i5, p5] = await both(est);
  t.equal(typeof i5, 'bigint', 'inline: an estimate');
  t.equal(p5, i5, 'pool: the same estimate');
  const [i6, p6] = await both({ ...est, kind: 'accessList' });
  t.same(p6, i6, 'pool: the same access list');

  // A new block: the worker renews its snapshot for latest; the older height still reads as before.
  const h2 = app.lastBlockHeight;
  await block([tx(2n, transferData(B!.address, 5n), token)]);
  const [i7, p7] = await both(bal(B!.address));
  t.equal(BigInt(i7 as string), 30n, 'inline: the new balance at latest');
  t.equal(p7, i7, 'pool: the new balance at latest');
  const [i8, p8] = await both(req({ to: token, data: balanceOfData(B!.address) }, h2));
  t.equal(BigInt(i8 as string), 25n, 'inline: the old balance at the older height');
  t.equal(p8, i8, 'pool: the old balance at the older height');

  // Calls in flight together go to the thread in batches: each still gets its own answer, in
  // order, a revert among them included, and the batch's other calls are not touched by it.
  const many = [bal(B!.address), rev, bal(A!.address), req({ to: token, data: balanceOfData(B!.address) }, h2), over, bal(B!.address)];
  const got = await Promise.all(many.map((r) => onPool(r).catch((e: unknown) => e)));
  const want = [];
  for (const r of many) want.push(await inline.handle(r).catch((e: unknown) => e));
  t.equal(BigInt(got[0] as string), 30n, 'batched: balanceOf(B) at latest');
  t.ok(got[1] instanceof CallError && (got[1] as CallError).rpcCode === 3, 'batched: the revert is its own');
  t.equal(BigInt(got[3] as string), 25n, 'batched: the older height');
  t.equal(BigInt(got[4] as string), 777n, 'batched: the override');
  t.equal(BigInt(got[5] as string), 30n, 'batched: the override is gone for the next call');
  t.same(
    got.map((g) => (g instanceof CallError ? { code: g.rpcCode, message: g.message, data: g.data } : g)),
    want.map((g) => (g instanceof CallError ? { code: g.rpcCode, message: g.message, data: g.data } : g)),
    'batched: the same answers as inline, one by one',
  );
});
