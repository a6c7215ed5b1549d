/**
 * Go `encoding/json` behaviour that CometBFT's RPC exposes on the wire: the syntax-error texts of
 * its scanner, `strconv.Quote`/`%q`, `%#U` and `%v` formatting used in error `data`, and
 * `json.Marshal`'s HTML escaping of response bodies.
 *
 * Why emulate Go at all: clients and tests compare CometBFT's `error.data` strings, and CometBFT
 * builds them from Go's own error texts (`error unmarshaling request: invalid character 'x' …`).
 * The texts below follow Go 1.22's encoding/json/scanner.go, strconv/quote.go and fmt; the code is
 * written here from that behaviour. See cometbft/cometbft:rpc/jsonrpc/types/types.go
 */

/** Go's scanner caps nesting at 10000 (encoding/json/scanner.go maxNestingDepth). */
export const GO_JSON_MAX_DEPTH = 10_000;

/**
 * The nesting our servers accept in a request: 1000, not Go's 10000. Our JSON codecs and V8's
 * JSON.stringify recurse, and the default stack runs out between 4000 and 5000 levels
 * (`Maximum call stack size exceeded`); 1000 leaves room for the deepest decoder's frames and is
 * far above any real request. Deeper input gets the scanner's own error, as Go words it past its
 * limit: `invalid character '[' exceeded max depth` (a parse error, -32700, or InvalidArgument).
 */
export const RPC_JSON_MAX_DEPTH = 1000;

/**
 * Whether `b` may nest deeper than `max`: there are more than `max` brackets and braces at all.
 * Two native scans; only then is the byte-by-byte scanner needed to tell.
 */
export function mayNestDeeperThan(b: Uint8Array, max: number): boolean {
  if (b.length <= max) return false;
  const buf = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  let n = 0;
  for (const c of [0x5b, 0x7b]) {
    let i = buf.indexOf(c);
    while (i !== -1) {
      if (++n > max) return true;
      i = buf.indexOf(c, i + 1);
    }
  }
  return false;
}

// Step results, as Go's scanner returns them (only the ones callers distinguish).
const CONTINUE = 0;
const END = 1; // scanEnd: the top-level value ended before this byte
const END_CONTAINER = 2; // scanEndObject / scanEndArray
const ERROR = 3;

// Parse-stack entries (scanner.go parseObjectKey, parseObjectValue, parseArrayValue).
const OBJ_KEY = 0;
const OBJ_VALUE = 1;
const ARR_VALUE = 2;

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

type Step = (s: Scanner, c: number) => number;

/** A byte-at-a-time JSON scanner with Go's states and error texts (encoding/json/scanner.go). */
class Scanner {
  constructor(readonly maxDepth = GO_JSON_MAX_DEPTH) {}
  step: Step = beginValue;
  stack: number[] = [];
  err: string | null = null;
  endTop = false;

  error(c: number, context: string): number {
    this.step = stateError;
    this.err = `invalid character ${quoteChar(c)} ${context}`;
    return ERROR;
  }
  push(c: number, kind: number, next: Step): number {
    this.stack.push(kind);
    if (this.stack.length > this.maxDepth) return this.error(c, 'exceeded max depth');
    this.step = next;
    return CONTINUE;
  }
  pop(): void {
    this.stack.pop();
    if (this.stack.length === 0) {
      this.step = endTop;
      this.endTop = true;
    } else this.step = endValue;
  }
  /** scanner.eof(): feeds a space to finish a trailing number or literal. */
  eof(): boolean {
    if (this.err !== null) return false;
    if (this.endTop) return true;
    this.step(this, 0x20);
    if (this.endTop) return true;
    if (this.err === null) this.err = 'unexpected end of JSON input';
    return false;
  }
}

const stateError: Step = () => ERROR;

function beginValueOrEmpty(s: Scanner, c: number): number {
  if (isSpace(c)) return CONTINUE;
  if (c === 0x5d) return endValue(s, c);
  return beginValue(s, c);
}

function beginValue(s: Scanner, c: number): number {
  if (isSpace(c)) return CONTINUE;
  switch (c) {
    case 0x7b:
      return s.push(c, OBJ_KEY, beginStringOrEmpty);
    case 0x5b:
      return s.push(c, ARR_VALUE, beginValueOrEmpty);
    case 0x22:
      s.step = inString;
      return CONTINUE;
    case 0x2d:
      s.step = neg;
      return CONTINUE;
    case 0x30:
      s.step = zero;
      return CONTINUE;
    case 0x74:
      s.step = literal('true', 1);
      return CONTINUE;
    case 0x66:
      s.step = literal('false', 1);
      return CONTINUE;
    case 0x6e:
      s.step = literal('null', 1);
      return CONTINUE;
  }
  if (c >= 0x31 && c <= 0x39) {
    s.step = one;
    return CONTINUE;
  }
  return s.error(c, 'looking for beginning of value');
}

function beginStringOrEmpty(s: Scanner, c: number): number {
  if (isSpace(c)) return CONTINUE;
  if (c === 0x7d) {
    s.stack[s.stack.length - 1] = OBJ_VALUE;
    return endValue(s, c);
  }
  return beginString(s, c);
}

function beginString(s: Scanner, c: number): number {
  if (isSpace(c)) return CONTINUE;
  if (c === 0x22) {
    s.step = inString;
    return CONTINUE;
  }
  return s.error(c, 'looking for beginning of object key string');
}

function endValue(s: Scanner, c: number): number {
  const n = s.stack.length;
  if (n === 0) {
    s.step = endTop;
    s.endTop = true;
    return endTop(s, c);
  }
  if (isSpace(c)) {
    s.step = endValue;
    return CONTINUE;
  }
  const top = s.stack[n - 1]!;
  if (top === OBJ_KEY) {
    if (c === 0x3a) {
      s.stack[n - 1] = OBJ_VALUE;
      s.step = beginValue;
      return CONTINUE;
    }
    return s.error(c, 'after object key');
  }
  if (top === OBJ_VALUE) {
    if (c === 0x2c) {
      s.stack[n - 1] = OBJ_KEY;
      s.step = beginString;
      return CONTINUE;
    }
    if (c === 0x7d) {
      s.pop();
      return END_CONTAINER;
    }
    return s.error(c, 'after object key:value pair');
  }
  if (c === 0x2c) {
    s.step = beginValue;
    return CONTINUE;
  }
  if (c === 0x5d) {
    s.pop();
    return END_CONTAINER;
  }
  return s.error(c, 'after array element');
}

// stateEndTop returns scanEnd even for a non-space byte, recording the complaint for the next call.
function endTop(s: Scanner, c: number): number {
  if (!isSpace(c)) s.error(c, 'after top-level value');
  return END;
}

function inString(s: Scanner, c: number): number {
  if (c === 0x22) s.step = endValue;
  else if (c === 0x5c) s.step = inStringEsc;
  else if (c < 0x20) return s.error(c, 'in string literal');
  return CONTINUE;
}

function inStringEsc(s: Scanner, c: number): number {
  switch (c) {
    case 0x62: // b
    case 0x66: // f
    case 0x6e: // n
    case 0x72: // r
    case 0x74: // t
    case 0x5c: // backslash
    case 0x2f: // slash
    case 0x22: // quote
      s.step = inString;
      return CONTINUE;
    case 0x75: // u
      s.step = inStringEscU(4);
      return CONTINUE;
  }
  return s.error(c, 'in string escape code');
}

const ESC_U: Step[] = [];
function inStringEscU(left: number): Step {
  return (ESC_U[left] ??= (s, c) => {
    if (!isHex(c)) return s.error(c, 'in \\u hexadecimal character escape');
    s.step = left === 1 ? inString : inStringEscU(left - 1);
    return CONTINUE;
  });
}

function neg(s: Scanner, c: number): number {
  if (c === 0x30) s.step = zero;
  else if (c >= 0x31 && c <= 0x39) s.step = one;
  else return s.error(c, 'in numeric literal');
  return CONTINUE;
}

function one(s: Scanner, c: number): number {
  if (isDigit(c)) return CONTINUE;
  return zero(s, c);
}

function zero(s: Scanner, c: number): number {
  if (c === 0x2e) {
    s.step = dot;
    return CONTINUE;
  }
  if (c === 0x65 || c === 0x45) {
    s.step = expo;
    return CONTINUE;
  }
  return endValue(s, c);
}

function dot(s: Scanner, c: number): number {
  if (isDigit(c)) {
    s.step = dot0;
    return CONTINUE;
  }
  return s.error(c, 'after decimal point in numeric literal');
}

function dot0(s: Scanner, c: number): number {
  if (isDigit(c)) return CONTINUE;
  if (c === 0x65 || c === 0x45) {
    s.step = expo;
    return CONTINUE;
  }
  return endValue(s, c);
}

function expo(s: Scanner, c: number): number {
  if (c === 0x2b || c === 0x2d) {
    s.step = expoSign;
    return CONTINUE;
  }
  return expoSign(s, c);
}

function expoSign(s: Scanner, c: number): number {
  if (isDigit(c)) {
    s.step = expo0;
    return CONTINUE;
  }
  return s.error(c, 'in exponent of numeric literal');
}

function expo0(s: Scanner, c: number): number {
  if (isDigit(c)) return CONTINUE;
  return endValue(s, c);
}

const LITERALS = new Map<string, Step>();
/** States inside `true`/`false`/`null` after `i` letters. */
function literal(word: string, i: number): Step {
  const key = word + i;
  let st = LITERALS.get(key);
  if (!st) {
    const want = word.charCodeAt(i);
    st = (s, c) => {
      if (c !== want) return s.error(c, `in literal ${word} (expecting ${quoteChar(want)})`);
      s.step = i + 1 === word.length ? endValue : literal(word, i + 1);
      return CONTINUE;
    };
    LITERALS.set(key, st);
  }
  return st;
}

/** Result of scanning: the end offset of the (first) value, or Go's error text. */
export type ScanResult = { ok: true; end: number } | { ok: false; error: string };

/**
 * Scans JSON bytes the way Go does.
 * - `unmarshal` (json.Unmarshal's checkValid): the whole input must be one value plus whitespace.
 *   At end of input the scanner is fed a space, so `1.` reports `invalid character ' ' after
 *   decimal point in numeric literal` and `[` reports `unexpected end of JSON input`.
 * - `decode` (json.Decoder.Decode, which CometBFT uses on websocket messages): stops after the
 *   first value and ignores what follows; an incomplete value is `unexpected EOF`, an input of
 *   only whitespace `EOF` (Decoder.readValue).
 */
export function scanJson(b: Uint8Array, mode: 'unmarshal' | 'decode', maxDepth = GO_JSON_MAX_DEPTH): ScanResult {
  const s = new Scanner(maxDepth);
  if (mode === 'unmarshal') {
    for (let i = 0; i < b.length; i++) {
      if (s.step(s, b[i]!) === ERROR) return { ok: false, error: s.err! };
    }
    return s.eof() ? { ok: true, end: b.length } : { ok: false, error: s.err! };
  }
  for (let i = 0; i < b.length; i++) {
    const r = s.step(s, b[i]!);
    if (r === END) return { ok: true, end: i };
    if (r === END_CONTAINER && endValue(s, 0x20) === END) return { ok: true, end: i + 1 };
    if (r === ERROR) return { ok: false, error: s.err! };
  }
  if (s.step(s, 0x20) === END) return { ok: true, end: b.length };
  for (let i = 0; i < b.length; i++) if (!isSpace(b[i]!)) return { ok: false, error: 'unexpected EOF' };
  return { ok: false, error: 'EOF' };
}

/** Go's Unmarshal syntax check of a JS string (encoded as UTF-8 first, as Go sees bytes). */
export function goSyntaxError(text: string, maxDepth = GO_JSON_MAX_DEPTH): string | null {
  const r = scanJson(Buffer.from(text, 'utf8'), 'unmarshal', maxDepth);
  return r.ok ? null : r.error;
}

/** encoding/json quoteChar: how the scanner names an offending byte (`'x'`, `'\''`, `'"'`). */
export function quoteChar(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  // strconv.Quote(string(rune(c))): a byte is read as the code point U+00XX.
  const q = goQuote(String.fromCharCode(c));
  return `'${q.slice(1, -1)}'`;
}

const PRINTABLE = /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u;

/** strconv.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
export function goIsPrint(cp: number): boolean {
  if (cp === 0x20) return true;
  if (cp < 0x20 || cp === 0x7f) return false;
  if (cp < 0x7f) return true;
  return PRINTABLE.test(String.fromCodePoint(cp));
}

/** strconv.Quote (and fmt `%q` of a string). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0x22) out += '\\"';
    else if (cp === 0x5c) out += '\\\\';
    else if (goIsPrint(cp)) out += ch;
    else if (cp === 0x07) out += '\\a';
    else if (cp === 0x08) out += '\\b';
    else if (cp === 0x0c) out += '\\f';
    else if (cp === 0x0a) out += '\\n';
    else if (cp === 0x0d) out += '\\r';
    else if (cp === 0x09) out += '\\t';
    else if (cp === 0x0b) out += '\\v';
    else if (cp < 0x20 || cp === 0x7f) out += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\\ufffd'; // lone surrogate: not a valid rune
    else if (cp < 0x10000) out += '\\u' + cp.toString(16).padStart(4, '0');
    else out += '\\U' + cp.toString(16).padStart(8, '0');
  }
  return out + '"';
}

/** fmt `%#U`: `U+0067 'g'`, or just `U+000A` for a non-printable rune. */
export function goRuneU(cp: number): string {
  const u = 'U+' + cp.toString(16).toUpperCase().padStart(4, '0');
  return goIsPrint(cp) ? `${u} '${String.fromCodePoint(cp)}'` : u;
}

/**
 * fmt `%v` of a float64: strconv 'g' with the shortest digits, which switches to the exponent
 * form when exp < -4 or exp >= 6 (`1e+06`, `1.5e-05`, but `123456`).
 */
export function goFloatV(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const [mant, expStr] = n.toExponential().split('e') as [string, string];
  const exp = Number(expStr);
  if (exp < -4 || exp >= 6) return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(n);
}

/** fmt `%v` of a value decoded into Go's `interface{}` (float64, string, bool, nil, map, slice). */
export function goValueV(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'number') return goFloatV(v);
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(goValueV).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort();
    return `map[${keys.map((k) => `${k}:${goValueV(o[k])}`).join(' ')}]`;
  }
  return String(v);
}

/** Go type name of a value decoded into `interface{}` (for `%v` of reflect.TypeOf). */
export function goInterfaceTypeName(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'number') return 'float64';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return '[]interface {}';
  return 'map[string]interface {}';
}

/** The JSON kind Go names in UnmarshalTypeError (`cannot unmarshal <kind> into …`). */
export function goJsonKind(v: unknown): 'string' | 'number' | 'bool' | 'array' | 'object' | 'null' {
  if (v === null) return 'null';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

const HTML_UNSAFE = /[<>&\u2028\u2029]/g;
const HTML_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/**
 * json.Marshal escapes `<`, `>`, `&`, U+2028 and U+2029 inside strings (encoding/json encode.go,
 * HTMLEscape). Outside strings these characters cannot occur in JSON, so a global replace is safe.
 */
export function goHtmlEscape(json: string): string {
  return json.replace(HTML_UNSAFE, (c) => HTML_ESCAPES[c]!);
}

const bigintToString = (_k: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);

/**
 * Compact JSON as CometBFT writes it: 64-bit integers (`bigint`) as strings (cmtjson, reference
 * §1.5) and json.Marshal's HTML escaping. The replacer only runs when a bigint is present: the
 * plain JSON.stringify is tried first because a replacer function makes stringify several times
 * slower on large results. `undefined` becomes `null`. Throws on cycles.
 */
export function marshalJson(value: unknown): string {
  let s: string | undefined;
  try {
    s = JSON.stringify(value);
  } catch (e) {
    if (!(e instanceof TypeError) || !/BigInt/i.test(e.message)) throw e;
    s = JSON.stringify(value, bigintToString);
  }
  return s === undefined ? 'null' : goHtmlEscape(s);
}
