/**
 * src/evm/fast-call.ts against @ethereumjs/evm's runCall, differentially: for the TestToken
 * fixture's calls and hand-made bytecode hitting every opcode the interpreter covers, both give
 * the same return data, error text and gas used, or the fast interpreter declines (undefined) —
 * and it declines exactly for what it does not cover. Edge cases: every binary/ternary opcode over
 * boundary operands, out of gas at every gas limit below a balanceOf's need, memory expansion
 * (large, huge, zero-length at a huge offset), stack underflow against out of gas (which wins),
 * stack overflow, bad jumps, invalid opcodes, REVERT data, cold and warm SLOAD.
 */
import { createBlock } from '@ethereumjs/block';
import { Address, createContractAddress, hexToBytes } from '@ethereumjs/util';
import { createVM } from '@ethereumjs/vm';
import t, { type Test } from 'tap';
import { createEvmCommon } from '../../src/evm/common.js';
import { FastCaller, type FastCallResult } from '../../src/evm/fast-call.js';
import { FlatStateManager, KVFlatState, MemoryKV } from '../../src/evm/index.js';
import { allowanceData, balanceOfData, concat, deployData, keccak, transferData, transferFromData, word } from '../helpers/evm.js';

const common = createEvmCommon({ chainId: 9000n });
const sm = new FlatStateManager(new KVFlatState(new MemoryKV()), { keccak256: keccak });
const vm = await createVM({ common, stateManager: sm });
const fast = FastCaller.create(vm.evm, common)!;
const block = createBlock({ header: { number: 7n, timestamp: 1_700_000_000n, gasLimit: 30_000_000n, baseFeePerGas: 3n } }, { common, skipConsensusFormatValidation: true });

const A = hexToBytes('0x00000000000000000000000000000000000000aa');
const B = hexToBytes('0x00000000000000000000000000000000000000bb');
const ORIGIN = hexToBytes('0x1111111111111111111111111111111111111111');

type Outcome = { gasUsed: bigint; ret: string; error: string | undefined };
const outcome = (r: FastCallResult): Outcome => ({ gasUsed: r.executionGasUsed, ret: Buffer.from(r.returnValue).toString('hex'), error: r.error });

async function library(to: Uint8Array, data: Uint8Array, gasLimit: bigint, caller = ORIGIN): Promise<Outcome> {
  // runCall's execResult: the error is the EVMError's text under exceptionError.
  vm.evm.journal.cleanJournal();
  await sm.checkpoint();
  try {
    const r = await vm.evm.runCall({ to: new Address(to), caller: new Address(caller), origin: new Address(caller), data, gasLimit, gasPrice: 5n, block });
    const x = r.execResult;
    return outcome({ executionGasUsed: x.executionGasUsed, returnValue: x.returnValue, ...(x.exceptionError ? { error: x.exceptionError.error } : {}) });
  } finally {
    while (sm.checkpointDepth > 0) await sm.revert();
    sm.discardReverted();
  }
}

function fastRun(to: Uint8Array, data: Uint8Array, gasLimit: bigint, caller = ORIGIN): Outcome | undefined {
  const addr = new Address(to);
  const r = fast.run({ code: sm.getCodeSync(to), address: to, caller, origin: caller, data, gasLimit, gasPrice: 5n, block: block.header, sload: (k) => sm.getStorageSync(addr, k) });
  return r === undefined ? undefined : outcome(r);
}

/** Both ways; the fast run must answer (not decline) and agree. */
async function same(t: Test, name: string, to: Uint8Array, data: Uint8Array, gasLimit = 1_000_000n, caller = ORIGIN): Promise<Outcome> {
  const lib = await library(to, data, gasLimit, caller);
  t.same(fastRun(to, data, gasLimit, caller), lib, name);
  return lib;
}

let nextAddress = 0x1000;
/** Places `code` (hex) at a fresh address with slots 1 and 2 set. */
async function place(code: string): Promise<Uint8Array> {
  const a = new Address(hexToBytes(`0x${(nextAddress++).toString(16).padStart(40, '0')}`));
  await sm.putCode(a, hexToBytes(`0x${code}`));
  await sm.putStorage(a, word(1n), Uint8Array.from([0x2a]));
  await sm.putStorage(a, word(2n), word((1n << 256n) - 1n));
  return a.bytes;
}

const hx = (x: bigint, n = 32) => x.toString(16).padStart(2 * n, '0');
const push = (x: bigint) => `7f${hx(x)}`;
const push2 = (x: number) => `61${x.toString(16).padStart(4, '0')}`;
/** MSTORE the top of the stack at 0 and RETURN that word. */
const RET_TOP = '60005260206000f3';

const M = (1n << 256n) - 1n;
const OPERANDS = [0n, 1n, 2n, 3n, 7n, 31n, 32n, 255n, 256n, 257n, 1n << 255n, (1n << 255n) - 1n, M, M - 1n, 0x1234567890abcdefn << 64n];

let token: Uint8Array;

t.before(async () => {
  await sm.checkpoint();
  const created = await vm.evm.runCall({ caller: new Address(A), data: deployData(10n ** 24n), gasLimit: 3_000_000n, block });
  token = created.createdAddress!.bytes;
  t.same(token, createContractAddress(new Address(A), 0n).bytes, 'TestToken deployed');
  for (const d of [transferData(B, 25n), concat(hexToBytes('0x095ea7b3'), word(B), word(1000n))]) {
    const r = await vm.evm.runCall({ to: new Address(token), caller: new Address(A), data: d, gasLimit: 200_000n, block });
    t.equal(r.execResult.exceptionError, undefined, 'set-up call');
  }
  await sm.commit();
});

t.test('TestToken: view calls, reverts, and what the fast path declines', async (t) => {
  const bal = await same(t, 'balanceOf(B)', token, balanceOfData(B));
  t.equal(bal.ret, hx(25n), 'B holds 25');
  await same(t, 'balanceOf(nobody)', token, balanceOfData(ORIGIN));
  await same(t, 'balanceOf again (cached slot)', token, balanceOfData(B));
  await same(t, 'allowance(A, B)', token, allowanceData(A, B));
  for (const sel of ['06fdde03', '95d89b41', '313ce567', '18160ddd']) await same(t, `selector ${sel} (name, symbol, decimals, totalSupply)`, token, hexToBytes(`0x${sel}`));
  await same(t, 'an unknown selector reverts', token, hexToBytes('0xdeadbeef'));
  await same(t, 'no calldata', token, new Uint8Array(0));
  await same(t, 'balanceOf with short calldata', token, hexToBytes('0x70a0823100'));
  await same(t, 'balanceOf with a dirty address word', token, concat(hexToBytes('0x70a08231'), word(M)));
  const rev = await same(t, 'transferFrom beyond the allowance: Error(string) before any write', token, transferFromData(A, B, 10n ** 30n), 1_000_000n, B);
  t.equal(rev.error, 'revert', 'it reverts');
  t.match(rev.ret, /^08c379a0/, 'with Error(string)');
  t.equal(fastRun(token, transferData(B, 1n), 1_000_000n, A), undefined, 'transfer (SSTORE, LOG) is declined');
  t.equal(await library(token, transferData(B, 1n), 1_000_000n, A).then((x) => x.error), undefined, '(the library runs it)');
});

t.test('out of gas at every gas limit below what balanceOf needs', async (t) => {
  const need = (await library(token, balanceOfData(B), 1_000_000n)).gasUsed;
  let oog = 0;
  for (let g = 0n; g <= need; g += g < need - 40n ? 37n : 1n) {
    const lib = await library(token, balanceOfData(B), g);
    t.same(fastRun(token, balanceOfData(B), g), lib, `gas ${g}`);
    if (lib.error === 'out of gas') oog++;
  }
  t.ok(oog > 40, 'most limits ran out of gas');
  t.equal((await library(token, balanceOfData(B), need)).error, undefined, 'the exact need succeeds');
});

t.test('binary and ternary opcodes over boundary operands', async (t) => {
  const binary = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0a, 0x0b, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17, 0x18, 0x1a, 0x1b, 0x1c, 0x1d];
  for (const op of binary) {
    // every (a, b): b, a pushed, op, result stored at the next word; all words returned
    let code = '';
    let off = 0;
    for (const a of OPERANDS)
      for (const b of OPERANDS) {
        code += `${push(b)}${push(a)}${op.toString(16).padStart(2, '0')}${push2(off)}52`;
        off += 32;
      }
    code += `${push2(off)}6000f3`;
    await same(t, `opcode 0x${op.toString(16)}`, await place(code), new Uint8Array(0), 10_000_000n);
  }
  for (const op of ['08', '09']) {
    let code = '';
    let off = 0;
    const few = [0n, 1n, 7n, 256n, 1n << 255n, M];
    for (const a of few) for (const b of few) for (const n of few) code += `${push(n)}${push(b)}${push(a)}${op}${push2((off += 32) - 32)}52`;
    code += `${push2(off)}6000f3`;
    await same(t, `opcode 0x${op}`, await place(code), new Uint8Array(0), 10_000_000n);
  }
  // unary: ISZERO, NOT
  let code = '';
  let off = 0;
  for (const a of OPERANDS) for (const op of ['15', '19']) code += `${push(a)}${op}${push2((off += 32) - 32)}52`;
  await same(t, 'ISZERO and NOT', await place(`${code}${push2(off)}6000f3`), new Uint8Array(0));
});

t.test('environment, memory, storage, calldata and code opcodes', async (t) => {
  const data = hexToBytes('0x00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff0102030405');
  // ADDRESS ORIGIN CALLER CALLVALUE CALLDATASIZE CODESIZE GASPRICE RETURNDATASIZE TIMESTAMP NUMBER
  // GASLIMIT CHAINID BASEFEE PC MSIZE GAS PUSH0, each stored in turn
  let env = '';
  let off = 0;
  for (const op of ['30', '32', '33', '34', '36', '38', '3a', '3d', '42', '43', '45', '46', '48', '58', '59', '5a', '5f']) env += `${op}${push2((off += 32) - 32)}52`;
  await same(t, 'environment opcodes', await place(`${env}${push2(off)}6000f3`), data, 1_000_000n, B);
  let cl = '';
  off = 0;
  for (const p of [0n, 1n, 4n, 36n, 37n, 38n, 1000n, M]) cl += `${push(p)}35${push2((off += 32) - 32)}52`;
  await same(t, 'CALLDATALOAD at, inside and past the end', await place(`${cl}${push2(off)}6000f3`), data);
  // CALLDATACOPY / CODECOPY: (mem, src, len) with src past the end and a partial tail
  for (const [op, name] of [['37', 'CALLDATACOPY'], ['39', 'CODECOPY']] as const) {
    const copy = (mem: number, src: bigint, len: number) => `${push2(len)}${push(src)}${push2(mem)}${op}`;
    const code = copy(3, 0n, 40) + copy(100, 30n, 20) + copy(200, 1n << 200n, 8) + copy(300, 0n, 0) + `59${push2(400)}52${push2(432)}6000f3`;
    await same(t, name, await place(code), data);
  }
  // KECCAK256 over memory (unaligned), of nothing at a huge offset, then MSTORE8/MLOAD, MSIZE
  await same(t, 'KECCAK256', await place(`${push(M)}6021526064601d20${push(M)}6000${push(1n << 250n)}20186000526020600020${RET_TOP}`), data);
  await same(t, 'MSTORE8, MLOAD at a far offset, MSIZE', await place(`61abcd611001536110015161100052${push2(0x1040)}51505961102052611040611000f3`), data);
  await same(t, 'SLOAD cold then warm, GAS after each', await place(`600154505a600154505a6002545a6000526020526040526060526080${'6000f3'}`), data);
  await same(t, 'SLOAD of an unset slot', await place(`6009546000526020${'6000f3'}`), data);
  // MCOPY (dst, src, len): forward and backward overlaps, from past the memory's end, nothing at huge offsets
  const mcopy = (dst: number, src: number, len: number) => `${push2(len)}${push2(src)}${push2(dst)}5e`;
  await same(t, 'MCOPY', await place(`${push(M - 5n)}6000527f0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20602052${mcopy(8, 0, 40)}${mcopy(1, 30, 33)}${mcopy(100, 200, 10)}6000${push(M)}${push(M)}5e59${push2(400)}52${push2(432)}6000f3`), data);
  await same(t, 'MCOPY to a huge offset: out of gas', await place(`60206000${push(1n << 40n)}5e`), data);
  await same(t, 'RETURN beyond memory (expands)', await place(`602a6000526080601cf3`), data);
  await same(t, 'RETURN nothing at a huge offset', await place(`6000${push(M)}f3`), data);
  await same(t, 'STOP', await place(`6001600200`), data);
  await same(t, 'running off the end', await place(`600160020160`), data);
  await same(t, 'REVERT with data', await place(`602a6000526020601ffd`), data);
  await same(t, 'REVERT with nothing', await place(`60006000fd`), data);
  await same(t, 'JUMPI not taken to a bad destination, then a loop', await place(`6000600357600a5b6001900380600757${RET_TOP}`), data);
  await same(t, 'PUSH32 truncated by the end of the code', await place(`7fffff`), data);
});

t.test('memory expansion costs and limits', async (t) => {
  for (const at of [0x20, 0x3e0, 0x400, 0x1000, 0x10000, 0x80000]) await same(t, `MSTORE at ${at}`, await place(`602a${push(BigInt(at))}525a${RET_TOP}`), new Uint8Array(0), 30_000_000n);
  await same(t, 'MSTORE at a huge offset: out of gas', await place(`602a${push(1n << 64n)}52`), new Uint8Array(0), 30_000_000n);
  await same(t, 'MLOAD at 2^32: out of gas', await place(`${push(1n << 32n)}51`), new Uint8Array(0), 30_000_000n);
  // Past MAX_MEMORY (4 MiB) with the gas to pay for it: left to the library.
  const big = await place(`602a${push(1n << 23n)}52`);
  t.equal(fastRun(big, new Uint8Array(0), 1_000_000_000n), undefined, '8 MiB of memory is declined');
  t.same(fastRun(big, new Uint8Array(0), 1_000_000n), await library(big, new Uint8Array(0), 1_000_000n), '... but out of gas when the gas cannot pay for it');
});

t.test('failures: stack, jumps, invalid opcodes, out of gas against underflow', async (t) => {
  const none = new Uint8Array(0);
  for (const [name, code, gas] of [
    ['ADD on an empty stack', '01', 100_000n],
    ['ADD with one word', '600101', 100_000n],
    ['ADDMOD with two words', '6001600108', 100_000n],
    ['MSTORE with one word', '600052', 100_000n],
    ['MSTORE with one word, too little gas for its memory', '600052', 5n],
    ['MLOAD on an empty stack, no gas', '51', 0n],
    ['SLOAD on an empty stack', '54', 100_000n],
    ['KECCAK256 with one word', '600020', 100_000n],
    ['RETURN with one word', '6000f3', 100_000n],
    ['REVERT on an empty stack', 'fd', 100_000n],
    ['CALLDATACOPY with two words', '6000600037', 100_000n],
    ['DUP3 of two words', '6001600282', 100_000n],
    ['SWAP2 of two words', '6001600291', 100_000n],
    ['POP on an empty stack', '50', 100_000n],
    ['JUMP on an empty stack', '56', 100_000n],
    ['ADD with no gas (the charge comes first)', '01', 2n],
    ['stack overflow by PUSH0', '5f'.repeat(1025), 100_000n],
    ['stack overflow by DUP1', '5f' + '80'.repeat(1024), 100_000n],
    ['jump to a non-JUMPDEST', '600356005b00', 100_000n],
    ['jump into PUSH data', '600456605b00', 100_000n],
    ['jump past the end', '61ffff56', 100_000n],
    ['jump to the code size', '600356', 100_000n],
    ['JUMPI taken to a bad destination', '6001600057', 100_000n],
    ['INVALID (0xfe)', '6001fe', 100_000n],
    ['an unassigned opcode', '0c', 100_000n],
    ['an endless loop: out of gas', '5b600160020150600056', 50_000n],
    ['EXP with a 32-byte exponent', `${push(M)}600305${push(M)}60030a${RET_TOP}`, 100_000n],
    ['EXP with too little gas for the exponent bytes', `${push(M)}60030a`, 100n],
  ] as const) {
    await same(t, name, await place(code), none, gas);
  }
  const bad = await place('600356005b00');
  t.match((await library(bad, none, 100_000n)).error, /^invalid JUMP at 0x[0-9a-f]{64}\/0x[0-9a-f]{40}:2$/, 'the bad jump names code hash, address and pc');
});

t.test('what it declines', async (t) => {
  const none = new Uint8Array(0);
  for (const [name, code] of [
    ['SSTORE', '6001600155'],
    ['CALL', '6000600060006000600060aa5af1'],
    ['STATICCALL', '600060006000600060aa5afa'],
    ['BALANCE', '60aa31'],
    ['SELFBALANCE', '47'],
    ['LOG0', '60006000a0'],
    ['TLOAD', '60015c'],
    ['CREATE', '600060006000f0'],
    ['RETURNDATACOPY', '6000600060003e'],
    ['COINBASE', '41'],
    ['an EIP-7702 delegation', 'ef0100' + 'aa'.repeat(20)],
  ] as const) {
    t.equal(fastRun(await place(code), none, 100_000n), undefined, name);
  }
  t.equal(fastRun(await place('6001'), none, 1n << 60n), undefined, 'a gas limit past 2^53');
  // An uncovered opcode after covered ones: nothing is half-done (the same caller answers next).
  t.equal(fastRun(await place(`602a60005260016001556020${'6000f3'}`), none, 100_000n), undefined, 'SSTORE after an MSTORE');
  await same(t, 'the next call starts clean (memory zeroed)', await place(`600051${RET_TOP}`), none);
});
