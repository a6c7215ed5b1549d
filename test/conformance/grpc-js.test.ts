/**
 * @grpc/grpc-js, unmodified, against the gRPC server of a real in-process node (default names)
 * holding the known state of test/helpers/seed.ts. Messages are encoded and decoded with the
 * generated code in src/gen (bufbuild toBinary/fromBinary); the transport is grpc-js with raw
 * Buffer serializers, through `makeGenericClientConstructor` clients built from the generated
 * service descriptors and, for the `cosmos.*` alias paths, `client.makeUnaryRequest`.
 *
 * Covered (spec §4.2; cosmos/cosmos-sdk:baseapp/grpcrouter.go): auth Account/Params/Accounts (key, offset,
 * count_total, reverse, the key round trip), bank Balance/AllBalances, authz Grants/GranterGrants/
 * GranteeGrants (with the grantee pagination round trip), the status codes and messages upstream
 * returns, the `cosmos.*` service aliases, the `x-cosmos-block-height` request metadata and response
 * header, and the tx Service Simulate and GetTx.
 */
import * as grpc from '@grpc/grpc-js';
import { create, fromBinary, toBinary, type DescMessage, type DescMethodUnary, type DescService, type MessageInitShape, type MessageShape } from '@bufbuild/protobuf';
import { bech32 } from '@scure/base';
import t from 'tap';
import { BaseAccountSchema, ModuleAccountSchema } from '../../src/gen/chain/auth/v1beta1/auth_pb.js';
import { Query as AuthQuery } from '../../src/gen/chain/auth/v1beta1/query_pb.js';
import { GenericAuthorizationSchema } from '../../src/gen/chain/authz/v1beta1/authz_pb.js';
import { Query as AuthzQuery } from '../../src/gen/chain/authz/v1beta1/query_pb.js';
import { SendAuthorizationSchema } from '../../src/gen/chain/bank/v1beta1/authz_pb.js';
import { Query as BankQuery } from '../../src/gen/chain/bank/v1beta1/query_pb.js';
import { MsgSendSchema } from '../../src/gen/chain/bank/v1beta1/tx_pb.js';
import { PubKeySchema } from '../../src/gen/chain/crypto/secp256k1/keys_pb.js';
import { Service as TxService } from '../../src/gen/chain/tx/v1beta1/service_pb.js';
import type { Any } from '@bufbuild/protobuf/wkt';
import { startTestNode, waitHeight, type TestNode } from '../helpers/inproc.js';
import { DENOM, DEV_BALANCE, FEE, FRESH, S0, S1, S2, S3, seed, type Seeded } from '../helpers/seed.js';
import { buildTx, freshKey, msgSend } from '../helpers/txsign.js';

const RAW = {
  requestSerialize: (b: Buffer) => b,
  requestDeserialize: (b: Buffer) => b,
  responseSerialize: (b: Buffer) => b,
  responseDeserialize: (b: Buffer) => b,
};

/** A grpc-js client for every unary method of a generated service, as raw bytes; `pkg` renames the service (aliases). */
function rawClient(svc: DescService, address: string, serviceName = svc.typeName): grpc.Client {
  const def: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
  for (const m of svc.methods) {
    def[m.name] = { path: `/${serviceName}/${m.name}`, requestStream: false, responseStream: false, originalName: m.localName, ...RAW };
  }
  const Ctor = grpc.makeGenericClientConstructor(def as grpc.ServiceDefinition, serviceName);
  return new Ctor(address, grpc.credentials.createInsecure());
}

interface Outcome<O extends DescMessage> {
  res?: MessageShape<O>;
  /** The raw response bytes. */
  bytes?: Buffer;
  err?: grpc.ServiceError;
  /** Response headers (the initial metadata). */
  headers?: grpc.Metadata;
}

function meta(height?: string): grpc.Metadata {
  const md = new grpc.Metadata();
  if (height !== undefined) md.set('x-cosmos-block-height', height);
  return md;
}

/** One unary call through a rawClient, encoded and decoded with the generated schemas. */
function call<I extends DescMessage, O extends DescMessage>(
  client: grpc.Client,
  method: DescMethodUnary<I, O>,
  req: MessageInitShape<I>,
  md: grpc.Metadata = meta(),
): Promise<Outcome<O>> {
  return new Promise((resolve) => {
    let headers: grpc.Metadata | undefined;
    const fn = (client as unknown as Record<string, (...a: unknown[]) => grpc.ClientUnaryCall>)[method.name]!.bind(client);
    const c = fn(Buffer.from(toBinary(method.input, create(method.input, req))), md, (err: grpc.ServiceError | null, bytes?: Buffer) => {
      if (err) resolve({ err, headers: headers ?? err.metadata });
      else resolve({ res: fromBinary(method.output, bytes!), bytes, headers });
    });
    c.on('metadata', (m) => (headers = m));
  });
}

/** The same through `client.makeUnaryRequest` on an explicit path (the `cosmos.*` aliases). */
function callPath<I extends DescMessage, O extends DescMessage>(client: grpc.Client, path: string, method: DescMethodUnary<I, O>, req: MessageInitShape<I>): Promise<Outcome<O>> {
  return new Promise((resolve) => {
    let headers: grpc.Metadata | undefined;
    const c = client.makeUnaryRequest(path, (b: Buffer) => b, (b: Buffer) => b, Buffer.from(toBinary(method.input, create(method.input, req))), meta(), (err, bytes) => {
      if (err) resolve({ err, headers: headers ?? err.metadata });
      else resolve({ res: fromBinary(method.output, bytes!), bytes, headers });
    });
    c.on('metadata', (m) => (headers = m));
  });
}

const heightOf = (o: { headers?: grpc.Metadata }) => o.headers?.get('x-cosmos-block-height')[0];
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const addrOf = (a: Any) => {
  if (a.typeUrl === '/chain.auth.v1beta1.BaseAccount') return fromBinary(BaseAccountSchema, a.value);
  if (a.typeUrl === '/chain.auth.v1beta1.ModuleAccount') return fromBinary(ModuleAccountSchema, a.value).baseAccount!;
  throw new Error(`unexpected account type ${a.typeUrl}`);
};
const addrBytes = (bech: string) => Uint8Array.from(bech32.fromWords(bech32.decode(bech as `${string}1${string}`).words));

t.test('grpc-js against the node gRPC server', async (t) => {
  const tn: TestNode = await startTestNode();
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);
  const sd: Seeded = await seed(tn);
  const addr = `127.0.0.1:${tn.grpcPort}`;
  const auth = rawClient(AuthQuery, addr);
  const bank = rawClient(BankQuery, addr);
  const authz = rawClient(AuthzQuery, addr);
  const txs = rawClient(TxService, addr);
  const plain = new grpc.Client(addr, grpc.credentials.createInsecure());
  const latest = () => tn.ctx.storage.blocks.height();

  await t.test('auth Account', async (t) => {
    const before = latest();
    const r = await call(auth, AuthQuery.method.account, { address: S0.bech32 });
    t.notOk(r.err, r.err?.details ?? 'ok');
    const h = BigInt(heightOf(r) as string);
    t.ok(h >= before && h <= latest(), `x-cosmos-block-height ${h} is the served (latest) height`);
    t.equal(r.res!.account!.typeUrl, '/chain.auth.v1beta1.BaseAccount');
    const acct = fromBinary(BaseAccountSchema, r.res!.account!.value);
    t.equal(acct.address, S0.bech32);
    t.equal(acct.accountNumber, 10n);
    t.equal(acct.sequence, 2n, 'two txs sent');
    t.equal(acct.pubKey?.typeUrl, '/chain.crypto.secp256k1.PubKey');
    t.same(fromBinary(PubKeySchema, acct.pubKey!.value).key, S0.publicKey, 'stored key is the signer’s');

    const fresh = fromBinary(BaseAccountSchema, (await call(auth, AuthQuery.method.account, { address: FRESH.bech32 })).res!.account!.value);
    t.ok(fresh.accountNumber >= 20n, `new account number ${fresh.accountNumber}`);
    t.equal(fresh.sequence, 0n);
    t.equal(fresh.pubKey, undefined, 'no key before its first tx');

    const unknown = freshKey(0x72).bech32;
    const nf = await call(auth, AuthQuery.method.account, { address: unknown });
    t.equal(nf.err?.code, grpc.status.NOT_FOUND);
    t.equal(nf.err?.details, `account ${unknown} not found`);
    t.ok(heightOf(nf), 'the height header comes with errors too');
    const empty = await call(auth, AuthQuery.method.account, { address: '' });
    t.equal(empty.err?.code, grpc.status.INVALID_ARGUMENT);
    t.equal(empty.err?.details, 'Address cannot be empty');
    const bad = await call(auth, AuthQuery.method.account, { address: 'chain1notanaddress' });
    t.equal(bad.err?.code, grpc.status.UNKNOWN, 'the address codec’s plain error: Unknown');
    t.match(bad.err?.details ?? '', /^decoding bech32 failed: /);
    const otherHrp = bech32.encode('cosmos', bech32.toWords(S0.address));
    const hrp = await call(auth, AuthQuery.method.account, { address: otherHrp });
    t.equal(hrp.err?.code, grpc.status.UNKNOWN);
    t.equal(hrp.err?.details, "internal logic error: hrp does not match bech32 prefix: expected 'chain' got 'cosmos'");
  });

  await t.test('auth Params', async (t) => {
    const r = await call(auth, AuthQuery.method.params, {});
    const p = r.res!.params!;
    t.same(
      [p.maxMemoCharacters, p.txSigLimit, p.txSizeCostPerByte, p.sigVerifyCostEd25519, p.sigVerifyCostSecp256k1, p.sigVerifyCostMldsa65],
      [256n, 7n, 10n, 590n, 1000n, 750n],
      'the SDK defaults (dev genesis)',
    );
  });

  await t.test('auth Accounts with pagination', async (t) => {
    const all = await call(auth, AuthQuery.method.accounts, {});
    const list = all.res!.accounts.map(addrOf);
    t.equal(all.res!.pagination?.total, BigInt(list.length), 'limit 0: default limit, count_total forced');
    t.equal(all.res!.pagination?.nextKey.length, 0, 'no next key: all fit in 100');
    t.ok(list.length >= 21, `${list.length} accounts: 20 dev accounts, module accounts, FRESH`);
    const bytes = list.map((a) => hex(addrBytes(a.address)));
    t.same(bytes, [...bytes].sort(), 'ordered by address bytes');
    t.equal(new Set(list.map((a) => a.accountNumber)).size, list.length, 'account numbers unique');
    t.ok(list.some((a) => a.address === FRESH.bech32) && list.some((a) => a.address === S0.bech32));

    // Key mode: pages of 5, next_key = the raw 20-byte address of the next page's first account.
    const paged: string[] = [];
    let key: Uint8Array = new Uint8Array(0);
    let pages = 0;
    for (;;) {
      const r = await call(auth, AuthQuery.method.accounts, { pagination: { key, limit: 5n } });
      t.notOk(r.err);
      const page = r.res!.accounts.map((a) => addrOf(a).address);
      if (pages > 0) t.equal(hex(addrBytes(page[0]!)), hex(key), `page ${pages} starts at next_key`);
      t.equal(r.res!.pagination?.total, 0n, 'key mode: no total');
      paged.push(...page);
      pages++;
      key = r.res!.pagination!.nextKey;
      if (key.length === 0) break;
      t.equal(key.length, 20, 'next_key is an address');
      t.equal(page.length, 5);
    }
    t.same(paged, list.map((a) => a.address), 'key round trip yields every account once, in order');
    t.equal(pages, Math.ceil(list.length / 5));

    const off = await call(auth, AuthQuery.method.accounts, { pagination: { offset: 3n, limit: 4n, countTotal: true } });
    t.same(off.res!.accounts.map((a) => addrOf(a).address), list.slice(3, 7).map((a) => a.address), 'offset 3 limit 4');
    t.equal(off.res!.pagination?.total, BigInt(list.length), 'count_total');
    t.same(off.res!.pagination?.nextKey, addrBytes(list[7]!.address), 'next_key after an offset page');
    const noTotal = await call(auth, AuthQuery.method.accounts, { pagination: { limit: 2n } });
    t.equal(noTotal.res!.pagination?.total, 0n, 'no count_total, no total');

    const rev = await call(auth, AuthQuery.method.accounts, { pagination: { limit: 3n, reverse: true } });
    t.same(rev.res!.accounts.map((a) => addrOf(a).address), list.slice(-3).reverse().map((a) => a.address), 'reverse');
    const revNext = await call(auth, AuthQuery.method.accounts, { pagination: { key: rev.res!.pagination!.nextKey, limit: 3n, reverse: true } });
    t.same(revNext.res!.accounts.map((a) => addrOf(a).address), list.slice(-6, -3).reverse().map((a) => a.address), 'reverse key round trip');

    const both = await call(auth, AuthQuery.method.accounts, { pagination: { key: addrBytes(S0.bech32), offset: 1n } });
    t.equal(both.err?.code, grpc.status.UNKNOWN);
    t.equal(both.err?.details, 'invalid request, either offset or key is expected, got both');
  });

  await t.test('bank Balance and AllBalances', async (t) => {
    const b = await call(bank, BankQuery.method.balance, { address: S0.bech32, denom: DENOM });
    t.same([b.res!.balance?.denom, b.res!.balance?.amount], [DENOM, (DEV_BALANCE - 1000n - 2n * 5000n).toString()], 'genesis − sent − two fees');
    const f = await call(bank, BankQuery.method.balance, { address: FRESH.bech32, denom: DENOM });
    t.equal(f.res!.balance?.amount, '1000');
    const z = await call(bank, BankQuery.method.balance, { address: FRESH.bech32, denom: 'other' });
    t.same([z.res!.balance?.denom, z.res!.balance?.amount], ['other', '0'], 'unknown denom: zero coin');
    const all = await call(bank, BankQuery.method.allBalances, { address: FRESH.bech32 });
    t.same(all.res!.balances.map((c) => [c.denom, c.amount]), [[DENOM, '1000']]);
    t.equal(all.res!.pagination?.total, 1n);
    const none = await call(bank, BankQuery.method.allBalances, { address: freshKey(0x73).bech32 });
    t.same(none.res!.balances, [], 'no balances, no error');
    const noDenom = await call(bank, BankQuery.method.balance, { address: S0.bech32, denom: '' });
    t.equal(noDenom.err?.code, grpc.status.INVALID_ARGUMENT, 'empty denom refused');
  });

  await t.test('authz Grants, GranterGrants, GranteeGrants', async (t) => {
    const g = await call(authz, AuthzQuery.method.grants, { granter: S0.bech32, grantee: S1.bech32 });
    t.notOk(g.err);
    const kinds = g.res!.grants.map((x) => x.authorization!.typeUrl);
    t.same(kinds, ['/chain.authz.v1beta1.GenericAuthorization', '/chain.bank.v1beta1.SendAuthorization'], 'two grants, in msg type URL order (authz.v1beta1.MsgRevoke < bank.v1beta1.MsgSend)');
    t.equal(fromBinary(GenericAuthorizationSchema, g.res!.grants[0]!.authorization!.value).msg, '/chain.authz.v1beta1.MsgRevoke');
    const send = fromBinary(SendAuthorizationSchema, g.res!.grants[1]!.authorization!.value);
    t.same(send.spendLimit.map((c) => [c.denom, c.amount]), [[DENOM, '500']]);
    t.equal(g.res!.grants[1]!.expiration, undefined, 'no expiration');
    t.equal(g.res!.pagination?.total, 2n);

    const one = await call(authz, AuthzQuery.method.grants, { granter: S0.bech32, grantee: S1.bech32, msgTypeUrl: '/chain.bank.v1beta1.MsgSend' });
    t.equal(one.res!.grants.length, 1);
    t.equal(one.res!.grants[0]!.authorization!.typeUrl, '/chain.bank.v1beta1.SendAuthorization');
    t.equal(one.res!.pagination, undefined, 'no pagination with msg_type_url');
    const oneUp = await call(authz, AuthzQuery.method.grants, { granter: S0.bech32, grantee: S1.bech32, msgTypeUrl: '/cosmos.bank.v1beta1.MsgSend' });
    t.same(oneUp.bytes, one.bytes, 'the upstream msg type URL finds the same grant');
    const miss = await call(authz, AuthzQuery.method.grants, { granter: S0.bech32, grantee: S1.bech32, msgTypeUrl: '/chain.staking.v1beta1.MsgDelegate' });
    t.equal(miss.err?.code, grpc.status.UNKNOWN, 'registered authz error → Unknown');
    t.equal(miss.err?.details, 'authorization not found: authorization not found for /chain.staking.v1beta1.MsgDelegate type');
    const none = await call(authz, AuthzQuery.method.grants, { granter: S1.bech32, grantee: S0.bech32 });
    t.same(none.res!.grants, []);
    const badGranter = await call(authz, AuthzQuery.method.grants, { granter: 'nope', grantee: S1.bech32 });
    t.equal(badGranter.err?.code, grpc.status.UNKNOWN);

    const byGranter = await call(authz, AuthzQuery.method.granterGrants, { granter: S0.bech32 });
    const rows = byGranter.res!.grants.map((x) => ({ grantee: x.grantee, url: x.authorization!.typeUrl, exp: x.expiration?.seconds }));
    t.equal(rows.length, 3);
    t.ok(byGranter.res!.grants.every((x) => x.granter === S0.bech32));
    t.same(
      rows.map((r) => hex(addrBytes(r.grantee))),
      rows.map((r) => hex(addrBytes(r.grantee))).sort(),
      'ordered by grantee bytes',
    );
    t.same(rows.find((r) => r.grantee === S2.bech32), { grantee: S2.bech32, url: '/chain.authz.v1beta1.GenericAuthorization', exp: sd.expiry }, 'the expiring grant');
    t.equal(byGranter.res!.pagination?.total, 3n);

    const byGrantee = await call(authz, AuthzQuery.method.granteeGrants, { grantee: S1.bech32 });
    const gr = byGrantee.res!.grants.map((x) => [x.granter, x.authorization!.typeUrl]);
    t.equal(gr.length, 3, 'S1 holds three grants');
    t.same(new Set(gr.map((x) => x[0])), new Set([S0.bech32, S3.bech32]));
    t.same(gr.map((x) => hex(addrBytes(x[0]!))), gr.map((x) => hex(addrBytes(x[0]!))).sort(), 'ordered by granter bytes');
    // Filtered pagination, one at a time, by key.
    const walked: string[][] = [];
    let key: Uint8Array = new Uint8Array(0);
    for (let i = 0; i < 5; i++) {
      const r = await call(authz, AuthzQuery.method.granteeGrants, { grantee: S1.bech32, pagination: { key, limit: 1n } });
      t.notOk(r.err, r.err?.details ?? 'ok');
      walked.push(...r.res!.grants.map((x) => [x.granter, x.authorization!.typeUrl]));
      key = r.res!.pagination?.nextKey ?? new Uint8Array(0);
      if (key.length === 0) break;
    }
    t.same(walked, gr, 'GranteeGrants key round trip');
    const counted = await call(authz, AuthzQuery.method.granteeGrants, { grantee: S1.bech32, pagination: { limit: 1n, countTotal: true } });
    t.equal(counted.res!.grants.length, 1);
    t.equal(counted.res!.pagination?.total, 3n, 'filtered pagination: total counts the grantee’s grants only');
    t.same((await call(authz, AuthzQuery.method.granteeGrants, { grantee: S0.bech32 })).res!.grants, [], 'S0 is nobody’s grantee');
  });

  await t.test('cosmos.* service aliases', async (t) => {
    const pairs: [string, Outcome<DescMessage>, Outcome<DescMessage>][] = [
      ['auth Account', await call(auth, AuthQuery.method.account, { address: S0.bech32 }), await callPath(plain, '/cosmos.auth.v1beta1.Query/Account', AuthQuery.method.account, { address: S0.bech32 })],
      ['auth Params', await call(auth, AuthQuery.method.params, {}), await callPath(plain, '/cosmos.auth.v1beta1.Query/Params', AuthQuery.method.params, {})],
      ['bank Balance', await call(bank, BankQuery.method.balance, { address: S0.bech32, denom: DENOM }), await callPath(plain, '/cosmos.bank.v1beta1.Query/Balance', BankQuery.method.balance, { address: S0.bech32, denom: DENOM })],
      ['authz Grants', await call(authz, AuthzQuery.method.grants, { granter: S0.bech32, grantee: S1.bech32 }), await callPath(plain, '/cosmos.authz.v1beta1.Query/Grants', AuthzQuery.method.grants, { granter: S0.bech32, grantee: S1.bech32 })],
      ['tx GetTx', await call(txs, TxService.method.getTx, { hash: sd.send.hash }), await callPath(plain, '/cosmos.tx.v1beta1.Service/GetTx', TxService.method.getTx, { hash: sd.send.hash })],
    ];
    for (const [name, a, b] of pairs) {
      t.notOk(b.err, `${name}: ${b.err?.details ?? 'ok'}`);
      t.ok(b.bytes && a.bytes && b.bytes.equals(a.bytes), `${name}: the alias answers the same bytes`);
    }
    // A whole client bound to the alias service name works too.
    const aliased = rawClient(AuthQuery, addr, 'cosmos.auth.v1beta1.Query');
    t.teardown(() => aliased.close());
    const r = await call(aliased, AuthQuery.method.account, { address: FRESH.bech32 });
    t.equal(r.res?.account?.typeUrl, '/chain.auth.v1beta1.BaseAccount', 'answers keep the node’s (spec) spelling');
    const unknownSvc = await callPath(plain, '/chain.nope.v1.Query/X', AuthQuery.method.params, {});
    t.equal(unknownSvc.err?.code, grpc.status.UNIMPLEMENTED);
    t.equal(unknownSvc.err?.details, 'unknown service chain.nope.v1.Query');
    const unknownMethod = await callPath(plain, '/chain.auth.v1beta1.Query/Nope', AuthQuery.method.params, {});
    t.equal(unknownMethod.err?.code, grpc.status.UNIMPLEMENTED);
    t.equal(unknownMethod.err?.details, 'unknown method Nope for service chain.auth.v1beta1.Query');
  });

  await t.test('x-cosmos-block-height metadata', async (t) => {
    const h = latest();
    const at = await call(auth, AuthQuery.method.account, { address: S0.bech32 }, meta(String(h)));
    t.notOk(at.err, at.err?.details ?? 'ok');
    t.equal(heightOf(at), String(h), 'served at the requested height, echoed in the header');
    const zero = await call(auth, AuthQuery.method.account, { address: S0.bech32 }, meta('0'));
    t.ok(BigInt(heightOf(zero) as string) >= h, '0 means latest');
    const future = await call(auth, AuthQuery.method.account, { address: S0.bech32 }, meta(String(latest() + 1000n)));
    t.equal(future.err?.code, grpc.status.UNKNOWN);
    t.equal(future.err?.details, 'invalid height: cannot query with height in the future; please provide a valid height');
    const neg = await call(auth, AuthQuery.method.account, { address: S0.bech32 }, meta('-1'));
    t.equal(neg.err?.code, grpc.status.UNKNOWN);
    t.equal(neg.err?.details, 'invalid request: cannot query with height < 0; please provide a valid height');
    const junk = await call(auth, AuthQuery.method.account, { address: S0.bech32 }, meta('abc'));
    t.equal(junk.err?.code, grpc.status.UNKNOWN);
    t.match(junk.err?.details ?? '', /^invalid request: .*invalid height header "x-cosmos-block-height": .*parsing "abc": invalid syntax$/);
    t.equal(
      junk.err?.details,
      'invalid request: Baseapp.RegisterGRPCServer: invalid height header "x-cosmos-block-height": strconv.ParseInt: parsing "abc": invalid syntax',
      "upstream's text (baseapp/grpcserver.go wraps strconv's error)",
    );
    // Older heights answer from the versioned state (default pruning keeps them): S0's sequence
    // before and after its first tx.
    for (const [h, seq] of [
      [sd.sendHeight - 1n, 0n],
      [sd.sendHeight, 1n],
    ] as const) {
      const old = await call(auth, AuthQuery.method.account, { address: S0.bech32 }, meta(String(h)));
      t.notOk(old.err, old.err?.details ?? 'ok');
      t.equal(heightOf(old), String(h), `served at ${h}`);
      t.equal(fromBinary(BaseAccountSchema, old.res!.account!.value).sequence, seq, `sequence ${seq} at ${h}`);
    }
    const before = await call(auth, AuthQuery.method.account, { address: FRESH.bech32 }, meta(String(sd.sendHeight - 1n)));
    t.equal(before.err?.code, grpc.status.NOT_FOUND, 'FRESH did not exist before the send');
  });

  await t.test('tx Service GetTx and Simulate', async (t) => {
    const r = await call(txs, TxService.method.getTx, { hash: sd.send.hash });
    t.notOk(r.err, r.err?.details ?? 'ok');
    const resp = r.res!.txResponse!;
    t.equal(resp.txhash, sd.send.hash);
    t.equal(resp.height, sd.sendHeight);
    t.equal(resp.code, 0);
    t.equal(resp.gasWanted, 200_000n);
    t.equal(resp.gasUsed, sd.send.gasUsed);
    t.ok(resp.events.some((e) => e.type === 'transfer' && e.attributes.some((a) => a.key === 'recipient' && a.value === FRESH.bech32)));
    t.match(resp.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, 'block time, RFC 3339');
    const msg = r.res!.tx!.body!.messages[0]!;
    t.equal(msg.typeUrl, '/chain.bank.v1beta1.MsgSend');
    t.equal(fromBinary(MsgSendSchema, msg.value).toAddress, FRESH.bech32);
    const lower = await call(txs, TxService.method.getTx, { hash: sd.send.hash.toLowerCase() });
    t.equal(lower.res?.txResponse?.txhash, sd.send.hash, 'lower-case hash accepted');
    const nf = await call(txs, TxService.method.getTx, { hash: '00'.repeat(32) });
    t.equal(nf.err?.code, grpc.status.NOT_FOUND);
    t.equal(nf.err?.details, `tx not found: ${'00'.repeat(32)}`);
    const badHex = await call(txs, TxService.method.getTx, { hash: 'zz' });
    t.equal(badHex.err?.code, grpc.status.UNKNOWN);
    t.equal(badHex.err?.details, "encoding/hex: invalid byte: U+007A 'z'");
    const emptyHash = await call(txs, TxService.method.getTx, { hash: '' });
    t.equal(emptyHash.err?.code, grpc.status.INVALID_ARGUMENT);

    // Simulate S2's first tx (account without a stored key): the gas and events, no state change.
    const tx = buildTx({ chainId: sd.chainId, msgs: [msgSend(S2.bech32, FRESH.bech32, [{ denom: DENOM, amount: 7 }])], signers: [{ key: S2, accountNumber: 12n, sequence: 0n }], fee: FEE }).bytes;
    const sim = await call(txs, TxService.method.simulate, { txBytes: tx });
    t.notOk(sim.err, sim.err?.details ?? 'ok');
    t.equal(sim.res!.gasInfo?.gasWanted, 200_000n);
    const used = sim.res!.gasInfo!.gasUsed;
    t.ok(used > 20_000n && used < 200_000n, `gas used ${used}`);
    t.same(sim.res!.result!.msgResponses.map((m) => m.typeUrl), ['/chain.bank.v1beta1.MsgSendResponse']);
    t.ok(sim.res!.result!.events.some((e) => e.type === 'transfer' && e.attributes.some((a) => a.key === 'amount' && a.value === `7${DENOM}`)));
    const after = fromBinary(BaseAccountSchema, (await call(auth, AuthQuery.method.account, { address: S2.bech32 })).res!.account!.value);
    t.same([after.sequence, after.pubKey], [0n, undefined], 'simulation changed nothing');
    const bal = await call(bank, BankQuery.method.balance, { address: FRESH.bech32, denom: DENOM });
    t.equal(bal.res!.balance?.amount, '1000');

    const empty = await call(txs, TxService.method.simulate, {});
    t.equal(empty.err?.code, grpc.status.INVALID_ARGUMENT);
    t.equal(empty.err?.details, 'empty txBytes is not allowed');
    // A failing simulation: upstream answers Unknown `<err> With gas wanted: 'W' and gas used: 'U' `.
    const wrongSeq = buildTx({ chainId: sd.chainId, msgs: [msgSend(S2.bech32, FRESH.bech32, [{ denom: DENOM, amount: 7 }])], signers: [{ key: S2, accountNumber: 12n, sequence: 5n }], fee: FEE }).bytes;
    const bad = await call(txs, TxService.method.simulate, { txBytes: wrongSeq });
    t.equal(bad.err?.code, grpc.status.UNKNOWN);
    t.match(bad.err?.details ?? '', /account sequence mismatch, expected 0, got 5: incorrect account sequence With gas wanted: '200000' and gas used: '\d+' $/, 'the failure reaches the client');
    const garbage = await call(txs, TxService.method.simulate, { txBytes: Uint8Array.of(1, 2, 3) });
    t.equal(garbage.err?.code, grpc.status.UNKNOWN);
    t.match(garbage.err?.details ?? '', /tx parse error With gas wanted: '0' and gas used: '0' $/, 'the decode failure reaches the client');
  });

  // Close the clients before the node's teardown stops the server.
  for (const c of [auth, bank, authz, txs, plain]) c.close();
});
