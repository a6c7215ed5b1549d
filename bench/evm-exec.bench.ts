/**
 * EVM execution benchmark (one thread): ERC-20 transfers and plain transfers through
 * EvmContext.executeBlock over LMDB-backed flat state and trie, balanceOf through EvmContext.call,
 * tx admission (decode + sender recovery), and the state-root time of a 1,000-transfer block with
 * the native crypto backend against CHAIND_CRYPTO=js (each in its own process, so V8 feedback of
 * one backend does not slow the other; anchors A2 on ethereumjs's mpt keccak benchmark).
 *
 *   node dist/bench/evm-exec.bench.js
 *   BENCH_EVM_TRANSFERS=2000 BENCH_EVM_HOLDERS=1024 BENCH_EVM_BLOCKS=3 node dist/bench/evm-exec.bench.js
 *   node --cpu-prof --cpu-prof-dir=/tmp/evm-prof dist/bench/evm-exec.bench.js   # profile
 *
 * Signing the txs uses @noble (slow, ~1 ms each) and is outside every timed section.
 */
// First: CHAIND_CRYPTO must be applied before any import hashes (it used to fail CRYPTO_ALREADY_CHOSEN).
import './crypto-env.js';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Address, createContractAddress } from '@ethereumjs/util';
import { createBlock } from '@ethereumjs/block';
import { Caches, MerkleStateManager } from '@ethereumjs/statemanager';
import { createVM, runTx } from '@ethereumjs/vm';
import { open } from 'lmdb';
import { readEnvSwitches } from '../src/config/env.js';
import { getCryptoBackend, setCryptoBackendSetting } from '../src/crypto/backend.js';
import {
  type BlockEnv,
  EvmContext,
  type ExecTx,
  KVFlatState,
  LmdbKV,
  StateTrie,
  admitTxs,
  createEvmCommon,
  recoverSender,
} from '../src/evm/index.js';
import { type Key, balanceOfData, deployData, makeKeys, signTx, transferData } from '../test/helpers/evm.js';
import { report, smoke } from './report.js';

const TRANSFERS = Number(process.env['BENCH_EVM_TRANSFERS'] ?? 2000);
const HOLDERS = Number(process.env['BENCH_EVM_HOLDERS'] ?? 1024);
const BLOCKS = Number(process.env['BENCH_EVM_BLOCKS'] ?? 3);
const ROOT_TRANSFERS = smoke(1000, 50);
const MODE = process.env['BENCH_EVM_MODE'] ?? 'main';
// CHAIND_CRYPTO picks the backend of this process (the parent runs one child per setting).
setCryptoBackendSetting(readEnvSwitches(process.env).crypto);
const crypto = getCryptoBackend();
const common = createEvmCommon({ chainId: 9001n, crypto });
const ETH = 10n ** 18n;

function env(n: bigint): BlockEnv {
  return {
    number: n,
    timestamp: 1_700_000_000n + n,
    coinbase: new Uint8Array(20).fill(0xc0),
    gasLimit: 1_000_000_000n,
    baseFeePerGas: 0n,
    prevRandao: new Uint8Array(32).fill(1),
  };
}

async function setup(dir: string) {
  const lenv = open({ path: dir, noSync: true });
  const db = lenv.openDB({ name: 'evm', keyEncoding: 'binary', encoding: 'binary' });
  const kv = new LmdbKV(db as never);
  const ctx = await EvmContext.create({ common, crypto, flat: new KVFlatState(kv), trie: new StateTrie({ nodes: kv, crypto }) });
  const keys = makeKeys(HOLDERS, 'bench');
  const g = await ctx.applyGenesis(keys.map((k) => ({ address: k.address, balance: 1_000_000n * ETH })));
  db.transactionSync(() => ctx.persistBlock(g));
  const nonces = keys.map(() => 0n);
  let height = 1n;
  const run = async (txs: ExecTx[]) => {
    const res = await ctx.executeBlock(env(height++), txs);
    db.transactionSync(() => ctx.persistBlock(res));
    const failed = res.receipts.filter((r) => r.status !== 1);
    if (failed.length > 0) throw new Error(`${failed.length} txs failed: ${failed[0]!.error}`);
    return res;
  };
  const signed = (k: number, spec: Omit<Parameters<typeof signTx>[2], 'nonce'>): TypedTransaction =>
    signTx(common, keys[k]!, { ...spec, nonce: nonces[k]!++ });
  const exec = (tx: TypedTransaction): ExecTx => ({ tx, sender: recoverSender(tx, crypto) });
  // Deploy, then give every holder tokens (one block of HOLDERS-1 transfers from holder 0).
  const token = createContractAddress(new Address(keys[0]!.address), 0n).bytes;
  await run([exec(signed(0, { data: deployData(10n ** 30n), gasLimit: 3_000_000n }))]);
  await run(keys.slice(1).map((k) => exec(signed(0, { to: token, data: transferData(k.address, 10n ** 24n) }))));
  return { lenv, db, ctx, keys, nonces, token, run, signed, exec };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** n ERC-20 transfers, sender i % HOLDERS to a pseudo-random other holder. */
function erc20Block(s: Setup, n: number, salt: number): TypedTransaction[] {
  const txs: TypedTransaction[] = [];
  for (let i = 0; i < n; i++) {
    const from = (i + salt) % HOLDERS;
    const to = (from * 7 + 13 + salt) % HOLDERS;
    txs.push(s.signed(from, { to: s.token, data: transferData(s.keys[to === from ? (to + 1) % HOLDERS : to]!.address, 1n + BigInt(i)) }));
  }
  return txs;
}

function plainBlock(s: Setup, n: number, salt: number): TypedTransaction[] {
  const txs: TypedTransaction[] = [];
  for (let i = 0; i < n; i++) {
    const from = (i + salt) % HOLDERS;
    const to = (from + 1 + salt) % HOLDERS;
    txs.push(s.signed(from, { to: s.keys[to]!.address, value: 1000n + BigInt(i), gasLimit: 21_000n }));
  }
  return txs;
}

/** CPU ms (user + system) of this process: robust against other load on a shared machine. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** BENCH_EVM_PROFILE=file.cpuprofile: profile only the timed ERC-20 blocks (not the @noble signing). */
const PROFILE = process.env['BENCH_EVM_PROFILE'];
let session: Session | undefined;
async function profileStart(): Promise<void> {
  if (!PROFILE) return;
  session ??= new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
async function profileStop(): Promise<void> {
  if (!PROFILE || !session) return;
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(PROFILE, JSON.stringify(profile));
  session.disconnect();
  session = undefined;
}

const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'chaind-evm-bench-'));
  try {
    console.log(`crypto backend: ${crypto.name}; ${TRANSFERS} transfers per block among ${HOLDERS} holders, ${BLOCKS} blocks each`);
    const s = await setup(dir);

    // Admission: decode + recover, batched.
    const adm = erc20Block(s, TRANSFERS, 1).map((tx) => tx.serialize());
    // The signed txs above consumed nonces; roll them back (they are not executed).
    for (let i = 0; i < TRANSFERS; i++) s.nonces[(i + 1) % HOLDERS]!--;
    let t0 = performance.now();
    let c0 = cpuMs();
    const admitted = admitTxs(adm, common, crypto);
    const admitUs = ((performance.now() - t0) * 1000) / adm.length;
    const admitCpuUs = ((cpuMs() - c0) * 1000) / adm.length;
    if (admitted.some((a) => !a.ok)) throw new Error('admission failed');

    const report: string[] = [];
    report.push(`admitTxs (decode + recover), ${adm.length} ERC-20 txs: ${fmt(admitUs, 1)} µs/tx wall, ${fmt(admitCpuUs, 1)} CPU µs/tx`);
    // Recovery alone (decode excluded), on the already-decoded txs.
    t0 = performance.now();
    c0 = cpuMs();
    for (const a of admitted) if (a.ok) recoverSender(a.tx, crypto);
    report.push(`recoverSender alone: ${fmt(((performance.now() - t0) * 1000) / adm.length, 1)} µs/tx wall, ${fmt(((cpuMs() - c0) * 1000) / adm.length, 1)} CPU µs/tx`);

    for (const [kind, make] of [
      ['ERC-20 transfer', erc20Block],
      ['plain transfer', plainBlock],
    ] as const) {
      const rows: { tps: number; exec: number; root: number; persist: number; nodes: number; cpuUs: number; execCpu: number; rootCpu: number }[] = [];
      for (let b = 0; b < BLOCKS; b++) {
        const txs = make(s, TRANSFERS, b * 31 + 3).map((tx) => s.exec(tx));
        if (kind === 'ERC-20 transfer' && b === BLOCKS - 1) await profileStart();
        const c0 = cpuMs();
        const res = await s.ctx.executeBlock(env(BigInt(100 + b + (kind === 'plain transfer' ? 50 : 0))), txs);
        const cpuUs = ((cpuMs() - c0) * 1000) / TRANSFERS;
        if (kind === 'ERC-20 transfer' && b === BLOCKS - 1) await profileStop();
        const tp = performance.now();
        s.db.transactionSync(() => s.ctx.persistBlock(res));
        const persist = performance.now() - tp;
        if (res.receipts.some((r) => r.status !== 1)) throw new Error(`${kind}: a tx failed: ${res.receipts.find((r) => r.status !== 1)!.error}`);
        const total = res.timings.execMs + res.timings.rootMs;
        rows.push({ tps: (TRANSFERS * 1000) / total, exec: res.timings.execMs, root: res.timings.rootMs, persist, nodes: res.nodes.length, cpuUs, execCpu: res.timings.execCpuMs, rootCpu: res.timings.rootCpuMs });
      }
      for (const r of rows) {
        report.push(
          `${kind}: ${fmt(r.tps)} tx/s wall, ${fmt(1e6 / r.cpuUs)} tx/s by CPU time (${fmt(r.cpuUs)} CPU µs/tx: ` +
            `exec ${fmt(r.execCpu)} ms, flush+root ${fmt(r.rootCpu)} ms CPU); wall: exec ${fmt((r.exec * 1000) / TRANSFERS)} µs/tx = ${fmt(r.exec)} ms, ` +
            `flush+root ${fmt(r.root)} ms, persist ${fmt(r.persist, 1)} ms, ${r.nodes} trie nodes)`,
        );
      }
    }

    // balanceOf through a reverted-checkpoint call.
    const N = 2000;
    for (let i = 0; i < 200; i++) await s.ctx.call({ to: s.token, data: balanceOfData(s.keys[i % HOLDERS]!.address), gasLimit: 100_000n });
    t0 = performance.now();
    c0 = cpuMs();
    for (let i = 0; i < N; i++) await s.ctx.call({ to: s.token, data: balanceOfData(s.keys[i % HOLDERS]!.address), gasLimit: 100_000n });
    report.push(`balanceOf call: ${fmt(((performance.now() - t0) * 1000) / N)} µs wall, ${fmt(((cpuMs() - c0) * 1000) / N)} CPU µs`);
    for (const l of report) console.log(l);
    await s.lenv.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Child mode: the state root of ROOT_TRANSFERS ERC-20 transfers, best of BLOCKS. */
async function rootOnly(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'chaind-evm-bench-'));
  try {
    const s = await setup(dir);
    let best = Infinity;
    let bestCpu = Infinity;
    for (let b = 0; b < BLOCKS; b++) {
      const txs = erc20Block(s, ROOT_TRANSFERS, b * 17 + 5).map((tx) => s.exec(tx));
      const res = await s.ctx.executeBlock(env(BigInt(200 + b)), txs);
      s.db.transactionSync(() => s.ctx.persistBlock(res));
      best = Math.min(best, res.timings.rootMs);
      bestCpu = Math.min(bestCpu, res.timings.rootCpuMs);
    }
    console.log(JSON.stringify({ backend: crypto.name, rootMs: best, rootCpuMs: bestCpu }));
    await s.lenv.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Child mode: the same kind of ERC-20 block through @ethereumjs's own MerkleStateManager (its
 * default caches, the block wrapped in one checkpoint so the trie is written once), for the ratio.
 */
async function reference(): Promise<void> {
  const sm = new MerkleStateManager({ common, caches: new Caches() });
  const vm = await createVM({ common, stateManager: sm });
  const keys = makeKeys(HOLDERS, 'bench');
  const nonces = keys.map(() => 0n);
  for (const k of keys) await sm.modifyAccountFields(new Address(k.address), { balance: 1_000_000n * ETH });
  await sm.getStateRoot();
  const signed = (k: number, spec: Omit<Parameters<typeof signTx>[2], 'nonce'>): TypedTransaction =>
    signTx(common, keys[k]!, { ...spec, nonce: nonces[k]!++ });
  let height = 1n;
  const runBlock = async (txs: TypedTransaction[]) => {
    for (const tx of txs) recoverSender(tx, crypto);
    const block = createBlock({ header: { number: height, timestamp: 1_700_000_000n + height, gasLimit: 1_000_000_000n, baseFeePerGas: 0n } }, { common });
    height++;
    const c0 = cpuMs();
    await sm.checkpoint();
    for (const tx of txs) {
      const r = await runTx(vm, { tx, block, skipHardForkValidation: true });
      if (r.execResult.exceptionError) throw new Error(`reference: ${r.execResult.exceptionError.error}`);
    }
    await sm.commit();
    await sm.getStateRoot();
    return cpuMs() - c0;
  };
  const token = createContractAddress(new Address(keys[0]!.address), 0n).bytes;
  await runBlock([signed(0, { data: deployData(10n ** 30n), gasLimit: 3_000_000n })]);
  await runBlock(keys.slice(1).map((k) => signed(0, { to: token, data: transferData(k.address, 10n ** 24n) })));
  let best = Infinity;
  for (let b = 0; b < BLOCKS; b++) {
    const txs: TypedTransaction[] = [];
    for (let i = 0; i < ROOT_TRANSFERS; i++) {
      const from = (i + b * 17 + 5) % HOLDERS;
      const to = (from * 7 + 13 + b * 17 + 5) % HOLDERS;
      txs.push(signed(from, { to: token, data: transferData(keys[to === from ? (to + 1) % HOLDERS : to]!.address, 1n + BigInt(i)) }));
    }
    best = Math.min(best, await runBlock(txs));
  }
  console.log(JSON.stringify({ refCpuUsPerTx: (best * 1000) / ROOT_TRANSFERS }));
}

if (MODE === 'root') {
  await rootOnly();
} else if (MODE === 'ref') {
  await reference();
} else {
  await main();
  if (process.env['BENCH_EVM_SKIP_ROOT'] !== '1') {
    const self = fileURLToPath(import.meta.url);
    const res: Record<string, number> = {};
    const resCpu: Record<string, number> = {};
    for (const setting of ['native', 'js']) {
      const r = spawnSync(process.execPath, [self], {
        env: { ...process.env, BENCH_EVM_MODE: 'root', CHAIND_CRYPTO: setting },
        encoding: 'utf8',
      });
      const line = r.stdout.trim().split('\n').pop() ?? '';
      try {
        const j = JSON.parse(line) as { backend: string; rootMs: number; rootCpuMs: number };
        res[j.backend] = j.rootMs;
        resCpu[j.backend] = j.rootCpuMs;
        console.log(`state root of a ${ROOT_TRANSFERS}-transfer ERC-20 block, ${j.backend}: ${fmt(j.rootMs, 1)} ms wall, ${fmt(j.rootCpuMs, 1)} ms CPU`);
      } catch {
        console.log(`root bench (${setting}) failed: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
      }
    }
    const ref = spawnSync(process.execPath, [self], { env: { ...process.env, BENCH_EVM_MODE: 'ref' }, encoding: 'utf8' });
    try {
      const j = JSON.parse(ref.stdout.trim().split('\n').pop() ?? '') as { refCpuUsPerTx: number };
      console.log(`reference: @ethereumjs MerkleStateManager (caches, one checkpoint per block), ${ROOT_TRANSFERS} ERC-20 transfers: ${fmt(j.refCpuUsPerTx)} CPU µs/tx incl. root`);
    } catch {
      console.log(`reference bench failed: ${ref.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    }
    if (res['native'] && res['js']) {
      console.log(`state root js/native: ${fmt(res['js'] / res['native'], 2)}x wall, ${fmt(resCpu['js']! / resCpu['native']!, 2)}x CPU`);
      report({ area: 'EVM execution', figure: `state root of a ${ROOT_TRANSFERS}-transfer ERC-20 block, CPU (native)`, unit: 'ms', value: resCpu['native']!, peer: 'CHAIND_CRYPTO=js', peerValue: resCpu['js']!, better: 'lower', runs: BLOCKS, note: 'goal ≥ 3×; best of the runs' });
    }
  }
}
