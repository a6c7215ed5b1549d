/**
 * Node RPC throughput, side by side with a peer in one run: chaind's `/status`,
 * `/block?height=N` and `status` as JSON-RPC POSTed to `/`, each against a bare uWebSockets.js
 * handler that returns the same bytes (for the POST, after reading the request body)
 * (bench/bare-uws.ts). Load from wrk on loopback (Node load generators cannot saturate uWS:
 * uNetworking/uWebSockets.js:README.md), the server pinned to core 0 and wrk to core 1 when taskset
 * exists. Reported as ratios; absolute numbers depend on the machine.
 *
 * Usage: node dist/bench/rpc.bench.js [seconds per run, default 3] [pairs per path, default 7]
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { allocPorts, freePort, portFlags } from '../test/helpers/node.js';
import { assertListener } from './listener.js';
import { median, report } from './report.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(ROOT, 'dist/src/cli/main.js');
const SECONDS = Number(process.argv[2] ?? 3);
const PAIRS = Number(process.argv[3] ?? 7);
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

if (!has('wrk')) {
  console.error('wrk is not installed (apt-get install wrk); skipping the RPC throughput bench');
  process.exit(0);
}
const pin = (core: number, argv: string[]) => (has('taskset') ? ['taskset', '-c', String(core), ...argv] : argv);

function spawnArgv(argv: string[]): ChildProcess {
  const [cmd, ...args] = argv as [string, ...string[]];
  return spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
}

function startProc(argv: string[], readyRe: RegExp): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const p = spawnArgv(argv);
    const cmd = argv[0];
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      if (readyRe.test(out)) resolve(p);
    };
    p.stdout!.on('data', onData);
    p.stderr!.on('data', onData);
    p.on('exit', (code) => reject(new Error(`${cmd} exited ${code}: ${out.slice(-2000)}`)));
  });
}

interface Run {
  /** Requests per second, as wrk reports them. */
  rps: number;
  /** CPU time the server process (all its threads) spent per request, in microseconds. */
  cpuUsPerReq: number;
}

/**
 * One wrk run against `url`, served by process `pid`. Besides throughput, the server's CPU time
 * per request (utime + stime from /proc/<pid>/stat, all threads): time stolen by other tenants of
 * the VM lowers throughput but is not charged to the process, so this figure is much steadier.
 */
function wrk(url: string, pid: number, seconds = SECONDS, script?: string): Run {
  const [cmd, ...args] = pin(1, ['wrk', '-t1', '-c64', `-d${seconds}s`, ...(script ? ['-s', script] : []), url]) as [string, ...string[]];
  const cpu0 = cpuTicks(pid);
  const out = execFileSync(cmd, args, { encoding: 'utf8' });
  const cpu1 = cpuTicks(pid);
  const m = /Requests\/sec:\s+([\d.]+)/.exec(out);
  const n = /(\d+) requests in/.exec(out);
  if (!m || !n) throw new Error(`cannot read wrk output:\n${out}`);
  return { rps: Number(m[1]), cpuUsPerReq: ((cpu1 - cpu0) * (1e6 / CLOCK_TICKS)) / Number(n[1]) };
}

/** USER_HZ: the unit of /proc/<pid>/stat times (100 on Linux, whatever the kernel's HZ). */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

function cpuTicks(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces), from field 3 on: utime is 14, stime 15.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

async function main() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-bench-'));
  // Free ports (never fixed ones: another node on the machine would be measured instead).
  const ports = await allocPorts();
  const rpcPort = ports.rpc;
  const barePort = await freePort();
  const nodeId = JSON.parse(execFileSync(process.execPath, [CLI, 'init', 'bench', '--home', home, '--chain-id', 'bench-1', '--dev'], { encoding: 'utf8' })).node_id as string;
  const node = spawnArgv(pin(0, [process.execPath, CLI, 'start', '--home', home, ...portFlags(ports), '--instrumentation.prometheus=false', '--log_level=error']));
  node.stdout!.resume();
  node.stderr!.resume();
  // Wait for a few blocks (up to 120 s: a loaded 2-core machine starts a node slowly).
  let height = 0;
  for (let i = 0; i < 600 && height < 3; i++) {
    await new Promise((r) => setTimeout(r, 200));
    try {
      const s = (await (await fetch(`http://127.0.0.1:${rpcPort}/status`)).json()) as any;
      height = Number(s.result.sync_info.latest_block_height);
    } catch {
      // not up yet
    }
  }
  if (height < 3) throw new Error('node did not start');
  // The server answering is the node we started: its node id, and its process holds the socket.
  const who = (await (await fetch(`http://127.0.0.1:${rpcPort}/status`)).json()) as any;
  if (who.result.node_info.id !== nodeId) throw new Error(`port ${rpcPort} answers as node ${who.result.node_info.id}, not ours (${nodeId})`);
  assertListener('chaind node RPC', node.pid!, rpcPort);
  const statusBody = Buffer.from(await (await fetch(`http://127.0.0.1:${rpcPort}/status`)).arrayBuffer());
  const blockBody = Buffer.from(await (await fetch(`http://127.0.0.1:${rpcPort}/block?height=2`)).arrayBuffer());
  fs.writeFileSync(path.join(home, 'status.json'), statusBody);
  fs.writeFileSync(path.join(home, 'block.json'), blockBody);
  // JSON-RPC over HTTP: `status` POSTed to `/`; the bare peer reads the body, then answers.
  const rpcRequest = '{"jsonrpc":"2.0","id":1,"method":"status","params":{}}';
  const rpcBody = Buffer.from(await (await fetch(`http://127.0.0.1:${rpcPort}/`, { method: 'POST', body: rpcRequest })).arrayBuffer());
  fs.writeFileSync(path.join(home, 'rpc.json'), rpcBody);
  const postScript = path.join(home, 'post.lua');
  fs.writeFileSync(postScript, `wrk.method = "POST"\nwrk.body = '${rpcRequest}'\nwrk.headers["Content-Type"] = "application/json"\n`);
  const bare = await startProc(
    pin(0, [
      process.execPath,
      path.join(ROOT, 'dist/bench/bare-uws.js'),
      String(barePort),
      `/status=${path.join(home, 'status.json')}`,
      `/block=${path.join(home, 'block.json')}`,
      `POST /=${path.join(home, 'rpc.json')}`,
    ]),
    /ready/,
  );
  assertListener('bare uWS handler', bare.pid!, barePort);
  const results: Record<string, { chaind: number[]; bare: number[]; ratios: number[]; cpuRatios: number[] }> = {};
  for (const [name, p, script] of [
    ['status', '/status', undefined],
    ['block', '/block?height=2', undefined],
    ['POST /', '/', postScript],
  ] as const) {
    const chaindUrl = `http://127.0.0.1:${rpcPort}${p}`;
    const bareUrl = `http://127.0.0.1:${barePort}${p}`;
    const run = (url: string, pid: number, seconds?: number) => wrk(url, pid, seconds, script);
    // Warm both up (JIT, connection pools) before anything is measured.
    run(chaindUrl, node.pid!, 1);
    run(bareUrl, bare.pid!, 1);
    // Pairs of adjacent runs, their order alternating, so that drift (other tenants of the VM,
    // thermal) hits both servers of a pair alike; the ratio is taken per pair, and the median
    // of the pairs is reported.
    const r = { chaind: [] as number[], bare: [] as number[], ratios: [] as number[], cpuRatios: [] as number[] };
    results[name] = r;
    for (let i = 0; i < PAIRS; i++) {
      let c: Run;
      let b: Run;
      if (i % 2 === 0) {
        c = run(chaindUrl, node.pid!);
        b = run(bareUrl, bare.pid!);
      } else {
        b = run(bareUrl, bare.pid!);
        c = run(chaindUrl, node.pid!);
      }
      r.chaind.push(c.rps);
      r.bare.push(b.rps);
      r.ratios.push(c.rps / b.rps);
      r.cpuRatios.push(b.cpuUsPerReq / c.cpuUsPerReq);
    }
  }
  bare.kill();
  node.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  fs.rmSync(home, { recursive: true, force: true });
  console.log(`node RPC throughput, wrk -t1 -c64, ${PAIRS} pairs of ${SECONDS}s runs per path (req/s, medians)`);
  const range = (xs: number[]) => `${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)}`;
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `${name.padEnd(8)} chaind ${median(r.chaind).toFixed(0).padStart(8)}  bare uWS ${median(r.bare).toFixed(0).padStart(8)}  ` +
        `ratio ${median(r.ratios).toFixed(3)} (pairs ${range(r.ratios)})  ` +
        `per CPU-second ratio ${median(r.cpuRatios).toFixed(3)} (pairs ${range(r.cpuRatios)})`,
    );
    const spread = (xs: number[]) => (xs.length > 1 ? (Math.max(...xs) - Math.min(...xs)) / median(xs) : 0);
    report({ area: 'node RPC', figure: `${name} throughput (wrk -c64)`, unit: 'req/s', value: median(r.chaind), peer: 'bare uWS handler', peerValue: median(r.bare), runs: PAIRS, spread: spread(r.ratios) });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
