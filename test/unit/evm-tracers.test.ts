/**
 * The tracers (src/evm/tracers) on an in-memory @ethereumjs VM, without a node: each option of
 * the struct logger (disableStack, disableStorage, enableMemory, enableReturnData, limit),
 * callTracer (onlyTopCall, withLog), prestateTracer (disableCode, disableStorage, includeEmpty,
 * diffMode with includeEmpty refused), the muxTracer, the timeout, tracer lookup errors, and Go's
 * duration syntax for `timeout`. Their agreement with geth's output is the conformance test's
 * (test/conformance/evm-tracers.test.ts, against anvil).
 */
import t from 'tap';
import { Account, Address, createAddressFromPrivateKey } from '@ethereumjs/util';
import { createVM, runTx, type VM } from '@ethereumjs/vm';
import { createBlock } from '@ethereumjs/block';
import { encodeFunctionData, getContractAddress, type Abi, type Hex } from 'viem';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';
import { createEvmCommon } from '../../src/evm/common.js';
import { createTracer, drive, toJsonText, TraceAbort, type StateReader, type Tracer } from '../../src/evm/tracers/index.js';
import { parseGoDuration } from '../../src/rpc/evm/debug-trace.js';
import { concat, loadProbe, makeKeys, signTx, word, type TxSpec } from '../helpers/evm.js';

const common = createEvmCommon({ chainId: 9000n });
const [key] = makeKeys(1, 'tracer-unit');
const sender = createAddressFromPrivateKey(key!.priv);
const S = sender.toString() as Hex;
const { Probe, Child } = loadProbe().contracts;
const probe = getContractAddress({ from: S, nonce: 0n });
const child = getContractAddress({ from: S, nonce: 1n });
const pc = (functionName: string, args: unknown[] = []) => hexToBytes(encodeFunctionData({ abi: Probe.abi as Abi, functionName, args }));

const vm: VM = await createVM({ common });
await vm.stateManager.putAccount(sender, new Account(0n, 10n ** 21n));
const block = createBlock({ header: { number: 1n, timestamp: 1n, gasLimit: 30_000_000n, baseFeePerGas: 0n, coinbase: new Uint8Array(20).fill(0xcb) } }, { common, skipConsensusFormatValidation: true });
let nonce = 0n;

const reader: StateReader = {
  account: async (addr) => {
    const a = new Address(Uint8Array.from(addr));
    const acc = await vm.stateManager.getAccount(a);
    return acc === undefined ? undefined : { balance: acc.balance, nonce: acc.nonce, codeHash: acc.codeHash, code: await vm.stateManager.getCode(a) };
  },
  storage: async (addr, slot) => {
    const v = await vm.stateManager.getStorage(new Address(Uint8Array.from(addr)), slot);
    const out = new Uint8Array(32);
    out.set(v, 32 - v.length);
    return out;
  },
};

/** Signs and runs the next tx of the sender under `tracer` (none: untraced); the tracer's JSON. */
async function run(spec: Omit<TxSpec, 'nonce'>, tracer?: Tracer, check?: () => void): Promise<any> {
  const tx = signTx(common, key!, { gasLimit: 3_000_000n, price: 1n, ...spec, nonce: nonce++ });
  if (tracer === undefined) {
    await runTx(vm, { tx, block, skipHardForkValidation: true });
    return undefined;
  }
  // Traced runs are undone afterwards (checkpoint, revert) so each option sees the same state.
  nonce--;
  await vm.stateManager.checkpoint();
  try {
    await tracer.onTxStart?.({ from: sender.bytes, to: tx.to?.bytes, created: undefined, gasLimit: tx.gasLimit, gasPrice: 1n, value: tx.value, input: tx.data, nonce: tx.nonce, coinbase: block.header.coinbase.bytes, blockNumber: 1n, blockHash: undefined, time: 1n, txHash: tx.hash(), txIndex: 0, authorities: [] }, reader);
    const r = await drive(vm.evm.events as never, tracer, reader, { firstLogIndex: 0, ...(check ? { check } : {}) }, () => runTx(vm, { tx, block, skipHardForkValidation: true }));
    await tracer.onTxEnd?.({ gasUsed: r.totalGasSpent, output: r.execResult.returnValue, error: r.execResult.exceptionError ? 'err' : undefined }, reader);
    return JSON.parse(toJsonText(tracer.result()));
  } finally {
    await vm.stateManager.revert();
  }
}

await run({ data: hexToBytes(Probe.bytecode) });
await run({ data: concat(hexToBytes(Child.bytecode), word(42n)) });
const callSet = { to: hexToBytes(probe), data: pc('callSet', [child, 7n]) };
const poke = { to: hexToBytes(probe), data: pc('poke', [3n, 4n]) };

t.test('struct logger: defaults and each option', async (t) => {
  const base = await run(poke, createTracer(undefined, undefined, {}));
  t.equal(base.failed, false);
  t.type(base.gas, 'number');
  t.ok(base.structLogs.length > 50);
  t.ok(base.structLogs.every((l: any) => Array.isArray(l.stack) && l.memory === undefined && l.returnData === undefined), 'stack always, no memory, no return data');
  const sstores = base.structLogs.filter((l: any) => l.op === 'SSTORE');
  t.ok(sstores.length >= 3 && sstores.every((l: any) => l.storage !== undefined), 'SSTORE carries storage');
  const sload = base.structLogs.find((l: any) => l.op === 'SLOAD');
  t.ok(sload?.storage, 'SLOAD carries storage');
  t.ok(base.structLogs.every((l: any) => l.depth === 1), 'depth starts at 1');

  const noStack = await run(poke, createTracer(undefined, undefined, { disableStack: true }));
  t.ok(noStack.structLogs.every((l: any) => l.stack === undefined), 'disableStack: no stack');
  const noStorage = await run(poke, createTracer(undefined, undefined, { disableStorage: true }));
  t.ok(noStorage.structLogs.every((l: any) => l.storage === undefined), 'disableStorage: no storage');
  t.equal(noStorage.structLogs.length, base.structLogs.length);
  const mem = await run(poke, createTracer(undefined, undefined, { enableMemory: true }));
  t.ok(mem.structLogs.some((l: any) => Array.isArray(l.memory) && l.memory.every((w: string) => /^0x[0-9a-f]{64}$/.test(w))), 'enableMemory: 32-byte words');
  t.equal(mem.structLogs[0].memory, undefined, 'no memory before the first write');

  const calls = await run(callSet, createTracer(undefined, undefined, { enableReturnData: true }));
  t.ok(calls.structLogs.some((l: any) => l.depth === 2), 'the nested call is at depth 2');
  t.ok(calls.structLogs.every((l: any) => l.returnData === undefined), 'enableReturnData: none while the call returned nothing');
  const got = await run({ to: hexToBytes(probe), data: pc('staticGet', [child]) }, createTracer(undefined, undefined, { enableReturnData: true }));
  const after = got.structLogs.filter((l: any) => l.depth === 1 && typeof l.returnData === 'string');
  t.ok(after.length > 0 && after.every((l: any) => l.returnData === `0x${'0'.repeat(62)}2a`), "enableReturnData: the child's answer (42) after the STATICCALL");
  const call = calls.structLogs.find((l: any) => l.op === 'CALL');
  const first = calls.structLogs[calls.structLogs.indexOf(call) + 1];
  t.ok(call.gasCost > first.gas, "CALL's cost includes the gas handed to the callee");

  const limited = await run(poke, createTracer(undefined, undefined, { limit: 1000 }));
  const size = limited.structLogs.reduce((n: number, l: any) => n + JSON.stringify(l).length, 0);
  t.ok(limited.structLogs.length < base.structLogs.length && limited.structLogs.length > 0, `limit: ${limited.structLogs.length} entries`);
  t.ok(size - JSON.stringify(limited.structLogs.at(-1)).length <= 1000, 'limit: entries stop once past the limit');
});

t.test('callTracer: onlyTopCall, withLog', async (t) => {
  const full = await run(callSet, createTracer('callTracer', {}, {}));
  t.equal(full.calls.length, 1);
  t.equal(full.calls[0].type, 'CALL');
  t.equal(full.calls[0].to, child.toLowerCase());
  t.equal(full.logs, undefined, 'no logs without withLog');
  const top = await run(callSet, createTracer('callTracer', { onlyTopCall: true }, {}));
  t.equal(top.calls, undefined, 'onlyTopCall: no calls');
  t.equal(top.gasUsed, full.gasUsed);
  const logged = await run(callSet, createTracer('callTracer', { withLog: true }, {}));
  t.equal(logged.logs.length, 1, 'withLog: the Called event');
  t.same(Object.keys(logged.logs[0]), ['address', 'topics', 'data', 'index', 'position']);
  t.equal(logged.logs[0].position, '0x1', 'after the one child call');
  const deleg = await run({ to: hexToBytes(probe), data: pc('delegateSet', [child, 9n]) }, createTracer('callTracer', {}, {}));
  t.equal(deleg.calls[0].type, 'DELEGATECALL');
  t.equal(deleg.calls[0].from, probe.toLowerCase(), 'DELEGATECALL from the calling contract');
  t.equal(deleg.calls[0].to, child.toLowerCase(), 'to the code');
  t.throws(() => createTracer('callTracer', { onlyTopCall: 'yes' }, {}), /cannot unmarshal/);
});

t.test('prestateTracer: disableCode, disableStorage, includeEmpty, diffMode', async (t) => {
  const fresh = hexToBytes('0x00000000000000000000000000000000000f4e55');
  const p = probe.toLowerCase();
  const plain = await run(poke, createTracer('prestateTracer', {}, {}));
  t.ok(plain[p].code && plain[p].codeHash && plain[p].storage, 'code, codeHash and storage');
  const noCode = await run(poke, createTracer('prestateTracer', { disableCode: true }, {}));
  t.equal(noCode[p].code, undefined, 'disableCode');
  t.ok(noCode[p].codeHash, 'disableCode keeps codeHash');
  const noStorage = await run(poke, createTracer('prestateTracer', { disableStorage: true }, {}));
  t.equal(noStorage[p].storage, undefined, 'disableStorage');
  const transfer = { to: fresh, value: 5n, gasLimit: 21_000n };
  const without = await run(transfer, createTracer('prestateTracer', {}, {}));
  t.equal(without['0x00000000000000000000000000000000000f4e55'], undefined, 'an empty account is left out');
  const withEmpty = await run(transfer, createTracer('prestateTracer', { includeEmpty: true }, {}));
  t.same(withEmpty['0x00000000000000000000000000000000000f4e55'], { balance: '0x0' }, 'includeEmpty keeps it');
  const diff = await run(poke, createTracer('prestateTracer', { diffMode: true }, {}));
  t.same(Object.keys(diff), ['post', 'pre']);
  t.ok(diff.post[p].storage, 'post: the changed slots');
  t.equal(diff.post[p].code, undefined, 'post: unchanged code is left out');
  t.throws(() => createTracer('prestateTracer', { diffMode: true, includeEmpty: true }, {}), { message: 'cannot use diffMode with includeEmpty' });
});

t.test('4byteTracer, noopTracer, muxTracer, unknown names', async (t) => {
  const four = await run(callSet, createTracer('4byteTracer', {}, {}));
  t.same(four, { [`${bytesToHex(pc('callSet', [child, 7n]).subarray(0, 4))}-64`]: 1, '0x60fe47b1-32': 1 });
  t.same(await run(callSet, createTracer('noopTracer', {}, {})), {});
  const mux = await run(callSet, createTracer('muxTracer', { callTracer: {}, '4byteTracer': {} }, {}));
  t.same(mux['4byteTracer'], four);
  t.equal(mux.callTracer.calls.length, 1);
  t.throws(() => createTracer('noSuchTracer', {}, {}), /noSuchTracer/);
});

t.test('the timeout stops the run', async (t) => {
  let steps = 0;
  await t.rejects(
    run({ to: hexToBytes(probe), data: pc('spin'), gasLimit: 2_000_000n }, createTracer(undefined, undefined, {}), () => {
      if (++steps > 100) throw new TraceAbort('execution timeout');
    }),
    { message: 'execution timeout' },
  );
  t.equal(steps, 101, 'stopped at the step the check refused');
  // The VM is usable afterwards: the next traced run works.
  const again = await run(poke, createTracer('callTracer', {}, {}));
  t.equal(again.type, 'CALL');
});

t.test('JavaScript tracers: geth\'s object API in node:vm, bounded by the timeout', async (t) => {
  const sync = {
    balance: () => 0n,
    nonce: () => 0n,
    code: () => new Uint8Array(0),
    storage: () => new Uint8Array(32),
    exists: () => false,
  };
  const counter = `{
    ops: {}, depths: [], calls: [], logs: 0,
    step: function (log, db) {
      var name = log.op.toString();
      this.ops[name] = (this.ops[name] || 0) + 1;
      if (this.depths.indexOf(log.getDepth()) < 0) this.depths.push(log.getDepth());
      if (name === 'SSTORE') this.lastSlot = log.stack.peek(0).toString(16);
    },
    fault: function (log, db) { this.fault = log.getError(); },
    enter: function (frame) { this.calls.push(frame.getType() + ':' + toHex(frame.getTo())); },
    exit: function (res) { this.calls.push('exit:' + res.getGasUsed()); },
    result: function (ctx, db) {
      return { sstore: this.ops.SSTORE, depths: this.depths, calls: this.calls, type: ctx.type, to: toHex(ctx.to), gasUsed: ctx.gasUsed, block: ctx.block, balance: db.getBalance(ctx.from) };
    }
  }`;
  const r = await run(callSet, createTracer(counter, undefined, {}, { deadline: Date.now() + 60_000, sync: { ...sync, balance: () => 123n } }));
  t.equal(r.sstore, 1, "the child's one SSTORE");
  t.same(r.depths, [1, 2]);
  t.equal(r.calls.length, 2);
  t.match(r.calls[0], new RegExp(`^CALL:${child.toLowerCase()}$`));
  t.match(r.calls[1], /^exit:\d+$/);
  t.equal(r.type, 'CALL');
  t.equal(r.to, probe.toLowerCase());
  t.ok(r.gasUsed > 21_000);
  t.equal(r.balance, 123, 'db reads, BigInt as a JSON number');

  const faulty = await run({ to: hexToBytes(probe), data: pc('spin'), gasLimit: 100_000n }, createTracer('{ step: function () {}, fault: function (log) { this.e = log.getError(); }, result: function () { return this.e; } }', undefined, {}, { deadline: Date.now() + 60_000, sync }));
  t.equal(faulty, 'out of gas', 'fault() gets the failing op');

  await t.rejects(run(poke, createTracer('{ step: function () { for (;;) {} }, result: function () { return 1; } }', undefined, {}, { deadline: Date.now() + 300, sync })), { message: 'execution timeout' }, 'an endless step() ends with the timeout');
  t.throws(() => createTracer('{ step: function () {} }', undefined, {}, { sync }), { message: 'trace object must expose a function result()' });
  t.throws(() => createTracer('noSuchTracer', undefined, {}, { sync }), { message: /^ReferenceError: noSuchTracer is not defined/ });
  t.throws(() => createTracer('{ result: function () { return process.pid; } }', undefined, {}, { sync }).result(), /process is not defined/, 'no host globals');
  await t.rejects(run(poke, createTracer('{ step: function (log) { null.x; }, result: function () { return 1; } }', undefined, {}, { deadline: Date.now() + 60_000, sync })), { message: /^TypeError: .* in server-side tracer function 'step'$/ });
});

t.test("Go's duration syntax", async (t) => {
  t.equal(parseGoDuration('5s'), 5000);
  t.equal(parseGoDuration('300ms'), 300);
  t.equal(parseGoDuration('1m30s'), 90_000);
  t.equal(parseGoDuration('1.5h'), 5_400_000);
  t.equal(parseGoDuration('2us'), 0.002);
  t.equal(parseGoDuration('0'), 0);
  t.throws(() => parseGoDuration(''), { message: 'time: invalid duration ""' });
  t.throws(() => parseGoDuration('soon'), { message: 'time: invalid duration "soon"' });
  t.throws(() => parseGoDuration('5'), { message: 'time: missing unit in duration "5"' });
  t.throws(() => parseGoDuration('5x'), { message: 'time: unknown unit "x" in duration "5x"' });
});
