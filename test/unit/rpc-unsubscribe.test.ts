/**
 * Websocket `unsubscribe` (cometbft: rpc/core/events.go Unsubscribe, libs/pubsub Unsubscribe;
 * cometbft/cometbft:rpc/jsonrpc/server/ws_handler.go): matched on the canonical query (either spelling of the event key),
 * `subscription not found`, parse errors, other subscriptions untouched, refused over HTTP, and
 * every subscription of a connection removed when it closes.
 */
import t, { type Test } from 'tap';
import { subscriptionsFor } from '../../src/rpc/node/methods/events.js';
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

t.test('unsubscribe stops the events of that query only', async (t) => {
  const tn = await startTestNode();
  t.teardown(() => tn.close());
  const c = await open(tn, t);
  t.same((await c.call('blk', 'subscribe', { query: "node.event='NewBlock'" })).result, {});
  t.same((await c.call('hdr', 'subscribe', { query: "node.event = 'NewBlockHeader'" })).result, {});
  t.ok(await c.event('blk', 10_000), 'NewBlock events arrive');
  t.ok(await c.event('hdr', 10_000), 'NewBlockHeader events arrive');
  t.equal(subscriptionsFor(tn.ctx).stats().subscriptions, 2);

  // Another spelling of the same query: same canonical form, so it matches.
  const reply = await c.call('u', 'unsubscribe', { query: "tm.event = 'NewBlock'" });
  t.same(reply, { jsonrpc: '2.0', id: 'u', result: {} }, 'the reply is an empty result');
  t.equal(subscriptionsFor(tn.ctx).stats().subscriptions, 1);
  // Nothing of that subscription follows the reply on the wire.
  const before = c.all.indexOf(reply);
  t.ok(before >= 0);
  // Three blocks' headers arrive on this connection after the reply (the other subscription goes
  // on); a NewBlock event of those blocks would have come with them.
  await until('three NewBlockHeader events after the reply', () => c.all.slice(before + 1).filter((m) => m.id === 'hdr').length >= 3);
  const after = c.all.slice(before + 1);
  t.ok(after.filter((m) => m.id === 'hdr').length >= 3, 'the other subscription goes on');
  t.equal(after.filter((m) => m.id === 'blk').length, 0, 'no NewBlock event after unsubscribe');

  t.same((await c.call('again', 'subscribe', { query: "node.event='NewBlock'" })).result, {}, 'the query can be subscribed again');
  t.equal((await c.event('again', 10_000)).result.data.type, 'consensus/event/NewBlock');
});

t.test('unsubscribe errors', async (t) => {
  const tn = await startTestNode();
  t.teardown(() => tn.close());
  const c = await open(tn, t);
  t.same((await c.call(1, 'unsubscribe', { query: "node.event='NewBlock'" })).error, err('subscription not found'), 'never subscribed');
  t.same((await c.call(2, 'subscribe', { query: "node.event='NewBlock'" })).result, {});
  t.same((await c.call(3, 'unsubscribe', { query: "node.event='Tx'" })).error, err('subscription not found'), 'another query');
  t.same(
    (await c.call(4, 'unsubscribe', { query: "node.event='NewBlock' AND tx.height > 1" })).error,
    err('subscription not found'),
    'a longer query is a different query',
  );
  t.same(
    (await c.call(5, 'unsubscribe', { query: 'tm.event  NewBlock' })).error,
    err('failed to parse query: offset 10: got tag, wanted <= operator, >= operator, < operator, > operator, = operator, CONTAINS operator or EXISTS operator'),
    'a malformed query',
  );
  const other = await open(tn, t);
  t.same((await other.call(6, 'unsubscribe', { query: "node.event='NewBlock'" })).error, err('subscription not found'), "another client's subscription is not found");
  t.same((await c.call(7, 'unsubscribe', ["node.event='NewBlock'"])).result, {}, 'positional params');
  t.same((await c.call(8, 'unsubscribe', ["node.event='NewBlock'"])).error, err('subscription not found'), 'twice');

  const res = await fetch(`${tn.base}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'unsubscribe', params: { query: "node.event='NewBlock'" } }),
  });
  t.same(await res.json(), { jsonrpc: '2.0', id: 9, error: { code: -32601, message: 'Method not found' } }, 'refused over HTTP');
});

t.test('closing the websocket removes its subscriptions', async (t) => {
  // Two websocket clients fit: the indexer service takes the third slot (as on CometBFT's bus).
  const tn = await startTestNode({ flags: { 'rpc.max_subscription_clients': 3 } });
  t.teardown(() => tn.close());
  const a = await open(tn, t);
  const b = await open(tn, t);
  const c = await open(tn, t);
  t.same((await a.call(1, 'subscribe', { query: "node.event='NewBlock'" })).result, {});
  t.same((await a.call(2, 'subscribe', { query: "node.event='NewBlockHeader'" })).result, {});
  t.same((await b.call(1, 'subscribe', { query: "node.event='NewBlock'" })).result, {});
  t.same((await c.call(1, 'subscribe', { query: "node.event='NewBlock'" })).error, err('max_subscription_clients 3 reached'));
  t.same(subscriptionsFor(tn.ctx).stats().subscriptions, 3);
  a.close();
  await a.ws.closed;
  const deadline = Date.now() + 30_000; // generous: the loop ends as soon as it sees it
  while (subscriptionsFor(tn.ctx).stats().subscriptions !== 1 && Date.now() < deadline) await sleep(10);
  t.same(subscriptionsFor(tn.ctx).stats().subscriptions, 1, "both of a's subscriptions are gone");
  t.same(subscriptionsFor(tn.ctx).stats().clients, 1, 'one client left');
  t.same((await c.call(2, 'subscribe', { query: "node.event='NewBlock'" })).result, {}, 'the client slot is free again');
  t.ok(await c.event(2, 10_000));
  t.ok(await b.event(1, 10_000), 'the other client was not affected');
});
