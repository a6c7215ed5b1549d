/**
 * CORS as CometBFT 0.38 applies it: rs/cors v1.11.1 (its go.mod) configured from
 * `[rpc] cors_allowed_origins/methods/headers` (cometbft: node/node.go startRPC), only when
 * `cors_allowed_origins` is non-empty (config.go IsCorsEnabled).
 *
 * rs/cors behaviour reproduced here (cors.go, utils.go, internal/sortedset.go):
 * - origins are compared lower-cased; `*` allows all (answered `Access-Control-Allow-Origin: *`);
 *   one `*` inside an origin is a wildcard (`https://*.example.com`), matched as prefix + suffix;
 *   otherwise the request's Origin is echoed;
 * - a preflight is `OPTIONS` with a non-empty `Access-Control-Request-Method`; it always ends the
 *   request with 204 and `Vary: Origin, Access-Control-Request-Method, Access-Control-Request-Headers`,
 *   and carries the allow headers only when origin, method and headers are all allowed;
 * - allowed methods are compared exactly (OPTIONS always allowed; an empty list defaults to
 *   GET, POST, HEAD); the preflight echoes the requested method;
 * - allowed headers are lower-cased (empty list → accept, content-type, x-requested-with;
 *   `*` → all); `Access-Control-Request-Headers` must list allowed names, lower-case, sorted and
 *   unique (as browsers send them), and is echoed as sent;
 * - an actual request gets `Vary: Origin`, plus `Access-Control-Allow-Origin` when origin and
 *   method are allowed.
 */

export interface CorsConfig {
  allowedOrigins: readonly string[];
  allowedMethods: readonly string[];
  allowedHeaders: readonly string[];
}

/** The request headers CORS looks at ('' when absent). */
export interface CorsRequest {
  method: string;
  origin: string;
  requestMethod: string;
  requestHeaders: string;
}

type Header = [string, string];

const PREFLIGHT_VARY = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';
/** internal/sortedset.go: OWS bytes tolerated around a name, and empty list elements. */
const MAX_OWS = 1;
const MAX_EMPTY_ELEMENTS = 16;

export class Cors {
  private readonly allOrigins: boolean = false;
  private readonly origins = new Set<string>();
  private readonly wildcards: Array<[string, string]> = [];
  private readonly methods: readonly string[];
  private readonly allHeaders: boolean = false;
  /** Allowed header names, sorted, with their rank. */
  private readonly headers = new Map<string, number>();
  private readonly maxHeaderLen: number = 0;

  constructor(c: CorsConfig) {
    if (c.allowedOrigins.length === 0) this.allOrigins = true;
    for (const raw of c.allowedOrigins) {
      const o = raw.toLowerCase();
      if (o === '*') {
        this.allOrigins = true;
        break;
      }
      const i = o.indexOf('*');
      if (i >= 0) this.wildcards.push([o.slice(0, i), o.slice(i + 1)]);
      else this.origins.add(o);
    }
    this.methods = c.allowedMethods.length === 0 ? ['GET', 'POST', 'HEAD'] : [...c.allowedMethods];
    const names = c.allowedHeaders.length === 0 ? ['accept', 'content-type', 'x-requested-with'] : c.allowedHeaders.map((h) => h.toLowerCase());
    if (c.allowedHeaders.includes('*')) this.allHeaders = true;
    else {
      [...new Set(names)].sort().forEach((h, i) => this.headers.set(h, i));
      this.maxHeaderLen = Math.max(0, ...[...this.headers.keys()].map((h) => h.length));
    }
  }

  /** rs/cors Handler: OPTIONS with Access-Control-Request-Method is a preflight. */
  static isPreflight(r: CorsRequest): boolean {
    return r.method === 'OPTIONS' && r.requestMethod !== '';
  }

  originAllowed(origin: string): boolean {
    if (this.allOrigins) return true;
    const o = origin.toLowerCase();
    if (this.origins.has(o)) return true;
    return this.wildcards.some(([p, s]) => o.length >= p.length + s.length && o.startsWith(p) && o.endsWith(s));
  }

  methodAllowed(method: string): boolean {
    if (this.methods.length === 0) return false;
    if (method === 'OPTIONS') return true;
    return this.methods.includes(method);
  }

  /** SortedSet.Accepts: every listed name allowed, in strictly increasing order. */
  headersAllowed(list: string): boolean {
    if (this.allHeaders) return true;
    const maxLen = MAX_OWS + this.maxHeaderLen + MAX_OWS + 1;
    let last = -1;
    let empty = 0;
    let s = list;
    for (;;) {
      // Only a bounded prefix is searched for the comma, as a defence against long names.
      const window = s.slice(0, maxLen);
      const comma = window.indexOf(',');
      const raw = comma >= 0 ? s.slice(0, comma) : s;
      s = comma >= 0 ? s.slice(comma + 1) : '';
      const name = trimOws(raw);
      if (name === null) return false;
      if (name === '') {
        if (++empty > MAX_EMPTY_ELEMENTS) return false;
        if (comma < 0) return true;
        continue;
      }
      const pos = this.headers.get(name);
      if (pos === undefined || pos <= last) return false;
      last = pos;
      if (comma < 0) return true;
    }
  }

  /** Headers of the 204 answer to a preflight (handlePreflight). */
  preflight(r: CorsRequest): Header[] {
    const out: Header[] = [['Vary', PREFLIGHT_VARY]];
    if (r.origin === '' || !this.originAllowed(r.origin)) return out;
    if (!this.methodAllowed(r.requestMethod)) return out;
    if (r.requestHeaders !== '' && !this.headersAllowed(r.requestHeaders)) return out;
    out.push(['Access-Control-Allow-Origin', this.allOrigins ? '*' : r.origin]);
    out.push(['Access-Control-Allow-Methods', r.requestMethod]);
    if (r.requestHeaders !== '') out.push(['Access-Control-Allow-Headers', r.requestHeaders]);
    return out;
  }

  /** Headers added to an actual (non-preflight) request's response (handleActualRequest). */
  actual(r: CorsRequest): Header[] {
    const out: Header[] = [['Vary', 'Origin']];
    if (r.origin === '' || !this.originAllowed(r.origin) || !this.methodAllowed(r.method)) return out;
    out.push(['Access-Control-Allow-Origin', this.allOrigins ? '*' : r.origin]);
    return out;
  }
}

/**
 * trimOWS: trims up to one space/tab at the end, then at the start; more than that rejects the
 * name (null), except that a string of nothing but blanks trims to ''.
 */
function trimOws(s: string): string | null {
  const blank = (c: string | undefined) => c === ' ' || c === '\t';
  let b = s.length;
  for (let i = 0; b > 0; i++) {
    if (i > MAX_OWS) return null;
    if (!blank(s[b - 1])) break;
    b--;
  }
  let a = 0;
  for (let i = 0; a < b; i++) {
    if (i > MAX_OWS) return null;
    if (!blank(s[a])) break;
    a++;
  }
  return s.slice(a, b);
}
