/**
 * The block-sync reactor's serving side against a real LMDB block store (blocks made by the real
 * Executor), its handling of bad messages, and the way back to sync (onFallenBehind + startSync)
 * over real MConnections.
 */
import t from 'tap';
import { BLOCKSYNC_CHANNEL, decodeBlocksyncMessage, encodeBlocksyncMessage } from '../../src/p2p/messages/blocksync.js';
import { BLOCKSYNC_MAX_MSG_SIZE, BlocksyncReactor, type BlocksyncPeer } from '../../src/p2p/blocksync/reactor.js';
import type { State } from '../../src/types/state.js';
import { linkReactors, makeChainGenesis, openChainNode } from '../helpers/blocksync-chain.js';
import { waitFor } from '../helpers/p2p.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function recordingPeer(id = 'peer') {
  const out: ReturnType<typeof decodeBlocksyncMessage>[] = [];
  const raw: Uint8Array[] = [];
  const disconnects: string[] = [];
  const peer: BlocksyncPeer = {
    id,
    send: (ch, b) => peer.trySend(ch, b),
    trySend: (ch, b) => {
      if (ch !== BLOCKSYNC_CHANNEL) throw new Error(`sent on channel ${ch}`);
      raw.push(b);
      out.push(decodeBlocksyncMessage(b));
      return true;
    },
    disconnect: (reason) => void disconnects.push(reason),
  };
  return { peer, out, raw, disconnects };
}

t.test('serves status and blocks from a real block store', async (t) => {
  const g = makeChainGenesis();
  const node = await openChainNode(g);
  t.teardown(() => node.close());
  await node.produce(10);
  const r = new BlocksyncReactor({ store: node.storage.blocks, executor: node.executor, state: node.state, blockSync: false });
  t.same(r.channels(), [{ id: 0x40, priority: 5, sendQueueCapacity: 1000, recvBufferCapacity: 1024, recvMessageCapacity: BLOCKSYNC_MAX_MSG_SIZE }]);
  t.ok(BLOCKSYNC_MAX_MSG_SIZE > 21 * 1024 * 1024, 'a default-size block (21 MiB) fits');

  const { peer, out, raw, disconnects } = recordingPeer();
  r.addPeer(peer);
  t.same(out, [{ type: 'StatusResponse', height: 10n, base: 1n }, { type: 'StatusRequest' }], 'a new peer learns our range and is asked for its own');
  out.length = raw.length = 0;

  r.receive(peer, BLOCKSYNC_CHANNEL, encodeBlocksyncMessage({ type: 'StatusRequest' }));
  t.same(out, [{ type: 'StatusResponse', height: 10n, base: 1n }]);
  out.length = raw.length = 0;

  r.receive(peer, BLOCKSYNC_CHANNEL, encodeBlocksyncMessage({ type: 'BlockRequest', height: 5n }));
  t.equal(out.length, 1);
  const resp = out[0]!;
  t.equal(resp.type, 'BlockResponse');
  if (resp.type === 'BlockResponse') {
    t.equal(resp.block.header.height, 5n);
    t.equal(hex(resp.blockBytes), hex(node.storage.blocks.loadBlockBytes(5n)!), 'the stored bytes, as stored');
    t.equal(resp.extCommit, null);
  }
  out.length = 0;

  r.receive(peer, BLOCKSYNC_CHANNEL, encodeBlocksyncMessage({ type: 'BlockRequest', height: 11n }));
  t.same(out, [{ type: 'NoBlockResponse', height: 11n }], 'a height we do not have');
  out.length = 0;

  t.same(disconnects, []);
  r.receive(peer, BLOCKSYNC_CHANNEL, Uint8Array.of(0xff, 0x01));
  t.equal(disconnects.length, 1);
  t.match(disconnects[0], /bad blocksync message/);
  const p2 = recordingPeer('p2');
  r.receive(p2.peer, BLOCKSYNC_CHANNEL, encodeBlocksyncMessage({ type: 'StatusResponse', height: 3n, base: 5n }));
  t.match(p2.disconnects[0], /invalid blocksync message: base 5 cannot be greater than height 3/);
  // Another channel is not ours: ignored.
  r.receive(p2.peer, 0x20, Uint8Array.of(0xff));
  t.equal(p2.disconnects.length, 1);
});

t.test('a peer far ahead is reported; startSync brings the node back to block sync and it catches up', async (t) => {
  const g = makeChainGenesis();
  const src = await openChainNode(g);
  const dst = await openChainNode(g);
  t.teardown(() => src.close());
  t.teardown(() => dst.close());
  await src.produce(30);

  const serving = new BlocksyncReactor({ store: src.storage.blocks, executor: src.executor, state: src.state, blockSync: false });
  const caughtUp: State[] = [];
  const behind: bigint[] = [];
  const r = new BlocksyncReactor({
    store: dst.storage.blocks,
    executor: dst.executor,
    state: dst.state,
    blockSync: true,
    onCaughtUp: (s) => void caughtUp.push(s),
    // The node's part: consensus stops and hands its state back to block sync.
    onFallenBehind: (_id, h) => {
      behind.push(h);
      if (!r.isSyncing()) r.startSync(r.state);
    },
    fallBehindBlocks: 100n,
    statusIntervalStartMs: 200,
    checkIntervalMs: 100,
  });
  r.start();
  serving.start();
  t.teardown(() => {
    r.stop();
    serving.stop();
  });
  const link = await linkReactors(serving, 'src', r, 'dst');
  t.teardown(() => link.close());
  await waitFor(() => caughtUp.length === 1, 60_000, 'first catch-up');
  t.equal(caughtUp[0]!.lastBlockHeight, 29n);
  t.equal(r.isSyncing(), false);

  // The chain moves on by 150 blocks while this node is "in consensus" and gets none of them.
  await src.produce(150);
  serving.broadcastStatus();
  await waitFor(() => caughtUp.length === 2, 60_000, 'second catch-up');
  t.same(behind.slice(0, 1), [180n], 'the peer\'s status height 180 ≥ 29 + 100 was reported');
  t.equal(caughtUp[1]!.lastBlockHeight, 179n);
  t.equal(hex(caughtUp[1]!.appHash), hex(src.storage.blocks.loadBlockMeta(180n)!.header.appHash));
  t.equal(hex(dst.storage.blocks.loadBlockMeta(179n)!.blockId.hash), hex(src.storage.blocks.loadBlockMeta(179n)!.blockId.hash));
});
