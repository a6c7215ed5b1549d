/**
 * Crypto backend benchmarks: native (native/, Rust + libsecp256k1) against JS (src/crypto/js.ts),
 * plus ed25519 through node:crypto against tweetnacl, and the two pool kinds end to end.
 *
 *   node dist/bench/crypto.bench.js              # all figures, 5 alternating pairs, 0.5 s per case
 *   BENCH_MAX_TIME=2 BENCH_PAIRS=9 node dist/bench/crypto.bench.js
 *
 * Every figure is PAIRS alternating benny runs of its two cases (A then B, then B then A, …;
 * bench/report.ts alternate()), reported as the median of the pair ratios with their spread: the
 * machine is shared, and a ratio taken within one pair is what survives its load.
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
import { PAIRS, type Sample, alternate, report } from './report.js';

secp.hashes.sha256 = sha256;
secp.hashes.hmacSha256 = (k, m) => hmac(sha256, k, m);

const CASE = { maxTime: Number(process.env['BENCH_MAX_TIME'] ?? 0.5), minSamples: 5 };
const js = getJsBackend();
const native = tryNativeBackend();
if (!native) console.log(`native backend not available (${nativeLoadError()?.message}); JS only`);

const ratios: { what: string; ratio: number; spread: number; a: string; b: string }[] = [];

type Case = readonly [label: string, fn: () => void];
const c = (label: string, fn: () => void): Case => [label, fn];

/** One benny run of `cases` in the order given; ops/s by label. */
async function once(name: string, cases: readonly Case[]): Promise<Map<string, number>> {
  const ops = new Map<string, number>();
  await b.suite(
    name,
    ...cases.map(([label, fn]) => b.add(label, fn, CASE)),
    b.cycle(),
    b.complete((summary) => {
      for (const r of summary.results) ops.set(r.name, r.ops);
    }),
  );
  return ops;
}

/**
 * One figure from PAIRS alternating benny runs of `fast` and `slow` (fast first, then slow first,
 * …), reported with every pair. Skipped when a case is missing (no native backend).
 */
async function pairs(suiteName: string, fast: Case | undefined, slow: Case | undefined, peer: string, note?: string): Promise<void> {
  if (!fast || !slow) return;
  // One unrecorded round first: the first timed pair otherwise carries the JIT's warm-up (the
  // 32-byte keccak figure, a few hundred ns a call, once spread 1,520 % over five pairs).
  await once(`${suiteName} (warm-up)`, [fast, slow]);
  const samples: Sample[] = [];
  for (let i = 0; i < PAIRS; i++) {
    const ops = await once(`${suiteName} (pair ${i + 1}/${PAIRS})`, i % 2 === 0 ? [fast, slow] : [slow, fast]);
    samples.push({ value: ops.get(fast[0])!, peerValue: ops.get(slow[0])! });
  }
  const rec = report({ area: 'crypto', figure: `${suiteName} (${fast[0]})`, unit: 'ops/s', samples, peer, ...(note ? { note } : {}) });
  ratios.push({ what: suiteName, ratio: rec.ratio, spread: rec.spread ?? 0, a: fast[0], b: slow[0] });
}

const d32 = randomBytes(32);
const d1k = randomBytes(1024);
const out = new Uint8Array(32);

// --- keccak256 -------------------------------------------------------------------------------
// The JS backend's keccak is @noble/hashes' keccak_256 (src/crypto/js.ts), plus the copy into out.
await pairs(
  'keccak256 32 B into a buffer',
  native && c('native into', () => {
    native.keccak256Into(d32, out, 0);
  }),
  c('@noble/hashes into', () => {
    js.keccak256Into(d32, out, 0);
  }),
  '@noble/hashes (JS backend)',
  'goal ≥ 8×',
);
await pairs(
  'keccak256 32 B allocating',
  native && c('native alloc', () => {
    native.keccak256(d32);
  }),
  c('@noble/hashes alloc', () => {
    js.keccak256(d32);
  }),
  '@noble/hashes (JS backend)',
);
await pairs(
  'keccak256 32 B, native: into vs allocating',
  native && c('native into', () => {
    native.keccak256Into(d32, out, 0);
  }),
  native && c('native alloc', () => {
    native.keccak256(d32);
  }),
  'native allocating',
);
await pairs(
  'keccak256 1 KiB into a buffer',
  native && c('native into', () => {
    native.keccak256Into(d1k, out, 0);
  }),
  c('@noble/hashes into', () => {
    js.keccak256Into(d1k, out, 0);
  }),
  '@noble/hashes (JS backend)',
);

// 1000 32-byte items per call: the per-hash cost without per-call overhead.
const batchIn = randomBytes(32 * 1000);
const batchOut = new Uint8Array(32 * 1000);
await pairs(
  'keccak256 batch 1000 x 32 B',
  native && c('native batch', () => {
    native.keccak256Batch(batchIn, 32, batchOut);
  }),
  c('@noble/hashes batch', () => {
    js.keccak256Batch(batchIn, 32, batchOut);
  }),
  '@noble/hashes (JS backend)',
);

// One level of a state-root commit as src/evm/trie.ts hashes it: 1,000 nodes of trie sizes
// (account leaves ~110 B, storage leaves ~70 B, branches up to 532 B) in one keccak256Spans call.
const spanLens = Array.from({ length: 1000 }, (_, i) => (i % 10 === 0 ? 532 : i % 2 ? 110 : 70));
const spanIn = randomBytes(spanLens.reduce((x, y) => x + y, 0));
let spanEnd = 0;
const spanEnds = Uint32Array.from(spanLens.map((l) => (spanEnd += l)));
const spanOut = new Uint8Array(32 * 1000);
await pairs(
  'keccak256Spans, a trie level of 1000 nodes',
  native && c('native spans', () => {
    native.keccak256Spans(spanIn, spanEnds, spanOut);
  }),
  c('@noble/hashes spans', () => {
    js.keccak256Spans(spanIn, spanEnds, spanOut);
  }),
  '@noble/hashes (JS backend)',
);

// --- merkle ----------------------------------------------------------------------------------
// DataHash of a 100-tx block: the leaves are 32-byte tx hashes (cometbft/cometbft:types/block.go).
const leaves = Array.from({ length: 100 }, () => randomBytes(32));
await pairs(
  'merkleRoot 100 x 32 B',
  native && c('native', () => {
    native.merkleRoot(leaves);
  }),
  c('js', () => {
    js.merkleRoot(leaves);
  }),
  'JS backend (node:crypto sha256, top-down)',
);

// --- app hash --------------------------------------------------------------------------------
// One LtHash element step of src/app/apphash.ts, as a changed bank balance gives it (key ~50 B,
// value ~20 B): two per changed key, ~5 keys an ERC-20 transfer and 4 a bank send.
const ltLanes = new Uint8Array(2048);
const ltKey = randomBytes(50);
const ltValue = randomBytes(20);
await pairs(
  'LtHash element step (ltHashMix), a 50 B key and a 20 B value',
  native && c('native', () => {
    native.ltHashMix(ltLanes, ltKey, ltValue, false);
  }),
  c('js', () => {
    js.ltHashMix(ltLanes, ltKey, ltValue, false);
  }),
  'JS backend (node:crypto SHAKE256, JS lane sum)',
);

// --- secp256k1 -------------------------------------------------------------------------------
const sk = randomBytes(32);
sk[0] = 0x42; // below n
const pub = secp.getPublicKey(sk, true);
const digest = sha256(Buffer.from('bench'));
const rsig = secp.sign(digest, sk, { prehash: false, format: 'recovered' });
const sig = rsig.subarray(1);
const recid = rsig[0]!;
await pairs(
  'secp256k1 verify',
  native && c('native', () => {
    native.secp256k1Verify(digest, sig, pub);
  }),
  c('@noble/secp256k1', () => {
    js.secp256k1Verify(digest, sig, pub);
  }),
  '@noble/secp256k1 (JS backend)',
);
await pairs(
  'secp256k1 recover',
  native && c('native', () => {
    native.secp256k1Recover(digest, sig, recid);
  }),
  c('@noble/secp256k1', () => {
    js.secp256k1Recover(digest, sig, recid);
  }),
  '@noble/secp256k1 (JS backend)',
  'goal ≥ 20×',
);

// --- ed25519 ---------------------------------------------------------------------------------
const edMsg = randomBytes(64);
const seed = randomBytes(32);
const naclKp = nacl.sign.keyPair.fromSeed(seed);
const edSig = nacl.sign.detached(edMsg, naclKp.secretKey);
await pairs(
  'ed25519 verify 64 B',
  c('node:crypto (cached KeyObject)', () => {
    js.ed25519Verify(naclKp.publicKey, edMsg, edSig);
  }),
  c('tweetnacl', () => {
    nacl.sign.detached.verify(edMsg, edSig, naclKp.publicKey);
  }),
  'tweetnacl',
);

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
const pool2 = await alternate(() => poolRun('piscina', 2), () => poolRun('single', 1), { better: 'lower' });
const pool1 = await alternate(() => poolRun('piscina', 1), () => poolRun('single', 1), { better: 'lower' });
report({ area: 'crypto', figure: '4096 concurrent ed25519 verifies through the pool (piscina, 2 threads)', unit: 'µs/item', samples: pool2.samples, peer: 'single-thread pool', better: 'lower' });
report({ area: 'crypto', figure: '4096 concurrent ed25519 verifies through the pool (piscina, 1 thread)', unit: 'µs/item', samples: pool1.samples, peer: 'single-thread pool', better: 'lower' });

console.log(`\n== ratios (ops/s of the first over the second; median of ${PAIRS} alternating pairs, spread of the pair ratios)`);
for (const r of ratios) console.log(`${r.what.padEnd(44)} ${r.ratio.toFixed(1).padStart(7)}x  spread ${(r.spread * 100).toFixed(0).padStart(3)}%   (${r.a} / ${r.b})`);
console.log('\n== pool, 4096 concurrent single ed25519 verifies (µs per item, wall clock, medians)');
console.log(`${'single'.padEnd(40)} ${pool2.peerValue.toFixed(1).padStart(7)} µs`);
console.log(`${'piscina, 1 thread'.padEnd(40)} ${pool1.value.toFixed(1).padStart(7)} µs`);
console.log(`${'piscina, 2 threads'.padEnd(40)} ${pool2.value.toFixed(1).padStart(7)} µs`);
