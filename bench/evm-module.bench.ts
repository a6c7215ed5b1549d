/**
 * The EVM module through BaseApp (one thread, real LMDB via Storage, noSync): a block of ERC-20
 * transfers and a block of plain value transfers through FinalizeBlock + commit, reported as
 * process CPU time per tx (user + system; wall time on this shared machine is noise) split into
 * FinalizeBlock (decode, ante, sender recovery, runTx over the Context view, apply) and the
 * state root (commitment) and commit. Compare with bench/evm-exec.bench.ts (src/evm alone).
 *
 *   node dist/bench/evm-module.bench.js
 *   BENCH_EVM_TRANSFERS=2000 BENCH_EVM_HOLDERS=1024 node dist/bench/evm-module.bench.js
 *
 * Signing (@noble, ~1 ms a tx) is outside the timed sections.
 *
 * BENCH_EVM_FAST=0 runs the EVM blocks on the library's own interpreter loop (src/evm/fast-steps.ts off).
 * BENCH_EVM_PARTS=evm or =cosmos runs only the EVM blocks or only the bank-send blocks;
 * BENCH_EVM_BLOCKS=k runs k bank-send blocks per configuration (the cheapest is reported) and
 * BENCH_EVM_COSMOS=on (or off) only that configuration.
 * BENCH_EVM_PROFILE=1 samples the CPU of each FinalizeBlock alone (inspector, not --cpu-prof, so
 * signing and commit stay out) and prints its top frames by self and inclusive time
 * (BENCH_EVM_PROFILE_TOP lines, 25 by default); BENCH_EVM_PROFILE_DIR also keeps the .cpuprofile.
 */
import { Address, createContractAddress } from '@ethereumjs/util';
import { Bech32Codec } from '../src/app/address.js';
import { createEvmCommon } from '../src/evm/common.js';
import { installFastSteps } from '../src/evm/fast-steps.js';
import { devAccounts } from '../src/keys/devaccounts.js';
import { deployData, makeKeys, signTx, transferData } from '../test/helpers/evm.js';
import { sendTx } from '../test/helpers/txsign.js';
import { profileInProcess } from './cpuprofile.js';
import { openBenchApp } from './evm-app.js';
import { report } from './report.js';

const N = Number(process.env.BENCH_EVM_TRANSFERS ?? 1000);
const HOLDERS = Number(process.env.BENCH_EVM_HOLDERS ?? 1024);
/** Bank-send blocks per configuration (the figure is the cheapest: CPU time on a shared machine only goes up). */
const BLOCKS = Number(process.env.BENCH_EVM_BLOCKS ?? 1);
/** Which bank-send configurations run: `off`, `on` or both (the EVM module off / on). */
const COSMOS_MODES = process.env.BENCH_EVM_COSMOS ?? 'off,on';

const PROFILE = process.env.BENCH_EVM_PROFILE === '1';
/** `fn` under the sampling profiler when BENCH_EVM_PROFILE=1; the top frames printed under `label`. */
async function profiled<T>(label: string, fn: () => Promise<T>): Promise<T> {
  if (!PROFILE) return fn();
  const top = Number(process.env.BENCH_EVM_PROFILE_TOP ?? 25);
  return profileInProcess(fn, { title: `profile of FinalizeBlock, ${label}`, top, dir: process.env.BENCH_EVM_PROFILE_DIR, file: `${label.replace(/[^a-z0-9]+/gi, '-')}.cpuprofile` });
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * What the EVM module costs a Cosmos-only block: the same bank sends (fresh recipients, so every
 * send re-leafs two accounts of the state trie) with the module on and off.
 */
async function cosmosCost(): Promise<void> {
  const dev = devAccounts();
  const senders = dev.filter((a) => a.keyType === 'secp256k1');
  const recipients = makeKeys(N * BLOCKS, 'bench-cosmos');
  const txs: Uint8Array[] = [];
  for (let i = 0; i < N * BLOCKS; i++) {
    const s = i % senders.length;
    txs.push(
      sendTx({
        chainId: 'bench-1',
        from: senders[s]!,
        to: bech(recipients[i]!.address),
        amount: [{ denom: 'achain', amount: 1000n }],
        accountNumber: BigInt(10 + s),
        sequence: BigInt(Math.floor(i / senders.length)),
        fee: { amount: [{ denom: 'achain', amount: 100 }], gasLimit: 200_000n },
      }),
    );
  }
  const perTx: number[] = [];
  for (const evm of [false, true]) {
    if (!COSMOS_MODES.includes(evm ? 'on' : 'off')) continue;
    const bench = await openBenchApp({ evm });
    const { app } = bench;
    try {
      await app.finalizeBlock(bench.request([]));
      bench.commit();
      let best = Infinity;
      for (let b = 0; b < BLOCKS; b++) {
        const block = txs.slice(b * N, (b + 1) * N);
        const c0 = cpuMs();
        const res = await profiled(`bank sends, EVM module ${evm ? 'on' : 'off'}, block ${b + 1}`, () => app.finalizeBlock(bench.request(block)));
        const c1 = cpuMs();
        bench.commit();
        const c2 = cpuMs();
        const failed = res.txResults.filter((r) => r.code !== 0).length;
        console.log(`bank sends, EVM module ${evm ? 'on ' : 'off'}${BLOCKS > 1 ? ` (block ${b + 1})` : ''}: ${N} txs, finalize ${(((c1 - c0) * 1000) / N).toFixed(0)} µs/tx CPU, commit ${(c2 - c1).toFixed(0)} ms CPU, failed ${failed}`);
        best = Math.min(best, ((c2 - c0) * 1000) / N);
      }
      perTx.push(best);
    } finally {
      await bench.close();
    }
  }
  reportModuleCost(perTx);
}

function reportModuleCost(perTx: number[]): void {
  if (perTx.length === 2) report({ area: 'block execution', figure: 'bank send, finalize + commit CPU, EVM module on', unit: 'µs/tx', value: perTx[1]!, peer: 'EVM module off', peerValue: perTx[0]!, better: 'lower' });
}

function bech(a: Uint8Array): string {
  return new Bech32Codec('chain').encode(a);
}

async function main(): Promise<void> {
  const bench = await openBenchApp();
  const { app, key } = bench;
  try {
    const run = async (label: string, txs: Uint8Array[]) => {
      const c0 = cpuMs();
      const w0 = performance.now();
      const res = txs.length > 1 ? await profiled(label, () => app.finalizeBlock(bench.request(txs))) : await app.finalizeBlock(bench.request(txs));
      const c1 = cpuMs();
      bench.commit();
      const c2 = cpuMs();
      const failed = res.txResults.filter((r) => r.code !== 0).length;
      if (txs.length > 1) {
        console.log(
          `${label}: ${txs.length} txs, finalize ${(((c1 - c0) * 1000) / txs.length).toFixed(0)} µs/tx CPU, commit ${(c2 - c1).toFixed(0)} ms CPU, ` +
            `total ${(txs.length / ((c2 - c0) / 1000)).toFixed(0)} tx/s per core CPU (wall ${(performance.now() - w0).toFixed(0)} ms), failed ${failed}`,
        );
      }
      return res;
    };
    const common = createEvmCommon({ chainId: 9000n });
    await run('empty', []);
    await run('deploy', [signTx(common, key, { nonce: 0n, data: deployData(10n ** 30n), gasLimit: 2_000_000n }).serialize()]);
    // BENCH_EVM_FAST=0: the library's own interpreter loop (src/evm/fast-steps.ts off), for A/B.
    if (process.env.BENCH_EVM_FAST === '0') await installFastSteps(false);
    const token = createContractAddress(new Address(key.address), 0n).bytes;
    const holders = makeKeys(HOLDERS, 'bench-holder');
    let nonce = 1n;
    for (let round = 0; round < 2; round++) {
      const erc: Uint8Array[] = [];
      for (let i = 0; i < N; i++) erc.push(signTx(common, key, { nonce: nonce++, to: token, data: transferData(holders[i % HOLDERS]!.address, 1n), gasLimit: 100_000n }).serialize());
      await run(`ERC-20 transfers (round ${round + 1})`, erc);
    }
    const plain: Uint8Array[] = [];
    for (let i = 0; i < N; i++) plain.push(signTx(common, key, { nonce: nonce++, to: holders[i % HOLDERS]!.address, value: 1n, gasLimit: 21_000n }).serialize());
    await run('plain transfers', plain);
    // The Cosmos-only path for reference: an empty block's cost.
    const c0 = cpuMs();
    await run('empty', []);
    console.log(`empty block: ${(cpuMs() - c0).toFixed(1)} ms CPU`);
  } finally {
    await bench.close();
  }
}

const PARTS = process.env.BENCH_EVM_PARTS ?? 'evm,cosmos';
if (PARTS.includes('evm')) await main();
if (PARTS.includes('cosmos')) await cosmosCost();
