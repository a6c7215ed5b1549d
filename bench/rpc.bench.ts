/**
 * Node RPC throughput, side by side with a peer in one run: chaind's `/status` and
 * `/block?height=N` against a bare uWebSockets.js handler that returns the same bytes
 * (bench/bare-uws.ts). Load from wrk on loopback (Node load generators cannot saturate uWS:
 * ../shared/reference/anchors.md B4), the server pinned to core 0 and wrk to core 1 when taskset
 * exists. Reported as ratios; absolute numbers depend on the machine.
 *
 * Usage: node dist/bench/rpc.bench.js [seconds per run, default 5]
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(ROOT, 'dist/src/cli/main.js');
const SECONDS = Number(process.argv[2] ?? 5);
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

function wrk(url: string): number {
  const [cmd, ...args] = pin(1, ['wrk', '-t1', '-c64', `-d${SECONDS}s`, url]) as [string, ...string[]];
  const out = execFileSync(cmd, args, { encoding: 'utf8' });
  const m = /Requests\/sec:\s+([\d.]+)/.exec(out);
  if (!m) throw new Error(`cannot read wrk output:\n${out}`);
  return Number(m[1]);
}

async function main() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-bench-'));
  const rpcPort = 36657;
  const barePort = 36658;
  execFileSync(process.execPath, [CLI, 'init', 'bench', '--home', home, '--chain-id', 'bench-1', '--dev'], { stdio: 'ignore' });
  const node = spawnArgv(
    pin(0, [process.execPath, CLI, 'start', '--home', home, `--rpc.laddr=tcp://127.0.0.1:${rpcPort}`, '--p2p.laddr=tcp://127.0.0.1:0', '--instrumentation.prometheus=false', '--log_level=error']),
  );
  // Wait for a few blocks.
  let height = 0;
  for (let i = 0; i < 100 && height < 3; i++) {
    await new Promise((r) => setTimeout(r, 200));
    try {
      const s = (await (await fetch(`http://127.0.0.1:${rpcPort}/status`)).json()) as any;
      height = Number(s.result.sync_info.latest_block_height);
    } catch {
      // not up yet
    }
  }
  if (height < 3) throw new Error('node did not start');
  const statusBody = Buffer.from(await (await fetch(`http://127.0.0.1:${rpcPort}/status`)).arrayBuffer());
  const blockBody = Buffer.from(await (await fetch(`http://127.0.0.1:${rpcPort}/block?height=2`)).arrayBuffer());
  fs.writeFileSync(path.join(home, 'status.json'), statusBody);
  fs.writeFileSync(path.join(home, 'block.json'), blockBody);
  const bare = await startProc(
    pin(0, [process.execPath, path.join(ROOT, 'dist/bench/bare-uws.js'), String(barePort), `/status=${path.join(home, 'status.json')}`, `/block=${path.join(home, 'block.json')}`]),
    /ready/,
  );
  const results: Record<string, { chaind: number; bare: number }> = {};
  for (const [name, p] of [
    ['status', '/status'],
    ['block', '/block?height=2'],
  ] as const) {
    // Alternate the two servers so drift (thermal, other load) hits both alike.
    const c1 = wrk(`http://127.0.0.1:${rpcPort}${p}`);
    const b1 = wrk(`http://127.0.0.1:${barePort}${p}`);
    const c2 = wrk(`http://127.0.0.1:${rpcPort}${p}`);
    const b2 = wrk(`http://127.0.0.1:${barePort}${p}`);
    results[name] = { chaind: (c1 + c2) / 2, bare: (b1 + b2) / 2 };
  }
  bare.kill();
  node.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  fs.rmSync(home, { recursive: true, force: true });
  console.log(`node RPC throughput, wrk -t1 -c64 ${SECONDS}s x2 per server (req/s)`);
  for (const [name, r] of Object.entries(results)) {
    console.log(`${name.padEnd(8)} chaind ${r.chaind.toFixed(0).padStart(8)}  bare uWS ${r.bare.toFixed(0).padStart(8)}  ratio ${(r.chaind / r.bare).toFixed(3)}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
