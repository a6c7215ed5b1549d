/**
 * The REST gateway (src/rpc/rest) on uWS at 127.0.0.1:0, called with fetch. Routes come from the
 * `google.api.http` options of the test fixture's services (test/fixtures/proto/chain/fixture/v1/
 * query.proto). Expected behaviour is the Cosmos SDK API server's: grpc-gateway v1.16 with the SDK's
 * JSON marshaler and proto error handler (cosmos/gogoproto:jsonpb/jsonpb.go): path variables
 * (`*` and `**`), query parameters (dotted pagination fields, proto and JSON names, Go number and
 * base64 rules), POST bodies, additional bindings, the later of two equal patterns winning, the
 * JSON shapes (proto names, emitted defaults, nulls, int64 strings, base64, enum names, Any with
 * `@type`, well-known types), errors and their HTTP statuses, 501 for unknown routes, `/cosmos/...`
 * aliases, heights, deadlines, CORS and the body limit.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { create, fromBinary, toBinary, type MessageShape } from '@bufbuild/protobuf';
import { AnySchema, timestampFromDate, TimestampSchema, DurationSchema } from '@bufbuild/protobuf/wkt';
import { open, type Database, type RootDatabase } from 'lmdb';
import t, { type Test } from 'tap';
import { Bech32Codec } from '../../src/app/address.js';
import { BaseApp } from '../../src/app/baseapp.js';
import { utf8 } from '../../src/app/bytes.js';
import { BankModule } from '../../src/app/modules/bank/index.js';
import { Query as BankQuery, QueryBalanceRequestSchema, QueryBalanceResponseSchema } from '../../src/gen/chain/bank/v1beta1/query_pb.js';
import { jsonQueryService, latestOnlyHeights } from '../../src/rpc/grpc/app-bridge.js';
import { defaultConsensusParams } from '../../src/types/params.js';
import { GrpcCode, GrpcStatusError, sdkErrors } from '../../src/app/errors.js';
import { createNames } from '../../src/names/index.js';
import { QueryRouter, type ServiceImpl } from '../../src/app/query-router.js';
import { RestGateway, type RestGatewayOptions } from '../../src/rpc/rest/gateway.js';
import { PathTemplate } from '../../src/rpc/rest/http-rule.js';
import {
  BaseAccountSchema,
  EchoResponseSchema,
  PubKeySchema,
  Query,
  RecordSchema,
  Service,
} from '../fixtures/gen/chain/fixture/v1/query_pb.js';

const LATEST = 42n;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function anyOf<T extends Parameters<typeof toBinary>[0]>(typeUrl: string, schema: T, msg: MessageShape<T>) {
  return create(AnySchema, { typeUrl, value: toBinary(schema, msg) });
}

const pubKey = (key: number[], url = '/cosmos.fixture.v1.PubKey') => anyOf(url, PubKeySchema, create(PubKeySchema, { key: Uint8Array.from(key) }));

function record(name: string) {
  if (name === 'full') {
    return create(RecordSchema, {
      name: 'full',
      signed: -5n,
      unsigned: (1n << 64n) - 1n,
      code: -3,
      ucode: 4294967295,
      flag: true,
      ratio: NaN,
      fraction: Math.fround(0.1),
      blob: Uint8Array.of(0xfb, 0xff),
      kind: 2,
      nested: { text: 'n', small: 1, numbers: [1n, 2n] },
      list: [{ text: 'a' }],
      blobs: [new Uint8Array(0), Uint8Array.of(1)],
      counts: { a: 5n },
      at: timestampFromDate(new Date('2026-01-01T00:00:00Z')),
      ttl: create(DurationSchema, { seconds: 3600n }),
      items: [pubKey([1, 2]), anyOf('/google.protobuf.Timestamp', TimestampSchema, create(TimestampSchema, { seconds: 1767225600n, nanos: 500_000_000 }))],
      choice: { case: 'choiceNumber', value: 9n },
      maybe: 'm',
      zigzag: -1n,
      fixed: 1n,
    });
  }
  if (name === 'unresolvable') return create(RecordSchema, { name, items: [create(AnySchema, { typeUrl: '/chain.fixture.v1.Nope', value: Uint8Array.of(1) })] });
  return create(RecordSchema, { name });
}

const queryImpl: ServiceImpl<typeof Query> = {
  account: (req) => {
    if (req.address === 'missing') throw new GrpcStatusError(GrpcCode.NotFound, `account ${req.address} not found`);
    const acct = create(BaseAccountSchema, { address: req.address, pubKey: pubKey([2, 1, 255]), accountNumber: 7n, sequence: 3n });
    return { account: anyOf('/chain.fixture.v1.BaseAccount', BaseAccountSchema, acct) };
  },
  accounts: (req) => ({ accounts: [], pagination: { nextKey: new Uint8Array(0), total: 0n }, echo: req }),
  accountAddressByID: (req) => ({ accountAddress: `id:${req.accountId}/${req.id}` }),
  denom: (req) => ({ denom: req.denom }),
  record: (req) => ({ record: record(req.name) }),
  echo: (req, ctx) => create(EchoResponseSchema, { echo: req, height: ctx.height ?? 0n, metadataKeys: [...ctx.metadata.keys()].sort() }),
  echoShadowed: (req) => ({ echo: { text: `shadowed:${req.text}` } }),
  echoWinner: (req) => ({ echo: { text: `winner:${req.text}` } }),
  sleep: async (req, ctx) => {
    const end = Date.now() + req.millis;
    while (Date.now() < end && !ctx.signal.aborted) await sleep(5);
    return { finished: true };
  },
  fail: (req) => {
    if (req.kind === 'abci') throw sdkErrors.keyNotFound.wrap(req.message);
    if (req.kind === 'plain') throw new Error(req.message);
    throw new GrpcStatusError(req.code as GrpcCode, req.message);
  },
};

function makeRouter(upstreamNames = false): QueryRouter {
  const router = new QueryRouter({
    names: createNames({ upstreamNames }),
    resolveHeight: (h) => {
      if (h === undefined) return LATEST;
      if (h > LATEST) throw sdkErrors.invalidHeight.wrap('cannot query with height in the future; please provide a valid height');
      return h;
    },
  });
  // Echo returns what the client sent: its Anys keep the client's spelling.
  router.registerService(Query, queryImpl, { verbatimAny: ['Echo'] });
  router.registerService(Service, { broadcast: (req) => ({ txhash: Buffer.from(req.txBytes).toString('hex').toUpperCase() }) });
  return router;
}

async function startGateway(t: Test, opts: Partial<RestGatewayOptions> = {}) {
  const gw = new RestGateway({ address: 'tcp://127.0.0.1:0', router: opts.router ?? makeRouter(), ...opts });
  await gw.start();
  t.teardown(() => gw.close());
  const base = `http://127.0.0.1:${gw.port}`;
  const get = async (path: string, init: RequestInit = {}) => {
    const r = await fetch(base + path, init);
    const text = await r.text();
    return { status: r.status, headers: r.headers, text, json: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) };
  };
  const post = (path: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) => get(path, { method: 'POST', body, headers });
  return { gw, base, get, post };
}

// ------------------------------------------------------------------------------------------------

t.test('GET with a path variable: the SDK JSON of a response holding Anys', async (t) => {
  const { get } = await startGateway(t);
  const r = await get('/chain/fixture/v1/accounts/chain1abc');
  t.equal(r.status, 200);
  t.equal(r.headers.get('content-type'), 'application/json');
  t.equal(
    r.text,
    '{"account":{"@type":"/chain.fixture.v1.BaseAccount","address":"chain1abc","pub_key":{"@type":"/chain.fixture.v1.PubKey","key":"AgH/"},"account_number":"7","sequence":"3"}}',
    'proto names, int64 strings, base64, Anys inline with @type (stored upstream spelling emitted as spec)',
  );
  t.equal(r.headers.get('grpc-metadata-x-cosmos-block-height'), '42', 'upstream height header');
  t.equal(r.headers.get('x-cosmos-block-height'), '42');
  t.equal(r.headers.get('access-control-allow-origin'), null, 'no CORS unless enabled');
});

t.test('/cosmos/... paths are aliases; [compat] upstream-names emits cosmos type URLs', async (t) => {
  const { get } = await startGateway(t);
  const r = await get('/cosmos/fixture/v1/accounts/chain1abc');
  t.equal(r.status, 200);
  t.equal((r.json!['account'] as Record<string, unknown>)['@type'], '/chain.fixture.v1.BaseAccount');

  const up = await startGateway(t, { router: makeRouter(true) });
  const u = await up.get('/cosmos/fixture/v1/accounts/x');
  const acct = u.json!['account'] as Record<string, Record<string, unknown>>;
  t.equal(acct['@type'] as unknown, '/cosmos.fixture.v1.BaseAccount');
  t.equal(acct['pub_key']!['@type'], '/cosmos.fixture.v1.PubKey');
});

t.test('JSON shapes: emitted defaults, nulls, numbers, enums, well-known types, oneofs', async (t) => {
  const { get } = await startGateway(t);
  const empty = await get('/chain/fixture/v1/records/empty');
  t.equal(
    empty.text,
    '{"record":{"name":"empty","signed":"0","unsigned":"0","code":0,"ucode":0,"flag":false,"ratio":0,"fraction":0,"blob":null,"kind":"KIND_UNSPECIFIED","nested":null,"list":[],"blobs":[],"counts":{},"at":null,"ttl":null,"items":[],"maybe":null,"zigzag":"0","fixed":"0"}}',
    'defaults emitted; unset messages, nil bytes and unset optionals are null; unset oneof omitted',
  );
  const full = await get('/chain/fixture/v1/records/full');
  t.equal(
    full.text,
    '{"record":{"name":"full","signed":"-5","unsigned":"18446744073709551615","code":-3,"ucode":4294967295,"flag":true,"ratio":"NaN","fraction":0.1,"blob":"+/8=","kind":"KIND_MODULE",' +
      '"nested":{"text":"n","small":1,"numbers":["1","2"]},"list":[{"text":"a","small":0,"numbers":[]}],"blobs":["","AQ=="],"counts":{"a":"5"},' +
      '"at":"2026-01-01T00:00:00Z","ttl":"3600s","items":[{"@type":"/chain.fixture.v1.PubKey","key":"AQI="},{"@type":"/google.protobuf.Timestamp","value":"2026-01-01T00:00:00.500Z"}],' +
      '"choice_number":"9","maybe":"m","zigzag":"-1","fixed":"1"}}',
  );
  const bad = await get('/chain/fixture/v1/records/unresolvable');
  t.equal(bad.status, 500, 'an Any the registry cannot resolve fails the marshal: Unknown');
  t.same(bad.json, { code: 2, message: 'unable to resolve type URL /chain.fixture.v1.Nope', details: [] });
});

t.test('query parameters: pagination, enums, repeated, Go number and base64 rules', async (t) => {
  const { get } = await startGateway(t);
  const echoOf = (r: { json?: Record<string, unknown> }) => r.json?.['echo'];
  const r = await get(
    '/chain/fixture/v1/accounts?pagination.key=AAEC%2B%2F8%3D&pagination.limit=10&pagination.count_total=true&pagination.reverse=1&pagination.offset=0x10&kind=KIND_MODULE&tags=a&tags=b&min_number=-5&unknown=1&pagination.nope=2',
  );
  t.equal(r.status, 200);
  t.same(echoOf(r), {
    pagination: { key: 'AAEC+/8=', offset: '16', limit: '10', count_total: true, reverse: true },
    kind: 'KIND_MODULE',
    tags: ['a', 'b'],
    min_number: '-5',
  });
  t.same(r.json?.['pagination'], { next_key: null, total: '0' }, 'empty next_key is null');

  const camel = await get('/chain/fixture/v1/accounts?pagination.countTotal=t&pagination.key=AAEC-_8%3D&minNumber=010&kind=1');
  t.same(echoOf(camel), {
    pagination: { key: 'AAEC+/8=', offset: '0', limit: '0', count_total: true, reverse: false },
    kind: 'KIND_BASE',
    tags: [],
    min_number: '8',
  }, 'JSON names, URL-safe base64, octal 010, enum by number');

  const none = await get('/chain/fixture/v1/accounts');
  t.same(echoOf(none), { pagination: null, kind: 'KIND_UNSPECIFIED', tags: [], min_number: '0' }, 'no parameters: pagination stays null');

  const first = await get('/chain/fixture/v1/accounts?pagination.limit=3&pagination.limit=4');
  t.equal((echoOf(first) as Record<string, Record<string, string>>)['pagination']!['limit'], '3', 'a scalar takes the first value');

  const cases: Array<[string, string]> = [
    ['pagination.limit=x', 'strconv.ParseUint: parsing "x": invalid syntax'],
    ['pagination.limit=-1', 'strconv.ParseUint: parsing "-1": invalid syntax'],
    ['pagination.limit=18446744073709551616', 'strconv.ParseUint: parsing "18446744073709551616": value out of range'],
    ['pagination.count_total=yes', 'strconv.ParseBool: parsing "yes": invalid syntax'],
    ['pagination.key=%25%25', 'illegal base64 data in "%%"'],
    ['kind=7', '7 is not a valid chain.fixture.v1.Kind'],
    ['kind=KIND_NOPE', 'KIND_NOPE is not a valid chain.fixture.v1.Kind'],
    ['tags.x=1', 'unexpected repeated field in tags.x'],
    ['min_number.x=1', 'unexpected nested field x in min_number'],
  ];
  for (const [q, msg] of cases) {
    const e = await get(`/chain/fixture/v1/accounts?${q}`);
    t.equal(e.status, 400, q);
    t.same(e.json, { code: 3, message: msg, details: [] }, q);
  }
});

t.test('path variables: conversions, `**`, escapes, and the query filter', async (t) => {
  const { get } = await startGateway(t);
  const id = await get('/chain/fixture/v1/address_by_id/12?id=3');
  t.same(id.json, { account_address: 'id:12/3' });
  const filtered = await get('/chain/fixture/v1/address_by_id/12?account_id=5&accountId=6');
  t.same(filtered.json, { account_address: 'id:12/0' }, 'query parameters cannot override a path variable, under either name');
  const bad = await get('/chain/fixture/v1/address_by_id/abc');
  t.equal(bad.status, 400);
  t.same(bad.json, { code: 3, message: 'type mismatch, parameter: account_id, error: strconv.ParseUint: parsing "abc": invalid syntax', details: [] });

  t.same((await get('/chain/fixture/v1/denoms/ibc/ABC')).json, { denom: 'ibc/ABC' }, '** takes several segments');
  t.same((await get('/chain/fixture/v1/denoms/ibc%2FABC')).json, { denom: 'ibc/ABC' }, 'an escaped slash inside one segment');
  t.same((await get('/chain/fixture/v1/denoms/stake')).json, { denom: 'stake' });
  t.same((await get('/chain/fixture/v1/accounts/chain1%61bc')).json?.['account'] !== undefined, true);
  const addr = await get('/chain/fixture/v1/accounts/a%20b');
  t.equal((addr.json!['account'] as Record<string, unknown>)['address'], 'a b', 'segments are percent-decoded');
});

t.test('POST with body "*", additional bindings, and equal patterns', async (t) => {
  const { get, post } = await startGateway(t);
  const body = JSON.stringify({
    text: 'hello',
    record: {
      name: 'r',
      signed: '-7',
      unsigned: 8,
      ucode: 3,
      blob: 'AQI',
      kind: 'KIND_BASE',
      nested: { text: 'n', numbers: ['1', 2] },
      counts: { x: '1' },
      at: '2026-05-01T10:00:00.25Z',
      ttl: '1.5s',
      items: [{ '@type': '/cosmos.fixture.v1.PubKey', key: 'AQI=' }],
      choiceText: 'c',
      maybe: null,
    },
    txBytes: 'q83v',
    kind: 2,
  });
  const r = await post('/chain/fixture/v1/echo?text=ignored', body);
  t.equal(r.status, 200, r.text);
  const echo = r.json!['echo'] as Record<string, unknown>;
  t.equal(echo['text'], 'hello', 'query parameters are ignored when the body is "*"');
  t.equal(echo['tx_bytes'], 'q83v', 'JSON names accepted, proto names emitted');
  t.equal(echo['kind'], 'KIND_MODULE');
  const rec = echo['record'] as Record<string, unknown>;
  t.equal(rec['signed'], '-7');
  t.equal(rec['unsigned'], '8');
  t.equal(rec['blob'], 'AQI=', 'unpadded base64 accepted');
  t.same(rec['nested'], { text: 'n', small: 0, numbers: ['1', '2'] });
  t.same(rec['counts'], { x: '1' });
  t.equal(rec['at'], '2026-05-01T10:00:00.250Z');
  t.equal(rec['ttl'], '1.500s');
  t.same(rec['items'], [{ '@type': '/cosmos.fixture.v1.PubKey', key: 'AQI=' }], 'an Any keeps the spelling the client sent (resolved through the alias)');
  t.equal(rec['choice_text'], 'c');
  t.equal(rec['maybe'], null);

  const trailing = await post('/chain/fixture/v1/echo', '{"text":"first"} {"text":"second"} junk');
  t.equal((trailing.json!['echo'] as Record<string, unknown>)['text'], 'first', 'the first JSON value is the body (json.Decoder)');

  const html = await post('/chain/fixture/v1/echo', JSON.stringify({ text: '<a&b>\u2028' }));
  t.match(html.text, /"text":"\\u003ca\\u0026b\\u003e\\u2028"/, "json.Marshal's HTML escaping");

  const emptyBody = await post('/chain/fixture/v1/echo', '');
  t.equal(emptyBody.status, 200, 'an empty body is an empty request');
  t.equal((emptyBody.json!['echo'] as Record<string, unknown>)['text'], '');

  const errs: Array<[string, RegExp]> = [
    ['{"nope":1}', /^unknown field "nope" in chain\.fixture\.v1\.EchoRequest$/],
    ['{"text":', /^unexpected EOF$/],
    ['{"text" 1}', /^invalid character '1' after object key$/],
    ['{"record":{"signed":1.5}}', /record\.signed: want an integer/],
    ['{"record":{"items":[{"@type":"/chain.fixture.v1.Nope"}]}}', /unable to resolve type URL \/chain\.fixture\.v1\.Nope/],
    ['{"kind":"KIND_X"}', /unknown value "KIND_X"/],
    ['{"record":{"choice_text":"a","choice_number":"1"}}', /more than one field of oneof choice/],
  ];
  for (const [b, re] of errs) {
    const e = await post('/chain/fixture/v1/echo', b);
    t.equal(e.status, 400, b);
    t.equal(e.json?.['code'], 3, b);
    t.match(e.json?.['message'], re, b);
  }

  const add = await get('/chain/fixture/v1/echo/word?kind=KIND_BASE&text=other');
  t.equal(add.status, 200, 'additional binding');
  const e2 = add.json!['echo'] as Record<string, unknown>;
  t.equal(e2['text'], 'word', 'the path variable wins over the query');
  t.equal(e2['kind'], 'KIND_BASE', 'other fields from the query');

  const deep = await get('/chain/fixture/v1/echo/w?record.ttl=1h30m0.5s&record.at=2026-01-01T00:00:00Z&record.counts[k]=5&record.choice_number=0x10&record.nested.numbers=1&record.nested.numbers=2&record.blobs=AQ%3D%3D');
  t.equal(deep.status, 200, deep.text);
  const drec = (deep.json!['echo'] as Record<string, Record<string, unknown>>)['record']!;
  t.equal(drec['ttl'], '5400.500s', 'Duration as Go writes it');
  t.equal(drec['at'], '2026-01-01T00:00:00Z', 'Timestamp as RFC 3339');
  t.same(drec['counts'], { k: '5' }, 'map entry with key[k]=v');
  t.equal(drec['choice_number'], '16', 'oneof member');
  t.same(drec['nested'], { text: '', small: 0, numbers: ['1', '2'] }, 'nested repeated');
  t.same(drec['blobs'], ['AQ=='], 'repeated bytes');
  const clash = await get('/chain/fixture/v1/echo/w?record.choice_number=1&record.choice_text=a');
  t.equal(clash.status, 400);
  t.match(clash.json?.['message'], /^field already set for choice oneof$/);
  const badDur = await get('/chain/fixture/v1/echo/w?record.ttl=5x');
  t.equal(badDur.status, 400);
  t.match(badDur.json?.['message'], /^bad Duration: time: invalid duration "5x"$/);

  const same = await get('/chain/fixture/v1/same/x');
  t.equal((same.json!['echo'] as Record<string, unknown>)['text'], 'winner:x', 'of two equal patterns the later registered answers');

  const tx = await post('/chain/fixture/v1/txs', JSON.stringify({ tx_bytes: 'AQID' }));
  t.same(tx.json, { txhash: '010203' }, 'second service, POST body');
});

t.test('path templates (grpc-gateway httprule grammar and v1 matching)', async (t) => {
  const tpl = PathTemplate.parse('/v1/{name=messages/*}/parts/{part.id}:cancel');
  t.same(tpl.match(['v1', 'messages', 'm1', 'parts', '7'], 'cancel'), new Map([['name', 'messages/m1'], ['part.id', '7']]), 'nested pattern and dotted field path');
  t.equal(tpl.match(['v1', 'messages', 'm1', 'parts', '7'], ''), null, 'the verb must match');
  t.equal(tpl.match(['v1', 'other', 'm1', 'parts', '7'], 'cancel'), null, 'literals inside a variable must match');
  const deep = PathTemplate.parse('/files/{path=**}/meta');
  t.same(deep.match(['files', 'a', 'b', 'c', 'meta'], ''), new Map([['path', 'a/b/c']]), '** up to the literal tail');
  t.same(deep.match(['files', 'meta'], ''), new Map([['path', '']]), '** may be empty');
  t.equal(deep.match(['files', 'a'], ''), null);
  t.same(PathTemplate.parse('/a/*/c').match(['a', 'b', 'c'], ''), new Map());
  for (const bad of ['a/b', '/a/{b', '/a/**/**', '/a/**/{x}', '/a//b', '/a/{1x}']) t.throws(() => PathTemplate.parse(bad), bad);
});

t.test('unknown routes and methods', async (t) => {
  const { get, post } = await startGateway(t);
  const nf = await get('/chain/fixture/v1/nope');
  t.equal(nf.status, 501);
  t.same(nf.json, { code: 12, message: 'Not Implemented', details: [] }, 'runtime.ErrUnknownURI');
  const root = await get('/');
  t.equal(root.status, 501);
  const wrong = await post('/chain/fixture/v1/accounts/x', '{}');
  t.equal(wrong.status, 501, 'a path known under another method only is also ErrUnknownURI');
  const getPost = await get('/chain/fixture/v1/txs');
  t.equal(getPost.status, 501);
  const hidden = await get('/chain/fixture/v1/hidden');
  t.equal(hidden.status, 501, 'a method without an HTTP rule has no route');
  const head = await get('/chain/fixture/v1/accounts/x', { method: 'HEAD' });
  t.equal(head.status, 501, 'HEAD has no binding (the mux matches methods exactly)');
  t.equal(head.text, '', 'and no body');
  const verb = await get('/chain/fixture/v1/accounts/x:verb');
  t.equal(verb.status, 501, 'a verb no template has');
  const form = await post('/chain/fixture/v1/accounts/formed', 'ignored=1', { 'content-type': 'application/x-www-form-urlencoded' });
  t.equal(form.status, 200, 'a form-encoded POST falls back to the GET binding');
  t.equal((form.json!['account'] as Record<string, unknown>)['address'], 'formed');
  const formQuery = await post('/chain/fixture/v1/accounts', 'pagination.limit=5', { 'content-type': 'application/x-www-form-urlencoded' });
  t.equal(((formQuery.json!['echo'] as Record<string, unknown>)['pagination'] as Record<string, unknown>)['limit'], '5', 'form values act as query parameters');
});

t.test('errors: gRPC codes to HTTP statuses, message text', async (t) => {
  const { get } = await startGateway(t);
  const table: Array<[GrpcCode, number]> = [
    [GrpcCode.Canceled, 408],
    [GrpcCode.Unknown, 500],
    [GrpcCode.InvalidArgument, 400],
    [GrpcCode.DeadlineExceeded, 504],
    [GrpcCode.NotFound, 404],
    [GrpcCode.AlreadyExists, 409],
    [GrpcCode.PermissionDenied, 403],
    [GrpcCode.ResourceExhausted, 429],
    [GrpcCode.FailedPrecondition, 400],
    [GrpcCode.Aborted, 409],
    [GrpcCode.OutOfRange, 400],
    [GrpcCode.Unimplemented, 501],
    [GrpcCode.Internal, 500],
    [GrpcCode.Unavailable, 503],
    [GrpcCode.DataLoss, 500],
    [GrpcCode.Unauthenticated, 401],
  ];
  for (const [code, http] of table) {
    const r = await get(`/chain/fixture/v1/fail/${code}?kind=grpc&message=m%20${code}`);
    t.equal(r.status, http, `${GrpcCode[code]} → ${http}`);
    t.same(r.json, { code, message: `m ${code}`, details: [] });
  }
  const nf = await get('/chain/fixture/v1/accounts/missing');
  t.equal(nf.status, 404);
  t.equal(nf.text, '{"code":5,"message":"account missing not found","details":[]}');
  t.equal(nf.headers.get('grpc-metadata-x-cosmos-block-height'), '42', 'the height rides on errors too');
  const abci = await get('/chain/fixture/v1/fail/0?kind=abci&message=authorization%20not%20found%20for%20X%20type');
  t.equal(abci.status, 500);
  t.same(abci.json, { code: 2, message: 'key not found: authorization not found for X type', details: [] }, 'root-first SDK error text');
  const plain = await get('/chain/fixture/v1/fail/0?kind=plain&message=boom');
  t.same(plain.json, { code: 2, message: 'boom', details: [] });
});

t.test('heights and metadata', async (t) => {
  const { get } = await startGateway(t);
  const at = await get('/chain/fixture/v1/echo/h', { headers: { 'x-cosmos-block-height': '7', 'Grpc-Metadata-X-Trace': 'abc', 'user-agent': 'tester' } });
  t.equal((at.json as Record<string, unknown>)['height'], '7');
  t.equal(at.headers.get('grpc-metadata-x-cosmos-block-height'), '7');
  const keys = (at.json as Record<string, unknown>)['metadata_keys'] as string[];
  for (const k of ['x-cosmos-block-height', 'x-trace', 'grpcgateway-user-agent', 'x-forwarded-for', 'x-forwarded-host']) t.ok(keys.includes(k), `metadata ${k}`);
  t.notOk(keys.includes('grpc-metadata-x-trace'), 'the Grpc-Metadata- prefix is stripped');

  const viaMeta = await get('/chain/fixture/v1/echo/h', { headers: { 'Grpc-Metadata-X-Cosmos-Block-Height': '8' } });
  t.equal((viaMeta.json as Record<string, unknown>)['height'], '8', 'Grpc-Metadata-X-Cosmos-Block-Height works as a request header');

  const latest = await get('/chain/fixture/v1/echo/h');
  t.equal((latest.json as Record<string, unknown>)['height'], '42');

  const bad = await get('/chain/fixture/v1/echo/h', { headers: { 'x-cosmos-block-height': 'abc' } });
  t.equal(bad.status, 500, 'an SDK invalid-request error is Unknown upstream');
  t.same(bad.json, { code: 2, message: 'invalid request: Baseapp.RegisterGRPCServer: invalid height header "x-cosmos-block-height": strconv.ParseInt: parsing "abc": invalid syntax', details: [] });
  const future = await get('/chain/fixture/v1/echo/h', { headers: { 'x-cosmos-block-height': '43' } });
  t.equal(future.status, 500);
  t.equal(future.json?.['message'], 'invalid height: cannot query with height in the future; please provide a valid height');
});

t.test('Grpc-Timeout is a deadline', async (t) => {
  const { get } = await startGateway(t);
  // The handler would sleep ten minutes unless aborted: an answer at all proves the deadline.
  const r = await get('/chain/fixture/v1/sleep/600000', { headers: { 'Grpc-Timeout': '100m' } });
  t.equal(r.status, 504);
  t.same(r.json, { code: 4, message: 'context deadline exceeded', details: [] });
  const bad = await get('/chain/fixture/v1/sleep/1', { headers: { 'Grpc-Timeout': 'soon' } });
  t.equal(bad.status, 400);
  t.same(bad.json, { code: 3, message: 'invalid grpc-timeout: soon', details: [] });
});

t.test('CORS per [api] enabled-unsafe-cors (gorilla/handlers as the SDK configures it)', async (t) => {
  const { get } = await startGateway(t, { enabledUnsafeCors: true });
  const origin = { Origin: 'http://wallet.example' };
  const r = await get('/chain/fixture/v1/accounts/x', { headers: origin });
  t.equal(r.status, 200);
  t.equal(r.headers.get('access-control-allow-origin'), '*');
  const err = await get('/chain/fixture/v1/nope', { headers: origin });
  t.equal(err.headers.get('access-control-allow-origin'), '*', 'errors carry it too');
  const noOrigin = await get('/chain/fixture/v1/accounts/x');
  t.equal(noOrigin.headers.get('access-control-allow-origin'), null, 'no Origin, no CORS headers');

  const pre = await get('/chain/fixture/v1/echo', { method: 'OPTIONS', headers: { ...origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type, accept' } });
  t.equal(pre.status, 200);
  t.equal(pre.headers.get('access-control-allow-origin'), '*');
  t.equal(pre.headers.get('access-control-allow-headers'), 'Content-Type', 'simple headers are not echoed');
  t.equal(pre.text, '');
  const badHeader = await get('/chain/fixture/v1/echo', { method: 'OPTIONS', headers: { ...origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'x-custom' } });
  t.equal(badHeader.status, 403);
  const badMethod = await get('/chain/fixture/v1/echo', { method: 'OPTIONS', headers: { ...origin, 'Access-Control-Request-Method': 'PUT' } });
  t.equal(badMethod.status, 405);
  const noMethod = await get('/chain/fixture/v1/echo', { method: 'OPTIONS', headers: origin });
  t.equal(noMethod.status, 400);

  const off = await startGateway(t);
  const offPre = await off.get('/chain/fixture/v1/echo', { method: 'OPTIONS', headers: { ...origin, 'Access-Control-Request-Method': 'POST' } });
  t.equal(offPre.status, 501, 'with CORS off, OPTIONS is just an unrouted method');
  t.equal(offPre.headers.get('access-control-allow-origin'), null);
});

t.test('[api] rpc-max-body-bytes', async (t) => {
  const { post } = await startGateway(t, { maxBodyBytes: 64 });
  const ok = await post('/chain/fixture/v1/echo', JSON.stringify({ text: 'x'.repeat(20) }));
  t.equal(ok.status, 200);
  const big = await post('/chain/fixture/v1/echo', JSON.stringify({ text: 'x'.repeat(200) }));
  t.equal(big.status, 400);
  t.same(big.json, { code: 3, message: 'http: request body too large', details: [] });
});

t.test('[api] max-open-connections', async (t) => {
  const { get } = await startGateway(t, { maxOpenConnections: 1 });
  const slow = get('/chain/fixture/v1/sleep/300');
  await sleep(50);
  const refused = await get('/chain/fixture/v1/accounts/x');
  t.equal(refused.status, 503);
  t.equal(refused.json?.['code'], GrpcCode.Unavailable);
  t.equal((await slow).status, 200);
  t.equal((await get('/chain/fixture/v1/accounts/x')).status, 200, 'served again once the slot is free');
});

t.test('routes are rebuilt when a service is registered after start', async (t) => {
  const router = new QueryRouter({ resolveHeight: (h) => h ?? 1n });
  const { get } = await startGateway(t, { router });
  t.equal((await get('/chain/fixture/v1/txs', { method: 'POST', body: '{}' })).status, 501);
  router.registerService(Service, { broadcast: () => ({ txhash: 'late' }) });
  const r = await get('/chain/fixture/v1/txs', { method: 'POST', body: '{}' });
  t.same(r.json, { txhash: 'late' });
});

// ------------------------------------------------------------------------------------------------
// Integration: the chain's own bank Query service (src/gen) over a real BaseApp, through the bridge
// that serves today's JSON-shaped module query routes (src/rpc/grpc/app-bridge.ts).

t.test('bank queries of a real BaseApp, bridged: REST, abci_query and heights', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  const env: RootDatabase = open({ path: dir, maxDbs: 16 });
  t.teardown(async () => {
    await env.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const db: Database<Uint8Array, Uint8Array> = env.openDB({ name: 'app', encoding: 'binary', keyEncoding: 'binary' });
  const app = new BaseApp({ bech32Prefix: 'chain' }, { db, modules: [new BankModule({ moduleAccountPermissions: {} })] });
  const alice = new Bech32Codec('chain').encode(new Uint8Array(20).fill(0xa1));
  const genesis = {
    params: { send_enabled: [], default_send_enabled: true },
    balances: [{ address: alice, coins: [{ denom: 'atom', amount: '7' }, { denom: 'stake', amount: '1000' }] }],
    supply: [],
    denom_metadata: [],
    send_enabled: [],
  };
  await app.initChain({ time: 0n, chainId: 'bridge-test', consensusParams: defaultConsensusParams(), validators: [], appStateBytes: utf8(JSON.stringify({ bank: genesis })), initialHeight: 1n });
  await app.finalizeBlock({ txs: [], decidedLastCommit: { round: 0, votes: [] }, hash: new Uint8Array(32), height: 1n, time: 1_000_000_000n, nextValidatorsHash: new Uint8Array(32), proposerAddress: new Uint8Array(20) });
  env.transactionSync(() => app.commit());

  const router = new QueryRouter({ resolveHeight: latestOnlyHeights(() => 1n) });
  router.registerService(BankQuery, jsonQueryService(router, app, BankQuery) as ServiceImpl<typeof BankQuery>);
  const { get } = await startGateway(t, { router });

  const all = await get(`/cosmos/bank/v1beta1/balances/${alice}?pagination.limit=1&pagination.count_total=true`);
  t.equal(all.status, 200, all.text);
  t.equal(all.text, '{"balances":[{"denom":"atom","amount":"7"}],"pagination":{"next_key":"c3Rha2U=","total":"2"}}', 'limit 1, next_key = the next denom, total counted');
  t.equal(all.headers.get('grpc-metadata-x-cosmos-block-height'), '1');
  const next = await get(`/chain/bank/v1beta1/balances/${alice}?pagination.key=c3Rha2U%3D`);
  t.equal(next.text, '{"balances":[{"denom":"stake","amount":"1000"}],"pagination":{"next_key":null,"total":"0"}}', 'key mode');
  const one = await get(`/chain/bank/v1beta1/balances/${alice}/by_denom?denom=stake`);
  t.equal(one.text, '{"balance":{"denom":"stake","amount":"1000"}}');
  const bad = await get('/chain/bank/v1beta1/balances/chain1bad/by_denom?denom=stake');
  t.equal(bad.status, 400);
  t.match(bad.json?.['message'], /^invalid address: /);
  const future = await get(`/chain/bank/v1beta1/balances/${alice}`, { headers: { 'x-cosmos-block-height': '5' } });
  t.equal(future.status, 500);
  t.equal(future.json?.['message'], 'invalid height: cannot query with height in the future; please provide a valid height');

  // abci_query with protobuf bytes, as CosmJS sends it (upstream path spelling).
  const req = toBinary(QueryBalanceRequestSchema, create(QueryBalanceRequestSchema, { address: alice, denom: 'atom' }));
  const r = await router.abciQuery({ path: '/cosmos.bank.v1beta1.Query/Balance', data: req, height: 0n, prove: false });
  t.equal(r.code, 0, r.log);
  t.equal(r.height, 1n);
  t.same(fromBinary(QueryBalanceResponseSchema, r.value).balance, { $typeName: 'chain.base.v1beta1.Coin', denom: 'atom', amount: '7' });
  const old = await router.abciQuery({ path: '/cosmos.bank.v1beta1.Query/Balance', data: req, height: 3n, prove: false });
  t.equal(old.code, 26, 'a height above the latest is invalid height (26), as createQueryContext says');
});

// ------------------------------------------------------------------------------------------------
// Hardening (see also rpc-hardening.test.ts)

/** Raw bytes on a new connection: what came back, and whether the server closed it within `waitMs`. */
function rawRequest(port: number, data: string, waitMs = 2000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let out = '';
    const timer = setTimeout(() => {
      s.destroy();
      resolve({ text: out, closed: false });
    }, waitMs);
    s.on('data', (d) => (out += d.toString('latin1')));
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ text: out, closed: true });
    });
    s.on('error', reject);
    s.write(data);
  });
}

t.test('a negative, non-numeric or oversized Content-Length never ends the process', async (t) => {
  const { gw, get } = await startGateway(t, { maxBodyBytes: 4096 });
  // `Content-Length: -1` once threw RangeError out of readBody, inside uWS's callback: the
  // whole node exited. uWS 20.30 closes such connections itself once the handler returns.
  for (const cl of ['-1', 'abc', '1e3', '99999999999999999999']) {
    for (const method of ['GET', 'POST']) {
      const r = await rawRequest(gw.port, `${method} /chain/fixture/v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: ${cl}\r\n\r\n{}`);
      t.ok(r.closed, `${method}, ${cl}: closed`);
      if (r.text !== '') t.match(r.text, /^HTTP\/1\.1 400 /, `${method}, ${cl}: 400`);
    }
  }
  const big = await rawRequest(gw.port, 'POST /chain/fixture/v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n{}');
  t.match(big.text, /^HTTP\/1\.1 400 /, 'a numeric Content-Length over rpc-max-body-bytes: 400');
  t.match(big.text, /request body too large/);
  const ok = await get('/chain/fixture/v1/echo/word');
  t.equal(ok.status, 200, 'still serving');
});

t.test('a body nested past RPC_JSON_MAX_DEPTH is InvalidArgument with Go\'s scanner error', async (t) => {
  const { post } = await startGateway(t);
  for (const depth of [1001, 5000, 20_000]) {
    const body = `{"record":{"nested":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
    const r = await post('/chain/fixture/v1/echo', body);
    t.equal(r.status, 400, `depth ${depth}`);
    t.equal(r.json?.['code'], 3);
    t.equal(r.json?.['message'], "invalid character '[' exceeded max depth");
  }
});
