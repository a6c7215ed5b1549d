/**
 * The consensus write-ahead log (cometbft: consensus/wal.go, consensus/replay.go;
 * cometbft/cometbft:consensus/wal.go).
 *
 * Record framing is CometBFT's: `crc32c(payload) BE u32 || len(payload) BE u32 || payload`,
 * at most 1 MiB + 24 bytes of payload (wal.go maxMsgSizeBytes). The payload is our own: JSON of a
 * TimedWALMessage with bigints as {"$n":"…"} and bytes as {"$b":"base64"}, which keeps the file
 * greppable; nothing but this module reads it.
 *
 * A ProposalMessage carries a whole block, which can exceed the record limit (block max_bytes
 * defaults to 21 MiB), so it is logged as CometBFT logs it: the proposal, then the block's proto
 * bytes as 64 KiB parts (`blockPart` records). The reader reassembles them.
 *
 * Files: `<dir>/wal` is the head. After every EndHeight the head is renamed to `wal.NNN` (NNN
 * increasing) and a fresh head is opened, and only the newest `keepFiles` rotated files are kept:
 * replay needs EndHeight(H-1) and what follows, never older heights (CometBFT's autofile group
 * rotates by size instead; per-height files make pruning exact).
 *
 * Durability: the node's own proposal, parts and votes are written with fsync before they are
 * processed or broadcast (writeSync); peer messages and timeouts are written without sync
 * (wal.go Write vs WriteSync). A crash can tear the last record: open() cuts the head at the last
 * good record and keeps the original as `wal.CORRUPTED` (consensus/state.go OnStart repairs once).
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { promisify } from 'node:util';
import { crc32c } from './crc32c.js';
import { ConsensusError, type ConsensusMessage, type TimeoutInfo } from './types.js';
import type { Proposal, Vote } from '../types/block.js';
import { BLOCK_PART_SIZE_BYTES } from '../types/block.js';
import { decodeBlock, encodeBlock } from '../types/codec.js';
import type { Logger } from '../log.js';
import { nullLogger } from '../log.js';

const fsyncAsync = promisify(fs.fsync);
const openAsync = promisify(fs.open);
const closeAsync = promisify(fs.close);

/** wal.go: maxMsgSize (1 MiB) plus 24 bytes of proto overhead. */
export const WAL_MAX_RECORD_SIZE = 1024 * 1024 + 24;

/** crc (4) + length (4). */
const HEADER_SIZE = 8;

/** A consensus message as logged: a proposal without its block, a block part, or a vote. */
export type WALConsensusMessage =
  | { kind: 'vote'; vote: Vote }
  | { kind: 'proposal'; proposal: Proposal; parts: number }
  | { kind: 'blockPart'; height: bigint; round: number; index: number; total: number; bytes: Uint8Array };

export type WALMessage =
  /** A message from a peer, or our own (peerId ''), before it was processed (state.go msgInfo). */
  | { type: 'msgInfo'; peerId: string; msg: WALConsensusMessage }
  | { type: 'timeout'; timeout: TimeoutInfo }
  /** Written (synced) after +2/3 precommits for a block, before the block is applied. */
  | { type: 'endHeight'; height: bigint }
  /** EventDataRoundState, written on every step: only for debugging, never replayed. */
  | { type: 'roundState'; height: bigint; round: number; step: number };

export interface TimedWALMessage {
  /** Nanoseconds since the epoch. */
  time: bigint;
  msg: WALMessage;
}

/** A replayable item: reassembled consensus messages, timeouts and end-height markers. */
export type ReplayItem =
  | { type: 'msgInfo'; peerId: string; msg: ConsensusMessage; time: bigint }
  | { type: 'timeout'; timeout: TimeoutInfo; time: bigint }
  | { type: 'endHeight'; height: bigint; time: bigint };

// ---------------------------------------------------------------------------------------------
// Payload codec

function replacer(this: unknown, key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return { $n: value.toString() };
  // A Buffer has toJSON, which runs before the replacer: look at the original value.
  const orig = (this as Record<string, unknown>)[key];
  if (orig instanceof Uint8Array) return { $b: Buffer.from(orig.buffer, orig.byteOffset, orig.byteLength).toString('base64') };
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1) {
      if (typeof o.$n === 'string') return BigInt(o.$n);
      if (typeof o.$b === 'string') return new Uint8Array(Buffer.from(o.$b, 'base64'));
    }
  }
  return value;
}

/** The payload's JSON text written after `head` bytes of one new buffer (a record without a second copy of its payload). */
function encodeWALPayload(m: TimedWALMessage, head: number): Buffer {
  const json = JSON.stringify(m, replacer);
  const out = Buffer.allocUnsafe(head + Buffer.byteLength(json, 'utf8'));
  out.write(json, head, 'utf8');
  return out;
}

export function decodeWALPayload(b: Uint8Array): TimedWALMessage {
  const m = JSON.parse(Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8'), reviver) as TimedWALMessage;
  if (m === null || typeof m !== 'object' || typeof m.time !== 'bigint' || m.msg === null || typeof m.msg !== 'object') {
    throw new Error('not a TimedWALMessage');
  }
  return m;
}

/** One framed record. Throws WAL_RECORD_TOO_BIG past the 1 MiB + 24 limit (wal.go encoder). */
export function encodeRecord(m: TimedWALMessage): Uint8Array {
  const out = encodeWALPayload(m, HEADER_SIZE);
  const payload = out.subarray(HEADER_SIZE);
  if (payload.length > WAL_MAX_RECORD_SIZE) {
    throw new ConsensusError('WAL_RECORD_TOO_BIG', `msg is too big: ${payload.length} bytes, max: ${WAL_MAX_RECORD_SIZE} bytes`);
  }
  out.writeUInt32BE(crc32c(payload), 0);
  out.writeUInt32BE(payload.length, 4);
  return out;
}

export interface DecodedRecords {
  records: TimedWALMessage[];
  /** Bytes covered by good records: a damaged file is cut here. */
  goodBytes: number;
  /** Why decoding stopped early (a torn or corrupt record), or null at a clean end. */
  error: string | null;
}

/**
 * Decodes records until the end or the first bad one (wal.go WALDecoder.Decode: short header or
 * body, a length past the limit, a checksum mismatch, an undecodable payload).
 */
export function decodeRecords(buf: Uint8Array): DecodedRecords {
  const records: TimedWALMessage[] = [];
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let pos = 0;
  while (pos < buf.length) {
    if (buf.length - pos < HEADER_SIZE) return { records, goodBytes: pos, error: `truncated record header at offset ${pos}` };
    const crc = dv.getUint32(pos, false);
    const len = dv.getUint32(pos + 4, false);
    if (len > WAL_MAX_RECORD_SIZE) {
      return { records, goodBytes: pos, error: `length ${len} exceeded maximum possible value of ${WAL_MAX_RECORD_SIZE} bytes at offset ${pos}` };
    }
    if (buf.length - pos - HEADER_SIZE < len) return { records, goodBytes: pos, error: `truncated record body at offset ${pos}` };
    const payload = buf.subarray(pos + HEADER_SIZE, pos + HEADER_SIZE + len);
    const actual = crc32c(payload);
    if (actual !== crc) {
      return { records, goodBytes: pos, error: `checksums do not match: read: ${crc}, actual: ${actual} at offset ${pos}` };
    }
    let rec: TimedWALMessage;
    try {
      rec = decodeWALPayload(payload);
    } catch (e) {
      return { records, goodBytes: pos, error: `failed to decode record at offset ${pos}: ${(e as Error).message}` };
    }
    records.push(rec);
    pos += HEADER_SIZE + len;
  }
  return { records, goodBytes: pos, error: null };
}

// ---------------------------------------------------------------------------------------------
// Splitting and reassembling proposals

/** The WAL records for one consensus message (a proposal becomes proposal + block parts). */
export function splitMessage(msg: ConsensusMessage, blockBytes?: Uint8Array): WALConsensusMessage[] {
  if (msg.kind === 'vote') return [{ kind: 'vote', vote: msg.vote }];
  const bytes = blockBytes ?? encodeBlock(msg.block);
  const total = Math.max(1, Math.ceil(bytes.length / BLOCK_PART_SIZE_BYTES));
  const out: WALConsensusMessage[] = [{ kind: 'proposal', proposal: msg.proposal, parts: total }];
  for (let i = 0; i < total; i++) {
    out.push({
      kind: 'blockPart',
      height: msg.proposal.height,
      round: msg.proposal.round,
      index: i,
      total,
      bytes: bytes.subarray(i * BLOCK_PART_SIZE_BYTES, Math.min(bytes.length, (i + 1) * BLOCK_PART_SIZE_BYTES)),
    });
  }
  return out;
}

/**
 * Turns raw records into replay items: votes and timeouts pass through, a proposal is emitted once
 * all its parts have followed it (parts of an interrupted proposal are dropped), roundState
 * records are skipped.
 */
export function assembleReplay(records: readonly TimedWALMessage[], logger: Logger = nullLogger): ReplayItem[] {
  const out: ReplayItem[] = [];
  let pending: { proposal: Proposal; peerId: string; parts: Uint8Array[]; total: number; time: bigint } | null = null;
  for (const r of records) {
    const m = r.msg;
    if (m.type === 'timeout') out.push({ type: 'timeout', timeout: m.timeout, time: r.time });
    else if (m.type === 'endHeight') out.push({ type: 'endHeight', height: m.height, time: r.time });
    else if (m.type === 'msgInfo') {
      const cm = m.msg;
      if (cm.kind === 'vote') out.push({ type: 'msgInfo', peerId: m.peerId, msg: { kind: 'vote', vote: cm.vote }, time: r.time });
      else if (cm.kind === 'proposal') {
        pending = { proposal: cm.proposal, peerId: m.peerId, parts: [], total: cm.parts, time: r.time };
      } else if (cm.kind === 'blockPart') {
        if (
          pending === null ||
          pending.peerId !== m.peerId ||
          cm.height !== pending.proposal.height ||
          cm.round !== pending.proposal.round ||
          cm.index !== pending.parts.length ||
          cm.total !== pending.total
        ) {
          continue;
        }
        pending.parts.push(cm.bytes);
        if (pending.parts.length === pending.total) {
          try {
            const block = decodeBlock(Buffer.concat(pending.parts));
            out.push({ type: 'msgInfo', peerId: pending.peerId, msg: { kind: 'proposal', proposal: pending.proposal, block }, time: pending.time });
          } catch (e) {
            logger.error('WAL: undecodable block in proposal', { err: (e as Error).message });
          }
          pending = null;
        }
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The log

export interface WALOptions {
  /** Rotated files to keep besides the head (each ends with one EndHeight). Default 2. */
  keepFiles?: number;
  logger?: Logger;
  /** Clock for record times (ns). */
  now?: () => bigint;
}

export interface WALOpenResult {
  /** The head had a torn or corrupt tail that was cut. */
  repaired: boolean;
  /** Where the original head was copied before the cut. */
  backup?: string;
  error?: string;
}

const ROTATED_RE = /^wal\.(\d+)$/;

export class WAL {
  /** `<dir>/wal`. */
  readonly path: string;
  readonly dir: string;
  private fd: number | null = null;
  private readonly keepFiles: number;
  private readonly logger: Logger;
  private readonly now: () => bigint;
  /** Bytes in the head file. */
  private headSize = 0;
  /** The rotation endHeight is waiting for, if any. */
  private rotating: Promise<void> | null = null;

  constructor(walPath: string, opts: WALOptions = {}) {
    this.path = walPath;
    this.dir = path.dirname(walPath);
    this.keepFiles = Math.max(1, opts.keepFiles ?? 2);
    this.logger = opts.logger ?? nullLogger;
    this.now = opts.now ?? (() => BigInt(Date.now()) * 1_000_000n);
  }

  /** `<home>/data/cs.wal/wal` (config.toml wal_file default). */
  static defaultPath(home: string): string {
    return path.join(home, 'data', 'cs.wal', 'wal');
  }

  /** Opens the head for appending, cutting a damaged tail first. Writes EndHeight(0) into a new WAL. */
  async open(): Promise<WALOpenResult> {
    if (this.fd !== null) return { repaired: false };
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const result = this.repairHead();
    this.fd = fs.openSync(this.path, 'a', 0o600);
    this.headSize = fs.fstatSync(this.fd).size;
    if (this.headSize === 0 && this.rotatedFiles().length === 0) {
      // wal.go OnStart: a new WAL starts with #ENDHEIGHT 0 so that replay of height 1 finds its start.
      await this.writeSync({ type: 'endHeight', height: 0n });
    }
    return result;
  }

  private repairHead(): WALOpenResult {
    let buf: Buffer;
    try {
      buf = fs.readFileSync(this.path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { repaired: false };
      throw e;
    }
    const dec = decodeRecords(buf);
    if (dec.error === null) return { repaired: false };
    const backup = `${this.path}.CORRUPTED`;
    fs.copyFileSync(this.path, backup);
    fs.truncateSync(this.path, dec.goodBytes);
    const fd = fs.openSync(this.path, 'r+');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    this.logger.error('WAL head was corrupted; cut at the last good record', { err: dec.error, keptBytes: dec.goodBytes, backup });
    return { repaired: true, backup, error: dec.error };
  }

  /** Rotated files, oldest first. */
  rotatedFiles(): string[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return [];
    }
    return this.rotatedAmong(names);
  }

  /** rotatedFiles, reading the directory off this thread. */
  private async rotatedFilesAsync(): Promise<string[]> {
    let names: string[];
    try {
      names = await fsp.readdir(this.dir);
    } catch {
      return [];
    }
    return this.rotatedAmong(names);
  }

  private rotatedAmong(names: string[]): string[] {
    const base = path.basename(this.path);
    const re = base === 'wal' ? ROTATED_RE : new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(\\d+)$`);
    return names
      .map((n) => ({ n, m: re.exec(n) }))
      .filter((x) => x.m !== null)
      .map((x) => ({ n: x.n, i: Number(x.m![1]) }))
      .sort((a, b) => a.i - b.i)
      .map((x) => path.join(this.dir, x.n));
  }

  private append(m: WALMessage): void {
    if (this.fd === null) throw new ConsensusError('WAL_CLOSED', 'WAL is not open');
    const rec = encodeRecord({ time: this.now(), msg: m });
    let off = 0;
    try {
      while (off < rec.length) off += fs.writeSync(this.fd, rec, off, rec.length - off);
    } catch (e) {
      // A torn record (disk full mid-write) would end a replay early: cut it off so that a retry
      // appends a whole record after the last good one.
      if (off > 0) {
        try {
          fs.ftruncateSync(this.fd, this.headSize);
        } catch {
          // the replay's repair truncates it then
        }
      }
      throw e;
    }
    this.headSize += rec.length;
  }

  /** Appends without fsync: peer messages, timeouts, round states. */
  write(m: WALMessage): void {
    this.append(m);
  }

  /** Appends and fsyncs before resolving: own messages, EndHeight. */
  async writeSync(m: WALMessage): Promise<void> {
    this.append(m);
    await this.flushAndSync();
  }

  /** Logs one consensus message (proposals split into parts; `blockBytes`: the block's encoding if known); fsyncs when `sync`. */
  async writeMessage(msg: ConsensusMessage, peerId: string, sync: boolean, blockBytes?: Uint8Array): Promise<void> {
    const records = splitMessage(msg, blockBytes);
    for (let i = 0; i < records.length; i++) {
      // A big block's parts (64 KiB each: framed, checksummed, written; ~0.5 ms warm, several
      // times that cold) take turns with RPC, which runs on this thread: one record per turn.
      // Nothing else appends meanwhile: consensus awaits this call.
      if (i > 0) await yieldToLoop();
      this.append({ type: 'msgInfo', peerId, msg: records[i]! });
    }
    if (sync) await this.flushAndSync();
  }

  async flushAndSync(): Promise<void> {
    if (this.fd === null) return;
    await fsyncAsync(this.fd);
  }

  /**
   * EndHeight(height) with fsync, then rotation: the head becomes `wal.NNN` and files beyond
   * `keepFiles` are deleted. Everything a replay of height+1 needs stays.
   */
  async endHeight(height: bigint): Promise<void> {
    await this.writeSync({ type: 'endHeight', height });
    const r = (this.rotating = this.rotate());
    try {
      await r;
    } finally {
      if (this.rotating === r) this.rotating = null;
    }
  }

  /**
   * The head becomes the next numbered file and a new head is opened. The new head is opened
   * before the old descriptor is closed, and a failure (EMFILE when the process is out of
   * descriptors) leaves the old head in place: rotation is then retried at the next EndHeight,
   * and the records keep going to the current head, which a replay reads all the same.
   */
  private async rotate(): Promise<void> {
    // Every step runs on libuv's threads: a directory fsync and the renames/unlinks take tens of
    // milliseconds on a busy disk, once per height, and this thread answers RPC. The caller
    // (endHeight, awaited by consensus) still waits for all of it, in the same order as before.
    if (this.fd === null) return;
    let next: string;
    try {
      const rotated = await this.rotatedFilesAsync();
      const lastMatch = rotated.length > 0 ? /\.(\d+)$/.exec(rotated[rotated.length - 1]!) : null;
      const last = lastMatch ? Number(lastMatch[1]) : -1;
      next = `${this.path}.${String(last + 1).padStart(3, '0')}`;
      await fsp.rename(this.path, next);
    } catch (e) {
      this.logger.error('WAL: rotation deferred', { err: (e as Error).message });
      return;
    }
    let fd: number;
    try {
      fd = (await openAsync(this.path, 'a', 0o600)) as number;
    } catch (e) {
      try {
        await fsp.rename(next, this.path);
      } catch (e2) {
        this.logger.error('WAL: cannot move the head back after a failed rotation', { err: (e2 as Error).message });
      }
      this.logger.error('WAL: rotation deferred', { err: (e as Error).message });
      return;
    }
    // Closed meanwhile (node stop): the new head is not used.
    if (this.fd === null) {
      await closeAsync(fd).catch(() => {});
      return;
    }
    // Records appended while this ran went to the old descriptor, i.e. into `next`, which a
    // replay reads before the head: their order is kept.
    const old = this.fd;
    this.fd = fd;
    this.headSize = 0;
    await closeAsync(old).catch(() => {});
    await this.syncDir();
    const all = await this.rotatedFilesAsync();
    for (const f of all.slice(0, Math.max(0, all.length - this.keepFiles))) {
      try {
        await fsp.unlink(f);
      } catch (e) {
        this.logger.error('WAL: cannot delete old file', { file: f, err: (e as Error).message });
      }
    }
  }

  private async syncDir(): Promise<void> {
    let dfd: number;
    try {
      dfd = (await openAsync(this.dir, 'r')) as number;
    } catch {
      return;
    }
    try {
      await fsyncAsync(dfd);
    } catch {
      // Some filesystems refuse fsync on a directory; the rename is still atomic.
    } finally {
      await closeAsync(dfd).catch(() => {});
    }
  }

  /** All records of the group, oldest first; a damaged file contributes its good prefix. */
  readAll(): TimedWALMessage[] {
    const out: TimedWALMessage[] = [];
    for (const f of [...this.rotatedFiles(), this.path]) {
      let buf: Buffer;
      try {
        buf = fs.readFileSync(f);
      } catch {
        continue;
      }
      const dec = decodeRecords(buf);
      if (dec.error !== null) this.logger.error('WAL: damaged file, reading its good prefix', { file: f, err: dec.error });
      for (const r of dec.records) out.push(r);
    }
    return out;
  }

  /**
   * What catchupReplay(height + 1) feeds back: the items after the last EndHeight(height)
   * (replay.go SearchForEndHeight). When that marker is missing (a chain whose initial height is
   * above 1, or a wiped log) it falls back to the items after the newest EndHeight below
   * `height`, and to the whole log when there is no marker at all; replaying extra messages is
   * harmless since the state machine drops those of other heights.
   */
  replayAfterEndHeight(height: bigint): { found: boolean; items: ReplayItem[] } {
    const recs = this.readAll();
    let idx = -1;
    for (let i = recs.length - 1; i >= 0; i--) {
      const m = recs[i]!.msg;
      if (m.type === 'endHeight' && m.height === height) {
        idx = i;
        break;
      }
    }
    const found = idx >= 0;
    if (!found) {
      for (let i = recs.length - 1; i >= 0; i--) {
        const m = recs[i]!.msg;
        if (m.type === 'endHeight' && m.height < height) {
          idx = i;
          break;
        }
        if (m.type === 'endHeight') {
          // A marker above `height` means the log is ahead of the state: nothing of ours to replay.
          return { found: false, items: [] };
        }
      }
    }
    return { found, items: assembleReplay(recs.slice(idx + 1), this.logger) };
  }

  async close(): Promise<void> {
    // A rotation in progress finishes first (it swaps the descriptor).
    if (this.rotating !== null) await this.rotating.catch(() => {});
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    try {
      await fsyncAsync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  get isOpen(): boolean {
    return this.fd !== null;
  }

  get size(): number {
    return this.headSize;
  }
}
