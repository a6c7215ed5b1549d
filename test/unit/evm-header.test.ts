/**
 * The EVM header per height (src/app/modules/evm/header.ts): the ordered-trie root and the header
 * RLP against @ethereumjs's own (mpt, block), then an in-process node (real consensus, LMDB, the
 * executor thread, the JSON-RPC server on loopback): every block's `hash` is keccak256(RLP) of
 * the fields eth_getBlockByNumber reports (recomputed by @ethereumjs/block), parentHash chains,
 * lookups by EVM hash, the hashes in receipts, txs, logs, block receipts and EIP-1898 objects,
 * the roots against independently computed ones, and BLOCKHASH — in a mined tx and in eth_call —
 * equal to eth_getBlockByNumber(n).hash.
 */
import t from 'tap';
import { Common, Hardfork, Mainnet } from '@ethereumjs/common';
import { createBlockHeader, createBlockHeaderFromRPC, genTransactionsTrieRoot } from '@ethereumjs/block';
import { createMPT, verifyMPTWithMerkleProof } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { createTx, type TypedTransaction } from '@ethereumjs/tx';
import { Address, bytesToHex, createContractAddress, hexToBytes } from '@ethereumjs/util';
import type { ChainApp } from '../../src/app/chain.js';
import { consensusReceipt, decodeHeader, decodeStoredHeader, encodeHeader, encodeStoredHeader, makeHeader, orderedTrieRoot, sealHeader, EMPTY_ROOT_HASH } from '../../src/app/modules/evm/header.js';
import { decodeLog, decodeReceipt, encodeLog, encodeLogRlp, encodeReceipt, encodeReceiptRlp, receiptHashes, type StoredReceipt } from '../../src/app/modules/evm/receipts.js';
import { getCryptoBackend } from '../../src/crypto/backend.js';
import { createEvmCommon } from '../../src/evm/common.js';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { evmRpcDeps } from '../../src/rpc/evm/deps.js';
import { rawHeader, headerObject } from '../../src/rpc/evm/view.js';
import { startTestNode, type TestNode } from '../helpers/inproc.js';
import { rpcCall, rpcOk, word } from '../helpers/evm.js';

t.setTimeout(240_000);

const crypto = getCryptoBackend();
const keccak = (d: Uint8Array) => crypto.keccak256(d);
/** @ethereumjs's own keccak (@noble), not chaind's backend: an independent recomputation. */
const plainPrague = new Common({ chain: Mainnet, hardfork: Hardfork.Prague });

t.test('orderedTrieRoot equals @ethereumjs/mpt over RLP(index) keys', async (t) => {
  t.same(orderedTrieRoot([], keccak), EMPTY_ROOT_HASH, 'no values: the empty trie root');
  for (const n of [1, 2, 3, 16, 17, 127, 128, 129, 130, 300, 1100]) {
    const values = Array.from({ length: n }, (_, i) => (i % 5 === 0 ? Uint8Array.of(i & 0x7f) : keccak(Uint8Array.of(i & 0xff, i >> 8)).subarray(0, 1 + (i % 40))));
    const trie = await createMPT();
    for (let i = 0; i < n; i++) await trie.put(RLP.encode(i), values[i]!);
    t.equal(bytesToHex(orderedTrieRoot(values, keccak)), bytesToHex(trie.root()), `${n} values`);
  }
});

t.test('header RLP and hash equal @ethereumjs/block (Prague)', async (t) => {
  const fill = (n: number, b: number) => new Uint8Array(n).fill(b);
  const header = makeHeader({
    parentHash: fill(32, 1),
    coinbase: fill(20, 2),
    stateRoot: fill(32, 3),
    transactionsRoot: fill(32, 4),
    receiptsRoot: fill(32, 5),
    logsBloom: fill(256, 6),
    number: 77n,
    gasLimit: 1n << 62n,
    gasUsed: 123_456n,
    timestamp: 1_700_000_000n,
  });
  const sealed = sealHeader(header, crypto);
  const ref = createBlockHeader(
    {
      parentHash: header.parentHash,
      uncleHash: header.ommersHash,
      coinbase: header.coinbase,
      stateRoot: header.stateRoot,
      transactionsTrie: header.transactionsRoot,
      receiptTrie: header.receiptsRoot,
      logsBloom: header.logsBloom,
      difficulty: 0n,
      number: 77n,
      gasLimit: 1n << 62n,
      gasUsed: 123_456n,
      timestamp: 1_700_000_000n,
      extraData: new Uint8Array(0),
      mixHash: new Uint8Array(32),
      nonce: new Uint8Array(8),
      baseFeePerGas: 0n,
      withdrawalsRoot: EMPTY_ROOT_HASH,
      blobGasUsed: 0n,
      excessBlobGas: 0n,
      parentBeaconBlockRoot: new Uint8Array(32),
      requestsHash: crypto.sha256(new Uint8Array(0)),
    },
    { common: plainPrague, skipConsensusFormatValidation: true },
  );
  t.equal(bytesToHex(sealed.rlp), bytesToHex(ref.serialize()), 'same RLP (21 fields)');
  t.equal(bytesToHex(sealed.hash), bytesToHex(ref.hash()), 'same hash');
  t.same(decodeHeader(sealed.rlp), header, 'decode(encode(h)) = h');
  const back = decodeStoredHeader(encodeStoredHeader(sealed));
  t.same(back.hash, sealed.hash);
  t.same(back.rlp, sealed.rlp);
  t.equal(bytesToHex(encodeHeader(back.header)), bytesToHex(sealed.rlp));
  // A receipt of each kind as the receipts trie holds it: legacy bare, typed with its type byte.
  const r = { status: 1 as const, cumulativeGasUsed: 21_000n, logsBloom: fill(256, 0), logs: [] };
  t.equal(consensusReceipt({ ...r, type: 0 })[0]! >= 0xc0, true, 'legacy receipt: an RLP list');
  t.equal(consensusReceipt({ ...r, type: 2 })[0], 2, 'typed receipt: the type byte first');
  // The hand-rolled RLP of consensusReceipt against RLP.encode, over statuses, types, log shapes.
  let same = 0;
  for (let i = 0; i < 60; i++) {
    const rc = {
      type: i % 3,
      status: (i % 2) as 0 | 1,
      cumulativeGasUsed: BigInt(i) * 99_991n,
      logsBloom: fill(256, i),
      logs: Array.from({ length: i % 4 }, (_, j) => [fill(20, j), Array.from({ length: j }, () => fill(32, i)), fill(i * 3, 7)] as [Uint8Array, Uint8Array[], Uint8Array]),
    };
    const body = RLP.encode([rc.status === 1 ? Uint8Array.of(1) : new Uint8Array(0), rc.cumulativeGasUsed, rc.logsBloom, rc.logs]);
    const want = rc.type === 0 ? body : Uint8Array.from([rc.type, ...body]);
    if (bytesToHex(consensusReceipt(rc)) === bytesToHex(want)) same++;
  }
  t.equal(same, 60, 'consensusReceipt = type ‖ RLP.encode([status, cumulativeGas, bloom, logs])');
});

// --- on a node --------------------------------------------------------------------------------------

/** JSON-RPC over HTTP to the node's 8545-equivalent port (test/helpers/evm.ts). */
const call = (port: number, method: string, params: unknown[] = []) => rpcCall(`http://127.0.0.1:${port}/`, method, params);
const ok = (port: number, method: string, params: unknown[] = []) => rpcOk(`http://127.0.0.1:${port}/`, method, params);

async function waitFor<T>(what: string, f: () => Promise<T | null | undefined | false>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const qty = (n: bigint | number) => `0x${BigInt(n).toString(16)}`;

/**
 * Runtime: SSTORE(0, BLOCKHASH(NUMBER - 1)); LOG0(0, 0); return BLOCKHASH(calldata[0:32]).
 * 43 6001 90 03 40 6000 55 | 6000 6000 a0 | 6000 35 40 6000 52 6020 6000 f3 (26 bytes), behind
 * an init code that copies it out (CODECOPY from offset 12).
 */
const RUNTIME = '43600190034060005560006000a0600035406000526020' + '6000f3';
const INIT = `0x601a600c600039601a6000f3${RUNTIME}`;

t.test('an in-process node: header hashes, parent links, lookups and BLOCKHASH agree with the RPC', async (t) => {
  t.equal(RUNTIME.length / 2, 26);
  const tn: TestNode = await startTestNode();
  t.teardown(() => tn.close());
  const port = tn.node.evmRpcPort!;
  t.ok(port, 'the JSON-RPC server is on');
  const chainId = BigInt(await ok(port, 'eth_chainId'));
  const common = createEvmCommon({ chainId });
  const A = devAccounts().filter((a) => a.keyType === 'eth_secp256k1')[0]!;
  const sign = (nonce: bigint, o: { to?: Uint8Array; data: Uint8Array }): TypedTransaction =>
    createTx({ type: 2, nonce, to: o.to === undefined ? undefined : bytesToHex(o.to), data: o.data, gasLimit: 500_000n, maxFeePerGas: 0n, maxPriorityFeePerGas: 0n }, { common }).sign(A.privateKey);
  const receipt = (tx: TypedTransaction) => waitFor(`receipt of ${bytesToHex(tx.hash())}`, () => ok(port, 'eth_getTransactionReceipt', [bytesToHex(tx.hash())]));

  await waitFor('height 2', async () => BigInt(await ok(port, 'eth_blockNumber')) >= 2n);
  const nonce = BigInt(await ok(port, 'eth_getTransactionCount', [bytesToHex(A.address), 'latest']));
  const deploy = sign(nonce, { data: hexToBytes(INIT as `0x${string}`) });
  await ok(port, 'eth_sendRawTransaction', [bytesToHex(deploy.serialize())]);
  const r1 = await receipt(deploy);
  t.equal(r1.status, '0x1', 'deployed');
  const contract = createContractAddress(new Address(A.address), nonce).bytes;
  const poke = sign(nonce + 1n, { to: contract, data: new Uint8Array(0) });
  await ok(port, 'eth_sendRawTransaction', [bytesToHex(poke.serialize())]);
  const r2 = await receipt(poke);
  t.equal(r2.status, '0x1', 'the BLOCKHASH tx ran');
  const h2 = BigInt(r2.blockNumber);
  await waitFor('two more blocks', async () => BigInt(await ok(port, 'eth_blockNumber')) >= h2 + 2n);
  const latest = BigInt(await ok(port, 'eth_blockNumber'));

  // Every height: hash = keccak256(RLP(fields)), recomputed by @ethereumjs/block; parent links.
  const blocks = new Map<bigint, any>();
  for (let h = 1n; h <= latest; h++) blocks.set(h, await ok(port, 'eth_getBlockByNumber', [qty(h), false]));
  let prev: any;
  let hashOk = 0;
  let linkOk = 0;
  let minerOk = 0;
  for (const [h, b] of blocks) {
    const re = createBlockHeaderFromRPC(b, { common: plainPrague, skipConsensusFormatValidation: true });
    if (bytesToHex(re.hash()) === b.hash) hashOk++;
    else t.fail(`height ${h}: recomputed ${bytesToHex(re.hash())}, reported ${b.hash}`);
    if (h === 1n) t.equal(b.parentHash, `0x${'00'.repeat(32)}`, 'the first height has a zero parent');
    else if (b.parentHash === prev.hash) linkOk++;
    else t.fail(`height ${h}: parentHash ${b.parentHash} is not ${prev.hash}`);
    const proposer = tn.ctx.storage.blocks.loadBlock(h)!.header.proposerAddress;
    if (b.miner === bytesToHex(proposer)) minerOk++;
    prev = b;
  }
  t.equal(hashOk, Number(latest), `every hash recomputes (${latest} heights)`);
  t.equal(linkOk, Number(latest) - 1, 'every parentHash is the previous hash');
  t.equal(minerOk, Number(latest), 'miner is the proposer of the CometBFT block');
  const b2 = blocks.get(h2)!;
  t.not(b2.hash, bytesToHex(tn.ctx.storage.blocks.loadBlockMeta(h2)!.blockId.hash), 'the EVM hash is not the CometBFT hash');
  t.match(b2, { sha3Uncles: '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347', difficulty: '0x0', nonce: '0x0000000000000000', mixHash: `0x${'00'.repeat(32)}`, extraData: '0x', baseFeePerGas: '0x0' });
  t.match(b2, { withdrawalsRoot: bytesToHex(EMPTY_ROOT_HASH), blobGasUsed: '0x0', excessBlobGas: '0x0', parentBeaconBlockRoot: `0x${'00'.repeat(32)}`, requestsHash: '0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', withdrawals: [] });
  t.equal(b2.gasUsed, r2.cumulativeGasUsed, 'gasUsed of the block');
  t.same(b2.transactions, [bytesToHex(poke.hash())], 'the block holds the one tx');
  const blockRlp = RLP.encode([RLP.decode(createBlockHeaderFromRPC(b2, { common: plainPrague, skipConsensusFormatValidation: true }).serialize()) as Uint8Array[], [poke.serialize()], [], []]);
  t.equal(b2.size, qty(blockRlp.length), 'size = len(RLP([header, txs, uncles, withdrawals]))');
  const b2full = await ok(port, 'eth_getBlockByNumber', [qty(h2), true]);
  t.same({ ...b2full, transactions: b2full.transactions.map((x: { hash: string }) => x.hash) }, b2, 'with full txs: the same block, the same size, the same tx hashes');

  // Lookups by the EVM hash, both ways.
  const byHash = await ok(port, 'eth_getBlockByHash', [b2.hash, false]);
  t.same(byHash, b2, 'eth_getBlockByHash(EVM hash) is the same block');
  t.equal(await ok(port, 'eth_getBlockByHash', [bytesToHex(tn.ctx.storage.blocks.loadBlockMeta(h2)!.blockId.hash), false]), null, 'the CometBFT hash is not an EVM block hash');
  const hdr = await ok(port, 'eth_getHeaderByHash', [b2.hash]);
  t.equal(hdr.hash, b2.hash);
  t.notOk('transactions' in hdr || 'withdrawals' in hdr || 'size' in hdr, 'a header has no body fields');

  // The hashes in receipts, txs, logs, block receipts, getLogs and EIP-1898 objects.
  t.equal(r2.blockHash, b2.hash, 'receipt.blockHash');
  t.equal(r2.logs.length, 1);
  t.equal(r2.logs[0].blockHash, b2.hash, 'log.blockHash');
  t.equal((await ok(port, 'eth_getTransactionByHash', [bytesToHex(poke.hash())])).blockHash, b2.hash, 'tx.blockHash');
  const brs = await ok(port, 'eth_getBlockReceipts', [b2.hash]);
  t.same(brs.find((r: any) => r.transactionHash === bytesToHex(poke.hash())), r2, 'eth_getBlockReceipts by EVM hash');
  t.same(await ok(port, 'eth_getLogs', [{ blockHash: b2.hash }]), r2.logs, 'eth_getLogs by EVM block hash');
  t.equal(await ok(port, 'eth_getStorageAt', [bytesToHex(contract), '0x0', { blockHash: b2.hash }]), await ok(port, 'eth_getStorageAt', [bytesToHex(contract), '0x0', qty(h2)]), 'EIP-1898 {blockHash}');
  t.same((await call(port, 'eth_getBalance', [bytesToHex(A.address), { blockHash: `0x${'cd'.repeat(32)}` }])).error, { code: -32000, message: 'header for hash not found' });

  // The roots against independent computations.
  t.equal(b2.transactionsRoot, bytesToHex(await genTransactionsTrieRoot([poke])), 'transactionsRoot');
  const rtrie = await createMPT();
  for (const r of brs) {
    const logs = r.logs.map((l: any) => [hexToBytes(l.address), l.topics.map((x: string) => hexToBytes(x as `0x${string}`)), hexToBytes(l.data)]);
    const body = RLP.encode([r.status === '0x1' ? Uint8Array.of(1) : new Uint8Array(0), BigInt(r.cumulativeGasUsed), hexToBytes(r.logsBloom), logs]);
    await rtrie.put(RLP.encode(Number(r.transactionIndex)), Number(r.type) === 0 ? body : Uint8Array.from([Number(r.type), ...body]));
  }
  t.equal(b2.receiptsRoot, bytesToHex(rtrie.root()), 'receiptsRoot');
  const proof = await ok(port, 'eth_getProof', [bytesToHex(contract), ['0x0'], qty(h2)]);
  const acct = await verifyMPTWithMerkleProof(await createMPT({ useKeyHashing: true }), hexToBytes(b2.stateRoot), contract, proof.accountProof.map((x: string) => hexToBytes(x as `0x${string}`)));
  t.ok(acct, 'stateRoot is the state after the block: the contract proves against it');
  t.equal(blocks.get(h2 + 1n).transactionsRoot, bytesToHex(EMPTY_ROOT_HASH), 'an empty block has empty roots');

  // BLOCKHASH in the mined tx: blockhash(h2 - 1), stored in slot 0, is block h2-1's EVM hash.
  t.equal(await ok(port, 'eth_getStorageAt', [bytesToHex(contract), '0x0', qty(h2)]), blocks.get(h2 - 1n).hash, 'BLOCKHASH(n-1) in a tx = eth_getBlockByNumber(n-1).hash');
  // BLOCKHASH in eth_call at block L (the call runs as block L+1): heights L, L-1, 1 and the future.
  const L = latest;
  const callHash = (n: bigint) => ok(port, 'eth_call', [{ to: bytesToHex(contract), data: bytesToHex(word(n)) }, qty(L)]);
  for (const n of [L, L - 1n, 1n]) t.equal(await callHash(n), blocks.get(n).hash, `eth_call blockhash(${n}) = eth_getBlockByNumber(${n}).hash`);
  t.equal(await callHash(L + 1n), `0x${'00'.repeat(32)}`, 'blockhash of the running block is zero');

  // The keeper's reads (what debug_getRawHeader and newHeads will use), on the RPC thread's app.
  const keeper = (tn.ctx.app as unknown as ChainApp).evm!.keeper;
  const deps = evmRpcDeps({
    app: tn.ctx.app as never,
    keeper,
    blocks: tn.ctx.storage.blocks,
    mempool: { checkTx: async () => ({}) as never, reapMaxTxs: () => [] },
    consensus: { getState: () => ({ consensusParams: { block: { maxGas: -1n } } }) },
    p2p: { numPeers: () => ({ outbound: 0, inbound: 0 }) },
    gasCap: 0,
    evmTimeoutMs: 0,
  });
  const raw = rawHeader(deps, h2)!;
  t.equal(bytesToHex(keccak(hexToBytes(raw as `0x${string}`))), b2.hash, 'keccak256(raw header) = hash');
  t.equal(raw, bytesToHex(createBlockHeaderFromRPC(b2, { common: plainPrague, skipConsensusFormatValidation: true }).serialize()), 'raw header = @ethereumjs serialization');
  const { size: _s, transactions: _t, uncles: _u, withdrawals: _w, ...fields } = b2;
  t.same(headerObject(deps, h2), fields, 'headerObject (for newHeads) = the block without its body fields');
  t.equal(keeper.heightOfBlockHash(hexToBytes(b2.hash)), h2, 'EVM hash → height');
  t.equal(bytesToHex(keeper.blockHashAt(h2)!), b2.hash, 'height → EVM hash');
  t.equal(rawHeader(deps, latest + 1000n), undefined, 'no header above the head');
});

t.test('stored receipts and logs: the single-allocation encoders give RLP.encode\'s bytes, and decode back', async (t) => {
  const b = (n: number, fill: number) => new Uint8Array(n).fill(fill);
  const receipts: StoredReceipt[] = [
    { type: 0, status: 0, cumulativeGasUsed: 0n, gasUsed: 0n, logsBloom: b(256, 0), logs: [], contractAddress: undefined, ethHash: b(32, 1), cometHash: b(32, 2), from: b(20, 3), to: undefined, index: 0, firstLogIndex: 0, effectiveGasPrice: 0n, error: '' },
    { type: 2, status: 1, cumulativeGasUsed: 51_234n, gasUsed: 51_234n, logsBloom: b(256, 0x80), logs: [[b(20, 4), [b(32, 5), b(32, 6), b(32, 7)], b(32, 8)]], contractAddress: undefined, ethHash: b(32, 9), cometHash: b(32, 10), from: b(20, 11), to: b(20, 12), index: 127, firstLogIndex: 128, effectiveGasPrice: 10n ** 9n, error: '' },
    { type: 1, status: 1, cumulativeGasUsed: (1n << 64n) + 5n, gasUsed: 1n, logsBloom: b(256, 0xff), logs: [[b(20, 1), [], new Uint8Array(0)], [b(20, 2), [b(32, 0)], b(300, 0x7f)], [b(20, 3), [b(32, 1)], Uint8Array.of(0x05)]], contractAddress: b(20, 13), ethHash: b(32, 14), cometHash: b(32, 15), from: b(20, 16), to: undefined, index: 65_536, firstLogIndex: 70_000, effectiveGasPrice: 2n ** 255n, error: 'execution reverted: ünïcode and a long message '.repeat(3) },
    { type: 4, status: 0, cumulativeGasUsed: 127n, gasUsed: 128n, logsBloom: b(256, 1), logs: [], contractAddress: undefined, ethHash: b(32, 17), cometHash: b(32, 18), from: b(20, 19), to: b(20, 20), index: 1, firstLogIndex: 1, effectiveGasPrice: 55n, error: 'out of gas' },
  ];
  for (const [i, r] of receipts.entries()) {
    const fast = encodeReceipt(r);
    t.equal(bytesToHex(fast), bytesToHex(encodeReceiptRlp(r)), `receipt ${i}: same bytes`);
    t.same(decodeReceipt(fast), { ...r, logs: r.logs.map(([a, tp, d]) => [a, tp, d]) }, `receipt ${i}: decodes back`);
    const hs = receiptHashes(fast);
    t.same([bytesToHex(hs.ethHash), bytesToHex(hs.cometHash)], [bytesToHex(r.ethHash), bytesToHex(r.cometHash)], `receipt ${i}: receiptHashes reads the two hashes`);
    t.throws(() => receiptHashes(fast.subarray(0, 100)), /receipt: truncated/, `receipt ${i}: a cut receipt is refused`);
    r.logs.forEach(([address, topics, data], j) => {
      const l = { address, topics, data, txIndex: r.index + j };
      t.equal(bytesToHex(encodeLog(l)), bytesToHex(encodeLogRlp(l)), `receipt ${i} log ${j}: same bytes`);
      t.same(decodeLog(encodeLog(l)), l);
    });
  }
});
