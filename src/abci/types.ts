/**
 * The in-process application interface, shaped like ABCI 2.0 (abci/types/application.go).
 *
 * chaind runs the application in the node's process: calls are plain async methods. `commit` is
 * synchronous on purpose: the block executor calls it inside the one LMDB write transaction that
 * also stores the block, the consensus state and the indexes, so a crash leaves either the old or
 * the new state (ARCHITECTURE.md, Storage).
 */
import type { Bytes } from '../types/block.js';
import type { ConsensusParams } from '../types/params.js';
import type { ValidatorUpdate } from '../types/validator.js';

export interface EventAttribute {
  key: string;
  value: string;
  index: boolean;
}

export interface AbciEvent {
  type: string;
  attributes: EventAttribute[];
}

export interface ExecTxResult {
  code: number;
  data: Bytes;
  log: string;
  info: string;
  gasWanted: bigint;
  gasUsed: bigint;
  events: AbciEvent[];
  codespace: string;
}

export interface ResponseInfo {
  data: string;
  version: string;
  appVersion: bigint;
  lastBlockHeight: bigint;
  lastBlockAppHash: Bytes;
}

export interface RequestInitChain {
  time: bigint;
  chainId: string;
  consensusParams: ConsensusParams;
  validators: ValidatorUpdate[];
  appStateBytes: Bytes;
  initialHeight: bigint;
}

export interface ResponseInitChain {
  consensusParams?: ConsensusParams;
  validators: ValidatorUpdate[];
  appHash: Bytes;
}

export enum CheckTxType {
  New = 0,
  Recheck = 1,
}

export interface ResponseCheckTx {
  code: number;
  data: Bytes;
  log: string;
  info: string;
  gasWanted: bigint;
  gasUsed: bigint;
  events: AbciEvent[];
  codespace: string;
  /** App-side ordering hints for the mempool (sender and nonce), when the app knows them. */
  sender?: string;
  priority?: bigint;
}

export interface CommitInfo {
  round: number;
  votes: { validator: { address: Bytes; power: bigint }; signedLastBlock: boolean }[];
}

/** abci.MisbehaviorType. */
export enum MisbehaviorType {
  Unknown = 0,
  DuplicateVote = 1,
  LightClientAttack = 2,
}

/**
 * abci.Misbehavior: committed evidence as the application sees it (types/evidence.go ABCI()).
 * chaind has no slashing module; the chain app ignores it.
 */
export interface Misbehavior {
  type: MisbehaviorType;
  validator: { address: Bytes; power: bigint };
  height: bigint;
  time: bigint;
  totalVotingPower: bigint;
}

export interface RequestPrepareProposal {
  maxTxBytes: bigint;
  txs: Bytes[];
  localLastCommit: CommitInfo;
  height: bigint;
  time: bigint;
  nextValidatorsHash: Bytes;
  proposerAddress: Bytes;
  /** The block's evidence (absent: none). */
  misbehavior?: Misbehavior[];
}

export interface RequestProcessProposal {
  txs: Bytes[];
  proposedLastCommit: CommitInfo;
  hash: Bytes;
  height: bigint;
  time: bigint;
  nextValidatorsHash: Bytes;
  proposerAddress: Bytes;
  /** The block's evidence (absent: none). */
  misbehavior?: Misbehavior[];
}

export interface RequestFinalizeBlock {
  txs: Bytes[];
  decidedLastCommit: CommitInfo;
  hash: Bytes;
  height: bigint;
  time: bigint;
  nextValidatorsHash: Bytes;
  proposerAddress: Bytes;
  /** The block's evidence (absent: none). */
  misbehavior?: Misbehavior[];
}

export interface ResponseFinalizeBlock {
  events: AbciEvent[];
  txResults: ExecTxResult[];
  validatorUpdates: ValidatorUpdate[];
  consensusParamUpdates?: ConsensusParams;
  appHash: Bytes;
}

export interface RequestQuery {
  data: Bytes;
  path: string;
  height: bigint;
  prove: boolean;
}

export interface ResponseQuery {
  code: number;
  log: string;
  info: string;
  index: bigint;
  key: Bytes;
  value: Bytes;
  proofOps: { type: string; key: Bytes; data: Bytes }[] | null;
  height: bigint;
  codespace: string;
}

export interface Application {
  info(): Promise<ResponseInfo>;
  initChain(req: RequestInitChain): Promise<ResponseInitChain>;
  checkTx(tx: Bytes, type: CheckTxType): Promise<ResponseCheckTx>;
  prepareProposal(req: RequestPrepareProposal): Promise<Bytes[]>;
  processProposal(req: RequestProcessProposal): Promise<boolean>;
  finalizeBlock(req: RequestFinalizeBlock): Promise<ResponseFinalizeBlock>;
  /** Writes the finalized block's state; called inside the block's LMDB write transaction. */
  commit(): { retainHeight: bigint };
  query(req: RequestQuery): Promise<ResponseQuery>;
}
