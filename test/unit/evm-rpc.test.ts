/**
 * The EVM JSON-RPC's pieces that need no node: block references (tags, numbers, hashes, EIP-1898
 * objects) and their geth errors, call arguments and overrides, the namespace selection of
 * `[json-rpc] api`, and the spec's N methods answering -32601 through the geth dialect.
 */
import t from 'tap';
import { GethJsonRpc, gethTable } from '../../src/rpc/jsonrpc/geth.js';
import { parseBlockOverrides, parseCallArgs, parseStateOverride } from '../../src/rpc/evm/call.js';
import { ETH_NOT_IMPLEMENTED } from '../../src/rpc/evm/eth.js';
import { parseBlockRef } from '../../src/rpc/evm/format.js';
import { evmRpcMethods, type EvmRpcDeps } from '../../src/rpc/evm/index.js';
import { EVM_METHOD_STATUS } from '../../src/rpc/evm/status.js';

const H = `0x${'ab'.repeat(32)}`;

t.test('block references', async (t) => {
  t.same(parseBlockRef(1, undefined), { tag: 'latest' }, 'omitted is latest');
  t.same(parseBlockRef(1, null), { tag: 'latest' });
  for (const tag of ['latest', 'earliest', 'pending', 'safe', 'finalized']) t.same(parseBlockRef(1, tag), { tag });
  t.same(parseBlockRef(1, '0x10'), { number: 16n });
  t.same(parseBlockRef(1, H), { hash: new Uint8Array(32).fill(0xab) }, 'a 66-character string is a hash');
  t.same(parseBlockRef(1, { blockNumber: '0x2' }), { number: 2n });
  t.same(parseBlockRef(1, { blockHash: H, requireCanonical: true }), { hash: new Uint8Array(32).fill(0xab) });
  const err = (v: unknown) => {
    try {
      parseBlockRef(1, v);
    } catch (e) {
      return { code: (e as { rpcCode: number }).rpcCode, message: (e as Error).message };
    }
    return undefined;
  };
  t.same(err('3'), { code: -32602, message: 'invalid argument 1: hex string without 0x prefix' });
  t.same(err('0x01'), { code: -32602, message: 'invalid argument 1: hex number with leading zero digits' });
  t.same(err({ blockHash: H, blockNumber: '0x1' }), { code: -32602, message: 'invalid argument 1: cannot specify both BlockHash and BlockNumber, choose one or the other' });
  t.same(err({}), { code: -32602, message: 'invalid argument 1: must specify either BlockHash or BlockNumber' });
  t.same(err('0x8000000000000000'), { code: -32602, message: 'invalid argument 1: block number larger than int64' });
});

t.test('call arguments and overrides', async (t) => {
  const a = parseCallArgs(0, { from: `0x${'11'.repeat(20)}`, to: `0x${'22'.repeat(20)}`, gas: '0x5208', value: '0x1', input: '0xabcd' });
  t.equal(a.gas, 21000n);
  t.equal(a.value, 1n);
  t.same([...a.data], [0xab, 0xcd]);
  t.same([...parseCallArgs(0, { data: '0x01', input: '0x01' }).data], [1], 'equal data and input');
  t.throws(() => parseCallArgs(0, { data: '0x01', input: '0x02' }), { rpcCode: -32602, message: /both "data" and "input" are set and not equal/ });
  t.throws(() => parseCallArgs(0, 'x'), { rpcCode: -32602, message: /^invalid argument 0: / });
  t.throws(() => parseCallArgs(0, { gas: '0x' }), { rpcCode: -32602, message: /^invalid argument 0: / });
  const o = parseStateOverride(2, { [`0x${'11'.repeat(20)}`]: { balance: '0x10', nonce: '0x2', code: '0x60', stateDiff: { [H]: H } } })!;
  t.equal(o.length, 1);
  t.equal(o[0]!.balance, 16n);
  t.equal(o[0]!.nonce, 2n);
  t.equal(o[0]!.stateDiff!.length, 1);
  t.throws(() => parseStateOverride(2, { [`0x${'11'.repeat(20)}`]: { state: {}, stateDiff: {} } }), { rpcCode: -32000, message: /has both 'state' and 'stateDiff'/ });
  t.throws(() => parseStateOverride(2, { '0x12': {} }), { rpcCode: -32602, message: /^invalid argument 2: / });
  t.same(parseBlockOverrides(3, { number: '0x5', time: '0x64' }), { number: 5n, time: 100n });
});

t.test('[json-rpc] api selects the namespaces; N methods answer -32601', async (t) => {
  // Building the method table reads nothing from the node.
  const deps = {} as EvmRpcDeps;
  const names = (api: string[]) => evmRpcMethods(deps, api).map((r) => r.name);
  t.ok(names(['eth']).every((n) => n.startsWith('eth_')));
  t.same(names(['net']).sort(), ['net_listening', 'net_peerCount', 'net_version']);
  t.same(names(['web3']).sort(), ['web3_clientVersion', 'web3_sha3']);
  t.same(names(['txpool']).sort(), ['txpool_content', 'txpool_contentFrom', 'txpool_inspect', 'txpool_status']);
  t.ok(names(['debug']).every((n) => n.startsWith('debug_')));
  t.ok(['debug_traceTransaction', 'debug_traceCall', 'debug_traceBlock', 'debug_cpuProfile', 'debug_getRawHeader'].every((n) => names(['debug']).includes(n)), 'debug: tracers, profiling and raw data');
  t.ok(names(['personal']).every((n) => n.startsWith('personal_')));
  t.ok(names(['miner']).every((n) => n.startsWith('miner_')));
  const all = names(['eth', 'net', 'web3', 'eth']);
  t.equal(new Set(all).size, all.length, 'each method once');
  for (const n of ['eth_chainId', 'eth_getBalance', 'eth_sendRawTransaction', 'eth_call', 'eth_getLogs', 'eth_getProof']) t.ok(all.includes(n), n);

  const rpc = new GethJsonRpc(gethTable(evmRpcMethods(deps, ['eth', 'net', 'web3'])));
  const site = { transport: 'jsonrpc' as const, remoteAddr: '127.0.0.1', signal: new AbortController().signal, ws: undefined };
  for (const m of ETH_NOT_IMPLEMENTED) {
    const out = JSON.parse((await rpc.serve({ messages: [{ jsonrpc: '2.0', id: 1, method: m, params: [] }], batch: false }, site))!);
    t.same(out.error, { code: -32601, message: `the method ${m} does not exist/is not available` }, m);
  }
  const net = JSON.parse((await rpc.serve({ messages: [{ jsonrpc: '2.0', id: 2, method: 'net_listening' }], batch: false }, site))!);
  t.same(net, { jsonrpc: '2.0', id: 2, result: true });
});

t.test('the served methods against the spec status table', async (t) => {
  const served = new Set(evmRpcMethods({} as EvmRpcDeps, ['eth', 'net', 'web3', 'txpool', 'personal', 'debug', 'miner']).map((r) => r.name));
  for (const name of served) t.ok(EVM_METHOD_STATUS.has(name), `${name} is in the spec table`);
  const missing = [...EVM_METHOD_STATUS].filter(([n, s]) => s.status !== 'N' && !served.has(n)).map(([n]) => n).sort();
  t.same(missing, [], 'every Y and Stub method is served');
  // eth's 20 N methods less the 4 signing ones served for dev tools, personal's 6, miner's 8.
  t.equal([...EVM_METHOD_STATUS].filter(([n, s]) => s.status === 'N' && n.startsWith('eth_')).length, 16, 'the 16 N methods of eth');
  t.equal([...EVM_METHOD_STATUS].filter(([n, s]) => s.status === 'N').length, 45, 'N methods in all (debug: 15)');
  t.same([...EVM_METHOD_STATUS].filter(([, s]) => s.spec === 'N').map(([n]) => n).sort(), [
    'debug_getBlockRlp', 'debug_getHeaderRlp', 'debug_getRawBlock', 'debug_getRawHeader', 'debug_getRawReceipts', 'debug_getRawTransaction',
    'eth_sendTransaction', 'eth_signTransaction', 'eth_signTypedData', 'eth_signTypedData_v4', 'personal_ecRecover', 'personal_importRawKey', 'personal_sendTransaction',
  ], 'served beyond the spec table, as the issue asks');
});
