/**
 * Request fields from URL query parameters and path variables, as grpc-gateway v1 fills them
 * (runtime/query.go PopulateQueryParameters / PopulateFieldFromPath, runtime/convert.go;
 * grpc-ecosystem/grpc-gateway:runtime/query.go):
 * - a key is a dotted field path (`pagination.limit`); each part is a proto name or a JSON name;
 *   `key[k]=v` sets map entry k of field `key`;
 * - a key whose path does not name a field is ignored; a key on a field that the path or the body
 *   already fills is skipped;
 * - a scalar takes the first value (the rest are ignored); a repeated field takes every value;
 * - numbers parse as Go's strconv with base 0 (`0x10`, `010` octal, `1_000`); bools as
 *   strconv.ParseBool; bytes as standard base64, else URL-safe base64; enums by name or by a
 *   number the enum defines; Timestamp as RFC 3339, Duration as Go's `1h2m3.5s`, wrappers and
 *   FieldMask by value; other message types are refused;
 * - errors read like Go's (`strconv.ParseUint: parsing "x": invalid syntax`); the gateway answers
 *   them InvalidArgument.
 */
import { create, fromJson, ScalarType, type DescField, type DescMessage, type Message } from '@bufbuild/protobuf';
import { fieldByName } from './json.js';

export class QueryParamError extends Error {
  readonly code = 'QUERY_PARAM';
  constructor(message: string) {
    super(message);
    this.name = 'QueryParamError';
  }
}

/** Field paths already filled (path variables, body field): keys under them are skipped. */
export type FieldFilter = readonly (readonly string[])[];

/** utilities.DoubleArray.HasCommonPrefix: some filter path is a prefix of `path`. */
function filtered(filter: FieldFilter, path: readonly string[]): boolean {
  return filter.some((f) => f.length <= path.length && f.every((p, i) => p === path[i]));
}

/** A dotted path with each resolvable part written as its proto name. */
export function protoPath(desc: DescMessage, path: readonly string[]): string[] {
  const out: string[] = [];
  let d: DescMessage | undefined = desc;
  for (const p of path) {
    const f: DescField | undefined = d ? fieldByName(d, p) : undefined;
    out.push(f?.name ?? p);
    d = f?.fieldKind === 'message' ? f.message : undefined;
  }
  return out;
}

/** Fills `msg` from query parameters (name → values, in arrival order). */
export function populateQueryParams(desc: DescMessage, msg: Message, params: ReadonlyMap<string, readonly string[]>, filter: FieldFilter): void {
  for (const [rawKey, rawValues] of params) {
    let key = rawKey;
    let values = rawValues;
    const m = /^(.*)\[(.*)\]$/.exec(rawKey);
    if (m) {
      key = m[1]!;
      values = [m[2]!, ...rawValues];
    }
    const path = key.split('.');
    // Compared by proto names, so `accountId=` cannot override the `{account_id}` variable
    // (grpc-gateway v1 compares the names as written and lets it).
    if (filtered(filter, protoPath(desc, path))) continue;
    populatePath(desc, msg, path, values);
  }
}

/** Sets the field at a dotted path from a path variable (PopulateFieldFromPath). */
export function populatePathParam(desc: DescMessage, msg: Message, fieldPath: string, value: string): void {
  populatePath(desc, msg, fieldPath.split('.'), [value], true);
}

function populatePath(desc: DescMessage, msg: Message, path: readonly string[], values: readonly string[], fromPath = false): void {
  let d = desc;
  let target = msg as Message & Record<string, unknown>;
  for (let i = 0; i < path.length; i++) {
    const name = path[i]!;
    const last = i === path.length - 1;
    const f = fieldByName(d, name);
    // runtime/query.go: a field that is not there is logged and ignored (a path variable that is
    // not there is a bad template, refused when routes are built).
    if (!f) return;
    if (f.oneof) {
      const o = target[f.oneof.localName] as { case: string | undefined };
      if (o.case !== undefined && o.case !== f.localName) throw new QueryParamError(`field already set for ${f.oneof.name} oneof`);
    }
    if (!last) {
      if (f.fieldKind === 'list') throw new QueryParamError(`unexpected repeated field in ${path.join('.')}`);
      if (f.fieldKind !== 'message') throw new QueryParamError(`unexpected nested field ${path[i + 1]} in ${path.slice(0, i + 1).join('.')}`);
      let child = getSingular(target, f) as (Message & Record<string, unknown>) | undefined;
      if (child === undefined) {
        child = create(f.message) as Message & Record<string, unknown>;
        setSingular(target, f, child);
      }
      target = child;
      d = f.message;
      continue;
    }
    if (values.length === 0) throw new QueryParamError(`no value of field: ${path.join('.')}`);
    switch (f.fieldKind) {
      case 'list': {
        // A path variable bound to a repeated field is a comma-separated list (runtime.StringSlice etc.).
        const items = fromPath ? values[0]!.split(',') : values;
        if (f.listKind === 'message') throw new QueryParamError(`unsupported field type ${f.message.typeName}`);
        target[f.localName] = items.map((v) => (f.listKind === 'enum' ? convertEnum(f.enum, v) : convertScalar(f.scalar, v, f.longAsString)));
        return;
      }
      case 'map': {
        if (values.length !== 2) throw new QueryParamError(`more than one value provided for key ${values[0]} in map ${f.name}`);
        const k = String(convertScalar(f.mapKey, values[0]!, false));
        const v = f.mapKind === 'enum' ? convertEnum(f.enum, values[1]!) : f.mapKind === 'scalar' ? convertScalar(f.scalar, values[1]!, false) : undefined;
        if (v === undefined) throw new QueryParamError(`unsupported value type in map ${f.name}`);
        (target[f.localName] as Record<string, unknown>)[k] = v;
        return;
      }
      case 'message':
        setSingular(target, f, convertWellKnown(f.message, values[0]!));
        return;
      case 'enum':
        setSingular(target, f, convertEnum(f.enum, values[0]!));
        return;
      default:
        setSingular(target, f, convertScalar(f.scalar, values[0]!, f.longAsString));
    }
  }
}

function getSingular(target: Record<string, unknown>, f: DescField): unknown {
  if (f.oneof) {
    const o = target[f.oneof.localName] as { case: string | undefined; value?: unknown };
    return o.case === f.localName ? o.value : undefined;
  }
  return target[f.localName];
}

function setSingular(target: Record<string, unknown>, f: DescField, value: unknown): void {
  if (f.oneof) target[f.oneof.localName] = { case: f.localName, value };
  else target[f.localName] = value;
}

function convertEnum(e: NonNullable<DescField['enum']>, v: string): number {
  const byName = e.values.find((x) => x.name === v);
  if (byName) return byName.number;
  // convertEnum: strconv.Atoi, then the number must be one the enum defines.
  if (/^[+-]?\d+$/.test(v)) {
    const n = Number(v);
    if (e.value[n] !== undefined) return n;
  }
  throw new QueryParamError(`${v} is not a valid ${e.typeName}`);
}

const BITS: Partial<Record<ScalarType, { signed: boolean; bits: number; fn: string }>> = {
  [ScalarType.INT32]: { signed: true, bits: 32, fn: 'ParseInt' },
  [ScalarType.SINT32]: { signed: true, bits: 32, fn: 'ParseInt' },
  [ScalarType.SFIXED32]: { signed: true, bits: 32, fn: 'ParseInt' },
  [ScalarType.INT64]: { signed: true, bits: 64, fn: 'ParseInt' },
  [ScalarType.SINT64]: { signed: true, bits: 64, fn: 'ParseInt' },
  [ScalarType.SFIXED64]: { signed: true, bits: 64, fn: 'ParseInt' },
  [ScalarType.UINT32]: { signed: false, bits: 32, fn: 'ParseUint' },
  [ScalarType.FIXED32]: { signed: false, bits: 32, fn: 'ParseUint' },
  [ScalarType.UINT64]: { signed: false, bits: 64, fn: 'ParseUint' },
  [ScalarType.FIXED64]: { signed: false, bits: 64, fn: 'ParseUint' },
};

/** A scalar in the runtime shape (bigint for 64-bit integers unless `longAsString`). */
export function convertScalar(t: ScalarType, v: string, longAsString: boolean): unknown {
  switch (t) {
    case ScalarType.STRING:
      return v;
    case ScalarType.BOOL:
      return parseGoBool(v);
    case ScalarType.BYTES: {
      // runtime.Bytes: base64.StdEncoding, then base64.URLEncoding (both padded and strict).
      const b = strictBase64(v, false) ?? strictBase64(v, true);
      if (b === null) throw new QueryParamError(`illegal base64 data in ${JSON.stringify(v)}`);
      return b;
    }
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return parseGoFloat(v, t === ScalarType.FLOAT ? 32 : 64);
    default: {
      const spec = BITS[t]!;
      const n = parseGoInt(v, spec.signed, spec.bits, spec.fn);
      if (spec.bits === 64) return longAsString ? n.toString() : n;
      return Number(n);
    }
  }
}

/** strconv.ParseBool. */
export function parseGoBool(v: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  throw new QueryParamError(`strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
}

/**
 * strconv.ParseInt / ParseUint with base 0: optional sign (ParseInt only), `0x`/`0o`/`0b`
 * prefixes, a leading `0` for octal, underscores between digits.
 */
export function parseGoInt(v: string, signed: boolean, bits: number, fn = signed ? 'ParseInt' : 'ParseUint'): bigint {
  const syntax = () => new QueryParamError(`strconv.${fn}: parsing ${JSON.stringify(v)}: invalid syntax`);
  let s = v;
  let neg = false;
  if (signed && (s.startsWith('+') || s.startsWith('-'))) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '') throw syntax();
  let base = 10;
  let digits = s;
  let prefixed = false;
  if (/^0[xX]/.test(s)) {
    base = 16;
    digits = s.slice(2);
    prefixed = true;
  } else if (/^0[oO]/.test(s)) {
    base = 8;
    digits = s.slice(2);
    prefixed = true;
  } else if (/^0[bB]/.test(s)) {
    base = 2;
    digits = s.slice(2);
    prefixed = true;
  } else if (s.length > 1 && s[0] === '0') {
    base = 8;
    digits = s.slice(1);
    prefixed = true;
  }
  // underscoreOK: underscores only between digits, or right after a base prefix.
  if (digits.includes('_')) {
    const ok = (prefixed ? /^_?[0-9a-zA-Z]+(_[0-9a-zA-Z]+)*$/ : /^[0-9a-zA-Z]+(_[0-9a-zA-Z]+)*$/).test(digits);
    if (!ok) throw syntax();
    digits = digits.replace(/_/g, '');
  }
  if (digits === '') throw syntax();
  const valid = base === 16 ? /^[0-9a-fA-F]+$/ : base === 8 ? /^[0-7]+$/ : base === 2 ? /^[01]+$/ : /^[0-9]+$/;
  if (!valid.test(digits)) throw syntax();
  const mag = base === 10 ? BigInt(digits) : BigInt((base === 16 ? '0x' : base === 8 ? '0o' : '0b') + digits);
  const n = neg ? -mag : mag;
  const lo = signed ? -(1n << BigInt(bits - 1)) : 0n;
  const hi = signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
  if (n < lo || n > hi) throw new QueryParamError(`strconv.${fn}: parsing ${JSON.stringify(v)}: value out of range`);
  return n;
}

/** strconv.ParseFloat for decimal forms and inf/infinity/nan (any case). */
export function parseGoFloat(v: string, bits: 32 | 64): number {
  const lower = v.toLowerCase();
  if (lower === 'nan') return NaN;
  if (['inf', '+inf', 'infinity', '+infinity'].includes(lower)) return Infinity;
  if (['-inf', '-infinity'].includes(lower)) return -Infinity;
  if (!/^[+-]?(\d[\d_]*\.?[\d_]*|\.\d[\d_]*)([eE][+-]?\d+)?$/.test(v)) {
    throw new QueryParamError(`strconv.ParseFloat: parsing ${JSON.stringify(v)}: invalid syntax`);
  }
  const n = Number(v.replace(/_/g, ''));
  if (!Number.isFinite(n) || (bits === 32 && Math.abs(n) > 3.4028234663852886e38)) {
    throw new QueryParamError(`strconv.ParseFloat: parsing ${JSON.stringify(v)}: value out of range`);
  }
  return bits === 32 ? Math.fround(n) : n;
}

/** Go's base64.StdEncoding / URLEncoding DecodeString: padded, no stray characters. */
function strictBase64(v: string, url: boolean): Uint8Array | null {
  const re = url ? /^[A-Za-z0-9_-]*={0,2}$/ : /^[A-Za-z0-9+/]*={0,2}$/;
  if (!re.test(v) || v.length % 4 !== 0) return null;
  const b = Buffer.from(url ? v.replace(/-/g, '+').replace(/_/g, '/') : v, 'base64');
  return new Uint8Array(b);
}

const NS_PER: Record<string, bigint> = { ns: 1n, us: 1000n, 'µs': 1000n, 'μs': 1000n, ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n };

/** time.ParseDuration: `[-+]` then one or more `<decimal><unit>`; nanoseconds. */
export function parseGoDuration(v: string): bigint {
  const bad = () => new QueryParamError(`bad Duration: time: invalid duration ${JSON.stringify(v)}`);
  let s = v;
  let neg = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw bad();
  let total = 0n;
  const re = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;
  while (s !== '') {
    const m = re.exec(s);
    if (!m || (m[1] === '' && (m[2] ?? '') === '')) throw bad();
    const unit = NS_PER[m[3]!]!;
    const whole = BigInt(m[1] === '' ? '0' : m[1]!);
    const frac = m[2] ?? '';
    let part = whole * unit;
    if (frac !== '') part += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    total += part;
    s = s.slice(m[0].length);
  }
  return neg ? -total : total;
}

/** runtime/query.go populateField for message types: the well-known ones only. */
function convertWellKnown(desc: DescMessage, v: string): Message {
  const wkt = desc.typeName.startsWith('google.protobuf.') ? desc.typeName.slice('google.protobuf.'.length) : '';
  const fail = (what: string): never => {
    throw new QueryParamError(`bad ${what}: ${v}`);
  };
  switch (wkt) {
    case 'Timestamp': {
      if (v === 'null') return create(desc);
      try {
        return fromJson(desc, v);
      } catch {
        return fail('Timestamp');
      }
    }
    case 'Duration': {
      if (v === 'null') return create(desc);
      const ns = parseGoDuration(v);
      return create(desc, { seconds: ns / 1_000_000_000n, nanos: Number(ns % 1_000_000_000n) } as never);
    }
    case 'DoubleValue':
    case 'FloatValue': {
      let n: number;
      try {
        n = parseGoFloat(v, 64);
      } catch {
        return fail('DoubleValue');
      }
      return create(desc, { value: n } as never);
    }
    case 'Int64Value':
    case 'Int32Value':
    case 'UInt64Value':
    case 'UInt32Value': {
      const signed = wkt.startsWith('Int');
      if (!/^[+-]?\d+$/.test(v)) fail('DoubleValue');
      let n: bigint;
      try {
        n = parseGoInt(v, signed, wkt.includes('64') ? 64 : 32);
      } catch {
        return fail('DoubleValue');
      }
      return create(desc, { value: wkt.includes('64') ? n : Number(n) } as never);
    }
    case 'BoolValue':
      if (v !== 'true' && v !== 'false') fail('BoolValue');
      return create(desc, { value: v === 'true' } as never);
    case 'StringValue':
      return create(desc, { value: v } as never);
    case 'BytesValue': {
      const b = strictBase64(v, false);
      if (b === null) fail('BytesValue');
      return create(desc, { value: b } as never);
    }
    case 'FieldMask':
      return create(desc, { paths: v.split(',').filter((p) => p !== '') } as never);
    default:
      throw new QueryParamError(`field type ${desc.typeName} is not supported in query parameters`);
  }
}
