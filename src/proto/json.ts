/**
 * Protobuf JSON as the Cosmos SDK prints and reads it: gogoproto jsonpb with `OrigName: true,
 * EmitDefaults: true` (cosmos/gogoproto: jsonpb/jsonpb.go).
 *
 * @bufbuild/protobuf's toJson with `useProtoFieldName` and `alwaysEmitImplicit` gets close; the
 * differences, each handled here:
 *
 * 1. Unset singular message fields: bufbuild omits them, jsonpb writes `null`
 *    (`"pagination": null`, `"pub_key": null`, `"expiration": null`). Unset oneof members stay
 *    omitted in both.
 * 2. Empty singular `bytes`: bufbuild writes `""`, jsonpb writes `null` (a proto3 bytes field that
 *    was absent on the wire is a nil slice in Go: `"next_key": null`). Empty elements of a repeated
 *    bytes field stay `""`.
 * 3. `Any` type URLs: bufbuild resolves `@type` only in its own spelling and only as
 *    `type.googleapis.com/<name>` when reading (`anyPack`). Here `@type` is the SDK's `/<name>`,
 *    both the spec (`/chain.…`) and upstream (`/cosmos.…`) spellings resolve, reading keeps the
 *    given URL byte-for-byte (a signed body must re-encode identically), and writing keeps it or,
 *    when `upstreamNames` is given, rewrites it to that spelling.
 * 4. String escaping (toProtoJsonString): Go's encoding/json escapes `<`, `>`, `&`, U+2028 and
 *    U+2029 as `\u003c`, `\u003e`, `\u0026`, `\u2028`, `\u2029`; JSON.stringify does not.
 *
 * Otherwise the rules agree: proto field names, 64-bit integers as strings and 32-bit ones as
 * numbers, bytes as padded standard base64, enums by name (number when unknown), Timestamp as RFC
 * 3339 UTC with 0, 3, 6 or 9 fractional digits, Duration as `"<s>[.<frac>]s"`, well-known types in
 * an Any as `{"@type": …, "value": …}`. Reading accepts proto and lowerCamel names, numbers or
 * strings for integers, enum names or numbers, and `null` for "unset".
 */
import {
  create,
  fromBinary,
  fromJson,
  toBinary,
  toJson,
  ScalarType,
  type DescEnum,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type MessageShape,
} from '@bufbuild/protobuf';
import { AnySchema, type Any } from '@bufbuild/protobuf/wkt';
import { emitTypeUrl, protoRegistry, UnknownTypeUrlError, type EmitNames } from './registry.js';

const ANY = 'google.protobuf.Any';

/** Well-known types whose JSON is not an object of their fields (handled by @bufbuild/protobuf). */
const SPECIAL_JSON = new Set([
  'google.protobuf.Timestamp',
  'google.protobuf.Duration',
  'google.protobuf.FieldMask',
  'google.protobuf.Struct',
  'google.protobuf.Value',
  'google.protobuf.ListValue',
  'google.protobuf.DoubleValue',
  'google.protobuf.FloatValue',
  'google.protobuf.Int64Value',
  'google.protobuf.UInt64Value',
  'google.protobuf.Int32Value',
  'google.protobuf.UInt32Value',
  'google.protobuf.BoolValue',
  'google.protobuf.StringValue',
  'google.protobuf.BytesValue',
  'google.protobuf.Empty',
]);

export interface ProtoJsonWriteOptions {
  /** Rewrite every `@type` to this spelling (`true` → `/cosmos.…`, `false` → `/chain.…`); when
   * absent, type URLs are written as stored. A `Names` instance (src/names) fits. */
  upstreamNames?: boolean;
}

export interface ProtoJsonReadOptions {
  /** Skip unknown keys instead of failing (jsonpb `AllowUnknownFields`). */
  ignoreUnknownFields?: boolean;
}

type Obj = Record<string, unknown>;

function bytesToBase64(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
}

function scalarToJson(type: ScalarType, v: unknown): JsonValue {
  switch (type) {
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT: {
      const n = v as number;
      if (Number.isNaN(n)) return 'NaN';
      if (n === Number.POSITIVE_INFINITY) return 'Infinity';
      if (n === Number.NEGATIVE_INFINITY) return '-Infinity';
      return n;
    }
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return String(v);
    case ScalarType.BYTES:
      return bytesToBase64(v as Uint8Array);
    case ScalarType.BOOL:
    case ScalarType.STRING:
    case ScalarType.INT32:
    case ScalarType.UINT32:
    case ScalarType.SINT32:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return v as JsonValue;
  }
}

function enumToJson(e: DescEnum, v: number): JsonValue {
  if (e.typeName === 'google.protobuf.NullValue') return null;
  return e.value[v]?.name ?? v;
}

function singularToJson(f: DescField, v: unknown, opts: ProtoJsonWriteOptions): JsonValue {
  switch (f.fieldKind) {
    case 'scalar':
      if (v === undefined) return null;
      // Difference 2: a nil []byte in Go.
      if (f.scalar === ScalarType.BYTES && (v as Uint8Array).length === 0) return null;
      return scalarToJson(f.scalar, v);
    case 'enum':
      return v === undefined ? null : enumToJson(f.enum, v as number);
    case 'message':
      // Difference 1: unset message fields are null.
      return v === undefined ? null : messageToJson(f.message, v as Obj, opts);
    default:
      throw new Error(`unexpected field kind ${f.fieldKind}`);
  }
}

function mapKeyToJson(k: unknown): string {
  return String(k);
}

function messageToJson(desc: DescMessage, msg: Obj, opts: ProtoJsonWriteOptions): JsonValue {
  if (desc.typeName === ANY) return anyToJsonValue(msg as unknown as Any, opts);
  if (SPECIAL_JSON.has(desc.typeName)) return toJson(desc, msg as MessageShape<DescMessage>, { registry: protoRegistry });
  const out: JsonObject = {};
  for (const f of desc.fields) {
    if (f.oneof !== undefined) {
      const o = msg[f.oneof.localName] as { case?: string; value?: unknown } | undefined;
      if (o?.case !== f.localName) continue;
      out[f.name] = singularToJson(f, o.value, opts);
      continue;
    }
    const v = msg[f.localName];
    switch (f.fieldKind) {
      case 'list': {
        const list = (v as unknown[] | undefined) ?? [];
        out[f.name] = list.map((e): JsonValue => {
          if (f.listKind === 'message') return messageToJson(f.message, e as Obj, opts);
          if (f.listKind === 'enum') return enumToJson(f.enum, e as number);
          return scalarToJson(f.scalar, e);
        });
        break;
      }
      case 'map': {
        const m: JsonObject = {};
        for (const [k, e] of Object.entries((v as Obj | undefined) ?? {})) {
          m[mapKeyToJson(k)] =
            f.mapKind === 'message' ? messageToJson(f.message, e as Obj, opts) : f.mapKind === 'enum' ? enumToJson(f.enum, e as number) : scalarToJson(f.scalar, e);
        }
        out[f.name] = m;
        break;
      }
      default:
        out[f.name] = singularToJson(f, v, opts);
    }
  }
  return out;
}

function anyToJsonValue(any: Any, opts: ProtoJsonWriteOptions): JsonValue {
  if (any.typeUrl === '' && any.value.length === 0) return {};
  const desc = protoRegistry.getMessage(any.typeUrl.slice(any.typeUrl.lastIndexOf('/') + 1));
  if (desc === undefined) throw new UnknownTypeUrlError(any.typeUrl);
  const typeUrl = opts.upstreamNames === undefined ? any.typeUrl : emitTypeUrl(any.typeUrl, opts);
  const inner = fromBinary(desc, any.value) as unknown as Obj;
  const body = messageToJson(desc, inner, opts);
  if (desc.typeName === ANY || SPECIAL_JSON.has(desc.typeName)) return { '@type': typeUrl, value: body };
  return { '@type': typeUrl, ...(body as JsonObject) };
}

/** A message as SDK protobuf JSON (a JSON value; see toProtoJsonString for text). */
export function toProtoJson<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>, opts: ProtoJsonWriteOptions = {}): JsonValue {
  return messageToJson(schema, message as unknown as Obj, opts);
}

/** An Any as SDK protobuf JSON: `{"@type": "/chain.…", <fields>}`. */
export function anyToProtoJson(any: Any, opts: ProtoJsonWriteOptions = {}): JsonValue {
  return anyToJsonValue(any, opts);
}

const GO_ESCAPES = /[<>&\u2028\u2029]/g;

/** JSON text as Go's encoding/json writes it: compact, with `<>&` and U+2028/U+2029 escaped. */
export function goJsonStringify(value: unknown): string {
  const s = JSON.stringify(value);
  if (s === undefined) throw new Error('value is not JSON-serializable');
  return s.replace(GO_ESCAPES, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A message as SDK protobuf JSON text. */
export function toProtoJsonString<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>, opts: ProtoJsonWriteOptions = {}): string {
  return goJsonStringify(toProtoJson(schema, message, opts));
}

// ---- reading ----

const containsAnyMemo = new Map<string, boolean>();

/** True when a message of this type can hold an Any somewhere inside (those fields are read here;
 * every other field goes to @bufbuild/protobuf's fromJson). */
function containsAny(desc: DescMessage, seen: Set<string> = new Set()): boolean {
  const memo = containsAnyMemo.get(desc.typeName);
  if (memo !== undefined) return memo;
  if (desc.typeName === ANY) return true;
  if (seen.has(desc.typeName)) return false;
  seen.add(desc.typeName);
  let r = false;
  for (const f of desc.fields) {
    const m = f.fieldKind === 'message' ? f.message : f.fieldKind === 'list' && f.listKind === 'message' ? f.message : f.fieldKind === 'map' && f.mapKind === 'message' ? f.message : undefined;
    if (m !== undefined && containsAny(m, seen)) {
      r = true;
      break;
    }
  }
  seen.delete(desc.typeName);
  // A false found inside a cycle may depend on the path; only a top-level false is final.
  if (r || seen.size === 0) containsAnyMemo.set(desc.typeName, r);
  return r;
}

function fieldForKey(desc: DescMessage, key: string): DescField | undefined {
  for (const f of desc.fields) if (f.name === key || f.jsonName === key) return f;
  return undefined;
}

function isObject(j: JsonValue): j is JsonObject {
  return typeof j === 'object' && j !== null && !Array.isArray(j);
}

function messageFromJsonValue(desc: DescMessage, json: JsonValue, opts: ProtoJsonReadOptions): Obj {
  if (desc.typeName === ANY) return anyFromJsonValue(json, opts) as unknown as Obj;
  const readOpts = { registry: protoRegistry, ignoreUnknownFields: opts.ignoreUnknownFields === true };
  if (SPECIAL_JSON.has(desc.typeName) || !containsAny(desc)) return fromJson(desc, json, readOpts) as unknown as Obj;
  if (!isObject(json)) throw new Error(`cannot decode message ${desc.typeName} from JSON: expected object but got ${JSON.stringify(json)}`);
  const plain: JsonObject = {};
  const deferred: [DescField, JsonValue][] = [];
  for (const [key, val] of Object.entries(json)) {
    const f = fieldForKey(desc, key);
    if (f === undefined) {
      if (opts.ignoreUnknownFields === true) continue;
      throw new Error(`cannot decode message ${desc.typeName} from JSON: key "${key}" is unknown`);
    }
    const m = f.fieldKind === 'message' || (f.fieldKind === 'list' && f.listKind === 'message') || (f.fieldKind === 'map' && f.mapKind === 'message') ? f.message : undefined;
    if (m !== undefined && containsAny(m)) deferred.push([f, val]);
    else plain[key] = val;
  }
  const msg = fromJson(desc, plain, readOpts) as unknown as Obj;
  for (const [f, val] of deferred) {
    if (val === null) continue;
    if (f.fieldKind === 'message') {
      const v = messageFromJsonValue(f.message, val, opts);
      if (f.oneof !== undefined) {
        const cur = msg[f.oneof.localName] as { case?: string };
        if (cur.case !== undefined) throw new Error(`cannot decode message ${desc.typeName} from JSON: multiple keys for oneof ${f.oneof.name} present`);
        msg[f.oneof.localName] = { case: f.localName, value: v };
      } else {
        msg[f.localName] = v;
      }
    } else if (f.fieldKind === 'list') {
      if (!Array.isArray(val)) throw new Error(`cannot decode field ${desc.typeName}.${f.name} from JSON: expected array`);
      msg[f.localName] = val.map((e) => {
        if (e === null) throw new Error(`cannot decode field ${desc.typeName}.${f.name} from JSON: null in list`);
        return messageFromJsonValue(f.message!, e, opts);
      });
    } else {
      // No map of messages holding an Any exists in proto/; refuse rather than guess key types.
      throw new Error(`cannot decode field ${desc.typeName}.${f.name} from JSON: maps of messages with Any are not supported`);
    }
  }
  return msg;
}

function anyFromJsonValue(json: JsonValue, opts: ProtoJsonReadOptions): Any {
  if (!isObject(json)) throw new Error(`cannot decode message ${ANY} from JSON: expected object but got ${JSON.stringify(json)}`);
  if (Object.keys(json).length === 0) return create(AnySchema);
  const typeUrl = json['@type'];
  if (typeof typeUrl !== 'string' || typeUrl === '') throw new Error(`cannot decode message ${ANY} from JSON: "@type" is empty`);
  const desc = protoRegistry.getMessage(typeUrl.slice(typeUrl.lastIndexOf('/') + 1));
  if (desc === undefined) throw new UnknownTypeUrlError(typeUrl);
  let inner: Obj;
  if (desc.typeName === ANY || SPECIAL_JSON.has(desc.typeName)) {
    inner = messageFromJsonValue(desc, json['value'] ?? null, opts);
  } else {
    const rest: JsonObject = {};
    for (const [k, v] of Object.entries(json)) if (k !== '@type') rest[k] = v;
    inner = messageFromJsonValue(desc, rest, opts);
  }
  // The given URL is kept as is: re-encoding a signed body must reproduce its bytes.
  return create(AnySchema, { typeUrl, value: toBinary(desc, inner as MessageShape<DescMessage>) });
}

/** A message from SDK protobuf JSON (a parsed JSON value). Throws Error on invalid input. */
export function fromProtoJson<Desc extends DescMessage>(schema: Desc, json: JsonValue, opts: ProtoJsonReadOptions = {}): MessageShape<Desc> {
  return messageFromJsonValue(schema, json, opts) as unknown as MessageShape<Desc>;
}

/** A message from SDK protobuf JSON text. */
export function fromProtoJsonString<Desc extends DescMessage>(schema: Desc, text: string, opts: ProtoJsonReadOptions = {}): MessageShape<Desc> {
  return fromProtoJson(schema, JSON.parse(text) as JsonValue, opts);
}

/** An Any from `{"@type": "/chain.…" | "/cosmos.…", <fields>}`. */
export function anyFromProtoJson(json: JsonValue, opts: ProtoJsonReadOptions = {}): Any {
  return anyFromJsonValue(json, opts);
}
