/**
 * Decoding of node RPC requests and their parameters, with CometBFT 0.38's rules and error texts:
 * - JSON-RPC requests (rpc/jsonrpc/types/types.go RPCRequest.UnmarshalJSON, idFromInterface);
 *   bodies as http_json_handler.go reads them (a batch array, else one request) and websocket
 *   messages as ws_handler.go reads them (json.Decoder: the first value, no batches).
 * - JSON-RPC params (http_json_handler.go jsonParamsToArgs; libs/json decoder.go: 64-bit integers
 *   must be JSON strings, `[]byte` is base64, `HexBytes` is hex without 0x).
 * - URI params (http_uri_handler.go httpParamsToArgs: bare integers, 0x-hex, "quoted" strings,
 *   JSON arrays).
 * See cometbft/cometbft:rpc/jsonrpc/types/types.go, cometbft/cometbft:rpc/jsonrpc/server/http_uri_handler.go
 *
 * Errors are Go's error texts so that `error.data` matches CometBFT byte for byte in the common
 * cases; the one known difference is that raw JSON is re-serialised from the parsed value (so
 * `5.0` is quoted back as `5`).
 */
import { goInterfaceTypeName, goJsonKind, goQuote, goRuneU, goSyntaxError, goValueV, mayNestDeeperThan, RPC_JSON_MAX_DEPTH, scanJson } from '../server/gojson.js';
import type { JsonRpcId } from './envelope.js';

/**
 * Wire types of parameters (the Go types CometBFT declares, rpc/core/*.go):
 * - `int64`, `int`, `uint`: 64-bit integers (height, page, per_page, chunk, …) → `bigint`;
 * - `bool` → boolean; `string` and `query` (an event query, a string on the wire) → string;
 * - `bytes` (`[]byte`: base64 in JSON-RPC; 0x-hex or "raw" over URI) → Uint8Array;
 * - `hexbytes` (`HexBytes`: hex without 0x in JSON-RPC; 0x-hex or "raw" over URI) → Uint8Array;
 * - `array` (`[]string`, e.g. dial_peers' peers) → string[].
 */
/**
 * `json`: a Go struct parameter (broadcast_evidence's `types.Evidence`): any JSON value, handed to
 * the handler as its JSON text for the method to decode.
 */
export type ParamType = 'int64' | 'int' | 'uint' | 'bool' | 'string' | 'bytes' | 'hexbytes' | 'array' | 'query' | 'json';

export const PARAM_TYPES: readonly ParamType[] = ['int64', 'int', 'uint', 'bool', 'string', 'bytes', 'hexbytes', 'array', 'query', 'json'];

/** The handler-side value of each parameter type. */
export interface ParamValueMap {
  int64: bigint;
  int: bigint;
  uint: bigint;
  bool: boolean;
  string: string;
  query: string;
  bytes: Uint8Array;
  hexbytes: Uint8Array;
  array: string[];
  json: string;
}

export type ArgValue = ParamValueMap[ParamType];

/**
 * One declared parameter. `optional` is Go's pointer parameter (`height *int64`): absent (or
 * `null`) reaches the handler as `undefined`. A parameter that is not optional reaches the
 * handler with its zero value when absent (0n, false, '', empty bytes, []), exactly as CometBFT
 * passes Go zero values; the handler decides whether that is an error.
 */
export interface ParamSpec {
  readonly name: string;
  readonly type: ParamType;
  readonly optional?: boolean;
}

/** Decoded arguments by wire name; `undefined` = not given. */
export type Args = Record<string, ArgValue | undefined>;

/** A parameter could not be converted; the message is CometBFT's (Go's) error text. */
export class ParamError extends Error {
  readonly code = 'RPC_INVALID_PARAMS';
  constructor(message: string) {
    super(message);
    this.name = 'ParamError';
  }
}

/**
 * Input on which CometBFT's Go code panics (and its recover handler answers -32603 with id -1).
 * The message is the panic text.
 */
export class GoPanicError extends Error {
  readonly code = 'RPC_GO_PANIC';
  constructor(message: string) {
    super(message);
    this.name = 'GoPanicError';
  }
}

/** reflect.Call's panic when `params` is omitted for a method that takes arguments. */
export const TOO_FEW_ARGS_PANIC = 'reflect: Call with too few input arguments';

// ----------------------------------------------------------------------------------------------
// Values

const GO_TYPE: Record<ParamType, string> = {
  int64: 'int64',
  int: 'int',
  uint: 'uint',
  bool: 'bool',
  string: 'string',
  query: 'string',
  bytes: '[]uint8',
  hexbytes: 'bytes.HexBytes',
  array: '[]string',
  json: 'struct',
};

/** reflect.Kind names used in `got a hex string arg, but expected '<kind>'`. */
const GO_KIND: Record<ParamType, string> = {
  int64: 'int64',
  int: 'int',
  uint: 'uint',
  bool: 'bool',
  string: 'string',
  query: 'string',
  bytes: 'slice',
  hexbytes: 'slice',
  array: 'slice',
  json: 'struct',
};

const isIntType = (t: ParamType) => t === 'int64' || t === 'int' || t === 'uint';

export function zeroValue(t: ParamType): ArgValue {
  switch (t) {
    case 'int64':
    case 'int':
    case 'uint':
      return 0n;
    case 'bool':
      return false;
    case 'string':
    case 'query':
      return '';
    case 'bytes':
    case 'hexbytes':
      return new Uint8Array(0);
    case 'array':
      return [];
    case 'json':
      return '';
  }
}

/** Fills absent non-optional parameters with their zero values (in place). */
export function withDefaults(specs: readonly ParamSpec[], args: Args): Args {
  for (const p of specs) if (args[p.name] === undefined && !p.optional) args[p.name] = zeroValue(p.type);
  return args;
}

/**
 * reflect.Value.IsZero of the argument CometBFT would pass (rpc_func.go cacheableWithArgs): a nil
 * pointer, or a zero int/bool/string; decoded byte slices and arrays are never nil.
 */
export function isZeroArg(spec: ParamSpec, v: ArgValue | undefined): boolean {
  if (v === undefined) return true;
  if (spec.optional) return false;
  return v === 0n || v === false || v === '';
}

function typeError(kind: string, goType: string): ParamError {
  return new ParamError(`json: cannot unmarshal ${kind} into Go value of type ${goType}`);
}

const JSON_WS = /^[ \t\r\n]+|[ \t\r\n]+$/g;

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

/**
 * json.Unmarshal of `text` into a Go int64/int/uint: what libs/json does with the inside of a
 * quoted 64-bit integer. Syntax errors, `null` (zero), and strconv range errors as Go reports them.
 */
export function goParseInt(text: string, t: ParamType): bigint {
  // Fast path: up to 18 digits always fits; no leading zeros (Go's JSON grammar rejects them).
  if (/^-?(?:0|[1-9]\d{0,17})$/.test(text) && !(t === 'uint' && text[0] === '-')) return BigInt(text);
  const syntax = goSyntaxError(text);
  if (syntax !== null) throw new ParamError(syntax);
  const lit = text.replace(JSON_WS, '');
  const v: unknown = JSON.parse(lit);
  if (v === null) return 0n;
  if (typeof v !== 'number') throw typeError(goJsonKind(v), GO_TYPE[t]);
  const fail = () => new ParamError(`json: cannot unmarshal number ${lit} into Go value of type ${GO_TYPE[t]}`);
  if (!(t === 'uint' ? /^\d+$/ : /^-?\d+$/).test(lit)) throw fail();
  const n = BigInt(lit);
  if (t === 'uint' ? n > UINT64_MAX : n < INT64_MIN || n > INT64_MAX) throw fail();
  return n;
}

const B64 = (() => {
  const m = new Int16Array(256).fill(-1);
  const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < abc.length; i++) m[abc.charCodeAt(i)] = i;
  return m;
})();
const STRICT_B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * base64.StdEncoding.Decode as encoding/json uses it for `[]byte`: padding required, CR/LF
 * ignored, `illegal base64 data at input byte N` naming the offset Go names.
 */
export function goBase64Decode(s: string): Uint8Array {
  if (STRICT_B64.test(s)) return new Uint8Array(Buffer.from(s, 'base64'));
  const src = Buffer.from(s, 'utf8');
  const out: number[] = [];
  const corrupt = (n: number) => new ParamError(`illegal base64 data at input byte ${n}`);
  const nl = (c: number | undefined) => c === 0x0a || c === 0x0d;
  let si = 0;
  for (;;) {
    // One quantum of up to four symbols (encoding/base64 decodeQuantum).
    const d = [0, 0, 0, 0];
    let dlen = 4;
    let trailing: ParamError | null = null;
    for (let j = 0; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return new Uint8Array(out);
        throw corrupt(si - j);
      }
      const c = src[si++]!;
      const v = B64[c]!;
      if (v >= 0) {
        d[j] = v;
        continue;
      }
      if (nl(c)) {
        j--;
        continue;
      }
      if (c !== 0x3d || j < 2) throw corrupt(si - 1);
      if (j === 2) {
        // "==" is expected; the first "=" is consumed.
        while (si < src.length && nl(src[si])) si++;
        if (si === src.length) throw corrupt(src.length);
        if (src[si] !== 0x3d) throw corrupt(si - 1);
        si++;
      }
      while (si < src.length && nl(src[si])) si++;
      if (si < src.length) trailing = corrupt(si);
      dlen = j;
      break;
    }
    const val = (d[0]! << 18) | (d[1]! << 12) | (d[2]! << 6) | d[3]!;
    const bytes = [(val >> 16) & 0xff, (val >> 8) & 0xff, val & 0xff];
    for (let k = 0; k < dlen - 1; k++) out.push(bytes[k]!);
    if (trailing) throw trailing;
  }
}

const hexVal = (c: number) => (c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1);

/** hex.DecodeString: either case, `encoding/hex: invalid byte: U+0067 'g'`, odd-length error. */
export function goHexDecode(s: string): Uint8Array {
  if (s.length % 2 === 0 && /^[0-9a-fA-F]*$/.test(s)) return new Uint8Array(Buffer.from(s, 'hex'));
  const b = Buffer.from(s, 'utf8');
  const invalid = (c: number) => new ParamError(`encoding/hex: invalid byte: ${goRuneU(c)}`);
  let j = 1;
  for (; j < b.length; j += 2) {
    if (hexVal(b[j - 1]!) < 0) throw invalid(b[j - 1]!);
    if (hexVal(b[j]!) < 0) throw invalid(b[j]!);
  }
  if (b.length % 2 === 1) {
    if (hexVal(b[j - 1]!) < 0) throw invalid(b[j - 1]!);
    throw new ParamError('encoding/hex: odd length hex string');
  }
  return new Uint8Array(0); // unreachable: an even-length all-hex string took the fast path
}

/** Raw JSON text of a parsed value (Go keeps the raw bytes; we re-serialise). */
function rawJson(v: unknown): string {
  return JSON.stringify(v) ?? 'null';
}

/** The inside of a JSON string literal as raw text (escapes kept, as Go slices bz[1:len-1]). */
function rawStringBody(s: string): string {
  return rawJson(s).slice(1, -1);
}

/**
 * libs/json decoding of one parsed JSON value into a parameter type. `null` is "not given"
 * (a nil pointer, or the zero value).
 */
export function decodeJsonValue(spec: ParamSpec, v: unknown): ArgValue | undefined {
  if (v === null) return undefined;
  const t = spec.type;
  switch (t) {
    case 'int64':
    case 'int':
    case 'uint':
      // decoder.go: "invalid 64-bit integer encoding %q, expected string".
      if (typeof v !== 'string') throw new ParamError(`invalid 64-bit integer encoding ${goQuote(rawJson(v))}, expected string`);
      return goParseInt(rawStringBody(v), t);
    case 'bool':
      if (typeof v === 'boolean') return v;
      throw typeError(goJsonKind(v), 'bool');
    case 'string':
    case 'query':
      if (typeof v === 'string') return v;
      throw typeError(goJsonKind(v), 'string');
    case 'bytes':
      if (typeof v === 'string') return goBase64Decode(v);
      if (Array.isArray(v)) return goByteArray(v);
      throw typeError(goJsonKind(v), '[]uint8');
    case 'hexbytes':
      // libs/bytes HexBytes.UnmarshalJSON.
      if (typeof v !== 'string') throw new ParamError(`invalid hex string: ${rawJson(v)}`);
      return goHexDecode(rawStringBody(v));
    case 'json':
      // The value as JSON text; the method decodes it into its own type.
      return JSON.stringify(v);
    case 'array': {
      if (!Array.isArray(v)) throw typeError(goJsonKind(v), '[]json.RawMessage');
      const out: string[] = [];
      for (const e of v) {
        if (e === null) out.push('');
        else if (typeof e === 'string') out.push(e);
        else throw typeError(goJsonKind(e), 'string');
      }
      return out;
    }
  }
}

/** encoding/json decodes a JSON array of numbers into `[]byte` element by element. */
function goByteArray(v: unknown[]): Uint8Array {
  const out = new Uint8Array(v.length);
  let first: ParamError | null = null;
  v.forEach((e, i) => {
    if (e === null) return;
    if (typeof e !== 'number') {
      first ??= typeError(goJsonKind(e), 'uint8');
      return;
    }
    const lit = rawJson(e);
    if (!/^\d+$/.test(lit) || e > 255) {
      first ??= new ParamError(`json: cannot unmarshal number ${lit} into Go value of type uint8`);
      return;
    }
    out[i] = e;
  });
  if (first) throw first;
  return out;
}

/**
 * libs/json Unmarshal of raw text into a parameter type (http_uri_handler.go jsonStringToArg).
 * 64-bit integers and HexBytes look at the raw bytes before any JSON syntax check, as Go does.
 */
export function decodeRawText(spec: ParamSpec, text: string): ArgValue | undefined {
  if (text === '') throw new ParamError('cannot decode empty bytes');
  if (text === 'null') return undefined;
  const t = spec.type;
  if (isIntType(t)) {
    if (text[0] !== '"' || text[text.length - 1] !== '"') {
      throw new ParamError(`invalid 64-bit integer encoding ${goQuote(text)}, expected string`);
    }
    // decoder.go slices bz[1:len(bz)-1]; a lone `"` makes that slice panic.
    if (text.length === 1) throw new GoPanicError('runtime error: slice bounds out of range [1:0]');
    return goParseInt(text.slice(1, -1), t);
  }
  if (t === 'hexbytes') {
    if (text.length < 2 || text[0] !== '"' || text[text.length - 1] !== '"') throw new ParamError(`invalid hex string: ${text}`);
    return goHexDecode(text.slice(1, -1));
  }
  const syntax = goSyntaxError(text, RPC_JSON_MAX_DEPTH);
  if (syntax !== null) throw new ParamError(syntax);
  return decodeJsonValue(spec, JSON.parse(text));
}

// ----------------------------------------------------------------------------------------------
// JSON-RPC params

/** fmt `%v` of a []json.RawMessage: each element printed as its bytes, `[[34 49 34] [50]]`. */
function goRawList(items: unknown[]): string {
  return `[${items.map((e) => `[${[...Buffer.from(rawJson(e), 'utf8')].join(' ')}]`).join(' ')}]`;
}

/**
 * jsonParamsToArgs: `params` as an object (by name; unknown names ignored; missing names not
 * given) or an array (exactly one item per parameter, in order). `null` means all defaults.
 */
export function decodeJsonParams(specs: readonly ParamSpec[], raw: unknown): Args {
  const args: Args = {};
  if (raw === null) return args;
  if (Array.isArray(raw)) {
    if (raw.length !== specs.length) {
      const names = `[${specs.map((p) => p.name).join(' ')}]`;
      throw new ParamError(`expected ${specs.length} parameters (${names}), got ${raw.length} (${goRawList(raw)})`);
    }
    specs.forEach((p, i) => (args[p.name] = decodeJsonValue(p, raw[i])));
    return args;
  }
  if (typeof raw === 'object') {
    const o = raw as Record<string, unknown>;
    for (const p of specs) if (Object.hasOwn(o, p.name)) args[p.name] = decodeJsonValue(p, o[p.name]);
    return args;
  }
  throw new ParamError(
    `unknown type for JSON params: json: cannot unmarshal ${goJsonKind(raw)} into Go value of type []json.RawMessage. Expected map or array`,
  );
}

// ----------------------------------------------------------------------------------------------
// URI params

const RE_INT = /^-?[0-9]+$/;

/** One URI argument (http_uri_handler.go nonJSONStringToArg, then jsonStringToArg). */
export function decodeUriArg(spec: ParamSpec, arg: string): ArgValue | undefined {
  const t = spec.type;
  // A struct over URI is its JSON text (jsonStringToArg unmarshals it, so its syntax errors are
  // encoding/json's: `invalid character '%' looking for beginning of value`).
  if (t === 'json') {
    const syntax = goSyntaxError(arg, RPC_JSON_MAX_DEPTH);
    if (syntax !== null) throw new ParamError(syntax);
    return arg;
  }
  const expectingString = t === 'string' || t === 'query';
  const expectingBytes = t === 'bytes' || t === 'hexbytes';
  if (isIntType(t) && RE_INT.test(arg)) return goParseInt(arg, t);
  if (arg.length >= 2 && arg[0] === '0' && (arg[1] === 'x' || arg[1] === 'X')) {
    if (!expectingString && !expectingBytes) throw new ParamError(`got a hex string arg, but expected '${GO_KIND[t]}'`);
    const bytes = goHexDecode(arg.slice(2));
    return expectingString ? Buffer.from(bytes).toString('utf8') : bytes;
  }
  if (expectingBytes && arg[0] === '"' && arg[arg.length - 1] === '"') {
    // The raw UTF-8 of the quoted string, not base64 (`tx="name=satoshi"`).
    const syntax = goSyntaxError(arg);
    if (syntax !== null) throw new ParamError(syntax);
    const s: unknown = JSON.parse(arg);
    if (typeof s !== 'string') throw typeError(goJsonKind(s), 'string');
    return new Uint8Array(Buffer.from(s, 'utf8'));
  }
  return decodeRawText(spec, arg);
}

/** httpParamsToArgs: each parameter read with `get(name)`; an empty value is "not given". */
export function decodeUriParams(specs: readonly ParamSpec[], get: (name: string) => string): Args {
  const args: Args = {};
  for (const p of specs) {
    const arg = get(p.name);
    if (arg !== '') args[p.name] = decodeUriArg(p, arg);
  }
  return args;
}

// ----------------------------------------------------------------------------------------------
// Requests

/** One decoded JSON-RPC request (notifications are `null`). */
export interface RpcRequest {
  id: JsonRpcId;
  method: string;
  /** The parsed `params` member; only meaningful when `hasParams`. */
  params: unknown;
  /** False when the request had no `params` member at all (see TOO_FEW_ARGS_PANIC). */
  hasParams: boolean;
}

/** reflect's String() of the anonymous struct RPCRequest.UnmarshalJSON decodes into. */
const REQUEST_STRUCT =
  'struct { JSONRPC string "json:\\"jsonrpc\\""; ID interface {} "json:\\"id,omitempty\\""; Method string "json:\\"method\\""; Params json.RawMessage "json:\\"params\\"" }';

type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Go's json.Unmarshal of a whole buffer: JSON.parse for speed, Go's scanner for the error text
 * (and for the nesting limit, RPC_JSON_MAX_DEPTH, checked only when the body has that many brackets).
 */
export function parseGoJson(buf: Uint8Array): Decoded<unknown> {
  const b = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  let value: unknown;
  try {
    value = JSON.parse(b.toString('utf8'));
  } catch {
    const r = scanJson(b, 'unmarshal', RPC_JSON_MAX_DEPTH);
    return { ok: false, error: r.ok ? 'unexpected end of JSON input' : r.error };
  }
  if (mayNestDeeperThan(b, RPC_JSON_MAX_DEPTH)) {
    const r = scanJson(b, 'unmarshal', RPC_JSON_MAX_DEPTH);
    if (!r.ok) return { ok: false, error: r.error };
  }
  return { ok: true, value };
}

/** encoding/json's error for a non-string in a string field of the request struct, or null. */
function stringFieldError(name: string, x: unknown): string | null {
  return x !== null && typeof x !== 'string' ? `json: cannot unmarshal ${goJsonKind(x)} into Go struct field .${name} of type string` : null;
}

/** 2^63: float64 values from here on (and below -2^63) are outside Go's int on amd64. */
const TWO_63 = 2 ** 63;

/**
 * Go's `int(f)` of a float64 on amd64 (CVTTSD2SQ): truncation toward zero; outside [-2^63, 2^63)
 * the "integer indefinite" 0x8000000000000000, i.e. -2^63 (a float64, so exact here). No -0.
 */
function goIntOfFloat(f: number): number {
  const n = Math.trunc(f) || 0;
  return n >= TWO_63 || n < -TWO_63 ? -TWO_63 : n;
}

/** The id member's type error when its number overflows float64 (1e400), as Go words it. */
function idRangeError(raw: Uint8Array | undefined): string {
  // encoding/json convertNumber: UnmarshalTypeError{Value: "number " + literal}. JSON.parse has
  // made the literal Infinity, so it is read back from the text (only on this error path).
  const lit = raw === undefined ? null : idNumberLiteral(raw);
  return `json: cannot unmarshal number${lit === null ? '' : ` ${lit}`} into Go struct field .id of type float64`;
}

/**
 * The text of the first member of the top-level object in `raw` whose name folds to `id` and whose
 * value is a number literal that overflows float64: the one Go's decoder reports first. `raw` is
 * valid JSON up to the end of that object (later bytes are never read).
 */
function idNumberLiteral(raw: Uint8Array): string | null {
  const s = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8');
  const ws = (i: number) => {
    while (i < s.length && (s[i] === ' ' || s[i] === '\t' || s[i] === '\n' || s[i] === '\r')) i++;
    return i;
  };
  /** Index after the string literal that opens at `i`. */
  const stringEnd = (i: number) => {
    for (i++; i < s.length; i++) {
      if (s[i] === '\\') i++;
      else if (s[i] === '"') return i + 1;
    }
    return s.length;
  };
  /** Index after the value that starts at `i`. */
  const valueEnd = (i: number) => {
    if (s[i] === '"') return stringEnd(i);
    if (s[i] !== '{' && s[i] !== '[') {
      while (i < s.length && !',}] \t\r\n'.includes(s[i]!)) i++;
      return i;
    }
    let depth = 0;
    for (; i < s.length; i++) {
      const c = s[i];
      if (c === '"') i = stringEnd(i) - 1;
      else if (c === '{' || c === '[') depth++;
      else if ((c === '}' || c === ']') && --depth === 0) return i + 1;
    }
    return s.length;
  };
  let i = ws(0);
  if (s[i] !== '{') return null;
  i = ws(i + 1);
  while (s[i] === '"') {
    const keyEnd = stringEnd(i);
    const key = JSON.parse(s.slice(i, keyEnd)) as string;
    i = ws(ws(keyEnd) + 1); // past the colon
    const end = valueEnd(i);
    const c = s[i]!;
    if (key.toLowerCase() === 'id' && (c === '-' || (c >= '0' && c <= '9'))) {
      const lit = s.slice(i, end);
      if (!Number.isFinite(Number(lit))) return lit;
    }
    i = ws(end);
    if (s[i] !== ',') break;
    i = ws(i + 1);
  }
  return null;
}

/**
 * RPCRequest.UnmarshalJSON of one parsed value: the request, null (notification) or Go's error.
 * `raw`, the text `v` was parsed from, is read only to word an error (idRangeError).
 */
export function decodeRequestValue(v: unknown, raw?: Uint8Array): Decoded<RpcRequest | null> {
  if (v === null) return { ok: true, value: null };
  if (typeof v !== 'object' || Array.isArray(v)) {
    return { ok: false, error: `json: cannot unmarshal ${goJsonKind(v)} into Go value of type ${REQUEST_STRUCT}` };
  }
  let id: unknown = null;
  let method: unknown = null;
  let params: unknown;
  let hasParams = false;
  let typeErr: string | null = null;
  // encoding/json matches field names case-insensitively; the last occurrence wins. (A for-in
  // over the parsed object: no entries array per request; the exact names skip the lower-casing.)
  const o = v as Record<string, unknown>;
  for (const key in o) {
    const x = o[key];
    const name = key === 'jsonrpc' || key === 'id' || key === 'method' || key === 'params' ? key : key.toLowerCase();
    switch (name) {
      case 'jsonrpc':
        typeErr ??= stringFieldError('jsonrpc', x);
        break;
      case 'id':
        if (typeof x === 'number' && !Number.isFinite(x)) typeErr ??= idRangeError(raw);
        id = x;
        break;
      case 'method':
        typeErr ??= stringFieldError('method', x);
        if (typeof x === 'string') method = x;
        break;
      case 'params':
        params = x;
        hasParams = true;
        break;
    }
  }
  if (typeErr !== null) return { ok: false, error: typeErr };
  if (id === null) return { ok: true, value: null };
  let rid: JsonRpcId;
  if (typeof id === 'string') rid = id;
  else if (typeof id === 'number') rid = goIntOfFloat(id);
  else return { ok: false, error: `json-rpc ID (${goValueV(id)}) is of unknown type (${goInterfaceTypeName(id)})` };
  return { ok: true, value: { id: rid, method: typeof method === 'string' ? method : '', params, hasParams } };
}

/** A decoded HTTP JSON-RPC body. `array` is whether Go's `[]RPCRequest` unmarshal succeeded. */
export type DecodedBody = { ok: true; requests: (RpcRequest | null)[]; array: boolean } | { ok: false; error: string };

/**
 * http_json_handler.go: try the body as `[]RPCRequest` (a JSON array, or `null`), else as one
 * RPCRequest; the error text is the second attempt's. PreChecksHandler (http_server.go) uses the
 * first attempt alone to enforce max_request_batch_size.
 */
export function decodeHttpBody(buf: Uint8Array): DecodedBody {
  const parsed = parseGoJson(buf);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  const v = parsed.value;
  if (v === null) return { ok: true, requests: [], array: true };
  if (Array.isArray(v)) {
    const requests: (RpcRequest | null)[] = [];
    for (const item of v) {
      const r = decodeRequestValue(item);
      if (!r.ok) return { ok: false, error: `json: cannot unmarshal array into Go value of type ${REQUEST_STRUCT}` };
      requests.push(r.value);
    }
    return { ok: true, requests, array: true };
  }
  const r = decodeRequestValue(v, buf);
  return r.ok ? { ok: true, requests: [r.value], array: false } : r;
}

/**
 * ws_handler.go readRoutine: json.NewDecoder(r).Decode(&request): the first JSON value of the
 * message (anything after it is ignored), decoded as one RPCRequest; arrays are not batches.
 */
export function decodeWsMessage(buf: Uint8Array): Decoded<RpcRequest | null> {
  const b = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  let value: unknown;
  let parsedWhole = false;
  try {
    value = JSON.parse(b.toString('utf8'));
    parsedWhole = true;
  } catch {
    /* fall through to Go's decoder rules */
  }
  if (!parsedWhole || mayNestDeeperThan(b, RPC_JSON_MAX_DEPTH)) {
    const r = scanJson(b, 'decode', RPC_JSON_MAX_DEPTH);
    if (!r.ok) return { ok: false, error: r.error };
    if (!parsedWhole) value = JSON.parse(b.subarray(0, r.end).toString('utf8'));
  }
  return decodeRequestValue(value, b);
}
