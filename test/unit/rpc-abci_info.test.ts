/**
 * Node RPC `abci_info` (cometbft: rpc/core/abci.go ABCIInfo): the app's ResponseInfo under
 * cmtjson, where every field is `omitempty` (zero values disappear; int64 as strings; the app
 * hash base64). Always cacheable (routes.go). Over URI, JSON-RPC and websocket; shape checked
 * against the `abci_info` fixture.
 */
import { VERSION } from '../../src/version.js';
import t from 'tap';
import { startTestNode, waitAtRest, waitHeight } from '../helpers/inproc.js';
import { FIXTURES, viaPost, nodeOk3 as ok3, shape } from '../helpers/rpc3.js';

const CACHED = 'public, max-age=86400';

t.test('abci_info on a running chain', async (t) => {
  const tn = await startTestNode({ flags: { 'consensus.create_empty_blocks': false } });
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);
  // At rest: the proof block after an app-hash change has come, and nothing follows without txs.
  await waitAtRest(tn);
  const r = await ok3(t, tn, 'abci_info', '', {});
  t.same(r.post, r.uri);
  t.same(r.ws, r.uri);
  t.same(r.cache, [CACHED, CACHED], 'cacheable over URI and JSON-RPC');
  const state = tn.ctx.consensus.getState();
  t.same(r.uri, {
    response: {
      data: 'chaind',
      version: VERSION,
      last_block_height: String(state.lastBlockHeight),
      last_block_app_hash: Buffer.from(state.appHash).toString('base64'),
    },
  });
  t.same(Object.keys(r.uri.response), ['data', 'version', 'last_block_height', 'last_block_app_hash'], 'ResponseInfo order; app_version 0 omitted');
  // The fixture's app has app_version 1; here it is 0 and omitempty drops it.
  const fx = { ...FIXTURES['abci_info'].result.response };
  delete fx.app_version;
  t.same(shape(r.uri.response), shape(fx), 'fixture shape');
});

t.test('abci_info before the first block: height and app hash as the app reports them', async (t) => {
  const tn = await startTestNode({ timeoutCommit: '60s' });
  t.teardown(() => tn.close());
  const r = await ok3(t, tn, 'abci_info', '', {});
  const info = await tn.ctx.app.info();
  t.equal(info.lastBlockHeight, 0n);
  const want: Record<string, string> = { data: 'chaind', version: VERSION };
  if (info.lastBlockAppHash.length > 0) want['last_block_app_hash'] = Buffer.from(info.lastBlockAppHash).toString('base64');
  t.same(r.uri.response, want, 'last_block_height 0 is omitted');
  t.notOk('last_block_height' in r.uri.response);
  t.same([r.post, r.ws], [r.uri, r.uri]);
  const bad = await viaPost(tn, 'abci_info', ['x']);
  t.same(bad.body.error, { code: -32602, message: 'Invalid params', data: 'error converting json params to arguments: expected 0 parameters ([]), got 1 ([[34 120 34]])' });
});
