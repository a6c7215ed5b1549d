/**
 * `chaind testnet init-files --v 2` then `chaind testnet start`, real processes on loopback: each
 * node serves /status on its own 127.x.y.(2+i) address with its node key's ID and its moniker;
 * SIGINT stops every child and the runner exits 0; a node that dies is reported while the other
 * keeps serving, and the runner then exits 1.
 *
 * The nodes bind the default ports (26657, 1317, 9090, …) on their own addresses. So that two runs
 * of this test on one machine (several engineers, the full suite) cannot collide, the starting
 * address is a random 127.a.b.2 instead of the default 127.0.0.2 (any 127/8 address works on
 * Linux loopback). Blocks made together over P2P are test/e2e/p2p-faults.test.ts's subject (with
 * two equal validators, one alone cannot commit, which this test does not ask of them).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { alive, CLI, getJson, runCli, tmpHome, waitFor, within } from '../helpers/node.js';

t.setTimeout(600_000);

interface Runner {
  proc: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

function startTestnet(dir: string): Runner {
  const proc = spawn(process.execPath, [CLI, 'testnet', 'start', '--output-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d) => (out = (out + d.toString()).slice(-400_000)));
  proc.stderr!.on('data', (d) => (err = (err + d.toString()).slice(-100_000)));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, out: () => out, err: () => err, exited };
}

/** The "nodeN: rpc … pid P" lines the runner prints when it spawns the nodes. */
async function childPids(r: Runner, n: number): Promise<Map<string, number>> {
  return waitFor(`${n} node lines`, async () => {
    const m = new Map<string, number>();
    for (const [, name, pid] of r.out().matchAll(/^(node\d+): rpc \S+ id [0-9a-f]{40} moniker \S+ pid (\d+) /gm)) m.set(name!, Number(pid));
    return m.size === n ? m : null;
  }, 60_000);
}

async function status(ip: string): Promise<any> {
  const r = await getJson(`http://${ip}:26657/status`);
  return r.status === 200 ? r.body.result : null;
}

t.test('testnet start: two nodes on their own addresses; SIGINT stops both; a dead node is reported', async (t) => {
  const dir = tmpHome('chaind-testnet-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const a = 2 + Math.floor(Math.random() * 250);
  const b = 1 + Math.floor(Math.random() * 250);
  const ips = [`127.${a}.${b}.2`, `127.${a}.${b}.3`];
  const init = runCli(['testnet', 'init-files', '--v', '2', '--output-dir', dir, '--chain-id', 'tn-e2e', '--starting-ip-address', ips[0]!, '--keyring-backend', 'none']);
  t.equal(init.status, 0, `init-files exits 0: ${init.stderr}`);
  const summary = JSON.parse(init.stdout);
  const ids: string[] = summary.nodes.map((n: { node_id: string }) => n.node_id);

  // --- Run 1: both nodes answer, SIGINT stops both, exit 0.
  let runner = startTestnet(dir);
  let pids = await childPids(runner, 2);
  t.teardown(() => {
    for (const pid of pids.values()) if (alive(pid)) process.kill(pid, 'SIGKILL');
    runner.proc.kill('SIGKILL');
  });
  t.match(runner.out(), new RegExp(`^node0: rpc http://${ips[0]!.replace(/\./g, '\\.')}:26657 id ${ids[0]} moniker node0 pid`, 'm'));
  for (const [i, ip] of ips.entries()) {
    const st = await waitFor(`node${i} /status on ${ip}`, () => status(ip), 120_000).catch((e) => {
      t.comment(runner.out().slice(-5000), runner.err());
      throw e;
    });
    t.equal(st.node_info.id, ids[i], `node${i} reports its node key's ID`);
    t.equal(st.node_info.moniker, `node${i}`);
    t.equal(st.node_info.network, 'tn-e2e');
    t.equal(st.node_info.listen_addr, `tcp://${ip}:26656`);
    t.equal(st.node_info.other.rpc_address, `tcp://${ip}:26657`);
  }
  // The log lines come through prefixed and land in each node's chaind.log.
  await waitFor('prefixed log lines', async () => /^node0\| .*starting chaind/m.test(runner.out()) && /^node1\| .*starting chaind/m.test(runner.out()), 120_000);
  t.match(fs.readFileSync(path.join(dir, 'node1', 'chaind.log'), 'utf8'), /starting chaind/);

  runner.proc.kill('SIGINT');
  const code = await within(runner.exited, 90_000);
  t.equal(code, 0, `SIGINT: the runner exits 0 once both nodes stopped cleanly\n${runner.err()}`);
  for (const [name, pid] of pids) t.notOk(alive(pid), `${name} (pid ${pid}) is gone`);
  t.match(runner.err(), /SIGINT: stopping 2 node\(s\)/);

  // --- Run 2: node1 dies; the runner says so and node0 keeps serving; SIGINT then exits 1.
  runner = startTestnet(dir);
  pids = await childPids(runner, 2);
  await waitFor('node0 /status', () => status(ips[0]!), 120_000);
  await waitFor('node1 /status', () => status(ips[1]!), 120_000);
  process.kill(pids.get('node1')!, 'SIGKILL');
  await waitFor('the runner reports node1', async () => /node1 exited unexpectedly \(signal SIGKILL\)/.test(runner.err()), 120_000);
  t.pass('node1\'s death is reported');
  t.equal((await status(ips[0]!)).node_info.id, ids[0], 'node0 still serves');
  runner.proc.kill('SIGINT');
  const code2 = await within(runner.exited, 90_000);
  t.equal(code2, 1, 'a node that died makes the run exit 1');
  t.notOk(alive(pids.get('node0')!), 'node0 is gone');
});
