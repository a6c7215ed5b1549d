/**
 * The EVM tx pool end to end on a real devnet node (`chaind init --dev`, `chaind start` as a
 * separate process, real LMDB, `[json-rpc] api` with txpool), txs signed by viem:
 *  - a nonce-gapped pair: the later nonce is queued (txpool_status, _content, _contentFrom,
 *    _inspect in geth's shapes; the `pending` nonce does not count it), its replacement needs a
 *    10% bump (`replacement transaction underpriced`), the earlier nonce promotes it and both are
 *    mined; newPendingTransactions reports each tx once it is pending, never the replaced one;
 *  - geth's refusals: `already known`, `nonce too low: next nonce N, tx nonce M`, `insufficient
 *    funds for gas * price + value: …`, the chain id mismatch;
 *  - blocks that take two transfers each (genesis block.max_gas 50000) and `recheck_timeout = "0s"`,
 *    so after every block the txs left in the pool are not rechecked: the sender's next tx is still
 *    admitted (the arrival-order pool answered `nonce too high` here).
 */
import fs from 'node:fs';
import t from 'tap';
import WebSocket from 'ws';
import { createPublicClient, defineChain, http, toHex, getAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { rpcCall, rpcOk } from '../helpers/evm.js';
import { allocPorts, runCli, startNode, tmpHome, waitFor, type RunningNode } from '../helpers/node.js';

t.setTimeout(300_000);

const CHAIN_ID = 9000;
const eth = devAccounts().filter((a) => a.keyType === 'eth_secp256k1');
const hx = (b: Uint8Array) => toHex(b);
const TO = '0x00000000000000000000000000000000000000a1' as Hex;

t.test('txpool on a devnet node: gapped pair, replacement, geth errors, recheck cut', async (t) => {
  const home = tmpHome();
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  t.equal(runCli(['init', 'evm', '--home', home, '--chain-id', 'evm-1', '--dev']).status, 0);
  const cfg = `${home}/config/config.toml`;
  fs.writeFileSync(cfg, fs.readFileSync(cfg, 'utf8').replace(/timeout_commit = "[^"]*"/, 'timeout_commit = "200ms"').replace(/recheck_timeout = "[^"]*"/, 'recheck_timeout = "0s"'));
  const appToml = `${home}/config/app.toml`;
  fs.writeFileSync(appToml, fs.readFileSync(appToml, 'utf8').replace(/^api = "[^"]*"/m, 'api = "eth,net,web3,txpool"'));
  const gen = `${home}/config/genesis.json`;
  const g = JSON.parse(fs.readFileSync(gen, 'utf8'));
  const cp = g.consensus_params ?? g.consensus.params;
  cp.block.max_gas = '50000';
  fs.writeFileSync(gen, JSON.stringify(g, null, 2));

  const ports = await allocPorts();
  const node: RunningNode = startNode(home, ports);
  t.teardown(() => {
    node.proc.kill('SIGKILL');
  });
  const url = `http://127.0.0.1:${ports.jsonRpc}/`;
  const chain = defineChain({ id: CHAIN_ID, name: 'chaind devnet', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } });
  const pub = createPublicClient({ chain, transport: http(url, { timeout: 60_000 }), pollingInterval: 100 });
  const wait = (hash: Hex) => pub.waitForTransactionReceipt({ hash, pollingInterval: 100, timeout: 240_000 });
  try {
    await waitFor('eth_blockNumber ≥ 1', async () => BigInt(await rpcOk(url, 'eth_blockNumber')) >= 1n, 180_000);
  } catch (e) {
    throw new Error(`${(e as Error).message}\n${node.output().slice(-3000)}`);
  }

  const acct = privateKeyToAccount(hx(eth[0]!.privateKey));
  const addr = acct.address;
  const sign = (o: { nonce: number; fee?: bigint; tip?: bigint; value?: bigint; chainId?: number }) =>
    acct.signTransaction({ type: 'eip1559', chainId: o.chainId ?? CHAIN_ID, nonce: o.nonce, to: TO, value: o.value ?? 1n, gas: 21000n, maxFeePerGas: o.fee ?? 100n, maxPriorityFeePerGas: o.tip ?? 10n });
  const send = (raw: Hex) => rpcCall(url, 'eth_sendRawTransaction', [raw]);
  const sendOk = async (raw: Hex): Promise<Hex> => {
    const a = await send(raw);
    if (a.error) throw new Error(`eth_sendRawTransaction: ${JSON.stringify(a.error)}`);
    return a.result as Hex;
  };

  // newPendingTransactions over the websocket, collected for the whole test.
  const seen = new Set<string>();
  const ws = new WebSocket(`ws://127.0.0.1:${ports.jsonRpcWs}`);
  t.teardown(() => ws.close());
  await new Promise<void>((resolve, reject) => {
    ws.on('error', reject);
    ws.on('message', (m) => {
      const msg = JSON.parse(String(m));
      if (msg.id === 1) resolve();
      if (msg.method === 'eth_subscription') seen.add(String(msg.params.result).toLowerCase());
    });
    ws.on('open', () => ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newPendingTransactions'] })));
  });

  t.test('a gapped pair queues, a replacement needs a 10% bump, the gap fills and both are mined', async (t) => {
    const n0 = await pub.getTransactionCount({ address: addr });
    const hash1 = await sendOk(await sign({ nonce: n0 + 1 }));
    t.same(await rpcOk(url, 'txpool_status'), { pending: '0x0', queued: '0x1' }, 'the later nonce is queued');
    const from = await rpcOk(url, 'txpool_contentFrom', [addr]);
    t.same(from.pending, {}, 'nothing pending for the sender');
    t.equal(from.queued[String(n0 + 1)].hash, hash1, 'queued under its decimal nonce');
    t.equal(from.queued[String(n0 + 1)].nonce, toHex(n0 + 1));
    t.equal(from.queued[String(n0 + 1)].from, addr.toLowerCase());
    t.equal(from.queued[String(n0 + 1)].blockNumber, null);
    const content = await rpcOk(url, 'txpool_content');
    t.same(Object.keys(content.queued), [getAddress(addr)], 'content keys are EIP-55 addresses');
    t.equal(content.queued[getAddress(addr)][String(n0 + 1)].hash, hash1);
    const inspect = await rpcOk(url, 'txpool_inspect');
    t.equal(inspect.queued[getAddress(addr)][String(n0 + 1)], `${getAddress(TO)}: 1 wei + 21000 gas × 100 wei`, 'geth\'s inspect line');
    t.equal(await pub.getTransactionCount({ address: addr, blockTag: 'pending' }), n0, 'the pending nonce stops at the gap');
    t.equal((await rpcOk(url, 'eth_getTransactionByHash', [hash1])).hash, hash1, 'a queued tx is found by hash');

    const under = await send(await sign({ nonce: n0 + 1, fee: 109n, tip: 11n }));
    t.same(under.error && { code: under.error.code, message: under.error.message }, { code: -32000, message: 'replacement transaction underpriced' }, 'fee cap +9%: refused');
    const underTip = await send(await sign({ nonce: n0 + 1, fee: 200n, tip: 10n }));
    t.equal(underTip.error?.message, 'replacement transaction underpriced', 'tip not bumped: refused');
    const raw1c = await sign({ nonce: n0 + 1, fee: 110n, tip: 11n });
    const hash1c = await sendOk(raw1c);
    t.equal((await rpcOk(url, 'txpool_contentFrom', [addr])).queued[String(n0 + 1)].hash, hash1c, 'the +10% replacement took its place');
    t.equal(await rpcOk(url, 'eth_getTransactionByHash', [hash1]), null, 'the replaced tx is gone');
    t.equal((await send(raw1c)).error?.message, 'already known');
    t.notOk(seen.has(hash1c), 'a queued tx is not announced as pending');

    const hash0 = await sendOk(await sign({ nonce: n0 }));
    const [r0, r1] = await Promise.all([wait(hash0), wait(hash1c)]);
    t.equal(r0.status, 'success');
    t.equal(r1.status, 'success', 'the promoted replacement is mined');
    t.ok(r1.blockNumber >= r0.blockNumber);
    t.equal(r1.effectiveGasPrice, 11n, 'it paid its tip (base fee 0)');
    t.equal(await pub.getTransactionCount({ address: addr }), n0 + 2);
    t.equal(await rpcOk(url, 'eth_getTransactionReceipt', [hash1]), null, 'the replaced tx never ran');
    await waitFor('both announced', async () => seen.has(hash0) && seen.has(hash1c), 180_000);
    t.notOk(seen.has(hash1), 'the replaced tx was never pending');

    // geth's refusals.
    t.equal((await send(await sign({ nonce: n0, value: 2n }))).error?.message, `nonce too low: next nonce ${n0 + 2}, tx nonce ${n0}`);
    const bal = await pub.getBalance({ address: addr });
    const poor = await send(await sign({ nonce: n0 + 2, value: bal }));
    t.equal(poor.error?.code, -32000);
    t.equal(poor.error?.message, `insufficient funds for gas * price + value: balance ${bal}, tx cost ${bal + 2_100_000n}, overshot ${2_100_000n}`);
    const wrongChain = await send(await sign({ nonce: n0 + 2, chainId: 1 }));
    t.equal(wrongChain.error?.message, `invalid chain id for signer: have 1 want ${CHAIN_ID}`);
    await waitFor('pool empty', async () => {
      const s = await rpcOk(url, 'txpool_status');
      return s.pending === '0x0' && s.queued === '0x0';
    }, 60_000);
  });

  t.test('recheck_timeout 0 and two transfers per block: the next tx of a sender with txs left in the pool is admitted', async (t) => {
    const b = privateKeyToAccount(hx(eth[1]!.privateKey));
    const signB = (nonce: number) => b.signTransaction({ type: 'eip1559', chainId: CHAIN_ID, nonce, to: TO, value: 1n, gas: 21000n, maxFeePerGas: 100n, maxPriorityFeePerGas: 10n });
    const k = await pub.getTransactionCount({ address: b.address });
    const hashes: Hex[] = [];
    for (let i = 0; i < 10; i++) hashes.push(await sendOk(await signB(k + i)));
    t.equal(await pub.getTransactionCount({ address: b.address, blockTag: 'pending' }), k + 10, 'the pending nonce counts all ten');
    const pend = (await rpcOk(url, 'txpool_contentFrom', [b.address])).pending as Record<string, { nonce: string }>;
    const nonces = Object.keys(pend).map(Number);
    t.ok(nonces.length > 0, 'ten transfers at two per block: some are still pending');
    t.same(nonces, nonces.map((_, i) => nonces[0]! + i), 'pending nonces run without a gap');
    t.equal(nonces[nonces.length - 1], k + 9, 'up to the last sent');
    // At least one block has committed since (and, with recheck_timeout 0, rechecked nothing).
    await waitFor('a block took some', async () => (await pub.getTransactionCount({ address: b.address })) >= k + 2, 120_000);
    const more = await send(await signB(k + 10));
    t.equal(more.error, undefined, `no "nonce too high": ${JSON.stringify(more.error)}`);
    hashes.push(more.result as Hex);
    const receipts = await Promise.all(hashes.map(wait));
    t.ok(receipts.every((r) => r.status === 'success'), 'all eleven mined');
    t.ok(receipts.every((r) => r.gasUsed === 21000n));
    const perBlock = new Map<bigint, number>();
    for (const r of receipts) perBlock.set(r.blockNumber, (perBlock.get(r.blockNumber) ?? 0) + 1);
    t.ok([...perBlock.values()].every((n) => n <= 2), 'no block holds more than its gas allows');
    t.equal(await pub.getTransactionCount({ address: b.address }), k + 11);
  });
});
