/**
 * The two time layouts of the event query language, parsed the way Go's `time.Parse` parses them:
 * `DATE` values and date attributes use "2006-01-02", `TIME` values and time attributes use RFC 3339
 * "2006-01-02T15:04:05Z07:00" (cometbft: libs/pubsub/query/syntax/parser.go ParseDate/ParseTime).
 *
 * Go's general parser (go: src/time/format.go `parse`) is more lenient than RFC 3339: the hour may
 * have one digit, a fractional second (`.` or `,` then digits) is accepted although the layout has
 * none, and a zone offset hour may be 24. Its error texts reach users through the query parser
 * (`invalid TIME value: parsing time "…" as "…": cannot parse "…" as "…"`), so they are rebuilt here
 * with the same wording. Matching attributes needs no message, so the parser reports a numeric
 * code and keeps the details in module scratch state: parsing allocates nothing on success.
 */

export const RFC3339_LAYOUT = '2006-01-02T15:04:05Z07:00';
export const DATE_LAYOUT = '2006-01-02';

/** A point in time: whole seconds since the Unix epoch (exact in a double for years 0..9999) and nanoseconds. */
export interface Instant {
  sec: number;
  nsec: number;
}

/** Result codes of parseGoTime. */
export const enum TimeErr {
  OK = 0,
  /** A literal ('-', 'T', ':') did not match: `cannot parse "<rest>" as "<literal>"`. */
  Literal = 1,
  /** A field could not be read: `cannot parse "<rest>" as "<element>"`. */
  Element = 2,
  /** A field was out of range: `: month out of range`. */
  Range = 3,
  /** Input left over: `: extra text: "<rest>"`. */
  Extra = 4,
  /** The day does not exist in that month: `: day out of range`. */
  Day = 5,
}

// Details of the last failure (only read by timeErrorMessage).
let errElem = '';
let errRest = '';
let errRange = '';
/** Year of the last successful parse, as written (Go's ts.Year() for the query's year check). */
export let lastYear = 0;

function digitAt(s: string, i: number): number {
  if (i >= s.length) return -1;
  const c = s.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : -1;
}

function isLeap(y: number): boolean {
  return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
}

const DAYS_IN = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(month: number, year: number): number {
  return month === 2 && isLeap(year) ? 29 : DAYS_IN[month]!;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/**
 * Parse `s` with the date layout (`date` true) or the RFC 3339 layout into `out`.
 * Returns TimeErr.OK or the failure code; timeErrorMessage() renders Go's message for it.
 */
export function parseGoTime(s: string, date: boolean, out: Instant): TimeErr {
  const n = s.length;
  let p = 0;
  let year = 0;
  let month = 0;
  let day = 0;
  let hour = 0;
  let min = 0;
  let sec = 0;
  let nsec = 0;
  let offset = 0;

  // "2006": four characters, the first a digit, all of them digits (go: atoi of value[0:4]).
  if (n - p < 4 || digitAt(s, p) < 0) return elemFail('2006', s, p);
  for (let k = 0; k < 4; k++) {
    const d = digitAt(s, p + k);
    if (d < 0) return elemFail('2006', s, p);
    year = year * 10 + d;
  }
  p += 4;
  // "-01": two digits, 1..12.
  if (s.charCodeAt(p) !== 45 /* - */) return literalFail('-', s, p);
  p++;
  {
    const a = digitAt(s, p);
    const b = digitAt(s, p + 1);
    if (a < 0 || b < 0) return elemFail('01', s, p);
    month = a * 10 + b;
    p += 2;
    if (month < 1 || month > 12) return rangeFail('month');
  }
  // "-02": two digits; validated against the month at the end.
  if (s.charCodeAt(p) !== 45) return literalFail('-', s, p);
  p++;
  {
    const a = digitAt(s, p);
    const b = digitAt(s, p + 1);
    if (a < 0 || b < 0) return elemFail('02', s, p);
    day = a * 10 + b;
    p += 2;
  }
  if (!date) {
    if (s.charCodeAt(p) !== 84 /* T */) return literalFail('T', s, p);
    p++;
    // "15": one or two digits (go: getnum(value, false)), below 24.
    {
      const a = digitAt(s, p);
      if (a < 0) return elemFail('15', s, p);
      const b = digitAt(s, p + 1);
      if (b < 0) {
        hour = a;
        p += 1;
      } else {
        hour = a * 10 + b;
        p += 2;
      }
      if (hour >= 24) return rangeFail('hour');
    }
    if (s.charCodeAt(p) !== 58 /* : */) return literalFail(':', s, p);
    p++;
    {
      const a = digitAt(s, p);
      const b = digitAt(s, p + 1);
      if (a < 0 || b < 0) return elemFail('04', s, p);
      min = a * 10 + b;
      p += 2;
      if (min >= 60) return rangeFail('minute');
    }
    if (s.charCodeAt(p) !== 58) return literalFail(':', s, p);
    p++;
    {
      const a = digitAt(s, p);
      const b = digitAt(s, p + 1);
      if (a < 0 || b < 0) return elemFail('05', s, p);
      sec = a * 10 + b;
      p += 2;
      if (sec >= 60) return rangeFail('second');
      // A fractional second the layout does not ask for is still taken (go: stdSecond case);
      // digits past the ninth are read but ignored.
      const c = s.charCodeAt(p);
      if ((c === 46 || c === 44) && digitAt(s, p + 1) >= 0) {
        let q = p + 1;
        let scale = 100_000_000;
        while (digitAt(s, q) >= 0) {
          if (scale >= 1) nsec += digitAt(s, q) * scale;
          scale /= 10;
          q++;
        }
        nsec = Math.floor(nsec);
        p = q;
      }
    }
    // "Z07:00": 'Z', or a sign, two digits, ':', two digits.
    const hold = p;
    if (s.charCodeAt(p) === 90 /* Z */) {
      p++;
    } else {
      if (n - p < 6 || s.charCodeAt(p + 3) !== 58) return elemFail('Z07:00', s, hold);
      const sign = s.charCodeAt(p);
      let bad = false;
      let hh = 0;
      let mm = 0;
      const h1 = digitAt(s, p + 1);
      const h2 = digitAt(s, p + 2);
      if (h1 < 0 || h2 < 0) bad = true;
      else {
        hh = h1 * 10 + h2;
        const m1 = digitAt(s, p + 4);
        const m2 = digitAt(s, p + 5);
        if (m1 < 0 || m2 < 0) bad = true;
        else mm = m1 * 10 + m2;
      }
      p += 6;
      // Range is checked before the sign, and ">" not ">=": offsets of 24h or 60m are accepted.
      let range = '';
      if (hh > 24) range = 'time zone offset hour';
      if (mm > 60) range = 'time zone offset minute';
      if (range) return rangeFail(range);
      if (sign === 43 /* + */) offset = (hh * 60 + mm) * 60;
      else if (sign === 45 /* - */) offset = -(hh * 60 + mm) * 60;
      else bad = true;
      if (bad) return elemFail('Z07:00', s, hold);
    }
  }
  if (p < n) {
    errRest = s.slice(p);
    return TimeErr.Extra;
  }
  if (day < 1 || day > daysIn(month, year)) return TimeErr.Day;
  lastYear = year;
  out.sec = daysFromCivil(year, month, day) * 86400 + hour * 3600 + min * 60 + sec - offset;
  out.nsec = nsec;
  return TimeErr.OK;
}

function elemFail(elem: string, s: string, at: number): TimeErr {
  errElem = elem;
  errRest = s.slice(at);
  return TimeErr.Element;
}

function literalFail(lit: string, s: string, at: number): TimeErr {
  errElem = lit;
  errRest = s.slice(at);
  return TimeErr.Literal;
}

function rangeFail(what: string): TimeErr {
  errRange = what;
  return TimeErr.Range;
}

/** Go's strconv-style quoting for the ASCII-only texts the scanner lets through. */
function quote(s: string): string {
  return '"' + s.replace(/["\\]/g, (c) => '\\' + c) + '"';
}

/** Go's *time.ParseError text for the failure parseGoTime just reported on `value`. */
export function timeErrorMessage(code: TimeErr, value: string, date: boolean): string {
  const layout = date ? DATE_LAYOUT : RFC3339_LAYOUT;
  switch (code) {
    case TimeErr.Literal:
    case TimeErr.Element:
      return `parsing time ${quote(value)} as ${quote(layout)}: cannot parse ${quote(errRest)} as ${quote(errElem)}`;
    case TimeErr.Range:
      return `parsing time ${quote(value)}: ${errRange} out of range`;
    case TimeErr.Extra:
      return `parsing time ${quote(value)}: extra text: ${quote(errRest)}`;
    case TimeErr.Day:
      return `parsing time ${quote(value)}: day out of range`;
    default:
      return '';
  }
}

/** -1, 0, 1 as a is before, equal to or after b. */
export function compareInstant(a: Instant, b: Instant): number {
  if (a.sec !== b.sec) return a.sec < b.sec ? -1 : 1;
  if (a.nsec !== b.nsec) return a.nsec < b.nsec ? -1 : 1;
  return 0;
}
