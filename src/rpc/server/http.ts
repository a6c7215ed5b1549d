/**
 * HTTP details of Go's net/http that CometBFT-compatible servers reproduce: query parsing
 * (net/url ParseQuery), path unescaping, the header-size limit and the plain-text error pages.
 */

/**
 * net/http server.go: the header limit is MaxHeaderBytes plus 4096 bytes of bufio slack
 * (initialReadLimitSize), counting the request line.
 */
export const GO_HEADER_SLACK_BYTES = 4096;

/** Go's responses written by the server itself, before any handler (server.go errorHeaders). */
export const GO_TEXT_HEADERS: Record<string, string> = { 'Content-Type': 'text/plain; charset=utf-8' };

/** http.Error and http.NotFound add `X-Content-Type-Options: nosniff`. */
export const GO_ERROR_HEADERS: Record<string, string> = { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' };

export const GO_NOT_FOUND_BODY = '404 page not found\n';
export const GO_HEADERS_TOO_LARGE_BODY = '431 Request Header Fields Too Large';
export const GO_BAD_REQUEST_BODY = '400 Bad Request';

const hexVal = (c: number) => (c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1);

/**
 * net/url unescape: `%XX` (two hex digits, else an error → null); in query mode `+` is a space.
 * The bytes are read as UTF-8 (invalid sequences become U+FFFD).
 */
export function goUnescape(s: string, mode: 'query' | 'path'): string | null {
  if (!s.includes('%') && (mode === 'path' || !s.includes('+'))) return s;
  const src = Buffer.from(s, 'utf8');
  const out = Buffer.allocUnsafe(src.length);
  let n = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === 0x25) {
      const hi = i + 2 < src.length ? hexVal(src[i + 1]!) : -1;
      const lo = i + 2 < src.length ? hexVal(src[i + 2]!) : -1;
      if (hi < 0 || lo < 0) return null;
      out[n++] = (hi << 4) | lo;
      i += 2;
    } else if (c === 0x2b && mode === 'query') out[n++] = 0x20;
    else out[n++] = c;
  }
  return out.subarray(0, n).toString('utf8');
}

/**
 * net/url ParseQuery: `&`-separated pairs; a pair holding `;` or a bad escape is skipped; the
 * first value of a repeated name is the one `Get` returns.
 */
export function parseGoQuery(raw: string): Map<string, string[]> {
  const m = new Map<string, string[]>();
  // Walked with indexOf rather than split('&'): no intermediate array on the URI hot path.
  for (let start = 0; start <= raw.length; ) {
    let end = raw.indexOf('&', start);
    if (end < 0) end = raw.length;
    const pair = raw.slice(start, end);
    start = end + 1;
    if (pair === '' || pair.includes(';')) continue;
    const eq = pair.indexOf('=');
    const key = goUnescape(eq < 0 ? pair : pair.slice(0, eq), 'query');
    const value = goUnescape(eq < 0 ? '' : pair.slice(eq + 1), 'query');
    if (key === null || value === null) continue;
    const list = m.get(key);
    if (list) list.push(value);
    else m.set(key, [value]);
  }
  return m;
}

/** url.Values.Get: the first value, or ''. */
export function queryGet(m: Map<string, string[]>, name: string): string {
  return m.get(name)?.[0] ?? '';
}

/** `application/x-www-form-urlencoded` (mime.ParseMediaType ignores case and parameters). */
export function isFormContentType(ct: string): boolean {
  return ct.split(';', 1)[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/** Bytes of the request line and header block, as Go counts them against MaxHeaderBytes. */
export function requestHeaderBytes(method: string, url: string, query: string, headers: Array<[string, string]> | number): number {
  // "METHOD URL?QUERY HTTP/1.1\r\n" + "Key: Value\r\n"… + "\r\n"; `headers` may be the
  // already summed "Key: Value\r\n" bytes.
  let n = method.length + 1 + url.length + (query ? 1 + query.length : 0) + 11;
  if (typeof headers === 'number') n += headers;
  else for (const [k, v] of headers) n += k.length + 2 + v.length + 2;
  return n + 2;
}
