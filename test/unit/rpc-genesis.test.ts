/**
 * Node RPC `genesis` (cometbft: rpc/core/net.go Genesis, env.go InitGenesisChunks): the genesis
 * document (GenesisDoc JSON: int64 as strings, app_hash hex, key types from the names registry),
 * or `genesis response is large, please use the genesis_chunked API instead` when it takes more
 * than one 16 MiB chunk. Always cacheable (routes.go). Over URI, JSON-RPC and websocket, shapes
 * checked against the `genesis` fixture.
 */
import t from 'tap';
import { waitHeight } from '../helpers/inproc.js';
import { FIXTURES, CACHED, startNode, viaPost, ok3, err3, shapeDiff } from '../helpers/rpc3.js';

t.test('genesis', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);

  await t.test('the document', async (t) => {
    const r = await ok3(t, tn, 'genesis', {}, {}, true);
    t.same(Object.keys(r), ['genesis']);
    t.same(shapeDiff(r, FIXTURES['genesis'].result, { opaque: ['$.genesis.app_state'] }), [], 'fixture shape');
    t.same(r.genesis, JSON.parse(Buffer.from(tn.ctx.genesisBytes).toString('utf8')), 'the genesis file chaind init wrote, re-marshalled');
    t.same(
      Object.keys(r.genesis),
      ['genesis_time', 'chain_id', 'initial_height', 'consensus_params', 'validators', 'app_hash', 'app_state'],
      'GenesisDoc field order',
    );
    const v = r.genesis.validators[0];
    t.same([v.pub_key.type, v.power, v.name], ['consensus/PubKeyEd25519', '10', 'inproc']);
    t.same(r.genesis.consensus_params, FIXTURES['genesis'].result.genesis.consensus_params, 'default params as the fixture');
    t.same([r.genesis.initial_height, r.genesis.app_hash, r.genesis.chain_id], ['1', '', 'inproc-1']);
    t.ok(Array.isArray(r.genesis.app_state.bank.balances), 'app_state as written');
    const without = await viaPost(tn, 'genesis', null);
    t.same(without.body.result, r, 'params null');
    const positional = await viaPost(tn, 'genesis', []);
    t.same(positional.body.result, r, 'params []');
  });

  await t.test('more than one chunk: use genesis_chunked', async (t) => {
    const original = tn.ctx.genesis;
    tn.ctx.genesis = { ...original, appState: { blob: 'x'.repeat(16 * 1024 * 1024) } };
    t.teardown(() => void (tn.ctx.genesis = original));
    await err3(t, tn, 'genesis', {}, {}, 'genesis response is large, please use the genesis_chunked API instead');
    const again = await viaPost(tn, 'genesis', {});
    t.equal(again.cache, CACHED, 'the method\'s own error keeps JSON-RPC cacheable (CometBFT)');
  });
});
