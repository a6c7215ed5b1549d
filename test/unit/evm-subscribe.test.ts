/**
 * eth_subscribe / eth_unsubscribe on an in-process node (real LMDB, consensus, mempool, servers on
 * loopback): geth's envelope, ids and errors; newHeads, logs (address and topic rules),
 * newPendingTransactions (hashes and full objects) and syncing; viem's and ethers' websocket
 * watchers and viem's HTTP polling watchers (filters) against the ERC-20 fixture; and a client
 * that stops reading is dropped while another keeps its heads and the chain keeps committing.
 */
import t from 'tap';
import { createPublicClient, createWalletClient, defineChain, http, webSocket, type Abi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ethers } from 'ethers';
import { bytesToHex } from '@ethereumjs/util';
import { createEvmCommon } from '../../src/evm/common.js';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { EventBus } from '../../src/events/bus.js';
import { Subscriptions, type Notification, type Subscription } from '../../src/events/subscriptions.js';
import type { EvmRpcDeps } from '../../src/rpc/evm/deps.js';
import { EVM_FEED_TYPES, EvmFeed, evmSubscriptionsFor } from '../../src/rpc/evm/subscribe.js';
import { deployData, loadToken, makeKeys, rpcCall, rpcOk, signTx, type RpcAnswer, transferData, TRANSFER_TOPIC } from '../helpers/evm.js';
import { startTestNode, waitHeight, type TestNode } from '../helpers/inproc.js';
import { FakeSinkBase } from '../helpers/fake-sink.js';
import { WsClient } from '../helpers/ws.js';

t.setTimeout(300_000);

const [A] = devAccounts().filter((a) => a.keyType === 'eth_secp256k1');
const KEY = { priv: A!.privateKey };
const [R1, R2] = makeKeys(2, 'evm-subscribe');
const hex = (b: Uint8Array) => bytesToHex(b);
const TOKEN_ABI = loadToken().abi as Abi;

/** JSON-RPC over HTTP to the node's 8545-equivalent port (test/helpers/evm.ts). */
const rpc = (port: number, method: string, params: unknown[] = []) => rpcCall(`http://127.0.0.1:${port}/`, method, params);
const ok = (port: number, method: string, params: unknown[] = []) => rpcOk(`http://127.0.0.1:${port}/`, method, params);

async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A raw websocket client speaking geth's dialect. */
class EthWs {
  private seq = 0;
  private readonly pending: any[] = [];
  constructor(readonly ws: WsClient) {}
  static async open(port: number): Promise<EthWs> {
    const { ws } = await WsClient.connect(port);
    if (!ws) throw new Error('no websocket upgrade');
    return new EthWs(ws);
  }
  /** The answer to a call (notifications that arrive first are kept for next()). */
  async call(method: string, params: unknown[] = []): Promise<RpcAnswer> {
    const id = ++this.seq;
    this.ws.call({ jsonrpc: '2.0', id, method, params });
    const early: string[] = [];
    for (;;) {
      const raw = await this.ws.next(30_000);
      if (raw === null) throw new Error('connection closed');
      const m = JSON.parse(raw);
      if (m.id === id) {
        // geth's Notifier.activate: no notification of a subscription before its id.
        if (typeof m.result === 'string' && early.includes(m.result)) throw new Error(`a notification of ${m.result} came before the subscribe answer`);
        return m;
      }
      if (m.params?.subscription !== undefined) early.push(m.params.subscription);
      this.pending.push({ raw, m });
    }
  }
  /** The next notification of subscription `sub` (raw text and parsed). */
  async note(sub: string, ms = 30_000): Promise<{ raw: string; m: any }> {
    const i = this.pending.findIndex((p) => p.m.params?.subscription === sub);
    if (i >= 0) return this.pending.splice(i, 1)[0]!;
    const deadline = Date.now() + ms;
    for (;;) {
      const raw = await this.ws.next(Math.max(1, deadline - Date.now()));
      if (raw === null) throw new Error('connection closed');
      const m = JSON.parse(raw);
      if (m.params?.subscription === sub) return { raw, m };
      this.pending.push({ raw, m });
    }
  }
  close(): void {
    this.ws.close();
  }
}

interface Env {
  tn: TestNode;
  http: number;
  ws: number;
  chainId: bigint;
  nonce: bigint;
  token?: string;
}

async function startEnv(flags: Record<string, string | number | boolean> = {}): Promise<Env> {
  const tn = await startTestNode({ flags });
  const http = tn.node.evmRpcPort!;
  const ws = tn.node.evmWsPort ?? http;
  await waitHeight(tn, 2n);
  const chainId = BigInt(await ok(http, 'eth_chainId'));
  const nonce = BigInt(await ok(http, 'eth_getTransactionCount', [hex(A!.address), 'pending']));
  return { tn, http, ws, chainId, nonce };
}

async function sendAndWait(env: Env, spec: { to?: Uint8Array; data?: Uint8Array; gasLimit?: bigint }): Promise<any> {
  const tx = signTx(createEvmCommon({ chainId: env.chainId }), KEY, { nonce: env.nonce++, gasLimit: 2_000_000n, ...spec });
  const hash = await ok(env.http, 'eth_sendRawTransaction', [hex(tx.serialize())]);
  const receipt = await until('receipt', async () => (await ok(env.http, 'eth_getTransactionReceipt', [hash])) ?? undefined);
  if (receipt.status !== '0x1') throw new Error(`tx failed: ${JSON.stringify(receipt)}`);
  return receipt;
}

async function deployToken(env: Env): Promise<string> {
  const r = await sendAndWait(env, { data: deployData(1_000_000n) });
  env.token = r.contractAddress as string;
  return env.token;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A subscriber whose backlog the test sets; records each item delivered. */
class FakeSink extends FakeSinkBase {
  readonly got: Array<{ key: string; item: unknown }> = [];
  deliver(sub: Subscription, _n: Notification, item?: unknown) {
    this.got.push({ key: sub.key, item });
    return 'sent' as const;
  }
  canceled() {
    return 'sent' as const;
  }
}

t.test('the registry with matchers: items one by one, inactive until activated, a full buffer drops the client', async (t) => {
  const bus = new EventBus();
  const subs = new Subscriptions({ bus, maxClients: 2, maxSubscriptionsPerClient: 2, bufferSize: 5, closeOnSlowClient: true, highWaterBytes: 1000, flushIntervalMs: 5, eventMap: () => ({}) });
  const a = new FakeSink('a');
  const items = { select: (n: Notification) => (n.msg.data as number[]).map((x) => x * 10) };
  const sa = subs.add(a, { key: '0x1', label: 'logs', requestId: 1, matcher: items, inactive: true });
  t.throws(() => subs.add(a, { key: '0x1', label: 'logs', requestId: 2, matcher: items }), { code: 'ALREADY_SUBSCRIBED' });
  bus.publish({ type: 'x', data: [1, 2], attributes: {} });
  await sleep(20);
  t.same(a.got, [], 'nothing before activation');
  subs.activate(sa);
  t.same(a.got, [{ key: '0x1', item: 10 }, { key: '0x1', item: 20 }], 'then what was published since the subscription, item by item');
  bus.publish({ type: 'x', data: [], attributes: {} });
  bus.publish({ type: 'x', data: [3], attributes: {} });
  await sleep(20);
  t.same(a.got.map((g) => g.item), [10, 20, 30], 'an empty list delivers nothing');
  subs.add(a, { key: '0x2', label: 'newHeads', requestId: 3, matcher: { select: () => true } });
  t.throws(() => subs.add(a, { key: '0x3', label: 'x', requestId: 4, matcher: { select: () => true } }), { code: 'MAX_SUBSCRIPTIONS_PER_CLIENT' });
  t.equal(subs.remove('a', '0x2'), true);
  t.equal(subs.remove('a', '0x2'), false, 'removed once');

  // Behind: items wait in the buffer (5); the sixth drops the client.
  a.backlog = 5000;
  bus.publish({ type: 'x', data: [4, 5, 6, 7, 8], attributes: {} });
  await sleep(20);
  t.equal(subs.stats().buffered, 5, 'five items buffered');
  t.notOk(a.closed);
  bus.publish({ type: 'x', data: [9], attributes: {} });
  await sleep(20);
  t.ok(a.closed, 'the client is closed');
  t.same(subs.stats(), { clients: 0, subscriptions: 0, buffered: 0, delivered: 3, dropped: 6, canceled: 1, droppedClients: 1 });
  t.equal(subs.dropSlowClient('a'), false, 'a client already gone is not dropped (or counted) again');
  const b = new FakeSink('b');
  subs.add(b, { key: '0x9', label: 'newHeads', requestId: 1, matcher: { select: () => true } });
  t.equal(subs.dropSlowClient('b'), true, "the caller's own slow-client rule");
  t.ok(b.closed);
  t.same([subs.stats().clients, subs.stats().droppedClients], [0, 2]);
});

t.test('syncing: a status when block sync starts, false when it ends', async (t) => {
  let catchingUp = false;
  const bus = new EventBus();
  const deps = {
    bus,
    mempool: {},
    catchingUp: () => catchingUp,
    lastHeight: () => 7n,
    blocks: { base: () => 1n, height: () => 40n, loadBlock: () => null, loadBlockMeta: () => null },
  } as unknown as EvmRpcDeps;
  const feed = new EvmFeed(deps);
  const got: string[] = [];
  const off = feed.subscribe((m) => m.type === EVM_FEED_TYPES.syncing && got.push((m.data as { result: string }).result));
  t.equal(bus.listenerCount, 1, 'the feed listens to the bus while it has a listener');
  const block = async (h: bigint) => {
    bus.publish({ type: 'NewBlock', data: { block: { header: { height: h } } }, attributes: {} });
    await until(`block ${h} handled`, () => feed.pendingRenders === 0 || undefined, 10_000);
  };
  await block(3n);
  t.same(got, [], 'no change, nothing said');
  catchingUp = true;
  await block(4n);
  t.equal(got.length, 1);
  const status = JSON.parse(got[0]!);
  t.equal(status.syncing, true);
  t.same([status.status.StartingBlock, status.status.CurrentBlock, status.status.HighestBlock], [4, 7, 40], 'ethereum.SyncProgress: Go field names, decimal numbers');
  await block(5n);
  t.equal(got.length, 1, 'at most one status a minute while syncing');
  catchingUp = false;
  await block(6n);
  t.same(got.slice(1), ['false'], 'false when done');
  off();
  t.equal(bus.listenerCount, 0, 'and lets go of the bus with its last listener');
});

t.test('geth dialect: ids, envelope, errors, newHeads, logs, pending txs, syncing', async (t) => {
  // A price limit of 1 wei (geth's default; chaind's is 0): the txs below pay a tip of 1.
  const env = await startEnv({ 'evm.mempool.price-limit': 1 });
  t.teardown(() => env.tn.close());
  const c = await EthWs.open(env.ws);
  t.teardown(() => c.close());

  // Errors first (geth's texts and codes).
  t.same((await c.call('eth_subscribe', ['foo'])).error, { code: -32601, message: 'no "foo" subscription in eth namespace' });
  t.same((await c.call('eth_subscribe', [])).error, { code: -32602, message: 'expected subscription name as first argument' });
  t.same((await c.call('eth_subscribe', [1])).error, { code: -32602, message: 'expected subscription name as first argument' });
  // newHeads' optional argument is Nethermind's {"includeTransactions": bool}; nothing else.
  const wantObj = '; want {"includeTransactions": true|false}';
  t.same((await c.call('eth_subscribe', ['newHeads', true])).error, { code: -32602, message: `invalid argument 1: expected an object, got true${wantObj}` });
  t.same((await c.call('eth_subscribe', ['newHeads', { includeTransactions: 'yes' }])).error, { code: -32602, message: `invalid argument 1: includeTransactions must be true or false, got "yes"${wantObj}` });
  t.same((await c.call('eth_subscribe', ['newHeads', { includeTransaction: true }])).error, { code: -32602, message: `invalid argument 1: unknown field "includeTransaction"${wantObj}` });
  t.same((await c.call('eth_subscribe', ['newHeads', {}, 1])).error, { code: -32602, message: 'too many arguments, want at most 2' });
  t.same((await c.call('eth_subscribe', ['syncing', true])).error, { code: -32602, message: 'too many arguments, want at most 1' });
  t.same((await c.call('eth_subscribe', ['logs', { fromBlock: 'pending' }])).error, { code: -32602, message: 'pending logs are not supported' });
  t.same((await c.call('eth_subscribe', ['logs', { fromBlock: '0x5', toBlock: '0x2' }])).error, { code: -32602, message: 'invalid block range params' });
  t.same((await c.call('eth_subscribe', ['logs', { topics: [[], [], [], [], []] }])).error?.code, -32602, 'more than 4 topic positions');
  t.same((await c.call('eth_subscribe', ['newPendingTransactions', 'yes'])).error, { code: -32602, message: 'invalid argument 1: json: cannot unmarshal string into Go value of type bool' });
  t.same((await c.call('eth_unsubscribe', ['0x1234'])).error, { code: -32000, message: 'subscription not found' });
  t.same((await rpc(env.http, 'eth_subscribe', ['newHeads'])).error, { code: -32601, message: 'notifications not supported' }, 'over HTTP');
  t.same((await rpc(env.http, 'eth_unsubscribe', ['0x1'])).error, { code: -32000, message: 'subscription not found' }, 'over HTTP');
  // app.toml [evm.mempool] price-limit reaches the node's EVM pool (src/node.ts): geth's refusal.
  const free = signTx(createEvmCommon({ chainId: env.chainId }), KEY, { nonce: env.nonce, price: 0n, gasLimit: 21_000n, to: R1!.address });
  t.same((await rpc(env.http, 'eth_sendRawTransaction', [hex(free.serialize())])).error, { code: -32000, message: 'transaction gas price below minimum: gas tip cap 0, minimum needed 1' }, '--evm.mempool.price-limit 1');
  // Undecodable bytes: the decoder's words, the same whether they are decoded in the EVM pool's
  // admission turn (Ethereum lead bytes, eth.ts) or before any pool (a Cosmos TxRaw's lead byte,
  // which must not reach the Cosmos pool); nothing pooled.
  const pooled = env.tn.ctx.mempool.size();
  const refused = async (raw: string) => (await rpc(env.http, 'eth_sendRawTransaction', [raw])).error;
  t.same(await refused('0x0a00'), { code: -32000, message: 'unsupported transaction type 0x0a' }, 'a Cosmos lead byte');
  t.same(await refused('0x02c180'), { code: -32000, message: `invalid chain id for signer: have 0 want ${env.chainId}` }, 'a typed tx with a short list');
  t.same(await refused('0xc3010203'), { code: -32000, message: 'rlp: Invalid transaction. Only expecting 6 values (for unsigned tx) or 9 values (for signed tx).' }, 'a legacy list of 3');
  t.equal(env.tn.ctx.mempool.size(), pooled, 'nothing pooled');

  // newHeads: the header of each block, in order, in geth's envelope and key order.
  const heads = (await c.call('eth_subscribe', ['newHeads'])).result as string;
  t.match(heads, /^0x[1-9a-f][0-9a-f]{0,31}$/, 'a geth NewID: 16 random bytes, hex, no leading zeros');
  const first = await c.note(heads);
  t.ok(first.raw.startsWith(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${heads}","result":{"parentHash":`), 'geth envelope and key order');
  const h1 = first.m.params.result;
  t.same(Object.keys(h1), ['parentHash', 'sha3Uncles', 'miner', 'stateRoot', 'transactionsRoot', 'receiptsRoot', 'logsBloom', 'difficulty', 'number', 'gasLimit', 'gasUsed', 'timestamp', 'extraData', 'mixHash', 'nonce', 'baseFeePerGas', 'withdrawalsRoot', 'blobGasUsed', 'excessBlobGas', 'parentBeaconBlockRoot', 'requestsHash', 'hash'], 'core/types Header fields (Prague)');
  const block = await ok(env.http, 'eth_getBlockByNumber', [h1.number, false]);
  const { size: _s, transactions: _t, uncles: _u, withdrawals: _w, ...blockHeader } = block;
  t.same(h1, blockHeader, 'the header is eth_getBlockByNumber without size, transactions, uncles and withdrawals');
  const h2 = (await c.note(heads)).m.params.result;
  t.equal(BigInt(h2.number), BigInt(h1.number) + 1n, 'the next block');
  t.equal(h2.parentHash, h1.hash, 'chained');
  const other = (await c.call('eth_subscribe', ['newHeads'])).result as string;
  t.not(other, heads, 'a second subscription gets its own id');

  // syncing: the current state right after the id.
  const sync = (await c.call('eth_subscribe', ['syncing'])).result as string;
  t.equal((await c.note(sync)).m.params.result, false, 'not syncing');

  // newPendingTransactions: the hash; with true, the pending tx object.
  const pend = (await c.call('eth_subscribe', ['newPendingTransactions'])).result as string;
  const pendFull = (await c.call('eth_subscribe', ['newPendingTransactions', true])).result as string;
  // newHeads with includeTransactions (Nethermind): the header plus the block's full tx objects,
  // rendered by the feed only while such a subscription exists.
  const feed = evmSubscriptionsFor(env.tn.node.evmDeps!).feed;
  const feedBlocks: Array<{ height: bigint; full?: string }> = [];
  const offFeed = feed.subscribe((m) => {
    if (m.type === EVM_FEED_TYPES.block) feedBlocks.push(m.data as { height: bigint; full?: string });
  });
  await until('a block rendered', () => feedBlocks.length > 0 || undefined);
  t.equal(feedBlocks[0]!.full, undefined, 'nobody asked for transactions: the full form is not rendered');
  const headsTx = (await c.call('eth_subscribe', ['newHeads', { includeTransactions: true }])).result as string;
  const headsNoTx = (await c.call('eth_subscribe', ['newHeads', { includeTransactions: false }])).result as string;
  t.equal(feed.fullHeads.size, 1);
  const token = await deployToken(env);
  const deployTx = (await c.note(pend)).m.params.result as string;
  t.match(deployTx, /^0x[0-9a-f]{64}$/);
  const full = (await c.note(pendFull)).m.params.result;
  t.equal(full.hash, deployTx, 'the same tx, as an object');
  t.equal(full.blockHash, null, 'pending: no block');
  t.equal(full.from, hex(A!.address));
  t.equal(full.to, null, 'a creation');
  const deployBlock = (await ok(env.http, 'eth_getTransactionReceipt', [deployTx])).blockNumber as string;
  const headOf = async (sub: string) => {
    for (;;) {
      const n = await c.note(sub);
      if (n.m.params.result.number === deployBlock) return n;
    }
  };
  const withTxs = await headOf(headsTx);
  const plain = (await headOf(headsNoTx)).m.params.result;
  const byNumber = await ok(env.http, 'eth_getBlockByNumber', [deployBlock, true]);
  t.equal(withTxs.m.params.result.transactions.length, 1);
  t.equal(withTxs.m.params.result.transactions[0].hash, deployTx, 'the block\'s EVM tx');
  t.same(withTxs.m.params.result.transactions, byNumber.transactions, 'as eth_getBlockByNumber(n, true) has them');
  t.equal(withTxs.m.params.result.transactions[0].blockNumber, deployBlock);
  t.notOk('transactions' in plain, 'includeTransactions false: the header alone, as geth sends it');
  const { transactions: _txs, ...headerPart } = withTxs.m.params.result;
  t.same(headerPart, plain, 'otherwise the same header');
  t.same(Object.keys(withTxs.m.params.result), [...Object.keys(plain), 'transactions'], 'transactions after the header fields');
  t.ok(withTxs.raw.startsWith(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${headsTx}","result":{"parentHash":`));
  t.ok(feedBlocks.some((b) => b.height === BigInt(deployBlock) && b.full !== undefined), 'rendered once in the feed for all such subscribers');
  t.same((await c.call('eth_unsubscribe', [headsTx])).result, true);
  t.equal(feed.fullHeads.size, 0, 'unsubscribed: nobody wants the full form');
  const mark = feedBlocks.length;
  await until('a block after the unsubscribe', () => feedBlocks.length > mark + 1 || undefined);
  t.equal(feedBlocks[feedBlocks.length - 1]!.full, undefined, 'and it is no longer rendered');
  offFeed();

  // logs: address and topic rules (position, null wildcard, alternatives); one log per message.
  const pad = (a: Uint8Array) => `0x${'00'.repeat(12)}${Buffer.from(a).toString('hex')}`;
  const subs = {
    all: (await c.call('eth_subscribe', ['logs', {}])).result as string,
    byAddr: (await c.call('eth_subscribe', ['logs', { address: token }])).result as string,
    toR1: (await c.call('eth_subscribe', ['logs', { address: [token], topics: [hex(TRANSFER_TOPIC), null, pad(R1!.address)] }])).result as string,
    alt: (await c.call('eth_subscribe', ['logs', { topics: [[hex(TRANSFER_TOPIC), `0x${'11'.repeat(32)}`], null, [pad(R2!.address), pad(R1!.address)]] }])).result as string,
    otherAddr: (await c.call('eth_subscribe', ['logs', { address: `0x${'42'.repeat(20)}` }])).result as string,
    otherTopic: (await c.call('eth_subscribe', ['logs', { topics: [`0x${'11'.repeat(32)}`] }])).result as string,
  };
  const r1 = await sendAndWait(env, { to: Buffer.from(token.slice(2), 'hex'), data: transferData(R1!.address, 5n) });
  const r2 = await sendAndWait(env, { to: Buffer.from(token.slice(2), 'hex'), data: transferData(R2!.address, 7n) });
  const logOf = async (sub: string) => (await c.note(sub)).m.params.result;
  const a1 = await logOf(subs.all);
  t.same(a1, r1.logs[0], 'the log as the receipt has it');
  t.same(await logOf(subs.all), r2.logs[0]);
  t.same(await logOf(subs.byAddr), r1.logs[0]);
  t.same(await logOf(subs.byAddr), r2.logs[0]);
  t.same(await logOf(subs.toR1), r1.logs[0], 'topic by position');
  t.same(await logOf(subs.alt), r1.logs[0], 'alternatives');
  t.same(await logOf(subs.alt), r2.logs[0]);
  // A later block proves the non-matching subscriptions got nothing for these two.
  const r3 = await sendAndWait(env, { to: Buffer.from(token.slice(2), 'hex'), data: transferData(R1!.address, 1n) });
  t.same(await logOf(subs.toR1), r3.logs[0], 'the R2 transfer was not sent to the R1 filter');
  for (const s of [subs.otherAddr, subs.otherTopic]) {
    await t.rejects(c.note(s, 1_500), /no websocket message in time/, 'nothing for a filter no log matches');
  }

  // A busy block: many logs at once, every one delivered, in order.
  const tokenBytes = Buffer.from(token.slice(2), 'hex');
  const common = createEvmCommon({ chainId: env.chainId });
  const burst = Array.from({ length: 40 }, (_, i) => signTx(common, KEY, { nonce: env.nonce++, to: tokenBytes, data: transferData(R2!.address, BigInt(i + 1)), gasLimit: 200_000n }));
  const hashes = await Promise.all(burst.map((tx) => ok(env.http, 'eth_sendRawTransaction', [hex(tx.serialize())])));
  t.same(await logOf(subs.all), r3.logs[0], 'the last transfer first');
  const got: any[] = [];
  for (let i = 0; i < burst.length; i++) got.push(await logOf(subs.all));
  t.same(got.map((l) => l.transactionHash), hashes, 'one log per tx, in nonce (= execution) order');
  for (let i = 1; i < got.length; i++) {
    const [p, q] = [got[i - 1], got[i]];
    if (!(BigInt(q.blockNumber) > BigInt(p.blockNumber) || (q.blockNumber === p.blockNumber && BigInt(q.logIndex) > BigInt(p.logIndex)))) t.fail(`log ${i} out of order`);
  }
  t.ok(new Set(got.map((l) => l.blockNumber)).size < got.length, `several logs per block (${new Set(got.map((l) => l.blockNumber)).size} blocks)`);

  // eth_unsubscribe: true once, then not found; no more notifications.
  t.same((await c.call('eth_unsubscribe', [heads])).result, true);
  t.same((await c.call('eth_unsubscribe', [heads])).error, { code: -32000, message: 'subscription not found' });
  const reg = evmSubscriptionsFor(env.tn.node.evmDeps!).registry;
  const before = reg.stats().subscriptions;
  c.close();
  await c.ws.closed;
  await until('subscriptions gone with the connection', () => reg.stats().subscriptions === 0 || undefined);
  t.ok(before > 0 && reg.stats().clients === 0, 'closing the connection ends its subscriptions');
});

t.test('viem and ethers watch blocks and contract events over the websocket; viem polls filters over HTTP', async (t) => {
  const env = await startEnv();
  t.teardown(() => env.tn.close());
  const token = (await deployToken(env)) as `0x${string}`;
  const chain = defineChain({
    id: Number(env.chainId),
    name: 'chaind',
    nativeCurrency: { name: 'a', symbol: 'A', decimals: 18 },
    rpcUrls: { default: { http: [`http://127.0.0.1:${env.http}`], webSocket: [`ws://127.0.0.1:${env.ws}`] } },
  });
  const wsClient = createPublicClient({ chain, transport: webSocket(`ws://127.0.0.1:${env.ws}`) });
  // viem's HTTP watchContractEvent stops polling only once eth_uninstallFilter has answered
  // (actions/public/watchContractEvent.ts: `await uninstallFilter(…); unwatch()`): a node closed
  // while that request is in flight leaves eth_getFilterChanges retrying for ever, which keeps this
  // process alive until tap's file timeout. The fetch below records each uninstall's answer, body
  // read, so the test can wait for it before the node goes.
  const uninstalled: string[] = [];
  const fetchFn: typeof fetch = async (url, init) => {
    const res = await fetch(url, init);
    if (typeof init?.body === 'string' && init.body.includes('"eth_uninstallFilter"')) uninstalled.push(await res.clone().text());
    return res;
  };
  const httpClient = createPublicClient({ chain, transport: http(`http://127.0.0.1:${env.http}`, { fetchFn }), pollingInterval: 100 });
  const wallet = createWalletClient({ chain, account: privateKeyToAccount(hex(A!.privateKey) as `0x${string}`), transport: http(`http://127.0.0.1:${env.http}`) });
  const provider = new ethers.WebSocketProvider(`ws://127.0.0.1:${env.ws}`);

  const viemBlocks: bigint[] = [];
  const viemHttpBlocks: bigint[] = [];
  const ethersBlocks: number[] = [];
  const viemLogs: any[] = [];
  const viemHttpLogs: any[] = [];
  const ethersLogs: any[] = [];
  const unwatch = [
    // viem fetches each announced block with getBlock and hands onBlock `undefined` when that
    // request failed (watchBlocks.ts: `.catch(() => {})`), e.g. its 10 s timeout on a loaded machine.
    wsClient.watchBlocks({ onBlock: (b) => b !== undefined && viemBlocks.push(b.number!), onError: (e) => t.fail(`viem ws watchBlocks: ${e.message}`) }),
    httpClient.watchBlocks({ onBlock: (b) => b !== undefined && viemHttpBlocks.push(b.number!), onError: (e) => t.fail(`viem http watchBlocks: ${e.message}`) }),
    wsClient.watchContractEvent({ address: token, abi: TOKEN_ABI, eventName: 'Transfer', onLogs: (l) => viemLogs.push(...l), onError: (e) => t.fail(`viem ws watchContractEvent: ${e.message}`) }),
    httpClient.watchContractEvent({ address: token, abi: TOKEN_ABI, eventName: 'Transfer', onLogs: (l) => viemHttpLogs.push(...l), onError: (e) => t.fail(`viem http watchContractEvent: ${e.message}`) }),
  ];
  await provider.on('block', (n: number) => ethersBlocks.push(n));
  const contract = new ethers.Contract(token, TOKEN_ABI as ethers.InterfaceAbi, provider);
  await contract.on('Transfer', (from: string, to: string, value: bigint) => ethersLogs.push({ from, to, value }));

  await until('three blocks through every watcher', () => (viemBlocks.length >= 3 && viemHttpBlocks.length >= 3 && ethersBlocks.length >= 3) || undefined);
  for (let i = 1; i < viemBlocks.length; i++) t.ok(viemBlocks[i]! > viemBlocks[i - 1]!, 'viem ws: increasing numbers');
  // Give the log subscriptions (made by the libraries asynchronously) a moment to be in place.
  await until('log subscriptions in place', () => evmSubscriptionsFor(env.tn.node.evmDeps!).registry.stats().subscriptions >= 4 || undefined);

  const hash = await wallet.sendTransaction({ to: token, data: hex(transferData(R1!.address, 42n)) as `0x${string}`, gas: 200_000n, gasPrice: 1n, nonce: Number(env.nonce++) });
  const receipt = await httpClient.waitForTransactionReceipt({ hash, pollingInterval: 100 });
  t.equal(receipt.status, 'success');
  await until('the Transfer through every watcher', () => (viemLogs.length >= 1 && viemHttpLogs.length >= 1 && ethersLogs.length >= 1) || undefined);
  for (const [who, logs] of [['viem ws', viemLogs], ['viem http', viemHttpLogs]] as const) {
    t.equal(logs[0].transactionHash, hash, `${who}: the transfer`);
    t.equal((logs[0].args.to as string).toLowerCase(), hex(R1!.address), `${who}: decoded args`);
    t.equal(logs[0].args.value, 42n);
  }
  t.equal(ethersLogs[0].to.toLowerCase(), hex(R1!.address), 'ethers: decoded args');
  t.equal(ethersLogs[0].value, 42n);

  // The clients go before the node does; the HTTP event watcher's filter is uninstalled first.
  unwatch.forEach((u) => u());
  const answer = await until('the HTTP watcher uninstalls its filter', () => uninstalled[0]);
  // Its poll stops in the same promise chain, with no further request (a poll already in flight
  // may still fail once against the closed node, and then ends).
  t.equal(JSON.parse(answer).result, true, 'eth_uninstallFilter: true, so viem stops polling');
  await provider.destroy();
  const socket = await wsClient.transport.getRpcClient();
  socket.close();
});

t.test('a client that stops reading is dropped; blocks and other subscribers go on', async (t) => {
  const env = await startEnv({ 'json-rpc.subscription-buffer': 16 });
  t.teardown(() => env.tn.close());
  const subs = evmSubscriptionsFor(env.tn.node.evmDeps!);
  const slow = await EthWs.open(env.ws);
  const fast = await EthWs.open(env.ws);
  t.teardown(() => {
    slow.close();
    fast.close();
  });
  const slowPending = (await slow.call('eth_subscribe', ['newPendingTransactions', true])).result as string;
  t.ok((await slow.call('eth_subscribe', ['newHeads'])).result);
  const fastHeads = (await fast.call('eth_subscribe', ['newHeads'])).result as string;
  t.ok(slowPending);
  slow.ws.stopReading();

  // A large pending tx (200 KB of JSON per notification) published over and over: the paused
  // client's socket buffers (kernel, then the server's) fill, then its subscription buffer.
  const big = signTx(createEvmCommon({ chainId: env.chainId }), KEY, { nonce: 1_000_000n, to: R1!.address, data: new Uint8Array(100_000).fill(7), gasLimit: 30_000_000n });
  const raw = big.serialize();
  const h0 = env.tn.ctx.storage.blocks.height();
  let published = 0;
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed + base.external;
  const deadline = Date.now() + 120_000;
  while (subs.droppedClients() === 0) {
    if (Date.now() > deadline) {
      t.fail('the slow client was never dropped');
      break;
    }
    subs.feed.publish({ type: EVM_FEED_TYPES.pending, data: { tx: raw }, attributes: {} });
    published++;
    const mem = process.memoryUsage();
    peakRss = Math.max(peakRss, mem.rss);
    peakHeap = Math.max(peakHeap, mem.heapUsed + mem.external);
    await new Promise((r) => setTimeout(r, 2));
  }
  const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
  t.comment(`${published} notifications of ${raw.length * 2} bytes published before the drop; heap+external ${mib(base.heapUsed + base.external)} → peak ${mib(peakHeap)}, RSS ${mib(base.rss)} → peak ${mib(peakRss)}`);
  t.equal(subs.droppedClients(), 1, 'the slow client was dropped, counted once');
  await until('only the fast client left', () => (subs.registry.stats().clients === 1 && subs.registry.stats().subscriptions === 1) || undefined, 10_000);

  // Blocks keep coming and the reading client keeps receiving them, in order.
  await waitHeight(env.tn, h0 + 5n, 60_000);
  let prev = BigInt((await fast.note(fastHeads)).m.params.result.number);
  for (let i = 0; i < 5; i++) {
    const n = BigInt((await fast.note(fastHeads)).m.params.result.number);
    t.equal(n, prev + 1n, 'the fast client gets the next head');
    prev = n;
  }
  t.ok(env.tn.ctx.storage.blocks.height() >= h0 + 5n, 'the chain kept committing');

  // The slow client reads again: what was written, then the end of the connection.
  slow.ws.resumeReading();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([slow.ws.closed, new Promise((r) => (timer = setTimeout(r, 30_000)))]);
  clearTimeout(timer);
  t.ok(slow.ws.ended, 'the slow connection is closed');
});
