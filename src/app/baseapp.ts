/**
 * BaseApp: the Cosmos-SDK-style application behind the ABCI-shaped `Application` interface
 * (cosmos-sdk: baseapp/baseapp.go, baseapp/abci.go; cosmos/cosmos-sdk:baseapp/abci.go, cosmos/cosmos-sdk:x/auth/ante/ante.go,
 * §3.6). It decodes txs through a pluggable TxDecoder, runs the ante chain and routes messages by
 * type URL to module handlers, keeps state in a block-level cache over the committed LMDB state,
 * and writes that cache to LMDB only in commit(), inside the block's one write transaction.
 *
 * LMDB layout of the `app` database (binary keys; big-endian numbers):
 *   0x00 'h'            → u64 last committed height
 *   0x00 'a'            → last committed app hash
 *   0x00 'c'            → chain id (UTF-8)
 *   0x00 'm' storeKey   → the module's 2048-byte LtHash (src/app/apphash.ts)
 *   0x01 u8(len) storeKey key → module state; the length byte keeps store prefixes prefix-free
 * With `versions` (the node always passes it) module state is written through the versioned store
 * (src/store/versioned.ts), which keeps the latest values here and their history in `app_history`.
 *
 * Tx kinds (src/app/txkinds.ts): each tx goes by its first byte to a registered kind (its own
 * decoder, ante and run stages) or, unclaimed, to the Cosmos path (TxDecoder, ante chain, message
 * routes). Modules may add a commitment to the app hash (AppModule.commitment) and keep data in
 * databases of their own (AppModule.databases), written in commit() inside the block's transaction.
 */
import type {
  AbciEvent,
  Application,
  ExecTxResult,
  RequestFinalizeBlock,
  RequestInitChain,
  RequestPrepareProposal,
  RequestProcessProposal,
  RequestQuery,
  ResponseCheckTx,
  ResponseFinalizeBlock,
  ResponseInfo,
  ResponseInitChain,
  ResponseQuery,
} from '../abci/types.js';
import { CheckTxType } from '../abci/types.js';
import { Bech32Codec, type AddressCodec } from './address.js';
import { defaultAnteChain, runAnteChain, type AnteDecorator } from './ante.js';
import { appHashFromModuleRoots, LtHash, moduleLeafRoot } from './apphash.js';
import { bytesEqual, bytesToKey, concatBytes, EMPTY_BYTES, fromUtf8, readU64be, u64be, utf8, type Bytes } from './bytes.js';
import { Context, EventManager, ExecMode } from './context.js';
import { AbciError, abciInfo, errInternal, GrpcStatusError, grpcErrorToAbci, sdkErrors } from './errors.js';
import { BasicGasMeter, DEFAULT_KV_GAS_CONFIG, GasOverflowError, InfiniteGasMeter, OutOfGasError, outOfGasAbciError, type GasMeter, type KVGasConfig } from './gas.js';
import type { AppModule, BlockStateWatcher, ModuleDbReader, ModuleDbWriter, MsgRoute, QueryRoute, ServiceRegistrar } from './module.js';
import { CacheKVStore, GasKVStore, LmdbReadStore, PrefixStore, ReadOnlyStore, VersionReadStore, type AppDb, type KVStore } from './store.js';
import { rejectingTxDecoder, type Tx, type TxDecoder, type TxMsg } from './tx.js';
import { TxKindRegistry, type TxKind } from './txkinds.js';
import { LruMemo } from '../tx/memo.js';
import { computeProtoSizeForTxs, LoopTurns } from '../mempool/mempool.js';
import { SPEC_NAMES } from '../names/index.js';
import type { ConsensusParams } from '../types/params.js';
import type { ValidatorUpdate } from '../types/validator.js';
import type { VersionedStore } from '../store/versioned.js';

const META_HEIGHT = Uint8Array.of(0x00, 0x68); // 0x00 'h'
const META_APP_HASH = Uint8Array.of(0x00, 0x61); // 0x00 'a'
const META_CHAIN_ID = Uint8Array.of(0x00, 0x63); // 0x00 'c'
const META_MODULE_HASH = Uint8Array.of(0x00, 0x6d); // 0x00 'm'
const STORE_PREFIX = 0x01;

export interface BaseAppOptions {
  /** ResponseInfo.data (the SDK puts the app name there). Default `chaind`. */
  name?: string;
  /** ResponseInfo.version: the software version. */
  version?: string;
  /** ResponseInfo.app_version: the protocol version (consensus params version.app). */
  appVersion?: bigint;
  /** Bech32 HRP of account addresses (`chain`). */
  bech32Prefix?: string;
  /** Store gas schedule; the SDK defaults. */
  kvGasConfig?: KVGasConfig;
  /** app.toml `min-retain-blocks`: 0 keeps every block (commit() returns retainHeight 0). */
  minRetainBlocks?: bigint;
  /** app.toml `minimum-gas-prices`, read by the fee decorator in CheckTx. */
  minGasPrices?: { denom: string; amount: string }[];
}

/** The names registry functions BaseApp needs (src/names). */
export interface TypeUrlNames {
  /** Any spelling → canonical (`/cosmos.bank…` → `/chain.bank…`). */
  parseTypeUrl(url: string): string;
  /** Canonical → emitted spelling (events' `action`). */
  typeUrl(url: string): string;
}

export interface BaseAppModules {
  /** The node's `app` database (`{ name: 'app', encoding: 'binary', keyEncoding: 'binary' }`). */
  db: AppDb;
  /** Modules in registry order: genesis import, begin- and end-block hooks run in this order. */
  modules: AppModule[];
  txDecoder?: TxDecoder;
  /** The ante chain after the built-in gas meter set-up; default `defaultAnteChain()`. */
  anteDecorators?: AnteDecorator[];
  names?: TypeUrlNames;
  /**
   * The asynchronous stage before the synchronous ante chain: CheckTx hands it the one tx,
   * FinalizeBlock every decodable tx of the block, so that their signatures go to the worker pool
   * in one call (src/app/modules/auth/sigverify.ts). Its results are hints the ante chain looks up.
   */
  preVerifier?: TxPreVerifier;
  /**
   * The versioned module state over the same `db` (src/store/versioned.ts): commit writes module
   * state through it and queries may ask for any retained height. Without it only the latest
   * height is served.
   */
  versions?: VersionedStore;
  /**
   * Tx kinds besides Cosmos, dispatched by first byte (src/app/txkinds.ts): the EVM kind
   * (src/app/modules/evm) in production.
   */
  txKinds?: TxKind[];
  /**
   * Opens a named database of the node's LMDB environment (Storage.openNamedDb) for a module's
   * `databases`; required when a module declares any.
   */
  openDatabase?: (name: string) => AppDb;
}

/**
 * Work done before the ante chain, outside it, and asynchronously (signature verification in the
 * worker pool). `ctx` reads the state the txs will run against (read-only, unmetered). It must not
 * decide a tx's outcome in FinalizeBlock: the ante chain does. A throw in CheckTx refuses the tx
 * with that error; in FinalizeBlock it is ignored.
 */
export interface TxPreVerifier {
  preVerify(ctx: Context, txs: readonly Tx[]): Promise<void>;
}

interface ModuleEntry {
  module: AppModule;
  storeKey: string;
  prefix: Bytes;
}

/** A finalized block waiting for commit(). */
interface Pending {
  state: CacheKVStore;
  height: bigint;
  /** Block time, ns. */
  time: bigint;
  appHash: Bytes;
  /** LtHashes of the modules whose state changed. */
  changed: Map<string, LtHash>;
  roots: Map<string, Bytes>;
}

/** State imported by initChain, committed with the first block. */
interface Genesis {
  state: CacheKVStore;
  appHash: Bytes;
  initialHeight: bigint;
}

/** A tx after decoding: a Cosmos tx, a tx of another kind, or the error that is its result. */
type PreparedTx = { ok: true; tx: Tx; kind?: undefined } | { ok: true; kind: TxKind; decoded: unknown; bytes: Bytes } | { ok: false; error: unknown };

/**
 * Gas limits of txs that decoded, by their bytes, for the proposal's max-gas walk
 * (PrepareProposal, ProcessProposal): a full mempool's worth and a block besides. An entry is the
 * tx's bytes as a latin1 string and a bigint (~0.3 KB for a bank send: ~5 MB when full).
 */
const GAS_MEMO_SIZE = 16_384;

/** What runTx needs to know about the block it runs in. */
export interface BlockHeader {
  height: bigint;
  time: bigint;
  /** FinalizeBlock's proposer_address (the EVM header's coinbase). */
  proposer?: Bytes;
}

/** Minimal protobuf writer for TxMsgData (cosmos.base.abci.v1beta1; cosmos/cosmos-sdk:proto/cosmos/base/abci/v1beta1/abci.proto). */
function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

function lengthDelimited(field: number, b: Bytes): Bytes {
  return concatBytes(Uint8Array.from([(field << 3) | 2, ...varint(b.length)]), b);
}

/** TxMsgData{2: msg_responses repeated Any{1 type_url, 2 value}}; proto3 omits an empty value. */
export function encodeTxMsgData(responses: readonly { typeUrl: string; value: Bytes }[]): Bytes {
  const parts: Bytes[] = [];
  for (const r of responses) {
    const any = r.value.length > 0 ? concatBytes(lengthDelimited(1, utf8(r.typeUrl)), lengthDelimited(2, r.value)) : lengthDelimited(1, utf8(r.typeUrl));
    parts.push(lengthDelimited(2, any));
  }
  return concatBytes(...parts);
}

/** JSON with bigints as decimal strings and bytes as base64, the stand-in query encoding. */
export function jsonEncode(v: unknown): Bytes {
  return utf8(
    JSON.stringify(v, (_k, x: unknown) => {
      if (typeof x === 'bigint') return x.toString();
      if (x instanceof Uint8Array) return Buffer.from(x).toString('base64');
      return x;
    }),
  );
}

function emptyResult(): ExecTxResult {
  return { code: 0, data: EMPTY_BYTES, log: '', info: '', gasWanted: 0n, gasUsed: 0n, events: [], codespace: '' };
}

function failResult(err: unknown, gasWanted: bigint, gasUsed: bigint, events: AbciEvent[]): ExecTxResult {
  const { codespace, code, log } = abciInfo(err);
  return { code, data: EMPTY_BYTES, log, info: '', gasWanted, gasUsed, events, codespace };
}

/** Second dot-segment of a type URL: `/chain.bank.v1beta1.MsgSend` → `bank` (types/msgservice GetModuleNameFromTypeURL). */
function moduleNameFromTypeUrl(typeUrl: string): string {
  const parts = typeUrl.split('.');
  return parts.length > 1 ? parts[1]! : '';
}

function withAttribute(ev: AbciEvent, key: string, value: string): AbciEvent {
  return { type: ev.type, attributes: [...ev.attributes, { key, value, index: true }] };
}

export class BaseApp implements Application, ServiceRegistrar {
  readonly name: string;
  readonly version: string;
  readonly appVersion: bigint;
  readonly addressCodec: AddressCodec;

  private readonly db: AppDb;
  private readonly committedStore: LmdbReadStore;
  private readonly modules: ModuleEntry[] = [];
  private readonly byStoreKey = new Map<string, ModuleEntry>();
  /** latin1(0x01 || len || storeKey) → store key, to attribute a changed key to its module. */
  private readonly byPrefix = new Map<string, string>();
  private readonly msgRoutes = new Map<string, MsgRoute<unknown>>();
  private readonly queryRoutes = new Map<string, QueryRoute<unknown, unknown>>();
  private readonly txDecoder: TxDecoder;
  private readonly txKinds: TxKindRegistry;
  /**
   * What decoding learned about a tx, by the identity of its bytes: the mempool hands the same
   * array to CheckTx and to every recheck, so a recheck does not decode the tx again. Only
   * successes; a prepared tx is a pure function of its bytes (and of the fixed message routes).
   */
  private readonly preparedByBytes = new WeakMap<Bytes, PreparedTx & { ok: true }>();
  /** Gas limits by tx content (gasLimitOf): a proposal's txs are other arrays with the same bytes. */
  private readonly gasMemo = new LruMemo<string, bigint>(GAS_MEMO_SIZE);
  /** Each module's databases by name, for commit()'s write handles. */
  private readonly moduleDbs = new Map<string, Map<string, AppDb>>();
  private readonly ante: AnteDecorator[];
  private readonly names: TypeUrlNames;
  private readonly preVerifier: TxPreVerifier | undefined;
  private readonly versions: VersionedStore | undefined;
  private readonly kvGas: KVGasConfig;
  private readonly minRetainBlocks: bigint;
  private readonly minGasPrices: { denom: string; amount: string }[];
  /** Whether a module has a commitment (computeAppHash then collects the changed keys). */
  private readonly hasCommitments: boolean;

  // Committed state, mirrored from LMDB.
  private lastHeight = 0n;
  /**
   * Time of the last committed block, for CheckTx's context (the SDK resets checkState to the
   * committed header in Commit). Kept in memory only: 0 after a restart until the next commit.
   */
  private lastBlockTime = 0n;
  private lastAppHash: Bytes = EMPTY_BYTES;
  private chainId = '';
  private moduleHashes = new Map<string, LtHash>();
  private moduleRoots = new Map<string, Bytes>();

  /** Chain id from initChain, until the first commit persists it. */
  private pendingChainId: string | undefined;
  private genesis: Genesis | null = null;
  private pending: Pending | null = null;
  /** The SDK's checkState: CheckTx's writes (sequences, fees) accumulate here until commit. */
  private checkState!: CacheKVStore;
  /** The tx kind whose run stage is being written into its parent state (BlockStateWatcher's `runOf`). */
  private landing: string | undefined;
  private consensusParams: ConsensusParams | undefined;

  constructor(opts: BaseAppOptions, deps: BaseAppModules) {
    this.name = opts.name ?? 'chaind';
    this.version = opts.version ?? '';
    this.appVersion = opts.appVersion ?? 0n;
    this.addressCodec = new Bech32Codec(opts.bech32Prefix ?? 'chain');
    this.kvGas = opts.kvGasConfig ?? DEFAULT_KV_GAS_CONFIG;
    this.minRetainBlocks = opts.minRetainBlocks ?? 0n;
    this.minGasPrices = opts.minGasPrices ?? [];
    this.db = deps.db;
    this.committedStore = new LmdbReadStore(deps.db);
    this.txDecoder = deps.txDecoder ?? rejectingTxDecoder;
    this.ante = deps.anteDecorators ?? defaultAnteChain();
    this.names = deps.names ?? SPEC_NAMES;
    this.preVerifier = deps.preVerifier;
    this.versions = deps.versions;
    this.txKinds = new TxKindRegistry(deps.txKinds ?? []);
    for (const m of deps.modules) this.addModule(m);
    this.hasCommitments = deps.modules.some((m) => m.commitment !== undefined);
    this.openModuleDbs(deps.openDatabase);
    this.reload();
  }

  private addModule(module: AppModule): void {
    const storeKey = module.storeKey ?? module.name;
    const sk = utf8(storeKey);
    if (sk.length === 0 || sk.length > 255) throw new Error(`store key of module ${module.name} must be 1–255 bytes`);
    if (this.byStoreKey.has(storeKey)) throw new Error(`store key ${storeKey} is registered twice`);
    if (this.modules.some((e) => e.module.name === module.name)) throw new Error(`module ${module.name} is registered twice`);
    const prefix = concatBytes(Uint8Array.of(STORE_PREFIX, sk.length), sk);
    const entry: ModuleEntry = { module, storeKey, prefix };
    this.modules.push(entry);
    this.byStoreKey.set(storeKey, entry);
    this.byPrefix.set(bytesToKey(prefix), storeKey);
    module.registerServices?.(this);
  }

  /** Opens every module's declared databases and hands the module read-only handles. */
  private openModuleDbs(open: ((name: string) => AppDb) | undefined): void {
    const owner = new Map<string, string>();
    for (const { module } of this.modules) {
      const names = module.databases ?? [];
      if (names.length === 0) continue;
      if (open === undefined) throw new Error(`module ${module.name} declares databases but the app was given no openDatabase`);
      const dbs = new Map<string, AppDb>();
      const readers = new Map<string, ModuleDbReader>();
      for (const name of names) {
        const prev = owner.get(name);
        if (prev !== undefined) throw new Error(`database ${name} is declared by modules ${prev} and ${module.name}`);
        owner.set(name, module.name);
        const db = open(name);
        dbs.set(name, db);
        readers.set(name, { getBinary: (k) => db.getBinary(k), getRange: (o) => db.getRange(o) });
      }
      this.moduleDbs.set(module.name, dbs);
      module.attachDatabases?.(readers);
    }
  }

  // --- ServiceRegistrar -------------------------------------------------------------------

  registerMsg<M>(route: MsgRoute<M>): void {
    const url = this.names.parseTypeUrl(route.typeUrl);
    if (this.msgRoutes.has(url)) throw new Error(`message route ${url} is registered twice`);
    this.msgRoutes.set(url, route as MsgRoute<unknown>);
  }

  registerQuery<Q, R>(route: QueryRoute<Q, R>): void {
    const path = this.names.parseTypeUrl(route.path);
    if (this.queryRoutes.has(path)) throw new Error(`query route ${path} is registered twice`);
    this.queryRoutes.set(path, route as QueryRoute<unknown, unknown>);
  }

  /** Registered message type URLs (canonical), e.g. for authz's routability check. */
  hasMsgRoute(typeUrl: string): boolean {
    return this.msgRoutes.has(this.names.parseTypeUrl(typeUrl));
  }

  /**
   * The route of a message type URL in either spelling (baseapp.MessageRouter HandlerByTypeURL):
   * authz's MsgExec runs inner messages through it.
   */
  msgRoute(typeUrl: string): MsgRoute<unknown> | undefined {
    return this.msgRoutes.get(this.names.parseTypeUrl(typeUrl));
  }

  // --- committed state ----------------------------------------------------------------------

  /**
   * Re-reads the committed state from LMDB and drops everything uncommitted. The constructor calls
   * it; the node calls it if the write transaction around commit() failed, so that memory matches
   * the disk again.
   */
  reload(): void {
    const h = this.db.getBinary(META_HEIGHT);
    this.lastHeight = h === undefined ? 0n : readU64be(h);
    this.lastAppHash = this.db.getBinary(META_APP_HASH) ?? EMPTY_BYTES;
    const c = this.db.getBinary(META_CHAIN_ID);
    this.chainId = c === undefined ? '' : fromUtf8(c);
    this.moduleHashes = new Map();
    this.moduleRoots = new Map();
    for (const e of this.modules) {
      const b = this.db.getBinary(concatBytes(META_MODULE_HASH, utf8(e.storeKey)));
      const lt = b === undefined ? new LtHash() : LtHash.fromBytes(b);
      this.moduleHashes.set(e.storeKey, lt);
      this.moduleRoots.set(e.storeKey, lt.root());
    }
    this.pendingChainId = undefined;
    this.genesis = null;
    this.pending = null;
    this.lastBlockTime = 0n;
    this.checkState = new CacheKVStore(this.committedStore);
    this.versions?.reload();
    for (const e of this.modules) e.module.discardPending?.();
  }

  /**
   * The committed view after another instance over the same database committed a block (the
   * executor thread's app; docs/ARCHITECTURE.md, Threads): reload() plus the block's time, which
   * CheckTx's context carries. The caller resets its LMDB read transaction first.
   */
  committedElsewhere(blockTime: bigint): void {
    this.reload();
    this.lastBlockTime = blockTime;
  }

  /** The node passes the current consensus params after a restart (initChain passes them first). */
  setConsensusParams(p: ConsensusParams): void {
    this.consensusParams = p;
  }

  get lastBlockHeight(): bigint {
    return this.lastHeight;
  }

  // --- contexts -----------------------------------------------------------------------------

  private storeResolver(base: KVStore, metered: boolean): (storeKey: string, meter: GasMeter) => KVStore {
    return (storeKey, meter) => {
      const e = this.byStoreKey.get(storeKey);
      if (e === undefined) throw new Error(`store ${storeKey} is not registered`);
      const s = new PrefixStore(base, e.prefix);
      return metered ? new GasKVStore(s, meter, this.kvGas) : s;
    };
  }

  private makeContext(mode: ExecMode, base: KVStore, hdr: BlockHeader, meter: GasMeter, txBytes?: Bytes, metered = true): Context {
    return new Context({
      mode,
      chainId: this.pendingChainId ?? this.chainId,
      height: hdr.height,
      time: hdr.time,
      gasMeter: meter,
      addressCodec: this.addressCodec,
      stores: this.storeResolver(base, metered),
      txBytes,
      consensusParams: this.consensusParams,
      minGasPrices: this.minGasPrices,
      ...(hdr.proposer === undefined ? {} : { proposerAddress: hdr.proposer }),
    });
  }

  /**
   * A read-only context over committed state, for module code outside a block (queries, RPC): the
   * latest state, or the state at `height` (checked by resolveQueryHeight first) read from the
   * versioned store's history.
   */
  queryContext(height?: bigint): Context {
    const h = height ?? this.lastHeight;
    const base = h === this.lastHeight || this.versions === undefined ? this.committedStore : new VersionReadStore(this.versions, h);
    return this.makeContext(ExecMode.Query, new ReadOnlyStore(base), { height: h, time: 0n }, new InfiniteGasMeter(), undefined, false);
  }

  // --- app hash -----------------------------------------------------------------------------

  /** Applies a cache's changes to the committed module hashes; O(changed keys). */
  private async computeAppHash(state: CacheKVStore, hdr: BlockHeader): Promise<{ appHash: Bytes; changed: Map<string, LtHash>; roots: Map<string, Bytes> }> {
    const changed = new Map<string, LtHash>();
    // The changed keys per store, for modules with a commitment of their own (AppModule.commitment).
    const changedKeys = this.hasCommitments ? new Map<string, Bytes[]>() : undefined;
    for (const { key, value } of state.dirtyEntries()) {
      if (key[0] !== STORE_PREFIX || key.length < 2) throw new Error('a write outside every module store');
      const plen = 2 + key[1]!;
      const storeKey = this.byPrefix.get(bytesToKey(key.subarray(0, plen)));
      if (storeKey === undefined) throw new Error('a write to an unregistered store');
      const old = this.committedStore.get(key);
      const now = value ?? undefined;
      if (bytesEqual(old, now)) continue;
      let lt = changed.get(storeKey);
      if (lt === undefined) {
        lt = this.moduleHashes.get(storeKey)!.clone();
        changed.set(storeKey, lt);
      }
      const rel = key.subarray(plen);
      if (changedKeys !== undefined) {
        let ks = changedKeys.get(storeKey);
        if (ks === undefined) changedKeys.set(storeKey, (ks = []));
        ks.push(rel);
      }
      if (old !== undefined) lt.remove(rel, old);
      if (now !== undefined) lt.add(rel, now);
    }
    const roots = new Map(this.moduleRoots);
    for (const [sk, lt] of changed) roots.set(sk, lt.root());
    // Modules with their own commitment: asked every block, combined with the store's root. Their
    // entry in `roots` (and so moduleRoots) is the combined leaf.
    for (const e of this.modules) {
      if (e.module.commitment === undefined) continue;
      const cr = e.module.commitment(this.readContext(this.lastHeight === 0n && this.genesis === null ? ExecMode.Genesis : ExecMode.Finalize, state, hdr), changedKeys ?? new Map());
      const c = cr instanceof Promise ? await cr : cr;
      if (!(c instanceof Uint8Array) || c.length !== 32) throw new Error(`module ${e.module.name}: commitment must be 32 bytes`);
      const lt = changed.get(e.storeKey) ?? this.moduleHashes.get(e.storeKey)!;
      roots.set(e.storeKey, moduleLeafRoot(lt.root(), c));
    }
    return { appHash: appHashFromModuleRoots(roots), changed, roots };
  }

  // --- ABCI ---------------------------------------------------------------------------------

  async info(): Promise<ResponseInfo> {
    // Before the first block, CometBFT's handshake compares against the genesis app hash.
    const appHash = this.lastHeight === 0n && this.genesis !== null ? this.genesis.appHash : this.lastAppHash;
    return { data: this.name, version: this.version, appVersion: this.appVersion, lastBlockHeight: this.lastHeight, lastBlockAppHash: appHash };
  }

  async initChain(req: RequestInitChain): Promise<ResponseInitChain> {
    if (this.lastHeight > 0n) throw new Error(`initChain on an app that has committed height ${this.lastHeight}`);
    let appState: Record<string, unknown> = {};
    if (req.appStateBytes.length > 0) {
      const parsed: unknown = JSON.parse(fromUtf8(req.appStateBytes));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('genesis app_state must be a JSON object');
      appState = parsed as Record<string, unknown>;
    }
    this.consensusParams = req.consensusParams;
    this.pendingChainId = req.chainId;
    const state = new CacheKVStore(this.committedStore);
    const hdr = { height: req.initialHeight, time: req.time };
    const validators: ValidatorUpdate[] = [];
    let validatorsFrom: string | undefined;
    // module.Manager.InitGenesis: registry order; at most one module may return validators.
    for (const e of this.modules) {
      if (e.module.initGenesis === undefined) continue;
      const ctx = this.makeContext(ExecMode.Genesis, state, hdr, new InfiniteGasMeter());
      const vals = e.module.initGenesis(ctx, appState[e.module.name]);
      if (vals && vals.length > 0) {
        if (validatorsFrom !== undefined) throw new Error(`validator InitGenesis updates already set by module ${validatorsFrom}`);
        validatorsFrom = e.module.name;
        validators.push(...vals);
      }
    }
    const { appHash } = await this.computeAppHash(state, hdr);
    this.genesis = { state, appHash, initialHeight: req.initialHeight };
    this.pending = null;
    // Let CheckTx see genesis accounts before block one commits them.
    this.checkState = state.clone();
    return { validators, appHash };
  }

  async checkTx(txBytes: Bytes, type: CheckTxType): Promise<ResponseCheckTx> {
    const mode = type === CheckTxType.Recheck ? ExecMode.ReCheck : ExecMode.Check;
    const hdr = { height: this.lastHeight + 1n, time: this.lastBlockTime };
    // CheckTx and its rechecks get the same bytes from the mempool: decoded once.
    const prepared = this.decodeAndPrepare(txBytes, true);
    if (!prepared.ok) return failResult(prepared.error, 0n, 0n, []);
    if (prepared.kind !== undefined) {
      if (prepared.kind.preVerify !== undefined && mode === ExecMode.Check) {
        try {
          await prepared.kind.preVerify([prepared.decoded]);
        } catch {
          // A hint only: the ante stage does the work inline.
        }
      }
      return await this.runPrepared(mode, prepared, this.checkState, hdr);
    }
    // Recheck does not verify signatures (SigVerificationDecorator), so it needs no pre-stage.
    if (this.preVerifier !== undefined && mode === ExecMode.Check) {
      try {
        await this.preVerifier.preVerify(this.readContext(mode, this.checkState, hdr, txBytes), [prepared.tx]);
      } catch (e) {
        return failResult(e, prepared.tx.gas, 0n, []);
      }
    }
    // The check state is read after the await: a commit may have replaced it meanwhile.
    return this.runTx(mode, prepared.tx, this.checkState, hdr);
  }

  /**
   * Replays txs [0, upTo) of the block at `hdr.height`, Cosmos and EVM alike and in block order,
   * over a branch of the committed state at hdr.height - 1 that is never written back (debug
   * tracing: the state an EVM tx of the block started from). Simulate mode, as simulate() runs:
   * no gas limit is enforced, and the EVM keeper's pending block (receipts, block gas) is not
   * touched (it is FinalizeBlock's only). Returns a read-only context over the branch, and each
   * tx's result. The parent state must be kept (resolveQueryHeight first). BeginBlock runs first,
   * as in the block. Not as in the block: a tx that ran out of its gas there succeeds here, and an
   * EVM tx the VM refuses is dropped (in a block it pays its gas limit: keeper.ts failInBlock).
   */
  async replayBlockTxs(hdr: BlockHeader, txs: Bytes[], upTo: number): Promise<{ ctx: Context; results: ExecTxResult[]; changed(): Map<string, Bytes[]> }> {
    const parent = hdr.height - 1n;
    const base = parent === this.lastHeight || this.versions === undefined ? this.committedStore : new VersionReadStore(this.versions, parent);
    const state = new CacheKVStore(new ReadOnlyStore(base));
    // BeginBlock first, as finalizeBlock runs it (its writes to the branch only; today authz's
    // pruning of expired grants).
    for (const e of this.modules) if (e.module.beginBlock !== undefined) e.module.beginBlock(this.makeContext(ExecMode.Simulate, state, hdr, new InfiniteGasMeter()));
    const results: ExecTxResult[] = [];
    for (let i = 0; i < upTo && i < txs.length; i++) {
      const r = this.runPrepared(ExecMode.Simulate, this.decodeAndPrepare(txs[i]!), state, hdr);
      results.push(r instanceof Promise ? await r : r);
    }
    // The keys the replay changed per store (relative keys), as computeAppHash collects them.
    const changed = (): Map<string, Bytes[]> => {
      const out = new Map<string, Bytes[]>();
      for (const { key, value } of state.dirtyEntries()) {
        if (key[0] !== STORE_PREFIX || key.length < 2) continue;
        const plen = 2 + key[1]!;
        const storeKey = this.byPrefix.get(bytesToKey(key.subarray(0, plen)));
        if (storeKey === undefined || bytesEqual(base.get(key), value ?? undefined)) continue;
        let ks = out.get(storeKey);
        if (ks === undefined) out.set(storeKey, (ks = []));
        ks.push(key.subarray(plen));
      }
      return out;
    };
    return { ctx: this.readContext(ExecMode.Query, state, { height: parent, time: 0n }), results, changed };
  }

  /** Runs a tx against a branch of the check state with an infinite meter and discards it. */
  async simulate(txBytes: Bytes): Promise<ExecTxResult> {
    const prepared = this.decodeAndPrepare(txBytes);
    return await this.runPrepared(ExecMode.Simulate, prepared, this.checkState.branch(), { height: this.lastHeight + 1n, time: this.lastBlockTime });
  }

  /** A read-only, unmetered context over `base` for the pre-verification stage. */
  private readContext(mode: ExecMode, base: KVStore, hdr: BlockHeader, txBytes?: Bytes): Context {
    return this.makeContext(mode, new ReadOnlyStore(base), hdr, new InfiniteGasMeter(), txBytes, false);
  }

  async prepareProposal(req: RequestPrepareProposal): Promise<Bytes[]> {
    // DefaultProposalHandler with a no-op app mempool (baseapp/abci_utils.go): keep CometBFT's
    // order, skip a tx that does not fit (bytes counted as in the block's Data proto) and go on,
    // stop once the block is full. Undecodable txs are left out so that our own proposal passes
    // processProposal.
    const maxBytes = req.maxTxBytes;
    const maxGas = this.consensusParams?.block.maxGas ?? -1n;
    let bytes = 0n;
    let gas = 0n;
    const out: Bytes[] = [];
    // PrepareProposal and ProcessProposal run on the thread that answers RPC: a turn of the event
    // loop every RECHECK_SLICE_MS of work (the clock read every 256 txs).
    const turns = new LoopTurns();
    for (let i = 0; i < req.txs.length; i++) {
      if (turns.due(i, 256)) await turns.turn();
      const tx = req.txs[i]!;
      let txGas: bigint;
      try {
        txGas = this.gasLimitOf(tx);
      } catch {
        continue;
      }
      const size = BigInt(computeProtoSizeForTxs([tx]));
      if (bytes + size <= maxBytes) {
        if (maxGas > 0n) {
          if (gas + txGas <= maxGas) {
            gas += txGas;
            bytes += size;
            out.push(tx);
          }
        } else {
          bytes += size;
          out.push(tx);
        }
      }
      if (bytes >= maxBytes || (maxGas > 0n && gas >= maxGas)) break;
    }
    return out;
  }

  async processProposal(req: RequestProcessProposal): Promise<boolean> {
    const maxGas = this.consensusParams?.block.maxGas ?? -1n;
    let gas = 0n;
    const turns = new LoopTurns();
    for (let i = 0; i < req.txs.length; i++) {
      if (turns.due(i, 256)) await turns.turn();
      try {
        gas += this.gasLimitOf(req.txs[i]!);
      } catch {
        return false;
      }
      if (maxGas > 0n && gas > maxGas) return false;
    }
    return true;
  }

  async finalizeBlock(req: RequestFinalizeBlock): Promise<ResponseFinalizeBlock> {
    const expected = this.lastHeight === 0n ? this.genesis?.initialHeight ?? req.height : this.lastHeight + 1n;
    if (req.height !== expected) throw new Error(`finalizeBlock at height ${req.height}, expected ${expected}`);
    // Re-running a height before commit starts over from the committed (or genesis) state.
    const state = this.genesis !== null ? this.genesis.state.clone() : new CacheKVStore(this.committedStore);
    const hdr = { height: req.height, time: req.time, proposer: req.proposerAddress };
    const events: AbciEvent[] = [];
    // A re-run of a height that was finalized but not committed: modules drop that run's results.
    if (this.pending !== null) for (const e of this.modules) e.module.discardPending?.();
    this.watchBlockState(state, req.height);

    for (const e of this.modules) {
      if (e.module.beginBlock === undefined) continue;
      const ctx = this.makeContext(ExecMode.Finalize, state, hdr, new InfiniteGasMeter());
      e.module.beginBlock(ctx);
      for (const ev of ctx.events.events()) events.push(withAttribute(ev, 'mode', 'BeginBlock'));
    }

    // Decode every tx first so that the pre-verification stage sees the whole block at once
    // (one pool call for all its signatures); its results are only hints, so a failure there
    // changes nothing but speed.
    const prepared = req.txs.map((tx) => this.decodeAndPrepare(tx));
    if (this.preVerifier !== undefined) {
      const txs = prepared.flatMap((p) => (p.ok && p.kind === undefined ? [p.tx] : []));
      if (txs.length > 0) {
        try {
          await this.preVerifier.preVerify(this.readContext(ExecMode.Finalize, state, hdr), txs);
        } catch {
          // Verified in the ante chain instead.
        }
      }
    }
    // Kinds' batch stages (EVM sender recovery on the pool): one call per kind for the block.
    const byKind = new Map<TxKind, unknown[]>();
    for (const p of prepared) {
      if (!p.ok || p.kind === undefined || p.kind.preVerify === undefined) continue;
      let l = byKind.get(p.kind);
      if (l === undefined) byKind.set(p.kind, (l = []));
      l.push(p.decoded);
    }
    for (const [kind, txs] of byKind) {
      try {
        await kind.preVerify!(txs);
      } catch {
        // Hints only (see TxKind.preVerify).
      }
    }
    // In block order, whatever their kind: each tx sees the effects of the ones before it.
    // Only a tx of an async kind (EVM) costs an await; Cosmos txs run straight through.
    const txResults: ExecTxResult[] = [];
    for (const p of prepared) {
      const r = this.runPrepared(ExecMode.Finalize, p, state, hdr);
      txResults.push(r instanceof Promise ? await r : r);
    }

    const validatorUpdates: ValidatorUpdate[] = [];
    for (const e of this.modules) {
      if (e.module.endBlock === undefined) continue;
      const ctx = this.makeContext(ExecMode.Finalize, state, hdr, new InfiniteGasMeter());
      const vals = e.module.endBlock(ctx);
      if (vals) validatorUpdates.push(...vals);
      for (const ev of ctx.events.events()) events.push(withAttribute(ev, 'mode', 'EndBlock'));
    }

    const { appHash, changed, roots } = await this.computeAppHash(state, hdr);
    this.pending = { state, height: req.height, time: req.time, appHash, changed, roots };
    return { events, txResults, validatorUpdates, appHash };
  }

  /** Hands every write into a block's state to the modules that watch it (AppModule.watchBlockState). */
  private watchBlockState(state: CacheKVStore, height: bigint): void {
    const watchers: BlockStateWatcher[] = [];
    for (const e of this.modules) {
      const w = e.module.watchBlockState?.(height);
      if (w !== undefined) watchers.push(w);
    }
    if (watchers.length === 0) return;
    state.onWrite = (k) => {
      const plen = 2 + k.charCodeAt(1);
      const storeKey = this.byPrefix.get(k.slice(0, plen));
      if (storeKey === undefined) return;
      const rel = k.slice(plen);
      for (const w of watchers) w(storeKey, rel, this.landing);
    };
  }

  /**
   * Writes the finalized block's state with putSync/removeSync, which join the caller's
   * `env.transactionSync` (the block executor's one write transaction); keys go in sorted order.
   * Memory switches to the new state right away; if the surrounding transaction aborts, call
   * reload().
   */
  commit(): { retainHeight: bigint } {
    const p = this.pending;
    if (p === null) throw new Error('commit without a finalized block');
    if (this.versions !== undefined) this.versions.commit(p.height, p.state.dirtyEntries());
    else {
      for (const { key, value } of p.state.dirtyEntries()) {
        if (value === null) this.db.removeSync(key);
        else this.db.putSync(key, value);
      }
    }
    for (const [sk, lt] of p.changed) this.db.putSync(concatBytes(META_MODULE_HASH, utf8(sk)), lt.toBytes());
    this.commitModuleDbs(p.height);
    this.db.putSync(META_HEIGHT, u64be(p.height));
    this.db.putSync(META_APP_HASH, p.appHash);
    if (this.pendingChainId !== undefined) {
      this.db.putSync(META_CHAIN_ID, utf8(this.pendingChainId));
      this.chainId = this.pendingChainId;
      this.pendingChainId = undefined;
    }

    this.lastHeight = p.height;
    this.lastBlockTime = p.time;
    this.lastAppHash = p.appHash;
    for (const [sk, lt] of p.changed) this.moduleHashes.set(sk, lt);
    this.moduleRoots = p.roots;
    this.pending = null;
    this.genesis = null;
    this.checkState = new CacheKVStore(this.committedStore);
    const retainHeight = this.minRetainBlocks > 0n && p.height > this.minRetainBlocks ? p.height - this.minRetainBlocks : 0n;
    return { retainHeight };
  }

  /** Modules' commit hooks, with write handles that die when the hook returns. */
  private commitModuleDbs(height: bigint): void {
    for (const { module } of this.modules) {
      if (module.commit === undefined) continue;
      const dbs = this.moduleDbs.get(module.name) ?? new Map<string, AppDb>();
      let live = true;
      const alive = (name: string): void => {
        if (!live) throw new Error(`module ${module.name}: database ${name} written outside commit()`);
      };
      const writers = new Map<string, ModuleDbWriter>();
      try {
        module.commit({
          height,
          db(name) {
            const db = dbs.get(name);
            if (db === undefined) throw new Error(`module ${module.name} did not declare database ${name}`);
            let w = writers.get(name);
            if (w === undefined) {
              w = {
                getBinary: (k) => db.getBinary(k),
                getRange: (o) => db.getRange(o),
                putSync: (k, v) => {
                  alive(name);
                  db.putSync(k, v);
                },
                removeSync: (k) => {
                  alive(name);
                  return db.removeSync(k);
                },
              };
              writers.set(name, w);
            }
            return w;
          },
        });
      } finally {
        live = false;
      }
    }
  }

  async query(req: RequestQuery): Promise<ResponseQuery> {
    const base: ResponseQuery = { code: 0, log: '', info: '', index: 0n, key: EMPTY_BYTES, value: EMPTY_BYTES, proofOps: null, height: 0n, codespace: '' };
    const fail = (err: unknown, height = 0n): ResponseQuery => {
      const { codespace, code, log } = abciInfo(err);
      return { ...base, code, codespace, log, height };
    };
    // `/app/version` (baseapp/abci.go handleQueryApp): the software version, no height check.
    if (req.path === '/app/version' || req.path === 'app/version') return { ...base, value: utf8(this.version), height: this.lastHeight };

    const route = this.queryRoutes.get(this.names.parseTypeUrl(req.path));
    if (route === undefined) return fail(sdkErrors.unknownRequest.wrap('unknown query path'));
    let height: bigint;
    try {
      height = this.queryHeight(req.height, req.prove);
    } catch (e) {
      return fail(e);
    }
    let request: unknown;
    try {
      request = route.decodeRequest ? route.decodeRequest(req.data) : req.data.length === 0 ? {} : JSON.parse(fromUtf8(req.data));
    } catch (e) {
      return fail(sdkErrors.invalidRequest.wrap((e as Error).message), height);
    }
    try {
      const res = route.handler(this.queryContext(height), request);
      const value = route.encodeResponse ? route.encodeResponse(res) : jsonEncode(res);
      return { ...base, value, height };
    } catch (e) {
      return fail(queryError(e), height);
    }
  }

  /**
   * The plain-object form of a query for the REST and gRPC servers: the handler's response, or a
   * thrown GrpcStatusError/AbciError for them to map to a status.
   */
  /** Whether a query route answers this gRPC path (either type-URL spelling). */
  hasQueryRoute(path: string): boolean {
    return this.queryRoutes.has(this.names.parseTypeUrl(path));
  }

  queryObject<R = unknown>(path: string, request: unknown, height = 0n): { height: bigint; response: R } {
    const route = this.queryRoutes.get(this.names.parseTypeUrl(path));
    if (route === undefined) throw sdkErrors.unknownRequest.wrap('unknown query path');
    const h = this.queryHeight(height, false);
    return { height: h, response: route.handler(this.queryContext(h), request) as R };
  }

  /**
   * The query router's height rule (QueryRouterOptions.resolveHeight): the height a query for
   * `requested` (undefined = latest) is served at, or the SDK's error for one that cannot be.
   */
  resolveQueryHeight(requested: bigint | undefined): bigint {
    return this.queryHeight(requested ?? 0n, false);
  }

  /**
   * createQueryContext's height rules (cosmos/cosmos-sdk: baseapp/abci.go): no height before the
   * first block, none in the future, none the store no longer (or never) had.
   */
  private queryHeight(height: bigint, prove: boolean): bigint {
    if (height < 0n) throw sdkErrors.invalidRequest.wrap('cannot query with height < 0; please provide a valid height');
    if (this.lastHeight === 0n) throw sdkErrors.invalidHeight.wrap(`${this.name} is not ready; please wait for first block`);
    if (height > this.lastHeight) throw sdkErrors.invalidHeight.wrap('cannot query with height in the future; please provide a valid height');
    const h = height === 0n ? this.lastHeight : height;
    if (h <= 1n && prove) throw sdkErrors.invalidRequest.wrap('cannot query with proof when height <= 1; please provide a valid height');
    if (h !== this.lastHeight && (this.versions === undefined || !this.versions.hasVersion(h))) {
      throw sdkErrors.invalidRequest.wrap(`failed to load state at height ${h}; version does not exist (latest height: ${this.lastHeight})`);
    }
    return h;
  }

  // --- tx execution -------------------------------------------------------------------------

  /** A tx's gas limit for block max-gas accounting, by kind; throws if it does not decode. */
  private gasLimitOf(txBytes: Bytes): bigint {
    const k = bytesToKey(txBytes);
    const known = this.gasMemo.get(k);
    if (known !== undefined) return known;
    const kind = this.txKinds.kindOf(txBytes);
    const gas = kind === undefined ? this.txDecoder.decode(txBytes).gas : kind.gasLimit(kind.decode(txBytes));
    this.gasMemo.set(k, gas);
    return gas;
  }

  /** Runs a prepared tx by its kind. */
  private runPrepared(mode: ExecMode, p: PreparedTx, base: CacheKVStore, hdr: BlockHeader): ExecTxResult | Promise<ExecTxResult> {
    if (!p.ok) return failResult(p.error, 0n, 0n, []);
    return p.kind === undefined ? this.runTx(mode, p.tx, base, hdr) : this.runKindTx(mode, p.kind, p.decoded, p.bytes, base, hdr);
  }

  /**
   * runTx for a registered kind: the kind's ante stage in its own branch (kept when it passes),
   * then its run stage in a second branch (kept only if it returns); CheckTx stops after ante.
   */
  private async runKindTx(mode: ExecMode, kind: TxKind, tx: unknown, txBytes: Bytes, base: CacheKVStore, hdr: BlockHeader): Promise<ExecTxResult> {
    const simulate = mode === ExecMode.Simulate;
    let gasWanted: bigint;
    try {
      gasWanted = kind.gasLimit(tx);
    } catch (e) {
      return failResult(e, 0n, 0n, []);
    }
    const meter: GasMeter = simulate ? new InfiniteGasMeter() : new BasicGasMeter(gasWanted);
    const oog = (e: unknown): unknown =>
      e instanceof OutOfGasError || e instanceof GasOverflowError ? outOfGasAbciError(e.descriptor, gasWanted, meter.consumed()) : e;
    const anteBranch = base.branch();
    const anteCtx = this.makeContext(mode, anteBranch, hdr, meter, txBytes);
    try {
      const a = kind.ante(anteCtx, tx, simulate);
      if (a instanceof Promise) await a;
    } catch (e) {
      return failResult(oog(e), gasWanted, meter.consumed(), []);
    }
    anteBranch.write();
    const anteEvents = anteCtx.events.events();
    if (mode === ExecMode.Check || mode === ExecMode.ReCheck) return { ...emptyResult(), gasWanted, gasUsed: meter.consumed() };
    const runBranch = base.branch();
    const runCtx = this.makeContext(mode, runBranch, hdr, meter, txBytes);
    try {
      const r = kind.run(runCtx, tx);
      const out = r instanceof Promise ? await r : r;
      this.landing = kind.name;
      try {
        runBranch.write();
      } finally {
        this.landing = undefined;
      }
      return { ...emptyResult(), data: out?.data ?? EMPTY_BYTES, gasWanted, gasUsed: meter.consumed(), events: [...anteEvents, ...runCtx.events.events()] };
    } catch (e) {
      return failResult(oog(e), gasWanted, meter.consumed(), anteEvents);
    }
  }

  /** Routes and decodes the messages and collects signers (validateBasicTxMsgs + GetSigners). */
  private prepareTx(decoded: ReturnType<TxDecoder['decode']>, bytes: Bytes): Tx {
    if (decoded.msgs.length === 0) throw sdkErrors.invalidRequest.wrap('must contain at least one message');
    const msgs: TxMsg[] = [];
    const msgSigners: Bytes[][] = [];
    const signers: Bytes[] = [];
    const seen = new Set<string>();
    for (const m of decoded.msgs) {
      const typeUrl = this.names.parseTypeUrl(m.typeUrl);
      const route = this.msgRoutes.get(typeUrl);
      if (route === undefined) throw sdkErrors.unknownRequest.wrap(`no message handler found for ${m.typeUrl}`);
      let value: unknown;
      try {
        value = route.decode(m.value);
      } catch (e) {
        if (e instanceof AbciError) throw e;
        throw sdkErrors.txDecode.wrap(`${typeUrl}: ${(e as Error).message}`);
      }
      route.validateBasic?.(value);
      const s = route.signers(value, this.addressCodec);
      msgs.push({ typeUrl, value });
      msgSigners.push(s);
      for (const a of s) {
        const k = bytesToKey(a);
        if (!seen.has(k)) {
          seen.add(k);
          signers.push(a);
        }
      }
    }
    return { ...decoded, msgs, msgSigners, signers, bytes };
  }

  /** Decoding and message routing (runTx's first step); a failure is the tx's result. */
  private decodeAndPrepare(txBytes: Bytes, remember = false): PreparedTx {
    const known = remember ? this.preparedByBytes.get(txBytes) : undefined;
    if (known !== undefined) return known;
    let p: PreparedTx & { ok: true };
    try {
      const kind = this.txKinds.kindOf(txBytes);
      p = kind !== undefined ? { ok: true, kind, decoded: kind.decode(txBytes), bytes: txBytes } : { ok: true, tx: this.prepareTx(this.txDecoder.decode(txBytes), txBytes) };
    } catch (e) {
      return { ok: false, error: e };
    }
    if (remember && p.kind === undefined) {
      this.preparedByBytes.set(txBytes, p);
      this.gasMemo.set(bytesToKey(txBytes), p.tx.gas);
    }
    return p;
  }

  /**
   * runTx (baseapp/baseapp.go) after decoding: ante chain in its own branch (kept when it passes),
   * messages in a second branch (kept only when all pass). In CheckTx the messages do not run.
   */
  private runTx(mode: ExecMode, tx: Tx, base: CacheKVStore, hdr: BlockHeader): ExecTxResult {
    const txBytes = tx.bytes;
    const simulate = mode === ExecMode.Simulate;
    // SetUpContext (x/auth/ante/setup.go): the tx's gas limit, infinite when simulating.
    const meter: GasMeter = simulate ? new InfiniteGasMeter() : new BasicGasMeter(tx.gas);
    const gasWanted = tx.gas;
    const oog = (e: unknown): unknown =>
      e instanceof OutOfGasError || e instanceof GasOverflowError ? outOfGasAbciError(e.descriptor, gasWanted, meter.consumed()) : e;

    const anteBranch = base.branch();
    const anteCtx = this.makeContext(mode, anteBranch, hdr, meter, txBytes);
    try {
      runAnteChain(this.ante, anteCtx, tx, simulate);
    } catch (e) {
      return failResult(oog(e), gasWanted, meter.consumed(), []);
    }
    anteBranch.write();
    const anteEvents = anteCtx.events.events();

    if (mode === ExecMode.Check || mode === ExecMode.ReCheck) {
      return { ...emptyResult(), gasWanted, gasUsed: meter.consumed() };
    }

    const msgBranch = base.branch();
    try {
      const { events, data } = this.runMsgs(mode, msgBranch, hdr, meter, tx);
      msgBranch.write();
      return { ...emptyResult(), data, gasWanted, gasUsed: meter.consumed(), events: [...anteEvents, ...events] };
    } catch (e) {
      return failResult(oog(e), gasWanted, meter.consumed(), anteEvents);
    }
  }

  /** runMsgs + createEvents (baseapp/baseapp.go): a leading `message` event, `msg_index` on all. */
  private runMsgs(mode: ExecMode, branch: CacheKVStore, hdr: BlockHeader, meter: GasMeter, tx: Tx): { events: AbciEvent[]; data: Bytes } {
    const events: AbciEvent[] = [];
    const responses: { typeUrl: string; value: Bytes }[] = [];
    for (let i = 0; i < tx.msgs.length; i++) {
      const msg = tx.msgs[i]!;
      const route = this.msgRoutes.get(msg.typeUrl)!;
      const ctx = this.makeContext(mode, branch, hdr, meter, tx.bytes);
      let res: ReturnType<MsgRoute['handler']>;
      try {
        res = route.handler(ctx, msg.value);
      } catch (e) {
        if (e instanceof OutOfGasError || e instanceof GasOverflowError) throw e;
        const wrapMsg = `failed to execute message; message index: ${i}`;
        if (e instanceof AbciError) throw e.wrap(wrapMsg);
        throw new AbciError(errInternal.codespace, errInternal.abciCode, errInternal.description, `${wrapMsg}: ${(e as Error)?.message ?? String(e)}`);
      }
      // Canonical spelling, never the compat one: `data` is hashed into LastResultsHash, so it must
      // not depend on a node's [compat] upstream-names setting. Event names are not hashed.
      responses.push({ typeUrl: route.responseTypeUrl ?? `${msg.typeUrl}Response`, value: res?.response ?? EMPTY_BYTES });

      const emitted = ctx.events.events();
      const action = this.names.typeUrl(msg.typeUrl);
      const em = new EventManager();
      const attrs: [string, string][] = [['action', action]];
      const first = tx.msgSigners[i]![0];
      if (first !== undefined) attrs.push(['sender', this.addressCodec.encode(first)]);
      if (!emitted.some((ev) => ev.attributes.some((a) => a.key === 'module'))) {
        const mod = moduleNameFromTypeUrl(action);
        if (mod !== '') attrs.push(['module', mod]);
      }
      em.emit('message', attrs);
      for (const ev of [...em.events(), ...emitted]) events.push(withAttribute(ev, 'msg_index', String(i)));
    }
    return { events, data: encodeTxMsgData(responses) };
  }
}

/** A query handler's failure as an ABCI error (gRPCErrorToSDKError; cosmos/cosmos-sdk:baseapp/abci.go). */
function queryError(e: unknown): AbciError {
  if (e instanceof GrpcStatusError) return grpcErrorToAbci(e);
  // Registered SDK errors carry gRPC Unknown, which maps to 6; the log keeps the error's text.
  if (e instanceof AbciError) return sdkErrors.unknownRequest.wrap(e.message);
  // Not a gRPC status at all → invalid request.
  return sdkErrors.invalidRequest.wrap(e instanceof Error ? e.message : String(e));
}
