/**
 * One fuzz session, shared by test/e2e/fuzz.test.ts and bench/fuzz.bench.ts: start a node, build
 * the surfaces from it, run each surface's cases while watching the process (alive, RSS, height),
 * and check after each surface that blocks still come.
 */
import { getJson, statusHeight, waitFor } from '../node.js';
import { cpuMs, startFuzzNode, Watcher, type FuzzNode } from './node.js';
import { formatFailure, runSurface, type FuzzCase, type RunResult, type Surface } from './surface.js';
import { DEFAULT_LANES, SURFACES } from './surfaces.js';
import { collectTarget, type FuzzTarget } from './target.js';

export interface SessionOptions {
  seed: number;
  /** Cases per surface. */
  count: number;
  /** Cases of particular surfaces, where they differ from `count`. */
  counts?: Record<string, number>;
  surfaces?: string[];
  lanes?: number;
  /** Run the surfaces at the same time (the test's default: the node serves all ports at once). */
  parallel?: boolean;
  /** Wall-clock time (Date.now()) after which no new case starts. */
  stopAt?: number;
  log?: (line: string) => void;
}

export interface SurfaceReport {
  result: RunResult;
  heightBefore: bigint;
  heightAfter: bigint | null;
  /** Heights the watcher saw while the surface ran. */
  heightsDuring: bigint[];
  alive: boolean;
  casesPerSecond: number;
  /** CPU ms per case of the node and of this process (meaningful when surfaces run one at a time). */
  nodeCpuMsPerCase: number;
  clientCpuMsPerCase: number;
}

export interface SessionReport {
  seed: number;
  surfaces: SurfaceReport[];
  peakRssKiB: number;
  firstRssKiB: number;
  lastRssKiB: number;
  alive: boolean;
  exitCode: number | null | undefined;
  /** The node's log tail when it died. */
  nodeOutput: string;
  finalHeight: bigint | null;
}

/**
 * Seed from FUZZ_SEED (`random` for a fresh one), else `fallback`, else a fresh one. Printed either
 * way, so a failing run can be replayed. The suite passes a fixed fallback: a gate that draws new
 * cases each run fails on whatever new case it meets, not on a change; exploring is the bench's
 * job (bench/fuzz.bench.ts, a fresh seed each run) and a new failure it finds becomes a
 * regression case or a known-bug switch.
 */
export function fuzzSeed(fallback?: number): number {
  const env = process.env.FUZZ_SEED;
  if (env === 'random' || (fallback === undefined && (env === undefined || env === ''))) return (Math.random() * 2 ** 32) >>> 0;
  if (env !== undefined && env !== '') return Number(env) >>> 0;
  return fallback! >>> 0;
}

async function heightAdvances(node: FuzzNode, from: bigint, ms: number): Promise<bigint | null> {
  try {
    return await waitFor(`height > ${from}`, async () => {
      if (!node.alive()) throw new Error('node exited');
      const h = await statusHeight(node.ports.rpc);
      return h > from ? h : null;
    }, ms, 200);
  } catch {
    return null;
  }
}

export async function runSession(opts: SessionOptions, during?: (node: FuzzNode, t: FuzzTarget) => Promise<void>): Promise<SessionReport> {
  const log = opts.log ?? (() => {});
  const node = await startFuzzNode();
  const watcher = new Watcher(node.node.proc.pid!, node.ports.rpc);
  try {
    const target = await collectTarget(node.home, node.ports);
    await during?.(node, target);
    watcher.start();
    const names = opts.surfaces ?? Object.keys(SURFACES);
    for (const name of names) if (!SURFACES[name]) throw new Error(`unknown surface ${name} (have ${Object.keys(SURFACES).join(', ')})`);
    const runOne = async (name: string): Promise<SurfaceReport> => {
      const surface: Surface<FuzzCase> = SURFACES[name]!(target);
      const heightBefore = await statusHeight(node.ports.rpc);
      const t0 = Date.now();
      const nodeCpu0 = cpuMs(node.node.proc.pid!) ?? 0;
      const clientCpu0 = process.cpuUsage();
      const count = opts.counts?.[name] ?? opts.count;
      log(`surface ${name}: ${surface.seedNames.length} seeds, ${count} cases, seed ${opts.seed}`);
      const result = await runSurface(surface, { seed: opts.seed, count, lanes: opts.lanes ?? DEFAULT_LANES[name] ?? 8, stop: () => !node.alive() || (opts.stopAt !== undefined && Date.now() > opts.stopAt) });
      const t1 = Date.now();
      const nodeCpu = (cpuMs(node.node.proc.pid!) ?? nodeCpu0) - nodeCpu0;
      const clientCpu = process.cpuUsage(clientCpu0);
      const alive = node.alive();
      const heightAfter = alive ? await heightAdvances(node, heightBefore, 30_000) : null;
      const r: SurfaceReport = {
        result,
        heightBefore,
        heightAfter,
        heightsDuring: watcher.heightsBetween(t0, t1),
        alive,
        casesPerSecond: result.cases / (result.ms / 1000),
        nodeCpuMsPerCase: nodeCpu / Math.max(1, result.cases),
        clientCpuMsPerCase: (clientCpu.user + clientCpu.system) / 1000 / Math.max(1, result.cases),
      };
      const tags = [...result.tags.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}:${v}`).join(' ');
      log(`surface ${name}: ${result.cases} cases in ${(result.ms / 1000).toFixed(1)} s (${r.casesPerSecond.toFixed(0)}/s), ${result.failures.length} failures, height ${heightBefore} → ${heightAfter ?? 'stalled'}, RSS peak ${(watcher.peakRssKiB / 1024).toFixed(0)} MiB, CPU per case node ${r.nodeCpuMsPerCase.toFixed(2)} ms / fuzzer ${r.clientCpuMsPerCase.toFixed(2)} ms${opts.parallel ? ' (all surfaces\' CPU: they ran together)' : ''}; outcomes ${tags}`);
      const slow = [...result.bySeed.entries()].sort((a, b) => b[1].ms / b[1].n - a[1].ms / a[1].n).slice(0, 5);
      log(`surface ${name}: slowest seeds ${slow.map(([k, v]) => `${k} ${(v.ms / v.n).toFixed(1)} ms×${v.n}`).join(', ')}`);
      for (const f of result.failures) log(`FAILURE\n${formatFailure(f)}`);
      if (!alive) {
        log(`NODE DIED during surface ${name} (exit ${node.exitCode()}); the last cases sent:`);
        for (const c of result.recent) log(`  case ${c.index} (${c.seed}; ${c.mutations.join(' ')}): ${c.describe().slice(0, 1500)}`);
      }
      return r;
    };
    const reports: SurfaceReport[] = [];
    if (opts.parallel) reports.push(...(await Promise.all(names.map(runOne))));
    else {
      for (const name of names) {
        const r = await runOne(name);
        reports.push(r);
        if (!r.alive) break;
      }
    }
    watcher.stop();
    watcher.sampleRss();
    const alive = node.alive();
    let finalHeight: bigint | null = null;
    if (alive) finalHeight = await getJson(`http://127.0.0.1:${node.ports.rpc}/status`).then((s) => BigInt(s.body.result.sync_info.latest_block_height)).catch(() => null);
    return {
      seed: opts.seed,
      surfaces: reports,
      peakRssKiB: watcher.peakRssKiB,
      firstRssKiB: watcher.firstRssKiB,
      lastRssKiB: watcher.lastRssKiB,
      alive,
      exitCode: node.exitCode(),
      nodeOutput: alive ? '' : node.node.output().slice(-8000),
      finalHeight,
    };
  } finally {
    watcher.stop();
    await node.stop();
  }
}
