/**
 * Receipts and logs as the EVM module stores them (evm_receipts, keys.ts), RLP-encoded, with the
 * fields the eth JSON-RPC needs to answer eth_getTransactionReceipt, eth_getBlockReceipts and
 * eth_getLogs without re-executing anything.
 */
import { RLP } from '@ethereumjs/rlp';
import { bigIntToUnpaddedBytes, bytesToBigInt } from '@ethereumjs/util';
import type { Bytes } from '../../bytes.js';
import { uintBytes } from '../../../evm/trie.js';
import { rlpList, rlpString } from './header.js';

export type StoredLog = [address: Bytes, topics: Bytes[], data: Bytes];

export interface StoredReceipt {
  /** EIP-2718 type: 0 legacy, 1, 2, 4. */
  type: number;
  status: 0 | 1;
  cumulativeGasUsed: bigint;
  gasUsed: bigint;
  /** 256 bytes. */
  logsBloom: Bytes;
  logs: StoredLog[];
  /** Created contract, or undefined. */
  contractAddress: Bytes | undefined;
  ethHash: Bytes;
  /** sha256 of the raw tx bytes: what CometBFT's `tx` finds it by. */
  cometHash: Bytes;
  from: Bytes;
  to: Bytes | undefined;
  /** Index among the block's EVM txs (the eth transactionIndex). */
  index: number;
  /** Index of the block's first log of this tx (eth logIndex of logs[0]). */
  firstLogIndex: number;
  effectiveGasPrice: bigint;
  /** The VM error of a failed tx (status 0), e.g. `revert`, `out of gas`. */
  error: string;
}

const n = (x: bigint | number) => bigIntToUnpaddedBytes(BigInt(x));
const num = (b: Uint8Array) => Number(bytesToBigInt(b));
const EMPTY = new Uint8Array(0);

const uint = (x: bigint | number) => rlpString(uintBytes(BigInt(x)));
const utf8Encoder = new TextEncoder();

/**
 * The stored receipt: RLP([type, status, cumulativeGasUsed, gasUsed, bloom, logs, contract,
 * ethHash, cometHash, from, to, index, firstLogIndex, effectiveGasPrice, error]), the same bytes
 * RLP.encode gives (test/unit/evm-header.test.ts compares them) written with header.ts's
 * single-allocation helpers: one receipt per tx in every block.
 */
export function encodeReceipt(r: StoredReceipt): Bytes {
  return rlpList([
    uint(r.type),
    uint(r.status),
    uint(r.cumulativeGasUsed),
    uint(r.gasUsed),
    rlpString(r.logsBloom),
    rlpList(r.logs.map(([a, t, d]) => rlpList([rlpString(a), rlpList(t.map(rlpString)), rlpString(d)]))),
    rlpString(r.contractAddress ?? EMPTY),
    rlpString(r.ethHash),
    rlpString(r.cometHash),
    rlpString(r.from),
    rlpString(r.to ?? EMPTY),
    uint(r.index),
    uint(r.firstLogIndex),
    uint(r.effectiveGasPrice),
    rlpString(utf8Encoder.encode(r.error)),
  ]);
}

/** encodeReceipt with @ethereumjs/rlp (the reference the fast encoder is tested against). */
export function encodeReceiptRlp(r: StoredReceipt): Bytes {
  return RLP.encode([
    n(r.type),
    n(r.status),
    n(r.cumulativeGasUsed),
    n(r.gasUsed),
    r.logsBloom,
    r.logs.map(([a, t, d]) => [a, t, d]),
    r.contractAddress ?? EMPTY,
    r.ethHash,
    r.cometHash,
    r.from,
    r.to ?? EMPTY,
    n(r.index),
    n(r.firstLogIndex),
    n(r.effectiveGasPrice),
    new TextEncoder().encode(r.error),
  ]);
}

export function decodeReceipt(b: Bytes): StoredReceipt {
  const f = RLP.decode(b) as unknown as Uint8Array[];
  const logs = (f[5] as unknown as Uint8Array[][]).map((l) => [l[0]!, l[1] as unknown as Uint8Array[], l[2]!] as StoredLog);
  return {
    type: num(f[0]!),
    status: num(f[1]!) === 1 ? 1 : 0,
    cumulativeGasUsed: bytesToBigInt(f[2]!),
    gasUsed: bytesToBigInt(f[3]!),
    logsBloom: f[4]!,
    logs,
    contractAddress: f[6]!.length === 0 ? undefined : f[6]!,
    ethHash: f[7]!,
    cometHash: f[8]!,
    from: f[9]!,
    to: f[10]!.length === 0 ? undefined : f[10]!,
    index: num(f[11]!),
    firstLogIndex: num(f[12]!),
    effectiveGasPrice: bytesToBigInt(f[13]!),
    error: new TextDecoder().decode(f[14]!),
  };
}

/** A receipt's two tx hashes, as receiptHashes reads them. */
export interface ReceiptHashes {
  ethHash: Bytes;
  cometHash: Bytes;
}

/** Where an RLP item at `o` begins its payload, and where it ends (both within `b`, else thrown). */
function rlpItem(b: Bytes, o: number): [start: number, end: number] {
  const p = b[o];
  if (p === undefined) throw new Error('receipt: truncated');
  let start: number;
  let len: number;
  if (p < 0x80) [start, len] = [o, 1];
  else if (p <= 0xb7) [start, len] = [o + 1, p - 0x80];
  else if (p < 0xc0 || p > 0xf7) {
    const ll = p < 0xc0 ? p - 0xb7 : p - 0xf7;
    len = 0;
    for (let i = 1; i <= ll; i++) len = len * 256 + (b[o + i] ?? 0);
    start = o + 1 + ll;
  } else [start, len] = [o + 1, p - 0xc0];
  if (start + len > b.length) throw new Error('receipt: truncated');
  return [start, start + len];
}

/**
 * The Ethereum and CometBFT hashes of a stored receipt (fields 7 and 8 of encodeReceipt's list),
 * read without decoding the rest: a block watcher's eth_getBlockByNumber(n, false) needs no more,
 * and decoding every receipt of a 2,000-tx block (logs and bloom included) held the RPC thread
 * ~45 ms. The hashes are views into `b`.
 */
export function receiptHashes(b: Bytes): ReceiptHashes {
  let [o, end] = rlpItem(b, 0);
  for (let i = 0; i < 7 && o < end; i++) o = rlpItem(b, o)[1];
  const [e0, e1] = rlpItem(b, o);
  const [c0, c1] = rlpItem(b, e1);
  if (c1 > end) throw new Error('receipt: truncated');
  return { ethHash: b.subarray(e0, e1), cometHash: b.subarray(c0, c1) };
}

export interface StoredBlock {
  txCount: number;
  gasUsed: bigint;
  logsBloom: Bytes;
  logCount: number;
}

export function encodeBlock(b: StoredBlock): Bytes {
  return RLP.encode([n(b.txCount), n(b.gasUsed), b.logsBloom, n(b.logCount)]);
}

export function decodeBlock(b: Bytes): StoredBlock {
  const f = RLP.decode(b) as Uint8Array[];
  return { txCount: num(f[0]!), gasUsed: bytesToBigInt(f[1]!), logsBloom: f[2]!, logCount: num(f[3]!) };
}

/** A log in the log index: the log and where it came from. */
export interface IndexedLog {
  address: Bytes;
  topics: Bytes[];
  data: Bytes;
  txIndex: number;
}

export function encodeLog(l: IndexedLog): Bytes {
  return rlpList([rlpString(l.address), rlpList(l.topics.map(rlpString)), rlpString(l.data), uint(l.txIndex)]);
}

/** encodeLog with @ethereumjs/rlp (the reference). */
export function encodeLogRlp(l: IndexedLog): Bytes {
  return RLP.encode([l.address, l.topics, l.data, n(l.txIndex)]);
}

export function decodeLog(b: Bytes): IndexedLog {
  const f = RLP.decode(b) as unknown as [Uint8Array, Uint8Array[], Uint8Array, Uint8Array];
  return { address: f[0], topics: f[1], data: f[2], txIndex: num(f[3]) };
}
