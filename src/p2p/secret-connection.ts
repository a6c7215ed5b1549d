/**
 * SecretConnection: CometBFT's authenticated encryption over TCP
 * (cometbft/cometbft:p2p/conn/secret_connection.go, a Station-to-Station variant).
 *
 * Handshake:
 *  1. both sides send an X25519 ephemeral public key as `uvarint(len) || BytesValue{value=1}`
 *     (gogoproto google.protobuf.BytesValue; reads capped at 1 MiB);
 *  2. Merlin transcript "TENDERMINT_SECRET_CONNECTION_TRANSCRIPT_HASH" gets the lower then the
 *     upper ephemeral key (byte order) and the DH secret; an all-zero DH secret (a low-order remote
 *     point) is rejected;
 *  3. HKDF-SHA256(ikm = DH secret, no salt, info TENDERMINT_SECRET_CONNECTION_KEY_AND_CHALLENGE_GEN)
 *     gives 96 bytes: the side whose ephemeral key sorts lowest receives with bytes 0–31 and sends
 *     with 32–63, the other side the reverse; 64–95 are unused;
 *  4. the challenge is 32 transcript bytes labelled SECRET_CONNECTION_MAC; each side sends, already
 *     encrypted, `AuthSigMessage{pub_key=1 (tendermint.crypto.PublicKey), sig=2}` signing it with
 *     its ed25519 node key; the remote key must be ed25519 and the signature must verify.
 *
 * Frames: `LE32(len) || data` padded to 1028 bytes, sealed with ChaCha20-Poly1305 to 1044 bytes;
 * nonce = 4 zero bytes || LE64 counter, one counter per direction. The plaintext is a byte stream:
 * message boundaries are the upper layer's business.
 */
import { createCipheriv, createDecipheriv, createPrivateKey, createPublicKey, diffieHellman, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import type { Socket } from 'node:net';
import { nodeIdFromPubKey } from '../config/keyfiles.js';
import { ed25519Verify, type Ed25519PrivKey } from '../crypto/ed25519.js';
import { ProtoDecodeError, ProtoReader, ProtoWriter, WIRE_LEN, expectWire } from '../types/proto.js';
import { readPublicKey, writePublicKeyBody } from '../types/codec.js';
import { P2PError } from './errors.js';
import { Transcript } from './merlin.js';
import { BufferedReader, SocketSource, type ChunkSource } from './stream.js';

export const DATA_LEN_SIZE = 4;
export const DATA_MAX_SIZE = 1024;
export const TOTAL_FRAME_SIZE = DATA_LEN_SIZE + DATA_MAX_SIZE; // 1028
export const AEAD_TAG_SIZE = 16;
export const SEALED_FRAME_SIZE = TOTAL_FRAME_SIZE + AEAD_TAG_SIZE; // 1044
/** protoio.NewDelimitedReader(conn, 1024*1024) in shareEphPubKey / shareAuthSignature. */
export const HANDSHAKE_MSG_MAX = 1024 * 1024;

const TRANSCRIPT_LABEL = 'TENDERMINT_SECRET_CONNECTION_TRANSCRIPT_HASH';
const LABEL_EPH_LOWER = 'EPHEMERAL_LOWER_PUBLIC_KEY';
const LABEL_EPH_UPPER = 'EPHEMERAL_UPPER_PUBLIC_KEY';
const LABEL_DH_SECRET = 'DH_SECRET';
const LABEL_MAC = 'SECRET_CONNECTION_MAC';
const HKDF_INFO = new TextEncoder().encode('TENDERMINT_SECRET_CONNECTION_KEY_AND_CHALLENGE_GEN');

/** Node ID of an ed25519 public key: lower-case hex of sha256(pub)[:20] (cometbft/cometbft:p2p/key.go). */
export { nodeIdFromPubKey };

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/**
 * deriveSecrets: HKDF-SHA256 over the DH secret; which half is the receive key depends on whether
 * our ephemeral key sorts lowest. Exported for the CometBFT golden vectors.
 */
export function deriveSecrets(dhSecret: Uint8Array, locIsLeast: boolean): { recv: Uint8Array; send: Uint8Array; extra: Uint8Array } {
  // An absent salt is HashLen zero bytes (RFC 5869 §2.2), the same HMAC key as an empty one.
  const okm = new Uint8Array(hkdfSync('sha256', dhSecret, new Uint8Array(0), HKDF_INFO, 96));
  const a = okm.slice(0, 32);
  const b = okm.slice(32, 64);
  return locIsLeast ? { recv: a, send: b, extra: okm.slice(64) } : { recv: b, send: a, extra: okm.slice(64) };
}

// ---------------------------------------------------------------------------------------------
// X25519 through node:crypto (raw 32-byte keys travel as JWK "x").

export interface EphemeralKey {
  pub: Uint8Array;
  priv: KeyObject;
}

/** RFC 8410 PKCS#8 prefix of an X25519 private key; the 32 random bytes follow (clamped by OpenSSL). */
const PKCS8_X25519_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

/**
 * A fresh X25519 key from 32 random bytes. Not generateKeyPairSync + a JWK export: on Node 20 a GC
 * during that export can run the key-generation job's destructor, which waits for the mutex the
 * export holds — a deadlock seen as a test hung in futex_wait (node::crypto::KeyGenJob::~KeyGenJob
 * under ExportJWK). The public key is read from the SPKI DER (12 bytes of prefix, then the key).
 */
export function generateEphemeral(): EphemeralKey {
  const priv = createPrivateKey({ key: Buffer.concat([PKCS8_X25519_PREFIX, randomBytes(32)]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(priv).export({ type: 'spki', format: 'der' });
  return { pub: new Uint8Array(spki.subarray(12)), priv };
}

/**
 * X25519(our private, their public). An all-zero result means the remote sent a low-order point
 * (or a point on the twist mapping to one); CometBFT's curve25519.X25519 errors on it and
 * tendermint-rs checks it explicitly. OpenSSL may also refuse it itself: both are the same error.
 */
export function computeDHSecret(remotePub: Uint8Array, localPriv: KeyObject): Uint8Array {
  let secret: Buffer;
  try {
    const pub = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(remotePub).toString('base64url') }, format: 'jwk' });
    secret = diffieHellman({ privateKey: localPriv, publicKey: pub });
  } catch (err) {
    throw new P2PError('LOW_ORDER_POINT', 'detected low order point from remote peer', { cause: err });
  }
  let acc = 0;
  for (const b of secret) acc |= b;
  if (acc === 0) throw new P2PError('LOW_ORDER_POINT', 'detected low order point from remote peer');
  return new Uint8Array(secret);
}

// ---------------------------------------------------------------------------------------------
// Frame sealing

const U32 = 0x1_0000_0000;

/** One direction's AEAD state: key and the 64-bit frame counter (as two u32 halves). */
export class FrameCipher {
  private readonly key: Buffer;
  private readonly nonce = Buffer.alloc(12);
  /** Plaintext frame scratch space, reused for every seal. */
  private readonly frame = Buffer.alloc(TOTAL_FRAME_SIZE);
  private lo: number;
  private hi: number;

  /** `counter` only for tests (nonce-overflow); a connection always starts at 0. */
  constructor(key: Uint8Array, counter = 0n) {
    if (key.length !== 32) throw new RangeError('ChaCha20-Poly1305 key must be 32 bytes');
    this.key = Buffer.from(key);
    this.lo = Number(counter & 0xffffffffn);
    this.hi = Number((counter >> 32n) & 0xffffffffn);
  }

  private nextNonce(): Buffer {
    // CometBFT panics when asked to step past 2^64-1, before that frame is written
    // (cometbft/cometbft:p2p/conn/secret_connection.go incrNonce), so nonce 2^64-1 never travels.
    if (this.lo === 0xffffffff && this.hi === 0xffffffff) {
      throw new P2PError('NONCE_OVERFLOW', "can't increase nonce without overflow");
    }
    this.nonce.writeUInt32LE(this.lo, 4);
    this.nonce.writeUInt32LE(this.hi, 8);
    if (++this.lo === U32) {
      this.lo = 0;
      this.hi++;
    }
    return this.nonce;
  }

  /** Seals `chunk` (≤ 1024 bytes) into `out` at `offset` (1044 bytes). */
  sealInto(chunk: Uint8Array, out: Buffer, offset: number): void {
    if (chunk.length > DATA_MAX_SIZE) throw new RangeError(`frame data over ${DATA_MAX_SIZE} bytes`);
    const frame = this.frame;
    frame.writeUInt32LE(chunk.length, 0);
    frame.set(chunk, DATA_LEN_SIZE);
    frame.fill(0, DATA_LEN_SIZE + chunk.length);
    const c = createCipheriv('chacha20-poly1305', this.key, this.nextNonce(), { authTagLength: AEAD_TAG_SIZE });
    const n1 = c.update(frame).copy(out, offset);
    const n2 = c.final().copy(out, offset + n1);
    c.getAuthTag().copy(out, offset + n1 + n2);
  }

  seal(chunk: Uint8Array): Buffer {
    const out = Buffer.alloc(SEALED_FRAME_SIZE);
    this.sealInto(chunk, out, 0);
    return out;
  }

  /** Opens one 1044-byte sealed frame; returns its data (0–1024 bytes). */
  open(sealed: Uint8Array): Uint8Array {
    if (sealed.length !== SEALED_FRAME_SIZE) throw new RangeError(`sealed frame must be ${SEALED_FRAME_SIZE} bytes`);
    const d = createDecipheriv('chacha20-poly1305', this.key, this.nextNonce(), { authTagLength: AEAD_TAG_SIZE });
    d.setAuthTag(sealed.subarray(TOTAL_FRAME_SIZE));
    const head = d.update(sealed.subarray(0, TOTAL_FRAME_SIZE));
    try {
      d.final();
    } catch (err) {
      throw new P2PError('FRAME_MAC', 'failed to decrypt SecretConnection: message authentication failed', { cause: err });
    }
    const len = head.readUInt32LE(0);
    if (len > DATA_MAX_SIZE) throw new P2PError('FRAME_LENGTH', `chunkLength ${len} is greater than dataMaxSize ${DATA_MAX_SIZE}`);
    // A plain Uint8Array view (not a Buffer): callers compare and slice it as bytes.
    return new Uint8Array(head.buffer, head.byteOffset + DATA_LEN_SIZE, len);
  }
}

// ---------------------------------------------------------------------------------------------
// Handshake messages

/** `uvarint(len) || BytesValue{value=1}`: gogoproto writes the field only when non-empty. */
export function encodeEphemeralKeyMsg(pub: Uint8Array): Uint8Array {
  const w = new ProtoWriter(40);
  w.bytesField(1, pub);
  return w.finishDelimited();
}

export function decodeEphemeralKeyMsg(msg: Uint8Array): Uint8Array {
  const r = new ProtoReader(msg);
  let value: Uint8Array = new Uint8Array(0);
  try {
    while (!r.eof()) {
      const t = r.tag();
      if (t >>> 3 === 1) {
        expectWire(1, t & 7, WIRE_LEN);
        value = r.bytes();
      } else r.skip(t & 7);
    }
  } catch (err) {
    throw new P2PError('HANDSHAKE', `malformed ephemeral key message: ${(err as Error).message}`, { cause: err });
  }
  // Go copies the value into a [32]byte whatever its length; an honest peer always sends 32 bytes
  // and anything else is refused here rather than zero-padded.
  if (value.length !== 32) throw new P2PError('HANDSHAKE', `ephemeral key must be 32 bytes, got ${value.length}`);
  return value;
}

export function encodeAuthSigMessage(pub: Uint8Array, sig: Uint8Array): Uint8Array {
  const w = new ProtoWriter(110);
  // pub_key is non-nullable: always written.
  const m = w.fork(1);
  writePublicKeyBody(w, { type: 'ed25519', bytes: pub });
  w.ldelim(m);
  w.bytesField(2, sig);
  return w.finishDelimited();
}

export function decodeAuthSigMessage(msg: Uint8Array): { pubKey: Uint8Array; sig: Uint8Array } {
  const r = new ProtoReader(msg);
  let keyType: string | undefined;
  let pubKey: Uint8Array = new Uint8Array(0);
  let sig: Uint8Array = new Uint8Array(0);
  try {
    while (!r.eof()) {
      const t = r.tag();
      const f = t >>> 3;
      if (f === 1) {
        expectWire(1, t & 7, WIRE_LEN);
        const pk = readPublicKey(r.sub());
        keyType = pk.type;
        pubKey = pk.bytes;
      } else if (f === 2) {
        expectWire(2, t & 7, WIRE_LEN);
        sig = r.bytes();
      } else r.skip(t & 7);
    }
  } catch (err) {
    if (err instanceof ProtoDecodeError) throw new P2PError('HANDSHAKE', `malformed AuthSigMessage: ${err.message}`, { cause: err });
    throw err;
  }
  if (keyType !== 'ed25519') throw new P2PError('AUTH', `expected ed25519 pubkey, got ${keyType ?? 'none'}`);
  if (pubKey.length !== 32) throw new P2PError('AUTH', `ed25519 pubkey must be 32 bytes, got ${pubKey.length}`);
  return { pubKey, sig };
}

// ---------------------------------------------------------------------------------------------

/** Decrypts sealed frames from the raw reader on demand: reading drives decryption. */
class FrameSource implements ChunkSource {
  constructor(
    private readonly raw: BufferedReader,
    private readonly cipher: FrameCipher,
  ) {}

  pullSync(): Uint8Array | null {
    const sealed = this.raw.tryRead(SEALED_FRAME_SIZE);
    return sealed ? this.cipher.open(sealed) : null;
  }

  async pull(): Promise<Uint8Array> {
    return this.cipher.open(await this.raw.read(SEALED_FRAME_SIZE));
  }
}

export interface HandshakeOptions {
  /** Test hook: use this ephemeral key instead of a fresh one. */
  ephemeral?: EphemeralKey;
}

export class SecretConnection {
  /** Plaintext reader: exact-length and delimited reads of the decrypted stream. */
  readonly reader: BufferedReader;
  readonly remotePubKey: Uint8Array;
  readonly remoteId: string;
  private readonly sendCipher: FrameCipher;
  private closedErr: P2PError | null = null;

  private constructor(
    readonly socket: Socket,
    reader: BufferedReader,
    sendCipher: FrameCipher,
    remotePubKey: Uint8Array,
  ) {
    this.reader = reader;
    this.sendCipher = sendCipher;
    this.remotePubKey = remotePubKey;
    this.remoteId = nodeIdFromPubKey(remotePubKey);
  }

  /**
   * Runs the handshake over a connected socket (MakeSecretConnection). No deadline here: the
   * caller (upgrade) owns the timeout and destroys the socket when it passes, which fails the
   * pending read. On failure the socket is left for the caller to destroy.
   */
  static async handshake(socket: Socket, nodeKey: Ed25519PrivKey, opts: HandshakeOptions = {}): Promise<SecretConnection> {
    socket.setNoDelay(true);
    const raw = new BufferedReader(new SocketSource(socket));
    const eph = opts.ephemeral ?? generateEphemeral();

    // Send ours and read theirs at once (both sides write first; the socket buffers the write).
    socket.write(encodeEphemeralKeyMsg(eph.pub));
    const remEph = decodeEphemeralKeyMsg(await raw.readDelimited(HANDSHAKE_MSG_MAX));

    const locIsLeast = compareBytes(eph.pub, remEph) < 0;
    const [lo, hi] = locIsLeast ? [eph.pub, remEph] : [remEph, eph.pub];
    const transcript = new Transcript(TRANSCRIPT_LABEL);
    transcript.appendMessage(LABEL_EPH_LOWER, lo);
    transcript.appendMessage(LABEL_EPH_UPPER, hi);
    const dh = computeDHSecret(remEph, eph.priv);
    transcript.appendMessage(LABEL_DH_SECRET, dh);
    const { recv, send } = deriveSecrets(dh, locIsLeast);
    const challenge = transcript.challengeBytes(LABEL_MAC, 32);

    const recvCipher = new FrameCipher(recv);
    const sendCipher = new FrameCipher(send);
    const plain = new BufferedReader(new FrameSource(raw, recvCipher));
    const sc = new SecretConnection(socket, plain, sendCipher, new Uint8Array(32));

    sc.write(encodeAuthSigMessage(nodeKey.pubKey, nodeKey.sign(challenge)));
    const auth = decodeAuthSigMessage(await plain.readDelimited(HANDSHAKE_MSG_MAX));
    if (!ed25519Verify(auth.pubKey, challenge, auth.sig)) throw new P2PError('AUTH', 'challenge verification failed');
    return new SecretConnection(socket, plain, sendCipher, auth.pubKey);
  }

  /**
   * Seals `data` into as many frames as needed and writes them in one socket write. Returns the
   * socket's answer: false means its buffer is over the high-water mark; wait for drain().
   * Data from one call is contiguous in the stream.
   */
  write(data: Uint8Array): boolean {
    if (this.closedErr) throw this.closedErr;
    // Like Go's Write, nothing to write means no frame.
    if (data.length === 0) return !this.socket.writableNeedDrain;
    const frames = Math.ceil(data.length / DATA_MAX_SIZE);
    const out = Buffer.allocUnsafe(frames * SEALED_FRAME_SIZE);
    for (let i = 0; i < frames; i++) {
      this.sendCipher.sealInto(data.subarray(i * DATA_MAX_SIZE, (i + 1) * DATA_MAX_SIZE), out, i * SEALED_FRAME_SIZE);
    }
    return this.socket.write(out);
  }

  /** True while the socket's write buffer is above its high-water mark. */
  get needsDrain(): boolean {
    return this.socket.writableNeedDrain;
  }

  /** Resolves when the socket drains (or closes). */
  drain(): Promise<void> {
    if (!this.socket.writableNeedDrain || this.socket.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  get remoteAddress(): string | undefined {
    return this.socket.remoteAddress;
  }

  get remotePort(): number | undefined {
    return this.socket.remotePort;
  }

  /** Ends the write side after queued data is flushed; the socket closes when the remote ends too. */
  end(): void {
    if (!this.closedErr) this.closedErr = new P2PError('CLOSED', 'connection closed');
    this.socket.end();
  }

  /** Closes at once. */
  close(): void {
    if (!this.closedErr) this.closedErr = new P2PError('CLOSED', 'connection closed');
    this.socket.destroy();
  }
}
