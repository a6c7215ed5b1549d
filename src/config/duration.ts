/**
 * Go `time.Duration` strings, as CometBFT and the Cosmos SDK write them in TOML ("10s", "500ms",
 * "1m30s", "1.5h", "0"); parsed into milliseconds (fractions allowed: "250us" = 0.25).
 * Grammar (go: time/format.go ParseDuration): [-+]? ( number unit )+ | "0", number = \d+(\.\d*)? | \.\d+,
 * unit = ns | us | µs | μs | ms | s | m | h.
 */

const UNIT_NS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  'µs': 1e3, // U+00B5 micro sign
  'μs': 1e3, // U+03BC Greek mu
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

const TOKEN = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;

/** Nanoseconds of a Go duration string, or undefined when it does not parse. */
export function parseDurationNanos(s: string): number | undefined {
  let i = 0;
  let sign = 1;
  if (s[0] === '-' || s[0] === '+') {
    sign = s[0] === '-' ? -1 : 1;
    i = 1;
  }
  if (s.slice(i) === '0') return 0;
  if (i === s.length) return undefined;
  let total = 0;
  while (i < s.length) {
    TOKEN.lastIndex = i;
    const m = TOKEN.exec(s);
    if (!m) return undefined;
    const [num, unit] = [m[1]!, m[2]!];
    const scale = UNIT_NS[unit]!;
    const dot = num.indexOf('.');
    const whole = dot < 0 ? num : num.slice(0, dot);
    const frac = dot < 0 ? '' : num.slice(dot + 1);
    // Scale the fraction as an integer so that "1.1s" is exactly 1100000000ns.
    total += (whole ? Number(whole) : 0) * scale;
    if (frac) total += (Number(frac) * scale) / 10 ** frac.length;
    i = TOKEN.lastIndex;
  }
  return sign * total;
}

/** Milliseconds of a Go duration string, or undefined when it does not parse. */
export function parseDuration(s: string): number | undefined {
  const ns = parseDurationNanos(s);
  return ns === undefined ? undefined : ns / 1e6;
}

function trimFrac(whole: number, frac: number, digits: number): string {
  if (frac === 0) return String(whole);
  return `${whole}.${String(frac).padStart(digits, '0').replace(/0+$/, '')}`;
}

/** Go's Duration.String() of a millisecond value: 0 → "0s", 500 → "500ms", 90000 → "1m30s",
 * 120000 → "2m0s", 1500 → "1.5s", 0.25 → "250µs". */
export function formatDuration(ms: number): string {
  let ns = Math.round(ms * 1e6);
  if (ns === 0) return '0s';
  const neg = ns < 0;
  if (neg) ns = -ns;
  let out: string;
  if (ns < 1e3) out = `${ns}ns`;
  else if (ns < 1e6) out = trimFrac(Math.floor(ns / 1e3), ns % 1e3, 3) + 'µs';
  else if (ns < 1e9) out = trimFrac(Math.floor(ns / 1e6), ns % 1e6, 6) + 'ms';
  else {
    const h = Math.floor(ns / 3600e9);
    const m = Math.floor((ns % 3600e9) / 60e9);
    const sNs = ns % 60e9;
    const secs = trimFrac(Math.floor(sNs / 1e9), sNs % 1e9, 9) + 's';
    out = h > 0 ? `${h}h${m}m${secs}` : m > 0 ? `${m}m${secs}` : secs;
  }
  return neg ? '-' + out : out;
}
