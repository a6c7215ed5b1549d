/**
 * The authz Query service (cosmos/cosmos-sdk:x/authz/keeper/grpc_query.go): Grants, GranterGrants, GranteeGrants over committed state, with the
 * SDK's pagination (src/app/pagination.ts). Expired grants that are not pruned yet are returned,
 * as upstream returns them.
 *
 * Errors as upstream returns them: an address
 * that does not decode is the address codec's own error (no gRPC status, so abci_query reports it
 * as code 18 and gRPC as Unknown; a wrong bech32 prefix is an SDK error, code 6); Grants with a
 * msg_type_url that has no grant is `authorization not found for <url> type: authorization not
 * found` (authz 2, gRPC Unknown).
 *
 * GranteeGrants reads the grantee index (keys.ts 0x03) instead of scanning every grant as upstream
 * does (#10943). Its `next_key` is upstream's: the grant key relative to 0x01
 * (`len granter | granter | len grantee | grantee | url`), and a key in that form is accepted, so
 * pages line up with an SDK node's. One difference remains: at the end of the grantee's grants
 * upstream may still return a next_key (the next grant of some other grantee in the store),
 * which leads to an empty page; here next_key is null there.
 */
import { bech32 } from '@scure/base';
import { create, fromBinary } from '@bufbuild/protobuf';
import type { Any } from '@bufbuild/protobuf/wkt';
import type { AddressCodec } from '../../address.js';
import { compareBytes, concatBytes, prefixEnd, type Bytes } from '../../bytes.js';
import type { Context } from '../../context.js';
import { sdkErrors } from '../../errors.js';
import { paginate, type PageResponse as RawPageResponse } from '../../pagination.js';
import { PrefixStore, type KVPair, type KVStore } from '../../store.js';
import { GenericAuthorizationSchema, GrantAuthorizationSchema, GrantSchema, type Grant, type GrantAuthorization } from '../../../gen/chain/authz/v1beta1/authz_pb.js';
import {
  QueryGranteeGrantsResponseSchema,
  QueryGranterGrantsResponseSchema,
  QueryGrantsResponseSchema,
  type QueryGranteeGrantsRequest,
  type QueryGranteeGrantsResponse,
  type QueryGranterGrantsRequest,
  type QueryGranterGrantsResponse,
  type QueryGrantsRequest,
  type QueryGrantsResponse,
} from '../../../gen/chain/authz/v1beta1/query_pb.js';
import { PageResponseSchema, type PageResponse } from '../../../gen/chain/base/query/v1beta1/pagination_pb.js';
import { parseTypeUrl } from '../../../names/index.js';
import { packAny, withEmitTypeUrl } from '../../../proto/registry.js';
import { authorizationFromAny, authorizationToAny, type Authorization } from './authorizations.js';
import { authzErrors } from './errors.js';
import type { AuthzKeeper, AuthzNames } from './keeper.js';
import { GRANT_PREFIX, granteeIndexPrefix, granterGrantsPrefix, grantKey, lengthPrefixed, pairGrantsPrefix } from './keys.js';

/**
 * AddressCodec().StringToBytes as the authz queries see it (codec/address/bech32_codec.go): the
 * empty string and bech32 failures are plain errors, a wrong prefix is ErrLogic, bad lengths are
 * VerifyAddressFormat's ErrUnknownAddress.
 */
export function queryAddress(codec: AddressCodec, text: string): Bytes {
  if (text.trim().length === 0) throw new Error('empty address string is not allowed');
  let prefix: string;
  try {
    prefix = bech32.decode(text as `${string}1${string}`, 1023).prefix;
  } catch (e) {
    throw new Error(`decoding bech32 failed: ${(e as Error).message}`);
  }
  if (prefix !== codec.prefix) throw sdkErrors.logic.wrap(`hrp does not match bech32 prefix: expected '${codec.prefix}' got '${prefix}'`);
  const r = codec.tryDecode(text);
  if ('error' in r) throw sdkErrors.unknownAddress.wrap(r.error);
  return r.bytes;
}

function pageResponse(p: RawPageResponse): PageResponse {
  return create(PageResponseSchema, { nextKey: p.next_key ?? new Uint8Array(0), total: p.total });
}

/**
 * GranteeGrants' view of the grantee index as the SDK's grant store: keys are grant keys relative to
 * 0x01 (`len granter | granter | len grantee | grantee | url`), values the grants, in the same order
 * as the index (for a fixed grantee the map is monotonic). Read-only.
 */
export class GranteeGrantsView implements KVStore {
  private readonly index: PrefixStore;
  /** len(grantee) | grantee */
  private readonly grantee: Bytes;

  constructor(
    private readonly store: KVStore,
    grantee: Bytes,
  ) {
    this.index = new PrefixStore(store, granteeIndexPrefix(grantee));
    this.grantee = lengthPrefixed(grantee);
  }

  /** Index key (`len granter | granter | url`) → view key. */
  private toView(ik: Bytes): Bytes {
    const n = 1 + ik[0]!;
    return concatBytes(ik.subarray(0, n), this.grantee, ik.subarray(n));
  }

  /**
   * The smallest index key whose view key is >= b, or null when no index key can be (b is above
   * them all). Bytes up to the end of the granter part compare the same in both forms; after it,
   * the view has the grantee before the URL.
   */
  lowerBound(b: Bytes): Bytes | null {
    if (b.length === 0) return b;
    const n = 1 + b[0]!;
    if (b.length <= n) return b;
    const pb = b.subarray(0, n);
    const rest = b.subarray(n);
    const g = this.grantee;
    const common = Math.min(g.length, rest.length);
    for (let i = 0; i < common; i++) {
      if (g[i]! > rest[i]!) return pb; // every grant of this granter sorts after b
      if (g[i]! < rest[i]!) return prefixEnd(pb) ?? null; // none does: start at the next granter
    }
    if (rest.length < g.length) return pb; // b stops inside the grantee part: all after b
    return concatBytes(pb, rest.subarray(g.length)); // same grantee: compare the URLs
  }

  get(): Bytes | undefined {
    throw new Error('GranteeGrantsView is iteration-only');
  }
  has(): boolean {
    throw new Error('GranteeGrantsView is iteration-only');
  }
  set(): void {
    throw new Error('GranteeGrantsView is read-only');
  }
  delete(): void {
    throw new Error('GranteeGrantsView is read-only');
  }

  *iterate(start?: Bytes, end?: Bytes, reverse = false): Iterable<KVPair> {
    const s = start === undefined ? undefined : this.lowerBound(start);
    if (s === null) return;
    const e = end === undefined ? undefined : (this.lowerBound(end) ?? undefined);
    if (s !== undefined && e !== undefined && compareBytes(s, e) >= 0) return;
    for (const p of this.index.iterate(s, e, reverse)) {
      const key = this.toView(p.key);
      const value = this.store.get(concatBytes(GRANT_PREFIX, key));
      // The index and the grants change together; a miss would be a bug, not a grant.
      if (value === undefined) throw new Error('authz grantee index points at a missing grant');
      yield { key, value };
    }
  }
}

export class AuthzQueries {
  constructor(
    private readonly keeper: AuthzKeeper,
    private readonly names: AuthzNames,
  ) {}

  /** The stored authorization in the emit spelling (type URL, and a GenericAuthorization's msg). */
  private emitAny(a: Authorization): Any {
    if (!this.names.upstreamNames) return authorizationToAny(a);
    if (a.kind === 'generic') {
      return withEmitTypeUrl(packAny(GenericAuthorizationSchema, create(GenericAuthorizationSchema, { msg: this.names.typeUrl(a.value.msg) })), this.names);
    }
    return withEmitTypeUrl(authorizationToAny(a), this.names);
  }

  private grantOf(bytes: Bytes): Grant {
    const g = fromBinary(GrantSchema, bytes);
    return create(GrantSchema, { authorization: this.emitAny(authorizationFromAny(g.authorization)), expiration: g.expiration });
  }

  private grantAuthorization(granter: string, grantee: string, bytes: Bytes): GrantAuthorization {
    const g = this.grantOf(bytes);
    return create(GrantAuthorizationSchema, { granter, grantee, authorization: g.authorization, expiration: g.expiration });
  }

  /** Query/Grants: one type (no pagination) or every grant of the pair, paginated by type URL. */
  grants(ctx: Context, req: QueryGrantsRequest): QueryGrantsResponse {
    const granter = queryAddress(ctx.addressCodec, req.granter);
    const grantee = queryAddress(ctx.addressCodec, req.grantee);
    const store = this.keeper.store(ctx);
    if (req.msgTypeUrl !== '') {
      const url = parseTypeUrl(req.msgTypeUrl);
      const v = store.get(grantKey(granter, grantee, url));
      if (v === undefined) throw authzErrors.noAuthorizationFound.wrap(`authorization not found for ${req.msgTypeUrl} type`);
      return create(QueryGrantsResponseSchema, { grants: [this.grantOf(v)] });
    }
    const grants: Grant[] = [];
    const p = paginate(new PrefixStore(store, pairGrantsPrefix(granter, grantee)), req.pagination, (_k, v) => {
      grants.push(this.grantOf(v));
    });
    return create(QueryGrantsResponseSchema, { grants, pagination: pageResponse(p) });
  }

  /** Query/GranterGrants: the granter's grants by (grantee, type URL). */
  granterGrants(ctx: Context, req: QueryGranterGrantsRequest): QueryGranterGrantsResponse {
    const granter = queryAddress(ctx.addressCodec, req.granter);
    const grants: GrantAuthorization[] = [];
    const p = paginate(new PrefixStore(this.keeper.store(ctx), granterGrantsPrefix(granter)), req.pagination, (k, v) => {
      const grantee = k.subarray(1, 1 + k[0]!);
      grants.push(this.grantAuthorization(req.granter, ctx.addressCodec.encode(grantee), v));
    });
    return create(QueryGranterGrantsResponseSchema, { grants, pagination: pageResponse(p) });
  }

  /** Query/GranteeGrants: the grantee's grants by (granter, type URL), from the grantee index. */
  granteeGrants(ctx: Context, req: QueryGranteeGrantsRequest): QueryGranteeGrantsResponse {
    const grantee = queryAddress(ctx.addressCodec, req.grantee);
    const grants: GrantAuthorization[] = [];
    const p = paginate(new GranteeGrantsView(this.keeper.store(ctx), grantee), req.pagination, (k, v) => {
      const granter = k.subarray(1, 1 + k[0]!);
      grants.push(this.grantAuthorization(ctx.addressCodec.encode(granter), req.grantee, v));
    });
    return create(QueryGranteeGrantsResponseSchema, { grants, pagination: pageResponse(p) });
  }
}
