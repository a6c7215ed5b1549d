/**
 * src/evm/fast-tx.ts against @ethereumjs/vm's runTx, differentially: two state managers start
 * from the same state, one runs every tx through runTx, the other through runFastTx (runTx when
 * it declines); after each tx both give the same gas used, status, error text, return data, logs
 * and bloom, and hand over the same changes (flush: accounts, slots, deletions). Cases: TestToken
 * transfers (success, the require revert), every EIP-2200 path of SSTORE (set, clean write,
 * clear with its refund, dirty writes, restoring an original zero or non-zero value, re-creating
 * a cleared slot, no-ops, cold and warm), the refund cap, the 2300-gas sentry and out of gas at
 * every limit around a store, a store then REVERT, an invalid opcode, LOG0-LOG4, access-list
 * slots made warm, legacy / EIP-2930 / EIP-1559 fees with a base fee and a tip (coinbase paid),
 * a zero tip (the empty coinbase deleted), the calldata floor (EIP-7623). And what it declines:
 * value, a create, an uncovered opcode, a precompile, an account without code, a wrong nonce.
 */
import { createBlock } from '@ethereumjs/block';
import { Account, Address, createContractAddress, hexToBytes } from '@ethereumjs/util';
import { getCalldataFloorGas, type TypedTransaction } from '@ethereumjs/tx';
import { createVM, runTx, type VM } from '@ethereumjs/vm';
import t, { type Test } from 'tap';
import { createEvmCommon } from '../../src/evm/common.js';
import { FastCaller, type FastLog } from '../../src/evm/fast-call.js';
import { runFastTx, type FastTxResult } from '../../src/evm/fast-tx.js';
import { FlatStateManager, KVFlatState, MemoryKV, type StateChanges } from '../../src/evm/index.js';
import { concat, deployData, keccak, makeKeys, signTx, transferData, word, type TxSpec } from '../helpers/evm.js';

const common = createEvmCommon({ chainId: 9000n });
const COINBASE = hexToBytes('0x00000000000000000000000000000000c0ffee00');
const blockWith = (baseFee: bigint) =>
  createBlock({ header: { number: 9n, timestamp: 1_700_000_000n, gasLimit: 30_000_000n, baseFeePerGas: baseFee, coinbase: COINBASE } }, { common, skipConsensusFormatValidation: true });
let block = blockWith(3n);

interface Side {
  sm: FlatStateManager;
  vm: VM;
}
async function side(): Promise<Side> {
  const sm = new FlatStateManager(new KVFlatState(new MemoryKV()), { keccak256: keccak });
  const vm = await createVM({ common, stateManager: sm });
  return { sm, vm };
}
const lib = await side();
const fst = await side();
const fast = FastCaller.create(fst.vm.evm, common)!;
const [alice, bob] = makeKeys(2, 'fast-tx');
const nonces = new Map<string, bigint>();

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
/** The changes flush() hands over, in its order: the app creates missing auth accounts (their numbers) in it. */
function changesText(c: StateChanges): string {
  const accounts = c.accounts.map((a) => `${hex(a.address)}:${a.account ? `${a.account.nonce}/${a.account.balance}/${hex(a.account.codeHash)}/${hex(a.account.storageRoot)}` : 'deleted'}`);
  const storage = c.storage.map((s) => `${hex(s.address)}${s.wiped ? ' wiped' : ''}:${s.slots.map((x) => `${hex(x.slot)}=${hex(x.value)}`).join(',')}`);
  return JSON.stringify({ accounts, storage, code: c.code.map((x) => hex(x.hash)) });
}

interface Outcome {
  gas: string;
  error: string | undefined;
  ret: string;
  logs: string;
  bloom: string;
  changes: string;
}

/** What a run left, in comparable text: runTx's result or runFastTx's (the same fields), and the changes flushed. */
function outcomeOf(r: Pick<FastTxResult, 'totalGasSpent' | 'bloom'> & { execResult: { exceptionError?: { error: string } | undefined; logs?: FastLog[] | undefined; returnValue: Uint8Array } }, sm: FlatStateManager): Outcome {
  return {
    gas: r.totalGasSpent.toString(),
    error: r.execResult.exceptionError?.error,
    ret: hex(r.execResult.returnValue),
    logs: JSON.stringify((r.execResult.logs ?? []).map(([a, ts, d]) => [hex(a), ts.map(hex), hex(d)])),
    bloom: hex(r.bloom.bitvector),
    changes: changesText(sm.flush()),
  };
}

async function viaRunTx(s: Side, tx: TypedTransaction): Promise<Outcome | string> {
  try {
    const r = await runTx(s.vm, { tx, block, skipHardForkValidation: true, skipBlockGasLimitValidation: true });
    return outcomeOf(r, s.sm);
  } catch (e) {
    s.sm.flush();
    return `throws: ${(e as Error).message.split(' (')[0]}`;
  }
}

/** Runs `spec` (signed by `key`) on both sides; `taken`: whether the fast path must answer. */
async function both(t: Test, name: string, spec: Omit<TxSpec, 'nonce'>, taken: boolean, key = alice!): Promise<Outcome | string> {
  const k = hex(key.address);
  const nonce = nonces.get(k) ?? 0n;
  const tx = signTx(common, key, { price: 5n, ...spec, nonce });
  const expected = await viaRunTx(lib, tx);
  const floor = getCalldataFloorGas(tx, new Address(key.address));
  const r = runFastTx({ fast, sm: fst.sm, common, tx, sender: key.address, intrinsic: tx.getIntrinsicGas(), floor, block });
  let got: Outcome | string;
  if (r === undefined) got = await viaRunTx(fst, tx);
  else got = outcomeOf(r, fst.sm);
  t.equal(r !== undefined, taken, `${name}: ${taken ? 'taken' : 'declined'}`);
  t.same(got, expected, name);
  if (typeof expected !== 'string' || !expected.startsWith('throws')) nonces.set(k, nonce + 1n);
  return expected;
}

/** Creation code that deploys `runtime` (hex). */
function initCode(runtime: string): Uint8Array {
  const n = runtime.length / 2;
  const len = n.toString(16).padStart(2, '0');
  return hexToBytes(`0x60${len}600a5f3960${len}5ff3${runtime}`);
}

/**
 * For each 64-byte pair of calldata (key, value): SSTORE; then LOG2 of the word 0xaa with topics
 * 0xcc, 0xbb; STOP.
 */
const STORE_LOOP = '5f5b368110156017578060200135813555604001600156' + '5b60aa5f5260bb60cc60205fa200';
/** SSTORE(0, 1), then REVERT with no data. */
const STORE_REVERT = '60015f555f5ffd';
/** LOG0-LOG4 of memory words with topics 1..4. */
const LOGS = '60425f52' + '60205fa0' + '600160205fa1' + '6002600160205fa2' + '60036002600160205fa3' + '600460036002600160205fa4' + '00';
/** BALANCE of the caller (uncovered). */
const BALANCE = '3331505f5ff3';

let token: Uint8Array;
let loop: Uint8Array;
let reverter: Uint8Array;
let invalid: Uint8Array;
let logs: Uint8Array;
let balance: Uint8Array;
let stop: Uint8Array;

const pairs = (...kv: [bigint, bigint][]) => concat(...kv.flatMap(([k, v]) => [word(k), word(v)]));

/** Deploys `runtime` (hex) from alice on both sides; its address. */
async function deploy1(name: string, runtime: string): Promise<Uint8Array> {
  const n = nonces.get(hex(alice!.address)) ?? 0n;
  await both(t, `deploy ${name}`, { data: initCode(runtime), gasLimit: 1_000_000n }, false);
  return createContractAddress(new Address(alice!.address), n).bytes;
}

t.before(async () => {
  for (const s of [lib, fst]) {
    for (const k of [alice!, bob!]) await s.sm.putAccount(new Address(k.address), new Account(0n, 10n ** 24n));
    s.sm.flush();
  }
  const deploy = async (name: string, data: Uint8Array) => {
    const a = hex(alice!.address);
    const n = nonces.get(a) ?? 0n;
    const r = await both(t, `deploy ${name} (a create: declined)`, { data, gasLimit: 3_000_000n }, false);
    t.equal(typeof r === 'string' ? r : r.error, undefined, `${name} deployed`);
    return createContractAddress(new Address(alice!.address), n).bytes;
  };
  token = await deploy('TestToken', deployData(10n ** 30n));
  loop = await deploy('store loop', initCode(STORE_LOOP));
  reverter = await deploy('store then revert', initCode(STORE_REVERT));
  invalid = await deploy('invalid opcode', initCode('60015f55fe'));
  logs = await deploy('LOG0-LOG4', initCode(LOGS));
  balance = await deploy('BALANCE', initCode(BALANCE));
  stop = await deploy('STOP', initCode('00'));
});

t.test('TestToken transfers', async (t) => {
  const r = await both(t, 'transfer to bob', { to: token, data: transferData(bob!.address, 5n), price: 2n, maxFee: 10n }, true);
  t.equal(typeof r !== 'string' && r.error, undefined, 'it succeeds');
  await both(t, 'transfer to bob again (warm caches)', { to: token, data: transferData(bob!.address, 7n), price: 2n, maxFee: 10n }, true);
  await both(t, 'bob sends some back (a slot to a smaller value)', { to: token, data: transferData(alice!.address, 12n), price: 2n, maxFee: 10n }, true, bob!);
  await both(t, 'bob sends all the rest: nothing (a zero transfer)', { to: token, data: transferData(alice!.address, 0n) }, true, bob!);
  const rev = await both(t, 'bob sends more than he has: require reverts', { to: token, data: transferData(alice!.address, 10n ** 40n) }, true, bob!);
  t.equal(typeof rev !== 'string' && rev.error, 'revert', 'status 0, revert');
  await both(t, 'a legacy transfer (gas price 7)', { type: 0, to: token, data: transferData(bob!.address, 1n), price: 7n }, true);
  await both(t, 'an EIP-2930 transfer', { type: 1, to: token, data: transferData(bob!.address, 1n), price: 5n }, true);
});

t.test('SSTORE: every EIP-2200 path, refunds and their cap', async (t) => {
  await both(t, 'set 0 → 1 (cold)', { to: loop, data: pairs([5n, 1n]) }, true);
  await both(t, 'clean write 1 → 2', { to: loop, data: pairs([5n, 2n]) }, true);
  await both(t, 'no-op 2 → 2 (cold), then 2 → 2 (warm)', { to: loop, data: pairs([5n, 2n], [5n, 2n]) }, true);
  await both(t, 'clear 2 → 0 (refund, capped at a fifth)', { to: loop, data: pairs([5n, 0n]) }, true);
  await both(t, '0 → 1 → 0 in one tx (original zero restored)', { to: loop, data: pairs([6n, 1n], [6n, 0n]) }, true);
  await both(t, 'set 7 = 9', { to: loop, data: pairs([7n, 9n]) }, true);
  await both(t, '9 → 3 → 9 (original non-zero restored)', { to: loop, data: pairs([7n, 3n], [7n, 9n]) }, true);
  await both(t, '9 → 0 → 4 (a cleared slot re-created: refund taken back)', { to: loop, data: pairs([7n, 0n], [7n, 4n]) }, true);
  await both(t, '4 → 0 → 4 → 0 → 4', { to: loop, data: pairs([7n, 0n], [7n, 4n], [7n, 0n], [7n, 4n]) }, true);
  await both(t, 'many slots set, then all cleared in the next tx', { to: loop, data: pairs(...Array.from({ length: 12 }, (_, i): [bigint, bigint] => [100n + BigInt(i), BigInt(i + 1)])) }, true);
  await both(t, '... cleared (the refund cap binds)', { to: loop, data: pairs(...Array.from({ length: 12 }, (_, i): [bigint, bigint] => [100n + BigInt(i), 0n])) }, true);
  await both(t, 'a large key and value', { to: loop, data: pairs([(1n << 256n) - 1n, (1n << 255n) + 3n]) }, true);
});

t.test('out of gas around a store, and the 2300-gas sentry', async (t) => {
  const data = pairs([50n, 1n]);
  const tx = signTx(common, alice!, { to: loop, data, nonce: 0n });
  // The least gas limit runTx takes: the intrinsic gas, or the calldata floor (EIP-7623) above it.
  const floor = getCalldataFloorGas(tx, new Address(alice!.address));
  const least = floor > tx.getIntrinsicGas() ? floor : tx.getIntrinsicGas();
  await both(t, 'gas limit below the calldata floor (runTx refuses)', { to: loop, data, gasLimit: least - 1n }, false);
  // Enough for the whole tx: ~22,100 for the store + ~1,500 for the loop and the log.
  const statuses = new Set<string>();
  for (let extra = 0n; extra <= 26_000n; extra += extra < 19_000n ? 1_117n : 97n) {
    const r = await both(t, `gas limit least + ${extra}`, { to: loop, data, gasLimit: least + extra }, true);
    if (typeof r !== 'string') statuses.add(r.error ?? 'ok');
    // Put slot 50 back to zero so that every limit meets the same 0 → 1 store.
    await both(t, '(reset)', { to: loop, data: pairs([50n, 0n]) }, true);
  }
  t.ok(statuses.has('out of gas') && statuses.has('ok'), `both outcomes met (${[...statuses].join(', ')})`);
});

t.test('edge cases: underflow at a store and a log, a cleared slot set again, duplicate warm slots, balances', async (t) => {
  const one = await deploy1('SSTORE with one stack item', '600155');
  const u = await both(t, 'SSTORE with one item on the stack (underflow, before the sentry)', { to: one, gasLimit: 23_000n }, true);
  t.equal(typeof u !== 'string' && u.error, 'stack underflow');
  const log3 = await deploy1('LOG4 with three topics', '6001600260035f5fa4');
  for (const g of [21_010n, 21_500n, 40_000n]) await both(t, `LOG4 with three topics, gas limit ${g}`, { to: log3, gasLimit: g }, true);
  await both(t, 'set 60 = 8', { to: loop, data: pairs([60n, 8n]) }, true);
  await both(t, '8 → 0 → 8 (a non-zero original cleared, then restored)', { to: loop, data: pairs([60n, 0n], [60n, 8n]) }, true);
  await both(t, '8 → 0 → 9 (cleared, then a new value)', { to: loop, data: pairs([60n, 0n], [60n, 9n]) }, true);
  const slot = `0x${hex(word(60n))}`;
  await both(t, 'an access list naming the same slot twice', { type: 2, to: loop, data: pairs([60n, 9n]), accessList: [{ address: `0x${hex(loop)}`, storageKeys: [slot, slot] }] }, true);
  // A sender without an account, at price 0 (the devnet's price): the tx creates it.
  const [fresh] = makeKeys(1, 'fast-tx-fresh');
  block = blockWith(0n);
  await both(t, 'a sender without an account, price 0', { to: loop, data: pairs([61n, 1n]), price: 0n }, true, fresh!);
  // An existing, empty coinbase account: a zero fee leaves it empty, so it is deleted.
  for (const s of [lib, fst]) {
    await s.sm.putAccount(new Address(COINBASE), new Account(0n, 0n));
    s.sm.flush();
  }
  await both(t, 'an existing empty coinbase, zero fee: deleted (EIP-161)', { to: loop, data: pairs([61n, 2n]), price: 0n }, true, fresh!);
  block = blockWith(3n);
  // A balance of exactly gas limit × fee cap, and one wei less.
  const [exact] = makeKeys(1, 'fast-tx-exact');
  for (const s of [lib, fst]) {
    await s.sm.putAccount(new Address(exact!.address), new Account(0n, 100_000n * 7n));
    s.sm.flush();
  }
  await both(t, 'a balance of exactly gas limit × fee cap', { to: loop, data: pairs([62n, 1n]), gasLimit: 100_000n, price: 2n, maxFee: 7n }, true, exact!);
  const [short] = makeKeys(1, 'fast-tx-short');
  for (const s of [lib, fst]) {
    await s.sm.putAccount(new Address(short!.address), new Account(0n, 100_000n * 7n - 1n));
    s.sm.flush();
  }
  await both(t, 'one wei less (runTx refuses)', { to: loop, data: pairs([62n, 2n]), gasLimit: 100_000n, price: 2n, maxFee: 7n }, false, short!);
});

t.test('failures: REVERT after a store, an invalid opcode', async (t) => {
  const r = await both(t, 'store then revert: no slot, no refund', { to: reverter }, true);
  t.equal(typeof r !== 'string' && r.error, 'revert');
  const i = await both(t, 'store then an invalid opcode: all gas used', { to: invalid, gasLimit: 90_000n }, true);
  t.equal(typeof i !== 'string' && i.error, 'invalid opcode');
});

t.test('LOG0-LOG4, access lists, fees, the calldata floor', async (t) => {
  const l = await both(t, 'LOG0 to LOG4', { to: logs }, true);
  t.equal(typeof l !== 'string' && JSON.parse(l.logs).length, 5, 'five logs');
  await both(t, 'an access list with the store slot (warm) and another address', {
    type: 1,
    to: loop,
    data: pairs([5n, 3n]),
    accessList: [
      { address: `0x${hex(loop)}`, storageKeys: [`0x${hex(word(5n))}`] },
      { address: `0x${hex(token)}`, storageKeys: [`0x${hex(word(1n))}`] },
    ],
  }, true);
  block = blockWith(0n);
  await both(t, 'no base fee, tip 0: the coinbase gets nothing', { to: loop, data: pairs([5n, 4n]), price: 0n }, true);
  await both(t, 'no base fee, tip 3', { to: loop, data: pairs([5n, 5n]), price: 3n, maxFee: 9n }, true);
  block = blockWith(3n);
  await both(t, 'base fee 3, fee cap 3, tip 2 (the tip is capped to 0)', { to: loop, data: pairs([5n, 6n]), price: 2n, maxFee: 3n }, true);
  const f = await both(t, 'a cheap call with much calldata (the EIP-7623 floor applies)', { to: stop, data: new Uint8Array(2000).fill(0x77) }, true);
  t.ok(typeof f !== 'string' && BigInt(f.gas) > 21_000n + 2000n * 16n, 'gas used is the floor');
});

t.test('declined: left to runTx', async (t) => {
  await both(t, 'value', { to: loop, data: pairs([5n, 7n]), value: 1n }, false);
  await both(t, 'an uncovered opcode (BALANCE)', { to: balance }, false);
  await both(t, 'a precompile (identity)', { to: hexToBytes('0x0000000000000000000000000000000000000004'), data: new Uint8Array([1, 2, 3]) }, false);
  await both(t, 'an account without code', { to: bob!.address }, false);
  await both(t, 'a fee cap below the base fee (runTx refuses)', { to: loop, data: pairs([5n, 8n]), price: 1n, maxFee: 2n }, false);
  await both(t, 'gas limit below the intrinsic gas (runTx refuses)', { to: loop, data: pairs([5n, 8n]), gasLimit: 21_000n }, false);
  const k = hex(alice!.address);
  const n = nonces.get(k)!;
  nonces.set(k, n + 5n);
  await both(t, 'a nonce ahead (runTx refuses)', { to: loop, data: pairs([5n, 8n]) }, false);
  nonces.set(k, n);
  await both(t, 'and the right one again', { to: loop, data: pairs([5n, 8n]) }, true);
});

t.test('seeded random one-frame programs: SSTORE, SLOAD, LOG0-4, MSTORE, REVERT, RETURN, INVALID', async (t) => {
  // Each program on a fresh pair of state managers: slots 0-2 of the contract set or not, a
  // random access list, gas limit, base fee, tip and coinbase (absent, empty or funded).
  let seed = 20261127;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;
  const h = (n: number) => n.toString(16).padStart(2, '0');
  const push = (v: number) => (v === 0 ? '5f' : `60${h(v)}`);
  const program = () => {
    let c = '';
    const n = 1 + Math.floor(rnd() * 14);
    for (let i = 0; i < n; i++) {
      const r = rnd();
      if (r < 0.35) c += `${push(pick([0, 1, 2]))}${push(pick([0, 1, 2]))}55`;
      else if (r < 0.45) c += `${push(pick([0, 1, 2]))}5450`;
      else if (r < 0.55) c += `${push(pick([0, 1, 2]))}54${push(pick([0, 1, 2]))}55`;
      else if (r < 0.65) {
        const topics = Math.floor(rnd() * 5);
        for (let j = 0; j < topics; j++) c += push(Math.floor(rnd() * 256));
        c += `${push(pick([0, 1, 32, 33]))}${push(pick([0, 1, 64]))}${h(0xa0 + topics)}`;
      } else if (r < 0.7) c += `${push(Math.floor(rnd() * 256))}${push(pick([0, 32, 200]))}52`;
      else if (r < 0.72) c += '55';
      else if (r < 0.74) c += pick(['a1', 'a4', '5a50', '5950', '80', '90']);
      else if (r < 0.76) c += `${push(pick([0, 32]))}${push(pick([0, 1]))}fd`;
      else if (r < 0.78) c += 'fe';
      else if (r < 0.8) c += `${push(pick([0, 32]))}${push(pick([0, 1]))}f3`;
      else c += `${push(pick([0, 1, 2]))}${push(pick([0, 1, 2]))}55`;
    }
    return c;
  };
  const contract = hexToBytes('0x1000000000000000000000000000000000000001');
  const [sender] = makeKeys(1, 'fast-tx-fuzz');
  const outcomes = new Map<string, number>();
  let declined = 0;
  for (let i = 0; i < 300; i++) {
    const code = program();
    const slots = [0n, 1n, 2n].filter(() => rnd() < 0.5).map((k): [bigint, bigint] => [k, BigInt(1 + Math.floor(rnd() * 2))]);
    const gasLimit = rnd() < 0.5 ? 200_000n : 21_000n + BigInt(Math.floor(rnd() * 60_000));
    const accessList = rnd() < 0.3 ? [{ address: `0x${hex(contract)}`, storageKeys: [`0x${hex(word(pick([0n, 1n, 2n])))}`] }] : undefined;
    const baseFee = pick([0n, 3n]);
    const coinbase = rnd() < 0.3 ? undefined : new Account(0n, BigInt(Math.floor(rnd() * 2)));
    const price = pick([0n, 3n, 5n]);
    const pair: Side[] = [];
    for (let s = 0; s < 2; s++) {
      const x = await side();
      await x.sm.putAccount(new Address(sender!.address), new Account(0n, 10n ** 24n));
      await x.sm.putAccount(new Address(contract), new Account(1n, 0n));
      await x.sm.putCode(new Address(contract), hexToBytes(`0x${code}`));
      for (const [k, v] of slots) await x.sm.putStorage(new Address(contract), word(k), Uint8Array.of(Number(v)));
      if (coinbase !== undefined) await x.sm.putAccount(new Address(COINBASE), coinbase);
      x.sm.flush();
      pair.push(x);
    }
    block = blockWith(baseFee);
    const tx = signTx(common, sender!, { nonce: 0n, to: contract, gasLimit, price, maxFee: 7n, ...(accessList ? { accessList } : {}) });
    const expected = await viaRunTx(pair[0]!, tx);
    const r = runFastTx({ fast: FastCaller.create(pair[1]!.vm.evm, common)!, sm: pair[1]!.sm, common, tx, sender: sender!.address, intrinsic: tx.getIntrinsicGas(), floor: getCalldataFloorGas(tx, new Address(sender!.address)), block });
    if (r === undefined) {
      declined++;
      t.same(await viaRunTx(pair[1]!, tx), expected, `#${i} ${code} (declined)`);
      continue;
    }
    const got = outcomeOf(r, pair[1]!.sm);
    if (!t.same(got, expected, `#${i} ${code} gas ${gasLimit} base ${baseFee} price ${price}`)) break;
    const k = typeof expected === 'string' ? expected : (expected.error ?? 'ok');
    outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
  }
  block = blockWith(3n);
  t.ok(declined < 30, `the fast path took most programs (${declined} declined)`);
  for (const k of ['ok', 'out of gas', 'stack underflow', 'revert', 'invalid opcode']) t.ok((outcomes.get(k) ?? 0) > 0, `outcome met: ${k}`);
});
