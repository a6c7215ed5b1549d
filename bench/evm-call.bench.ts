/**
 * eth_call's engine alone (one thread, real LMDB via Storage): ERC-20 `balanceOf` over HOLDERS
 * different holders through src/app/modules/evm/calls.ts CallEngine, the code the EVM call worker
 * runs per request (workers/evm-call.worker.ts), without the RPC, the pool's messages or wrk.
 * Reported as process CPU time per call (user + system; wall time on this shared machine is
 * noise), best of ROUNDS rounds over all holders. Compare with bench/evm-rpc.bench.ts, whose
 * eth_call figure is this plus the RPC thread's parsing, the hand-off to the pool and the answer.
 *
 *   node dist/bench/evm-call.bench.js
 *   (rounds alternate src/evm/fast-call.ts's synchronous interpreter with @ethereumjs/evm's runCall,
 *   BENCH_CALL_AB=fastcall by default, and report the pair as a figure; BENCH_CALL_AB=fast
 *   alternates the library's loop with src/evm/fast-steps.ts's; BENCH_CALL_AB= runs neither)
 *   BENCH_CALL_PROFILE=1: samples the last round and prints its top frames
 *   (BENCH_CALL_PROFILE_TOP lines); BENCH_CALL_PROFILE_DIR also keeps the .cpuprofile.
 *
 * `make bench` runs it (`make test`'s bench smoke too, at 16 holders and one round).
 */
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import { Address, createContractAddress } from '@ethereumjs/util';
import { CallEngine, type CallRequest } from '../src/app/modules/evm/calls.js';
import { createEvmCommon } from '../src/evm/common.js';
import { installFastSteps } from '../src/evm/fast-steps.js';
import { balanceOfData, deployData, makeKeys, signTx, transferData } from '../test/helpers/evm.js';
import { profileInProcess } from './cpuprofile.js';
import { openBenchApp } from './evm-app.js';
import { report } from './report.js';

const HOLDERS = Number(process.env.BENCH_CALL_HOLDERS ?? 1024);
const ROUNDS = Number(process.env.BENCH_CALL_ROUNDS ?? 5);
const PROFILE = process.env.BENCH_CALL_PROFILE === '1';

/**
 * CPU time of this thread alone, µs (/proc/self/task/<pid>/stat, clock ticks): without V8's
 * helper threads (concurrent compiling, parallel GC), whose share swings from run to run.
 */
const TICK_US = 1e6 / 100;
function threadCpuUs(): number {
  const f = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(x[11]) + Number(x[12])) * TICK_US;
}
const MAIN_ONLY = process.env.BENCH_CALL_THREAD === '1';

function cpuUs(): number {
  if (MAIN_ONLY) return threadCpuUs();
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** Changes that can be switched at run time, for BENCH_CALL_AB. */
const AB_TOGGLES: Record<string, (on: boolean, engine: CallEngine) => Promise<unknown>> = {
  /** src/evm/fast-call.ts's interpreter (off: every call through @ethereumjs/evm). */
  fastcall: async (on, engine) => {
    engine.fastCalls = on;
  },
  /** src/evm/fast-steps.ts's loop inside the library (the fast-call interpreter off on both sides). */
  fast: async (on, engine) => {
    engine.fastCalls = false;
    return installFastSteps(on);
  },
  /** Both sides the same: the fine A/B's percentiles of one build (before/after across builds). */
  none: async () => undefined,
};

const CHURN = Number(process.env.BENCH_CALL_CHURN ?? 0);
let latestBump = 0;

const HEAP = process.env.BENCH_CALL_HEAP === '1';

/** The allocation sites of `fn` (sampling heap profiler), top frames by bytes allocated. */
async function heapSampled<T>(fn: () => Promise<T>): Promise<T> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: process.env.BENCH_CALL_HEAP_LIVE !== '1', includeObjectsCollectedByMinorGC: process.env.BENCH_CALL_HEAP_LIVE !== '1' });
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    session.disconnect();
    type HNode = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: HNode[] };
    const self = new Map<string, number>();
    let total = 0;
    const walk = (n: HNode) => {
      const k = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:.*\/dist\//, '')}:${n.callFrame.lineNumber + 1}`;
      self.set(k, (self.get(k) ?? 0) + n.selfSize);
      total += n.selfSize;
      for (const c of n.children) walk(c);
    };
    walk(profile.head as unknown as HNode);
    console.log(`allocations of the last round: ${(total / 1024 / 1024).toFixed(1)} MiB sampled`);
    for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`  ${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`);
  }
}

async function profiled<T>(fn: () => Promise<T>): Promise<T> {
  if (HEAP) return heapSampled(fn);
  if (!PROFILE) return fn();
  const top = Number(process.env.BENCH_CALL_PROFILE_TOP ?? 30);
  return profileInProcess(fn, { title: 'profile of the last round', top, dir: process.env.BENCH_CALL_PROFILE_DIR, file: 'evm-call.cpuprofile' });
}

async function main(): Promise<void> {
  const bench = await openBenchApp();
  const { app, key } = bench;
  try {
    const block = async (txs: Uint8Array[]) => {
      const res = await app.finalizeBlock(bench.request(txs));
      bench.commit();
      const failed = res.txResults.filter((r) => r.code !== 0).length;
      if (failed > 0) throw new Error(`${failed} set-up txs failed`);
    };
    const common = createEvmCommon({ chainId: 9000n });
    await block([]);
    await block([signTx(common, key, { nonce: 0n, data: deployData(10n ** 30n), gasLimit: 2_000_000n }).serialize()]);
    const token = createContractAddress(new Address(key.address), 0n).bytes;
    const holders = makeKeys(HOLDERS, 'bench-holder');
    let nonce = 1n;
    await block(holders.map((x) => signTx(common, key, { nonce: nonce++, to: token, data: transferData(x.address, 1000n), gasLimit: 100_000n }).serialize()));

    const evm = app.evm;
    if (!evm) throw new Error('no EVM module');
    const engine = new CallEngine({ keeper: evm.keeper, queryContext: (x) => app.queryContext(x) });
    await engine.warmUp();
    // BENCH_CALL_OFF=name: the run-time change `name` off for the whole run (A/B across processes).
    const off = process.env.BENCH_CALL_OFF;
    if (off !== undefined) await AB_TOGGLES[off]!(false, engine);
    const height = app.lastBlockHeight;
    const reqs: CallRequest[] = holders.map((x) => ({
      kind: 'call',
      height,
      latest: height,
      time: 1_700_000_000n + height,
      gasLimit: 1n << 62n,
      gasCap: 50_000_000n,
      args: { to: token, data: balanceOfData(x.address), value: 0n },
    }));
    const want = `0x${(1000n).toString(16).padStart(64, '0')}`;
    const first = await engine.handle(reqs[0]!);
    if (first !== want) throw new Error(`balanceOf answered ${String(first)}, want ${want}`);
    // BENCH_CALL_AB=name: rounds alternate between the change `name` off (A) and on (B), A B then
    // B A, so that load that comes and goes hits both alike; medians per side.
    // Default `fastcall`: the figure make bench reports; BENCH_CALL_AB= (empty) runs no A/B.
    const ab = process.env.BENCH_CALL_AB ?? 'fastcall';
    const toggle = ab === '' ? undefined : AB_TOGGLES[ab];
    if (ab !== '' && toggle === undefined) throw new Error(`BENCH_CALL_AB: one of ${Object.keys(AB_TOGGLES).join(', ')}`);
    const go = async () => {
      const c0 = cpuUs();
      for (const req of reqs) await engine.handle(req);
      return (cpuUs() - c0) / reqs.length;
    };
    if (toggle !== undefined && process.env.BENCH_CALL_FINE === '1') {
      // Fine A/B: batches of 16 calls, the side switching every batch, wall time per batch; the
      // low percentiles are the batches no other process preempted (the machine is shared).
      const BATCH = 16;
      const times: [number[], number[]] = [[], []];
      let k = 0;
      for (let b = 0; b < ROUNDS * 64; b++) {
        for (const side of b % 2 === 0 ? [0, 1] : [1, 0]) {
          await toggle(side === 1, engine);
          const t0 = performance.now();
          for (let i = 0; i < BATCH; i++) {
            const req = reqs[k++ % reqs.length]!;
            // BENCH_CALL_CHURN=n, side B only: the caches start over every n calls, as when a new
            // block commits (the engine rebinds when the latest height moves).
            if (side === 1 && CHURN > 0 && k % CHURN === 0) latestBump++;
            await engine.handle(side === 1 && CHURN > 0 ? { ...req, latest: req.latest + BigInt(latestBump % 2) } : req);
          }
          times[side]!.push(((performance.now() - t0) * 1000) / BATCH);
        }
      }
      const q = (x: number[], p: number) => [...x].sort((a, b) => a - b)[Math.floor(p * x.length)]!;
      for (const p of [0.05, 0.1, 0.25, 0.5]) console.log(`${ab} p${p * 100}: off ${q(times[0], p).toFixed(1)} µs, on ${q(times[1], p).toFixed(1)} µs wall per call → ${(q(times[0], p) / q(times[1], p)).toFixed(2)}×`);
      return;
    }
    let best = Infinity;
    const sides: [number[], number[]] = [[], []];
    for (let r = 0; r < ROUNDS; r++) {
      if (toggle !== undefined) {
        for (const side of r % 2 === 0 ? [0, 1] : [1, 0]) {
          await toggle(side === 1, engine);
          // Calls after a switch re-optimise the code around it: untimed.
          for (const req of reqs.slice(0, 256)) await engine.handle(req);
          const us = await go();
          sides[side]!.push(us);
          console.log(`round ${r + 1} ${side === 0 ? 'A (off)' : 'B (on) '}: ${us.toFixed(1)} CPU µs per call`);
        }
        continue;
      }
      const us = r === ROUNDS - 1 ? await profiled(go) : await go();
      console.log(`round ${r + 1}: ${us.toFixed(1)} CPU µs per balanceOf call (${reqs.length} holders)`);
      best = Math.min(best, us);
    }
    if (toggle !== undefined) {
      const med = (x: number[]) => [...x].sort((a, b) => a - b)[Math.floor(x.length / 2)]!;
      const ratios = sides[0].map((a, i) => a / sides[1][i]!);
      console.log(`${ab}: off ${med(sides[0]).toFixed(1)} µs, on ${med(sides[1]).toFixed(1)} µs (medians); per-round off/on ${ratios.map((x) => x.toFixed(2)).join(' ')}, median ${med(ratios).toFixed(2)}×`);
      best = med(sides[1]);
      if (ab === 'fastcall') {
        report({
          area: 'EVM execution',
          figure: `eth_call balanceOf, the call engine alone (${reqs.length} holders), CPU per call: the synchronous interpreter of src/evm/fast-call.ts`,
          unit: 'µs',
          peer: '@ethereumjs/evm runCall (with the loop of src/evm/fast-steps.ts)',
          samples: sides[1].map((value, i) => ({ value, peerValue: sides[0][i]! })),
          better: 'lower',
        });
      }
    }
    console.log(`best: ${best.toFixed(1)} CPU µs per call; load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  } finally {
    await bench.close();
  }
}

await main();
