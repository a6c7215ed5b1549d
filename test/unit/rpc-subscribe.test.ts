/**
 * Websocket `subscribe` (cometbft: rpc/core/events.go; cometbft/cometbft:rpc/jsonrpc/server/ws_handler.go; spec §4.1, §6)
 * on a real in-process node: notification shape against the fixtures `subscribe_newblock_0` and
 * `subscribe_txs_0`, every height in order, both spellings of the event key, limits and their
 * exact errors, refusal over HTTP, slow clients dropped while blocks keep coming, upstream names.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { EventBus } from '../../src/events/bus.js';
import { Subscriptions, type Notification, type Subscription } from '../../src/events/subscriptions.js';
import { subscriptionsFor } from '../../src/rpc/node/methods/events.js';
import { FakeSinkBase } from '../helpers/fake-sink.js';
import { startTestNode, waitHeight, type TestNode } from '../helpers/inproc.js';
import { EventClient, sleep, type RpcMessage } from '../helpers/subscriber.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = JSON.parse(fs.readFileSync(path.join(here, '../../../test/fixtures/cometbft-v038-kvstore.json'), 'utf8')) as Record<string, any>;

/** The key structure of a JSON value: objects keep their (sorted) keys, arrays their first item. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? [] : [shape(v[0])];
  if (v !== null && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) o[k] = shape((v as Record<string, unknown>)[k]);
    return o;
  }
  return v === null ? null : typeof v;
}

async function open(tn: TestNode, t: Test): Promise<EventClient> {
  const c = await EventClient.open(tn.rpcPort);
  t.teardown(() => c.close());
  return c;
}

const heightOf = (m: RpcMessage) => BigInt(m.result.data.value.block.header.height);

/** A Tx event as the executor publishes it (src/state/execution.ts fireEvents), from the fixture. */
function fixtureTxMessage() {
  const want = fixtures['subscribe_txs_0'].result;
  const tr = want.data.value.TxResult;
  const events = (tr.result.events as any[]).map((e) => ({
    type: e.type as string,
    attributes: (e.attributes as any[]).map((a) => ({ key: a.key as string, value: a.value as string, index: a.index as boolean })),
  }));
  const tx = new Uint8Array(Buffer.from(tr.tx, 'base64'));
  const hash = crypto.createHash('sha256').update(tx).digest('hex').toUpperCase();
  return {
    want,
    msg: {
      type: 'Tx',
      data: {
        height: BigInt(tr.height),
        index: 0,
        tx,
        result: { code: 0, data: new Uint8Array(0), log: '', info: '', gasWanted: 0n, gasUsed: 0n, events, codespace: '' },
      },
      attributes: { 'tx.hash': [hash], 'tx.height': [String(tr.height)] },
    },
  };
}

t.test('node.event NewBlock: every height in order, shapes as the fixture', async (t) => {
  const tn = await startTestNode({ timeoutCommit: '100ms' });
  t.teardown(() => tn.close());
  const c = await open(tn, t);
  const query = "node.event = 'NewBlock'";
  const reply = await c.call('nb', 'subscribe', { query });
  t.same(reply, { jsonrpc: '2.0', id: 'nb', result: {} }, 'the reply is an empty result');

  const got: RpcMessage[] = [];
  for (let i = 0; i < 12; i++) got.push(await c.event('nb', 10_000));
  const heights = got.map(heightOf);
  for (let i = 1; i < heights.length; i++) t.equal(heights[i], heights[0]! + BigInt(i), `height ${heights[i]} follows ${heights[i - 1]}`);

  const want = fixtures['subscribe_newblock_0'];
  const m = got.find((x) => heightOf(x) >= 2n)!;
  t.equal(m.jsonrpc, '2.0');
  t.equal(m.id, 'nb', 'pushed with the subscribe request id');
  t.same(Object.keys(m.result), ['query', 'data', 'events'], 'ResultEvent field order');
  t.equal(m.result.query, query, 'the query as sent');
  t.equal(m.result.data.type, want.result.data.type, 'consensus/event/NewBlock');
  t.same(m.result.events, want.result.events, 'events: only node.event');
  // 0.38's value, then the spec §6's result_begin_block and result_end_block (spec names only).
  t.same(Object.keys(m.result.data.value), ['block', 'block_id', 'result_finalize_block', 'result_begin_block', 'result_end_block']);
  const { result_begin_block: begin, result_end_block: end, ...v038 } = m.result.data.value;
  t.same(Object.keys(begin).filter((k) => k !== 'events'), [], 'result_begin_block: ResponseBeginBlock');
  t.same(end.validator_updates, null, 'result_end_block: no validator updates');
  for (const [name, r, mode] of [['begin', begin, 'BeginBlock'], ['end', end, 'EndBlock']] as const) {
    const all = (m.result.data.value.result_finalize_block.events ?? []) as Array<{ attributes: Array<{ key: string; value: string }> }>;
    const inMode = all.filter((e) => e.attributes.some((a) => a.key === 'mode' && a.value === mode));
    t.same(r.events ?? [], inMode, `${name}: the FinalizeBlock events marked mode=${mode}`);
  }
  // The kvstore app has version 1; chaind's dev genesis has app version 0, which the header omits.
  const ours = shape(v038) as any;
  const theirs = shape(want.result.data.value) as any;
  t.equal(m.result.data.value.block.header.version.block, '11');
  delete ours.block.header.version;
  delete theirs.block.header.version;
  t.same(ours, theirs, 'same JSON structure as subscribe_newblock_0');

  const h = heightOf(m);
  const stored = tn.ctx.storage.blocks.loadBlockMeta(h)!;
  t.equal(m.result.data.value.block_id.hash, Buffer.from(stored.blockId.hash).toString('hex').toUpperCase(), 'block_id is the stored block id');
  const resp = tn.ctx.storage.state.loadFinalizeBlockResponse(h)!;
  t.equal(m.result.data.value.result_finalize_block.app_hash, Buffer.from(resp.appHash).toString('base64'), 'app_hash base64');
});

t.test('tm.event spelling, already subscribed, Tx events as subscribe_txs_0', async (t) => {
  const tn = await startTestNode();
  t.teardown(() => tn.close());
  const c = await open(tn, t);
  t.same((await c.call(1, 'subscribe', { query: "tm.event='NewBlock'" })).result, {});
  const ev = await c.event(1, 10_000);
  t.equal(ev.result.query, "tm.event='NewBlock'", 'echoes the upstream spelling as sent');
  t.equal(ev.result.data.type, 'consensus/event/NewBlock');
  t.same(ev.result.events, { 'node.event': ['NewBlock'] }, 'the emitted key follows the names registry');

  const dup = await c.call(2, 'subscribe', { query: "node.event = 'NewBlock'" });
  t.same(dup.error, { code: -32603, message: 'Internal error', data: 'already subscribed' }, 'both spellings are one subscription');

  // Positional params work as for any method.
  t.same((await c.call(3, 'subscribe', ["node.event='Tx'"])).result, {});
  t.same((await c.call(4, 'subscribe', { query: "node.event='Tx' AND app.creator='Cosmoshi'" })).result, {});
  t.same((await c.call(5, 'subscribe', { query: "node.event='Tx' AND app.creator='nobody'" })).result, {});
  const { msg, want } = fixtureTxMessage();
  tn.ctx.bus.publish(msg);
  const tx = await c.event(3);
  t.equal(tx.result.data.type, want.data.type, 'consensus/event/Tx');
  t.same(tx.result.data.value, want.data.value, 'value equals subscribe_txs_0 (index 0 and zero fields omitted)');
  t.same(tx.result.events, want.events, 'events equal subscribe_txs_0 (non-indexed attributes included)');
  const tx4 = await c.event(4);
  t.same(tx4.result.data.value, want.data.value, 'a query on an app attribute matches');
  await sleep(300);
  t.equal(c.pending(5).length, 0, 'a query on another attribute value does not');
});

t.test('limits and errors', async (t) => {
  // Three clients, one of them the indexer service, as on CometBFT's bus
  // (state/txindex/indexer_service.go subscribes whenever an indexer is on).
  const tn = await startTestNode({ flags: { 'rpc.max_subscription_clients': 3, 'rpc.max_subscriptions_per_client': 2 } });
  t.teardown(() => tn.close());
  const a = await open(tn, t);
  const b = await open(tn, t);
  const c = await open(tn, t);
  const err = (data: string) => ({ code: -32603, message: 'Internal error', data });

  const malformed = await a.call('m', 'subscribe', { query: 'tm.event  NewBlock' });
  t.same(malformed.error, fixtures['subscribe_malformed'].error, 'malformed query: the fixture error');
  t.same((await a.call('e', 'subscribe', { query: '' })).error, err('failed to parse query: offset 0: EOF'), 'empty query');
  const long = "node.event='NewBlock' AND x.y='" + 'a'.repeat(500) + "'";
  t.same((await a.call('l', 'subscribe', { query: long })).error, err('maximum query length exceeded'), '> 512 bytes');

  t.same((await a.call(1, 'subscribe', { query: "node.event='NewBlock'" })).result, {});
  t.same((await a.call(2, 'subscribe', { query: "node.event='Vote'" })).result, {});
  t.same((await a.call(3, 'subscribe', { query: "node.event='Tx'" })).error, err('max_subscriptions_per_client 2 reached'));
  t.same((await b.call(1, 'subscribe', { query: "node.event='NewBlock'" })).result, {}, 'a second client');
  t.same((await c.call(1, 'subscribe', { query: "node.event='NewBlock'" })).error, err('max_subscription_clients 3 reached'), 'a third client');
  t.same(subscriptionsFor(tn.ctx).stats().clients, 2, 'websocket clients');
  t.same(subscriptionsFor(tn.ctx).numClients(), 3, 'and the indexer service');
  t.same(subscriptionsFor(tn.ctx).stats().subscriptions, 3);

  // rpc/core/events.go checks NumClients first, for every caller: with the clients limit reached
  // even a subscribed client gets that error, before its own limit and before the query is parsed.
  t.same((await a.call(4, 'subscribe', { query: 'malformed query' })).error, err('max_subscription_clients 3 reached'), 'clients limit first');

  t.same((await b.call(2, 'unsubscribe_all', {})).result, {});
  t.same((await c.call(2, 'subscribe', { query: "node.event='NewBlock'" })).result, {}, 'a freed client slot is reusable');
  const ev = await c.event(2, 10_000);
  t.equal(ev.result.data.type, 'consensus/event/NewBlock');
});

t.test('without an indexer, every client slot is free', async (t) => {
  const tn = await startTestNode({ flags: { 'rpc.max_subscription_clients': 1, 'tx_index.indexer': 'null' } });
  t.teardown(() => tn.close());
  const a = await open(tn, t);
  t.same((await a.call(1, 'subscribe', { query: "node.event='NewBlock'" })).result, {}, 'the one slot');
  t.equal(subscriptionsFor(tn.ctx).numClients(), 1);
});

t.test('over HTTP subscribe is refused as CometBFT does', async (t) => {
  const tn = await startTestNode();
  t.teardown(() => tn.close());
  const res = await fetch(`${tn.base}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'subscribe', params: { query: "node.event='NewBlock'" } }),
  });
  t.equal(res.status, 200, 'JSON-RPC over HTTP: 200');
  t.same(await res.json(), { jsonrpc: '2.0', id: 7, error: { code: -32601, message: 'Method not found' } });
  const uri = await fetch(`${tn.base}/subscribe?query=%22node.event%3D'NewBlock'%22`);
  t.equal(uri.status, 404, 'URI: 404');
  t.same(await uri.json(), { jsonrpc: '2.0', id: -1, error: { code: -32601, message: 'Method not found' } });
  t.equal(subscriptionsFor(tn.ctx).stats().subscriptions, 0, 'nothing subscribed');
});

/**
 * Publishes large Tx events (350 KB of JSON each) until the slow subscription is cancelled. Some
 * 8 MB go into the kernel's and the server's socket buffers before the subscription's own buffer
 * starts to fill, ~225 events in all: 4 s on an idle machine, several times that under load. The
 * slow client must stay connected meanwhile (WsClient.stopReading keeps the server's idle
 * timeout from closing it); if its connection is gone, its subscriptions ended silently and no
 * cancellation will come.
 */
async function floodUntilCanceled(tn: TestNode, t: Test, slow: EventClient): Promise<number> {
  const subs = subscriptionsFor(tn.ctx);
  const big = new Uint8Array(256 * 1024).fill(0x41);
  const result = { code: 0, data: new Uint8Array(0), log: '', info: '', gasWanted: 0n, gasUsed: 0n, events: [], codespace: '' };
  // A deadline for a broken build only: each turn ends as soon as the cancel happens.
  const deadline = Date.now() + 120_000;
  let n = 0;
  while (subs.stats().canceled === 0) {
    if (slow.ws.ended) {
      t.fail(`the slow client's connection closed before its subscription was cancelled (${n} events published)`);
      break;
    }
    if (Date.now() > deadline) {
      t.fail('the slow subscription was never cancelled');
      break;
    }
    tn.ctx.bus.publish({ type: 'Tx', data: { height: 1n, index: n++, tx: big, result }, attributes: {} });
    await sleep(2);
  }
  return n;
}

t.test('a client that stops reading is dropped; blocks and other subscribers go on', async (t) => {
  const tn = await startTestNode({ timeoutCommit: '100ms' });
  t.teardown(() => tn.close());
  const slow = await open(tn, t);
  const fast = await open(tn, t);
  const txReader = await open(tn, t);
  t.same((await slow.call('s', 'subscribe', { query: "node.event='Tx'" })).result, {});
  t.same((await fast.call('f', 'subscribe', { query: "node.event='NewBlock'" })).result, {});
  t.same((await txReader.call('r', 'subscribe', { query: "node.event='Tx'" })).result, {});
  slow.ws.stopReading(); // stops reading (but stays connected): the server's writes back up

  const h0 = tn.ctx.storage.blocks.height();
  const published = await floodUntilCanceled(tn, t, slow);
  const stats = subscriptionsFor(tn.ctx).stats();
  t.equal(stats.canceled, 1, 'the slow subscription was cancelled');
  t.ok(stats.dropped >= 200, `its buffer (200) was dropped (${stats.dropped})`);
  t.equal(stats.subscriptions, 2, 'the other two subscriptions remain');
  t.ok(published > 200, `${published} events published`);

  // Blocks keep coming and the reading clients keep receiving, in order.
  await waitHeight(tn, h0 + 5n);
  const first = heightOf(await fast.event('f', 10_000));
  for (let i = 1; i <= 5; i++) t.equal(heightOf(await fast.event('f', 10_000)), first + BigInt(i), 'the fast client gets the next height');
  t.ok(tn.ctx.storage.blocks.height() >= h0 + 5n, 'the chain kept growing');
  for (let i = 0; i < published; i++) {
    const m = await txReader.event('r', 10_000);
    if (m.result.data.value.TxResult.index !== i && !(i === 0 && m.result.data.value.TxResult.index === undefined)) {
      t.fail(`Tx event ${i} out of order`);
      break;
    }
  }
  t.pass(`the reading Tx subscriber got all ${published} events in order`);

  // The slow client reads again: what was written, then the cancellation under its id.
  slow.ws.resumeReading();
  const cancel = await slow.next((m) => m.id === 's' && m.error !== undefined, 20_000);
  t.same(cancel, {
    jsonrpc: '2.0',
    id: 's',
    error: { code: -32000, message: 'Server error', data: 'subscription was canceled (reason: internal subscription event buffer is out of capacity)' },
  });
  t.notOk(slow.ws.ended, 'the connection stays open');
  t.same((await slow.call('s2', 'subscribe', { query: "node.event='NewBlock'" })).result, {}, 'and may subscribe again');
  t.ok(await slow.event('s2', 10_000));
});

t.test('experimental_close_on_slow_client closes the slow connection', async (t) => {
  const tn = await startTestNode({ flags: { 'rpc.experimental_close_on_slow_client': true } });
  t.teardown(() => tn.close());
  const slow = await open(tn, t);
  const fast = await open(tn, t);
  t.same((await slow.call(1, 'subscribe', { query: "node.event='Tx'" })).result, {});
  t.same((await slow.call(2, 'subscribe', { query: "node.event='NewBlock'" })).result, {});
  t.same((await fast.call(1, 'subscribe', { query: "node.event='NewBlock'" })).result, {});
  slow.ws.stopReading();
  const h0 = tn.ctx.storage.blocks.height();
  await floodUntilCanceled(tn, t, slow);
  const stats = subscriptionsFor(tn.ctx).stats();
  t.equal(stats.droppedClients, 1, 'the client was dropped');
  t.equal(stats.clients, 1, 'only the fast client is left');
  t.equal(stats.subscriptions, 1, 'with its one subscription');
  slow.ws.resumeReading();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([slow.ws.closed, new Promise((r) => (timer = setTimeout(r, 20_000)))]);
  clearTimeout(timer);
  t.ok(slow.ws.ended, 'the slow connection is closed');
  await waitHeight(tn, h0 + 3n);
  t.ok(await fast.event(1, 10_000), 'the other client still receives');
});

t.test('compat upstream names: tendermint/event/NewBlock and tm.event', async (t) => {
  const tn = await startTestNode({ flags: { 'compat.upstream-names': true } });
  t.teardown(() => tn.close());
  const c = await open(tn, t);
  t.same((await c.call('u', 'subscribe', { query: "tm.event='NewBlock'" })).result, {});
  const ev = await c.event('u', 10_000);
  t.equal(ev.result.data.type, 'tendermint/event/NewBlock');
  t.same(Object.keys(ev.result.data.value), ['block', 'block_id', 'result_finalize_block'], "0.38's NewBlock value exactly");
  t.same(ev.result.events, { 'tm.event': ['NewBlock'] });
  t.same((await c.call('n', 'subscribe', { query: "node.event='NewBlockHeader'" })).result, {}, 'the spec spelling is accepted too');
  const hdr = await c.event('n', 10_000);
  t.equal(hdr.result.data.type, 'tendermint/event/NewBlockHeader');
  t.same(Object.keys(hdr.result.data.value), ['header']);
  t.same(hdr.result.events, { 'tm.event': ['NewBlockHeader'] });
});

/** A subscriber whose backlog the test sets; records each delivery and cancellation. */
class FakeSink extends FakeSinkBase {
  readonly got: Array<{ id: string | number; seq?: number; cancel?: string }> = [];
  deliver(sub: Subscription, n: Notification) {
    this.got.push({ id: sub.requestId, seq: (n.msg.data as { i: number }).i });
    return 'sent' as const;
  }
  canceled(sub: Subscription, reason: string) {
    this.got.push({ id: sub.requestId, cancel: reason });
    return 'sent' as const;
  }
}

t.test('buffered while the client is behind, delivered in order when it catches up', async (t) => {
  const bus = new EventBus();
  const subs = new Subscriptions({ bus, maxClients: 10, maxSubscriptionsPerClient: 5, bufferSize: 100, closeOnSlowClient: false, highWaterBytes: 1000, flushIntervalMs: 5 });
  const a = new FakeSink('a');
  subs.subscribe(a, "node.event='Custom'", 'x');
  subs.subscribe(a, "node.event='Other'", 'y');
  const pub = (type: string, i: number) => bus.publish({ type, data: { i }, attributes: {} });
  pub('Custom', 0);
  await sleep(10);
  t.same(a.got, [{ id: 'x', seq: 0 }], 'delivered at once while the client keeps up');
  a.backlog = 5000;
  for (let i = 1; i <= 60; i++) pub(i % 2 ? 'Custom' : 'Other', i);
  await sleep(30);
  t.equal(a.got.length, 1, 'nothing written while the backlog is above the high-water mark');
  t.equal(subs.stats().buffered, 60, 'all 60 wait in the two buffers');
  a.backlog = 0;
  await sleep(30);
  t.same(a.got.map((g) => g.seq), Array.from({ length: 61 }, (_, i) => i), 'all delivered, oldest first');
  t.same(subs.stats().buffered, 0);
  t.same(subs.stats().dropped, 0, 'nothing lost');

  // Overflow of one buffer cancels that subscription only; the notice comes once the client drains.
  a.backlog = 5000;
  for (let i = 61; i <= 161; i++) pub('Custom', i);
  pub('Other', 162);
  await sleep(10);
  t.same(subs.stats().canceled, 1, 'the full subscription is cancelled');
  t.same(subs.stats().dropped, 101, 'with its 100 buffered events and the one that did not fit');
  t.same(subs.stats().subscriptions, 1);
  a.backlog = 0;
  await sleep(30);
  t.same(a.got.slice(61), [
    { id: 'y', seq: 162 },
    { id: 'x', cancel: 'internal subscription event buffer is out of capacity' },
  ], 'the other subscription goes on; then the cancellation');

  subs.close();
  t.same(a.got.at(-1), { id: 'y', cancel: 'node exited' }, 'close() cancels what is left');
  t.throws(() => subs.subscribe(new FakeSink('b'), "node.event='Custom'", 1), { code: 'CLOSED' });
  t.equal(bus.listenerCount, 0, 'the bus is no longer listened to');
});
