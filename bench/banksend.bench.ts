/**
 * Committed bank sends per second on a real devnet node: a `chaind` child process (temp home,
 * `chaind init --dev`, free loopback ports), a setup block that funds S fresh senders from a dev
 * account, then N pre-signed MsgSend txs (N/S per sender, sequences 0…) submitted with
 * broadcast_tx_sync over C keep-alive connections, each sender's txs in order (a sender waits for
 * its previous answer). "Mempool is full" / "still rechecking" answers are retried, as a client
 * would. The run ends when every tx is in a committed block.
 *
 * Reports: committed tx/s (first submission → the block holding the last tx seen committed),
 * the node main thread's CPU time per committed tx (from /proc; steadier than tx/s on a shared
 * machine, and shown above a 3 s probe-only baseline so the probe's own cost is not counted),
 * lost txs (signed but not committed with code 0; must be 0), and the latency of an open-loop
 * `/status` probe: one request every 2 ms on a fixed schedule, whether or not the previous one
 * answered, each latency measured from its scheduled time (no coordinated omission). The probe
 * shares the machine with the node and this load generator, so it shows how long the node's main
 * thread is blocked.
 *
 * Usage: node dist/bench/banksend.bench.js [txs, default 6400] [senders, default 64] [connections, default 8]
 * Env:   BENCH_CPU_PROF=<dir>      run the node under `node --cpu-prof` and print its main thread's top frames
 *        BENCH_TIMEOUT_COMMIT=1s   consensus.timeout_commit (default: the dev config's)
 *        BENCH_NODE_ARGS='--single-threaded-gc'  more node flags for the node process
 *        CHAIND_CRYPTO=js|native   passed through to the node
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { BaseAccountSchema } from '../src/gen/chain/auth/v1beta1/auth_pb.js';
import { QueryAccountRequestSchema, QueryAccountResponseSchema } from '../src/gen/chain/auth/v1beta1/query_pb.js';
import { allocPorts, CLI, portFlags, sleep, startNode, tmpHome, waitFor } from '../test/helpers/node.js';
import { buildTx, devKeys, freshKey, msgSend, type DevAccount } from '../test/helpers/txsign.js';
import { topFrames } from './cpuprofile.js';
import { assertListener } from './listener.js';
import { report } from './report.js';

const N = Number(process.argv[2] ?? 6400);
const SENDERS = Number(process.argv[3] ?? 64);
const CONNS = Number(process.argv[4] ?? 8);
const PROBE_EVERY_MS = 2;
/** How long the probe runs alone first, to measure the main thread's cost of idle + probe. */
const CALIBRATE_MS = 3000;
const DENOM = 'achain';
const PER_SENDER = Math.ceil(N / SENDERS);

const agent = new http.Agent({ keepAlive: true, maxSockets: CONNS });
const probeAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** Retries a request whose keep-alive socket the server closed under it (ECONNRESET). */
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

function post(port: number, body: string, ag = agent): Promise<any> {
  return withReset(() => post1(port, body, ag));
}

function post1(port: number, body: string, ag: http.Agent): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: '/', method: 'POST', agent: ag, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch (e) {
            reject(e);
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function get(port: number, p: string, ag = agent): Promise<any> {
  return withReset(() => get1(port, p, ag));
}

function get1(port: number, p: string, ag: http.Agent): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, agent: ag }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (e) {
          reject(e);
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

let rpcId = 0;
async function rpc(port: number, method: string, params: Record<string, unknown>): Promise<any> {
  const body = await post(port, JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }));
  if (body.error) throw Object.assign(new Error(`${method}: ${JSON.stringify(body.error)}`), { rpcError: body.error });
  return body.result;
}

async function accountNumber(port: number, address: string): Promise<bigint> {
  const data = toBinary(QueryAccountRequestSchema, create(QueryAccountRequestSchema, { address }));
  const r = await rpc(port, 'abci_query', { path: '/chain.auth.v1beta1.Query/Account', data: Buffer.from(data).toString('hex') });
  if (r.response.code !== 0) throw new Error(`account ${address}: ${r.response.log}`);
  const any = fromBinary(QueryAccountResponseSchema, Buffer.from(r.response.value, 'base64')).account!;
  return fromBinary(BaseAccountSchema, any.value).accountNumber;
}

async function height(port: number): Promise<bigint> {
  const s = await get(port, '/status');
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

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Open-loop /status probe: fixed schedule, latency from the scheduled time. */
function startProbe(port: number): { stop: () => Promise<{ sent: number; lat: number[]; errors: number }>; sofar: () => number[] } {
  const lat: number[] = [];
  let errors = 0;
  let sent = 0;
  let inflight = 0;
  const t0 = performance.now();
  let next = 0;
  let stopped = false;
  let drained: (() => void) | undefined;
  const fire = (scheduled: number) => {
    sent++;
    inflight++;
    const req = http.get({ host: '127.0.0.1', port, path: '/status', agent: probeAgent }, (res) => {
      res.resume();
      res.on('end', () => {
        lat.push(performance.now() - scheduled);
        if (--inflight === 0 && drained) drained();
      });
    });
    req.on('error', () => {
      errors++;
      if (--inflight === 0 && drained) drained();
    });
  };
  const tick = () => {
    if (stopped) return;
    const now = performance.now();
    while (t0 + next * PROBE_EVERY_MS <= now) fire(t0 + next++ * PROBE_EVERY_MS);
    setTimeout(tick, 1);
  };
  tick();
  return {
    sofar: () => lat.slice(),
    stop: async () => {
      stopped = true;
      if (inflight > 0) await Promise.race([new Promise<void>((r) => (drained = r)), sleep(10_000)]);
      return { sent, lat, errors };
    },
  };
}

/** JSON-RPC errors a client should retry: the mempool is full or rechecking. */
function retryable(e: unknown): boolean {
  const msg = JSON.stringify((e as { rpcError?: unknown }).rpcError ?? (e as Error).message ?? '');
  return /mempool is full|still rechecking/.test(msg);
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
  try {
    await waitFor('node height 1', async () => (await height(port)) >= 1n, 60_000);
    // The node answering is the one we started (its id; its process holds the RPC socket).
    const nodeId = JSON.parse(init.stdout).node_id as string;
    const answering = (await get(port, '/status')).result.node_info.id as string;
    if (answering !== nodeId) throw new Error(`port ${port} answers as node ${answering}, not ours (${nodeId})`);
    assertListener('chaind node RPC', node.proc.pid!, port);
    const chainId = (await get(port, '/status')).result.node_info.network as string;

    // Setup block: one dev account funds every sender in one tx.
    const funder = devKeys().find((k) => k.keyType === 'secp256k1')!;
    const funderNum = await accountNumber(port, funder.bech32);
    const senders: DevAccount[] = Array.from({ length: SENDERS }, (_, i) => freshKey(i));
    const sink = freshKey(250);
    const fund = buildTx({
      chainId,
      msgs: senders.map((s) => msgSend(funder.bech32, s.bech32, [{ denom: DENOM, amount: 10n ** 20n }])),
      signers: [{ key: funder, accountNumber: funderNum, sequence: 0n }],
      fee: { gasLimit: 200_000n + 40_000n * BigInt(SENDERS) },
    }).bytes;
    const fr = await rpc(port, 'broadcast_tx_commit', { tx: Buffer.from(fund).toString('base64') });
    if (fr.check_tx.code !== 0 || fr.tx_result.code !== 0) throw new Error(`funding failed: ${fr.check_tx.log} ${fr.tx_result.log}`);
    const startHeight = BigInt(fr.height);
    const nums = await Promise.all(senders.map((s) => accountNumber(port, s.bech32)));

    // Pre-sign everything.
    const signT0 = performance.now();
    const perSender: string[][] = senders.map(() => []);
    let total = 0;
    for (let seq = 0; seq < PER_SENDER; seq++) {
      for (let i = 0; i < SENDERS && total < N; i++, total++) {
        const tx = buildTx({
          chainId,
          msgs: [msgSend(senders[i]!.bech32, sink.bech32, [{ denom: DENOM, amount: 1 }])],
          signers: [{ key: senders[i]!, accountNumber: nums[i]!, sequence: BigInt(seq) }],
          fee: { gasLimit: 100_000n },
        }).bytes;
        perSender[i]!.push(Buffer.from(tx).toString('base64'));
      }
    }
    console.log(`signed ${total} txs from ${SENDERS} senders in ${((performance.now() - signT0) / 1000).toFixed(1)} s; submitting over ${CONNS} connections`);

    // Watch committed blocks (after the setup block) until all txs are in.
    let committed = 0;
    let failedInBlock = 0;
    let lastCommitAt = 0;
    let watching = true;
    const failLogs = new Map<string, number>();
    const heightsWithTxs: bigint[] = [];
    const watcher = (async () => {
      let h = startHeight + 1n;
      let lastProgress = Date.now();
      while (watching && committed + failedInBlock < total) {
        let latest: bigint;
        try {
          latest = await height(port);
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
          const bc = await get(port, `/blockchain?minHeight=${h}&maxHeight=${to}`);
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

    const pid = node.proc.pid!;
    const probe = startProbe(port);
    // Baseline: the node's main thread with only the probe and empty blocks, for CALIBRATE_MS.
    const b0 = threadTicks(pid);
    const bt0 = performance.now();
    await sleep(CALIBRATE_MS);
    const baselineMsPerSec = (((threadTicks(pid) - b0) * 1000) / CLOCK_TICKS) / ((performance.now() - bt0) / 1000);
    const idleLat = probe.sofar().sort((a, b) => a - b);
    const baselineP99 = pct(idleLat, 99);
    const cpu0 = threadTicks(pid);
    const proc0 = processTicks(pid);
    const threads0 = allThreadTicks(pid);
    const t0 = performance.now();
    let rejected = 0;
    let retries = 0;
    const rejectLogs = new Map<string, number>();
    await Promise.all(
      perSender.map(async (txs) => {
        for (const tx of txs) {
          for (;;) {
            try {
              const r = await rpc(port, 'broadcast_tx_sync', { tx });
              if (r.code !== 0) {
                rejected++;
                const k = `${r.code}: ${r.log}`.slice(0, 160);
                rejectLogs.set(k, (rejectLogs.get(k) ?? 0) + 1);
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
    const cpuMs = ((threadTicks(pid) - cpu0) * 1000) / CLOCK_TICKS;
    const procCpuMs = ((processTicks(pid) - proc0) * 1000) / CLOCK_TICKS;
    const threads1 = allThreadTicks(pid);
    const netCpuMs = cpuMs - baselineMsPerSec * ((performance.now() - t0) / 1000);
    const { sent, lat, errors } = await probe.stop();
    // The codes, now that the timed run is over.
    committed = 0;
    for (const h of heightsWithTxs) {
      const br = await get(port, `/block_results?height=${h}`);
      for (const r of (br.result.txs_results ?? []) as { code: number; log: string }[]) {
        if (r.code === 0) committed++;
        else {
          failedInBlock++;
          const k = `${r.code}: ${r.log}`.slice(0, 160);
          failLogs.set(k, (failLogs.get(k) ?? 0) + 1);
        }
      }
    }
    const loadLat = lat.slice(idleLat.length).sort((a, b) => a - b);
    lat.sort((a, b) => a - b);

    const secs = (lastCommitAt - t0) / 1000;
    const lost = total - committed;
    console.log(`\nbank sends: ${total} txs, ${SENDERS} senders, ${CONNS} connections, crypto ${process.env['CHAIND_CRYPTO'] ?? 'auto'}`);
    console.log(`  submitted in ${((submittedAt - t0) / 1000).toFixed(2)} s (${retries} retries on full/rechecking mempool, ${resets} on reset connections)`);
    console.log(`  committed ${committed} in ${secs.toFixed(2)} s → ${(committed / secs).toFixed(0)} committed tx/s`);
    console.log(
      `  node main thread CPU: ${(cpuMs / 1000).toFixed(1)} s = ${(cpuMs / committed).toFixed(2)} ms per committed tx with the probe; ` +
        `${(netCpuMs / committed).toFixed(2)} ms above the probe-only baseline (${baselineMsPerSec.toFixed(0)} ms/s) ` +
        `→ ceiling ≈ ${((1000 * committed) / netCpuMs).toFixed(0)} tx/s on a free core`,
    );
    console.log(`  node CPU, all threads: ${(procCpuMs / 1000).toFixed(1)} s = ${(procCpuMs / committed).toFixed(2)} ms per committed tx (load average ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`);
    // The busiest threads (the main thread is the one whose tid is the pid; the executor thread is
    // normally the busiest other one; v8:Prof* threads are the profiler's own).
    const busiest = [...threads1]
      .map(([tid, t1]) => ({ tid, name: t1.name, ms: ((t1.ticks - (threads0.get(tid)?.ticks ?? 0)) * 1000) / CLOCK_TICKS }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 4);
    console.log(`  busiest threads: ${busiest.map((b) => `${b.tid === pid ? 'main' : `${b.name}#${b.tid}`} ${(b.ms / committed).toFixed(2)} ms/tx`).join(', ')}`);
    console.log(`  lost ${lost} (CheckTx rejected ${rejected}, failed in block ${failedInBlock})`);
    report({ area: 'consensus and mempool', figure: `committed bank sends, one validator (${total} txs, ${SENDERS} senders)`, unit: 'tx/s', value: committed / secs, peer: 'CometBFT v0.38 QA saturation, 200 nodes (published)', peerValue: 400, note: 'not like for like: a devnet of one' });
    report({ area: 'consensus and mempool', figure: '/status p99 while committing them (open loop)', unit: 'ms', value: pct(loadLat, 99), peer: '/status p99 idle (same run, probe-only baseline)', peerValue: baselineP99, better: 'lower' });
    for (const [k, n] of [...rejectLogs, ...failLogs]) console.log(`    ${n}× ${k}`);
    console.log(
      `  /status probe every ${PROBE_EVERY_MS} ms: ${sent} sent, ${lat.length} answered, ${errors} errors; ` +
        `p50 ${pct(lat, 50).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms, max ${(lat[lat.length - 1] ?? NaN).toFixed(1)} ms`,
    );
  } finally {
    node.proc.kill('SIGTERM');
    await Promise.race([node.exited, sleep(20_000)]);
    agent.destroy();
    probeAgent.destroy();
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
