/**
 * A real `chaind start` process and its descriptors (issue 8): the open-file limit it runs with
 * and logs, and a private validator whose state write fails while the process is out of
 * descriptors — consensus must go on by itself once they are free, without a restart.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { allocPorts, CLI, portFlags, ROOT, runCli, statusHeight, tmpHome, waitFor, type Ports } from '../helpers/node.js';

const hasPrlimit = spawnSync('prlimit', ['--version']).status === 0;

interface Proc {
  proc: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `prlimit --nofile=SOFT:HARD chaind start …`: prlimit execs the node, so the pid is the node's. */
function startLimited(home: string, ports: Ports, soft: number, hard: number, extra: string[] = []): Proc {
  const proc = spawn('prlimit', [`--nofile=${soft}:${hard}`, process.execPath, CLI, 'start', '--home', home, ...portFlags(ports), ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out = (out + d.toString()).slice(-400_000)));
  proc.stderr!.on('data', (d) => (out = (out + d.toString()).slice(-400_000)));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, output: () => out, exited };
}

function nofileOf(pid: number): { soft: number; hard: number } {
  const m = /^Max open files\s+(\d+)\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/limits`, 'utf8'))!;
  return { soft: Number(m[1]), hard: Number(m[2]) };
}

async function stop(t: Test, n: Proc): Promise<void> {
  if (n.proc.exitCode !== null || n.proc.signalCode !== null) return;
  n.proc.kill('SIGTERM');
  const killer = setTimeout(() => n.proc.kill('SIGKILL'), 30_000);
  await n.exited;
  clearTimeout(killer);
  void t;
}

function initHome(t: Test, name: string): string {
  const home = tmpHome();
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  t.equal(runCli(['init', name, '--home', home, '--chain-id', `${name}-1`, '--dev']).status, 0);
  const cfgPath = path.join(home, 'config/config.toml');
  fs.writeFileSync(cfgPath, fs.readFileSync(cfgPath, 'utf8').replace(/timeout_commit = "[^"]*"/, 'timeout_commit = "200ms"'));
  return home;
}

t.test('open-file limit: a node started with a low soft limit runs with the hard one and logs it', { skip: !hasPrlimit && 'no prlimit' }, async (t) => {
  const home = initHome(t, 'nofile');
  const ports = await allocPorts();
  const node = startLimited(home, ports, 256, 4096);
  t.teardown(() => stop(t, node));
  await waitFor('the open-file limit log line', async () => /open-file limit \(RLIMIT_NOFILE\)/.test(node.output()), 180_000);
  t.same(nofileOf(node.proc.pid!), { soft: 4096, hard: 4096 }, "the node process's soft limit is the hard one");
  t.match(node.output(), /open-file limit \(RLIMIT_NOFILE\).* soft=4096 hard=4096/, 'logged with its values');
});

t.test('raiseNofile: a soft limit below the hard one is raised through prlimit on the own pid', { skip: !hasPrlimit && 'no prlimit' }, async (t) => {
  // Node raises the soft limit itself at process start, so lower it from inside a child first.
  const mod = path.join(ROOT, 'dist/src/cli/rlimit.js');
  const script = `
    const { execFileSync } = await import('node:child_process');
    const { raiseNofile, readNofile } = await import(${JSON.stringify(mod)});
    const hard = readNofile().hard;
    execFileSync('prlimit', ['--pid', String(process.pid), '--nofile=256:' + hard]);
    const lowered = readNofile();
    const r = raiseNofile();
    console.log(JSON.stringify({ lowered, r, hard }));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  const { lowered, r, hard } = JSON.parse(out) as { lowered: { soft: number }; r: { method: string; before: { soft: number }; after: { soft: number; hard: number } }; hard: number };
  t.equal(lowered.soft, 256, 'the child ran with soft 256');
  t.equal(r.method, 'prlimit');
  t.equal(r.before.soft, 256, 'before: 256');
  t.same(r.after, { soft: hard, hard }, 'after: the hard limit');
});

t.test('descriptors exhausted: the private validator cannot save its state, blocks resume once they are free, no restart', { skip: !hasPrlimit && 'no prlimit' }, async (t) => {
  const home = initHome(t, 'emfile');
  const ports = await allocPorts();
  const LIMIT = 200;
  // The gRPC port with its caps off (as before issue 8): every accepted connection holds a descriptor.
  const node = startLimited(home, ports, LIMIT, LIMIT, ['--grpc.max-open-connections=0', '--grpc.handshake-timeout=0', '--grpc.idle-timeout=0']);
  t.teardown(() => stop(t, node));
  const pid = node.proc.pid!;
  try {
    await waitFor('height 3', async () => (await statusHeight(ports.rpc)) >= 3n, 90_000);
  } catch (e) {
    t.comment(node.output());
    throw e;
  }
  t.same(nofileOf(pid), { soft: LIMIT, hard: LIMIT });

  // Open connections until the node is out of descriptors (its accept then fails with EMFILE and
  // libuv closes what it cannot keep), and hold them.
  const socks: net.Socket[] = [];
  const openOne = () =>
    new Promise<void>((resolve) => {
      const s = net.connect(ports.grpc, '127.0.0.1');
      s.on('error', () => resolve());
      s.on('connect', () => resolve());
      socks.push(s);
    });
  const releaseAll = () => {
    for (const s of socks) s.destroy();
  };
  t.teardown(releaseAll);
  // A failed vote (not only a failed proposal, after which the propose timeout still leads to a
  // vote): without a retry a lone validator waits for that vote forever.
  const failed = /cannot sign: the private validator could not save its state; retrying what="?(prevote|precommit)|failed signing vote/;
  try {
    await waitFor(
      'a signature that fails to save its state',
      async () => {
        const fds = fs.readdirSync(`/proc/${pid}/fd`).length;
        if (fds < LIMIT) for (let i = 0; i < LIMIT - fds + 10; i++) await openOne();
        return failed.test(node.output());
      },
      120_000,
      200,
    );
  } catch (e) {
    t.comment(node.output().slice(-20_000));
    throw e;
  }
  t.pass('signing failed while the descriptors were exhausted');
  t.match(node.output(), /EMFILE/, 'with EMFILE');
  const stalled = [...node.output().matchAll(/height=(\d+)/g)].map((m) => BigInt(m[1]!)).reduce((a, b) => (b > a ? b : a), 0n);

  // Free the descriptors: the node must go on by itself.
  releaseAll();
  try {
    await waitFor('blocks past the stall', async () => (await statusHeight(ports.rpc)) >= stalled + 3n, 120_000, 250);
  } catch (e) {
    t.comment(node.output().slice(-20_000));
    throw e;
  }
  t.pass(`blocks resumed past height ${stalled}`);
  t.equal(node.proc.exitCode, null, 'the same process, never restarted');
  t.equal(node.proc.signalCode, null);
  t.match(node.output(), /signed after retrying/, 'the retried signature is logged');
  t.notMatch(node.output(), /CONSENSUS FAILURE/, 'consensus never halted');
});
