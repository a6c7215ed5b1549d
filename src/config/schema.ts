/**
 * The config-schema engine: one table per file (see node-config.ts, app-config.ts) drives the
 * defaults, the validation of file and flag values, the flag names and the commented TOML writer.
 *
 * A field is declared once with its TOML name (CometBFT's and the SDK's spelling), its kind, its
 * default and its comment. In memory the sections and fields are camelCase (`[json-rpc] ws-address`
 * → `jsonRpc.wsAddress`, `[rpc] max_body_bytes` → `rpc.maxBodyBytes`); durations are milliseconds.
 */
import { formatDuration, parseDuration } from './duration.js';
import { parseListenAddress } from './address.js';

export type FieldKind =
  | { t: 'string' }
  | { t: 'bool' }
  | { t: 'int'; min?: number; max?: number }
  | { t: 'float'; min?: number }
  /** Go duration string → milliseconds. */
  | { t: 'duration'; min?: number }
  /** TOML array of strings (a flag gives it comma-separated). */
  | { t: 'list' }
  /** A TOML string holding a comma-separated list (CometBFT's `seeds`, the SDK's `api`) → string[]. */
  | { t: 'csv' }
  | { t: 'enum'; values: readonly string[] }
  /** A listen address: `tcp://host:port` or `host:port`. */
  | { t: 'laddr'; optional?: boolean };

export interface FieldSpec {
  /** TOML key. */
  key: string;
  kind: FieldKind;
  /** Default in memory form (ms for durations, string[] for lists); a function for computed ones. */
  def: unknown | (() => unknown);
  /** Comment written above the key (lines separated by \n). */
  doc: string;
  /** Extra check on the parsed value; returns a reason when invalid. */
  check?: (v: any) => string | undefined;
}

export interface SectionSpec {
  /** TOML table name; '' for the top level. A dotted name (`evm.mempool`) is a sub-table of the
   * section before the dot, declared after it; in memory it nests (`evm.mempool` → `evm.mempool`,
   * each part camelCased). */
  name: string;
  doc: string;
  fields: FieldSpec[];
  /** Keys that CometBFT / the SDK define but chaind does not use, with their upstream defaults:
   * accepted without a warning while they keep that default, warned about otherwise. An
   * `undefined` default means any value is accepted quietly (e.g. `version`, `pruning`). */
  compat?: Record<string, unknown>;
}

export interface FileSpec {
  /** Path relative to home, e.g. `config/config.toml`. */
  file: string;
  header: string;
  sections: SectionSpec[];
  /** Whole tables accepted silently (CometBFT's `[statesync]`, the SDK's `[telemetry]`, …). */
  ignoredSections: string[];
}

/** snake_case and kebab-case → camelCase: `keep-invalid-txs-in-cache` → `keepInvalidTxsInCache`. */
export function camel(s: string): string {
  return s.replace(/[-_]([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Flag spelling is free between `-` and `_`: `--instrumentation.prometheus-listen-addr` matches
 * `prometheus_listen_addr`. */
export function normalizeFlagName(s: string): string {
  return s.replace(/-/g, '_').toLowerCase();
}

export function fieldDefault(f: FieldSpec): unknown {
  const v = typeof f.def === 'function' ? (f.def as () => unknown)() : f.def;
  return Array.isArray(v) ? [...v] : v;
}

/**
 * The in-memory object of a section inside `root` (the file's object): `root` itself for the top
 * level, `root.evm.mempool` for `evm.mempool`. With `create`, missing tables on the way are made;
 * without it, undefined when one is missing.
 */
export function sectionObject(root: Record<string, any>, name: string, create = false): Record<string, any> | undefined {
  if (name === '') return root;
  let obj: Record<string, any> | undefined = root;
  for (const part of name.split('.')) {
    const k = camel(part);
    let next = obj[k] as Record<string, any> | undefined;
    if (next === undefined || next === null || typeof next !== 'object') {
      if (!create) return undefined;
      next = obj[k] = {};
    }
    obj = next;
  }
  return obj;
}

/** The default object of one file. */
export function defaultsOf(spec: FileSpec): Record<string, any> {
  const out: Record<string, any> = {};
  for (const sec of spec.sections) {
    const target = sectionObject(out, sec.name, true)!;
    for (const f of sec.fields) target[camel(f.key)] = fieldDefault(f);
  }
  return out;
}

type Parsed = { ok: true; value: unknown } | { ok: false; reason: string };

function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return 'an array';
  if (v !== null && typeof v === 'object') return 'a table';
  return String(v);
}

function splitCsv(s: string): string[] {
  return s
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

/**
 * Parse and validate one value. `fromFlag` values are strings (booleans may also be booleans), so
 * numbers, booleans and lists are read from their text.
 */
export function parseField(f: FieldSpec, raw: unknown, fromFlag: boolean): Parsed {
  const k = f.kind;
  let value: unknown;
  switch (k.t) {
    case 'string':
    case 'laddr':
    case 'enum': {
      if (typeof raw !== 'string') return { ok: false, reason: `expected a string, got ${show(raw)}` };
      if (k.t === 'enum' && !k.values.includes(raw)) {
        return { ok: false, reason: `invalid value ${show(raw)} (want one of ${k.values.map((v) => JSON.stringify(v)).join(', ')})` };
      }
      if (k.t === 'laddr' && !(k.optional && raw === '')) {
        try {
          parseListenAddress(raw);
        } catch (e) {
          return { ok: false, reason: `invalid listen address ${show(raw)}: ${(e as Error).message}` };
        }
      }
      value = raw;
      break;
    }
    case 'bool': {
      if (typeof raw === 'boolean') value = raw;
      else if (fromFlag && raw === 'true') value = true;
      else if (fromFlag && raw === 'false') value = false;
      else return { ok: false, reason: `expected true or false, got ${show(raw)}` };
      break;
    }
    case 'int': {
      // The SDK writes some integers as strings (`max-recv-msg-size = "10485760"`): accept both.
      let n: number;
      if (typeof raw === 'number' && Number.isInteger(raw)) n = raw;
      else if (typeof raw === 'bigint') n = Number(raw);
      else if (typeof raw === 'string' && /^-?\d+$/.test(raw.trim())) n = Number(raw.trim());
      else return { ok: false, reason: `expected an integer, got ${show(raw)}` };
      if (!Number.isSafeInteger(n)) return { ok: false, reason: `integer out of range: ${show(raw)}` };
      if (k.min !== undefined && n < k.min) return { ok: false, reason: `must be >= ${k.min}, got ${n}` };
      if (k.max !== undefined && n > k.max) return { ok: false, reason: `must be <= ${k.max}, got ${n}` };
      value = n;
      break;
    }
    case 'float': {
      let n: number;
      if (typeof raw === 'number') n = raw;
      else if (typeof raw === 'string' && /^-?(\d+(\.\d*)?|\.\d+)$/.test(raw.trim())) n = Number(raw.trim());
      else return { ok: false, reason: `expected a number, got ${show(raw)}` };
      if (!Number.isFinite(n)) return { ok: false, reason: `expected a finite number, got ${show(raw)}` };
      if (k.min !== undefined && n < k.min) return { ok: false, reason: `must be >= ${k.min}, got ${n}` };
      value = n;
      break;
    }
    case 'duration': {
      if (typeof raw !== 'string') return { ok: false, reason: `expected a duration string such as "1s", got ${show(raw)}` };
      const ms = parseDuration(raw.trim());
      if (ms === undefined) return { ok: false, reason: `invalid duration ${show(raw)}` };
      const min = k.min ?? 0;
      if (ms < min) return { ok: false, reason: `must be >= ${formatDuration(min)}, got ${show(raw)}` };
      value = ms;
      break;
    }
    case 'list': {
      if (fromFlag && typeof raw === 'string') value = splitCsv(raw);
      else if (Array.isArray(raw) && raw.every((x) => typeof x === 'string')) value = [...raw];
      else return { ok: false, reason: `expected an array of strings, got ${show(raw)}` };
      break;
    }
    case 'csv': {
      if (typeof raw === 'string') value = splitCsv(raw);
      else if (Array.isArray(raw) && raw.every((x) => typeof x === 'string')) value = raw.map((x: string) => x.trim()).filter((x: string) => x);
      else return { ok: false, reason: `expected a comma-separated string, got ${show(raw)}` };
      break;
    }
  }
  if (f.check) {
    const reason = f.check(value);
    if (reason) return { ok: false, reason };
  }
  return { ok: true, value };
}

/** A TOML basic string. JSON's escapes are valid TOML escapes; TOML also forbids a raw DEL (0x7f). */
export function tomlString(s: string): string {
  return JSON.stringify(s).replace(/\x7f/g, '\\u007f');
}

/** TOML literal of a value. */
export function tomlValue(f: FieldSpec, v: unknown): string {
  switch (f.kind.t) {
    case 'bool':
      return v ? 'true' : 'false';
    case 'int':
      return String(v);
    case 'float': {
      const s = String(v);
      return /[.eE]/.test(s) ? s : s + '.0';
    }
    case 'duration':
      return tomlString(formatDuration(v as number));
    case 'list':
      return `[${(v as string[]).map(tomlString).join(', ')}]`;
    case 'csv':
      return tomlString((v as string[]).join(','));
    default:
      return tomlString(String(v));
  }
}

function comment(text: string, indent = ''): string {
  return text
    .split('\n')
    .map((l) => (l === '' ? `${indent}#` : `${indent}# ${l}`))
    .join('\n');
}

/** Write one file: header, then each section with its comment, then each field with its comment. */
export function renderToml(spec: FileSpec, values: Record<string, any>): string {
  const out: string[] = [comment(spec.header), ''];
  for (const sec of spec.sections) {
    const obj = sectionObject(values, sec.name);
    if (sec.name !== '') {
      out.push('#######################################################', comment(sec.doc), '');
      out.push(`[${sec.name}]`, '');
    } else if (sec.doc) {
      out.push(comment(sec.doc), '');
    }
    for (const f of sec.fields) {
      const v = obj?.[camel(f.key)] ?? fieldDefault(f);
      if (f.doc) out.push(comment(f.doc));
      out.push(`${f.key} = ${tomlValue(f, v)}`, '');
    }
  }
  return out.join('\n');
}
