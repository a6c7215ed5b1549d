/** Shared pieces of the P2P transport tests: keys, NodeInfo and a loopback socket pair. */
import { createServer, connect, type Socket } from 'node:net';
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import type { NodeInfo } from '../../src/p2p/node-info.js';
import { SecretConnection, nodeIdFromPubKey } from '../../src/p2p/secret-connection.js';
import type { MConnHandlers } from '../../src/p2p/mconnection.js';
import type { P2PError } from '../../src/p2p/errors.js';

export function makeNodeInfo(key: Ed25519PrivKey, over: Partial<NodeInfo> = {}): NodeInfo {
  return {
    protocolVersion: { p2p: 8n, block: 11n, app: 0n },
    id: nodeIdFromPubKey(key.pubKey),
    listenAddr: 'tcp://127.0.0.1:26656',
    network: 'test-chain',
    version: '0.38.17',
    channels: Uint8Array.of(0x20, 0x21, 0x22, 0x23, 0x30, 0x38, 0x40),
    moniker: 'node',
    other: { txIndex: 'on', rpcAddress: 'tcp://127.0.0.1:26657' },
    ...over,
  };
}

/** A connected pair of TCP sockets on 127.0.0.1 (ephemeral port). */
export async function socketPair(): Promise<[Socket, Socket]> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const accepted = new Promise<Socket>((r) => server.once('connection', r));
  const client = connect({ host: '127.0.0.1', port });
  await new Promise<void>((r, j) => {
    client.once('connect', r);
    client.once('error', j);
  });
  const s = await accepted;
  server.close();
  return [client, s];
}

export function keyPair(): [Ed25519PrivKey, Ed25519PrivKey] {
  return [Ed25519PrivKey.generate(), Ed25519PrivKey.generate()];
}

/** Polls `cond` every 10 ms until true or `ms` pass (generous deadlines: the machine is shared). */
export async function waitFor(cond: () => boolean, ms = 20_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Two SecretConnections handshaken over a loopback socket pair. */
export async function secretPair(): Promise<[SecretConnection, SecretConnection]> {
  const [a, b] = await socketPair();
  const [ka, kb] = keyPair();
  return Promise.all([SecretConnection.handshake(a, ka), SecretConnection.handshake(b, kb)]);
}

export interface Recorder {
  got: [number, Uint8Array][];
  errors: P2PError[];
  handlers: MConnHandlers;
}

export function recorder(): Recorder {
  const r: Recorder = {
    got: [],
    errors: [],
    handlers: {
      onReceive: (ch, msg) => void r.got.push([ch, msg]),
      onError: (e) => void r.errors.push(e),
    },
  };
  return r;
}
