/**
 * The LMDB kv indexer (src/store/indexer.ts): a few hundred synthetic blocks, then tx_search and
 * block_search checked against a brute-force oracle of CometBFT 0.38's kv semantics
 * (state/txindex/kv/kv.go, state/indexer/block/kv/kv.go) and against hand-picked cases: the
 * same-event rule, pagination and order_by, and the exact error strings of rpc/core.
 */
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { AbciEvent, ExecTxResult } from '../../src/abci/types.js';
import { compile, parseQuery, QueryError, type Condition } from '../../src/events/query.js';
import { BlockIndexer, IndexerError, TxIndexer, type TxInput } from '../../src/indexer/indexer.js';
import { concat, encodeNum, MAX_KEY, numPrefix, parseIndexNumber, RowKeys, strPrefix, tagFits } from '../../src/store/indexer-keys.js';
import { Storage } from '../../src/store/storage.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
// Storage.open has taken {dir} and {file}; give both so the test runs against either.
const storage = Storage.open({ file: path.join(dir, 'chaind.mdb'), noSync: true });
t.teardown(async () => {
  await storage.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const ev = (type: string, kv: Record<string, string>, index = true): AbciEvent => ({
  type,
  attributes: Object.entries(kv).map(([key, value]) => ({ key, value, index })),
});
const sha = (b: Uint8Array) => new Uint8Array(createHash('sha256').update(b).digest());
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();
const result = (events: AbciEvent[], code = 0): ExecTxResult => ({
  code,
  data: new Uint8Array([code, 1, 2]),
  log: code ? 'failed' : '',
  info: 'i',
  gasWanted: 200000n,
  gasUsed: 12345n,
  events,
  codespace: code ? 'sdk' : '',
});

interface Tx extends TxInput {
  height: bigint;
  hash: Uint8Array;
}

const HEIGHTS = 300;
const txs: Tx[] = [];
const blockEvents = new Map<bigint, AbciEvent[]>();

function makeTx(h: number, i: number): Tx {
  const events: AbciEvent[] = [
    ev('message', { action: h % 5 === 0 ? 'vote' : 'send', sender: `addr${(h * 7 + i) % 13}`, module: 'bank' }),
    ev('transfer', { recipient: `addr${(h + i) % 11}`, amount: `${h * 10 + i}stake`, value: `${h * 10 + i}` }),
    ev('fee', { rate: `${(h % 10) / 4}` }),
    ev('note', { secret: 'x' }, false),
  ];
  if (i === 1) events.push(ev('transfer', { recipient: `addr${(h + 5) % 11}`, value: `${h}` }));
  if (h % 7 === 0) events.push({ type: '', attributes: [{ key: 'not_allowed', value: 'Vlad', index: true }] });
  if (h % 9 === 0) events.push(ev('memo', { text: `  padded ${h} ` }));
  const tx = new TextEncoder().encode(`tx-${h}-${i}`);
  return { tx, index: i, height: BigInt(h), hash: sha(tx), result: result(events, h % 17 === 0 && i === 0 ? 5 : 0) };
}

storage.transactionSync(() => {
  const ti = new TxIndexer(storage);
  const bi = new BlockIndexer(storage);
  for (let h = 1; h <= HEIGHTS; h++) {
    const height = BigInt(h);
    const bev =
      h % 50 === 0
        ? []
        : [
            ev('mint', { amount: `${h * 100}`, epoch: `${Math.floor(h / 10)}` }),
            ev('rewards', { validator: `val${h % 3}` }),
            ev('rewards', { validator: `val${(h + 1) % 3}` }),
          ];
    blockEvents.set(height, bev);
    if (bi.indexBlock(height, bev) !== null) throw new Error('indexBlock');
    const block: Tx[] = [];
    for (let i = 0; i < h % 4; i++) block.push(makeTx(h, i));
    txs.push(...block);
    if (ti.indexTxs(height, block) !== null) throw new Error('indexTxs');
  }
});

const txi = new TxIndexer(storage);
const txiType = new TxIndexer(storage, { eventMatch: 'sameType' });
const bi = new BlockIndexer(storage);

// ---------------------------------------------------------------------------------------------
// Oracle: CometBFT kv semantics, brute force over the synthetic data

function indexedPairs(events: AbciEvent[]): [string, string][][] {
  return events
    .filter((e) => e.type !== '')
    .map((e) => e.attributes.filter((a) => a.index && a.key !== '').map((a): [string, string] => [`${e.type}.${a.key}`, a.value]))
    .filter((p) => p.length > 0);
}

function numOf(s: string): number | undefined {
  return /^[+-]?\d+(\.\d+)?$/.test(s) ? Number(s) : undefined;
}

function holds(c: Condition, v: string, trim: boolean): boolean {
  const a = c.arg;
  const tv = trim ? v.trim() : v;
  switch (c.op) {
    case '=':
      return v === a!.text;
    case 'CONTAINS':
      return tv.includes(a!.text);
    case 'EXISTS':
      return true;
    default: {
      if (a!.kind !== 'number') return false;
      const x = numOf(tv);
      const b = Number(a!.text);
      if (x === undefined) return false;
      return c.op === '<' ? x < b : c.op === '<=' ? x <= b : c.op === '>' ? x > b : x >= b;
    }
  }
}

function heightHolds(c: Condition, h: bigint): boolean {
  if (c.op === 'EXISTS') return true;
  if (c.arg!.kind !== 'number') return false;
  const b = Number(c.arg!.text);
  const x = Number(h);
  return c.op === '=' ? x === b : c.op === '<' ? x < b : c.op === '<=' ? x <= b : c.op === '>' ? x > b : x >= b;
}

function eventsHold(conds: Condition[], events: AbciEvent[], trim: boolean, sameType: boolean): boolean {
  if (conds.length === 0) return true;
  const groups = new Map<string, Condition[]>();
  for (const c of conds) {
    const g = sameType ? c.tag.slice(0, c.tag.lastIndexOf('.')) : '';
    groups.set(g, [...(groups.get(g) ?? []), c]);
  }
  const evs = indexedPairs(events);
  return [...groups.values()].every((g) => evs.some((pairs) => g.every((c) => pairs.some(([k, v]) => k === c.tag && holds(c, v, trim)))));
}

function oracleTxs(q: string, sameType = false): string[] {
  const conds = parseQuery(q);
  // kv.go lookForHash: a tx.hash condition is a lookup and the only condition that counts.
  const byHash = conds.find((c) => c.tag === 'tx.hash');
  if (byHash) return txs.filter((tx) => byHash.arg!.text.toUpperCase() === hex(tx.hash)).map((tx) => `${tx.height}/${tx.index}`);
  return txs
    .filter((tx) => {
      const other: Condition[] = [];
      for (const c of conds) {
        if (c.tag === 'tx.height') {
          if (!heightHolds(c, tx.height)) return false;
        } else other.push(c);
      }
      return eventsHold(other, tx.result.events, true, sameType);
    })
    .map((tx) => `${tx.height}/${tx.index}`);
}

function oracleBlocks(q: string): string[] {
  const conds = parseQuery(q);
  const out: string[] = [];
  for (const [h, events] of blockEvents) {
    const other = conds.filter((c) => c.tag !== 'block.height');
    if (!conds.filter((c) => c.tag === 'block.height').every((c) => heightHolds(c, h))) continue;
    if (eventsHold(other, events, false, false)) out.push(String(h));
  }
  return out;
}

function allTxs(ix: TxIndexer, q: string, orderBy?: string): { ids: string[]; total: number } {
  const ids: string[] = [];
  let total = -1;
  for (let page = 1; ; page++) {
    const r = ix.searchTxs(q, { page, perPage: 100, orderBy });
    total = r.totalCount;
    ids.push(...r.txs.map((x) => `${x.height}/${x.index}`));
    if (page * 100 >= total) break;
  }
  return { ids, total };
}

function allBlocks(q: string, orderBy?: string): { ids: string[]; total: number } {
  const ids: string[] = [];
  let total = -1;
  for (let page = 1; ; page++) {
    const r = bi.searchBlocks(q, { page, perPage: 100, orderBy });
    total = r.totalCount;
    ids.push(...r.heights.map(String));
    if (page * 100 >= total) break;
  }
  return { ids, total };
}

function errorOf(fn: () => unknown): Error | undefined {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------

t.test('synthetic chain', async (t) => {
  t.equal(txs.length, 450, '450 txs in 300 blocks');
});

t.test('tx_search against the oracle', async (t) => {
  const queries = [
    'tx.height = 5',
    'tx.height = 8',
    'tx.height >= 10 AND tx.height <= 20',
    'tx.height > 290',
    'tx.height < 3',
    'tx.height > 0',
    'tx.height >= 7 AND tx.height < 7',
    "message.sender = 'addr3'",
    "message.sender = 'addr3' AND tx.height > 100",
    "message.sender = 'addr3' AND tx.height >= 100 AND tx.height < 200",
    'transfer.value > 1000 AND transfer.value <= 1500',
    'transfer.value >= 2990',
    'transfer.value < 50',
    'transfer.value < 50 AND tx.height > 3',
    "transfer.recipient CONTAINS 'addr1'",
    "transfer.recipient CONTAINS 'addr1' AND tx.height < 50",
    'transfer.recipient EXISTS',
    'transfer.recipient EXISTS AND tx.height = 7',
    "message.action = 'vote' AND message.sender = 'addr5'",
    "transfer.recipient = 'addr3' AND transfer.value > 100",
    "message.sender = 'addr3' AND transfer.recipient = 'addr1'",
    'fee.rate >= 1.5',
    'fee.rate = 2.25',
    'fee.rate = 2.250',
    'fee.rate > 0.5 AND fee.rate < 1.5',
    "note.secret = 'x'",
    "not_allowed = 'Vlad'",
    "message.module = 'bank'",
    "message.module = 'bank' AND transfer.value > 5",
    "tx.height >= 100 AND message.action = 'vote'",
    "memo.text CONTAINS 'padded 9'",
    "memo.text = 'padded 9'",
    'memo.text EXISTS AND tx.height <= 100',
    "transfer.recipient CONTAINS 'addr' AND transfer.value >= 2000 AND transfer.value < 2100 AND tx.height > 100",
  ];
  for (const q of queries) {
    const want = oracleTxs(q);
    const got = allTxs(txi, q);
    t.same(got.ids, want, q);
    t.equal(got.total, want.length, `${q} total`);
    t.same(allTxs(txi, q, 'desc').ids, [...want].reverse(), `${q} desc`);
  }
});

t.test('sameType: conditions on different event types may hold in different events', async (t) => {
  const queries = [
    "message.sender = 'addr3' AND transfer.recipient = 'addr1'",
    "message.module = 'bank' AND transfer.value > 2900",
    "transfer.recipient = 'addr4' AND transfer.value = 101",
    "transfer.recipient = 'addr4' AND transfer.value = 10",
    "message.action = 'vote' AND fee.rate >= 2",
  ];
  for (const q of queries) t.same(allTxs(txiType, q).ids, oracleTxs(q, true), q);
  t.ok(oracleTxs("message.sender = 'addr3' AND transfer.recipient = 'addr1'", true).length > 0, 'the cross-type case is not vacuous');
});

t.test('same-event rule (kv.go: hits keyed by hash and event sequence)', async (t) => {
  // tx 10/1: event 1 is transfer{recipient addr0, value 101}, event 4 is transfer{recipient addr4, value 10}.
  const ids = (q: string) => txi.searchTxs(q).txs.map((x) => `${x.height}/${x.index}`);
  t.same(ids("transfer.recipient = 'addr0' AND transfer.value = 101"), ['10/1'], 'both in event 1');
  t.same(ids("transfer.recipient = 'addr4' AND transfer.value = 10"), ['10/1'], 'both in event 4');
  t.same(ids("transfer.recipient = 'addr4' AND transfer.value = 101"), [], 'split across two events');
  t.same(ids("transfer.recipient = 'addr0' AND transfer.value < 50 AND tx.height = 10"), [], 'range in the other event');
  t.same(ids("message.sender = 'addr3' AND transfer.recipient = 'addr1'"), [], 'different event types never share an event');
  t.same(ids('transfer.value = 101 AND transfer.value > 100 AND transfer.value < 102'), ['10/1'], 'ranges and equality on one attribute');
  t.same(txiType.searchTxs("transfer.recipient = 'addr4' AND transfer.value = 101").txs, [], 'sameType too: one type, one event');
});

t.test('text, number and date semantics of the index', async (t) => {
  const n = (q: string) => txi.searchTxs(q).totalCount;
  t.equal(n('transfer.value = 101'), 1);
  t.equal(n('transfer.value = 0101'), 0, '= compares text (kv.go prefix of the value)');
  t.equal(n('transfer.value >= 101 AND transfer.value <= 101.0'), 1, 'ranges compare numbers');
  t.equal(n("transfer.amount = '101stake'"), 1);
  t.equal(n('transfer.amount > 5'), 0, '"91stake" is not a number to the indexer');
  t.equal(n("memo.text CONTAINS 'padded 9 '"), 0, 'CONTAINS sees the trimmed value (kv.go extractValueFromKey)');
  t.equal(n('transfer.value > DATE 2013-01-01'), 0, 'DATE bounds match nothing (kv.go matchRange)');
  t.equal(n('transfer.value < TIME 2013-05-03T14:45:00Z'), 0, 'TIME bounds match nothing');
  t.equal(n('tx.height < DATE 2013-01-01'), 0);
  t.equal(n("tm.event = 'Tx'"), 0, 'node.event is not indexed (as in CometBFT)');
  t.equal(n("node.event = 'Tx' AND tx.height = 5"), 0);
  t.equal(n('tx.height = 5.5'), 0);
  t.equal(n("tx.height = '5'"), 1, 'string operand read as a number');
  t.equal(n('tx.height EXISTS'), txs.length);
  t.equal(n("tx.height CONTAINS '29'"), oracleTxs('tx.height > 0').filter((id) => id.split('/')[0]!.includes('29')).length);
  t.equal(n('tx.height = 5 AND tx.height = 6'), 0, 'height conditions intersect');
  t.equal(n('fee.rate > 2.2 AND fee.rate < 2.3'), oracleTxs('fee.rate = 2.25').length);
  // The value encoding sorts like the numbers (kv.go compares big floats).
  const vals = ['-1e3', '-12.5', '-2', '-0.5', '0', '0.001', '0.5', '2', '12.5', '12.50001', '1e3', '99999999999999999999999', 'Inf'];
  const enc = vals.map((v) => encodeNum(parseIndexNumber(v)!));
  for (let i = 1; i < enc.length; i++) t.ok(Buffer.compare(enc[i - 1]!, enc[i]!) < 0, `${vals[i - 1]} < ${vals[i]}`);
  t.equal(Buffer.compare(encodeNum(parseIndexNumber('1.50')!), encodeNum(parseIndexNumber('15e-1')!)), 0, '1.50 = 15e-1');
  t.equal(parseIndexNumber('12abc'), undefined);
  t.equal(parseIndexNumber('0x10'), undefined);
});

t.test('RowKeys builds the row keys byte for byte as strPrefix/numPrefix + tail', async (t) => {
  const rows = new RowKeys();
  // Tails of both lengths in turn: a tag of 1,932 bytes leaves room for a hashed value and an
  // 8-byte tail, not a 12-byte one.
  const tails = [Buffer.from('0000000000000009', 'hex'), Buffer.from('000000000000000500000002', 'hex'), Buffer.from('0000000000000009', 'hex')];
  const tags = ['transfer.amount', 'tx_log.txLog', 'é.ü', 'x'.repeat(1900), 'y'.repeat(1932), 'a.b'];
  const values = ['', '101stake', '0x' + 'ab'.repeat(32), 'a\0b', 'ü'.repeat(700), 'v'.repeat(1930), 'v'.repeat(1960), '-12.5', '1e3', 'Inf', '-inf', '00012', '.5', '5.'];
  let rowsChecked = 0;
  for (const tail of tails) {
    for (const tag of tags) {
      for (const value of values) {
        // Interleave tags so that the builder's cached tag is replaced and reused.
        for (const tg of [tag, 'a.b', tag]) {
          const got = rows.str(tg, value, tail);
          if (!tagFits(tg, tail.length)) {
            t.equal(got, undefined, `no row for a tag that cannot fit (${tg.length} chars)`);
            continue;
          }
          t.same(got && Buffer.from(got), concat(strPrefix(tg, value, tail.length), tail), `str ${tg.slice(0, 20)} = ${value.slice(0, 20)} (${value.length} chars)`);
          const n = parseIndexNumber(value);
          if (n) {
            const want = concat(numPrefix(tg, n), tail);
            const nk = rows.num(tg, n, tail);
            t.same(nk && Buffer.from(nk), want.length <= MAX_KEY ? want : undefined, `num ${tg.slice(0, 20)} = ${value}`);
          }
          rowsChecked++;
        }
      }
    }
  }
  t.ok(rowsChecked > 100);
  // The same tag right after, with a longer tail: the fit is checked again, not taken from the last call.
  const long = 'y'.repeat(1932);
  t.ok(rows.str(long, 'v', tails[0]!), 'fits with the 8-byte tail');
  t.equal(rows.str(long, 'v', tails[1]!), undefined, 'not with the 12-byte tail');
  t.ok(rows.num(long, parseIndexNumber('5')!, tails[0]!), 'a number row with the 8-byte tail');
  // The first-character check of parseIndexNumber agrees with the full grammar.
  for (const v of ['+1', '-1', '.5', 'e5', 'E5', 'inf', 'Inf', 'INF', 'x1', ' 1', '\t1', 'a', '1', '9', '/', ':']) {
    const re = /^([+-]?)(?:(inf|Inf)|(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,9}))?)$/.exec(v);
    t.equal(parseIndexNumber(v) !== undefined, re !== null && (re[2] !== undefined || (re[3] ?? '') + (re[4] ?? '') !== ''), `parseIndexNumber(${JSON.stringify(v)})`);
  }
});

t.test('tx.hash lookups', async (t) => {
  const tx = txs[100]!;
  const h = hex(tx.hash);
  for (const q of [`tx.hash = '${h}'`, `tx.hash = '${h.toLowerCase()}'`]) {
    const r = txi.searchTxs(q);
    t.equal(r.totalCount, 1, q);
    t.equal(r.txs[0]!.height, tx.height);
    t.equal(r.txs[0]!.index, tx.index);
  }
  // kv.go lookForHash: the first tx.hash condition, whatever its operator, is a lookup of its
  // argument; every other condition is ignored (nothing indexes tm.event, so the usual
  // `tm.event = 'Tx' AND tx.hash = …` would otherwise find nothing).
  t.equal(txi.searchTxs(`tm.event = 'Tx' AND tx.hash = '${h}'`).totalCount, 1, 'tm.event with tx.hash');
  t.equal(txi.searchTxs(`node.event = 'Tx' AND tx.hash = '${h}'`).totalCount, 1, 'node.event with tx.hash');
  t.equal(txi.searchTxs(`tx.hash = '${h}' AND tx.height = ${tx.height + 1n}`).totalCount, 1, 'other conditions are ignored');
  t.equal(txi.searchTxs(`tx.height < 0 AND tx.hash = '${h}'`).totalCount, 1, 'also when they come first');
  t.equal(txi.searchTxs(`tx.hash = '${'00'.repeat(32)}'`).totalCount, 0, 'unknown hash');
  t.equal(txi.searchTxs(`tx.hash CONTAINS '${h}'`).totalCount, 1, 'CONTAINS is a lookup too');
  t.equal(txi.searchTxs(`tx.hash CONTAINS '${h.slice(10, 30)}'`).totalCount, 0, 'so a part of the hash finds nothing');
  t.equal(txi.searchTxs('tx.hash > 12').totalCount, 0, 'a range: a lookup of the one-byte hash 12');
  const cases: [string, string][] = [
    ["tx.hash = 'XYZ'", "error during searching for a hash in the query: encoding/hex: invalid byte: U+0058 'X'"],
    ["tx.hash = 'ABC'", 'error during searching for a hash in the query: encoding/hex: odd length hex string'],
    ["tx.hash = 'ABZ'", "error during searching for a hash in the query: encoding/hex: invalid byte: U+005A 'Z'"],
    ["tx.hash = '0xAB'", "error during searching for a hash in the query: encoding/hex: invalid byte: U+0078 'x'"],
    ["tx.hash = ''", 'error while retrieving the result: transaction hash cannot be empty'],
    ['tx.hash EXISTS', 'error while retrieving the result: transaction hash cannot be empty'],
    ["tx.hash CONTAINS 'abc'", 'error during searching for a hash in the query: encoding/hex: odd length hex string'],
    ['tx.hash = 5', 'error during searching for a hash in the query: encoding/hex: odd length hex string'],
  ];
  for (const [q, want] of cases) {
    const e = errorOf(() => txi.searchTxs(q));
    t.ok(e instanceof IndexerError, q);
    t.equal(e?.message, want, q);
  }
});

t.test('tx and prove', async (t) => {
  const tx = txs.find((x) => x.result.code !== 0)!;
  const got = txi.getTx(tx.hash)!;
  t.same(got.hash, tx.hash);
  t.equal(got.height, tx.height);
  t.equal(got.index, tx.index);
  t.same(got.tx, tx.tx);
  t.same(got.result, tx.result, 'the whole ExecTxResult round-trips');
  t.same(txi.getTx(hex(tx.hash))?.height, tx.height, 'hex input');
  t.same(txi.locate(tx.hash), { height: tx.height, index: tx.index });
  t.equal(txi.getTx(new Uint8Array(32)), undefined);
  t.equal(txi.locate(new Uint8Array(32)), undefined);
  t.equal(errorOf(() => txi.getTx(new Uint8Array(0)))?.message, 'transaction hash cannot be empty');
});

t.test('pagination and order_by (rpc/core/env.go, tx.go)', async (t) => {
  const q = 'transfer.recipient EXISTS';
  const all = oracleTxs(q);
  t.equal(all.length, 450);
  const p = (o: Parameters<TxIndexer['searchTxs']>[1]) => txi.searchTxs(q, o);
  t.equal(p({}).txs.length, 30, 'per_page defaults to 30');
  t.equal(p({ perPage: 0 }).txs.length, 30, 'per_page 0 becomes 30');
  t.equal(p({ perPage: -4 }).txs.length, 30, 'negative per_page becomes 30');
  t.equal(p({ perPage: 1000 }).txs.length, 100, 'per_page above 100 becomes 100');
  t.equal(p({ perPage: 7 }).txs.length, 7);
  t.same(
    p({ page: 3, perPage: 7 }).txs.map((x) => `${x.height}/${x.index}`),
    all.slice(14, 21),
    'page 3 of 7',
  );
  t.same(
    p({ page: 2, perPage: 7, orderBy: 'desc' }).txs.map((x) => `${x.height}/${x.index}`),
    [...all].reverse().slice(7, 14),
    'desc by height then index',
  );
  t.same(p({ page: 45, perPage: 10 }).txs.length, 10, 'last full page');
  t.same(p({ page: 5, perPage: 100 }).txs.length, 50, 'last partial page');
  const pageErr = (o: Parameters<TxIndexer['searchTxs']>[1], qq = q) => errorOf(() => txi.searchTxs(qq, o))?.message;
  t.equal(pageErr({ page: 6, perPage: 100 }), 'page should be within [1, 5] range, given 6');
  t.equal(pageErr({ page: 0 }), 'page should be within [1, 15] range, given 0');
  t.equal(pageErr({ page: -1 }), 'page should be within [1, 15] range, given -1');
  t.equal(pageErr({ page: 1 }, "message.sender = 'nobody'"), undefined, 'page 1 of nothing is fine');
  t.equal(pageErr({ page: 2 }, "message.sender = 'nobody'"), 'page should be within [1, 1] range, given 2');
  t.same(txi.searchTxs("message.sender = 'nobody'"), { txs: [], totalCount: 0 });
  t.equal(pageErr({ orderBy: 'up' }), 'expected order_by to be either `asc` or `desc` or empty');
  t.equal(pageErr({ orderBy: 'ASC' }), 'expected order_by to be either `asc` or `desc` or empty');
  t.same(p({ orderBy: '' }).txs[0]!.height, 1n, "'' is asc for txs");
  // The same through every driver: a pure height range (counted from the cumulative rows).
  const h = txi.searchTxs('tx.height >= 11 AND tx.height <= 290', { page: 2, perPage: 5, orderBy: 'desc' });
  const hw = oracleTxs('tx.height >= 11 AND tx.height <= 290');
  t.equal(h.totalCount, hw.length);
  t.same(h.txs.map((x) => `${x.height}/${x.index}`), [...hw].reverse().slice(5, 10));
});

t.test('query errors', async (t) => {
  const long = "message.sender = '" + 'a'.repeat(500) + "'";
  const e1 = errorOf(() => txi.searchTxs(long));
  t.ok(e1 instanceof IndexerError);
  t.equal(e1?.message, 'maximum query length exceeded');
  t.equal(errorOf(() => bi.searchBlocks("mint.x = '" + 'a'.repeat(600) + "'"))?.message, undefined, 'block_search has no length limit');
  const e2 = errorOf(() => txi.searchTxs('tx.height >'));
  t.ok(e2 instanceof QueryError);
  t.equal(e2?.message, 'offset 11: EOF');
  t.equal(errorOf(() => bi.searchBlocks('block.height 5'))?.message.startsWith('offset 13: got number, wanted'), true);
  // CometBFT checks order_by after the search: a bad query wins over a bad order_by.
  t.equal(errorOf(() => txi.searchTxs('x', { orderBy: 'bad' }))?.message, 'offset 1: EOF');
  t.equal(txi.searchTxs(compile("message.sender = 'addr3'")).totalCount, oracleTxs("message.sender = 'addr3'").length, 'a compiled Query works too');
});

t.test('block_search against the oracle', async (t) => {
  const queries = [
    'block.height = 5',
    'block.height = 301',
    'block.height > 290',
    'block.height >= 100 AND block.height < 120',
    'block.height > 0',
    'mint.amount >= 29000',
    'mint.epoch = 7',
    "rewards.validator = 'val1' AND block.height <= 30",
    'mint.amount > 100 AND mint.epoch < 3',
    "mint.amount > 100 AND rewards.validator = 'val1'",
    "rewards.validator = 'val1' AND rewards.validator = 'val2'",
    "rewards.validator CONTAINS '2' AND block.height < 20",
    'mint.amount EXISTS',
    "mint.epoch = '07'",
  ];
  for (const q of queries) {
    const want = oracleBlocks(q);
    const got = allBlocks(q, 'asc');
    t.same(got.ids, want, q);
    t.equal(got.total, want.length, `${q} total`);
    t.same(allBlocks(q).ids, [...want].reverse(), `${q} (default order desc)`);
  }
  t.same(bi.searchBlocks('block.height = 5'), { heights: [5n], totalCount: 1 }, 'existence check');
  t.same(bi.searchBlocks('block.height = 50'), { heights: [50n], totalCount: 1 }, 'a block without events is indexed');
  t.equal(bi.searchBlocks('mint.amount EXISTS').totalCount, 294);
  t.same(bi.searchBlocks('block.height > 290', { page: 2, perPage: 3 }).heights, [297n, 296n, 295n]);
  t.same(bi.searchBlocks('block.height > 290', { page: 2, perPage: 3, orderBy: 'asc' }).heights, [294n, 295n, 296n]);
  t.equal(errorOf(() => bi.searchBlocks('block.height > 290', { page: 5, perPage: 3 }))?.message, 'page should be within [1, 4] range, given 5');
  t.equal(errorOf(() => bi.searchBlocks('block.height > 290', { orderBy: 'x' }))?.message, 'expected order_by to be either `asc` or `desc` or empty');
  t.ok(bi.has(300n));
  t.notOk(bi.has(301n));
});

t.test('reserved keys (kv.go indexEvents)', async (t) => {
  storage.transactionSync(() => {
    const tx = new TextEncoder().encode('reserved');
    const good = makeTx(500, 0);
    const e = txi.indexTxs(500n, [good, { tx, index: 1, hash: sha(tx), result: result([ev('tx', { height: '1' }, false)]) }]);
    t.ok(e instanceof IndexerError);
    t.equal(e?.code, 'RESERVED_KEY');
    t.equal(e?.message, 'event type and attribute key "tx.height" is reserved; please use a different key');
    const e2 = txi.indexTxs(500n, [{ tx, index: 0, hash: sha(tx), result: result([ev('tx', { hash: 'x' })]) }]);
    t.equal(e2?.message, 'event type and attribute key "tx.hash" is reserved; please use a different key');
    const e3 = bi.indexBlock(500n, [ev('block', { height: '7' })]);
    t.equal(e3?.message, 'failed to index FinalizeBlock events: event type and attribute key "block.height" is reserved; please use a different key');
  });
  t.equal(txi.searchTxs('tx.height = 500').totalCount, 0, 'nothing of the block was indexed');
  t.equal(txi.getTx(makeTx(500, 0).hash), undefined);
  t.notOk(bi.has(500n));
});

t.test('the same tx hash at two heights (kv.go Index)', async (t) => {
  const tx = new TextEncoder().encode('dup');
  const hash = sha(tx);
  const at = (h: bigint, code: number, k: string) =>
    storage.transactionSync(() => txi.indexTxs(h, [{ tx, index: 0, hash, result: result([ev('dup', { k })], code) }]));
  at(1001n, 0, 'a');
  at(1002n, 1, 'b');
  t.equal(txi.getTx(hash)?.height, 1001n, 'a failed result does not replace a successful one');
  t.equal(txi.searchTxs("dup.k = 'b'").totalCount, 0);
  t.equal(txi.searchTxs('tx.height = 1002').totalCount, 0);
  at(1003n, 0, 'c');
  t.equal(txi.getTx(hash)?.height, 1003n, 'a later success replaces it');
  t.equal(txi.searchTxs("dup.k = 'a'").totalCount, 0, 'the old rows are gone');
  t.same(txi.searchTxs("dup.k = 'c'").txs.map((x) => x.height), [1003n]);
  t.equal(txi.searchTxs('tx.height = 1001').totalCount, 0);
  t.equal(txi.searchTxs('tx.height >= 1001 AND tx.height <= 1003').totalCount, 1, 'counts stay exact');
  t.equal(txi.searchTxs('tx.height >= 1000').txs.length, 1);
  at(1004n, 3, 'd');
  t.equal(txi.getTx(hash)?.height, 1003n);
  t.equal(txi.searchTxs('tx.height > 0').totalCount, 451);
});

t.test('indexing a height again replaces it', async (t) => {
  const a = makeTx(2000, 0);
  const b = makeTx(2000, 1);
  storage.transactionSync(() => {
    txi.indexTxs(2000n, [a, b]);
    bi.indexBlock(2000n, [ev('mint', { amount: '1' })]);
  });
  storage.transactionSync(() => {
    txi.indexTxs(2000n, [a]);
    bi.indexBlock(2000n, [ev('mint', { amount: '2' })]);
  });
  t.equal(txi.searchTxs('tx.height = 2000').totalCount, 1);
  t.equal(txi.searchTxs('tx.height >= 2000').totalCount, 1);
  t.equal(txi.getTx(b.hash), undefined);
  t.same(bi.searchBlocks('mint.amount = 2 AND block.height = 2000').heights, [2000n]);
  t.same(bi.searchBlocks('mint.amount = 1').heights, []);
  t.equal(bi.searchBlocks('block.height >= 2000').totalCount, 1);
  t.equal(bi.searchBlocks('block.height > 0').totalCount, 301);
});

t.test('values the keys cannot hold as they are', async (t) => {
  const long = 'x'.repeat(3000) + 'needle';
  const tx1 = new TextEncoder().encode('long');
  const tx2 = new TextEncoder().encode('nul');
  storage.transactionSync(() => {
    txi.indexTxs(3000n, [
      { tx: tx1, index: 0, hash: sha(tx1), result: result([ev('memo', { long, n: '1'.repeat(2500) })]) },
      { tx: tx2, index: 1, hash: sha(tx2), result: result([ev('memo', { long: 'a\0b' })]) },
    ]);
  });
  t.equal(txi.searchTxs(`memo.long = '${'x'.repeat(400)}'`).totalCount, 0);
  const longQ = compile(`memo.long = '${long}'`);
  t.same(txi.searchTxs(longQ).txs.map((x) => x.index), [0], 'equality on a hashed value');
  t.same(txi.searchTxs("memo.long CONTAINS 'needle'").txs.map((x) => x.index), [0], 'CONTAINS on a hashed value');
  t.same(txi.searchTxs("memo.long = 'a'").txs, [], "'a' is not 'a\\0b'");
  t.same(txi.searchTxs("memo.long CONTAINS 'b'").txs.map((x) => x.index), [1]);
  t.same(txi.searchTxs(compile("memo.long = 'a\0b'")).txs.map((x) => x.index), [1]);
  t.same(txi.searchTxs('memo.n > 5').txs.map((x) => x.index), [], 'a number too long for a key is not range-indexed');
  t.same(txi.searchTxs('memo.n EXISTS').txs.map((x) => x.index), [0]);
});
