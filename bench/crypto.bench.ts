/**
 * Crypto backend benchmarks: native (native/, Rust + libsecp256k1) against JS (src/crypto/js.ts),
 * plus ed25519 through node:crypto against tweetnacl, and the two pool kinds end to end.
 *
 *   node dist/bench/crypto.bench.js              # all suites, ~1 s per case
 *   BENCH_MAX_TIME=5 node dist/bench/crypto.bench.js
 *
 * benny is used because the project asked for it (caderek/benny:README.md: it is unmaintained). Every case
 * is its own function literal so that V8's call-site feedback is not shared between the native
 * and the JS object (a shared megamorphic site would slow both and blur the ratio).
 */
import b from 'benny';
import { generateKeyPairSync, randomBytes, sign as edSign } from 'node:crypto';
import nacl from 'tweetnacl';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import * as secp from '@noble/secp256k1';
import { getJsBackend, nativeLoadError, tryNativeBackend } from '../src/crypto/backend.js';
import { createCryptoPool, type SigItem } from '../src/pool/index.js';
import { report } from './report.js';

secp.hashes.sha256 = sha256;
secp.hashes.hmacSha256 = (k, m) => hmac(sha256, k, m);

const CASE = { maxTime: Number(process.env['BENCH_MAX_TIME'] ?? 1), minSamples: 5 };
const js = getJsBackend();
const native = tryNativeBackend();
if (!native) console.log(`native backend not available (${nativeLoadError()?.message}); JS only`);

const ratios: { what: string; ratio: number; a: string; b: string }[] = [];
const opsOf = new Map<string, number>();

async function suite(name: string, ...cases: Parameters<typeof b.suite>[1][]): Promise<void> {
  await b.suite(
    name,
    ...cases,
    b.cycle(),
    b.complete((summary) => {
      for (const r of summary.results) opsOf.set(`${name} / ${r.name}`, r.ops);
    }),
  );
}

function ratio(what: string, suiteName: string, fast: string, slow: string): void {
  const a = opsOf.get(`${suiteName} / ${fast}`);
  const s = opsOf.get(`${suiteName} / ${slow}`);
  if (a && s) {
    ratios.push({ what, ratio: a / s, a: fast, b: slow });
    report({ area: 'crypto', figure: `${suiteName} (${fast})`, unit: 'ops/s', value: a, peer: slow, peerValue: s });
  }
}

const d32 = randomBytes(32);
const d1k = randomBytes(1024);
const out = new Uint8Array(32);

// --- keccak256 -------------------------------------------------------------------------------
await suite(
  'keccak256 32 B',
  ...(native
    ? [
        b.add('native into', () => {
          native.keccak256Into(d32, out, 0);
        }, CASE),
        b.add('native alloc', () => {
          native.keccak256(d32);
        }, CASE),
      ]
    : []),
  b.add('js into', () => {
    js.keccak256Into(d32, out, 0);
  }, CASE),
  b.add('js alloc', () => {
    js.keccak256(d32);
  }, CASE),
);
ratio('keccak256 32 B, into', 'keccak256 32 B', 'native into', 'js into');
ratio('keccak256 32 B, allocating', 'keccak256 32 B', 'native alloc', 'js alloc');
ratio('keccak256 32 B, native into vs alloc', 'keccak256 32 B', 'native into', 'native alloc');

await suite(
  'keccak256 1 KiB',
  ...(native
    ? [
        b.add('native into', () => {
          native.keccak256Into(d1k, out, 0);
        }, CASE),
      ]
    : []),
  b.add('js into', () => {
    js.keccak256Into(d1k, out, 0);
  }, CASE),
);
ratio('keccak256 1 KiB, into', 'keccak256 1 KiB', 'native into', 'js into');

// 1000 32-byte items per call: the per-hash cost without per-call overhead.
const batchIn = randomBytes(32 * 1000);
const batchOut = new Uint8Array(32 * 1000);
await suite(
  'keccak256 batch 1000 x 32 B',
  ...(native
    ? [
        b.add('native batch', () => {
          native.keccak256Batch(batchIn, 32, batchOut);
        }, CASE),
      ]
    : []),
  b.add('js batch', () => {
    js.keccak256Batch(batchIn, 32, batchOut);
  }, CASE),
);
ratio('keccak256 batch of 1000', 'keccak256 batch 1000 x 32 B', 'native batch', 'js batch');

// --- merkle ----------------------------------------------------------------------------------
// DataHash of a 100-tx block: the leaves are 32-byte tx hashes (cometbft/cometbft:types/block.go).
const leaves = Array.from({ length: 100 }, () => randomBytes(32));
await suite(
  'merkleRoot 100 x 32 B',
  ...(native
    ? [
        b.add('native', () => {
          native.merkleRoot(leaves);
        }, CASE),
      ]
    : []),
  b.add('js', () => {
    js.merkleRoot(leaves);
  }, CASE),
);
ratio('merkleRoot 100 leaves', 'merkleRoot 100 x 32 B', 'native', 'js');

// --- secp256k1 -------------------------------------------------------------------------------
const sk = randomBytes(32);
sk[0] = 0x42; // below n
const pub = secp.getPublicKey(sk, true);
const digest = sha256(Buffer.from('bench'));
const rsig = secp.sign(digest, sk, { prehash: false, format: 'recovered' });
const sig = rsig.subarray(1);
const recid = rsig[0]!;
await suite(
  'secp256k1 verify',
  ...(native
    ? [
        b.add('native', () => {
          native.secp256k1Verify(digest, sig, pub);
        }, CASE),
      ]
    : []),
  b.add('js', () => {
    js.secp256k1Verify(digest, sig, pub);
  }, CASE),
);
ratio('secp256k1 verify', 'secp256k1 verify', 'native', 'js');

await suite(
  'secp256k1 recover',
  ...(native
    ? [
        b.add('native', () => {
          native.secp256k1Recover(digest, sig, recid);
        }, CASE),
      ]
    : []),
  b.add('js', () => {
    js.secp256k1Recover(digest, sig, recid);
  }, CASE),
);
ratio('secp256k1 recover', 'secp256k1 recover', 'native', 'js');

// --- ed25519 ---------------------------------------------------------------------------------
const edMsg = randomBytes(64);
const seed = randomBytes(32);
const naclKp = nacl.sign.keyPair.fromSeed(seed);
const edSig = nacl.sign.detached(edMsg, naclKp.secretKey);
await suite(
  'ed25519 verify 64 B',
  b.add('node:crypto (cached KeyObject)', () => {
    js.ed25519Verify(naclKp.publicKey, edMsg, edSig);
  }, CASE),
  b.add('tweetnacl', () => {
    nacl.sign.detached.verify(edMsg, edSig, naclKp.publicKey);
  }, CASE),
);
ratio('ed25519 verify', 'ed25519 verify 64 B', 'node:crypto (cached KeyObject)', 'tweetnacl');

// --- pools -----------------------------------------------------------------------------------
// Not benny: one timed run of 4096 ed25519 items submitted as 4096 concurrent single calls
// (the mempool pattern), per pool kind. Shows batching at work and what the worker costs.
async function poolRun(kind: 'single' | 'piscina', threads: number): Promise<number> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pk = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
  const items: SigItem[] = Array.from({ length: 4096 }, (_, i) => {
    const msg = Buffer.from(`tx ${i}`);
    return { scheme: 'ed25519', pubKey: pk, msg, sig: edSign(null, msg, privateKey) };
  });
  const pool = createCryptoPool({ kind, threads });
  await pool.verifySignatures(items.slice(0, 256)); // warm-up: threads started, backend loaded
  const t0 = performance.now();
  const res = await Promise.all(items.map((it) => pool.verifySignatures([it])));
  const ms = performance.now() - t0;
  await pool.close();
  if (!res.every((r) => r[0] === true)) throw new Error('pool bench: a valid signature failed');
  return (ms * 1000) / items.length;
}
const poolUs: Record<string, number> = {};
poolUs['single'] = await poolRun('single', 1);
poolUs['piscina, 1 thread'] = await poolRun('piscina', 1);
poolUs['piscina, 2 threads'] = await poolRun('piscina', 2);

report({ area: 'crypto', figure: '4096 concurrent ed25519 verifies through the pool (piscina, 2 threads)', unit: 'µs/item', value: poolUs['piscina, 2 threads']!, peer: 'single-thread pool', peerValue: poolUs['single']!, better: 'lower' });
report({ area: 'crypto', figure: '4096 concurrent ed25519 verifies through the pool (piscina, 1 thread)', unit: 'µs/item', value: poolUs['piscina, 1 thread']!, peer: 'single-thread pool', peerValue: poolUs['single']!, better: 'lower' });

console.log('\n== ratios (ops/s of the first over the second)');
for (const r of ratios) console.log(`${r.what.padEnd(40)} ${r.ratio.toFixed(1).padStart(7)}x   (${r.a} / ${r.b})`);
console.log('\n== pool, 4096 concurrent single ed25519 verifies (µs per item, wall clock)');
for (const [k, v] of Object.entries(poolUs)) console.log(`${k.padEnd(40)} ${v.toFixed(1).padStart(7)} µs`);
