/**
 * Merlin transcripts (dalek-cryptography/merlin:src/transcript.rs; the Go port CometBFT uses is
 * oasisprotocol/curve25519-voi:primitives/merlin): a STROBE-128 duplex with protocol label
 * "Merlin v1.0", a "dom-sep" message naming the application, and labelled messages framed as
 * meta-AD(label) || meta-AD(LE32(len)) || AD(message). Challenges are
 * meta-AD(label) || meta-AD(LE32(len)) || PRF(len).
 */
import { Strobe128 } from './strobe.js';

const enc = new TextEncoder();
const MERLIN_PROTOCOL_LABEL = enc.encode('Merlin v1.0');

function bytesOf(x: string | Uint8Array): Uint8Array {
  return typeof x === 'string' ? enc.encode(x) : x;
}

function le32(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n >>> 0, true);
  return out;
}

export class Transcript {
  private readonly strobe: Strobe128;

  constructor(label: string | Uint8Array, strobe?: Strobe128) {
    if (strobe) {
      this.strobe = strobe;
      return;
    }
    this.strobe = new Strobe128(MERLIN_PROTOCOL_LABEL);
    this.appendMessage('dom-sep', label);
  }

  appendMessage(label: string | Uint8Array, message: string | Uint8Array): void {
    const m = bytesOf(message);
    // Merlin frames lengths as u32; a longer message is a caller bug, not data to wrap silently.
    if (m.length > 0xffffffff) throw new RangeError('merlin message longer than 2^32-1 bytes');
    this.strobe.metaAd(bytesOf(label), false);
    this.strobe.metaAd(le32(m.length), true);
    this.strobe.ad(m, false);
  }

  /** challenge_bytes / ExtractBytes: `length` bytes bound to everything appended so far. */
  challengeBytes(label: string | Uint8Array, length: number): Uint8Array {
    const out = new Uint8Array(length);
    this.strobe.metaAd(bytesOf(label), false);
    this.strobe.metaAd(le32(length), true);
    this.strobe.prf(out, false);
    return out;
  }

  clone(): Transcript {
    return new Transcript('', this.strobe.clone());
  }
}
