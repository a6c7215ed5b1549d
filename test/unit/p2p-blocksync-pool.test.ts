/**
 * The block pool's scheduling with an injected clock: 20 pending per peer, timeouts and the rate
 * rule, NoBlockResponse, a bad block's peer dropped and its heights asked of others, two peers
 * near the tip, caught-up.
 */
import t from 'tap';
import { BlockPool, type PoolOptions } from '../../src/p2p/blocksync/pool.js';
import type { Block } from '../../src/types/block.js';

function fakeBlock(height: bigint): Block {
  return { header: { height } as Block['header'], data: { txs: [] }, evidence: [], lastCommit: { height: height - 1n, round: 0, blockId: null as never, signatures: [] } };
}

function harness(opts: Partial<PoolOptions> = {}) {
  const clock = { now: 0 };
  const sent: [string, bigint][] = [];
  const errors: [string, string][] = [];
  const pool = new BlockPool({
    startHeight: 1n,
    sendRequest: (id, h) => (sent.push([id, h]), true),
    onPeerError: (id, reason) => void errors.push([id, reason]),
    now: () => clock.now,
    ...opts,
  });
  const deliver = (id: string, h: bigint, size = 500) => pool.addBlock(id, fakeBlock(h), new Uint8Array(size), null);
  /** Applies every block that is here in order (what the reactor does after verifying). */
  const drain = () => {
    while (pool.peekTwoBlocks()[0]) pool.popRequest();
  };
  return { pool, clock, sent, errors, deliver, drain };
}

t.test('at most 20 requests pending per peer; more as blocks arrive', async (t) => {
  const { pool, sent, deliver } = harness();
  pool.setPeerRange('a', 1n, 1000n);
  t.equal(sent.length, 20);
  t.same(pool.pendingOf('a'), Array.from({ length: 20 }, (_, i) => BigInt(i + 1)));
  pool.setPeerRange('b', 1n, 1000n);
  t.equal(pool.pendingOf('b').length, 20, 'the second peer gets the next 20');
  t.equal(pool.pendingOf('b')[0], 21n);
  t.equal(deliver('a', 1n), null);
  t.equal(pool.pendingOf('a').length, 20, 'a delivered one, got one more');
  t.equal(pool.pendingOf('a').at(-1), 41n);
  t.equal(deliver('a', 999n), 'unsolicited block at height 999');
});

t.test('heights outside a peer\'s range are not asked of it; maxPeerHeight bounds the requests', async (t) => {
  const { pool, sent } = harness();
  pool.setPeerRange('a', 5n, 10n);
  t.same(sent.filter(([, h]) => h < 5n), [], 'a is not asked for heights below its base');
  pool.setPeerRange('b', 1n, 3n);
  // b holds 1..3; 4 nobody; a holds 5..10, and near the tip (all of it) each height goes to two
  // peers when two can serve it.
  t.same(pool.pendingOf('b'), [1n, 2n, 3n]);
  t.same(pool.pendingOf('a'), [5n, 6n, 7n, 8n, 9n, 10n]);
});

t.test('a peer silent for the peer timeout is dropped and its heights go to the other', async (t) => {
  // The rate rule off (minRecvRate 0): a silent peer is dropped by the timeout alone here.
  const { pool, clock, errors, deliver } = harness({ tipWindow: 0n, minRecvRate: 0 });
  pool.setPeerRange('a', 1n, 1000n);
  pool.setPeerRange('b', 1n, 1000n);
  const aHeights = pool.pendingOf('a');
  clock.now = 10_000;
  deliver('b', 21n);
  pool.tick();
  t.same(errors, [], 'not yet');
  clock.now = 15_000;
  deliver('b', 22n);
  pool.tick();
  t.equal(errors.length, 1);
  t.equal(errors[0]![0], 'a');
  t.match(errors[0]![1], /did not send us anything/);
  t.same(pool.peerIds(), ['b']);
  // b's 20 slots hold a's old heights (lowest first) as it frees them.
  t.ok(aHeights.every((h) => pool.askedFor(h).every((id) => id === 'b')), 'none of a\'s heights is still asked of a');
  for (let i = 0; i < 2; i++) for (const h of pool.pendingOf('b')) deliver('b', h);
  t.ok(aHeights.slice(0, 10).every((h) => pool.askedFor(h).length === 0), 'a\'s heights were served by b');
  t.equal(deliver('a', 1n), null, 'a late block from the dropped peer is ignored');
  // Not banned: reconnected and reporting its status again, a is asked for blocks again.
  pool.setPeerRange('a', 1n, 1000n);
  t.same(pool.peerIds().sort(), ['a', 'b'], 'a is back after a new status');
  t.ok(pool.pendingOf('a').length > 0, 'and gets requests');
});

t.test('receive rate: slow peer dropped only after requests waited the whole window', async (t) => {
  const { pool, clock, errors, deliver, drain } = harness({ rateWindowMs: 5000, minRecvRate: 128 * 1024, tipWindow: 0n });
  pool.setPeerRange('fast', 1n, 10_000n);
  // A peer answering every request at once with tiny blocks is never "slow".
  for (let i = 0; i < 200; i++) {
    clock.now += 100;
    for (const h of pool.pendingOf('fast')) deliver('fast', h, 300);
    drain();
    pool.tick();
  }
  t.same(errors, [], 'small blocks answered promptly are fine');
  pool.setPeerRange('slow', 1n, 10_000n);
  const slowFirst = pool.pendingOf('slow');
  const startSlow = clock.now;
  t.equal(slowFirst.length, 20);
  // slow answers one small block per second, so its oldest requests wait for many seconds.
  for (let i = 0; i < 120 && errors.length === 0; i++) {
    clock.now += 100;
    for (const h of pool.pendingOf('fast')) deliver('fast', h, 300);
    if (i % 10 === 0) deliver('slow', pool.pendingOf('slow')[0]!, 1000);
    pool.tick();
    // (no drain: the pool waits on slow's heights, as a real sync would)
  }
  t.ok(clock.now - startSlow >= 5000, 'not before a whole window');
  t.equal(errors.length, 1);
  t.equal(errors[0]![0], 'slow');
  t.match(errors[0]![1], /not sending us data fast enough/);
});

t.test('NoBlockResponse: the height goes to another peer and never back to that one', async (t) => {
  const { pool, deliver } = harness({ tipWindow: 0n });
  pool.setPeerRange('a', 1n, 100n);
  pool.setPeerRange('b', 1n, 100n);
  t.same(pool.askedFor(1n), ['a']);
  pool.noBlock('a', 1n);
  t.same(pool.askedFor(1n), [], 'b is full, nobody asked yet');
  deliver('b', 21n);
  t.same(pool.askedFor(1n), ['b'], 'b asked once it had room');
  t.notOk(pool.pendingOf('a').includes(1n));
});

t.test('a bad block: its peer dropped, everything it served discarded and asked of others', async (t) => {
  const { pool, errors, deliver } = harness({ tipWindow: 0n });
  pool.setPeerRange('good', 1n, 100n);
  pool.setPeerRange('bad', 1n, 100n);
  // good has 1..20, bad 21..40; bad delivers a few, good delivers all.
  for (const h of [21n, 22n, 23n]) deliver('bad', h);
  for (let h = 1n; h <= 20n; h++) deliver('good', h);
  t.ok(pool.peekTwoBlocks()[0], 'block 1 is here');
  const dropped = pool.rejectBlocks([21n], 'invalid block at height 21');
  t.same(dropped, ['bad']);
  t.same(errors, [['bad', 'invalid block at height 21']]);
  t.same(pool.peerIds(), ['good']);
  for (const h of [21n, 22n, 23n, 24n, 40n]) {
    t.same(pool.askedFor(h).filter((id) => id === 'bad'), [], `${h} not asked of bad`);
  }
  for (const h of pool.pendingOf('good')) deliver('good', h);
  t.ok([21n, 22n, 23n].every((h) => pool.pendingOf('good').includes(h)), 'bad\'s delivered heights re-asked of good once it has room');
  pool.setPeerRange('bad', 1n, 100n);
  t.same(pool.peerIds(), ['good'], 'a rejected peer does not come back into this pool');
});

t.test('within 50 blocks of the tip each block is asked of two peers', async (t) => {
  const { pool, deliver } = harness();
  pool.setPeerRange('a', 1n, 200n);
  pool.setPeerRange('b', 1n, 200n);
  t.same(pool.askedFor(1n), ['a'], 'far from the tip: one peer');
  // Walk to the tip window: apply 1..160 as they come.
  for (let i = 0; i < 1000 && pool.height <= 160n; i++) {
    for (const id of ['a', 'b']) for (const h of pool.pendingOf(id)) deliver(id, h);
    while (pool.peekTwoBlocks()[0] && pool.height <= 160n) pool.popRequest();
  }
  t.equal(pool.height, 161n);
  const h = pool.height + 5n;
  t.same([...pool.askedFor(h)].sort(), ['a', 'b'], `height ${h} is asked of both`);
  deliver('a', h);
  t.same(pool.askedFor(h), ['b'], 'the first copy is kept, b\'s still pending');
  t.equal(deliver('b', h), null, 'the second copy is accepted quietly');
});

t.test('caught up: within one of the highest peer, with at least one peer', async (t) => {
  const { pool, deliver } = harness();
  t.equal(pool.isCaughtUp(), false, 'no peers');
  pool.setPeerRange('a', 1n, 3n);
  t.equal(pool.isCaughtUp(), false);
  deliver('a', 1n);
  deliver('a', 2n);
  pool.popRequest();
  t.equal(pool.height, 2n);
  t.equal(pool.isCaughtUp(), true, 'height 2 of 3: the rest is for consensus');
  pool.setPeerRange('b', 1n, 10n);
  t.equal(pool.isCaughtUp(), false, 'a higher peer arrived');
  pool.removePeer('b');
  t.equal(pool.maxPeerHeight, 3n);
  t.equal(pool.isCaughtUp(), true);
});
