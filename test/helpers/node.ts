/**
 * Helpers for end-to-end tests: a real `chaind` process on loopback with a fresh home, free
 * ports, and HTTP polling. Nothing here mocks a chaind component.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (dist/test/helpers -> ../../..). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const CLI = path.join(ROOT, 'dist/src/cli/main.js');

export function tmpHome(prefix = 'chaind-e2e-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Whether 127.0.0.1:port can be bound right now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** The kernel's ephemeral ports start here (Linux default 32768). */
function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32768;
  } catch {
    return 32768;
  }
}

const PORT_LOCKS = path.join(os.tmpdir(), 'chaind-test-ports');
const PORT_LO = 10_000;
const PORT_HI = Math.min(ephemeralLow(), 32_768);
const ownLocks: string[] = [];
let portCursor = PORT_LO + Math.floor(Math.random() * (PORT_HI - PORT_LO));

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock file of `port` for this process; a lock whose process is gone is taken over. */
function lockPort(port: number): boolean {
  const file = path.join(PORT_LOCKS, String(port));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      if (ownLocks.length === 0) process.on('exit', () => ownLocks.forEach((f) => fs.rmSync(f, { force: true })));
      ownLocks.push(file);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const owner = Number(fs.readFileSync(file, 'utf8'));
      if (owner === process.pid || (Number.isInteger(owner) && owner > 0 && pidAlive(owner))) return false;
      fs.rmSync(file, { force: true });
    }
  }
  return false;
}

/**
 * A port for a node that binds it later, maybe in a child process, maybe again after a restart.
 * A port the kernel handed out for port 0 and we closed could be taken meanwhile as the source
 * port of any connection on the machine (both parallel test files make thousands); so the port is
 * taken below the kernel's ephemeral range, where only explicit binds go, reserved across the
 * suite's processes by a lock file naming our pid, and checked free.
 */
export async function freePort(): Promise<number> {
  fs.mkdirSync(PORT_LOCKS, { recursive: true });
  for (let tries = 0; tries < PORT_HI - PORT_LO; tries++) {
    const port = portCursor;
    portCursor = portCursor + 1 >= PORT_HI ? PORT_LO : portCursor + 1;
    if (port >= 26_656 && port <= 26_660) continue; // chaind's own defaults
    if (!lockPort(port)) continue;
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${PORT_LO}..${PORT_HI}`);
}

export function runCli(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
}

export interface Ports {
  rpc: number;
  api: number;
  grpc: number;
  jsonRpc: number;
  jsonRpcWs: number;
  p2p: number;
  metrics: number;
}

export async function allocPorts(): Promise<Ports> {
  return {
    rpc: await freePort(),
    api: await freePort(),
    grpc: await freePort(),
    jsonRpc: await freePort(),
    jsonRpcWs: await freePort(),
    p2p: await freePort(),
    metrics: await freePort(),
  };
}

export function portFlags(p: Ports): string[] {
  return [
    `--rpc.laddr=tcp://127.0.0.1:${p.rpc}`,
    `--api.address=tcp://127.0.0.1:${p.api}`,
    `--grpc.address=127.0.0.1:${p.grpc}`,
    `--json-rpc.address=127.0.0.1:${p.jsonRpc}`,
    `--json-rpc.ws-address=127.0.0.1:${p.jsonRpcWs}`,
    `--p2p.laddr=tcp://127.0.0.1:${p.p2p}`,
    `--instrumentation.prometheus-listen-addr=127.0.0.1:${p.metrics}`,
  ];
}

export interface RunningNode {
  proc: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

export function startNode(home: string, ports: Ports, env: NodeJS.ProcessEnv = {}, extra: string[] = []): RunningNode {
  const proc = spawn(process.execPath, [CLI, 'start', '--home', home, ...portFlags(ports), ...extra], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out = (out + d.toString()).slice(-200_000)));
  proc.stderr!.on('data', (d) => (out = (out + d.toString()).slice(-200_000)));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, output: () => out, exited };
}

export async function getJson(url: string, timeoutMs = 2000): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: leave the text
  }
  return { status: res.status, body, headers: res.headers };
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      lastErr = e;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}${lastErr ? `: ${(lastErr as Error).message}` : ''}`);
}

export async function statusHeight(port: number): Promise<bigint> {
  const { body } = await getJson(`http://127.0.0.1:${port}/status`);
  return BigInt(body.result.sync_info.latest_block_height);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `p`'s value, or 'timeout' once `ms` have passed. The timer is cleared when the race settles: a
 * plain race with sleep(ms) keeps the test process alive for the rest of `ms` after `p` won (the
 * testnet test's 90 s bound on a clean exit held its file open 90 s after every run).
 */
export async function within<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether a process exists (signal 0; EPERM: it exists but is not ours). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
