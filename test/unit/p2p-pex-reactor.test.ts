/**
 * The PEX reactor (src/p2p/pex/reactor.ts) over real loopback switches: 0x00 is advertised; a node
 * that knows only B (as a persistent peer, or as a seed in seed mode that answers and hangs up)
 * learns A's address through PEX and connects to A; a PexAddrs nobody asked for, PexRequests
 * sent too often and an answer with an IP that does not parse disconnect the sender and ban it in
 * the book, while addresses the book refuses (unspecified IP, port 0, bad ID, the node itself) are
 * skipped without a disconnect.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, renderConfigToml } from '../../src/config/index.js';
import { defaultNodeConfig, type P2PConfig } from '../../src/config/node-config.js';
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import { PEX_CHANNEL, decodePexMessage, encodePexMessage } from '../../src/p2p/messages/pex.js';
import { AddrBook } from '../../src/p2p/pex/addrbook.js';
import { PexReactor } from '../../src/p2p/pex/reactor.js';
import { Switch, type Peer, type Reactor } from '../../src/p2p/switch.js';
import { makeNodeInfo, waitFor } from '../helpers/p2p.js';

function p2pConfig(over: Partial<P2PConfig> = {}): P2PConfig {
  return { ...defaultNodeConfig().p2p, laddr: 'tcp://127.0.0.1:0', allowDuplicateIp: true, addrBookStrict: false, ...over };
}

/** Records peers coming and going (a reactor without channels). */
class Watcher implements Reactor {
  readonly name = 'watch';
  readonly channels = [];
  readonly added: string[] = [];
  readonly removed: string[] = [];
  addPeer(p: Peer): void {
    this.added.push(p.id);
  }
  removePeer(p: Peer): void {
    this.removed.push(p.id);
  }
  receive(): void {}
}

function makeSwitch(over: Partial<P2PConfig>, reactors: (cfg: P2PConfig) => Reactor[]) {
  const key = Ed25519PrivKey.generate();
  const config = p2pConfig(over);
  const sw = new Switch({
    nodeKey: key,
    nodeInfo: makeNodeInfo(key, { channels: new Uint8Array(0), listenAddr: 'tcp://127.0.0.1:0' }),
    config,
    reconnectBaseMs: 200,
  });
  const watch = new Watcher();
  sw.addReactor(watch);
  for (const r of reactors(config)) sw.addReactor(r);
  return { sw, watch, id: sw.nodeInfo.id, addr: () => `${sw.nodeInfo.id}@127.0.0.1:${sw.listenPort}` };
}

function pexNode(over: Partial<P2PConfig> = {}, periodMs = 500) {
  const book = new AddrBook({ file: null, strict: false });
  let pex!: PexReactor;
  const n = makeSwitch(over, (cfg) => {
    pex = new PexReactor({ book, seeds: cfg.seeds, seedMode: cfg.seedMode, maxNumOutboundPeers: cfg.maxNumOutboundPeers, ensurePeersPeriodMs: periodMs });
    return [pex];
  });
  return { ...n, book, pex };
}

async function started<T extends { sw: Switch }>(t: Test, n: T): Promise<T> {
  await n.sw.start();
  t.teardown(() => n.sw.stop());
  return n;
}

t.test('C knows only B (persistent) and connects to A through PEX', async (t) => {
  const a = await started(t, pexNode());
  const b = await started(t, pexNode({ persistentPeers: [a.addr()] }));
  t.ok(b.sw.nodeInfo.channels.includes(PEX_CHANNEL), 'PEX channel 0x00 advertised');
  await waitFor(() => b.sw.getPeer(a.id) !== undefined, 20_000, 'B connected to A');
  t.ok(b.book.has(a.id), "a dialled persistent peer is in B's book");
  const c = await started(t, pexNode({ persistentPeers: [b.addr()] }));
  await waitFor(() => c.sw.getPeer(a.id) !== undefined, 30_000, 'C connected to A');
  t.ok(c.book.has(a.id), "A is in C's book");
  t.equal(c.book.get(a.id)!.src.id, b.id, 'learnt from B');
  t.notOk(c.book.has(c.id), 'C never adds itself');
  t.equal(c.sw.getPeer(a.id)!.outbound, true, 'C dialled A');
  await waitFor(() => c.book.isGood(a.id), 20_000, 'A marked good');
  t.pass('a successful dial marks the address good');
});

t.test('a seed answers C once, hangs up, and C connects to what it learnt', async (t) => {
  // A only answers (a long period: it sends no requests of its own).
  const a = await started(t, pexNode({}, 600_000));
  const seed = await started(t, pexNode({ seedMode: true, persistentPeers: [a.addr()] }));
  await waitFor(() => seed.book.has(a.id) && seed.sw.getPeer(a.id) !== undefined, 20_000, 'seed knows A');
  const c = await started(t, pexNode({ seeds: [seed.addr()] }));
  await waitFor(() => c.sw.getPeer(a.id) !== undefined, 30_000, 'C connected to A');
  t.ok(c.watch.added.includes(seed.id), 'C dialled the seed');
  await waitFor(() => c.watch.removed.includes(seed.id), 20_000, 'the seed hung up on C');
  t.pass('the seed disconnected C after answering');
});

t.test('host names: a persistent peer and a seed given as id@localhost:port are resolved when dialled', async (t) => {
  const a = await started(t, pexNode());
  const byName = `${a.id}@localhost:${a.sw.listenPort}`;
  const b = await started(t, pexNode({ persistentPeers: [byName] }));
  await waitFor(() => b.sw.getPeer(a.id) !== undefined, 20_000, 'B connected to A by name');
  await waitFor(() => b.book.has(a.id), 20_000, "A in B's book");
  t.match(b.book.get(a.id)!.addr.ip, /^(127\.|::1$)/, 'the book keeps the IP the name resolved to, not the name');
  // A seed by name (PEX dials seeds when its book has nothing to dial).
  const seed = await started(t, pexNode({ seedMode: true, persistentPeers: [a.addr()] }));
  await waitFor(() => seed.book.has(a.id), 20_000, 'seed knows A');
  const c = await started(t, pexNode({ seeds: [`${seed.id}@localhost:${seed.sw.listenPort}`] }));
  await waitFor(() => c.watch.added.includes(seed.id), 30_000, 'C dialled the seed by name');
  await waitFor(() => c.sw.getPeer(a.id) !== undefined, 30_000, 'C connected to A');
  t.pass('C reached A through the seed it dialled by name');
});

t.test('[p2p] ensure_peers_period: a duration in config.toml, documented in the template', async (t) => {
  t.equal(defaultNodeConfig().p2p.ensurePeersPeriod, 30_000, "default 30 s (CometBFT's fixed period)");
  const text = renderConfigToml(defaultNodeConfig());
  t.match(text, /\n# How often the peer-exchange reactor [^\n]*\n#[^\n]*\nensure_peers_period = "30s"\n/, 'documented in the template');
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  fs.mkdirSync(path.join(home, 'config'));
  fs.writeFileSync(path.join(home, 'config', 'config.toml'), text.replace('ensure_peers_period = "30s"', 'ensure_peers_period = "250ms"'));
  t.equal(loadConfig({ home }).config.p2p.ensurePeersPeriod, 250);
  fs.writeFileSync(path.join(home, 'config', 'config.toml'), text.replace('ensure_peers_period = "30s"', 'ensure_peers_period = "0s"'));
  t.throws(() => loadConfig({ home }), /ensure_peers_period/, '0 is refused');
});

/** A switch with a raw reactor on 0x00 that sends what `onPeer` says when a peer connects. */
function rogue(onPeer: (p: Peer) => void, onRequest: (p: Peer) => void = () => {}) {
  const got: string[] = [];
  const r: Reactor = {
    name: 'rogue',
    channels: [{ id: PEX_CHANNEL, priority: 1, sendQueueCapacity: 10 }],
    addPeer: onPeer,
    removePeer: () => {},
    receive: (_ch, p, msg) => {
      const type = decodePexMessage(msg).type;
      got.push(type);
      if (type === 'PexRequest') onRequest(p);
    },
  };
  return { ...makeSwitch({}, () => [r]), got };
}

t.test('an unsolicited PexAddrs disconnects and bans the sender', async (t) => {
  // A long period: no ensurePeers pass asks the rogue for addresses while the test runs.
  const y = await started(t, pexNode({}, 600_000));
  const offered = { id: 'ab'.repeat(20), ip: '127.0.0.9', port: 26656 };
  const x = await started(t, rogue((p) => void p.send(PEX_CHANNEL, encodePexMessage({ type: 'PexAddrs', addrs: [offered] }))));
  await x.sw.dialPeer({ id: y.id, host: '127.0.0.1', port: y.sw.listenPort }).catch(() => {});
  await waitFor(() => y.watch.removed.includes(x.id), 20_000, 'Y dropped X');
  t.ok(y.watch.added.includes(x.id), 'X had connected');
  t.equal(y.sw.getPeer(x.id), undefined, 'X is no peer of Y');
  t.ok(y.book.isBanned(x.id), 'X is banned in Y\'s book');
  t.notOk(y.book.has(offered.id), 'the unsolicited address was not taken');
});

t.test('PexRequests too often disconnect; the first two are answered', async (t) => {
  const y = await started(t, pexNode({}, 600_000));
  const req = encodePexMessage({ type: 'PexRequest' });
  const x = await started(t, rogue((p) => {
    for (let i = 0; i < 2; i++) void p.send(PEX_CHANNEL, req);
  }));
  await x.sw.dialPeer({ id: y.id, host: '127.0.0.1', port: y.sw.listenPort });
  await waitFor(() => x.got.length === 2, 20_000, 'two answers');
  t.same(x.got, ['PexAddrs', 'PexAddrs'], 'the first two requests are answered');
  t.ok(y.sw.getPeer(x.id), 'X still connected');
  // A third within a third of the period (200 s here).
  void x.sw.getPeer(y.id)!.send(PEX_CHANNEL, req);
  await waitFor(() => y.watch.removed.includes(x.id), 20_000, 'Y dropped X');
  t.ok(y.book.isBanned(x.id), 'and banned it');
});

t.test('an answer: addresses the book refuses are skipped, an IP that does not parse disconnects', async (t) => {
  const y = await started(t, pexNode({}, 600_000));
  const good = { id: 'cd'.repeat(20), ip: '127.0.0.7', port: 26656 };
  const refused = [
    { id: 'ef'.repeat(20), ip: '0.0.0.0', port: 26656 },
    { id: '12'.repeat(20), ip: '127.0.0.8', port: 0 },
    { id: 'not-hex', ip: '127.0.0.9', port: 26656 },
    { id: y.id, ip: '127.0.0.1', port: y.sw.listenPort },
  ];
  let answer = [good, ...refused];
  const x = await started(t, rogue(() => {}, (p) => void p.send(PEX_CHANNEL, encodePexMessage({ type: 'PexAddrs', addrs: answer }))));
  // Y dials X (which puts X in Y's book): an outbound peer is asked for addresses.
  y.sw.dialPeersAsync([x.addr()], {});
  await waitFor(() => y.book.has(good.id), 20_000, 'the good address taken');
  t.equal(y.book.size(), 2, 'X (dialled) and the good address; the refused ones skipped');
  t.ok(y.sw.getPeer(x.id), 'X still connected');
  t.notOk(y.book.has(y.id), 'Y did not add itself');

  answer = [{ id: '34'.repeat(20), ip: 'not-an-ip', port: 26656 }];
  y.pex.requestAddrs(y.sw.getPeer(x.id)!);
  await waitFor(() => y.watch.removed.includes(x.id), 20_000, 'Y dropped X');
  t.ok(y.book.isBanned(x.id), 'and banned it');
  t.notOk(y.book.has('34'.repeat(20)));
});
