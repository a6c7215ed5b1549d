/**
 * The EVM JSON-RPC end to end: a devnet node (`chaind init --dev`, `chaind start` as a separate
 * process, real LMDB) serves eth/net/web3 at `[json-rpc] address`. A client signs with a dev
 * account's eth key (@ethereumjs/tx; neither viem nor ethers is installed), deploys the ERC-20
 * fixture with eth_sendRawTransaction, waits for the receipt, transfers with a legacy tx whose gas
 * eth_estimateGas chose, and reads it all back: balances, nonces (also `pending`), code, storage,
 * eth_call, transactions, receipts and logs, blocks by number and by hash, EIP-1898 block objects,
 * and geth's errors (nonce too low, revert with reason, bad arguments, unknown block, N methods).
 */
import fs from 'node:fs';
import t from 'tap';
import WebSocket from 'ws';
import { createTx, type TypedTransaction } from '@ethereumjs/tx';
import { createMPT, verifyMPTWithMerkleProof } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { Address, bytesToBigInt, bytesToHex, createContractAddress, hexToBytes } from '@ethereumjs/util';
import { parseCryptoSetting, tryNativeBackend } from '../../src/crypto/backend.js';
import { createEvmCommon } from '../../src/evm/common.js';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { balanceOfData, balanceSlot, deployData, transferData, TRANSFER_TOPIC, word } from '../helpers/evm.js';
import { allocPorts, runCli, startNode, tmpHome, waitFor, type RunningNode } from '../helpers/node.js';

const common = createEvmCommon({ chainId: 9000n });
const [A, B] = devAccounts().filter((a) => a.keyType === 'eth_secp256k1');
const SUPPLY = 1_000_000n;

function sign(o: { type?: 0 | 2; nonce: bigint; to?: Uint8Array; data?: Uint8Array; value?: bigint; gasLimit?: bigint }): TypedTransaction {
  const type = o.type ?? 2;
  const fees = type === 2 ? { maxFeePerGas: 0n, maxPriorityFeePerGas: 0n } : { gasPrice: 0n };
  return createTx(
    { type, nonce: o.nonce, to: o.to === undefined ? undefined : bytesToHex(o.to), value: o.value ?? 0n, data: o.data ?? new Uint8Array(0), gasLimit: o.gasLimit ?? 2_000_000n, ...fees },
    { common },
  ).sign(A!.privateKey);
}

type Answer = { result?: any; error?: { code: number; message: string; data?: string } };

async function call(port: number, method: string, params: unknown[] = []): Promise<Answer> {
  const r = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
    signal: AbortSignal.timeout(30_000),
  });
  return (await r.json()) as Answer;
}

async function ok(port: number, method: string, params: unknown[] = []): Promise<any> {
  const a = await call(port, method, params);
  if (a.error) throw new Error(`${method}: ${JSON.stringify(a.error)}`);
  return a.result;
}

const hex = (b: Uint8Array) => bytesToHex(b);
const rawHex = (tx: TypedTransaction) => hex(tx.serialize());
const qhex = (n: number | bigint) => `0x${n.toString(16)}`;
const x0 = new Uint8Array(20).fill(0x42);

t.setTimeout(240_000);

t.test('eth/net/web3 on a devnet node: deploy and transfer an ERC-20 through eth_sendRawTransaction', async (t) => {
  const home = tmpHome();
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  t.equal(runCli(['init', 'evm', '--home', home, '--chain-id', 'evm-1', '--dev']).status, 0);
  const cfgPath = `${home}/config/config.toml`;
  fs.writeFileSync(cfgPath, fs.readFileSync(cfgPath, 'utf8').replace(/timeout_commit = "[^"]*"/, 'timeout_commit = "200ms"'));
  const ports = await allocPorts();
  const node: RunningNode = startNode(home, ports);
  t.teardown(() => {
    node.proc.kill('SIGKILL');
  });
  const p = ports.jsonRpc;
  try {
    await waitFor('eth_blockNumber ≥ 1', async () => BigInt(await ok(p, 'eth_blockNumber')) >= 1n, 180_000);

    // The node process and its executor thread run on this run's CHAIND_CRYPTO (make test runs
    // this file again with CHAIND_CRYPTO=js; unset: native where the addon loads).
    const backend = parseCryptoSetting(process.env.CHAIND_CRYPTO) === 'js' || !tryNativeBackend() ? 'js' : 'native';
    t.match(node.output(), new RegExp(`crypto backend selected backend=${backend}\\b`), `the node hashes and verifies with ${backend}`);
    t.match(node.output(), new RegExp(`executor thread ready backend=${backend}\\b`), `and so does its executor thread`);

    // Constants and node facts.
    t.equal(await ok(p, 'eth_chainId'), '0x2328', 'chain id 9000');
    t.equal(await ok(p, 'net_version'), '9000');
    t.equal(await ok(p, 'net_listening'), true);
    t.equal(await ok(p, 'net_peerCount'), '0x0');
    t.match(await ok(p, 'web3_clientVersion'), /^chaind\/v\d+\.\d+\.\d+\//);
    t.equal(await ok(p, 'web3_sha3', ['0x68656c6c6f20776f726c64']), '0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad');
    t.equal(await ok(p, 'eth_syncing'), false);
    t.equal(await ok(p, 'eth_gasPrice'), '0x0');
    t.equal(await ok(p, 'eth_maxPriorityFeePerGas'), '0x0');
    t.equal((await ok(p, 'eth_accounts')).length, 10, 'the dev accounts init --dev put in the keystore');
    t.equal(await ok(p, 'eth_mining'), false);
    t.equal(await ok(p, 'eth_hashrate'), '0x0');
    t.equal(await ok(p, 'eth_protocolVersion'), '0x41');
    t.match(await ok(p, 'eth_coinbase'), /^0x[0-9a-f]{40}$/);

    // A batch over HTTP; the websocket at [json-rpc] ws-address.
    const batch = await fetch(`http://127.0.0.1:${p}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'eth_chainId' },
        { jsonrpc: '2.0', id: 2, method: 'net_version' },
        { jsonrpc: '2.0', id: 3, method: 'eth_nope' },
      ]),
      signal: AbortSignal.timeout(30_000),
    }).then((r) => r.json() as Promise<Answer[]>);
    t.same(batch, [
      { jsonrpc: '2.0', id: 1, result: '0x2328' },
      { jsonrpc: '2.0', id: 2, result: '9000' },
      { jsonrpc: '2.0', id: 3, error: { code: -32601, message: 'the method eth_nope does not exist/is not available' } },
    ]);
    const overWs = await new Promise<unknown>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${ports.jsonRpcWs}`);
      const timer = setTimeout(() => reject(new Error('no websocket answer')), 30_000);
      ws.on('open', () => ws.send(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'eth_chainId', params: [] })));
      ws.on('message', (m) => {
        clearTimeout(timer);
        ws.close();
        resolve(JSON.parse(String(m)));
      });
      ws.on('error', reject);
    });
    t.same(overWs, { jsonrpc: '2.0', id: 9, result: '0x2328' }, 'eth_chainId over the websocket at ws-address');

    // The dev account is funded; a fresh address is empty; nonce 0.
    const aHex = hex(A!.address);
    const balA = BigInt(await ok(p, 'eth_getBalance', [aHex, 'latest']));
    t.ok(balA > 0n, 'dev account funded');
    t.equal(await ok(p, 'eth_getTransactionCount', [aHex, 'latest']), '0x0');
    t.equal(await ok(p, 'eth_getBalance', [hex(B!.address)]), await ok(p, 'eth_getBalance', [hex(B!.address), 'latest']), 'block defaults to latest');

    // Polling filters, installed before any tx.
    const blockFilter = await ok(p, 'eth_newBlockFilter');
    const pendingFilter = await ok(p, 'eth_newPendingTransactionFilter');
    t.match(blockFilter, /^0x[0-9a-f]+$/);

    // Deploy the ERC-20 fixture.
    const deploy = sign({ nonce: 0n, data: deployData(SUPPLY) });
    t.equal(await ok(p, 'eth_sendRawTransaction', [rawHex(deploy)]), hex(deploy.hash()), 'returns the eth tx hash');
    const again = await call(p, 'eth_sendRawTransaction', [rawHex(deploy)]);
    t.ok((await ok(p, 'eth_getFilterChanges', [pendingFilter])).includes(hex(deploy.hash())) || (await ok(p, 'eth_getTransactionReceipt', [hex(deploy.hash())])) !== null, 'the pending filter saw the tx (unless it was already mined)');
    t.equal(again.error?.code, -32000, 'the same tx again is refused');
    const pending = BigInt(await ok(p, 'eth_getTransactionCount', [aHex, 'pending']));
    const latest = BigInt(await ok(p, 'eth_getTransactionCount', [aHex, 'latest']));
    t.equal(pending, 1n, 'pending counts the tx in the mempool (or the block it is in)');
    t.ok(latest <= pending);
    const r1 = await waitFor('deploy receipt', () => ok(p, 'eth_getTransactionReceipt', [hex(deploy.hash())]), 180_000);
    const token = createContractAddress(new Address(A!.address), 0n).bytes;
    t.equal(r1.status, '0x1');
    t.equal(r1.contractAddress, hex(token));
    t.equal(r1.from, aHex);
    t.equal(r1.to, null);
    t.equal(r1.transactionHash, hex(deploy.hash()));
    t.ok(BigInt(r1.gasUsed) > 21_000n);
    t.equal(await ok(p, 'eth_getTransactionCount', [aHex, 'latest']), '0x1');

    // Code, storage, eth_call.
    t.not(await ok(p, 'eth_getCode', [hex(token), 'latest']), '0x');
    t.equal(await ok(p, 'eth_getCode', [aHex, 'latest']), '0x', 'an EOA has no code');
    t.equal(await ok(p, 'eth_getStorageAt', [hex(token), hex(balanceSlot(A!.address)), 'latest']), hex(word(SUPPLY)), 'balanceOf[A] slot');
    t.equal(BigInt(await ok(p, 'eth_call', [{ to: hex(token), data: hex(balanceOfData(A!.address)) }, 'latest'])), SUPPLY, 'balanceOf(A) via eth_call');

    // A revert with a reason: code 3, geth's text, the revert data.
    const rev = await call(p, 'eth_call', [{ from: aHex, to: hex(token), data: hex(transferData(B!.address, SUPPLY + 1n)) }]);
    t.equal(rev.error?.code, 3);
    t.equal(rev.error?.message, 'execution reverted: balance too low');
    t.match(rev.error?.data, /^0x08c379a0/);
    const revEst = await call(p, 'eth_estimateGas', [{ from: aHex, to: hex(token), data: hex(transferData(B!.address, SUPPLY + 1n)) }]);
    t.equal(revEst.error?.code, 3, 'estimateGas of a reverting call reverts');

    const logFilter = await ok(p, 'eth_newFilter', [{ fromBlock: '0x1', address: hex(token), topics: [hex(TRANSFER_TOPIC)] }]);
    // A legacy transfer with the gas eth_estimateGas chose.
    const est = BigInt(await ok(p, 'eth_estimateGas', [{ from: aHex, to: hex(token), data: hex(transferData(B!.address, 25n)) }]));
    t.ok(est > 21_000n && est < 200_000n, `estimate ${est}`);
    const tr = sign({ type: 0, nonce: 1n, to: token, data: transferData(B!.address, 25n), gasLimit: est });
    t.equal(await ok(p, 'eth_sendRawTransaction', [rawHex(tr)]), hex(tr.hash()));
    const r2 = await waitFor('transfer receipt', () => ok(p, 'eth_getTransactionReceipt', [hex(tr.hash())]), 180_000);
    t.equal(r2.status, '0x1', 'the estimated gas was enough');
    t.equal(r2.type, '0x0');
    t.equal(r2.logs.length, 1);
    t.equal(r2.logs[0].address, hex(token));
    t.equal(r2.logs[0].topics[0], hex(TRANSFER_TOPIC));
    t.equal(r2.logs[0].blockHash, r2.blockHash);
    t.equal(BigInt(await ok(p, 'eth_call', [{ to: hex(token), data: hex(balanceOfData(B!.address)) }, 'latest'])), 25n);

    // Filter changes: the transfer's log once, then nothing; block hashes since install.
    const changes = await ok(p, 'eth_getFilterChanges', [logFilter]);
    t.same(changes.map((l: any) => l.transactionHash), [hex(tr.hash())], 'the log filter reports the transfer');
    t.same(await ok(p, 'eth_getFilterChanges', [logFilter]), [], 'and only once');
    t.equal((await ok(p, 'eth_getFilterLogs', [logFilter])).length, 2, 'getFilterLogs runs the whole query from fromBlock');
    const hashes = await ok(p, 'eth_getFilterChanges', [blockFilter]);
    t.ok(hashes.includes(r1.blockHash) && hashes.includes(r2.blockHash), 'the block filter saw both blocks');
    t.same((await call(p, 'eth_getFilterLogs', [blockFilter])).error, { code: -32000, message: 'filter not found' }, 'not a logs filter');
    t.equal(await ok(p, 'eth_uninstallFilter', [blockFilter]), true);
    t.equal(await ok(p, 'eth_uninstallFilter', [blockFilter]), false);
    t.same((await call(p, 'eth_getFilterChanges', [blockFilter])).error, { code: -32000, message: 'filter not found' });

    // The transaction object.
    const tx2 = await ok(p, 'eth_getTransactionByHash', [hex(tr.hash())]);
    t.equal(tx2.hash, hex(tr.hash()));
    t.equal(tx2.from, aHex);
    t.equal(tx2.to, hex(token));
    t.equal(tx2.nonce, '0x1');
    t.equal(tx2.type, '0x0');
    t.equal(tx2.chainId, '0x2328');
    t.equal(tx2.blockNumber, r2.blockNumber);
    t.equal(tx2.blockHash, r2.blockHash);
    t.equal(tx2.transactionIndex, r2.transactionIndex);
    t.equal(tx2.gas, `0x${est.toString(16)}`);
    t.equal(await ok(p, 'eth_getTransactionByHash', [`0x${'ab'.repeat(32)}`]), null);
    t.equal(await ok(p, 'eth_getTransactionReceipt', [`0x${'ab'.repeat(32)}`]), null);

    // Blocks by number and by hash; parentHash links; full transactions.
    const blk = await ok(p, 'eth_getBlockByNumber', [r2.blockNumber, false]);
    t.equal(blk.hash, r2.blockHash);
    t.equal(blk.number, r2.blockNumber);
    t.ok(blk.transactions.includes(hex(tr.hash())));
    t.equal(blk.baseFeePerGas, '0x0');
    t.equal(BigInt(blk.gasUsed) >= BigInt(r2.gasUsed), true);
    t.match(blk.stateRoot, /^0x[0-9a-f]{64}$/);
    t.match(blk.logsBloom, /^0x[0-9a-f]{512}$/);
    t.not(blk.logsBloom, `0x${'00'.repeat(256)}`, 'the Transfer log is in the bloom');
    const byHash = await ok(p, 'eth_getBlockByHash', [r2.blockHash, true]);
    t.equal(byHash.number, blk.number);
    t.equal(byHash.transactions.find((x: any) => x.hash === hex(tr.hash()))?.from, aHex, 'full transaction objects');
    const parent = await ok(p, 'eth_getBlockByNumber', [`0x${(BigInt(blk.number) - 1n).toString(16)}`, false]);
    t.equal(blk.parentHash, parent.hash, 'parentHash is the previous block hash');
    t.ok(BigInt(blk.timestamp) >= BigInt(parent.timestamp));
    t.equal(await ok(p, 'eth_getBlockByNumber', ['0xffffff', false]), null, 'a future block is null');
    t.equal((await ok(p, 'eth_getBlockByNumber', ['0x0', false])).number, '0x1', 'block 0 is the first block (CometBFT has no block 0)');
    t.equal((await ok(p, 'eth_getBlockByNumber', ['earliest', false])).number, '0x1');
    t.equal(await ok(p, 'eth_getBlockByHash', [`0x${'cd'.repeat(32)}`, false]), null);
    t.ok(BigInt((await ok(p, 'eth_getBlockByNumber', ['latest', false])).number) >= BigInt(blk.number), 'latest');

    // Block references: EIP-1898 objects, a hash string, state at an older height.
    const before = `0x${(BigInt(r1.blockNumber) - 1n).toString(16)}`;
    t.equal(await ok(p, 'eth_getCode', [hex(token), before]), '0x', 'no code before the deploy block');
    t.not(await ok(p, 'eth_getCode', [hex(token), { blockNumber: r1.blockNumber }]), '0x');
    t.not(await ok(p, 'eth_getCode', [hex(token), { blockHash: r1.blockHash }]), '0x');
    t.not(await ok(p, 'eth_getCode', [hex(token), r1.blockHash]), '0x', 'a 32-byte hash string is a block hash');
    t.equal(await ok(p, 'eth_getTransactionCount', [aHex, { blockNumber: r1.blockNumber }]), '0x1');
    t.equal(await ok(p, 'eth_getTransactionCount', [aHex, before]), '0x0');
    for (const tag of ['safe', 'finalized', 'pending']) t.match(await ok(p, 'eth_getBalance', [aHex, tag]), /^0x[0-9a-f]+$/, tag);

    // Headers, counts, by-index, block receipts, uncles, logs of a tx.
    const hdr = await ok(p, 'eth_getHeaderByNumber', [r2.blockNumber]);
    t.equal(hdr.hash, blk.hash);
    t.equal(hdr.stateRoot, blk.stateRoot);
    t.notOk('transactions' in hdr || 'size' in hdr, 'a header has no transactions or size');
    t.equal((await ok(p, 'eth_getHeaderByHash', [r2.blockHash])).number, r2.blockNumber);
    t.equal(await ok(p, 'eth_getBlockTransactionCountByNumber', [r2.blockNumber]), qhex(blk.transactions.length));
    t.equal(await ok(p, 'eth_getBlockTransactionCountByHash', [r2.blockHash]), qhex(blk.transactions.length));
    t.equal((await ok(p, 'eth_getTransactionByBlockNumberAndIndex', [r2.blockNumber, r2.transactionIndex])).hash, hex(tr.hash()));
    t.equal((await ok(p, 'eth_getTransactionByBlockHashAndIndex', [r2.blockHash, r2.transactionIndex])).hash, hex(tr.hash()));
    t.equal(await ok(p, 'eth_getTransactionByBlockHashAndIndex', [r2.blockHash, '0x63']), null);
    const brs = await ok(p, 'eth_getBlockReceipts', [r2.blockNumber]);
    t.same(brs.find((r: any) => r.transactionHash === hex(tr.hash())), r2, 'the block receipts hold the same receipt');
    t.same(await ok(p, 'eth_getTransactionLogs', [hex(tr.hash())]), r2.logs);
    t.equal(await ok(p, 'eth_getUncleCountByBlockNumber', [r2.blockNumber]), '0x0');
    t.equal(await ok(p, 'eth_getUncleByBlockHashAndIndex', [r2.blockHash, '0x0']), null);

    // eth_getLogs from the log index: range, address, topic positions and alternatives, blockHash.
    const all = await ok(p, 'eth_getLogs', [{ fromBlock: '0x1', toBlock: 'latest', address: hex(token) }]);
    t.equal(all.length, 2, 'the mint at deploy and the transfer');
    t.same(all[1], r2.logs[0], 'a log as the receipt has it');
    const toB = await ok(p, 'eth_getLogs', [{ fromBlock: '0x1', topics: [hex(TRANSFER_TOPIC), null, hex(word(B!.address))] }]);
    t.equal(toB.length, 1);
    t.equal(toB[0].transactionHash, hex(tr.hash()));
    const alt = await ok(p, 'eth_getLogs', [{ fromBlock: '0x1', topics: [[hex(TRANSFER_TOPIC), `0x${'11'.repeat(32)}`]] }]);
    t.equal(alt.length, 2, 'alternatives in one position');
    t.same(await ok(p, 'eth_getLogs', [{ fromBlock: '0x1', address: hex(x0) }]), [], 'no logs of another address');
    t.same(await ok(p, 'eth_getLogs', [{ blockHash: r2.blockHash }]), r2.logs);
    t.equal((await call(p, 'eth_getLogs', [{ fromBlock: '0x5', toBlock: '0x2' }])).error?.message, 'invalid block range params');
    t.equal((await call(p, 'eth_getLogs', [{ blockHash: r2.blockHash, fromBlock: '0x1' }])).error?.code, -32602);

    // eth_getProof verifies against the block's stateRoot with @ethereumjs/mpt.
    const proof = await ok(p, 'eth_getProof', [hex(token), [hex(balanceSlot(B!.address))], r2.blockNumber]);
    const acct = await verifyMPTWithMerkleProof(await createMPT({ useKeyHashing: true }), hexToBytes(blk.stateRoot), token, proof.accountProof.map((x: string) => hexToBytes(x as `0x${string}`)));
    t.ok(acct, 'account proof verifies against stateRoot');
    t.equal(bytesToHex((RLP.decode(acct!) as Uint8Array[])[2]!), proof.storageHash);
    const sv = await verifyMPTWithMerkleProof(await createMPT({ useKeyHashing: true }), hexToBytes(proof.storageHash), balanceSlot(B!.address), proof.storageProof[0].proof.map((x: string) => hexToBytes(x as `0x${string}`)));
    t.equal(sv === null ? 0n : bytesToBigInt(RLP.decode(sv) as Uint8Array), 25n, 'the storage proof proves balanceOf[B] = 25');

    // eth_call with a state override and a block override; eth_feeHistory.
    const over = await ok(p, 'eth_call', [{ to: hex(token), data: hex(balanceOfData(B!.address)) }, 'latest', { [hex(token)]: { stateDiff: { [hex(balanceSlot(B!.address))]: hex(word(777n)) } } }]);
    t.equal(BigInt(over), 777n, 'stateDiff override seen by eth_call');
    t.equal(BigInt(await ok(p, 'eth_call', [{ to: hex(token), data: hex(balanceOfData(B!.address)) }, 'latest'])), 25n, 'and gone afterwards');
    const richX = await ok(p, 'eth_estimateGas', [{ from: hex(x0), to: aHex, value: '0x1' }, 'latest', { [hex(x0)]: { balance: '0x100' } }]);
    t.equal(richX, '0x5208', 'a plain transfer from an overridden balance costs 21000');
    const fh = await ok(p, 'eth_feeHistory', ['0x2', r2.blockNumber, [25, 75]]);
    t.equal(fh.oldestBlock, qhex(BigInt(r2.blockNumber) - 1n));
    t.same(fh.baseFeePerGas, ['0x0', '0x0', '0x0']);
    t.same(fh.reward, [['0x0', '0x0'], ['0x0', '0x0']]);
    t.equal(fh.gasUsedRatio.length, 2);
    t.ok(fh.gasUsedRatio[1] > 0, 'the transfer block used gas');

    // eth_createAccessList: the token with the two balance slots of a transfer; the gas with the list.
    const al = await ok(p, 'eth_createAccessList', [{ from: aHex, to: hex(token), data: hex(transferData(B!.address, 1n)) }, 'latest']);
    t.equal(al.accessList.length, 1);
    t.equal(al.accessList[0].address, hex(token));
    t.same([...al.accessList[0].storageKeys].sort(), [hex(balanceSlot(A!.address)), hex(balanceSlot(B!.address))].sort());
    t.notOk('error' in al);
    const withList = createTx({ type: 1, nonce: 2n, to: hex(token), data: transferData(B!.address, 1n), gasLimit: BigInt(al.gasUsed), gasPrice: 0n, accessList: al.accessList }, { common });
    t.ok(BigInt(al.gasUsed) > withList.getIntrinsicGas(), 'gasUsed includes the list and the execution');
    const signedList = withList.sign(A!.privateKey);
    await ok(p, 'eth_sendRawTransaction', [rawHex(signedList)]);
    const rl = await waitFor('access-list tx receipt', () => ok(p, 'eth_getTransactionReceipt', [hex(signedList.hash())]), 180_000);
    t.equal(rl.status, '0x1', 'an EIP-2930 tx with exactly the gas eth_createAccessList reported succeeds');
    t.equal(rl.type, '0x1');
    t.equal(rl.gasUsed, al.gasUsed, 'and uses exactly that gas');
    const alRev = await ok(p, 'eth_createAccessList', [{ from: aHex, to: hex(token), data: hex(transferData(B!.address, SUPPLY * 2n)) }]);
    t.equal(alRev.error, 'execution reverted: balance too low', 'a revert is reported in error');

    // geth's errors.
    const stale = await call(p, 'eth_sendRawTransaction', [rawHex(sign({ nonce: 0n, to: B!.address, gasLimit: 21_000n }))]);
    t.equal(stale.error?.code, -32000);
    t.match(stale.error?.message, /^nonce too low/);
    const poor = createTx({ type: 2, nonce: 0n, to: aHex, value: 1n, gasLimit: 21_000n, maxFeePerGas: 0n, maxPriorityFeePerGas: 0n }, { common }).sign(new Uint8Array(32).fill(7));
    const nofunds = await call(p, 'eth_sendRawTransaction', [rawHex(poor)]);
    t.equal(nofunds.error?.code, -32000);
    t.match(nofunds.error?.message, /^insufficient funds for gas \* price \+ value/);
    const lowGas = await call(p, 'eth_sendRawTransaction', [rawHex(sign({ nonce: 3n, to: B!.address, gasLimit: 20_000n }))]);
    t.match(lowGas.error?.message, /^intrinsic gas too low/);
    const wrongChain = createTx({ type: 2, chainId: 1n, nonce: 3n, to: aHex, gasLimit: 21_000n, maxFeePerGas: 0n, maxPriorityFeePerGas: 0n }, { common: createEvmCommon({ chainId: 1n }) }).sign(A!.privateKey);
    t.match((await call(p, 'eth_sendRawTransaction', [rawHex(wrongChain)])).error?.message, /invalid chain id/);
    t.same((await call(p, 'eth_getBalance', ['0x12'])).error, { code: -32602, message: 'invalid argument 0: hex string has length 2, want 40 for common.Address' });
    t.same((await call(p, 'eth_getBalance', [aHex, '3'])).error, { code: -32602, message: 'invalid argument 1: hex string without 0x prefix' });
    t.same((await call(p, 'eth_getBalance', [aHex, '0xffffff'])).error, { code: -32000, message: 'header not found' });
    t.same((await call(p, 'eth_getBalance', [aHex, `0x${'cd'.repeat(32)}`])).error, { code: -32000, message: 'header for hash not found' });
    t.same((await call(p, 'eth_getBalance', [aHex, { blockHash: r1.blockHash, blockNumber: '0x1' }])).error?.code, -32602);
    t.same((await call(p, 'eth_getBalance', [])).error, { code: -32602, message: 'missing value for required argument 0' });
    const unauth = await fetch(`http://127.0.0.1:${p}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_sendTransaction', params: [{ from: aHex }] }) });
    t.equal(unauth.status, 401, 'eth_sendTransaction is private: a JWT first');
    t.equal(await unauth.text(), 'missing token\n');
    t.same((await call(p, 'debug_traceTransaction', [hex(tr.hash())])).error, { code: -32601, message: 'the method debug_traceTransaction does not exist/is not available' }, 'debug is not in the default api');

    // The node keeps answering after all of it, and a plain value transfer lands.
    const x = new Uint8Array(20).fill(0x42);
    const v = sign({ nonce: 3n, to: x, value: 12_345n, gasLimit: 21_000n });
    await ok(p, 'eth_sendRawTransaction', [rawHex(v)]);
    await waitFor('value transfer', () => ok(p, 'eth_getTransactionReceipt', [hex(v.hash())]), 180_000);
    t.equal(await ok(p, 'eth_getBalance', [hex(x), 'latest']), '0x3039');
  } catch (e) {
    t.comment(node.output().slice(-5000));
    throw e;
  }
});
