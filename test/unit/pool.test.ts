/**
 * Both crypto pool kinds behind the same tests: batching of many concurrent calls, verdicts for
 * invalid and malformed items, Ethereum sender recovery, clean close, back-pressure, and the
 * worker's answer when its backend cannot load.
 */
import t, { type Test } from 'tap';
import { generateKeyPairSync, sign as edSign, type KeyObject } from 'node:crypto';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import * as secp from '@noble/secp256k1';
import { tryNativeBackend } from '../../src/crypto/backend.js';
import {
  createCryptoPool,
  CryptoPoolError,
  MAX_ITEMS_PER_JOB,
  type CryptoJobTiming,
  type CryptoPool,
  type CryptoPoolKind,
  type CryptoPoolOptions,
  type SigItem,
} from '../../src/pool/index.js';

secp.hashes.sha256 = sha256;
secp.hashes.hmacSha256 = (k, m) => hmac(sha256, k, m);

const hex = (b: Uint8Array | null) => (b === null ? 'null' : Buffer.from(b).toString('hex'));
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

interface EdKey {
  pub: Uint8Array;
  priv: KeyObject;
}
const edKeys: EdKey[] = Array.from({ length: 4 }, () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { pub: publicKey.export({ format: 'der', type: 'spki' }).subarray(12), priv: privateKey };
});

function edItem(i: number, valid = true): SigItem {
  const k = edKeys[i % edKeys.length]!;
  const msg = Buffer.from(`vote ${i}`);
  const sig = edSign(null, msg, k.priv);
  if (!valid) sig[5]! ^= 1;
  return { scheme: 'ed25519', pubKey: k.pub, msg, sig };
}

function secretKey(i: number): Uint8Array {
  const k = new Uint8Array(32);
  k[31] = i;
  return k;
}

function secpSign(digest: Uint8Array, sk: Uint8Array) {
  const rec = secp.sign(digest, sk, { prehash: false, format: 'recovered' });
  return { sig: rec.subarray(1), recid: rec[0]! };
}

function flipToHighS(sig: Uint8Array): Uint8Array {
  const s = BigInt('0x' + hex(sig.subarray(32)));
  const out = Uint8Array.from(sig);
  out.set(Buffer.from((N - s).toString(16).padStart(64, '0'), 'hex'), 32);
  return out;
}

/** The JS backend's secp256k1 takes ~2 ms per verify, so its pool tests use fewer items. */
function makePool(tt: Test, opts: CryptoPoolOptions, jobs: CryptoJobTiming[] = []): CryptoPool {
  const pool = createCryptoPool(opts, { onJob: (j) => jobs.push(j) });
  tt.teardown(() => pool.close());
  return pool;
}

const KINDS: CryptoPoolKind[] = ['single', 'piscina'];
const SETTINGS = tryNativeBackend() ? (['native', 'js'] as const) : (['js'] as const);

for (const kind of KINDS) {
  for (const crypto of SETTINGS) {
    t.test(`${kind} pool, ${crypto} backend`, async (tt) => {
      // One pool for the subtests that do not close it: a worker starts in ~65 ms normally but
      // ~400 ms under tap, whose TypeScript loader every worker thread inherits.
      const jobs: CryptoJobTiming[] = [];
      const pool = makePool(tt, { kind, crypto, threads: 2 }, jobs);
      tt.beforeEach(() => {
        jobs.length = 0;
      });

      tt.test('many concurrent single verifies are batched', async (q) => {
        q.equal(pool.kind, kind);
        const calls = 300;
        const results = await Promise.all(Array.from({ length: calls }, (_, i) => pool.verifySignatures([edItem(i, i % 7 !== 3)])));
        q.equal(results.length, calls);
        q.same(
          results.map((r) => r.length),
          new Array(calls).fill(1),
          'one answer per call',
        );
        q.same(
          results.map((r) => r[0]),
          Array.from({ length: calls }, (_, i) => i % 7 !== 3),
          'each call gets its own verdict',
        );
        const items = jobs.reduce((s, j) => s + j.items, 0);
        q.equal(items, calls, 'every item ran once');
        q.ok(jobs.every((j) => j.items <= MAX_ITEMS_PER_JOB), 'no job over MAX_ITEMS_PER_JOB');
        if (kind === 'piscina') {
          q.ok(jobs.length <= Math.ceil(calls / MAX_ITEMS_PER_JOB) + 1, `${calls} calls ran as ${jobs.length} jobs`);
          q.ok(jobs.every((j) => j.backend === crypto), 'worker used the requested backend');
        }
      });

      tt.test('a large call is split into jobs and answered in order', async (q) => {
        const n = 2 * MAX_ITEMS_PER_JOB + 45;
        const res = await pool.verifySignatures(Array.from({ length: n }, (_, i) => edItem(i, i % 5 !== 0)));
        q.same(
          res,
          Array.from({ length: n }, (_, i) => i % 5 !== 0),
        );
        q.equal(jobs.length, 3, '3 jobs');
        q.ok(jobs.every((j) => j.toWorkerMs >= 0 && j.workerMs >= 0 && j.fromWorkerMs >= -1), 'timestamps are ordered');
      });

      tt.test('invalid and malformed signatures are false', async (q) => {
        const sk = secretKey(7);
        const msg = Buffer.from('cosmos sign doc');
        const digest = sha256(msg);
        const { sig } = secpSign(digest, sk);
        const comp = secp.getPublicKey(sk, true);
        const ethMsg = Buffer.from('eth sign bytes');
        const eth = secpSign(keccak_256(ethMsg), sk);
        const good = edItem(1);
        const items: [SigItem, boolean, string][] = [
          [good, true, 'ed25519 valid'],
          [edItem(2, false), false, 'ed25519 tampered'],
          [{ ...edItem(3), pubKey: edKeys[0]!.pub } as SigItem, false, 'ed25519 wrong key'],
          [{ scheme: 'ed25519', pubKey: new Uint8Array(31), msg, sig: new Uint8Array(64) }, false, 'ed25519 short key'],
          [{ scheme: 'ed25519', pubKey: edKeys[0]!.pub, msg, sig: new Uint8Array(10) }, false, 'ed25519 short sig'],
          [{ scheme: 'secp256k1', pubKey: comp, digest, sig }, true, 'secp256k1 digest valid'],
          [{ scheme: 'secp256k1', pubKey: comp, msg, hash: 'sha256', sig }, true, 'secp256k1 sha256(msg) valid'],
          [{ scheme: 'secp256k1', pubKey: comp, msg: ethMsg, hash: 'keccak256', sig: eth.sig }, true, 'eth_secp256k1 keccak(msg) valid'],
          [{ scheme: 'secp256k1', pubKey: comp, msg: ethMsg, hash: 'sha256', sig: eth.sig }, false, 'wrong hash'],
          [{ scheme: 'secp256k1', pubKey: comp, digest, sig: flipToHighS(sig) }, false, 'secp256k1 high-S'],
          [{ scheme: 'secp256k1', pubKey: secp.getPublicKey(secretKey(8), true), digest, sig }, false, 'secp256k1 wrong key'],
          [{ scheme: 'secp256k1', pubKey: comp, digest: digest.subarray(1), sig }, false, 'secp256k1 31-byte digest'],
          [{ scheme: 'secp256k1', pubKey: comp.subarray(1), digest, sig }, false, 'secp256k1 32-byte key'],
          [{ scheme: 'secp256k1', pubKey: comp, digest, sig: new Uint8Array(65) }, false, 'secp256k1 65-byte sig'],
        ];
        // Several times over, to push the batch past MIN_ITEMS_TO_SKIP_BUFFER: a direct job.
        const all = [...items, ...items, ...items];
        const res = await pool.verifySignatures(all.map((x) => x[0]));
        all.forEach(([, want, name], i) => q.equal(res[i], want, name));
        // And one at a time, through the buffer.
        const single = await Promise.all(items.map(([it]) => pool.verifySignatures([it])));
        items.forEach(([, want, name], i) => q.equal(single[i]![0], want, `${name} (buffered)`));
        q.same(await pool.verifySignatures([]), [], 'empty call');
        await q.rejects(pool.verifySignatures([{ scheme: 'rsa' } as unknown as SigItem]), TypeError, 'unknown scheme is a TypeError');
      });

      tt.test('Ethereum sender recovery', async (q) => {
        const digest = keccak_256(Buffer.from('tx signing hash'));
        const s1 = secpSign(digest, secretKey(1));
        const s2 = secpSign(digest, secretKey(2));
        const got = await pool.recoverSenders([
          { digest, sig: s1.sig, recid: s1.recid },
          { digest, sig: s2.sig, recid: s2.recid },
          { digest, sig: flipToHighS(s1.sig), recid: s1.recid ^ 1 },
          { digest, sig: s1.sig, recid: 7 },
          { digest, sig: new Uint8Array(64), recid: 0 },
          { digest: digest.subarray(2), sig: s1.sig, recid: 0 },
        ]);
        // Secret key 1's address is Ethereum's well-known 0x7E5F…5Bdf.
        q.equal(hex(got[0]!), '7e5f4552091a69125d5dfcb7b8c2659029395bdf', 'key 1');
        q.equal(hex(got[1]!), hex(keccak_256(secp.getPublicKey(secretKey(2), false).subarray(1)).subarray(12)), 'key 2');
        q.equal(got[2], null, 'high-S refused (EIP-2)');
        q.equal(got[3], null, 'recid 7');
        q.equal(got[4], null, 'zero signature');
        q.equal(got[5], null, 'short digest');
        const buffered = await Promise.all([pool.recoverSenders([{ digest, sig: s1.sig, recid: s1.recid }]), pool.verifySignatures([edItem(0)])]);
        q.equal(hex(buffered[0][0]!), '7e5f4552091a69125d5dfcb7b8c2659029395bdf', 'recover and verify share a buffered job');
        q.same(buffered[1], [true]);
      });

      tt.test('close is clean', async (q) => {
        const pool = createCryptoPool({ kind, crypto, threads: 1 });
        const pending = pool.verifySignatures([edItem(0)]);
        await pool.close();
        q.same(await pending, [true], 'a call buffered before close() is still answered');
        await q.rejects(pool.verifySignatures([edItem(1)]), { code: 'POOL_CLOSED' });
        q.equal(pool.canAcceptWork(), false);
        await pool.close();
        q.pass('close() twice is fine');
      });
    });
  }
}

t.test('piscina back-pressure', async (tt) => {
  const jobs: CryptoJobTiming[] = [];
  const pool = makePool(tt, { kind: 'piscina', threads: 1, maxItemsPerJob: 4, maxQueuedJobs: 3 }, jobs);
  tt.equal(pool.canAcceptWork(), true);
  tt.equal(pool.queueLength(), 0);
  // 16 items of 4 per job: 4 jobs in flight, over the limit of 3.
  const big = pool.verifySignatures(Array.from({ length: 16 }, (_, i) => edItem(i)));
  tt.equal(pool.queueLength(), 4, 'queueLength counts jobs in flight');
  tt.equal(pool.canAcceptWork(), false, 'canAcceptWork is false when full');
  const err = await pool.verifySignatures([edItem(0)]).catch((e: unknown) => e);
  tt.type(err, CryptoPoolError);
  tt.equal((err as CryptoPoolError).code, 'POOL_QUEUE_FULL', 'typed error');
  await tt.rejects(pool.recoverSenders([{ digest: new Uint8Array(32), sig: new Uint8Array(64), recid: 0 }]), { code: 'POOL_QUEUE_FULL' });
  tt.same(await big, new Array(16).fill(true), 'queued work still completes');
  tt.equal(pool.queueLength(), 0, 'drained');
  tt.equal(pool.canAcceptWork(), true, 'accepts work again');
  tt.same(await pool.verifySignatures([edItem(1)]), [true]);
});

t.test('single pool never refuses work', async (tt) => {
  const pool = makePool(tt, { kind: 'single' });
  tt.equal(pool.canAcceptWork(), true);
  tt.equal(pool.queueLength(), 0);
});

t.test('a worker whose backend cannot load answers POOL_WORKER_ERROR', async (tt) => {
  const saved = process.env['CHAIND_NATIVE_PATH'];
  // Workers copy process.env when they start, which Piscina does in the constructor.
  process.env['CHAIND_NATIVE_PATH'] = '/nonexistent/chaind-native.node';
  let pool: CryptoPool;
  try {
    pool = makePool(tt, { kind: 'piscina', threads: 1, crypto: 'native' });
  } finally {
    if (saved === undefined) delete process.env['CHAIND_NATIVE_PATH'];
    else process.env['CHAIND_NATIVE_PATH'] = saved;
  }
  const err = await pool.verifySignatures([edItem(0)]).catch((e: unknown) => e);
  tt.type(err, CryptoPoolError);
  tt.equal((err as CryptoPoolError).code, 'POOL_WORKER_ERROR');
  tt.match((err as Error).message, /native/);
  tt.equal(pool.canAcceptWork(), true, 'the pool itself is still usable');
});

t.test('createCryptoPool rejects an unknown kind', async (tt) => {
  tt.throws(() => createCryptoPool({ kind: 'gpu' as CryptoPoolKind }), TypeError);
});

t.test("the pool threads' execArgv: V8's flags dropped (a worker refuses them), Node's kept", async (t) => {
  const { workerExecArgv } = await import('../../src/pool/piscina.js');
  const { Worker } = await import('node:worker_threads');
  const argv = ['--max-old-space-size=4096', '--import', 'x.js', '--trace-gc', '--no-parallel-scavenge', '--stack_trace_limit=50', '--enable-source-maps', '--expose-gc'];
  const kept = workerExecArgv(argv);
  t.same(kept, ['--import', 'x.js', '--enable-source-maps']);
  // The whole list is what node refuses; what is kept starts a worker.
  t.throws(() => new Worker('0', { eval: true, execArgv: ['--max-old-space-size=4096'] }), { code: 'ERR_WORKER_INVALID_EXEC_ARGV' });
  const w = new Worker('0', { eval: true, execArgv: kept.filter((a) => a !== '--import' && a !== 'x.js') });
  t.equal(await new Promise((res) => w.once('exit', res)), 0, 'a worker with the kept flags runs');
  t.same(workerExecArgv(['--import', 'y.js', '--cpu-prof'], () => { throw new Error('not read for common Node flags'); }), ['--import', 'y.js', '--cpu-prof']);
});
