/**
 * CometBFT 0.38 block data structures (proto/tendermint/types/types.proto), as plain data.
 *
 * Times are bigint nanoseconds since the Unix epoch; Go's zero time (0001-01-01T00:00:00Z) is
 * ZERO_TIME. Heights are bigint (int64 on the wire), rounds and indexes are numbers (int32).
 * Field numbers and hashing rules: cometbft/cometbft:types/block.go
 */

export type Bytes = Uint8Array;

/** Nanoseconds since the Unix epoch of Go's zero time.Time, 0001-01-01T00:00:00Z. */
export const ZERO_TIME = -62135596800n * 1_000_000_000n;

/** Block protocol version (version.BlockProtocol = 11 in CometBFT 0.38). */
export const BLOCK_PROTOCOL = 11n;

/** BlockPartSizeBytes: a block's proto bytes are cut into parts of this size (types/params.go). */
export const BLOCK_PART_SIZE_BYTES = 65536;

export interface PartSetHeader {
  total: number;
  hash: Bytes;
}

export interface BlockID {
  hash: Bytes;
  partSetHeader: PartSetHeader;
}

export interface ConsensusVersion {
  block: bigint;
  app: bigint;
}

export interface Header {
  version: ConsensusVersion;
  chainId: string;
  height: bigint;
  time: bigint;
  lastBlockId: BlockID;
  lastCommitHash: Bytes;
  dataHash: Bytes;
  validatorsHash: Bytes;
  nextValidatorsHash: Bytes;
  consensusHash: Bytes;
  appHash: Bytes;
  lastResultsHash: Bytes;
  evidenceHash: Bytes;
  proposerAddress: Bytes;
}

export interface Data {
  txs: Bytes[];
}

export enum BlockIDFlag {
  Unknown = 0,
  Absent = 1,
  Commit = 2,
  Nil = 3,
}

export interface CommitSig {
  blockIdFlag: BlockIDFlag;
  validatorAddress: Bytes;
  timestamp: bigint;
  signature: Bytes;
}

export interface Commit {
  height: bigint;
  round: number;
  blockId: BlockID;
  signatures: CommitSig[];
}

export interface Block {
  header: Header;
  data: Data;
  /** Raw proto-encoded Evidence items (EvidenceList.evidence). */
  evidence: Bytes[];
  /** Commit for the previous height; an empty commit (height 0) at the initial height. */
  lastCommit: Commit;
}

export enum SignedMsgType {
  Unknown = 0,
  Prevote = 1,
  Precommit = 2,
  Proposal = 32,
}

export interface Vote {
  type: SignedMsgType;
  height: bigint;
  round: number;
  blockId: BlockID;
  timestamp: bigint;
  validatorAddress: Bytes;
  validatorIndex: number;
  signature: Bytes;
  extension: Bytes;
  extensionSignature: Bytes;
}

export interface Proposal {
  type: SignedMsgType.Proposal;
  height: bigint;
  round: number;
  polRound: number;
  blockId: BlockID;
  timestamp: bigint;
  signature: Bytes;
}

/** BlockMeta as the block store keeps it (types/block_meta.go). */
export interface BlockMeta {
  blockId: BlockID;
  blockSize: number;
  header: Header;
  numTxs: number;
}

/**
 * BlockID.Key() as bytes: hash || proto(PartSetHeader{1 total, 2 hash}) (types/block.go). Used to
 * order the two votes of duplicate-vote evidence the way CometBFT does.
 */
export function blockIdKeyBytes(id: BlockID): Uint8Array {
  const parts: number[] = [];
  if (id.partSetHeader.total !== 0) {
    parts.push(0x08);
    let v = id.partSetHeader.total >>> 0;
    while (v >= 0x80) {
      parts.push((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    parts.push(v);
  }
  if (id.partSetHeader.hash.length > 0) {
    parts.push(0x12, id.partSetHeader.hash.length, ...id.partSetHeader.hash);
  }
  const out = new Uint8Array(id.hash.length + parts.length);
  out.set(id.hash, 0);
  out.set(parts, id.hash.length);
  return out;
}
