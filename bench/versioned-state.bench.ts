/**
 * The versioned application state (src/store/versioned.ts) at EVM-like size.
 *
 *   node dist/bench/versioned-state.bench.js        # 1M keys, 1,000 changed per block, 1,000 blocks
 *   BENCH_KEYS=100000 BENCH_BLOCKS=300 node dist/bench/versioned-state.bench.js
 *
 * Writes BENCH_KEYS keys as the first version (genesis), then BENCH_BLOCKS blocks that each change
 * BENCH_CHANGES random keys (1 in 10 a deletion, re-created later), one write transaction per
 * block as the block executor does, with pruning = custom, keep-recent BENCH_KEEP (600), interval
 * 10, so the last ~400 blocks also prune. Prints the per-block commit cost (without and with
 * pruning), point reads at the latest version and at depths 1…500, and a 100-key range at the
 * latest and an older version. noSync environment in a temp dir: the numbers are CPU and page
 * cache, not fsync.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Storage } from '../src/store/storage.js';
import { pruningOptions } from '../src/store/pruning.js';
import { VersionedStore, type KVChange } from '../src/store/versioned.js';
import { report } from './report.js';

const KEYS = Number(process.env['BENCH_KEYS'] ?? 1_000_000);
const CHANGES = Number(process.env['BENCH_CHANGES'] ?? 1000);
const BLOCKS = Number(process.env['BENCH_BLOCKS'] ?? 1000);
const KEEP = Number(process.env['BENCH_KEEP'] ?? 600);
const READS = Number(process.env['BENCH_READS'] ?? 50_000);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
const storage = Storage.open({ file: path.join(dir, 'chaind.mdb'), noSync: true });
const store = new VersionedStore(storage.app, pruningOptions('custom', KEEP, 10));

// Keys shaped like a module's: 01 len 'bank' 02 len address(20) denom → ~37 bytes.
const PREFIX = Buffer.from([0x01, 4, ...Buffer.from('bank'), 0x02, 20]);
function key(i: number): Uint8Array {
  const k = Buffer.alloc(PREFIX.length + 20 + 6);
  PREFIX.copy(k, 0);
  k.writeUInt32BE(Math.imul(i, 2654435761) >>> 0, PREFIX.length); // spread over the key space
  k.writeUInt32BE(i, PREFIX.length + 16);
  k.write('achain', PREFIX.length + 20, 'latin1');
  return k;
}
function value(i: number, v: number): Uint8Array {
  return Buffer.from(`${i * 1000 + v}`.padStart(24, '0'));
}

let seed = 12345;
const rand = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 4294967296;
};

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const ms = (ns: bigint) => Number(ns) / 1e6;

// Genesis: every key at version 1, in batches of 100k per transaction (no history is written).
let t0 = process.hrtime.bigint();
{
  const all: KVChange[] = [];
  for (let i = 0; i < KEYS; i++) all.push({ key: key(i), value: value(i, 0) });
  all.sort((a, b) => Buffer.compare(a.key, b.key));
  storage.transactionSync(() => store.commit(1n, all));
}
console.log(`genesis: ${KEYS} keys in ${(ms(process.hrtime.bigint() - t0) / 1000).toFixed(1)} s`);

const writeNoPrune: number[] = [];
const writePrune: number[] = [];
let prunedTotal = 0;
let maxPruned = 0;
t0 = process.hrtime.bigint();
for (let b = 2; b <= BLOCKS + 1; b++) {
  const picked = new Set<number>();
  while (picked.size < CHANGES) picked.add(Math.floor(rand() * KEYS));
  const changes: KVChange[] = [...picked].map((i) => ({ key: key(i), value: rand() < 0.1 ? null : value(i, b) }));
  changes.sort((x, y) => Buffer.compare(x.key, y.key));
  const s = process.hrtime.bigint();
  const stats = storage.transactionSync(() => store.commit(BigInt(b), changes));
  const took = ms(process.hrtime.bigint() - s);
  prunedTotal += stats.pruned;
  maxPruned = Math.max(maxPruned, stats.pruned);
  (store.earliestVersion > 1n ? writePrune : writeNoPrune).push(took);
}
const latest = store.latestVersion;
console.log(
  `${BLOCKS} blocks × ${CHANGES} changes in ${(ms(process.hrtime.bigint() - t0) / 1000).toFixed(1)} s; earliest version ${store.earliestVersion}, latest ${latest}`,
);
const fmt = (xs: number[]) => (xs.length === 0 ? 'n/a' : `median ${pct(xs, 50).toFixed(2)} ms, p99 ${pct(xs, 99).toFixed(2)} ms (${xs.length} blocks)`);
console.log(`commit per block, before pruning starts: ${fmt(writeNoPrune)}`);
console.log(`commit per block, pruning:               ${fmt(writePrune)}; ${prunedTotal} rows pruned, at most ${maxPruned} in one block`);
const hs = storage.app.history.getStats() as { entryCount: number };
console.log(`history rows kept: ${hs.entryCount} (${(hs.entryCount / Number(latest - store.earliestVersion + 1n)).toFixed(0)} per retained version)`);

const readNs = new Map<string, number>();
function timeReads(label: string, fn: (k: Uint8Array) => unknown): void {
  const keys = Array.from({ length: READS }, () => key(Math.floor(rand() * KEYS)));
  for (let i = 0; i < 1000; i++) fn(keys[i]!); // warm up
  const s = process.hrtime.bigint();
  for (const k of keys) fn(k);
  const ns = Number(process.hrtime.bigint() - s) / keys.length;
  console.log(`${label.padEnd(44)} ${(ns / 1000).toFixed(2)} µs/read`);
  readNs.set(label, ns / 1000);
}

// Twice, interleaved: the first pass also warms the page cache.
for (let i = 0; i < 2; i++) {
  timeReads('read, flat LMDB get (baseline)', (k) => storage.app.latest.getBinary(k));
  timeReads('read at the latest version', (k) => store.getAt(k, latest));
}
for (const depth of [1n, 10n, 100n, 500n]) {
  const v = latest - depth;
  if (v < store.earliestVersion) continue;
  timeReads(`read at latest-${depth}`, (k) => store.getAt(k, v));
}

// The second pass's figures (readNs keeps the last), each against the flat LMDB get.
for (const [label, us] of readNs) {
  if (label.startsWith('read, flat')) continue;
  report({ area: 'state store', figure: `point ${label} (${KEYS} keys)`, unit: 'µs/read', value: us, peer: 'flat LMDB get', peerValue: readNs.get('read, flat LMDB get (baseline)')!, better: 'lower' });
}

function timeRange(label: string, version: bigint): void {
  const n = 200;
  let rows = 0;
  const s = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const start = key(Math.floor(rand() * KEYS));
    let c = 0;
    for (const _ of store.iterateAt(version, start, undefined)) if (++c >= 100) break;
    rows += c;
  }
  const us = Number(process.hrtime.bigint() - s) / 1000 / n;
  console.log(`${label.padEnd(44)} ${us.toFixed(0)} µs per 100-key range (${rows / n} rows)`);
}
timeRange('range at the latest version', latest);
if (latest - 100n >= store.earliestVersion) timeRange('range at latest-100', latest - 100n);

await storage.close();
fs.rmSync(dir, { recursive: true, force: true });
