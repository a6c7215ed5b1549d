/**
 * The fuzz harness itself (test/helpers/fuzz): cases reproduce from (seed, surface, index), and
 * the judges reject answers that are not protocol-shaped, so the e2e fuzz test can fail.
 */
import type http2 from 'node:http2';
import t from 'tap';
import type { HttpAnswer } from '../helpers/fuzz/http-conn.js';
import { parseResponse } from '../helpers/fuzz/http-conn.js';
import { judgeGrpc, type GrpcCase } from '../helpers/fuzz/grpc.js';
import { enabled, JSON_MUTATORS, jsLeak, MAX_SAFE_NESTING, mutateJson, toJson } from '../helpers/fuzz/mutators.js';
import { envelopeProblem, judgeNodeRpc } from '../helpers/fuzz/node-rpc.js';
import { Rng } from '../helpers/fuzz/prng.js';
import { judgeRest } from '../helpers/fuzz/rest.js';
import { SURFACES } from '../helpers/fuzz/surfaces.js';
import { answerBudgetMs } from '../helpers/fuzz/surface.js';
import type { HttpCase } from '../helpers/fuzz/http-surface.js';
import type { FuzzTarget } from '../helpers/fuzz/target.js';
import { encodeFrame, FrameReader, frameMutation, maskInPlace, OP_BINARY, OP_CLOSE, OP_CONT, OP_PING, OP_PONG, OP_TEXT } from '../helpers/fuzz/ws-frames.js';
import { jsonRpcWsSurface, type WsCase } from '../helpers/fuzz/node-rpc.js';
import { listen, uws } from '../../src/rpc/server/uws.js';

const target: FuzzTarget = {
  ports: { rpc: 1, api: 2, grpc: 3, jsonRpc: 4, jsonRpcWs: 5, p2p: 6, metrics: 7 },
  addresses: ['chain17w0adeg64ky0daxwd2ugyuneellmjgnxkl0eq4'],
  denom: 'achain',
  blockHash: 'AB'.repeat(32),
  validatorAddress: 'CD'.repeat(20),
  chainId: 'fuzz-1',
};

function answer(status: number, contentType: string, body: string): HttpAnswer {
  const headers = new Map<string, string[]>();
  if (contentType) headers.set('content-type', [contentType]);
  return { status, statusLine: `HTTP/1.1 ${status}`, headers, body: Buffer.from(body), closed: false };
}

t.test('a case is the same for the same seed, surface and index, and differs otherwise', async (t) => {
  for (const [name, make] of Object.entries(SURFACES)) {
    const s = make(target);
    const a = s.generate(Rng.forCase(42, name, 7), 7).describe();
    t.equal(s.generate(Rng.forCase(42, name, 7), 7).describe(), a, `${name}: reproducible`);
    const others = new Set([1, 2, 3, 4, 5].map((i) => s.generate(Rng.forCase(42, name, i), i).describe()));
    t.ok(others.size > 1, `${name}: other indexes give other cases`);
  }
});

t.test('a JSON-RPC batch case may take longer for its answer, by its number of calls', async (t) => {
  t.equal(answerBudgetMs(1), 20_000, 'one call: 20 s');
  t.equal(answerBudgetMs(1000), 119_900, '1,000 calls: 20 s + 100 ms for each past the first');
  for (const name of ['evm-http', 'node-jsonrpc', 'evm-ws', 'node-ws']) {
    const s = SURFACES[name]!(target);
    let plain = 0;
    let big = 0;
    for (let i = 0; i < 3000 && (plain === 0 || big === 0); i++) {
      const c = s.generate(Rng.forCase(7, name, i), i) as HttpCase & { answerMs: number };
      const ws = name.endsWith('-ws');
      const copies = ws ? 1 : c.responses;
      if (plain === 0 && !c.mutations.some((m) => m.startsWith('batch.')) && (ws ? (c as unknown as WsCase).messages.length === 1 : copies === 1)) {
        t.equal(c.answerMs, answerBudgetMs(ws ? 2 : 1), `${name}: a single call (with the sentinel on a websocket) gets the base budget`);
        plain++;
      }
      if (big === 0 && c.mutations.includes('batch.tooMany')) {
        t.ok(c.answerMs >= answerBudgetMs(11), `${name}: a batch of 11 or more calls gets more (${c.answerMs} ms)`);
        big++;
      }
    }
    t.ok(plain > 0 && big > 0, `${name}: both kinds met`);
  }
});

t.test('JSON mutations stay within the default nesting cap and never make cycles', async (t) => {
  t.notOk(enabled(JSON_MUTATORS).some((m) => m.name === 'json.deepNest'), 'deep nesting is a known bug, off by default');
  for (let i = 0; i < 500; i++) {
    const rng = Rng.forCase(1, 'json', i);
    const text = toJson(mutateJson(rng, { jsonrpc: '2.0', id: 1, method: 'block', params: { height: '1', list: [1, 2, { a: 'x' }] } }, []));
    if (text.length > 100_000) continue; // huge strings and arrays: flat, and slow to walk here
    let depth = 0;
    let max = 0;
    for (const c of text) {
      if (c === '[' || c === '{') max = Math.max(max, ++depth);
      else if (c === ']' || c === '}') depth--;
    }
    // Brackets inside strings can only add to the count: the cap holds for real nesting too.
    if (max > MAX_SAFE_NESTING + 10 && !/"[^"]*[[{]/.test(text)) t.fail(`case ${i} nests ${max} deep`);
  }
  t.pass('500 mutations serialised');
});

t.test('node RPC judge: JSON-RPC envelopes and Go text pages pass, the rest fails', async (t) => {
  t.equal(judgeNodeRpc(answer(200, 'application/json', '{"jsonrpc":"2.0","id":1,"result":{}}'), false), null);
  t.equal(judgeNodeRpc(answer(500, 'application/json', '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error. Invalid JSON","data":"x"}}'), false), null);
  t.equal(judgeNodeRpc(answer(200, 'application/json', '[{"jsonrpc":"2.0","id":"a","result":1},{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}]'), false), null);
  t.equal(judgeNodeRpc(answer(404, 'text/plain; charset=utf-8', '404 page not found\n'), false), null);
  t.equal(judgeNodeRpc(answer(200, 'text/html', '<html><body></body></html>'), false), null);
  t.equal(judgeNodeRpc(answer(200, '', ''), false), null, 'notifications only');
  t.ok(judgeNodeRpc(answer(502, 'application/json', '{}'), false), 'an unknown status');
  t.ok(judgeNodeRpc(answer(200, 'application/json', '{"jsonrpc":"2.0","id":1}'), false), 'neither result nor error');
  t.ok(judgeNodeRpc(answer(200, 'application/json', '{"jsonrpc":"2.0","id":1,"result":1,"error":{}}'), false), 'both');
  t.ok(judgeNodeRpc(answer(200, 'application/json', '{"jsonrpc":"2.0","result":1}'), false), 'a result without id');
  t.ok(judgeNodeRpc(answer(200, 'application/json', '{"jsonrpc":"2.0","id":null,"result":1}'), false), 'a null id');
  t.ok(judgeNodeRpc(answer(500, 'application/json', '{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}'), false), 'a string code');
  t.ok(judgeNodeRpc(answer(500, 'application/json', '{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{}}}'), false), 'non-string data');
  t.ok(judgeNodeRpc(answer(500, 'application/json', '{"jsonrpc":"2.0","id":-1,"error":{"code":-32603,"message":"Internal error","data":"Maximum call stack size exceeded"}}'), false), 'a JS error leaking');
  t.ok(judgeNodeRpc(answer(200, 'application/json', '{"jsonrpc":"2.0",'), false), 'truncated JSON');
  t.ok(judgeNodeRpc(answer(500, 'text/plain', 'TypeError: x is undefined'), false), 'an unknown text page');
  t.ok(judgeNodeRpc(answer(200, 'application/json', '[]'), false), 'an empty batch answer');
  t.ok(judgeNodeRpc(answer(200, 'application/json', '{}'), true), 'a body on a HEAD');
  t.ok(envelopeProblem({ jsonrpc: '2.0', id: 1, result: 1, extra: 1 }), 'an extra member');
});

t.test('REST judge: the SDK error JSON with its status, or a JSON object on 200', async (t) => {
  t.equal(judgeRest(answer(200, 'application/json', '{"a":1}'), false), null);
  t.equal(judgeRest(answer(400, 'application/json', '{"code":3,"message":"bad","details":[]}'), false), null);
  t.equal(judgeRest(answer(501, 'application/json', '{"code":12,"message":"Not Implemented","details":[]}'), false), null);
  t.ok(judgeRest(answer(500, 'application/json', '{"code":3,"message":"bad","details":[]}'), false), 'status not HTTPStatusFromCode(code)');
  t.ok(judgeRest(answer(400, 'application/json', '{"error":"bad"}'), false), 'not {code,message,details}');
  t.ok(judgeRest(answer(400, 'application/json', '{"code":3,"message":"bad"}'), false), 'no details');
  t.ok(judgeRest(answer(500, 'text/plain', 'Internal Server Error'), false), 'not JSON');
  t.ok(judgeRest(answer(200, 'application/json', '[1]'), false), 'an array');
  t.ok(judgeRest(answer(500, 'application/json', '{"code":13,"message":"Cannot read properties of undefined (reading \'x\')","details":[]}'), false), 'a JS error leaking');
});

const h = (o: Record<string, unknown>) => o as unknown as http2.IncomingHttpHeaders;

t.test('gRPC judge: a grpc-status ends every stream; OK carries one well-formed message', async (t) => {
  const c = { unary: true } as GrpcCase;
  const msg = Buffer.from([0, 0, 0, 0, 2, 8, 1]);
  t.equal(judgeGrpc(c, h({ ':status': 200 }), h({ 'grpc-status': '0' }), msg, 0).problem, null);
  t.equal(judgeGrpc(c, h({ ':status': 200, 'grpc-status': '3', 'grpc-message': 'bad' }), null, Buffer.alloc(0), 0).problem, null, 'trailers-only');
  t.equal(judgeGrpc(c, h({ ':status': 415, 'grpc-status': '3' }), null, Buffer.alloc(0), 0).problem, null);
  t.ok(judgeGrpc(c, h({ ':status': 200 }), null, Buffer.alloc(0), 2).problem, 'a reset without grpc-status');
  t.ok(judgeGrpc(c, null, null, Buffer.alloc(0), 0).problem, 'nothing at all');
  t.ok(judgeGrpc(c, h({ ':status': 200 }), h({ 'grpc-status': '17' }), Buffer.alloc(0), 0).problem, 'an unknown code');
  t.ok(judgeGrpc(c, h({ ':status': 200 }), h({ 'grpc-status': '0' }), Buffer.alloc(0), 0).problem, 'OK without a message');
  t.ok(judgeGrpc(c, h({ ':status': 200 }), h({ 'grpc-status': '0' }), Buffer.from([0, 0, 0, 0, 9, 8]), 0).problem, 'OK with a bad length prefix');
  t.ok(judgeGrpc(c, h({ ':status': 200 }), h({ 'grpc-status': '13', 'grpc-message': 'RangeError%3A%20x' }), Buffer.alloc(0), 0).problem, 'a JS error in grpc-message');
});

t.test('response parser: Content-Length, chunked, HEAD, incomplete', async (t) => {
  const cl = parseResponse(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP/1.1'), false, false);
  t.equal(cl?.answer.body.toString(), 'hi');
  t.equal(cl?.used, 40);
  const ch = parseResponse(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n1\r\n!\r\n0\r\n\r\n'), false, false);
  t.equal(ch?.answer.body.toString(), 'hi!');
  t.equal(parseResponse(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhi'), false, false), null, 'incomplete');
  t.equal(parseResponse(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n'), true, false)?.answer.body.length, 0, 'HEAD');
  t.equal(jsLeak('error converting json params to arguments: x'), null);
});

// ------------------------------------------------------------------------------------------------
// Websocket frames (test/helpers/fuzz/ws-frames.ts)

const hex = (b: Buffer) => b.toString('hex');

t.test('frame writer: the bytes of RFC 6455 §5.7 and of the mutations, by hand', async (t) => {
  const none = null;
  // §5.7: a single-frame unmasked text message "Hello", and the same masked with 37 fa 21 3d.
  t.equal(hex(encodeFrame({ opcode: OP_TEXT, payload: Buffer.from('Hello'), mask: none })), '810548656c6c6f');
  t.equal(hex(encodeFrame({ opcode: OP_TEXT, payload: Buffer.from('Hello'), mask: Buffer.from([0x37, 0xfa, 0x21, 0x3d]) })), '818537fa213d7f9f4d5158');
  // §5.7: a fragmented unmasked text message: "Hel" (FIN 0, text), "lo" (FIN 1, continuation).
  t.equal(hex(encodeFrame({ fin: false, opcode: OP_TEXT, payload: Buffer.from('Hel'), mask: none })), '010348656c');
  t.equal(hex(encodeFrame({ opcode: OP_CONT, payload: Buffer.from('lo'), mask: none })), '80026c6f');
  // §5.7: an unmasked ping "Hello"; a 256-byte and a 65536-byte binary message (16- and 64-bit lengths).
  t.equal(hex(encodeFrame({ opcode: OP_PING, payload: Buffer.from('Hello'), mask: none })), '890548656c6c6f');
  t.equal(hex(encodeFrame({ opcode: OP_BINARY, payload: Buffer.alloc(256), mask: none }).subarray(0, 4)), '827e0100');
  t.equal(hex(encodeFrame({ opcode: OP_BINARY, payload: Buffer.alloc(65536), mask: none }).subarray(0, 10)), '827f0000000000010000');
  // The edges: 125 is the last 7-bit length, 126 the first 16-bit one.
  t.equal(hex(encodeFrame({ opcode: OP_TEXT, payload: Buffer.alloc(125), mask: none }).subarray(0, 2)), '817d');
  t.equal(hex(encodeFrame({ opcode: OP_TEXT, payload: Buffer.alloc(126), mask: none }).subarray(0, 4)), '817e007e');
  // Longer encodings than needed: 126 + 16 bits and 127 + 64 bits for a 10-byte payload.
  t.equal(hex(encodeFrame({ opcode: OP_TEXT, payload: Buffer.from('0123456789'), mask: none, lenForm: 16 }).subarray(0, 4)), '817e000a');
  t.equal(hex(encodeFrame({ opcode: OP_TEXT, payload: Buffer.from('0123456789'), mask: none, lenForm: 64 }).subarray(0, 10)), '817f000000000000000a');
  // A 64-bit length with its top bit set; the mask bit and key after it.
  t.equal(hex(encodeFrame({ opcode: OP_TEXT, payload: Buffer.from('ab'), mask: Buffer.from([1, 2, 3, 4]), declaredLength: (1n << 63n) | 2n })), '81ff8000000000000002' + '01020304' + '6060');
  // RSV1 = 0x40, RSV2 = 0x20, RSV3 = 0x10 in the first byte; FIN 0 on a ping; an unknown opcode.
  t.equal(encodeFrame({ opcode: OP_TEXT, payload: Buffer.alloc(0), mask: none, rsv: 4 })[0], 0xc1);
  t.equal(encodeFrame({ opcode: OP_TEXT, payload: Buffer.alloc(0), mask: none, rsv: 2 })[0], 0xa1);
  t.equal(encodeFrame({ opcode: OP_TEXT, payload: Buffer.alloc(0), mask: none, rsv: 1 })[0], 0x91);
  t.equal(encodeFrame({ fin: false, opcode: OP_PING, payload: Buffer.alloc(0), mask: none })[0], 0x09);
  t.equal(encodeFrame({ opcode: 0xb, payload: Buffer.alloc(0), mask: none })[0], 0x8b);
  // A close frame: code 1000 (03 e8) and a reason, masked with 00 00 00 00 (the bytes unchanged).
  t.equal(hex(encodeFrame({ opcode: OP_CLOSE, payload: Buffer.from([0x03, 0xe8, 0x62]), mask: Buffer.alloc(4) })), '8883' + '00000000' + '03e862');
  // Masking a long payload a word at a time gives the byte-wise result, at any alignment.
  const key = Buffer.from([0x37, 0xfa, 0x21, 0x3d]);
  for (const off of [0, 1, 2, 3]) {
    const big = Buffer.alloc(off + 203, 0x5c);
    const b = big.subarray(off, off + 200);
    const want = Buffer.from(b.map((x, i) => x ^ key[i & 3]!));
    maskInPlace(b, key);
    t.ok(b.equals(want), `masking at byte offset ${off}`);
  }
});

t.test('frame reader: messages in fragments with a ping between, fed a byte at a time; what no server may send', async (t) => {
  const events: string[] = [];
  const reader = () =>
    new FrameReader({
      message: (d, binary) => events.push(`${binary ? 'binary' : 'text'} ${d.toString('latin1')}`),
      ping: (p) => events.push(`ping ${p.toString()}`),
      pong: (p) => events.push(`pong ${p.toString()}`),
      close: (code, reason) => events.push(`close ${code} ${reason.toString()}`),
      violation: (what) => events.push(`violation ${what}`),
    });
  const none = null;
  const wire = Buffer.concat([
    encodeFrame({ fin: false, opcode: OP_TEXT, payload: Buffer.from('Hel'), mask: none }),
    encodeFrame({ opcode: OP_PONG, payload: Buffer.from('p'), mask: none }),
    encodeFrame({ opcode: OP_CONT, payload: Buffer.from('lo'), mask: none }),
    encodeFrame({ opcode: OP_BINARY, payload: Buffer.alloc(70_000, 0x61), mask: none }),
    encodeFrame({ opcode: OP_CLOSE, payload: Buffer.from([0x03, 0xe8, 0x62]), mask: none }),
  ]);
  const r = reader();
  for (let i = 0; i < wire.length; i += i < 40 ? 1 : 5000) r.push(wire.subarray(i, i < 40 ? i + 1 : i + 5000));
  t.same(events.map((e) => e.slice(0, 20)), ['pong p', 'text Hello', `binary ${'a'.repeat(13)}`, 'close 1000 b']);
  const bad: Array<[string, Buffer]> = [
    ['a masked server frame', encodeFrame({ opcode: OP_TEXT, payload: Buffer.from('x'), mask: Buffer.alloc(4) })],
    ['RSV bits 4 set', encodeFrame({ opcode: OP_TEXT, payload: Buffer.from('x'), mask: none, rsv: 4 })],
    ['a continuation with no message started', encodeFrame({ opcode: OP_CONT, payload: Buffer.from('x'), mask: none })],
    ['a 126-byte control frame', encodeFrame({ opcode: OP_PING, payload: Buffer.alloc(126), mask: none })],
    ['close code 1005', encodeFrame({ opcode: OP_CLOSE, payload: Buffer.from([0x03, 0xed]), mask: none })],
    ['a text message that is not UTF-8', encodeFrame({ opcode: OP_TEXT, payload: Buffer.from([0xc0, 0x80]), mask: none })],
    ['opcode 3', encodeFrame({ opcode: 3, payload: Buffer.alloc(0), mask: none })],
  ];
  for (const [what, frame] of bad) {
    events.length = 0;
    reader().push(frame);
    t.same(events, [`violation ${what}`], what);
  }
});

/** Client frames back from bytes (unmasked), for checking the plans. */
function clientFrames(b: Buffer): Array<{ fin: boolean; rsv: number; op: number; masked: boolean; len: bigint; form: 7 | 16 | 64; payload: Buffer }> {
  const out = [];
  let off = 0;
  while (off + 2 <= b.length) {
    const b0 = b[off]!;
    const b1 = b[off + 1]!;
    let len = BigInt(b1 & 0x7f);
    let p = off + 2;
    const form = len === 126n ? 16 : len === 127n ? 64 : 7;
    if (len === 126n) (len = BigInt(b.readUInt16BE(p))), (p += 2);
    else if (len === 127n) (len = b.readBigUInt64BE(p)), (p += 8);
    const masked = (b1 & 0x80) !== 0;
    const key = masked ? b.subarray(p, p + 4) : null;
    if (masked) p += 4;
    const n = Number(len & 0xffffffffn);
    const payload = Buffer.from(b.subarray(p, Math.min(b.length, p + n)));
    if (key) maskInPlace(payload, key);
    out.push({ fin: (b0 & 0x80) !== 0, rsv: (b0 >> 4) & 7, op: b0 & 0x0f, masked, len, form, payload } as const);
    off = p + n;
  }
  return out;
}

t.test('frame mutations: legal ones carry the messages intact, the others hold the fault they name', async (t) => {
  const kinds = ['fragment', 'splitHeader', 'coalesce', 'longLength', 'longLengthControl', 'rsv', 'opcode', 'orphanContinuation', 'interrupt', 'bigControl', 'fragmentedControl', 'badClose', 'length64TopBit', 'close'];
  for (const kind of kinds) {
    for (let i = 0; i < 40; i++) {
      const rng = Rng.forCase(9, `frames-${kind}`, i);
      const msgs = Array.from({ length: 1 + (i % 3) }, (_, j) => ({ data: Buffer.from(`{"jsonrpc":"2.0","id":${j},"method":"health","x":"${'y'.repeat(i * 37)}"}`), binary: j === 1 }));
      const plan = frameMutation(rng, msgs, kind);
      const frames = clientFrames(Buffer.concat(plan.writes));
      const where = `${kind} #${i}`;
      if (frames.some((f) => !f.masked)) t.fail(`${where}: an unmasked frame`);
      if (plan.expect === 'answer') {
        // Reassemble as a server would: the messages come out intact, control frames are final and short.
        const got: string[] = [];
        let cur: Buffer[] | null = null;
        for (const f of frames) {
          if (f.rsv !== 0 || (f.op >= 8 && (!f.fin || f.len > 125n)) || ![0, 1, 2, 8, 9, 10].includes(f.op)) t.fail(`${where}: a bad frame in a legal plan`);
          if (f.op >= 8) continue;
          if (f.op === OP_CONT ? cur === null : cur !== null) t.fail(`${where}: fragments out of order`);
          cur = [...(cur ?? []), f.payload];
          if (f.fin) got.push(Buffer.concat(cur).toString()), (cur = null);
        }
        if (JSON.stringify(got) !== JSON.stringify(msgs.map((m) => m.data.toString()))) t.fail(`${where}: the messages do not come out intact`);
        if (kind === 'fragment' && frames.filter((f) => f.op < 8).length <= msgs.length) t.fail(`${where}: no fragments`);
        if (kind === 'splitHeader' && plan.writes.length <= msgs.length) t.fail(`${where}: no header split`);
        if (kind === 'coalesce' && !(plan.writes.length === 1 && plan.joinSentinel)) t.fail(`${where}: not one write`);
        if (kind === 'longLength' && !frames.every((f) => f.form !== 7)) t.fail(`${where}: a 7-bit length`);
        const pings = frames.filter((f) => f.op === OP_PING);
        if (pings.length > 0 && !plan.lastPing?.equals(pings[pings.length - 1]!.payload)) t.fail(`${where}: lastPing is not the last ping`);
        continue;
      }
      const fault: Record<string, (f: (typeof frames)[number], k: number) => boolean> = {
        longLengthControl: (f) => f.op >= 8 && f.len <= 125n && f.form !== 7,
        rsv: (f) => f.rsv !== 0,
        opcode: (f) => [3, 4, 5, 6, 7, 11, 12, 13, 14, 15].includes(f.op),
        bigControl: (f) => f.op >= 8 && f.len > 125n,
        fragmentedControl: (f) => f.op >= 8 && !f.fin,
        badClose: (f) => f.op === OP_CLOSE && (f.payload.length === 1 || (f.payload.length >= 2 && (![1000, 1001, 1002, 3000, 4000].includes(f.payload.readUInt16BE(0)) || !isUtf8Text(f.payload.subarray(2))))),
        length64TopBit: (f) => f.len >= 1n << 63n,
        close: (f) => f.op === OP_CLOSE,
        orphanContinuation: (f, k) => f.op === OP_CONT && frames.slice(0, k).every((g) => g.op >= 8 || g.fin),
        interrupt: (f, k) => f.op === OP_TEXT && frames.slice(0, k).some((g) => g.op === OP_TEXT || g.op === OP_BINARY ? !g.fin && frames.slice(frames.indexOf(g) + 1, k).every((h) => h.op === OP_CONT && !h.fin) : false),
      };
      if (!frames.some((f, k) => fault[kind]!(f, k))) t.fail(`${where}: the ${kind} fault is missing`);
    }
    t.pass(`${kind}: 40 plans`);
  }
});

function isUtf8Text(b: Buffer): boolean {
  return Buffer.from(b.toString('utf8')).equals(b);
}

// The websocket lane's judge against a bare uWS server (no chaind code): it answers a JSON-RPC
// call with a JSON-RPC result, and `bad` with text that is not JSON.
t.test('websocket lane: fragments with pings are answered, a frame that fails the connection closes it, and the judge fails what it must', async (t) => {
  const app = uws.App();
  app.ws('/*', {
    compression: uws.DISABLED,
    maxPayloadLength: 1 << 20,
    idleTimeout: 32,
    message: (ws, m) => {
      const text = Buffer.from(m).toString();
      if (text === 'bad') return void ws.send('not json', false);
      try {
        const v = JSON.parse(text) as { id?: unknown };
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: v.id ?? 0, result: {} }), false);
      } catch {
        ws.send(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'parse error' } }), false);
      }
    },
  });
  const l = await listen(app, { host: '127.0.0.1', port: 0 }, 'bare uWS');
  t.teardown(() => l.close());
  const surface = jsonRpcWsSurface({
    name: 'bare-ws',
    url: `ws://127.0.0.1:${l.port}/`,
    seedNames: ['x'],
    message: () => ({ seed: 'x', body: Buffer.from('{}'), applied: [], calls: 1 }),
    maxMessage: 1 << 20,
    sentinelMethod: 'health',
    judge: envelopeProblem,
  });
  const lane = await surface.openLane();
  t.teardown(() => lane.close());
  const run = (kind: string, body = '{"jsonrpc":"2.0","id":7,"method":"health"}', index = 1) => {
    const messages = [{ data: Buffer.from(body), binary: false }];
    const c: WsCase = { index, seed: 'x', mutations: [], messages, violation: false, frames: frameMutation(Rng.forCase(5, kind, index), messages, kind), answerMs: answerBudgetMs(2), describe: () => kind };
    return lane.run(c);
  };
  for (let i = 0; i < 5; i++) {
    const r = await run('fragment', undefined, i);
    t.same(r, { problem: null, tag: 'frame.fragment answered' }, `fragments with pings and pongs between (#${i}): answered, pongs ignored`);
  }
  t.same(await run('longLength'), { problem: null, tag: 'frame.longLength answered' }, 'a long length encoding: answered');
  for (const kind of ['rsv', 'opcode', 'orphanContinuation', 'interrupt', 'bigControl', 'fragmentedControl', 'length64TopBit', 'longLengthControl']) {
    t.same(await run(kind), { problem: null, tag: `frame.${kind} close 1006` }, `${kind}: uWS closes without a close frame, which is right`);
  }
  t.same(await run('badClose'), { problem: null, tag: 'frame.badClose close 1005' }, 'a bad close frame: uWS answers an empty close frame');
  t.match((await run('fragment', 'bad')).problem, /not JSON/, 'an answer that is not JSON fails the case');
  // uWS 20.30 takes a binary frame inside a fragmented message as a continuation
  // (known-bugs.ts wsBinaryInsideFragments): the judge says so.
  t.match((await run('interruptBinary')).problem, /went on after frame.interruptBinary/, 'a server that accepts a frame the RFC says fails the connection fails the case');
});
