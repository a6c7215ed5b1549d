/**
 * The block interval of a four-validator network, all real processes on loopback: `chaind
 * testnet init-files --v 4` on a random 127.a.b.x range, then the four validators started with
 * `timeout_commit` T, for each T of INTERVAL_COMMITS (default "1s,100ms"). Once the chain is past
 * a few warm-up heights, INTERVAL_BLOCKS (default 100, as CometBFT's e2e benchmark takes) block
 * times are read from node0's `/block` and the round of each height from `/commit`. Prints the
 * mean, stddev, min and max interval and the share of heights decided in round 0
 * (cometbft/cometbft:test/e2e/runner/benchmark.go reports the same interval statistics).
 *
 *   node dist/bench/p2p-interval.bench.js
 *   INTERVAL_COMMITS=1s INTERVAL_BLOCKS=300 node dist/bench/p2p-interval.bench.js
 *
 * The figure's peer is the interval's floor, `timeout_commit` itself: the ratio says how close to
 * it the network decides (1.0 would be a block every timeout_commit, with no time spent agreeing).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { assertListener } from './listener.js';
import { report } from './report.js';
import { CLI, getJson, runCli, tmpHome, waitFor } from '../test/helpers/node.js';
import { parseDuration } from '../src/config/duration.js';

const COMMITS = (process.env['INTERVAL_COMMITS'] ?? '1s,100ms').split(',').map((s) => s.trim()).filter(Boolean);
const BLOCKS = Number(process.env['INTERVAL_BLOCKS'] ?? 100);
const WARMUP = 3;

async function rpc(ip: string, pathAndQuery: string): Promise<any> {
  const r = await getJson(`http://${ip}:26657${pathAndQuery}`, 10_000);
  if (r.status !== 200 || typeof r.body !== 'object' || r.body.result === undefined) throw new Error(`${pathAndQuery}: HTTP ${r.status}`);
  return r.body.result;
}

async function height(ip: string): Promise<number> {
  try {
    return Number((await rpc(ip, '/status')).sync_info.latest_block_height);
  } catch {
    return -1;
  }
}

function stats(xs: number[]): { mean: number; stddev: number; min: number; max: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const stddev = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
  return { mean, stddev, min: Math.min(...xs), max: Math.max(...xs) };
}

function ms(commit: string): number {
  const v = parseDuration(commit);
  if (v === undefined) throw new Error(`INTERVAL_COMMITS: not a Go duration: ${commit}`);
  return v;
}

async function measure(commit: string): Promise<void> {
  const dir = tmpHome('chaind-interval-bench-');
  const a = 2 + Math.floor(Math.random() * 250);
  const b = 1 + Math.floor(Math.random() * 250);
  const ips = [2, 3, 4, 5].map((x) => `127.${a}.${b}.${x}`);
  const procs: ChildProcess[] = [];
  try {
    const init = runCli(['testnet', 'init-files', '--v', '4', '--output-dir', dir, '--chain-id', 'interval-bench', '--starting-ip-address', ips[0]!, '--keyring-backend', 'none']);
    if (init.status !== 0) throw new Error(init.stderr);
    for (let i = 0; i < 4; i++) {
      const out = fs.openSync(path.join(dir, `node${i}.log`), 'a');
      procs.push(spawn(process.execPath, [CLI, 'start', '--home', path.join(dir, `node${i}`), '--consensus.timeout_commit', commit], { stdio: ['ignore', out, out] }));
      fs.closeSync(out);
    }
    const last = WARMUP + BLOCKS + 1;
    const perBlockS = Math.max(1, ms(commit) / 1000) + 2;
    await waitFor(`height ${last} on node0`, async () => (await height(ips[0]!)) >= last, 120_000 + (last * perBlockS * 1000), 500);
    procs.forEach((p, i) => assertListener(`validator ${i}`, p.pid!, 26657, ips[i]));
    const times: number[] = [];
    let round0 = 0;
    for (let h = WARMUP; h <= last; h++) {
      const blk = await rpc(ips[0]!, `/block?height=${h}`);
      times.push(Date.parse(blk.block.header.time));
      if (h > WARMUP) {
        const c = await rpc(ips[0]!, `/commit?height=${h}`);
        if (Number(c.signed_header.commit.round) === 0) round0++;
      }
    }
    const intervals = times.slice(1).map((t, i) => t - times[i]!);
    const s = stats(intervals);
    const heights = await Promise.all(ips.map((ip) => height(ip)));
    const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
    console.log(
      `timeout_commit ${commit}: ${intervals.length} intervals (heights ${WARMUP}–${last}): mean ${s.mean.toFixed(0)} ms, stddev ${s.stddev.toFixed(0)} ms, ` +
        `min ${s.min} ms, max ${s.max} ms; decided in round 0: ${round0} of ${intervals.length} (${((100 * round0) / intervals.length).toFixed(0)} %); ` +
        `every node's height now ${heights.join(', ')}; load ${load}`,
    );
    report({
      area: 'P2P',
      figure: `block interval, 4 validators on loopback, timeout_commit ${commit} (mean; stddev ${s.stddev.toFixed(0)} ms, round 0: ${((100 * round0) / intervals.length).toFixed(0)} %)`,
      unit: 'ms',
      value: s.mean,
      peer: 'timeout_commit (the floor)',
      peerValue: ms(commit),
      better: 'lower',
      runs: intervals.length,
    });
  } finally {
    for (const p of procs) p.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 500));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

for (const c of COMMITS) await measure(c);
