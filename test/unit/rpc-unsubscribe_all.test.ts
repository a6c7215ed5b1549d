/**
 * Websocket `unsubscribe_all` (cometbft: rpc/core/events.go UnsubscribeAll, libs/pubsub
 * UnsubscribeAll; cometbft/cometbft:rpc/jsonrpc/server/ws_handler.go): every query of the calling client ends, other
 * clients are untouched, `subscription not found` when there is nothing to remove, the client
 * slot is freed, and the method is refused over HTTP.
 */
import t, { type Test } from 'tap';
import { subscriptionsFor } from '../../src/rpc/node/methods/events.js';
import { bridgeConsensusEvents } from '../../src/events/consensus-events.js';
import { startTestNode, type TestNode } from '../helpers/inproc.js';
import { EventClient, sleep } from '../helpers/subscriber.js';

const err = (data: string) => ({ code: -32603, message: 'Internal error', data });

async function open(tn: TestNode, t: Test): Promise<EventClient> {
  const c = await EventClient.open(tn.rpcPort);
  t.teardown(() => c.close());
  return c;
}

/** Polls `cond` until it holds; fails after a generous deadline. */
async function until(what: string, cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

t.test('unsubscribe_all ends every subscription of the client', async (t) => {
  const tn = await startTestNode();
  t.teardown(() => tn.close());
  // Idempotent: a no-op once the composition root bridges consensus events itself.
  bridgeConsensusEvents(tn.ctx.consensus, tn.ctx.bus);
  const a = await open(tn, t);
  const b = await open(tn, t);
  const queries = ["node.event='NewBlock'", "node.event='NewBlockHeader'", "tm.event='NewRoundStep'"];
  for (const [i, q] of queries.entries()) t.same((await a.call(i, 'subscribe', { query: q })).result, {}, q);
  t.same((await b.call('b', 'subscribe', { query: "node.event='NewBlock'" })).result, {});
  for (let i = 0; i < queries.length; i++) t.ok(await a.event(i, 10_000), `events for ${queries[i]}`);
  t.same(subscriptionsFor(tn.ctx).stats(), { ...subscriptionsFor(tn.ctx).stats(), clients: 2, subscriptions: 4 });

  const reply = await a.call('all', 'unsubscribe_all');
  t.same(reply, { jsonrpc: '2.0', id: 'all', result: {} }, 'the reply is an empty result');
  t.same(subscriptionsFor(tn.ctx).stats().subscriptions, 1, "only the other client's subscription is left");
  t.same(subscriptionsFor(tn.ctx).stats().clients, 1);

  const before = a.all.indexOf(reply);
  t.ok(before >= 0);
  // The other client receives three more blocks; then a round trip on `a` puts its reply behind
  // anything the server had pushed to `a` by then.
  const bBefore = b.pending('b').length;
  await until('three more NewBlock events on the other client', () => b.pending('b').length >= bBefore + 3);
  const bEvents = b.pending('b').length - bBefore;
  t.ok(bEvents >= 3, `the other client keeps receiving (${bEvents})`);
  const again = await a.call('again', 'unsubscribe_all', {});
  t.same(again.error, err('subscription not found'), 'nothing left to remove');
  t.same(a.all.slice(before + 1), [again], 'nothing follows the reply but the next reply: no events after unsubscribe_all');
  t.same((await a.call('sub', 'subscribe', { query: queries[0] })).result, {}, 'the client may subscribe again');
  t.ok(await a.event('sub', 10_000));
});

t.test('unsubscribe_all without subscriptions, freed client slots, HTTP', async (t) => {
  // One websocket client fits: the indexer service takes the other slot.
  const tn = await startTestNode({ flags: { 'rpc.max_subscription_clients': 2 } });
  t.teardown(() => tn.close());
  const a = await open(tn, t);
  const b = await open(tn, t);
  t.same((await a.call(1, 'unsubscribe_all')).error, err('subscription not found'), 'never subscribed');
  t.same((await a.call(2, 'subscribe', { query: "node.event='NewBlock'" })).result, {});
  t.same((await b.call(1, 'unsubscribe_all')).error, err('subscription not found'), "another client's subscriptions are not its own");
  t.same((await b.call(2, 'subscribe', { query: "node.event='NewBlock'" })).error, err('max_subscription_clients 2 reached'));
  t.same((await a.call(3, 'unsubscribe_all')).result, {});
  t.same(subscriptionsFor(tn.ctx).stats().clients, 0, 'the client no longer counts');
  t.same((await b.call(3, 'subscribe', { query: "node.event='NewBlock'" })).result, {}, 'so another client fits');

  const res = await fetch(`${tn.base}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'unsubscribe_all' }),
  });
  t.equal(res.status, 200);
  t.same(await res.json(), { jsonrpc: '2.0', id: 4, error: { code: -32601, message: 'Method not found' } }, 'refused over HTTP JSON-RPC');
  const uri = await fetch(`${tn.base}/unsubscribe_all`);
  t.equal(uri.status, 404, 'and over URI');
});
