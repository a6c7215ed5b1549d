/**
 * Kill -9 at random moments while the node makes blocks, restart, repeat. Afterwards the chain
 * must be one unbroken line of blocks (no lost committed block, no fork: every block hash seen
 * over RPC before a kill is the block stored at that height at the end), and the validator must
 * never have signed two different messages for one height/round/step (CHAIND_SIGN_LOG, written
 * with fsync by the private validator before each signature is released).
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { allocPorts, getJson, runCli, sleep, startNode, statusHeight, tmpHome, waitFor } from '../helpers/node.js';

const KILLS = 6;

t.test('kill -9 repeatedly: no lost block, no fork, no double signature', async (t) => {
  const home = tmpHome();
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  t.equal(runCli(['init', 'crash', '--home', home, '--chain-id', 'crash-1', '--dev']).status, 0);
  // Faster blocks give more crash points per second of test.
  const cfgPath = path.join(home, 'config/config.toml');
  fs.writeFileSync(cfgPath, fs.readFileSync(cfgPath, 'utf8').replace(/timeout_commit = "[^"]*"/, 'timeout_commit = "200ms"'));
  const signLog = path.join(home, 'sign.log');
  const env = { CHAIND_SIGN_LOG: signLog };
  const ports = await allocPorts();
  const seen = new Map<string, string>(); // height -> block hash seen over RPC
  let lastHeight = 0n;

  for (let i = 0; i <= KILLS; i++) {
    const node = startNode(home, ports, env);
    const startedAt = lastHeight;
    try {
      await waitFor('node answers', async () => (await statusHeight(ports.rpc)) >= startedAt, 180_000);
    } catch (e) {
      t.comment(node.output());
      node.proc.kill('SIGKILL');
      throw e;
    }
    const h = await statusHeight(ports.rpc);
    t.ok(h >= lastHeight, `run ${i}: restart at ${h} keeps every committed block (was ${lastHeight})`);
    // Run a random while, recording block hashes, then kill without warning.
    const until = Date.now() + 300 + Math.floor(Math.random() * 1500);
    while (Date.now() < until) {
      try {
        const s = await getJson(`http://127.0.0.1:${ports.rpc}/status`, 500);
        const height = s.body.result.sync_info.latest_block_height as string;
        if (height !== '0') seen.set(height, s.body.result.sync_info.latest_block_hash);
        lastHeight = BigInt(height) > lastHeight ? BigInt(height) : lastHeight;
      } catch {
        // the node is busy; try again
      }
      await sleep(20 + Math.floor(Math.random() * 60));
    }
    if (i < KILLS) {
      node.proc.kill('SIGKILL');
      await node.exited;
    } else {
      // Last run: let it make a few more blocks, then stop it cleanly.
      const target = lastHeight + 3n;
      await waitFor('three more blocks', async () => (await statusHeight(ports.rpc)) >= target, 120_000);
      lastHeight = await statusHeight(ports.rpc);
      node.proc.kill('SIGTERM');
      t.equal(await node.exited, 0, 'clean stop');
    }
  }

  // The stored chain: heights 1..H, each block pointing at the previous one.
  const { Storage } = await import('../../src/store/storage.js');
  const { blockIdOf } = await import('../../src/types/partset.js');
  const storage = Storage.open({ file: path.join(home, 'data', 'chaind.mdb') });
  try {
    const top = storage.blocks.height();
    t.ok(top >= lastHeight, `store height ${top} >= last height seen ${lastHeight}`);
    let prevHash = '';
    let broken = 0;
    for (let h = 1n; h <= top; h++) {
      const block = storage.blocks.loadBlock(h);
      if (!block) {
        broken++;
        continue;
      }
      const hash = Buffer.from(blockIdOf(block).blockId.hash).toString('hex').toUpperCase();
      const last = Buffer.from(block.header.lastBlockId.hash).toString('hex').toUpperCase();
      if (h > 1n && last !== prevHash) broken++;
      const rpcHash = seen.get(h.toString());
      if (rpcHash !== undefined && rpcHash !== hash) broken++;
      prevHash = hash;
    }
    t.equal(broken, 0, `${top} blocks form one chain and match every hash seen before a kill`);
  } finally {
    await storage.close();
  }

  // No double signing: one sign-bytes value per (height, round, step).
  const lines = fs.readFileSync(signLog, 'utf8').split('\n').filter(Boolean);
  t.ok(lines.length > 0, 'the sign log has entries');
  const byHrs = new Map<string, string>();
  let conflicts = 0;
  for (const line of lines) {
    const e = JSON.parse(line) as { height: string; round: number; step: number; signbytes_hex: string };
    const k = `${e.height}/${e.round}/${e.step}`;
    const prev = byHrs.get(k);
    if (prev !== undefined && prev !== e.signbytes_hex) conflicts++;
    byHrs.set(k, e.signbytes_hex);
  }
  t.equal(conflicts, 0, `no conflicting signatures over ${lines.length} signings`);
});
