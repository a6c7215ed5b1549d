/**
 * The auth module: genesis, MsgUpdateParams and the Query service of spec §4.2, with the SDK's
 * errors (cosmos-sdk: x/auth/module.go, x/auth/keeper/msg_server.go, x/auth/keeper/grpc_query.go;
 * cosmos/cosmos-sdk:proto/cosmos/auth/v1beta1/query.proto, cosmos/cosmos-sdk:x/auth/types/params.go, cosmos/cosmos-sdk:types/query/pagination.go). Queries are protobuf-coded (src/app/proto-route.ts).
 *
 * Query errors, as upstream:
 * - gRPC statuses the handlers return themselves: InvalidArgument (`Address cannot be empty`,
 *   `module name is empty`, …), NotFound (`account <addr> not found`, …);
 * - the address codec's errors pass through as they are: a registered SDK error (wrong HRP is
 *   `…: internal logic error`, an empty payload `…: unknown address`) or a plain one (empty string,
 *   bad bech32); abci_query maps the first to code 6 and the second to code 18 (cosmos/cosmos-sdk:baseapp/abci.go).
 */
import { create, fromBinary, isMessage } from '@bufbuild/protobuf';
import { bech32 } from '@scure/base';
import { MAX_ADDR_LEN } from '../../address.js';
import type { Bytes } from '../../bytes.js';
import type { Context } from '../../context.js';
import { AbciError, GrpcCode, GrpcStatusError, sdkErrors } from '../../errors.js';
import type { AppModule, ServiceRegistrar } from '../../module.js';
import { paginate } from '../../pagination.js';
import { protoQueryRoute } from '../../proto-route.js';
import { moduleAddress } from '../../address.js';
import { ParamsSchema } from '../../../gen/chain/auth/v1beta1/auth_pb.js';
import { PageResponseSchema } from '../../../gen/chain/base/query/v1beta1/pagination_pb.js';
import {
  AddressBytesToStringRequestSchema,
  AddressBytesToStringResponseSchema,
  AddressStringToBytesRequestSchema,
  AddressStringToBytesResponseSchema,
  Bech32PrefixRequestSchema,
  Bech32PrefixResponseSchema,
  QueryAccountAddressByIDRequestSchema,
  QueryAccountAddressByIDResponseSchema,
  QueryAccountInfoRequestSchema,
  QueryAccountInfoResponseSchema,
  QueryAccountRequestSchema,
  QueryAccountResponseSchema,
  QueryAccountsRequestSchema,
  QueryAccountsResponseSchema,
  QueryModuleAccountByNameRequestSchema,
  QueryModuleAccountByNameResponseSchema,
  QueryModuleAccountsRequestSchema,
  QueryModuleAccountsResponseSchema,
  QueryParamsRequestSchema,
  QueryParamsResponseSchema,
} from '../../../gen/chain/auth/v1beta1/query_pb.js';
import { MsgUpdateParamsSchema, type MsgUpdateParams } from '../../../gen/chain/auth/v1beta1/tx_pb.js';
import { fromProtoJson } from '../../../proto/json.js';
import type { EmitNames } from '../../../proto/registry.js';
import type { Any } from '@bufbuild/protobuf/wkt';
import { AccountKeeper } from './keeper.js';
import { AUTH_MODULE_NAME, AUTH_STORE_KEY, DEFAULT_AUTH_NAMES, GOV_MODULE_NAME, govErrInvalidSigner, validateParams, type AuthNames } from './types.js';

export interface AuthModuleOptions {
  /** Module accounts and their permissions (app.go maccPerms). */
  moduleAccountPermissions?: Record<string, string[]>;
  /**
   * The address allowed to send MsgUpdateParams (bech32 string or bytes); default the gov module
   * account (x/auth/keeper NewAccountKeeper's `authority`, set from `authtypes.NewModuleAddress(govtypes.ModuleName)`).
   */
  authority?: string | Bytes;
  /** Spelling of emitted type URLs (accounts, pubkeys); a src/names `Names` fits. Default spec. */
  emit?: EmitNames;
  names?: AuthNames;
}

/** MsgUpdateParams from a decoded message, its protobuf bytes or its JSON (jsonTxDecoder). */
export function parseMsgUpdateParams(v: unknown): MsgUpdateParams {
  if (isMessage(v, MsgUpdateParamsSchema)) return v;
  if (v instanceof Uint8Array) return fromBinary(MsgUpdateParamsSchema, v);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('MsgUpdateParams must be an object');
  return fromProtoJson(MsgUpdateParamsSchema, v as never);
}

/**
 * The SDK's bech32 address codec, StringToBytes (codec/address/bech32_codec.go) with
 * VerifyAddressFormat (types/address.go): the errors the auth queries pass through.
 */
export function addressStringToBytes(prefix: string, text: string): Bytes {
  if (text.trim().length === 0) throw new Error('empty address string is not allowed');
  let hrp: string;
  let bytes: Bytes;
  try {
    const d = bech32.decode(text as `${string}1${string}`, 1023);
    hrp = d.prefix;
    bytes = bech32.fromWords(d.words);
  } catch (e) {
    throw new Error(`decoding bech32 failed: ${(e as Error).message}`);
  }
  if (hrp !== prefix) throw sdkErrors.logic.wrap(`hrp does not match bech32 prefix: expected '${prefix}' got '${hrp}'`);
  if (bytes.length === 0) throw sdkErrors.unknownAddress.wrap('addresses cannot be empty');
  if (bytes.length > MAX_ADDR_LEN) throw sdkErrors.unknownAddress.wrap(`address max length is ${MAX_ADDR_LEN}, got ${bytes.length}`);
  return bytes;
}

/** BytesToString: empty bytes are the empty string; otherwise bech32 without a length limit. */
export function addressBytesToString(prefix: string, bytes: Bytes): string {
  if (bytes.length === 0) return '';
  return bech32.encode(prefix, bech32.toWords(bytes), false);
}

function invalidArgument(desc: string): GrpcStatusError {
  return new GrpcStatusError(GrpcCode.InvalidArgument, desc);
}

function notFound(desc: string): GrpcStatusError {
  return new GrpcStatusError(GrpcCode.NotFound, desc);
}

export class AuthModule implements AppModule {
  readonly name = AUTH_MODULE_NAME;
  readonly storeKey = AUTH_STORE_KEY;
  readonly keeper: AccountKeeper;
  readonly names: AuthNames;
  private readonly emit: EmitNames | undefined;
  private readonly authority: string | Bytes;

  constructor(opts: AuthModuleOptions = {}) {
    this.keeper = new AccountKeeper({ storeKey: this.storeKey, moduleAccountPermissions: opts.moduleAccountPermissions });
    this.names = opts.names ?? DEFAULT_AUTH_NAMES;
    this.emit = opts.emit;
    this.authority = opts.authority ?? moduleAddress(GOV_MODULE_NAME);
  }

  /** The authority as a bech32 string (what MsgUpdateParams.authority is compared with). */
  authorityString(ctx: Context): string {
    return typeof this.authority === 'string' ? this.authority : ctx.addressCodec.encode(this.authority);
  }

  initGenesis(ctx: Context, genesis: unknown): void {
    this.keeper.initGenesis(ctx, genesis);
  }

  exportGenesis(ctx: Context): unknown {
    return this.keeper.exportGenesis(ctx, this.emit);
  }

  registerServices(r: ServiceRegistrar): void {
    const k = this.keeper;
    r.registerMsg<MsgUpdateParams>({
      typeUrl: this.names.msgUpdateParams,
      decode: parseMsgUpdateParams,
      signers: (msg, codec) => {
        try {
          return [codec.decode(msg.authority)];
        } catch (e) {
          throw e instanceof AbciError ? e.wrap('invalid authority address') : e;
        }
      },
      // x/auth/keeper/msg_server.go UpdateParams: authority first, then Params.Validate, then set.
      handler: (ctx, msg) => {
        const expected = this.authorityString(ctx);
        if (msg.authority !== expected) throw govErrInvalidSigner.wrap(`invalid authority; expected ${expected}, got ${msg.authority}`);
        // Params is non-nullable upstream (gogoproto): an absent one is all zeros and fails Validate.
        const params = msg.params ?? create(ParamsSchema);
        validateParams(params);
        k.setParams(ctx, params);
      },
    });

    const svc = this.names.queryService;
    const emit = this.emit;
    const prefixOf = (ctx: Context) => ctx.addressCodec.prefix;

    r.registerQuery(
      protoQueryRoute(`${svc}/Accounts`, QueryAccountsRequestSchema, QueryAccountsResponseSchema, (ctx, req) => {
        const accounts: Any[] = [];
        const page = paginate(k.accountsStore(ctx), req.pagination, (key, value) => {
          accounts.push(k.accountToAny(ctx, k.decodeStoredAccount(key, value), emit));
        });
        return create(QueryAccountsResponseSchema, {
          accounts,
          pagination: create(PageResponseSchema, { nextKey: page.next_key ?? new Uint8Array(0), total: page.total }),
        });
      }),
    );

    r.registerQuery(
      protoQueryRoute(`${svc}/Account`, QueryAccountRequestSchema, QueryAccountResponseSchema, (ctx, req) => {
        if (req.address === '') throw invalidArgument('Address cannot be empty');
        const addr = addressStringToBytes(prefixOf(ctx), req.address);
        const acc = k.getAccount(ctx, addr);
        if (acc === undefined) throw notFound(`account ${req.address} not found`);
        return create(QueryAccountResponseSchema, { account: k.accountToAny(ctx, acc, emit) });
      }),
    );

    r.registerQuery(
      protoQueryRoute(`${svc}/AccountAddressByID`, QueryAccountAddressByIDRequestSchema, QueryAccountAddressByIDResponseSchema, (ctx, req) => {
        // id = 0 is the proto default, so only a non-zero deprecated id is refused.
        if (req.id !== 0n) throw invalidArgument("requesting with id isn't supported, try to request using account-id");
        const addr = k.addressByAccountNumber(ctx, req.accountId);
        if (addr === undefined) throw notFound(`account address not found with account number ${req.accountId}`);
        return create(QueryAccountAddressByIDResponseSchema, { accountAddress: addressBytesToString(prefixOf(ctx), addr) });
      }),
    );

    r.registerQuery(
      protoQueryRoute(`${svc}/Params`, QueryParamsRequestSchema, QueryParamsResponseSchema, (ctx) => create(QueryParamsResponseSchema, { params: k.getParams(ctx) })),
    );

    r.registerQuery(
      protoQueryRoute(`${svc}/ModuleAccounts`, QueryModuleAccountsRequestSchema, QueryModuleAccountsResponseSchema, (ctx) => {
        // Sorted by module name; one not yet in state is shown as it would be created (with the
        // next numbers, in this order); a query context writes nothing (the SDK's write is discarded).
        const accounts: Any[] = [];
        let pending = 0n;
        for (const name of k.moduleAccountNames()) {
          const acc = k.getModuleAccount(ctx, name, pending);
          if (acc === undefined) throw notFound(`account ${name} not found`);
          if (!k.hasAccount(ctx, acc.address)) pending++;
          accounts.push(k.accountToAny(ctx, acc, emit));
        }
        return create(QueryModuleAccountsResponseSchema, { accounts });
      }),
    );

    r.registerQuery(
      protoQueryRoute(`${svc}/ModuleAccountByName`, QueryModuleAccountByNameRequestSchema, QueryModuleAccountByNameResponseSchema, (ctx, req) => {
        if (req.name.length === 0) throw invalidArgument('module name is empty');
        const acc = k.getModuleAccount(ctx, req.name);
        if (acc === undefined) throw notFound(`account ${req.name} not found`);
        return create(QueryModuleAccountByNameResponseSchema, { account: k.accountToAny(ctx, acc, emit) });
      }),
    );

    r.registerQuery(
      protoQueryRoute(`${svc}/Bech32Prefix`, Bech32PrefixRequestSchema, Bech32PrefixResponseSchema, (ctx) => {
        const prefix = prefixOf(ctx);
        if (prefix === '') throw notFound('bech32 prefix is not set');
        return create(Bech32PrefixResponseSchema, { bech32Prefix: prefix });
      }),
    );

    r.registerQuery(
      protoQueryRoute(`${svc}/AddressBytesToString`, AddressBytesToStringRequestSchema, AddressBytesToStringResponseSchema, (ctx, req) => {
        if (req.addressBytes.length === 0) throw new Error('empty address bytes is not allowed');
        return create(AddressBytesToStringResponseSchema, { addressString: addressBytesToString(prefixOf(ctx), req.addressBytes) });
      }),
    );

    r.registerQuery(
      protoQueryRoute(`${svc}/AddressStringToBytes`, AddressStringToBytesRequestSchema, AddressStringToBytesResponseSchema, (ctx, req) => {
        if (req.addressString.trim().length === 0) throw new Error('empty address string is not allowed');
        return create(AddressStringToBytesResponseSchema, { addressBytes: addressStringToBytes(prefixOf(ctx), req.addressString) });
      }),
    );

    r.registerQuery(
      protoQueryRoute(`${svc}/AccountInfo`, QueryAccountInfoRequestSchema, QueryAccountInfoResponseSchema, (ctx, req) => {
        if (req.address === '') throw invalidArgument('address cannot be empty');
        const addr = addressStringToBytes(prefixOf(ctx), req.address);
        const acc = k.getAccount(ctx, addr);
        if (acc === undefined) throw notFound(`account ${req.address} not found`);
        // The address as requested; pub_key null when none is set (the #17204 fix).
        const info = k.accountToBaseAccount(ctx, acc, emit);
        info.address = req.address;
        return create(QueryAccountInfoResponseSchema, { info });
      }),
    );
  }
}
