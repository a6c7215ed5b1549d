/**
 * What node RPC methods may read: the node's parts, handed over by the composition root
 * (src/node.ts). Method modules export `xxxRoutes(ctx: NodeRpcContext): Route[]` and never
 * construct parts themselves.
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
import type { QueryRouter } from '../grpc/router.js';
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
