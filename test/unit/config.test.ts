/** config.toml / app.toml: durations, addresses, defaults, precedence, validation messages, writer. */
import t, { type Test } from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import {
  ConfigError,
  defaultAppConfig,
  defaultNodeConfig,
  formatDuration,
  loadConfig,
  parseDecCoins,
  parseDuration,
  parseListenAddress,
  parsePeerAddress,
  renderAppToml,
  renderConfigToml,
  type AppConfig,
  type NodeConfig,
} from '../../src/config/index.js';
import { settingFlagNames } from '../../src/config/load.js';
import { appPruningOptions } from '../../src/config/app-config.js';

function tempHome(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'chaind-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'config'));
  return dir;
}

function writeConfig(home: string, toml: string, file = 'config.toml'): void {
  writeFileSync(join(home, 'config', file), toml);
}

t.test('Go durations → milliseconds', async (t) => {
  const rows: Array<[string, number | undefined]> = [
    ['10s', 10_000],
    ['500ms', 500],
    ['1m30s', 90_000],
    ['1h', 3_600_000],
    ['2m0s', 120_000],
    ['1.5s', 1_500],
    ['1.1s', 1_100],
    ['.5s', 500],
    ['0', 0],
    ['0s', 0],
    ['100us', 0.1],
    ['100µs', 0.1],
    ['250ns', 0.00025],
    ['1h2m3s4ms', 3_723_004],
    ['-1s', -1_000],
    ['+2s', 2_000],
    ['abc', undefined],
    ['', undefined],
    ['10', undefined],
    ['1x', undefined],
    ['s', undefined],
    ['1s ', undefined],
    ['1..5s', undefined],
  ];
  for (const [text, want] of rows) t.equal(parseDuration(text), want, JSON.stringify(text));
});

t.test('milliseconds → Go duration text', async (t) => {
  const rows: Array<[number, string]> = [
    [0, '0s'],
    [500, '500ms'],
    [1_000, '1s'],
    [1_500, '1.5s'],
    [90_000, '1m30s'],
    [120_000, '2m0s'],
    [3_600_000, '1h0m0s'],
    [10_000, '10s'],
    [0.25, '250µs'],
    [0.000001, '1ns'],
    [-2_000, '-2s'],
  ];
  for (const [ms, want] of rows) {
    t.equal(formatDuration(ms), want, `${ms}`);
    t.equal(parseDuration(want), ms, `round trip ${want}`);
  }
});

t.test('listen and peer addresses', async (t) => {
  t.same(parseListenAddress('tcp://127.0.0.1:26657'), { host: '127.0.0.1', port: 26657 });
  t.same(parseListenAddress('0.0.0.0:26656'), { host: '0.0.0.0', port: 26656 });
  t.same(parseListenAddress(':26660'), { host: '127.0.0.1', port: 26660 }, 'host-less binds loopback');
  t.same(parseListenAddress('[::1]:9090'), { host: '::1', port: 9090 });
  t.same(parseListenAddress('localhost:0'), { host: 'localhost', port: 0 });
  for (const bad of ['unix:///tmp/x.sock', 'tcp://127.0.0.1', '127.0.0.1:70000', 'host:port', '::1:80', 'a b:1']) {
    t.throws(() => parseListenAddress(bad), bad);
  }
  const id = 'ab'.repeat(20);
  t.same(parsePeerAddress(`${id}@1.2.3.4:26656`), { id, host: '1.2.3.4', port: 26656 });
  for (const bad of ['1.2.3.4:26656', `abc@1.2.3.4:1`, `${id}@:26656`, `${id}@1.2.3.4:0`]) {
    t.throws(() => parsePeerAddress(bad), bad);
  }
});

t.test('DecCoins', async (t) => {
  t.same(parseDecCoins(''), []);
  t.same(parseDecCoins('0.025achain'), [{ amount: '0.025', denom: 'achain' }]);
  t.same(parseDecCoins('1achain, 2stake'), [
    { amount: '1', denom: 'achain' },
    { amount: '2', denom: 'stake' },
  ]);
  t.throws(() => parseDecCoins('achain'));
  t.throws(() => parseDecCoins('1ab'), 'denom too short');
  t.throws(() => parseDecCoins('1achain,2achain'), 'duplicate');
});

t.test('config.toml defaults are CometBFT 0.38 (and the chaind choices)', async (t) => {
  const want: NodeConfig = {
    moniker: 'm',
    dbDir: 'data',
    logLevel: 'info',
    logFormat: 'plain',
    genesisFile: 'config/genesis.json',
    privValidatorKeyFile: 'config/priv_validator_key.json',
    privValidatorStateFile: 'data/priv_validator_state.json',
    nodeKeyFile: 'config/node_key.json',
    rpc: {
      laddr: 'tcp://127.0.0.1:26657',
      corsAllowedOrigins: [],
      corsAllowedMethods: ['HEAD', 'GET', 'POST'],
      corsAllowedHeaders: ['Origin', 'Accept', 'Content-Type', 'X-Requested-With', 'X-Server-Time'],
      unsafe: false,
      maxOpenConnections: 900,
      maxSubscriptionClients: 100,
      maxSubscriptionsPerClient: 5,
      experimentalSubscriptionBufferSize: 200,
      experimentalWebsocketWriteBufferSize: 200,
      experimentalCloseOnSlowClient: false,
      timeoutBroadcastTxCommit: 10_000,
      maxRequestBatchSize: 10,
      maxBodyBytes: 1_000_000,
      maxHeaderBytes: 1_048_576,
      maxLoopSlice: 5,
      maxWebsocketQueuedRequests: 128,
    },
    p2p: {
      laddr: 'tcp://0.0.0.0:26656',
      externalAddress: '',
      seeds: [],
      persistentPeers: [],
      addrBookFile: 'config/addrbook.json',
      addrBookStrict: true,
      maxNumInboundPeers: 40,
      maxNumOutboundPeers: 10,
      unconditionalPeerIds: [],
      persistentPeersMaxDialPeriod: 0,
      flushThrottleTimeout: 100,
      maxPacketMsgPayloadSize: 1024,
      sendRate: 5_120_000,
      recvRate: 5_120_000,
      pex: true,
      seedMode: false,
      privatePeerIds: [],
      allowDuplicateIp: false,
      handshakeTimeout: 20_000,
      dialTimeout: 3_000,
      ensurePeersPeriod: 30_000,
    },
    mempool: {
      type: 'flood',
      recheck: true,
      recheckTimeout: 1_000,
      broadcast: true,
      size: 5000,
      maxTxsBytes: 1_073_741_824,
      cacheSize: 10_000,
      keepInvalidTxsInCache: false,
      maxTxBytes: 1_048_576,
    },
    consensus: {
      walFile: 'data/cs.wal/wal',
      timeoutPropose: 3_000,
      timeoutProposeDelta: 500,
      timeoutPrevote: 1_000,
      timeoutPrevoteDelta: 500,
      timeoutPrecommit: 1_000,
      timeoutPrecommitDelta: 500,
      timeoutCommit: 1_000,
      doubleSignCheckHeight: 0,
      skipTimeoutCommit: false,
      createEmptyBlocks: true,
      createEmptyBlocksInterval: 0,
      peerGossipSleepDuration: 100,
      peerQueryMaj23SleepDuration: 2_000,
    },
    txIndex: { indexer: 'kv' },
    instrumentation: { prometheus: true, prometheusListenAddr: '127.0.0.1:26660', maxOpenConnections: 3, namespace: 'chaind' },
  };
  t.same(defaultNodeConfig({ moniker: 'm' }), want);
  t.ok(defaultNodeConfig().moniker.length > 0, 'moniker defaults to the host name');
});

t.test('app.toml defaults', async (t) => {
  const want: AppConfig = {
    minimumGasPrices: '',
    pruning: 'default',
    pruningKeepRecent: 0,
    pruningInterval: 0,
    api: {
      enable: true,
      address: 'tcp://127.0.0.1:1317',
      maxOpenConnections: 1000,
      rpcReadTimeout: 10,
      rpcWriteTimeout: 0,
      rpcMaxBodyBytes: 1_000_000,
      enabledUnsafeCors: false,
    },
    grpc: { enable: true, address: '127.0.0.1:9090', maxRecvMsgSize: 10_485_760, maxSendMsgSize: 2_147_483_647, maxOpenConnections: 256, handshakeTimeout: 10_000, idleTimeout: 300_000, maxConcurrentStreams: 100, maxRecvBufferBytes: 134_217_728 },
    jsonRpc: {
      enable: true,
      address: '127.0.0.1:8545',
      wsAddress: '127.0.0.1:8546',
      api: ['eth', 'net', 'web3'],
      gasCap: 25_000_000,
      allowInsecureUnlock: true,
      lightKdf: false,
      evmTimeout: 5_000,
      txfeeCap: 1,
      filterCap: 200,
      subscriptionClientsCap: 100,
      subscriptionsPerClientCap: 32,
      subscriptionBuffer: 1024,
      feehistoryCap: 100,
      logsCap: 10_000,
      blockRangeCap: 10_000,
      httpTimeout: 30_000,
      allowUnprotectedTxs: false,
      maxOpenConnections: 0,
      batchRequestLimit: 1000,
      batchResponseMaxSize: 25_000_000,
      wsOrigins: ['127.0.0.1', 'localhost'],
      profilesDir: 'profiles',
    },
    evm: {
      tracer: '',
      maxTxGasWanted: 0,
      cachePreimage: false,
      mempool: { priceLimit: 0, priceBump: 10, accountSlots: 16, globalSlots: 5120, accountQueue: 64, globalQueue: 1024, lifetime: 10_800_000 },
    },
    compat: { upstreamNames: false },
  };
  t.same(defaultAppConfig(), want);
});

t.test('defaults are fresh objects', async (t) => {
  const a = defaultNodeConfig();
  a.rpc.corsAllowedMethods.push('PUT');
  t.same(defaultNodeConfig().rpc.corsAllowedMethods, ['HEAD', 'GET', 'POST']);
});

t.test('writer: commented TOML that parses back to the same values', async (t) => {
  const c = defaultNodeConfig({ moniker: 'node "quoted" \\ x\x7f\n\té' });
  c.consensus.timeoutCommit = 90_000;
  c.p2p.persistentPeers = [`${'ab'.repeat(20)}@10.0.0.1:26656`, `${'cd'.repeat(20)}@10.0.0.2:26656`];
  c.rpc.corsAllowedOrigins = ['*'];
  const text = renderConfigToml(c);
  t.match(text, /^# chaind node configuration/);
  t.match(text, /\n\[consensus\]\n/);
  t.match(text, /timeout_commit = "1m30s"/);
  t.match(text, /persistent_peers = "abab.*@10\.0\.0\.1:26656,cdcd.*@10\.0\.0\.2:26656"/);
  t.match(text, /# TCP address for the RPC server to listen on\.\nladdr = "tcp:\/\/127\.0\.0\.1:26657"/);
  t.match(text, /prometheus = true/);
  t.match(text, /127\.0\.0\.1 \(CometBFT: ":26660", every interface\)/, 'the prometheus choice is explained');
  const raw = parseToml(text) as Record<string, Record<string, unknown>>;
  t.equal(raw.moniker as unknown, 'node "quoted" \\ x\x7f\n\té');
  t.equal(raw.mempool!['keep-invalid-txs-in-cache'], false);

  const home = tempHome(t);
  writeConfig(home, text);
  const app = defaultAppConfig();
  app.jsonRpc.api = ['eth', 'net'];
  app.compat.upstreamNames = true;
  app.jsonRpc.txfeeCap = 1;
  writeConfig(home, renderAppToml(app), 'app.toml');
  const loaded = loadConfig({ home });
  t.same(loaded.config, c);
  t.same(loaded.appConfig, app);
  t.same(loaded.warnings, []);
  t.match(renderAppToml(app), /api = "eth,net"/);
  t.match(renderAppToml(app), /\[compat\]\n\n# Emit the upstream names/);
  t.match(renderAppToml(app), /txfee-cap = 1\.0/);
});

t.test('[evm.mempool]: a sub-table of [evm], written with comments, read back, overridden by --evm.mempool.* flags', async (t) => {
  const app = defaultAppConfig();
  const text = renderAppToml(app);
  // Written after [evm]'s own keys, each key with its comment, geth's defaults (price-limit: chaind's 0).
  t.match(text, /\[evm\]\n[^[]*cache-preimage = false\n\n#+\n# EVM transaction pool[^\n]*\n\n\[evm\.mempool\]\n\n# Minimum gas tip[^\n]*\n# 0 = none[^\n]*\nprice-limit = 0\n/);
  for (const line of ['price-bump = 10', 'account-slots = 16', 'global-slots = 5120', 'account-queue = 64', 'global-queue = 1024', 'lifetime = "3h0m0s"']) {
    t.match(text, new RegExp(`\n# [^\n]+\n${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`), `${line}, with a comment`);
  }
  const raw = parseToml(text) as { evm: { mempool: Record<string, unknown>; tracer: unknown } };
  t.equal(raw.evm.mempool['global-slots'], 5120, 'TOML sees [evm.mempool] inside [evm]');
  t.equal(raw.evm.tracer, '');

  const home = tempHome(t);
  app.evm.mempool.priceBump = 25;
  app.evm.mempool.lifetime = 90_000;
  app.evm.tracer = 'json';
  writeConfig(home, renderAppToml(app), 'app.toml');
  const loaded = loadConfig({ home });
  t.same(loaded.appConfig, app, 'round trip');
  t.same(loaded.warnings.filter((w) => w.includes('app.toml')), [], 'no warning: [evm] mempool is not an unknown key');

  writeConfig(home, '[evm]\ntracer = "struct"\n[evm.mempool]\nprice-limit = 7\naccount-queue = 2\nlifetime = "10m"\n', 'app.toml');
  const flagged = loadConfig({ home, flags: { 'evm.mempool.price-bump': '20', 'evm.mempool.account_queue': 3 } });
  t.same(flagged.appConfig.evm.mempool, { priceLimit: 7, priceBump: 20, accountSlots: 16, globalSlots: 5120, accountQueue: 3, globalQueue: 1024, lifetime: 600_000 }, 'file and flags');
  t.equal(flagged.appConfig.evm.tracer, 'struct', '[evm] itself still read');
  t.ok(settingFlagNames().includes('evm.mempool.price-bump'), 'start knows the flag');

  writeConfig(home, '[evm.mempool]\nprice-limt = 7\njournal = "transactions.rlp"\nno-locals = true\n', 'app.toml');
  t.same(loadConfig({ home }).warnings.filter((w) => w.includes('app.toml')), [
    'config/app.toml: unknown key [evm.mempool] price-limt (ignored)',
    'config/app.toml: [evm.mempool] no-locals is not supported by chaind (ignored)',
  ], 'a misspelt key warns; Cosmos EVM\'s journal at its default passes quietly');

  // Cosmos EVM's [evm] min-tip and [json-rpc] http-idle-timeout: quiet at their defaults, warned when changed.
  writeConfig(home, '[evm]\nmin-tip = 0\n[json-rpc]\nhttp-idle-timeout = "2m0s"\n', 'app.toml');
  t.same(loadConfig({ home }).warnings.filter((w) => w.includes('app.toml')), [], 'at their defaults');
  writeConfig(home, '[evm]\nmin-tip = 5\n[json-rpc]\nhttp-idle-timeout = "5m0s"\n', 'app.toml');
  t.same(loadConfig({ home }).warnings.filter((w) => w.includes('app.toml')), [
    'config/app.toml: [json-rpc] http-idle-timeout is not supported by chaind (ignored)',
    'config/app.toml: [evm] min-tip is not supported by chaind (ignored)',
  ], 'changed');
});

t.test('precedence: flag beats file beats default', async (t) => {
  const home = tempHome(t);
  writeConfig(
    home,
    `moniker = "file"
log_level = "warn"
[rpc]
laddr = "tcp://127.0.0.1:1111"
max_body_bytes = 5
[consensus]
timeout_commit = "5s"
timeout_propose = "4s"
`,
  );
  writeConfig(home, `[json-rpc]\naddress = "127.0.0.1:7000"\napi = "eth"\n[compat]\nupstream-names = true\n`, 'app.toml');
  const { config, appConfig, warnings, paths } = loadConfig({
    home,
    flags: {
      'rpc.laddr': 'tcp://127.0.0.1:2222',
      log_level: 'debug',
      'consensus.timeout_commit': '250ms',
      'json-rpc.ws-address': '127.0.0.1:7001',
      'instrumentation.prometheus-listen-addr': '127.0.0.1:9999',
      'json_rpc.api': 'eth,web3',
      'compat.upstream_names': 'false',
      'p2p.pex': false,
      'mempool.size': 7,
      'api.address': undefined,
    },
  });
  t.equal(config.rpc.laddr, 'tcp://127.0.0.1:2222', 'flag over file');
  t.equal(config.logLevel, 'debug', 'flag over file (top level)');
  t.equal(config.consensus.timeoutCommit, 250, 'flag over file (duration)');
  t.equal(config.consensus.timeoutPropose, 4_000, 'file over default');
  t.equal(config.rpc.maxBodyBytes, 5, 'file over default');
  t.equal(config.moniker, 'file');
  t.equal(config.consensus.timeoutPrevote, 1_000, 'default');
  t.equal(config.instrumentation.prometheusListenAddr, '127.0.0.1:9999', 'dash/underscore spelling of a flag');
  t.equal(config.p2p.pex, false, 'boolean flag value');
  t.equal(config.mempool.size, 7, 'number flag value');
  t.equal(appConfig.jsonRpc.address, '127.0.0.1:7000', 'app file over default');
  t.equal(appConfig.jsonRpc.wsAddress, '127.0.0.1:7001');
  t.same(appConfig.jsonRpc.api, ['eth', 'web3']);
  t.equal(appConfig.compat.upstreamNames, false, 'flag false beats file true');
  t.equal(appConfig.api.address, 'tcp://127.0.0.1:1317', 'undefined flag is skipped');
  t.same(warnings, []);
  t.equal(paths.genesis, join(home, 'config', 'genesis.json'));
  t.equal(paths.walFile, join(home, 'data', 'cs.wal', 'wal'));
  t.equal(paths.jwtSecret, join(home, 'config', 'jwt.hex'));
});

t.test('absolute paths in config stay absolute', async (t) => {
  const home = tempHome(t);
  writeConfig(home, `genesis_file = "/elsewhere/genesis.json"\ndb_dir = "db"\n`);
  const { paths } = loadConfig({ home });
  t.equal(paths.genesis, '/elsewhere/genesis.json');
  t.equal(paths.dbDir, join(home, 'db'));
});

t.test('missing files: defaults and a warning each', async (t) => {
  const home = tempHome(t);
  const { config, appConfig, warnings } = loadConfig({ home });
  t.equal(config.rpc.laddr, 'tcp://127.0.0.1:26657');
  t.equal(appConfig.grpc.address, '127.0.0.1:9090');
  t.same(warnings, ['config/config.toml: not found; using defaults', 'config/app.toml: not found; using defaults']);
});

t.test('unknown keys are ignored with a warning; upstream-only keys pass quietly at their defaults', async (t) => {
  const home = tempHome(t);
  writeConfig(
    home,
    `proxy_app = "tcp://127.0.0.1:26658"
db_backend = "goleveldb"
version = "0.38.17"
bogus = 1
[rpc]
laddr = "tcp://127.0.0.1:26657"
pprof_laddr = ""
tls_cert_file = "cert.pem"
nope = true
[statesync]
enable = false
[whatever]
x = 1
`,
  );
  writeConfig(home, `pruning = "default"\n[telemetry]\nenabled = false\n[json-rpc]\nenable-indexer = false\nfoo = 1\n`, 'app.toml');
  const { config, warnings } = loadConfig({ home });
  t.equal(config.rpc.laddr, 'tcp://127.0.0.1:26657');
  t.same(warnings.sort(), [
    'config/app.toml: unknown key [json-rpc] foo (ignored)',
    'config/config.toml: [rpc] tls_cert_file is not supported by chaind (ignored)',
    'config/config.toml: unknown key [rpc] nope (ignored)',
    'config/config.toml: unknown key bogus (ignored)',
    'config/config.toml: unknown section [whatever] (ignored)',
  ]);
});

t.test('app.toml pruning: SDK strings accepted, numbers read only with custom', async (t) => {
  const home = tempHome(t);
  writeConfig(home, 'pruning = "custom"\npruning-keep-recent = "2"\npruning-interval = "10"\n', 'app.toml');
  const { appConfig, warnings } = loadConfig({ home });
  t.same([appConfig.pruning, appConfig.pruningKeepRecent, appConfig.pruningInterval], ['custom', 2, 10]);
  t.same(warnings.filter((w) => w.includes('pruning')), [], 'pruning keys are no longer ignored');
  t.same(appPruningOptions(appConfig), { strategy: 'custom', keepRecent: 2n, interval: 10n });
  // The SDK's template writes "0" for both with the other strategies: not an error there.
  const h2 = tempHome(t);
  writeConfig(h2, 'pruning = "everything"\npruning-keep-recent = "0"\npruning-interval = "0"\n', 'app.toml');
  t.same(appPruningOptions(loadConfig({ home: h2 }).appConfig), { strategy: 'everything', keepRecent: 2n, interval: 10n });
  t.throws(() => loadConfig({ home: tempHome(t), flags: { pruning: 'custom' } }), { message: /^flag --pruning: invalid custom pruning options: 'pruning-interval' must not be 0/ });
});

t.test('invalid values: ConfigError naming file and field', async (t) => {
  const rows: Array<[string, string, string]> = [
    ['config.toml', '[consensus]\ntimeout_commit = "abc"\n', 'config/config.toml: [consensus] timeout_commit: invalid duration "abc"'],
    ['config.toml', '[consensus]\ntimeout_commit = 5\n', 'config/config.toml: [consensus] timeout_commit: expected a duration string such as "1s", got 5'],
    ['config.toml', '[consensus]\ntimeout_commit = "-1s"\n', 'config/config.toml: [consensus] timeout_commit: must be >= 0s, got "-1s"'],
    ['config.toml', '[rpc]\nladdr = "unix:///tmp/s"\n', 'config/config.toml: [rpc] laddr: invalid listen address "unix:///tmp/s": unsupported scheme "unix" (only tcp)'],
    ['config.toml', '[rpc]\nmax_open_connections = "many"\n', 'config/config.toml: [rpc] max_open_connections: expected an integer, got "many"'],
    ['config.toml', '[rpc]\nmax_open_connections = -1\n', 'config/config.toml: [rpc] max_open_connections: must be >= 0, got -1'],
    ['config.toml', '[rpc]\nmax_open_connections = 1.5\n', 'config/config.toml: [rpc] max_open_connections: expected an integer, got 1.5'],
    ['config.toml', '[rpc]\nunsafe = "yes"\n', 'config/config.toml: [rpc] unsafe: expected true or false, got "yes"'],
    ['config.toml', '[rpc]\ncors_allowed_origins = "*"\n', 'config/config.toml: [rpc] cors_allowed_origins: expected an array of strings, got "*"'],
    [
      'config.toml',
      '[rpc]\nexperimental_subscription_buffer_size = 50\n',
      'config/config.toml: [rpc] experimental_subscription_buffer_size: must be >= 100, got 50',
    ],
    [
      'config.toml',
      '[rpc]\nexperimental_subscription_buffer_size = 300\n',
      'config/config.toml: [rpc] experimental_websocket_write_buffer_size: must be >= experimental_subscription_buffer_size (300), got 200',
    ],
    ['config.toml', 'log_format = "xml"\n', 'config/config.toml: log_format: invalid value "xml" (want one of "plain", "json")'],
    ['config.toml', 'log_level = "loud"\n', 'config/config.toml: log_level: invalid log level "loud" (want one of debug|info|warn|error|none)'],
    ['config.toml', '[mempool]\ntype = "priority"\n', 'config/config.toml: [mempool] type: invalid value "priority" (want one of "flood", "nop")'],
    ['config.toml', '[tx_index]\nindexer = "psql"\n', 'config/config.toml: [tx_index] indexer: invalid value "psql" (want one of "kv", "null")'],
    [
      'config.toml',
      '[p2p]\npersistent_peers = "1.2.3.4:26656"\n',
      'config/config.toml: [p2p] persistent_peers: invalid peer address "1.2.3.4:26656": want <node id>@host:port',
    ],
    ['config.toml', 'rpc = 5\n', 'config/config.toml: [rpc]: expected a table'],
    ['config.toml', '[rpc\n', 'config/config.toml: invalid TOML at line 1, column'],
    ['app.toml', 'minimum-gas-prices = "free"\n', 'config/app.toml: minimum-gas-prices: invalid decimal coin expression "free"'],
    ['app.toml', '[json-rpc]\napi = "eth,admin"\n', 'config/app.toml: [json-rpc] api: unknown namespace "admin" (known: eth,net,web3,txpool,debug,personal,miner)'],
    ['app.toml', '[json-rpc]\nevm-timeout = "5 s"\n', 'config/app.toml: [json-rpc] evm-timeout: invalid duration "5 s"'],
    ['app.toml', '[grpc]\naddress = "9090"\n', 'config/app.toml: [grpc] address: invalid listen address "9090": missing port'],
    ['app.toml', '[grpc]\nmax-open-connections = -1\n', 'config/app.toml: [grpc] max-open-connections: must be >= 0, got -1'],
    ['app.toml', '[grpc]\nmax-concurrent-streams = 0\n', 'config/app.toml: [grpc] max-concurrent-streams: must be >= 1, got 0'],
    ['app.toml', '[grpc]\nmax-recv-buffer-bytes = "lots"\n', 'config/app.toml: [grpc] max-recv-buffer-bytes: expected an integer, got "lots"'],
    ['app.toml', '[grpc]\nhandshake-timeout = "ten"\n', 'config/app.toml: [grpc] handshake-timeout: invalid duration "ten"'],
    ['app.toml', '[grpc]\nidle-timeout = "600h"\n', 'config/app.toml: [grpc] idle-timeout: must be at most 2147483647 ms (about 596h), got 2160000000 ms'],
    ['app.toml', '[evm]\ntracer = "callTracer"\n', 'config/app.toml: [evm] tracer: invalid value "callTracer"'],
    ['app.toml', '[evm.mempool]\nprice-bump = 0\n', 'config/app.toml: [evm.mempool] price-bump: must be >= 1, got 0'],
    ['app.toml', '[evm.mempool]\naccount-slots = 0\n', 'config/app.toml: [evm.mempool] account-slots: must be >= 1, got 0'],
    ['app.toml', '[evm.mempool]\nglobal-slots = 0\n', 'config/app.toml: [evm.mempool] global-slots: must be >= 1, got 0'],
    ['app.toml', '[evm.mempool]\naccount-queue = 0\n', 'config/app.toml: [evm.mempool] account-queue: must be >= 1, got 0'],
    ['app.toml', '[evm.mempool]\nglobal-queue = 0\n', 'config/app.toml: [evm.mempool] global-queue: must be >= 1, got 0'],
    ['app.toml', '[evm.mempool]\nprice-limit = -1\n', 'config/app.toml: [evm.mempool] price-limit: must be >= 0, got -1'],
    ['app.toml', '[evm.mempool]\nlifetime = "0s"\n', 'config/app.toml: [evm.mempool] lifetime: must be >= 1ms, got "0s"'],
    ['app.toml', '[evm.mempool]\nlifetime = 3\n', 'config/app.toml: [evm.mempool] lifetime: expected a duration string such as "1s", got 3'],
    ['app.toml', '[evm]\nmempool = 5\n', 'config/app.toml: [evm.mempool]: expected a table'],
    ['app.toml', '[compat]\nupstream-names = 1\n', 'config/app.toml: [compat] upstream-names: expected true or false, got 1'],
    // The SDK's pruning validation (store/pruning/types/options.go), only for "custom".
    ['app.toml', 'pruning = "sometimes"\n', 'config/app.toml: pruning: invalid value "sometimes" (want one of "default", "nothing", "everything", "custom")'],
    [
      'app.toml',
      'pruning = "custom"\npruning-keep-recent = "100"\npruning-interval = "0"\n',
      `config/app.toml: pruning: invalid custom pruning options: 'pruning-interval' must not be 0. If you want to disable pruning, select pruning = "nothing"`,
    ],
    [
      'app.toml',
      'pruning = "custom"\npruning-keep-recent = 1\npruning-interval = 10\n',
      `config/app.toml: pruning: invalid custom pruning options: 'pruning-keep-recent' must not be less than 2. For the most aggressive pruning, select pruning = "everything"`,
    ],
  ];
  for (const [file, toml, msg] of rows) {
    const home = tempHome(t);
    writeConfig(home, toml, file);
    const err = (() => {
      try {
        loadConfig({ home });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    t.ok(err instanceof ConfigError, `${msg}: is a ConfigError`);
    t.equal((err as Error | undefined)?.message.slice(0, msg.length), msg);
  }
});

t.test('SDK-style quoted integers are accepted', async (t) => {
  const home = tempHome(t);
  writeConfig(home, '[grpc]\nmax-recv-msg-size = "1048576"\n', 'app.toml');
  t.equal(loadConfig({ home }).appConfig.grpc.maxRecvMsgSize, 1_048_576);
});

t.test('invalid flags name the flag', async (t) => {
  const home = tempHome(t);
  const rows: Array<[Record<string, string | boolean>, string]> = [
    [{ 'consensus.timeout_commit': 'abc' }, 'flag --consensus.timeout_commit: invalid duration "abc"'],
    [{ 'rpc.laddr': 'nope' }, 'flag --rpc.laddr: invalid listen address "nope": missing port'],
    [{ 'rpc.unsafe': 'maybe' }, 'flag --rpc.unsafe: expected true or false, got "maybe"'],
    [{ 'rpc.nope': 'x' }, 'flag --rpc.nope: unknown setting'],
    [{ 'json-rpc.api': 'eth,foo' }, 'flag --json-rpc.api: unknown namespace "foo"'],
    [{ 'evm.mempool.lifetime': '0' }, 'flag --evm.mempool.lifetime: must be >= 1ms, got "0"'],
    [{ 'evm.mempool.global-queue': '0' }, 'flag --evm.mempool.global-queue: must be >= 1, got 0'],
    [
      { 'rpc.experimental_websocket_write_buffer_size': '150' },
      'flag --rpc.experimental_websocket_write_buffer_size: must be >= experimental_subscription_buffer_size (200), got 150',
    ],
  ];
  for (const [flags, msg] of rows) {
    t.throws(() => loadConfig({ home, flags }), { name: 'ConfigError', code: 'CONFIG_INVALID' });
    try {
      loadConfig({ home, flags });
    } catch (e) {
      t.equal((e as Error).message.slice(0, msg.length), msg);
    }
  }
});

t.test('every setting has a unique flag name', async (t) => {
  const names = settingFlagNames();
  const normalized = names.map((n) => n.replace(/-/g, '_'));
  t.equal(new Set(normalized).size, names.length);
  for (const n of ['rpc.laddr', 'log_level', 'api.address', 'grpc.address', 'json-rpc.address', 'json-rpc.ws-address', 'json-rpc.api', 'p2p.laddr']) {
    t.ok(names.includes(n), n);
  }
  t.ok(names.includes('instrumentation.prometheus_listen_addr'));
});
