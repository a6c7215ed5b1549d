/**
 * Transaction admission helpers: decode a raw typed envelope (EIP-2718) and recover its sender
 * through chaind's crypto backend, many at a time.
 *
 * Accepted: legacy (with or without EIP-155), EIP-2930 (0x01), EIP-1559 (0x02), EIP-7702 (0x04).
 * Refused: EIP-4844 blob txs (0x03; a CometBFT chain has no blob sidecars or KZG setup), and any
 * other type byte.
 *
 * Recovery: 1 native secp256k1 recovery (~66 µs) instead of @noble's (~1,600 µs). The recovered
 * 64-byte public key is stored in the tx's own cache (`tx.cache.senderPubKey`, which
 * @ethereumjs/tx's getSenderPublicKey consults first; ethereumjs/ethereumjs-monorepo:
 * packages/tx/src/capabilities/legacy.ts), so runTx does not recover again: what remains there is
 * one keccak of the public key to derive the address (~1 µs native).
 */
import type { Common } from '@ethereumjs/common';
import { type TypedTransaction, TransactionType, createTxFromRLP } from '@ethereumjs/tx';
import { bigIntToUnpaddedBytes } from '@ethereumjs/util';
import { type CryptoBackend, getCryptoBackend } from '../crypto/backend.js';
import { SECP256K1_N_DIV_2, signature64 } from './common.js';

export type EvmTxErrorCode =
  | 'EVM_TX_EMPTY'
  | 'EVM_TX_BLOB_UNSUPPORTED'
  | 'EVM_TX_UNKNOWN_TYPE'
  | 'EVM_TX_MALFORMED'
  | 'EVM_TX_UNSIGNED'
  | 'EVM_TX_HIGH_S'
  | 'EVM_TX_BAD_SIGNATURE';

export class EvmTxError extends Error {
  override readonly name = 'EvmTxError';
  constructor(
    message: string,
    readonly code: EvmTxErrorCode,
  ) {
    super(message);
  }
}

const NO_PARAMS = {};

/**
 * The Common every tx decoded against `common` shares, while `common`'s parameters stay as they
 * were (its parameter cache object is the same one). The tx library gives each tx a copy of the
 * Common and rebuilds that copy's parameter cache (updateParams, even with no parameters): a walk
 * over every hardfork's parameter tables per decoded tx, ~40 % of a decode
 * (ethereumjs/ethereumjs-monorepo:packages/tx/src/util/internal.ts sharedConstructor). The shared
 * copy answers copy() with itself and an empty updateParams with nothing, which is what the
 * rebuild yielded: the same parameters, hardfork and EIPs as `common` at the time. The hardfork is
 * fixed (Prague from genesis, createEvmCommon), so runTx's setHardfork to the block's is a no-op.
 */
const txCommons = new WeakMap<Common, { cache: unknown; shared: Common }>();

function txCommonOf(common: Common): Common {
  const cache = (common as unknown as { _paramsCache: unknown })._paramsCache;
  const hit = txCommons.get(common);
  if (hit !== undefined && hit.cache === cache) return hit.shared;
  const shared = common.copy();
  const update = shared.updateParams.bind(shared);
  shared.copy = () => shared;
  shared.updateParams = (params) => {
    if (Object.keys(params).length > 0) update(params);
  };
  txCommons.set(common, { cache, shared });
  return shared;
}

/**
 * Decodes one raw transaction (the bytes eth_sendRawTransaction carries). `common` must come from
 * createEvmCommon, which carries the tx library's parameters.
 */
export function decodeTx(raw: Uint8Array, common: Common): TypedTransaction {
  if (raw.length === 0) throw new EvmTxError('empty transaction', 'EVM_TX_EMPTY');
  const first = raw[0]!;
  if (first === TransactionType.BlobEIP4844) {
    throw new EvmTxError('blob transactions (type 0x03) are not supported on this chain', 'EVM_TX_BLOB_UNSUPPORTED');
  }
  if (first < 0xc0 && first !== 0x01 && first !== 0x02 && first !== 0x04) {
    throw new EvmTxError(`unsupported transaction type 0x${first.toString(16).padStart(2, '0')}`, 'EVM_TX_UNKNOWN_TYPE');
  }
  let tx: TypedTransaction;
  try {
    // params: {} because createEvmCommon merged the tx parameters once (halves the decode time).
    tx = createTxFromRLP(raw, { common: txCommonOf(common), params: NO_PARAMS });
  } catch (e) {
    throw new EvmTxError(`rlp: ${(e as Error).message}`, 'EVM_TX_MALFORMED');
  }
  if (first < 0xc0 && !canonicalChainId(raw)) throw new EvmTxError('rlp: non-canonical integer (leading zero bytes) for *big.Int', 'EVM_TX_MALFORMED');
  return tx;
}

/**
 * Whether a typed envelope's chain id (the first item of its list) is a canonical RLP integer. The
 * library checks every other integer field for leading zeros, not this one; geth's decoder refuses
 * it (rlp: non-canonical integer). With it checked, a decoded envelope is byte for byte the
 * library's serialize() of the tx, so its hash is keccak256 of the bytes as received.
 */
function canonicalChainId(raw: Uint8Array): boolean {
  // raw = type ‖ list header ‖ chain id ‖ …; the decoder already took the list header as valid.
  const h = raw[1]!;
  const at = h <= 0xf7 ? 2 : 2 + (h - 0xf7);
  const b = raw[at]!;
  if (b < 0x80) return b !== 0; // a single byte (zero is 0x80)
  if (b === 0x80) return true;
  if (b <= 0xb7) return raw[at + 1] !== 0; // a short string: no leading zero
  if (b <= 0xbf) return raw[at + 1 + (b - 0xb7)] !== 0; // a long one (56 bytes or more)
  return false; // a list
}

/**
 * Recovers the sender (20 bytes) and primes the tx's sender cache so runTx does not recover again.
 * Rejects high-S signatures (EIP-2) like the tx library does.
 */
export function recoverSender(tx: TypedTransaction, crypto: CryptoBackend = getCryptoBackend()): Uint8Array {
  const { v, r, s } = tx;
  if (v === undefined || r === undefined || s === undefined) throw new EvmTxError('transaction is not signed', 'EVM_TX_UNSIGNED');
  if (s > SECP256K1_N_DIV_2) throw new EvmTxError('invalid signature: s value is too high (EIP-2)', 'EVM_TX_HIGH_S');
  let recid: bigint;
  if (tx.type !== TransactionType.Legacy) recid = v;
  else if (v === 27n || v === 28n) recid = v - 27n;
  else recid = v - (tx.common.chainId() * 2n + 35n);
  if (recid !== 0n && recid !== 1n) throw new EvmTxError('invalid signature v value', 'EVM_TX_BAD_SIGNATURE');
  let sig: Uint8Array;
  try {
    sig = signature64(bigIntToUnpaddedBytes(r), bigIntToUnpaddedBytes(s));
  } catch {
    throw new EvmTxError('invalid signature r or s value', 'EVM_TX_BAD_SIGNATURE');
  }
  const pub = crypto.secp256k1Recover(tx.getMessageToVerifySignature(), sig, Number(recid));
  if (pub === null) throw new EvmTxError('invalid signature', 'EVM_TX_BAD_SIGNATURE');
  const pub64 = pub.subarray(1);
  (tx as unknown as { cache: { senderPubKey?: Uint8Array } }).cache.senderPubKey = pub64;
  return crypto.keccak256(pub64).subarray(12);
}

export type AdmittedTx =
  | { ok: true; tx: TypedTransaction; sender: Uint8Array; hash: Uint8Array }
  | { ok: false; code: EvmTxErrorCode; message: string };

/**
 * Decodes and recovers a batch of raw transactions; one result per input, in order, never a throw
 * (the shape a worker-pool task returns; see anchors A5.4: per-item result codes).
 */
export function admitTxs(raws: readonly Uint8Array[], common: Common, crypto: CryptoBackend = getCryptoBackend()): AdmittedTx[] {
  const out: AdmittedTx[] = [];
  for (const raw of raws) {
    try {
      const tx = decodeTx(raw, common);
      const sender = recoverSender(tx, crypto);
      out.push({ ok: true, tx, sender, hash: tx.hash() });
    } catch (e) {
      if (e instanceof EvmTxError) out.push({ ok: false, code: e.code, message: e.message });
      else out.push({ ok: false, code: 'EVM_TX_MALFORMED', message: (e as Error).message });
    }
  }
  return out;
}

/** Recovers the senders of already-decoded transactions (throws per the first bad one). */
export function recoverSenders(txs: readonly TypedTransaction[], crypto: CryptoBackend = getCryptoBackend()): Uint8Array[] {
  return txs.map((tx) => recoverSender(tx, crypto));
}
