/**
 * The EVM view of chaind's blocks, transactions and receipts, in geth's JSON shapes
 * (ethereum/go-ethereum:internal/ethapi/api.go RPCMarshalHeader / RPCMarshalBlock /
 * newRPCTransaction, core/types/gen_receipt_json.go, gen_log_json.go).
 *
 * Numbers and hashes. EVM block number n is CometBFT height n. The EVM block hash is
 * keccak256(RLP(Ethereum header)) of the header the EVM module built and stored when it committed
 * the height (src/app/modules/evm/header.ts); every field of a block or header object comes from
 * that stored header, so `hash` is what any client recomputes from the JSON, `parentHash` is the
 * previous height's EVM hash and BLOCKHASH returns the same hashes. EVM hash → height is the
 * module's index (heightOfBlockHash), height → EVM hash its header; the CometBFT block hash is the
 * block store's (block_id.hash) for the same height. A height committed before the module kept
 * headers has none: it is shown as before, with the CometBFT hash as its hash (legacyBlockJson).
 * A transaction's eth hash is keccak256 of its raw envelope; its CometBFT hash is sha256 of the
 * same bytes; the keeper maps one to the other (ethHashOf) and the receipt carries both.
 */
import { genTransactionsTrieRoot } from '@ethereumjs/block';
import { RLP } from '@ethereumjs/rlp';
import { type TypedTransaction, TransactionType } from '@ethereumjs/tx';
import { createMPT } from '@ethereumjs/mpt';
import { bigIntToUnpaddedBytes } from '@ethereumjs/util';
import type { StoredReceipt } from '../../app/modules/evm/receipts.js';
import type { SealedHeader } from '../../app/modules/evm/header.js';
import type { Block, BlockMeta } from '../../types/block.js';
import type { EvmRpcDeps } from './deps.js';
import { bytesEqual } from '../../crypto/bytes.js';
import { hex, qty, ZERO_HASH } from './format.js';

export const EMPTY_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';
export const EMPTY_UNCLES = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';
const ZERO_BLOOM = hex(new Uint8Array(256));
const ZERO_ADDRESS = hex(new Uint8Array(20));

export interface LoadedBlock {
  height: bigint;
  block: Block;
  meta: BlockMeta;
  /** The stored Ethereum header (absent for a height committed before the module kept headers). */
  header: SealedHeader | undefined;
  /** The EVM block hash, 0x hex: keccak256(RLP(header)), or the CometBFT hash without a header. */
  hash: string;
}

export function loadBlock(deps: EvmRpcDeps, height: bigint): LoadedBlock | undefined {
  if (height < deps.blocks.base() || height > deps.lastHeight()) return undefined;
  const block = deps.blocks.loadBlock(height);
  const meta = deps.blocks.loadBlockMeta(height);
  if (block === null || meta === null) return undefined;
  const header = deps.keeper.headerAt(height);
  return { height, block, meta, header, hash: hex(header?.hash ?? meta.blockId.hash) };
}

/**
 * The height of an EVM block hash (eth_getBlockByHash, EIP-1898 `blockHash`, eth_getLogs
 * `blockHash`), or null. A CometBFT hash is accepted only for a height without an EVM header.
 */
export function heightByBlockHash(deps: EvmRpcDeps, hash: Uint8Array): bigint | null {
  const h = deps.keeper.heightOfBlockHash(hash);
  if (h !== undefined) return h;
  const legacy = deps.blocks.heightByHash(hash);
  return legacy !== null && deps.keeper.headerAt(legacy) === undefined ? legacy : null;
}

/** geth's RPCMarshalHeader of a stored header (ethereum/go-ethereum:internal/ethapi/api.go). */
export function headerFields(s: SealedHeader): Record<string, unknown> {
  const h = s.header;
  return {
    number: qty(h.number),
    hash: hex(s.hash),
    parentHash: hex(h.parentHash),
    nonce: hex(h.nonce),
    mixHash: hex(h.mixHash),
    sha3Uncles: hex(h.ommersHash),
    logsBloom: hex(h.logsBloom),
    stateRoot: hex(h.stateRoot),
    miner: hex(h.coinbase),
    difficulty: qty(h.difficulty),
    extraData: hex(h.extraData),
    gasLimit: qty(h.gasLimit),
    gasUsed: qty(h.gasUsed),
    timestamp: qty(h.timestamp),
    transactionsRoot: hex(h.transactionsRoot),
    receiptsRoot: hex(h.receiptsRoot),
    baseFeePerGas: qty(h.baseFeePerGas),
    withdrawalsRoot: hex(h.withdrawalsRoot),
    blobGasUsed: qty(h.blobGasUsed),
    excessBlobGas: qty(h.excessBlobGas),
    parentBeaconBlockRoot: hex(h.parentBeaconBlockRoot),
    requestsHash: hex(h.requestsHash),
  };
}

/**
 * The header object of a committed height as eth_getHeaderByNumber and the `newHeads`
 * subscription give it, or undefined (no such height, or no EVM header stored for it).
 */
export function headerObject(deps: EvmRpcDeps, height: bigint): Record<string, unknown> | undefined {
  const s = deps.keeper.headerAt(height);
  return s === undefined ? undefined : headerFields(s);
}

/** The header's RLP as debug_getRawHeader returns it (0x hex), or undefined. */
export function rawHeader(deps: EvmRpcDeps, height: bigint): string | undefined {
  const s = deps.keeper.headerAt(height);
  return s === undefined ? undefined : hex(s.rlp);
}

/** Unix seconds of a block. */
export const blockTime = (b: LoadedBlock) => b.block.header.time / 1_000_000_000n;

/** The block's EVM txs in execution order, each with its receipt and its envelope as carried in the block. */
export function blockTxRaws(deps: EvmRpcDeps, b: LoadedBlock): { receipt: StoredReceipt; raw: Uint8Array | undefined }[] {
  const receipts = deps.keeper.blockReceipts(b.height);
  const raws = envelopesOf(deps, b, receipts);
  return receipts.map((receipt, i) => ({ receipt, raw: raws[i] }));
}

/**
 * The envelope of each receipt's tx (by its CometBFT hash) as the block carries it. The block runs
 * its EVM txs in block order, so the receipts' txs come in the order of the block's txs: one walk
 * hashes each block tx once and compares bytes. Should a receipt not be found ahead of the last
 * one (none is, as blocks are executed), the rest are looked up in a map of all the block's txs.
 */
function envelopesOf(deps: EvmRpcDeps, b: LoadedBlock, receipts: readonly { cometHash: Uint8Array }[]): (Uint8Array | undefined)[] {
  const txs = b.block.data.txs;
  const out: (Uint8Array | undefined)[] = new Array(receipts.length);
  let next = 0;
  let byComet: Map<string, Uint8Array> | undefined;
  for (let i = 0; i < receipts.length; i++) {
    const want = receipts[i]!.cometHash;
    if (byComet === undefined) {
      while (next < txs.length && !bytesEqual(deps.keeper.crypto.sha256(txs[next]!), want)) next++;
      if (next < txs.length) {
        out[i] = txs[next++];
        continue;
      }
      byComet = new Map();
      for (const raw of txs) byComet.set(hex(deps.keeper.crypto.sha256(raw)), raw);
    }
    out[i] = byComet.get(hex(want));
  }
  return out;
}

/** The block's EVM txs in execution order, each with its receipt and decoded tx. */
export function blockTxs(deps: EvmRpcDeps, b: LoadedBlock): { receipt: StoredReceipt; tx: TypedTransaction | undefined }[] {
  return blockTxRaws(deps, b).map(({ receipt, raw }) => ({ receipt, tx: decodeRaw(deps, raw) }));
}

function decodeRaw(deps: EvmRpcDeps, raw: Uint8Array | undefined): TypedTransaction | undefined {
  if (raw === undefined) return undefined;
  try {
    return deps.keeper.decode(raw).tx;
  } catch {
    return undefined;
  }
}

/** The block's gas limit: consensus `block.max_gas`, or 2^62 when unlimited (the keeper's env). */
export function gasLimitOf(deps: EvmRpcDeps): bigint {
  const g = deps.blockMaxGas();
  return g > 0n ? g : 1n << 62n;
}

/** RPCMarshalBlock: the header fields, then size, transactions, uncles and withdrawals. */
export async function blockJson(deps: EvmRpcDeps, b: LoadedBlock, full: boolean): Promise<Record<string, unknown>> {
  if (b.header === undefined) return legacyBlockJson(deps, b, full);
  // The size comes from the envelopes as the block carries them, so a block watcher's
  // eth_getBlockByNumber(n, false) decodes no tx (a 400-tx block's decode and re-encode cost the
  // RPC thread ~30 ms) and no receipt either: the hashes are read out of each (receiptHashes).
  if (!full) {
    const hashes = deps.keeper.blockTxHashes(b.height);
    return blockObject(b.header, envelopesOf(deps, b, hashes), hashes.map((h) => hex(h.ethHash)));
  }
  const rows = blockTxRaws(deps, b);
  return blockObject(
    b.header,
    rows.map((r) => r.raw),
    rows.map((r) => {
      const tx = decodeRaw(deps, r.raw);
      return tx ? txJson(tx, r.receipt, b) : hex(r.receipt.ethHash);
    }),
  );
}

function blockObject(header: SealedHeader, envelopes: (Uint8Array | undefined)[], transactions: unknown[]): Record<string, unknown> {
  return {
    ...headerFields(header),
    size: qty(blockSize(header.rlp, envelopes)),
    transactions,
    uncles: [],
    withdrawals: [],
  };
}

function rlpHeadLen(len: number): number {
  if (len <= 55) return 1;
  let n = 1;
  for (let l = len; l > 255; l = Math.floor(l / 256)) n++;
  return 1 + n;
}

/** len(RLP([header, txs, uncles, withdrawals])), as geth's Block.Size. */
function blockSize(headerRlp: Uint8Array, envelopes: (Uint8Array | undefined)[]): number {
  let txsLen = 0;
  for (const enc of envelopes) {
    if (enc === undefined || enc.length === 0) continue;
    // A legacy tx (an RLP list, first byte >= 0xc0) is itself in the block; a typed one (first
    // byte its type, < 0x80) is an RLP string holding its envelope.
    txsLen += enc[0]! >= 0xc0 ? enc.length : rlpHeadLen(enc.length) + enc.length;
  }
  const body = headerRlp.length + rlpHeadLen(txsLen) + txsLen + 1 + 1;
  return rlpHeadLen(body) + body;
}

/** A height without a stored EVM header: the view as computed before headers were kept. */
async function legacyBlockJson(deps: EvmRpcDeps, b: LoadedBlock, full: boolean): Promise<Record<string, unknown>> {
  const txs = blockTxs(deps, b);
  const summary = deps.keeper.blockSummary(b.height);
  const hash = hex(b.meta.blockId.hash);
  const parent = b.block.header.lastBlockId.hash;
  const stateRoot = deps.keeper.stateRootAt(b.height);
  const decoded = txs.map((t) => t.tx).filter((t): t is TypedTransaction => t !== undefined);
  return {
    number: qty(b.height),
    hash,
    parentHash: parent.length === 32 ? hex(parent) : ZERO_HASH,
    nonce: '0x0000000000000000',
    mixHash: ZERO_HASH,
    sha3Uncles: EMPTY_UNCLES,
    logsBloom: summary ? hex(summary.logsBloom) : ZERO_BLOOM,
    stateRoot: stateRoot ? hex(stateRoot) : EMPTY_ROOT,
    miner: b.block.header.proposerAddress.length === 20 ? hex(b.block.header.proposerAddress) : ZERO_ADDRESS,
    difficulty: '0x0',
    extraData: '0x',
    gasLimit: qty(gasLimitOf(deps)),
    gasUsed: qty(summary?.gasUsed ?? 0n),
    timestamp: qty(blockTime(b)),
    transactionsRoot: decoded.length === 0 ? EMPTY_ROOT : hex(await genTransactionsTrieRoot(decoded)),
    receiptsRoot: txs.length === 0 ? EMPTY_ROOT : hex(await receiptsRoot(txs.map((t) => t.receipt))),
    baseFeePerGas: '0x0',
    size: qty(b.meta.blockSize),
    transactions: txs.map((t) => (full && t.tx ? txJson(t.tx, t.receipt, b) : hex(t.receipt.ethHash))),
    uncles: [],
  };
}

/** The receipts trie root (EIP-2718 receipt encodings under RLP(index)), as geth's DeriveSha. */
async function receiptsRoot(receipts: StoredReceipt[]): Promise<Uint8Array> {
  const trie = await createMPT();
  for (const r of receipts) {
    const body = RLP.encode([r.status === 1 ? Uint8Array.of(1) : new Uint8Array(0), bigIntToUnpaddedBytes(r.cumulativeGasUsed), r.logsBloom, r.logs]);
    const enc = r.type === 0 ? body : Uint8Array.from([r.type, ...body]);
    await trie.put(RLP.encode(r.index), enc);
  }
  return trie.root();
}

/** newRPCTransaction: a mined tx (with its block), or a pending one (block fields null). */
export function txJson(tx: TypedTransaction, receipt: StoredReceipt | undefined, b: LoadedBlock | undefined): Record<string, unknown> {
  const t = tx as unknown as { gasPrice?: bigint; maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint; chainId?: bigint; accessList?: [Uint8Array, Uint8Array[]][] };
  const out: Record<string, unknown> = {
    blockHash: b ? b.hash : null,
    blockNumber: b ? qty(b.height) : null,
    blockTimestamp: b ? qty(blockTime(b)) : null,
    from: hex(receipt?.from ?? tx.getSenderAddress().bytes),
    gas: qty(tx.gasLimit),
    gasPrice: qty(receipt?.effectiveGasPrice ?? t.gasPrice ?? t.maxFeePerGas ?? 0n),
  };
  if (t.maxFeePerGas !== undefined) {
    out.maxFeePerGas = qty(t.maxFeePerGas);
    out.maxPriorityFeePerGas = qty(t.maxPriorityFeePerGas ?? 0n);
  }
  out.hash = hex(tx.hash());
  out.input = hex(tx.data);
  out.nonce = qty(tx.nonce);
  out.to = tx.to ? hex(tx.to.bytes) : null;
  out.transactionIndex = receipt && b ? qty(receipt.index) : null;
  out.value = qty(tx.value);
  out.type = qty(tx.type);
  if (tx.type !== TransactionType.Legacy) {
    out.accessList = (t.accessList ?? []).map(([a, keys]) => ({ address: hex(a), storageKeys: keys.map(hex) }));
    out.chainId = qty(t.chainId ?? 0n);
  } else if ((tx.v ?? 0n) >= 35n) {
    out.chainId = qty(((tx.v ?? 35n) - 35n) / 2n);
  }
  if (tx.type === TransactionType.EOACodeEIP7702) {
    const auths = (tx as unknown as { authorizationList: Uint8Array[][] }).authorizationList ?? [];
    out.authorizationList = auths.map(([chainId, address, nonce, yParity, r, s]) => ({
      chainId: qty(bytesNum(chainId!)),
      address: hex(address!),
      nonce: qty(bytesNum(nonce!)),
      yParity: qty(bytesNum(yParity!)),
      r: qty(bytesNum(r!)),
      s: qty(bytesNum(s!)),
    }));
  }
  out.v = qty(tx.v ?? 0n);
  out.r = qty(tx.r ?? 0n);
  out.s = qty(tx.s ?? 0n);
  if (tx.type !== TransactionType.Legacy) out.yParity = qty(tx.v ?? 0n);
  return out;
}

const bytesNum = (b: Uint8Array) => (b.length === 0 ? 0n : BigInt(hex(b)));

/** MarshalReceipt, with logs as the log index has them (block-wide logIndex). */
export function receiptJson(r: StoredReceipt, b: LoadedBlock): Record<string, unknown> {
  const blockHash = b.hash;
  const blockNumber = qty(b.height);
  const txHash = hex(r.ethHash);
  return {
    blockHash,
    blockNumber,
    transactionHash: txHash,
    transactionIndex: qty(r.index),
    from: hex(r.from),
    to: r.to ? hex(r.to) : null,
    gasUsed: qty(r.gasUsed),
    cumulativeGasUsed: qty(r.cumulativeGasUsed),
    contractAddress: r.contractAddress ? hex(r.contractAddress) : null,
    logs: r.logs.map(([address, topics, data], i) => ({
      address: hex(address),
      topics: topics.map(hex),
      data: hex(data),
      blockNumber,
      transactionHash: txHash,
      transactionIndex: qty(r.index),
      blockHash,
      blockTimestamp: qty(blockTime(b)),
      logIndex: qty(r.firstLogIndex + i),
      removed: false,
    })),
    logsBloom: hex(r.logsBloom),
    type: qty(r.type),
    effectiveGasPrice: qty(r.effectiveGasPrice),
    status: qty(r.status),
  };
}

/** RPCMarshalHeader: the block without size, transactions, uncles and withdrawals. */
export function headerJson(block: Record<string, unknown>): Record<string, unknown> {
  const { size: _size, transactions: _txs, uncles: _uncles, withdrawals: _w, ...header } = block;
  return header;
}
