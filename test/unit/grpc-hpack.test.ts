/**
 * The HPACK decoder of the gRPC server (src/rpc/grpc/hpack.ts): the examples of RFC 7541
 * Appendix C (C.2–C.6, with and without Huffman coding, the dynamic table after each block,
 * evictions included), every Huffman code of Appendix B, the errors a malformed block must raise,
 * the header list cap (its error marked tooLarge, the dynamic table still in step), and interop
 * with nghttp2's encoder: a node:http2 client sends requests to a raw TCP listener that parses
 * the frames here and decodes the header blocks with one decoder per connection.
 */
import { once } from 'node:events';
import http2 from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { h2Frame, H2_PREFACE, H2Flag, H2Frame } from '../../src/rpc/grpc/h2.js';
import { HpackDecoder, HpackError } from '../../src/rpc/grpc/hpack.js';

type Field = [string, string];

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** RFC 7541 §5.1: an integer with an N-bit prefix, the first byte's other bits set to `flags`. */
function int(flags: number, prefixBits: number, v: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (v < max) return [flags | v];
  const out = [flags | max];
  for (v -= max; v >= 128; v = Math.floor(v / 128)) out.push((v % 128) | 0x80);
  out.push(v);
  return out;
}

/** RFC 7541 Appendix B, as printed there: [code, bit length] of symbols 0–255, then EOS. */
const CODES = [
  0x1ff8, 13, 0x7fffd8, 23, 0xfffffe2, 28, 0xfffffe3, 28, 0xfffffe4, 28, 0xfffffe5, 28, 0xfffffe6, 28, 0xfffffe7, 28,
  0xfffffe8, 28, 0xffffea, 24, 0x3ffffffc, 30, 0xfffffe9, 28, 0xfffffea, 28, 0x3ffffffd, 30, 0xfffffeb, 28, 0xfffffec, 28,
  0xfffffed, 28, 0xfffffee, 28, 0xfffffef, 28, 0xffffff0, 28, 0xffffff1, 28, 0xffffff2, 28, 0x3ffffffe, 30, 0xffffff3, 28,
  0xffffff4, 28, 0xffffff5, 28, 0xffffff6, 28, 0xffffff7, 28, 0xffffff8, 28, 0xffffff9, 28, 0xffffffa, 28, 0xffffffb, 28,
  0x14, 6, 0x3f8, 10, 0x3f9, 10, 0xffa, 12, 0x1ff9, 13, 0x15, 6, 0xf8, 8, 0x7fa, 11,
  0x3fa, 10, 0x3fb, 10, 0xf9, 8, 0x7fb, 11, 0xfa, 8, 0x16, 6, 0x17, 6, 0x18, 6,
  0x0, 5, 0x1, 5, 0x2, 5, 0x19, 6, 0x1a, 6, 0x1b, 6, 0x1c, 6, 0x1d, 6,
  0x1e, 6, 0x1f, 6, 0x5c, 7, 0xfb, 8, 0x7ffc, 15, 0x20, 6, 0xffb, 12, 0x3fc, 10,
  0x1ffa, 13, 0x21, 6, 0x5d, 7, 0x5e, 7, 0x5f, 7, 0x60, 7, 0x61, 7, 0x62, 7,
  0x63, 7, 0x64, 7, 0x65, 7, 0x66, 7, 0x67, 7, 0x68, 7, 0x69, 7, 0x6a, 7,
  0x6b, 7, 0x6c, 7, 0x6d, 7, 0x6e, 7, 0x6f, 7, 0x70, 7, 0x71, 7, 0x72, 7,
  0xfc, 8, 0x73, 7, 0xfd, 8, 0x1ffb, 13, 0x7fff0, 19, 0x1ffc, 13, 0x3ffc, 14, 0x22, 6,
  0x7ffd, 15, 0x3, 5, 0x23, 6, 0x4, 5, 0x24, 6, 0x5, 5, 0x25, 6, 0x26, 6,
  0x27, 6, 0x6, 5, 0x74, 7, 0x75, 7, 0x28, 6, 0x29, 6, 0x2a, 6, 0x7, 5,
  0x2b, 6, 0x76, 7, 0x2c, 6, 0x8, 5, 0x9, 5, 0x2d, 6, 0x77, 7, 0x78, 7,
  0x79, 7, 0x7a, 7, 0x7b, 7, 0x7ffe, 15, 0x7fc, 11, 0x3ffd, 14, 0x1ffd, 13, 0xffffffc, 28,
  0xfffe6, 20, 0x3fffd2, 22, 0xfffe7, 20, 0xfffe8, 20, 0x3fffd3, 22, 0x3fffd4, 22, 0x3fffd5, 22, 0x7fffd9, 23,
  0x3fffd6, 22, 0x7fffda, 23, 0x7fffdb, 23, 0x7fffdc, 23, 0x7fffdd, 23, 0x7fffde, 23, 0xffffeb, 24, 0x7fffdf, 23,
  0xffffec, 24, 0xffffed, 24, 0x3fffd7, 22, 0x7fffe0, 23, 0xffffee, 24, 0x7fffe1, 23, 0x7fffe2, 23, 0x7fffe3, 23,
  0x7fffe4, 23, 0x1fffdc, 21, 0x3fffd8, 22, 0x7fffe5, 23, 0x3fffd9, 22, 0x7fffe6, 23, 0x7fffe7, 23, 0xffffef, 24,
  0x3fffda, 22, 0x1fffdd, 21, 0xfffe9, 20, 0x3fffdb, 22, 0x3fffdc, 22, 0x7fffe8, 23, 0x7fffe9, 23, 0x1fffde, 21,
  0x7fffea, 23, 0x3fffdd, 22, 0x3fffde, 22, 0xfffff0, 24, 0x1fffdf, 21, 0x3fffdf, 22, 0x7fffeb, 23, 0x7fffec, 23,
  0x1fffe0, 21, 0x1fffe1, 21, 0x3fffe0, 22, 0x1fffe2, 21, 0x7fffed, 23, 0x3fffe1, 22, 0x7fffee, 23, 0x7fffef, 23,
  0xfffea, 20, 0x3fffe2, 22, 0x3fffe3, 22, 0x3fffe4, 22, 0x7ffff0, 23, 0x3fffe5, 22, 0x3fffe6, 22, 0x7ffff1, 23,
  0x3ffffe0, 26, 0x3ffffe1, 26, 0xfffeb, 20, 0x7fff1, 19, 0x3fffe7, 22, 0x7ffff2, 23, 0x3fffe8, 22, 0x1ffffec, 25,
  0x3ffffe2, 26, 0x3ffffe3, 26, 0x3ffffe4, 26, 0x7ffffde, 27, 0x7ffffdf, 27, 0x3ffffe5, 26, 0xfffff1, 24, 0x1ffffed, 25,
  0x7fff2, 19, 0x1fffe3, 21, 0x3ffffe6, 26, 0x7ffffe0, 27, 0x7ffffe1, 27, 0x3ffffe7, 26, 0x7ffffe2, 27, 0xfffff2, 24,
  0x1fffe4, 21, 0x1fffe5, 21, 0x3ffffe8, 26, 0x3ffffe9, 26, 0xffffffd, 28, 0x7ffffe3, 27, 0x7ffffe4, 27, 0x7ffffe5, 27,
  0xfffec, 20, 0xfffff3, 24, 0xfffed, 20, 0x1fffe6, 21, 0x3fffe9, 22, 0x1fffe7, 21, 0x1fffe8, 21, 0x7ffff3, 23,
  0x3fffea, 22, 0x3fffeb, 22, 0x1ffffee, 25, 0x1ffffef, 25, 0xfffff4, 24, 0xfffff5, 24, 0x3ffffea, 26, 0x7ffff4, 23,
  0x3ffffeb, 26, 0x7ffffe6, 27, 0x3ffffec, 26, 0x3ffffed, 26, 0x7ffffe7, 27, 0x7ffffe8, 27, 0x7ffffe9, 27, 0x7ffffea, 27,
  0x7ffffeb, 27, 0xffffffe, 28, 0x7ffffec, 27, 0x7ffffed, 27, 0x7ffffee, 27, 0x7ffffef, 27, 0x7fffff0, 27, 0x3ffffee, 26,
  0x3fffffff, 30,
];
const code = (sym: number): [number, number] => [CODES[2 * sym]!, CODES[2 * sym + 1]!];

/** RFC 7541 §5.2: Huffman-codes bytes with the codes above, padded with the high bits of EOS. */
function huffman(bytes: Uint8Array): Buffer {
  let bits = '';
  for (const b of bytes) {
    const [c, n] = code(b);
    bits += c.toString(2).padStart(n, '0');
  }
  bits += '1'.repeat((8 - (bits.length % 8)) % 8);
  const out = Buffer.alloc(bits.length / 8);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(bits.slice(8 * i, 8 * i + 8), 2);
  return out;
}

/** RFC 7541 §5.2 string literal. */
function str(s: string | Uint8Array, huff = false): number[] {
  let bytes: Uint8Array = typeof s === 'string' ? Buffer.from(s, 'latin1') : s;
  if (huff) bytes = huffman(bytes);
  return [...int(huff ? 0x80 : 0, 7, bytes.length), ...bytes];
}

/** The dynamic table as the decoder answers for it, newest first: indexed fields from 62 until one is past the end. */
function table(d: HpackDecoder): Field[] {
  const out: Field[] = [];
  for (let i = 62; ; i++) {
    try {
      out.push(d.decode(Buffer.from(int(0x80, 7, i)))[0]!);
    } catch (e) {
      if (e instanceof HpackError && /past the end/.test(e.message)) return out;
      throw e;
    }
  }
}
/** RFC 7541 §4.1 table size. */
const sizeOf = (entries: Field[]): number => entries.reduce((s, [n, v]) => s + n.length + v.length + 32, 0);

/** The error decode throws for a block (fails the test when it throws none). */
function decodeError(t: Test, d: HpackDecoder, block: number[] | Buffer): HpackError | undefined {
  try {
    d.decode(Buffer.from(block));
  } catch (e) {
    t.ok(e instanceof HpackError, `an HpackError: ${String(e)}`);
    return e as HpackError;
  }
  t.fail(`no error for ${Buffer.from(block).toString('hex')}`);
  return undefined;
}

t.test('Huffman: every code of RFC 7541 Appendix B decodes, the canonical rebuild matches the printed codes', async (t) => {
  const d = new HpackDecoder();
  // '0' = 00000, 'a' = 00011, ' ' = 010100, then two bits of padding: 0000 0000 1101 0100.
  t.same(d.decode(Buffer.from([0x00, ...str('n'), 0x82, 0x00, 0xd4])), [['n', '0a ']]);
  t.same(code(0x30), [0b00000, 5]);
  t.same(code(0x61), [0b00011, 5]);
  t.same(code(0x20), [0b010100, 6]);
  t.same(code(256), [0x3fffffff, 30]);
  // Each symbol alone (its own padding), then all 256 in one string, forwards and backwards.
  let decoded = 0;
  for (let s = 0; s < 256; s++) {
    const v = String.fromCharCode(s);
    const got = d.decode(Buffer.from([0x00, ...str('n'), ...str(v, true)]));
    if (got[0]?.[1] === v) decoded++;
    else t.fail(`symbol ${s}: got ${JSON.stringify(got)}`);
  }
  t.equal(decoded, 256, 'each symbol alone');
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const back = Buffer.from(all).reverse();
  t.same(d.decode(Buffer.from([0x00, ...str(all, true), ...str(back, true)])), [[all.toString('latin1'), back.toString('latin1')]]);
  // An empty Huffman string.
  t.same(d.decode(Buffer.from([0x00, 0x80, 0x80])), [['', '']]);
});

t.test('RFC 7541 C.2: literal fields with, without and never indexed; an indexed field', async (t) => {
  let d = new HpackDecoder();
  t.same(d.decode(hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572')), [['custom-key', 'custom-header']], 'C.2.1');
  t.same(table(d), [['custom-key', 'custom-header']]);
  t.equal(sizeOf(table(d)), 55);
  d = new HpackDecoder();
  t.same(d.decode(hex('040c 2f73 616d 706c 652f 7061 7468')), [[':path', '/sample/path']], 'C.2.2');
  t.same(table(d), []);
  d = new HpackDecoder();
  t.same(d.decode(hex('1008 7061 7373 776f 7264 0673 6563 7265 74')), [['password', 'secret']], 'C.2.3');
  t.same(table(d), []);
  d = new HpackDecoder();
  t.same(d.decode(hex('82')), [[':method', 'GET']], 'C.2.4');
  t.same(table(d), []);
});

const REQ1: Field[] = [
  [':method', 'GET'],
  [':scheme', 'http'],
  [':path', '/'],
  [':authority', 'www.example.com'],
];
const REQ2: Field[] = [...REQ1, ['cache-control', 'no-cache']];
const REQ3: Field[] = [
  [':method', 'GET'],
  [':scheme', 'https'],
  [':path', '/index.html'],
  [':authority', 'www.example.com'],
  ['custom-key', 'custom-value'],
];
const TABLE1: Field[] = [[':authority', 'www.example.com']];
const TABLE2: Field[] = [['cache-control', 'no-cache'], ...TABLE1];
const TABLE3: Field[] = [['custom-key', 'custom-value'], ...TABLE2];

function requests(t: Test, blocks: string[]): void {
  const d = new HpackDecoder();
  t.same(d.decode(hex(blocks[0]!)), REQ1, 'first request');
  t.same(table(d), TABLE1);
  t.equal(sizeOf(table(d)), 57);
  t.same(d.decode(hex(blocks[1]!)), REQ2, 'second request');
  t.same(table(d), TABLE2);
  t.equal(sizeOf(table(d)), 110);
  t.same(d.decode(hex(blocks[2]!)), REQ3, 'third request');
  t.same(table(d), TABLE3);
  t.equal(sizeOf(table(d)), 164);
}

t.test('RFC 7541 C.3: requests without Huffman coding, one dynamic table', async (t) => {
  requests(t, [
    '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
    '8286 84be 5808 6e6f 2d63 6163 6865',
    '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65',
  ]);
});

t.test('RFC 7541 C.4: requests with Huffman coding', async (t) => {
  requests(t, ['8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff', '8286 84be 5886 a8eb 1064 9cbf', '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf']);
});

const DATE1 = 'Mon, 21 Oct 2013 20:13:21 GMT';
const DATE2 = 'Mon, 21 Oct 2013 20:13:22 GMT';
const LOCATION = 'https://www.example.com';
const COOKIE = 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1';

/** C.5 and C.6: a 256-byte table, so the second and third responses evict. */
function responses(t: Test, blocks: string[]): void {
  const d = new HpackDecoder(256);
  t.same(d.decode(hex(blocks[0]!)), [
    [':status', '302'],
    ['cache-control', 'private'],
    ['date', DATE1],
    ['location', LOCATION],
  ]);
  t.same(table(d), [
    ['location', LOCATION],
    ['date', DATE1],
    ['cache-control', 'private'],
    [':status', '302'],
  ]);
  t.equal(sizeOf(table(d)), 222);
  t.same(d.decode(hex(blocks[1]!)), [
    [':status', '307'],
    ['cache-control', 'private'],
    ['date', DATE1],
    ['location', LOCATION],
  ]);
  t.same(table(d), [
    [':status', '307'],
    ['location', LOCATION],
    ['date', DATE1],
    ['cache-control', 'private'],
  ]);
  t.equal(sizeOf(table(d)), 222);
  t.same(d.decode(hex(blocks[2]!)), [
    [':status', '200'],
    ['cache-control', 'private'],
    ['date', DATE2],
    ['location', LOCATION],
    ['content-encoding', 'gzip'],
    ['set-cookie', COOKIE],
  ]);
  t.same(table(d), [
    ['set-cookie', COOKIE],
    ['content-encoding', 'gzip'],
    ['date', DATE2],
  ]);
  t.equal(sizeOf(table(d)), 215);
}

t.test('RFC 7541 C.5: responses without Huffman coding, evictions', async (t) => {
  responses(t, [
    '4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e ' +
      '1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
    '4803 3330 37c1 c0bf',
    '88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d ' +
      '4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 ' +
      '7369 6f6e 3d31',
  ]);
});

t.test('RFC 7541 C.6: responses with Huffman coding, evictions', async (t) => {
  responses(t, [
    '4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3',
    '4883 640e ffc1 c0bf',
    '88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf ' +
      'cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07',
  ]);
});

t.test('malformed blocks throw HpackError', async (t) => {
  const d = new HpackDecoder();
  t.match(decodeError(t, d, [0x80])?.message, /index 0/, 'indexed field 0');
  t.match(decodeError(t, d, [0x40 | 0])?.message, /truncated/, 'a new name with no string');
  t.match(decodeError(t, d, [0xbe])?.message, /index 62 past the end/, 'dynamic index into an empty table');
  t.match(decodeError(t, d, [0x7e, ...str('v')])?.message, /index 62 past the end/, 'a literal naming an absent dynamic entry');
  t.match(decodeError(t, d, int(0x80, 7, 5000))?.message, /past the end/, 'a multi-byte index past the table');
  t.same(d.decode(Buffer.from([0x40, ...str('a'), ...str('b')])), [['a', 'b']]);
  t.same(d.decode(Buffer.from([0xbe])), [['a', 'b']]);
  t.match(decodeError(t, d, [0xbf])?.message, /index 63 past the end/, 'one past the one entry');

  // Dynamic table size updates: at most the advertised size, and only before the first field.
  t.match(decodeError(t, d, int(0x20, 5, 4097))?.message, /size update to 4097 exceeds 4096/);
  t.match(decodeError(t, d, [0x82, 0x20])?.message, /size update after a header field/);
  t.match(decodeError(t, d, [0x82, ...int(0x20, 5, 100)])?.message, /size update after a header field/);

  // Integers: truncated, too many continuation bytes, too large.
  t.match(decodeError(t, d, [0xff])?.message, /truncated/, 'a prefix of all ones with no continuation');
  t.match(decodeError(t, d, [0xff, 0x80])?.message, /truncated/, 'a continuation byte that promises more');
  t.match(decodeError(t, d, [0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00])?.message, /integer too long/);
  t.match(decodeError(t, d, [0xff, 0xff, 0xff, 0xff, 0xff, 0x0f])?.message, /integer too large/);
  t.match(decodeError(t, d, [0x00, 0x7f, 0xff, 0xff, 0xff, 0xff, 0x07])?.message, /integer too large/, 'a string length past 2^31');

  // Strings: truncated data, a missing value.
  t.match(decodeError(t, d, [0x00, 0x05, 0x61])?.message, /truncated/, 'a name shorter than its length');
  t.match(decodeError(t, d, [0x00, ...str('n')])?.message, /truncated/, 'no value');
  t.match(decodeError(t, d, [0x00, ...str('n'), 0x85, 0x00])?.message, /truncated/, 'a Huffman value shorter than its length');

  // Huffman padding (RFC 7541 §5.2): at most 7 bits, all ones; EOS itself is an error.
  const lit = (...value: number[]) => [0x00, ...str('n'), 0x80 | value.length, ...value];
  t.same(d.decode(Buffer.from(lit(0x07))), [['n', '0']], "'0' and 3 one-bits of padding");
  t.same(d.decode(Buffer.from(lit(0x1f))), [['n', 'a']], "'a' and 3 one-bits of padding");
  t.match(decodeError(t, d, lit(0x00))?.message, /invalid padding/, "'0' then 000: padding not ones");
  t.match(decodeError(t, d, lit(0x18))?.message, /invalid padding/, "'a' then 000");
  t.match(decodeError(t, d, lit(0x07, 0xff))?.message, /invalid padding/, "'0' then 11 one-bits");
  t.match(decodeError(t, d, lit(0xff))?.message, /invalid padding/, '8 one-bits');
  t.match(decodeError(t, d, lit(0xff, 0xff, 0xff, 0xff))?.message, /EOS/, 'EOS (30 one-bits) then padding');
  t.match(decodeError(t, d, lit(0x07, 0xff, 0xff, 0xff, 0xfc))?.message, /EOS/, "'0', EOS, a symbol after it");
  for (const e of [decodeError(t, d, [0x80]), decodeError(t, d, lit(0xff))]) t.equal(e?.tooLarge, false);

  // The table survived the errors.
  t.same(table(d), [['a', 'b']]);
});

t.test('dynamic table: size updates, evictions, an entry larger than the table, many entries', async (t) => {
  const d = new HpackDecoder(4096);
  const entry = (i: number): Field => [`k${i}`, 'v'.repeat(30)];
  // Each entry is 2 + 30 + 32 = 64 bytes.
  const add = (...fields: Field[]) => d.decode(Buffer.from(fields.flatMap(([n, v]) => [0x40, ...str(n), ...str(v)])));
  add(entry(0), entry(1), entry(2));
  t.same(table(d), [entry(2), entry(1), entry(0)]);
  // Two updates at the block's start (RFC 7541 §4.2): down to 130 evicts the oldest, back up to 4096 keeps the rest.
  t.same(d.decode(Buffer.from([...int(0x20, 5, 130), ...int(0x20, 5, 4096), 0x82])), [[':method', 'GET']]);
  t.same(table(d), [entry(2), entry(1)]);
  // Size 0 empties the table; a later update raises it again.
  t.same(d.decode(Buffer.from([0x20])), []);
  t.same(table(d), []);
  t.same(d.decode(Buffer.from(int(0x20, 5, 150))), []);
  add(entry(3), entry(4), entry(5));
  t.same(table(d), [entry(5), entry(4)], 'a limit of 150 holds two');
  // An entry larger than the whole table empties it, and is not added (RFC 7541 §4.4).
  t.same(add(['big', 'x'.repeat(200)]), [['big', 'x'.repeat(200)]]);
  t.same(table(d), []);
  // Incremental indexing of a name from the entry it evicts (RFC 7541 §4.4).
  t.same(d.decode(Buffer.from([...int(0x20, 5, 70), 0x40, ...str('n'), ...str('v'.repeat(30))])), [['n', 'v'.repeat(30)]]);
  t.same(d.decode(Buffer.from([0x7e, ...str('w'.repeat(30))])), [['n', 'w'.repeat(30)]]);
  t.same(table(d), [['n', 'w'.repeat(30)]]);

  // Hundreds of entries (the ring grows), reached by multi-byte indexes.
  const big = new HpackDecoder(65536);
  const fields: Field[] = Array.from({ length: 600 }, (_, i) => [`h${i}`, `${i}`]);
  big.decode(Buffer.from(fields.flatMap(([n, v]) => [0x40, ...str(n), ...str(v)])));
  const seen = table(big);
  t.equal(seen.length, 600);
  t.same(seen, [...fields].reverse());
  // The oldest are evicted as more come in.
  const more: Field[] = Array.from({ length: 600 }, (_, i) => [`m${i}`, 'z'.repeat(40)]);
  big.decode(Buffer.from(more.flatMap(([n, v]) => [0x40, ...str(n), ...str(v)])));
  const after = table(big);
  t.ok(sizeOf(after) <= 65536 && sizeOf(after) + 76 > 65536, `size ${sizeOf(after)} filled to the limit`);
  t.same(after.slice(0, 600), [...more].reverse());
  t.same(after.slice(600), [...fields].reverse().slice(0, after.length - 600));
});

t.test('header list cap: tooLarge, and the dynamic table still follows the encoder', async (t) => {
  const d = new HpackDecoder(4096, 200);
  // :method GET (42 bytes), then 79-byte fields (7 + 40 + 32): the third passes the cap.
  const f = (i: number): Field => [`name-${i}-`, 'v'.repeat(40)];
  const block = Buffer.from([0x82, ...[0, 1, 2, 3].flatMap((i) => [0x40, ...str(f(i)[0]), ...str(f(i)[1], true)]), 0x10, ...str('secret'), ...str('x')]);
  let err: unknown;
  try {
    d.decode(block);
  } catch (e) {
    err = e;
  }
  t.ok(err instanceof HpackError);
  t.equal((err as HpackError).tooLarge, true);
  t.match((err as HpackError).message, /header list too large.*200/);
  t.same(table(d), [f(3), f(2), f(1), f(0)], 'the fields past the cap were still indexed');
  // The connection goes on: the next block refers to those entries.
  t.same(d.decode(Buffer.from([0x82, 0xbe, 0xc1])), [[':method', 'GET'], f(3), f(0)]);
  // Exactly at the cap is fine (42 + 79 + 79 = 200).
  t.same(d.decode(Buffer.from([0x82, 0xbe, 0x00, ...str('n'.repeat(7)), ...str('v'.repeat(40))])).length, 3);
  t.equal(decodeError(t, d, [0x82, 0xbe, 0x00, ...str('n'.repeat(8)), ...str('v'.repeat(40))])?.tooLarge, true, 'one byte over');
  // A malformed block is a plain error even past the cap.
  t.equal(decodeError(t, d, [0xbe, 0xbe, 0xbe, 0x80])?.tooLarge, false);
});

t.test('decodes a Uint8Array that is not a Buffer, and a view at an offset', async (t) => {
  const d = new HpackDecoder();
  const bytes = hex('8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff');
  t.same(d.decode(new Uint8Array(bytes)), REQ1);
  const padded = new Uint8Array(bytes.length + 7);
  padded.set(bytes, 3);
  t.same(new HpackDecoder().decode(padded.subarray(3, 3 + bytes.length)), REQ1);
  t.same(d.decode(new Uint8Array(0)), []);
});

// ---- Interop: nghttp2's encoder (node:http2 client) against a raw listener decoding here. ----

const { HEADERS, SETTINGS, CONTINUATION } = H2Frame;
const { ACK, END_HEADERS, PADDED, PRIORITY } = H2Flag;

interface Connection {
  /** Decoded header lists by stream id, in arrival order. */
  blocks: Array<{ stream: number; raw: Buffer; fields: Field[] }>;
  frames: { padded: number; priority: number; continuation: number };
  error?: unknown;
}

/**
 * A TCP listener that speaks just enough HTTP/2 as a server: reads the preface, sends its
 * SETTINGS, ACKs the client's, joins HEADERS and CONTINUATION payloads (without the padding and
 * priority fields) and decodes each header block with its connection's decoder. It never answers.
 */
async function rawServer(t: Test, settings: Buffer, newDecoder: () => HpackDecoder): Promise<{ port: number; conns: Connection[] }> {
  const conns: Connection[] = [];
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
    const conn: Connection = { blocks: [], frames: { padded: 0, priority: 0, continuation: 0 } };
    conns.push(conn);
    const decoder = newDecoder();
    sock.write(h2Frame(SETTINGS, 0, 0, settings));
    let buf = Buffer.alloc(0);
    let prefaceSeen = false;
    let pending: { stream: number; parts: Buffer[] } | undefined;
    const onFrame = (type: number, flags: number, stream: number, payload: Buffer): void => {
      if (type === SETTINGS && !(flags & ACK)) sock.write(h2Frame(SETTINGS, ACK, 0, Buffer.alloc(0)));
      if (pending && type !== CONTINUATION) throw new Error('a frame other than CONTINUATION inside a header block');
      if (type === HEADERS) {
        let p = payload;
        let pad = 0;
        if (flags & PADDED) {
          conn.frames.padded++;
          pad = p[0]!;
          p = p.subarray(1);
        }
        if (flags & PRIORITY) {
          conn.frames.priority++;
          p = p.subarray(5);
        }
        if (pad > p.length) throw new Error('padding longer than the frame');
        pending = { stream, parts: [p.subarray(0, p.length - pad)] };
      } else if (type === CONTINUATION) {
        if (!pending || pending.stream !== stream) throw new Error('CONTINUATION without its HEADERS');
        conn.frames.continuation++;
        pending.parts.push(payload);
      } else return;
      if (flags & END_HEADERS) {
        const raw = Buffer.concat(pending.parts);
        conn.blocks.push({ stream, raw, fields: decoder.decode(raw) });
        pending = undefined;
      }
    };
    sock.on('data', (chunk: Buffer) => {
      try {
        buf = Buffer.concat([buf, chunk]);
        if (!prefaceSeen) {
          if (buf.length < H2_PREFACE.length) return;
          if (!buf.subarray(0, H2_PREFACE.length).equals(H2_PREFACE)) throw new Error('no HTTP/2 preface');
          buf = buf.subarray(H2_PREFACE.length);
          prefaceSeen = true;
        }
        while (buf.length >= 9) {
          const length = buf.readUIntBE(0, 3);
          if (buf.length < 9 + length) break;
          onFrame(buf[3]!, buf[4]!, buf.readUInt32BE(5) & 0x7fffffff, buf.subarray(9, 9 + length));
          buf = buf.subarray(9 + length);
        }
      } catch (e) {
        conn.error = e;
        sock.destroy();
      }
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((r) => srv.close(() => r()));
  });
  return { port: (srv.address() as AddressInfo).port, conns };
}

/** What an encoder used: representations (RFC 7541 §6), string codings, multi-byte integers. */
interface Census {
  indexedStatic: number;
  indexedDynamic: number;
  incremental: number;
  withoutIndexing: number;
  neverIndexed: number;
  sizeUpdates: number;
  huffman: number;
  raw: number;
  longInts: number;
}

/** Counts a block's representations into `c` (a walk that trusts the block; the decoder checked it). */
function census(block: Buffer, c: Census): void {
  let p = 0;
  const int = (mask: number): number => {
    let v = block[p++]! & mask;
    if (v < mask) return v;
    c.longInts++;
    for (let m = 1, b = 0x80; b & 0x80; m *= 128) {
      b = block[p++]!;
      v += (b & 0x7f) * m;
    }
    return v;
  };
  const str = (): void => {
    if (block[p]! & 0x80) c.huffman++;
    else c.raw++;
    const length = int(0x7f);
    p += length;
  };
  while (p < block.length) {
    const b = block[p]!;
    if (b & 0x80) {
      if (int(0x7f) > 61) c.indexedDynamic++;
      else c.indexedStatic++;
    } else if (b & 0x40) {
      c.incremental++;
      if (int(0x3f) === 0) str();
      str();
    } else if (b & 0x20) {
      c.sizeUpdates++;
      int(0x1f);
    } else {
      if (b & 0x10) c.neverIndexed++;
      else c.withoutIndexing++;
      if (int(0x0f) === 0) str();
      str();
    }
  }
}

/** A seeded PRNG (xorshift32), so a failure can be replayed. */
function rng(seed: number): (n: number) => number {
  let x = seed >>> 0 || 1;
  return (n) => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x % n;
  };
}

const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const BASE64 = ALNUM + '+/=';
const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i)).join('');

/** A random header value: alphanumerics (Huffman pays), base64, or all of printable ASCII (often raw); no space at either end. */
function value(r: (n: number) => number, length: number): string {
  const alphabet = [ALNUM, BASE64, PRINTABLE][r(3)]!;
  let s = '';
  for (let i = 0; i < length; i++) s += alphabet[r(alphabet.length)];
  return s.replace(/^ | $/g, 'x');
}

/** Waits for `cond`, failing after `ms` (the test must not hang). */
async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** `p`, or a rejection after `ms` (the test must not hang). */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const sortFields = (fs: Field[]): Field[] => [...fs].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));

/**
 * Sends `count` requests on one node:http2 connection and checks each decoded block against what
 * was sent. Requests share some fields (nghttp2 indexes them, later requests send indexes), carry
 * new random ones of varied lengths (Huffman or raw, some past 127 bytes for multi-byte lengths),
 * a sensitive one (never indexed), and one request is big enough to need CONTINUATION frames.
 */
async function interop(t: Test, opts: { seed: number; count: number; tableSize?: number; client?: http2.ClientSessionOptions; waitSettings?: boolean }) {
  const settings = opts.tableSize === undefined ? Buffer.alloc(0) : Buffer.from([0, 1, ...[24, 16, 8, 0].map((s) => (opts.tableSize! >>> s) & 0xff)]);
  const srv = await rawServer(t, settings, () => new HpackDecoder(opts.tableSize ?? 4096, 1 << 20));
  const client = http2.connect(`http://127.0.0.1:${srv.port}`, opts.client ?? {});
  client.on('error', () => {});
  t.teardown(() => client.destroy());
  if (opts.waitSettings) await within(once(client, 'remoteSettings'), 10_000, 'the client to see our SETTINGS');

  const r = rng(opts.seed);
  const shared: Field[] = [
    ['content-type', 'application/grpc'],
    ['te', 'trailers'],
    ['user-agent', 'grpc-node-js/1.14.7'],
    ['grpc-accept-encoding', 'identity,deflate,gzip'],
    ...Array.from({ length: 4 }, (_, i): Field => [`x-shared-${i}`, value(r, 5 + r(60))]),
  ];
  const sent: Field[][] = [];
  for (let i = 0; i < opts.count; i++) {
    const path = i % 3 === 0 ? '/cosmos.bank.v1beta1.Query/Balance' : `/svc.${value(r, 1 + r(10)).replace(/[^A-Za-z0-9]/g, 'q')}/M${i}`;
    const fields: Field[] = [...shared.filter(() => r(4) !== 0)];
    const fresh = i === 5 ? 40 : 4 + r(10);
    for (let j = 0; j < fresh; j++) {
      const name = `x-r${i}-${j}-${value(r, r(6)).toLowerCase().replace(/[^a-z0-9]/g, 'z')}`;
      fields.push([name, value(r, i === 5 ? 500 + r(200) : r(j % 3 === 0 ? 300 : 40))]);
    }
    fields.push(['authorization', `Bearer ${value(r, 20 + r(20)).replace(/ /g, '_')}`]);
    const headers: http2.OutgoingHttpHeaders = { ':method': 'POST', ':path': path };
    for (const [n, v] of fields) headers[n] = v;
    (headers as Record<symbol, unknown>)[http2.sensitiveHeaders] = ['authorization'];
    const req = client.request(headers, { endStream: true });
    req.on('error', () => {});
    sent.push([[':method', 'POST'], [':path', path], [':scheme', 'http'], [':authority', `127.0.0.1:${srv.port}`], ...fields]);
  }
  await until(() => srv.conns[0] !== undefined && (srv.conns[0].error !== undefined || srv.conns[0].blocks.length === opts.count), 15_000, 'the header blocks');
  const conn = srv.conns[0]!;
  t.error(conn.error, 'every frame parsed and every block decoded');
  t.equal(conn.blocks.length, opts.count);
  conn.blocks.forEach((b, i) => {
    t.equal(b.stream, 2 * i + 1, `request ${i} on stream ${2 * i + 1}`);
    t.same(sortFields(b.fields), sortFields(sent[i]!), `request ${i}: the headers sent`);
    const firstRegular = b.fields.findIndex(([n]) => !n.startsWith(':'));
    t.ok(b.fields.slice(firstRegular).every(([n]) => !n.startsWith(':')), `request ${i}: pseudo-headers first`);
  });
  const c: Census = { indexedStatic: 0, indexedDynamic: 0, incremental: 0, withoutIndexing: 0, neverIndexed: 0, sizeUpdates: 0, huffman: 0, raw: 0, longInts: 0 };
  for (const b of conn.blocks) census(b.raw, c);
  t.comment(`nghttp2 used: ${JSON.stringify(c)}`);
  // The encoder took every path the decoder has (RFC 7541 §6): else the test proves less than it says.
  t.ok(c.indexedStatic > 0 && c.indexedDynamic > 0, 'static and dynamic indexes');
  t.ok(c.incremental > 0, 'literals with incremental indexing');
  t.ok(c.neverIndexed >= opts.count, 'never-indexed literals (the sensitive header)');
  t.ok(c.huffman > 0 && c.raw > 0, 'Huffman-coded and raw strings');
  t.ok(c.longInts > 0, 'multi-byte integers');
  return { conn, census: c };
}

t.test('interop: nghttp2 (node:http2 client) header blocks decode to the headers sent', { timeout: 30_000 }, async (t) => {
  const { conn } = await interop(t, { seed: 0x5eed, count: 30, client: { paddingStrategy: http2.constants.PADDING_STRATEGY_MAX } });
  t.ok(conn.frames.continuation > 0, `a block in CONTINUATION frames (${conn.frames.continuation})`);
  t.ok(conn.frames.padded > 0, `PADDED HEADERS frames (${conn.frames.padded})`);
});

t.test('interop: a 512-byte table we advertise (nghttp2 starts its blocks with a size update, evicts often)', { timeout: 30_000 }, async (t) => {
  const { conn, census: c } = await interop(t, { seed: 42, count: 30, tableSize: 512, waitSettings: true });
  t.equal(conn.blocks[0]!.raw[0]! & 0xe0, 0x20, 'the first block starts with a size update (RFC 7541 §4.2)');
  t.ok(c.sizeUpdates >= 1);
});

t.test('random and mutated blocks: a list or an HpackError, nothing else', async (t) => {
  const r = rng(7);
  const valid = [
    '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff',
    '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf',
    '4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3',
  ].map(hex);
  let lists = 0;
  let errors = 0;
  const d = new HpackDecoder(256, 4096);
  for (let i = 0; i < 20_000; i++) {
    let block: Buffer;
    if (i % 2 === 0) {
      block = Buffer.from(Array.from({ length: r(48) }, () => r(256)));
    } else {
      block = Buffer.from(valid[r(valid.length)]!);
      for (let k = 1 + r(3); k > 0; k--) block[r(block.length)] = r(256);
      block = block.subarray(0, block.length - r(3));
    }
    try {
      const got = d.decode(block);
      lists++;
      if (!Array.isArray(got) || got.some((f) => typeof f[0] !== 'string' || typeof f[1] !== 'string')) t.fail('not a list of string pairs');
    } catch (e) {
      errors++;
      if (!(e instanceof HpackError)) t.fail(`${Buffer.from(block).toString('hex')}: ${String(e)}`);
    }
  }
  t.ok(lists > 0 && errors > 0, `${lists} decoded, ${errors} HpackErrors`);
});
