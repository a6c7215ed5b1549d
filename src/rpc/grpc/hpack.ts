/**
 * HPACK (RFC 7541) for the gRPC server's HTTP/2 connections: encodeHeaders() writes our header
 * blocks (literals and static indexes only), and HpackDecoder reads the client's: the static
 * table, one dynamic table per connection (kept across header blocks), prefixed integers, string
 * literals raw or Huffman-coded, and a cap on the decoded header list size.
 *
 * Huffman strings are decoded by a table-driven automaton over nibbles (four bits at a time),
 * built once at module load from the code lengths of RFC 7541 Appendix B: the code is canonical,
 * so the lengths alone give the codes.
 *
 * Strings are bytes: names and values come back as latin1 strings (gRPC headers are ASCII;
 * binary `-bin` values are base64 text).
 */

/**
 * A malformed header block (a COMPRESSION_ERROR for the connection, RFC 9113 §4.3), or with
 * `tooLarge` set, a well-formed block whose header list exceeds the decoder's cap (the dynamic
 * table is still in step with the encoder, so the connection may continue).
 */
export class HpackError extends Error {
  tooLarge = false;
  constructor(message: string) {
    super(message);
    this.name = 'HpackError';
  }
}

/** RFC 7541 Appendix A; index 0 is unused. */
const STATIC: ReadonlyArray<readonly [string, string]> = [
  ['', ''],
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];
const STATIC_COUNT = 61;
const STATIC_NAMES = STATIC.map((e) => e[0]);
const STATIC_VALUES = STATIC.map((e) => e[1]);

/** The static table by entry (name and value, for the entries that have a value) and by name (its first entry). */
const STATIC_EXACT = new Map<string, number>();
const STATIC_NAME = new Map<string, number>();
for (let i = 1; i <= STATIC_COUNT; i++) {
  const [name, value] = STATIC[i]!;
  if (value !== '') STATIC_EXACT.set(`${name}\0${value}`, i);
  if (!STATIC_NAME.has(name)) STATIC_NAME.set(name, i);
}

/** Writes an integer with an N-bit prefix (RFC 7541 §5.1) after `first`'s high bits; returns the next offset. */
function putInt(out: Buffer, at: number, first: number, prefixBits: number, v: number): number {
  const max = (1 << prefixBits) - 1;
  if (v < max) {
    out[at++] = first | v;
    return at;
  }
  out[at++] = first | max;
  v -= max;
  while (v >= 128) {
    out[at++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  out[at++] = v;
  return at;
}

/** Writes a string literal without Huffman coding (RFC 7541 §5.2); returns the next offset. */
function putString(out: Buffer, at: number, s: string): number {
  at = putInt(out, at, 0, 7, s.length);
  return at + out.write(s, at, 'latin1');
}

/**
 * A header block that leaves both dynamic tables alone: a field the static table holds whole is
 * indexed (RFC 7541 §6.1), every other one a literal without indexing (§6.2.2), its name by static
 * index where the table has the name; no Huffman coding. Names and values are ASCII (gRPC's
 * grpc-message is percent-encoded).
 */
export function encodeHeaders(headers: Readonly<Record<string, string | number>>): Buffer {
  let size = 0;
  // A type byte, and at most 5 bytes for each of the two lengths (or the name's index).
  for (const name in headers) size += name.length + String(headers[name]).length + 11;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const name in headers) {
    const value = String(headers[name]);
    const exact = STATIC_EXACT.get(`${name}\0${value}`);
    if (exact !== undefined) {
      out[at++] = 0x80 | exact;
      continue;
    }
    const idx = STATIC_NAME.get(name);
    if (idx !== undefined) at = putInt(out, at, 0x00, 4, idx);
    else {
      out[at++] = 0x00;
      at = putString(out, at, name);
    }
    at = putString(out, at, value);
  }
  return out.subarray(0, at);
}

/** RFC 7541 §4.1: an entry's size is its name and value lengths plus 32. */
const ENTRY_OVERHEAD = 32;
/** Largest integer accepted (RFC 7541 §5.1 leaves the limit to the implementation). */
const MAX_INT = 2 ** 31 - 1;
/** Continuation bytes after the prefix: 5 × 7 bits covers every value up to MAX_INT. */
const MAX_INT_BYTES = 5;

/** RFC 7541 Appendix B: code lengths in bits of symbols 0–255, then EOS (256). */
const HUFFMAN_LENGTHS = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, // 0x00
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, // 0x10
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, // ' ' … '/'
  5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, // '0' … '?'
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, // '@' … 'O'
  7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, // 'P' … '_'
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, // '`' … 'o'
  6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, // 'p' … 0x7f
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, // 0x80
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, // 0x90
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, // 0xa0
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, // 0xb0
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, // 0xc0
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, // 0xd0
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, // 0xe0
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, // 0xf0
  30, // EOS
];
const EOS = 256;

/**
 * The Huffman automaton: a state is an internal node of the code tree (0 = root, no bits
 * pending); entry `state * 16 + nibble` holds the next state (bits 0–7), the symbol completed on
 * the way (bits 8–15, with H_EMIT; codes are 5 bits or longer, so at most one per nibble), H_EOS
 * when the nibble completes EOS (RFC 7541 §5.2: an error), and H_ACCEPT when the string may end
 * in the next state: the root, or a run of at most 7 one-bits, the prefix of EOS that §5.2
 * allows as padding.
 */
const H_EMIT = 1 << 16;
const H_EOS = 1 << 17;
const H_ACCEPT = 1 << 18;

function buildHuffmanTable(): Uint32Array {
  const len = HUFFMAN_LENGTHS;
  // Canonical codes: by length, then symbol; each code is the previous one plus one, shifted left
  // by the growth in length.
  const order = len.map((_, s) => s).sort((a, b) => len[a]! - len[b]! || a - b);
  const codes = new Array<number>(len.length).fill(0);
  let code = 0;
  let prev = 0;
  for (const s of order) {
    code *= 2 ** (len[s]! - prev);
    prev = len[s]!;
    codes[s] = code++;
  }
  if (prev !== 30 || code !== 2 ** 30) throw new Error('HPACK Huffman lengths do not form a complete code');
  // The known codes of RFC 7541 Appendix B this reconstruction must give.
  if (codes[0x30] !== 0b00000 || codes[0x61] !== 0b00011 || codes[0x20] !== 0b010100 || codes[EOS] !== 0x3fffffff) {
    throw new Error('HPACK Huffman codes differ from RFC 7541 Appendix B');
  }

  // The tree: node n's children at kids[2n] (bit 0) and kids[2n + 1] (bit 1); a child > 0 is an
  // internal node, < 0 a leaf (~symbol); 0 (the root is nobody's child) is not yet set.
  const kids: number[] = [0, 0];
  for (let s = 0; s < len.length; s++) {
    let n = 0;
    for (let bit = len[s]! - 1; bit >= 0; bit--) {
      const slot = 2 * n + ((codes[s]! >>> bit) & 1);
      if (bit === 0) {
        kids[slot] = ~s;
      } else {
        if (kids[slot] === 0) {
          kids[slot] = kids.length / 2;
          kids.push(0, 0);
        }
        n = kids[slot]!;
      }
    }
  }
  const states = kids.length / 2;

  const accepting = new Uint8Array(states);
  accepting[0] = 1;
  for (let n = 0, depth = 1; depth <= 7; depth++) {
    n = kids[2 * n + 1]!;
    accepting[n] = 1;
  }

  const table = new Uint32Array(states * 16);
  for (let s = 0; s < states; s++) {
    for (let nibble = 0; nibble < 16; nibble++) {
      let n = s;
      let entry = 0;
      for (let bit = 3; bit >= 0; bit--) {
        const c = kids[2 * n + ((nibble >> bit) & 1)]!;
        if (c >= 0) {
          n = c;
          continue;
        }
        n = 0;
        if (~c === EOS) entry |= H_EOS;
        else entry |= H_EMIT | (~c << 8);
      }
      if (accepting[n]) entry |= H_ACCEPT;
      table[s * 16 + nibble] = entry | n;
    }
  }
  return table;
}

const HUFFMAN = buildHuffmanTable();

/** Where Huffman strings are decoded before becoming JS strings (decoding is synchronous). */
let scratch = Buffer.allocUnsafe(1024);
const SCRATCH_KEEP = 64 * 1024;

type Latin1 = { latin1Slice(start: number, end: number): string };
/**
 * Plain arrays of each short length, for String.fromCharCode.apply: on Node 20 that beats
 * latin1Slice (a call into C++, ~80 ns whatever the length) up to about 16 characters.
 */
const SHORT = 16;
const CHARS = Array.from({ length: SHORT + 1 }, (_, n) => new Array<number>(n).fill(0));

/** b[start, end) as a latin1 string. */
function latin1(b: Buffer, start: number, end: number): string {
  const n = end - start;
  if (n > SHORT) return (b as unknown as Latin1).latin1Slice(start, end);
  const chars = CHARS[n]!;
  for (let i = 0; i < n; i++) chars[i] = b[start + i]!;
  return String.fromCharCode.apply(null, chars);
}

/** RFC 7541 §5.2: decodes src[start, end) as a Huffman-coded string. */
function huffmanDecode(src: Buffer, start: number, end: number): string {
  // Codes are 5 bits or longer: at most 8 symbols per 5 bytes.
  const most = Math.ceil(((end - start) * 8) / 5);
  let out = scratch;
  if (out.length < most) {
    out = Buffer.allocUnsafe(Math.max(most, out.length * 2));
    if (out.length <= SCRATCH_KEEP) scratch = out;
  }
  const table = HUFFMAN;
  let state = 0;
  let e = H_ACCEPT;
  let o = 0;
  for (let i = start; i < end; i++) {
    const b = src[i]!;
    e = table[(state << 4) | (b >> 4)]!;
    if (e & (H_EMIT | H_EOS)) {
      if (e & H_EOS) throw new HpackError('HPACK Huffman string contains EOS');
      out[o++] = e >> 8;
    }
    e = table[((e & 0xff) << 4) | (b & 0xf)]!;
    if (e & (H_EMIT | H_EOS)) {
      if (e & H_EOS) throw new HpackError('HPACK Huffman string contains EOS');
      out[o++] = e >> 8;
    }
    state = e & 0xff;
  }
  if ((e & H_ACCEPT) === 0) throw new HpackError('HPACK Huffman string has invalid padding');
  return latin1(out, 0, o);
}

const truncated = (): HpackError => new HpackError('HPACK header block truncated');
const EMPTY = Buffer.alloc(0);

/** Decodes header blocks of one connection (its dynamic table persists across blocks). */
export class HpackDecoder {
  private readonly maxTableSize: number;
  private readonly maxListBytes: number;
  /** The table size the encoder last set (RFC 7541 §4.2, §6.3), at most maxTableSize. */
  private limit: number;
  /** RFC 7541 §4.1 size of the entries held. */
  private size = 0;
  // The dynamic table, a ring: the oldest entry at `first`, the newest at first + count - 1.
  private names: string[] = new Array<string>(16).fill('');
  private values: string[] = new Array<string>(16).fill('');
  private mask = 15;
  private first = 0;
  private count = 0;
  // The block being decoded and the read position in it.
  private buf: Buffer = EMPTY;
  private pos = 0;

  /**
   * maxTableSize: SETTINGS_HEADER_TABLE_SIZE we advertise (default 4096); maxListBytes: cap on
   * decoded header list size (sum of name+value+32 per entry), default 65536.
   */
  constructor(maxTableSize = 4096, maxListBytes = 65536) {
    this.maxTableSize = maxTableSize;
    this.maxListBytes = maxListBytes;
    this.limit = maxTableSize;
  }

  /**
   * Decodes one complete header block (HEADERS + CONTINUATION payloads joined). Names as sent.
   * Throws HpackError on malformed input, or with `tooLarge` set when the header list exceeds
   * maxListBytes (the whole block is still decoded, so the dynamic table stays in step).
   */
  decode(block: Uint8Array): Array<[string, string]> {
    this.buf = Buffer.isBuffer(block) ? block : Buffer.from(block.buffer, block.byteOffset, block.byteLength);
    this.pos = 0;
    try {
      return this.fields();
    } finally {
      this.buf = EMPTY;
    }
  }

  private fields(): Array<[string, string]> {
    const buf = this.buf;
    const end = buf.length;
    const out: Array<[string, string]> = [];
    let listBytes = 0;
    let fieldSeen = false;
    while (this.pos < end) {
      const b = buf[this.pos]!;
      let name: string;
      let value: string;
      if (b & 0x80) {
        // RFC 7541 §6.1 indexed field.
        let index = b & 0x7f;
        if (index === 0x7f) index = this.int(0x7f);
        else this.pos++;
        if (index === 0) throw new HpackError('HPACK index 0');
        if (index <= STATIC_COUNT) {
          name = STATIC_NAMES[index]!;
          value = STATIC_VALUES[index]!;
        } else {
          const slot = this.slot(index);
          name = this.names[slot]!;
          value = this.values[slot]!;
        }
      } else if (b & 0x40) {
        // RFC 7541 §6.2.1 literal with incremental indexing.
        const index = this.int(0x3f);
        name = index === 0 ? this.str() : this.nameAt(index);
        value = this.str();
        this.add(name, value);
      } else if (b & 0x20) {
        // RFC 7541 §6.3 dynamic table size update: only before the block's first field (§4.2).
        if (fieldSeen) throw new HpackError('HPACK dynamic table size update after a header field');
        const size = this.int(0x1f);
        if (size > this.maxTableSize) throw new HpackError(`HPACK dynamic table size update to ${size} exceeds ${this.maxTableSize}`);
        this.limit = size;
        this.evictTo(size);
        continue;
      } else {
        // RFC 7541 §6.2.2 without indexing (0000), §6.2.3 never indexed (0001).
        const index = this.int(0x0f);
        name = index === 0 ? this.str() : this.nameAt(index);
        value = this.str();
      }
      fieldSeen = true;
      // Past the cap, keep decoding (the table must follow the encoder) but stop collecting.
      listBytes += name.length + value.length + ENTRY_OVERHEAD;
      if (listBytes <= this.maxListBytes) out.push([name, value]);
    }
    if (listBytes > this.maxListBytes) {
      const err = new HpackError(`header list too large: ${listBytes} bytes exceeds the limit of ${this.maxListBytes}`);
      err.tooLarge = true;
      throw err;
    }
    return out;
  }

  /** RFC 7541 §5.1 integer with an N-bit prefix (prefixMask = 2^N - 1) at pos. */
  private int(prefixMask: number): number {
    const buf = this.buf;
    let p = this.pos;
    let v = buf[p++]! & prefixMask;
    if (v === prefixMask) {
      for (let shift = 1, n = 0; ; shift *= 128) {
        if (n++ === MAX_INT_BYTES) throw new HpackError('HPACK integer too long');
        if (p >= buf.length) throw truncated();
        const c = buf[p++]!;
        v += (c & 0x7f) * shift;
        if (v > MAX_INT) throw new HpackError('HPACK integer too large');
        if ((c & 0x80) === 0) break;
      }
    }
    this.pos = p;
    return v;
  }

  /** RFC 7541 §5.2 string literal at pos. */
  private str(): string {
    const buf = this.buf;
    if (this.pos >= buf.length) throw truncated();
    const huffman = buf[this.pos]! & 0x80;
    const length = this.int(0x7f);
    const start = this.pos;
    const end = start + length;
    if (end > buf.length) throw truncated();
    this.pos = end;
    return huffman ? huffmanDecode(buf, start, end) : latin1(buf, start, end);
  }

  /** The name at an index of the static or dynamic table (RFC 7541 §2.3.3). */
  private nameAt(index: number): string {
    return index <= STATIC_COUNT ? STATIC_NAMES[index]! : this.names[this.slot(index)]!;
  }

  /** The ring slot of dynamic-table index (> 61; 62 is the newest entry). */
  private slot(index: number): number {
    const i = index - STATIC_COUNT - 1;
    if (i >= this.count) throw new HpackError(`HPACK index ${index} past the end of the table`);
    return (this.first + this.count - 1 - i) & this.mask;
  }

  /** RFC 7541 §4.4: evicts from the oldest end to make room, then adds (unless the entry alone is too large). */
  private add(name: string, value: string): void {
    const size = name.length + value.length + ENTRY_OVERHEAD;
    this.evictTo(this.limit - size);
    if (size > this.limit) return;
    if (this.count > this.mask) this.grow();
    const slot = (this.first + this.count) & this.mask;
    this.names[slot] = name;
    this.values[slot] = value;
    this.count++;
    this.size += size;
  }

  /** Evicts the oldest entries until the table's size is at most `size` (RFC 7541 §4.3, §4.4). */
  private evictTo(size: number): void {
    while (this.size > size && this.count > 0) {
      const slot = this.first;
      this.size -= this.names[slot]!.length + this.values[slot]!.length + ENTRY_OVERHEAD;
      this.names[slot] = '';
      this.values[slot] = '';
      this.first = (slot + 1) & this.mask;
      this.count--;
    }
  }

  /** Doubles the ring, oldest entry first at slot 0. */
  private grow(): void {
    const cap = (this.mask + 1) * 2;
    const names = new Array<string>(cap).fill('');
    const values = new Array<string>(cap).fill('');
    for (let i = 0; i < this.count; i++) {
      const slot = (this.first + i) & this.mask;
      names[i] = this.names[slot]!;
      values[i] = this.values[slot]!;
    }
    this.names = names;
    this.values = values;
    this.mask = cap - 1;
    this.first = 0;
  }
}

