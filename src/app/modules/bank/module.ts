/**
 * The bank module: genesis, the MsgSend route and the Query service (cosmos-sdk: x/bank/module.go,
 * x/bank/keeper/msg_server.go, x/bank/keeper/grpc_query.go). Query answers are plain objects in
 * the proto-JSON shape (snake_case fields, amounts as strings, `pagination: {next_key, total}`);
 * their protobuf encoding comes with the codecs.
 */
import type { AddressCodec } from '../../address.js';
import type { Bytes } from '../../bytes.js';
import { fromUtf8 } from '../../bytes.js';
import { assertValidCoins, coinToJson, denomError } from '../../coins.js';
import type { Context } from '../../context.js';
import { AbciError, GrpcCode, GrpcStatusError, sdkErrors } from '../../errors.js';
import type { AppModule, ServiceRegistrar } from '../../module.js';
import { paginate, type PageRequest, type PageResponse } from '../../pagination.js';
import { PrefixStore } from '../../store.js';
import { BankKeeper, type AccountHooks, type ModulePermission } from './keeper.js';
import { balancesPrefix, DENOM_METADATA_PREFIX, denomOwnersPrefix, SUPPLY_PREFIX } from './keys.js';
import { parseBankGenesis, parseMsgSend, type Metadata, type MsgSend } from './types.js';

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

type JsonCoin = { denom: string; amount: string };

function invalidArg(desc: string): GrpcStatusError {
  return new GrpcStatusError(GrpcCode.InvalidArgument, desc);
}

function reqObject(req: unknown): Record<string, unknown> {
  if (req === undefined || req === null) throw invalidArg('empty request');
  if (typeof req !== 'object' || Array.isArray(req)) throw invalidArg('request must be an object');
  return req as Record<string, unknown>;
}

function reqString(o: Record<string, unknown>, name: string): string {
  const v = o[name];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw invalidArg(`${name} must be a string`);
  return v;
}

function reqAddress(codec: AddressCodec, o: Record<string, unknown>): Bytes {
  const r = codec.tryDecode(reqString(o, 'address'));
  if ('error' in r) throw invalidArg(`invalid address: ${r.error}`);
  return r.bytes;
}

function reqDenom(o: Record<string, unknown>): string {
  const denom = reqString(o, 'denom');
  const err = denomError(denom);
  if (err !== null) throw invalidArg(err);
  return denom;
}

function page(o: Record<string, unknown>): PageRequest | undefined {
  const p = o['pagination'];
  return p === undefined || p === null ? undefined : (p as PageRequest);
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

    const q = (method: string, handler: (ctx: Context, req: Record<string, unknown>) => unknown): void =>
      r.registerQuery<unknown, unknown>({ path: `${this.names.queryService}/${method}`, handler: (ctx, req) => handler(ctx, reqObject(req)) });

    const coinList = (ctx: Context, prefix: Bytes, o: Record<string, unknown>): { items: JsonCoin[]; pagination: PageResponse } => {
      const items: JsonCoin[] = [];
      const pagination = paginate(new PrefixStore(ctx.store(this.storeKey), prefix), page(o), (key, value) => {
        items.push({ denom: fromUtf8(key), amount: fromUtf8(value) });
      });
      return { items, pagination };
    };

    q('Balance', (ctx, o) => {
      const denom = reqDenom(o);
      const addr = reqAddress(ctx.addressCodec, o);
      return { balance: coinToJson(k.getBalance(ctx, addr, denom)) };
    });
    q('AllBalances', (ctx, o) => {
      const addr = reqAddress(ctx.addressCodec, o);
      const { items, pagination } = coinList(ctx, balancesPrefix(addr), o);
      return { balances: items, pagination };
    });
    q('SpendableBalances', (ctx, o) => {
      const addr = reqAddress(ctx.addressCodec, o);
      const { items, pagination } = coinList(ctx, balancesPrefix(addr), o);
      return { balances: items, pagination };
    });
    q('SpendableBalanceByDenom', (ctx, o) => {
      const addr = reqAddress(ctx.addressCodec, o);
      const denom = reqDenom(o);
      return { balance: coinToJson(k.getBalance(ctx, addr, denom)) };
    });
    q('TotalSupply', (ctx, o) => {
      const { items, pagination } = coinList(ctx, SUPPLY_PREFIX, o);
      return { supply: items, pagination };
    });
    q('SupplyOf', (ctx, o) => {
      const denom = reqDenom(o);
      return { amount: coinToJson(k.getSupply(ctx, denom)) };
    });
    q('Params', (ctx) => ({ params: k.getParams(ctx) }));
    q('DenomMetadata', (ctx, o) => {
      const denom = reqDenom(o);
      const m = k.getDenomMetadata(ctx, denom);
      if (m === undefined) throw new GrpcStatusError(GrpcCode.NotFound, `client metadata for denom ${denom}`);
      return { metadata: m };
    });
    q('DenomsMetadata', (ctx, o) => {
      const metadatas: Metadata[] = [];
      const pagination = paginate(new PrefixStore(ctx.store(this.storeKey), DENOM_METADATA_PREFIX), page(o), (_key, value) => {
        metadatas.push(JSON.parse(fromUtf8(value)) as Metadata);
      });
      return { metadatas, pagination };
    });
    q('DenomOwners', (ctx, o) => {
      const denom = reqDenom(o);
      const owners: { address: string; balance: JsonCoin }[] = [];
      const pagination = paginate(new PrefixStore(ctx.store(this.storeKey), denomOwnersPrefix(denom)), page(o), (key) => {
        const addr = key.subarray(1, 1 + key[0]!);
        owners.push({ address: ctx.addressCodec.encode(addr), balance: coinToJson(k.getBalance(ctx, addr, denom)) });
      });
      return { denom_owners: owners, pagination };
    });
    q('SendEnabled', (ctx, o) => {
      const denoms = o['denoms'];
      const list = Array.isArray(denoms) ? denoms.filter((d): d is string => typeof d === 'string') : [];
      const all = k.getAllSendEnabled(ctx);
      const send_enabled = list.length === 0 ? all : all.filter((se) => list.includes(se.denom));
      return { send_enabled, pagination: null };
    });
  }
}
