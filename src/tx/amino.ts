/**
 * Legacy amino JSON of protobuf messages, as SIGN_MODE_LEGACY_AMINO_JSON signs them
 * (cosmos-sdk: x/tx/signing/aminojson json_marshal.go, encoder.go; legacy x/auth/migrations/legacytx
 * StdSignBytes; cosmos/cosmos-sdk:x/auth/tx/direct.go).
 *
 * The encoder is driven by the amino annotations in proto/ (amino/amino.proto), read from the
 * generated descriptors, so every message and authorization type we define is covered:
 *
 * - a message packed in an Any is `{"type": <amino name>, "value": <message>}`; the amino name is
 *   `(amino.name)` (spec `chain-sdk/MsgSend`; upstream `cosmos-sdk/MsgSend` with upstreamNames),
 *   or the type URL for a message without one. Messages in ordinary fields are not wrapped;
 * - fields are keyed by proto name, or `(amino.field_name)`; zero values (0, "", false, empty
 *   bytes, empty lists, unset messages) are omitted unless `(amino.dont_omitempty)`;
 * - 64-bit integers are strings, 32-bit ones numbers, enums numbers, bytes base64, Timestamps
 *   RFC 3339 with trailing zeros of the fraction trimmed (Go RFC3339Nano), Durations nanoseconds
 *   as a string;
 * - `(amino.encoding) = "legacy_coins"`: an empty coin list is `[]`; a `chain.Int` scalar string
 *   that is empty is `"0"`;
 * - `(amino.message_encoding) = "key_field"`: the message is its `key` bytes (base64);
 *   `"threshold_string"`: `{"threshold": "<k>", "pubkeys": [<keys>]}`;
 * - a oneof with `(amino.oneof_name)` on its members is
 *   `"<Oneof>": {"type": <oneof_name>, "value": {"<member>": <value>}}` (the Go field name:
 *   `"Validators"`), and `null` when unset.
 *
 * Output is canonical: object keys sorted at every level, no whitespace, and Go's encoding/json
 * string escaping (`<`, `>`, `&`, U+2028, U+2029 as \uXXXX). @cosmjs/amino escapes only `<>&`,
 * so the two differ only on U+2028/U+2029, where we follow the SDK (which verifies).
 */
import { fromBinary, getOption, hasOption, ScalarType, type DescField, type DescMessage, type Message } from '@bufbuild/protobuf';
import type { Any } from '@bufbuild/protobuf/wkt';
import {
  dont_omitempty as dontOmitEmptyOption,
  field_name as fieldNameOption,
  message_encoding as messageEncodingOption,
  name as aminoNameOption,
  oneof_name as oneofNameOption,
} from '../gen/amino/amino_pb.js';
import { scalar as scalarOption } from '../gen/chain_proto/chain_pb.js';
import { createNames } from '../names/index.js';
import { goJsonStringify } from '../proto/json.js';
import { resolveTypeUrl, UnknownTypeUrlError, type EmitNames } from '../proto/registry.js';

export type AminoJson = string | number | boolean | null | AminoJson[] | { [k: string]: AminoJson };

export interface AminoOptions extends EmitNames {}

const SPEC = createNames({ upstreamNames: false });
const UPSTREAM = createNames({ upstreamNames: true });

/**
 * Upstream amino names that the names registry cannot derive from the spec spelling: upstream
 * registers the ML-DSA-65 keys under `cometbft/`, not `tendermint/` (cosmos/cosmos-sdk:crypto/keys/mldsa).
 */
const UPSTREAM_AMINO_OVERRIDES = new Map<string, string>([
  ['consensus/PubKeyMlDsa65', 'cometbft/PubKeyMlDsa65'],
  ['consensus/PrivKeyMlDsa65', 'cometbft/PrivKeyMlDsa65'],
]);

/** An amino name (as written in proto/, spec spelling) in the emit spelling. */
export function emitAminoName(specName: string, opts: AminoOptions = {}): string {
  if (opts.upstreamNames !== true) return SPEC.aminoName(specName);
  return UPSTREAM_AMINO_OVERRIDES.get(specName) ?? UPSTREAM.aminoName(specName);
}

/** The `(amino.name)` of a message type in the emit spelling, or undefined when it has none. */
export function aminoNameOf(desc: DescMessage, opts: AminoOptions = {}): string | undefined {
  const name = messageInfo(desc).aminoName;
  return name === undefined ? undefined : emitAminoName(name, opts);
}

type Obj = Record<string, unknown>;

/** Option lookups decode descriptor options; cache them per descriptor (sign-bytes hot path). */
interface FieldInfo {
  name: string;
  keep: boolean;
  intScalar: boolean;
  /** `(amino.oneof_name)`, spec spelling, or undefined. */
  oneofName: string | undefined;
}
const fieldInfos = new WeakMap<DescField, FieldInfo>();

function info(f: DescField): FieldInfo {
  let i = fieldInfos.get(f);
  if (i === undefined) {
    i = {
      name: hasOption(f, fieldNameOption) ? getOption(f, fieldNameOption) : f.name,
      keep: hasOption(f, dontOmitEmptyOption) && getOption(f, dontOmitEmptyOption),
      intScalar: hasOption(f, scalarOption) && getOption(f, scalarOption) === 'chain.Int',
      oneofName: hasOption(f, oneofNameOption) ? getOption(f, oneofNameOption) : undefined,
    };
    fieldInfos.set(f, i);
  }
  return i;
}

const messageInfos = new WeakMap<DescMessage, { aminoName: string | undefined; encoding: string }>();

function messageInfo(desc: DescMessage): { aminoName: string | undefined; encoding: string } {
  let i = messageInfos.get(desc);
  if (i === undefined) {
    i = {
      aminoName: hasOption(desc, aminoNameOption) ? getOption(desc, aminoNameOption) : undefined,
      encoding: hasOption(desc, messageEncodingOption) ? getOption(desc, messageEncodingOption) : '',
    };
    messageInfos.set(desc, i);
  }
  return i;
}

function b64(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
}

function isZeroScalar(type: ScalarType, v: unknown): boolean {
  switch (type) {
    case ScalarType.STRING:
      return v === '';
    case ScalarType.BYTES:
      return (v as Uint8Array).length === 0;
    case ScalarType.BOOL:
      return v === false;
    default:
      return v === 0 || v === 0n;
  }
}

function scalarToAmino(type: ScalarType, v: unknown): AminoJson {
  switch (type) {
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return String(v);
    case ScalarType.BYTES:
      return b64(v as Uint8Array);
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      if (!Number.isFinite(v as number)) throw new Error(`amino JSON cannot encode ${String(v)}`);
      return v as number;
    default:
      return v as AminoJson;
  }
}

/** Go time.RFC3339Nano in UTC: fraction without trailing zeros, none when zero. */
export function formatRfc3339Nano(seconds: bigint, nanos: number): string {
  const ms = seconds * 1000n;
  const d = new Date(Number(ms));
  if (Number.isNaN(d.getTime())) throw new Error('timestamp out of range');
  const base = d.toISOString().slice(0, 19);
  if (nanos === 0) return `${base}Z`;
  const frac = String(nanos).padStart(9, '0').replace(/0+$/, '');
  return `${base}.${frac}Z`;
}

function wktToAmino(desc: DescMessage, msg: Obj): AminoJson | undefined {
  switch (desc.typeName) {
    case 'google.protobuf.Timestamp':
      return formatRfc3339Nano(msg['seconds'] as bigint, msg['nanos'] as number);
    case 'google.protobuf.Duration':
      // time.Duration is an int64 of nanoseconds; amino writes int64 as a string.
      return String((msg['seconds'] as bigint) * 1_000_000_000n + BigInt(msg['nanos'] as number));
    default:
      return undefined;
  }
}

/**
 * The key of an amino-wrapped oneof: the Go field name of the gogoproto oneof, which has no JSON
 * tag, so legacy amino prints it as is (`validators` → `Validators`; x/tx uses strcase.ToCamel).
 */
function oneofKey(name: string): string {
  return name
    .split('_')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
}

function fieldName(f: DescField): string {
  return info(f).name;
}

function dontOmitEmpty(f: DescField): boolean {
  return info(f).keep;
}

/** `(chain_proto.scalar) = "chain.Int"` strings: an empty one is "0", as a nil math.Int prints
 * (x/tx aminojson cosmosIntEncoder). */
function isIntScalar(f: DescField): boolean {
  return info(f).intScalar;
}

function fieldScalarToAmino(f: DescField & { scalar: ScalarType }, v: unknown): AminoJson {
  if (v === '' && isIntScalar(f)) return '0';
  return scalarToAmino(f.scalar, v);
}

function singularToAmino(f: DescField, v: unknown, opts: AminoOptions): AminoJson {
  switch (f.fieldKind) {
    case 'scalar':
      return fieldScalarToAmino(f, v);
    case 'enum':
      return v as number;
    case 'message':
      return messageToAmino(f.message, v as Obj, opts);
    default:
      throw new Error(`unexpected field kind ${f.fieldKind}`);
  }
}

/** A message's amino JSON value (not wrapped in {type, value}). */
function messageToAmino(desc: DescMessage, msg: Obj | undefined, opts: AminoOptions): AminoJson {
  if (desc.typeName === 'google.protobuf.Any') {
    if (msg === undefined) return null;
    return anyToAmino(msg as unknown as Any, opts);
  }
  if (msg === undefined) {
    // dont_omitempty on an unset message: the zero value of the struct.
    msg = {};
    for (const f of desc.fields) {
      if (f.oneof !== undefined) msg[f.oneof.localName] = { case: undefined };
      else if (f.fieldKind === 'list') msg[f.localName] = [];
      else if (f.fieldKind === 'map') msg[f.localName] = {};
      else if (f.fieldKind === 'scalar') msg[f.localName] = zeroScalar(f.scalar);
      else if (f.fieldKind === 'enum') msg[f.localName] = 0;
    }
  }
  const wkt = wktToAmino(desc, msg);
  if (wkt !== undefined) return wkt;

  const enc = messageInfo(desc).encoding;
  if (enc === 'key_field') {
    const key = msg['key'];
    if (!(key instanceof Uint8Array)) throw new Error(`${desc.typeName}: key_field encoding needs a bytes field "key"`);
    return b64(key);
  }
  if (enc === 'threshold_string') {
    const keys = (msg['publicKeys'] as Any[] | undefined) ?? [];
    return { threshold: String(msg['threshold'] as number), pubkeys: keys.map((k) => anyToAmino(k, opts)) };
  }
  if (enc !== '') throw new Error(`${desc.typeName}: unsupported amino message encoding ${enc}`);

  const out: { [k: string]: AminoJson } = {};
  const oneofsDone = new Set<string>();
  for (const f of desc.fields) {
    if (f.oneof !== undefined) {
      const oneof = f.oneof;
      const cur = msg[oneof.localName] as { case?: string; value?: unknown } | undefined;
      const oneofName = info(f).oneofName;
      const wrapped = oneofName !== undefined;
      if (cur?.case === undefined) {
        // x/tx writes one null per empty (amino-named) oneof.
        if (wrapped && !oneofsDone.has(oneof.name)) out[oneofKey(oneof.name)] = null;
        oneofsDone.add(oneof.name);
        continue;
      }
      if (cur.case !== f.localName) continue;
      oneofsDone.add(oneof.name);
      const value = singularToAmino(f, cur.value, opts);
      if (wrapped) {
        out[oneofKey(oneof.name)] = { type: emitAminoName(oneofName, opts), value: { [fieldName(f)]: value } };
      } else {
        out[fieldName(f)] = value;
      }
      continue;
    }
    const v = msg[f.localName];
    const keep = dontOmitEmpty(f);
    const name = fieldName(f);
    switch (f.fieldKind) {
      case 'list': {
        const list = (v as unknown[] | undefined) ?? [];
        if (list.length === 0) {
          // legacy_coins (and any dont_omitempty list) write [] rather than null.
          if (keep) out[name] = [];
          break;
        }
        out[name] = list.map((e): AminoJson => {
          if (f.listKind === 'message') return messageToAmino(f.message, e as Obj, opts);
          if (f.listKind === 'enum') return e as number;
          return scalarToAmino(f.scalar, e);
        });
        break;
      }
      case 'map': {
        const entries = Object.entries((v as Obj | undefined) ?? {});
        if (entries.length === 0 && !keep) break;
        const m: { [k: string]: AminoJson } = {};
        for (const [k, e] of entries) {
          m[k] = f.mapKind === 'message' ? messageToAmino(f.message, e as Obj, opts) : f.mapKind === 'enum' ? (e as number) : scalarToAmino(f.scalar, e);
        }
        out[name] = m;
        break;
      }
      case 'message':
        if (v === undefined && !keep) break;
        out[name] = messageToAmino(f.message, v as Obj | undefined, opts);
        break;
      case 'enum':
        if (v === 0 && !keep) break;
        out[name] = v as number;
        break;
      case 'scalar':
        if ((v === undefined || isZeroScalar(f.scalar, v)) && !keep) break;
        out[name] = fieldScalarToAmino(f, v ?? zeroScalar(f.scalar));
        break;
    }
  }
  return out;
}

function zeroScalar(type: ScalarType): unknown {
  switch (type) {
    case ScalarType.STRING:
      return '';
    case ScalarType.BYTES:
      return new Uint8Array(0);
    case ScalarType.BOOL:
      return false;
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return 0n;
    default:
      return 0;
  }
}

/** An Any as amino JSON: `{"type": <amino name or type URL>, "value": <packed message>}`. */
export function anyToAmino(any: Any, opts: AminoOptions = {}): AminoJson {
  const desc = resolveTypeUrl(any.typeUrl);
  if (desc === undefined) throw new UnknownTypeUrlError(any.typeUrl);
  const msg = fromBinary(desc, any.value) as unknown as Obj;
  return { type: aminoNameOf(desc, opts) ?? any.typeUrl, value: messageToAmino(desc, msg, opts) };
}

/** A message as amino JSON wrapped in `{"type", "value"}` (how sign docs list msgs). */
export function msgToAmino(desc: DescMessage, msg: Message, opts: AminoOptions = {}): AminoJson {
  const name = aminoNameOf(desc, opts);
  if (name === undefined) throw new Error(`${desc.typeName} has no amino name`);
  return { type: name, value: messageToAmino(desc, msg as unknown as Obj, opts) };
}

/** A message's amino JSON value, unwrapped (a field value, or a message without amino name). */
export function messageToAminoValue(desc: DescMessage, msg: Message, opts: AminoOptions = {}): AminoJson {
  return messageToAmino(desc, msg as unknown as Obj, opts);
}

function sortValue(v: AminoJson): AminoJson {
  if (Array.isArray(v)) return v.map(sortValue);
  if (v !== null && typeof v === 'object') {
    const out: { [k: string]: AminoJson } = {};
    // Go sorts map keys bytewise (UTF-8); for these ASCII keys that is code-unit order.
    for (const k of Object.keys(v).sort()) out[k] = sortValue(v[k]!);
    return out;
  }
  return v;
}

/** Canonical JSON text (cosmos-sdk: types/utils.go MustSortJSON): sorted keys, compact, Go escaping. */
export function sortedJsonStringify(v: AminoJson): string {
  return goJsonStringify(sortValue(v));
}
