/**
 * The EVM view of chaind's blocks, transactions and receipts, in geth's JSON shapes
 * (ethereum/go-ethereum:internal/ethapi/api.go RPCMarshalHeader / RPCMarshalBlock /
 * newRPCTransaction, core/types/gen_receipt_json.go, gen_log_json.go).
 *
 * Numbers and hashes. EVM block number n is CometBFT height n. The EVM block hash is the CometBFT
 * block hash (the header's Merkle hash, what `block?height=n` reports as block_id.hash), so
 * `parentHash` is the header's last_block_id.hash and a lookup by hash is the block store's
 * hash index, in both directions. It is not keccak256(RLP(header)): a keccak-of-RLP hash needs an
 * index written at commit (evm hash → height) and BLOCKHASH wired to it; until the EVM module
 * keeps that index, the CometBFT hash is the one consistent, lookup-able hash (see docs/EVM.md).
 * A transaction's eth hash is keccak256 of its raw envelope; its CometBFT hash is sha256 of the
 * same bytes; the keeper maps one to the other (ethHashOf) and the receipt carries both.
 */
import { genTransactionsTrieRoot } from '@ethereumjs/block';
import { RLP } from '@ethereumjs/rlp';
import { type TypedTransaction, TransactionType } from '@ethereumjs/tx';
import { createMPT } from '@ethereumjs/mpt';
import { bigIntToUnpaddedBytes } from '@ethereumjs/util';
import type { StoredReceipt } from '../../app/modules/evm/receipts.js';
import type { Block, BlockMeta } from '../../types/block.js';
import type { EvmRpcDeps } from './deps.js';
import { hex, qty, ZERO_HASH } from './format.js';

export const EMPTY_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';
export const EMPTY_UNCLES = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';
const ZERO_BLOOM = hex(new Uint8Array(256));
const ZERO_ADDRESS = hex(new Uint8Array(20));

export interface LoadedBlock {
  height: bigint;
  block: Block;
  meta: BlockMeta;
}

export function loadBlock(deps: EvmRpcDeps, height: bigint): LoadedBlock | undefined {
  if (height < deps.blocks.base() || height > deps.lastHeight()) return undefined;
  const block = deps.blocks.loadBlock(height);
  const meta = deps.blocks.loadBlockMeta(height);
  return block === null || meta === null ? undefined : { height, block, meta };
}

/** Unix seconds of a block. */
export const blockTime = (b: LoadedBlock) => b.block.header.time / 1_000_000_000n;

/** The block's EVM txs in execution order, each with its receipt and decoded tx. */
export function blockTxs(deps: EvmRpcDeps, b: LoadedBlock): { receipt: StoredReceipt; tx: TypedTransaction | undefined }[] {
  const receipts = deps.keeper.blockReceipts(b.height);
  if (receipts.length === 0) return [];
  const byComet = new Map<string, Uint8Array>();
  for (const raw of b.block.data.txs) byComet.set(hex(deps.keeper.crypto.sha256(raw)), raw);
  return receipts.map((receipt) => ({ receipt, tx: decodeRaw(deps, byComet.get(hex(receipt.cometHash))) }));
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

/** RPCMarshalBlock: the header fields, then size, transactions and uncles. */
export async function blockJson(deps: EvmRpcDeps, b: LoadedBlock, full: boolean): Promise<Record<string, unknown>> {
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
    blockHash: b ? hex(b.meta.blockId.hash) : null,
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
  const blockHash = hex(b.meta.blockId.hash);
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

/** RPCMarshalHeader: the block without size, transactions and uncles. */
export function headerJson(block: Record<string, unknown>): Record<string, unknown> {
  const { size: _size, transactions: _txs, uncles: _uncles, ...header } = block;
  return header;
}
