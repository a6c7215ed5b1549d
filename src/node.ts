/**
 * The composition root: builds every part of the node from its options, in dependency order, and
 * closes them in reverse (STYLE.md item 1). Nothing else in chaind constructs long-lived parts.
 *
 * Start-up order: crypto backend → storage → worker pool → executor thread (loads meanwhile) →
 * application → chain state (genesis or stored) → handshake checks → mempool → evidence pool →
 * executor thread init → executor → private validator → WAL →
 * consensus → RPC and metrics servers → consensus start.
 */
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import type { TxDecoder } from './app/tx.js';
import { appPruningOptions } from './config/app-config.js';
import { appStateBytes, type GenesisDoc } from './config/genesis.js';
import { DEFAULT_ENV_SWITCHES, type RunningNode, type StartNodeOptions } from './config/index.js';
import { nodeIdFromPubKey, readNodeKey } from './config/keyfiles.js';
import { readJwtSecret } from './config/jwt.js';
import { displayPath, rootify } from './config/load.js';
import { Keystore, LIGHT_SCRYPT_N, LIGHT_SCRYPT_P } from './keys/keystore.js';
import { FilePV } from './consensus/privval.js';
import { ConsensusState } from './consensus/state.js';
import { poolVoteVerifier } from './consensus/verifier.js';
import { WAL } from './consensus/wal.js';
import { cryptoBackendSetting, getCryptoBackend, setCryptoBackendSetting } from './crypto/backend.js';
import { hexUpper } from './crypto/bytes.js';
import { merkleRoot } from './crypto/merkle.js';
import { EventBus } from './events/bus.js';
import { bridgeConsensusEvents } from './events/consensus-events.js';
import { EvidencePool } from './evidence/pool.js';
import { nullLogger, type Logger } from './log.js';
import { CListMempool } from './mempool/clist_mempool.js';
import { postCheckMaxGas, preCheckMaxBytes, type Mempool } from './mempool/mempool.js';
import { AppMempool } from './mempool/app_mempool.js';
import { EvmTxPool } from './mempool/evm_pool.js';
import { evmPoolChain } from './app/modules/evm/pool-chain.js';
import { EVM_LEAD_BYTES } from './app/modules/evm/kind.js';
import { createMetrics } from './metrics/metrics.js';
import { startMetricsServer } from './metrics/server.js';
import { createNames } from './names/index.js';
import { createCryptoPool, PiscinaCryptoPool } from './pool/index.js';
import { applyScavengePolicy } from './pool/gc.js';
import { applyThreadSlice } from './pool/sched.js';
import { poolEvmCalls } from './pool/evm-calls.js';
import type { NodeRpcContext } from './rpc/node/context.js';
import { subscriptionsFor } from './rpc/node/methods/events.js';
import { methodRoutes } from './rpc/node/methods/index.js';
import { RawJson } from './rpc/node/errors.js';
import { routes } from './rpc/node/routes.js';
import { marshalJson } from './rpc/server/gojson.js';
import { NodeRpcServer } from './rpc/node/server.js';
import { evmRpcDeps, startEvmRpc, type EvmRpcDeps } from './rpc/evm/index.js';
import { COMET_COMPAT_VERSION, statusResult } from './rpc/node/status.js';
import type { Listening } from './rpc/server/uws.js';
import { Executor, maxDataBytes, zeroBlockId } from './state/execution.js';
import type { State } from './types/state.js';
import { BlockIndexer, TxIndexer } from './indexer/indexer.js';
import { kvIndexHook } from './state/block-writer.js';
import { createNodeApp, ExecutorThread, type NodeAppSpec } from './state/executor-thread.js';
import type { RequestInitChain } from './abci/types.js';
import { Storage } from './store/storage.js';
import { formatTime } from './types/json.js';
import { ValidatorSet } from './types/validator_set.js';
import { BLOCK_PROTOCOL, P2P_PROTOCOL, VERSION } from './version.js';
import { Ed25519PrivKey } from './crypto/ed25519.js';
import { Switch } from './p2p/switch.js';
import { ConsensusReactor } from './p2p/reactors/consensus.js';
import { MempoolReactor } from './p2p/reactors/mempool.js';
import { EvidenceReactor } from './p2p/reactors/evidence.js';
import { BlocksyncReactor } from './p2p/blocksync/reactor.js';
import { BlocksyncSwitchReactor, FALL_BEHIND_BLOCKS, SyncController } from './p2p/blocksync/node-sync.js';
import { AddrBook } from './p2p/pex/addrbook.js';
import { PexReactor } from './p2p/pex/reactor.js';
import { netAddressFromListen } from './p2p/pex/netaddress.js';
import { doubleSignRequested, equivocatingBroadcast } from './p2p/reactors/double-sign.js';
import type { P2PConfig } from './config/node-config.js';
import { Query as AuthQuery } from './gen/chain/auth/v1beta1/query_pb.js';
import { Query as AuthzQuery } from './gen/chain/authz/v1beta1/query_pb.js';
import { Query as BankQuery } from './gen/chain/bank/v1beta1/query_pb.js';
import { Service as TxService } from './gen/chain/tx/v1beta1/service_pb.js';
import { protoRegistry } from './proto/registry.js';
import { GRPC_THREAD_MIN_CORES, GrpcServer, GrpcThread, grpcServerOptions, QueryRouter } from './rpc/grpc/index.js';
import { protoQueryService } from './rpc/grpc/app-bridge.js';
import { RestGateway, restGatewayOptions } from './rpc/rest/index.js';
import { TX_SERVICE_REGISTER_OPTIONS, txServiceImpl } from './app/txservice/index.js';

/** The LMDB environment's file inside <home>/data. */
export const DB_FILE_NAME = 'chaind.mdb';

/** A started node: what `chaind start` closes, and what in-process tests read. */
export interface ChaindNode extends RunningNode {
  context: NodeRpcContext;
  rpcPort: number;
  /** null when the server is disabled in app.toml. */
  grpcPort: number | null;
  restPort: number | null;
  metricsPort: number | null;
  /** The EVM JSON-RPC's port (`[json-rpc] address`), null when not enabled. */
  evmRpcPort: number | null;
  /** `[json-rpc] ws-address`'s port when it is a server of its own, else null. */
  evmWsPort: number | null;
  /** What the EVM JSON-RPC reads (tests reach its subscription registry through it), or null. */
  evmDeps: EvmRpcDeps | null;
}

/** The node's error for a start-up it refuses; the CLI prints the message alone. */
export class NodeStartError extends Error {
  readonly code = 'NODE_START';
}

/** NodeInfo.listen_addr: external_address if set, else laddr without its scheme (node.go makeNodeInfo). */
function nodeInfoListenAddr(p2p: P2PConfig): string {
  const a = p2p.externalAddress !== '' ? p2p.externalAddress : p2p.laddr;
  return a.replace(/^[a-z]+:\/\//, '');
}

/** state.MakeGenesisState: height 0, the genesis validators, genesis time as the last block time. */
export function makeGenesisState(g: GenesisDoc): State {
  const validators = new ValidatorSet(
    g.validators.map((v) => ({ address: v.address, pubKey: v.pubKey, votingPower: v.power, proposerPriority: 0n })),
  );
  return {
    chainId: g.chainId,
    initialHeight: g.initialHeight,
    lastBlockHeight: 0n,
    lastBlockId: zeroBlockId(),
    lastBlockTime: g.genesisTime,
    validators,
    nextValidators: validators.copyIncrementProposerPriority(1),
    lastValidators: new ValidatorSet([]),
    lastHeightValidatorsChanged: g.initialHeight,
    consensusParams: g.consensusParams,
    lastHeightConsensusParamsChanged: g.initialHeight,
    lastResultsHash: new Uint8Array(0),
    appHash: g.appHash,
    appVersion: g.consensusParams.version.app,
  };
}

const hex = hexUpper;

/**
 * Options only in-process tests pass: the CLI never sets them. `txDecoder` swaps the app's tx
 * decoder (e.g. the JSON decoder of src/app/tx.ts) until the Cosmos tx format is wired.
 */
export interface TestingOptions {
  txDecoder?: TxDecoder;
  /** Block execution on this thread (as CHAIND_EXEC=inline): a test that spies on the app's FinalizeBlock. */
  inlineExecutor?: boolean;
}

export async function startNode(opts: StartNodeOptions & { testing?: TestingOptions }): Promise<ChaindNode> {
  const { config, appConfig, genesis, paths } = opts;
  const logger: Logger = opts.logger;
  const log = logger.child({ module: 'node' });
  // Parts to close, in start order; close() walks it backwards.
  const parts: { name: string; close: () => unknown }[] = [];
  const closeAll = async () => {
    for (const p of parts.reverse()) {
      try {
        await p.close();
      } catch (e) {
        log.error('error while closing', { part: p.name, err: (e as Error).message });
      }
    }
    parts.length = 0;
  };

  try {
    // Without an environment (in-process tests), the process's own setting stands: a test run
    // with CHAIND_CRYPTO=js applies it at start (test/helpers/crypto-env.ts), and resetting it to
    // `auto` here would refuse (CRYPTO_ALREADY_CHOSEN) or quietly switch to native.
    const env = opts.env ?? { ...DEFAULT_ENV_SWITCHES, crypto: cryptoBackendSetting() };
    setCryptoBackendSetting(env.crypto);
    const backend = getCryptoBackend();
    log.info('crypto backend selected', { backend: backend.name });
    const names = createNames({ upstreamNames: appConfig.compat.upstreamNames });
    const metrics = config.instrumentation.prometheus ? createMetrics(config.instrumentation.namespace) : undefined;

    const storage = Storage.open({ file: path.join(paths.dbDir, DB_FILE_NAME) });
    parts.push({ name: 'storage', close: () => storage.close() });

    // Before the threads start: scavenges single-threaded on a machine with few cores (src/pool/gc.ts).
    applyScavengePolicy(env.parallelScavenge);
    // This thread answers RPC: a short scheduler slice lets it preempt the executor (src/pool/sched.ts).
    const slice = applyThreadSlice(env.mainSliceUs);
    if (slice.applied) log.info('main thread scheduler slice set', { slice_us: env.mainSliceUs });
    else log.info('main thread scheduler slice left as it was', { reason: slice.reason ?? '', slice_ns: slice.sliceNs ?? '' });
    const pool = createCryptoPool({ kind: env.pool, crypto: env.crypto }, { metrics: metrics?.pool });
    parts.push({ name: 'worker pool', close: () => pool.close() });
    log.info('worker pool started', { kind: pool.kind });

    const appSpec: NodeAppSpec = {
      pruning: appPruningOptions(appConfig),
      upstreamNames: appConfig.compat.upstreamNames,
      minGasPrices: appConfig.minimumGasPrices,
      appVersion: genesis.consensusParams.version.app,
      // The EVM module (src/app/modules/evm); the chain id comes from genesis app_state.evm.
      evm: { allowUnprotectedTxs: appConfig.jsonRpc.allowUnprotectedTxs },
    };
    // Block execution on the executor thread, unless CHAIND_EXEC=inline or a test swaps the tx
    // decoder (a function cannot cross to the thread): docs/ARCHITECTURE.md, Threads. It loads
    // while this thread starts up; `init` below hands it the chain state.
    const inline = env.exec === 'inline' || opts.testing?.inlineExecutor === true || opts.testing?.txDecoder !== undefined;
    const writer = inline ? undefined
      : new ExecutorThread({ dbFile: path.join(paths.dbDir, DB_FILE_NAME), appSpec, logger, crypto: env.crypto, nice: env.execNice });
    if (writer) parts.push({ name: 'executor thread', close: () => writer.close() });

    // auth, bank, authz; protobuf txs; signatures through the worker pool (src/app/chain.ts). The
    // executor thread builds the same app from the same spec (src/state/executor-thread.ts).
    const app = createNodeApp(storage, appSpec, {
      pool,
      txDecoder: opts.testing?.txDecoder,
      onPoolError: (err) => log.warn('signature pool unavailable, verifying inline', { err: (err as Error).message }),
    });

    // The chain state: stored, or made from genesis. Genesis state reaches disk with block 1's
    // transaction, so until then every start redoes InitChain from the same genesis file.
    let state = storage.state.load();
    let initChain: RequestInitChain | undefined;
    if (state === null) {
      if (storage.blocks.height() !== 0n) throw new NodeStartError('block store has blocks but no state: the data directory is damaged');
      state = makeGenesisState(genesis);
      initChain = {
        time: genesis.genesisTime,
        chainId: genesis.chainId,
        consensusParams: genesis.consensusParams,
        validators: genesis.validators.map((v) => ({ pubKey: v.pubKey, power: v.power })),
        appStateBytes: appStateBytes(genesis),
        initialHeight: genesis.initialHeight,
      };
      const res = await app.initChain(initChain);
      if (res.validators.length > 0) {
        const vals = new ValidatorSet(res.validators.map((u) => ({ address: new Uint8Array(0), pubKey: u.pubKey, votingPower: u.power, proposerPriority: 0n })));
        state = { ...state, validators: vals, nextValidators: vals.copyIncrementProposerPriority(1) };
      }
      if (res.consensusParams) state = { ...state, consensusParams: res.consensusParams, appVersion: res.consensusParams.version.app };
      // consensus/replay.go: an empty app hash keeps the genesis one; LastResultsHash becomes the
      // RFC 6962 empty hash (sha256 of nothing), so block 1's header carries E3B0C442….
      if (res.appHash.length > 0) state = { ...state, appHash: res.appHash };
      state = { ...state, lastResultsHash: merkleRoot([]) };
      if (state.validators.isEmpty()) throw new NodeStartError(`${paths.genesis}: validators: the genesis has no validators and the app returned none`);
      log.info('initialized chain from genesis', { chain_id: state.chainId, app_hash: hex(state.appHash) });
    } else {
      if (state.chainId !== genesis.chainId) {
        throw new NodeStartError(`${paths.genesis}: chain_id: "${genesis.chainId}" does not match the stored chain "${state.chainId}"`);
      }
      app.setConsensusParams(state.consensusParams);
    }

    // Handshake (consensus/replay.go): block store, state and app agree on the height, because
    // one LMDB transaction writes all three.
    const info = await app.info();
    const storeHeight = storage.blocks.height();
    if (storeHeight !== state.lastBlockHeight || info.lastBlockHeight !== state.lastBlockHeight) {
      throw new NodeStartError(`handshake: store height ${storeHeight}, state height ${state.lastBlockHeight}, app height ${info.lastBlockHeight} disagree`);
    }
    if (state.lastBlockHeight > 0n && hex(info.lastBlockAppHash) !== hex(state.appHash)) {
      throw new NodeStartError(`handshake: app hash ${hex(info.lastBlockAppHash)} does not match state app hash ${hex(state.appHash)}`);
    }
    log.info('handshake done', { height: state.lastBlockHeight.toString(), app_hash: hex(state.appHash) });

    // EVM txs go to the nonce-ordered pool (src/mempool/evm_pool.ts), Cosmos txs stay in arrival
    // order; with both, the size gauges count both (AppMempool sets them).
    const evmKeeper = app.evm?.keeper;
    const { size: sizeGauge, sizeBytes: sizeBytesGauge, ...cosmosMetrics } = metrics?.mempool ?? {};
    const cosmosMempool = new CListMempool(
      { ...config.mempool, recheckTimeoutMs: config.mempool.recheckTimeout },
      { app, height: state.lastBlockHeight, metrics: evmKeeper === undefined ? metrics?.mempool : cosmosMetrics },
    );
    const evmMempoolCfg = appConfig.evm.mempool;
    const evmPool = evmKeeper === undefined
      ? undefined
      : new EvmTxPool(
        {
          maxTxsBytes: config.mempool.maxTxsBytes,
          maxTxBytes: config.mempool.maxTxBytes,
          cacheSize: config.mempool.cacheSize,
          recheck: config.mempool.recheck,
          recheckTimeoutMs: config.mempool.recheckTimeout,
          // app.toml [evm.mempool]
          priceLimit: BigInt(evmMempoolCfg.priceLimit),
          priceBump: evmMempoolCfg.priceBump,
          accountSlots: evmMempoolCfg.accountSlots,
          globalSlots: evmMempoolCfg.globalSlots,
          accountQueue: evmMempoolCfg.accountQueue,
          globalQueue: evmMempoolCfg.globalQueue,
          lifetimeMs: evmMempoolCfg.lifetime,
        },
        {
          app,
          chain: evmPoolChain(evmKeeper, () => app.queryContext()),
          height: state.lastBlockHeight,
          onRecheckCut: (left) => log.debug('evm pool recheck cut by recheck_timeout', { left }),
          onExpired: (dropped) => log.debug('evm pool dropped queued txs past their lifetime', { dropped }),
        },
      );
    if (evmPool !== undefined) {
      // The lifetime tick (unref'd: it never keeps the process alive).
      evmPool.start();
      parts.push({ name: 'evm pool', close: () => evmPool.stop() });
    }
    const mempool: Mempool = evmPool === undefined ? cosmosMempool : new AppMempool(cosmosMempool, evmPool, (tx) => tx.length > 0 && EVM_LEAD_BYTES.includes(tx[0]!), { ...(sizeGauge ? { size: sizeGauge } : {}), ...(sizeBytesGauge ? { sizeBytes: sizeBytesGauge } : {}) });

    // Lives in the storage's LMDB environment; nothing to close of its own.
    const evidencePool = new EvidencePool({
      store: storage.evidence,
      chain: {
        loadBlockMeta: (h) => storage.blocks.loadBlockMeta(h),
        loadValidators: (h) => storage.state.loadValidators(h),
      },
      state,
      logger: logger.child({ module: 'evidence' }),
    });

    const bus = new EventBus();
    const txIndexer = config.txIndex.indexer === 'kv' ? new TxIndexer(storage) : null;
    const blockIndexer = config.txIndex.indexer === 'kv' ? new BlockIndexer(storage) : null;
    // The executor thread (spawned above) gets the chain state, and at genesis the InitChain request.
    await writer?.init({ state, initChain, indexer: txIndexer !== null, storage, app, evidence: evidencePool, wantsResponse: () => bus.listenerCount > 0 });
    const executor = new Executor({
      storage,
      writer,
      evidence: evidencePool,
      indexer: txIndexer && blockIndexer ? kvIndexHook(txIndexer, blockIndexer, logger.child({ module: 'txindex' })) : undefined,
      app,
      mempool,
      bus,
      logger: logger.child({ module: 'state' }),
      mempoolChecks: (s) => ({
        preCheck: preCheckMaxBytes(maxDataBytes(s.consensusParams.block.maxBytes, 0n, s.validators.size)),
        postCheck: postCheckMaxGas(s.consensusParams.block.maxGas),
      }),
      metrics: metrics?.consensus,
    });

    const privval = FilePV.load(paths.privValidatorKey, paths.privValidatorState, { signLogPath: env.signLog });
    const nodeKey = readNodeKey(paths.nodeKey);
    const nodeId = nodeIdFromPubKey(nodeKey.pubKey);

    const p2pLog = logger.child({ module: 'p2p' });
    const consensusReactor = new ConsensusReactor({ blockStore: storage.blocks, logger: p2pLog });
    // Test-only equivocation (refused outside "test-" chains): src/p2p/reactors/double-sign.ts.
    let p2pSwitch: Switch | null = null;
    const broadcast = doubleSignRequested(env.testDoubleSign, state.chainId)
      ? equivocatingBroadcast(consensusReactor.broadcast, { key: privval.key, chainId: state.chainId, sw: () => p2pSwitch })
      : consensusReactor.broadcast;
    // One ConsensusState per consensus period: block sync may stop one and start the next.
    // A reader (RPC's view while block sync runs, never started) logs nothing.
    const makeConsensus = (st: State, o?: { reader?: boolean }) => new ConsensusState({
      config: config.consensus,
      state: st,
      executor,
      broadcast,
      sendTo: consensusReactor.sendTo,
      privValidator: privval,
      verifier: poolVoteVerifier(pool),
      wal: new WAL(paths.walFile, { logger: logger.child({ module: 'wal' }) }),
      blockStore: storage.blocks,
      logger: o?.reader ? nullLogger : logger.child({ module: 'consensus' }),
      pubKeyTypeName: names.pubKeyType('ed25519'),
      metrics: metrics?.consensus,
      // ReportConflictingVotes: the pool forms the evidence when the height commits.
      onEvidence: (ev) => evidencePool.reportConflictingVotes(ev.voteA, ev.voteB),
      onFatal: (err) => {
        log.error('consensus halted', { err: err.message });
      },
    });
    const blocksync = new BlocksyncReactor({
      store: storage.blocks,
      executor,
      state,
      // cometbft/cometbft:node/node.go: block sync unless we are the only validator.
      blockSync: !(state.validators.size === 1 && state.validators.hasAddress(privval.key.address)),
      onCaughtUp: (st) => sync.onCaughtUp(st),
      onFallenBehind: (id, ph, oh) => sync.onFallenBehind(id, ph, oh),
      fallBehindBlocks: FALL_BEHIND_BLOCKS,
      logger: p2pLog,
    });
    const sync: SyncController<ConsensusState> = new SyncController({ reactor: blocksync, makeConsensus, state, logger: p2pLog });
    mempool.onTxsAvailable(() => sync.notifyTxsAvailable());
    bridgeConsensusEvents(sync, bus);
    consensusReactor.setConsensus(sync);
    sync.subscribe((name, d) => {
      if (name === 'NewRoundStep' && (d as { step?: string }).step === 'RoundStepNewHeight') blocksync.broadcastStatus();
    });
    p2pSwitch = new Switch({
      nodeKey: Ed25519PrivKey.fromSeed(nodeKey.seed),
      nodeInfo: {
        protocolVersion: { p2p: P2P_PROTOCOL, block: BLOCK_PROTOCOL, app: state.appVersion },
        id: nodeId,
        listenAddr: nodeInfoListenAddr(config.p2p),
        network: state.chainId,
        // The version /status reports too (CometBFT peers read it as the CometBFT version).
        version: COMET_COMPAT_VERSION,
        channels: new Uint8Array(0),
        moniker: config.moniker,
        other: { txIndex: config.txIndex.indexer === 'kv' ? 'on' : 'off', rpcAddress: config.rpc.laddr },
      },
      config: config.p2p,
      logger: p2pLog,
    });
    p2pSwitch.addReactor(consensusReactor);
    p2pSwitch.addReactor(new MempoolReactor({ mempool, broadcast: config.mempool.broadcast, logger: p2pLog }));
    p2pSwitch.addReactor(new EvidenceReactor({ pool: evidencePool, logger: p2pLog }));
    p2pSwitch.addReactor(new BlocksyncSwitchReactor(blocksync));
    if (config.p2p.pex) {
      // cometbft/cometbft:node/setup.go createAddrBookAndSetOnSwitch / createPEXReactorAndAddToSwitch.
      const book = new AddrBook({ file: paths.addrBook, strict: config.p2p.addrBookStrict, logger: p2pLog });
      book.addOurId(nodeId);
      for (const la of [nodeInfoListenAddr(config.p2p), config.p2p.laddr]) {
        const ours = netAddressFromListen(nodeId, la);
        if (ours) book.addOurAddress(ours);
      }
      book.addPrivateIds(config.p2p.privatePeerIds);
      book.load(); // now: a corrupt file stops the start here, as it does CometBFT's
      p2pSwitch.addReactor(new PexReactor({
        book,
        seeds: config.p2p.seeds,
        seedMode: config.p2p.seedMode,
        maxNumOutboundPeers: config.p2p.maxNumOutboundPeers,
        persistentPeersMaxDialPeriodMs: config.p2p.persistentPeersMaxDialPeriod,
        ensurePeersPeriodMs: config.p2p.ensurePeersPeriod,
        logger: p2pLog,
      }));
    }

    // Chain module queries and the tx service: one router for gRPC, REST and abci_query.
    const queryRouter = new QueryRouter({
      names,
      registry: protoRegistry,
      // createQueryContext's rules over the app's retained versions (BaseApp.resolveQueryHeight).
      resolveHeight: (h) => app.resolveQueryHeight(h),
    });
    for (const svc of [AuthQuery, BankQuery, AuthzQuery]) queryRouter.registerService(svc, protoQueryService(app, svc));

    const context: NodeRpcContext = {
      config,
      appConfig,
      genesis,
      genesisBytes: fs.readFileSync(paths.genesis),
      names,
      storage,
      get consensus() {
        return sync.consensus;
      },
      mempool,
      app,
      bus,
      evidencePool,
      txIndexer,
      blockIndexer,
      pool,
      queryRouter,
      nodeId,
      p2p: p2pSwitch,
      validator: { address: privval.key.address, pubKey: { type: 'ed25519', bytes: privval.key.pubKey } },
      logger: logger.child({ module: 'rpc' }),
    };
    let statusCache: { height: bigint; state: State; raw: RawJson } | null = null;
    const rpc = new NodeRpcServer({
      laddr: config.rpc.laddr,
      config: config.rpc,
      logger: logger.child({ module: 'rpc' }),
      metrics: metrics?.rpc,
      routes: [
        routes.health(),
        routes.status(() => {
          // status changes only when a block commits: serve the cached JSON for this height.
          const h = storage.blocks.height();
          const st = sync.consensus.getState();
          if (statusCache && statusCache.height === h && statusCache.state === st) return statusCache.raw;
          const raw = new RawJson(marshalJson(statusResult({
            nodeId,
            moniker: config.moniker,
            p2pListenAddr: config.p2p.laddr,
            channels: Buffer.from(p2pSwitch.nodeInfo.channels).toString('hex'),
            rpcListenAddr: config.rpc.laddr,
            txIndex: config.txIndex.indexer === 'kv',
            blockStore: storage.blocks,
            state: () => sync.consensus.getState(),
            catchingUp: () => sync.syncing,
            validatorAddress: privval.key.address,
            validatorPubKey: { type: 'ed25519', bytes: privval.key.pubKey },
            pubKeyTypeName: (t) => names.pubKeyType(t),
            formatTime,
          })));
          statusCache = { height: h, state: st, raw };
          return raw;
        }),
        ...methodRoutes(context),
      ],
    });
    await rpc.start();
    parts.push({ name: 'node RPC', close: () => rpc.close() });
    // Closed before the RPC server (parts close in reverse): subscribers get a -32000 cancel.
    parts.push({ name: 'subscriptions', close: () => subscriptionsFor(context).close() });

    queryRouter.registerService(TxService, txServiceImpl(context), TX_SERVICE_REGISTER_OPTIONS);
    let grpcPort: number | null = null;
    let restPort: number | null = null;
    if (appConfig.grpc.enable) {
      // The transport on a thread of its own where the cores allow (src/rpc/grpc/thread.ts).
      const grpcOpts = grpcServerOptions(appConfig.grpc, queryRouter, logger.child({ module: 'grpc' }));
      const onThread = env.grpc === 'thread' || (env.grpc === 'auto' && os.availableParallelism() >= GRPC_THREAD_MIN_CORES);
      const grpcServer = onThread ? new GrpcThread(grpcOpts) : new GrpcServer(grpcOpts);
      await grpcServer.start();
      parts.push({ name: 'gRPC', close: () => grpcServer.close() });
      log.info('gRPC listening', { addr: `${grpcServer.host}:${grpcServer.port}` });
      grpcPort = grpcServer.port;
    }
    if (appConfig.api.enable) {
      const restGateway = new RestGateway(restGatewayOptions(appConfig.api, queryRouter, logger.child({ module: 'api' })));
      await restGateway.start();
      parts.push({ name: 'REST gateway', close: () => restGateway.close() });
      log.info('REST listening', { addr: `${restGateway.host}:${restGateway.port}` });
      restPort = restGateway.port;
    }

    let evmRpcPort: number | null = null;
    let evmWsPort: number | null = null;
    let evmDeps: EvmRpcDeps | null = null;
    if (appConfig.jsonRpc.enable && app.evm) {
      const j = appConfig.jsonRpc;
      // Private methods (personal_*, eth_sign, …) need a JWT over config/jwt.hex; without the file none is accepted.
      const jwtSecret = fs.existsSync(paths.jwtSecret) ? readJwtSecret(paths.jwtSecret, displayPath(paths.home, paths.jwtSecret)) : undefined;
      const keystore = new Keystore(paths.keystoreDir, j.lightKdf ? { scrypt: { n: LIGHT_SCRYPT_N, p: LIGHT_SCRYPT_P } } : {});
      // eth_call / eth_estimateGas / eth_createAccessList on the pool's threads (LMDB opened there);
      // inline on this thread when the pool is off (CHAIND_POOL=single).
      const callSetup = { dbFile: path.join(paths.dbDir, DB_FILE_NAME), app: appSpec };
      // Each pool thread loads the app for calls (~2 s of CPU, during which it verifies no
      // signature): not at start, where a node that never serves the EVM RPC would pay it, but
      // on the first EVM JSON-RPC call of any client; calls run inline until the threads are ready.
      const poolCalls = pool instanceof PiscinaCryptoPool
        ? poolEvmCalls(pool, callSetup, (err) => log.warn('evm call workers did not load; calls stay on this thread', { err: err.message }))
        : undefined;
      const calls = poolCalls?.calls;
      const warm = poolCalls?.warm;
      const deps = evmRpcDeps({ app, keeper: app.evm.keeper, blocks: storage.blocks, mempool, ...(evmPool ? { txpool: evmPool } : {}), consensus: { getState: () => sync.consensus.getState() }, p2p: p2pSwitch, gasCap: j.gasCap, evmTimeoutMs: j.evmTimeout, logsCap: j.logsCap, blockRangeCap: j.blockRangeCap, feeHistoryCap: j.feehistoryCap, filterCap: j.filterCap, keystore, allowInsecureUnlock: j.allowInsecureUnlock, calls,
        catchingUp: () => sync.syncing, bus, subscriptionLimits: { clients: j.subscriptionClientsCap, perClient: j.subscriptionsPerClientCap, buffer: j.subscriptionBuffer }, subscriptionMetrics: metrics?.evmSubscriptions, profilesDir: rootify(paths.home, j.profilesDir) });
      evmDeps = deps;
      const evmRpc = await startEvmRpc({ deps, address: j.address, wsAddress: j.wsAddress, api: j.api, batchRequestLimit: j.batchRequestLimit, batchResponseMaxSize: j.batchResponseMaxSize, httpTimeout: j.httpTimeout, logger: logger.child({ module: 'json-rpc' }), ...(jwtSecret ? { jwtSecret } : {}), ...(warm ? { onFirstCall: warm } : {}) });
      parts.push({ name: 'EVM JSON-RPC', close: () => evmRpc.close() });
      log.info('EVM JSON-RPC listening', { addr: j.address, port: evmRpc.port });
      evmRpcPort = evmRpc.port;
      evmWsPort = evmRpc.wsPort;
    }

    let metricsServer: Listening | null = null;
    if (metrics) {
      metricsServer = await startMetricsServer(config.instrumentation.prometheusListenAddr, metrics.registry, logger.child({ module: 'metrics' }));
      parts.push({ name: 'metrics', close: () => metricsServer?.close() });
      log.info('metrics listening', { addr: `${metricsServer.host}:${metricsServer.port}` });
    }

    await p2pSwitch.start();
    parts.push({ name: 'p2p switch', close: () => p2pSwitch.stop() });
    if (blocksync.isSyncing()) log.info('block sync: catching up with peers before consensus', { height: state.lastBlockHeight.toString() });
    else await sync.startConsensus();
    parts.push({ name: 'consensus', close: () => sync.stop() });
    log.info('node started', { node_id: nodeId, height: state.lastBlockHeight.toString(), version: VERSION });

    let closing: Promise<void> | null = null;
    return {
      context,
      rpcPort: rpc.port,
      grpcPort,
      restPort,
      metricsPort: metricsServer?.port ?? null,
      evmRpcPort,
      evmWsPort,
      evmDeps,
      close() {
        closing ??= (async () => {
          log.info('shutting down');
          await closeAll();
          log.info('stopped');
        })();
        return closing;
      },
    };
  } catch (e) {
    await closeAll();
    throw e;
  }
}
