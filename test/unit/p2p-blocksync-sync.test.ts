/**
 * Block sync end to end, in process: a real chain (chain app, Executor, LMDB) served by reactors
 * over real MConnections on loopback SecretConnections, synced into a fresh store from the same
 * genesis. Same block hashes, same app hash; a serving peer killed half way; a peer serving
 * tampered blocks dropped while the sync completes.
 */
import t, { type Test } from 'tap';
import { BlocksyncReactor, type BlocksyncStore } from '../../src/p2p/blocksync/reactor.js';
import type { State } from '../../src/types/state.js';
import { decodeBlock, encodeBlock } from '../../src/types/codec.js';
import { linkReactors, makeChainGenesis, openChainNode, type ChainNode } from '../helpers/blocksync-chain.js';
import { waitFor } from '../helpers/p2p.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function counting(store: BlocksyncStore, tamper = false): BlocksyncStore & { served: number } {
  const s = {
    served: 0,
    base: () => store.base(),
    height: () => store.height(),
    loadBlockBytes(h: bigint) {
      const bytes = store.loadBlockBytes(h);
      if (bytes === null) return null;
      s.served++;
      if (!tamper) return bytes;
      const b = decodeBlock(bytes);
      return encodeBlock({ ...b, header: { ...b.header, time: b.header.time + 1n } });
    },
  };
  return s;
}

function server(store: BlocksyncStore, node: ChainNode): BlocksyncReactor {
  return new BlocksyncReactor({ store, executor: node.executor, state: node.state, blockSync: false });
}

function syncer(node: ChainNode, caught: (s: State) => void, onBlock?: (s: State) => void): BlocksyncReactor {
  return new BlocksyncReactor({
    store: node.storage.blocks,
    executor: node.executor,
    state: node.state,
    blockSync: true,
    onCaughtUp: (s) => caught(s),
    onBlockSynced: onBlock,
    statusIntervalStartMs: 200,
    checkIntervalMs: 100,
  });
}

function assertSameChain(tt: Test, src: ChainNode, dst: ChainNode, upTo: bigint): void {
  let mismatches = 0;
  for (let h = 1n; h <= upTo; h++) {
    const a = src.storage.blocks.loadBlockMeta(h)!;
    const b = dst.storage.blocks.loadBlockMeta(h);
    if (!b || hex(a.blockId.hash) !== hex(b.blockId.hash) || hex(a.header.appHash) !== hex(b.header.appHash)) mismatches++;
  }
  tt.equal(mismatches, 0, `blocks 1..${upTo} have the same hashes and app hashes`);
}

t.test('sync 600 blocks from two peers over MConnection, one killed half way', async (t) => {
  const g = makeChainGenesis();
  const src = await openChainNode(g);
  const dst = await openChainNode(g);
  t.teardown(() => src.close());
  t.teardown(() => dst.close());
  await src.produce(600);
  t.equal(src.storage.blocks.height(), 600n);

  const store1 = counting(src.storage.blocks);
  const store2 = counting(src.storage.blocks);
  const s1 = server(store1, src);
  const s2 = server(store2, src);
  let caught: State | null = null;
  let killedAt = -1;
  let servedBy1AtKill = 0;
  let pendingAtKill: bigint[] = [];
  let link1: Awaited<ReturnType<typeof linkReactors>> | null = null;
  const r = syncer(dst, (s) => (caught = s), (s) => {
    if (s.lastBlockHeight === 300n && link1) {
      killedAt = 300;
      servedBy1AtKill = store1.served;
      pendingAtKill = r.blockPool?.pendingOf('peer1') ?? [];
      link1.kill();
    }
  });
  r.start();
  s1.start();
  s2.start();
  t.teardown(() => {
    r.stop();
    s1.stop();
    s2.stop();
  });
  const t0 = performance.now();
  // s1 is a's side of link1: killing it closes the socket, and the syncing reactor sees it go.
  link1 = await linkReactors(s1, 'peer1', r, 'syncer');
  const link2 = await linkReactors(s2, 'peer2', r, 'syncer');
  t.teardown(() => {
    link1?.close();
    link2.close();
  });
  await waitFor(() => caught !== null || r.error !== null, 120_000, 'caught up');
  const secs = (performance.now() - t0) / 1000;
  t.equal(r.error, null, 'no apply error');
  const final = caught as unknown as State;
  t.comment(`synced ${final.lastBlockHeight} blocks in ${secs.toFixed(2)} s: ${(Number(final.lastBlockHeight) / secs).toFixed(0)} blocks/s`);
  t.equal(killedAt, 300, 'peer 1 was killed after block 300');
  t.ok(servedBy1AtKill > 0, `peer 1 served ${servedBy1AtKill} blocks before it was killed`);
  t.ok(pendingAtKill.length > 0, `peer 1 had ${pendingAtKill.length} requests pending when killed`);
  t.equal(store1.served, servedBy1AtKill, 'peer 1 served nothing after it was killed');
  t.ok(store2.served >= 599 - servedBy1AtKill, `peer 2 served the rest (${store2.served}), its pending heights included`);
  t.ok(pendingAtKill.every((h) => dst.storage.blocks.loadBlockMeta(h) !== null || h > 599n), 'every height pending at peer 1 was synced');
  // Block 600 has no commit in any block yet: sync stops one short, consensus takes the rest.
  t.equal(final.lastBlockHeight, 599n, 'synced to one below the peers\' height');
  t.equal(dst.storage.blocks.height(), 599n);
  assertSameChain(t, src, dst, 599n);
  t.equal(hex(final.appHash), hex(src.storage.blocks.loadBlockMeta(600n)!.header.appHash), 'app hash after 599 matches block 600\'s header');
  t.equal(hex(dst.storage.blocks.loadSeenCommit(599n)!.blockId.hash), hex(src.storage.blocks.loadBlockMeta(599n)!.blockId.hash), 'seen commit of 599 is block 600\'s LastCommit');
  t.equal(r.isSyncing(), false, 'left sync mode');
});

t.test('a peer serving tampered blocks is dropped and the sync completes from the honest one', async (t) => {
  const g = makeChainGenesis();
  const src = await openChainNode(g);
  const dst = await openChainNode(g);
  t.teardown(() => src.close());
  t.teardown(() => dst.close());
  await src.produce(120);
  const honest = counting(src.storage.blocks);
  const liar = counting(src.storage.blocks, true);
  const sh = server(honest, src);
  const sl = server(liar, src);
  let caught: State | null = null;
  const r = syncer(dst, (s) => (caught = s));
  r.start();
  t.teardown(() => r.stop());
  const lh = await linkReactors(sh, 'honest', r, 'syncer');
  const ll = await linkReactors(sl, 'liar', r, 'syncer');
  t.teardown(() => {
    lh.close();
    ll.close();
  });
  const reasons: string[] = [];
  // The syncing side's view of each serving peer: record who it disconnects.
  for (const [link, id] of [[lh, 'honest'], [ll, 'liar']] as const) {
    const orig = link.peerOfB.disconnect;
    link.peerOfB.disconnect = (reason) => {
      reasons.push(`${id}: ${reason}`);
      orig(reason);
    };
  }
  await waitFor(() => caught !== null || r.error !== null, 120_000, 'caught up');
  t.equal(r.error, null);
  t.ok(liar.served > 0, `the liar served ${liar.served} tampered blocks`);
  t.ok(reasons.some((x) => x.startsWith('liar: invalid block')), `the liar was dropped (${reasons.join('; ')})`);
  t.notOk(reasons.some((x) => x.startsWith('honest')), 'the honest peer was kept');
  t.equal((caught as unknown as State).lastBlockHeight, 119n);
  assertSameChain(t, src, dst, 119n);
});
