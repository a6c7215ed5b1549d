/**
 * The Ethereum header of each committed height: built by the keeper when the block's state root is
 * known (commitment(), the end of FinalizeBlock), written by commit() in the block's LMDB write
 * transaction, and the one source of the EVM block hash for the RPC and the BLOCKHASH opcode.
 *
 * The fields and their order are geth's Prague header (ethereum/go-ethereum:core/types/block.go
 * Header; the RLP encoding of gen_header_rlp.go), so hash = keccak256(RLP(header)) is what any
 * Ethereum tool recomputes from the JSON of eth_getBlockByNumber:
 *
 *   parentHash       the previous height's EVM hash (zero for the chain's first height)
 *   ommersHash       keccak256(RLP([])) — no uncles
 *   coinbase         the proposer's 20-byte address (FinalizeBlock's proposer_address)
 *   stateRoot        the state trie root after this block's txs (the module's commitment)
 *   transactionsRoot ordered trie over the block's EVM txs (RLP(index) → the typed envelope)
 *   receiptsRoot     ordered trie over their receipts (RLP(index) → the EIP-2718 receipt)
 *   logsBloom        the OR of the receipts' blooms
 *   difficulty 0, number = height, gasLimit (the block env's: consensus block.max_gas, 2^62 when
 *   unlimited), gasUsed, timestamp (block time, s), extraData empty,
 *   mixHash          zero: the PREVRANDAO the keeper's VM runs with (a BFT chain has no beacon
 *                    randomness; the executed block env and the header agree on zero)
 *   nonce            8 zero bytes
 *   baseFeePerGas    0 (no fee market)
 *   withdrawalsRoot  the empty trie root (no withdrawals)
 *   blobGasUsed 0, excessBlobGas 0 (blob txs are refused)
 *   parentBeaconBlockRoot zero (no beacon chain)
 *   requestsHash     sha256 of no requests (EIP-7685 with an empty list) = sha256("")
 *
 * Transactions and receipts roots are computed here (orderedTrieRoot) rather than through
 * @ethereumjs/mpt: the keys are known up front, so the trie is built bottom-up in one pass with
 * the crypto backend's keccak (geth's DeriveSha gives the same root, ethereum/go-ethereum:core/types/hashing.go).
 */
import { RLP } from '@ethereumjs/rlp';
import { bigIntToUnpaddedBytes, bytesToBigInt } from '@ethereumjs/util';
import type { CryptoBackend } from '../../../crypto/backend.js';
import type { Bytes } from '../../bytes.js';
import type { StoredReceipt } from './receipts.js';
import { allocBytes } from '../../../evm/slab.js';

const hexBytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));

/** keccak256(RLP("")): the root of an empty trie. */
export const EMPTY_ROOT_HASH = hexBytes('56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421');
/** keccak256(RLP([])): the ommers hash of a block without uncles. */
export const EMPTY_OMMERS_HASH = hexBytes('1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347');
/** sha256(""): EIP-7685's requests hash when there are no requests. */
export const EMPTY_REQUESTS_HASH = hexBytes('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
const ZERO32 = new Uint8Array(32);

/** An Ethereum (Prague) header, numbers as bigint, hashes and addresses as bytes. */
export interface EvmHeader {
  parentHash: Bytes;
  ommersHash: Bytes;
  coinbase: Bytes;
  stateRoot: Bytes;
  transactionsRoot: Bytes;
  receiptsRoot: Bytes;
  logsBloom: Bytes;
  difficulty: bigint;
  number: bigint;
  gasLimit: bigint;
  gasUsed: bigint;
  timestamp: bigint;
  extraData: Bytes;
  mixHash: Bytes;
  /** 8 bytes. */
  nonce: Bytes;
  baseFeePerGas: bigint;
  withdrawalsRoot: Bytes;
  blobGasUsed: bigint;
  excessBlobGas: bigint;
  parentBeaconBlockRoot: Bytes;
  requestsHash: Bytes;
}

/** A header with its hash and its RLP (what debug_getRawHeader returns). */
export interface SealedHeader {
  header: EvmHeader;
  hash: Bytes;
  rlp: Bytes;
}

/** What varies per height; everything else is a constant of chaind's chain. */
export interface HeaderInput {
  parentHash: Bytes;
  coinbase: Bytes;
  stateRoot: Bytes;
  transactionsRoot: Bytes;
  receiptsRoot: Bytes;
  logsBloom: Bytes;
  number: bigint;
  gasLimit: bigint;
  gasUsed: bigint;
  timestamp: bigint;
}

export function makeHeader(i: HeaderInput): EvmHeader {
  return {
    parentHash: i.parentHash,
    ommersHash: EMPTY_OMMERS_HASH,
    coinbase: i.coinbase,
    stateRoot: i.stateRoot,
    transactionsRoot: i.transactionsRoot,
    receiptsRoot: i.receiptsRoot,
    logsBloom: i.logsBloom,
    difficulty: 0n,
    number: i.number,
    gasLimit: i.gasLimit,
    gasUsed: i.gasUsed,
    timestamp: i.timestamp,
    extraData: new Uint8Array(0),
    mixHash: ZERO32,
    nonce: new Uint8Array(8),
    baseFeePerGas: 0n,
    withdrawalsRoot: EMPTY_ROOT_HASH,
    blobGasUsed: 0n,
    excessBlobGas: 0n,
    parentBeaconBlockRoot: ZERO32,
    requestsHash: EMPTY_REQUESTS_HASH,
  };
}

const q = (n: bigint) => bigIntToUnpaddedBytes(n);

/** RLP(header) in geth's field order (Prague: 21 fields). */
export function encodeHeader(h: EvmHeader): Bytes {
  return RLP.encode([
    h.parentHash,
    h.ommersHash,
    h.coinbase,
    h.stateRoot,
    h.transactionsRoot,
    h.receiptsRoot,
    h.logsBloom,
    q(h.difficulty),
    q(h.number),
    q(h.gasLimit),
    q(h.gasUsed),
    q(h.timestamp),
    h.extraData,
    h.mixHash,
    h.nonce,
    q(h.baseFeePerGas),
    h.withdrawalsRoot,
    q(h.blobGasUsed),
    q(h.excessBlobGas),
    h.parentBeaconBlockRoot,
    h.requestsHash,
  ]);
}

export function decodeHeader(rlp: Bytes): EvmHeader {
  const f = RLP.decode(rlp) as Uint8Array[];
  if (!Array.isArray(f) || f.length !== 21) throw new Error('evm header: want an RLP list of 21 fields');
  const n = (b: Uint8Array) => bytesToBigInt(b);
  return {
    parentHash: f[0]!,
    ommersHash: f[1]!,
    coinbase: f[2]!,
    stateRoot: f[3]!,
    transactionsRoot: f[4]!,
    receiptsRoot: f[5]!,
    logsBloom: f[6]!,
    difficulty: n(f[7]!),
    number: n(f[8]!),
    gasLimit: n(f[9]!),
    gasUsed: n(f[10]!),
    timestamp: n(f[11]!),
    extraData: f[12]!,
    mixHash: f[13]!,
    nonce: f[14]!,
    baseFeePerGas: n(f[15]!),
    withdrawalsRoot: f[16]!,
    blobGasUsed: n(f[17]!),
    excessBlobGas: n(f[18]!),
    parentBeaconBlockRoot: f[19]!,
    requestsHash: f[20]!,
  };
}

export function sealHeader(header: EvmHeader, crypto: Pick<CryptoBackend, 'keccak256'>): SealedHeader {
  const rlp = encodeHeader(header);
  return { header, rlp, hash: crypto.keccak256(rlp) };
}

/** The stored form (evm_receipts 0x06): hash(32) ‖ RLP(header). */
export function encodeStoredHeader(s: SealedHeader): Bytes {
  const out = new Uint8Array(32 + s.rlp.length);
  out.set(s.hash, 0);
  out.set(s.rlp, 32);
  return out;
}

export function decodeStoredHeader(v: Bytes): SealedHeader {
  const rlp = Uint8Array.from(v.subarray(32));
  return { hash: Uint8Array.from(v.subarray(0, 32)), rlp, header: decodeHeader(rlp) };
}

/** The EIP-2718 receipt as it goes into the receipts trie: type ‖ RLP([status, cumulativeGas, bloom, logs]). */
export function consensusReceipt(r: Pick<StoredReceipt, 'type' | 'status' | 'cumulativeGasUsed' | 'logsBloom' | 'logs'>): Bytes {
  // The RLP helpers below rather than RLP.encode: about half the CPU time for a block of receipts.
  const logs = rlpList(r.logs.map(([a, t, d]) => rlpList([rlpString(a), rlpList(t.map(rlpString)), rlpString(d)])));
  const body = rlpList([rlpString(r.status === 1 ? Uint8Array.of(1) : new Uint8Array(0)), rlpString(q(r.cumulativeGasUsed)), rlpString(r.logsBloom), logs]);
  if (r.type === 0) return body;
  const out = allocBytes(1 + body.length);
  out[0] = r.type;
  out.set(body, 1);
  return out;
}

// --- ordered trie root ------------------------------------------------------------------------------

/** Bytes of the RLP head of a payload of `len` bytes. */
function headSize(len: number): number {
  if (len <= 55) return 1;
  let n = 1;
  for (let l = len; l > 255; l = Math.floor(l / 256)) n++;
  return 1 + n;
}

/**
 * Writes the RLP head of a `len`-byte payload (`short`: 0x80 string, 0xc0 list) at the start of
 * `out`, whose length headSize(len) + len leaves the head's size; returns where the payload goes.
 * Written in place: a head array of its own per item was most of these helpers' allocations.
 */
function writeHead(out: Uint8Array, len: number, short: number): number {
  const h = headSize(len);
  if (h === 1) {
    out[0] = short + len;
    return 1;
  }
  out[0] = short + 55 + (h - 1);
  for (let i = h - 1, l = len; i >= 1; i--, l = Math.floor(l / 256)) out[i] = l & 0xff;
  return h;
}

/** RLP of a byte string (a single byte under 0x80 is its own encoding). */
export function rlpString(b: Uint8Array): Uint8Array {
  if (b.length === 1 && b[0]! < 0x80) return b;
  const out = allocBytes(headSize(b.length) + b.length);
  out.set(b, writeHead(out, b.length, 0x80));
  return out;
}

/** An RLP list of already-encoded items. */
export function rlpList(items: Uint8Array[]): Uint8Array {
  let len = 0;
  for (const it of items) len += it.length;
  const out = allocBytes(headSize(len) + len);
  let o = writeHead(out, len, 0xc0);
  for (const it of items) {
    out.set(it, o);
    o += it.length;
  }
  return out;
}

/** Hex-prefix (compact) encoding of a nibble path (yellow paper appendix C). */
function hexPrefix(nibbles: readonly number[], leaf: boolean): Uint8Array {
  const odd = nibbles.length % 2;
  const out = new Uint8Array(1 + (nibbles.length >> 1));
  const flag = (leaf ? 2 : 0) + odd;
  let i = 0;
  if (odd) out[0] = (flag << 4) | nibbles[i++]!;
  else out[0] = flag << 4;
  for (let o = 1; i < nibbles.length; o++, i += 2) out[o] = (nibbles[i]! << 4) | nibbles[i + 1]!;
  return out;
}

interface Entry {
  key: number[];
  value: Uint8Array;
}

const EMPTY_STRING_RLP = Uint8Array.of(0x80);

/**
 * The root of the trie that maps RLP(i) to values[i]: Ethereum's transactions and receipts root
 * (an empty list gives the empty trie root). Nodes under 32 bytes are embedded, as in any MPT.
 */
export function orderedTrieRoot(values: readonly Uint8Array[], keccak256: (d: Uint8Array) => Uint8Array): Uint8Array {
  if (values.length === 0) return EMPTY_ROOT_HASH;
  const entries: Entry[] = values.map((value, i) => {
    const k = RLP.encode(i);
    const key: number[] = [];
    for (const b of k) key.push(b >> 4, b & 0x0f);
    return { key, value };
  });
  entries.sort((a, b) => {
    const n = Math.min(a.key.length, b.key.length);
    for (let i = 0; i < n; i++) if (a.key[i] !== b.key[i]) return a.key[i]! - b.key[i]!;
    return a.key.length - b.key.length;
  });
  const ref = (node: Uint8Array) => (node.length < 32 ? node : rlpString(keccak256(node)));
  const build = (es: Entry[], depth: number): Uint8Array => {
    const first = es[0]!;
    if (es.length === 1) return rlpList([rlpString(hexPrefix(first.key.slice(depth), true)), rlpString(first.value)]);
    const last = es[es.length - 1]!;
    let cp = 0;
    while (depth + cp < first.key.length && depth + cp < last.key.length && first.key[depth + cp] === last.key[depth + cp]) cp++;
    if (cp > 0) return rlpList([rlpString(hexPrefix(first.key.slice(depth, depth + cp), false)), ref(build(es, depth + cp))]);
    const slots: Uint8Array[] = [];
    let value: Uint8Array = EMPTY_STRING_RLP;
    let i = 0;
    if (first.key.length === depth) {
      value = rlpString(first.value);
      i = 1;
    }
    for (let nib = 0; nib < 16; nib++) {
      const group: Entry[] = [];
      while (i < es.length && es[i]!.key[depth] === nib) group.push(es[i++]!);
      slots.push(group.length === 0 ? EMPTY_STRING_RLP : ref(build(group, depth + 1)));
    }
    slots.push(value);
    return rlpList(slots);
  };
  return keccak256(build(entries, 0));
}

// --- BLOCKHASH ------------------------------------------------------------------------------------

/**
 * The `blockchain` @ethereumjs/vm's BLOCKHASH reads (EVMMockBlockchainInterface: getBlock(n).hash()),
 * answering the stored EVM hash of height n (zero when there is none). The opcode itself keeps to
 * the 256 heights below the running block.
 */
export function blockHashChain(hashAt: (n: bigint) => Bytes | undefined) {
  const bc = {
    async getBlock(n: number | bigint) {
      const h = hashAt(BigInt(n)) ?? ZERO32;
      return { hash: () => h };
    },
    async putBlock() {},
    shallowCopy: () => bc,
  };
  return bc;
}
