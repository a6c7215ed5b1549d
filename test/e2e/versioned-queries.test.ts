/**
 * Queries at a height against real in-process nodes (LMDB, consensus, gRPC, REST and node RPC
 * servers on 127.0.0.1 port 0), over all three transports: gRPC (@grpc/grpc-js with
 * `x-cosmos-block-height` metadata), REST (the header and `?height=`) and the node RPC's
 * `abci_query` `height`.
 *
 * - A bank balance changes at height h: at h-1 every transport shows the old balance, at h the new
 *   one, and each echoes the height it served (gRPC response header and REST header
 *   `x-cosmos-block-height`, abci_query `height`).
 * - With `pruning = "custom"`, keep-recent 2, interval 10 (the SDK's smallest custom pair), a
 *   pruned height is refused with cosmos-sdk baseapp CreateQueryContext's error on each transport.
 */
import * as grpc from '@grpc/grpc-js';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import t from 'tap';
import { Query as BankQuery, QueryBalanceRequestSchema, QueryBalanceResponseSchema } from '../../src/gen/chain/bank/v1beta1/query_pb.js';
import { startTestNode, waitHeight, type TestNode } from '../helpers/inproc.js';
import { commitTx, DENOM, DEV_BALANCE, FEE, FRESH, rpc, S0 } from '../helpers/seed.js';
import { buildTx, msgSend } from '../helpers/txsign.js';

const BALANCE_PATH = '/chain.bank.v1beta1.Query/Balance';

interface Answer {
  /** The balance amount, or undefined on an error. */
  amount?: string;
  /** The height the server says it served. */
  height?: string;
  /** Error: gRPC code / HTTP status / ABCI code, and the message. */
  code?: number;
  message?: string;
}

function grpcBalance(tn: TestNode, address: string, height: bigint): Promise<Answer> {
  const client = new grpc.Client(`127.0.0.1:${tn.grpcPort}`, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  md.set('x-cosmos-block-height', String(height));
  const req = Buffer.from(toBinary(QueryBalanceRequestSchema, create(QueryBalanceRequestSchema, { address, denom: DENOM })));
  return new Promise((resolve) => {
    let headers: grpc.Metadata | undefined;
    const call = client.makeUnaryRequest(
      `/${BankQuery.typeName}/${BankQuery.method.balance.name}`,
      (b: Buffer) => b,
      (b: Buffer) => b,
      req,
      md,
      (err, bytes) => {
        client.close();
        const height = (headers ?? err?.metadata)?.get('x-cosmos-block-height')[0] as string | undefined;
        if (err) resolve({ code: err.code, message: err.details, height });
        else resolve({ amount: fromBinary(QueryBalanceResponseSchema, bytes!).balance?.amount, height });
      },
    );
    call.on('metadata', (m) => (headers = m));
  });
}

async function restBalance(tn: TestNode, address: string, height: bigint, via: 'header' | 'param'): Promise<Answer> {
  const url = `http://127.0.0.1:${tn.restPort}/chain/bank/v1beta1/balances/${address}/by_denom?denom=${DENOM}${via === 'param' ? `&height=${height}` : ''}`;
  const r = await fetch(url, via === 'header' ? { headers: { 'x-cosmos-block-height': String(height) } } : {});
  const body = (await r.json()) as { balance?: { amount: string }; code?: number; message?: string };
  const h = r.headers.get('x-cosmos-block-height') ?? undefined;
  t.equal(r.headers.get('grpc-metadata-x-cosmos-block-height') ?? undefined, h, 'REST: both height headers agree');
  if (r.status !== 200) return { code: r.status, message: `${body.code}: ${body.message}`, height: h };
  return { amount: body.balance?.amount, height: h };
}

async function abciBalance(tn: TestNode, address: string, height: bigint): Promise<Answer> {
  const data = Buffer.from(toBinary(QueryBalanceRequestSchema, create(QueryBalanceRequestSchema, { address, denom: DENOM }))).toString('hex');
  const { response } = await rpc(tn, 'abci_query', { path: BALANCE_PATH, data, height: String(height), prove: false });
  if (response.code !== 0) return { code: response.code, message: `${response.codespace}: ${response.log}`, height: response.height };
  return { amount: fromBinary(QueryBalanceResponseSchema, Buffer.from(response.value, 'base64')).balance?.amount, height: response.height };
}

t.test('a balance at h-1 and at h, over gRPC, REST and abci_query', async (t) => {
  const tn = await startTestNode();
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n, 120_000);
  const chainId = tn.ctx.genesis.chainId;
  const sent = await commitTx(
    tn,
    buildTx({ chainId, msgs: [msgSend(S0.bech32, FRESH.bech32, [{ denom: DENOM, amount: 1000 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 0n }], fee: FEE }).bytes,
  );
  const h = sent.height;
  // Later blocks must not change what h-1 and h answer.
  await waitHeight(tn, h + 3n, 120_000);
  const before = DEV_BALANCE.toString();
  const after = (DEV_BALANCE - 1000n - 5000n).toString();
  for (const [height, s0, fresh] of [
    [h - 1n, before, '0'],
    [h, after, '1000'],
  ] as const) {
    const hs = String(height);
    t.same(await grpcBalance(tn, S0.bech32, height), { amount: s0, height: hs }, `gRPC S0 at ${height}`);
    t.same(await grpcBalance(tn, FRESH.bech32, height), { amount: fresh, height: hs }, `gRPC FRESH at ${height}`);
    t.same(await restBalance(tn, S0.bech32, height, 'header'), { amount: s0, height: hs }, `REST (header) S0 at ${height}`);
    t.same(await restBalance(tn, FRESH.bech32, height, 'param'), { amount: fresh, height: hs }, `REST (?height=) FRESH at ${height}`);
    t.same(await abciBalance(tn, S0.bech32, height), { amount: s0, height: hs }, `abci_query S0 at ${height}`);
    t.same(await abciBalance(tn, FRESH.bech32, height), { amount: fresh, height: hs }, `abci_query FRESH at ${height}`);
  }
  // Height 1 (the genesis state plus block 1) is still there with the default pruning.
  t.same(await grpcBalance(tn, S0.bech32, 1n), { amount: before, height: '1' }, 'the first height');
});

t.test('pruning = custom: a pruned height gets the SDK error on every transport', async (t) => {
  const tn = await startTestNode({ flags: { pruning: 'custom', 'pruning-keep-recent': 2, 'pruning-interval': 10 } });
  t.teardown(() => tn.close());
  // At height 20 every version up to 20-2-1 = 17 is pruned (store/pruning manager.go).
  await waitHeight(tn, 20n, 180_000);
  const latest = '(\\d+)';
  const text = `failed to load state at height 5; version does not exist \\(latest height: ${latest}\\)`;

  const g = await grpcBalance(tn, S0.bech32, 5n);
  t.equal(g.code, grpc.status.UNKNOWN, 'gRPC: SDK errors carry Unknown');
  t.match(g.message, new RegExp(`^invalid request: ${text}$`));
  // baseapp/grpcserver.go sets the height header only once CreateQueryContext has succeeded.
  t.equal(g.height, undefined, 'no height header on a refused height');

  for (const via of ['header', 'param'] as const) {
    const r = await restBalance(tn, S0.bech32, 5n, via);
    t.equal(r.code, 500, `REST (${via}): Unknown is HTTP 500`);
    t.match(r.message, new RegExp(`^2: invalid request: ${text}$`));
  }

  const a = await abciBalance(tn, S0.bech32, 5n);
  t.equal(a.code, 18);
  t.match(a.message, new RegExp(`^sdk: ${text}: invalid request$`));

  // The latest height still answers (the header says which one).
  const now = tn.ctx.storage.blocks.height();
  const ok = await grpcBalance(tn, S0.bech32, now);
  t.same(ok, { amount: DEV_BALANCE.toString(), height: String(now) });
});
