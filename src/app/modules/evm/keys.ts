/**
 * Where the EVM module keeps things.
 *
 * 1. The module's store (store key `evm`) in the app's versioned state, written through the
 *    Context like every module's state, so history, pruning and the LtHash cover it unchanged:
 *
 *      0x00                       → params, JSON ({ chain_id })
 *      0x01 address(20)           → code hash (32 bytes); absent = no code
 *      0x02 codeHash(32)          → code
 *      0x03 address(20) slot(32)  → slot value, leading zeros stripped (absent = zero)
 *
 *    Nonce and balance are NOT here: the nonce is the auth account's sequence and the balance the
 *    bank balance of `achain` (one account model; docs/EVM.md).
 *
 * 2. `evm_trie`, a named LMDB database of the module's own, written only in commit():
 *
 *      0x04 nodeHash(32)          → trie node (src/evm/trie.ts, content-addressed, shared by tries)
 *      0x10 address(20)           → the account's latest storage root (absent = empty root)
 *      0x11 u64be(height)         → the state root after that height
 *      0x12                       → u64be(height) ‖ state root of the last committed height
 *      0x13                       → the EVM chain id (u64be), for decoding before any state is read
 *
 * 3. `evm_receipts`, written only in commit():
 *
 *      0x01 ethTxHash(32)         → u64be(height) ‖ u32be(index in the block's EVM txs)
 *      0x02 u64be(height) u32be(i)→ receipt, RLP (receipts.ts)
 *      0x03 u64be(height)         → block summary, RLP [txCount, gasUsed, logsBloom, firstLogIndex]
 *      0x04 u64be(height) u32be(logIndex) → log, RLP [address, topics[], data, txIndex]
 *      0x05 cometTxHash(32)       → ethTxHash(32)
 *      0x06 u64be(height)         → EVM block hash(32) ‖ RLP(Ethereum header) (header.ts)
 *      0x07 evmBlockHash(32)      → u64be(height)
 *
 *    A receipt by eth hash is two gets; a block's receipts or logs are one prefix range.
 */
import { concatBytes, u64be, type Bytes } from '../../bytes.js';

export const EVM_MODULE_NAME = 'evm';
export const EVM_STORE_KEY = 'evm';
export const EVM_TRIE_DB = 'evm_trie';
export const EVM_RECEIPTS_DB = 'evm_receipts';

export const PARAMS_KEY = Uint8Array.of(0x00);
export const CODE_HASH_PREFIX = 0x01;
export const CODE_PREFIX = 0x02;
export const STORAGE_PREFIX = 0x03;

export function codeHashKey(addr: Bytes): Bytes {
  return concatBytes(Uint8Array.of(CODE_HASH_PREFIX), addr);
}
export function codeKey(hash: Bytes): Bytes {
  return concatBytes(Uint8Array.of(CODE_PREFIX), hash);
}
export function storagePrefix(addr: Bytes): Bytes {
  return concatBytes(Uint8Array.of(STORAGE_PREFIX), addr);
}
export function slotKey(addr: Bytes, slot: Bytes): Bytes {
  return concatBytes(Uint8Array.of(STORAGE_PREFIX), addr, slot);
}

// evm_trie
export const STORAGE_ROOT_PREFIX = 0x10;
export const HEIGHT_ROOT_PREFIX = 0x11;
export const LATEST_ROOT_KEY = Uint8Array.of(0x12);
export const CHAIN_ID_KEY = Uint8Array.of(0x13);

export function storageRootKey(addr: Bytes): Bytes {
  return concatBytes(Uint8Array.of(STORAGE_ROOT_PREFIX), addr);
}
export function heightRootKey(h: bigint): Bytes {
  return concatBytes(Uint8Array.of(HEIGHT_ROOT_PREFIX), u64be(h));
}

// evm_receipts
export const TX_LOOKUP_PREFIX = 0x01;
export const RECEIPT_PREFIX = 0x02;
export const BLOCK_PREFIX = 0x03;
export const LOG_PREFIX = 0x04;
export const COMET_HASH_PREFIX = 0x05;
export const HEADER_PREFIX = 0x06;
export const BLOCK_HASH_PREFIX = 0x07;

function u32be(n: number): Bytes {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n);
  return b;
}

export function txLookupKey(ethHash: Bytes): Bytes {
  return concatBytes(Uint8Array.of(TX_LOOKUP_PREFIX), ethHash);
}
export function txPosition(height: bigint, index: number): Bytes {
  return concatBytes(u64be(height), u32be(index));
}
export function receiptKey(height: bigint, index: number): Bytes {
  return concatBytes(Uint8Array.of(RECEIPT_PREFIX), u64be(height), u32be(index));
}
export function receiptsPrefix(height: bigint): Bytes {
  return concatBytes(Uint8Array.of(RECEIPT_PREFIX), u64be(height));
}
export function blockKey(height: bigint): Bytes {
  return concatBytes(Uint8Array.of(BLOCK_PREFIX), u64be(height));
}
export function logKey(height: bigint, logIndex: number): Bytes {
  return concatBytes(Uint8Array.of(LOG_PREFIX), u64be(height), u32be(logIndex));
}
export function logsPrefix(height: bigint): Bytes {
  return concatBytes(Uint8Array.of(LOG_PREFIX), u64be(height));
}
export function cometHashKey(cometHash: Bytes): Bytes {
  return concatBytes(Uint8Array.of(COMET_HASH_PREFIX), cometHash);
}
export function headerKey(height: bigint): Bytes {
  return concatBytes(Uint8Array.of(HEADER_PREFIX), u64be(height));
}
export function blockHashKey(evmHash: Bytes): Bytes {
  return concatBytes(Uint8Array.of(BLOCK_HASH_PREFIX), evmHash);
}
