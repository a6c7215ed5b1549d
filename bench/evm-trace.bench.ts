/**
 * debug_traceTransaction with the struct logger, chaind beside anvil in one run (issue 12's bench):
 *  - struct-log steps per second: a tx that loops JUMPDEST/PUSH1/JUMP until it runs out of gas
 *    (about 100,000 steps at the default 400,000 gas), traced N times on each, the same signed txs
 *    on both (same sender and nonces: same addresses); the size of the answer and the node's peak
 *    RSS (VmHWM) before and after are printed too;
 *  - blocks keep their interval while a worker traces: the CometBFT block times (ns) of the blocks
 *    committed while the traces run back to back, against the blocks before, with timeout_commit
 *    1s (the devnet's ~1 s interval).
 *
 * Usage: node dist/bench/evm-trace.bench.js [traces per side, default 5]
 *        BENCH_TRACE_GAS=<gas of the looping tx, default 400000>
 * Not part of `make test`; the load average is printed (the machine is shared).
 */
import { report, smoke } from './report.js';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { bytesToHex, hexToBytes, createContractAddress, Address } from '@ethereumjs/util';
import { parseJwtSecret, signJwt } from '../src/config/jwt.js';
import { createEvmCommon } from '../src/evm/common.js';
import { devAccounts } from '../src/keys/devaccounts.js';
import { rpcOk, signTx, startAnvil, startEvmDevnet } from '../test/helpers/evm.js';
import { waitFor } from '../test/helpers/node.js';

const RUNS = Number(process.argv[2] ?? smoke(5, 1));
const GAS = BigInt(process.env.BENCH_TRACE_GAS ?? smoke(400_000, 40_000));
const CHAIN_ID = 9000;
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

const devnet = await startEvmDevnet({ api: ['eth', 'net', 'web3', 'debug'], timeoutCommit: '1s' });
const anvil = await startAnvil(['--steps-tracing', '--hardfork', 'prague', '--chain-id', String(CHAIN_ID), '--base-fee', '0', '--disable-min-priority-fee']);
try {
  const secret = parseJwtSecret(readFileSync(join(devnet.home, 'config/jwt.hex'), 'utf8'));
  const authed = async (url: string, method: string, params: unknown[]) => {
    const t0 = performance.now();
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', Authorization: `Bearer ${signJwt(secret)}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal: AbortSignal.timeout(300_000),
    });
    const text = await r.text();
    const ms = performance.now() - t0;
    const body = JSON.parse(text) as { result?: any; error?: unknown };
    if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
    return { result: body.result, ms, bytes: text.length };
  };

  const sender = devAccounts().filter((a) => a.keyType === 'eth_secp256k1')[6]!;
  const S = bytesToHex(sender.address);
  await rpcOk(anvil.url, 'anvil_setBalance', [S, await rpcOk(devnet.url, 'eth_getBalance', [S, 'latest'])]);
  const common = createEvmCommon({ chainId: BigInt(CHAIN_ID) });
  // Runtime 0x5b600056: JUMPDEST PUSH1 0 JUMP, forever (4 gas a step); the init code returns it.
  const init = hexToBytes('0x635b6000566000526004601cf3');
  const loop = createContractAddress(new Address(sender.address), 0n).bytes;
  const txs = [signTx(common, { priv: sender.privateKey }, { nonce: 0n, data: init, gasLimit: 100_000n })];
  for (let i = 0; i < RUNS; i++) txs.push(signTx(common, { priv: sender.privateKey }, { nonce: BigInt(i + 1), to: loop, gasLimit: 21_000n + GAS }));
  const hashes = txs.map((x) => bytesToHex(x.hash()));
  for (const url of [devnet.url, anvil.url]) for (const x of txs) await rpcOk(url, 'eth_sendRawTransaction', [bytesToHex(x.serialize())]);
  for (const url of [devnet.url, anvil.url]) await waitFor('the last receipt', () => rpcOk(url, 'eth_getTransactionReceipt', [hashes.at(-1)]), 120_000, 200);

  // Warm the node's EVM call workers (they load on the first EVM JSON-RPC call).
  await rpcOk(devnet.url, 'eth_blockNumber', []);
  await new Promise((r) => setTimeout(r, 8000));

  const vmHwm = () => {
    const st = readFileSync(`/proc/${devnet.node.proc.pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+)/.exec(st)?.[1] ?? 0) / 1024;
  };
  const cometTime = async (h: number) => {
    const r = await fetch(`http://127.0.0.1:${devnet.ports.rpc}/block?height=${h}`);
    const b = (await r.json()) as { result: { block: { header: { time: string } } } };
    const t = b.result.block.header.time;
    const [sec, frac = '0'] = t.replace('Z', '').split('.');
    return Date.parse(`${sec}Z`) + Number(`0.${frac}`) * 1000;
  };
  const height = async () => Number(BigInt(await rpcOk(devnet.url, 'eth_blockNumber', [])));
  const intervals = async (from: number, to: number) => {
    const ts: number[] = [];
    for (let h = from; h <= to; h++) ts.push(await cometTime(h));
    return ts.slice(1).map((t, i) => t - ts[i]!);
  };

  // Baseline interval: blocks before the traces.
  const h0 = await height();
  await new Promise((r) => setTimeout(r, 5000));
  const h1 = await height();
  const before = await intervals(Math.max(2, h0), h1);

  let blockIntervals: { before: number[]; during: number[] } = { before: [], during: [] };
  const rssBefore = vmHwm();
  const results: Record<string, { steps: number; ms: number[]; bytes: number }> = {};
  for (const [name, url] of [['chaind', devnet.url], ['anvil', anvil.url]] as const) {
    const r = { steps: 0, ms: [] as number[], bytes: 0 };
    const hStart = await height();
    for (let i = 1; i <= RUNS; i++) {
      const a = await authed(url, 'debug_traceTransaction', [hashes[i], {}]);
      r.steps = a.result.structLogs.length;
      r.bytes = a.bytes;
      r.ms.push(a.ms);
    }
    results[name] = r;
    if (name === 'chaind') {
      const hEnd = await height();
      const during = await intervals(hStart, hEnd);
      blockIntervals = { before: [...before], during: [...during] };
      const stat = (xs: number[]) => (xs.length === 0 ? 'n/a' : `median ${xs.sort((a, b) => a - b)[xs.length >> 1]!.toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms over ${xs.length}`);
      console.log(`block interval before the traces: ${stat(before)}`);
      console.log(`block interval while chaind traced (heights ${hStart}..${hEnd}): ${stat(during)}`);
    }
  }
  const rssAfter = vmHwm();
  console.log(`\ntrace of a ${GAS}-gas loop, ${RUNS} runs each (load ${load()})`);
  console.log(`${'side'.padEnd(8)} ${'steps'.padStart(8)} ${'bytes'.padStart(11)} ${'median ms'.padStart(10)} ${'steps/s'.padStart(10)}`);
  for (const [name, r] of Object.entries(results)) {
    const med = [...r.ms].sort((a, b) => a - b)[r.ms.length >> 1]!;
    console.log(`${name.padEnd(8)} ${String(r.steps).padStart(8)} ${String(r.bytes).padStart(11)} ${med.toFixed(0).padStart(10)} ${Math.round((r.steps / med) * 1000).toString().padStart(10)}`);
  }
  const c = results.chaind!;
  const a = results.anvil!;
  const ratio = [...c.ms].sort((x, y) => x - y)[c.ms.length >> 1]! / [...a.ms].sort((x, y) => x - y)[a.ms.length >> 1]!;
  console.log(`chaind/anvil time ratio: ${ratio.toFixed(2)}`);
  console.log(`chaind node peak RSS (VmHWM): ${rssBefore.toFixed(0)} MiB before the traces, ${rssAfter.toFixed(0)} MiB after`);
  const medMs = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
  report({ area: 'tracing', figure: `struct-log steps/s, ${c.steps}-step tx (debug_traceTransaction)`, unit: 'steps/s', value: (c.steps / medMs(c.ms)) * 1000, peer: 'anvil', peerValue: (a.steps / medMs(a.ms)) * 1000, runs: RUNS });
  if (blockIntervals.before.length > 0 && blockIntervals.during.length > 0) {
    report({ area: 'tracing', figure: 'median block interval while a worker traces', unit: 'ms', value: medMs(blockIntervals.during), peer: 'the same node before the traces', peerValue: medMs(blockIntervals.before), better: 'lower' });
  }
} finally {
  devnet.stop();
  anvil.stop();
}
