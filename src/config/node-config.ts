/**
 * `config/config.toml`: CometBFT 0.38's TOML names and defaults (cometbft: config/config.go,
 * config/toml.go; cometbft/cometbft:config/config.go, cometbft/cometbft:consensus/state.go), for the parts chaind implements.
 * Durations are milliseconds in memory.
 */
import { hostname } from 'node:os';
import { parsePeerAddress } from './address.js';
import { defaultsOf, type FileSpec, type SectionSpec } from './schema.js';
import { parseLogLevel, type LogFormat } from '../log.js';
import type { ConsensusConfig } from '../consensus/types.js';

export interface BaseConfig {
  moniker: string;
  /** Relative paths are relative to the home directory. */
  dbDir: string;
  /** `info`, or `module:level,*:level`. */
  logLevel: string;
  logFormat: LogFormat;
  genesisFile: string;
  privValidatorKeyFile: string;
  privValidatorStateFile: string;
  nodeKeyFile: string;
}

export interface RpcConfig {
  laddr: string;
  corsAllowedOrigins: string[];
  corsAllowedMethods: string[];
  corsAllowedHeaders: string[];
  unsafe: boolean;
  maxOpenConnections: number;
  maxSubscriptionClients: number;
  maxSubscriptionsPerClient: number;
  experimentalSubscriptionBufferSize: number;
  experimentalWebsocketWriteBufferSize: number;
  experimentalCloseOnSlowClient: boolean;
  /** ms */
  timeoutBroadcastTxCommit: number;
  maxRequestBatchSize: number;
  maxBodyBytes: number;
  maxHeaderBytes: number;
  /** ms of RPC work per event-loop turn before further requests wait (0 = unbounded). */
  maxLoopSlice?: number;
  /** Requests queued per websocket connection before it is closed. */
  maxWebsocketQueuedRequests?: number;
}

export interface P2PConfig {
  laddr: string;
  externalAddress: string;
  seeds: string[];
  persistentPeers: string[];
  addrBookFile: string;
  addrBookStrict: boolean;
  maxNumInboundPeers: number;
  maxNumOutboundPeers: number;
  unconditionalPeerIds: string[];
  /** ms */
  persistentPeersMaxDialPeriod: number;
  /** ms */
  flushThrottleTimeout: number;
  maxPacketMsgPayloadSize: number;
  sendRate: number;
  recvRate: number;
  pex: boolean;
  seedMode: boolean;
  privatePeerIds: string[];
  allowDuplicateIp: boolean;
  /** ms */
  handshakeTimeout: number;
  /** ms */
  dialTimeout: number;
  /** ms: how often PEX checks the outbound peer count and dials more (ensurePeers), or crawls in seed mode. */
  ensurePeersPeriod: number;
}

export interface MempoolConfig {
  type: 'flood' | 'nop';
  recheck: boolean;
  /** ms */
  recheckTimeout: number;
  broadcast: boolean;
  size: number;
  maxTxsBytes: number;
  cacheSize: number;
  keepInvalidTxsInCache: boolean;
  maxTxBytes: number;
}

export interface TxIndexConfig {
  indexer: 'kv' | 'null';
}

export interface InstrumentationConfig {
  prometheus: boolean;
  prometheusListenAddr: string;
  maxOpenConnections: number;
  namespace: string;
}

/** config.toml in memory. */
export interface NodeConfig extends BaseConfig {
  rpc: RpcConfig;
  p2p: P2PConfig;
  mempool: MempoolConfig;
  consensus: ConsensusConfig;
  txIndex: TxIndexConfig;
  instrumentation: InstrumentationConfig;
}

function checkPeers(list: string[]): string | undefined {
  for (const p of list) {
    try {
      parsePeerAddress(p);
    } catch (e) {
      return `invalid peer address ${JSON.stringify(p)}: ${(e as Error).message}`;
    }
  }
  return undefined;
}

function checkIds(list: string[]): string | undefined {
  const bad = list.find((id) => !/^[0-9a-fA-F]{40}$/.test(id));
  return bad === undefined ? undefined : `invalid node id ${JSON.stringify(bad)} (want 40 hex characters)`;
}

function checkExternal(s: string): string | undefined {
  if (s === '') return undefined;
  return /^(tcp:\/\/)?(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(s) ? undefined : `invalid address ${JSON.stringify(s)} (want host:port)`;
}

function checkLogLevel(s: string): string | undefined {
  try {
    parseLogLevel(s);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

const nonNeg = { t: 'int', min: 0 } as const;

const base: SectionSpec = {
  name: '',
  doc: 'Main base config options.',
  fields: [
    { key: 'moniker', kind: { t: 'string' }, def: () => hostname(), doc: 'A custom human readable name for this node.' },
    { key: 'db_dir', kind: { t: 'string' }, def: 'data', doc: 'Database directory (one LMDB environment).' },
    {
      key: 'log_level',
      kind: { t: 'string' },
      def: 'info',
      doc: 'Output level for logging: debug, info, warn, error or none;\nper module: "consensus:debug,p2p:warn,*:info".',
      check: checkLogLevel,
    },
    { key: 'log_format', kind: { t: 'enum', values: ['plain', 'json'] }, def: 'plain', doc: 'Output format: "plain" (colourless text) or "json".' },
    { key: 'genesis_file', kind: { t: 'string' }, def: 'config/genesis.json', doc: 'Path to the JSON file containing the initial validator set and other meta data.' },
    {
      key: 'priv_validator_key_file',
      kind: { t: 'string' },
      def: 'config/priv_validator_key.json',
      doc: 'Path to the JSON file containing the private key to use as a validator in the consensus protocol.',
    },
    {
      key: 'priv_validator_state_file',
      kind: { t: 'string' },
      def: 'data/priv_validator_state.json',
      doc: 'Path to the JSON file containing the last sign state of a validator.',
    },
    {
      key: 'node_key_file',
      kind: { t: 'string' },
      def: 'config/node_key.json',
      doc: 'Path to the JSON file containing the private key to use for node authentication in the p2p protocol.',
    },
  ],
  // CometBFT top-level keys with no meaning in chaind (the app is in-process, the DB is LMDB).
  compat: { version: undefined, proxy_app: 'tcp://127.0.0.1:26658', db_backend: 'goleveldb', priv_validator_laddr: '', abci: 'socket', filter_peers: false },
};

const rpc: SectionSpec = {
  name: 'rpc',
  doc: 'RPC server configuration options.',
  fields: [
    { key: 'laddr', kind: { t: 'laddr' }, def: 'tcp://127.0.0.1:26657', doc: 'TCP address for the RPC server to listen on.' },
    {
      key: 'cors_allowed_origins',
      kind: { t: 'list' },
      def: [],
      doc: 'A list of origins a cross-domain request can be executed from.\nDefault value [] disables CORS support; ["*"] allows all origins.',
    },
    { key: 'cors_allowed_methods', kind: { t: 'list' }, def: ['HEAD', 'GET', 'POST'], doc: 'A list of methods the client is allowed to use with cross-domain requests.' },
    {
      key: 'cors_allowed_headers',
      kind: { t: 'list' },
      def: ['Origin', 'Accept', 'Content-Type', 'X-Requested-With', 'X-Server-Time'],
      doc: 'A list of non simple headers the client is allowed to use with cross-domain requests.',
    },
    { key: 'unsafe', kind: { t: 'bool' }, def: false, doc: 'Activate unsafe RPC commands like /dial_seeds and /unsafe_flush_mempool.' },
    {
      key: 'max_open_connections',
      kind: nonNeg,
      def: 900,
      doc: 'Maximum number of simultaneous connections (including WebSocket); 0 = unlimited.',
    },
    {
      key: 'max_subscription_clients',
      kind: nonNeg,
      def: 100,
      doc: 'Maximum number of unique clientIDs that can /subscribe.',
    },
    {
      key: 'max_subscriptions_per_client',
      kind: nonNeg,
      def: 5,
      doc: 'Maximum number of unique queries a given client can /subscribe to.',
    },
    {
      key: 'experimental_subscription_buffer_size',
      // cometbft: config/config.go ValidateBasic: "experimental_subscription_buffer_size must be >= 100".
      kind: { t: 'int', min: 100 },
      def: 200,
      doc: 'Events buffered per subscription before it is cancelled as too slow (min 100).',
    },
    {
      key: 'experimental_websocket_write_buffer_size',
      kind: nonNeg,
      def: 200,
      doc: 'Messages queued per WebSocket connection for writing; must be >= experimental_subscription_buffer_size.',
    },
    {
      key: 'experimental_close_on_slow_client',
      kind: { t: 'bool' },
      def: false,
      doc: 'Close a WebSocket client that cannot keep up instead of silently dropping its events.',
    },
    {
      key: 'timeout_broadcast_tx_commit',
      kind: { t: 'duration' },
      def: 10_000,
      doc: 'How long to wait for a tx to be committed during /broadcast_tx_commit.',
    },
    { key: 'max_request_batch_size', kind: nonNeg, def: 10, doc: 'Maximum number of requests in one JSON-RPC batch; 0 = unlimited.' },
    { key: 'max_body_bytes', kind: { t: 'int', min: 1 }, def: 1_000_000, doc: 'Maximum size of request body, in bytes.' },
    { key: 'max_header_bytes', kind: { t: 'int', min: 1 }, def: 1_048_576, doc: 'Maximum size of request header, in bytes.' },
    {
      key: 'max_loop_slice',
      kind: { t: 'duration' },
      def: 5,
      doc:
        'RPC work (node RPC, REST, metrics) per event-loop turn; requests beyond it wait for the next turn\n' +
        'with their connection paused, so consensus timers keep their slot under any RPC load. 0 = unbounded.',
    },
    {
      key: 'max_websocket_queued_requests',
      kind: { t: 'int', min: 1 },
      def: 128,
      doc: 'Requests received on one WebSocket connection and not yet answered; one more closes the connection.',
    },
  ],
  compat: { grpc_laddr: '', grpc_max_open_connections: 900, tls_cert_file: '', tls_key_file: '', pprof_laddr: '' },
};

const p2p: SectionSpec = {
  name: 'p2p',
  doc: 'P2P configuration options.',
  fields: [
    { key: 'laddr', kind: { t: 'laddr' }, def: 'tcp://0.0.0.0:26656', doc: 'Address to listen for incoming connections.' },
    {
      key: 'external_address',
      kind: { t: 'string' },
      def: '',
      doc: 'Address to advertise to peers for them to dial (host:port); empty = the listen address.',
      check: checkExternal,
    },
    { key: 'seeds', kind: { t: 'csv' }, def: [], doc: 'Comma separated list of seed nodes to connect to (id@host:port).', check: checkPeers },
    {
      key: 'persistent_peers',
      kind: { t: 'csv' },
      def: [],
      doc: 'Comma separated list of nodes to keep persistent connections to (id@host:port).',
      check: checkPeers,
    },
    { key: 'addr_book_file', kind: { t: 'string' }, def: 'config/addrbook.json', doc: 'Path to address book.' },
    { key: 'addr_book_strict', kind: { t: 'bool' }, def: true, doc: 'Set true for strict address routability rules; false for private or local networks.' },
    { key: 'max_num_inbound_peers', kind: nonNeg, def: 40, doc: 'Maximum number of inbound peers.' },
    { key: 'max_num_outbound_peers', kind: nonNeg, def: 10, doc: 'Maximum number of outbound peers to connect to, excluding persistent peers.' },
    {
      key: 'unconditional_peer_ids',
      kind: { t: 'csv' },
      def: [],
      doc: 'Comma separated list of node IDs that are not counted against the peer limits.',
      check: checkIds,
    },
    { key: 'persistent_peers_max_dial_period', kind: { t: 'duration' }, def: 0, doc: 'Maximum pause between dials to a persistent peer; 0 = exponential backoff.' },
    { key: 'flush_throttle_timeout', kind: { t: 'duration' }, def: 100, doc: 'Time to wait before flushing messages out on the connection.' },
    { key: 'max_packet_msg_payload_size', kind: { t: 'int', min: 1 }, def: 1024, doc: 'Maximum size of a message packet payload, in bytes.' },
    { key: 'send_rate', kind: { t: 'int', min: 1 }, def: 5_120_000, doc: 'Rate at which packets can be sent, in bytes/second.' },
    { key: 'recv_rate', kind: { t: 'int', min: 1 }, def: 5_120_000, doc: 'Rate at which packets can be received, in bytes/second.' },
    { key: 'pex', kind: { t: 'bool' }, def: true, doc: 'Set true to enable the peer-exchange reactor.' },
    { key: 'seed_mode', kind: { t: 'bool' }, def: false, doc: 'Seed mode: crawl the network for peers and disconnect after sharing addresses.' },
    { key: 'private_peer_ids', kind: { t: 'csv' }, def: [], doc: 'Comma separated list of peer IDs to keep private (not gossiped).', check: checkIds },
    { key: 'allow_duplicate_ip', kind: { t: 'bool' }, def: false, doc: 'Toggle to disable the guard against peers connecting from the same IP.' },
    { key: 'handshake_timeout', kind: { t: 'duration' }, def: 20_000, doc: 'Peer connection handshake timeout.' },
    { key: 'dial_timeout', kind: { t: 'duration' }, def: 3_000, doc: 'Peer connection dial timeout.' },
    {
      key: 'ensure_peers_period',
      kind: { t: 'duration' },
      def: 30_000,
      doc: 'How often the peer-exchange reactor checks the number of outbound peers and dials more (in seed\nmode: crawls). chaind only (CometBFT fixes it at 30s); test networks set it shorter.',
      check: (v: number) => (v > 0 ? undefined : 'must be greater than 0'),
    },
  ],
};

const mempool: SectionSpec = {
  name: 'mempool',
  doc: 'Mempool configuration options.',
  fields: [
    {
      key: 'type',
      kind: { t: 'enum', values: ['flood', 'nop'] },
      def: 'flood',
      doc: 'Mempool type: "flood" (the concurrent linked-list mempool, gossiping every tx)\nor "nop" (no mempool: the app must produce txs itself).',
    },
    { key: 'recheck', kind: { t: 'bool' }, def: true, doc: 'Re-run CheckTx on the remaining txs after every block.' },
    { key: 'recheck_timeout', kind: { t: 'duration' }, def: 1_000, doc: 'Time to wait for rechecks to finish.' },
    { key: 'broadcast', kind: { t: 'bool' }, def: true, doc: 'Broadcast txs to peers.' },
    { key: 'size', kind: nonNeg, def: 5000, doc: 'Maximum number of transactions in the mempool.' },
    {
      key: 'max_txs_bytes',
      kind: nonNeg,
      def: 1_073_741_824,
      doc: 'Limit the total size of all txs in the mempool (1 GiB). This only accounts for raw transactions.',
    },
    { key: 'cache_size', kind: nonNeg, def: 10_000, doc: 'Size of the cache of seen txs (used to filter duplicates).' },
    {
      key: 'keep-invalid-txs-in-cache',
      kind: { t: 'bool' },
      def: false,
      doc: 'Keep txs that failed CheckTx in the cache, so they are not re-checked when seen again.',
    },
    { key: 'max_tx_bytes', kind: { t: 'int', min: 1 }, def: 1_048_576, doc: 'Maximum size of a single transaction (1 MiB).' },
  ],
  compat: {
    wal_dir: '',
    max_batch_bytes: 0,
    experimental_max_gossip_connections_to_persistent_peers: 0,
    experimental_max_gossip_connections_to_non_persistent_peers: 0,
  },
};

const consensus: SectionSpec = {
  name: 'consensus',
  doc:
    'Consensus configuration options. Round r waits timeout_propose + r * timeout_propose_delta\n' +
    'for a proposal, and likewise for prevotes and precommits (cometbft: config/config.go).',
  fields: [
    { key: 'wal_file', kind: { t: 'string' }, def: 'data/cs.wal/wal', doc: 'Consensus write-ahead log.' },
    { key: 'timeout_propose', kind: { t: 'duration' }, def: 3_000, doc: 'How long we wait for a proposal block before prevoting nil.' },
    { key: 'timeout_propose_delta', kind: { t: 'duration' }, def: 500, doc: 'How much timeout_propose increases with each round.' },
    { key: 'timeout_prevote', kind: { t: 'duration' }, def: 1_000, doc: 'How long we wait after receiving +2/3 prevotes for "anything".' },
    { key: 'timeout_prevote_delta', kind: { t: 'duration' }, def: 500, doc: 'How much timeout_prevote increases with each round.' },
    { key: 'timeout_precommit', kind: { t: 'duration' }, def: 1_000, doc: 'How long we wait after receiving +2/3 precommits for "anything".' },
    { key: 'timeout_precommit_delta', kind: { t: 'duration' }, def: 500, doc: 'How much timeout_precommit increases with each round.' },
    { key: 'timeout_commit', kind: { t: 'duration' }, def: 1_000, doc: 'How long we wait after committing a block, before starting on the new height.' },
    {
      key: 'double_sign_check_height',
      kind: nonNeg,
      def: 0,
      doc: 'How many blocks to look back for this validator\'s own signature before signing; 0 = off.',
    },
    { key: 'skip_timeout_commit', kind: { t: 'bool' }, def: false, doc: 'Make progress as soon as we have all the precommits.' },
    { key: 'create_empty_blocks', kind: { t: 'bool' }, def: true, doc: 'EmptyBlocks mode: produce blocks without transactions.' },
    { key: 'create_empty_blocks_interval', kind: { t: 'duration' }, def: 0, doc: 'Possible interval between empty blocks; 0 = as fast as the timeouts allow.' },
    { key: 'peer_gossip_sleep_duration', kind: { t: 'duration' }, def: 100, doc: 'Reactor sleep duration between gossip rounds.' },
    { key: 'peer_query_maj23_sleep_duration', kind: { t: 'duration' }, def: 2_000, doc: 'Reactor sleep duration between maj23 queries.' },
  ],
};

const txIndex: SectionSpec = {
  name: 'tx_index',
  doc: 'Transaction indexer configuration options.',
  fields: [
    {
      key: 'indexer',
      kind: { t: 'enum', values: ['kv', 'null'] },
      def: 'kv',
      doc: 'What indexer to use: "kv" (the default, in LMDB) or "null" (no tx_search / block_search).',
    },
  ],
  compat: { 'psql-conn': '' },
};

const instrumentation: SectionSpec = {
  name: 'instrumentation',
  doc:
    'Instrumentation configuration options.\n' +
    'chaind serves Prometheus metrics by default (CometBFT: prometheus = false) and binds them to\n' +
    '127.0.0.1 (CometBFT: ":26660", every interface): metrics are unauthenticated and reveal peers\n' +
    'and load, so exposing them is an explicit choice. A host-less ":26660" also means 127.0.0.1\n' +
    'in chaind; write "0.0.0.0:26660" to listen on every interface.',
  fields: [
    { key: 'prometheus', kind: { t: 'bool' }, def: true, doc: 'When true, Prometheus metrics are served under /metrics on prometheus_listen_addr.' },
    { key: 'prometheus_listen_addr', kind: { t: 'laddr' }, def: '127.0.0.1:26660', doc: 'Address to listen for Prometheus collector(s) connections.' },
    { key: 'max_open_connections', kind: nonNeg, def: 3, doc: 'Maximum number of simultaneous connections to the metrics server; 0 = unlimited.' },
    { key: 'namespace', kind: { t: 'string' }, def: 'chaind', doc: 'Instrumentation namespace (metric name prefix).', check: (s: string) => (/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(s) ? undefined : `invalid metric namespace ${JSON.stringify(s)}`) },
  ],
};

export const NODE_CONFIG_SPEC: FileSpec = {
  file: 'config/config.toml',
  header:
    'chaind node configuration (CometBFT 0.38 names and defaults).\n' +
    'Durations are Go duration strings ("10s", "500ms", "1m30s").\n' +
    'Relative paths are relative to the home directory.\n' +
    'Any value can be overridden on the command line, e.g. --rpc.laddr tcp://0.0.0.0:26657.',
  sections: [base, rpc, p2p, mempool, consensus, txIndex, instrumentation],
  ignoredSections: ['statesync', 'blocksync', 'fastsync', 'storage'],
};

/** Cross-field checks (cometbft: config/config.go ValidateBasic). Returns [section.key, reason]. */
export function crossCheckNodeConfig(c: NodeConfig): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (c.rpc.experimentalWebsocketWriteBufferSize < c.rpc.experimentalSubscriptionBufferSize) {
    out.push([
      'rpc.experimental_websocket_write_buffer_size',
      `must be >= experimental_subscription_buffer_size (${c.rpc.experimentalSubscriptionBufferSize}), got ${c.rpc.experimentalWebsocketWriteBufferSize}`,
    ]);
  }
  return out;
}

/** Defaults of config.toml (moniker = host name). */
export function defaultNodeConfig(overrides: { moniker?: string } = {}): NodeConfig {
  const c = defaultsOf(NODE_CONFIG_SPEC) as NodeConfig;
  if (overrides.moniker !== undefined) c.moniker = overrides.moniker;
  return c;
}
