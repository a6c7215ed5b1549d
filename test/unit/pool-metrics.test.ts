/** Worker-pool metrics (src/pool CryptoPoolMetrics) through the real catalogue and registry. */
import { generateKeyPairSync, sign as edSign } from 'node:crypto';
import t from 'tap';
import { createMetrics } from '../../src/metrics/metrics.js';
import { createCryptoPool, type CryptoPoolKind, type SigItem } from '../../src/pool/index.js';

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const pub = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
function item(i: number): SigItem {
  const msg = Buffer.from(`vote ${i}`);
  return { scheme: 'ed25519', pubKey: pub, msg, sig: edSign(null, msg, privateKey) };
}

/** The value of one un-labelled series in the exposition text. */
function value(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (m === null) throw new Error(`${name} not in metrics`);
  return Number(m[1]);
}

for (const kind of ['single', 'piscina'] as CryptoPoolKind[]) {
  t.test(`${kind}: jobs, items per job, job and wait time`, async (t) => {
    const metrics = createMetrics('t');
    const pool = createCryptoPool({ kind, threads: 1, maxItemsPerJob: 4, crypto: 'js' }, { metrics: metrics.pool });
    t.teardown(() => pool.close());
    // 10 items of 4 per job: 3 jobs (4, 4, 2).
    t.same(await pool.verifySignatures(Array.from({ length: 10 }, (_, i) => item(i))), new Array(10).fill(true));
    const text = metrics.registry.render();
    t.equal(value(text, 't_pool_jobs_total'), 3);
    t.equal(value(text, 't_pool_job_items_count'), 3);
    t.equal(value(text, 't_pool_job_items_sum'), 10);
    t.equal(value(text, 't_pool_job_seconds_count'), 3);
    t.equal(value(text, 't_pool_job_wait_seconds_count'), 3);
    t.ok(value(text, 't_pool_job_seconds_sum') >= 0);
    t.equal(value(text, 't_pool_busy_refusals_total'), 0);
    t.equal(value(text, 't_pool_job_errors_total'), 0);
  });
}

t.test('piscina: queue depth follows the jobs in flight, refusals are counted', async (t) => {
  const metrics = createMetrics('t');
  const pool = createCryptoPool({ kind: 'piscina', threads: 1, maxItemsPerJob: 4, maxQueuedJobs: 3, crypto: 'js' }, { metrics: metrics.pool });
  t.teardown(() => pool.close());
  // 16 items: 4 jobs in flight at once, beyond the limit of 3.
  const big = pool.verifySignatures(Array.from({ length: 16 }, (_, i) => item(i)));
  t.equal(value(metrics.registry.render(), 't_pool_queue_length'), 4, 'the gauge reads the jobs in flight');
  await t.rejects(pool.verifySignatures([item(0)]), { code: 'POOL_QUEUE_FULL' });
  await t.rejects(pool.verifySignatures([item(1)]), { code: 'POOL_QUEUE_FULL' });
  t.equal(value(metrics.registry.render(), 't_pool_busy_refusals_total'), 2, 'each refused call counts once');
  await big;
  const text = metrics.registry.render();
  t.equal(value(text, 't_pool_queue_length'), 0, 'drained');
  t.equal(value(text, 't_pool_jobs_total'), 4);
});
