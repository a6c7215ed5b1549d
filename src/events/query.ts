/**
 * The event query language of subscriptions, tx_search and block_search
 * (cometbft: libs/pubsub/query/syntax/{doc,scanner,parser}.go, libs/pubsub/query/query.go;
 * cometbft/cometbft:libs/pubsub/query/syntax/parser.go).
 *
 *   query      = condition { "AND" condition }
 *   condition  = tag ( "=" (string|number|date|time) | ("<"|"<="|">"|">=") (number|date|time)
 *                    | "CONTAINS" string | "EXISTS" )
 *
 * Parse errors carry CometBFT's exact text (`offset 10: got tag, wanted <= operator, …`), byte
 * offsets included, because clients show them verbatim; subscribe prefixes them with
 * `failed to parse query: ` (fixtures/cometbft-v038-kvstore.json `subscribe_malformed`).
 *
 * `compile()` builds one matcher per condition once; `Query.matches()` then runs per published
 * message without allocating: numbers are compared digit by digit on the attribute string, times
 * are parsed into a scratch Instant. Matching is pubsub matching (query.go Matches): each condition
 * must hold for some value of its composite key, across all events of the message. The indexer's
 * "same event" rule is not applied here (it lives in src/indexer/indexer.ts).
 */
import { normalizeQueryKey } from '../names/index.js';
import { compareInstant, lastYear, parseGoTime, timeErrorMessage, TimeErr, type Instant } from './query-time.js';

export type { Instant } from './query-time.js';

export type Op = '=' | '<' | '<=' | '>' | '>=' | 'CONTAINS' | 'EXISTS';
export type OperandKind = 'string' | 'number' | 'date' | 'time';

/**
 * A non-negative decimal in canonical form: `int` without leading zeros ('' for zero), `frac`
 * without trailing zeros. The grammar has no sign, so query numbers are never negative.
 */
export interface Decimal {
  readonly int: string;
  readonly frac: string;
}

export interface Operand {
  readonly kind: OperandKind;
  /** The text as written, without quotes or the DATE/TIME keyword. */
  readonly text: string;
  /** For kind 'number'. */
  readonly num?: Decimal;
  /** For kinds 'date' and 'time'. */
  readonly time?: Instant;
}

export interface Condition {
  /** The tag as written (`tm.event`, `transfer.sender`). */
  readonly tag: string;
  /** The canonical tag: `tm.event` becomes `node.event` (src/names normalizeQueryKey). */
  readonly key: string;
  readonly op: Op;
  /** Absent for EXISTS. */
  readonly arg?: Operand;
}

/** The canonical event-type key (`tm.event` upstream). */
export const EVENT_TYPE_KEY = 'node.event';

export class QueryError extends Error {
  override readonly name = 'QueryError';
  readonly code = 'QUERY_SYNTAX';
}

// ---------------------------------------------------------------------------------------------
// Scanner (syntax/scanner.go). Offsets are UTF-8 byte offsets, as Go reports them.

const enum Tok {
  Invalid,
  Tag,
  String,
  Number,
  Time,
  Date,
  And,
  Contains,
  Exists,
  Eq,
  Lt,
  Leq,
  Gt,
  Geq,
}

/** Token names as CometBFT prints them (scanner.go tString). */
const TOK_NAME = [
  'invalid token',
  'tag',
  'string',
  'number',
  'timestamp',
  'datestamp',
  'AND operator',
  'CONTAINS operator',
  'EXISTS operator',
  '= operator',
  '< operator',
  '<= operator',
  '> operator',
  '>= operator',
];

const OP_OF: Partial<Record<Tok, Op>> = {
  [Tok.Eq]: '=',
  [Tok.Lt]: '<',
  [Tok.Leq]: '<=',
  [Tok.Gt]: '>',
  [Tok.Geq]: '>=',
  [Tok.Contains]: 'CONTAINS',
  [Tok.Exists]: 'EXISTS',
};

/** The scanner's end-of-input error (Go's io.EOF, printed as "EOF"). */
const EOF = 'EOF';

const SPACE_RE = /\p{White_Space}/u;
const LETTER_RE = /\p{L}/u;
const DIGIT_RE = /\p{Nd}/u;

function isSpace(cp: number, ch: string): boolean {
  if (cp < 0x80) return cp === 32 || (cp >= 9 && cp <= 13);
  return SPACE_RE.test(ch);
}

function isAsciiDigit(cp: number): boolean {
  return cp >= 48 && cp <= 57;
}

function isLetterOrDigit(cp: number, ch: string): boolean {
  if (cp < 0x80) return (cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122) || isAsciiDigit(cp);
  return LETTER_RE.test(ch) || DIGIT_RE.test(ch);
}

/** First rune of a tag: '_', a letter or a digit (unicode.IsLetter/IsDigit). */
function isFirstTagRune(cp: number, ch: string): boolean {
  return cp === 95 || isLetterOrDigit(cp, ch);
}

function isTagRune(cp: number, ch: string): boolean {
  return cp === 46 || cp === 95 || cp === 45 || isLetterOrDigit(cp, ch);
}

function utf8Len(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

class Scanner {
  private i = 0; // UTF-16 index into s
  private b = 0; // byte offset of i
  tok: Tok = Tok.Invalid;
  text = '';
  /** Byte offset where the current token starts. */
  pos = 0;

  constructor(private readonly s: string) {}

  private peek(): number {
    return this.i < this.s.length ? this.s.codePointAt(this.i)! : -1;
  }

  private advance(cp: number): void {
    this.i += cp > 0xffff ? 2 : 1;
    this.b += utf8Len(cp);
  }

  /** Advances to the next token. Returns null, EOF, or another error text. */
  next(): string | null {
    this.tok = Tok.Invalid;
    this.text = '';
    this.pos = this.b;
    for (;;) {
      const cp = this.peek();
      if (cp < 0) return EOF;
      const ch = String.fromCodePoint(cp);
      if (isSpace(cp, ch)) {
        this.advance(cp);
        this.pos = this.b;
        continue;
      }
      if (isAsciiDigit(cp)) return this.scanNumber();
      if (isFirstTagRune(cp, ch)) return this.scanTagLike();
      if (cp === 39 /* ' */) return this.scanString();
      if (cp === 60 || cp === 62 || cp === 61) return this.scanCompare(cp);
      this.advance(cp);
      return `invalid input ${ch} at offset ${this.b}`;
    }
  }

  private takeWhile(ok: (cp: number) => boolean): void {
    for (;;) {
      const cp = this.peek();
      if (cp < 0 || !ok(cp)) return;
      this.advance(cp);
    }
  }

  private scanNumber(): null {
    const start = this.i;
    this.takeWhile(isAsciiDigit);
    if (this.peek() === 46 /* . */) {
      this.advance(46);
      this.takeWhile(isAsciiDigit);
    }
    this.text = this.s.slice(start, this.i);
    this.tok = Tok.Number;
    return null;
  }

  private scanString(): string | null {
    this.advance(39);
    const start = this.i;
    const end = this.s.indexOf("'", start);
    if (end < 0) {
      // An unterminated string ends the input (scanner.go scanString fails with io.EOF).
      while (this.peek() >= 0) this.advance(this.peek());
      return EOF;
    }
    while (this.i < end) this.advance(this.peek());
    this.advance(39);
    this.text = this.s.slice(start, end);
    this.tok = Tok.String;
    return null;
  }

  private scanCompare(first: number): null {
    this.advance(first);
    if (first === 61) {
      this.tok = Tok.Eq;
      this.text = '=';
      return null;
    }
    const orEq = this.peek() === 61;
    if (orEq) this.advance(61);
    this.tok = first === 60 ? (orEq ? Tok.Leq : Tok.Lt) : orEq ? Tok.Geq : Tok.Gt;
    this.text = (first === 60 ? '<' : '>') + (orEq ? '=' : '');
    return null;
  }

  private scanTagLike(): string | null {
    const start = this.i;
    this.advance(this.peek());
    for (;;) {
      const cp = this.peek();
      if (cp < 0 || !isTagRune(cp, String.fromCodePoint(cp))) break;
      this.advance(cp);
    }
    const text = this.s.slice(start, this.i);
    // TIME and DATE are keywords only when followed by exactly one ' ' (scanner.go scanTagLike).
    const spaceNext = this.peek() === 32;
    if ((text === 'TIME' || text === 'DATE') && spaceNext) {
      this.advance(32);
      const date = text === 'DATE';
      const vStart = this.i;
      this.takeWhile(date ? isDateRune : isTimeRune);
      const v = this.s.slice(vStart, this.i);
      const code = parseGoTime(v, date, scratchInstant);
      if (code !== TimeErr.OK) return `invalid ${text} value: ${timeErrorMessage(code, v, date)}`;
      if (lastYear < 1900 || lastYear > 2999) return `${date ? 'datestamp' : 'timestamp'} year ${lastYear} out of range`;
      this.text = v;
      this.tok = date ? Tok.Date : Tok.Time;
      return null;
    }
    this.text = text;
    this.tok = text === 'AND' ? Tok.And : text === 'EXISTS' ? Tok.Exists : text === 'CONTAINS' ? Tok.Contains : Tok.Tag;
    return null;
  }
}

function isTimeRune(cp: number): boolean {
  // "-T:+Z" and digits
  return isAsciiDigit(cp) || cp === 45 || cp === 84 || cp === 58 || cp === 43 || cp === 90;
}

function isDateRune(cp: number): boolean {
  return isAsciiDigit(cp) || cp === 45;
}

const scratchInstant: Instant = { sec: 0, nsec: 0 };

// ---------------------------------------------------------------------------------------------
// Parser (syntax/parser.go)

/** "a, b or c" (parser.go tokLabel). */
function tokLabel(toks: readonly Tok[]): string {
  if (toks.length === 1) return TOK_NAME[toks[0]!]!;
  return toks.slice(0, -1).map((t) => TOK_NAME[t]).join(', ') + ' or ' + TOK_NAME[toks[toks.length - 1]!];
}

const WANT_TAG = [Tok.Tag];
const WANT_OP = [Tok.Leq, Tok.Geq, Tok.Lt, Tok.Gt, Tok.Eq, Tok.Contains, Tok.Exists];
const WANT_ORDERED = [Tok.Number, Tok.Time, Tok.Date];
const WANT_EQ = [Tok.Number, Tok.Time, Tok.Date, Tok.String];
const WANT_STRING = [Tok.String];

function expectTok(sc: Scanner, want: readonly Tok[]): void {
  const err = sc.next();
  if (err !== null) throw new QueryError(`offset ${sc.pos}: ${err}`);
  if (!want.includes(sc.tok)) throw new QueryError(`offset ${sc.pos}: got ${TOK_NAME[sc.tok]}, wanted ${tokLabel(want)}`);
}

/** Parses a non-negative decimal literal (`\d+(\.\d*)?` or any unsigned digits-and-point text). */
export function parseDecimal(text: string): Decimal | undefined {
  const m = /^(\d*)(?:\.(\d*))?$/.exec(text);
  if (!m || (m[1] === '' && (m[2] ?? '') === '')) return undefined;
  return { int: m[1]!.replace(/^0+/, ''), frac: (m[2] ?? '').replace(/0+$/, '') };
}

function operand(tok: Tok, text: string): Operand {
  switch (tok) {
    case Tok.String:
      return { kind: 'string', text };
    case Tok.Number:
      return { kind: 'number', text, num: parseDecimal(text)! };
    case Tok.Date: {
      const t: Instant = { sec: 0, nsec: 0 };
      parseGoTime(text, true, t);
      return { kind: 'date', text, time: t };
    }
    default: {
      const t: Instant = { sec: 0, nsec: 0 };
      parseGoTime(text, false, t);
      return { kind: 'time', text, time: t };
    }
  }
}

function parseCondition(sc: Scanner): Condition {
  expectTok(sc, WANT_TAG);
  const tag = sc.text;
  expectTok(sc, WANT_OP);
  const op = OP_OF[sc.tok]!;
  const key = normalizeQueryKey(tag);
  switch (op) {
    case 'EXISTS':
      return { tag, key, op };
    case 'CONTAINS':
      expectTok(sc, WANT_STRING);
      break;
    case '=':
      expectTok(sc, WANT_EQ);
      break;
    default:
      expectTok(sc, WANT_ORDERED);
  }
  return { tag, key, op, arg: operand(sc.tok, sc.text) };
}

/**
 * Parses a query into its conditions, or throws QueryError with CometBFT's message.
 * Like CometBFT, an unterminated string where `AND` is expected ends the query silently.
 */
export function parseQuery(query: string): Condition[] {
  const sc = new Scanner(query);
  const conds = [parseCondition(sc)];
  for (;;) {
    const err = sc.next();
    if (err === EOF) break;
    if (sc.tok !== Tok.And) throw new QueryError(`offset ${sc.pos}: got ${TOK_NAME[sc.tok]}, want AND operator`);
    conds.push(parseCondition(sc));
  }
  return conds;
}

function operandString(a: Operand): string {
  switch (a.kind) {
    case 'string':
      return `'${a.text}'`;
    case 'date':
      return `DATE ${a.text}`;
    case 'time':
      return `TIME ${a.text}`;
    default:
      return a.text;
  }
}

/** `tag op arg` as CometBFT's syntax.Condition.String(). */
export function conditionString(c: Condition, normalized = false): string {
  const tag = normalized ? c.key : c.tag;
  return c.arg ? `${tag} ${c.op} ${operandString(c.arg)}` : `${tag} ${c.op}`;
}

// ---------------------------------------------------------------------------------------------
// Numbers

/**
 * Compares the leading number of an attribute value with `d`, exactly: -1, 0, 1, or NaN when the
 * value does not start with a digit. Like query.go parseNumber, only the leading `\d+(\.\d+)?` is
 * read, so "100uatom" is 100 and "-5" or " 5" are not numbers. Allocates nothing.
 */
export function compareLeadingNumber(s: string, d: Decimal): number {
  const n = s.length;
  let i = 0;
  if (n === 0 || !isAsciiDigit(s.charCodeAt(0))) return NaN;
  while (i < n && s.charCodeAt(i) === 48) i++;
  const intStart = i;
  while (i < n && isAsciiDigit(s.charCodeAt(i))) i++;
  const intEnd = i;
  let fracStart = i;
  let fracEnd = i;
  if (i + 1 < n && s.charCodeAt(i) === 46 && isAsciiDigit(s.charCodeAt(i + 1))) {
    fracStart = i + 1;
    i = fracStart;
    while (i < n && isAsciiDigit(s.charCodeAt(i))) i++;
    fracEnd = i;
    while (fracEnd > fracStart && s.charCodeAt(fracEnd - 1) === 48) fracEnd--;
  }
  const intLen = intEnd - intStart;
  if (intLen !== d.int.length) return intLen < d.int.length ? -1 : 1;
  for (let k = 0; k < intLen; k++) {
    const a = s.charCodeAt(intStart + k);
    const b = d.int.charCodeAt(k);
    if (a !== b) return a < b ? -1 : 1;
  }
  const fracLen = fracEnd - fracStart;
  const m = Math.min(fracLen, d.frac.length);
  for (let k = 0; k < m; k++) {
    const a = s.charCodeAt(fracStart + k);
    const b = d.frac.charCodeAt(k);
    if (a !== b) return a < b ? -1 : 1;
  }
  if (fracLen !== d.frac.length) return fracLen < d.frac.length ? -1 : 1;
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Compiled matching (query.go compileCondition / matchesEvent)

type Matcher = (value: string) => boolean;

const attrInstant: Instant = { sec: 0, nsec: 0 };

function cmpTest(op: Op, c: number): boolean {
  switch (op) {
    case '=':
      return c === 0;
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    default:
      return c >= 0;
  }
}

function compileMatcher(c: Condition): Matcher {
  const arg = c.arg;
  if (c.op === 'EXISTS' || !arg) return () => true;
  const op = c.op;
  switch (arg.kind) {
    case 'string': {
      const text = arg.text;
      return op === 'CONTAINS' ? (v) => v.includes(text) : (v) => v === text;
    }
    case 'number': {
      const d = arg.num!;
      switch (op) {
        case '=':
          return (v) => compareLeadingNumber(v, d) === 0;
        case '<':
          return (v) => compareLeadingNumber(v, d) < 0;
        case '<=':
          return (v) => compareLeadingNumber(v, d) <= 0;
        case '>':
          return (v) => compareLeadingNumber(v, d) > 0;
        default:
          return (v) => compareLeadingNumber(v, d) >= 0;
      }
    }
    default: {
      // DATE arguments compare against date-formatted values, TIME against RFC 3339 ones.
      const date = arg.kind === 'date';
      const t = arg.time!;
      return (v) => parseGoTime(v, date, attrInstant) === TimeErr.OK && cmpTest(op, compareInstant(attrInstant, t));
    }
  }
}

interface CompiledCondition {
  readonly cond: Condition;
  readonly match: Matcher;
  /** True when the condition is on the event type (`node.event` / `tm.event`). */
  readonly eventKey: boolean;
  /** Composite keys never lack a '.', so a dotless tag can only match an event type (query.go findAttr). */
  readonly direct: boolean;
  /** match(''): the condition can hold through a tag that names an event type alone. */
  readonly matchesEmpty: boolean;
  readonly typePrefix: string;
}

/** A parsed, compiled query. */
export class Query {
  readonly conditions: readonly Condition[];
  private readonly compiled: readonly CompiledCondition[];

  constructor(conditions: readonly Condition[]) {
    if (conditions.length === 0) throw new QueryError('empty query');
    this.conditions = conditions;
    this.compiled = conditions.map((cond) => {
      const match = compileMatcher(cond);
      return {
        cond,
        match,
        eventKey: cond.key === EVENT_TYPE_KEY,
        direct: cond.tag.includes('.'),
        matchesEmpty: match(''),
        typePrefix: cond.tag + '.',
      };
    });
  }

  /** CometBFT's canonical form, tags as written: `tm.event = 'NewBlock' AND tx.height > 5`. */
  toString(): string {
    return this.conditions.map((c) => conditionString(c)).join(' AND ');
  }

  /** The canonical form with `tm.event` spelled `node.event`: equal for the two spellings. */
  toNormalizedString(): string {
    return this.conditions.map((c) => conditionString(c, true)).join(' AND ');
  }

  /**
   * Pubsub matching: every condition must hold for some value of its composite key.
   * `eventType` is the message type (`NewBlock`, `Tx`, …), the value of `node.event` / `tm.event`;
   * without it those keys are looked up in `attributes`. A query never matches an empty event set.
   */
  matches(attributes: Record<string, string[]>, eventType?: string): boolean {
    if (eventType === undefined) {
      let any = false;
      for (const _ in attributes) {
        any = true;
        break;
      }
      if (!any) return false;
    }
    const cs = this.compiled;
    for (let i = 0; i < cs.length; i++) {
      if (!matchOne(cs[i]!, attributes, eventType)) return false;
    }
    return true;
  }
}

function anyMatch(vals: string[] | undefined, m: Matcher): boolean {
  if (vals === undefined || !Array.isArray(vals)) return false;
  for (let i = 0; i < vals.length; i++) if (m(vals[i]!)) return true;
  return false;
}

function matchOne(c: CompiledCondition, attrs: Record<string, string[]>, eventType: string | undefined): boolean {
  if (c.eventKey) {
    if (eventType !== undefined) return c.match(eventType);
    return anyMatch(Object.hasOwn(attrs, EVENT_TYPE_KEY) ? attrs[EVENT_TYPE_KEY] : attrs['tm.event'], c.match);
  }
  if (c.direct && Object.hasOwn(attrs, c.cond.tag) && anyMatch(attrs[c.cond.tag], c.match)) return true;
  if (!c.matchesEmpty) return false;
  // A tag equal to an event type matches with the value "" (query.go matchesEvent): the type of a
  // composite key is everything before its last '.'.
  const prefix = c.typePrefix;
  for (const k in attrs) {
    if (k.length > prefix.length && k.startsWith(prefix) && k.indexOf('.', prefix.length) < 0) return true;
  }
  const tag = c.cond.tag;
  return eventType !== undefined && (tag === 'node' || tag === 'tm');
}

/** Parses and compiles a query; throws QueryError with CometBFT's message. */
export function compile(query: string): Query {
  return new Query(parseQuery(query));
}
