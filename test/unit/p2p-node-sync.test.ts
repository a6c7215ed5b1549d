/**
 * The node's mode controller (src/p2p/blocksync/node-sync.ts) between block sync and consensus,
 * with a real BlocksyncReactor and recording consensus objects: nothing reaches consensus while
 * syncing; caught up starts a fresh consensus from the synced state and forwards peers' messages
 * and its events; fallen behind stops it and hands its state back to block sync; the next catch-up
 * makes a new consensus again. And Switch.isolate over real loopback connections: peers dropped,
 * redials refused and inbound dials failing before the handshake until the cut ends, then the
 * persistent peer is back.
 */
import t from 'tap';
import { defaultNodeConfig } from '../../src/config/node-config.js';
import type { ConsensusEventData, ConsensusEventName, ConsensusMessage } from '../../src/consensus/types.js';
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import { BlocksyncReactor } from '../../src/p2p/blocksync/reactor.js';
import { SyncController, type ManagedConsensus } from '../../src/p2p/blocksync/node-sync.js';
import { Switch } from '../../src/p2p/switch.js';
import type { State } from '../../src/state/state.js';
import { makeNodeInfo, waitFor } from '../helpers/p2p.js';

class RecConsensus implements ManagedConsensus {
  started = false;
  stopped = false;
  readonly got: string[] = [];
  private fn: ((n: ConsensusEventName, d: ConsensusEventData) => void) | null = null;
  constructor(readonly state: State) {}
  async start() {
    this.started = true;
  }
  async stop() {
    this.stopped = true;
  }
  getState() {
    return this.state;
  }
  receive(_m: ConsensusMessage, peer: string) {
    this.got.push(peer);
  }
  subscribe(fn: (n: ConsensusEventName, d: ConsensusEventData) => void) {
    this.fn = fn;
    return () => (this.fn = null);
  }
  notifyTxsAvailable() {}
  emit(n: ConsensusEventName) {
    this.fn?.(n, { height: this.state.lastBlockHeight + 1n, round: 0, step: 'RoundStepNewHeight' } as unknown as ConsensusEventData);
  }
}

const st = (h: bigint) => ({ lastBlockHeight: h, initialHeight: 1n }) as unknown as State;
const vote = { kind: 'vote' } as unknown as ConsensusMessage;
const flush = () => new Promise((r) => setTimeout(r, 10));

t.test('block sync ⇄ consensus', async (t) => {
  const made: RecConsensus[] = [];
  const reactor = new BlocksyncReactor({
    store: { base: () => 0n, height: () => 0n, loadBlockBytes: () => null },
    executor: { validateBlock: () => {}, applyBlock: async (s) => s },
    state: st(0n),
    blockSync: true,
  });
  const sync = new SyncController({ reactor, state: st(0n), makeConsensus: (s) => (made.push(new RecConsensus(s)), made.at(-1)!) });
  const events: string[] = [];
  sync.subscribe((n) => events.push(n));

  t.ok(sync.syncing, 'starts syncing');
  sync.receive(vote, 'p1');
  t.same(made[0]!.got, [], 'no consensus message is delivered while syncing');
  t.equal(made[0]!.started, false, 'the first consensus is not started while syncing');

  sync.onCaughtUp(st(7n));
  await flush();
  t.equal(made.length, 2, 'caught up: a new consensus');
  const c1 = made[1]!;
  t.equal(c1.state.lastBlockHeight, 7n, '…from the synced state');
  t.ok(c1.started && !sync.syncing, '…started; not syncing');
  t.equal(sync.consensus, c1, 'RPC readers see the running consensus');
  sync.receive(vote, 'p2');
  t.same(c1.got, ['p2'], 'peer messages reach the running consensus');
  c1.emit('NewRoundStep');
  t.same(events, ['NewRoundStep'], 'its events reach the subscribers');

  sync.onFallenBehind('p3', 30n, 8n);
  sync.onFallenBehind('p3', 31n, 8n);
  await flush();
  t.ok(c1.stopped, 'fallen behind: consensus stopped');
  t.ok(sync.syncing && reactor.isSyncing(), 'block sync again');
  t.equal(reactor.state, c1.state, 'block sync resumes from the consensus state');
  t.equal(sync.switches.toBlockSync, 1, 'one switch for two reports');
  c1.emit('NewRoundStep');
  sync.receive(vote, 'p4');
  t.same(events, ['NewRoundStep'], 'a stopped consensus no longer reaches the subscribers');
  t.same(c1.got, ['p2'], 'nor do peer messages reach it');

  sync.onCaughtUp(st(29n));
  await flush();
  const c2 = made.at(-1)!;
  t.not(c2, c1, 'caught up again: another consensus object');
  t.ok(c2.started && c2.state.lastBlockHeight === 29n, '…started from height 29');
  await sync.stop();
  t.ok(c2.stopped, 'stop() stops the running consensus');
  reactor.stop();
});

t.test("while syncing, RPC readers' consensus is rebuilt as a reader (one that logs nothing), the one that runs is not", async (t) => {
  const made: { height: bigint; reader: boolean }[] = [];
  const reactor = new BlocksyncReactor({
    store: { base: () => 0n, height: () => 0n, loadBlockBytes: () => null },
    executor: { validateBlock: () => {}, applyBlock: async (s) => s },
    state: st(0n),
    blockSync: true,
  });
  const sync = new SyncController({
    reactor,
    state: st(0n),
    makeConsensus: (s, o) => (made.push({ height: s.lastBlockHeight, reader: o?.reader === true }), new RecConsensus(s)),
  });
  reactor.startSync(st(12n));
  t.equal(sync.consensus.getState().lastBlockHeight, 12n, 'readers see the synced height');
  sync.onCaughtUp(st(20n));
  await flush();
  t.same(made, [
    { height: 0n, reader: false },
    { height: 12n, reader: true },
    { height: 20n, reader: false },
  ]);
  await sync.stop();
});

t.test('Switch.isolate cuts the node off and lets its persistent peers back after', async (t) => {
  const mk = (persistent: string[] = []) => {
    const key = Ed25519PrivKey.generate();
    const sw = new Switch({
      nodeKey: key,
      nodeInfo: makeNodeInfo(key, { channels: new Uint8Array(0) }),
      config: { ...defaultNodeConfig().p2p, laddr: 'tcp://127.0.0.1:0', allowDuplicateIp: true, persistentPeers: persistent },
      reconnectBaseMs: 100,
    });
    return sw;
  };
  const a = mk();
  await a.start();
  t.teardown(() => a.stop());
  const b = mk([`${a.nodeInfo.id}@127.0.0.1:${a.listenPort}`]);
  await b.start();
  t.teardown(() => b.stop());
  await waitFor(() => a.peerList().length === 1 && b.peerList().length === 1, 20_000, 'connected');

  b.isolate(60_000);
  t.equal(b.peerList().length, 0, 'isolated: no peers');
  t.ok(b.isolated, 'isolated flag');
  await t.rejects(b.dialPeer({ id: a.nodeInfo.id, host: '127.0.0.1', port: a.listenPort }), { code: 'ISOLATED' }, 'dials refused');
  // The persistent redialler keeps trying (every ~100 ms here) and fails for as long as the cut lasts.
  await new Promise((r) => setTimeout(r, 1000));
  t.equal(b.peerList().length, 0, 'still no peers a second later');
  t.equal(a.peerList().length, 0, 'the other side dropped us too');
  // Its listener closes inbound sockets before any handshake: a dial to it fails outright (so a
  // dialler backs off), where completing the handshake and then closing let it redial at once.
  await t.rejects(a.dialPeer({ id: b.nodeInfo.id, host: '127.0.0.1', port: b.listenPort }), 'a dial to the cut-off node fails');
  t.equal(a.peerList().length, 0, 'and adds no peer, not even for a moment');

  b.isolate(0);
  t.notOk(b.isolated, 'cut ended');
  await waitFor(() => a.peerList().length === 1 && b.peerList().length === 1, 30_000, 'reconnected');
  t.pass('the persistent peer is connected again');
});
