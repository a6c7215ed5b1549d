/**
 * src/evm/fast-steps.ts: the interpreter loop that runs static-gas synchronous opcodes inline gives
 * exactly what @ethereumjs/evm's own loop gives (gas used, return data, error, gas left) for the
 * same code, including the ways a frame ends: RETURN, STOP, running off the end, REVERT, out of gas
 * in an inline opcode, an invalid opcode, stack underflow, a bad jump, and a step listener (which
 * the library's loop serves).
 */
import { hexToBytes } from '@ethereumjs/util';
import { createVM } from '@ethereumjs/vm';
import t from 'tap';
import { createEvmCommon } from '../../src/evm/common.js';
import { installFastSteps } from '../../src/evm/fast-steps.js';

const CASES: [string, string, bigint][] = [
  // 2 + 3, MSTORE at 0, RETURN 32 bytes
  ['arithmetic and RETURN', '6002600301600052' + '60206000f3', 100_000n],
  // a loop of 10 with JUMPI/JUMP (the jump analysis and the cached opcode table), then RETURN
  ['loop with jumps', '600a' + '5b' + '8060019003' + '80600257' + '50' + '60ff60005260206000f3', 100_000n],
  ['STOP', '600160020100', 100_000n],
  ['off the end of the code', '6001600201', 100_000n],
  // REVERT with 32 bytes of data
  ['REVERT', '602a60005260206000fd', 100_000n],
  // an endless loop of static-gas opcodes: out of gas inside the inline path
  ['out of gas', '5b600160020150600056', 5_000n],
  ['invalid opcode', '6001fe', 100_000n],
  ['stack underflow', '01', 100_000n],
  ['jump to a non-JUMPDEST', '600356005b00', 100_000n],
  ['PUSH past the end of the code', '61ff', 100_000n],
];

type Outcome = { gasUsed: bigint; gasLeft: string; ret: string; error: string | undefined; steps?: number };

async function runAll(fast: boolean, listen = false): Promise<Outcome[]> {
  t.equal(await installFastSteps(fast), fast, `fast loop ${fast ? 'installed' : 'off'}`);
  const vm = await createVM({ common: createEvmCommon({ chainId: 9000n }) });
  let steps = 0;
  if (listen) vm.evm.events!.on('step', () => void steps++);
  const out: Outcome[] = [];
  for (const [, code, gasLimit] of CASES) {
    steps = 0;
    const r = await vm.evm.runCode!({ code: hexToBytes(`0x${code}`), gasLimit });
    out.push({
      gasUsed: r.executionGasUsed,
      gasLeft: String(r.runState?.gasLeft),
      ret: Buffer.from(r.returnValue).toString('hex'),
      error: r.exceptionError?.error,
      ...(listen ? { steps } : {}),
    });
  }
  return out;
}

t.test('the inline loop gives what the library loop gives', async (t) => {
  const lib = await runAll(false);
  const fast = await runAll(true);
  CASES.forEach(([name], i) => t.same(fast[i], lib[i], name));
  t.equal(lib[0]!.ret, '5'.padStart(64, '0'), 'the arithmetic case returns 5');
  t.equal(lib[5]!.error, 'out of gas', 'the endless loop runs out of gas');
  t.equal(lib[4]!.error, 'revert', 'REVERT is an error with data');
  // With a step listener the library's loop runs (tracers see every step), same results.
  const traced = await runAll(true, true);
  CASES.forEach(([name], i) => {
    const { steps, ...rest } = traced[i]!;
    t.same(rest, lib[i], `${name}, traced`);
    t.ok((steps ?? 0) > 0, `${name}: steps seen by the listener`);
  });
  await installFastSteps(true);
});
