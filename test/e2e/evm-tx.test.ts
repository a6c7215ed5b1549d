/**
 * End to end on a real devnet node (`chaind init --dev`, `chaind start` as a separate process,
 * real LMDB, the node RPC on loopback): raw signed Ethereum txs — hex in `broadcast_tx_sync`'s
 * URI form, base64 in `broadcast_tx_commit`'s JSON form — are included and executed by the EVM
 * module; `tx` finds them by their CometBFT hash (sha256 of the raw bytes), `tx_search` by the
 * `ethereum_tx.ethereumTxHash` event. Then kill -9 and a restart: the chain goes on, and the
 * sender's next nonce is the persisted auth sequence.
 */
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import t from 'tap';
import { createTx, type TypedTransaction } from '@ethereumjs/tx';
import { Address, bytesToHex, createContractAddress } from '@ethereumjs/util';
import { createEvmCommon } from '../../src/evm/common.js';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { deployData, transferData } from '../helpers/evm.js';
import { allocPorts, getJson, runCli, startNode, statusHeight, tmpHome, waitFor, type RunningNode } from '../helpers/node.js';

const common = createEvmCommon({ chainId: 9000n });
const [A, B] = devAccounts().filter((a) => a.keyType === 'eth_secp256k1');

function sign(o: { type?: 0 | 2; nonce: bigint; to?: Uint8Array; data?: Uint8Array; value?: bigint; gasLimit?: bigint }): TypedTransaction {
  const type = o.type ?? 2;
  const fees = type === 2 ? { maxFeePerGas: 0n, maxPriorityFeePerGas: 0n } : { gasPrice: 0n };
  return createTx(
    { type, nonce: o.nonce, to: o.to === undefined ? undefined : bytesToHex(o.to), value: o.value ?? 0n, data: o.data ?? new Uint8Array(0), gasLimit: o.gasLimit ?? 2_000_000n, ...fees },
    { common },
  ).sign(A!.privateKey);
}

const cometHash = (raw: Uint8Array) => createHash('sha256').update(raw).digest('hex').toUpperCase();

async function rpc(port: number, method: string, params: Record<string, unknown>): Promise<any> {
  const r = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await r.json()) as { error?: unknown; result: any };
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

const evAttr = (res: any, type: string, key: string): string | undefined =>
  (res.events as any[]).find((e) => e.type === type)?.attributes.find((a: any) => a.key === key)?.value;

t.test('raw Ethereum txs through broadcast_tx_sync/commit; tx and tx_search find them; a kill -9 restart', async (t) => {
  const home = tmpHome();
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  t.equal(runCli(['init', 'evm', '--home', home, '--chain-id', 'evm-1', '--dev']).status, 0);
  const cfgPath = `${home}/config/config.toml`;
  fs.writeFileSync(cfgPath, fs.readFileSync(cfgPath, 'utf8').replace(/timeout_commit = "[^"]*"/, 'timeout_commit = "200ms"'));
  const ports = await allocPorts();
  let node: RunningNode = startNode(home, ports);
  t.teardown(() => {
    node.proc.kill('SIGKILL');
  });
  try {
    await waitFor('height 1', async () => (await statusHeight(ports.rpc)) >= 1n, 180_000);

    // Deploy, hex bytes in the URI form of broadcast_tx_sync.
    const deploy = sign({ nonce: 0n, data: deployData(1_000_000n) });
    const raw1 = deploy.serialize();
    const { body: sync } = await getJson(`http://127.0.0.1:${ports.rpc}/broadcast_tx_sync?tx=0x${Buffer.from(raw1).toString('hex')}`, 30_000);
    t.equal(sync.result.code, 0, `check_tx: ${sync.result.log}`);
    t.equal(sync.result.hash, cometHash(raw1), 'the CometBFT hash is sha256 of the raw envelope');
    const found = await waitFor('tx by CometBFT hash', async () => {
      const { body } = await getJson(`http://127.0.0.1:${ports.rpc}/tx?hash=0x${cometHash(raw1)}`);
      return body.result;
    });
    t.equal(found.tx_result.code, 0, found.tx_result.log);
    t.equal(evAttr(found.tx_result, 'ethereum_tx', 'ethereumTxHash'), bytesToHex(deploy.hash()));
    const token = createContractAddress(new Address(A!.address), 0n).bytes;
    t.equal(evAttr(found.tx_result, 'ethereum_tx', 'contract'), bytesToHex(token));
    t.equal(Buffer.from(found.tx, 'base64').toString('hex'), Buffer.from(raw1).toString('hex'), '`tx` returns the raw envelope');

    const search = await rpc(ports.rpc, 'tx_search', { query: `ethereum_tx.ethereumTxHash='${bytesToHex(deploy.hash())}'` });
    t.equal(search.total_count, '1', 'tx_search finds it by the eth hash');
    t.equal(search.txs[0].hash, cometHash(raw1));

    // A legacy ERC-20 transfer through broadcast_tx_commit (JSON, base64).
    const tr = sign({ type: 0, nonce: 1n, to: token, data: transferData(B!.address, 25n), gasLimit: 100_000n });
    const c1 = await rpc(ports.rpc, 'broadcast_tx_commit', { tx: Buffer.from(tr.serialize()).toString('base64') });
    t.equal(c1.check_tx.code, 0, c1.check_tx.log);
    t.equal(c1.tx_result.code, 0, c1.tx_result.log);
    t.not(c1.height, '0');
    t.ok(c1.tx_result.events.some((e: any) => e.type === 'tx_log'), 'the Transfer log is an event');

    // A revert: included, status 0 in the event, gas used reported.
    const bad = sign({ nonce: 2n, to: token, data: transferData(B!.address, 10n ** 30n), gasLimit: 100_000n });
    const c2 = await rpc(ports.rpc, 'broadcast_tx_commit', { tx: Buffer.from(bad.serialize()).toString('base64') });
    t.equal(c2.tx_result.code, 0);
    t.equal(evAttr(c2.tx_result, 'ethereum_tx', 'ethereumTxFailed'), 'revert');
    t.ok(BigInt(c2.tx_result.gas_used) > 21_000n);

    // A stale nonce is refused at CheckTx with geth's words.
    const stale = await rpc(ports.rpc, 'broadcast_tx_sync', { tx: Buffer.from(sign({ nonce: 1n, to: B!.address, gasLimit: 21_000n }).serialize()).toString('base64') });
    t.not(stale.code, 0);
    t.match(stale.log, /nonce too low/);

    // kill -9, restart: the chain continues and nonce 3 is the next one.
    const before = await statusHeight(ports.rpc);
    node.proc.kill('SIGKILL');
    await node.exited;
    node = startNode(home, ports);
    await waitFor('blocks after the restart', async () => (await statusHeight(ports.rpc)) > before + 1n, 180_000);
    const next = sign({ nonce: 3n, to: B!.address, value: 1n, gasLimit: 21_000n });
    const c3 = await rpc(ports.rpc, 'broadcast_tx_commit', { tx: Buffer.from(next.serialize()).toString('base64') });
    t.equal(c3.check_tx.code, 0, c3.check_tx.log);
    t.equal(c3.tx_result.code, 0, c3.tx_result.log);
    const s2 = await rpc(ports.rpc, 'tx_search', { query: `ethereum_tx.ethereumTxHash='${bytesToHex(deploy.hash())}'` });
    t.equal(s2.total_count, '1', 'the index survived the restart');
  } catch (e) {
    t.comment(node.output().slice(-5000));
    throw e;
  }
});
