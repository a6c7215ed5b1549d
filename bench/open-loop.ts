/**
 * The benches' keep-alive JSON-RPC client (`post`) and open-loop latency probe (`openLoop`), and
 * the same probe on a thread of its own (`probeThread`). Requests go through the lean clients of
 * lean-http.ts and lean-h2.ts (gRPC; one per port and thread), so the client's own CPU takes little
 * from the servers it shares the machine with.
 *
 * Why a thread: latency counts from the request's scheduled send time, so everything that delays
 * the probe's own event loop counts as server latency. A bench whose client also generates load
 * (evm-rpc's transfers: each block seen sends ~400 signed txs at once and reads their answers and
 * the next block) kept the probe's timers and the answers' callbacks waiting behind that work:
 * measured 2026-11-26, the client's own event loop lagged up to tens of ms per block, and that
 * showed as the server's p99 (anvil's too). On its own thread the probe's loop does nothing else,
 * so what it measures is the server (and the machine's CPU contention, which both servers share).
 * The probe's thread also asks Linux for a short scheduler slice, as the node's RPC thread does
 * (src/pool/sched.ts): on a 2-core machine whose cores the node's executor and the bench's other
 * threads keep busy, a probe that waits for the running thread's slice to end before it can send
 * or read adds that wait to the server's latency, and a client on another machine would not.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { applyThreadSlice } from '../src/pool/sched.js';
import { LeanGrpc } from './lean-h2.js';
import { LeanClient } from './lean-http.js';

/** This thread's clients, one per port (a probe thread has its own connections). */
const clients = new Map<number, LeanClient>();

function client(port: number): LeanClient {
  let c = clients.get(port);
  if (c === undefined) clients.set(port, (c = new LeanClient(port, 256)));
  return c;
}

/** This thread's gRPC connections (lean-h2.ts), one per port. */
const grpcClients = new Map<number, LeanGrpc>();

function grpcClient(port: number): LeanGrpc {
  let c = grpcClients.get(port);
  if (c === undefined) grpcClients.set(port, (c = new LeanGrpc(port)));
  return c;
}

/** Closes this thread's connections (a later request opens new ones). */
export function closeClients(): void {
  for (const c of clients.values()) c.close();
  clients.clear();
  for (const c of grpcClients.values()) c.close();
  grpcClients.clear();
}

/** A JSON-RPC POST to `/`; resolves with the answer's body, whatever its HTTP status. */
export async function post(port: number, body: string): Promise<string> {
  return (await client(port).post('/', body)).body.toString();
}

/**
 * What a probe sends: JSON-RPC bodies POSTed in turn, one GET path (a URI route such as
 * `/status`), or one gRPC unary call (`grpc`: the method's path; `message`: its protobuf bytes).
 */
export type ProbeRequests = string[] | { get: string } | { grpc: string; message: Uint8Array };

function sendOne(port: number, reqs: ProbeRequests, i: number): Promise<string> {
  if (Array.isArray(reqs)) return post(port, reqs[i % reqs.length]!);
  if ('get' in reqs) return client(port).get(reqs.get).then((a) => (a.status === 200 ? a.body.toString() : Promise.reject(new Error(`HTTP ${a.status}`))));
  return grpcClient(port).unary(reqs.grpc, reqs.message).then(() => '');
}

/**
 * One answered request of a probe that keeps its samples: when it was due (ms since the epoch,
 * `performance.timeOrigin + performance.now()`, comparable across threads), its latency from then,
 * and how late the probe's own thread sent it (the part of the latency that is the client's).
 */
export interface ProbeSample {
  at: number;
  ms: number;
  late: number;
}

export interface Latency {
  sent: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  firstError?: string;
  /** Every answered request (openLoop's `keepSamples`). */
  samples?: ProbeSample[];
}

/**
 * Open loop: request i is due at t0 + i/rate, whatever happened to the earlier ones; its latency
 * counts from when it was due, so a stall shows in full (no coordinated omission). An answer that
 * does not contain `expect` (when given) counts as an error.
 */
export async function openLoop(port: number, reqs: ProbeRequests, rate: number, until: () => boolean, expect?: string, keepSamples = false): Promise<Latency> {
  const lat: number[] = [];
  const samples: ProbeSample[] = [];
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
    const late = now - due;
    pending.push(
      sendOne(port, reqs, i++).then(
        (a) => {
          const ms = performance.now() - due;
          lat.push(ms);
          if (keepSamples) samples.push({ at: performance.timeOrigin + due, ms, late });
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
  return { sent: i, p50: q(0.5), p99: q(0.99), max: lat[lat.length - 1] ?? NaN, errors, ...(firstError === undefined ? {} : { firstError }), ...(keepSamples ? { samples } : {}) };
}

interface ProbeData {
  openLoopProbe: true;
  port: number;
  reqs: ProbeRequests;
  rate: number;
  expect?: string;
  keepSamples: boolean;
}

/** Requests a probe thread sends one by one before its open loop (not counted): its JIT and a connection. */
const WARM_UP = 20;

/**
 * `openLoop` on a thread of its own, from `ready` (after its warm-up) until `stop()` (which resolves
 * with its figures once the requests in flight are answered; with every sample if `keepSamples`).
 */
export function probeThread(port: number, reqs: ProbeRequests, rate: number, expect?: string, keepSamples = false): { ready: Promise<void>; stop(): Promise<Latency> } {
  const data: ProbeData = { openLoopProbe: true, port, reqs, rate, keepSamples, ...(expect === undefined ? {} : { expect }) };
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
  applyThreadSlice(100);
  void (async () => {
    for (let i = 0; i < WARM_UP; i++) await sendOne(d.port, d.reqs, i);
    parentPort!.postMessage('ready');
    const r = await openLoop(d.port, d.reqs, d.rate, () => stopped, d.expect, d.keepSamples);
    closeClients();
    parentPort!.postMessage(r);
  })();
}
