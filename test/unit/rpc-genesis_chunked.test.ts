/**
 * Node RPC `genesis_chunked` (cometbft: rpc/core/net.go GenesisChunked, env.go
 * InitGenesisChunks): the compact genesis JSON cut into 16 MiB chunks, chunk `chunk` (uint,
 * default 0) as base64 with `chunk` and `total` as strings; `there are %d chunks, %d is invalid`
 * (the first number is the last index) past the end. Always cacheable (routes.go). Over URI,
 * JSON-RPC and websocket.
 */
import t from 'tap';
import { waitHeight } from '../helpers/inproc.js';
import { CACHED, startNode, viaUri, viaPost, ok3, err3, call3 } from '../helpers/rpc3.js';

t.test('genesis_chunked', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);

  await t.test('a small genesis is one chunk', async (t) => {
    const r = await ok3(t, tn, 'genesis_chunked', {}, {}, true);
    t.same(Object.keys(r), ['chunk', 'total', 'data']);
    t.same([r.chunk, r.total], ['0', '1']);
    const text = Buffer.from(r.data, 'base64').toString('utf8');
    const genesis = await viaUri(tn, 'genesis', {});
    t.same(JSON.parse(text), genesis.body.result.genesis, 'the chunk is the genesis document');
    t.notOk(/\n/.test(text), 'compact JSON, as cmtjson.Marshal writes it');
    const zero = await ok3(t, tn, 'genesis_chunked', { chunk: '0' }, { chunk: '0' }, true);
    t.same(zero, r, 'chunk 0 given');
    await err3(t, tn, 'genesis_chunked', { chunk: '1' }, { chunk: '1' }, 'there are 0 chunks, 1 is invalid');
    // int(chunk) wraps to -1, passes the bounds check and panics on genChunks[-1]: the recover
    // layer answers HTTP 500, -32603, id -1 on every transport.
    const wrapped = await call3(tn, 'genesis_chunked', { chunk: '18446744073709551615' }, { chunk: '18446744073709551615' });
    const panic = { code: -32603, message: 'Internal error', data: 'runtime error: index out of range [-1]' };
    t.same([wrapped.uri.status, wrapped.uri.body.id, wrapped.uri.body.error], [500, -1, panic], 'URI: a recovered panic');
    t.same([wrapped.post.status, wrapped.post.body.id, wrapped.post.body.error], [500, -1, panic], 'JSON-RPC: a recovered panic');
    t.same([wrapped.ws.id, wrapped.ws.error], [-1, panic], 'websocket: a recovered panic');
    const negative = await viaUri(tn, 'genesis_chunked', { chunk: '-1' });
    t.same([negative.status, negative.body.error?.code], [500, -32602], 'chunk is a uint');
  });

  await t.test('a large genesis spans chunks of 16 MiB', async (t) => {
    const original = tn.ctx.genesis;
    tn.ctx.genesis = { ...original, appState: { blob: 'y'.repeat(17 * 1024 * 1024) } };
    t.teardown(() => void (tn.ctx.genesis = original));
    // The 16 MiB chunk once (JSON-RPC), the short tail over all three transports.
    const first = await viaPost(tn, 'genesis_chunked', {});
    t.equal(first.cache, CACHED);
    const c0 = first.body.result;
    const c1 = await ok3(t, tn, 'genesis_chunked', { chunk: '1' }, { chunk: '1' }, true);
    t.same([c0.chunk, c0.total, c1.chunk, c1.total], ['0', '2', '1', '2']);
    const b0 = Buffer.from(c0.data, 'base64');
    t.equal(b0.length, 16 * 1024 * 1024, 'the first chunk is 16 MiB');
    const doc = JSON.parse(Buffer.concat([b0, Buffer.from(c1.data, 'base64')]).toString('utf8'));
    t.equal(doc.app_state.blob.length, 17 * 1024 * 1024, 'the chunks join into the document');
    t.equal(doc.chain_id, 'inproc-1');
    await err3(t, tn, 'genesis_chunked', { chunk: '2' }, { chunk: '2' }, 'there are 1 chunks, 2 is invalid');
  });
});
