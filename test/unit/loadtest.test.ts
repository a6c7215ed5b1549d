/**
 * The parts of `chaind loadtest` that need no node: flag parsing, percentiles, reason grouping,
 * the report text, and the embedded ERC-20 bytecode against its fixture.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { formatReport, parseDuration, parseRate, percentile, reasonKey, type TxReport } from '../../src/cli/loadtest.js';
import { TOKEN_BYTECODE } from '../../src/cli/loadtest-token.js';
import { ROOT } from '../helpers/node.js';

t.test('durations and rates', async (t) => {
  t.equal(parseDuration('30s'), 30_000);
  t.equal(parseDuration('1m'), 60_000);
  t.equal(parseDuration('500ms'), 500);
  t.equal(parseDuration('2.5'), 2500);
  t.throws(() => parseDuration('ten'), { code: 'CLI_USAGE' });
  t.throws(() => parseDuration('0s'), { code: 'CLI_USAGE' });
  t.same(parseRate('250'), [250]);
  t.same(parseRate('100:500:100'), [100, 200, 300, 400, 500]);
  t.same(parseRate('100:350:100'), [100, 200, 300], 'the ramp stops at or below its end');
  t.throws(() => parseRate('100:50:10'), { code: 'CLI_USAGE' });
  t.throws(() => parseRate('1:2'), { code: 'CLI_USAGE' });
  t.throws(() => parseRate('-5'), { code: 'CLI_USAGE' });
});

t.test('nearest-rank percentiles', async (t) => {
  const xs = Array.from({ length: 100 }, (_, i) => i + 1);
  t.equal(percentile(xs, 50), 50);
  t.equal(percentile(xs, 99), 99);
  t.equal(percentile(xs, 100), 100);
  t.equal(percentile([7], 99), 7);
  t.ok(Number.isNaN(percentile([], 50)));
});

t.test('rejection reasons group across numbers and hashes', async (t) => {
  t.equal(reasonKey('account sequence mismatch, expected 12, got 15'), reasonKey('account sequence mismatch, expected 3, got 4'));
  t.equal(reasonKey('nonce too low: tx 0xabc12'), 'nonce too low: tx 0x…');
});

t.test('the text report shows each step and the saturation point', async (t) => {
  const d = { n: 1, p50: 1, p90: 2, p99: 3, max: 4, mean: 1 };
  const step = (rate: number, saturated: boolean) => ({
    rate, duration_s: 1, submitted: rate, answered: rate, accepted: rate, committed: rate, failed_in_block: 0, rejected: 0,
    rejected_by_reason: {}, failed_by_reason: {}, pending: 0, committed_tps: rate, latency_ms: d, latency_seen_ms: d, send_lag_ms: d, block_interval_ms: d, blocks: 2, saturated,
  });
  const r: TxReport = { mode: 'tx', kind: 'bank-send', target: 'x', connections: 1, senders: 1, steps: [step(100, false), step(200, true)], saturation: { max_sustained_rate: 100, first_saturated_rate: 200 } };
  const text = formatReport(r);
  t.match(text, /100 tx\/s for 1 s\n/);
  t.match(text, /200 tx\/s for 1 s {2}\(saturated\)/);
  t.match(text, /sustained up to 100 tx\/s; first saturated step 200 tx\/s/);
});

t.test('the embedded token is the fixture’s bytecode', async (t) => {
  const fixture = JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/evm/TestToken.json'), 'utf8')) as { bytecode: string };
  t.equal(TOKEN_BYTECODE, fixture.bytecode);
});
