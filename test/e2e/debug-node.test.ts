/**
 * The debug namespace's node methods on a devnet node (`chaind init --dev`, `chaind start` as a
 * separate process, real LMDB): `[json-rpc] api` lists debug, calls carry a JWT signed with the
 * home's config/jwt.hex. Raw chain data agrees with the JSON views (keccak256 of
 * debug_getRawHeader(n) is block n's hash; the raw block, receipts and transaction decode to what
 * eth_ shows), and profiling the running node writes files under <home>/profiles that parse: a
 * .cpuprofile per thread (the main thread and the worker pool's), and a trace with consensus and
 * block spans.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { createTx } from '@ethereumjs/tx';
import { RLP } from '@ethereumjs/rlp';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { readJwtSecret, signJwt } from '../../src/config/jwt.js';
import { createEvmCommon } from '../../src/evm/common.js';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { allocPorts, runCli, startNode, tmpHome, waitFor, type RunningNode } from '../helpers/node.js';

const common = createEvmCommon({ chainId: 9000n });
const [A] = devAccounts().filter((a) => a.keyType === 'eth_secp256k1');

type Answer = { result?: any; error?: { code: number; message: string } };

t.setTimeout(300_000);

t.test('debug_ raw data and profiling on a running devnet node', async (t) => {
  const home = tmpHome();
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  t.equal(runCli(['init', 'evm', '--home', home, '--chain-id', 'evm-1', '--dev']).status, 0);
  const cfgPath = `${home}/config/config.toml`;
  fs.writeFileSync(cfgPath, fs.readFileSync(cfgPath, 'utf8').replace(/timeout_commit = "[^"]*"/, 'timeout_commit = "300ms"'));
  const appPath = `${home}/config/app.toml`;
  const app = fs.readFileSync(appPath, 'utf8');
  t.match(app, /^api = "eth,net,web3"$/m, 'app.toml lists the namespaces');
  t.match(app, /^profiles-dir = "profiles"$/m, 'app.toml has profiles-dir');
  fs.writeFileSync(appPath, app.replace(/^api = "eth,net,web3"$/m, 'api = "eth,net,web3,debug"'));
  const secret = readJwtSecret(path.join(home, 'config', 'jwt.hex'));
  const ports = await allocPorts();
  const node: RunningNode = startNode(home, ports);
  t.teardown(() => {
    node.proc.kill('SIGKILL');
  });
  const p = ports.jsonRpc;
  const call = async (method: string, params: unknown[] = [], token: string | null = signJwt(secret)) => {
    const r = await fetch(`http://127.0.0.1:${p}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await r.text();
    return { status: r.status, text, json: (() => { try { return JSON.parse(text) as Answer; } catch { return undefined; } })() };
  };
  const ok = async (method: string, params: unknown[] = []) => {
    const r = await call(method, params);
    if (r.json?.error || r.json === undefined) throw new Error(`${method}: ${r.text}`);
    return r.json.result;
  };
  try {
    await waitFor('eth_blockNumber ≥ 1', async () => BigInt(await ok('eth_blockNumber')) >= 1n, 180_000);

    // Gating: no token, no debug.
    const none = await call('debug_getRawHeader', ['0x1'], null);
    t.equal(none.status, 401, 'no token: refused');
    t.equal(none.text, 'missing token\n');

    // A legacy and a dynamic-fee tx in the chain.
    const x = hexToBytes(`0x${'42'.repeat(20)}`);
    const txs = [
      createTx({ type: 0, nonce: 0n, to: bytesToHex(x), value: 5n, gasLimit: 21_000n, gasPrice: 0n }, { common }).sign(A!.privateKey),
      createTx({ type: 2, nonce: 1n, to: bytesToHex(x), value: 6n, gasLimit: 21_000n, maxFeePerGas: 0n, maxPriorityFeePerGas: 0n }, { common }).sign(A!.privateKey),
    ];
    for (const tx of txs) await ok('eth_sendRawTransaction', [bytesToHex(tx.serialize())]);
    const receipts = [];
    for (const tx of txs) receipts.push(await waitFor('receipt', () => ok('eth_getTransactionReceipt', [bytesToHex(tx.hash())]), 180_000));

    for (const [i, tx] of txs.entries()) {
      const r = receipts[i];
      const n = Number(BigInt(r.blockNumber));
      const block = await ok('eth_getBlockByNumber', [r.blockNumber, false]);
      const rawHeader = await ok('debug_getRawHeader', [r.blockNumber]);
      t.equal(bytesToHex(keccak_256(hexToBytes(rawHeader))), block.hash, `keccak256(debug_getRawHeader(${n})) is block ${n}'s hash`);
      t.equal(await ok('debug_getRawHeader', [block.hash]), rawHeader, 'by hash too');
      t.equal(await ok('debug_getHeaderRlp', [n]), rawHeader, 'debug_getHeaderRlp(number)');
      const rawBlock = await ok('debug_getRawBlock', [r.blockNumber]);
      t.equal(await ok('debug_getBlockRlp', [n]), rawBlock, 'debug_getBlockRlp(number)');
      const [h, btxs, uncles, withdrawals] = RLP.decode(hexToBytes(rawBlock)) as any[];
      t.equal(bytesToHex(RLP.encode(h)), rawHeader, 'the block RLP starts with the header');
      t.equal(btxs.length, block.transactions.length, 'its transactions');
      t.same([uncles.length, withdrawals.length], [0, 0]);
      t.equal(bytesToHex(block.transactions.indexOf(bytesToHex(tx.hash())) >= 0 ? tx.hash() : new Uint8Array()), bytesToHex(tx.hash()));
      t.equal(await ok('debug_getRawTransaction', [bytesToHex(tx.hash())]), bytesToHex(tx.serialize()), 'debug_getRawTransaction is the signed envelope');
      const rawReceipts: string[] = await ok('debug_getRawReceipts', [r.blockNumber]);
      t.equal(rawReceipts.length, block.transactions.length);
      const mine = hexToBytes(rawReceipts[Number(BigInt(r.transactionIndex))] as `0x${string}`);
      const typed = tx.type !== 0;
      t.equal(typed ? mine[0] : 0, tx.type, 'typed receipts carry their type byte');
      const [status, cumGas, bloom, logs] = RLP.decode(typed ? mine.subarray(1) : mine) as any[];
      t.equal(bytesToHex(status), '0x01', 'status success');
      t.equal(BigInt(bytesToHex(cumGas)), BigInt(r.cumulativeGasUsed), 'cumulative gas as the receipt says');
      t.equal(bytesToHex(bloom), r.logsBloom);
      t.equal(logs.length, 0);
      const printed: string = await ok('debug_printBlock', [n]);
      t.match(printed, new RegExp(`^Block\\(#${n}\\)`), 'debug_printBlock dumps the block');
      t.ok(printed.includes(block.hash));
    }
    const latest = Number(BigInt(await ok('eth_blockNumber')));
    t.same((await call('debug_printBlock', ['0x1'])).json?.error, { code: -32602, message: 'invalid argument 0: json: cannot unmarshal string into Go value of type uint64' }, "spec §7: a string block number");
    t.same((await call('debug_getHeaderRlp', [latest + 1000])).json?.error, { code: -32000, message: `header #${latest + 1000} not found` });
    t.same((await call('debug_getBlockRlp', [latest + 1000])).json?.error, { code: -32000, message: `block #${latest + 1000} not found` });
    t.equal(await ok('debug_getRawHeader', [`0x${(latest + 1000).toString(16)}`]), null, 'an unknown number: null, as geth');
    t.equal(await ok('debug_getRawTransaction', ['0x' + 'ab'.repeat(32)]), null, 'an unknown tx: null');

    // Profiling the running node: every thread's CPU profile, a trace of the node's own spans.
    const profiles = path.join(home, 'profiles');
    t.equal(await ok('debug_cpuProfile', ['node', 2]), null);
    const cpu = fs.readdirSync(profiles).filter((f) => f.startsWith('node.'));
    t.ok(cpu.includes('node.main.cpuprofile'), `main thread: ${cpu.join(', ')}`);
    t.ok(cpu.some((f) => /^node\.worker-\d+.*\.cpuprofile$/.test(f)), 'and the worker threads');
    for (const f of cpu) {
      const prof = JSON.parse(fs.readFileSync(path.join(profiles, f), 'utf8'));
      t.ok(prof.nodes.length > 0 && prof.samples.length > 0, `${f} parses, with nodes and samples`);
    }
    t.equal(await ok('debug_goTrace', ['node-trace.json', 3]), null);
    const trace = JSON.parse(fs.readFileSync(path.join(profiles, 'node-trace.json'), 'utf8'));
    const cats = new Set(trace.traceEvents.map((e: any) => e.cat));
    t.ok(cats.has('consensus'), `consensus steps in the trace (${[...cats].join(', ')})`);
    t.ok(cats.has('block'), 'block execution phases in the trace');
    t.ok(trace.traceEvents.some((e: any) => e.cat === 'consensus' && e.name === 'RoundStepPropose' && e.ph === 'X'), 'a propose step as a span');
    const m = await ok('debug_memStats');
    t.ok(m.HeapAlloc > 0 && m.Sys > m.HeapAlloc, 'memStats of the node');
  } catch (e) {
    t.comment(node.output().slice(-4000));
    throw e;
  }
});
