/**
 * Committed bank sends per second on a real devnet node: a `chaind` child process (temp home,
 * `chaind init --dev`, free loopback ports), a setup block that funds S fresh senders from a dev
 * account, then N pre-signed MsgSend txs (N/S per sender, sequences 0…) submitted with
 * broadcast_tx_sync over C keep-alive connections, each sender's txs in order (a sender waits for
 * its previous answer). "Mempool is full" / "still rechecking" answers are retried, as a client
 * would. A round ends when every tx is in a committed block; R rounds run on the one node (the
 * same senders, each round's sequences after the last's), and the figures are the medians of the
 * rounds: single runs of one build measured 861–1,114 tx/s on this machine (2026-11-27).
 *
 * Reports: committed tx/s (first submission → the block holding the last tx seen committed),
 * the node main thread's CPU time per committed tx (from /proc; steadier than tx/s on a shared
 * machine, and shown above a 3 s probe-only baseline so the probe's own cost is not counted),
 * lost txs (signed but not committed with code 0; must be 0), and the latency of an open-loop
 * `/status` probe: one request every 2 ms on a fixed schedule, whether or not the previous one
 * answered, each latency measured from its scheduled time (no coordinated omission). The probe
 * runs on a thread of its own (open-loop.ts probeThread), so this process's load generation does
 * not delay it; it still shares the machine's two cores with the node and this load generator, so
 * it shows how long the node's main thread is blocked or waits for a core. The load generator
 * speaks HTTP through lean-http.ts and prints its own CPU per committed tx: on this machine every
 * millisecond it spends is one the node does not get.
 *
 * Usage: node dist/bench/banksend.bench.js [txs, default 6400] [senders, default 64] [connections, default 8] [rounds, default 3]
 * Env:   BENCH_CPU_PROF=<dir>      run the node under `node --cpu-prof` and print its main thread's top frames
 *        BENCH_TIMEOUT_COMMIT=1s   consensus.timeout_commit (default: the dev config's)
 *        BENCH_NODE_ARGS='--single-threaded-gc'  more node flags for the node process
 *        CHAIND_CRYPTO=js|native   passed through to the node
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { BaseAccountSchema } from '../src/gen/chain/auth/v1beta1/auth_pb.js';
import { QueryAccountRequestSchema, QueryAccountResponseSchema } from '../src/gen/chain/auth/v1beta1/query_pb.js';
import { allocPorts, CLI, portFlags, sleep, startNode, tmpHome, waitFor } from '../test/helpers/node.js';
import { buildTx, devKeys, freshKey, fundingTx, msgSend, type DevAccount } from '../test/helpers/txsign.js';
import { topFrames } from './cpuprofile.js';
import { LeanClient } from './lean-http.js';
import { assertListener } from './listener.js';
import { probeThread, type Latency } from './open-loop.js';
import { report } from './report.js';

const N = Number(process.argv[2] ?? 6400);
const SENDERS = Number(process.argv[3] ?? 64);
const CONNS = Number(process.argv[4] ?? 8);
/** Rounds on the one node (fresh sequences each); the figures are the medians. */
const ROUNDS = Math.max(1, Number(process.argv[5] ?? 3));
const PROBE_EVERY_MS = 2;
const STATUS = { get: '/status' };
/** How long the probe runs alone first, to measure the main thread's cost of idle + probe. */
const CALIBRATE_MS = 3000;
const DENOM = 'achain';
const PER_SENDER = Math.ceil(N / SENDERS);

/** The load generator's connections (the lean client: its own CPU is taken from the node's machine). */
let client: LeanClient;

/** Retries a request whose keep-alive connection the server closed under it (ECONNRESET). */
async function withReset<T>(f: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await f();
    } catch (e) {
      if (i >= 5 || (e as NodeJS.ErrnoException).code !== 'ECONNRESET') throw e;
      resets++;
    }
  }
}
let resets = 0;

function post(body: string): Promise<any> {
  return withReset(async () => JSON.parse((await client.post('/', body)).body.toString('utf8')));
}

function get(p: string): Promise<any> {
  return withReset(async () => JSON.parse((await client.get(p)).body.toString('utf8')));
}

let rpcId = 0;
async function rpc(method: string, params: Record<string, unknown>): Promise<any> {
  const body = await post(JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }));
  if (body.error) throw Object.assign(new Error(`${method}: ${JSON.stringify(body.error)}`), { rpcError: body.error });
  return body.result;
}

async function accountNumber(address: string): Promise<bigint> {
  const data = toBinary(QueryAccountRequestSchema, create(QueryAccountRequestSchema, { address }));
  const r = await rpc('abci_query', { path: '/chain.auth.v1beta1.Query/Account', data: Buffer.from(data).toString('hex') });
  if (r.response.code !== 0) throw new Error(`account ${address}: ${r.response.log}`);
  const any = fromBinary(QueryAccountResponseSchema, Buffer.from(r.response.value, 'base64')).account!;
  return fromBinary(BaseAccountSchema, any.value).accountNumber;
}

async function height(): Promise<bigint> {
  const s = await get('/status');
  return BigInt(s.result.sync_info.latest_block_height);
}

/** utime+stime ticks of one thread (/proc/<pid>/task/<tid>/stat); the main thread's tid is the pid. */
function threadTicks(pid: number, tid = pid): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return NaN;
  }
}
/** utime+stime ticks of the whole process, every thread (/proc/<pid>/stat). */
function processTicks(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return NaN;
  }
}
/** Every thread's utime+stime ticks and name, by tid. */
function allThreadTicks(pid: number): Map<number, { name: string; ticks: number }> {
  const out = new Map<number, { name: string; ticks: number }>();
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      const t = threadTicks(pid, Number(tid));
      if (!Number.isFinite(t)) continue;
      const name = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      out.set(Number(tid), { name, ticks: t });
    }
  } catch {
    // the process is gone
  }
  return out;
}
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** JSON-RPC errors a client should retry: the mempool is full or rechecking. */
function retryable(e: unknown): boolean {
  const msg = JSON.stringify((e as { rpcError?: unknown }).rpcError ?? (e as Error).message ?? '');
  return /mempool is full|still rechecking/.test(msg);
}

interface RoundResult {
  total: number;
  committed: number;
  lost: number;
  rejected: number;
  failedInBlock: number;
  retries: number;
  submitS: number;
  secs: number;
  txPerS: number;
  /** Node main thread CPU (ms) over the round, and above the probe-only baseline. */
  mainMs: number;
  netMainMs: number;
  procMs: number;
  clientUserMs: number;
  clientSysMs: number;
  threads: { tid: number; name: string; ms: number }[];
  logs: Map<string, number>;
  probe: Latency;
}

/**
 * One round: the txs of `perSender` submitted (each sender's in order, every sender at once over
 * the client's connections), the committed blocks watched (block metas only while timed) until all
 * are in, then their codes read.
 */
async function runRound(perSender: string[][], total: number, pid: number, baselineMsPerSec: number): Promise<RoundResult> {
  const startHeight = await height();
  let committed = 0;
  let failedInBlock = 0;
  let lastCommitAt = 0;
  let watching = true;
  const logs = new Map<string, number>();
  const heightsWithTxs: bigint[] = [];
  const watcher = (async () => {
    let h = startHeight + 1n;
    let lastProgress = Date.now();
    while (watching && committed + failedInBlock < total) {
      let latest: bigint;
      try {
        latest = await height();
      } catch {
        await sleep(20);
        continue;
      }
      const seenAt = performance.now();
      if (latest < h) {
        if (Date.now() - lastProgress > 120_000) throw new Error(`no block for 120 s at height ${h}`);
        await sleep(10);
        continue;
      }
      // Block metas only (num_txs) while the run is timed: /block_results of a block of
      // thousands of txs costs the node's main thread far more than a probe, so the codes are
      // read once the run is over. Counted here as committed; the codes correct it below.
      for (; h <= latest; ) {
        const to = h + 19n < latest ? h + 19n : latest;
        const bc = await get(`/blockchain?minHeight=${h}&maxHeight=${to}`);
        for (const m of bc.result.block_metas as { num_txs: string; header: { height: string } }[]) {
          const n = Number(m.num_txs);
          if (n > 0) {
            committed += n;
            lastCommitAt = seenAt;
            heightsWithTxs.push(BigInt(m.header.height));
          }
        }
        h = to + 1n;
      }
      lastProgress = Date.now();
    }
  })();

  const probe = probeThread(client.port, STATUS, 1000 / PROBE_EVERY_MS);
  await probe.ready;
  const cpu0 = threadTicks(pid);
  const client0 = process.cpuUsage();
  const proc0 = processTicks(pid);
  const threads0 = allThreadTicks(pid);
  const t0 = performance.now();
  let rejected = 0;
  let retries = 0;
  await Promise.all(
    perSender.map(async (txs) => {
      for (const tx of txs) {
        for (;;) {
          try {
            const r = await rpc('broadcast_tx_sync', { tx });
            if (r.code !== 0) {
              rejected++;
              const k = `${r.code}: ${r.log}`.slice(0, 160);
              logs.set(k, (logs.get(k) ?? 0) + 1);
            }
            break;
          } catch (e) {
            // A retry after a reset whose first attempt did arrive: the tx is in.
            if (/tx already exists in cache/.test(JSON.stringify((e as { rpcError?: unknown }).rpcError ?? ''))) break;
            if (!retryable(e)) throw e;
            retries++;
            await sleep(20);
          }
        }
      }
    }),
  );
  const submittedAt = performance.now();
  await Promise.race([
    watcher,
    (async () => {
      // Rejected txs never arrive: stop waiting for them.
      while (committed + failedInBlock < total - rejected) await sleep(20);
    })(),
  ]);
  watching = false;
  const mainMs = ((threadTicks(pid) - cpu0) * 1000) / CLOCK_TICKS;
  const procMs = ((processTicks(pid) - proc0) * 1000) / CLOCK_TICKS;
  const threads1 = allThreadTicks(pid);
  const netMainMs = mainMs - baselineMsPerSec * ((performance.now() - t0) / 1000);
  const clientCpu = process.cpuUsage(client0);
  const load = await probe.stop();
  // The codes, now that the timed run is over.
  committed = 0;
  for (const h of heightsWithTxs) {
    const br = await get(`/block_results?height=${h}`);
    for (const r of (br.result.txs_results ?? []) as { code: number; log: string }[]) {
      if (r.code === 0) committed++;
      else {
        failedInBlock++;
        const k = `${r.code}: ${r.log}`.slice(0, 160);
        logs.set(k, (logs.get(k) ?? 0) + 1);
      }
    }
  }
  const secs = (lastCommitAt - t0) / 1000;
  // The busiest threads (the main thread is the one whose tid is the pid; the executor thread is
  // normally the busiest other one; v8:Prof* threads are the profiler's own).
  const threads = [...threads1]
    .map(([tid, t1]) => ({ tid, name: t1.name, ms: ((t1.ticks - (threads0.get(tid)?.ticks ?? 0)) * 1000) / CLOCK_TICKS }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 4);
  return {
    total, committed, lost: total - committed, rejected, failedInBlock, retries, submitS: (submittedAt - t0) / 1000, secs, txPerS: committed / secs,
    mainMs, netMainMs, procMs, clientUserMs: clientCpu.user / 1000, clientSysMs: clientCpu.system / 1000, threads, logs, probe: load,
  };
}

function printRound(r: number, x: RoundResult, pid: number, baselineMsPerSec: number): void {
  const per = (ms: number) => (ms / x.committed).toFixed(2);
  console.log(`  round ${r + 1}/${ROUNDS}:`);
  console.log(`    submitted in ${x.submitS.toFixed(2)} s (${x.retries} retries on full/rechecking mempool, ${resets} on reset connections so far)`);
  console.log(`    committed ${x.committed} in ${x.secs.toFixed(2)} s → ${x.txPerS.toFixed(0)} committed tx/s`);
  console.log(
    `    node main thread CPU: ${(x.mainMs / 1000).toFixed(1)} s = ${per(x.mainMs)} ms per committed tx with the probe; ` +
      `${per(x.netMainMs)} ms above the probe-only baseline (${baselineMsPerSec.toFixed(0)} ms/s) → ceiling ≈ ${((1000 * x.committed) / x.netMainMs).toFixed(0)} tx/s on a free core`,
  );
  console.log(`    node CPU, all threads: ${(x.procMs / 1000).toFixed(1)} s = ${per(x.procMs)} ms per committed tx (load average ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`);
  console.log(`    this load generator's CPU: ${per(x.clientUserMs + x.clientSysMs)} ms per committed tx (user ${per(x.clientUserMs)}, system ${per(x.clientSysMs)}; the probe's thread included)`);
  console.log(`    busiest threads: ${x.threads.map((b) => `${b.tid === pid ? 'main' : `${b.name}#${b.tid}`} ${per(b.ms)} ms/tx`).join(', ')}`);
  console.log(`    lost ${x.lost} (CheckTx rejected ${x.rejected}, failed in block ${x.failedInBlock})`);
  for (const [k, n] of x.logs) console.log(`      ${n}× ${k}`);
  console.log(`    /status probe every ${PROBE_EVERY_MS} ms: ${x.probe.sent} sent, ${x.probe.errors} errors, p50 ${x.probe.p50.toFixed(1)} ms, p99 ${x.probe.p99.toFixed(1)} ms, max ${x.probe.max.toFixed(1)} ms`);
}

async function main(): Promise<void> {
  const home = tmpHome('chaind-bench-');
  const profDir = process.env['BENCH_CPU_PROF'];
  const init = spawnSync(process.execPath, [CLI, 'init', 'bench', '--dev', '--home', home], { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`init failed: ${init.stderr}`);
  const ports = await allocPorts();
  const extra: string[] = [];
  if (process.env['BENCH_TIMEOUT_COMMIT']) extra.push(`--consensus.timeout_commit=${process.env['BENCH_TIMEOUT_COMMIT']}`);
  const nodeArgs = profDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profDir)}`] : [];
  nodeArgs.push(...(process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== ''));
  if (profDir) fs.mkdirSync(profDir, { recursive: true });
  const node = startNodeWith(nodeArgs, home, ports, extra);
  const port = ports.rpc;
  client = new LeanClient(port, CONNS);
  try {
    await waitFor('node height 1', async () => (await height()) >= 1n, 60_000);
    // The node answering is the one we started (its id; its process holds the RPC socket).
    const nodeId = JSON.parse(init.stdout).node_id as string;
    const answering = (await get('/status')).result.node_info.id as string;
    if (answering !== nodeId) throw new Error(`port ${port} answers as node ${answering}, not ours (${nodeId})`);
    assertListener('chaind node RPC', node.proc.pid!, port);
    const chainId = (await get('/status')).result.node_info.network as string;

    // Setup block: one dev account funds every sender in one tx.
    const funder = devKeys().find((k) => k.keyType === 'secp256k1')!;
    const funderNum = await accountNumber(funder.bech32);
    const senders: DevAccount[] = Array.from({ length: SENDERS }, (_, i) => freshKey(i));
    const sink = freshKey(250);
    const fund = fundingTx(chainId, funder, funderNum, senders, DENOM, 10n ** 20n);
    const fr = await rpc('broadcast_tx_commit', { tx: Buffer.from(fund).toString('base64') });
    if (fr.check_tx.code !== 0 || fr.tx_result.code !== 0) throw new Error(`funding failed: ${fr.check_tx.log} ${fr.tx_result.log}`);
    const startHeight = BigInt(fr.height);
    const nums = await Promise.all(senders.map((s) => accountNumber(s.bech32)));

    // Pre-sign every round: the same senders, round r's sequences after round r-1's.
    const signT0 = performance.now();
    const rounds: string[][][] = [];
    let total = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const perSender: string[][] = senders.map(() => []);
      total = 0;
      for (let seq = 0; seq < PER_SENDER; seq++) {
        for (let i = 0; i < SENDERS && total < N; i++, total++) {
          const tx = buildTx({
            chainId,
            msgs: [msgSend(senders[i]!.bech32, sink.bech32, [{ denom: DENOM, amount: 1 }])],
            signers: [{ key: senders[i]!, accountNumber: nums[i]!, sequence: BigInt(r * PER_SENDER + seq) }],
            fee: { gasLimit: 100_000n },
          }).bytes;
          perSender[i]!.push(Buffer.from(tx).toString('base64'));
        }
      }
      rounds.push(perSender);
    }
    console.log(`signed ${ROUNDS} × ${total} txs from ${SENDERS} senders in ${((performance.now() - signT0) / 1000).toFixed(1)} s; submitting over ${CONNS} connections`);

    const pid = node.proc.pid!;
    // Baseline: the node's main thread with only the probe and empty blocks, for CALIBRATE_MS.
    const idleProbe = probeThread(port, STATUS, 1000 / PROBE_EVERY_MS);
    await idleProbe.ready;
    const b0 = threadTicks(pid);
    const bt0 = performance.now();
    await sleep(CALIBRATE_MS);
    const baselineMsPerSec = (((threadTicks(pid) - b0) * 1000) / CLOCK_TICKS) / ((performance.now() - bt0) / 1000);
    const idle = await idleProbe.stop();

    console.log(`\nbank sends: ${ROUNDS} rounds of ${total} txs, ${SENDERS} senders, ${CONNS} connections, crypto ${process.env['CHAIND_CRYPTO'] ?? 'auto'}`);
    const results: RoundResult[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const res = await runRound(rounds[r]!, total, pid, baselineMsPerSec);
      results.push(res);
      printRound(r, res, pid, baselineMsPerSec);
    }
    const byRate = [...results].sort((x, y) => x.txPerS - y.txPerS);
    const median = byRate[Math.floor((byRate.length - 1) / 2)]!;
    const medianP99 = [...results].map((x) => x.probe.p99).sort((x, y) => x - y)[Math.floor((results.length - 1) / 2)]!;
    const lost = results.reduce((a, x) => a + x.lost, 0);
    const list = (f: (x: RoundResult) => number, d: number) => results.map((x) => f(x).toFixed(d)).join(', ');
    console.log(`  median of ${ROUNDS}: ${median.txPerS.toFixed(0)} committed tx/s (rounds ${list((x) => x.txPerS, 0)}); /status p99 ${medianP99.toFixed(1)} ms (rounds ${list((x) => x.probe.p99, 1)}); lost ${lost}`);
    console.log(`  /status probe idle (probe only, ${CALIBRATE_MS / 1000} s): ${idle.sent} sent, ${idle.errors} errors, p50 ${idle.p50.toFixed(1)} ms, p99 ${idle.p99.toFixed(1)} ms, max ${idle.max.toFixed(1)} ms`);
    const roundsNote = ROUNDS > 1 ? `; median of ${ROUNDS} rounds: ${list((x) => x.txPerS, 0)} tx/s` : '';
    report({ area: 'consensus and mempool', figure: `committed bank sends, one validator (${total} txs, ${SENDERS} senders)`, unit: 'tx/s', value: median.txPerS, peer: 'CometBFT v0.38 QA saturation, 200 nodes (published)', peerValue: 400, note: `not like for like: a devnet of one${roundsNote}` });
    report({ area: 'consensus and mempool', figure: '/status p99 while committing them (open loop)', unit: 'ms', value: medianP99, peer: '/status p99 idle (same run, probe-only baseline)', peerValue: idle.p99, better: 'lower', ...(ROUNDS > 1 ? { note: `median of ${ROUNDS} rounds: ${list((x) => x.probe.p99, 1)} ms` } : {}) });
    if (lost > 0) throw new Error(`${lost} txs lost`);
  } finally {
    node.proc.kill('SIGTERM');
    await Promise.race([node.exited, sleep(20_000)]);
    client.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
  if (profDir) {
    // The two largest files: the main thread's and the executor thread's (the pool's workers
    // idle most of the time).
    const files = fs.readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(profDir, f));
    for (const f of files.sort((a, b) => fs.statSync(b).size - fs.statSync(a).size).slice(0, 2)) {
      console.log(`\ntop frames (self time) of ${f}:`);
      for (const l of topFrames(JSON.parse(fs.readFileSync(f, 'utf8')), 25)) console.log(`  ${l}`);
    }
  }
}

/** test/helpers startNode, with node flags before the CLI (--cpu-prof is refused in NODE_OPTIONS). */
function startNodeWith(nodeArgs: string[], home: string, ports: Awaited<ReturnType<typeof allocPorts>>, extra: string[]) {
  if (nodeArgs.length === 0) return startNode(home, ports, {}, extra);
  const proc = spawn(process.execPath, [...nodeArgs, CLI, 'start', '--home', home, ...portFlags(ports), ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
  let out = '';
  proc.stderr!.on('data', (d) => (out = (out + d.toString()).slice(-20_000)));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, output: () => out, exited };
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
