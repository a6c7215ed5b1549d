/**
 * HTTP details of Go's net/http that CometBFT-compatible servers reproduce: query parsing
 * (net/url ParseQuery), multipart forms (mime/multipart, as Request.FormValue reads them), path
 * unescaping, the header-size limit and the plain-text error pages.
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

// ------------------------------------------------------------------------------------------------
// multipart/form-data, as Request.FormValue reads it (net/http request.go ParseMultipartForm →
// mime/multipart Reader.ReadForm, Go 1.22, the Go of CometBFT 0.38.17).

/** mime/multipart readForm: more parts than this is ErrMessageTooLarge (GODEBUG multipartmaxparts). */
const GO_MULTIPART_MAX_PARTS = 1000;
/**
 * bufio.Reader's default size: multipart.Reader reads boundary lines with ReadSlice('\n'), which
 * fails (ErrBufferFull) on a line longer than its buffer.
 */
const GO_BUFIO_SIZE = 4096;

/** RFC 2045 tspecials: not token characters in mime.ParseMediaType. */
const TSPECIALS = '()<>@,;:\\"/[]?=';
/** mime/grammar.go isTokenChar: printable ASCII other than tspecials. */
const MIME_TOKEN = (() => {
  const m = new Uint8Array(128);
  for (let c = 0x21; c < 0x7f; c++) if (!TSPECIALS.includes(String.fromCharCode(c))) m[c] = 1;
  return m;
})();
const isMimeToken = (c: number) => c < 128 && MIME_TOKEN[c] === 1;

/** unicode.IsSpace (the White_Space property), which ParseMediaType trims with. */
function isGoSpace(c: number): boolean {
  if (c < 0x80) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  return c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000;
}

function skipGoSpace(v: string, i: number): number {
  while (i < v.length && isGoSpace(v.charCodeAt(i))) i++;
  return i;
}

function mimeTokenEnd(v: string, i: number): number {
  while (i < v.length && isMimeToken(v.charCodeAt(i))) i++;
  return i;
}

/** mime consumeValue for a quoted-string starting at `i` (on the quote): [value, end] or null. */
function mimeQuoted(v: string, i: number): [string, number] | null {
  let out = '';
  for (let j = i + 1; j < v.length; j++) {
    const c = v[j]!;
    if (c === '"') return [out, j + 1];
    // A backslash escapes only a tspecial; before anything else it is a literal backslash
    // (MSIE sends unescaped Windows paths in filename="C:\dir\f").
    if (c === '\\' && j + 1 < v.length && TSPECIALS.includes(v[j + 1]!)) {
      out += v[++j];
      continue;
    }
    if (c === '\r' || c === '\n') return null;
    out += c;
  }
  return null; // no closing quote
}

/** mime/mediatype.go checkMediaTypeDisposition: `token` or `token/token`, nothing else. */
function validMediaType(s: string): boolean {
  const t = mimeTokenEnd(s, 0);
  if (t === 0) return false;
  if (t === s.length) return true;
  if (s[t] !== '/') return false;
  const sub = mimeTokenEnd(s, t + 1);
  return sub > t + 1 && sub === s.length;
}

/**
 * mime.ParseMediaType: the lower-cased media type and its parameters (names lower-cased; values
 * a token or a quoted-string), or null where Go returns an error (bad type, malformed parameter,
 * a parameter repeated with another value; trailing semicolons are allowed). RFC 2231 parameters
 * (`name*=…`, `name*0=…`) are left out rather than decoded.
 */
export function parseGoMediaType(v: string): { type: string; params: Map<string, string> } | null {
  const semi = v.indexOf(';');
  const base = semi < 0 ? v : v.slice(0, semi);
  const type = base.toLowerCase().trim();
  if (!validMediaType(type)) return null;
  const params = new Map<string, string>();
  let i = base.length;
  while (i < v.length) {
    i = skipGoSpace(v, i);
    if (i === v.length) break;
    // consumeMediaParam: `; name = value`.
    let j = i;
    let key = '';
    let value: string | null = null;
    if (v[j] === ';') {
      j = skipGoSpace(v, j + 1);
      const k = mimeTokenEnd(v, j);
      key = v.slice(j, k).toLowerCase();
      j = skipGoSpace(v, k);
      if (key !== '' && v[j] === '=') {
        j = skipGoSpace(v, j + 1);
        if (v[j] === '"') {
          const q = mimeQuoted(v, j);
          if (q) [value, j] = q;
        } else {
          const e = mimeTokenEnd(v, j);
          if (e > j) [value, j] = [v.slice(j, e), e];
        }
      }
    }
    if (value === null) {
      if (v.slice(i).trim() === ';') break;
      return null;
    }
    if (!key.includes('*')) {
      const had = params.get(key);
      if (had !== undefined && had !== value) return null;
      params.set(key, value);
    }
    i = j;
  }
  return { type, params };
}

/**
 * If the bytes from `at` (up to `end`) start with `prefix`: where the spaces and tabs after it end
 * (Go's skipLWSPChar), else -1.
 */
function boundaryLineRest(b: Buffer, at: number, end: number, prefix: Buffer): number {
  if (end - at < prefix.length || b.compare(prefix, 0, prefix.length, at, at + prefix.length) !== 0) return -1;
  let i = at + prefix.length;
  while (i < end && (b[i] === 0x20 || b[i] === 0x09)) i++;
  return i;
}

/**
 * mime/multipart Reader.ReadForm over a whole body: the values of the parts that have a
 * Content-Disposition `form-data; name="…"` and no (non-empty) `filename` (files are not form
 * values), in order, by name. Null when Go's ReadForm fails (FormValue then ignores the body):
 * not `multipart/form-data` or no boundary, a missing boundary line, a malformed part header, an
 * unterminated part, more than 1000 parts. Not emulated: quoted-printable part bodies (Go decodes
 * them) and ReadForm's memory limits (32 MiB + 10 MiB, far over max_body_bytes).
 */
export function parseGoMultipartForm(contentType: string, body: Buffer): Map<string, string[]> | null {
  if (contentType === '') return null;
  const mt = parseGoMediaType(contentType);
  if (mt === null || mt.type !== 'multipart/form-data') return null;
  const boundary = mt.params.get('boundary');
  if (!boundary) return null; // ErrMissingBoundary, or "multipart: boundary is empty"
  const dash = Buffer.from(`--${boundary}`, 'utf8');
  const dashDash = Buffer.from(`--${boundary}--`, 'utf8');
  // The line ending: CRLF, or LF if the first boundary line ends so (Go accepts that too).
  let lf = false;
  let nlDash = Buffer.from(`\r\n--${boundary}`, 'utf8');
  const form = new Map<string, string[]>();
  let pos = 0;
  let parts = 0;

  /** The rest of a boundary line is the line ending (or, for the final one, nothing). */
  const isNl = (from: number, end: number) => (lf ? end - from === 1 && body[from] === 0x0a : end - from === 2 && body[from] === 0x0d && body[from + 1] === 0x0a);
  const isFinal = (at: number, end: number) => {
    const r = boundaryLineRest(body, at, end, dashDash);
    return r >= 0 && (r === end || isNl(r, end));
  };
  const isDelimiter = (at: number, end: number) => {
    const r = boundaryLineRest(body, at, end, dash);
    if (r < 0) return false;
    if (parts === 0 && end - r === 1 && body[r] === 0x0a) {
      lf = true;
      nlDash = nlDash.subarray(1);
    }
    return isNl(r, end);
  };
  /** scanUntilBoundary's matchAfterPrefix with all data read: does a boundary end the part here? */
  const endsPart = (at: number) => {
    if (at === body.length) return true;
    const c = body[at]!;
    if (c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a) return true;
    return c === 0x2d && at + 1 < body.length && body[at + 1] === 0x2d;
  };

  for (;;) {
    // Reader.NextPart: skip a preamble, expect a boundary line.
    let expectNewPart = false;
    for (;;) {
      const nlAt = body.indexOf(0x0a, pos);
      const end = nlAt < 0 ? body.length : nlAt + 1;
      if (end - pos > GO_BUFIO_SIZE) return null;
      if (nlAt < 0) return isFinal(pos, end) ? form : null;
      const at = pos;
      pos = end;
      if (isDelimiter(at, end)) break;
      if (isFinal(at, end)) return form;
      if (expectNewPart) return null;
      if (parts === 0) continue;
      if (isNl(at, end)) {
        expectNewPart = true;
        continue;
      }
      return null;
    }
    parts++;
    if (parts > GO_MULTIPART_MAX_PARTS) return null;

    // The part's header (textproto ReadMIMEHeader).
    const headerEnd = readPartHeader(body, pos);
    if (headerEnd === null) return null;
    pos = headerEnd.next;

    // Its body, up to the next boundary (Part.Read / scanUntilBoundary).
    const start = pos;
    let stop = -1;
    let from = pos;
    if (boundaryLineRest(body, pos, body.length, dash) >= 0) {
      if (endsPart(pos + dash.length)) stop = pos;
      else from = pos + dash.length;
    }
    while (stop < 0) {
      const i = body.indexOf(nlDash, from);
      if (i < 0) return null; // unterminated part
      if (endsPart(i + nlDash.length)) stop = i;
      else from = i + nlDash.length;
    }
    pos = stop;
    const name = headerEnd.disposition ? formName(headerEnd.disposition) : '';
    if (name === '') continue;
    const list = form.get(name);
    const value = body.toString('utf8', start, stop);
    if (list) list.push(value);
    else form.set(name, [value]);
  }
}

/** Part.FormName, or '' for a file part (Part.FileName non-empty) or anything not form-data. */
function formName(disposition: string): string {
  const d = parseGoMediaType(disposition);
  if (d === null || d.type !== 'form-data') return '';
  if (d.params.get('filename')) return '';
  return d.params.get('name') ?? '';
}

/**
 * textproto Reader.ReadMIMEHeader from `pos`: header lines up to an empty one (LF or CRLF),
 * continuation lines folded. Returns the first Content-Disposition value and where the part body
 * starts, or null on Go's errors (malformed line or key, control bytes, end of data).
 */
function readPartHeader(b: Buffer, pos: number): { disposition: string | null; next: number } | null {
  const readLine = (): string | null => {
    if (pos >= b.length) return null;
    const nl = b.indexOf(0x0a, pos);
    let end = nl < 0 ? b.length : nl;
    const next = nl < 0 ? b.length : nl + 1;
    if (nl >= 0 && end > pos && b[end - 1] === 0x0d) end--;
    const line = b.toString('latin1', pos, end);
    pos = next;
    return line;
  };
  const trimSpTab = (s: string) => s.replace(/^[ \t]+|[ \t]+$/g, '');
  if (pos < b.length && (b[pos] === 0x20 || b[pos] === 0x09)) return null; // malformed initial line
  let disposition: string | null = null;
  for (;;) {
    const first = readLine();
    if (first === null) return null;
    if (first === '') return { disposition, next: pos };
    if (!first.includes(':')) return null;
    let kv = trimSpTab(first);
    while (pos < b.length && (b[pos] === 0x20 || b[pos] === 0x09)) {
      const cont = readLine();
      if (cont === null) break;
      kv += ' ' + trimSpTab(cont);
    }
    const colon = kv.indexOf(':');
    const key = kv.slice(0, colon);
    const value = kv.slice(colon + 1);
    if (key === '') return null;
    // canonicalMIMEHeaderKey: token bytes; a space is tolerated but the key is then not
    // canonicalised (so `Content-Disposition :` is not Content-Disposition).
    let spaced = false;
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      if (c === 0x20) spaced = true;
      else if (!isHeaderTChar(c)) return null;
    }
    // validHeaderValueByte: no control bytes other than tab.
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if ((c < 0x20 && c !== 0x09) || c === 0x7f) return null;
    }
    if (disposition === null && !spaced && key.toLowerCase() === 'content-disposition') {
      // The header's bytes as UTF-8 (read as latin1 above to check them byte by byte).
      disposition = Buffer.from(value.replace(/^[ \t]+/, ''), 'latin1').toString('utf8');
    }
  }
}

/** RFC 7230 tchar, textproto's validHeaderFieldByte. */
function isHeaderTChar(c: number): boolean {
  if (c >= 0x30 && c <= 0x39) return true;
  if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) return true;
  return c < 128 && "!#$%&'*+-.^_`|~".includes(String.fromCharCode(c));
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
