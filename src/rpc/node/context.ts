/**
 * What node RPC methods may read: the node's parts, handed over by the composition root
 * (src/node.ts). Method modules never construct parts themselves, and each group declares the
 * narrow view it reads (ChainRpc, EventsRpc, …: only the members and methods it calls, as
 * src/state/execution.ts does with ExecutorMempool); NodeRpcContext, which src/node.ts builds,
 * satisfies all of them.
 */
import type { BaseApp } from '../../app/baseapp.js';
import type { AppConfig } from '../../config/app-config.js';
import type { GenesisDoc } from '../../config/genesis.js';
import type { NodeConfig } from '../../config/node-config.js';
import type { ConsensusState } from '../../consensus/state.js';
import type { EventBus } from '../../events/bus.js';
import type { EvidencePool } from '../../evidence/pool.js';
import type { Logger } from '../../log.js';
import type { Mempool } from '../../mempool/mempool.js';
import type { Names } from '../../names/index.js';
import type { CryptoPool } from '../../pool/types.js';
import type { Storage } from '../../store/storage.js';
import type { BlockIndexer, TxIndexer } from '../../indexer/indexer.js';
import type { PubKey } from '../../types/validator.js';
import type { QueryRouter } from '../../app/query-router.js';
import type { Switch } from '../../p2p/switch.js';

export interface NodeRpcContext {
  config: NodeConfig;
  appConfig: AppConfig;
  genesis: GenesisDoc;
  /** The genesis file's bytes as on disk (genesis, genesis_chunked). */
  genesisBytes: Uint8Array;
  names: Names;
  storage: Storage;
  consensus: ConsensusState;
  mempool: Mempool;
  app: BaseApp;
  bus: EventBus;
  /** Pending and committed evidence (broadcast_evidence adds to it). */
  evidencePool: EvidencePool;
  /** Absent when `[tx_index] indexer = "null"`. */
  txIndexer: TxIndexer | null;
  blockIndexer: BlockIndexer | null;
  pool: CryptoPool;
  /**
   * The chain's gRPC services (module queries, the tx service) by gRPC path: abci_query answers
   * those paths through it, as the gRPC server and REST gateway do. Absent in bare test setups.
   */
  queryRouter?: QueryRouter;
  nodeId: string;
  /** The P2P switch (net_info, dial_seeds, dial_peers); absent in bare test setups. */
  p2p?: Switch;
  validator: { address: Uint8Array; pubKey: PubKey };
  logger: Logger;
}

/** chain.ts: blocks, headers, commits, validators, params, genesis, tx and block search. */
export interface ChainRpc {
  storage: {
    blocks: Pick<Storage['blocks'], 'base' | 'height' | 'heightByHash' | 'loadBlock' | 'loadBlockCommit' | 'loadBlockMeta' | 'loadSeenCommit'>;
    state: Pick<Storage['state'], 'loadConsensusParams' | 'loadFinalizeBlockResponse' | 'loadValidators'>;
  };
  consensus: Pick<ConsensusState, 'getState'>;
  genesis: GenesisDoc;
  names: Names;
  txIndexer: Pick<TxIndexer, 'getTx' | 'searchTxs'> | null;
  blockIndexer: Pick<BlockIndexer, 'searchBlocks'> | null;
}

/** events.ts: subscribe, unsubscribe, unsubscribe_all over the event bus. */
export interface EventsRpc {
  config: { rpc: NodeConfig['rpc']; txIndex: Pick<NodeConfig['txIndex'], 'indexer'> };
  bus: EventBus;
  names: Names;
  logger: Logger;
}

/** info-consensus.ts: consensus state dumps, abci_info, abci_query. */
export interface ConsensusInfoRpc {
  consensus: Pick<ConsensusState, 'roundStateJSON' | 'roundStateSimpleJSON'>;
  app: Pick<BaseApp, 'info' | 'query'>;
  queryRouter?: Pick<QueryRouter, 'has' | 'abciQuery'>;
  names: Pick<Names, 'evidenceType'>;
}

/** info-mempool.ts: broadcast_tx_*, check_tx, unconfirmed txs, unsafe_flush_mempool. */
export interface MempoolRpc extends EventsRpc {
  mempool: Pick<Mempool, 'checkTx' | 'reapMaxTxs' | 'size' | 'sizeBytes' | 'flush'>;
  app: Pick<BaseApp, 'checkTx'>;
}

/** info-evidence.ts: broadcast_evidence. */
export interface EvidenceRpc {
  evidencePool: Pick<EvidencePool, 'addEvidence'>;
  names: Pick<Names, 'parseEvidenceType'>;
  logger: Logger;
}

/** info-net.ts: net_info, dial_seeds, dial_peers. */
export interface NetRpc {
  config: { p2p: Pick<NodeConfig['p2p'], 'externalAddress'> };
  p2p?: Pick<Switch, 'dialPeersAsync' | 'peerList' | 'listening' | 'addPrivatePeerIds' | 'addUnconditionalPeerIds' | 'isolate'>;
  logger: Logger;
}
