/**
 * Floods for a running `chaind` (test/helpers/node.ts): clients that send many requests and never
 * read the answers, and the figures that tell whether consensus kept going meanwhile (block
 * intervals from the headers' times, resident memory of the node process from /proc).
 * Shared by test/e2e/flood.test.ts (short floods) and bench/flood.bench.ts (the issue's sizes).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resident set size of process `pid` in bytes (0 when it is gone). */
export function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples the RSS of `pid` every `everyMs` until stop() is called; returns the peak. */
export function sampleRss(pid: number, everyMs = 50): { stop: () => number } {
  let peak = rssOf(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssOf(pid));
    },
  };
}

/** Opens a TCP connection to 127.0.0.1:port; the socket never reads (a client that does not read). */
function connectNoRead(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.pause(); // leave the answers in the kernel buffers: the server sees a client that does not read
      resolve(s);
    });
    s.once('error', reject);
  });
}

/**
 * `conns` connections, each writing `perConn` pipelined `GET <path>` requests at once and never
 * reading the answers; the connections stay open `holdMs`, then are destroyed.
 */
export async function httpPipelineFlood(port: number, path: string, conns: number, perConn: number, holdMs: number): Promise<void> {
  const one = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`, 'latin1');
  const payload = Buffer.concat(Array.from({ length: perConn }, () => one));
  const socks = await Promise.all(Array.from({ length: conns }, () => connectNoRead(port)));
  for (const s of socks) {
    s.on('error', () => {});
    s.write(payload);
  }
  await sleep(holdMs);
  for (const s of socks) s.destroy();
}

/** A masked client text frame (RFC 6455 §5.2). */
export function wsFrame(text: string, masked = true): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x81, (masked ? 0x80 : 0) | len]) : Buffer.from([0x81, (masked ? 0x80 : 0) | 126, len >> 8, len & 0xff]);
  if (!masked) return Buffer.concat([head, payload]);
  const mask = crypto.randomBytes(4);
  for (let i = 0; i < len; i++) payload[i]! ^= mask[i & 3]!;
  return Buffer.concat([head, mask, payload]);
}

/** Opens /websocket over a raw socket; resolves once the 101 arrived (the socket then stops reading). */
export function wsConnectRaw(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let acc = '';
    const onData = (d: Buffer) => {
      acc += d.toString('latin1');
      if (!acc.includes('\r\n\r\n')) return;
      s.off('data', onData);
      if (!acc.startsWith('HTTP/1.1 101')) {
        s.destroy();
        reject(new Error(`websocket upgrade refused: ${acc.slice(0, 200)}`));
        return;
      }
      s.pause();
      resolve(s);
    };
    s.on('data', onData);
    s.once('error', reject);
    const key = crypto.randomBytes(16).toString('base64');
    s.write(
      `GET /websocket HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
  });
}

/** `conns` websockets, each sending `perConn` JSON-RPC requests for `method` at once, never reading. */
export async function wsFlood(port: number, method: string, params: object, conns: number, perConn: number, holdMs: number): Promise<void> {
  const socks = await Promise.all(Array.from({ length: conns }, () => wsConnectRaw(port)));
  for (const s of socks) {
    s.on('error', () => {});
    const frames: Buffer[] = [];
    for (let i = 0; i < perConn; i++) frames.push(wsFrame(JSON.stringify({ jsonrpc: '2.0', id: i, method, params })));
    s.write(Buffer.concat(frames));
  }
  await sleep(holdMs);
  for (const s of socks) s.destroy();
}

/**
 * `total` GET requests for `path`, `conns` connections at a time, each connection opened, the
 * request written and the connection left unread (a REST client that fires and forgets).
 */
export async function httpBurst(port: number, path: string, conns: number, total: number, holdMs: number): Promise<void> {
  const req = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`, 'latin1');
  const socks: net.Socket[] = [];
  const deadline = Date.now() + holdMs;
  for (let sent = 0; sent < total; ) {
    const batch = Math.min(conns, total - sent);
    const opened = await Promise.all(Array.from({ length: batch }, () => connectNoRead(port).catch(() => null)));
    for (const s of opened) {
      if (!s) continue;
      s.on('error', () => {});
      s.write(req);
      socks.push(s);
    }
    sent += batch;
    // Keep at most `conns` open: the oldest are dropped once answered or not (fire and forget).
    while (socks.length > conns) socks.shift()!.destroy();
    await sleep(1);
  }
  await sleep(Math.max(0, deadline - Date.now()));
  for (const s of socks) s.destroy();
}

export interface BlockTimes {
  heights: bigint[];
  /** ms since the epoch of each header's time. */
  times: number[];
}

/** Header times of blocks from..to, read with /blockchain (20 per call). */
export async function blockTimes(rpcPort: number, from: bigint, to: bigint): Promise<BlockTimes> {
  const byHeight = new Map<bigint, number>();
  for (let lo = from; lo <= to; lo += 20n) {
    const hi = lo + 19n > to ? to : lo + 19n;
    const res = await fetch(`http://127.0.0.1:${rpcPort}/blockchain?minHeight=${lo}&maxHeight=${hi}`, { signal: AbortSignal.timeout(10_000) });
    const body = (await res.json()) as { result: { block_metas: Array<{ header: { height: string; time: string } }> } };
    for (const m of body.result.block_metas) byHeight.set(BigInt(m.header.height), Date.parse(m.header.time));
  }
  const heights = [...byHeight.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { heights, times: heights.map((h) => byHeight.get(h)!) };
}

export interface IntervalStats {
  blocks: number;
  maxMs: number;
  meanMs: number;
}

/**
 * Intervals between consecutive blocks whose gap overlaps [startMs, endMs]: a stall that began
 * during the window counts in full, even if the next block came after it.
 */
export function intervalsDuring(bt: BlockTimes, startMs: number, endMs: number): IntervalStats {
  const gaps: number[] = [];
  for (let i = 1; i < bt.times.length; i++) {
    const a = bt.times[i - 1]!;
    const b = bt.times[i]!;
    if (b >= startMs && a <= endMs) gaps.push(b - a);
  }
  const maxMs = gaps.length ? Math.max(...gaps) : Infinity;
  const meanMs = gaps.length ? gaps.reduce((x, y) => x + y, 0) / gaps.length : Infinity;
  return { blocks: gaps.length, maxMs, meanMs };
}

export interface FloodSpec {
  name: string;
  run: (ports: { rpc: number; api: number }) => Promise<void>;
}

/** The floods of the hardening issue, scaled by `scale` (1 = the issue's sizes). */
export function issueFloods(scale: number, holdMs: number): FloodSpec[] {
  const n = (x: number) => Math.max(1, Math.round(x * scale));
  const blockchain = '/blockchain?minHeight=1&maxHeight=20';
  return [
    { name: `node RPC: 1 connection x ${n(10_000)} pipelined GET /blockchain`, run: (p) => httpPipelineFlood(p.rpc, blockchain, 1, n(10_000), holdMs) },
    { name: `node RPC: 20 connections x ${n(1_000)} pipelined GET /blockchain`, run: (p) => httpPipelineFlood(p.rpc, blockchain, 20, n(1_000), holdMs) },
    {
      name: `node RPC websocket: 1 connection x ${n(10_000)} blockchain requests`,
      run: (p) => wsFlood(p.rpc, 'blockchain', { minHeight: '1', maxHeight: '20' }, 1, n(10_000), holdMs),
    },
    { name: `REST: ${n(1_500)} GET /cosmos/tx/v1beta1/txs/block/1`, run: (p) => httpBurst(p.api, '/cosmos/tx/v1beta1/txs/block/1', 500, n(1_500), holdMs) },
  ];
}

export interface FloodResult {
  name: string;
  intervals: IntervalStats;
  rssBefore: number;
  rssPeak: number;
}

/** Runs one flood against a node (process `pid`) and measures block intervals and RSS meanwhile. */
export async function measureFlood(pid: number, ports: { rpc: number; api: number }, flood: FloodSpec, settleMs = 2500): Promise<FloodResult> {
  const h0 = await currentHeight(ports.rpc);
  const rssBefore = rssOf(pid);
  const rss = sampleRss(pid);
  const start = Date.now();
  await flood.run(ports);
  const end = Date.now();
  // Blocks after the flood show whether a stall that began during it ended: wait for one that
  // was made at least `settleMs` after the flood (a stall still going on counts in full).
  await sleep(settleMs);
  const rssPeak = rss.stop();
  let bt: BlockTimes = { heights: [], times: [] };
  await waitUntil(async () => {
    const h1 = await currentHeight(ports.rpc, 30_000);
    bt = await blockTimes(ports.rpc, h0 > 1n ? h0 - 1n : 1n, h1);
    return bt.times.length > 0 && bt.times[bt.times.length - 1]! >= end + settleMs / 2;
  }, 120_000);
  return { name: flood.name, intervals: intervalsDuring(bt, start, end), rssBefore, rssPeak };
}

async function waitUntil(fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await fn()) return;
    } catch {
      /* the node may be too busy to answer yet */
    }
    if (Date.now() > deadline) throw new Error('no block after the flood in time');
    await sleep(250);
  }
}

async function currentHeight(port: number, timeoutMs = 10_000): Promise<bigint> {
  const res = await fetch(`http://127.0.0.1:${port}/status`, { signal: AbortSignal.timeout(timeoutMs) });
  const body = (await res.json()) as { result: { sync_info: { latest_block_height: string } } };
  return BigInt(body.result.sync_info.latest_block_height);
}

export function formatFlood(r: FloodResult): string {
  const mb = (b: number) => (b / 1048576).toFixed(0);
  return (
    `${r.name}: ${r.intervals.blocks} intervals, max ${(r.intervals.maxMs / 1000).toFixed(2)} s, mean ${(r.intervals.meanMs / 1000).toFixed(2)} s; ` +
    `RSS ${mb(r.rssBefore)} MB -> peak ${mb(r.rssPeak)} MB (+${mb(r.rssPeak - r.rssBefore)} MB)`
  );
}
