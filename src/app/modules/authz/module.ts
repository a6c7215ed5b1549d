/**
 * The authz module: MsgGrant, MsgExec and MsgRevoke, the Query service, genesis and the
 * BeginBlock pruning of expired grants (cosmos-sdk: x/authz/module/module.go, abci.go,
 * x/authz/keeper/msg_server.go; cosmos/cosmos-sdk:proto/cosmos/authz/v1beta1/authz.proto, cosmos/cosmos-sdk:x/authz/keeper/keeper.go, cosmos/cosmos-sdk:baseapp/baseapp.go; spec §3 grant
 * lifecycle, §4.2, §4.3).
 *
 * MsgExec runs its inner messages through the app's own message routes. The module finds them
 * through a MsgRouter: the `router` option, or else the ServiceRegistrar it is registered with
 * when that offers `msgRoute(typeUrl)` (BaseApp).
 *
 * Query routes are protobuf-coded (src/app/proto-route.ts): abci_query `data` is the request's
 * protobuf bytes and `value` the response's; handlers take the generated request message (or its
 * SDK JSON) and return the generated response message.
 */
import { create, toBinary, type JsonValue } from '@bufbuild/protobuf';
import type { Bytes } from '../../bytes.js';
import type { Context } from '../../context.js';
import { AbciError, sdkErrors } from '../../errors.js';
import type { AppModule, ServiceRegistrar } from '../../module.js';
import { protoQueryRoute } from '../../proto-route.js';
import { MsgExecResponseSchema, MsgExecSchema, MsgGrantSchema, MsgRevokeSchema } from '../../../gen/chain/authz/v1beta1/tx_pb.js';
import { GenesisStateSchema, type GenesisState } from '../../../gen/chain/authz/v1beta1/genesis_pb.js';
import {
  QueryGranteeGrantsRequestSchema,
  QueryGranteeGrantsResponseSchema,
  QueryGranterGrantsRequestSchema,
  QueryGranterGrantsResponseSchema,
  QueryGrantsRequestSchema,
  QueryGrantsResponseSchema,
  Query as QueryService,
} from '../../../gen/chain/authz/v1beta1/query_pb.js';
import { parseTypeUrl, SPEC_NAMES } from '../../../names/index.js';
import { fromProtoJson, toProtoJson } from '../../../proto/json.js';
import type { AccountHooks } from '../bank/keeper.js';
import { msgTypeUrlOf, STAKING_MSG_URLS } from './authorizations.js';
import { authzErrors } from './errors.js';
import { AuthzKeeper, PRUNE_LIMIT, type AuthzNames } from './keeper.js';
import { decodeMsgExec, decodeMsgGrant, decodeMsgRevoke, isMsgRouter, type DecodedMsgExec, type DecodedMsgGrant, type DecodedMsgRevoke, type MsgRouter } from './msgs.js';
import { AuthzQueries } from './queries.js';

export interface AuthzModuleOptions {
  /** Module name and store key (`authz`). */
  name?: string;
  /** Emit spelling of event names, event type URLs and query-response Anys (src/names); state is always canonical. */
  names?: AuthzNames;
  /** Where MsgExec finds inner messages' routes; default: the registrar, when it has `msgRoute`. */
  router?: MsgRouter;
  /** x/auth: MsgGrant creates the grantee's account when it has none (msg_server.go Grant). */
  accounts?: AccountHooks;
  /** x/bank: a grantee without an account must not be a blocked address (msg_server.go Grant). */
  bank?: { blockedAddr(addr: Bytes): boolean };
  /** HRP of validator operator addresses in StakeAuthorization lists; default account HRP + `valoper`. */
  valoperPrefix?: string;
  /**
   * Type URLs a grant may name although no route handles them here. MsgGrant refuses a grant for a
   * message the router cannot route (`<url> doesn't exist.: invalid type`); chaind has no staking
   * module, yet the spec lists StakeAuthorization as a grant type, so the four staking messages
   * are grantable by default (an Exec of them fails: `unrecognized message route`).
   */
  grantableTypeUrls?: readonly string[];
  /** Queue items pruned per BeginBlock (v0.55: 200). */
  pruneLimit?: number;
}

/** ServiceRegistrar extras the module uses when present (BaseApp has hasMsgRoute today). */
interface RegistrarExtras {
  hasMsgRoute?(typeUrl: string): boolean;
}

function wrapAddress(e: unknown, what: string): unknown {
  return e instanceof AbciError ? e.wrap(`invalid ${what} address`) : e;
}

/** strings.EqualFold for the ASCII text of bech32 addresses. */
function equalFold(a: string, b: string): boolean {
  return a.length === b.length && a.toLowerCase() === b.toLowerCase();
}

export class AuthzModule implements AppModule {
  readonly name: string;
  readonly storeKey: string;
  readonly keeper: AuthzKeeper;
  readonly queries: AuthzQueries;
  readonly names: AuthzNames;
  private readonly grantable: Set<string>;
  private readonly pruneLimit: number;
  private router: MsgRouter | undefined;
  private registrar: (ServiceRegistrar & RegistrarExtras) | undefined;
  private accounts: AccountHooks | undefined;
  private bank: { blockedAddr(addr: Bytes): boolean } | undefined;

  constructor(opts: AuthzModuleOptions = {}) {
    this.name = opts.name ?? 'authz';
    this.storeKey = this.name;
    this.names = opts.names ?? SPEC_NAMES;
    this.router = opts.router;
    this.accounts = opts.accounts;
    this.bank = opts.bank;
    this.pruneLimit = opts.pruneLimit ?? PRUNE_LIMIT;
    this.grantable = new Set((opts.grantableTypeUrls ?? Object.values(STAKING_MSG_URLS)).map(parseTypeUrl));
    this.keeper = new AuthzKeeper({ storeKey: this.storeKey, names: this.names, valoperPrefix: opts.valoperPrefix });
    this.queries = new AuthzQueries(this.keeper, this.names);
  }

  /** Wires x/auth in once it exists. */
  setAccountHooks(h: AccountHooks): void {
    this.accounts = h;
  }

  /** Sets the router explicitly (e.g. when the app is built after the module). */
  setRouter(r: MsgRouter): void {
    this.router = r;
  }

  /** The router MsgExec uses, if any. */
  msgRouter(): MsgRouter | undefined {
    return this.router ?? (isMsgRouter(this.registrar) ? this.registrar : undefined);
  }

  /** `HandlerByTypeURL(t) != nil`, plus the grantable-without-route list. */
  private routable(typeUrl: string): boolean {
    if (this.grantable.has(typeUrl)) return true;
    const r = this.msgRouter();
    if (r !== undefined) return r.msgRoute(typeUrl) !== undefined;
    return this.registrar?.hasMsgRoute?.(typeUrl) ?? false;
  }

  // --- genesis --------------------------------------------------------------------------------

  /** app_state.authz: `{"authorization": [GrantAuthorization JSON…]}`; absent = none. */
  initGenesis(ctx: Context, genesis: unknown): void {
    if (genesis === undefined || genesis === null) return;
    let gs: GenesisState;
    try {
      gs = fromProtoJson(GenesisStateSchema, genesis as JsonValue);
    } catch (e) {
      throw new Error(`authz genesis: ${(e as Error).message}`);
    }
    this.keeper.initGenesis(ctx, gs);
  }

  /** ExportGenesis as app_state JSON (SDK protobuf JSON, type URLs in the emit spelling). */
  exportGenesis(ctx: Context): JsonValue {
    return toProtoJson(GenesisStateSchema, this.keeper.exportGenesis(ctx), { upstreamNames: this.names.upstreamNames });
  }

  /** abci.go BeginBlocker: prune expired grants, at most `pruneLimit` queue items. */
  beginBlock(ctx: Context): void {
    this.keeper.dequeueAndDeleteExpiredGrants(ctx, this.pruneLimit);
  }

  // --- services -------------------------------------------------------------------------------

  registerServices(r: ServiceRegistrar): void {
    this.registrar = r as ServiceRegistrar & RegistrarExtras;

    r.registerMsg<DecodedMsgGrant>({
      typeUrl: `/${MsgGrantSchema.typeName}`,
      decode: decodeMsgGrant,
      signers: (msg, codec) => {
        try {
          return [codec.decode(msg.granter)];
        } catch (e) {
          throw wrapAddress(e, 'granter');
        }
      },
      handler: (ctx, msg) => this.grant(ctx, msg),
    });

    r.registerMsg<DecodedMsgRevoke>({
      typeUrl: `/${MsgRevokeSchema.typeName}`,
      decode: decodeMsgRevoke,
      signers: (msg, codec) => {
        try {
          return [codec.decode(msg.granter)];
        } catch (e) {
          throw wrapAddress(e, 'granter');
        }
      },
      handler: (ctx, msg) => this.revoke(ctx, msg),
    });

    r.registerMsg<DecodedMsgExec>({
      typeUrl: `/${MsgExecSchema.typeName}`,
      decode: (v) => decodeMsgExec(v, this.msgRouter()),
      signers: (msg, codec) => {
        try {
          return [codec.decode(msg.grantee)];
        } catch (e) {
          throw wrapAddress(e, 'grantee');
        }
      },
      handler: (ctx, msg) => ({ response: this.exec(ctx, msg) }),
    });

    const service = `/${QueryService.typeName}`;
    r.registerQuery(protoQueryRoute(`${service}/Grants`, QueryGrantsRequestSchema, QueryGrantsResponseSchema, (ctx, req) => this.queries.grants(ctx, req)));
    r.registerQuery(protoQueryRoute(`${service}/GranterGrants`, QueryGranterGrantsRequestSchema, QueryGranterGrantsResponseSchema, (ctx, req) => this.queries.granterGrants(ctx, req)));
    r.registerQuery(protoQueryRoute(`${service}/GranteeGrants`, QueryGranteeGrantsRequestSchema, QueryGranteeGrantsResponseSchema, (ctx, req) => this.queries.granteeGrants(ctx, req)));
  }

  // --- Msg service (msg_server.go) ------------------------------------------------------------

  private decodeAddress(ctx: Context, text: string, what: string): Bytes {
    const r = ctx.addressCodec.tryDecode(text);
    if ('error' in r) throw sdkErrors.invalidAddress.wrap(`invalid ${what} address: ${r.error}`);
    return r.bytes;
  }

  /**
   * Grant, in the SDK's order: granter == grantee (case-insensitive, authz 7); addresses (7);
   * Grant.ValidateBasic; the grantee's account (created when missing, unless the address is
   * blocked: `<addr> is not allowed to receive funds: unauthorized`); the authorization's message
   * must be routable (`<url> doesn't exist.: invalid type`); SaveGrant (expiration, EventGrant).
   */
  grant(ctx: Context, msg: DecodedMsgGrant): void {
    if (equalFold(msg.granter, msg.grantee)) throw authzErrors.granteeIsGranter;
    const grantee = this.decodeAddress(ctx, msg.grantee, 'grantee');
    const granter = this.decodeAddress(ctx, msg.granter, 'granter');
    const a = msg.authorization;
    if (a === undefined) throw sdkErrors.invalidType.wrap('expected authz.Authorization, got <nil>');
    this.keeper.validateAuthorization(ctx, a);
    if (this.accounts !== undefined && !this.accounts.hasAccount(ctx, grantee)) {
      if (this.bank?.blockedAddr(grantee) === true) throw sdkErrors.unauthorized.wrap(`${msg.grantee} is not allowed to receive funds`);
      this.accounts.createAccount(ctx, grantee);
    }
    const url = msgTypeUrlOf(a);
    if (!this.routable(url)) throw sdkErrors.invalidType.wrap(`${this.names.typeUrl(url)} doesn't exist.`);
    this.keeper.saveGrant(ctx, granter, grantee, a, msg.expiration);
  }

  /** Revoke: same pair checks as Grant; an empty type URL is `missing msg method name`; DeleteGrant. */
  revoke(ctx: Context, msg: DecodedMsgRevoke): void {
    if (equalFold(msg.granter, msg.grantee)) throw authzErrors.granteeIsGranter;
    const grantee = this.decodeAddress(ctx, msg.grantee, 'grantee');
    const granter = this.decodeAddress(ctx, msg.granter, 'granter');
    if (msg.msgTypeUrl === '') throw sdkErrors.invalidRequest.wrap('missing msg method name');
    this.keeper.deleteGrant(ctx, granter, grantee, parseTypeUrl(msg.msgTypeUrl));
  }

  /**
   * Exec: grantee present and valid, at least one message, each message's ValidateBasic
   * (`msg <i>: …`), then DispatchActions. Returns MsgExecResponse{results} as protobuf bytes.
   */
  exec(ctx: Context, msg: DecodedMsgExec): Bytes {
    if (msg.grantee === '') throw new Error('empty address string is not allowed');
    const grantee = this.decodeAddress(ctx, msg.grantee, 'grantee');
    if (msg.msgs.length === 0) throw sdkErrors.invalidRequest.wrap('messages cannot be empty');
    msg.msgs.forEach((m, i) => {
      if (m.route?.validateBasic === undefined) return;
      try {
        m.route.validateBasic(m.value);
      } catch (e) {
        if (e instanceof AbciError) throw e.wrap(`msg ${i}`);
        throw new Error(`msg ${i}: ${(e as Error).message}`);
      }
    });
    const results = this.keeper.dispatchActions(ctx, grantee, msg.msgs);
    return toBinary(MsgExecResponseSchema, create(MsgExecResponseSchema, { results }));
  }
}
