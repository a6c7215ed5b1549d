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
}
