/**
 * The authz keeper: grants, the expiry queue, the grantee index, Exec dispatch and pruning
 * (cosmos-sdk: x/authz/keeper/keeper.go, keys.go, genesis.go).
 * Every method reads and writes through the context's store, so it obeys the tx's cache branch and
 * gas meter.
 *
 * Functions take (granter, grantee) in key order; the SDK's keeper takes (grantee, granter).
 * Times are ns since the epoch; a grant without an expiration never expires.
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Bech32Codec, type AddressCodec } from '../../address.js';
import { bytesEqual, EMPTY_BYTES, type Bytes } from '../../bytes.js';
import { Context } from '../../context.js';
import { AbciError, errInternal, sdkErrors } from '../../errors.js';
import { GasOverflowError, OutOfGasError } from '../../gas.js';
import { PrefixStore, type KVStore } from '../../store.js';
import { GrantAuthorizationSchema, GrantQueueItemSchema, GrantSchema, type GrantAuthorization } from '../../../gen/chain/authz/v1beta1/authz_pb.js';
import { EventGrantSchema, EventRevokeSchema } from '../../../gen/chain/authz/v1beta1/event_pb.js';
import { GenesisStateSchema, type GenesisState } from '../../../gen/chain/authz/v1beta1/genesis_pb.js';
import { SPEC_NAMES } from '../../../names/index.js';
import { goJsonStringify } from '../../../proto/json.js';
import { TimestampSchema } from '@bufbuild/protobuf/wkt';
import {
  acceptAuthorization,
  authorizationFromAny,
  authorizationToAny,
  msgTypeUrlOf,
  validateAuthorization,
  type Authorization,
  type ValidateOptions,
} from './authorizations.js';
import { authzErrors } from './errors.js';
import {
  GRANT_PREFIX,
  GRANT_QUEUE_PREFIX,
  grantKey,
  granteeIndexKey,
  grantQueueKey,
  grantQueueTimePrefix,
  formatRfc3339,
  INDEX_VALUE,
  parseGrantKey,
  parseGrantQueueKey,
  splitNs,
} from './keys.js';
import { compactText, timestampToNs, type ExecMsg } from './msgs.js';

/** keeper.go gasCostPerIteration: charged per queue entry scanned when a grant leaves the queue. */
export const GRANT_QUEUE_GAS_PER_ITEM = 20n;
/**
 * Queue items pruned per BeginBlock: v0.55 caps DequeueAndDeleteExpiredGrants at 200 (#26588, the
 * x/feegrant number), so a burst of grants expiring together is spread over blocks instead of
 * stalling one; the rest stay queued, in order, for the next blocks.
 */
export const PRUNE_LIMIT = 200;

/** A stored grant, decoded. */
export interface StoredGrant {
  authorization: Authorization;
  /** ns since the epoch; undefined = no expiry. */
  expiration: bigint | undefined;
}

/**
 * The part of the names registry (src/names) authz emits with: a `Names`, or BaseApp's
 * TypeUrlNames with EmitNames, fits.
 */
export interface AuthzNames {
  /** Canonical or upstream type URL / full name → the emit spelling. */
  typeUrl(url: string): string;
  readonly upstreamNames?: boolean;
}

export interface AuthzKeeperOptions {
  storeKey: string;
  /** Emit spelling of event type names and type URLs. */
  names?: AuthzNames;
  /**
   * HRP of validator operator addresses (StakeAuthorization lists); default: the account HRP +
   * `valoper` (`chainvaloper`), as the SDK's Bech32PrefixValAddr.
   */
  valoperPrefix?: string;
}

function timestamp(ns: bigint) {
  const { seconds, nanos } = splitNs(ns);
  return create(TimestampSchema, { seconds, nanos });
}

/**
 * A context for an inner message of MsgExec: same store branch, gas meter and block, a fresh
 * event manager (the SDK's msg service router gives each handler `ctx.WithEventManager(NewEventManager())`
 * and returns the events in the Result, for DispatchActions to re-emit).
 */
function childContext(ctx: Context): Context {
  return new Context({
    mode: ctx.mode,
    chainId: ctx.chainId,
    height: ctx.height,
    time: ctx.time,
    gasMeter: ctx.gasMeter,
    addressCodec: ctx.addressCodec,
    stores: (storeKey) => ctx.store(storeKey),
    txBytes: ctx.txBytes,
    consensusParams: ctx.consensusParams,
    minGasPrices: ctx.minGasPrices,
  });
}

export class AuthzKeeper {
  readonly storeKey: string;
  readonly names: AuthzNames;
  private readonly valoperPrefix: string | undefined;
  private valoper: AddressCodec | undefined;

  constructor(opts: AuthzKeeperOptions) {
    this.storeKey = opts.storeKey;
    this.names = opts.names ?? SPEC_NAMES;
    this.valoperPrefix = opts.valoperPrefix;
  }

  store(ctx: Context): KVStore {
    return ctx.store(this.storeKey);
  }

  /** Authorization.ValidateBasic with this chain's address codecs. */
  validateAuthorization(ctx: Context, a: Authorization): void {
    const prefix = this.valoperPrefix ?? `${ctx.addressCodec.prefix}valoper`;
    if (this.valoper?.prefix !== prefix) this.valoper = new Bech32Codec(prefix);
    const opts: ValidateOptions = { addressCodec: ctx.addressCodec, valoperCodec: this.valoper };
    validateAuthorization(a, opts);
  }

  // --- grants ---------------------------------------------------------------------------------

  private decodeGrant(bytes: Bytes): StoredGrant {
    const g = fromBinary(GrantSchema, bytes);
    return { authorization: authorizationFromAny(g.authorization), expiration: g.expiration === undefined ? undefined : timestampToNs(g.expiration) };
  }

  private encodeGrant(g: StoredGrant): Bytes {
    return toBinary(
      GrantSchema,
      create(GrantSchema, { authorization: authorizationToAny(g.authorization), expiration: g.expiration === undefined ? undefined : timestamp(g.expiration) }),
    );
  }

  /** keeper.go getGrant: the grant under (granter, grantee, msgTypeUrl), expired or not. */
  getGrant(ctx: Context, granter: Bytes, grantee: Bytes, msgTypeUrl: string): StoredGrant | undefined {
    const v = this.store(ctx).get(grantKey(granter, grantee, msgTypeUrl));
    return v === undefined ? undefined : this.decodeGrant(v);
  }

  /**
   * keeper.go GetAuthorization: the live authorization, or undefined when there is no grant or it
   * has expired (expiration before the block time) but is not pruned yet.
   */
  getAuthorization(ctx: Context, granter: Bytes, grantee: Bytes, msgTypeUrl: string): StoredGrant | undefined {
    const g = this.getGrant(ctx, granter, grantee, msgTypeUrl);
    if (g === undefined || (g.expiration !== undefined && g.expiration < ctx.time)) return undefined;
    return g;
  }

  /** Every grant in key order (granter, grantee, type URL): keeper.go IterateGrants. */
  *iterateGrants(ctx: Context): Iterable<{ granter: Bytes; grantee: Bytes; msgTypeUrl: string; grant: StoredGrant }> {
    for (const p of new PrefixStore(this.store(ctx), GRANT_PREFIX).iterate()) {
      const k = parseGrantKey(new Uint8Array([GRANT_PREFIX[0]!, ...p.key]));
      yield { ...k, grant: this.decodeGrant(p.value) };
    }
  }

  private emitTyped(ctx: Context, typeName: string, attrs: Record<string, string>): void {
    // TypedEventToEvent (types/events.go): type = proto full name; one attribute per field of the
    // event's JSON, keys sorted, values JSON-encoded (strings keep their quotes).
    const keys = Object.keys(attrs).sort();
    ctx.events.emit(
      this.names.typeUrl(typeName),
      keys.map((k) => [k, goJsonStringify(attrs[k])] as const),
    );
  }

  private emitGrantEvent(ctx: Context, type: string, granter: Bytes, grantee: Bytes, msgTypeUrl: string): void {
    this.emitTyped(ctx, type, {
      msg_type_url: this.names.typeUrl(msgTypeUrl),
      granter: ctx.addressCodec.encode(granter),
      grantee: ctx.addressCodec.encode(grantee),
    });
  }

  /**
   * SaveGrant (keeper.go): NewGrant's expiration check (`expiration must be after the current block
   * time (…), got …`, authz 3), queue bookkeeping when the expiration changes, the grant, the
   * grantee index, and EventGrant. An existing grant for the same triple is overwritten.
   */
  saveGrant(ctx: Context, granter: Bytes, grantee: Bytes, authorization: Authorization, expiration: bigint | undefined): void {
    if (expiration !== undefined && expiration <= ctx.time) {
      throw authzErrors.invalidExpirationTime.wrap(`expiration must be after the current block time (${formatRfc3339(ctx.time)}), got ${formatRfc3339(expiration)}`);
    }
    const msgTypeUrl = msgTypeUrlOf(authorization);
    const s = this.store(ctx);
    const key = grantKey(granter, grantee, msgTypeUrl);
    const old = s.get(key);
    const oldExp = old === undefined ? undefined : this.decodeGrant(old).expiration;
    if (oldExp !== undefined && oldExp !== expiration) this.removeFromGrantQueue(ctx, msgTypeUrl, granter, grantee, oldExp);
    if (expiration !== undefined && oldExp !== expiration) this.insertIntoGrantQueue(ctx, msgTypeUrl, granter, grantee, expiration);
    s.set(key, this.encodeGrant({ authorization, expiration }));
    s.set(granteeIndexKey(granter, grantee, msgTypeUrl), INDEX_VALUE);
    this.emitGrantEvent(ctx, EventGrantSchema.typeName, granter, grantee, msgTypeUrl);
  }

  /** keeper.go update: a new authorization under the same key and expiration; no event. */
  private update(ctx: Context, granter: Bytes, grantee: Bytes, updated: Authorization): void {
    const msgTypeUrl = msgTypeUrlOf(updated);
    const key = grantKey(granter, grantee, msgTypeUrl);
    const v = this.store(ctx).get(key);
    if (v === undefined) throw authzErrors.noAuthorizationFound;
    this.store(ctx).set(key, this.encodeGrant({ authorization: updated, expiration: this.decodeGrant(v).expiration }));
  }

  private describe(ctx: Context, granter: Bytes, grantee: Bytes, msgTypeUrl: string): string {
    // Addresses and type URL, not the raw key: raw keys made invalid UTF-8 logs (#19874, #24638).
    return `granter: ${ctx.addressCodec.encode(granter)}, grantee: ${ctx.addressCodec.encode(grantee)} & msgType: ${this.names.typeUrl(msgTypeUrl)}`;
  }

  /** DeleteGrant (keeper.go): the grant, its queue entry and index entry; EventRevoke. */
  deleteGrant(ctx: Context, granter: Bytes, grantee: Bytes, msgTypeUrl: string): void {
    const s = this.store(ctx);
    const key = grantKey(granter, grantee, msgTypeUrl);
    const v = s.get(key);
    if (v === undefined) throw authzErrors.noAuthorizationFound.wrap(`failed to delete grant with given ${this.describe(ctx, granter, grantee, msgTypeUrl)}`);
    const exp = this.decodeGrant(v).expiration;
    if (exp !== undefined) this.removeFromGrantQueue(ctx, msgTypeUrl, granter, grantee, exp);
    s.delete(key);
    s.delete(granteeIndexKey(granter, grantee, msgTypeUrl));
    this.emitGrantEvent(ctx, EventRevokeSchema.typeName, granter, grantee, msgTypeUrl);
  }

  // --- queue ----------------------------------------------------------------------------------

  private getQueueItem(ctx: Context, key: Bytes): string[] | undefined {
    const v = this.store(ctx).get(key);
    return v === undefined ? undefined : fromBinary(GrantQueueItemSchema, v).msgTypeUrls;
  }

  private setQueueItem(ctx: Context, key: Bytes, urls: string[]): void {
    // Upstream keeps an emptied item until it is pruned; chaind deletes it (no reader can tell).
    if (urls.length === 0) this.store(ctx).delete(key);
    else this.store(ctx).set(key, toBinary(GrantQueueItemSchema, create(GrantQueueItemSchema, { msgTypeUrls: urls })));
  }

  /** insertIntoGrantQueue: append the type URL to the (expiration, granter, grantee) item. */
  private insertIntoGrantQueue(ctx: Context, msgTypeUrl: string, granter: Bytes, grantee: Bytes, expiration: bigint): void {
    const key = grantQueueKey(expiration, granter, grantee);
    this.setQueueItem(ctx, key, [...(this.getQueueItem(ctx, key) ?? []), msgTypeUrl]);
  }

  /**
   * removeFromGrantQueue: 20 gas per entry scanned; the entry is replaced by the last one (the
   * SDK's swap-remove, so entry order matches upstream's). A missing item is authz 5.
   */
  private removeFromGrantQueue(ctx: Context, msgTypeUrl: string, granter: Bytes, grantee: Bytes, expiration: bigint): void {
    const key = grantQueueKey(expiration, granter, grantee);
    const urls = this.getQueueItem(ctx, key);
    if (urls === undefined) throw authzErrors.noGrantKeyFound.wrap("can't remove grant from the expire queue, grant key not found");
    for (let i = 0; i < urls.length; i++) {
      ctx.gasMeter.consume(GRANT_QUEUE_GAS_PER_ITEM, 'grant queue');
      if (urls[i] === msgTypeUrl) {
        urls[i] = urls[urls.length - 1]!;
        urls.pop();
        this.setQueueItem(ctx, key, urls);
        break;
      }
    }
  }

  /**
   * DequeueAndDeleteExpiredGrants (keeper.go, v0.55 with #26588's cap): queue items from the
   * start up to InclusiveEndBytes(0x02 | FormatTimeBytes(blockTime)) — i.e. expirations strictly
   * before the block time, since every real key continues past the time with a non-zero length
   * byte — at most `limit` items; each item and every grant it lists is deleted. No events.
   * Returns the number of queue items removed.
   */
  dequeueAndDeleteExpiredGrants(ctx: Context, limit = PRUNE_LIMIT): number {
    const s = this.store(ctx);
    const end = new Uint8Array([...grantQueueTimePrefix(ctx.time), 0x00]);
    const due: { key: Bytes; urls: string[] }[] = [];
    for (const p of s.iterate(GRANT_QUEUE_PREFIX, end)) {
      if (due.length >= limit) break;
      due.push({ key: Uint8Array.from(p.key), urls: fromBinary(GrantQueueItemSchema, p.value).msgTypeUrls });
    }
    for (const { key, urls } of due) {
      const { granter, grantee } = parseGrantQueueKey(key);
      s.delete(key);
      for (const url of urls) {
        s.delete(grantKey(granter, grantee, url));
        s.delete(granteeIndexKey(granter, grantee, url));
      }
    }
    return due.length;
  }

  // --- exec -----------------------------------------------------------------------------------

  /**
   * DispatchActions (keeper.go). For each message: exactly one signer (authz 9), the granter; when
   * it is the grantee itself the message runs with no grant. Otherwise the grant must exist
   * (authz 2) and not be expired (authz 6; expiration == block time still counts as live), its
   * Accept decides, a `delete` removes the grant (EventRevoke), an `updated` rewrites it. Then the
   * route's handler runs in a child context; its result bytes are `results[i]` and its events are
   * re-emitted with `authz_msg_index = i`. The caller's tx branch makes the whole Exec atomic.
   */
  dispatchActions(ctx: Context, grantee: Bytes, msgs: readonly ExecMsg[]): Bytes[] {
    const results: Bytes[] = [];
    for (let i = 0; i < msgs.length; i++) {
      const m = msgs[i]!;
      const route = m.route;
      if (route === undefined) throw sdkErrors.unknownRequest.wrap(`unrecognized message route: ${this.names.typeUrl(m.typeUrl)}`);
      const signers = route.signers(m.value, ctx.addressCodec);
      if (signers.length !== 1) throw authzErrors.authorizationNumOfSigners;
      const granter = signers[0]!;

      if (!bytesEqual(granter, grantee)) {
        const grant = this.getGrant(ctx, granter, grantee, m.typeUrl);
        if (grant === undefined) throw authzErrors.noAuthorizationFound.wrap(`failed to get grant with given ${this.describe(ctx, granter, grantee, m.typeUrl)}`);
        if (grant.expiration !== undefined && grant.expiration < ctx.time) throw authzErrors.authorizationExpired;
        const resp = acceptAuthorization(ctx, grant.authorization, { typeUrl: m.typeUrl, value: m.value });
        if (resp.delete) this.deleteGrant(ctx, granter, grantee, m.typeUrl);
        else if (resp.updated !== undefined) this.update(ctx, granter, grantee, resp.updated);
        if (!resp.accept) throw sdkErrors.unauthorized;
      }

      const child = childContext(ctx);
      let res;
      try {
        res = route.handler(child, m.value);
      } catch (e) {
        if (e instanceof OutOfGasError || e instanceof GasOverflowError) throw e;
        const wrap = `failed to execute message; message ${compactText(m.proto, m.typeUrl)}`;
        if (e instanceof AbciError) throw e.wrap(wrap);
        throw new AbciError(errInternal.codespace, errInternal.abciCode, errInternal.description, `${wrap}: ${(e as Error)?.message ?? String(e)}`);
      }
      results.push(res?.response ?? EMPTY_BYTES);
      for (const ev of child.events.events()) {
        ctx.events.emitEvent({ type: ev.type, attributes: [...ev.attributes, { key: 'authz_msg_index', value: String(i), index: true }] });
      }
    }
    return results;
  }

  // --- genesis --------------------------------------------------------------------------------

  /**
   * InitGenesis (genesis.go): grants that expired before the genesis time are skipped, the rest go
   * through SaveGrant (so an expiration equal to the genesis time is refused, as upstream panics).
   * chaind also runs ValidateBasic on each authorization. Throws a plain Error naming the entry.
   */
  initGenesis(ctx: Context, gs: GenesisState): void {
    gs.authorization.forEach((e, i) => {
      try {
        const expiration = e.expiration === undefined ? undefined : timestampToNs(e.expiration);
        if (expiration !== undefined && expiration < ctx.time) return;
        const granter = decodeGenesisAddress(ctx.addressCodec, e.granter, 'granter');
        const grantee = decodeGenesisAddress(ctx.addressCodec, e.grantee, 'grantee');
        const a = authorizationFromAny(e.authorization);
        this.validateAuthorization(ctx, a);
        this.saveGrant(ctx, granter, grantee, a, expiration);
      } catch (err) {
        throw new Error(`authz genesis authorization[${i}]: ${(err as Error).message}`);
      }
    });
  }

  /** ExportGenesis: every stored grant, expired ones included, in key order. */
  exportGenesis(ctx: Context): GenesisState {
    const authorization: GrantAuthorization[] = [];
    for (const { granter, grantee, grant } of this.iterateGrants(ctx)) {
      authorization.push(
        create(GrantAuthorizationSchema, {
          granter: ctx.addressCodec.encode(granter),
          grantee: ctx.addressCodec.encode(grantee),
          authorization: authorizationToAny(grant.authorization),
          expiration: grant.expiration === undefined ? undefined : timestamp(grant.expiration),
        }),
      );
    }
    return create(GenesisStateSchema, { authorization });
  }
}

function decodeGenesisAddress(codec: AddressCodec, text: string, what: string): Bytes {
  const r = codec.tryDecode(text);
  if ('error' in r) throw new Error(`invalid ${what} address ${JSON.stringify(text)}: ${r.error}`);
  return r.bytes;
}
