/**
 * The benches' keep-alive JSON-RPC client (`post`) and open-loop latency probe (`openLoop`), and
 * the same probe on a thread of its own (`probeThread`).
 *
 * Why a thread: latency counts from the request's scheduled send time, so everything that delays
 * the probe's own event loop counts as server latency. A bench whose client also generates load
 * (evm-rpc's transfers: each block seen sends ~400 signed txs at once and reads their answers and
 * the next block) kept the probe's timers and the answers' callbacks waiting behind that work:
 * measured 2026-11-26, the client's own event loop lagged up to tens of ms per block, and that
 * showed as the server's p99 (anvil's too). On its own thread the probe's loop does nothing else,
 * so what it measures is the server (and the machine's CPU contention, which both servers share).
 */
import http from 'node:http';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

/** One keep-alive agent per thread (a probe thread has its own connections). */
export const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export function post(port: number, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString()));
      res.on('error', reject);
    });
    req.setTimeout(60_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

export interface Latency {
  sent: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  firstError?: string;
}

/**
 * Open loop: request i is due at t0 + i/rate, whatever happened to the earlier ones; its latency
 * counts from when it was due, so a stall shows in full (no coordinated omission). An answer that
 * does not contain `expect` (when given) counts as an error.
 */
export async function openLoop(port: number, bodies: string[], rate: number, until: () => boolean, expect?: string): Promise<Latency> {
  const lat: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  let i = 0;
  while (!until()) {
    const due = t0 + (i * 1000) / rate;
    const now = performance.now();
    if (due > now) {
      await new Promise((r) => setTimeout(r, Math.max(0, due - now)));
      continue;
    }
    const b = bodies[i % bodies.length]!;
    i++;
    pending.push(
      post(port, b).then(
        (a) => {
          lat.push(performance.now() - due);
          if (expect !== undefined && !a.includes(expect)) {
            if (errors++ === 0) firstError = a.slice(0, 300);
          }
        },
        (e: Error) => {
          if (errors++ === 0) firstError = e.message;
        },
      ),
    );
  }
  await Promise.all(pending);
  lat.sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? NaN;
  return { sent: i, p50: q(0.5), p99: q(0.99), max: lat[lat.length - 1] ?? NaN, errors, ...(firstError === undefined ? {} : { firstError }) };
}

interface ProbeData {
  openLoopProbe: true;
  port: number;
  bodies: string[];
  rate: number;
  expect?: string;
}

/** Requests a probe thread sends one by one before its open loop (not counted): its JIT and a connection. */
const WARM_UP = 20;

/**
 * `openLoop` on a thread of its own, from `ready` (after its warm-up) until `stop()` (which resolves
 * with its figures once the requests in flight are answered).
 */
export function probeThread(port: number, bodies: string[], rate: number, expect?: string): { ready: Promise<void>; stop(): Promise<Latency> } {
  const data: ProbeData = { openLoopProbe: true, port, bodies, rate, ...(expect === undefined ? {} : { expect }) };
  const w = new Worker(new URL(import.meta.url), { workerData: data, name: 'bench-probe' });
  let readyNow!: () => void;
  const ready = new Promise<void>((r) => (readyNow = r));
  const result = new Promise<Latency>((resolve, reject) => {
    w.on('message', (m: Latency | 'ready') => (m === 'ready' ? readyNow() : resolve(m)));
    w.once('error', reject);
    w.once('exit', (code) => reject(new Error(`probe thread exited (${code}) without a result`)));
  });
  return {
    ready: Promise.race([ready, result.then(() => undefined)]),
    stop: async () => {
      w.postMessage('stop');
      return result;
    },
  };
}

if (!isMainThread && (workerData as ProbeData | undefined)?.openLoopProbe) {
  const d = workerData as ProbeData;
  let stopped = false;
  parentPort!.once('message', () => (stopped = true));
  void (async () => {
    for (let i = 0; i < WARM_UP; i++) await post(d.port, d.bodies[i % d.bodies.length]!);
    parentPort!.postMessage('ready');
    const r = await openLoop(d.port, d.bodies, d.rate, () => stopped, d.expect);
    agent.destroy();
    parentPort!.postMessage(r);
  })();
}
