/**
 * The kv indexer behind `tx`, `tx_search` and `block_search`
 * (cometbft: state/txindex/kv/kv.go, state/indexer/block/kv/kv.go, rpc/core/tx.go, blocks.go;
 * cometbft/cometbft:rpc/core/routes.go, cometbft/cometbft:state/txindex/kv/kv.go). Key layout: src/store/indexer-keys.ts.
 *
 * Writing: `indexBlock` and `indexTxs` run inside the block's write transaction (the block
 * executor's `storage.transactionSync`), so a committed block is always searchable: CometBFT's
 * asynchronous indexer service can lag (issue cometbft#4236), this one cannot.
 *
 * Searching keeps CometBFT's results but not its plan. CometBFT scans every condition's rows and
 * intersects the hit sets; here one condition drives and the rest are checked against the
 * position row, which carries the tx's indexed attributes:
 *   - `tx.hash …`              one record lookup; a condition on tx.hash with any operator makes
 *                               the query that lookup alone (kv.go lookForHash)
 *   - `tx.height` / `block.height` bounds   a seek over the position rows; the count comes from
 *                               per-height cumulative counters, so a range of any width costs two seeks
 *   - `tag = 'v'`              a seek over the (tag, v) rows, already in (height, index) order
 *   - `tag > n`, `tag <= n` …  a seek over the number rows (order-preserving encoding)
 *   - `EXISTS`, `CONTAINS`     a scan of the tag's rows (as in CometBFT: no value order helps)
 * The driver is the condition with the fewest rows (counted natively in LMDB up to a cap).
 * With no other condition, a page is read by LMDB's native offset and the total by a native count.
 *
 * Semantics kept from CometBFT 0.38:
 *   - attributes are indexed only with index=true; `tx.hash`/`tx.height` (`block.height` for
 *     blocks) as an app composite key makes indexing fail with CometBFT's error;
 *   - `=` compares the text exactly (`= 1` does not match "01"); ranges read the value as a number
 *     (sign, decimals, exponent allowed; leading/trailing spaces trimmed for txs); ranges with a
 *     DATE or TIME bound match nothing (kv.go matchRange only handles numbers);
 *   - all attribute conditions must hold within one event (hits keyed by hash + event sequence,
 *     kv.go setTmpHashes), so an AND across two event types finds nothing. `eventMatch: 'sameType'`
 *     relaxes this to "conditions on one event type hold within one event of it";
 *   - a failed tx does not overwrite an earlier successful tx with the same hash (kv.go Index);
 *   - `tm.event`/`node.event` conditions are ordinary attribute conditions (nothing indexes them);
 *   - results sorted by height then index (tx default asc, block default desc), then paginated.
 * Deliberate differences (CometBFT behaviour there is accidental): several conditions on
 * `tx.height`/`block.height` intersect (CometBFT keeps the first equality, or drops equalities when a
 * range exists); several ranges on one tag intersect (CometBFT: the last bound of each side wins);
 * `tx.height = 1.5` matches nothing (CometBFT truncates to 1); numbers compare exactly rather than
 * at 125 bits; `=` is an exact match (CometBFT's is a prefix scan up to the next `/`, so
 * `k = 'a'` also finds the value `a/1`).
 */
import type { AbciEvent, ExecTxResult } from '../abci/types.js';
import { parseQuery, Query, type Condition } from '../events/query.js';
import {
  decodeIndexed,
  decodeTxRecord,
  encodeIndexed,
  encodeTxRecord,
  indexedEvents,
  recordHeader,
  type IndexedEvent,
  type TxRecord,
} from '../store/indexer-codec.js';
import {
  blockTail,
  compareNum,
  concat,
  encodeNum,
  HASHED_VALUE,
  heightBound,
  isInteger,
  makeNum,
  numCeil,
  numFloor,
  numPrefix,
  RowKeys,
  P_CUM,
  P_DEL,
  P_NUM,
  P_POS,
  P_STR,
  parseIndexNumber,
  posKey,
  prefixEnd,
  strPrefix,
  tagFits,
  tagPrefix,
  txTail,
  u64,
  type NumVal,
} from '../store/indexer-keys.js';
import type { BinaryDB, Storage } from '../store/storage.js';

export type { TxRecord } from '../store/indexer-codec.js';

/** rpc/core/env.go defaultPerPage / maxPerPage, rpc/core/events.go maxQueryLength. */
export const DEFAULT_PER_PAGE = 30;
export const MAX_PER_PAGE = 100;
export const MAX_QUERY_LENGTH = 512;

export type IndexerErrorCode = 'RESERVED_KEY' | 'QUERY_TOO_LONG' | 'ORDER_BY' | 'PAGE' | 'HASH';

/** An indexing or search failure; the message is CometBFT's text for the same case. */
export class IndexerError extends Error {
  override readonly name = 'IndexerError';
  constructor(
    message: string,
    readonly code: IndexerErrorCode,
  ) {
    super(message);
  }
}

export interface TxInput {
  tx: Uint8Array;
  /** Position of the tx in its block. */
  index: number;
  result: ExecTxResult;
  /** sha256 of the tx: 32 bytes, or hex. */
  hash: Uint8Array | string;
}

export interface SearchOptions {
  /** 1-based; absent means 1 and is never an error. */
  page?: number;
  /** Below 1 or absent: 30; above 100: 100. */
  perPage?: number;
  /** 'asc', 'desc' or ''/absent for the default (tx: asc, block: desc). */
  orderBy?: string;
}

/** How attribute conditions combine: CometBFT 0.38 ('sameEvent'), or per event type ('sameType'). */
export type EventMatch = 'sameEvent' | 'sameType';

export interface IndexerOptions {
  eventMatch?: EventMatch;
}

export interface TxSearchResult {
  txs: TxRecord[];
  totalCount: number;
}

export interface BlockSearchResult {
  heights: bigint[];
  totalCount: number;
}

// ---------------------------------------------------------------------------------------------
// Pagination (rpc/core/env.go validatePerPage, validatePage; tx.go / blocks.go order_by)

export function validatePerPage(perPage: number | undefined): number {
  if (perPage === undefined || !Number.isFinite(perPage) || perPage < 1) return DEFAULT_PER_PAGE;
  return perPage > MAX_PER_PAGE ? MAX_PER_PAGE : Math.trunc(perPage);
}

export function validatePage(page: number | undefined, perPage: number, totalCount: number): number {
  if (page === undefined) return 1;
  let pages = Math.trunc((totalCount - 1) / perPage) + 1;
  if (pages === 0) pages = 1;
  if (!(page > 0) || page > pages) throw new IndexerError(`page should be within [1, ${pages}] range, given ${page}`, 'PAGE');
  return Math.trunc(page);
}

export function validateOrderBy(orderBy: string | undefined, dflt: 'asc' | 'desc'): 'asc' | 'desc' {
  if (orderBy === undefined || orderBy === '') return dflt;
  if (orderBy === 'asc' || orderBy === 'desc') return orderBy;
  throw new IndexerError('expected order_by to be either `asc` or `desc` or empty', 'ORDER_BY');
}

// ---------------------------------------------------------------------------------------------
// Helpers

const EMPTY = Buffer.alloc(0);
const MAX_U64 = (1n << 64n) - 1n;
/** Rows counted natively per candidate driver before it is called "large". */
const ESTIMATE_CAP = 2000;

const TRIM_RE = /^\p{White_Space}+|\p{White_Space}+$/gu;

function maybeSpace(c: number): boolean {
  return c <= 32 || c === 0x85 || c === 0xa0 || c >= 0x1680;
}

/** bytes.TrimSpace, which kv.go extractValueFromKey applies to tx values before CONTAINS and ranges. */
function goTrim(s: string): string {
  if (s.length === 0 || (!maybeSpace(s.charCodeAt(0)) && !maybeSpace(s.charCodeAt(s.length - 1)))) return s;
  return s.replace(TRIM_RE, '');
}

function hexVal(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** fmt %#U of a byte as a rune: `U+0058 'X'`, or `U+0080` when not printable. */
function fmtRune(b: number): string {
  const u = 'U+' + b.toString(16).toUpperCase().padStart(4, '0');
  const printable = (b >= 0x20 && b < 0x7f) || (b > 0xa0 && b !== 0xad);
  return printable ? `${u} '${String.fromCharCode(b)}'` : u;
}

/** encoding/hex DecodeString, with Go's error texts. */
function goHexDecode(s: string): Buffer {
  const src = Buffer.from(s, 'utf8');
  const out = Buffer.allocUnsafe(src.length >> 1);
  let j = 1;
  for (; j < src.length; j += 2) {
    const a = hexVal(src[j - 1]!);
    const b = hexVal(src[j]!);
    if (a < 0) throw new Error(`encoding/hex: invalid byte: ${fmtRune(src[j - 1]!)}`);
    if (b < 0) throw new Error(`encoding/hex: invalid byte: ${fmtRune(src[j]!)}`);
    out[j >> 1] = (a << 4) | b;
  }
  if (src.length % 2 === 1) {
    if (hexVal(src[j - 1]!) < 0) throw new Error(`encoding/hex: invalid byte: ${fmtRune(src[j - 1]!)}`);
    throw new Error('encoding/hex: odd length hex string');
  }
  return out;
}

function toHash(h: Uint8Array | string): Buffer {
  if (typeof h === 'string') return Buffer.from(h, 'hex');
  return Buffer.from(h.buffer, h.byteOffset, h.byteLength);
}

function readU64(b: Uint8Array): number {
  return Number(Buffer.from(b.buffer, b.byteOffset, b.byteLength).readBigUInt64BE(0));
}

function countUpTo(db: BinaryDB, start: Buffer, end: Buffer, cap: number): number {
  // Native skip of `cap` rows: if one is left, the driver is large; otherwise count it exactly.
  for (const _ of db.getKeys({ start, end, offset: cap, limit: 1 })) return cap + 1;
  return db.getKeysCount({ start, end });
}

/** Per-height cumulative counts (0x05 rows): the count over any height range is two seeks. */
class CumCounter {
  constructor(private readonly db: BinaryDB) {}

  /** Count at heights ≤ h. */
  at(h: bigint): number {
    if (h < 0n) return 0;
    for (const { value } of this.db.getRange({ start: heightBound(P_CUM, h), end: Buffer.from([P_CUM]), reverse: true, limit: 1 })) {
      return readU64(value);
    }
    return 0;
  }

  range(lo: bigint, hi: bigint): number {
    return lo > hi ? 0 : this.at(hi) - this.at(lo - 1n);
  }

  /** Sets the count at height h. Indexing in height order only ever appends. */
  set(h: bigint, countAtH: number): void {
    const key = heightBound(P_CUM, h);
    const prev = this.at(h - 1n);
    const cur = this.db.getBinary(key);
    const oldAt = cur ? readU64(cur) - prev : 0;
    const delta = countAtH - oldAt;
    if ((!cur && countAtH === 0) || (cur && delta === 0)) return;
    this.db.putSync(key, u64(BigInt(prev + countAtH)));
    if (delta === 0) return;
    // Out-of-order or repeated indexing: shift every later total (collect first: no writes under a cursor).
    const later: { key: Buffer; value: number }[] = [];
    for (const e of this.db.getRange({ start: heightBound(P_CUM, h + 1n), end: Buffer.from([P_CUM + 1]) })) {
      later.push({ key: Buffer.from(e.key as Uint8Array), value: readU64(e.value) });
    }
    for (const e of later) this.db.putSync(e.key, u64(BigInt(e.value + delta)));
  }
}

// ---------------------------------------------------------------------------------------------
// Query plans

interface EvalCond {
  kind: 'eq' | 'contains' | 'exists' | 'range';
  tag: string;
  text: string;
  lo?: NumVal;
  loInc: boolean;
  hi?: NumVal;
  hiInc: boolean;
}

interface Plan {
  /** A condition can never hold: no results. */
  empty: boolean;
  /** Inclusive height bounds. */
  lo: bigint;
  hi: bigint;
  /** A `tx.hash` condition: that one record, every other condition ignored. */
  hash?: Buffer;
  /** Conditions checked per candidate on the decimal height. */
  heightChecks: ((height: string) => boolean)[];
  /** Attribute conditions (ranges merged per tag). */
  events: EvalCond[];
  /** events grouped for the same-event rule: each group must hold within one event. */
  groups: EvalCond[][];
}

interface Kind {
  /** Length of the position tail: 12 (height, index) or 8 (height). */
  tailLen: number;
  heightTag: string;
  hashTag?: string;
  /** Trim values before CONTAINS and ranges (tx indexer: kv.go extractValueFromKey). */
  trim: boolean;
  /** Where the attribute block starts in a position row (after the tx hash). */
  attrOffset: number;
}

const TX_KIND: Kind = { tailLen: 12, heightTag: 'tx.height', hashTag: 'tx.hash', trim: true, attrOffset: 32 };
const BLOCK_KIND: Kind = { tailLen: 8, heightTag: 'block.height', trim: false, attrOffset: 0 };

function argNumber(c: Condition): NumVal | undefined {
  const a = c.arg!;
  if (a.kind === 'number') return makeNum(false, a.num!.int, a.num!.frac, 0);
  if (a.kind === 'string') return parseIndexNumber(a.text); // syntax.Arg.Number() reads the text
  return undefined;
}

function buildPlan(conds: readonly Condition[], kind: Kind, eventMatch: EventMatch): Plan {
  const plan: Plan = { empty: false, lo: 0n, hi: MAX_U64, heightChecks: [], events: [], groups: [] };
  // kv.go Search → lookForHash: the first condition on `tx.hash`, whatever its operator, is a
  // lookup of its hex-decoded argument and every other condition is ignored, so the common
  // `tm.event = 'Tx' AND tx.hash = 'X'` (nothing indexes tm.event) finds the tx.
  const byHash = kind.hashTag === undefined ? undefined : conds.find((c) => c.tag === kind.hashTag);
  if (byHash) {
    try {
      // syntax.Arg.Value(): the argument's text, '' for EXISTS.
      plan.hash = goHexDecode(byHash.arg?.text ?? '');
    } catch (e) {
      throw new IndexerError(`error during searching for a hash in the query: ${(e as Error).message}`, 'HASH');
    }
    // TxIndex.Get: txindex.ErrorEmptyHash.
    if (plan.hash.length === 0) throw new IndexerError('error while retrieving the result: transaction hash cannot be empty', 'HASH');
    return plan;
  }
  const ranges = new Map<string, EvalCond>();
  for (const c of conds) {
    const tag = c.tag;
    if (tag === kind.heightTag) {
      if (c.op === 'EXISTS') continue;
      if (c.op === 'CONTAINS') {
        const text = c.arg!.text;
        plan.heightChecks.push((h) => h.includes(text));
        continue;
      }
      const n = argNumber(c);
      if (!n) {
        plan.empty = true; // a date, time or non-numeric text never equals or bounds a height
        continue;
      }
      switch (c.op) {
        case '=':
          if (!isInteger(n)) plan.empty = true;
          else {
            const v = numFloor(n);
            if (v > plan.lo) plan.lo = v;
            if (v < plan.hi) plan.hi = v;
          }
          break;
        case '>': {
          const v = numFloor(n) + 1n;
          if (v > plan.lo) plan.lo = v;
          break;
        }
        case '>=': {
          const v = numCeil(n);
          if (v > plan.lo) plan.lo = v;
          break;
        }
        case '<': {
          const v = numCeil(n) - 1n;
          if (v < plan.hi) plan.hi = v;
          break;
        }
        default: {
          const v = numFloor(n);
          if (v < plan.hi) plan.hi = v;
        }
      }
      continue;
    }
    switch (c.op) {
      case '=':
        plan.events.push({ kind: 'eq', tag, text: c.arg!.text, loInc: false, hiInc: false });
        break;
      case 'CONTAINS':
        plan.events.push({ kind: 'contains', tag, text: c.arg!.text, loInc: false, hiInc: false });
        break;
      case 'EXISTS':
        plan.events.push({ kind: 'exists', tag, text: '', loInc: false, hiInc: false });
        break;
      default: {
        const n = c.arg!.kind === 'number' ? argNumber(c) : undefined;
        if (!n) {
          plan.empty = true; // DATE/TIME bounds: kv.go matchRange only compares numbers
          continue;
        }
        let r = ranges.get(tag);
        if (!r) {
          r = { kind: 'range', tag, text: '', loInc: false, hiInc: false };
          ranges.set(tag, r);
          plan.events.push(r);
        }
        if (c.op === '>' || c.op === '>=') {
          const inc = c.op === '>=';
          const cmp = r.lo ? compareNum(n, r.lo) : 1;
          if (cmp > 0 || (cmp === 0 && !inc)) {
            r.lo = n;
            r.loInc = inc;
          }
        } else {
          const inc = c.op === '<=';
          const cmp = r.hi ? compareNum(n, r.hi) : -1;
          if (cmp < 0 || (cmp === 0 && !inc)) {
            r.hi = n;
            r.hiInc = inc;
          }
        }
      }
    }
  }
  if (plan.lo > plan.hi) plan.empty = true;
  for (const r of ranges.values()) {
    if (r.lo && r.hi) {
      const c = compareNum(r.lo, r.hi);
      if (c > 0 || (c === 0 && !(r.loInc && r.hiInc))) plan.empty = true;
    }
  }
  if (eventMatch === 'sameEvent') {
    if (plan.events.length > 0) plan.groups = [plan.events];
  } else {
    const byType = new Map<string, EvalCond[]>();
    for (const c of plan.events) {
      const dot = c.tag.lastIndexOf('.');
      const t = dot < 0 ? c.tag : c.tag.slice(0, dot);
      let g = byType.get(t);
      if (!g) byType.set(t, (g = []));
      g.push(c);
    }
    plan.groups = [...byType.values()];
  }
  return plan;
}

function inRange(c: EvalCond, v: NumVal): boolean {
  if (c.lo) {
    const r = compareNum(v, c.lo);
    if (r < 0 || (r === 0 && !c.loInc)) return false;
  }
  if (c.hi) {
    const r = compareNum(v, c.hi);
    if (r > 0 || (r === 0 && !c.hiInc)) return false;
  }
  return true;
}

function valueHolds(c: EvalCond, v: string, trim: boolean): boolean {
  switch (c.kind) {
    case 'eq':
      return v === c.text;
    case 'contains':
      return (trim ? goTrim(v) : v).includes(c.text);
    case 'exists':
      return true;
    default: {
      const n = parseIndexNumber(trim ? goTrim(v) : v);
      return n !== undefined && inRange(c, n);
    }
  }
}

function holdsIn(c: EvalCond, e: IndexedEvent, trim: boolean): boolean {
  const keys = e.keys;
  for (let j = 0; j < keys.length; j++) {
    if (keys[j] === c.tag && valueHolds(c, e.values[j]!, trim)) return true;
  }
  return false;
}

function groupsHold(groups: EvalCond[][], events: IndexedEvent[], trim: boolean): boolean {
  for (const g of groups) {
    let found = false;
    for (const e of events) {
      let all = true;
      for (const c of g) {
        if (!holdsIn(c, e, trim)) {
          all = false;
          break;
        }
      }
      if (all) {
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The shared search engine

type DriverType = 'height' | 'eq' | 'num' | 'scan';

interface Driver {
  type: DriverType;
  cond?: EvalCond;
  start: Buffer;
  end: Buffer;
  /** Bytes before the value in a scan row (`0x02 tag 0x00`). */
  prefixLen: number;
  estimate: number;
}

/** Positions (tails) in ascending order, and how to read a page of them. */
interface Hits {
  total: number;
  /** Tails of rows [skip, skip+limit) in the requested order. */
  page(skip: number, limit: number, desc: boolean): Buffer[];
}

class Engine {
  private readonly cum: CumCounter;
  /** The row keys' buffer (forEachRow hands each key to a synchronous put or remove, which copies it). */
  private readonly rows = new RowKeys();

  constructor(
    private readonly db: BinaryDB,
    private readonly kind: Kind,
    private readonly eventMatch: EventMatch,
    private readonly results?: BinaryDB,
  ) {
    this.cum = new CumCounter(db);
  }

  // --- writing ---------------------------------------------------------------------------------

  keyOk = (composite: string): boolean => tagFits(composite, this.kind.tailLen);

  /** Writes the position row and the attribute rows of one tx or block. */
  writePosition(tail: Buffer, head: Uint8Array | undefined, events: IndexedEvent[]): void {
    this.db.putSync(posKey(P_POS, tail), encodeIndexed(head, events));
    this.forEachRow(events, tail, (k) => this.db.putSync(k, EMPTY));
  }

  /** Removes the position row at tail and its attribute rows; returns the row's value, if any. */
  removePosition(tail: Buffer): Buffer | undefined {
    const pk = posKey(P_POS, tail);
    const v = this.db.getBinary(pk);
    if (!v) return undefined;
    const value = Buffer.from(v);
    this.forEachRow(decodeIndexed(value, this.kind.attrOffset), tail, (k) => this.db.removeSync(k));
    this.db.removeSync(pk);
    return value;
  }

  private forEachRow(events: IndexedEvent[], tail: Buffer, fn: (key: Buffer) => void): void {
    const seen = new Set<string>();
    const rows = this.rows;
    const trim = this.kind.trim;
    for (const e of events) {
      for (let j = 0; j < e.keys.length; j++) {
        const key = e.keys[j]!;
        const value = e.values[j]!;
        const id = key + '\0' + value;
        if (seen.has(id)) continue;
        seen.add(id);
        const sk = rows.str(key, value, tail);
        if (sk !== undefined) fn(sk);
        const n = parseIndexNumber(trim ? goTrim(value) : value);
        if (n) {
          const nk = rows.num(key, n, tail);
          if (nk !== undefined) fn(nk);
        }
      }
    }
  }

  setCount(height: bigint, n: number): void {
    this.cum.set(height, n);
  }

  // --- searching -------------------------------------------------------------------------------

  plan(q: Query): Plan {
    return buildPlan(q.conditions, this.kind, this.eventMatch);
  }

  /** Number of indexed positions with lo ≤ height ≤ hi. */
  private heightCount(lo: bigint, hi: bigint): number {
    if (lo > hi) return 0;
    let n = this.cum.range(lo, hi);
    if (this.kind.hashTag) n -= this.db.getKeysCount({ start: heightBound(P_DEL, lo), end: heightBound(P_DEL, hi + 1n) });
    return n;
  }

  private drivers(plan: Plan): Driver[] {
    const tl = this.kind.tailLen;
    const out: Driver[] = [
      {
        type: 'height',
        start: heightBound(P_POS, plan.lo),
        end: heightBound(P_POS, plan.hi + 1n),
        prefixLen: 1,
        estimate: this.heightCount(plan.lo, plan.hi),
      },
    ];
    for (const c of plan.events) {
      if (!tagFits(c.tag, tl)) {
        // No row can carry this tag, so the condition never holds.
        out.push({ type: 'scan', cond: c, start: EMPTY, end: EMPTY, prefixLen: 0, estimate: 0 });
        continue;
      }
      let d: Driver;
      if (c.kind === 'eq') {
        const p = strPrefix(c.tag, c.text, tl);
        const end = plan.hi >= MAX_U64 ? prefixEnd(p) : concat(p, u64(plan.hi + 1n));
        d = { type: 'eq', cond: c, start: concat(p, u64(plan.lo)), end, prefixLen: p.length, estimate: 0 };
      } else if (c.kind === 'range') {
        const tp = tagPrefix(P_NUM, c.tag);
        const after = Buffer.alloc(tl + 1, 0xff);
        const start = c.lo ? (c.loInc ? numPrefix(c.tag, c.lo) : concat(numPrefix(c.tag, c.lo), after)) : tp;
        const end = c.hi ? (c.hiInc ? concat(numPrefix(c.tag, c.hi), after) : numPrefix(c.tag, c.hi)) : prefixEnd(tp);
        d = { type: 'num', cond: c, start, end, prefixLen: tp.length, estimate: 0 };
      } else {
        const tp = tagPrefix(P_STR, c.tag);
        d = { type: 'scan', cond: c, start: tp, end: prefixEnd(tp), prefixLen: tp.length, estimate: 0 };
      }
      d.estimate = countUpTo(this.db, d.start, d.end, ESTIMATE_CAP);
      out.push(d);
    }
    return out;
  }

  /** Whether candidates of driver d need their position row checked. */
  private residual(plan: Plan, d: Driver): boolean {
    return plan.heightChecks.length > 0 || plan.events.length > (d.type === 'height' ? 0 : 1);
  }

  /**
   * Rough work per driver, in "rows read natively" units (bench/search.bench.ts): a native count
   * or skip costs ~1 per row, a row read in JS ~5, decoding a position row to check it ~20.
   */
  private cost(plan: Plan, d: Driver): number {
    const check = this.residual(plan, d);
    switch (d.type) {
      case 'height':
        return check ? d.estimate * 20 : 1; // cumulative counts + native offset
      case 'eq':
        return check ? d.estimate * 25 : d.estimate; // native count + native offset
      case 'num':
        return d.estimate * (check ? 25 : 6); // read, dedupe, sort
      default:
        return d.estimate * (check ? 25 : d.cond!.kind === 'contains' ? 8 : 6);
    }
  }

  private choose(plan: Plan): Driver {
    const ds = this.drivers(plan);
    const rank: Record<DriverType, number> = { height: 0, eq: 1, num: 2, scan: 3 };
    // A capped estimate only says "large": count those exactly (natively) before comparing.
    if (ds.some((d) => d.estimate > ESTIMATE_CAP && d.type !== 'height') && ds.every((d) => d.estimate > ESTIMATE_CAP || d.type === 'height')) {
      for (const d of ds) if (d.type !== 'height' && d.estimate > ESTIMATE_CAP) d.estimate = this.db.getKeysCount({ start: d.start, end: d.end });
    }
    let best = ds[0]!;
    let bestCost = Infinity;
    for (const d of ds) {
      if (d.estimate === 0) return d; // an AND with an empty side
      const c = this.cost(plan, d);
      if (c < bestCost || (c === bestCost && rank[d.type] < rank[best.type])) {
        best = d;
        bestCost = c;
      }
    }
    if (best.type !== 'height' && best.estimate > ESTIMATE_CAP) best.estimate = this.db.getKeysCount({ start: best.start, end: best.end });
    return best;
  }

  /** Every candidate's check beyond what its driver guarantees. */
  private check(plan: Plan, tail: Buffer, value: Buffer): boolean {
    if (plan.heightChecks.length > 0) {
      const h = tail.readBigUInt64BE(0).toString();
      for (const f of plan.heightChecks) if (!f(h)) return false;
    }
    if (plan.groups.length === 0) return true;
    return groupsHold(plan.groups, decodeIndexed(value, this.kind.attrOffset), this.kind.trim);
  }

  private inHeights(plan: Plan, tail: Uint8Array): boolean {
    const h = Buffer.from(tail.buffer, tail.byteOffset, 8).readBigUInt64BE(0);
    return h >= plan.lo && h <= plan.hi;
  }

  search(plan: Plan): Hits {
    if (plan.empty) return listHits([]);
    const tl = this.kind.tailLen;
    if (plan.hash) {
      const rec = this.results?.getBinary(plan.hash);
      if (!rec) return listHits([]);
      const hdr = recordHeader(rec);
      const tail = txTail(hdr.height, hdr.index);
      const v = this.db.getBinary(posKey(P_POS, tail));
      if (!v || hdr.height < plan.lo || hdr.height > plan.hi || !this.check(plan, tail, Buffer.from(v))) return listHits([]);
      return listHits([tail.toString('latin1')]);
    }
    const d = this.choose(plan);
    if (d.estimate === 0) return listHits([]);
    const extra = plan.heightChecks.length;
    const db = this.db;
    // One condition, read straight off its rows; its estimate is then the exact count.
    if (!this.residual(plan, d) && (d.type === 'height' || d.type === 'eq')) {
      const total = d.estimate;
      return {
        total,
        page(skip, limit, desc) {
          const out: Buffer[] = [];
          // Reversed, the bounds swap roles: the upper one must stay excluded, the lower included
          // (block rows end at the height, so a bound can be an actual key).
          const opts = desc
            ? { start: d.end, end: d.start, reverse: true, exclusiveStart: true, inclusiveEnd: true, offset: skip, limit }
            : { start: d.start, end: d.end, offset: skip, limit };
          for (const k of db.getKeys(opts)) {
            const key = k as Buffer;
            out.push(Buffer.from(key.subarray(key.length - tl)));
          }
          return out;
        },
      };
    }
    // Otherwise walk the driver's rows and check each candidate.
    const hits: string[] = [];
    if (d.type === 'height') {
      for (const { key, value } of db.getRange({ start: d.start, end: d.end })) {
        const k = key as Buffer;
        const tail = k.subarray(1);
        if (this.check(plan, tail, value as Buffer)) hits.push(tail.toString('latin1'));
      }
      return listHits(hits);
    }
    const ordered = d.type === 'eq';
    const cond = d.cond!;
    const seen = ordered ? undefined : new Set<string>();
    let last = '';
    const needRow = extra > 0 || plan.events.length > 1;
    for (const k of db.getKeys({ start: d.start, end: d.end })) {
      const key = k as Buffer;
      const tail = key.subarray(key.length - tl);
      if (!ordered && !this.inHeights(plan, tail)) continue;
      let mustCheck = needRow;
      if (d.type === 'scan' && cond.kind === 'contains') {
        const vStart = d.prefixLen;
        const vEnd = key.length - tl - 1;
        if (key[vStart] === HASHED_VALUE) mustCheck = true;
        else if (!(this.kind.trim ? goTrim(key.toString('utf8', vStart, vEnd)) : key.toString('utf8', vStart, vEnd)).includes(cond.text)) continue;
      } else if (d.type === 'scan' && key.length < d.prefixLen + 1 + tl) continue;
      const id = tail.toString('latin1');
      if (ordered) {
        if (id === last) continue;
        last = id;
      } else {
        if (seen!.has(id)) continue;
        seen!.add(id);
      }
      if (mustCheck) {
        const v = db.getBinary(posKey(P_POS, tail));
        if (!v || !this.check(plan, Buffer.from(tail), Buffer.from(v))) continue;
      }
      hits.push(id);
    }
    if (!ordered) hits.sort();
    return listHits(hits);
  }
}

/** Hits from an ascending list of latin1-encoded tails. */
function listHits(tails: string[]): Hits {
  return {
    total: tails.length,
    page(skip, limit, desc) {
      const out: Buffer[] = [];
      const n = tails.length;
      for (let k = skip; k < skip + limit && k < n; k++) out.push(Buffer.from(tails[desc ? n - 1 - k : k]!, 'latin1'));
      return out;
    },
  };
}

function parse(query: string | Query): Query {
  return typeof query === 'string' ? new Query(parseQuery(query)) : query;
}

function reservedKey(events: readonly AbciEvent[], reserved: readonly string[]): string | undefined {
  for (const e of events) {
    if (e.type.length === 0) continue;
    for (const a of e.attributes) {
      if (a.key.length === 0) continue;
      const composite = `${e.type}.${a.key}`;
      if (reserved.includes(composite)) return composite;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Public indexers

/** Transactions: the `tx_results` record by hash plus the `tx_index` rows. */
export class TxIndexer {
  private readonly engine: Engine;
  private readonly db: BinaryDB;
  private readonly results: BinaryDB;

  constructor(storage: Pick<Storage, 'index'>, opts: IndexerOptions = {}) {
    this.db = storage.index.tx;
    this.results = storage.index.txResults;
    this.engine = new Engine(this.db, TX_KIND, opts.eventMatch ?? 'sameEvent', this.results);
  }

  /**
   * Indexes a block's txs. Call inside the block's write transaction. On an app event whose
   * composite key is `tx.hash` or `tx.height` nothing is written and CometBFT's error is returned
   * (its indexer service logs it and the block's txs stay unindexed); the caller logs it.
   */
  indexTxs(height: bigint, txs: readonly TxInput[]): IndexerError | null {
    for (const t of txs) {
      const bad = reservedKey(t.result.events, ['tx.hash', 'tx.height']);
      if (bad) return new IndexerError(`event type and attribute key "${bad}" is reserved; please use a different key`, 'RESERVED_KEY');
    }
    const db = this.db;
    const eng = this.engine;
    // Indexing a height again (never in normal operation): drop what is there first.
    const again: Buffer[] = [];
    for (const k of db.getKeys({ start: heightBound(P_POS, height), end: heightBound(P_POS, height + 1n) })) {
      again.push(Buffer.from((k as Buffer).subarray(1)));
    }
    for (const tail of again) {
      const v = eng.removePosition(tail);
      if (!v) continue;
      const hash = v.subarray(0, 32);
      const rec = this.results.getBinary(hash);
      if (rec) {
        const hdr = recordHeader(rec);
        if (hdr.height === height) this.results.removeSync(hash);
      }
    }
    if (again.length > 0) {
      const marks = [...db.getKeys({ start: heightBound(P_DEL, height), end: heightBound(P_DEL, height + 1n) })].map((k) => Buffer.from(k as Buffer));
      for (const k of marks) db.removeSync(k);
    }
    let n = 0;
    for (const t of txs) {
      const hash = toHash(t.hash);
      const prev = this.results.getBinary(hash);
      if (prev) {
        const hdr = recordHeader(prev);
        // A failed tx does not replace an earlier successful one (kv.go Index).
        if (t.result.code !== 0 && hdr.code === 0) continue;
        if (hdr.height !== height || hdr.index !== t.index) {
          const oldTail = txTail(hdr.height, hdr.index);
          if (eng.removePosition(oldTail)) db.putSync(posKey(P_DEL, oldTail), EMPTY);
        }
      }
      const tail = txTail(height, t.index);
      eng.writePosition(tail, hash, indexedEvents(t.result.events, eng.keyOk));
      this.results.putSync(hash, encodeTxRecord(height, t.index, t.tx, t.result));
      n++;
    }
    eng.setCount(height, n);
    return null;
  }

  /** The stored tx by hash (the `tx` method); undefined when unknown. */
  getTx(hash: Uint8Array | string): TxRecord | undefined {
    const h = toHash(hash);
    if (h.length === 0) throw new IndexerError('transaction hash cannot be empty', 'HASH');
    const v = this.results.getBinary(h);
    return v ? decodeTxRecord(new Uint8Array(h), v) : undefined;
  }

  /**
   * What a Merkle proof of the tx needs (`prove=true`): its height and index. The RPC builds
   * the proof from that block's txs (types/tx.go Txs.Proof). Reads only the record header.
   */
  locate(hash: Uint8Array | string): { height: bigint; index: number } | undefined {
    const h = toHash(hash);
    if (h.length === 0) return undefined;
    const v = this.results.getBinary(h);
    if (!v) return undefined;
    const { height, index } = recordHeader(v);
    return { height, index };
  }

  /**
   * tx_search: errors in CometBFT's order and words (query length, parse, hash, order_by, page).
   * A string query longer than 512 bytes fails with `maximum query length exceeded`.
   */
  searchTxs(query: string | Query, opts: SearchOptions = {}): TxSearchResult {
    if (typeof query === 'string' && Buffer.byteLength(query, 'utf8') > MAX_QUERY_LENGTH) {
      throw new IndexerError('maximum query length exceeded', 'QUERY_TOO_LONG');
    }
    const plan = this.engine.plan(parse(query));
    const order = validateOrderBy(opts.orderBy, 'asc');
    const hits = this.engine.search(plan);
    const perPage = validatePerPage(opts.perPage);
    const page = validatePage(opts.page, perPage, hits.total);
    const txs: TxRecord[] = [];
    for (const tail of hits.page((page - 1) * perPage, perPage, order === 'desc')) {
      const pos = this.db.getBinary(posKey(P_POS, tail));
      if (!pos) continue;
      const hash = new Uint8Array(pos.subarray(0, 32));
      const rec = this.results.getBinary(hash);
      if (rec) txs.push(decodeTxRecord(hash, rec));
    }
    return { txs, totalCount: hits.total };
  }
}

/** Blocks: FinalizeBlock events by height in `block_index`. */
export class BlockIndexer {
  private readonly engine: Engine;
  private readonly db: BinaryDB;

  constructor(storage: Pick<Storage, 'index'>, opts: IndexerOptions = {}) {
    this.db = storage.index.block;
    this.engine = new Engine(this.db, BLOCK_KIND, opts.eventMatch ?? 'sameEvent');
  }

  /**
   * Indexes a block's FinalizeBlock events. Call inside the block's write transaction. An app
   * event `block.height` writes nothing and returns CometBFT's error for the caller to log.
   */
  indexBlock(height: bigint, events: readonly AbciEvent[]): IndexerError | null {
    const bad = reservedKey(events, ['block.height']);
    if (bad) {
      return new IndexerError(
        `failed to index FinalizeBlock events: event type and attribute key "${bad}" is reserved; please use a different key`,
        'RESERVED_KEY',
      );
    }
    const tail = blockTail(height);
    this.engine.removePosition(tail);
    this.engine.writePosition(tail, undefined, indexedEvents(events, this.engine.keyOk));
    this.engine.setCount(height, 1);
    return null;
  }

  /** Whether the height is indexed (kv.go Has). */
  has(height: bigint): boolean {
    return this.db.getBinary(posKey(P_POS, blockTail(height))) !== undefined;
  }

  /** block_search: heights of matching blocks, default order desc; errors as CometBFT's. */
  searchBlocks(query: string | Query, opts: SearchOptions = {}): BlockSearchResult {
    const plan = this.engine.plan(parse(query));
    const order = validateOrderBy(opts.orderBy, 'desc');
    const hits = this.engine.search(plan);
    const perPage = validatePerPage(opts.perPage);
    const page = validatePage(opts.page, perPage, hits.total);
    const heights = hits.page((page - 1) * perPage, perPage, order === 'desc').map((t) => t.readBigUInt64BE(0));
    return { heights, totalCount: hits.total };
  }
}

/** Encodes a number the way the index orders it (exported for tests and tools). */
export { encodeNum, parseIndexNumber };
