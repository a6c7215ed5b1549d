/**
 * Node RPC `abci_query` (cometbft: rpc/core/abci.go ABCIQuery): `path` (string), `data`
 * (HexBytes: hex without 0x in JSON-RPC, 0x-hex or "quoted" over URI), `height` (0 = latest) and
 * `prove` go to the app as given; the app's ResponseQuery comes back under jsonpb (every field,
 * proto order, int64 as strings, empty bytes null, `proofOps`). The app's refusals are results
 * with a code, not errors. Over URI, JSON-RPC and websocket; shape checked against the
 * `abci_query_with_existing_key` fixture.
 */
import { devAccounts } from '../../src/keys/devaccounts.js';
import { VERSION } from '../../src/version.js';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { QueryBalanceRequestSchema, QueryBalanceResponseSchema } from '../../src/gen/chain/bank/v1beta1/query_pb.js';
import t from 'tap';
import { startTestNode, waitAtRest, waitHeight } from '../helpers/inproc.js';
import { FIXTURES, nodeViaUri as viaUri, viaPost, viaWs, nodeOk3 as ok3, nodeErr3 as err3, shape } from '../helpers/rpc3.js';

const FIELDS = ['code', 'log', 'info', 'index', 'key', 'value', 'proofOps', 'height', 'codespace'];
const [ALICE] = devAccounts();

t.test('abci_query', async (t) => {
  const tn = await startTestNode({ flags: { 'consensus.create_empty_blocks': false } });
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);
  // At rest (no proof block due, no txs), so H stays the latest height for every subtest.
  await waitAtRest(tn);
  const H = String(tn.ctx.storage.blocks.height());

  await t.test('/app/version: the version as value, at the latest height', async (t) => {
    const r = await ok3(t, tn, 'abci_query', 'path="/app/version"', { path: '/app/version' });
    const want = { response: { code: 0, log: '', info: '', index: '0', key: null, value: Buffer.from(VERSION).toString('base64'), proofOps: null, height: H, codespace: '' } };
    t.same([r.uri, r.post, r.ws], [want, want, want]);
    t.same(Object.keys(r.uri.response), FIELDS, 'jsonpb: every field, proto order');
    t.same(shape({ ...r.uri.response, key: 'k' }), shape(FIXTURES['abci_query_with_existing_key'].result.response), 'fixture shape');
    t.same(r.cache, [null, null], 'not cacheable');
  });

  await t.test('a bank balance: data is hex (0x over URI, bare in JSON-RPC), request and answer protobuf', async (t) => {
    // What CosmJS's QueryClient sends: the gRPC path and the protobuf request.
    const req = Buffer.from(toBinary(QueryBalanceRequestSchema, create(QueryBalanceRequestSchema, { address: ALICE!.bech32, denom: 'achain' })));
    const path = '/chain.bank.v1beta1.Query/Balance';
    const r = await ok3(t, tn, 'abci_query', `path="${path}"&data=0x${req.toString('hex')}&height=${H}`, { path, data: req.toString('hex'), height: H, prove: false });
    t.same([r.post, r.ws], [r.uri, r.uri]);
    t.equal(r.uri.response.code, 0);
    t.equal(r.uri.response.height, H);
    const value = fromBinary(QueryBalanceResponseSchema, Buffer.from(r.uri.response.value, 'base64'));
    t.same([value.balance?.denom, value.balance?.amount], ['achain', '1000000000000000000000000'], 'the dev account balance');
    // Upper-case hex is accepted too, and the "quoted" URI form carries raw bytes.
    const up = await viaPost(tn, 'abci_query', { path, data: req.toString('hex').toUpperCase() });
    t.same(up.body.result, r.uri);
    const quoted = await viaUri(tn, 'abci_query', `path="${path}"&data=${encodeURIComponent(JSON.stringify(req.toString('latin1')))}`);
    t.equal(quoted.status, 200, 'the "quoted" URI form is accepted');
  });

  await t.test("the app's refusals are results with a code", async (t) => {
    const unknown = await ok3(t, tn, 'abci_query', 'path="/no/such/path"', { path: '/no/such/path' });
    t.same(unknown.uri.response, { code: 6, log: 'unknown query path: unknown request', info: '', index: '0', key: null, value: null, proofOps: null, height: '0', codespace: 'sdk' });
    t.same([unknown.post, unknown.ws], [unknown.uri, unknown.uri]);
    const path = '/chain.bank.v1beta1.Query/Balance';
    const future = await viaPost(tn, 'abci_query', { path, height: String(BigInt(H) + 5n) });
    t.same([future.body.result.response.code, future.body.result.response.codespace, future.body.result.response.log], [26, 'sdk', 'cannot query with height in the future; please provide a valid height: invalid height']);
    const negative = await viaWs(tn, 'abci_query', { path, height: '-1' });
    t.same([negative.result.response.code, negative.result.response.log], [18, 'cannot query with height < 0; please provide a valid height: invalid request']);
    const bad = await viaPost(tn, 'abci_query', { path, data: 'ff' });
    t.not(bad.body.result.response.code, 0, 'undecodable request data is refused');
  });

  await t.test('argument errors are parameter errors', async (t) => {
    await err3(t, tn, 'abci_query', 'path="/app/version"&data=0xzz', { path: '/app/version', data: 'zz' }, "encoding/hex: invalid byte: U+007A 'z'", true);
    const h = await viaPost(tn, 'abci_query', { path: '/app/version', height: 1 });
    t.same(h.body.error?.data, 'error converting json params to arguments: invalid 64-bit integer encoding "1", expected string');
    const p = await viaUri(tn, 'abci_query', 'path=/app/version');
    t.same([p.status, p.body.error?.code], [500, -32602], 'an unquoted URI string is not JSON');
  });
});
