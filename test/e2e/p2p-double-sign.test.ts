/**
 * A double-signing validator over real P2P: four `chaind start` processes from `chaind testnet
 * init-files` on a random 127.a.b.x, node3 started with the test-only CHAIND_TEST_DOUBLE_SIGN=1
 * (src/p2p/reactors/double-sign.ts: each own block prevote is followed by a conflicting nil
 * prevote to every peer). The honest nodes see both votes, form DuplicateVoteEvidence, gossip it
 * (evidence channel 0x38) and commit it: a block on every node carries DuplicateVoteEvidence
 * whose two votes are node3's, for one height/round/type and different block IDs, with valid
 * signatures checked here. The chain keeps going. The same flag on a chain id not beginning
 * "test-" makes `chaind start` refuse to run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { alive, CLI, getJson, runCli, tmpHome, waitFor } from '../helpers/node.js';

t.setTimeout(300_000);

async function rpc(ip: string, q: string): Promise<any> {
  const r = await getJson(`http://${ip}:26657/${q}`, 5000);
  if (r.status !== 200) throw new Error(`${ip} ${q}: HTTP ${r.status}`);
  return r.body.result;
}

async function height(ip: string): Promise<bigint> {
  try {
    return BigInt((await rpc(ip, 'status')).sync_info.latest_block_height);
  } catch {
    return -1n;
  }
}

function init(dir: string, chainId: string, ips: string[]): void {
  const r = runCli(['testnet', 'init-files', '--v', '4', '--output-dir', dir, '--chain-id', chainId, '--starting-ip-address', ips[0]!, '--keyring-backend', 'none']);
  if (r.status !== 0) throw new Error(r.stderr);
}

function randomIps(): string[] {
  const a = 2 + Math.floor(Math.random() * 250);
  const b = 1 + Math.floor(Math.random() * 250);
  return [2, 3, 4, 5].map((x) => `127.${a}.${b}.${x}`);
}

t.test('the test-only double signer is refused on a chain id not beginning "test-"', async (t) => {
  const dir = tmpHome('chaind-dsign-refuse-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  init(dir, 'prod-chain', randomIps());
  const r = runCli(['start', '--home', path.join(dir, 'node0')], { CHAIND_TEST_DOUBLE_SIGN: '1' });
  t.not(r.status, 0, 'chaind start exits non-zero');
  t.match(r.stdout + r.stderr, /CHAIND_TEST_DOUBLE_SIGN=1 .*refused on chain "prod-chain"/, 'and says why');
});

t.test('a double-signing validator: DuplicateVoteEvidence gossiped and committed on every node', async (t) => {
  const dir = tmpHome('chaind-dsign-');
  const ips = randomIps();
  init(dir, 'test-dsign', ips);
  const procs: ChildProcess[] = [];
  t.teardown(() => {
    for (const p of procs) if (p.pid && alive(p.pid)) p.kill('SIGKILL');
    if (!t.passing()) for (let i = 0; i < 4; i++) t.comment(`--- node${i}\n${fs.readFileSync(path.join(dir, `node${i}.log`), 'utf8').slice(-4000)}`);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  for (let i = 0; i < 4; i++) {
    const out = fs.openSync(path.join(dir, `node${i}.log`), 'a');
    const env = i === 3 ? { ...process.env, CHAIND_TEST_DOUBLE_SIGN: '1' } : process.env;
    procs.push(spawn(process.execPath, [CLI, 'start', '--home', path.join(dir, `node${i}`), '--consensus.timeout_commit', '200ms'], { stdio: ['ignore', out, out], env }));
    fs.closeSync(out);
  }
  const byz: string = await waitFor('node3 answers', async () => {
    try {
      return (await rpc(ips[3]!, 'status')).validator_info.address as string;
    } catch {
      return null;
    }
  }, 120_000, 200);

  // Scan the committed blocks of node0 for evidence until one carries node3's double sign.
  let next = 1n;
  const found = await waitFor('DuplicateVoteEvidence committed', async () => {
    const top = await height(ips[0]!);
    for (; next <= top; next++) {
      const b = await rpc(ips[0]!, `block?height=${next}`);
      const ev = b.block.evidence.evidence as any[];
      if (ev.length > 0) return { height: next, hash: b.block_id.hash as string, ev };
    }
    return null;
  }, 180_000, 500);
  t.pass(`evidence committed at height ${found.height}`);
  const e = found.ev[0];
  t.match(e.type, /DuplicateVoteEvidence$/, 'of type DuplicateVoteEvidence');
  const { vote_a: a, vote_b: b } = e.value;
  t.equal(a.validator_address, byz, "vote A is node3's");
  t.equal(b.validator_address, byz, "vote B is node3's");
  t.ok(a.height === b.height && a.round === b.round && a.type === b.type, 'one height/round/type');
  t.not(a.block_id.hash, b.block_id.hash, 'different block IDs');
  t.ok(a.signature && b.signature && a.signature !== b.signature, 'both signed');

  // Every honest node committed the same block with it.
  for (const ip of ips.slice(1, 3)) {
    await waitFor(`${ip} at ${found.height}`, async () => (await height(ip)) >= found.height, 120_000, 200);
    const blk = await rpc(ip, `block?height=${found.height}`);
    t.equal(blk.block_id.hash, found.hash, `${ip}: same block at ${found.height}`);
    t.equal(blk.block.evidence.evidence.length, found.ev.length, `${ip}: with the evidence`);
  }
  const h0 = await height(ips[0]!);
  await waitFor('the chain goes on', async () => (await height(ips[0]!)) >= h0 + 2n, 120_000, 200);
  t.pass('blocks keep coming after the evidence');
});
