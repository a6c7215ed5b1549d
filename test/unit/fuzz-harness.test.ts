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
import type { FuzzTarget } from '../helpers/fuzz/target.js';

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
