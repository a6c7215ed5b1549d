/**
 * The bank module: genesis, the MsgSend route and the Query service (cosmos-sdk: x/bank/module.go,
 * x/bank/keeper/msg_server.go, x/bank/keeper/grpc_query.go). MsgSend arrives as the protobuf tx
 * decoder's `chain.bank.v1beta1.MsgSend` message (or its bytes, or the JSON decoder's object);
 * queries are protobuf-coded (src/app/proto-route.ts): abci_query `data` is the request message,
 * `value` the response message, as CosmJS and the gRPC/REST servers expect.
 */
import { create } from '@bufbuild/protobuf';
import type { AddressCodec } from '../../address.js';
import type { Bytes } from '../../bytes.js';
import { fromUtf8 } from '../../bytes.js';
import { assertValidCoins, denomError, type Coin } from '../../coins.js';
import type { Context } from '../../context.js';
import { AbciError, GrpcCode, GrpcStatusError, sdkErrors } from '../../errors.js';
import type { AppModule, ServiceRegistrar } from '../../module.js';
import { paginate, type PageRequest } from '../../pagination.js';
import { protoQueryRoute } from '../../proto-route.js';
import { PrefixStore } from '../../store.js';
import { CoinSchema, type Coin as ProtoCoin } from '../../../gen/chain/base/v1beta1/coin_pb.js';
import { PageResponseSchema, type PageResponse as ProtoPageResponse } from '../../../gen/chain/base/query/v1beta1/pagination_pb.js';
import {
  DenomUnitSchema,
  MetadataSchema,
  ParamsSchema,
  SendEnabledSchema,
  type Metadata as ProtoMetadata,
  type SendEnabled as ProtoSendEnabled,
} from '../../../gen/chain/bank/v1beta1/bank_pb.js';
import {
  DenomOwnerSchema,
  QueryAllBalancesRequestSchema,
  QueryAllBalancesResponseSchema,
  QueryBalanceRequestSchema,
  QueryBalanceResponseSchema,
  QueryDenomMetadataRequestSchema,
  QueryDenomMetadataResponseSchema,
  QueryDenomOwnersRequestSchema,
  QueryDenomOwnersResponseSchema,
  QueryDenomsMetadataRequestSchema,
  QueryDenomsMetadataResponseSchema,
  QueryParamsRequestSchema,
  QueryParamsResponseSchema,
  QuerySendEnabledRequestSchema,
  QuerySendEnabledResponseSchema,
  QuerySpendableBalanceByDenomRequestSchema,
  QuerySpendableBalanceByDenomResponseSchema,
  QuerySpendableBalancesRequestSchema,
  QuerySpendableBalancesResponseSchema,
  QuerySupplyOfRequestSchema,
  QuerySupplyOfResponseSchema,
  QueryTotalSupplyRequestSchema,
  QueryTotalSupplyResponseSchema,
  type DenomOwner,
} from '../../../gen/chain/bank/v1beta1/query_pb.js';
import { BankKeeper, type AccountHooks, type ModulePermission } from './keeper.js';
import { balancesPrefix, DENOM_METADATA_PREFIX, denomOwnersPrefix, SEND_ENABLED_PREFIX, SUPPLY_PREFIX } from './keys.js';
import { parseBankGenesis, parseMetadata, parseMsgSend, type Metadata, type MsgSend, type SendEnabled } from './types.js';

export interface BankNames {
  /** Type URL of MsgSend. */
  msgSend: string;
  /** gRPC service of the queries; methods are appended as `/<service>/<Method>`. */
  queryService: string;
}

/** The spec's names (src/names: `chain.*`); the node passes the registry's. */
export const DEFAULT_BANK_NAMES: BankNames = {
  msgSend: '/chain.bank.v1beta1.MsgSend',
  queryService: '/chain.bank.v1beta1.Query',
};

export interface BankModuleOptions {
  /** Module name and store key (`bank`). */
  name?: string;
  names?: BankNames;
  moduleAccountPermissions?: Record<string, ModulePermission[]>;
  blockedAddrs?: Bytes[];
  accounts?: AccountHooks;
}

function invalidArg(desc: string): GrpcStatusError {
  return new GrpcStatusError(GrpcCode.InvalidArgument, desc);
}

/** `invalid address: <codec error>` as InvalidArgument (grpc_query.go). */
function validAddress(codec: AddressCodec, text: string): Bytes {
  const r = codec.tryDecode(text);
  if ('error' in r) throw invalidArg(`invalid address: ${r.error}`);
  return r.bytes;
}

/** sdk.ValidateDenom as InvalidArgument. */
function validDenom(denom: string): string {
  const err = denomError(denom);
  if (err !== null) throw invalidArg(err);
  return denom;
}

function protoCoin(denom: string, amount: string): ProtoCoin {
  return create(CoinSchema, { denom, amount });
}

function coinOut(c: Coin): ProtoCoin {
  return protoCoin(c.denom, c.amount.toString());
}

function sendEnabledOut(se: SendEnabled): ProtoSendEnabled {
  return create(SendEnabledSchema, { denom: se.denom, enabled: se.enabled });
}

function metadataOut(m: Metadata): ProtoMetadata {
  return create(MetadataSchema, {
    description: m.description,
    denomUnits: m.denom_units.map((u) => create(DenomUnitSchema, { denom: u.denom, exponent: u.exponent, aliases: [...u.aliases] })),
    base: m.base,
    display: m.display,
    name: m.name,
    symbol: m.symbol,
    uri: m.uri,
    uriHash: m.uri_hash,
  });
}

/** The store pager's answer as a PageResponse (next_key empty at the end). */
export function pageResponse(p: { next_key: Bytes | null; total: bigint }): ProtoPageResponse {
  return create(PageResponseSchema, { nextKey: p.next_key ?? new Uint8Array(0), total: p.total });
}

export class BankModule implements AppModule {
  readonly name: string;
  readonly storeKey: string;
  readonly keeper: BankKeeper;
  readonly names: BankNames;

  constructor(opts: BankModuleOptions = {}) {
    this.name = opts.name ?? 'bank';
    this.storeKey = this.name;
    this.names = opts.names ?? DEFAULT_BANK_NAMES;
    this.keeper = new BankKeeper({
      storeKey: this.storeKey,
      moduleAccountPermissions: opts.moduleAccountPermissions,
      blockedAddrs: opts.blockedAddrs,
      accounts: opts.accounts,
    });
  }

  initGenesis(ctx: Context, genesis: unknown): void {
    this.keeper.initGenesis(ctx, parseBankGenesis(genesis));
  }

  registerServices(r: ServiceRegistrar): void {
    const k = this.keeper;
    r.registerMsg<MsgSend>({
      typeUrl: this.names.msgSend,
      decode: parseMsgSend,
      signers: (msg, codec) => {
        try {
          return [codec.decode(msg.fromAddress)];
        } catch (e) {
          throw e instanceof AbciError ? e.wrap('invalid from address') : e;
        }
      },
      // msg_server.go Send, in its order: addresses, coins, send-enabled, blocked recipient, transfer.
      handler: (ctx, msg) => {
        const from = ctx.addressCodec.decode(msg.fromAddress);
        let to: Bytes;
        try {
          to = ctx.addressCodec.decode(msg.toAddress);
        } catch (e) {
          throw e instanceof AbciError ? e.wrap('invalid to address') : e;
        }
        assertValidCoins(msg.amount);
        k.isSendEnabledCoins(ctx, msg.amount);
        if (k.blockedAddr(to)) throw sdkErrors.unauthorized.wrap(`${msg.toAddress} is not allowed to receive funds`);
        k.sendCoins(ctx, from, to, msg.amount);
      },
    });

    const svc = this.names.queryService;
    const store = (ctx: Context) => ctx.store(this.storeKey);
    const coinList = (ctx: Context, prefix: Bytes, pagination: PageRequest | undefined, map: (denom: string) => string = (d) => d) => {
      const items: ProtoCoin[] = [];
      const page = paginate(new PrefixStore(store(ctx), prefix), pagination, (key, value) => {
        items.push(protoCoin(map(fromUtf8(key)), fromUtf8(value)));
      });
      return { items, pagination: pageResponse(page) };
    };

    // grpc_query.go Balance: denom first, then the address.
    r.registerQuery(
      protoQueryRoute(`${svc}/Balance`, QueryBalanceRequestSchema, QueryBalanceResponseSchema, (ctx, req) => {
        const denom = validDenom(req.denom);
        const addr = validAddress(ctx.addressCodec, req.address);
        return create(QueryBalanceResponseSchema, { balance: coinOut(k.getBalance(ctx, addr, denom)) });
      }),
    );
    r.registerQuery(
      protoQueryRoute(`${svc}/AllBalances`, QueryAllBalancesRequestSchema, QueryAllBalancesResponseSchema, (ctx, req) => {
        const addr = validAddress(ctx.addressCodec, req.address);
        // resolve_denom: the metadata's display denom where there is metadata.
        const map = req.resolveDenom ? (d: string) => k.getDenomMetadata(ctx, d)?.display || d : undefined;
        const { items, pagination } = coinList(ctx, balancesPrefix(addr), req.pagination, map);
        return create(QueryAllBalancesResponseSchema, { balances: items, pagination });
      }),
    );
    r.registerQuery(
      protoQueryRoute(`${svc}/SpendableBalances`, QuerySpendableBalancesRequestSchema, QuerySpendableBalancesResponseSchema, (ctx, req) => {
        const addr = validAddress(ctx.addressCodec, req.address);
        const { items, pagination } = coinList(ctx, balancesPrefix(addr), req.pagination);
        return create(QuerySpendableBalancesResponseSchema, { balances: items, pagination });
      }),
    );
    // SpendableBalanceByDenom: the address first, then the denom.
    r.registerQuery(
      protoQueryRoute(`${svc}/SpendableBalanceByDenom`, QuerySpendableBalanceByDenomRequestSchema, QuerySpendableBalanceByDenomResponseSchema, (ctx, req) => {
        const addr = validAddress(ctx.addressCodec, req.address);
        const denom = validDenom(req.denom);
        return create(QuerySpendableBalanceByDenomResponseSchema, { balance: coinOut(k.getBalance(ctx, addr, denom)) });
      }),
    );
    r.registerQuery(
      protoQueryRoute(`${svc}/TotalSupply`, QueryTotalSupplyRequestSchema, QueryTotalSupplyResponseSchema, (ctx, req) => {
        const { items, pagination } = coinList(ctx, SUPPLY_PREFIX, req.pagination);
        return create(QueryTotalSupplyResponseSchema, { supply: items, pagination });
      }),
    );
    r.registerQuery(
      protoQueryRoute(`${svc}/SupplyOf`, QuerySupplyOfRequestSchema, QuerySupplyOfResponseSchema, (ctx, req) => {
        const denom = validDenom(req.denom);
        return create(QuerySupplyOfResponseSchema, { amount: coinOut(k.getSupply(ctx, denom)) });
      }),
    );
    r.registerQuery(
      protoQueryRoute(`${svc}/Params`, QueryParamsRequestSchema, QueryParamsResponseSchema, (ctx) => {
        const p = k.getParams(ctx);
        return create(QueryParamsResponseSchema, {
          params: create(ParamsSchema, { sendEnabled: p.send_enabled.map(sendEnabledOut), defaultSendEnabled: p.default_send_enabled }),
        });
      }),
    );
    r.registerQuery(
      protoQueryRoute(`${svc}/DenomMetadata`, QueryDenomMetadataRequestSchema, QueryDenomMetadataResponseSchema, (ctx, req) => {
        const denom = validDenom(req.denom);
        const m = k.getDenomMetadata(ctx, denom);
        if (m === undefined) throw new GrpcStatusError(GrpcCode.NotFound, `client metadata for denom ${denom}`);
        return create(QueryDenomMetadataResponseSchema, { metadata: metadataOut(m) });
      }),
    );
    r.registerQuery(
      protoQueryRoute(`${svc}/DenomsMetadata`, QueryDenomsMetadataRequestSchema, QueryDenomsMetadataResponseSchema, (ctx, req) => {
        const metadatas: ProtoMetadata[] = [];
        const page = paginate(new PrefixStore(store(ctx), DENOM_METADATA_PREFIX), req.pagination, (_key, value) => {
          metadatas.push(metadataOut(parseMetadata(JSON.parse(fromUtf8(value)))));
        });
        return create(QueryDenomsMetadataResponseSchema, { metadatas, pagination: pageResponse(page) });
      }),
    );
    r.registerQuery(
      protoQueryRoute(`${svc}/DenomOwners`, QueryDenomOwnersRequestSchema, QueryDenomOwnersResponseSchema, (ctx, req) => {
        const denom = validDenom(req.denom);
        const denomOwners: DenomOwner[] = [];
        const page = paginate(new PrefixStore(store(ctx), denomOwnersPrefix(denom)), req.pagination, (key) => {
          const addr = key.subarray(1, 1 + key[0]!);
          denomOwners.push(create(DenomOwnerSchema, { address: ctx.addressCodec.encode(addr), balance: coinOut(k.getBalance(ctx, addr, denom)) }));
        });
        return create(QueryDenomOwnersResponseSchema, { denomOwners, pagination: pageResponse(page) });
      }),
    );
    // SendEnabled: the listed denoms that have an entry, in request order and unpaginated; else a
    // page of every entry.
    r.registerQuery(
      protoQueryRoute(`${svc}/SendEnabled`, QuerySendEnabledRequestSchema, QuerySendEnabledResponseSchema, (ctx, req) => {
        if (req.denoms.length > 0) {
          const all = new Map(k.getAllSendEnabled(ctx).map((se) => [se.denom, se.enabled]));
          const sendEnabled = req.denoms.filter((d) => all.has(d)).map((d) => sendEnabledOut({ denom: d, enabled: all.get(d)! }));
          return create(QuerySendEnabledResponseSchema, { sendEnabled });
        }
        const sendEnabled: ProtoSendEnabled[] = [];
        const page = paginate(new PrefixStore(store(ctx), SEND_ENABLED_PREFIX), req.pagination, (key, value) => {
          sendEnabled.push(sendEnabledOut({ denom: fromUtf8(key), enabled: value[0] === 1 }));
        });
        return create(QuerySendEnabledResponseSchema, { sendEnabled, pagination: pageResponse(page) });
      }),
    );
  }
}
