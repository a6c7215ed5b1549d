/**
 * Bad peers against a real listening node (`chaind start`, one validator, P2P on 127.0.0.1:0-style
 * free port): a peer on the wrong chain id, a frame whose MAC does not verify, a sealed frame that
 * declares more than 1024 data bytes, an MConnection packet larger than the packet cap, and a
 * seeded fuzz run of 10,000 malformed packets spread over the layers a peer reaches (raw bytes
 * instead of the ephemeral key, garbage after the secret handshake instead of the NodeInfo,
 * malformed MConnection packets after a full handshake: random bytes, bit-flipped and truncated
 * valid packets, unknown channels, oversize lengths). Each bad connection is closed by the node;
 * the node keeps committing blocks, answers RPC, lists no bad peer, and an honest peer still
 * connects at the end. Seed: P2P_FUZZ_SEED (printed).
 */
import { createCipheriv } from 'node:crypto';
import type { Socket } from 'node:net';
import t from 'tap';
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import { encodeNodeInfo } from '../../src/p2p/node-info.js';
import { encodePacketDelimited } from '../../src/p2p/packet.js';
import { SecretConnection } from '../../src/p2p/secret-connection.js';
import { dialTcp, upgrade } from '../../src/p2p/transport.js';
import { ProtoWriter } from '../../src/types/proto.js';
import { Rng } from '../helpers/fuzz/prng.js';
import { allocPorts, getJson, runCli, startNode, statusHeight, tmpHome, waitFor } from '../helpers/node.js';
import { makeNodeInfo } from '../helpers/p2p.js';
import fs from 'node:fs';

t.setTimeout(600_000);

const CHAIN = 'badpeers-1';
const SEED = Number(process.env['P2P_FUZZ_SEED'] ?? 20261126);
const FUZZ_PACKETS = Number(process.env['P2P_FUZZ_PACKETS'] ?? 10_000);

/** Resolves when the socket is closed (by the node); rejects after `ms`. */
function closedWithin(socket: Socket, ms: number): Promise<void> {
  if (socket.destroyed || socket.readableEnded) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`connection still open after ${ms} ms`)), ms);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    socket.once('close', done);
    socket.once('end', done);
    socket.on('error', () => {});
    socket.resume();
  });
}

t.test('bad peers and 10,000 malformed packets against a listening node', async (t) => {
  const home = tmpHome('chaind-badpeers-');
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  t.equal(runCli(['init', 'bad', '--home', home, '--chain-id', CHAIN, '--dev']).status, 0, 'init');
  const ports = await allocPorts();
  const node = startNode(home, ports, {}, ['--consensus.timeout_commit', '200ms']);
  t.teardown(() => node.proc.kill('SIGKILL'));
  await waitFor('node at height 2', async () => (await statusHeight(ports.rpc)) >= 2n, 120_000, 200).catch((e) => {
    t.comment(node.output());
    throw e;
  });
  const status = (await getJson(`http://127.0.0.1:${ports.rpc}/status`)).body.result;
  const nodeId: string = status.node_info.id;
  const p2pPort = ports.p2p;
  const netInfo = async () => (await getJson(`http://127.0.0.1:${ports.rpc}/net_info`, 10_000)).body.result;

  const honest = (over = {}) => {
    const key = Ed25519PrivKey.generate();
    return { key, info: makeNodeInfo(key, { network: CHAIN, channels: Uint8Array.of(0x20, 0x21, 0x22, 0x23, 0x30, 0x38, 0x40), ...over }) };
  };
  /** A full, valid handshake (SecretConnection + NodeInfo) with the node. */
  const connect = async () => {
    const { key, info } = honest();
    const socket = await dialTcp('127.0.0.1', p2pPort);
    const up = await upgrade(socket, { nodeKey: key, nodeInfo: info, dialedId: nodeId, lookup: async () => undefined });
    return { up, socket, ourId: info.id };
  };
  /** A secret connection only (no NodeInfo yet). */
  const secret = async () => {
    const socket = await dialTcp('127.0.0.1', p2pPort);
    const sc = await SecretConnection.handshake(socket, Ed25519PrivKey.generate());
    return { sc, socket };
  };

  await t.test('wrong chain id: the node refuses the peer', async (t) => {
    const key = Ed25519PrivKey.generate();
    const s2 = await dialTcp('127.0.0.1', p2pPort);
    const sc2 = await SecretConnection.handshake(s2, key);
    const w2 = new ProtoWriter(256);
    w2.raw(encodeNodeInfo(makeNodeInfo(key, { network: 'other-chain' })));
    sc2.write(w2.finishDelimited());
    await closedWithin(s2, 30_000);
    t.pass('closed by the node');
    t.notOk((await netInfo()).peers.some((p: any) => p.node_info.network === 'other-chain'), 'not listed as a peer');
  });

  await t.test('a frame whose MAC does not verify', async (t) => {
    const { socket } = await connect();
    socket.write(Buffer.alloc(1044, 0xab));
    await closedWithin(socket, 30_000);
    t.pass('closed by the node');
  });

  await t.test('a sealed frame declaring more than 1024 data bytes', async (t) => {
    const { up, socket } = await connect();
    // Seal by hand with the connection's own send key and next nonce (its cipher is private).
    const cipher = (up.conn as unknown as { sendCipher: { key: Buffer; lo: number; hi: number } }).sendCipher;
    const frame = Buffer.alloc(1028);
    frame.writeUInt32LE(2000, 0);
    const nonce = Buffer.alloc(12);
    nonce.writeUInt32LE(cipher.lo, 4);
    nonce.writeUInt32LE(cipher.hi, 8);
    const c = createCipheriv('chacha20-poly1305', cipher.key, nonce, { authTagLength: 16 });
    socket.write(Buffer.concat([c.update(frame), c.final(), c.getAuthTag()]));
    await closedWithin(socket, 30_000);
    t.pass('closed by the node');
  });

  await t.test('an MConnection packet above the packet cap', async (t) => {
    const { up, socket } = await connect();
    up.conn.write(encodePacketDelimited({ type: 'msg', channelId: 0x20, eof: true, data: new Uint8Array(64 * 1024) }));
    await closedWithin(socket, 30_000);
    t.pass('closed by the node');
  });

  await t.test(`${FUZZ_PACKETS} seeded malformed packets (seed ${SEED})`, async (t) => {
    const valid = [
      encodePacketDelimited({ type: 'ping' }),
      encodePacketDelimited({ type: 'msg', channelId: 0x20, eof: true, data: Uint8Array.of(0x0a, 0x00) }),
      encodePacketDelimited({ type: 'msg', channelId: 0x40, eof: true, data: Uint8Array.of(0x22, 0x00) }),
    ];
    const malformed = (rng: Rng): Uint8Array => {
      switch (rng.int(5)) {
        case 0: // random bytes
          return Uint8Array.from({ length: rng.range(1, 300) }, () => rng.int(256));
        case 1: { // a valid packet with bits flipped
          const p = Uint8Array.from(valid[rng.int(valid.length)]!);
          for (let k = rng.range(1, 4); k > 0; k--) p[rng.int(p.length)]! ^= 1 << rng.int(8);
          return p;
        }
        case 2: { // a truncated valid packet, then garbage
          const p = valid[rng.int(valid.length)]!;
          return Uint8Array.from([...p.subarray(0, rng.range(1, p.length - 1)), ...Array.from({ length: rng.range(1, 8) }, () => 0xff)]);
        }
        case 3: // a message on a channel the node did not register
          return encodePacketDelimited({ type: 'msg', channelId: 0x41 + rng.int(0x1f), eof: true, data: Uint8Array.of(1, 2, 3) });
        default: { // a length prefix far above the cap
          const w = new ProtoWriter(16);
          w.raw(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3));
          return w.finish();
        }
      }
    };
    const layers = { raw: 0, secret: 0, mconn: 0 };
    const problems: string[] = [];
    const one = async (i: number) => {
      const rng = Rng.forCase(SEED, 'p2p', i);
      const layer = i % 10 < 6 ? 'raw' : i % 10 < 7 ? 'secret' : 'mconn';
      layers[layer]++;
      try {
        if (layer === 'raw') {
          const s = await dialTcp('127.0.0.1', p2pPort);
          s.write(Uint8Array.from({ length: rng.range(1, 100) }, () => rng.int(256)));
          s.end();
          await closedWithin(s, 30_000);
        } else if (layer === 'secret') {
          const { sc, socket } = await secret();
          sc.write(Uint8Array.from({ length: rng.range(1, 200) }, () => rng.int(256)));
          socket.end();
          await closedWithin(socket, 30_000);
        } else {
          const { up, socket } = await connect();
          up.conn.write(malformed(rng));
          // A truncated packet leaves the node waiting for the rest: our side ends after it.
          socket.end();
          await closedWithin(socket, 30_000);
        }
      } catch (e) {
        problems.push(`#${i} ${layer}: ${(e as Error).message}`);
      }
    };
    let next = 0;
    const started = Date.now();
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < FUZZ_PACKETS) await one(next++);
    }));
    t.comment(`${FUZZ_PACKETS} packets in ${Date.now() - started} ms: ${JSON.stringify(layers)}`);
    t.same(problems.slice(0, 10), [], 'every connection was closed by the node or refused, none hung');
  });

  // The node survived: still running, committing, no bad peer listed, an honest peer connects.
  t.equal(node.proc.exitCode, null, 'the node is still running');
  const h = await statusHeight(ports.rpc);
  await waitFor('two more blocks', async () => (await statusHeight(ports.rpc)) >= h + 2n, 60_000, 200);
  t.pass('the node keeps committing blocks');
  const { socket, ourId } = await connect();
  await waitFor('the honest peer listed', async () => (await netInfo()).peers.some((p: any) => p.node_info.id === ourId), 30_000, 200);
  t.equal((await netInfo()).n_peers, '1', 'only the honest peer is connected');
  socket.destroy();
});
