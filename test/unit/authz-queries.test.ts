/**
 * The authz Query service through BaseApp.query with protobuf codecs (abci_query bytes in and out):
 * Grants, GranterGrants and GranteeGrants with the SDK's pagination (key and offset modes,
 * count_total, reverse, the default limit), the SDK's errors, and the grantee index checked
 * against a brute-force scan of every grant, including upstream-form next_keys
 * (cosmos/cosmos-sdk:proto/cosmos/base/query/v1beta1/pagination.proto, cosmos/cosmos-sdk:types/query/pagination.go, cosmos/cosmos-sdk:x/authz/keeper/keeper.go, cosmos/cosmos-sdk:x/authz/keeper/grpc_query.go).
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape, type MessageShape } from '@bufbuild/protobuf';
import { open, type Database, type RootDatabase } from 'lmdb';
import { Bech32Codec } from '../../src/app/address.js';
import { BaseApp } from '../../src/app/baseapp.js';
import { compareBytes, concatBytes, utf8, type Bytes } from '../../src/app/bytes.js';
import { Context, ExecMode } from '../../src/app/context.js';
import { InfiniteGasMeter } from '../../src/app/gas.js';
import { CacheKVStore, LmdbReadStore, PrefixStore } from '../../src/app/store.js';
import { jsonTxDecoder } from '../../src/app/tx.js';
import { BankModule } from '../../src/app/modules/bank/index.js';
import { AuthzModule, GranteeGrantsView, lengthPrefixed } from '../../src/app/modules/authz/index.js';
import { GenericAuthorizationSchema } from '../../src/gen/chain/authz/v1beta1/authz_pb.js';
import {
  QueryGranteeGrantsRequestSchema,
  QueryGranteeGrantsResponseSchema,
  QueryGranterGrantsRequestSchema,
  QueryGranterGrantsResponseSchema,
  QueryGrantsRequestSchema,
  QueryGrantsResponseSchema,
} from '../../src/gen/chain/authz/v1beta1/query_pb.js';
import { defaultConsensusParams } from '../../src/types/params.js';

const codec = new Bech32Codec('chain');
const SEC = 1_000_000_000n;
const T0 = 1_767_225_600n * SEC; // 2026-01-01T00:00:00Z
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** Addresses of different lengths, so the length bytes of the keys matter. */
const ADDRS: Bytes[] = [
  new Uint8Array(20).fill(0x11),
  new Uint8Array(20).fill(0x22),
  new Uint8Array(32).fill(0x22),
  new Uint8Array(20).fill(0x33),
  new Uint8Array(32).fill(0x05),
  new Uint8Array(20).fill(0xff),
  Uint8Array.from([0x22, ...new Uint8Array(19).fill(0x01)]),
  new Uint8Array(21).fill(0x22),
];
const NAMES = ADDRS.map((a) => codec.encode(a));
const [A, B, C] = NAMES as [string, string, string];
const URLS = ['/chain.test.v1.MsgA', '/chain.test.v1.MsgB', '/chain.test.v1.MsgC', '/chain.test.v1.MsgD', '/chain.test.v1.MsgE'];

interface G {
  granter: number;
  grantee: number;
  url: string;
}

/** xorshift32: a fixed pseudo-random sequence, so failures reproduce. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}

/** The SDK grant key relative to 0x01: len granter | granter | len grantee | grantee | url. */
function upstreamKey(g: G): Bytes {
  return concatBytes(lengthPrefixed(ADDRS[g.granter]!), lengthPrefixed(ADDRS[g.grantee]!), utf8(g.url));
}

function genesisOf(grants: G[], expiration: (g: G) => string | null = () => null) {
  return {
    authorization: grants.map((g) => ({
      granter: NAMES[g.granter],
      grantee: NAMES[g.grantee],
      authorization: { '@type': '/chain.authz.v1beta1.GenericAuthorization', msg: g.url },
      expiration: expiration(g),
    })),
  };
}

async function setup(t: Test, authzGenesis: unknown, opts: { pruneLimit?: number; blockTime?: bigint } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  const env: RootDatabase = open({ path: dir, maxDbs: 16 });
  const db: Database<Uint8Array, Uint8Array> = env.openDB({ name: 'app', encoding: 'binary', keyEncoding: 'binary' });
  const bank = new BankModule();
  const authz = new AuthzModule({ bank: bank.keeper, pruneLimit: opts.pruneLimit });
  const app = new BaseApp({ bech32Prefix: 'chain' }, { db, modules: [bank, authz], txDecoder: jsonTxDecoder });
  t.teardown(async () => {
    await env.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await app.initChain({ time: T0, chainId: 'authz-q', consensusParams: defaultConsensusParams(), validators: [], appStateBytes: utf8(JSON.stringify({ authz: authzGenesis })), initialHeight: 1n });
  await app.finalizeBlock({ txs: [], decidedLastCommit: { round: 0, votes: [] }, hash: new Uint8Array(32), height: 1n, time: opts.blockTime ?? T0 + SEC, nextValidatorsHash: new Uint8Array(32), proposerAddress: new Uint8Array(20) });
  env.transactionSync(() => app.commit());

  async function query<I extends DescMessage, O extends DescMessage>(method: string, input: I, output: O, req: MessageInitShape<I>) {
    const r = await app.query({ path: `/chain.authz.v1beta1.Query/${method}`, data: toBinary(input, create(input, req)), height: 0n, prove: false });
    return { code: r.code, log: r.log, height: r.height, res: r.code === 0 ? (fromBinary(output, r.value) as MessageShape<O>) : undefined };
  }
  const grants = (req: MessageInitShape<typeof QueryGrantsRequestSchema>) => query('Grants', QueryGrantsRequestSchema, QueryGrantsResponseSchema, req);
  const granterGrants = (req: MessageInitShape<typeof QueryGranterGrantsRequestSchema>) => query('GranterGrants', QueryGranterGrantsRequestSchema, QueryGranterGrantsResponseSchema, req);
  const granteeGrants = (req: MessageInitShape<typeof QueryGranteeGrantsRequestSchema>) => query('GranteeGrants', QueryGranteeGrantsRequestSchema, QueryGranteeGrantsResponseSchema, req);
  const ctx = () =>
    new Context({
      mode: ExecMode.Query,
      chainId: 'authz-q',
      height: 1n,
      time: 0n,
      gasMeter: new InfiniteGasMeter(),
      addressCodec: codec,
      stores: (sk) => new PrefixStore(new CacheKVStore(new LmdbReadStore(db)), Uint8Array.from([1, sk.length, ...Buffer.from(sk)])),
    });
  return { app, authz, grants, granterGrants, granteeGrants, ctx };
}

const msgOf = (g: { authorization?: { value: Uint8Array } }) => fromBinary(GenericAuthorizationSchema, g.authorization!.value).msg;

t.test('Grants: one type without pagination, or the pair paginated by type URL', async (t) => {
  const pair: G[] = URLS.map((url) => ({ granter: 0, grantee: 1, url })).reverse();
  const s = await setup(t, genesisOf([...pair, { granter: 0, grantee: 2, url: URLS[0]! }, { granter: 1, grantee: 0, url: URLS[0]! }]));

  let r = await s.grants({ granter: A, grantee: B, msgTypeUrl: URLS[2]! });
  t.equal(r.code, 0);
  t.equal(r.height, 1n, 'the served height');
  t.same(r.res!.grants.map(msgOf), [URLS[2]]);
  t.equal(r.res!.pagination, undefined, 'no pagination with a type');
  r = await s.grants({ granter: A, grantee: B, msgTypeUrl: '/chain.test.v1.Nope' });
  t.same([r.code, r.log], [6, 'authorization not found for /chain.test.v1.Nope type: authorization not found: unknown request']);
  r = await s.grants({ granter: B, grantee: A, msgTypeUrl: URLS[1]! });
  t.equal(r.code, 6, 'direction matters');

  // Offset mode, default limit 100 forces count_total.
  r = await s.grants({ granter: A, grantee: B });
  t.same(r.res!.grants.map(msgOf), URLS, 'type-URL order');
  t.same([r.res!.pagination!.nextKey.length, r.res!.pagination!.total], [0, 5n]);
  // limit 2: next_key is the third URL (the key relative to the pair prefix), total not counted.
  r = await s.grants({ granter: A, grantee: B, pagination: { limit: 2n } });
  t.same(r.res!.grants.map(msgOf), URLS.slice(0, 2));
  t.equal(Buffer.from(r.res!.pagination!.nextKey).toString(), URLS[2]);
  t.equal(r.res!.pagination!.total, 0n);
  // Key mode continues there; total is never counted in key mode.
  r = await s.grants({ granter: A, grantee: B, pagination: { key: r.res!.pagination!.nextKey, limit: 2n, countTotal: true } });
  t.same(r.res!.grants.map(msgOf), URLS.slice(2, 4));
  t.same([Buffer.from(r.res!.pagination!.nextKey).toString(), r.res!.pagination!.total], [URLS[4], 0n]);
  // Offset + count_total.
  r = await s.grants({ granter: A, grantee: B, pagination: { offset: 4n, limit: 2n, countTotal: true } });
  t.same(r.res!.grants.map(msgOf), [URLS[4]]);
  t.same([r.res!.pagination!.nextKey.length, r.res!.pagination!.total], [0, 5n]);
  // Reverse.
  r = await s.grants({ granter: A, grantee: B, pagination: { limit: 3n, reverse: true } });
  t.same(r.res!.grants.map(msgOf), [URLS[4], URLS[3], URLS[2]]);
  t.equal(Buffer.from(r.res!.pagination!.nextKey).toString(), URLS[1]);
  // Both key and offset.
  r = await s.grants({ granter: A, grantee: B, pagination: { key: utf8(URLS[1]!), offset: 1n } });
  t.same([r.code, r.log], [18, 'invalid request, either offset or key is expected, got both: invalid request']);
});

t.test('address errors are the codec errors, as upstream passes them through', async (t) => {
  const s = await setup(t, genesisOf([]));
  const cosmosAddr = new Bech32Codec('cosmos').encode(ADDRS[0]!);
  let r = await s.grants({ granter: '', grantee: B });
  t.same([r.code, r.log], [18, 'empty address string is not allowed: invalid request']);
  r = await s.grants({ granter: A, grantee: cosmosAddr });
  t.same([r.code, r.log], [6, "hrp does not match bech32 prefix: expected 'chain' got 'cosmos': internal logic error: unknown request"]);
  const r2 = await s.granterGrants({ granter: `${A.slice(0, -1)}q` });
  t.equal(r2.code, 18);
  t.match(r2.log, /^decoding bech32 failed: .*: invalid request$/);
  const r3 = await s.granteeGrants({ grantee: 'chain1' });
  t.equal(r3.code, 18);
  // An empty abci_query data is an empty request message: the empty address.
  const e = await s.app.query({ path: '/chain.authz.v1beta1.Query/GranteeGrants', data: new Uint8Array(0), height: 0n, prove: false });
  t.same([e.code, e.log], [18, 'empty address string is not allowed: invalid request']);
  // The upstream query path spelling reaches the same route.
  const u = await s.app.query({ path: '/cosmos.authz.v1beta1.Query/GranterGrants', data: toBinary(QueryGranterGrantsRequestSchema, create(QueryGranterGrantsRequestSchema, { granter: A })), height: 0n, prove: false });
  t.equal(u.code, 0);
});

t.test('GranterGrants: ordered by (grantee key bytes, URL), paginated', async (t) => {
  const list: G[] = [
    { granter: 0, grantee: 3, url: URLS[1]! },
    { granter: 0, grantee: 2, url: URLS[0]! },
    { granter: 0, grantee: 1, url: URLS[1]! },
    { granter: 0, grantee: 1, url: URLS[0]! },
    { granter: 1, grantee: 0, url: URLS[0]! },
  ];
  const s = await setup(t, genesisOf(list));
  const mine = list.filter((g) => g.granter === 0).sort((x, y) => compareBytes(upstreamKey(x), upstreamKey(y)));
  let r = await s.granterGrants({ granter: A, pagination: { countTotal: true, limit: 10n } });
  t.same(
    r.res!.grants.map((g) => [g.granter, g.grantee, msgOf(g)]),
    mine.map((g) => [A, NAMES[g.grantee], g.url]),
  );
  t.equal(r.res!.pagination!.total, 4n);
  r = await s.granterGrants({ granter: A, pagination: { limit: 1n, offset: 1n } });
  t.same(r.res!.grants.map((g) => g.grantee), [NAMES[mine[1]!.grantee]]);
  // next_key is the key relative to 0x01|len|granter: len grantee | grantee | url.
  t.equal(hex(r.res!.pagination!.nextKey), hex(upstreamKey(mine[2]!).subarray(1 + ADDRS[0]!.length)));
});

t.test('GranteeGrants from the index equals a filtered scan of every grant, page by page', async (t) => {
  const next = rng(26588);
  const seen = new Set<string>();
  const list: G[] = [];
  while (list.length < 120) {
    const g = { granter: next() % ADDRS.length, grantee: next() % ADDRS.length, url: URLS[next() % URLS.length]! };
    const id = `${g.granter}/${g.grantee}/${g.url}`;
    if (g.granter === g.grantee || seen.has(id)) continue;
    seen.add(id);
    list.push(g);
  }
  const s = await setup(t, genesisOf(list));
  const all = [...list].sort((x, y) => compareBytes(upstreamKey(x), upstreamKey(y)));
  const show = (gs: { granter: string; grantee: string; authorization?: { value: Uint8Array } }[]) => gs.map((g) => `${g.granter}>${g.grantee} ${msgOf(g)}`);
  const showG = (gs: G[]) => gs.map((g) => `${NAMES[g.granter]}>${NAMES[g.grantee]} ${g.url}`);

  for (let ge = 0; ge < ADDRS.length; ge++) {
    const want = all.filter((g) => g.grantee === ge);
    const name = NAMES[ge]!;
    // Offset mode, everything, with the total.
    const full = await s.granteeGrants({ grantee: name, pagination: { limit: 1000n, countTotal: true } });
    t.same(show(full.res!.grants), showG(want), `grantee ${ge}: all, in upstream key order`);
    t.equal(full.res!.pagination!.total, BigInt(want.length), `grantee ${ge}: total counts matches only`);

    // Key mode, 3 at a time, forward then reverse: next_key is upstream's key of the next match.
    for (const reverse of [false, true]) {
      const order = reverse ? [...want].reverse() : want;
      const got: string[] = [];
      let key: Uint8Array = new Uint8Array(0);
      let pages = 0;
      do {
        const r = await s.granteeGrants({ grantee: name, pagination: { key, limit: 3n, reverse } });
        got.push(...show(r.res!.grants));
        key = r.res!.pagination!.nextKey;
        const expectNext = order[got.length];
        t.equal(hex(key), expectNext === undefined ? '' : hex(upstreamKey(expectNext)), `grantee ${ge} reverse=${reverse}: next_key after ${got.length}`);
        pages++;
      } while (key.length > 0 && pages < 100);
      t.same(got, showG(order), `grantee ${ge} reverse=${reverse}: pages join up`);
    }

    // Offset pages.
    const off = await s.granteeGrants({ grantee: name, pagination: { offset: 2n, limit: 2n } });
    t.same(show(off.res!.grants), showG(want.slice(2, 4)), `grantee ${ge}: offset 2 limit 2`);
  }

  // Upstream's next_key may name a grant of another grantee (its scan is unfiltered): starting
  // there must give the matches at or after it, forward, or at or before it, in reverse.
  for (const k of all) {
    const K = upstreamKey(k);
    for (const ge of [0, 2, 5]) {
      const fwd = await s.granteeGrants({ grantee: NAMES[ge]!, pagination: { key: K, limit: 1000n } });
      t.same(show(fwd.res!.grants), showG(all.filter((g) => g.grantee === ge && compareBytes(upstreamKey(g), K) >= 0)), `from ${hex(K).slice(0, 16)}… for grantee ${ge}`);
      const rev = await s.granteeGrants({ grantee: NAMES[ge]!, pagination: { key: K, limit: 1000n, reverse: true } });
      t.same(show(rev.res!.grants), showG(all.filter((g) => g.grantee === ge && compareBytes(upstreamKey(g), K) <= 0).reverse()), `back from ${hex(K).slice(0, 16)}… for grantee ${ge}`);
    }
  }

  // The view against arbitrary bounds: random byte strings, near-miss prefixes included.
  const ctx = s.ctx();
  for (let ge = 0; ge < ADDRS.length; ge++) {
    const view = new GranteeGrantsView(s.authz.keeper.store(ctx), ADDRS[ge]!);
    const keys = all.filter((g) => g.grantee === ge).map(upstreamKey);
    for (let i = 0; i < 300; i++) {
      let b: Bytes;
      const base = upstreamKey(all[next() % all.length]!);
      switch (next() % 4) {
        case 0:
          b = base.subarray(0, next() % (base.length + 1));
          break;
        case 1: {
          b = Uint8Array.from(base);
          const j = next() % b.length;
          b[j] = (b[j]! + (next() % 2 === 0 ? 1 : 255)) & 0xff;
          break;
        }
        case 2:
          b = concatBytes(base, Uint8Array.of(next() & 0xff));
          break;
        default:
          b = Uint8Array.from({ length: 1 + (next() % 60) }, () => (next() % 3 === 0 ? 0x14 : next() & 0xff));
      }
      const got = [...view.iterate(b)].map((p) => hex(p.key));
      const want = keys.filter((k) => compareBytes(k, b) >= 0).map(hex);
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        t.fail(`view from ${hex(b)} for grantee ${ge}: got ${got.length}, want ${want.length}`);
        return;
      }
      const gotEnd = [...view.iterate(undefined, b)].map((p) => hex(p.key));
      const wantEnd = keys.filter((k) => compareBytes(k, b) < 0).map(hex);
      if (JSON.stringify(gotEnd) !== JSON.stringify(wantEnd)) {
        t.fail(`view to ${hex(b)} for grantee ${ge}: got ${gotEnd.length}, want ${wantEnd.length}`);
        return;
      }
    }
  }
  t.pass('the view agrees with a filtered scan for 2400 random bounds each way');
});

t.test('expired grants are served until pruned; the JSON request form works too', async (t) => {
  const exp = '2026-01-01T00:00:05Z';
  const s = await setup(t, genesisOf([{ granter: 0, grantee: 1, url: URLS[0]! }], () => exp), { pruneLimit: 0, blockTime: T0 + 60n * SEC });
  const r = await s.granteeGrants({ grantee: B });
  t.equal(r.res!.grants.length, 1, 'expired, not pruned (pruneLimit 0), still returned');
  t.equal(r.res!.grants[0]!.expiration?.seconds, T0 / SEC + 5n);
  // BaseApp.queryObject with SDK JSON, as the gRPC bridge calls it.
  const { response } = s.app.queryObject<MessageShape<typeof QueryGrantsResponseSchema>>('/chain.authz.v1beta1.Query/Grants', { granter: A, grantee: B, pagination: { limit: '1', count_total: true } });
  t.same([response.grants.length, response.pagination?.total], [1, 1n]);
  t.throws(() => s.app.queryObject('/chain.authz.v1beta1.Query/Grants', null), /empty address string is not allowed/, 'a missing request is the empty request');
  void C;
});
