/**
 * Node RPC `net_info` (cometbft: rpc/core/net.go NetInfo; node/node.go Listeners/IsListening):
 * `listening`, `listeners` (`Listener(@<p2p.external_address>)`), `n_peers` as a string and the
 * peer list. A lone in-process node listens (127.0.0.1:0) and has no peers; net_info with real
 * peers is checked by test/e2e/p2p-faults.test.ts. Over URI,
 * JSON-RPC and websocket, shape checked against the `net_info` fixture.
 */
import t from 'tap';
import { startTestNode } from '../helpers/inproc.js';
import { FIXTURES, viaPost, nodeOk3 as ok3, shape } from '../helpers/rpc3.js';

t.test('net_info', async (t) => {
  const tn = await startTestNode({ flags: { 'p2p.external_address': '203.0.113.7:26656' } });
  t.teardown(() => tn.close());

  await t.test('the same answer over the three transports, fixture shape', async (t) => {
    const r = await ok3(t, tn, 'net_info', '', {});
    t.same(r.post, r.uri);
    t.same(r.ws, r.uri);
    t.same(r.uri, { listening: true, listeners: ['Listener(@203.0.113.7:26656)'], n_peers: '0', peers: [] });
    t.same(Object.keys(r.uri), ['listening', 'listeners', 'n_peers', 'peers'], 'field order of ResultNetInfo');
    t.same(shape(r.uri), shape(FIXTURES['net_info'].result), 'fixture shape');
    t.same(r.cache, [null, null], 'not cacheable');
  });

  await t.test('no parameters: positional params must be empty, named ones are ignored', async (t) => {
    const named = await viaPost(tn, 'net_info', { foo: 'bar' });
    t.equal(named.body.result.n_peers, '0');
    const pos = await viaPost(tn, 'net_info', ['x']);
    t.same(pos.body.error, { code: -32602, message: 'Invalid params', data: 'error converting json params to arguments: expected 0 parameters ([]), got 1 ([[34 120 34]])' });
  });
});

t.test('net_info: an empty external_address gives Listener(@), as in the fixture', async (t) => {
  const tn = await startTestNode();
  t.teardown(() => tn.close());
  const r = await viaPost(tn, 'net_info', {});
  t.same(r.body.result.listeners, FIXTURES['net_info'].result.listeners);
});
