/**
 * STROBE-128 over keccak-f[1600], only the operations Merlin transcripts use: meta-AD, AD, PRF and
 * KEY (the subset of STROBE v1.0.2 that dalek-cryptography/merlin:src/strobe.rs implements, which
 * CometBFT reaches through oasisprotocol/curve25519-voi:primitives/merlin). Transport and MAC
 * operations are deliberately absent.
 *
 * State: 200 bytes (25 lanes), rate R = 200 - 128/4 - 2 = 166 bytes. `pos` is the write position
 * inside the rate, `posBegin` the position after the current operation's header, `curFlags` the
 * flags of the operation in progress (for `more` continuations).
 */
import { keccakP } from '@noble/hashes/sha3.js';

/** Error raised on misuse of the duplex object (continuing an operation with other flags). */
export class StrobeError extends Error {
  readonly code = 'STROBE_MISUSE';
  constructor(message: string) {
    super(message);
    this.name = 'StrobeError';
  }
}

const STROBE_R = 166;

const FLAG_I = 1;
const FLAG_A = 1 << 1;
const FLAG_C = 1 << 2;
const FLAG_T = 1 << 3;
const FLAG_M = 1 << 4;
const FLAG_K = 1 << 5;

// keccakP works on 50 little-endian u32 words; on a little-endian host a Uint32Array over the same
// buffer as the byte state is exactly that. A big-endian host would need a swap around each call.
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function swapWords(w: Uint32Array): void {
  for (let i = 0; i < w.length; i++) {
    const v = w[i]!;
    w[i] = ((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24);
  }
}

export class Strobe128 {
  private readonly st: Uint8Array;
  private readonly words: Uint32Array;
  private pos = 0;
  private posBegin = 0;
  private curFlags = 0;

  constructor(protocolLabel: Uint8Array) {
    this.st = new Uint8Array(200);
    this.words = new Uint32Array(this.st.buffer);
    // Initial block: [1, R+2, 1, 0, 1, 96] || "STROBEv1.0.2", permuted once (STROBE spec §5.1 with
    // cSHAKE-style padding bytes), then the protocol label as meta-AD.
    this.st.set([1, STROBE_R + 2, 1, 0, 1, 96], 0);
    this.st.set(new TextEncoder().encode('STROBEv1.0.2'), 6);
    this.permute();
    this.metaAd(protocolLabel, false);
  }

  /** A copy with independent state (transcripts fork this way). */
  clone(): Strobe128 {
    const c = Object.create(Strobe128.prototype) as Strobe128;
    const st = Uint8Array.from(this.st);
    Object.assign(c, { st, words: new Uint32Array(st.buffer), pos: this.pos, posBegin: this.posBegin, curFlags: this.curFlags });
    return c;
  }

  metaAd(data: Uint8Array, more: boolean): void {
    this.beginOp(FLAG_M | FLAG_A, more);
    this.absorb(data);
  }

  ad(data: Uint8Array, more: boolean): void {
    this.beginOp(FLAG_A, more);
    this.absorb(data);
  }

  /** Fills `out` with pseudo-random bytes. */
  prf(out: Uint8Array, more: boolean): void {
    this.beginOp(FLAG_I | FLAG_A | FLAG_C, more);
    this.squeeze(out);
  }

  key(data: Uint8Array, more: boolean): void {
    this.beginOp(FLAG_A | FLAG_C, more);
    this.overwrite(data);
  }

  private permute(): void {
    if (LITTLE_ENDIAN) {
      keccakP(this.words);
    } else {
      swapWords(this.words);
      keccakP(this.words);
      swapWords(this.words);
    }
  }

  private runF(): void {
    this.st[this.pos]! ^= this.posBegin;
    this.st[this.pos + 1]! ^= 0x04;
    this.st[STROBE_R + 1]! ^= 0x80;
    this.permute();
    this.pos = 0;
    this.posBegin = 0;
  }

  private absorb(data: Uint8Array): void {
    for (let i = 0; i < data.length; i++) {
      this.st[this.pos]! ^= data[i]!;
      if (++this.pos === STROBE_R) this.runF();
    }
  }

  private overwrite(data: Uint8Array): void {
    for (let i = 0; i < data.length; i++) {
      this.st[this.pos] = data[i]!;
      if (++this.pos === STROBE_R) this.runF();
    }
  }

  private squeeze(out: Uint8Array): void {
    for (let i = 0; i < out.length; i++) {
      out[i] = this.st[this.pos]!;
      this.st[this.pos] = 0;
      if (++this.pos === STROBE_R) this.runF();
    }
  }

  private beginOp(flags: number, more: boolean): void {
    if (more) {
      if (this.curFlags !== flags) {
        throw new StrobeError(`continued operation with flags ${flags}, but the current operation has ${this.curFlags}`);
      }
      return;
    }
    // Transport operations are not part of this subset.
    if ((flags & FLAG_T) !== 0) throw new StrobeError('transport operations are not supported');
    const oldBegin = this.posBegin;
    this.posBegin = this.pos + 1;
    this.curFlags = flags;
    this.absorb(Uint8Array.of(oldBegin, flags));
    // Cipher and key operations start on a fresh block.
    const forceF = (flags & (FLAG_C | FLAG_K)) !== 0;
    if (forceF && this.pos !== 0) this.runF();
  }
}
