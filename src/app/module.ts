/**
 * What a module gives the base app (cosmos-sdk: types/module/module.go AppModule and friends,
 * baseapp/msg_service_router.go, baseapp/grpcrouter.go), reduced to plain objects: a name and a
 * store key, genesis import, message routes by type URL, query routes by gRPC method path, and
 * begin/end-block hooks.
 *
 * Type URLs and query paths are data the module is constructed with (they come from the names
 * registry, src/names), so nothing here spells a package name.
 */
import type { AddressCodec } from './address.js';
import type { Bytes } from './bytes.js';
import type { Context } from './context.js';
import type { ValidatorUpdate } from '../types/validator.js';

/** What a message handler returns: the encoded Msg…Response, if it has fields. */
export interface MsgResult {
  /** Protobuf bytes of the response message (empty for `MsgSendResponse{}`). */
  response?: Bytes;
}

export interface MsgRoute<M = unknown> {
  /** Canonical type URL, e.g. `/chain.bank.v1beta1.MsgSend`. */
  typeUrl: string;
  /**
   * Turns the decoder's message value (protobuf bytes later, a JSON object from jsonTxDecoder, or
   * an object already of type M) into M. A throw is a `tx parse error` (sdk code 2), as an Any
   * the SDK cannot unpack fails tx decoding.
   */
  decode(value: unknown): M;
  /** The message's signers (the `cosmos.msg.v1.signer` field), as address bytes. */
  signers(msg: M, codec: AddressCodec): Bytes[];
  /** Stateless checks run before the ante chain (HasValidateBasic); throw an AbciError. */
  validateBasic?(msg: M): void;
  /** Executes the message; emits events on ctx.events; throws an AbciError on failure. */
  handler(ctx: Context, msg: M): MsgResult | void;
  /** Type URL of the response for TxMsgData.msg_responses; default `${typeUrl}Response`. */
  responseTypeUrl?: string;
}

export interface QueryRoute<Q = unknown, R = unknown> {
  /** Canonical gRPC method path, e.g. `/chain.bank.v1beta1.Query/Balance`. */
  path: string;
  /**
   * Answers from committed state. Throw GrpcStatusError for gRPC-coded failures (NotFound,
   * InvalidArgument…), AbciError for SDK errors.
   */
  handler(ctx: Context, req: Q): R;
  /** abci_query `data` → request. Default: UTF-8 JSON. */
  decodeRequest?(data: Bytes): Q;
  /** Response → abci_query `value`. Default: UTF-8 JSON with bigints as decimal strings. */
  encodeResponse?(res: R): Bytes;
}

export interface ServiceRegistrar {
  registerMsg<M>(route: MsgRoute<M>): void;
  registerQuery<Q, R>(route: QueryRoute<Q, R>): void;
}

export interface AppModule {
  /** Module name: the key of its section in genesis `app_state`. */
  readonly name: string;
  /** Store key (default: name). Its store's root is one leaf of the app hash. */
  readonly storeKey?: string;
  registerServices?(r: ServiceRegistrar): void;
  /** Imports the module's genesis section (undefined when app_state has none). */
  initGenesis?(ctx: Context, genesis: unknown): ValidatorUpdate[] | void;
  beginBlock?(ctx: Context): void;
  endBlock?(ctx: Context): ValidatorUpdate[] | void;

  /**
   * Its own commitment (32 bytes, e.g. the EVM state root), asked at the end of FinalizeBlock
   * (after EndBlock) and of InitChain, with a read-only context on the block's state. It enters the
   * app hash combined with the store's LtHash root (src/app/apphash.ts moduleLeafRoot); a module
   * without it keeps exactly its LtHash root, so today's app hashes are unchanged.
   * `changed` lists, per store key, the keys (relative to the store) whose value differs from the
   * committed state — e.g. the EVM re-leafs the accounts whose bank balance or sequence changed.
   * May be async (the EVM trie is): BaseApp awaits it.
   */
  commitment?(ctx: Context, changed: ReadonlyMap<string, readonly Bytes[]>): Bytes | Promise<Bytes>;
  /**
   * Named LMDB databases of its own (`evm_state`, `evm_trie`), opened by the store layer from these
   * names. The module gets read-only handles at construction (attachDatabases) and write handles
   * only inside commit().
   */
  readonly databases?: readonly string[];
  attachDatabases?(dbs: ReadonlyMap<string, ModuleDbReader>): void;
  /**
   * Inside BaseApp.commit(), i.e. inside the block's one LMDB write transaction: the module writes
   * what it computed for the finalized block. The handles throw once commit() has returned.
   */
  commit?(c: ModuleCommit): void;
  /**
   * Drops whatever it keeps for an uncommitted block: called when FinalizeBlock re-runs a height
   * finalized but not committed, and on reload() (a failed commit, a restart). Data a module
   * imported in InitChain for its own databases must survive the re-run case (BaseApp re-runs
   * from the genesis state; commit() of the first block writes both).
   */
  discardPending?(): void;
  /**
   * FinalizeBlock opened the state of block `height` (before BeginBlock). The returned function is
   * then called with every key written into that state — store key, key relative to the store
   * (latin1), and the name of the tx kind if a run stage of that kind wrote it (undefined for any
   * other writer: a Cosmos tx, an ante stage, a hook) — until the next block state opens. A module
   * that keeps a cache over the block state across its txs (the EVM keeper) stays coherent with
   * it through this.
   */
  watchBlockState?(height: bigint): BlockStateWatcher;
}

/** See AppModule.watchBlockState. */
export type BlockStateWatcher = (storeKey: string, key: string, runOf: string | undefined) => void;

/** Read access to one of a module's databases. */
export interface ModuleDbReader {
  getBinary(key: Bytes): Bytes | undefined;
  getRange(opts: { start?: Bytes; end?: Bytes; reverse?: boolean }): Iterable<{ key: unknown; value: unknown }>;
}

/** Write access to one of a module's databases, valid only during commit(). */
export interface ModuleDbWriter extends ModuleDbReader {
  putSync(key: Bytes, value: Bytes): void;
  removeSync(key: Bytes): boolean;
}

export interface ModuleCommit {
  /** The height being committed. */
  readonly height: bigint;
  db(name: string): ModuleDbWriter;
}
