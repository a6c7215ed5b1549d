/**
 * `chain.tx.v1beta1.Service` through the REST gateway (src/rpc/rest) on a real in-process node:
 * the routes of tx/v1beta1/service.proto (`/chain/tx/v1beta1/…`, `/cosmos/…` aliases), the SDK's
 * JSON (proto names, emitted defaults, int64 strings, base64 bytes, enum names, Any with `@type`)
 * of Tx, TxResponse, GasInfo/Result and the CometBFT block, and errors as grpc-gateway answers
 * them (`{code, message, details}` with HTTP 400 / 404 / 500 / 501). Called with fetch.
 *
 * The node decodes txs with the test-only JSON decoder (src/app/tx.ts): bank transfers between
 * funded dev accounts.
 */
import { createHash } from 'node:crypto';
import { create, toBinary } from '@bufbuild/protobuf';
import { AnySchema } from '@bufbuild/protobuf/wkt';
import t from 'tap';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { MsgSendSchema } from '../../src/gen/chain/bank/v1beta1/tx_pb.js';
import { PubKeySchema as Secp256k1PubKeySchema } from '../../src/gen/chain/crypto/secp256k1/keys_pb.js';
import { SignMode } from '../../src/gen/chain/tx/signing/v1beta1/signing_pb.js';
import { Service } from '../../src/gen/chain/tx/v1beta1/service_pb.js';
import { TxSchema, type Tx } from '../../src/gen/chain/tx/v1beta1/tx_pb.js';
import { latestOnlyHeights } from '../../src/rpc/grpc/app-bridge.js';
import { QueryRouter } from '../../src/app/query-router.js';
import { protoRegistry } from '../../src/proto/registry.js';
import { RestGateway } from '../../src/rpc/rest/gateway.js';
import { TX_SERVICE_REGISTER_OPTIONS, txServiceImpl } from '../../src/app/txservice/index.js';
import { startTestNode, waitHeight, type TestNode } from '../helpers/inproc.js';

const [ALICE, BOB, , DAVE] = devAccounts();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const sha256Hex = (b: Uint8Array) => createHash('sha256').update(b).digest('hex').toUpperCase();

let sent = 0;
/** A bank transfer as the JSON tx decoder reads it; the amount makes each one unique. */
function transferTx(from = ALICE!.bech32, to = BOB!.bech32, amount?: string): Uint8Array {
  sent++;
  const msg = { '@type': '/chain.bank.v1beta1.MsgSend', from_address: from, to_address: to, amount: [{ denom: 'achain', amount: amount ?? String(sent) }] };
  return new TextEncoder().encode(JSON.stringify({ body: { messages: [msg], memo: `r${sent}` }, auth_info: { fee: { amount: [], gas_limit: '200000' } } }));
}

/** A protobuf Tx with a MsgSend, a signer info, a fee and two signatures. */
function sampleTx(): Tx {
  const send = create(MsgSendSchema, { fromAddress: ALICE!.bech32, toAddress: BOB!.bech32, amount: [{ denom: 'achain', amount: '12345' }] });
  const pub = create(AnySchema, { typeUrl: '/cosmos.crypto.secp256k1.PubKey', value: toBinary(Secp256k1PubKeySchema, create(Secp256k1PubKeySchema, { key: ALICE!.publicKey })) });
  return create(TxSchema, {
    body: { messages: [create(AnySchema, { typeUrl: '/chain.bank.v1beta1.MsgSend', value: toBinary(MsgSendSchema, send) })], memo: 'via REST', timeoutHeight: 77n },
    authInfo: {
      signerInfos: [{ publicKey: pub, modeInfo: { sum: { case: 'single', value: { mode: SignMode.DIRECT } } }, sequence: 3n }],
      fee: { amount: [{ denom: 'achain', amount: '10' }], gasLimit: 150000n },
    },
    signatures: [new Uint8Array(64).fill(7)],
  });
}

/** sampleTx() in the SDK's JSON. */
function sampleTxJson() {
  return {
    body: {
      messages: [{ '@type': '/chain.bank.v1beta1.MsgSend', from_address: ALICE!.bech32, to_address: BOB!.bech32, amount: [{ denom: 'achain', amount: '12345' }] }],
      memo: 'via REST',
      timeout_height: '77',
      unordered: false,
      timeout_timestamp: null,
      extension_options: [],
      non_critical_extension_options: [],
    },
    auth_info: {
      signer_infos: [{ public_key: { '@type': '/cosmos.crypto.secp256k1.PubKey', key: b64(ALICE!.publicKey) }, mode_info: { single: { mode: 'SIGN_MODE_DIRECT' } }, sequence: '3' }],
      fee: { amount: [{ denom: 'achain', amount: '10' }], gas_limit: '150000', payer: '', granter: '' },
      tip: null,
    },
    signatures: [b64(new Uint8Array(64).fill(7))],
  };
}

const tn: TestNode = await startTestNode({ timeoutCommit: '100ms', txDecoder: 'json', flags: { 'consensus.create_empty_blocks': false } });
const router = new QueryRouter({ names: tn.ctx.names, registry: protoRegistry, resolveHeight: latestOnlyHeights(() => tn.ctx.app.lastBlockHeight) });
router.registerService(Service, txServiceImpl(tn.ctx), TX_SERVICE_REGISTER_OPTIONS);
const gw = new RestGateway({ address: 'tcp://127.0.0.1:0', router });
await gw.start();
t.teardown(async () => {
  gw.close();
  await tn.close();
});
const base = `http://127.0.0.1:${gw.port}`;
await waitHeight(tn, 1n);

type Json = Record<string, any>;
async function get(path: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; text: string; json: Json }> {
  const r = await fetch(base + path, init);
  const text = await r.text();
  return { status: r.status, headers: r.headers, text, json: text === '' ? {} : (JSON.parse(text) as Json) };
}
const post = (path: string, body: unknown) => get(path, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json' } });

async function waitIndexed(hash: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rec = tn.ctx.txIndexer!.getTx(hash);
    if (rec) return rec;
    if (Date.now() > deadline) throw new Error(`tx ${hash} not indexed`);
    await sleep(20);
  }
}

// ------------------------------------------------------------------------------------------------

t.test('POST /encode and /decode: the SDK JSON of a Tx round-trips through its bytes', async (t) => {
  const enc = await post('/chain/tx/v1beta1/encode', { tx: sampleTxJson() });
  t.equal(enc.status, 200, enc.text);
  t.same(enc.json, { tx_bytes: b64(toBinary(TxSchema, sampleTx())) }, 'the bytes of the same Tx built in protobuf');

  const dec = await post('/chain/tx/v1beta1/decode', { tx_bytes: enc.json.tx_bytes });
  t.equal(dec.status, 200, dec.text);
  t.same(dec.json, { tx: sampleTxJson() }, 'every field, defaults included, in the SDK JSON');
  t.equal(dec.headers.get('content-type'), 'application/json');

  // lowerCamel names are accepted on input; the upstream path spelling too.
  const camel = await post('/cosmos/tx/v1beta1/encode', { tx: { body: { messages: [], memo: 'm', timeoutHeight: '5' }, authInfo: {}, signatures: [] } });
  t.equal(camel.status, 200, camel.text);
  const back = await post('/cosmos/tx/v1beta1/decode', { txBytes: camel.json.tx_bytes });
  t.equal(back.json.tx.body.memo, 'm');
  t.equal(back.json.tx.body.timeout_height, '5');
  t.same(back.json.tx.auth_info, { signer_infos: [], fee: null, tip: null }, 'unset messages are null, lists []');
});

t.test('encode / decode errors', async (t) => {
  const none = await post('/chain/tx/v1beta1/encode', {});
  t.equal(none.status, 400);
  t.same(none.json, { code: 3, message: 'invalid empty tx', details: [] });
  const unknown = await post('/chain/tx/v1beta1/encode', { tx: { body: { messages: [{ '@type': '/chain.nope.Msg' }] } } });
  t.equal(unknown.status, 400, 'an unresolvable @type is refused while reading the body');
  const empty = await post('/chain/tx/v1beta1/decode', { tx_bytes: '' });
  t.equal(empty.status, 400);
  t.same(empty.json, { code: 3, message: 'invalid empty tx bytes', details: [] });
  const junk = await post('/chain/tx/v1beta1/decode', { tx_bytes: b64(Uint8Array.of(8, 1)) });
  t.equal(junk.status, 500, 'SDK errors are gRPC Unknown → HTTP 500');
  t.same(junk.json, { code: 2, message: 'tx parse error: expected 2 wire type, got 0', details: [] });
});

t.test('POST /simulate: gas_info and result in JSON; a failure keeps upstream text', async (t) => {
  const r = await post('/chain/tx/v1beta1/simulate', { tx_bytes: b64(transferTx(ALICE!.bech32, DAVE!.bech32, '3')) });
  t.equal(r.status, 200, r.text);
  t.equal(r.json.gas_info.gas_wanted, '200000');
  t.match(r.json.gas_info.gas_used, /^[1-9]\d*$/);
  t.same(Object.keys(r.json.result), ['data', 'log', 'events', 'msg_responses']);
  t.equal(r.json.result.log, '');
  t.same(r.json.result.msg_responses, [{ '@type': '/chain.bank.v1beta1.MsgSendResponse' }]);
  t.type(r.json.result.data, 'string', 'data: base64 of the TxMsgData');
  const msg = r.json.result.events.find((e: Json) => e.type === 'message');
  t.same(msg.attributes[0], { key: 'action', value: '/chain.bank.v1beta1.MsgSend', index: true });

  const poor = await post('/chain/tx/v1beta1/simulate', { tx_bytes: b64(transferTx(ALICE!.bech32, DAVE!.bech32, (10n ** 40n).toString())) });
  t.equal(poor.status, 500);
  t.equal(poor.json.code, 2);
  t.match(poor.json.message, /: insufficient funds With gas wanted: '200000' and gas used: '\d+' $/, 'trailing space and all');
  const empty = await post('/chain/tx/v1beta1/simulate', {});
  t.equal(empty.status, 400);
  t.same(empty.json, { code: 3, message: 'empty txBytes is not allowed', details: [] });
});

const broadcast: { tx: Uint8Array; hash: string } = { tx: transferTx(DAVE!.bech32, BOB!.bech32, '55'), hash: '' };
broadcast.hash = sha256Hex(broadcast.tx);

t.test('POST /txs: BroadcastTx SYNC; the removed BLOCK mode', async (t) => {
  const r = await post('/chain/tx/v1beta1/txs', { tx_bytes: b64(broadcast.tx), mode: 'BROADCAST_MODE_SYNC' });
  t.equal(r.status, 200, r.text);
  t.same(r.json, {
    tx_response: {
      height: '0',
      txhash: broadcast.hash,
      codespace: '',
      code: 0,
      data: '',
      raw_log: '',
      logs: [],
      info: '',
      gas_wanted: '0',
      gas_used: '0',
      tx: null,
      timestamp: '',
      events: [],
    },
  });
  const dup = await post('/chain/tx/v1beta1/txs', { tx_bytes: b64(broadcast.tx), mode: 2 });
  t.equal(dup.status, 200);
  t.equal(dup.json.tx_response.code, 19, 'tx already in mempool (enum given as a number)');
  t.equal(dup.json.tx_response.codespace, 'sdk');

  const block = await post('/chain/tx/v1beta1/txs', { tx_bytes: b64(transferTx()), mode: 'BROADCAST_MODE_BLOCK' });
  t.equal(block.status, 500);
  t.same(block.json, { code: 2, message: 'unsupported return type unspecified; supported types: sync, async', details: [] });
  const empty = await post('/chain/tx/v1beta1/txs', { mode: 'BROADCAST_MODE_SYNC' });
  t.equal(empty.status, 400);
  t.same(empty.json, { code: 3, message: 'invalid empty tx', details: [] });
  const async_ = await post('/cosmos/tx/v1beta1/txs', { tx_bytes: b64(transferTx(DAVE!.bech32, BOB!.bech32)), mode: 'BROADCAST_MODE_ASYNC' });
  t.equal(async_.status, 200);
  t.equal(async_.json.tx_response.code, 0);
  await waitIndexed(broadcast.hash);
});

t.test('GET /txs/{hash}: Tx and TxResponse in the SDK JSON', async (t) => {
  const rec = await waitIndexed(broadcast.hash);
  const r = await get(`/chain/tx/v1beta1/txs/${broadcast.hash}`);
  t.equal(r.status, 200, r.text);
  t.same(Object.keys(r.json), ['tx', 'tx_response']);
  const txJson = {
    body: {
      messages: [{ '@type': '/chain.bank.v1beta1.MsgSend', from_address: DAVE!.bech32, to_address: BOB!.bech32, amount: [{ denom: 'achain', amount: '55' }] }],
      memo: JSON.parse(Buffer.from(broadcast.tx).toString()).body.memo,
      timeout_height: '0',
      unordered: false,
      timeout_timestamp: null,
      extension_options: [],
      non_critical_extension_options: [],
    },
    auth_info: { signer_infos: [], fee: { amount: [], gas_limit: '200000', payer: '', granter: '' }, tip: null },
    signatures: [],
  };
  t.same(r.json.tx, txJson);
  const res = r.json.tx_response;
  t.same(Object.keys(res), ['height', 'txhash', 'codespace', 'code', 'data', 'raw_log', 'logs', 'info', 'gas_wanted', 'gas_used', 'tx', 'timestamp', 'events']);
  t.equal(res.height, String(rec.height));
  t.equal(res.txhash, broadcast.hash);
  t.equal(res.code, 0);
  t.equal(res.data, Buffer.from(rec.result.data).toString('hex').toUpperCase());
  t.same(res.logs, []);
  t.equal(res.gas_wanted, '200000');
  t.equal(res.gas_used, String(rec.result.gasUsed));
  t.same(res.tx, { '@type': '/chain.tx.v1beta1.Tx', ...txJson });
  t.match(res.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  const meta = tn.ctx.storage.blocks.loadBlockMeta(rec.height)!;
  t.equal(Date.parse(res.timestamp), Math.floor(Number(meta.header.time / 1_000_000n) / 1000) * 1000);
  t.ok(res.events.length > 0);
  t.ok(
    res.events.some((e: Json) => e.type === 'message' && e.attributes.some((a: Json) => a.key === 'sender' && a.value === DAVE!.bech32 && a.index === true)),
    'events with plain-string attributes',
  );

  const alias = await get(`/cosmos/tx/v1beta1/txs/${broadcast.hash.toLowerCase()}`);
  t.equal(alias.status, 200);
  t.equal(alias.json.tx_response.txhash, broadcast.hash);

  const nf = await get(`/chain/tx/v1beta1/txs/${'0'.repeat(64)}`);
  t.equal(nf.status, 404);
  t.same(nf.json, { code: 5, message: `tx not found: ${'0'.repeat(64)}`, details: [] });
  const bad = await get('/chain/tx/v1beta1/txs/xyz');
  t.equal(bad.status, 500);
  t.same(bad.json, { code: 2, message: "encoding/hex: invalid byte: U+0078 'x'", details: [] });
});

t.test('GET /txs?query=…: GetTxsEvent', async (t) => {
  // Three more transfers from DAVE, so DAVE has sent five (one above, one async, these three).
  const more = [transferTx(DAVE!.bech32, ALICE!.bech32), transferTx(DAVE!.bech32, ALICE!.bech32), transferTx(DAVE!.bech32, ALICE!.bech32)];
  for (const tx of more) t.equal((await post('/chain/tx/v1beta1/txs', { tx_bytes: b64(tx), mode: 'BROADCAST_MODE_SYNC' })).json.tx_response.code, 0);
  for (const tx of more) await waitIndexed(sha256Hex(tx));
  const q = encodeURIComponent(`message.sender='${DAVE!.bech32}'`);
  let all = await get(`/chain/tx/v1beta1/txs?query=${q}`);
  // The async transfer may still be on its way to a block.
  for (let i = 0; i < 100 && all.json.total !== '5'; i++) {
    await sleep(50);
    all = await get(`/chain/tx/v1beta1/txs?query=${q}`);
  }
  t.equal(all.status, 200, all.text);
  t.same(Object.keys(all.json), ['txs', 'tx_responses', 'pagination', 'total']);
  t.equal(all.json.total, '5');
  t.equal(all.json.pagination, null, 'the deprecated pagination is null');
  t.equal(all.json.txs.length, 5);
  const hashes = all.json.tx_responses.map((x: Json) => x.txhash);
  t.ok(hashes.includes(broadcast.hash));
  for (const tx of more) t.ok(hashes.includes(sha256Hex(tx)));

  const page = await get(`/chain/tx/v1beta1/txs?query=${q}&page=2&limit=2&order_by=ORDER_BY_DESC`);
  t.equal(page.status, 200, page.text);
  t.same(
    page.json.tx_responses.map((x: Json) => x.txhash),
    [...hashes].reverse().slice(2, 4),
    'page 2 of 2, descending',
  );
  t.equal(page.json.total, '5');
  const h = all.json.tx_responses[0].height;
  const atH = await get(`/chain/tx/v1beta1/txs?query=${encodeURIComponent(`tx.height=${h}`)}`);
  t.ok(atH.json.tx_responses.length >= 1);
  t.ok(atH.json.tx_responses.every((x: Json) => x.height === h));

  const empty = await get('/chain/tx/v1beta1/txs');
  t.equal(empty.status, 400);
  t.same(empty.json, { code: 3, message: 'query cannot be empty', details: [] });
  const bad = await get(`/chain/tx/v1beta1/txs?query=${encodeURIComponent("message.sender='x' AND")}`);
  t.equal(bad.status, 400);
  t.equal(bad.json.code, 3);
  t.match(bad.json.message, /^failed to search for txs: /);
  const out = await get(`/chain/tx/v1beta1/txs?query=${q}&page=4&limit=2`);
  t.equal(out.status, 500);
  t.same(out.json, { code: 13, message: 'failed to search for txs: page should be within [1, 3] range, given 4', details: [] });
});

t.test('GET /txs/block/{height}: GetBlockWithTxs in JSON, pagination from query parameters', async (t) => {
  const rec = await waitIndexed(broadcast.hash);
  const h = rec.height;
  const stored = tn.ctx.storage.blocks.loadBlock(h)!;
  const meta = tn.ctx.storage.blocks.loadBlockMeta(h)!;
  const n = stored.data.txs.length;
  const r = await get(`/chain/tx/v1beta1/txs/block/${h}`);
  t.equal(r.status, 200, r.text);
  t.same(Object.keys(r.json), ['txs', 'block_id', 'block', 'pagination']);
  t.same(r.json.block_id, { hash: b64(meta.blockId.hash), part_set_header: { total: meta.blockId.partSetHeader.total, hash: b64(meta.blockId.partSetHeader.hash) } });
  t.same(Object.keys(r.json.block), ['header', 'data', 'evidence', 'last_commit']);
  t.equal(r.json.block.header.height, String(h));
  t.equal(r.json.block.header.chain_id, 'inproc-1');
  t.match(r.json.block.header.time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  t.equal(r.json.block.header.app_hash, b64(stored.header.appHash), 'hashes in base64');
  t.same(r.json.block.data.txs, stored.data.txs.map(b64));
  t.same(r.json.block.evidence, { evidence: [] });
  t.equal(r.json.block.last_commit.height, String(h - 1n));
  t.same(r.json.pagination, { next_key: null, total: String(n) });
  t.equal(r.json.txs.length, n);
  t.ok(r.json.txs.some((x: Json) => x.body.messages[0].amount[0].amount === '55'));

  const off = await get(`/chain/tx/v1beta1/txs/block/${h}?pagination.offset=${n - 1}&pagination.limit=5`);
  t.equal(off.status, 200, off.text);
  t.equal(off.json.txs.length, 1, 'the last tx');
  t.equal(off.json.pagination.total, String(n));

  const latest = tn.ctx.app.lastBlockHeight;
  const future = await get(`/chain/tx/v1beta1/txs/block/${latest + 100n}`);
  t.equal(future.status, 500);
  t.equal(future.json.code, 2);
  t.match(future.json.message, new RegExp(`^invalid height: requested height ${latest + 100n} but height must not be less than 1 or greater than the current height \\d+$`));
  const range = await get(`/chain/tx/v1beta1/txs/block/${h}?pagination.offset=${n}`);
  t.equal(range.status, 500);
  t.same(range.json, { code: 2, message: `invalid request: out of range: cannot paginate ${n} txs with offset ${n} and limit 0`, details: [] });
  const word = await get('/chain/tx/v1beta1/txs/block/latest');
  t.equal(word.status, 400, 'a height that is not a number');
});

t.test('POST /encode/amino and /decode/amino', async (t) => {
  const e = await post('/chain/tx/v1beta1/encode/amino', { amino_json: '' });
  t.equal(e.status, 400);
  t.same(e.json, { code: 3, message: 'invalid empty tx json', details: [] });
  const e2 = await post('/chain/tx/v1beta1/encode/amino', { amino_json: '{"type":"chain-sdk/StdTx","value":{}}' });
  t.equal(e2.status, 200);
  t.equal(Buffer.from(e2.json.amino_binary, 'base64').toString('hex').slice(0, 8), '5b00dde6', 'StdTx amino prefix');
  const d = await post('/chain/tx/v1beta1/decode/amino', { amino_binary: b64(Uint8Array.of(1)) });
  t.equal(d.status, 400);
  t.equal(d.json.code, 3, 'malformed amino binary is InvalidArgument');
});
