/**
 * The hashes a CometBFT header commits to (cometbft: types/block.go Header.Hash, Commit.Hash,
 * Data.Hash; types/tx.go; types/params.go ConsensusParams.Hash; types/results.go;
 * types/evidence.go EvidenceList.Hash; types/validator_set.go Hash; cometbft/cometbft:types/block.go).
 */
import type { Commit, Header } from './block.js';
import type { ConsensusParams } from './params.js';
import type { Validator } from './validator.js';
import { ProtoDecodeError, ProtoWriter } from './proto.js';
import { encodeBlockId, encodeCommitSig, encodeConsensusVersion, encodeSimpleValidator, encodeTimestamp, readEvidenceOneof } from './codec.js';
import { merkleRoot } from '../crypto/merkle.js';
import { sha256 } from '../crypto/hash.js';
import { getCryptoBackend } from '../crypto/backend.js';

const EMPTY = new Uint8Array(0);

/** cdcEncode(string): gogotypes.StringValue{1: s}, or empty bytes for "" (types/encoding_helper.go). */
export function cdcEncodeString(s: string): Uint8Array {
  if (s.length === 0) return EMPTY;
  const w = new ProtoWriter(s.length * 3 + 8);
  w.stringField(1, s);
  return w.finish();
}

/** cdcEncode(int64): Int64Value{1: n}, or empty bytes for 0. */
export function cdcEncodeInt64(n: bigint): Uint8Array {
  if (n === 0n) return EMPTY;
  const w = new ProtoWriter(12);
  w.int64Field(1, n);
  return w.finish();
}

/** cdcEncode(HexBytes): BytesValue{1: b}, or empty bytes for empty input. */
export function cdcEncodeBytes(b: Uint8Array): Uint8Array {
  if (b.length === 0) return EMPTY;
  const w = new ProtoWriter(b.length + 4);
  w.bytesField(1, b);
  return w.finish();
}

/** The 14 header leaves in field order. */
export function headerLeaves(h: Header): Uint8Array[] {
  return [
    encodeConsensusVersion(h.version),
    cdcEncodeString(h.chainId),
    cdcEncodeInt64(h.height),
    encodeTimestamp(h.time),
    encodeBlockId(h.lastBlockId),
    cdcEncodeBytes(h.lastCommitHash),
    cdcEncodeBytes(h.dataHash),
    cdcEncodeBytes(h.validatorsHash),
    cdcEncodeBytes(h.nextValidatorsHash),
    cdcEncodeBytes(h.consensusHash),
    cdcEncodeBytes(h.appHash),
    cdcEncodeBytes(h.lastResultsHash),
    cdcEncodeBytes(h.evidenceHash),
    cdcEncodeBytes(h.proposerAddress),
  ];
}

/** Header.Hash = block hash. Empty (Go nil) when validators_hash is empty: an incomplete header. */
export function headerHash(h: Header): Uint8Array {
  if (h.validatorsHash.length === 0) return new Uint8Array(0);
  return merkleRoot(headerLeaves(h));
}

/** Commit.Hash = LastCommitHash: merkle over proto CommitSigs in validator order. */
export function commitHash(commit: Commit): Uint8Array {
  const n = commit.signatures.length;
  const items = new Array<Uint8Array>(n);
  for (let i = 0; i < n; i++) items[i] = encodeCommitSig(commit.signatures[i]!);
  return merkleRoot(items);
}

/**
 * Tx.Hash: sha256 of the raw tx (shown upper-case hex in RPC and events), through the crypto
 * backend: the native addon's where it loaded, where node:crypto's createHash costs ~5x more per
 * short input (a hash object per call), and a block's thousands of tx hashes are computed on the
 * thread that answers RPC.
 */
export function txHash(tx: Uint8Array): Uint8Array {
  return getCryptoBackend().sha256(tx);
}

/**
 * Data.Hash = Txs.Hash: merkle whose items are the tx hashes, so leaf = sha256(0x00||sha256(tx)).
 * `known(tx)` may give a tx's hash without hashing it (the mempool knows the txs it holds), or
 * undefined; CometBFT keeps the hash in the block's Data once computed (types/block.go Data.Hash),
 * here the proposer's block reuses what CheckTx hashed. One buffer of hashes, then one merkle
 * pass of the backend (leaves and inner nodes).
 */
export function dataHash(txs: readonly Uint8Array[], known?: (tx: Uint8Array) => Uint8Array | undefined): Uint8Array {
  const n = txs.length;
  const b = getCryptoBackend();
  const all = new Uint8Array(32 * n);
  const items = new Array<Uint8Array>(n);
  for (let i = 0; i < n; i++) {
    const k = known?.(txs[i]!);
    if (k !== undefined && k.length === 32) all.set(k, 32 * i);
    else b.sha256Into(txs[i]!, all, 32 * i);
    items[i] = all.subarray(32 * i, 32 * i + 32);
  }
  return b.merkleRoot(items);
}

/** ConsensusParams.Hash: plain sha256 of HashedParams{1 block_max_bytes, 2 block_max_gas}. */
export function consensusParamsHash(params: Pick<ConsensusParams, 'block'>): Uint8Array {
  const w = new ProtoWriter(24);
  w.int64Field(1, params.block.maxBytes);
  w.int64Field(2, params.block.maxGas);
  return sha256(w.finish());
}

export interface TxResultForHash {
  code: number;
  data: Uint8Array;
  gasWanted: bigint;
  gasUsed: bigint;
}

/** ExecTxResult reduced to {1 code uint32, 2 data, 5 gas_wanted, 6 gas_used} (deterministicExecTxResult). */
export function encodeDeterministicTxResult(r: TxResultForHash): Uint8Array {
  const w = new ProtoWriter(r.data.length + 40);
  w.uint32Field(1, r.code);
  w.bytesField(2, r.data);
  w.int64Field(5, r.gasWanted);
  w.int64Field(6, r.gasUsed);
  return w.finish();
}

/**
 * ABCIResults.Hash = LastResultsHash; sha256("") for a block without txs. Through the crypto
 * backend (the native addon's one call for the whole tree, where it loaded, instead of a
 * node:crypto hash object per leaf and inner node: ~2 per tx, on the executor thread).
 */
export function lastResultsHash(results: readonly TxResultForHash[]): Uint8Array {
  return getCryptoBackend().merkleRoot(results.map(encodeDeterministicTxResult));
}

/**
 * The bytes one evidence contributes to EvidenceHash. Block evidence items are proto `Evidence`
 * (a oneof wrapper: 1 duplicate_vote_evidence, 2 light_client_attack_evidence), but cometbft
 * hashes Evidence.Bytes(), the proto of the concrete evidence type, so the wrapper is removed.
 */
export function evidenceInnerBytes(evidence: Uint8Array): Uint8Array {
  const inner = readEvidenceOneof(evidence);
  if (inner === null) throw new ProtoDecodeError('evidence has no known evidence type');
  const { buf, pos, end } = inner.body;
  return buf.subarray(pos, end);
}

/** Evidence.Hash: sha256 of the concrete evidence proto. */
export function evidenceItemHash(evidence: Uint8Array): Uint8Array {
  return sha256(evidenceInnerBytes(evidence));
}

/** EvidenceList.Hash over a block's encoded Evidence items; sha256("") when there is none. */
export function evidenceHash(evidence: readonly Uint8Array[]): Uint8Array {
  return merkleRoot(evidence.map(evidenceInnerBytes));
}

/** ValidatorSet.Hash: merkle over SimpleValidator{pub_key, voting_power} in set order. */
export function validatorsHash(validators: readonly Pick<Validator, 'pubKey' | 'votingPower'>[]): Uint8Array {
  return merkleRoot(validators.map((v) => encodeSimpleValidator(v.pubKey, v.votingPower)));
}
