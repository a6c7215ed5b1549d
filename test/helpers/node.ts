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

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
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

/** Whether a process exists (signal 0; EPERM: it exists but is not ours). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
