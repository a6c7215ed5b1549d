/**
 * The Cosmos SDK's protobuf JSON: gogoproto jsonpb with `OrigName: true, EmitDefaults: true`
 * (cosmos/gogoproto jsonpb/jsonpb.go, as the SDK's grpc-gateway marshaler configures it;
 * cosmos/gogoproto:jsonpb/jsonpb.go):
 * - proto field names (`account_number`), in declaration order;
 * - defaults emitted: `0` numbers as `"0"`/`0`, `""`, `false`, `[]` for empty lists, `{}` for
 *   empty maps; an unset message field is `null`, and so is empty (nil in Go) `bytes`;
 *   an unset oneof is left out;
 * - 64-bit integers as decimal strings, 32-bit ones as numbers; bytes as padded standard base64;
 *   enums by name; Timestamp/Duration/wrappers/Struct in their proto3 JSON forms;
 * - Any as `{"@type": url, …fields of the packed message}` (or `"value"` for a packed
 *   well-known type), its type resolved through the registry; an unknown type is an error.
 *
 * Parsing accepts proto names and lowerCamel JSON names, 64-bit integers as strings or numbers,
 * enums as names or numbers, `null` for "unset", and keeps each Any's type URL exactly as written
 * (a client's `/cosmos.bank.v1beta1.MsgSend` stays that, so bytes it signed re-encode the same).
 * Unknown fields are errors, as jsonpb's Unmarshaler reports them.
 *
 * Well-known types with a special JSON form are delegated to @bufbuild/protobuf's toJson/fromJson;
 * everything else is written here, because jsonpb's rules (nulls, emitted defaults, verbatim Any
 * URLs) differ from proto3 JSON's.
 */
import { create, fromBinary, fromJson, ScalarType, toBinary, toJson, type DescField, type DescMessage, type JsonObject, type JsonValue, type Message, type Registry } from '@bufbuild/protobuf';
import { reflect, type ReflectList, type ReflectMap, type ReflectMessage } from '@bufbuild/protobuf/reflect';
import { ANY_TYPE_NAME, typeNameOfUrl } from '../../app/any.js';

/** Types whose JSON is not an object of their fields (proto3 JSON mapping). */
const SPECIAL_JSON = new Set(
  ['Timestamp', 'Duration', 'FieldMask', 'Struct', 'Value', 'ListValue', 'DoubleValue', 'FloatValue', 'Int64Value', 'UInt64Value', 'Int32Value', 'UInt32Value', 'BoolValue', 'StringValue', 'BytesValue'].map(
    (n) => `google.protobuf.${n}`,
  ),
);

/** Nesting beyond this is refused: a request or stored value this deep is not a real one. */
const MAX_DEPTH = 100;

/** A JSON codec error: the REST gateway answers it InvalidArgument (request) or Unknown (response). */
export class JsonCodecError extends Error {
  readonly code = 'JSON_CODEC';
  constructor(message: string) {
    super(message);
    this.name = 'JsonCodecError';
  }
}

// ------------------------------------------------------------------------------------------------
// Writing

/** A message as the SDK's REST API writes it. `registry` resolves Any types (either spelling). */
export function toSdkJson(desc: DescMessage, msg: Message, registry: Registry): JsonValue {
  return writeMessage(reflect(desc, msg), registry, 0);
}

function writeMessage(r: ReflectMessage, registry: Registry, depth: number): JsonValue {
  if (depth > MAX_DEPTH) throw new JsonCodecError('message nesting too deep');
  const typeName = r.desc.typeName;
  if (typeName === ANY_TYPE_NAME) return writeAny(r.message as Message & AnyShape, registry, depth);
  if (SPECIAL_JSON.has(typeName)) return toJson(r.desc, r.message);
  const out: JsonObject = {};
  for (const member of r.desc.members) {
    if (member.kind === 'oneof') {
      const f = r.oneofCase(member);
      if (f) out[f.name] = writeValue(r, f, registry, depth);
      continue;
    }
    out[member.name] = writeValue(r, member, registry, depth);
  }
  return out;
}

interface AnyShape {
  typeUrl: string;
  value: Uint8Array;
}

function writeAny(any: AnyShape, registry: Registry, depth: number): JsonValue {
  if (any.typeUrl === '' && any.value.length === 0) return {};
  const inner = registry.getMessage(typeNameOfUrl(any.typeUrl));
  // The interface registry's AnyResolver error (cosmos-sdk codec/types/interface_registry.go Resolve).
  if (!inner) throw new JsonCodecError(`unable to resolve type URL ${any.typeUrl}`);
  let m: Message;
  try {
    m = fromBinary(inner, any.value);
  } catch (e) {
    throw new JsonCodecError(`cannot decode ${any.typeUrl}: ${(e as Error).message}`);
  }
  if (inner.typeName === ANY_TYPE_NAME || SPECIAL_JSON.has(inner.typeName)) {
    return { '@type': any.typeUrl, value: writeMessage(reflect(inner, m), registry, depth + 1) };
  }
  const fields = writeMessage(reflect(inner, m), registry, depth + 1) as JsonObject;
  return { '@type': any.typeUrl, ...fields };
}

function writeValue(r: ReflectMessage, f: DescField, registry: Registry, depth: number): JsonValue {
  switch (f.fieldKind) {
    case 'scalar': {
      // Explicit presence (proto3 `optional`, proto2) unset: a nil pointer in Go → null.
      if (f.presence !== IMPLICIT && !f.oneof && !r.isSet(f)) return null;
      const v = r.get(f) as ScalarValueAny;
      // Empty implicit bytes are nil in Go (proto3 never sends them) → null.
      if (f.scalar === ScalarType.BYTES && !f.oneof && (v as Uint8Array).length === 0) return null;
      return writeScalar(f.scalar, v);
    }
    case 'enum':
      if (f.presence !== IMPLICIT && !f.oneof && !r.isSet(f)) return null;
      return writeEnum(f, r.get(f) as number);
    case 'message':
      return r.isSet(f) ? writeMessage(r.get(f) as ReflectMessage, registry, depth + 1) : null;
    case 'list': {
      const list = r.get(f) as ReflectList;
      const out: JsonValue[] = [];
      for (const item of list) {
        if (f.listKind === 'message') out.push(writeMessage(item as ReflectMessage, registry, depth + 1));
        else if (f.listKind === 'enum') out.push(writeEnum(f, item as number));
        else out.push(writeScalar(f.scalar, item as ScalarValueAny));
      }
      return out;
    }
    case 'map': {
      const map = r.get(f) as ReflectMap;
      const out: JsonObject = {};
      for (const [k, v] of map) {
        const key = String(k);
        if (f.mapKind === 'message') out[key] = writeMessage(v as ReflectMessage, registry, depth + 1);
        else if (f.mapKind === 'enum') out[key] = writeEnum(f, v as number);
        else out[key] = writeScalar(f.scalar, v as ScalarValueAny);
      }
      return out;
    }
  }
}

/** FeatureSet_FieldPresence.IMPLICIT. */
const IMPLICIT = 2;

type ScalarValueAny = number | bigint | string | boolean | Uint8Array;

function writeEnum(f: { enum: DescField['enum'] }, n: number): JsonValue {
  // jsonpb writes the number for a value the enum does not name.
  return f.enum?.value[n]?.name ?? n;
}

function writeScalar(t: ScalarType, v: ScalarValueAny): JsonValue {
  switch (t) {
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return String(v);
    case ScalarType.BYTES:
      return Buffer.from(v as Uint8Array).toString('base64');
    case ScalarType.DOUBLE:
      return writeFloat(v as number, false);
    case ScalarType.FLOAT:
      return writeFloat(v as number, true);
    case ScalarType.BOOL:
      return v as boolean;
    case ScalarType.STRING:
      return v as string;
    default:
      return v as number;
  }
}

/**
 * Non-finite floats as strings; a float32 with Go's shortest float32 form (strconv 'g', -1, 32):
 * 0.1f is 0.1, not the float64 digits 0.10000000149011612.
 */
function writeFloat(v: number, f32: boolean): JsonValue {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  if (!f32) return v;
  for (let p = 1; p <= 9; p++) {
    const s = Number(v.toPrecision(p));
    if (Math.fround(s) === v) return s;
  }
  return v;
}

// ------------------------------------------------------------------------------------------------
// Reading

export interface ReadOptions {
  /**
   * Also accept in-memory values (bigint, Uint8Array, `{typeUrl, value}` Anys) and skip unknown
   * keys: for plain objects built by code rather than parsed from a request.
   */
  lenient?: boolean;
}

/** A message from the SDK's JSON. Throws JsonCodecError naming the field. */
export function fromSdkJson<T extends Message = Message>(desc: DescMessage, json: unknown, registry: Registry, opts: ReadOptions = {}): T {
  return readMessage(desc, json, registry, opts, desc.typeName, 0) as T;
}

/** Field lookup by proto name and JSON name, per message type. */
const fieldIndex = new WeakMap<DescMessage, Map<string, DescField>>();

export function fieldByName(desc: DescMessage, name: string): DescField | undefined {
  let m = fieldIndex.get(desc);
  if (!m) {
    m = new Map();
    for (const f of desc.fields) {
      m.set(f.name, f);
      if (!m.has(f.jsonName)) m.set(f.jsonName, f);
    }
    fieldIndex.set(desc, m);
  }
  return m.get(name);
}

function readMessage(desc: DescMessage, json: unknown, registry: Registry, opts: ReadOptions, path: string, depth: number): Message {
  if (depth > MAX_DEPTH) throw new JsonCodecError(`${path}: nesting too deep`);
  if (desc.typeName === ANY_TYPE_NAME) return readAny(desc, json, registry, opts, path, depth);
  if (SPECIAL_JSON.has(desc.typeName)) {
    try {
      return fromJson(desc, json as JsonValue);
    } catch (e) {
      throw new JsonCodecError(`${path}: ${(e as Error).message}`);
    }
  }
  if (json === null || json === undefined) return create(desc);
  if (typeof json !== 'object' || Array.isArray(json) || json instanceof Uint8Array) {
    throw new JsonCodecError(`${path}: want an object for ${desc.typeName}, got ${describe(json)}`);
  }
  const msg = create(desc) as Message & Record<string, unknown>;
  const seen = new Set<DescField>();
  for (const [key, value] of Object.entries(json as Record<string, unknown>)) {
    const f = fieldByName(desc, key);
    if (!f) {
      if (opts.lenient) continue;
      throw new JsonCodecError(`unknown field ${JSON.stringify(key)} in ${desc.typeName}`);
    }
    const fpath = `${path}.${f.name}`;
    if (seen.has(f)) throw new JsonCodecError(`${fpath}: set more than once`);
    seen.add(f);
    // null is "unset", except for google.protobuf.Value, where it is the null value.
    if ((value === null || value === undefined) && f.message?.typeName !== 'google.protobuf.Value') continue;
    if (f.oneof) {
      const o = msg[f.oneof.localName] as { case: string | undefined };
      if (o.case !== undefined) throw new JsonCodecError(`${path}: more than one field of oneof ${f.oneof.name} is set`);
      msg[f.oneof.localName] = { case: f.localName, value: readSingular(f, value, registry, opts, fpath, depth) };
      continue;
    }
    msg[f.localName] = readField(f, value, registry, opts, fpath, depth);
  }
  return msg;
}

/** A field's value in the runtime shape @bufbuild/protobuf v2 messages use. */
export function readField(f: DescField, value: unknown, registry: Registry, opts: ReadOptions, path: string, depth: number): unknown {
  switch (f.fieldKind) {
    case 'list': {
      if (!Array.isArray(value)) throw new JsonCodecError(`${path}: want an array, got ${describe(value)}`);
      return value.map((v, i) => {
        const p = `${path}[${i}]`;
        if (v === null) throw new JsonCodecError(`${p}: null in a list`);
        if (f.listKind === 'message') return readMessage(f.message, v, registry, opts, p, depth + 1);
        if (f.listKind === 'enum') return readEnum(f.enum, v, p);
        return readScalar(f.scalar, v, f.longAsString, opts, p);
      });
    }
    case 'map': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new JsonCodecError(`${path}: want an object, got ${describe(value)}`);
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        const p = `${path}[${JSON.stringify(k)}]`;
        const key = String(readScalar(f.mapKey, mapKeyJson(f.mapKey, k, p), false, opts, p));
        if (f.mapKind === 'message') out[key] = readMessage(f.message, v, registry, opts, p, depth + 1);
        else if (f.mapKind === 'enum') out[key] = readEnum(f.enum, v, p);
        else out[key] = readScalar(f.scalar, v, false, opts, p);
      }
      return out;
    }
    default:
      return readSingular(f, value, registry, opts, path, depth);
  }
}

function readSingular(f: DescField, value: unknown, registry: Registry, opts: ReadOptions, path: string, depth: number): unknown {
  if (f.fieldKind === 'message') return readMessage(f.message, value, registry, opts, path, depth + 1);
  if (f.fieldKind === 'enum') return readEnum(f.enum, value, path);
  if (f.fieldKind === 'scalar') return readScalar(f.scalar, value, f.longAsString, opts, path);
  throw new JsonCodecError(`${path}: unexpected field kind`);
}

/** Map keys are strings in JSON; bool keys must be "true"/"false", numeric keys numerals. */
function mapKeyJson(t: ScalarType, k: string, path: string): unknown {
  if (t === ScalarType.BOOL) {
    if (k === 'true') return true;
    if (k === 'false') return false;
    throw new JsonCodecError(`${path}: invalid bool key`);
  }
  return k;
}

function readAny(desc: DescMessage, json: unknown, registry: Registry, opts: ReadOptions, path: string, depth: number): Message {
  if (json === null || json === undefined) return create(desc);
  if (typeof json !== 'object' || Array.isArray(json)) throw new JsonCodecError(`${path}: want an object for Any, got ${describe(json)}`);
  const o = json as Record<string, unknown>;
  if (opts.lenient && (o['value'] instanceof Uint8Array || 'typeUrl' in o || 'type_url' in o) && !('@type' in o)) {
    const url = o['typeUrl'] ?? o['type_url'];
    const value = o['value'];
    return create(desc, { typeUrl: typeof url === 'string' ? url : '', value: value instanceof Uint8Array ? value : new Uint8Array(0) } as never);
  }
  const keys = Object.keys(o);
  if (keys.length === 0) return create(desc);
  const url = o['@type'];
  if (typeof url !== 'string' || url === '') throw new JsonCodecError(`${path}: Any without "@type"`);
  const inner = registry.getMessage(typeNameOfUrl(url));
  if (!inner) throw new JsonCodecError(`${path}: unable to resolve type URL ${url}`);
  let m: Message;
  if (inner.typeName === ANY_TYPE_NAME || SPECIAL_JSON.has(inner.typeName)) {
    m = readMessage(inner, o['value'], registry, opts, `${path}.value`, depth + 1);
  } else {
    const rest: Record<string, unknown> = {};
    for (const k of keys) if (k !== '@type') rest[k] = o[k];
    m = readMessage(inner, rest, registry, opts, path, depth + 1);
  }
  return create(desc, { typeUrl: url, value: toBinary(inner, m) } as never);
}

function readEnum(e: NonNullable<DescField['enum']>, v: unknown, path: string): number {
  if (typeof v === 'string') {
    const found = e.values.find((x) => x.name === v);
    if (found) return found.number;
    throw new JsonCodecError(`${path}: unknown value ${JSON.stringify(v)} for enum ${e.typeName}`);
  }
  if (typeof v === 'number' && Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31) {
    if (!e.open && e.value[v] === undefined) throw new JsonCodecError(`${path}: unknown value ${v} for enum ${e.typeName}`);
    return v;
  }
  throw new JsonCodecError(`${path}: want an enum name or number for ${e.typeName}, got ${describe(v)}`);
}

const INT_RANGE: Partial<Record<ScalarType, [bigint, bigint]>> = {
  [ScalarType.INT32]: [-(1n << 31n), (1n << 31n) - 1n],
  [ScalarType.SINT32]: [-(1n << 31n), (1n << 31n) - 1n],
  [ScalarType.SFIXED32]: [-(1n << 31n), (1n << 31n) - 1n],
  [ScalarType.UINT32]: [0n, (1n << 32n) - 1n],
  [ScalarType.FIXED32]: [0n, (1n << 32n) - 1n],
  [ScalarType.INT64]: [-(1n << 63n), (1n << 63n) - 1n],
  [ScalarType.SINT64]: [-(1n << 63n), (1n << 63n) - 1n],
  [ScalarType.SFIXED64]: [-(1n << 63n), (1n << 63n) - 1n],
  [ScalarType.UINT64]: [0n, (1n << 64n) - 1n],
  [ScalarType.FIXED64]: [0n, (1n << 64n) - 1n],
};

const is64 = (t: ScalarType) =>
  t === ScalarType.INT64 || t === ScalarType.UINT64 || t === ScalarType.SINT64 || t === ScalarType.FIXED64 || t === ScalarType.SFIXED64;

/** A scalar from JSON (proto3 JSON input rules, plus in-memory values when lenient). */
export function readScalar(t: ScalarType, v: unknown, longAsString: boolean, opts: ReadOptions, path: string): unknown {
  const bad = (what: string): never => {
    throw new JsonCodecError(`${path}: want ${what}, got ${describe(v)}`);
  };
  switch (t) {
    case ScalarType.STRING:
      return typeof v === 'string' ? v : bad('a string');
    case ScalarType.BOOL:
      return typeof v === 'boolean' ? v : bad('a boolean');
    case ScalarType.BYTES: {
      if (v instanceof Uint8Array && opts.lenient) return v;
      if (typeof v !== 'string') return bad('base64 bytes');
      const b = decodeBase64(v);
      return b ?? bad('base64 bytes');
    }
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT: {
      let n: number;
      if (typeof v === 'number') n = v;
      else if (v === 'NaN') return NaN;
      else if (v === 'Infinity') return Infinity;
      else if (v === '-Infinity') return -Infinity;
      else if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) n = Number(v);
      else return bad('a number');
      if (t === ScalarType.FLOAT && Number.isFinite(n) && Math.abs(n) > 3.4028234663852886e38) bad('a float32 in range');
      return n;
    }
    default: {
      let b: bigint;
      if (typeof v === 'bigint' && opts.lenient) b = v;
      else if (typeof v === 'number') {
        if (!Number.isInteger(v)) return bad('an integer');
        if (is64(t) && !Number.isSafeInteger(v)) return bad('an integer given as a string (beyond 2^53)');
        b = BigInt(v);
      } else if (typeof v === 'string' && /^-?\d+$/.test(v)) b = BigInt(v);
      else return bad('an integer');
      const [lo, hi] = INT_RANGE[t]!;
      if (b < lo || b > hi) return bad(`an integer in [${lo}, ${hi}]`);
      if (is64(t)) return longAsString ? b.toString() : b;
      return Number(b);
    }
  }
}

/** Standard or URL-safe base64, padding optional (jsonpb and grpc-gateway accept both). */
export function decodeBase64(s: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(s)) return null;
  const body = s.replace(/=+$/, '');
  if (body.length % 4 === 1) return null;
  return new Uint8Array(Buffer.from(body.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (v instanceof Uint8Array) return 'bytes';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  return String(v);
}

/** One field of a message in the SDK's JSON (grpc-gateway `response_body`). */
export function fieldToSdkJson(desc: DescMessage, msg: Message, field: DescField, registry: Registry): JsonValue {
  return writeValue(reflect(desc, msg), field, registry, 0);
}
