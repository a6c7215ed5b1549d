/**
 * A standalone P2P peer for the two-process test (run from dist: node dist/test/helpers/p2p-peer.js
 * <node_key.json> <network>). It loads its key through src/config, listens on 127.0.0.1:0 and
 * prints one JSON line {port, id}. For each accepted connection it prints {event: "peer", id,
 * moniker}, sends two messages of its own (5000 bytes on 0x30, "hello" on 0x20), and echoes every
 * message it receives back on the same channel, reversed. It prints {event: "closed", code} and
 * exits when the connection ends.
 */
import './crypto-env.js'; // first: CHAIND_CRYPTO of the test run (./crypto-env.ts)
import { fileURLToPath } from 'node:url';
import { readNodeKey } from '../../src/config/keyfiles.js';
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import { MConnection } from '../../src/p2p/mconnection.js';
import { Transport } from '../../src/p2p/transport.js';

export const PEER_CHANNELS = [
  { id: 0x20, priority: 5, sendQueueCapacity: 100 },
  { id: 0x30, priority: 1, sendQueueCapacity: 100 },
];

/** The peer's own 5000-byte message: byte i = (i * 31 + 7) & 0xff. */
export function peerBigMessage(): Uint8Array {
  return Uint8Array.from({ length: 5000 }, (_, i) => (i * 31 + 7) & 0xff);
}

async function main(): Promise<void> {
  const [keyPath, network] = process.argv.slice(2);
  if (!keyPath || !network) throw new Error('usage: p2p-peer <node_key.json> <network>');
  const nk = readNodeKey(keyPath);
  const key = Ed25519PrivKey.fromBytes(nk.privKey);
  const print = (o: unknown) => process.stdout.write(JSON.stringify(o) + '\n');
  const nodeInfo = {
    protocolVersion: { p2p: 8n, block: 11n, app: 0n },
    id: nk.id,
    listenAddr: 'tcp://127.0.0.1:0',
    network,
    version: '0.38.17',
    channels: Uint8Array.of(0x20, 0x30),
    moniker: 'peer-process',
    other: { txIndex: 'off', rpcAddress: '' },
  };
  const transport = new Transport({ nodeKey: key, nodeInfo, handshakeTimeout: 20_000 });
  const port = await transport.listen(
    '127.0.0.1',
    0,
    (up) => {
      print({ event: 'peer', id: up.id, moniker: up.nodeInfo.moniker });
      const mc = new MConnection(
        up.conn,
        PEER_CHANNELS,
        {
          onReceive: (ch, msg) => {
            void mc.send(ch, Uint8Array.from(msg).reverse());
          },
          onError: (err) => {
            print({ event: 'closed', code: err.code });
            void transport.close().then(() => process.exit(0));
          },
        },
        { flushThrottle: 10 },
      );
      mc.start();
      void mc.send(0x30, peerBigMessage());
      void mc.send(0x20, new TextEncoder().encode('hello'));
    },
    (err) => print({ event: 'rejected', message: (err as Error).message }),
  );
  print({ port, id: nk.id });
}

// Run only as a script, so the test can import the constants above.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    process.stderr.write(`p2p-peer: ${(err as Error).stack}\n`);
    process.exit(1);
  });
}
