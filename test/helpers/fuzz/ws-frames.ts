/**
 * Websocket frames for the fuzzer, written by hand (RFC 6455 §5): a frame writer that can also
 * write what a well-behaved client never does (reserved bits, unknown opcodes, fragmented or
 * oversized control frames, lengths in a longer encoding than needed, a 64-bit length with its
 * top bit set), a reader of the server's frames that checks them as strictly as a client must
 * (§5.1–§5.5), a raw connection (an ordinary upgrade on node:net, then these frames), and the
 * frame-level mutations of a case (`frameMutation`).
 *
 * What the server must do with each mutation (the judge's `expect`):
 * - `answer`: legal framing. A message in 2–8 fragments with pings and pongs between them
 *   (§5.4, §5.5: control frames may come between fragments; an unsolicited pong is ignored,
 *   §5.5.3), a frame header split across TCP writes, several frames in one write, a length in a
 *   longer encoding than needed (§5.2 asks the sender for the minimal one, but gives the receiver
 *   no duty to refuse another; uWS takes it).
 * - `close`: the RFC says the server fails the connection (§7.1.7): RSV bits without an extension
 *   (§5.2), an unknown opcode (§5.2), a continuation with no message started and a new data frame
 *   inside a fragmented message (§5.4), a control frame over 125 bytes or fragmented (§5.5), a close
 *   frame with a code no endpoint may send, a 1-byte body or a reason that is not UTF-8 (§5.5.1,
 *   §7.4), a 64-bit length with its most significant bit set (§5.2); and a valid close frame ends
 *   the connection anyway (§5.5.1). Any close, with a close frame or not, is right.
 */
import crypto from 'node:crypto';
import net from 'node:net';
import { knownBugEnabled, type KnownBug } from './known-bugs.js';
import type { Rng } from './prng.js';

export const OP_CONT = 0x0;
export const OP_TEXT = 0x1;
export const OP_BINARY = 0x2;
export const OP_CLOSE = 0x8;
export const OP_PING = 0x9;
export const OP_PONG = 0xa;

export interface FrameSpec {
  /** FIN (default true). */
  fin?: boolean;
  /** RSV1..RSV3 as the three bits under FIN: 4 = RSV1, 2 = RSV2, 1 = RSV3 (default 0). */
  rsv?: number;
  opcode: number;
  payload: Buffer;
  /** The 4-byte masking key; null writes an unmasked frame (which a client must never send, §5.1). */
  mask: Buffer | null;
  /** The length encoding: the shortest one (default), or 126 + 16 bits, or 127 + 64 bits. */
  lenForm?: 'min' | 16 | 64;
  /** The length written in the header (64-bit form), instead of the payload's. */
  declaredLength?: bigint;
}

/** One frame's bytes. */
export function encodeFrame(f: FrameSpec): Buffer {
  const len = f.payload.length;
  const form = f.declaredLength !== undefined ? 64 : f.lenForm === undefined || f.lenForm === 'min' ? (len < 126 ? 7 : len < 65536 ? 16 : 64) : f.lenForm;
  if (form === 16 && len > 0xffff) throw new RangeError('payload too long for a 16-bit length');
  const maskLen = f.mask ? 4 : 0;
  const headLen = 2 + (form === 7 ? 0 : form === 16 ? 2 : 8) + maskLen;
  const out = Buffer.allocUnsafe(headLen + len);
  out[0] = (f.fin === false ? 0 : 0x80) | (((f.rsv ?? 0) & 7) << 4) | (f.opcode & 0x0f);
  const maskBit = f.mask ? 0x80 : 0;
  if (form === 7) out[1] = maskBit | len;
  else if (form === 16) {
    out[1] = maskBit | 126;
    out.writeUInt16BE(len, 2);
  } else {
    out[1] = maskBit | 127;
    out.writeBigUInt64BE(f.declaredLength ?? BigInt(len), 2);
  }
  const body = out.subarray(headLen);
  f.payload.copy(body);
  if (f.mask) {
    if (f.mask.length !== 4) throw new RangeError('a masking key is 4 bytes');
    f.mask.copy(out, headLen - 4);
    maskInPlace(body, f.mask);
  }
  return out;
}

/** XORs `b` with the key, repeated (§5.3); a word at a time over the aligned middle. */
export function maskInPlace(b: Buffer, key: Buffer): void {
  const n = b.length;
  let i = 0;
  if (n >= 64) {
    // Up to the first 4-byte-aligned address bytewise, then words with the key rotated to match.
    for (; (b.byteOffset + i) & 3; i++) b[i]! ^= key[i & 3]!;
    const k = key[i & 3]! | (key[(i + 1) & 3]! << 8) | (key[(i + 2) & 3]! << 16) | (key[(i + 3) & 3]! << 24);
    const words = new Int32Array(b.buffer, b.byteOffset + i, (n - i) >>> 2);
    // Little-endian words (x64, arm64): byte j of a word is XORed with key[(i + j) & 3].
    for (let w = 0; w < words.length; w++) words[w]! ^= k;
    i += words.length * 4;
  }
  for (; i < n; i++) b[i]! ^= key[i & 3]!;
}

// ------------------------------------------------------------------------------------------------
// Frame mutations of a case

export type FrameExpect = 'answer' | 'close';

/** The frames of one case, as TCP writes. */
export interface FramePlan {
  /** The mutation (`frame.<kind>`), or `plain` for one well-formed frame per message. */
  kind: string;
  expect: FrameExpect;
  /** The bytes, one buffer per TCP write. */
  writes: Buffer[];
  /** Wait for each write to leave before the next (so the server reads them apart). */
  pace: boolean;
  /** The sentinel goes in the last write rather than its own. */
  joinSentinel: boolean;
  /** Payload of the last ping sent: its pong must come before the sentinel's answer (§5.5.2). */
  lastPing: Buffer | null;
}

/** Close codes an endpoint may never send, or that no one has defined (§7.4.1, §7.4.2; IANA registry). */
export const BAD_CLOSE_CODES = [0, 1, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535];
/** Bytes that are not UTF-8: a lone continuation byte, an overlong NUL, a UTF-16 surrogate, 0xFF. */
const NOT_UTF8 = [Buffer.from([0x80]), Buffer.from([0xc0, 0x80]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xff, 0xfe]), Buffer.from('ok\xce', 'latin1')];
const UNKNOWN_OPCODES = [0x3, 0x4, 0x5, 0x6, 0x7, 0xb, 0xc, 0xd, 0xe, 0xf];

interface Msg {
  data: Buffer;
  binary: boolean;
}

/** Frame mutation kinds: weight, what the server must do, whether a known-bug switch gates it. */
const KINDS: ReadonlyArray<{ kind: string; weight: number; expect: FrameExpect; knownBug?: KnownBug }> = [
  { kind: 'fragment', weight: 6, expect: 'answer' },
  { kind: 'splitHeader', weight: 2, expect: 'answer' },
  { kind: 'coalesce', weight: 2, expect: 'answer' },
  { kind: 'longLength', weight: 2, expect: 'answer' },
  { kind: 'longLengthControl', weight: 0.5, expect: 'close' },
  { kind: 'rsv', weight: 1.5, expect: 'close' },
  { kind: 'opcode', weight: 1.5, expect: 'close' },
  { kind: 'orphanContinuation', weight: 1, expect: 'close' },
  { kind: 'interrupt', weight: 1, expect: 'close' },
  { kind: 'interruptBinary', weight: 0.5, expect: 'close', knownBug: 'wsBinaryInsideFragments' },
  { kind: 'bigControl', weight: 1, expect: 'close' },
  { kind: 'fragmentedControl', weight: 1, expect: 'close' },
  { kind: 'badClose', weight: 1.5, expect: 'close' },
  { kind: 'length64TopBit', weight: 0.5, expect: 'close' },
  { kind: 'close', weight: 0.5, expect: 'close' },
  { kind: 'unmasked', weight: 0.5, expect: 'close', knownBug: 'unmaskedFrame' },
];

/** The share of a websocket surface's cases sent with a frame mutation (FUZZ_WS_FRAMES, 0–1; default 0.2). */
export function frameMutationShare(): number {
  const v = Number(process.env.FUZZ_WS_FRAMES ?? '');
  return process.env.FUZZ_WS_FRAMES !== undefined && process.env.FUZZ_WS_FRAMES !== '' && v >= 0 && v <= 1 ? v : 0.2;
}

/** One well-formed frame per message, each its own write: what the `ws` client sends. */
export function plainPlan(rng: Rng, msgs: Msg[]): FramePlan {
  return { kind: 'plain', expect: 'answer', writes: msgs.map((m) => encodeFrame({ opcode: m.binary ? OP_BINARY : OP_TEXT, payload: m.data, mask: rng.bytes(4) })), pace: false, joinSentinel: false, lastPing: null };
}

/** A frame mutation of the case's messages (`kind` forces one, for tests). */
export function frameMutation(rng: Rng, msgs: Msg[], kind?: string): FramePlan {
  const kinds = KINDS.filter((k) => k.knownBug === undefined || knownBugEnabled(k.knownBug));
  const k = kind !== undefined ? KINDS.find((x) => x.kind === kind)! : rng.weighted(kinds.map((x) => [x.weight, x] as const));
  const mask = () => rng.bytes(4);
  const dataOp = (m: Msg) => (m.binary ? OP_BINARY : OP_TEXT);
  /** Our pings (frame → payload): the last one in the stream is the one whose pong the judge waits for. */
  const pings = new Map<Buffer, Buffer>();
  const ping = (): Buffer => {
    const payload = rng.chance(0.3) ? Buffer.alloc(0) : rng.bytes(rng.range(1, 125));
    const f = encodeFrame({ opcode: OP_PING, payload, mask: mask() });
    pings.set(f, payload);
    return f;
  };
  const pong = (): Buffer => encodeFrame({ opcode: OP_PONG, payload: rng.chance(0.5) ? Buffer.alloc(0) : rng.bytes(rng.range(1, 125)), mask: mask() });
  /** The message in 2–8 fragments (cut anywhere, empty ones included), with control frames between when `between`. */
  const fragments = (m: Msg, between: boolean): Buffer[] => {
    const n = rng.range(2, 8);
    const cuts = Array.from({ length: n - 1 }, () => rng.int(m.data.length + 1)).sort((a, b) => a - b);
    const out: Buffer[] = [];
    let from = 0;
    for (let i = 0; i < n; i++) {
      const to = i < n - 1 ? cuts[i]! : m.data.length;
      out.push(encodeFrame({ fin: i === n - 1, opcode: i === 0 ? dataOp(m) : OP_CONT, payload: m.data.subarray(from, to), mask: mask() }));
      from = to;
      if (between && i < n - 1) for (let c = rng.weighted([[2, 0], [3, 1], [1, 2]] as const); c > 0; c--) out.push(rng.chance(0.7) ? ping() : pong());
    }
    return out;
  };
  const plain = (m: Msg) => encodeFrame({ opcode: dataOp(m), payload: m.data, mask: mask() });
  const frames = msgs.map(plain);
  /** Puts `bad` before, between or after the messages' frames. */
  const insert = (bad: Buffer) => frames.splice(rng.int(frames.length + 1), 0, bad);
  const pick = () => rng.int(msgs.length);
  let pace = false;
  let joinSentinel = false;
  let writes: Buffer[] | null = null;
  switch (k.kind) {
    case 'fragment': {
      const i = pick();
      frames.splice(i, 1, ...fragments(msgs[i]!, true));
      break;
    }
    case 'splitHeader': {
      // Every frame is its own write, and 1–3 of the headers are cut (inside the length or the mask).
      writes = [];
      for (const f of frames) {
        const headLen = f.length - payloadLenOf(f);
        if (rng.chance(0.6)) {
          const cut = rng.range(1, headLen - 1);
          writes.push(f.subarray(0, cut), f.subarray(cut));
        } else writes.push(f);
      }
      if (writes.length === frames.length) {
        const f = writes.pop()!;
        const cut = rng.range(1, f.length - payloadLenOf(f) - 1);
        writes.push(f.subarray(0, cut), f.subarray(cut));
      }
      pace = true;
      break;
    }
    case 'coalesce':
      // Pings in between, everything in one write with the sentinel.
      for (let c = rng.range(0, 2); c > 0; c--) insert(ping());
      joinSentinel = true;
      break;
    case 'longLength': {
      for (let i = 0; i < msgs.length; i++) {
        const m = msgs[i]!;
        const form = m.data.length > 0xffff || rng.chance(0.5) ? 64 : 16;
        frames[i] = encodeFrame({ opcode: dataOp(m), payload: m.data, mask: mask(), lenForm: form });
      }
      break;
    }
    case 'longLengthControl':
      // A ping or pong whose ≤125-byte length is written in 16 or 64 bits (§5.2 asks for the
      // shortest; §5.5 has control lengths fit the 7-bit field): uWS fails the connection.
      insert(encodeFrame({ opcode: rng.pick([OP_PING, OP_PONG]), payload: rng.bytes(rng.range(0, 20)), mask: mask(), lenForm: rng.pick([16, 64] as const) }));
      break;
    case 'rsv': {
      const rsv = rng.range(1, 7);
      if (rng.chance(0.25)) insert(encodeFrame({ opcode: OP_PING, payload: rng.bytes(rng.range(0, 10)), mask: mask(), rsv }));
      else {
        const i = pick();
        frames[i] = encodeFrame({ opcode: dataOp(msgs[i]!), payload: msgs[i]!.data, mask: mask(), rsv });
      }
      break;
    }
    case 'opcode':
      insert(encodeFrame({ fin: rng.chance(0.8), opcode: rng.pick(UNKNOWN_OPCODES), payload: rng.chance(0.3) ? Buffer.alloc(0) : Buffer.from('{"jsonrpc":"2.0","id":1,"method":"health"}'), mask: mask() }));
      break;
    case 'orphanContinuation':
      insert(encodeFrame({ fin: rng.chance(0.7), opcode: OP_CONT, payload: rng.chance(0.5) ? Buffer.from('{"jsonrpc":"2.0","id":2,"method":"health"}') : rng.bytes(rng.range(0, 40)), mask: mask() }));
      break;
    case 'interrupt':
    case 'interruptBinary': {
      // The first fragment(s) of a message, then a new text (binary) frame, final or not, then the rest.
      const i = pick();
      const parts = fragments(msgs[i]!, false);
      const intruder = encodeFrame({ fin: rng.chance(0.7), opcode: k.kind === 'interrupt' ? OP_TEXT : OP_BINARY, payload: Buffer.from('{"jsonrpc":"2.0","id":3,"method":"health"}'), mask: mask() });
      parts.splice(rng.range(1, parts.length - 1), 0, intruder);
      frames.splice(i, 1, ...parts);
      break;
    }
    case 'bigControl': {
      const op = rng.pick([OP_PING, OP_PONG, OP_CLOSE]);
      const len = rng.chance(0.7) ? 126 : rng.range(127, 4000);
      const payload = op === OP_CLOSE ? Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.alloc(len - 2, 0x61)]) : rng.bytes(len);
      insert(encodeFrame({ opcode: op, payload, mask: mask() }));
      break;
    }
    case 'fragmentedControl': {
      const bad = [encodeFrame({ fin: false, opcode: rng.chance(0.8) ? OP_PING : OP_PONG, payload: rng.bytes(rng.range(0, 20)), mask: mask() })];
      if (rng.chance(0.5)) bad.push(encodeFrame({ opcode: OP_CONT, payload: rng.bytes(rng.range(0, 20)), mask: mask() }));
      frames.splice(rng.int(frames.length + 1), 0, ...bad);
      break;
    }
    case 'badClose': {
      const form = rng.weighted([[3, 'code'], [2, 'reason'], [1, 'oneByte']] as const);
      let payload: Buffer;
      if (form === 'oneByte') payload = Buffer.from([rng.pick([0x03, 0xe8, 0x00])]);
      else {
        const code = Buffer.alloc(2);
        code.writeUInt16BE(form === 'code' ? rng.pick(BAD_CLOSE_CODES) : rng.pick([1000, 1001, 1002, 3000, 4000]));
        payload = Buffer.concat([code, form === 'reason' ? Buffer.concat([Buffer.from('bye '), rng.pick(NOT_UTF8)]) : rng.chance(0.5) ? Buffer.from('bye') : Buffer.alloc(0)]);
      }
      insert(encodeFrame({ opcode: OP_CLOSE, payload, mask: mask() }));
      break;
    }
    case 'length64TopBit': {
      const i = pick();
      const m = msgs[i]!;
      const top = (1n << 63n) | BigInt(rng.chance(0.5) ? m.data.length : rng.int(1 << 16));
      frames[i] = encodeFrame({ opcode: dataOp(m), payload: m.data, mask: mask(), declaredLength: top });
      break;
    }
    case 'close': {
      const code = Buffer.alloc(2);
      code.writeUInt16BE(rng.pick([1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 4999]));
      insert(encodeFrame({ opcode: OP_CLOSE, payload: rng.chance(0.3) ? Buffer.alloc(0) : Buffer.concat([code, Buffer.from(rng.pick(['', 'bye', 'fin ✓']))]), mask: mask() }));
      break;
    }
    case 'unmasked': {
      const i = pick();
      frames[i] = encodeFrame({ opcode: dataOp(msgs[i]!), payload: msgs[i]!.data, mask: null });
      break;
    }
    default:
      throw new Error(`unknown frame mutation ${k.kind}`);
  }
  let lastPing: Buffer | null = null;
  for (const f of frames) lastPing = pings.get(f) ?? lastPing;
  if (joinSentinel) writes = [Buffer.concat(frames)];
  return { kind: `frame.${k.kind}`, expect: k.expect, writes: writes ?? frames, pace, joinSentinel, lastPing: k.expect === 'answer' ? lastPing : null };
}

/** The payload length of an encoded frame (its header read back). */
function payloadLenOf(f: Buffer): number {
  const l = f[1]! & 0x7f;
  return l === 126 ? f.readUInt16BE(2) : l === 127 ? Number(f.readBigUInt64BE(2) & 0x7fffffffffffffffn) : l;
}

// ------------------------------------------------------------------------------------------------
// The server's frames

const UTF8 = new TextDecoder('utf-8', { fatal: true });

export interface FrameEvents {
  /** A text or binary message (text already checked as UTF-8). */
  message(data: Buffer, binary: boolean): void;
  ping(payload: Buffer): void;
  pong(payload: Buffer): void;
  /** A close frame: its code (1005 when it has none) and reason. */
  close(code: number, reason: Buffer): void;
  /** A frame no server may send (§5.1–§5.5): the connection is unusable after it. */
  violation(what: string): void;
}

/**
 * Reads the server's frames as a client must (§5): unmasked, no RSV bits (no extension is
 * negotiated), known opcodes, control frames final and ≤125 bytes, continuations only inside a
 * message, text as UTF-8, a close body empty or a code and a UTF-8 reason.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private have = 0;
  /** Bytes needed before the next parse can make progress. */
  private need = 2;
  private frag: { op: number; parts: Buffer[] } | null = null;
  private dead = false;

  constructor(private readonly on: FrameEvents) {}

  push(d: Buffer): void {
    if (this.dead) return;
    this.chunks.push(d);
    this.have += d.length;
    if (this.have < this.need) return;
    const buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.have);
    let off = 0;
    for (;;) {
      const avail = buf.length - off;
      if (avail < 2) {
        this.need = 2;
        break;
      }
      const b0 = buf[off]!;
      const b1 = buf[off + 1]!;
      let len = b1 & 0x7f;
      let head = 2;
      if (len === 126) head = 4;
      else if (len === 127) head = 10;
      if (avail < head) {
        this.need = head;
        break;
      }
      if (len === 126) len = buf.readUInt16BE(off + 2);
      else if (len === 127) {
        const big = buf.readBigUInt64BE(off + 2);
        if (big > BigInt(Number.MAX_SAFE_INTEGER)) return this.fail(`64-bit length ${big}`);
        len = Number(big);
      }
      if (b1 & 0x80) return this.fail('a masked server frame');
      if (avail < head + len) {
        this.need = head + len;
        break;
      }
      const payload = buf.subarray(off + head, off + head + len);
      off += head + len;
      this.need = 2;
      if (!this.frame(b0, payload)) return;
    }
    const rest = buf.subarray(off);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.have = rest.length;
  }

  private fail(what: string): void {
    this.dead = true;
    this.chunks = [];
    this.on.violation(what);
  }

  private frame(b0: number, payload: Buffer): boolean {
    const fin = (b0 & 0x80) !== 0;
    const op = b0 & 0x0f;
    if (b0 & 0x70) return (this.fail(`RSV bits ${(b0 >> 4) & 7} set`), false);
    if (op >= 0x8) {
      if (!fin) return (this.fail('a fragmented control frame'), false);
      if (payload.length > 125) return (this.fail(`a ${payload.length}-byte control frame`), false);
      if (op === OP_PING) this.on.ping(payload);
      else if (op === OP_PONG) this.on.pong(payload);
      else if (op === OP_CLOSE) {
        if (payload.length === 1) return (this.fail('a 1-byte close body'), false);
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        const reason = payload.subarray(2);
        if (payload.length >= 2 && !validCloseCode(code)) return (this.fail(`close code ${code}`), false);
        if (!isUtf8(reason)) return (this.fail('a close reason that is not UTF-8'), false);
        this.dead = true;
        this.on.close(code, reason);
        return false;
      } else return (this.fail(`opcode ${op}`), false);
      return true;
    }
    if (op === OP_CONT) {
      if (!this.frag) return (this.fail('a continuation with no message started'), false);
      this.frag.parts.push(payload);
    } else if (op === OP_TEXT || op === OP_BINARY) {
      if (this.frag) return (this.fail('a new message inside a fragmented one'), false);
      this.frag = { op, parts: [payload] };
    } else return (this.fail(`opcode ${op}`), false);
    if (!fin) return true;
    const { op: mop, parts } = this.frag;
    this.frag = null;
    // Own the bytes: the read buffer is reused for the next frames.
    const data = parts.length === 1 ? Buffer.from(parts[0]!) : Buffer.concat(parts);
    if (mop === OP_TEXT && !isUtf8(data)) return (this.fail('a text message that is not UTF-8'), false);
    this.on.message(data, mop === OP_BINARY);
    return true;
  }
}

/** Close codes an endpoint may send (§7.4.1, §7.4.2, and the IANA registry's 1012–1014). */
export function validCloseCode(code: number): boolean {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);
}

export function isUtf8(b: Uint8Array): boolean {
  try {
    UTF8.decode(b);
    return true;
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------------------------------------
// A raw connection

/**
 * A websocket client on a raw TCP socket: an ordinary upgrade, then whatever bytes the caller
 * writes. It answers the server's pings, echoes a close, and reports what the server sent.
 */
export class RawWs {
  /** The close code from the server's close frame (1005 without one), or 1006 when TCP ended without a close frame. */
  closeCode: number | null = null;
  /** A frame from the server that breaks RFC 6455. */
  serverViolation: string | null = null;
  onEvent: (() => void) | null = null;
  readonly messages: Array<{ data: Buffer; binary: boolean }> = [];
  readonly pongs: Buffer[] = [];
  private readonly reader: FrameReader;
  private sentClose = false;

  private constructor(private readonly sock: net.Socket) {
    this.reader = new FrameReader({
      message: (data, binary) => {
        this.messages.push({ data, binary });
        this.onEvent?.();
      },
      ping: (p) => this.write(encodeFrame({ opcode: OP_PONG, payload: p, mask: crypto.randomBytes(4) })),
      pong: (p) => {
        this.pongs.push(Buffer.from(p));
        this.onEvent?.();
      },
      close: (code) => {
        this.closeCode ??= code;
        if (!this.sentClose) {
          const body = Buffer.alloc(2);
          body.writeUInt16BE(code === 1005 ? 1000 : code);
          this.write(encodeFrame({ opcode: OP_CLOSE, payload: code === 1005 ? Buffer.alloc(0) : body, mask: crypto.randomBytes(4) }));
          this.sentClose = true;
        }
        this.sock.end();
        this.onEvent?.();
      },
      violation: (what) => {
        this.serverViolation ??= what;
        this.sock.destroy();
        this.onEvent?.();
      },
    });
    sock.on('data', (d: Buffer) => this.reader.push(d));
    sock.on('close', () => {
      this.closeCode ??= 1006;
      this.onEvent?.();
    });
  }

  get closed(): boolean {
    return this.closeCode !== null;
  }

  /** Upgrades `GET <path>` on 127.0.0.1:port; rejects unless the answer is 101. */
  static connect(port: number, path: string, timeoutMs = 60_000): Promise<RawWs> {
    return new Promise((resolve, reject) => {
      const sock = net.connect(port, '127.0.0.1');
      sock.setNoDelay(true);
      let acc: Buffer = Buffer.alloc(0);
      const timer = setTimeout(() => {
        sock.destroy();
        reject(new Error(`websocket upgrade on ${port}${path}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      const onData = (d: Buffer) => {
        acc = acc.length ? Buffer.concat([acc, d]) : d;
        const end = acc.indexOf('\r\n\r\n');
        if (end < 0) return;
        clearTimeout(timer);
        sock.off('data', onData);
        sock.off('error', onError);
        sock.off('close', onClose);
        const head = acc.subarray(0, end).toString('latin1');
        if (!head.startsWith('HTTP/1.1 101')) {
          sock.destroy();
          reject(new Error(`websocket upgrade on ${port}${path}: ${JSON.stringify(head.slice(0, 200))}`));
          return;
        }
        sock.on('error', () => {});
        const ws = new RawWs(sock);
        const rest = acc.subarray(end + 4);
        if (rest.length) ws.reader.push(Buffer.from(rest));
        resolve(ws);
      };
      const onError = (e: Error) => {
        clearTimeout(timer);
        reject(e);
      };
      const onClose = () => {
        clearTimeout(timer);
        reject(new Error(`websocket upgrade on ${port}${path}: closed`));
      };
      sock.on('data', onData);
      sock.once('error', onError);
      sock.once('close', onClose);
      const key = crypto.randomBytes(16).toString('base64');
      sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
  }

  /** Writes bytes (nothing once the socket is gone); resolves when they left, or at once. */
  write(b: Buffer): Promise<void> {
    if (this.sock.destroyed || !this.sock.writable) return Promise.resolve();
    return new Promise((resolve) => this.sock.write(b, () => resolve()));
  }

  /** Writes each buffer; with `pace`, each after the previous one left and a turn of the loop (so the server reads them apart). */
  async writeAll(writes: Buffer[], pace: boolean): Promise<void> {
    if (!pace) {
      for (const w of writes) void this.write(w);
      return;
    }
    for (const w of writes) {
      await this.write(w);
      await new Promise((r) => setTimeout(r, 1));
    }
  }

  markCloseSent(): void {
    this.sentClose = true;
  }

  destroy(): void {
    this.sock.destroy();
  }
}
