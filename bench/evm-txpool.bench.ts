/**
 * The EVM tx pool's own cost (src/mempool/evm_pool.ts), app and decoding excluded.
 *
 *   node dist/bench/evm-txpool.bench.js            # 5,000 txs: 500 senders × 10 nonces
 *   BENCH_SENDERS=100 BENCH_NONCES=50 node dist/bench/evm-txpool.bench.js
 *
 * The txs are synthetic (a lead byte and JSON) and the app's CheckTx a stand-in that keeps the
 * EVM ante's nonce rule in a check state, so what is timed is the pool's bookkeeping: admission
 * (half the nonces arrive in reverse so every second one queues and is promoted), a proposal's
 * reap in tip order over the full pool, txpool_content's view, and update() after a block that
 * mines each sender's first half (dropping them and rechecking the rest).
 */
import { CheckTxType, type ResponseCheckTx } from '../src/abci/types.js';
import { EvmTxPool, type EvmPoolTxInfo } from '../src/mempool/evm_pool.js';

const SENDERS = Number(process.env['BENCH_SENDERS'] ?? (process.env['BENCH_SMOKE'] === '1' ? 50 : 500));
const NONCES = Number(process.env['BENCH_NONCES'] ?? 10);

interface T { s: string; n: number; tip: number }
const enc = (x: T) => Uint8Array.from([0x02, ...Buffer.from(JSON.stringify(x))]);
const dec = (b: Uint8Array): T => JSON.parse(Buffer.from(b.subarray(1)).toString()) as T;
const committed = new Map<string, bigint>();
let check = new Map<string, bigint>();
const res = (code: number, log = ''): ResponseCheckTx => ({ code, log, data: new Uint8Array(), info: '', gasWanted: 21000n, gasUsed: 0n, events: [], codespace: '' });
const app = {
  async checkTx(raw: Uint8Array, _type: CheckTxType): Promise<ResponseCheckTx> {
    const x = dec(raw);
    const seq = check.get(x.s) ?? 0n;
    if (BigInt(x.n) < seq) return res(32, 'nonce too low');
    if (BigInt(x.n) > seq) return res(32, 'nonce too high');
    check.set(x.s, seq + 1n);
    return res(0);
  },
};
const inspect = (b: Uint8Array): EvmPoolTxInfo => {
  const x = dec(b);
  return { hash: `0x${x.s.slice(2)}${x.n.toString(16).padStart(24, '0')}`, sender: x.s, nonce: BigInt(x.n), gasLimit: 21000n, feeCap: BigInt(x.tip) * 2n, tip: BigInt(x.tip), value: 0n, to: null };
};
const pool = new EvmTxPool({ recheckTimeoutMs: 60_000, accountSlots: NONCES, accountQueue: NONCES, globalSlots: SENDERS * NONCES, globalQueue: SENDERS * NONCES }, { app, chain: { inspect, account: (s) => ({ nonce: committed.get(s) ?? 0n, balance: 10n ** 30n }) } });

const senders = Array.from({ length: SENDERS }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);
const txs: Uint8Array[] = [];
for (const s of senders) {
  const order = Array.from({ length: NONCES }, (_, n) => n);
  // Pairs arrive swapped: 1, 0, 3, 2, … — every second tx queues, then is promoted.
  for (let i = 0; i + 1 < order.length; i += 2) [order[i], order[i + 1]] = [order[i + 1]!, order[i]!];
  for (const n of order) txs.push(enc({ s, n, tip: 1 + ((s.length + n * 7919 + senders.indexOf(s) * 104729) % 1000) }));
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
let t0 = process.hrtime.bigint();
for (const tx of txs) {
  const r = await pool.checkTx(tx);
  if (!r.added) throw new Error(`refused: ${r.response.log}`);
}
const admit = ms(t0);
const st = pool.stats();
if (st.pending !== txs.length) throw new Error(`pending ${st.pending} of ${txs.length}`);

t0 = process.hrtime.bigint();
const reaped = pool.reapMaxBytesMaxGas(-1n, 21000n * BigInt(txs.length));
const reap = ms(t0);
t0 = process.hrtime.bigint();
const half = pool.reapMaxBytesMaxGas(-1n, (21000n * BigInt(txs.length)) / 2n);
const reapHalf = ms(t0);
t0 = process.hrtime.bigint();
pool.content();
const content = ms(t0);

const mined = senders.flatMap((s) => Array.from({ length: Math.floor(NONCES / 2) }, (_, n) => enc({ s, n, tip: 0 })));
for (const s of senders) committed.set(s, BigInt(Math.floor(NONCES / 2)));
check = new Map(committed);
t0 = process.hrtime.bigint();
await pool.lock();
await pool.update(1n, mined, mined.map(() => ({ code: 0 })));
pool.unlock();
const update = ms(t0);

console.log(`evm txpool: ${SENDERS} senders × ${NONCES} nonces = ${txs.length} txs`);
console.log(`  admit (half queued then promoted): ${admit.toFixed(1)} ms, ${(admit * 1000 / txs.length).toFixed(1)} µs/tx`);
console.log(`  reap all ${reaped.length}: ${reap.toFixed(1)} ms; reap half (${half.length}): ${reapHalf.toFixed(1)} ms`);
console.log(`  content(): ${content.toFixed(1)} ms`);
console.log(`  update after a block mining ${mined.length} (recheck ${pool.size()}): ${update.toFixed(1)} ms`);
