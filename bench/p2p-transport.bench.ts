/**
 * P2P transport throughput per connection over loopback TCP:
 *   1. SecretConnection alone: plaintext written in 64 KiB pieces, read back on the other side;
 *   2. SecretConnection + MConnection: messages of 64 KiB and of 1 KiB on one channel, rate limits
 *      off, and once with the default 5,120,000 B/s limit to show it holds.
 * Both ends run in this one process (one core does sealing and opening), so a real two-machine
 * link would see up to twice the per-side rate.
 *
 *   node dist/bench/p2p-transport.bench.js            # 32 MiB per case
 *   P2P_BENCH_MB=128 node dist/bench/p2p-transport.bench.js
 */
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Socket } from 'node:net';
import { Ed25519PrivKey } from '../src/crypto/ed25519.js';
import { MConnection, type MConnConfig } from '../src/p2p/mconnection.js';
import { SecretConnection } from '../src/p2p/secret-connection.js';
import { report as figure } from './report.js';

const MB = Number(process.env['P2P_BENCH_MB'] ?? 32);
const TOTAL = MB * 1024 * 1024;

async function socketPair(): Promise<[Socket, Socket]> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const accepted = new Promise<Socket>((r) => server.once('connection', r));
  const client = connect({ host: '127.0.0.1', port });
  await new Promise<void>((r) => client.once('connect', r));
  const s = await accepted;
  server.close();
  return [client, s];
}

async function secretPair(): Promise<[SecretConnection, SecretConnection]> {
  const [a, b] = await socketPair();
  return Promise.all([SecretConnection.handshake(a, Ed25519PrivKey.generate()), SecretConnection.handshake(b, Ed25519PrivKey.generate())]);
}

const mbps = new Map<string, number>();
function report(name: string, bytes: number, ms: number): void {
  mbps.set(name, bytes / 1e6 / (ms / 1000));
  console.log(`${name.padEnd(48)} ${(bytes / 1e6 / (ms / 1000)).toFixed(1).padStart(7)} MB/s  (${(bytes / 1e6).toFixed(1)} MB in ${ms.toFixed(0)} ms)`);
}

async function benchSecret(): Promise<void> {
  const [a, b] = await secretPair();
  const piece = randomBytes(64 * 1024);
  const start = performance.now();
  const reading = (async () => {
    let left = TOTAL;
    while (left > 0) {
      const n = Math.min(left, 256 * 1024);
      await b.reader.read(n);
      left -= n;
    }
  })();
  for (let sent = 0; sent < TOTAL; sent += piece.length) {
    if (!a.write(piece)) await a.drain();
  }
  await reading;
  report('SecretConnection (64 KiB writes)', TOTAL, performance.now() - start);
  a.close();
  b.close();
}

async function benchMConn(name: string, msgSize: number, cfg: Partial<MConnConfig>, total = TOTAL): Promise<void> {
  const [sa, sb] = await secretPair();
  const chans = [{ id: 0x40, priority: 5, sendQueueCapacity: 64 }];
  let got = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const count = Math.floor(total / msgSize);
  const a = new MConnection(sa, chans, { onReceive: () => {}, onError: (e) => console.error('sender', e) }, cfg);
  const b = new MConnection(
    sb,
    chans,
    {
      onReceive: (_ch, m) => {
        got += m.length;
        if (got >= count * msgSize) done();
      },
      onError: (e) => console.error('receiver', e),
    },
    cfg,
  );
  a.start();
  b.start();
  const msg = randomBytes(msgSize);
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    if (!a.trySend(0x40, msg)) await a.send(0x40, msg);
  }
  await finished;
  report(name, count * msgSize, performance.now() - start);
  a.stop();
  b.stop();
}

const unlimited = { sendRate: 0, recvRate: 0 };
await benchSecret();
await benchMConn('MConnection, 64 KiB messages, no rate limit', 64 * 1024, unlimited);
await benchMConn('MConnection, 1 KiB messages, no rate limit', 1024, unlimited);
await benchMConn('MConnection, 64 KiB messages, 5,120,000 B/s', 64 * 1024, {}, Math.min(TOTAL, 16 * 1024 * 1024));

const secret = mbps.get('SecretConnection (64 KiB writes)')!;
for (const name of ['MConnection, 64 KiB messages, no rate limit', 'MConnection, 1 KiB messages, no rate limit']) {
  figure({ area: 'P2P', figure: `${name}, one connection, loopback`, unit: 'MB/s', value: mbps.get(name)!, peer: 'SecretConnection alone', peerValue: secret });
}
figure({ area: 'P2P', figure: 'MConnection with the default send rate', unit: 'MB/s', value: mbps.get('MConnection, 64 KiB messages, 5,120,000 B/s')!, peer: 'configured limit', peerValue: 5.12, note: 'should be ≈ 1×' });
