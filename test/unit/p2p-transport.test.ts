/**
 * Connection upgrade (cometbft/cometbft:p2p/transport.go upgrade): TCP → SecretConnection →
 * dialled-ID check → NodeInfo exchange → Validate → key/NodeInfo ID match → not self →
 * CompatibleWith, with the handshake timeout; then a handshake and message exchange with a peer
 * in a separate process (dist/test/helpers/p2p-peer.js) that loads its node_key.json through
 * src/config.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { generateEd25519, readNodeKey, writeNodeKey } from '../../src/config/keyfiles.js';
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import { MConnection } from '../../src/p2p/mconnection.js';
import { encodeNodeInfo, type NodeInfo } from '../../src/p2p/node-info.js';
import { SecretConnection, nodeIdFromPubKey } from '../../src/p2p/secret-connection.js';
import { Transport, dialTcp, parsePeerAddress, resolveHost, upgrade, type UpgradedConnection } from '../../src/p2p/transport.js';
import { ProtoWriter } from '../../src/types/proto.js';
import { PEER_CHANNELS, peerBigMessage } from '../helpers/p2p-peer.js';
import { makeNodeInfo, recorder, socketPair, waitFor } from '../helpers/p2p.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const PEER_SCRIPT = path.resolve(here, '../helpers/p2p-peer.js');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

async function listening(t: Test, tr: Transport): Promise<{ port: number; accepted: UpgradedConnection[]; rejected: unknown[] }> {
  const accepted: UpgradedConnection[] = [];
  const rejected: unknown[] = [];
  const port = await tr.listen('127.0.0.1', 0, (c) => accepted.push(c), (e) => rejected.push(e));
  t.teardown(async () => {
    for (const c of accepted) c.conn.close();
    await tr.close();
  });
  return { port, accepted, rejected };
}

t.test('dial and accept: both sides authenticated, NodeInfo exchanged', async (t) => {
  const [ka, kb] = [Ed25519PrivKey.generate(), Ed25519PrivKey.generate()];
  const ia = makeNodeInfo(ka, { moniker: 'alpha' });
  const ib = makeNodeInfo(kb, { moniker: 'beta' });
  const server = new Transport({ nodeKey: kb, nodeInfo: ib });
  const { port, accepted } = await listening(t, server);
  const client = new Transport({ nodeKey: ka, nodeInfo: ia });
  const out = await client.dial({ id: ib.id, host: '127.0.0.1', port });
  t.teardown(() => out.conn.close());
  await waitFor(() => accepted.length === 1, 20_000, 'accepted');
  t.equal(out.id, ib.id);
  t.equal(out.outbound, true);
  t.same(out.nodeInfo, ib, "dialler got the listener's NodeInfo intact");
  t.equal(accepted[0]!.id, ia.id);
  t.equal(accepted[0]!.outbound, false);
  t.same(accepted[0]!.nodeInfo, ia);
});

/**
 * When the remote rejects us after the NodeInfo exchange, our upgrade has usually completed
 * already (then the next read sees the close); if the close wins the race, the upgrade fails.
 * Either way the connection is dropped: returns the error code seen.
 */
async function dropped(p: Promise<UpgradedConnection>): Promise<string> {
  try {
    const up = await p;
    try {
      await up.conn.reader.read(1);
      return 'read succeeded';
    } catch (err) {
      return (err as { code?: string }).code ?? 'no code';
    } finally {
      up.conn.close();
    }
  } catch (err) {
    return (err as { code?: string }).code ?? 'no code';
  }
}

t.test('upgrade rejections', async (t) => {
  const kb = Ed25519PrivKey.generate();
  const ib = makeNodeInfo(kb);
  const { port, rejected } = await listening(t, new Transport({ nodeKey: kb, nodeInfo: ib }));
  const dial = async (key: Ed25519PrivKey, info: NodeInfo, dialedId: string) =>
    upgrade(await dialTcp('127.0.0.1', port), { nodeKey: key, nodeInfo: info, dialedId });

  const ka = Ed25519PrivKey.generate();
  await t.rejects(dial(ka, makeNodeInfo(ka), 'ab'.repeat(20)), { code: 'ID_MISMATCH', message: /dialed ID/ }, 'dialled ID differs from the key');
  // Lying about our own ID: our side of the upgrade completes (the listener is honest), then the
  // listener rejects us and hangs up.
  t.match(await dropped(dial(ka, makeNodeInfo(ka, { id: 'cd'.repeat(20) }), ib.id)), /^(EOF|SOCKET|CLOSED)$/, 'the listener hangs up on a NodeInfo ID lie');
  // Our real ID in upper case: valid hex, but not the same string as the key's ID.
  t.match(
    await dropped(dial(ka, makeNodeInfo(ka, { id: nodeIdFromPubKey(ka.pubKey).toUpperCase() }), ib.id)),
    /^(EOF|SOCKET|CLOSED)$/,
    'an upper-case NodeInfo ID is not the key ID',
  );
  await waitFor(
    () => rejected.filter((e) => (e as { code?: string }).code === 'ID_MISMATCH' && /NodeInfo\.ID/.test((e as Error).message)).length === 2,
    20_000,
    'listener rejects both NodeInfo IDs',
  );
  await t.rejects(dial(kb, ib, ib.id), { code: 'SELF' }, 'a connection to ourselves');
  const other = Ed25519PrivKey.generate();
  await t.rejects(dial(other, makeNodeInfo(other, { network: 'other-chain' }), ib.id), { code: 'INCOMPATIBLE' }, 'another network');
  await t.rejects(dial(other, makeNodeInfo(other, { protocolVersion: { p2p: 8n, block: 10n, app: 0n } }), ib.id), { code: 'INCOMPATIBLE' }, 'another block protocol');
  await t.rejects(dial(other, makeNodeInfo(other, { channels: Uint8Array.of(0x01) }), ib.id), { code: 'INCOMPATIBLE' }, 'no common channel');
  // What the listener sends us is valid; what we send it is not: it drops us.
  t.match(await dropped(dial(other, makeNodeInfo(other, { moniker: '' }), ib.id)), /^(EOF|SOCKET|CLOSED)$/, 'the listener hangs up on an invalid NodeInfo');
  await waitFor(() => rejected.some((e) => (e as { code?: string }).code === 'NODE_INFO_INVALID'), 20_000, 'listener: NODE_INFO_INVALID');
});

t.test('a peer with an invalid NodeInfo is refused by the dialler', async (t) => {
  const [a, b] = await socketPair();
  const [ka, kb] = [Ed25519PrivKey.generate(), Ed25519PrivKey.generate()];
  const bad = upgrade(b, { nodeKey: kb, nodeInfo: makeNodeInfo(kb, { other: { txIndex: 'maybe', rpcAddress: '' } }) }).catch((e) => e);
  await t.rejects(upgrade(a, { nodeKey: ka, nodeInfo: makeNodeInfo(ka), dialedId: nodeIdFromPubKey(kb.pubKey) }), { code: 'NODE_INFO_INVALID' });
  await bad;
});

t.test('handshake timeout: a peer that never speaks', async (t) => {
  const server = createServer(() => {});
  const held: Socket[] = [];
  server.on('connection', (s) => held.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of held) s.destroy();
    server.close();
  });
  const port = (server.address() as { port: number }).port;
  const k = Ed25519PrivKey.generate();
  const sock = await dialTcp('127.0.0.1', port);
  await t.rejects(upgrade(sock, { nodeKey: k, nodeInfo: makeNodeInfo(k), handshakeTimeout: 200 }), { code: 'TIMEOUT' });
  t.ok(sock.destroyed, 'the socket is closed');
});

t.test('NodeInfo above 10,240 bytes is refused', async (t) => {
  const [a, b] = await socketPair();
  const [ka, kb] = [Ed25519PrivKey.generate(), Ed25519PrivKey.generate()];
  const evil = (async () => {
    const sc = await SecretConnection.handshake(b, kb);
    const info = makeNodeInfo(kb, { moniker: 'x'.repeat(10_300) });
    const w = new ProtoWriter(11_000);
    w.raw(encodeNodeInfo(info));
    sc.write(w.finishDelimited());
  })().catch(() => {});
  await t.rejects(upgrade(a, { nodeKey: ka, nodeInfo: makeNodeInfo(ka) }), { code: 'MSG_TOO_LARGE' });
  await evil;
  b.destroy();
});

t.test('dial errors and peer addresses', async (t) => {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  await t.rejects(dialTcp('127.0.0.1', port), { code: 'SOCKET' }, 'connection refused');
  t.same(parsePeerAddress('ABab'.repeat(10) + '@127.0.0.1:26656'), { id: 'abab'.repeat(10), host: '127.0.0.1', port: 26656 });
  t.same(parsePeerAddress('ff'.repeat(20) + '@[::1]:1'), { id: 'ff'.repeat(20), host: '::1', port: 1 });
  t.throws(() => parsePeerAddress('127.0.0.1:26656'), { code: 'NODE_INFO_INVALID' });
});

t.test('two processes: handshake, ID checks, messages on two channels both ways', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const peerKeyFile = path.join(dir, 'peer', 'config', 'node_key.json');
  const ourKeyFile = path.join(dir, 'us', 'config', 'node_key.json');
  writeNodeKey(peerKeyFile, generateEd25519());
  writeNodeKey(ourKeyFile, generateEd25519());
  const peerKey = readNodeKey(peerKeyFile);
  const ourKey = readNodeKey(ourKeyFile);

  const child = spawn(process.execPath, [PEER_SCRIPT, peerKeyFile, 'two-proc-chain'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  t.teardown(() => {
    if (child.exitCode === null) child.kill();
  });
  const lines: Record<string, unknown>[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => lines.push(JSON.parse(l)));
  await waitFor(() => lines.length > 0 || child.exitCode !== null, 30_000, 'peer listening');
  t.equal(child.exitCode, null, `peer is up (stderr: ${stderr})`);
  const hello = lines[0] as { port: number; id: string };
  t.equal(hello.id, peerKey.id, 'the peer reports the ID of its node_key.json');

  const key = Ed25519PrivKey.fromBytes(ourKey.privKey);
  const info = makeNodeInfo(key, { network: 'two-proc-chain', channels: Uint8Array.of(0x20, 0x30, 0x40), moniker: 'test-process' });
  t.equal(info.id, ourKey.id);
  const tr = new Transport({ nodeKey: key, nodeInfo: info });
  const up = await tr.dial({ id: hello.id, host: '127.0.0.1', port: hello.port });
  t.equal(up.id, peerKey.id, "the key's ID is the dialled ID");
  t.equal(up.nodeInfo.id, peerKey.id);
  t.equal(up.nodeInfo.moniker, 'peer-process');
  await waitFor(() => lines.some((l) => l['event'] === 'peer'), 20_000, 'peer saw us');
  const seen = lines.find((l) => l['event'] === 'peer')!;
  t.equal(seen['id'], ourKey.id, 'the peer authenticated our ID');
  t.equal(seen['moniker'], 'test-process');

  const rec = recorder();
  const mc = new MConnection(up.conn, PEER_CHANNELS, rec.handlers, { flushThrottle: 10 });
  mc.start();
  const big = Uint8Array.from({ length: 3000 }, (_, i) => (i * 13) & 0xff);
  const small = new TextEncoder().encode('ping-0x30');
  t.ok(await mc.send(0x20, big), 'multi-packet message on 0x20');
  t.ok(await mc.send(0x30, small), 'small message on 0x30');
  // From the peer: its 5000-byte message on 0x30, "hello" on 0x20, and our two messages reversed.
  await waitFor(() => rec.got.length >= 4, 30_000, 'four messages from the peer');
  const on = (ch: number) => rec.got.filter(([c]) => c === ch).map(([, m]) => hex(m));
  const rev = (b: Uint8Array) => hex(Uint8Array.from(b).reverse());
  t.same(on(0x20).sort(), [hex(new TextEncoder().encode('hello')), rev(big)].sort(), 'channel 0x20: hello and the 3000-byte echo');
  t.same(on(0x30).sort(), [hex(peerBigMessage()), rev(small)].sort(), 'channel 0x30: the peer’s 5000-byte message and the echo');
  t.same(rec.errors, []);

  await mc.flushStop();
  t.equal(await exited, 0, 'the peer exits cleanly when we hang up');
  const closed = lines.find((l) => l['event'] === 'closed');
  t.equal(closed?.['code'], 'EOF', 'the peer saw an orderly close');
  await tr.close();
});

t.test('[p2p] config defaults reach the transport and MConnection settings', async (t) => {
  const { defaultNodeConfig } = await import('../../src/config/node-config.js');
  const { mconnConfigFromP2P, transportOptionsFromP2P } = await import('../../src/p2p/index.js');
  const p2p = defaultNodeConfig().p2p;
  t.same(transportOptionsFromP2P(p2p), { handshakeTimeout: 20_000, dialTimeout: 3_000 });
  const m = mconnConfigFromP2P(p2p);
  t.equal(m.sendRate, 5_120_000);
  t.equal(m.recvRate, 5_120_000);
  t.equal(m.flushThrottle, 100);
  t.equal(m.maxPacketMsgPayloadSize, 1024);
  t.equal(m.pingInterval, 60_000);
  t.equal(m.pongTimeout, 45_000);
});

t.test('resolveHost: IP literals as they are, names through the resolver (its first address), failures as P2PError', async (t) => {
  const asked: string[] = [];
  const lookup = async (h: string) => {
    asked.push(h);
    if (h === 'node.test') return { address: '127.0.0.9' };
    throw new Error('ENOTFOUND');
  };
  t.equal(await resolveHost('127.0.0.3', lookup), '127.0.0.3');
  t.equal(await resolveHost('[::1]', lookup), '::1');
  t.same(asked, [], 'no lookup for an IP');
  t.equal(await resolveHost('node.test', lookup), '127.0.0.9');
  await t.rejects(resolveHost('nowhere.test', lookup), { code: 'SOCKET', message: /lookup nowhere\.test: ENOTFOUND/ });
  t.match(await resolveHost('localhost'), /^(127\.|::1$)/, 'localhost through the system resolver (no network needed)');
});
