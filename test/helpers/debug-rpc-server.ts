/**
 * A process for test/unit/debug-profiling.test.ts: the EVM JSON-RPC with `debug` enabled (and a
 * second one without it) over a real worker pool (PiscinaCryptoPool, kept busy verifying
 * signatures) and two named worker threads, one running `chaindBusyLoop` 10 ms in every 50, one idle. Run as
 * plain `node` (no test-runner loader threads), so its threads are exactly these. Prints
 * `{"port":…,"plainPort":…}` once listening. Env: PROFILES (directory), JWT_SECRET (hex).
 */
import './crypto-env.js'; // first: CHAIND_CRYPTO of the test run (./crypto-env.ts)
import { Worker } from 'node:worker_threads';
import { PiscinaCryptoPool } from '../../src/pool/piscina.js';
import { startEvmRpc, type EvmRpcDeps } from '../../src/rpc/evm/index.js';

const busy = new Worker(
  `function chaindBusyLoop() { const end = Date.now() + 10; let x = 0; while (Date.now() < end) x += Math.sqrt(x + 1); return x; }
   setInterval(chaindBusyLoop, 50);`,
  { eval: true, name: 'busy' },
);
const idle = new Worker(`setInterval(() => {}, 60_000);`, { eval: true, name: 'idle' });
await Promise.all([new Promise((r) => busy.once('online', r)), new Promise((r) => idle.once('online', r))]);

const pool = new PiscinaCryptoPool({ threads: 1 });
const item = { scheme: 'ed25519' as const, pubKey: new Uint8Array(32).fill(1), msg: new Uint8Array(64).fill(2), sig: new Uint8Array(64).fill(3) };
const jobs = setInterval(() => void pool.verifySignatures(Array.from({ length: 100 }, () => item)).catch(() => undefined), 50);

const deps = () => ({ profilesDir: process.env.PROFILES! }) as EvmRpcDeps;
const jwtSecret = Buffer.from(process.env.JWT_SECRET!, 'hex');
const server = await startEvmRpc({ deps: deps(), address: '127.0.0.1:0', api: ['eth', 'debug'], jwtSecret });
const plain = await startEvmRpc({ deps: deps(), address: '127.0.0.1:0', api: ['eth', 'net'], jwtSecret });
process.stdout.write(`${JSON.stringify({ port: server.port, plainPort: plain.port })}\n`);

// The test's end: SIGTERM, or its stdin closing (the runner died without a teardown).
process.stdin.on('close', () => process.exit(0));
process.stdin.resume();
process.on('SIGTERM', async () => {
  clearInterval(jobs);
  await server.close();
  await plain.close();
  await pool.close();
  await busy.terminate();
  await idle.terminate();
  process.exit(0);
});
