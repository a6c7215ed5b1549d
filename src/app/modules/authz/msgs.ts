/**
 * The authz messages as the handlers see them, decoded from whatever the tx decoder produced:
 * protobuf bytes, a generated protobuf message (src/tx protoTxDecoder) or SDK JSON without
 * `@type` (src/app/tx.ts jsonTxDecoder). Decoding does what the SDK's tx decoder does for these
 * messages (cosmos-sdk: x/auth/tx/decoder.go + codec/types/interface_registry.go UnpackAny): Anys
 * are resolved in either type-URL spelling, an authorization must be one of the three
 * Authorization types, timestamps must be in the protobuf range; a failure is a tx parse error.
 *
 * MsgExec's inner messages are decoded by their own routes, found through the MsgRouter, so that
 * the handler gets exactly the value the route would get at the top level of a tx.
 */
import { fromBinary, isMessage, ScalarType, type DescField, type DescMessage, type JsonValue, type Message } from '@bufbuild/protobuf';
import type { Any, Timestamp } from '@bufbuild/protobuf/wkt';
import { AbciError, sdkErrors } from '../../errors.js';
import type { MsgRoute } from '../../module.js';
import { MsgExecSchema, MsgGrantSchema, MsgRevokeSchema } from '../../../gen/chain/authz/v1beta1/tx_pb.js';
import { parseTypeUrl } from '../../../names/index.js';
import { anyFromProtoJson, fromProtoJson } from '../../../proto/json.js';
import { resolveTypeUrl, UnknownTypeUrlError } from '../../../proto/registry.js';
import { authorizationFromAny, type Authorization } from './authorizations.js';

/**
 * What authz needs of the app's message router (the SDK's baseapp.MessageRouter): the route of a
 * type URL in either spelling. BaseApp is expected to provide it as `msgRoute`.
 */
export interface MsgRouter {
  msgRoute(typeUrl: string): MsgRoute<unknown> | undefined;
}

export function isMsgRouter(x: unknown): x is MsgRouter {
  return typeof x === 'object' && x !== null && typeof (x as { msgRoute?: unknown }).msgRoute === 'function';
}

export interface DecodedMsgGrant {
  granter: string;
  grantee: string;
  /** Undefined when the grant carries no authorization (refused by Grant.ValidateBasic). */
  authorization: Authorization | undefined;
  /** Nanoseconds since the epoch; undefined = never expires. */
  expiration: bigint | undefined;
}

export interface DecodedMsgRevoke {
  granter: string;
  grantee: string;
  /** As sent (either spelling); the handler canonicalises it. */
  msgTypeUrl: string;
}

/** One message inside a MsgExec. */
export interface ExecMsg {
  /** Canonical type URL. */
  typeUrl: string;
  /** The route that handles it; undefined when the app has none (Exec then fails). */
  route: MsgRoute<unknown> | undefined;
  /** route.decode's value (undefined without a route). */
  value: unknown;
  /** The protobuf message, when the type is registered (error texts print it). */
  proto: Message | undefined;
}

export interface DecodedMsgExec {
  grantee: string;
  msgs: ExecMsg[];
}

type Obj = Record<string, unknown>;

function isPlainObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

/** The generated message for a route value in any of the decoder's forms. */
function toProto<D extends DescMessage>(schema: D, value: unknown): ReturnType<typeof fromBinary<D>> {
  if (isMessage(value, schema)) return value;
  if (value instanceof Uint8Array) return fromBinary(schema, value);
  if (isPlainObject(value)) return fromProtoJson(schema, value as JsonValue);
  throw new Error(`${schema.typeName} must be an object`);
}

/** google.protobuf.Timestamp's valid range, 0001-01-01 to 9999-12-31 (gogoproto StdTime). */
const MIN_SECONDS = -62135596800n;
const MAX_SECONDS = 253402300799n;

/** A Timestamp as ns since the epoch; out-of-range values are refused as gogoproto refuses them. */
export function timestampToNs(ts: Timestamp): bigint {
  if (ts.seconds < MIN_SECONDS) throw new Error(`timestamp: seconds:${ts.seconds} nanos:${ts.nanos} before 0001-01-01`);
  if (ts.seconds > MAX_SECONDS) throw new Error(`timestamp: seconds:${ts.seconds} nanos:${ts.nanos} after 10000-01-01`);
  if (ts.nanos < 0 || ts.nanos >= 1e9) throw new Error(`timestamp: seconds:${ts.seconds} nanos:${ts.nanos}: nanos not in range [0, 1e9)`);
  return ts.seconds * 1_000_000_000n + BigInt(ts.nanos);
}

export function decodeMsgGrant(value: unknown): DecodedMsgGrant {
  const m = toProto(MsgGrantSchema, value);
  const g = m.grant;
  return {
    granter: m.granter,
    grantee: m.grantee,
    authorization: g?.authorization === undefined ? undefined : authorizationFromAny(g.authorization),
    expiration: g?.expiration === undefined ? undefined : timestampToNs(g.expiration),
  };
}

export function decodeMsgRevoke(value: unknown): DecodedMsgRevoke {
  const m = toProto(MsgRevokeSchema, value);
  return { granter: m.granter, grantee: m.grantee, msgTypeUrl: m.msgTypeUrl };
}

/**
 * MsgExec may nest MsgExec; past this depth the tx is refused, as the SDK's decoder refuses
 * protobuf nested deeper than its recursion limit (100).
 */
export const MAX_EXEC_DEPTH = 100;
let execDepth = 0;

function routeOf(router: MsgRouter | undefined, typeUrl: string): MsgRoute<unknown> | undefined {
  if (router === undefined) throw new Error('authz has no message router: the app must expose msgRoute(typeUrl)');
  return router.msgRoute(typeUrl);
}

function execMsgFromAny(any: Any, router: MsgRouter | undefined): ExecMsg {
  const typeUrl = parseTypeUrl(any.typeUrl);
  const route = routeOf(router, any.typeUrl);
  const desc = resolveTypeUrl(any.typeUrl);
  const proto = desc === undefined ? undefined : (fromBinary(desc, any.value) as Message);
  if (route === undefined) return { typeUrl, route, value: undefined, proto };
  return { typeUrl, route, value: route.decode(proto ?? any.value), proto };
}

/** An inner message in SDK JSON (`{"@type": …, …}`). A type the registry lacks stays undecoded. */
function execMsgFromJson(j: unknown, i: number, router: MsgRouter | undefined): ExecMsg {
  if (!isPlainObject(j) || typeof j['@type'] !== 'string') throw new Error(`msgs[${i}] has no @type`);
  try {
    return execMsgFromAny(anyFromProtoJson(j as JsonValue), router);
  } catch (e) {
    if (!(e instanceof UnknownTypeUrlError)) throw e;
  }
  const url = j['@type'];
  const route = routeOf(router, url);
  const { ['@type']: _t, ...rest } = j;
  return { typeUrl: parseTypeUrl(url), route, value: route === undefined ? undefined : route.decode(rest), proto: undefined };
}

export function decodeMsgExec(value: unknown, router: MsgRouter | undefined): DecodedMsgExec {
  if (execDepth >= MAX_EXEC_DEPTH) throw new Error(`MsgExec nested deeper than ${MAX_EXEC_DEPTH}`);
  execDepth++;
  try {
    if (isPlainObject(value) && !isMessage(value)) {
      for (const k of Object.keys(value)) if (k !== 'grantee' && k !== 'msgs') throw new Error(`cannot decode message ${MsgExecSchema.typeName} from JSON: key "${k}" is unknown`);
      const grantee = value['grantee'] ?? '';
      if (typeof grantee !== 'string') throw new Error('grantee must be a string');
      const msgs = value['msgs'] ?? [];
      if (!Array.isArray(msgs)) throw new Error('msgs must be an array');
      return { grantee, msgs: msgs.map((j, i) => execMsgFromJson(j, i, router)) };
    }
    const m = toProto(MsgExecSchema, value);
    return { grantee: m.grantee, msgs: m.msgs.map((a) => execMsgFromAny(a, router)) };
  } catch (e) {
    if (e instanceof AbciError) throw e;
    throw sdkErrors.txDecode.wrap((e as Error).message);
  } finally {
    execDepth--;
  }
}

// --- text form, for error messages -----------------------------------------------------------

/** Go text-format string escaping (golang/protobuf text.go writeString): bytes, octal for the rest. */
function quote(b: Uint8Array): string {
  let s = '"';
  for (const c of b) {
    if (c === 0x0a) s += '\\n';
    else if (c === 0x0d) s += '\\r';
    else if (c === 0x09) s += '\\t';
    else if (c === 0x22) s += '\\"';
    else if (c === 0x5c) s += '\\\\';
    else if (c >= 0x20 && c < 0x7f) s += String.fromCharCode(c);
    else s += `\\${c.toString(8).padStart(3, '0')}`;
  }
  return `${s}"`;
}

function scalarText(t: ScalarType, v: unknown): string {
  if (t === ScalarType.STRING) return quote(Buffer.from(v as string, 'utf8'));
  if (t === ScalarType.BYTES) return quote(v as Uint8Array);
  return String(v);
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === 0n || v === false || (v instanceof Uint8Array && v.length === 0);
}

function fieldText(f: DescField, v: unknown, always: boolean): string {
  switch (f.fieldKind) {
    case 'scalar':
      return !always && isZero(v) ? '' : `${f.name}:${scalarText(f.scalar, v)} `;
    case 'enum':
      return !always && v === 0 ? '' : `${f.name}:${f.enum.value[v as number]?.name ?? String(v)} `;
    case 'message':
      return v === undefined ? '' : `${f.name}:<${messageText(f.message, v as Obj)}> `;
    case 'list': {
      let out = '';
      for (const e of v as unknown[]) {
        if (f.listKind === 'message') out += `${f.name}:<${messageText(f.message, e as Obj)}> `;
        else if (f.listKind === 'enum') out += `${f.name}:${f.enum.value[e as number]?.name ?? String(e)} `;
        else out += `${f.name}:${scalarText(f.scalar, e)} `;
      }
      return out;
    }
    case 'map':
      return Object.entries(v as Obj)
        .map(([k, e]) => `${f.name}:<key:${JSON.stringify(k)} value:${f.mapKind === 'message' ? `<${messageText(f.message, e as Obj)}>` : String(e)} > `)
        .join('');
  }
}

function messageText(desc: DescMessage, msg: Obj): string {
  let out = '';
  for (const member of desc.members) {
    if (member.kind === 'oneof') {
      const o = msg[member.localName] as { case?: string; value?: unknown } | undefined;
      const f = o?.case === undefined ? undefined : member.fields.find((x) => x.localName === o.case);
      if (f !== undefined) out += fieldText(f, o!.value, true);
    } else {
      out += fieldText(member, msg[member.localName], false);
    }
  }
  return out;
}

/**
 * A message as Go's `%v` prints a gogoproto message (its compact text form), e.g.
 * `from_address:"chain1…" to_address:"chain1…" amount:<denom:"stake" amount:"10" > `.
 */
export function compactText(m: Message | undefined, typeUrl: string): string {
  if (m === undefined) return typeUrl;
  const desc = resolveTypeUrl(`/${m.$typeName}`);
  return desc === undefined ? typeUrl : messageText(desc, m as unknown as Obj);
}
