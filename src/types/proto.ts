/**
 * A small hand-written protobuf writer and reader.
 *
 * Only what the CometBFT types need: varints (uint32/int32/uint64/int64/bool/enum), sfixed64,
 * bytes/strings and embedded messages, plus `uvarint(len) || msg` framing (cometbft:
 * libs/protoio/writer.go MarshalDelimited). Encoding follows gogoproto's generated marshalers:
 * proto3 zero scalars are omitted by the *Field helpers, and the caller decides when a
 * non-nullable embedded message is always written.
 *
 * Embedded messages are written in place: `fork()` reserves one byte for the length, `ldelim()`
 * back-patches it and shifts the body when the length needs more than one varint byte. That keeps
 * one buffer per message and avoids the size-then-write double pass.
 */
import { writeAscii } from '../crypto/bytes.js';

/** Error for malformed protobuf input; `code` is stable for callers that map errors. */
export class ProtoDecodeError extends Error {
  readonly code = 'PROTO_DECODE';
  constructor(message: string) {
    super(message);
    this.name = 'ProtoDecodeError';
  }
}

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
export const WIRE_FIXED32 = 5;

const U64_MASK = (1n << 64n) - 1n;
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder('utf-8');

/** Number of bytes a uvarint of the non-negative safe integer `n` takes. */
export function uvarintSize(n: number): number {
  if (n < 0x80) return 1;
  if (n < 0x4000) return 2;
  if (n < 0x200000) return 3;
  if (n < 0x10000000) return 4;
  let size = 4;
  n = Math.floor(n / 0x10000000);
  while (n > 0) {
    size++;
    n = Math.floor(n / 128);
  }
  return size;
}

export class ProtoWriter {
  buf: Uint8Array;
  pos = 0;

  constructor(initialSize = 256) {
    this.buf = new Uint8Array(initialSize);
  }

  private grow(need: number): void {
    let size = this.buf.length * 2;
    while (size < this.pos + need) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  ensure(need: number): void {
    if (this.pos + need > this.buf.length) this.grow(need);
  }

  /** Unsigned varint of a non-negative safe integer (up to 2^53-1). */
  uvarint(n: number): void {
    this.ensure(10);
    const buf = this.buf;
    let pos = this.pos;
    if (n < 0x80000000) {
      // Fast path: bit operations are exact below 2^31.
      while (n > 0x7f) {
        buf[pos++] = (n & 0x7f) | 0x80;
        n >>>= 7;
      }
      buf[pos++] = n;
    } else {
      while (n > 0x7f) {
        buf[pos++] = (n % 128) | 0x80;
        n = Math.floor(n / 128);
      }
      buf[pos++] = n;
    }
    this.pos = pos;
  }

  /** Unsigned varint of a 64-bit value; negative bigints are written as their two's complement. */
  uvarint64(v: bigint): void {
    if (v >= 0n && v < 0x80000000n) {
      this.uvarint(Number(v));
      return;
    }
    let u = v & U64_MASK;
    this.ensure(10);
    const buf = this.buf;
    let pos = this.pos;
    while (u > 0x7fn) {
      buf[pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    buf[pos++] = Number(u);
    this.pos = pos;
  }

  /** int32 varint: negative values are sign-extended to 64 bits (10 bytes), as protobuf requires. */
  int32(n: number): void {
    if (n >= 0) this.uvarint(n);
    else this.uvarint64(BigInt(n));
  }

  tag(field: number, wire: number): void {
    this.uvarint(field * 8 + wire);
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** Length-prefixed bytes without a tag. */
  lenBytes(bytes: Uint8Array): void {
    this.uvarint(bytes.length);
    this.raw(bytes);
  }

  sfixed64(v: bigint): void {
    this.ensure(8);
    const u = BigInt.asUintN(64, v);
    let lo = Number(u & 0xffffffffn);
    let hi = Number(u >> 32n);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < 4; i++, lo >>>= 8) buf[p++] = lo & 0xff;
    for (let i = 0; i < 4; i++, hi >>>= 8) buf[p++] = hi & 0xff;
    this.pos = p;
  }

  // ---- field helpers with proto3 "omit zero" semantics ----

  uint32Field(field: number, v: number): void {
    if (v !== 0) {
      this.tag(field, WIRE_VARINT);
      this.uvarint(v >>> 0);
    }
  }

  int32Field(field: number, v: number): void {
    if (v !== 0) {
      this.tag(field, WIRE_VARINT);
      this.int32(v);
    }
  }

  uint64Field(field: number, v: bigint): void {
    if (v !== 0n) {
      this.tag(field, WIRE_VARINT);
      this.uvarint64(v);
    }
  }

  int64Field(field: number, v: bigint): void {
    if (v !== 0n) {
      this.tag(field, WIRE_VARINT);
      this.uvarint64(v);
    }
  }

  boolField(field: number, v: boolean): void {
    if (v) {
      this.tag(field, WIRE_VARINT);
      this.uvarint(1);
    }
  }

  sfixed64Field(field: number, v: bigint): void {
    if (v !== 0n) {
      this.tag(field, WIRE_FIXED64);
      this.sfixed64(v);
    }
  }

  bytesField(field: number, v: Uint8Array | undefined | null): void {
    if (v && v.length > 0) {
      this.tag(field, WIRE_LEN);
      this.lenBytes(v);
    }
  }

  /** Always written, even when empty: repeated bytes elements and oneof members. */
  bytesFieldAlways(field: number, v: Uint8Array): void {
    this.tag(field, WIRE_LEN);
    this.lenBytes(v);
  }

  stringField(field: number, s: string): void {
    const n = s.length;
    if (n === 0) return;
    this.tag(field, WIRE_LEN);
    if (n < 0x80) {
      // A short string (addresses, type URLs, denoms, event keys) that is all ASCII is its own
      // UTF-8: its characters go straight in after a one-byte length, without TextEncoder's new
      // array and the copy of it. At the first other character, the encoder takes it all.
      this.ensure(n + 1);
      if (writeAscii(this.buf, this.pos + 1, s)) {
        this.buf[this.pos] = n;
        this.pos += 1 + n;
        return;
      }
    }
    this.lenBytes(textEncoder.encode(s));
  }

  /** Starts an embedded message for `field`; returns a mark for ldelim. */
  fork(field: number): number {
    this.tag(field, WIRE_LEN);
    this.ensure(1);
    const mark = this.pos;
    this.pos += 1; // one byte reserved for the length; widened in ldelim if needed
    return mark;
  }

  /** Finishes the embedded message started by fork(). */
  ldelim(mark: number): void {
    const len = this.pos - mark - 1;
    if (len < 0x80) {
      this.buf[mark] = len;
      return;
    }
    const size = uvarintSize(len);
    const extra = size - 1;
    this.ensure(extra);
    const buf = this.buf;
    buf.copyWithin(mark + size, mark + 1, this.pos);
    let n = len;
    let p = mark;
    while (n > 0x7f) {
      buf[p++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    buf[p] = n;
    this.pos += extra;
  }

  /** A copy of the written bytes (the internal buffer may be reused or grown). */
  finish(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }

  /** `uvarint(len) || msg`, protoio MarshalDelimited. */
  finishDelimited(): Uint8Array {
    const len = this.pos;
    const size = uvarintSize(len);
    const out = new Uint8Array(size + len);
    let n = len;
    let p = 0;
    while (n > 0x7f) {
      out[p++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    out[p] = n;
    out.set(this.buf.subarray(0, len), size);
    return out;
  }
}

/** `uvarint(len(msg)) || msg`. */
export function delimit(msg: Uint8Array): Uint8Array {
  const w = new ProtoWriter(msg.length + 10);
  w.lenBytes(msg);
  return w.finish();
}

export class ProtoReader {
  readonly buf: Uint8Array;
  pos: number;
  readonly end: number;

  constructor(buf: Uint8Array, start = 0, end = buf.length) {
    this.buf = buf;
    this.pos = start;
    this.end = end;
  }

  eof(): boolean {
    return this.pos >= this.end;
  }

  /** Unsigned varint as a safe integer; throws past 2^53-1 (lengths, uint32, small enums). */
  uvarint(): number {
    const buf = this.buf;
    const end = this.end;
    let pos = this.pos;
    // Fast path for up to 4 bytes (values < 2^28).
    let result = 0;
    for (let shift = 0; shift < 28; shift += 7) {
      if (pos >= end) throw new ProtoDecodeError('unexpected end of varint');
      const b = buf[pos++]!;
      result |= (b & 0x7f) << shift;
      if (b < 0x80) {
        this.pos = pos;
        return result >>> 0;
      }
    }
    let mul = 0x10000000;
    for (let i = 4; i < 10; i++) {
      if (pos >= end) throw new ProtoDecodeError('unexpected end of varint');
      const b = buf[pos++]!;
      if (i === 9 && b > 1) throw new ProtoDecodeError('varint overflows 64 bits');
      result += (b & 0x7f) * mul;
      mul *= 128;
      if (b < 0x80) {
        if (!Number.isSafeInteger(result)) throw new ProtoDecodeError('varint too large');
        this.pos = pos;
        return result;
      }
    }
    throw new ProtoDecodeError('varint longer than 10 bytes');
  }

  /** Unsigned 64-bit varint as a bigint. */
  uvarint64(): bigint {
    const start = this.pos;
    const buf = this.buf;
    // Common case: fits in 4 bytes.
    let small = 0;
    let pos = start;
    for (let shift = 0; shift < 28; shift += 7) {
      if (pos >= this.end) throw new ProtoDecodeError('unexpected end of varint');
      const b = buf[pos++]!;
      small |= (b & 0x7f) << shift;
      if (b < 0x80) {
        this.pos = pos;
        return BigInt(small >>> 0);
      }
    }
    let result = 0n;
    let shift = 0n;
    pos = start;
    for (let i = 0; i < 10; i++) {
      if (pos >= this.end) throw new ProtoDecodeError('unexpected end of varint');
      const b = buf[pos++]!;
      if (i === 9 && b > 1) throw new ProtoDecodeError('varint overflows 64 bits');
      result |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if (b < 0x80) {
        this.pos = pos;
        return result;
      }
    }
    throw new ProtoDecodeError('varint longer than 10 bytes');
  }

  /** int64 varint (two's complement) as a bigint. */
  int64(): bigint {
    return BigInt.asIntN(64, this.uvarint64());
  }

  /** uint64 varint as a bigint. */
  uint64(): bigint {
    return this.uvarint64();
  }

  /** int32 varint: Go truncates the 64-bit value to its low 32 bits. */
  int32(): number {
    const v = this.uvarint64();
    return Number(BigInt.asIntN(32, v));
  }

  /** uint32 varint: low 32 bits, as Go does. */
  uint32(): number {
    const v = this.uvarint64();
    return Number(BigInt.asUintN(32, v));
  }

  bool(): boolean {
    return this.uvarint64() !== 0n;
  }

  sfixed64(): bigint {
    if (this.pos + 8 > this.end) throw new ProtoDecodeError('unexpected end of fixed64');
    const b = this.buf;
    const p = this.pos;
    const lo = (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
    const hi = b[p + 4]! | (b[p + 5]! << 8) | (b[p + 6]! << 16) | (b[p + 7]! << 24);
    this.pos = p + 8;
    return (BigInt(hi) << 32n) + BigInt(lo);
  }

  /** Reads a length prefix and checks it fits; returns [start, end). */
  private lenRange(): [number, number] {
    const len = this.uvarint();
    const start = this.pos;
    if (len > this.end - start) throw new ProtoDecodeError('length-delimited field runs past the end');
    this.pos = start + len;
    return [start, start + len];
  }

  /** Length-delimited bytes, copied so the result does not pin or alias the input buffer. */
  bytes(): Uint8Array {
    const [s, e] = this.lenRange();
    return this.buf.slice(s, e);
  }

  string(): string {
    const [s, e] = this.lenRange();
    return textDecoder.decode(this.buf.subarray(s, e));
  }

  /** A reader over an embedded message. */
  sub(): ProtoReader {
    const [s, e] = this.lenRange();
    return new ProtoReader(this.buf, s, e);
  }

  /** Reads a tag; returns field*8+wire. Rejects field number 0 and unsupported wire types. */
  tag(): number {
    const t = this.uvarint();
    // Field numbers are 1..2^29-1, so a valid tag is below 2^32 and bit operations are exact.
    if (t > 0xffffffff) throw new ProtoDecodeError('field number too large');
    if (t < 8) throw new ProtoDecodeError('illegal tag 0');
    const wire = t & 7;
    if (wire !== WIRE_VARINT && wire !== WIRE_FIXED64 && wire !== WIRE_LEN && wire !== WIRE_FIXED32) {
      throw new ProtoDecodeError(`unsupported wire type ${wire}`);
    }
    return t;
  }

  /** Skips a field value of the given wire type (unknown fields are ignored, as in proto3). */
  skip(wire: number): void {
    switch (wire) {
      case WIRE_VARINT:
        this.uvarint64();
        return;
      case WIRE_FIXED64:
        if (this.pos + 8 > this.end) throw new ProtoDecodeError('unexpected end of fixed64');
        this.pos += 8;
        return;
      case WIRE_LEN:
        this.lenRange();
        return;
      case WIRE_FIXED32:
        if (this.pos + 4 > this.end) throw new ProtoDecodeError('unexpected end of fixed32');
        this.pos += 4;
        return;
      default:
        throw new ProtoDecodeError(`unsupported wire type ${wire}`);
    }
  }
}

/** Throws when a known field arrives with the wrong wire type (gogoproto does the same). */
export function expectWire(field: number, wire: number, want: number): void {
  if (wire !== want) throw new ProtoDecodeError(`wrong wire type ${wire} for field ${field}`);
}

/** Splits `uvarint(len) || msg` framing; returns the message and the total bytes consumed. */
export function readDelimited(buf: Uint8Array, maxSize = Number.MAX_SAFE_INTEGER): { msg: Uint8Array; size: number } {
  const r = new ProtoReader(buf);
  const len = r.uvarint();
  if (len > maxSize) throw new ProtoDecodeError(`message of ${len} bytes exceeds the ${maxSize}-byte limit`);
  if (len > buf.length - r.pos) throw new ProtoDecodeError('delimited message runs past the end');
  return { msg: buf.subarray(r.pos, r.pos + len), size: r.pos + len };
}
