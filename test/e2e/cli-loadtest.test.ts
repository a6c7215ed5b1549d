/**
 * `chaind loadtest` against a real devnet node process (`chaind init --dev`, `chaind start`, real
 * LMDB, loopback ports): a short bank-send run over HTTP, an eth-transfer run over the EVM
 * websocket, an erc20-transfer run (the tool deploys its token first) and a read run, each through
 * the CLI binary with `--json`; then the same eth-transfer, read and erc20-transfer flags (one tx per
 * sender in the pool: --pending-per-sender 1) against Foundry's anvil,
 * the peer the benches compare with.
 *
 * The counts must be consistent (committed ≤ accepted ≤ submitted, committed > 0), and they are
 * checked against the chain itself: the senders' account sequences (bank) and nonces (EVM) after
 * the run add up to the txs the report says were committed.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { allocPorts, CLI, runCli, startNode, statusHeight, tmpHome, waitFor, within, type Ports } from '../helpers/node.js';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { RpcClient } from '../../src/cli/client.js';
import { queryAccount } from '../../src/cli/tx.js';
import type { ReadReport, TxReport } from '../../src/cli/loadtest.js';
import { ANVIL_BIN, startAnvil } from '../helpers/evm.js';

t.setTimeout(400_000);

const home = tmpHome('chaind-loadtest-e2e-');
t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
let ports: Ports;

/** The CLI as a child process; resolves with its exit code, stdout and stderr. */
function loadtest(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, 'loadtest', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), 240_000);
    p.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

function consistent(t: Test, r: TxReport): void {
  for (const s of r.steps) {
    t.equal(s.submitted, Math.round(s.rate * s.duration_s), 'submitted = rate × duration');
    t.ok(s.committed <= s.accepted, `committed ${s.committed} ≤ accepted ${s.accepted}`);
    t.ok(s.accepted <= s.submitted, `accepted ${s.accepted} ≤ submitted ${s.submitted}`);
    t.equal(s.accepted + s.rejected, s.submitted, 'every tx was either accepted or rejected');
    t.ok(s.committed > 0, `committed ${s.committed} > 0`);
    t.equal(s.latency_seen_ms.n, s.committed - s.failed_in_block, 'one latency per committed tx');
    t.ok(s.committed_tps > 0, 'committed tx/s > 0');
  }
}

t.before(async () => {
  const init = runCli(['init', 'lt', '--home', home, '--dev']);
  if (init.status !== 0) throw new Error(`init failed: ${init.stderr}`);
  const cfg = path.join(home, 'config/config.toml');
  fs.writeFileSync(cfg, fs.readFileSync(cfg, 'utf8').replace(/timeout_commit = "[^"]*"/, 'timeout_commit = "300ms"'));
  ports = await allocPorts();
  const node = startNode(home, ports);
  t.teardown(async () => {
    node.proc.kill('SIGTERM');
    await within(node.exited, 20_000);
  });
  await waitFor('height 2', async () => (await statusHeight(ports.rpc)) >= 2n, 120_000);
});

t.test('bank-send over HTTP: the report agrees with the senders’ sequences', async (t) => {
  const senders = 4;
  const r = await loadtest(['--kind', 'bank-send', '--node', `tcp://127.0.0.1:${ports.rpc}`, '--rate', '10', '--duration', '3s', '--accounts', String(senders), '--connections', '2', '--settle', '30s', '--json', '-q']);
  t.equal(r.code, 0, `exit 0: ${r.err}`);
  const rep = JSON.parse(r.out) as TxReport;
  t.equal(rep.mode, 'tx');
  t.equal(rep.kind, 'bank-send');
  t.equal(rep.steps.length, 1);
  consistent(t, rep);
  t.ok(rep.steps[0]!.latency_ms !== null && rep.steps[0]!.latency_ms.n > 0, 'block-time latency measured');
  // Senders are cosmos keys 1..4 of the dev mnemonic, fresh in this genesis: their sequences now
  // count the txs that went through the ante handler, i.e. were committed.
  const rpc = new RpcClient(`http://127.0.0.1:${ports.rpc}`);
  const keys = devAccounts().filter((a) => a.keyType === 'secp256k1').slice(1, 1 + senders);
  let seqs = 0n;
  for (const k of keys) seqs += (await queryAccount(rpc, k.bech32)).sequence;
  t.equal(Number(seqs), rep.steps[0]!.committed, 'sum of sender sequences = committed');
});

t.test('eth-transfer over the EVM websocket, then a read run', async (t) => {
  const senders = 3;
  const r = await loadtest(['--kind', 'eth-transfer', '--evm-rpc', `ws://127.0.0.1:${ports.jsonRpcWs}`, '--rate', '10', '--duration', '2s', '--accounts', String(senders), '--settle', '30s', '--json', '-q']);
  t.equal(r.code, 0, `exit 0: ${r.err}`);
  const rep = JSON.parse(r.out) as TxReport;
  t.equal(rep.kind, 'eth-transfer');
  consistent(t, rep);
  // Eth keys 1..3: their nonces count their committed txs (each got no other tx: the funding
  // came from key 0).
  let nonces = 0;
  for (const k of devAccounts().filter((a) => a.keyType === 'eth_secp256k1').slice(1, 1 + senders)) {
    const res = await fetch(`http://127.0.0.1:${ports.jsonRpc}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getTransactionCount', params: [k.hex, 'latest'] }),
    });
    nonces += Number(BigInt(((await res.json()) as { result: string }).result));
  }
  t.equal(nonces, rep.steps[0]!.committed, 'sum of sender nonces = committed');

  const rd = await loadtest(['--method', 'status', '--node', `tcp://127.0.0.1:${ports.rpc}`, '--duration', '1s', '--connections', '2', '--json', '-q']);
  t.equal(rd.code, 0, `read run exits 0: ${rd.err}`);
  const rr = JSON.parse(rd.out) as ReadReport;
  t.equal(rr.mode, 'read');
  t.ok(rr.steps[0]!.ok > 0, 'status answered');
  t.equal(rr.steps[0]!.errors, 0, 'no errors');
  t.equal(rr.steps[0]!.ok + rr.steps[0]!.errors, rr.steps[0]!.requests);
});

/** The erc20-transfer flags used against chaind and anvil alike: one tx per sender in the pool. */
const ERC20_FLAGS = ['--kind', 'erc20-transfer', '--rate', '10', '--duration', '2s', '--accounts', '2', '--pending-per-sender', '1', '--settle', '30s', '--json', '-q'];

t.test('erc20-transfer over HTTP: the token is deployed, then its transfers commit', async (t) => {
  const r = await loadtest([...ERC20_FLAGS, '--evm-rpc', `http://127.0.0.1:${ports.jsonRpc}`]);
  t.equal(r.code, 0, `exit 0: ${r.err}`);
  const rep = JSON.parse(r.out) as TxReport;
  t.equal(rep.kind, 'erc20-transfer');
  consistent(t, rep);
  t.equal(rep.steps[0]!.failed_in_block, 0, 'no transfer reverted');
  t.equal(rep.steps[0]!.committed, rep.steps[0]!.submitted, 'every transfer committed (a sender held until its last one is in a block)');
});

t.test('the same flags against anvil: eth transfers, a read run and ERC-20 transfers', { skip: fs.existsSync(ANVIL_BIN) ? false : `anvil not installed (${ANVIL_BIN})` }, async (t) => {
  const anvil = await startAnvil([]);
  t.teardown(() => anvil.stop());
  const url = anvil.url.replace(/\/$/, '');
  const r = await loadtest(['--kind', 'eth-transfer', '--evm-rpc', url, '--rate', '10', '--duration', '2s', '--accounts', '3', '--settle', '30s', '--json', '-q']);
  t.equal(r.code, 0, `exit 0: ${r.err}`);
  const rep = JSON.parse(r.out) as TxReport;
  t.equal(rep.kind, 'eth-transfer');
  consistent(t, rep);
  const rd = await loadtest(['--method', 'eth_getBalance', '--evm-rpc', url, '--duration', '1s', '--connections', '2', '--json', '-q']);
  t.equal(rd.code, 0, `read run exits 0: ${rd.err}`);
  const rr = JSON.parse(rd.out) as ReadReport;
  t.ok(rr.steps[0]!.ok > 0, 'eth_getBalance answered by anvil');
  t.equal(rr.steps[0]!.errors, 0, 'no errors');
  // The ERC-20 flags of the chaind run: the token deployed in anvil by the same set-up.
  const re = await loadtest([...ERC20_FLAGS, '--evm-rpc', url]);
  t.equal(re.code, 0, `erc20 run exits 0: ${re.err}`);
  const e = JSON.parse(re.out) as TxReport;
  t.equal(e.kind, 'erc20-transfer');
  consistent(t, e);
  t.equal(e.steps[0]!.failed_in_block, 0, 'no transfer reverted in anvil');
  t.equal(e.steps[0]!.committed, e.steps[0]!.submitted, 'every transfer committed in anvil');
});
