/**
 * Structured logger: levels debug|info|warn|error|none, `plain` or `json` output, child loggers.
 *
 * Plain lines look like CometBFT's (libs/log/tm_logger.go) with an ISO timestamp:
 *   `I[2026-01-01T00:00:00.000Z] committed block height=5 module=consensus`
 * The call's fields come first, then the child's context fields.
 *
 * `log_level` accepts CometBFT's module form as well: `consensus:debug,p2p:warn,*:info`. A child
 * created with `{module}` takes that module's level.
 *
 * A disabled level costs one call to an empty function: each logger binds its methods at creation
 * to either the writer or a no-op, so hot paths may call `log.debug(...)` freely. Build expensive
 * fields only under `if (log.enabled('debug'))`.
 */

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'none'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = 'plain' | 'json';
export type LogFields = Record<string, unknown>;

/** Levels in order: a line is written when its level's rank is at least the logger's. */
export const LOG_RANK: Readonly<Record<LogLevel, number>> = { debug: 0, info: 1, warn: 2, error: 3, none: 4 };
const RANK = LOG_RANK;
const LETTER: Record<Exclude<LogLevel, 'none'>, string> = { debug: 'D', info: 'I', warn: 'W', error: 'E' };

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** True when messages at `level` are written. */
  enabled(level: Exclude<LogLevel, 'none'>): boolean;
  /** A logger that adds `fields` to every line; `{module}` also selects the module's level. */
  child(fields: LogFields): Logger;
  readonly level: LogLevel;
}

/** Parsed `log_level`: a default and per-module overrides. */
export interface LevelSpec {
  default: LogLevel;
  modules: Record<string, LogLevel>;
}

export function isLogLevel(s: string): s is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(s);
}

/**
 * Parse `info`, or CometBFT's `module:level,...,*:level` list (cometbft: libs/cli/flags/log_level.go).
 * Modules not listed take the `*` level (default info). Throws an Error naming the bad part.
 */
export function parseLogLevel(s: string): LevelSpec {
  const text = s.trim();
  if (isLogLevel(text)) return { default: text, modules: {} };
  if (!text.includes(':')) throw new Error(`invalid log level "${s}" (want one of ${LOG_LEVELS.join('|')})`);
  const spec: LevelSpec = { default: 'info', modules: {} };
  for (const part of text.split(',')) {
    const [mod, lvl, extra] = part.split(':').map((x) => x.trim());
    if (!mod || lvl === undefined || extra !== undefined || !isLogLevel(lvl)) {
      throw new Error(`invalid log level "${s}": bad entry "${part}" (want module:level)`);
    }
    if (mod === '*') spec.default = lvl;
    else spec.modules[mod] = lvl;
  }
  return spec;
}

export interface LoggerOptions {
  /** A level name, a `module:level` list, or a parsed spec. Default `info`. */
  level?: LogLevel | string | LevelSpec;
  format?: LogFormat;
  /** Where lines go; default process.stdout (as CometBFT). */
  write?: (line: string) => void;
  /** Clock for tests. */
  now?: () => Date;
}

/** Format one value for plain output: quote when needed so that the line stays parseable. */
function plainValue(v: unknown): string {
  const s = stringify(v);
  return s === '' || /[\s"=\\]/.test(s) ? JSON.stringify(s) : s;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0').toUpperCase());

function stringify(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null || v === undefined) return String(v);
  // Bytes print as upper-case hex, like CometBFT's HexBytes.
  if (v instanceof Uint8Array) {
    let out = '';
    for (const b of v) out += HEX[b];
    return out;
  }
  if (v instanceof Error) return v.message;
  if (v instanceof Date) return v.toISOString();
  try {
    return JSON.stringify(v, jsonReplacer);
  } catch {
    return String(v);
  }
}

function jsonReplacer(_k: string, v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Uint8Array) return stringify(v);
  if (v instanceof Error) return v.message;
  return v;
}

function noop(): void {}

class StructuredLogger implements Logger {
  readonly level: LogLevel;
  debug: (msg: string, fields?: LogFields) => void;
  info: (msg: string, fields?: LogFields) => void;
  warn: (msg: string, fields?: LogFields) => void;
  error: (msg: string, fields?: LogFields) => void;

  constructor(
    private readonly spec: LevelSpec,
    private readonly format: LogFormat,
    private readonly write: (line: string) => void,
    private readonly now: () => Date,
    private readonly context: LogFields,
  ) {
    const mod = typeof context.module === 'string' ? context.module : undefined;
    this.level = (mod !== undefined ? spec.modules[mod] : undefined) ?? spec.default;
    const rank = RANK[this.level];
    this.debug = rank <= RANK.debug ? (m, f) => this.emit('debug', m, f) : noop;
    this.info = rank <= RANK.info ? (m, f) => this.emit('info', m, f) : noop;
    this.warn = rank <= RANK.warn ? (m, f) => this.emit('warn', m, f) : noop;
    this.error = rank <= RANK.error ? (m, f) => this.emit('error', m, f) : noop;
  }

  enabled(level: Exclude<LogLevel, 'none'>): boolean {
    return RANK[level] >= RANK[this.level];
  }

  child(fields: LogFields): Logger {
    return new StructuredLogger(this.spec, this.format, this.write, this.now, { ...this.context, ...fields });
  }

  private emit(level: Exclude<LogLevel, 'none'>, msg: string, fields?: LogFields): void {
    const ts = this.now().toISOString();
    let line: string;
    if (this.format === 'json') {
      const obj: LogFields = { level, ts, msg };
      if (fields) for (const k in fields) obj[k] = fields[k];
      for (const k in this.context) obj[k] = this.context[k];
      line = JSON.stringify(obj, jsonReplacer);
    } else {
      line = `${LETTER[level]}[${ts}] ${msg}`;
      if (fields) for (const k in fields) line += ` ${k}=${plainValue(fields[k])}`;
      for (const k in this.context) line += ` ${k}=${plainValue(this.context[k])}`;
    }
    this.write(line + '\n');
  }
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const lv = opts.level ?? 'info';
  const spec = typeof lv === 'string' ? parseLogLevel(lv) : lv;
  const write = opts.write ?? ((line: string) => void process.stdout.write(line));
  return new StructuredLogger(spec, opts.format ?? 'plain', write, opts.now ?? (() => new Date()), {});
}

/** A logger that drops everything (tests, library defaults). */
export const nullLogger: Logger = createLogger({ level: 'none', write: noop });
