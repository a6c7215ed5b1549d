/**
 * The gRPC server (src/rpc/grpc) on 127.0.0.1:0 against a real client (@grpc/grpc-js) and, for
 * what a well-behaved client never sends, raw node:http2 requests. The services are the test
 * fixture's (test/fixtures/proto/chain/fixture/v1/query.proto): unary calls, status codes and
 * percent-encoded messages, the `cosmos.*` alias, Any type URLs per the names registry, the
 * x-cosmos-block-height request metadata and response header, deadlines (client and server side),
 * message size limits, HTTP-level refusals as grpc-go answers them, server reflection (v1 and
 * v1alpha) through a grpc-js client of our reflection proto, abci_query through the same router,
 * and graceful close.
 */
import http2 from 'node:http2';
import zlib from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { AnySchema, FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import t, { type Test } from 'tap';
import { GrpcCode, GrpcStatusError, sdkErrors } from '../../src/app/errors.js';
import { createNames } from '../../src/names/index.js';
import { jsonQueryService } from '../../src/rpc/grpc/app-bridge.js';
import * as reflV1 from '../../src/gen/grpc/reflection/v1/reflection_pb.js';
import * as reflV1alpha from '../../src/gen/grpc/reflection/v1alpha/reflection_pb.js';
import { QueryRouter, type ServiceImpl } from '../../src/app/query-router.js';
import { GrpcServer } from '../../src/rpc/grpc/server.js';
import { GrpcThread } from '../../src/rpc/grpc/thread.js';
import { framed, h2Call } from '../helpers/raw-h2.js';
import {
  BaseAccountSchema,
  BlobRequestSchema,
  BlobResponseSchema,
  BroadcastRequestSchema,
  BroadcastResponseSchema,
  EchoRequestSchema,
  EchoResponseSchema,
  FailRequestSchema,
  FailResponseSchema,
  PubKeySchema,
  Query,
  QueryAccountRequestSchema,
  QueryAccountResponseSchema,
  QueryAccountsRequestSchema,
  QueryAccountsResponseSchema,
  Service,
  SleepRequestSchema,
  SleepResponseSchema,
} from '../fixtures/gen/chain/fixture/v1/query_pb.js';

const LATEST = 42n;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the handlers saw, for the tests to inspect. */
const seen = { sleepAborted: null as Promise<unknown> | null, onSleepStart: null as (() => void) | null };

/**
 * Resolves when the next Sleep call reaches its handler, so a test waits for the call to be in
 * flight instead of guessing how long that takes; rejects after a generous deadline instead of
 * hanging when the handler never runs.
 */
function nextSleepStart(timeoutMs = 30_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      seen.onSleepStart = null;
      reject(new Error(`the Sleep handler did not run within ${timeoutMs} ms`));
    }, timeoutMs);
    seen.onSleepStart = () => {
      clearTimeout(timer);
      seen.onSleepStart = null;
      resolve();
    };
  });
}

function pubKeyAny() {
  // Stored as a CosmJS client would have sent it: the upstream spelling.
  return create(AnySchema, { typeUrl: '/cosmos.fixture.v1.PubKey', value: toBinary(PubKeySchema, create(PubKeySchema, { key: Uint8Array.of(2, 1, 255) })) });
}

function accountAny(address: string) {
  const acct = create(BaseAccountSchema, { address, pubKey: pubKeyAny(), accountNumber: 7n, sequence: 3n });
  return create(AnySchema, { typeUrl: '/chain.fixture.v1.BaseAccount', value: toBinary(BaseAccountSchema, acct) });
}

const queryImpl: ServiceImpl<typeof Query> = {
  account: (req) => {
    if (req.address === '') throw new GrpcStatusError(GrpcCode.InvalidArgument, 'Address cannot be empty');
    if (req.address === 'missing') throw new GrpcStatusError(GrpcCode.NotFound, 'account missing not found');
    return { account: accountAny(req.address) };
  },
  accounts: (req) => ({ accounts: [accountAny('a'), accountAny('b')], pagination: { nextKey: Uint8Array.of(9), total: 2n }, echo: req }),
  echo: (req, ctx) => create(EchoResponseSchema, { echo: req, height: ctx.height ?? 0n, metadataKeys: [...ctx.metadata.keys()].sort() }),
  sleep: async (req, ctx) => {
    seen.sleepAborted = new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(ctx.signal.reason)));
    seen.onSleepStart?.();
    const end = Date.now() + req.millis;
    while (Date.now() < end && !ctx.signal.aborted) await sleep(5);
    return { finished: !ctx.signal.aborted };
  },
  blob: (req) => ({ blob: new Uint8Array(req.size) }),
  fail: (req) => {
    if (req.kind === 'abci') throw sdkErrors.keyNotFound.wrap(req.message);
    if (req.kind === 'plain') throw new Error(req.message);
    throw new GrpcStatusError(req.code as GrpcCode, req.message);
  },
  // hidden: left out on purpose (Unimplemented)
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
  router.registerService(Query, queryImpl);
  router.registerService(Service, { broadcast: () => ({ txhash: 'AB' }) }, { notAbciRoutable: ['Broadcast'] });
  return router;
}

/**
 * test/unit/grpc-thread.test.ts runs this file again with CHAIND_TEST_GRPC_VIA=thread: the same
 * calls through the gRPC thread (src/rpc/grpc/thread.ts), whose handlers run on this thread.
 */
const VIA_THREAD = process.env.CHAIND_TEST_GRPC_VIA === 'thread';

async function startServer(t: Test, opts: Partial<ConstructorParameters<typeof GrpcServer>[0]> = {}) {
  const o = { address: '127.0.0.1:0', router: opts.router ?? makeRouter(), ...opts };
  const server = VIA_THREAD ? new GrpcThread(o) : new GrpcServer(o);
  await server.start();
  const client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
  t.teardown(async () => {
    client.close();
    await server.close();
  });
  return { server, client };
}

interface UnaryOutcome<O> {
  res?: O;
  err?: grpc.ServiceError;
  headers?: grpc.Metadata;
}

function unary<I extends DescMessage, O extends DescMessage>(
  client: grpc.Client,
  path: string,
  input: I,
  output: O,
  req: MessageShape<I>,
  md: Record<string, string> = {},
  options: grpc.CallOptions = {},
): Promise<UnaryOutcome<MessageShape<O>>> {
  const meta = new grpc.Metadata();
  for (const [k, v] of Object.entries(md)) meta.set(k, v);
  return new Promise((resolve) => {
    let headers: grpc.Metadata | undefined;
    const call = client.makeUnaryRequest(
      path,
      (m: MessageShape<I>) => Buffer.from(toBinary(input, m)),
      (b: Buffer) => fromBinary(output, b),
      req,
      meta,
      options,
      (err, res) => resolve(err ? { err, headers } : { res: res as MessageShape<O>, headers }),
    );
    call.on('metadata', (m) => {
      headers = m;
    });
  });
}

const account = (client: grpc.Client, address: string, path = '/chain.fixture.v1.Query/Account', md: Record<string, string> = {}) =>
  unary(client, path, QueryAccountRequestSchema, QueryAccountResponseSchema, create(QueryAccountRequestSchema, { address }), md);
const echo = (client: grpc.Client, text: string, md: Record<string, string> = {}, options: grpc.CallOptions = {}) =>
  unary(client, '/chain.fixture.v1.Query/Echo', EchoRequestSchema, EchoResponseSchema, create(EchoRequestSchema, { text }), md, options);
const fail = (client: grpc.Client, code: number, message: string, kind = 'grpc') =>
  unary(client, '/chain.fixture.v1.Query/Fail', FailRequestSchema, FailResponseSchema, create(FailRequestSchema, { code, message, kind }));

/** A raw HTTP/2 request on a connection of its own: the response headers, the body, and the trailers. */
async function rawCall(port: number, headers: http2.OutgoingHttpHeaders, body: Buffer | null) {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  try {
    return await h2Call(session, headers, body);
  } finally {
    session.close();
  }
}

// ------------------------------------------------------------------------------------------------

t.test('unary call: response message, Any type URLs per the names registry, height header', async (t) => {
  const { client } = await startServer(t);
  const r = await account(client, 'chain1abc');
  t.notOk(r.err, 'no error');
  const any = r.res!.account!;
  t.equal(any.typeUrl, '/chain.fixture.v1.BaseAccount');
  const acct = fromBinary(BaseAccountSchema, any.value);
  t.equal(acct.address, 'chain1abc');
  t.equal(acct.accountNumber, 7n);
  t.equal(acct.pubKey?.typeUrl, '/chain.fixture.v1.PubKey', 'a nested Any stored in the upstream spelling is emitted in the spec spelling');
  t.same([...fromBinary(PubKeySchema, acct.pubKey!.value).key], [2, 1, 255]);
  t.same(r.headers?.get('x-cosmos-block-height'), ['42'], 'latest height in the response header');
  t.same(r.headers?.get('content-type'), ['application/grpc']);
});

t.test('cosmos.* service names are aliases of chain.*', async (t) => {
  const { client } = await startServer(t);
  const r = await account(client, 'x', '/cosmos.fixture.v1.Query/Account');
  t.notOk(r.err);
  t.equal(r.res!.account!.typeUrl, '/chain.fixture.v1.BaseAccount');
  const s = await unary(client, '/cosmos.fixture.v1.Service/Broadcast', BroadcastRequestSchema, BroadcastResponseSchema, create(BroadcastRequestSchema, {}));
  t.equal(s.res?.txhash, 'AB');
  t.notOk(s.err, 'second service under its alias too');
});

t.test('[compat] upstream-names: Any type URLs are emitted as cosmos.*', async (t) => {
  const { client } = await startServer(t, { router: makeRouter(true) });
  const r = await account(client, 'x');
  t.equal(r.res!.account!.typeUrl, '/cosmos.fixture.v1.BaseAccount');
  const acct = fromBinary(BaseAccountSchema, r.res!.account!.value);
  t.equal(acct.pubKey?.typeUrl, '/cosmos.fixture.v1.PubKey');
});

t.test('handler errors become gRPC statuses', async (t) => {
  const { client } = await startServer(t);
  const nf = await account(client, 'missing');
  t.equal(nf.err?.code, grpc.status.NOT_FOUND);
  t.equal(nf.err?.details, 'account missing not found');
  t.same(nf.err?.metadata.get('x-cosmos-block-height'), ['42'], 'the height rides on an error answer too');

  const inv = await account(client, '');
  t.equal(inv.err?.code, grpc.status.INVALID_ARGUMENT);
  t.equal(inv.err?.details, 'Address cannot be empty');

  const odd = 'not 100% fine: ünïcödé\r\nsecond line';
  const enc = await fail(client, GrpcCode.FailedPrecondition, odd);
  t.equal(enc.err?.code, grpc.status.FAILED_PRECONDITION);
  t.equal(enc.err?.details, odd, 'percent-encoded grpc-message round-trips');

  const abci = await fail(client, 0, 'thing 7', 'abci');
  t.equal(abci.err?.code, grpc.status.UNKNOWN, 'registered SDK errors carry Unknown');
  t.equal(abci.err?.details, 'key not found: thing 7', 'root-first message (wrappedError.GRPCStatus)');

  const plain = await fail(client, 0, 'boom', 'plain');
  t.equal(plain.err?.code, grpc.status.UNKNOWN);
  t.equal(plain.err?.details, 'boom');

  for (const code of [GrpcCode.PermissionDenied, GrpcCode.Unavailable, GrpcCode.Internal, GrpcCode.Unauthenticated]) {
    const r = await fail(client, code, `code ${code}`);
    t.equal(r.err?.code, code, `code ${GrpcCode[code]} passes through`);
  }
});

t.test('unknown services and methods, unimplemented methods', async (t) => {
  const { client } = await startServer(t);
  const svc = await unary(client, '/chain.fixture.v1.Nope/Account', QueryAccountRequestSchema, QueryAccountResponseSchema, create(QueryAccountRequestSchema));
  t.equal(svc.err?.code, grpc.status.UNIMPLEMENTED);
  t.equal(svc.err?.details, 'unknown service chain.fixture.v1.Nope');
  const m = await unary(client, '/chain.fixture.v1.Query/Nope', QueryAccountRequestSchema, QueryAccountResponseSchema, create(QueryAccountRequestSchema));
  t.equal(m.err?.code, grpc.status.UNIMPLEMENTED);
  t.equal(m.err?.details, 'unknown method Nope for service chain.fixture.v1.Query');
  const h = await unary(client, '/chain.fixture.v1.Query/Hidden', EchoRequestSchema, EchoResponseSchema, create(EchoRequestSchema));
  t.equal(h.err?.code, grpc.status.UNIMPLEMENTED);
  t.equal(h.err?.details, 'method Hidden not implemented');
});

t.test('x-cosmos-block-height request metadata', async (t) => {
  const { client } = await startServer(t);
  const at7 = await echo(client, 'h', { 'x-cosmos-block-height': '7', 'x-custom': 'yes' });
  t.equal(at7.res?.height, 7n, 'the handler serves the requested height');
  t.same(at7.headers?.get('x-cosmos-block-height'), ['7']);
  t.ok(at7.res?.metadataKeys.includes('x-custom'), 'custom metadata reaches the handler');
  t.ok(at7.res?.metadataKeys.includes('x-cosmos-block-height'));
  t.notOk(at7.res?.metadataKeys.includes('content-type'), 'transport headers are not metadata');

  const zero = await echo(client, 'h', { 'x-cosmos-block-height': '0' });
  t.equal(zero.res?.height, LATEST, '0 means latest');

  const bad = await echo(client, 'h', { 'x-cosmos-block-height': 'abc' });
  t.equal(bad.err?.code, grpc.status.UNKNOWN);
  t.equal(bad.err?.details, 'invalid request: Baseapp.RegisterGRPCServer: invalid height header "x-cosmos-block-height": strconv.ParseInt: parsing "abc": invalid syntax');

  const neg = await echo(client, 'h', { 'x-cosmos-block-height': '-1' });
  t.equal(neg.err?.code, grpc.status.UNKNOWN);
  t.equal(neg.err?.details, 'invalid request: cannot query with height < 0; please provide a valid height');

  const future = await echo(client, 'h', { 'x-cosmos-block-height': '100' });
  t.equal(future.err?.code, grpc.status.UNKNOWN);
  t.equal(future.err?.details, 'invalid height: cannot query with height in the future; please provide a valid height');
});

t.test('deadlines', async (t) => {
  const { server, client } = await startServer(t);
  // The handler would sleep ten minutes unless aborted: that an answer comes at all proves the
  // deadline, with no wall-clock assertion for a loaded machine to break.
  // Connect and handshake first, so the deadline below is not spent on them (a fresh client's
  // first call may take longer than the deadline on a loaded machine and never reach the handler).
  const warm = await echo(client, 'warm-up');
  t.notOk(warm.err, 'the connection is up');
  seen.sleepAborted = null;
  const started = nextSleepStart();
  const r = await unary(client, '/chain.fixture.v1.Query/Sleep', SleepRequestSchema, SleepResponseSchema, create(SleepRequestSchema, { millis: 600_000 }), {}, {
    deadline: Date.now() + 1000,
  });
  t.equal(r.err?.code, grpc.status.DEADLINE_EXCEEDED, 'the client sees DeadlineExceeded, without waiting for the handler');
  await started;
  t.ok(seen.sleepAborted, 'the handler ran');
  const reason = (await seen.sleepAborted) as unknown as GrpcStatusError;
  t.ok(reason.grpcCode === GrpcCode.DeadlineExceeded || reason.grpcCode === GrpcCode.Canceled, 'the handler signal was aborted');

  // Server side: no client timer, only the grpc-timeout header.
  const raw = await rawCall(server.port, { ':path': '/chain.fixture.v1.Query/Sleep', 'grpc-timeout': '100m' }, framed(toBinary(SleepRequestSchema, create(SleepRequestSchema, { millis: 600_000 }))));
  t.equal(raw.headers['grpc-status'], '4', 'trailers-only DeadlineExceeded');
  t.equal(raw.headers['grpc-message'], 'context deadline exceeded');
  t.ok(raw.elapsed >= 95, `answered at the deadline, not before (${raw.elapsed} ms)`);
});

t.test('message size limits', async (t) => {
  const { client } = await startServer(t, { maxRecvMsgSize: 1024, maxSendMsgSize: 4096 });
  const big = await echo(client, 'x'.repeat(2000));
  t.equal(big.err?.code, grpc.status.RESOURCE_EXHAUSTED);
  t.match(big.err?.details, /^grpc: received message larger than max \(\d+ vs\. 1024\)$/);
  const ok = await echo(client, 'x'.repeat(900));
  t.notOk(ok.err, 'a message under the limit passes');

  const out = await unary(client, '/chain.fixture.v1.Query/Blob', BlobRequestSchema, BlobResponseSchema, create(BlobRequestSchema, { size: 5000 }));
  t.equal(out.err?.code, grpc.status.RESOURCE_EXHAUSTED);
  t.match(out.err?.details, /^grpc: trying to send message larger than max \(\d+ vs\. 4096\)$/);
  const small = await unary(client, '/chain.fixture.v1.Query/Blob', BlobRequestSchema, BlobResponseSchema, create(BlobRequestSchema, { size: 100 }));
  t.equal(small.res?.blob.length, 100);
});

t.test('HTTP-level answers as grpc-go gives them', async (t) => {
  const { server } = await startServer(t);
  const req = framed(toBinary(EchoRequestSchema, create(EchoRequestSchema, { text: 'hi' })));
  const path = '/chain.fixture.v1.Query/Echo';

  const json = await rawCall(server.port, { ':path': path, 'content-type': 'application/json' }, req);
  t.equal(json.headers[':status'], 415);
  t.equal(json.headers['grpc-status'], '3');
  t.equal(json.headers['grpc-message'], 'invalid gRPC request content-type "application/json"');

  const put = await rawCall(server.port, { ':path': path, ':method': 'PUT' }, req);
  t.equal(put.headers[':status'], 405);
  t.equal(put.headers['grpc-status'], '13');

  const tm = await rawCall(server.port, { ':path': path, 'grpc-timeout': '18f6n' }, req);
  t.equal(tm.headers[':status'], 400);
  t.equal(tm.headers['grpc-status'], '13');
  t.match(tm.headers['grpc-message'], /^malformed grpc-timeout/);

  const ok = await rawCall(server.port, { ':path': path, 'content-type': 'application/grpc+proto' }, req);
  t.equal(ok.headers[':status'], 200);
  t.equal(ok.headers['content-type'], 'application/grpc+proto', 'the subtype is echoed');
  t.equal(ok.trailers['grpc-status'], '0', 'status in the trailers');
  t.equal(ok.body.readUInt32BE(1), ok.body.length - 5, 'one length-prefixed message');
  t.equal(fromBinary(EchoResponseSchema, ok.body.subarray(5)).echo?.text, 'hi');

  const gz = await rawCall(server.port, { ':path': path, 'grpc-encoding': 'gzip' }, framed(zlib.gzipSync(toBinary(EchoRequestSchema, create(EchoRequestSchema, { text: 'zipped' }))), true));
  t.equal(gz.trailers['grpc-status'], '0', 'gzip-compressed requests are accepted');
  t.equal(fromBinary(EchoResponseSchema, gz.body.subarray(5)).echo?.text, 'zipped');

  const flagged = await rawCall(server.port, { ':path': path }, framed(Uint8Array.of(1, 2), true));
  t.equal(flagged.headers['grpc-status'], '13');
  t.equal(flagged.headers['grpc-message'], 'grpc: compressed flag set with identity or empty encoding');

  const garbage = await rawCall(server.port, { ':path': path }, framed(Uint8Array.of(0x0a, 0xff)));
  t.equal(garbage.headers[':status'], 200);
  t.equal(garbage.headers['grpc-status'], '13');
  t.match(garbage.headers['grpc-message'], /^grpc: error unmarshalling request/);

  const empty = await rawCall(server.port, { ':path': path }, null);
  t.equal(empty.headers['grpc-status'], '13', 'a unary call without a message');

  const truncated = await rawCall(server.port, { ':path': path }, req.subarray(0, req.length - 1));
  t.equal(truncated.headers['grpc-status'], '13', 'a body that ends inside a message');
});

// ------------------------------------------------------------------------------------------------
// Reflection

type ReflVersion = typeof reflV1 | typeof reflV1alpha;

async function reflect(client: grpc.Client, v: ReflVersion, requests: Array<MessageShape<typeof reflV1.ServerReflectionRequestSchema>['messageRequest']>) {
  const path = `/${v.ServerReflection.typeName}/ServerReflectionInfo`;
  const call = client.makeBidiStreamRequest(
    path,
    (m: unknown) => Buffer.from(toBinary(v.ServerReflectionRequestSchema as DescMessage, m as never)),
    (b: Buffer) => fromBinary(v.ServerReflectionResponseSchema as DescMessage, b) as unknown as MessageShape<typeof reflV1.ServerReflectionResponseSchema>,
  );
  const out: Array<MessageShape<typeof reflV1.ServerReflectionResponseSchema>> = [];
  const done = new Promise<grpc.StatusObject>((resolve) => {
    call.on('data', (d: MessageShape<typeof reflV1.ServerReflectionResponseSchema>) => out.push(d));
    call.on('status', resolve);
    // An error status also arrives as 'status', which is what the tests look at.
    call.on('error', () => {});
  });
  for (const r of requests) call.write(create(v.ServerReflectionRequestSchema as DescMessage, { host: 'h', messageRequest: r } as never));
  call.end();
  const status = await done;
  return { out, status };
}

const fileNames = (r: MessageShape<typeof reflV1.ServerReflectionResponseSchema>) =>
  r.messageResponse.case === 'fileDescriptorResponse' ? r.messageResponse.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b)) : [];

t.test('server reflection (v1 and v1alpha)', async (t) => {
  const { client } = await startServer(t);
  for (const v of [reflV1, reflV1alpha] as ReflVersion[]) {
    const { out, status } = await reflect(client, v, [
      { case: 'listServices', value: '' },
      { case: 'fileContainingSymbol', value: 'chain.fixture.v1.Query' },
      { case: 'fileContainingSymbol', value: 'chain.fixture.v1.BaseAccount' },
      { case: 'fileByFilename', value: 'google/protobuf/any.proto' },
      { case: 'fileContainingSymbol', value: 'chain.fixture.v1.Nope' },
      { case: 'fileContainingSymbol', value: 'cosmos.fixture.v1.Query.Account' },
      { case: 'allExtensionNumbersOfType', value: 'google.protobuf.MethodOptions' },
      { case: 'fileContainingExtension', value: create(reflV1.ExtensionRequestSchema, { containingType: 'google.protobuf.MethodOptions', extensionNumber: 72295728 }) },
    ]);
    const tag = v.ServerReflection.typeName;
    t.equal(status.code, grpc.status.OK, `${tag}: the stream ends OK`);
    t.equal(out.length, 8, `${tag}: one answer per request`);

    const list = out[0]!;
    t.equal(list.validHost, 'h');
    t.equal(list.originalRequest?.messageRequest.case, 'listServices');
    t.same(
      list.messageResponse.case === 'listServicesResponse' ? list.messageResponse.value.service.map((s) => s.name) : [],
      ['chain.fixture.v1.Query', 'chain.fixture.v1.Service', 'grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection'],
      `${tag}: list_services`,
    );

    const first = fileNames(out[1]!);
    t.equal(first[0]?.name, 'chain/fixture/v1/query.proto', 'the file comes first');
    t.equal(first[0]?.service[0]?.name, 'Query');
    const deps = first.map((f) => f.name).sort();
    t.same(
      deps,
      ['chain/fixture/v1/query.proto', 'google/api/annotations.proto', 'google/api/http.proto', 'google/protobuf/any.proto', 'google/protobuf/descriptor.proto', 'google/protobuf/duration.proto', 'google/protobuf/timestamp.proto'],
      'then every transitive import',
    );
    t.same(
      fileNames(out[2]!).map((f) => f.name),
      ['chain/fixture/v1/query.proto'],
      'imports already sent on this stream are not sent again',
    );
    t.same(
      fileNames(out[3]!).map((f) => f.name),
      ['google/protobuf/any.proto'],
      'file by name',
    );
    const nf = out[4]!.messageResponse;
    t.equal(nf.case, 'errorResponse');
    t.equal(nf.case === 'errorResponse' ? nf.value.errorCode : -1, GrpcCode.NotFound, 'an unknown symbol is NotFound');

    const alias = fileNames(out[5]!)[0]!;
    t.equal(alias.name, 'cosmos/fixture/v1/query.proto', 'the alias file of a cosmos.* symbol');
    t.equal(alias.package, 'cosmos.fixture.v1');
    t.equal(alias.service[0]?.method[0]?.inputType, '.cosmos.fixture.v1.QueryAccountRequest', 'type references renamed');
    t.ok(alias.dependency.includes('google/api/annotations.proto'), 'non-brand imports unchanged');

    const ext = out[6]!.messageResponse;
    t.same(ext.case === 'allExtensionNumbersResponse' ? ext.value.extensionNumber : [], [72295728]);
    t.same(
      fileNames(out[7]!).map((f) => f.name)[0],
      'google/api/annotations.proto',
      'file containing extension',
    );
  }

  const bad = await reflect(client, reflV1, [{ case: undefined }]);
  t.equal(bad.status.code, grpc.status.INVALID_ARGUMENT, 'a request without message_request ends the stream');
});

t.test('reflection lists the emitted spelling under [compat] upstream-names', async (t) => {
  const { client } = await startServer(t, { router: makeRouter(true) });
  const { out } = await reflect(client, reflV1, [{ case: 'listServices', value: '*' }, { case: 'fileContainingSymbol', value: 'cosmos.fixture.v1.Query' }]);
  const list = out[0]!.messageResponse;
  t.same(list.case === 'listServicesResponse' ? list.value.service.map((s) => s.name).slice(0, 2) : [], ['cosmos.fixture.v1.Query', 'cosmos.fixture.v1.Service']);
  t.equal(fileNames(out[1]!)[0]?.package, 'cosmos.fixture.v1');
});

t.test('reflection can be turned off', async (t) => {
  const { client } = await startServer(t, { reflection: false });
  const r = await reflect(client, reflV1, [{ case: 'listServices', value: '' }]);
  t.equal(r.status.code, grpc.status.UNIMPLEMENTED);
});

// ------------------------------------------------------------------------------------------------
// The same router over abci_query

t.test('abci_query through the router', async (t) => {
  const router = makeRouter();
  const q = (path: string, data: Uint8Array, height = 0n) => router.abciQuery({ path, data, height, prove: false });
  const req = toBinary(QueryAccountRequestSchema, create(QueryAccountRequestSchema, { address: 'chain1x' }));

  const ok = await q('/cosmos.fixture.v1.Query/Account', req);
  t.equal(ok.code, 0);
  t.equal(ok.height, LATEST, 'height 0 is answered with the latest height, never 0');
  t.equal(fromBinary(QueryAccountResponseSchema, ok.value).account?.typeUrl, '/chain.fixture.v1.BaseAccount');

  const at = await q('/chain.fixture.v1.Query/Account', req, 5n);
  t.equal(at.height, 5n);

  const nf = await q('/chain.fixture.v1.Query/Account', toBinary(QueryAccountRequestSchema, create(QueryAccountRequestSchema, { address: 'missing' })));
  t.equal(nf.code, 22);
  t.equal(nf.codespace, 'sdk');
  t.equal(nf.log, 'rpc error: code = NotFound desc = account missing not found: key not found', 'the text CosmJS matches');

  const inv = await q('/chain.fixture.v1.Query/Account', toBinary(QueryAccountRequestSchema, create(QueryAccountRequestSchema, { address: '' })));
  t.equal(inv.code, 18);

  const sdk = await q('/chain.fixture.v1.Query/Fail', toBinary(FailRequestSchema, create(FailRequestSchema, { kind: 'abci', message: 'm' })));
  t.equal(sdk.code, 6);
  t.equal(sdk.log, 'm: key not found: unknown request');

  const unknown = await q('/chain.fixture.v1.Query/Nope', new Uint8Array(0));
  t.equal(unknown.code, 6);
  t.equal(unknown.log, 'unknown query path: unknown request');

  const bc = await q('/chain.fixture.v1.Service/Broadcast', new Uint8Array(0));
  t.equal(bc.code, 18);
  t.equal(bc.log, "can't route a broadcast tx message: invalid request");

  const future = await q('/chain.fixture.v1.Query/Account', req, 100n);
  t.equal(future.code, 26, 'the height resolver error as is');

  const neg = await q('/chain.fixture.v1.Query/Account', req, -1n);
  t.equal(neg.code, 18);

  const garbage = await q('/chain.fixture.v1.Query/Account', Uint8Array.of(0x0a, 0xff));
  t.equal(garbage.code, 18, 'undecodable request data');

  const viaBytes = await router.callBytes('/chain.fixture.v1.Query/Account', req);
  t.equal(viaBytes.height, LATEST);
  t.equal(fromBinary(QueryAccountResponseSchema, viaBytes.value).account?.typeUrl, '/chain.fixture.v1.BaseAccount');
});

t.test('router registration rules', async (t) => {
  const router = makeRouter();
  t.throws(() => router.registerService(Query, {}), /registered twice/);
  const r2 = new QueryRouter();
  t.throws(() => r2.registerService(Query, { nope: () => ({}) } as never), /has no method nope/);
  r2.registerService(Query, { Echo: (req: MessageShape<typeof EchoRequestSchema>) => ({ echo: req }) } as never);
  const out = await r2.callBytes('/chain.fixture.v1.Query/Echo', toBinary(EchoRequestSchema, create(EchoRequestSchema, { text: 'by proto name' })));
  t.equal(fromBinary(EchoResponseSchema, out.value).echo?.text, 'by proto name', 'handlers may be keyed by the proto method name');
  t.equal(out.height, undefined, 'no height source, no height');
  r2.registerService(Service, { broadcast: () => create(EchoResponseSchema) as never });
  const wrong = await r2.callBytes('/chain.fixture.v1.Service/Broadcast', new Uint8Array(0)).catch((e: GrpcStatusError) => e);
  t.equal((wrong as GrpcStatusError).grpcCode, GrpcCode.Internal, 'a response of the wrong type is Internal');
});

t.test('app bridge: JSON-shaped module query routes served as a typed service', async (t) => {
  const calls: Array<{ path: string; request: unknown; height: bigint | undefined }> = [];
  const app = {
    queryObject<R>(path: string, request: unknown, height?: bigint): { height: bigint; response: R } {
      calls.push({ path, request, height });
      const response = {
        accounts: [],
        pagination: { next_key: Uint8Array.of(1, 2), total: 5n },
        echo: request,
        extra_field_from_the_handler: true,
      };
      return { height: height ?? 0n, response: response as R };
    },
  };
  const router = new QueryRouter({ resolveHeight: (h) => h ?? LATEST });
  router.registerService(Query, jsonQueryService(router, app, Query, { methods: ['Accounts'] }) as ServiceImpl<typeof Query>);
  const req = create(QueryAccountsRequestSchema, { pagination: { key: Uint8Array.of(7), limit: 10n, countTotal: true }, kind: 2, tags: ['a'], minNumber: -3n });
  const out = await router.callBytes('/chain.fixture.v1.Query/Accounts', toBinary(QueryAccountsRequestSchema, req), { height: 9n });
  const res = fromBinary(QueryAccountsResponseSchema, out.value);
  t.same(calls[0]?.path, '/chain.fixture.v1.Query/Accounts');
  t.equal(calls[0]?.height, 9n);
  t.same(
    calls[0]?.request,
    { pagination: { key: 'Bw==', offset: '0', limit: '10', count_total: true, reverse: false }, kind: 'KIND_MODULE', tags: ['a'], min_number: '-3' },
    'the handler gets the proto-JSON shape',
  );
  t.same([...res.pagination!.nextKey], [1, 2], 'Uint8Array accepted back');
  t.equal(res.pagination!.total, 5n, 'bigint accepted back');
  t.equal(res.echo?.minNumber, -3n, 'round trip through JSON');
  const hidden = await router.callBytes('/chain.fixture.v1.Query/Echo', new Uint8Array(0)).catch((e: GrpcStatusError) => e);
  t.equal((hidden as GrpcStatusError).grpcCode, GrpcCode.Unimplemented, 'methods not bridged stay Unimplemented');
});

t.test('graceful close lets in-flight calls finish and refuses new ones', async (t) => {
  const o = { address: '127.0.0.1:0', router: makeRouter(), closeGraceMs: 30_000 };
  const server = VIA_THREAD ? new GrpcThread(o) : new GrpcServer(o); // close() ends as soon as the call does
  await server.start();
  const client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
  t.teardown(() => client.close());
  const started = nextSleepStart();
  const inflight = unary(client, '/chain.fixture.v1.Query/Sleep', SleepRequestSchema, SleepResponseSchema, create(SleepRequestSchema, { millis: 300 }));
  await started; // the call is in flight on the server, not merely sent
  const closed = server.close();
  const r = await inflight;
  t.notOk(r.err, 'the in-flight call completed');
  t.equal(r.res?.finished, true);
  await closed;
  const after = await echo(client, 'late', {}, { deadline: Date.now() + 1000 });
  t.ok(after.err, 'a call after close fails');
  t.ok(after.err?.code === grpc.status.UNAVAILABLE || after.err?.code === grpc.status.DEADLINE_EXCEEDED, `code ${after.err?.code}`);
});
