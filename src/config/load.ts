/**
 * Load config.toml and app.toml: defaults ← file ← flags (a flag beats the file, the file beats the
 * default). Every value is validated; the first invalid one throws a ConfigError naming its source
 * and field. Unknown keys are kept out of the result and reported in `warnings`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { configError } from './errors.js';
import { camel, defaultsOf, normalizeFlagName, parseField, sectionObject, type FieldSpec, type FileSpec, type SectionSpec } from './schema.js';
import { crossCheckNodeConfig, NODE_CONFIG_SPEC, type NodeConfig } from './node-config.js';
import { APP_CONFIG_SPEC, crossCheckAppConfig, type AppConfig } from './app-config.js';

export type FlagValue = string | number | boolean | string[];

export interface LoadConfigOptions {
  home: string;
  /**
   * Overrides by `section.key` as in the TOML files, `-` and `_` interchangeable; top-level keys
   * have no section: `{ 'rpc.laddr': 'tcp://0.0.0.0:26657', 'log_level': 'debug',
   * 'json-rpc.api': 'eth,net', 'instrumentation.prometheus-listen-addr': ':9000' }`.
   * Undefined values are skipped.
   */
  flags?: Record<string, FlagValue | undefined>;
}

/** Absolute paths of the files the node uses. */
export interface ConfigPaths {
  home: string;
  configToml: string;
  appToml: string;
  genesis: string;
  privValidatorKey: string;
  privValidatorState: string;
  nodeKey: string;
  /** config/jwt.hex: the secret of `chaind auth token` and the authenticated RPC. */
  jwtSecret: string;
  /** keystore/: Web3 Secret Storage v3 files of the personal namespace (src/keys/keystore.ts). */
  keystoreDir: string;
  dbDir: string;
  walFile: string;
  addrBook: string;
}

export interface LoadedConfig {
  home: string;
  config: NodeConfig;
  appConfig: AppConfig;
  paths: ConfigPaths;
  /** Unknown keys and other non-fatal findings, one message each, for the caller to log. */
  warnings: string[];
}

/** `rel` under `home` unless absolute (cometbft: config/config.go rootify). */
export function rootify(home: string, p: string): string {
  return isAbsolute(p) ? p : join(home, p);
}

/** A path as shown in messages: relative to home with forward slashes when inside it. */
export function displayPath(home: string, file: string): string {
  const rel = relative(resolve(home), resolve(file));
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel.split(sep).join('/') : file;
}

export function configPaths(home: string, config: NodeConfig): ConfigPaths {
  const r = (p: string) => rootify(home, p);
  return {
    home,
    configToml: r(NODE_CONFIG_SPEC.file),
    appToml: r(APP_CONFIG_SPEC.file),
    genesis: r(config.genesisFile),
    privValidatorKey: r(config.privValidatorKeyFile),
    privValidatorState: r(config.privValidatorStateFile),
    nodeKey: r(config.nodeKeyFile),
    jwtSecret: r('config/jwt.hex'),
    keystoreDir: r('keystore'),
    dbDir: r(config.dbDir),
    walFile: r(config.consensus.walFile),
    addrBook: r(config.p2p.addrBookFile),
  };
}

function fieldLabel(section: string, key: string): string {
  return section === '' ? key : `[${section}] ${key}`;
}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

interface Slot {
  spec: FileSpec;
  section: SectionSpec;
  field: FieldSpec;
}

/** Every settable field by normalized flag name: `rpc.laddr`, `log_level`, `json_rpc.ws_address`. */
function buildFlagIndex(): Map<string, Slot> {
  const index = new Map<string, Slot>();
  for (const spec of [NODE_CONFIG_SPEC, APP_CONFIG_SPEC]) {
    for (const section of spec.sections) {
      for (const field of section.fields) {
        const name = normalizeFlagName(section.name === '' ? field.key : `${section.name}.${field.key}`);
        if (index.has(name)) throw new Error(`config schema: flag ${name} is defined twice`);
        index.set(name, { spec, section, field });
      }
    }
  }
  return index;
}

const FLAG_INDEX = buildFlagIndex();

/** Flag names (`section.key`, TOML spelling) of every setting, for the CLI's option table. */
export function settingFlagNames(): string[] {
  const out: string[] = [];
  for (const spec of [NODE_CONFIG_SPEC, APP_CONFIG_SPEC]) {
    for (const section of spec.sections) {
      for (const field of section.fields) out.push(section.name === '' ? field.key : `${section.name}.${field.key}`);
    }
  }
  return out;
}

/** Read one TOML file over `target` (which holds the defaults); an absent file leaves them. */
function applyFile(
  home: string,
  spec: FileSpec,
  target: Record<string, any>,
  warnings: string[],
  sources: Map<string, string>,
): void {
  const path = join(home, spec.file);
  const label = spec.file;
  if (!existsSync(path)) {
    warnings.push(`${label}: not found; using defaults`);
    return;
  }
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(readFileSync(path, 'utf8'), { unsafeKeyBehaviour: 'drop' }) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof TomlError) {
      const first = e.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
      throw configError(label, undefined, `invalid TOML at line ${e.line}, column ${e.column}: ${first}`, 'CONFIG_SYNTAX');
    }
    throw configError(label, undefined, `cannot read: ${(e as Error).message}`, 'CONFIG_SYNTAX');
  }
  const sectionsByName = new Map(spec.sections.map((s) => [s.name, s]));
  const top = sectionsByName.get('')!;
  /** The TOML value at a dotted section name (`evm.mempool` → doc.evm.mempool), if present. */
  const rawAt = (name: string): unknown => {
    let v: unknown = doc;
    for (const part of name.split('.')) {
      if (!isTable(v) || !Object.hasOwn(v, part)) return undefined;
      v = v[part];
    }
    return v;
  };
  const applySection = (section: SectionSpec, values: Record<string, unknown>) => {
    const obj = sectionObject(target, section.name, true)!;
    const fields = new Map(section.fields.map((f) => [f.key, f]));
    for (const [key, raw] of Object.entries(values)) {
      if (section.name === '' && isTable(raw) && !fields.has(key)) continue; // a table: handled below
      // A sub-table declared as its own section (`[evm.mempool]` inside `[evm]`): handled below.
      if (section.name !== '' && !fields.has(key) && sectionsByName.has(`${section.name}.${key}`)) continue;
      const field = fields.get(key);
      const where = fieldLabel(section.name, key);
      if (!field) {
        const compat = section.compat;
        if (compat && Object.hasOwn(compat, key)) {
          const upstreamDefault = compat[key];
          if (upstreamDefault !== undefined && !sameValue(upstreamDefault, raw)) {
            warnings.push(`${label}: ${where} is not supported by chaind (ignored)`);
          }
        } else {
          warnings.push(`${label}: unknown key ${where} (ignored)`);
        }
        continue;
      }
      const r = parseField(field, raw, false);
      if (!r.ok) throw configError(label, where, r.reason);
      obj[camel(key)] = r.value;
      sources.set(`${section.name}.${key}`, label);
    }
  };
  applySection(top, doc);
  for (const [name, raw] of Object.entries(doc)) {
    if (!isTable(raw) || top.fields.some((f) => f.key === name)) continue;
    if (!sectionsByName.has(name) && !spec.ignoredSections.includes(name)) warnings.push(`${label}: unknown section [${name}] (ignored)`);
  }
  for (const section of spec.sections) {
    if (section.name === '') continue;
    const raw = rawAt(section.name);
    if (raw === undefined) continue;
    if (!isTable(raw)) throw configError(label, `[${section.name}]`, 'expected a table');
    applySection(section, raw);
  }
}

/** Load both files from `home`, then apply the flags. Throws ConfigError on the first invalid value. */
export function loadConfig(opts: LoadConfigOptions): LoadedConfig {
  const home = resolve(opts.home);
  const warnings: string[] = [];
  // Where each explicitly set value came from, for cross-field messages: `section.key` → file or flag.
  const sources = new Map<string, string>();
  const config = defaultsOf(NODE_CONFIG_SPEC) as NodeConfig;
  const appConfig = defaultsOf(APP_CONFIG_SPEC) as AppConfig;
  applyFile(home, NODE_CONFIG_SPEC, config as unknown as Record<string, any>, warnings, sources);
  applyFile(home, APP_CONFIG_SPEC, appConfig as unknown as Record<string, any>, warnings, sources);

  for (const [name, raw] of Object.entries(opts.flags ?? {})) {
    if (raw === undefined) continue;
    const slot = FLAG_INDEX.get(normalizeFlagName(name));
    if (!slot) throw configError(`flag --${name}`, undefined, 'unknown setting');
    const r = parseField(slot.field, Array.isArray(raw) ? raw.join(',') : typeof raw === 'number' ? String(raw) : raw, true);
    if (!r.ok) throw configError(`flag --${name}`, undefined, r.reason);
    const target = (slot.spec === NODE_CONFIG_SPEC ? config : appConfig) as unknown as Record<string, any>;
    const obj = sectionObject(target, slot.section.name, true)!;
    obj[camel(slot.field.key)] = r.value;
    sources.set(`${slot.section.name}.${slot.field.key}`, `flag --${name}`);
  }

  for (const [path, reason] of crossCheckNodeConfig(config)) {
    const dot = path.lastIndexOf('.');
    const [section, key] = [path.slice(0, dot), path.slice(dot + 1)];
    const source = sources.get(path) ?? NODE_CONFIG_SPEC.file;
    throw source.startsWith('flag ') ? configError(source, undefined, reason) : configError(source, fieldLabel(section, key), reason);
  }

  for (const [path, reason] of crossCheckAppConfig(appConfig)) {
    const dot = path.lastIndexOf('.');
    const [section, key] = [path.slice(0, dot), path.slice(dot + 1)];
    const source = sources.get(path) ?? APP_CONFIG_SPEC.file;
    throw source.startsWith('flag ') ? configError(source, undefined, reason) : configError(source, fieldLabel(section, key), reason);
  }

  return { home, config, appConfig, paths: configPaths(home, config), warnings };
}
