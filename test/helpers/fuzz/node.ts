/**
 * The node under fuzz: a real `chaind start` child process on a fresh home, fast blocks, and a
 * watcher that samples its RSS (/proc/<pid>/status VmRSS) and height while the cases run.
 */
import fs from 'node:fs';
import { allocPorts, getJson, runCli, startNode, statusHeight, tmpHome, waitFor, type Ports, type RunningNode } from '../node.js';

export interface FuzzNode {
  home: string;
  ports: Ports;
  node: RunningNode;
  alive(): boolean;
  exitCode(): number | null | undefined;
  stop(): Promise<void>;
}

export async function startFuzzNode(extra: string[] = []): Promise<FuzzNode> {
  const home = tmpHome('chaind-fuzz-');
  const init = runCli(['init', 'fuzz', '--home', home, '--chain-id', 'fuzz-1', '--dev']);
  if (init.status !== 0) throw new Error(`init failed: ${init.stderr}`);
  const ports = await allocPorts();
  const node = startNode(home, ports, {}, ['--consensus.timeout_commit', '200ms', ...extra]);
  let code: number | null | undefined;
  let exited = false;
  void node.exited.then((c) => {
    exited = true;
    code = c;
  });
  try {
    await waitFor('height >= 2', async () => (exited ? Promise.reject(new Error(`node exited ${code}`)) : (await statusHeight(ports.rpc)) >= 2n), 90_000, 200);
    await waitFor('REST and gRPC up', async () => (await getJson(`http://127.0.0.1:${ports.api}/cosmos/bank/v1beta1/supply`)).status === 200, 30_000, 200);
  } catch (e) {
    node.proc.kill('SIGKILL');
    fs.rmSync(home, { recursive: true, force: true });
    throw new Error(`${(e as Error).message}\n${node.output()}`);
  }
  return {
    home,
    ports,
    node,
    alive: () => !exited,
    exitCode: () => code,
    async stop() {
      if (!exited) {
        node.proc.kill('SIGTERM');
        const t = setTimeout(() => node.proc.kill('SIGKILL'), 15_000);
        await node.exited;
        clearTimeout(t);
      }
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

export function rssKiB(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** CPU time (user + system) a process has used, in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
export function cpuMs(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return null;
  }
}

/** Samples RSS every `rssEveryMs` and the height every `heightEveryMs` (over its own connection). */
export class Watcher {
  peakRssKiB = 0;
  firstRssKiB = 0;
  lastRssKiB = 0;
  heights: Array<{ at: number; height: bigint }> = [];
  private timers: NodeJS.Timeout[] = [];
  private polling = false;

  constructor(
    private readonly pid: number,
    private readonly rpcPort: number,
  ) {}

  start(rssEveryMs = 250, heightEveryMs = 1000): void {
    this.sampleRss();
    this.firstRssKiB = this.lastRssKiB;
    this.timers.push(setInterval(() => this.sampleRss(), rssEveryMs));
    this.timers.push(setInterval(() => void this.sampleHeight(), heightEveryMs));
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  sampleRss(): void {
    const r = rssKiB(this.pid);
    if (r === null) return;
    this.lastRssKiB = r;
    if (r > this.peakRssKiB) this.peakRssKiB = r;
  }

  private async sampleHeight(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      this.heights.push({ at: Date.now(), height: await statusHeight(this.rpcPort) });
    } catch {
      // busy or gone: the liveness checks report it
    } finally {
      this.polling = false;
    }
  }

  /** Heights seen in [from, to]. */
  heightsBetween(from: number, to: number): bigint[] {
    return this.heights.filter((h) => h.at >= from && h.at <= to).map((h) => h.height);
  }
}
