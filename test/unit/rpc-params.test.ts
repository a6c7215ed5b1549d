/**
 * Node RPC request and parameter decoding, table-driven: JSON-RPC values (libs/json rules), URI
 * arguments (http_uri_handler.go), request bodies and websocket messages (types.go, Go's scanner
 * error texts), the route table and caching rule. Expected texts are Go's, as CometBFT 0.38 puts
 * them in `error.data` (cometbft/cometbft:rpc/jsonrpc/types/types.go, cometbft/cometbft:rpc/jsonrpc/server/http_uri_handler.go).
 */
import t, { type Test } from 'tap';
import { goFloatV, goQuote, marshalJson, scanJson } from '../../src/rpc/server/gojson.js';
import { parseGoMediaType, parseGoMultipartForm, parseGoQuery, queryGet } from '../../src/rpc/server/http.js';
import { Cors } from '../../src/rpc/server/cors.js';
import {
  decodeHttpBody,
  decodeJsonParams,
  decodeJsonValue,
  decodeUriArg,
  decodeWsMessage,
  GoPanicError,
  goBase64Decode,
  goHexDecode,
  ParamError,
  type ParamSpec,
  type ParamType,
} from '../../src/rpc/node/params.js';
import { isCacheable, route, RouteError, RouteTable, routes, wsRoute } from '../../src/rpc/node/routes.js';

const bytes = (...b: number[]) => new Uint8Array(b);
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const spec = (type: ParamType, optional = false): ParamSpec => ({ name: 'p', type, optional });

/** `ok` is the decoded value; `err` Go's error text; `panic` a Go panic text. */
type Case = [ParamType, string, { ok: unknown } | { err: string } | { panic: string }];

function check(t: Test, label: string, run: () => unknown, want: Case[2]): void {
  try {
    const got = run();
    if ('ok' in want) t.same(got, want.ok, label);
    else t.fail(`${label}: decoded ${String(got)}, want an error`);
  } catch (e) {
    if ('err' in want) {
      t.type(e, ParamError, `${label}: ParamError`);
      t.equal((e as Error).message, want.err, label);
    } else if ('panic' in want) {
      t.type(e, GoPanicError, `${label}: GoPanicError`);
      t.equal((e as Error).message, want.panic, label);
    } else t.fail(`${label}: threw ${(e as Error).message}`);
  }
}

t.test('Go scanner error texts (json.Unmarshal)', async (t) => {
  const cases: Array<[string, string | null]> = [
    ['{"a":1}', null],
    [' [1, 2.5e-3, true, false, null, "x\\u00e9"] ', null],
    ['', 'unexpected end of JSON input'],
    ['{', 'unexpected end of JSON input'],
    ['{"a"', 'unexpected end of JSON input'],
    ['{"a" 1}', "invalid character '1' after object key"],
    ['{"a":1 "b"}', `invalid character '"' after object key:value pair`],
    ['[1 2]', "invalid character '2' after array element"],
    ['{1:2}', "invalid character '1' looking for beginning of object key string"],
    ['{"a":1,}', "invalid character '}' looking for beginning of object key string"],
    ['x', "invalid character 'x' looking for beginning of value"],
    ['[1,]', "invalid character ']' looking for beginning of value"],
    ['"a\\qb"', "invalid character 'q' in string escape code"],
    ['"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"],
    ['"a\tb"', "invalid character '\\t' in string literal"],
    ['-a', "invalid character 'a' in numeric literal"],
    ['1.a', "invalid character 'a' after decimal point in numeric literal"],
    ['1ea', "invalid character 'a' in exponent of numeric literal"],
    ['trUe', "invalid character 'U' in literal true (expecting 'u')"],
    ['fals', "invalid character ' ' in literal false (expecting 'e')"],
    ['nul', "invalid character ' ' in literal null (expecting 'l')"],
    ['{} x', "invalid character 'x' after top-level value"],
    ['01', "invalid character '1' after top-level value"],
    ['1.', "invalid character ' ' after decimal point in numeric literal"],
    ['-', "invalid character ' ' in numeric literal"],
    ["'a'", "invalid character '\\'' looking for beginning of value"],
    ['é', "invalid character 'Ã' looking for beginning of value"],
    ['\u0000', "invalid character '\\x00' looking for beginning of value"],
    ['\\', "invalid character '\\\\' looking for beginning of value"],
    ['['.repeat(10_001), "invalid character '[' exceeded max depth"],
  ];
  for (const [input, want] of cases) {
    const r = scanJson(Buffer.from(input, 'utf8'), 'unmarshal');
    t.same(r.ok ? null : r.error, want, JSON.stringify(input.slice(0, 20)));
  }
  t.ok(scanJson(Buffer.from('['.repeat(10_000) + ']'.repeat(10_000)), 'unmarshal').ok, 'depth 10000 is allowed');
});

t.test('Go scanner in decoder mode (websocket messages)', async (t) => {
  const cases: Array<[string, number | string]> = [
    ['{"a":1} junk', 7],
    ['123abc', 3],
    ['"abc"x', 5],
    ['true false', 4],
    ['[1]]', 3],
    ['5', 1],
    ['', 'EOF'],
    ['  \n', 'EOF'],
    ['{"a":', 'unexpected EOF'],
    ['1.', 'unexpected EOF'],
    ['tru', 'unexpected EOF'],
    ['x', "invalid character 'x' looking for beginning of value"],
  ];
  for (const [input, want] of cases) {
    const r = scanJson(Buffer.from(input), 'decode');
    t.same(r.ok ? r.end : r.error, want, JSON.stringify(input));
  }
});

t.test('JSON-RPC parameter values (libs/json)', async (t) => {
  const cases: Array<[ParamType, unknown, Case[2]]> = [
    ['int64', '5', { ok: 5n }],
    ['int64', ' 5 ', { ok: 5n }],
    ['int64', '-9223372036854775808', { ok: -(2n ** 63n) }],
    ['int64', '9223372036854775807', { ok: 2n ** 63n - 1n }],
    ['int64', '9223372036854775808', { err: 'json: cannot unmarshal number 9223372036854775808 into Go value of type int64' }],
    ['int64', 5, { err: 'invalid 64-bit integer encoding "5", expected string' }],
    ['int64', true, { err: 'invalid 64-bit integer encoding "true", expected string' }],
    ['int64', [1], { err: 'invalid 64-bit integer encoding "[1]", expected string' }],
    ['int64', 'abc', { err: "invalid character 'a' looking for beginning of value" }],
    ['int64', '', { err: 'unexpected end of JSON input' }],
    ['int64', '1.5', { err: 'json: cannot unmarshal number 1.5 into Go value of type int64' }],
    ['int64', '007', { err: "invalid character '0' after top-level value" }],
    ['int64', 'null', { ok: 0n }],
    ['int64', '"5"', { err: "invalid character '\\\\' looking for beginning of value" }],
    ['int64', null, { ok: undefined }],
    ['int', '-0', { ok: 0n }],
    ['int', '1e3', { err: 'json: cannot unmarshal number 1e3 into Go value of type int' }],
    ['uint', '18446744073709551615', { ok: 2n ** 64n - 1n }],
    ['uint', '-1', { err: 'json: cannot unmarshal number -1 into Go value of type uint' }],
    ['uint', '-0', { err: 'json: cannot unmarshal number -0 into Go value of type uint' }],
    ['bool', true, { ok: true }],
    ['bool', 'true', { err: 'json: cannot unmarshal string into Go value of type bool' }],
    ['bool', 1, { err: 'json: cannot unmarshal number into Go value of type bool' }],
    ['string', 'x<y', { ok: 'x<y' }],
    ['string', 1, { err: 'json: cannot unmarshal number into Go value of type string' }],
    ['string', {}, { err: 'json: cannot unmarshal object into Go value of type string' }],
    ['query', "tm.event='NewBlock'", { ok: "tm.event='NewBlock'" }],
    ['bytes', 'aGVsbG8=', { ok: utf8('hello') }],
    ['bytes', '', { ok: bytes() }],
    ['bytes', 'aGVs\nbG8=', { ok: utf8('hello') }],
    ['bytes', 'aGVsbG8', { err: 'illegal base64 data at input byte 4' }],
    ['bytes', 'a', { err: 'illegal base64 data at input byte 0' }],
    ['bytes', '!!!!', { err: 'illegal base64 data at input byte 0' }],
    ['bytes', 'aG=', { err: 'illegal base64 data at input byte 3' }],
    ['bytes', 'aG=x', { err: 'illegal base64 data at input byte 2' }],
    ['bytes', 'aGk=x', { err: 'illegal base64 data at input byte 4' }],
    ['bytes', 'aG==', { ok: utf8('h') }],
    ['bytes', [104, 105], { ok: utf8('hi') }],
    ['bytes', [1, 300], { err: 'json: cannot unmarshal number 300 into Go value of type uint8' }],
    ['bytes', ['a'], { err: 'json: cannot unmarshal string into Go value of type uint8' }],
    ['bytes', 12, { err: 'json: cannot unmarshal number into Go value of type []uint8' }],
    ['hexbytes', 'ABcd', { ok: bytes(0xab, 0xcd) }],
    ['hexbytes', '', { ok: bytes() }],
    ['hexbytes', 'abc', { err: 'encoding/hex: odd length hex string' }],
    ['hexbytes', 'zz', { err: "encoding/hex: invalid byte: U+007A 'z'" }],
    ['hexbytes', '0xAB', { err: "encoding/hex: invalid byte: U+0078 'x'" }],
    ['hexbytes', 'a\n', { err: 'encoding/hex: invalid byte: U+005C \'\\\'' }],
    ['hexbytes', 12, { err: 'invalid hex string: 12' }],
    ['array', ['a', null], { ok: ['a', ''] }],
    ['array', 'a', { err: 'json: cannot unmarshal string into Go value of type []json.RawMessage' }],
    ['array', [1], { err: 'json: cannot unmarshal number into Go value of type string' }],
  ];
  for (const [type, v, want] of cases) {
    check(t, `${type} ${JSON.stringify(v)}`, () => decodeJsonValue(spec(type, true), v), want);
  }
});

t.test('URI arguments (http_uri_handler.go)', async (t) => {
  const cases: Case[] = [
    ['int64', '5', { ok: 5n }],
    ['int64', '-3', { ok: -3n }],
    ['int64', '"5"', { ok: 5n }],
    ['int64', '0x10', { err: "got a hex string arg, but expected 'int64'" }],
    ['int64', '0X10', { err: "got a hex string arg, but expected 'int64'" }],
    ['int64', 'abc', { err: 'invalid 64-bit integer encoding "abc", expected string' }],
    ['int64', '1.5', { err: 'invalid 64-bit integer encoding "1.5", expected string' }],
    ['int64', '"abc"', { err: "invalid character 'a' looking for beginning of value" }],
    ['int64', '"5', { err: 'invalid 64-bit integer encoding "\\"5", expected string' }],
    ['int64', 'null', { ok: undefined }],
    ['int64', '"', { panic: 'runtime error: slice bounds out of range [1:0]' }],
    ['int64', '99999999999999999999', { err: 'json: cannot unmarshal number 99999999999999999999 into Go value of type int64' }],
    ['int64', '007', { err: "invalid character '0' after top-level value" }],
    ['int', '0x1', { err: "got a hex string arg, but expected 'int'" }],
    ['uint', '-1', { err: 'json: cannot unmarshal number -1 into Go value of type uint' }],
    ['uint', '7', { ok: 7n }],
    ['bool', 'true', { ok: true }],
    ['bool', 'false', { ok: false }],
    ['bool', '1', { err: 'json: cannot unmarshal number into Go value of type bool' }],
    ['bool', 'yes', { err: "invalid character 'y' looking for beginning of value" }],
    ['bool', '"true"', { err: 'json: cannot unmarshal string into Go value of type bool' }],
    ['bool', '0x1', { err: "got a hex string arg, but expected 'bool'" }],
    ['string', '"abc"', { ok: 'abc' }],
    ['string', '"a\\"b"', { ok: 'a"b' }],
    ['string', '0x616263', { ok: 'abc' }],
    ['string', 'abc', { err: "invalid character 'a' looking for beginning of value" }],
    ['string', '123', { err: 'json: cannot unmarshal number into Go value of type string' }],
    ['query', `"tm.event='NewBlock'"`, { ok: "tm.event='NewBlock'" }],
    ['bytes', '"name=satoshi"', { ok: utf8('name=satoshi') }],
    ['bytes', '0x0102', { ok: bytes(1, 2) }],
    ['bytes', '0X0a', { ok: bytes(10) }],
    ['bytes', '0x1', { err: 'encoding/hex: odd length hex string' }],
    ['bytes', '0xzz', { err: "encoding/hex: invalid byte: U+007A 'z'" }],
    ['bytes', '[1,2]', { ok: bytes(1, 2) }],
    ['bytes', 'abc', { err: "invalid character 'a' looking for beginning of value" }],
    ['bytes', 'dGVzdA==', { err: "invalid character 'd' looking for beginning of value" }],
    ['bytes', '"a"b"', { err: "invalid character 'b' after top-level value" }],
    ['hexbytes', '0xABCD', { ok: bytes(0xab, 0xcd) }],
    ['hexbytes', '"AB"', { ok: utf8('AB') }],
    ['hexbytes', 'ABCD', { err: 'invalid hex string: ABCD' }],
    ['array', '["a","b"]', { ok: ['a', 'b'] }],
    ['array', 'a', { err: "invalid character 'a' looking for beginning of value" }],
    ['array', '[1]', { err: 'json: cannot unmarshal number into Go value of type string' }],
    ['array', '0x1', { err: "got a hex string arg, but expected 'slice'" }],
  ];
  for (const [type, arg, want] of cases) check(t, `${type} ${arg}`, () => decodeUriArg(spec(type, true), arg), want);
});

t.test('JSON-RPC params: object, array, null, other', async (t) => {
  const specs: ParamSpec[] = [
    { name: 'height', type: 'int64', optional: true },
    { name: 'prove', type: 'bool' },
  ];
  t.same(decodeJsonParams(specs, { height: '7', prove: true, extra: 1 }), { height: 7n, prove: true }, 'named; unknown names ignored');
  t.same(decodeJsonParams(specs, { prove: false }), { prove: false }, 'missing name not given');
  t.same(decodeJsonParams(specs, { height: null }), { height: undefined }, 'null is not given');
  t.same(decodeJsonParams(specs, ['8', false]), { height: 8n, prove: false }, 'positional');
  t.same(decodeJsonParams(specs, null), {}, 'null params: all defaults');
  t.same(decodeJsonParams([], []), {}, 'empty array for no parameters');
  t.throws(() => decodeJsonParams(specs, ['1']), new ParamError('expected 2 parameters ([height prove]), got 1 ([[34 49 34]])'));
  t.throws(() => decodeJsonParams([], [12, 'a']), new ParamError('expected 0 parameters ([]), got 2 ([[49 50] [34 97 34]])'));
  t.throws(
    () => decodeJsonParams(specs, 'x'),
    new ParamError('unknown type for JSON params: json: cannot unmarshal string into Go value of type []json.RawMessage. Expected map or array'),
  );
  t.throws(() => decodeJsonParams(specs, { height: 5 }), new ParamError('invalid 64-bit integer encoding "5", expected string'));
});

const STRUCT =
  'struct { JSONRPC string "json:\\"jsonrpc\\""; ID interface {} "json:\\"id,omitempty\\""; Method string "json:\\"method\\""; Params json.RawMessage "json:\\"params\\"" }';

t.test('request bodies (RPCRequest.UnmarshalJSON, makeJSONRPCHandler)', async (t) => {
  const body = (s: string) => decodeHttpBody(Buffer.from(s, 'utf8'));
  t.same(body('{"jsonrpc":"2.0","id":1,"method":"m","params":{}}'), { ok: true, array: false, requests: [{ id: 1, method: 'm', params: {}, hasParams: true }] });
  t.same(body('[{"id":"a","method":"m"},{"method":"x"},null]'), {
    ok: true,
    array: true,
    requests: [{ id: 'a', method: 'm', params: undefined, hasParams: false }, null, null],
  });
  t.same(body('null'), { ok: true, array: true, requests: [] }, 'null is an empty batch');
  t.same(body('[]'), { ok: true, array: true, requests: [] });
  t.same(body('{"id":null,"method":"m"}'), { ok: true, array: false, requests: [null] }, 'null id: notification');
  t.same(body('{"ID":1,"METHOD":"m","Params":null}'), { ok: true, array: false, requests: [{ id: 1, method: 'm', params: null, hasParams: true }] }, 'names fold case');
  t.same(body('{"id":-2.9,"method":"m"}'), { ok: true, array: false, requests: [{ id: -2, method: 'm', params: undefined, hasParams: false }] }, 'id truncated');
  t.same(body('{"id":"","method":"m"}'), { ok: true, array: false, requests: [{ id: '', method: 'm', params: undefined, hasParams: false }] });
  for (const [lit, id] of [
    ['99999999999999999999', -(2 ** 63)],
    ['-9223372036854777856', -(2 ** 63)],
    ['9223372036854775807', -(2 ** 63)],
    ['9223372036854774784', 9223372036854774784],
    ['9007199254740993', 9007199254740992],
    ['-0', 0],
    ['-0.5', 0],
  ] as const) {
    t.same(body(`{"id":${lit},"method":"m"}`), { ok: true, array: false, requests: [{ id, method: 'm', params: undefined, hasParams: false }] }, `id ${lit}`);
  }
  const errs: Array<[string, string]> = [
    ['{"id":1,"method":5}', 'json: cannot unmarshal number into Go struct field .method of type string'],
    ['{"jsonrpc":2,"id":1}', 'json: cannot unmarshal number into Go struct field .jsonrpc of type string'],
    ['{"method":[]}', 'json: cannot unmarshal array into Go struct field .method of type string'],
    ['{"id":true,"method":"m"}', 'json-rpc ID (true) is of unknown type (bool)'],
    ['{"id":{"b":"x","a":1},"method":"m"}', 'json-rpc ID (map[a:1 b:x]) is of unknown type (map[string]interface {})'],
    ['{"id":[1,"x",1000000]}', 'json-rpc ID ([1 x 1e+06]) is of unknown type ([]interface {})'],
    ['[1]', `json: cannot unmarshal array into Go value of type ${STRUCT}`],
    ['[{"id":true}]', `json: cannot unmarshal array into Go value of type ${STRUCT}`],
    ['"x"', `json: cannot unmarshal string into Go value of type ${STRUCT}`],
    ['5', `json: cannot unmarshal number into Go value of type ${STRUCT}`],
    ['{"id":1e400,"method":"m"}', 'json: cannot unmarshal number 1e400 into Go struct field .id of type float64'],
    ['{"params":{"id":2e400},"method":5,"ID":-1.5E+999}', 'json: cannot unmarshal number into Go struct field .method of type string'],
    ['{"params":{"id":2e400},"iD":\t-1.5E+999 }', 'json: cannot unmarshal number -1.5E+999 into Go struct field .id of type float64'],
    ['{"\\u0069d":1' + '0'.repeat(400) + '}', `json: cannot unmarshal number 1${'0'.repeat(400)} into Go struct field .id of type float64`],
    ['{"id":1,', 'unexpected end of JSON input'],
    ['\ufeff{}', "invalid character 'ï' looking for beginning of value"],
  ];
  for (const [input, err] of errs) t.same(body(input), { ok: false, error: err }, input);
});

t.test('websocket messages (json.Decoder)', async (t) => {
  const msg = (s: string) => decodeWsMessage(Buffer.from(s, 'utf8'));
  t.same(msg('{"id":1,"method":"m"} trailing'), { ok: true, value: { id: 1, method: 'm', params: undefined, hasParams: false } });
  t.same(msg('{"method":"m"}'), { ok: true, value: null });
  t.same(msg('[{"id":1}]'), { ok: false, error: `json: cannot unmarshal array into Go value of type ${STRUCT}` }, 'no batches');
  t.same(msg(''), { ok: false, error: 'EOF' });
  t.same(msg('{"id":1'), { ok: false, error: 'unexpected EOF' });
  t.same(msg('{x'), { ok: false, error: "invalid character 'x' looking for beginning of object key string" });
  t.same(msg('{"id":"]","x":[{"id":1e999}],"id":1e999}{"id":1}'), { ok: false, error: 'json: cannot unmarshal number 1e999 into Go struct field .id of type float64' }, 'the literal of the first value');
});

t.test('base64 and hex helpers', async (t) => {
  t.same(goBase64Decode('AAEC'), bytes(0, 1, 2));
  t.same(goHexDecode('0aFF'), bytes(0x0a, 0xff));
  t.throws(() => goHexDecode('0g'), new ParamError("encoding/hex: invalid byte: U+0067 'g'"));
  t.throws(() => goHexDecode('g'), new ParamError("encoding/hex: invalid byte: U+0067 'g'"), 'bad byte reported before odd length');
});

t.test('Go formatting and JSON output', async (t) => {
  t.equal(goQuote('a"b\\c\n\u0001é\u00a0'), '"a\\"b\\\\c\\n\\x01é\\u00a0"');
  t.equal(goFloatV(1), '1');
  t.equal(goFloatV(123456), '123456');
  t.equal(goFloatV(1e6), '1e+06');
  t.equal(goFloatV(1234567), '1.234567e+06');
  t.equal(goFloatV(0.00001), '1e-05');
  t.equal(goFloatV(1.5), '1.5');
  t.equal(marshalJson({ h: 5n, list: [1n, 2], s: '<a&b>\u2028' }), '{"h":"5","list":["1",2],"s":"\\u003ca\\u0026b\\u003e\\u2028"}');
  t.equal(marshalJson(undefined), 'null');
});

t.test('query strings (net/url ParseQuery)', async (t) => {
  const q = parseGoQuery('a=1&a=2&b=%22x+y%22&c&d=%zz&e=1;2&=v&f=%E2%9C%93');
  t.equal(queryGet(q, 'a'), '1', 'first value');
  t.equal(queryGet(q, 'b'), '"x y"', 'unescaped, + is a space');
  t.equal(queryGet(q, 'c'), '', 'no value');
  t.notOk(q.has('d'), 'bad escape skipped');
  t.notOk(q.has('e'), 'semicolon pair skipped');
  t.equal(queryGet(q, ''), 'v');
  t.equal(queryGet(q, 'f'), '✓');
});

t.test('media types (mime.ParseMediaType)', async (t) => {
  const mt = (v: string) => {
    const r = parseGoMediaType(v);
    return r && { type: r.type, params: Object.fromEntries(r.params) };
  };
  t.same(mt(' Multipart/Form-Data ; Boundary = "a b" ;charset=x;'), { type: 'multipart/form-data', params: { boundary: 'a b', charset: 'x' } });
  t.same(mt('form-data; name="a\\"b"; filename="C:\\dir\\f"'), { type: 'form-data', params: { name: 'a"b', filename: 'C:\\dir\\f' } }, 'a backslash escapes only a tspecial');
  t.same(mt('a/b; x=1; x=1'), { type: 'a/b', params: { x: '1' } }, 'a repeated equal parameter');
  t.same(mt('a/b; x*=utf-8\'\'y'), { type: 'a/b', params: {} }, 'RFC 2231 parameters left out');
  for (const bad of ['', 'a/', '/b', 'a/b c', 'a/b;;', 'a/b; x', 'a/b; x=', 'a/b; x="y', 'a/b; x=1; x=2', 'a/b x=1']) t.equal(parseGoMediaType(bad), null, JSON.stringify(bad));
});

t.test('multipart forms (mime/multipart ReadForm)', async (t) => {
  const form = (body: string, ct = 'multipart/form-data; boundary=B') => {
    const m = parseGoMultipartForm(ct, Buffer.from(body, 'utf8'));
    return m && Object.fromEntries(m);
  };
  const cd = (name: string, extra = '') => `Content-Disposition: form-data; name="${name}"${extra}`;
  t.same(form(`--B\r\n${cd('a')}\r\n\r\n1\r\n--B\r\n${cd('a')}\r\n\r\n2\r\n--B\r\n${cd('é')}\r\n\r\n✓\r\n\r\n--B--\r\nepilogue`), { a: ['1', '2'], é: ['✓\r\n'] }, 'repeated names in order; UTF-8');
  t.same(form(`--B\n${cd('a')}\n\n1\n--B--\n`), { a: ['1'] }, 'LF line endings when the first boundary line has them');
  t.same(form(`--B  \r\ncontent-disposition:form-data;name=a\r\nX-Other: y\r\n  folded\r\n\r\n1\r\n--B--`), { a: ['1'] }, 'padding after a boundary, header names fold case, continuation lines');
  t.same(form(`--B\r\n${cd('a')}\r\n\r\n--B\r\n${cd('b')}\r\n\r\nx\r\n--Bx\r\n--B-\r\n--B--`), { a: [''], b: ['x\r\n--Bx\r\n--B-'] }, 'an empty part; a boundary followed by other bytes is data');
  t.same(form(`--B\r\nContent-Disposition: attachment; name="a"\r\n\r\n1\r\n--B\r\n${cd('f', '; filename="x"')}\r\n\r\n2\r\n--B\r\nContent-Disposition : form-data; name="c"\r\n\r\n3\r\n--B--`), {}, 'not form-data, a file, a header name with a space');
  t.same(form('--B--'), {}, 'no parts');
  const bad: Array<[string, string, string?]> = [
    ['empty body', ''],
    ['unterminated part', `--B\r\n${cd('a')}\r\n\r\n1`],
    ['unterminated header', `--B\r\n${cd('a')}\r\n`],
    ['header line without a colon', `--B\r\n${cd('a')}\r\nbad\r\n\r\n1\r\n--B--`],
    ['header starting with a space', `--B\r\n ${cd('a')}\r\n\r\n1\r\n--B--`],
    ['control byte in a header', `--B\r\n${cd('a')}\u0001\r\n\r\n1\r\n--B--`],
    ['junk after a part', `--B\r\n${cd('a')}\r\n\r\n1\r\n--B\tx\r\n--B--`],
    ['no final boundary', `--B\r\n${cd('a')}\r\n\r\n1\r\n--B\r\n`],
    ['a preamble line over 4096 bytes', `${'x'.repeat(4096)}\r\n--B\r\n${cd('a')}\r\n\r\n1\r\n--B--`],
    ['more than 1000 parts', `${'--B\r\n\r\n\r\n'.repeat(1001)}--B--`],
    ['empty boundary', `--\r\n${cd('a')}\r\n\r\n1\r\n----`, 'multipart/form-data; boundary=""'],
    ['not multipart/form-data', `--B\r\n${cd('a')}\r\n\r\n1\r\n--B--`, 'multipart/mixed; boundary=B'],
  ];
  for (const [label, body, ct] of bad) t.equal(form(body, ct), null, label);
  t.same(form(`${'--B\r\n\r\n\r\n'.repeat(1000)}--B--`), {}, '1000 parts are allowed');
});

t.test('CORS rules (rs/cors v1.11.1)', async (t) => {
  const cors = new Cors({ allowedOrigins: ['https://*.Example.com', 'http://good.org'], allowedMethods: ['HEAD', 'GET', 'POST'], allowedHeaders: ['Origin', 'Content-Type', 'X-Server-Time'] });
  t.ok(cors.originAllowed('https://a.example.com'));
  t.ok(cors.originAllowed('HTTP://GOOD.ORG'), 'case-insensitive');
  t.notOk(cors.originAllowed('https://example.com'), 'wildcard needs its prefix and suffix');
  t.notOk(cors.originAllowed('http://evil.org'));
  t.ok(cors.headersAllowed('content-type,x-server-time'));
  t.ok(cors.headersAllowed('content-type, x-server-time'), 'one space tolerated');
  t.notOk(cors.headersAllowed('x-server-time,content-type'), 'must be sorted');
  t.notOk(cors.headersAllowed('Content-Type'), 'request header names are expected lower-case');
  t.notOk(cors.headersAllowed('authorization'));
  t.ok(cors.headersAllowed(''), 'empty list');
  t.ok(cors.methodAllowed('OPTIONS'));
  t.notOk(cors.methodAllowed('PUT'));
  t.notOk(cors.methodAllowed('get'), 'methods compared exactly');
  t.same(new Cors({ allowedOrigins: ['*'], allowedMethods: [], allowedHeaders: [] }).actual({ method: 'GET', origin: 'http://x', requestMethod: '', requestHeaders: '' }), [
    ['Vary', 'Origin'],
    ['Access-Control-Allow-Origin', '*'],
  ]);
});

t.test('route table', async (t) => {
  const block = route({
    name: 'block',
    params: [{ name: 'height', type: 'int64', optional: true }],
    cacheable: { unlessDefault: ['height'] },
    handler: ({ height }) => ({ height }),
  });
  const page = route({ name: 'page', params: [{ name: 'n', type: 'int' }], cacheable: { unlessDefault: ['n'] }, handler: ({ n }) => n });
  const genesis = route({ name: 'genesis', cacheable: true, handler: () => ({}) });
  const flush = route({ name: 'unsafe_flush_mempool', unsafe: true, handler: () => ({}) });
  const sub = wsRoute({ name: 'subscribe', params: [{ name: 'query', type: 'query' }], handler: () => ({}) });

  const safe = new RouteTable([routes.health(), block, genesis, flush, sub], { unsafe: false });
  t.equal(safe.get('unsafe_flush_mempool'), undefined, 'unsafe routes left out');
  t.ok(new RouteTable([flush], { unsafe: true }).get('unsafe_flush_mempool'), 'unsafe routes served when enabled');
  t.same(
    safe.list().map((r) => r.name),
    ['block', 'genesis', 'health', 'subscribe'],
  );
  t.equal(
    safe.endpointsHtml('h:1'),
    '<html><body><br>Available endpoints:<br><br>Endpoints that require arguments:<br>' +
      '<a href="//h:1/block?height=_">//h:1/block?height=_</a></br>' +
      '<a href="//h:1/genesis?">//h:1/genesis?</a></br>' +
      '<a href="//h:1/health?">//h:1/health?</a></br>' +
      '<a href="//h:1/subscribe?query=_">//h:1/subscribe?query=_</a></br></body></html>',
  );
  t.same(safe.describe()[3], { name: 'subscribe', params: [{ name: 'query', type: 'query' }], cacheable: false, wsOnly: true, unsafe: false });

  // rpc_func.go cacheableWithArgs.
  t.equal(isCacheable(genesis, {}, false), true, 'always cacheable');
  t.equal(isCacheable(block, { height: 5n }, true), true, 'height given');
  t.equal(isCacheable(block, {}, true), false, 'height not given');
  t.equal(isCacheable(block, { height: 5n }, false), false, 'no params member');
  t.equal(isCacheable(block, { height: 0n }, true), true, 'explicit 0 is a non-nil pointer');
  t.equal(isCacheable(page, { n: 0n }, true), false, 'zero value of a plain parameter');
  t.equal(isCacheable(routes.health(), {}, true), false, 'not cacheable');

  t.throws(() => new RouteTable([genesis, genesis], { unsafe: false }), RouteError, 'duplicate');
  t.throws(() => new RouteTable([route({ name: 'Bad-Name', handler: () => 1 })], { unsafe: false }), RouteError, 'bad name');
  t.throws(() => new RouteTable([route({ name: 'websocket', handler: () => 1 })], { unsafe: false }), RouteError, 'reserved name');
  t.throws(
    () => new RouteTable([{ name: 'x', params: [{ name: 'a', type: 'float' as ParamType }], handler: () => 1 }], { unsafe: false }),
    RouteError,
    'unknown type',
  );
  t.throws(
    () =>
      new RouteTable(
        [
          route({
            name: 'x',
            params: [
              { name: 'a', type: 'int' },
              { name: 'a', type: 'int' },
            ],
            handler: () => 1,
          }),
        ],
        { unsafe: false },
      ),
    RouteError,
    'duplicate parameter',
  );
  t.ok(new RouteTable([{ name: 'legacy', params: [], handler: () => ({}) }], { unsafe: false }).get('legacy'), 'plain objects are routes too');
});
