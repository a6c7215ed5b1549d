/**
 * `config/app.toml`: the application's settings, with the Cosmos SDK's and Cosmos EVM's TOML names
 * (cosmos-sdk: server/config/toml.go; cosmos/evm: server/config/toml.go) for what chaind serves,
 * plus chaind's `[compat]` table. Durations are milliseconds in memory.
 *
 * Defaults differ from upstream where chaind is a development node first: the REST API and the EVM
 * JSON-RPC are on by default (SDK/EVM: off), and the JSON-RPC enables every namespace chaind has
 * (EVM: eth,net,web3). All listeners are on 127.0.0.1.
 */
import { defaultsOf, type FileSpec, type SectionSpec } from './schema.js';
import { pruningOptions, PRUNING_STRATEGIES, type PruningOptions, type PruningStrategy } from '../store/pruning.js';

export interface ApiConfig {
  enable: boolean;
  address: string;
  maxOpenConnections: number;
  /** seconds */
  rpcReadTimeout: number;
  /** seconds */
  rpcWriteTimeout: number;
  rpcMaxBodyBytes: number;
  enabledUnsafeCors: boolean;
}

export interface GrpcConfig {
  enable: boolean;
  address: string;
  maxRecvMsgSize: number;
  maxSendMsgSize: number;
  /** 0 = unlimited. */
  maxOpenConnections: number;
  /** ms; 0 = none. */
  handshakeTimeout: number;
  /** ms; 0 = none. */
  idleTimeout: number;
  maxConcurrentStreams: number;
  maxRecvBufferBytes: number;
}

export const JSON_RPC_NAMESPACES = ['eth', 'net', 'web3', 'txpool', 'debug', 'personal', 'miner'] as const;
export type JsonRpcNamespace = (typeof JSON_RPC_NAMESPACES)[number];

export interface JsonRpcConfig {
  enable: boolean;
  address: string;
  wsAddress: string;
  api: JsonRpcNamespace[];
  gasCap: number;
  allowInsecureUnlock: boolean;
  /** New keystore keys with geth's light scrypt cost (N 2^12, p 6) instead of the standard (N 2^18, p 1). */
  lightKdf: boolean;
  /** ms */
  evmTimeout: number;
  /** ether */
  txfeeCap: number;
  filterCap: number;
  /** eth_subscribe: websocket connections holding subscriptions (0: unlimited). */
  subscriptionClientsCap: number;
  /** eth_subscribe: subscriptions per connection (0: unlimited). */
  subscriptionsPerClientCap: number;
  /** eth_subscribe: notifications buffered per subscription while its client is behind. */
  subscriptionBuffer: number;
  feehistoryCap: number;
  logsCap: number;
  blockRangeCap: number;
  /** ms */
  httpTimeout: number;
  /** ms */
  allowUnprotectedTxs: boolean;
  maxOpenConnections: number;
  batchRequestLimit: number;
  batchResponseMaxSize: number;
  wsOrigins: string[];
  /** Where debug_ profiling methods write; relative to the home directory unless absolute. */
  profilesDir: string;
}

export interface EvmConfig {
  tracer: '' | 'json' | 'struct' | 'access_list' | 'markdown';
  maxTxGasWanted: number;
  cachePreimage: boolean;
  mempool: EvmMempoolConfig;
}

/** `[evm.mempool]`: the EVM tx pool's limits (src/mempool/evm_pool.ts), geth's txpool settings. */
export interface EvmMempoolConfig {
  /** Minimum tip (gas price of a legacy tx) admitted, in wei. */
  priceLimit: number;
  /** Minimum fee and tip increase of a replacement, in percent. */
  priceBump: number;
  accountSlots: number;
  globalSlots: number;
  accountQueue: number;
  globalQueue: number;
  /** ms: a sender's queued txs are dropped after this long without progress. */
  lifetime: number;
}

export interface CompatConfig {
  upstreamNames: boolean;
}

/** app.toml in memory. */
export interface AppConfig {
  /** DecCoins text, e.g. "0.025achain"; "" = accept any fee. Parse with parseDecCoins. */
  minimumGasPrices: string;
  /** Application-state versions kept for queries (src/store/pruning.ts). */
  pruning: PruningStrategy;
  /** Read with `pruning = "custom"` only. */
  pruningKeepRecent: number;
  /** Read with `pruning = "custom"` only. */
  pruningInterval: number;
  api: ApiConfig;
  grpc: GrpcConfig;
  jsonRpc: JsonRpcConfig;
  evm: EvmConfig;
  compat: CompatConfig;
}

/** SDK denom syntax (cosmos-sdk: types/coin.go reDnmString). */
const DENOM = '[a-zA-Z][a-zA-Z0-9/:._-]{2,127}';
const DEC_COIN = new RegExp(`^(\\d+(?:\\.\\d+)?)\\s*(${DENOM})$`);

export interface DecCoin {
  denom: string;
  /** Decimal text as written, e.g. "0.025". */
  amount: string;
}

/** Parse "0.025achain,1stake" (cosmos-sdk: types/dec_coin.go ParseDecCoins). Throws with the reason. */
export function parseDecCoins(s: string): DecCoin[] {
  const text = s.trim();
  if (text === '') return [];
  const out: DecCoin[] = [];
  for (const part of text.split(',')) {
    const m = DEC_COIN.exec(part.trim());
    if (!m) throw new Error(`invalid decimal coin expression ${JSON.stringify(part.trim())}`);
    if (out.some((c) => c.denom === m[2])) throw new Error(`duplicate denomination ${m[2]}`);
    out.push({ amount: m[1]!, denom: m[2]! });
  }
  return out;
}

function checkDecCoins(s: string): string | undefined {
  try {
    parseDecCoins(s);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

function checkNamespaces(list: string[]): string | undefined {
  const bad = list.find((n) => !(JSON_RPC_NAMESPACES as readonly string[]).includes(n));
  return bad === undefined ? undefined : `unknown namespace ${JSON.stringify(bad)} (known: ${JSON_RPC_NAMESPACES.join(',')})`;
}

const nonNeg = { t: 'int', min: 0 } as const;

/** Node timers overflow past 2^31-1 ms (they fire after 1 ms): refuse longer durations. */
const MAX_TIMER_MS = 2 ** 31 - 1;
function checkTimer(ms: number): string | undefined {
  return ms > MAX_TIMER_MS ? `must be at most ${MAX_TIMER_MS} ms (about 596h), got ${ms} ms` : undefined;
}

const base: SectionSpec = {
  name: '',
  doc: 'Base configuration.',
  fields: [
    {
      key: 'minimum-gas-prices',
      kind: { t: 'string' },
      def: '',
      doc: 'The minimum gas prices a validator is willing to accept for processing a transaction,\ne.g. "0.025achain". Empty accepts any fee.',
      check: checkDecCoins,
    },
    {
      key: 'pruning',
      kind: { t: 'enum', values: PRUNING_STRATEGIES },
      def: 'default',
      doc:
        'Application-state versions kept for queries at a height:\n' +
        'default: the last 362880 heights, pruned every 10 blocks;\n' +
        'nothing: every height;\n' +
        'everything: the last 2 heights, pruned every 10 blocks;\n' +
        'custom: pruning-keep-recent and pruning-interval.',
    },
    // The SDK writes both as strings ("0"); an int field accepts either.
    { key: 'pruning-keep-recent', kind: nonNeg, def: 0, doc: 'Heights kept below the latest (pruning = "custom" only; at least 2).' },
    { key: 'pruning-interval', kind: nonNeg, def: 0, doc: 'Prune every this many blocks (pruning = "custom" only; at least 10).' },
  ],
  // SDK base keys that do not apply to chaind's LMDB store.
  compat: {
    'halt-height': 0,
    'halt-time': 0,
    'min-retain-blocks': 0,
    'inter-block-cache': undefined,
    'index-events': undefined,
    'iavl-cache-size': undefined,
    'iavl-disable-fastnode': undefined,
    'app-db-backend': undefined,
    'query-gas-limit': undefined,
  },
};

const api: SectionSpec = {
  name: 'api',
  doc: 'REST API (grpc-gateway style) configuration.',
  fields: [
    { key: 'enable', kind: { t: 'bool' }, def: true, doc: 'Enable the REST API server.' },
    { key: 'address', kind: { t: 'laddr' }, def: 'tcp://127.0.0.1:1317', doc: 'Address the REST API server listens on.' },
    { key: 'max-open-connections', kind: nonNeg, def: 1000, doc: 'Maximum number of simultaneous connections; 0 = unlimited.' },
    { key: 'rpc-read-timeout', kind: nonNeg, def: 10, doc: 'Read timeout, in seconds.' },
    { key: 'rpc-write-timeout', kind: nonNeg, def: 0, doc: 'Write timeout, in seconds; 0 = none.' },
    { key: 'rpc-max-body-bytes', kind: { t: 'int', min: 1 }, def: 1_000_000, doc: 'Maximum request body size, in bytes.' },
    { key: 'enabled-unsafe-cors', kind: { t: 'bool' }, def: false, doc: 'Allow cross-origin requests from any origin.' },
  ],
  compat: { swagger: undefined },
};

const grpc: SectionSpec = {
  name: 'grpc',
  doc: 'gRPC server configuration (same query services as the REST API).',
  fields: [
    { key: 'enable', kind: { t: 'bool' }, def: true, doc: 'Enable the gRPC server.' },
    { key: 'address', kind: { t: 'laddr' }, def: '127.0.0.1:9090', doc: 'Address the gRPC server listens on (host:port).' },
    { key: 'max-recv-msg-size', kind: { t: 'int', min: 1 }, def: 10_485_760, doc: 'Maximum size of a received message, in bytes (10 MiB).' },
    { key: 'max-send-msg-size', kind: { t: 'int', min: 1 }, def: 2_147_483_647, doc: 'Maximum size of a sent message, in bytes.' },
    // chaind's own limits (grpc-go has none of these by default); why these values:
    // docs/ARCHITECTURE.md "gRPC limits and fd limits".
    {
      key: 'max-open-connections',
      kind: nonNeg,
      def: 256,
      doc: 'Maximum number of simultaneous connections; 0 = unlimited. Connections past it are\nclosed at once. gRPC clients multiplex their calls over one connection.',
    },
    {
      key: 'handshake-timeout',
      kind: { t: 'duration', min: 0 },
      def: 10_000,
      check: checkTimer,
      doc: 'A connection that has not sent the HTTP/2 preface and SETTINGS by then is closed; 0 = none.',
    },
    {
      key: 'idle-timeout',
      kind: { t: 'duration', min: 0 },
      def: 300_000,
      check: checkTimer,
      doc: 'A connection without an open call for this long is sent GOAWAY and closed; 0 = none.',
    },
    {
      key: 'max-concurrent-streams',
      kind: { t: 'int', min: 1, max: 2_147_483_647 },
      def: 100,
      doc: 'Maximum number of concurrent calls (HTTP/2 streams) on one connection; more are refused.',
    },
    {
      key: 'max-recv-buffer-bytes',
      kind: { t: 'int', min: 1 },
      def: 134_217_728,
      doc: 'Maximum bytes of unfinished request messages held across all calls (128 MiB); a call\nthat would go past it fails with RESOURCE_EXHAUSTED.',
    },
  ],
};

const jsonRpc: SectionSpec = {
  name: 'json-rpc',
  doc: 'EVM JSON-RPC configuration.',
  fields: [
    { key: 'enable', kind: { t: 'bool' }, def: true, doc: 'Enable the EVM JSON-RPC server.' },
    { key: 'address', kind: { t: 'laddr' }, def: '127.0.0.1:8545', doc: 'HTTP address.' },
    { key: 'ws-address', kind: { t: 'laddr' }, def: '127.0.0.1:8546', doc: 'WebSocket address.' },
    {
      key: 'api',
      kind: { t: 'csv' },
      def: ['eth', 'net', 'web3'],
      doc: 'Comma separated namespaces to enable: eth, net, web3, txpool, debug, personal, miner (default: eth, net, web3).',
      check: checkNamespaces,
    },
    { key: 'gas-cap', kind: nonNeg, def: 25_000_000, doc: 'Gas cap for eth_call and eth_estimateGas; 0 = unlimited.' },
    { key: 'allow-insecure-unlock', kind: { t: 'bool' }, def: true, doc: 'Allow account unlocking (personal namespace) over HTTP.' },
    { key: 'light-kdf', kind: { t: 'bool' }, def: false, doc: "Encrypt new keystore keys with geth's light scrypt cost (N 4096, p 6: fast, weak) instead of the standard (N 262144, p 1: ~1 s and 256 MiB per unlock)." },
    { key: 'evm-timeout', kind: { t: 'duration' }, def: 5_000, doc: 'Timeout of eth_call and eth_estimateGas; 0 = none.' },
    { key: 'txfee-cap', kind: { t: 'float', min: 0 }, def: 1, doc: 'Fee cap for send-transaction variants, in ether; 0 = none.' },
    { key: 'filter-cap', kind: nonNeg, def: 200, doc: 'Maximum number of installed filters; 0 = unlimited.' },
    {
      key: 'subscription-clients-cap',
      kind: nonNeg,
      def: 100,
      doc: 'Maximum number of websocket connections holding eth_subscribe subscriptions; 0 = unlimited.',
    },
    { key: 'subscriptions-per-client-cap', kind: nonNeg, def: 32, doc: 'Maximum number of eth_subscribe subscriptions of one websocket connection; 0 = unlimited.' },
    {
      key: 'subscription-buffer',
      kind: { t: 'int', min: 1 },
      def: 1024,
      doc: 'Notifications one subscription buffers while its client has over 1 MiB unread; a client\nthat fills it, or stays over 1 MiB behind for 10 s, is disconnected.',
    },
    { key: 'feehistory-cap', kind: nonNeg, def: 100, doc: 'Maximum block count of eth_feeHistory.' },
    { key: 'logs-cap', kind: nonNeg, def: 10_000, doc: 'Maximum number of results of eth_getLogs.' },
    { key: 'block-range-cap', kind: nonNeg, def: 10_000, doc: 'Maximum block range of eth_getLogs.' },
    {
      key: 'http-timeout',
      kind: { t: 'duration' },
      def: 30_000,
      doc: 'Write timeout of the HTTP server: a call still running 100 ms before it is answered\n-32002 "request timed out" (in a batch, with every call not answered by then); 0 = none.',
    },
    { key: 'allow-unprotected-txs', kind: { t: 'bool' }, def: false, doc: 'Accept transactions without EIP-155 replay protection.' },
    { key: 'max-open-connections', kind: nonNeg, def: 0, doc: 'Maximum number of simultaneous connections; 0 = unlimited.' },
    { key: 'batch-request-limit', kind: nonNeg, def: 1000, doc: 'Maximum number of requests in a batch; 0 = unlimited.' },
    { key: 'batch-response-max-size', kind: nonNeg, def: 25_000_000, doc: 'Maximum size of a batch response, in bytes; 0 = unlimited.' },
    { key: 'ws-origins', kind: { t: 'list' }, def: ['127.0.0.1', 'localhost'], doc: 'Origins allowed to open a WebSocket; ["*"] allows all.' },
    {
      key: 'profiles-dir',
      kind: { t: 'string' },
      def: 'profiles',
      doc: 'Directory the debug_ profiling methods write into (CPU profiles, heap snapshots, traces), relative\nto the home directory unless absolute; a file name resolving outside it is refused.',
    },
  ],
  // http-idle-timeout: uWebSockets.js closes an idle HTTP connection after a fixed 10 s.
  compat: { 'enable-indexer': undefined, 'metrics-address': undefined, 'fix-revert-gas-refund-height': undefined, 'enable-profiling': undefined, 'http-idle-timeout': '2m0s' },
};

const evm: SectionSpec = {
  name: 'evm',
  doc: 'EVM configuration.',
  fields: [
    {
      key: 'tracer',
      kind: { t: 'enum', values: ['', 'json', 'struct', 'access_list', 'markdown'] },
      def: '',
      doc: 'Tracer used to trace every EVM execution (debugging only): "", json, struct, access_list or markdown.',
    },
    { key: 'max-tx-gas-wanted', kind: nonNeg, def: 0, doc: 'Gas wanted for each eth tx returned in ante handler in check tx mode; 0 = off.' },
    { key: 'cache-preimage', kind: { t: 'bool' }, def: false, doc: 'Keep SHA3 preimages for debug_preimage.' },
  ],
  // min-tip (Cosmos EVM releases after v0.6): the EVM pool's minimum tip is [evm.mempool] price-limit.
  compat: { 'evm-chain-id': undefined, 'min-tip': 0 },
};

const positive = { t: 'int', min: 1 } as const;

/**
 * Cosmos EVM v0.6's `[evm.mempool]` (cosmos/evm: server/config/toml.go), with geth's
 * legacypool.DefaultConfig values (ethereum/go-ethereum:core/txpool/legacypool/legacypool.go),
 * except `price-limit`: chaind's EVM charges no base fee and suggests a tip of 0
 * (eth_gasPrice, eth_maxPriorityFeePerGas), so geth's 1 wei would refuse what wallets send.
 * geth replaces a value below 1 by its default; chaind refuses it.
 */
const evmMempool: SectionSpec = {
  name: 'evm.mempool',
  doc: 'EVM transaction pool (geth\'s txpool settings).',
  fields: [
    {
      key: 'price-limit',
      kind: nonNeg,
      def: 0,
      doc: 'Minimum gas tip (a legacy tx\'s gas price) a transaction must offer to enter the pool, in wei;\n0 = none (geth: 1; chaind suggests a tip of 0).',
    },
    { key: 'price-bump', kind: positive, def: 10, doc: 'Minimum increase of both fee cap and tip, in percent, for a transaction to replace one\nwith the same sender and nonce.' },
    {
      key: 'account-slots',
      kind: positive,
      def: 16,
      doc: 'Executable transactions of one sender that are safe from eviction while senders with more\nhold any (a sender may have more executable transactions than this).',
    },
    { key: 'global-slots', kind: positive, def: 5120, doc: 'Executable transactions of all senders; with global-queue, the pool\'s capacity.' },
    { key: 'account-queue', kind: positive, def: 64, doc: 'Non-executable (nonce-gapped) transactions of one sender; more are refused.' },
    { key: 'global-queue', kind: positive, def: 1024, doc: 'Non-executable transactions of all senders; with global-slots, the pool\'s capacity.' },
    {
      key: 'lifetime',
      kind: { t: 'duration', min: 1 },
      def: 3 * 3_600_000,
      doc: 'A sender\'s non-executable transactions are dropped when none of its transactions became\nexecutable for this long (senders whose transactions came through this node\'s RPC are spared).',
    },
  ],
  // Cosmos EVM's keys chaind does not use, with their defaults (a changed value is warned about);
  // the last two are from Cosmos EVM releases after v0.6.
  compat: { locals: [], 'no-locals': false, journal: 'transactions.rlp', rejournal: '1h0m0s', 'insert-queue-size': undefined, 'pending-tx-proposal-timeout': undefined },
};

const compat: SectionSpec = {
  name: 'compat',
  doc:
    'Compatibility with unmodified upstream clients.\n' +
    'chaind emits the spec\'s neutral names (consensus/PubKeyEd25519, consensus/event/NewBlock,\n' +
    'node.event, /chain.auth.v1beta1.*, /chain/..., chain-sdk/...) and accepts the upstream ones.',
  fields: [
    {
      key: 'upstream-names',
      kind: { t: 'bool' },
      def: false,
      doc: 'Emit the upstream names instead (tendermint/PubKeyEd25519, tendermint/event/NewBlock,\ntm.event, /cosmos.*, /cosmos/..., cosmos-sdk/...) so CosmJS, Keplr and explorers work as-is.',
    },
  ],
};

export const APP_CONFIG_SPEC: FileSpec = {
  file: 'config/app.toml',
  header:
    'chaind application configuration (Cosmos SDK / Cosmos EVM names).\n' +
    'Durations are Go duration strings ("5s", "2m0s").\n' +
    'Any value can be overridden on the command line, e.g. --json-rpc.address 127.0.0.1:8545.',
  sections: [base, api, grpc, jsonRpc, evm, evmMempool, compat],
  ignoredSections: ['telemetry', 'rosetta', 'grpc-web', 'state-sync', 'streaming', 'mempool', 'wasm', 'tls'],
};

/**
 * The pruning options of an app.toml (server/pruning.go GetPruningOptionsFromFlags: `custom`
 * validated, the numbers ignored otherwise). Throws PruningOptionsError with the SDK's text.
 */
export function appPruningOptions(c: Pick<AppConfig, 'pruning' | 'pruningKeepRecent' | 'pruningInterval'>): PruningOptions {
  return pruningOptions(c.pruning, BigInt(c.pruningKeepRecent), BigInt(c.pruningInterval));
}

/** Checks across app.toml fields: [`section.key`, reason] pairs (empty when valid). */
export function crossCheckAppConfig(c: AppConfig): [string, string][] {
  try {
    appPruningOptions(c);
    return [];
  } catch (e) {
    return [['.pruning', (e as Error).message]];
  }
}

export function defaultAppConfig(): AppConfig {
  return defaultsOf(APP_CONFIG_SPEC) as AppConfig;
}

