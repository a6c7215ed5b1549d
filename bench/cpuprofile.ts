/**
 * Reads a V8 .cpuprofile (`node --cpu-prof`) into the lines the benches print: the top frames by
 * self time and by inclusive time, as a share of the non-idle samples.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function frameName(n: ProfileNode): string {
  const f = n.callFrame;
  const file = f.url === '' ? '' : ` ${f.url.replace(/^file:\/\/.*?\/(dist|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
  return `${f.functionName || '(anonymous)'}${file}`;
}

/** Top `n` frames by self time, then top `n` by inclusive time (a frame counted once per sample). */
export function topFrames(p: CpuProfile, n = 20): string[] {
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const parent = new Map<number, number>();
  for (const x of p.nodes) for (const c of x.children ?? []) parent.set(c, x.id);
  const selfT = new Map<string, number>();
  const inclT = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i] ?? 0;
    const node = byId.get(p.samples[i]!)!;
    const name = frameName(node);
    if (name === '(idle)') {
      idle += dt;
      continue;
    }
    busy += dt;
    selfT.set(name, (selfT.get(name) ?? 0) + dt);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const nm = frameName(byId.get(id)!);
      if (seen.has(nm)) continue;
      seen.add(nm);
      inclT.set(nm, (inclT.get(nm) ?? 0) + dt);
    }
  }
  const fmt = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${((100 * v) / busy).toFixed(1).padStart(5)} %  ${k}`);
  return [
    `busy ${(busy / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s`,
    '-- self --',
    ...fmt(selfT),
    '-- inclusive --',
    ...fmt(new Map([...inclT].filter(([k]) => k !== '(root)'))),
  ];
}

/**
 * `fn` under this thread's sampling profiler (a sample every 200 µs): its `top` frames printed
 * under `title`, and the profile written to `<dir>/<file>` when a directory is given.
 */
export async function profileInProcess<T>(fn: () => Promise<T>, opts: { title: string; top: number; dir?: string; file: string }): Promise<T> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    if (opts.dir) fs.writeFileSync(path.join(opts.dir, opts.file), JSON.stringify(profile));
    console.log(`${opts.title}:`);
    for (const l of topFrames(profile as unknown as CpuProfile, opts.top)) console.log(`  ${l}`);
  }
}
