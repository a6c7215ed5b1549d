/**
 * Mutators shared by the fuzz surfaces: bytes, JSON values (with raw tokens for what JSON.stringify
 * cannot write: huge numbers, duplicate keys, lone surrogates), URL paths and queries, and HTTP
 * headers. A mutator is a named function; a surface picks among the enabled ones and records the
 * names it applied in the case, so a failure says what was done.
 */
import { knownBugEnabled, type KnownBug } from './known-bugs.js';
import type { Rng } from './prng.js';

/** Default cap of nesting mutations: ~5000 is a known bug (KNOWN_BUGS.jsonDeepNesting). */
export const MAX_SAFE_NESTING = 100;

export interface Mutator<T> {
  readonly name: string;
  readonly weight: number;
  /** Off unless this known bug is switched on (known-bugs.ts). */
  readonly knownBug?: KnownBug;
  apply(rng: Rng, x: T): T;
}

/** The mutators of a list that run: those without a known bug, and those whose bug is switched on. */
export function enabled<T>(list: readonly Mutator<T>[]): Mutator<T>[] {
  const env = process.env.FUZZ_KNOWN_BUGS ?? '';
  const hit = enabledCache.get(list);
  if (hit && hit.env === env) return hit.on as Mutator<T>[];
  const on = list.filter((m) => m.knownBug === undefined || knownBugEnabled(m.knownBug));
  enabledCache.set(list, { env, on });
  return on;
}

/** `enabled` runs once per case: its answer is kept per list (and FUZZ_KNOWN_BUGS value). */
const enabledCache = new WeakMap<readonly Mutator<unknown>[], { env: string; on: readonly Mutator<unknown>[] }>();

export function pickMutator<T>(rng: Rng, list: readonly Mutator<T>[]): Mutator<T> {
  return rng.weighted(list.map((m) => [m.weight, m] as const));
}

// ------------------------------------------------------------------------------------------------
// Bytes

const INTERESTING_BYTES = [0x00, 0xff, 0x7f, 0x80, 0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x30, 0x2d, 0x0a, 0x25];
const BAD_UTF8 = [Buffer.from([0xc3, 0x28]), Buffer.from([0xff]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xf4, 0x90, 0x80, 0x80]), Buffer.from([0xe2, 0x82])];

export const BYTE_MUTATORS: readonly Mutator<Buffer>[] = [
  {
    name: 'bytes.flip',
    weight: 4,
    apply(rng, b) {
      if (b.length === 0) return rng.bytes(1);
      const out = Buffer.from(b);
      for (let n = rng.range(1, 8); n > 0; n--) out[rng.int(out.length)] ^= 1 << rng.int(8);
      return out;
    },
  },
  {
    name: 'bytes.interesting',
    weight: 3,
    apply(rng, b) {
      if (b.length === 0) return Buffer.from([rng.pick(INTERESTING_BYTES)]);
      const out = Buffer.from(b);
      for (let n = rng.range(1, 4); n > 0; n--) out[rng.int(out.length)] = rng.pick(INTERESTING_BYTES);
      return out;
    },
  },
  { name: 'bytes.truncate', weight: 3, apply: (rng, b) => b.subarray(0, rng.int(b.length + 1)) },
  {
    name: 'bytes.insert',
    weight: 2,
    apply(rng, b) {
      const at = rng.int(b.length + 1);
      return Buffer.concat([b.subarray(0, at), rng.bytes(rng.smallLen(256)), b.subarray(at)]);
    },
  },
  {
    name: 'bytes.delete',
    weight: 2,
    apply(rng, b) {
      const at = rng.int(b.length + 1);
      return Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + rng.range(1, 16)))]);
    },
  },
  {
    name: 'bytes.duplicate',
    weight: 1,
    apply(rng, b) {
      const at = rng.int(b.length + 1);
      const len = rng.int(Math.min(64, b.length - at) + 1);
      const piece = b.subarray(at, at + len);
      const times = rng.range(1, 50);
      return Buffer.concat([b.subarray(0, at + len), ...Array<Buffer>(times).fill(piece), b.subarray(at + len)]);
    },
  },
  {
    name: 'bytes.badUtf8',
    weight: 2,
    apply(rng, b) {
      const at = rng.int(b.length + 1);
      return Buffer.concat([b.subarray(0, at), rng.pick(BAD_UTF8), b.subarray(at)]);
    },
  },
  { name: 'bytes.random', weight: 1, apply: (rng) => rng.bytes(rng.smallLen(2048)) },
  { name: 'bytes.empty', weight: 0.3, apply: () => Buffer.alloc(0) },
];

export function mutateBytes(rng: Rng, b: Buffer, applied: string[]): Buffer {
  const m = pickMutator(rng, enabled(BYTE_MUTATORS));
  applied.push(m.name);
  return m.apply(rng, b);
}

// ------------------------------------------------------------------------------------------------
// JSON values

/** JSON text written as is (huge numbers, duplicate keys, lone surrogates, deep nesting). */
export class Raw {
  constructor(readonly text: string) {}
}

export type JsonValue = null | boolean | number | string | Raw | JsonValue[] | { [k: string]: JsonValue };

export function toJson(v: JsonValue): string {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`)
      .join(',')}}`;
  }
  if (typeof v === 'number' && !Number.isFinite(v)) return 'null';
  return JSON.stringify(v);
}

/** Every container slot of a tree: [parent, key] pairs, plus the root (parent null). */
type Slot = { parent: JsonValue[] | { [k: string]: JsonValue } | null; key: string | number };

function slots(root: JsonValue): Slot[] {
  const out: Slot[] = [{ parent: null, key: 0 }];
  const walk = (v: JsonValue, depth: number) => {
    if (depth > 64 || v === null || typeof v !== 'object' || v instanceof Raw) return;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length && i < 200; i++) {
        out.push({ parent: v, key: i });
        walk(v[i]!, depth + 1);
      }
    } else {
      for (const k of Object.keys(v)) {
        out.push({ parent: v, key: k });
        walk(v[k]!, depth + 1);
      }
    }
  };
  walk(root, 0);
  return out;
}

function getSlot(root: JsonValue, s: Slot): JsonValue {
  if (s.parent === null) return root;
  return (s.parent as Record<string | number, JsonValue>)[s.key]!;
}

/** Replaces the value at a random slot (chosen by `filter` when given) with `f(old)`; returns the new root. */
function replaceAt(rng: Rng, root: JsonValue, f: (old: JsonValue) => JsonValue, filter?: (v: JsonValue) => boolean): JsonValue {
  let all = slots(root);
  if (filter) {
    all = all.filter((s) => filter(getSlot(root, s)));
    if (all.length === 0) return root;
  }
  // Prefer leaves and inner slots over the root.
  const s = all.length > 1 && rng.chance(0.9) ? all[1 + rng.int(all.length - 1)]! : all[0]!;
  const nv = f(getSlot(root, s));
  if (s.parent === null) return nv;
  (s.parent as Record<string | number, JsonValue>)[s.key] = nv;
  return root;
}

const isNumberish = (v: JsonValue) => typeof v === 'number' || (typeof v === 'string' && /^-?\d+$/.test(v));
const isString = (v: JsonValue) => typeof v === 'string';
const isObject = (v: JsonValue) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Raw);

const NUMBERS: readonly JsonValue[] = [
  new Raw('1e999'),
  new Raw('-1e999'),
  new Raw('18446744073709551616'),
  new Raw('9223372036854775808'),
  new Raw('-9223372036854775809'),
  new Raw('123456789012345678901234567890123456789'),
  new Raw('-0'),
  new Raw('1E400'),
  new Raw('0.0000000000000000000000000001'),
  '18446744073709551616',
  '9223372036854775807',
  '-9223372036854775808',
  '-9223372036854775809',
  '99999999999999999999999999999',
  -1,
  '-1',
  0,
  '0',
  1.5,
  '1.5',
  '1e3',
  '0x10',
  ' 1',
  '1 ',
  '+1',
  '',
  4294967296,
  2147483648,
  Number.MAX_SAFE_INTEGER + 2,
  -Number.MAX_SAFE_INTEGER,
];

const UNICODE: readonly JsonValue[] = [
  '\u0000',
  new Raw('"\\ud800"'),
  new Raw('"\\udfff\\ud800"'),
  '💥🔥',
  'é\u0301',
  '\u202eevil',
  'ｆｕｌｌ',
  '\uffff\ufffe',
  '\u2028\u2029',
  'a'.repeat(70_000),
  '€'.repeat(3000),
  '"quoted"',
  '\\',
  '<script>&amp;',
  'tm.event=\'NewBlock\' AND 💥',
];

const WRONG_TYPES: readonly JsonValue[] = [null, true, false, 0, '', 'x', [], {}, [1, 'a', null], { a: 1 }, new Raw('""'), -1];

let hugeCache = '';
/** `"xxx…"` of `n` x's, sliced from one cached string. */
function hugeString(n: number): string {
  if (hugeCache.length < n) hugeCache = 'x'.repeat(1_000_000);
  return `"${hugeCache.slice(0, n)}"`;
}

function nest(rng: Rng, v: JsonValue, depth: number): JsonValue {
  const arr = rng.chance(0.5);
  const open = arr ? '[' : '{"a":';
  const close = arr ? ']' : '}';
  return new Raw(open.repeat(depth) + toJson(v) + close.repeat(depth));
}

function randomKey(rng: Rng): string {
  return rng.pick(['', 'id', 'jsonrpc', 'method', 'params', 'height', 'x', '__proto__', 'constructor', 'toString', '💥', 'a'.repeat(300), 'pagination', 'tx_bytes']);
}

const SCALARS: readonly JsonValue[] = [...NUMBERS, ...UNICODE.slice(0, 9), ...WRONG_TYPES];
/** A fresh copy: the constant lists must never end up inside a tree that is mutated later. */
function randomScalar(rng: Rng): JsonValue {
  return structuredCloneJson(rng.pick(SCALARS));
}

export const JSON_MUTATORS: readonly Mutator<JsonValue>[] = [
  { name: 'json.number', weight: 4, apply: (rng, v) => replaceAt(rng, v, () => rng.pick(NUMBERS), isNumberish) },
  { name: 'json.wrongType', weight: 4, apply: (rng, v) => replaceAt(rng, v, () => structuredCloneJson(rng.pick(WRONG_TYPES))) },
  { name: 'json.unicode', weight: 3, apply: (rng, v) => replaceAt(rng, v, () => rng.pick(UNICODE), isString) },
  { name: 'json.nest', weight: 2, apply: (rng, v) => replaceAt(rng, v, (old) => nest(rng, old, rng.range(2, MAX_SAFE_NESTING))) },
  {
    name: 'json.deepNest',
    weight: 1,
    knownBug: 'jsonDeepNesting',
    // Go's encoding/json stops at 10000 levels; the overflow is between ~5000 and that.
    apply: (rng, v) => replaceAt(rng, v, (old) => nest(rng, old, rng.chance(0.8) ? rng.range(5001, 10_500) : rng.range(10_500, 100_000))),
  },
  {
    name: 'json.duplicateKeys',
    weight: 2,
    apply: (rng, v) =>
      replaceAt(
        rng,
        v,
        (old) => {
          const o = old as { [k: string]: JsonValue };
          const keys = Object.keys(o);
          const k = keys.length > 0 ? rng.pick(keys) : 'id';
          const parts = Object.entries(o).map(([kk, x]) => `${JSON.stringify(kk)}:${toJson(x)}`);
          const dup = `${JSON.stringify(k)}:${toJson(randomScalar(rng))}`;
          if (rng.chance(0.5)) parts.unshift(dup);
          else parts.push(dup);
          return new Raw(`{${parts.join(',')}}`);
        },
        isObject,
      ),
  },
  {
    name: 'json.hugeArray',
    weight: 1,
    apply: (rng, v) =>
      replaceAt(rng, v, () => {
        const n = rng.chance(0.9) ? rng.range(1000, 5000) : rng.range(5000, 60_000);
        const el = rng.pick(['0', '"a"', 'null', '{}', '[]', '"18446744073709551616"']);
        return new Raw(`[${Array<string>(n).fill(el).join(',')}]`);
      }),
  },
  { name: 'json.hugeString', weight: 1, apply: (rng, v) => replaceAt(rng, v, () => new Raw(hugeString(rng.chance(0.9) ? rng.range(10_000, 60_000) : rng.range(60_000, 900_000))), isString) },
  {
    name: 'json.removeKey',
    weight: 2,
    apply: (rng, v) =>
      replaceAt(
        rng,
        v,
        (old) => {
          const o = { ...(old as { [k: string]: JsonValue }) };
          const keys = Object.keys(o);
          if (keys.length > 0) delete o[rng.pick(keys)];
          return o;
        },
        isObject,
      ),
  },
  {
    name: 'json.addKey',
    weight: 2,
    apply: (rng, v) =>
      replaceAt(
        rng,
        v,
        (old) => {
          const o = { ...(old as { [k: string]: JsonValue }) };
          const k = randomKey(rng);
          if (k === '__proto__') return new Raw(toJson(o).replace(/^\{/, `{"__proto__":${toJson(randomScalar(rng))}${Object.keys(o).length ? ',' : ''}`));
          o[k] = randomScalar(rng);
          return o;
        },
        isObject,
      ),
  },
];

/** Applies 1–3 JSON mutations to a copy of `v`. */
export function mutateJson(rng: Rng, v: JsonValue, applied: string[]): JsonValue {
  let out = structuredCloneJson(v);
  const list = enabled(JSON_MUTATORS);
  for (let n = rng.weighted([[6, 1], [3, 2], [1, 3]] as const); n > 0; n--) {
    const m = pickMutator(rng, list);
    applied.push(m.name);
    out = m.apply(rng, out);
  }
  return out;
}

function structuredCloneJson(v: JsonValue): JsonValue {
  if (v === null || typeof v !== 'object' || v instanceof Raw) return v;
  if (Array.isArray(v)) return v.map(structuredCloneJson);
  const o: { [k: string]: JsonValue } = {};
  for (const [k, x] of Object.entries(v)) o[k] = structuredCloneJson(x);
  return o;
}

// ------------------------------------------------------------------------------------------------
// URL paths and queries (text already percent-encoded as it goes on the request line)

const PATH_JUNK = ['%', '%zz', '%00', '%2F', '%2e%2e', '..', '.', '//', '%ff%fe', '%E2%82%AC', '%F0%9F%92%A5', '~', '!$&\'()*+,;=', ':', '@', '%25', 'a'.repeat(300)];

/** Only characters uWS reads on a request line: printable ASCII without space, `?` or `#` (raw bytes go through %XX). */
function pathToken(rng: Rng): string {
  const chars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&\'()*+,;=:@%';
  let s = '';
  for (let n = rng.range(0, 24); n > 0; n--) s += chars[rng.int(chars.length)];
  return s;
}

export const PATH_MUTATORS: readonly Mutator<string>[] = [
  { name: 'path.random', weight: 2, apply: (rng) => `/${pathToken(rng)}` },
  {
    name: 'path.segment',
    weight: 3,
    apply(rng, p) {
      const segs = p.split('/');
      const i = rng.range(1, Math.max(1, segs.length - 1));
      segs[i] = rng.chance(0.5) ? rng.pick(PATH_JUNK) : pathToken(rng);
      return segs.join('/');
    },
  },
  { name: 'path.append', weight: 2, apply: (rng, p) => p + rng.pick(['/', '//', '/x', ':verb', rng.pick(PATH_JUNK), `/${pathToken(rng)}`]) },
  { name: 'path.case', weight: 1, apply: (rng, p) => (rng.chance(0.5) ? p.toUpperCase() : p.replace(/[a-z]/, (c) => c.toUpperCase())) },
  { name: 'path.long', weight: 0.5, apply: (rng, p) => p + '/a'.repeat(rng.range(100, 4000)) },
  { name: 'path.percentEncode', weight: 1, apply: (rng, p) => p.replace(/[a-z]/g, (c) => (rng.chance(0.3) ? `%${c.charCodeAt(0).toString(16)}` : c)) },
];

export function mutatePath(rng: Rng, p: string, applied: string[]): string {
  const m = pickMutator(rng, enabled(PATH_MUTATORS));
  applied.push(m.name);
  const out = m.apply(rng, p);
  return out.startsWith('/') ? out : `/${out}`;
}

const QUERY_VALUES = [
  '',
  '-1',
  '0',
  '1',
  '18446744073709551616',
  '-9223372036854775809',
  '9223372036854775807',
  '1.5',
  'true',
  'nil',
  'null',
  '%22%22',
  '%22x%22',
  '0x',
  '0xzz',
  '0xABCDEF',
  '%5B%5D',
  '%5B%22a%22%5D',
  '%7B%7D',
  '%zz',
  '%00',
  '%F0%9F%92%A5',
  'a'.repeat(5000),
  '%22tm.event%3D%27NewBlock%27%22',
  '%22tx.height%3E1+AND+tx.height%3C%3D-5%22',
  '%22' + 'a%3D1+AND+'.repeat(200) + 'b%3D2%22',
  '+',
  '&',
  '=',
  ';',
];

export const QUERY_MUTATORS: readonly Mutator<string>[] = [
  {
    name: 'query.value',
    weight: 4,
    apply(rng, q) {
      const pairs = q === '' ? [] : q.split('&');
      if (pairs.length === 0) return `${pathToken(rng)}=${rng.pick(QUERY_VALUES)}`;
      const i = rng.int(pairs.length);
      const k = pairs[i]!.split('=')[0]!;
      pairs[i] = `${k}=${rng.pick(QUERY_VALUES)}`;
      return pairs.join('&');
    },
  },
  {
    name: 'query.duplicate',
    weight: 1,
    apply(rng, q) {
      const pairs = q === '' ? ['x=1'] : q.split('&');
      const p = rng.pick(pairs);
      return [...pairs, `${p.split('=')[0]}=${rng.pick(QUERY_VALUES)}`].join('&');
    },
  },
  { name: 'query.add', weight: 2, apply: (rng, q) => (q ? `${q}&` : '') + `${rng.pick(['height', 'page', 'per_page', 'pagination.limit', 'pagination.offset', 'pagination.key', 'pagination.reverse', 'pagination.count_total', 'prove', 'x', pathToken(rng)])}=${rng.pick(QUERY_VALUES)}` },
  { name: 'query.drop', weight: 1, apply: (rng, q) => q.split('&').filter(() => rng.chance(0.5)).join('&') },
  { name: 'query.junk', weight: 1, apply: (rng) => rng.pick(['&&&', '=&=', '%', '?', 'a=%', pathToken(rng), 'a'.repeat(rng.range(10, 20_000))]) },
];

export function mutateQuery(rng: Rng, q: string, applied: string[]): string {
  const m = pickMutator(rng, enabled(QUERY_MUTATORS));
  applied.push(m.name);
  return m.apply(rng, q);
}

// ------------------------------------------------------------------------------------------------
// Header values and names (visible ASCII and tabs only: no CR/LF, which would change the framing)

const HEADER_NAMES = ['X-Fuzz', 'Accept', 'Accept-Encoding', 'Origin', 'Cookie', 'Authorization', 'User-Agent', 'Referer', 'X-Forwarded-For', 'X-Cosmos-Block-Height', 'Grpc-Metadata-X-Cosmos-Block-Height', 'Grpc-Timeout', 'Grpc-Metadata-Foo', 'Content-Language', 'Cache-Control', 'If-None-Match', 'Range', 'Upgrade', 'Sec-WebSocket-Key', 'TE', 'Via'];

export function headerValue(rng: Rng): string {
  return rng.pick([
    '',
    '*',
    '-1',
    '0',
    '1',
    '18446744073709551616',
    '99999999999999999999',
    'abc',
    '1S',
    '1n',
    '99999999H',
    '100000000S',
    'gzip, deflate, br',
    'http://evil.example',
    'null',
    '\t x \t',
    'a'.repeat(rng.range(1, 8000)),
    '"quoted"',
    'bytes=0-1',
    'websocket',
    '1.5',
  ]);
}

/**
 * A header name. RFC 9110 tokens may hold `!#$%&'*+.^_`|~`, but uWS 20.30 holds a connection
 * without an answer when a name has one of them (KNOWN_BUGS.headerNameChars): those come only
 * with that switch on.
 */
export function headerName(rng: Rng): string {
  if (rng.chance(0.7)) return rng.pick(HEADER_NAMES);
  const chars = knownBugEnabled('headerNameChars') ? "abcdefghijklmnopqrstuvwxyz0123456789-!#$%&'*+.^_`|~" : 'abcdefghijklmnopqrstuvwxyz0123456789-';
  let s = 'x-';
  for (let n = rng.range(1, 30); n > 0; n--) s += chars[rng.int(chars.length)];
  return s;
}

/**
 * JavaScript runtime errors leaking into an answer (an error message no Go server writes): a
 * handler threw something it did not mean to, e.g. a stack overflow or a property of undefined.
 */
const JS_LEAKS = /Maximum call stack size exceeded|Cannot read propert|Cannot set propert|is not a function|is not iterable|is not defined|undefined is not|Invalid array length|Invalid string length|out of memory|BigInt|RangeError|TypeError|ReferenceError|SyntaxError: Unexpected|ERR_[A-Z_]{4,}/;

/** The leaked JS error text in `s`, or null. */
export function jsLeak(s: string): string | null {
  const m = JS_LEAKS.exec(s);
  return m ? m[0] : null;
}
