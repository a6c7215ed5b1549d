/**
 * The binary pieces of chaind's own stored records (src/store): a Writer and a Reader of
 * big-endian integers, u32-length-prefixed bytes and UTF-8 strings, and the encoding of ABCI
 * events and tx results in them. The indexer's tx records (indexer-codec.ts) and the state store's
 * FinalizeBlock responses (statestore.ts) are written with these. Not a wire format: only chaind
 * reads them back.
 */
import type { AbciEvent, ExecTxResult } from '../abci/types.js';
import { writeAscii } from '../crypto/bytes.js';

/**
 * A record is written into one scratch buffer shared by every Writer (records are written one at
 * a time, and `finish` copies the bytes out), so a record does not grow a fresh buffer by doubling
 * (a bank send's tx record and attribute block went through three or four allocations and copies
 * each). The scratch keeps the largest size seen, up to SCRATCH_KEEP.
 */
let scratch = Buffer.allocUnsafe(4096);
const SCRATCH_KEEP = 1 << 22;

export class Writer {
  private buf: Buffer;
  private n = 0;

  constructor(_sizeHint = 256) {
    this.buf = scratch;
  }

  private room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.n + k) size *= 2;
    const b = Buffer.allocUnsafe(size);
    this.buf.copy(b, 0, 0, this.n);
    this.buf = b;
    if (size <= SCRATCH_KEEP) scratch = b;
  }

  u8(v: number): void {
    this.room(1);
    this.buf[this.n++] = v;
  }

  u32(v: number): void {
    this.room(4);
    this.buf.writeUInt32BE(v >>> 0, this.n);
    this.n += 4;
  }

  u64(v: bigint): void {
    this.room(8);
    this.buf.writeBigUInt64BE(v, this.n);
    this.n += 8;
  }

  i64(v: bigint): void {
    this.room(8);
    this.buf.writeBigInt64BE(BigInt.asIntN(64, v), this.n);
    this.n += 8;
  }

  bytes(b: Uint8Array): void {
    this.u32(b.length);
    this.room(b.length);
    this.buf.set(b, this.n);
    this.n += b.length;
  }

  str(s: string): void {
    const len = s.length;
    // Short ASCII (almost every event key and value): written here, without the two native calls
    // (byteLength, write) a string costs otherwise.
    if (len <= 128) {
      this.room(4 + len);
      if (writeAscii(this.buf, this.n + 4, s)) {
        this.buf.writeUInt32BE(len, this.n);
        this.n += 4 + len;
        return;
      }
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.u32(n);
    this.room(n);
    this.buf.write(s, this.n, n, 'utf8');
    this.n += n;
  }

  raw(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.n);
    this.n += b.length;
  }

  finish(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.n));
  }
}

export class Reader {
  private readonly b: Buffer;
  p: number;

  constructor(b: Uint8Array, p = 0) {
    this.b = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    this.p = p;
  }

  u8(): number {
    return this.b[this.p++]!;
  }

  u32(): number {
    const v = this.b.readUInt32BE(this.p);
    this.p += 4;
    return v;
  }

  u64(): bigint {
    const v = this.b.readBigUInt64BE(this.p);
    this.p += 8;
    return v;
  }

  i64(): bigint {
    const v = this.b.readBigInt64BE(this.p);
    this.p += 8;
    return v;
  }

  bytes(): Uint8Array {
    const len = this.u32();
    const out = new Uint8Array(len);
    out.set(this.b.subarray(this.p, this.p + len));
    this.p += len;
    return out;
  }

  str(): string {
    const len = this.u32();
    const s = this.b.toString('utf8', this.p, this.p + len);
    this.p += len;
    return s;
  }
}

export function writeEvents(w: Writer, events: readonly AbciEvent[]): void {
  w.u32(events.length);
  for (const e of events) {
    w.str(e.type);
    w.u32(e.attributes.length);
    for (const a of e.attributes) {
      w.str(a.key);
      w.str(a.value);
      w.u8(a.index ? 1 : 0);
    }
  }
}

export function readEvents(r: Reader): AbciEvent[] {
  const n = r.u32();
  const out: AbciEvent[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const type = r.str();
    const na = r.u32();
    const attributes = new Array(na);
    for (let j = 0; j < na; j++) attributes[j] = { key: r.str(), value: r.str(), index: r.u8() === 1 };
    out[i] = { type, attributes };
  }
  return out;
}

/**
 * A tx result without its code: data(bytes) log info codespace(str) gasWanted(8, signed)
 * gasUsed(8, signed) events. The code goes where each record keeps it (the tx record has it in
 * its fixed header).
 */
export function writeTxResultBody(w: Writer, r: ExecTxResult): void {
  w.bytes(r.data);
  w.str(r.log);
  w.str(r.info);
  w.str(r.codespace);
  w.i64(r.gasWanted);
  w.i64(r.gasUsed);
  writeEvents(w, r.events);
}

export function readTxResultBody(r: Reader, code: number): ExecTxResult {
  const data = r.bytes();
  const log = r.str();
  const info = r.str();
  const codespace = r.str();
  const gasWanted = r.i64();
  const gasUsed = r.i64();
  const events = readEvents(r);
  return { code, data, log, info, gasWanted, gasUsed, events, codespace };
}

/** One tx result: code(4) then its body. */
export function writeTxResult(w: Writer, r: ExecTxResult): void {
  w.u32(r.code);
  writeTxResultBody(w, r);
}

export function readTxResult(r: Reader): ExecTxResult {
  return readTxResultBody(r, r.u32());
}
