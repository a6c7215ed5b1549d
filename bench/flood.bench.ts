/**
 * RPC floods against a real single-validator devnet (`chaind start` on a temp home, loopback):
 * the floods of the hardening issue at their full sizes — pipelined GET /blockchain on the node
 * RPC from one and from 20 connections, the same over websocket, and a burst of REST
 * /txs/block requests — each from clients that never read the answers. For each flood: the
 * max and mean block interval while it lasted (from the headers' times; timeout_commit is 1 s)
 * and the node's RSS before and at peak. See docs/ARCHITECTURE.md "RPC under load".
 *
 * Usage: node dist/bench/flood.bench.js [scale, default 1] [hold seconds, default 8] [only floods whose name has this]
 */
import fs from 'node:fs';
import { allocPorts, runCli, startNode, statusHeight, tmpHome, waitFor } from '../test/helpers/node.js';
import { formatFlood, issueFloods, measureFlood } from '../test/helpers/flood.js';
import { assertListener } from './listener.js';
import { report } from './report.js';

const SCALE = Number(process.argv[2] ?? 1);
const HOLD_MS = Number(process.argv[3] ?? 8) * 1000;
const ONLY = process.argv[4] ?? '';

async function main(): Promise<void> {
  const home = tmpHome('chaind-flood-');
  const init = runCli(['init', 'flood', '--home', home, '--chain-id', 'flood-1', '--dev']);
  if (init.status !== 0) throw new Error(`init failed: ${init.stderr}`);
  const ports = await allocPorts();
  const node = startNode(home, ports);
  try {
    await waitFor('height >= 3', async () => (await statusHeight(ports.rpc)) >= 3n, 60_000);
    assertListener('chaind node RPC', node.proc.pid!, ports.rpc);
    assertListener('chaind REST', node.proc.pid!, ports.api);
    for (const flood of issueFloods(SCALE, HOLD_MS).filter((f) => f.name.includes(ONLY))) {
      if (node.proc.exitCode !== null) throw new Error(`node exited: ${node.output().slice(-3000)}`);
      const r = await measureFlood(node.proc.pid!, ports, flood);
      console.log(formatFlood(r));
      // The dev config's timeout_commit is 1 s: the interval a block takes with no flood.
      report({ area: 'RPC under load', figure: `longest block interval during ${r.name}`, unit: 'ms', value: r.intervals.maxMs, peer: 'timeout_commit (no load)', peerValue: 1000, better: 'lower' });
    }
    if (node.proc.exitCode !== null) throw new Error(`node exited: ${node.output().slice(-3000)}`);
  } finally {
    node.proc.kill('SIGKILL');
    fs.rmSync(home, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
