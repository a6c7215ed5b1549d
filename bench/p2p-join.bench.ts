/**
 * A fresh node joining a running network by block sync, all real processes on loopback: four
 * validators from `chaind testnet init-files` (timeout_commit JOIN_COMMIT, default 10 ms) make
 * blocks until height JOIN_HEIGHT (default 500); then a fifth, non-validator node with node0 and
 * node1 as peers starts, block-syncs, node1 is killed once the joiner has a quarter of the chain,
 * and the joiner switches to consensus. Prints the catch-up rate from the joiner's own log
 * ("node started" to "caught up, switching to consensus"), excluding process start-up.
 *
 *   node dist/bench/p2p-join.bench.js
 *   JOIN_HEIGHT=1000 JOIN_COMMIT=50ms node dist/bench/p2p-join.bench.js
 *
 * A/B on one network (JOIN_AB=<root of another build, with its dist/>): instead of the one join
 * above, JOIN_RUNS (default 2) rounds of a fresh joiner of this build then one of the other
 * build, in turn, each from an empty home with both peers up; prints each rate and the user+system
 * CPU seconds the joiner used (from /proc), so that two builds are compared under the same load.
 * JOIN_PROF=<dir> runs the joiners with --cpu-prof into that folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CLI, getJson, runCli, tmpHome, waitFor } from '../test/helpers/node.js';
import { assertListener } from './listener.js';
import { report } from './report.js';

const JOIN_HEIGHT = BigInt(process.env['JOIN_HEIGHT'] ?? 500);
const COMMIT = process.env['JOIN_COMMIT'] ?? '10ms';

// JOIN_KEEP=<dir>: the network is made there once and kept; later runs restart its validators
// (same addresses) instead of making the chain again.
const KEEP = process.env['JOIN_KEEP'];
const kept = KEEP !== undefined && fs.existsSync(path.join(KEEP, 'ips.json'));
const dir = KEEP ?? tmpHome('chaind-join-bench-');
const a = 2 + Math.floor(Math.random() * 250);
const b = 1 + Math.floor(Math.random() * 250);
const ips: string[] = kept ? JSON.parse(fs.readFileSync(path.join(dir, 'ips.json'), 'utf8')) : [2, 3, 4, 5, 6].map((x) => `127.${a}.${b}.${x}`);
const procs: ChildProcess[] = [];

const AB = process.env['JOIN_AB'];
const RUNS = Number(process.env['JOIN_RUNS'] ?? 2);
const PROF = process.env['JOIN_PROF'];

function start(i: number, cli = CLI, logName = `node${i}.log`): ChildProcess {
  const home = path.join(dir, `node${i}`);
  const out = fs.openSync(path.join(dir, logName), 'a');
  const prof = PROF && i === 4 ? ['--cpu-prof', '--cpu-prof-dir', PROF] : [];
  const p = spawn(process.execPath, [...prof, cli, 'start', '--home', home, '--consensus.timeout_commit', COMMIT], { stdio: ['ignore', out, out] });
  fs.closeSync(out);
  procs.push(p);
  return p;
}

async function height(i: number): Promise<bigint> {
  try {
    const r = await getJson(`http://${ips[i]}:26657/status`, 2000);
    return BigInt(r.body.result.sync_info.latest_block_height);
  } catch {
    return -1n;
  }
}

try {
  const home4 = path.join(dir, 'node4');
  if (!kept) {
  fs.mkdirSync(dir, { recursive: true });
  const init = runCli(['testnet', 'init-files', '--v', '4', '--output-dir', dir, '--chain-id', 'join-bench', '--starting-ip-address', ips[0]!, '--keyring-backend', 'none']);
  if (init.status !== 0) throw new Error(init.stderr);
  const ids: string[] = JSON.parse(init.stdout).nodes.map((n: { node_id: string }) => n.node_id);
  if (runCli(['init', 'node4', '--chain-id', 'join-bench', '--home', home4]).status !== 0) throw new Error('init node4');
  fs.copyFileSync(path.join(dir, 'node0/config/genesis.json'), path.join(home4, 'config/genesis.json'));
  for (const f of ['config.toml', 'app.toml']) {
    let s = fs.readFileSync(path.join(dir, 'node3/config', f), 'utf8').split(ips[3]!).join(ips[4]!);
    s = s.replace(/^persistent_peers = .*$/m, `persistent_peers = "${ids[0]}@${ips[0]}:26656,${ids[1]}@${ips[1]}:26656"`);
    fs.writeFileSync(path.join(home4, 'config', f), s);
  }
  if (KEEP !== undefined) fs.writeFileSync(path.join(dir, 'ips.json'), JSON.stringify(ips));
  }
  const t0 = Date.now();
  const vals = [0, 1, 2, 3].map((i) => start(i));
  await waitFor(`height ${JOIN_HEIGHT}`, async () => (await height(0)) >= JOIN_HEIGHT, 1_800_000, 1000);
  const chainS = (Date.now() - t0) / 1000;
  // Fixed ports on random loopback addresses: check that each RPC is our child's.
  vals.forEach((p, i) => assertListener(`validator ${i}`, p.pid!, 26657, ips[i]));
  const top = await height(0);
  console.log(`4 validators, timeout_commit ${COMMIT}: height ${top} after ${chainS.toFixed(0)} s (${(Number(top) / chainS).toFixed(1)} blocks/s incl. start-up)`);
  if (AB !== undefined) {
    // A fresh joiner home each time: the config as set up above, an empty data folder.
    const tpl = path.join(dir, 'node4-template');
    if (!fs.existsSync(tpl)) fs.cpSync(home4, tpl, { recursive: true });
    const builds = [
      { label: 'this build', cli: CLI },
      { label: `other (${AB})`, cli: path.join(path.resolve(AB), 'dist/src/cli/main.js') },
    ];
    const cpuOf = (pid: number): number => {
      try {
        const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        return (Number(f[11]) + Number(f[12])) / 100;
      } catch {
        return NaN;
      }
    };
    const rows: string[] = [];
    for (let run = 0; run < RUNS; run++) {
      for (const [k, b] of builds.entries()) {
        fs.rmSync(home4, { recursive: true, force: true });
        fs.cpSync(tpl, home4, { recursive: true });
        const logName = `join-${run}-${k}.log`;
        const log = path.join(dir, logName);
        fs.rmSync(log, { force: true });
        const j = start(4, b.cli, logName);
        // CPU seconds from "node started" (start-up excluded) to the switch, polled.
        let cpuAtStart = NaN;
        const m = await waitFor('switch to consensus', async () => {
          const text = fs.readFileSync(log, 'utf8');
          if (Number.isNaN(cpuAtStart) && / node started /.test(text)) cpuAtStart = cpuOf(j.pid!);
          return /blocksync: caught up, switching to consensus height=(\d+) blocks=(\d+)/.exec(text);
        }, 600_000, 50);
        const cpu = cpuOf(j.pid!) - cpuAtStart;
        const text = fs.readFileSync(log, 'utf8');
        const ms = Date.parse(/^I\[([^\]]+)\] blocksync: caught up/m.exec(text)![1]!) - Date.parse(/^I\[([^\]]+)\] node started /m.exec(text)![1]!);
        j.kill(PROF ? 'SIGINT' : 'SIGKILL');
        await new Promise<void>((r) => (j.exitCode !== null ? r() : j.once('exit', () => r())));
        const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
        const row = `${b.label}: ${m[2]} blocks in ${ms} ms → ${(Number(m[2]) / (ms / 1000)).toFixed(0)} blocks/s, joiner CPU ${cpu.toFixed(1)} s while syncing (${((cpu * 1000) / Number(m[2])).toFixed(1)} ms a block), load ${load}`;
        console.log(row);
        rows.push(row);
      }
    }
    process.exitCode = 0;
  } else {
  const joiner = start(4);
  let killedAt = -1n;
  await waitFor('a quarter synced', async () => {
    const h = await height(4);
    if (h * 4n < top) return false;
    vals[1]!.kill('SIGKILL');
    killedAt = h;
    return true;
  }, 600_000, 20);
  const log4 = path.join(dir, 'node4.log');
  const caught = await waitFor('switch to consensus', async () => /blocksync: caught up, switching to consensus height=(\d+) blocks=(\d+)/.exec(fs.readFileSync(log4, 'utf8')), 600_000, 200);
  assertListener('joiner', joiner.pid!, 26657, ips[4]);
  const text = fs.readFileSync(log4, 'utf8');
  const started = /^I\[([^\]]+)\] node started /m.exec(text)!;
  const at = /^I\[([^\]]+)\] blocksync: caught up/m.exec(text)!;
  const ms = Date.parse(at[1]!) - Date.parse(started[1]!);
  console.log(`joiner: ${caught[2]} blocks synced in ${ms} ms (node1 killed at ${killedAt}) → ${(Number(caught[2]) / (ms / 1000)).toFixed(0)} blocks/s, then consensus at ${caught[1]}`);
  report({ area: 'P2P', figure: 'a fifth node joining by block sync (4 validators, one peer killed)', unit: 'blocks/s', value: Number(caught[2]) / (ms / 1000), peer: 'the network making blocks', peerValue: Number(top) / chainS });
  const follow = (await height(0)) + 3n;
  await waitFor('joiner follows consensus', async () => (await height(4)) >= follow, 300_000, 200);
  console.log(`joiner follows consensus past ${follow}`);
  }
} finally {
  for (const p of procs) p.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 500));
  if (KEEP === undefined) fs.rmSync(dir, { recursive: true, force: true });
}
