/**
 * SecretConnection (cometbft/cometbft:p2p/conn/secret_connection.go): CometBFT's key-derivation
 * golden vectors, handshake message bytes, frame layout and sealing, MAC and length failures,
 * nonce overflow, low-order points, and handshakes over real loopback sockets (honest and evil
 * peers).
 */
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { createCipheriv, createHash } from 'node:crypto';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import { Transcript } from '../../src/p2p/merlin.js';
import { BufferedReader, SocketSource } from '../../src/p2p/stream.js';
import { ProtoWriter } from '../../src/types/proto.js';
import {
  FrameCipher,
  SEALED_FRAME_SIZE,
  SecretConnection,
  computeDHSecret,
  decodeAuthSigMessage,
  decodeEphemeralKeyMsg,
  deriveSecrets,
  encodeAuthSigMessage,
  encodeEphemeralKeyMsg,
  generateEphemeral,
  nodeIdFromPubKey,
} from '../../src/p2p/secret-connection.js';
import { keyPair, socketPair, waitFor } from '../helpers/p2p.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// dist/test/unit → test/fixtures/p2p in the source tree.
const fixture = path.resolve(here, '../../../test/fixtures/p2p/TestDeriveSecretsAndChallengeGolden.golden');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const unhex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));

t.test('deriveSecrets matches all 32 CometBFT golden vectors (TestDeriveSecretsAndChallengeGolden)', async (t) => {
  const lines = fs.readFileSync(fixture, 'utf8').split('\n').filter((l) => l.trim() !== '');
  t.equal(lines.length, 32, 'fixture has 32 vectors');
  for (const [i, line] of lines.entries()) {
    const [secret, least, recv, send, challenge] = line.split(',');
    const d = deriveSecrets(unhex(secret!), least === 'true');
    t.equal(hex(d.recv), recv, `vector ${i}: recv secret`);
    t.equal(hex(d.send), send, `vector ${i}: send secret`);
    // Column 5 is the pre-Merlin challenge: HKDF bytes 64–95, unused today but the same HKDF.
    t.equal(hex(d.extra), challenge, `vector ${i}: HKDF bytes 64-95`);
  }
});

t.test('node ID is hex of sha256(pub)[:20]', async (t) => {
  // RFC 8032 test 1 public key; its address checked against sha256 directly.
  const pub = unhex('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
  const id = nodeIdFromPubKey(pub);
  t.equal(id.length, 40);
  t.equal(id, createHash('sha256').update(pub).digest('hex').slice(0, 40));
});

t.test('handshake messages: hand-built proto bytes', async (t) => {
  const pub = new Uint8Array(32).map((_, i) => i + 1);
  // uvarint(34) || BytesValue{value(1, LEN)=32 bytes}
  t.equal(hex(encodeEphemeralKeyMsg(pub)), '22' + '0a20' + hex(pub));
  t.same(decodeEphemeralKeyMsg(encodeEphemeralKeyMsg(pub).subarray(1)), pub);
  t.throws(() => decodeEphemeralKeyMsg(unhex('0a03010203')), { code: 'HANDSHAKE' }, 'a 3-byte key is refused');
  t.throws(() => decodeEphemeralKeyMsg(new Uint8Array(0)), { code: 'HANDSHAKE' }, 'an absent key is refused');

  const sig = new Uint8Array(64).fill(0xab);
  // uvarint(102) || AuthSigMessage{pub_key(1)=PublicKey{ed25519(1)=32 bytes}, sig(2)=64 bytes}
  const want = '66' + '0a22' + '0a20' + hex(pub) + '1240' + hex(sig);
  t.equal(hex(encodeAuthSigMessage(pub, sig)), want);
  const back = decodeAuthSigMessage(unhex(want).subarray(1));
  t.same(back.pubKey, pub);
  t.same(back.sig, sig);
  // PublicKey{secp256k1(2)=33 bytes}
  const secp = '0a23' + '1221' + '02' + '11'.repeat(32) + '1240' + hex(sig);
  t.throws(() => decodeAuthSigMessage(unhex(secp)), { code: 'AUTH' }, 'a secp256k1 key is refused');
  t.throws(() => decodeAuthSigMessage(unhex('1240' + hex(sig))), { code: 'AUTH' }, 'a missing key is refused');
});

t.test('frames: layout, nonce sequence and round trips', async (t) => {
  const key = new Uint8Array(32).map((_, i) => 200 - i);
  const tx = new FrameCipher(key);
  const rx = new FrameCipher(key);
  for (const len of [0, 1, 17, 1023, 1024]) {
    const data = new Uint8Array(len).map((_, i) => (i * 7 + len) & 0xff);
    const sealed = tx.seal(data);
    t.equal(sealed.length, SEALED_FRAME_SIZE, `len ${len}: 1044 bytes sealed`);
    t.same(rx.open(sealed), data, `len ${len}: round trip`);
  }
  t.throws(() => tx.seal(new Uint8Array(1025)), RangeError, 'more than 1024 data bytes do not fit a frame');

  // Independent construction of frame #2 (counter 2): LE32(len) || data || zero padding, nonce
  // = 00000000 || LE64(2), ChaCha20-Poly1305 with the tag appended.
  const a = new FrameCipher(key);
  a.seal(new Uint8Array(0));
  a.seal(new Uint8Array(0));
  const data = new TextEncoder().encode('hello frame');
  const frame = Buffer.alloc(1028);
  frame.writeUInt32LE(data.length, 0);
  frame.set(data, 4);
  const nonce = Buffer.from('000000000200000000000000', 'hex');
  const c = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
  const want = Buffer.concat([c.update(frame), c.final(), c.getAuthTag()]);
  t.equal(hex(a.seal(data)), hex(want), 'third frame = manual seal with counter 2');
});

t.test('frames: bad MAC, oversized length, out-of-order nonce', async (t) => {
  const key = new Uint8Array(32).fill(9);
  const sealed = new FrameCipher(key).seal(new Uint8Array([1, 2, 3]));
  const flipped = Buffer.from(sealed);
  flipped[10]! ^= 0x01;
  t.throws(() => new FrameCipher(key).open(flipped), { code: 'FRAME_MAC' }, 'a flipped ciphertext bit fails the MAC');
  const tag = Buffer.from(sealed);
  tag[SEALED_FRAME_SIZE - 1]! ^= 0x80;
  t.throws(() => new FrameCipher(key).open(tag), { code: 'FRAME_MAC' }, 'a flipped tag bit fails the MAC');
  t.throws(() => new FrameCipher(new Uint8Array(32).fill(8)).open(sealed), { code: 'FRAME_MAC' }, 'the wrong key fails the MAC');
  const rx = new FrameCipher(key);
  rx.open(new FrameCipher(key).seal(new Uint8Array(1)));
  t.throws(() => rx.open(sealed), { code: 'FRAME_MAC' }, 'a replayed frame (nonce 0 at counter 1) fails the MAC');

  // A correctly sealed frame declaring 1025 data bytes.
  const frame = Buffer.alloc(1028);
  frame.writeUInt32LE(1025, 0);
  const c = createCipheriv('chacha20-poly1305', key, Buffer.alloc(12), { authTagLength: 16 });
  const big = Buffer.concat([c.update(frame), c.final(), c.getAuthTag()]);
  t.throws(() => new FrameCipher(key).open(big), { code: 'FRAME_LENGTH' }, 'length > 1024 is an error');
});

t.test('frames: the nonce counter never wraps', async (t) => {
  const key = new Uint8Array(32).fill(3);
  const tx = new FrameCipher(key, 2n ** 64n - 2n);
  const rx = new FrameCipher(key, 2n ** 64n - 2n);
  t.same(rx.open(tx.seal(Uint8Array.of(5))), Uint8Array.of(5), 'counter 2^64-2 still seals');
  t.throws(() => tx.seal(Uint8Array.of(6)), { code: 'NONCE_OVERFLOW' }, 'counter 2^64-1 is never used');
  t.throws(() => rx.open(Buffer.alloc(SEALED_FRAME_SIZE)), { code: 'NONCE_OVERFLOW' });
  // The high word carries: counter 2^32-1 then 2^32.
  const a = new FrameCipher(key, 2n ** 32n - 1n);
  a.seal(new Uint8Array(0));
  const b = new FrameCipher(key, 2n ** 32n);
  t.equal(hex(a.seal(Uint8Array.of(1))), hex(b.seal(Uint8Array.of(1))), 'low word overflows into the high word');
});

// libsodium's list of X25519 points of small order (also CometBFT's former blacklist,
// cometbft/cometbft commit 6dd817cbbc): 0, 1, two order-8 points, p-1, p, p+1. X25519 ignores
// the top bit, so each with bit 255 set is the same point and must fail too.
const LOW_ORDER_BASE = [
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0100000000000000000000000000000000000000000000000000000000000000',
  'e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800',
  '5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
];
const LOW_ORDER = [
  ...LOW_ORDER_BASE,
  ...LOW_ORDER_BASE.map((h) => {
    const b = unhex(h);
    b[31]! |= 0x80;
    return hex(b);
  }),
];

t.test('low-order remote ephemeral keys are rejected', async (t) => {
  const eph = generateEphemeral();
  for (const p of LOW_ORDER) {
    t.throws(() => computeDHSecret(unhex(p), eph.priv), { code: 'LOW_ORDER_POINT' }, p.slice(0, 8));
  }
  const other = generateEphemeral();
  t.same(computeDHSecret(other.pub, eph.priv), computeDHSecret(eph.pub, other.priv), 'an honest key agrees');
});

t.test('in-process handshake over loopback TCP, then plaintext both ways', async (t) => {
  const [a, b] = await socketPair();
  const [ka, kb] = keyPair();
  const [ca, cb] = await Promise.all([SecretConnection.handshake(a, ka), SecretConnection.handshake(b, kb)]);
  t.teardown(() => {
    ca.close();
    cb.close();
  });
  t.same(ca.remotePubKey, kb.pubKey);
  t.same(cb.remotePubKey, ka.pubKey);
  t.equal(ca.remoteId, nodeIdFromPubKey(kb.pubKey));
  const big = new Uint8Array(5000).map((_, i) => i & 0xff);
  ca.write(big);
  ca.write(Uint8Array.of(42));
  t.same(await cb.reader.read(5000), big, '5000 bytes across five frames');
  t.same(await cb.reader.read(1), Uint8Array.of(42));
  cb.write(new TextEncoder().encode('pong'));
  t.equal(new TextDecoder().decode(await ca.reader.read(4)), 'pong');
});

/** The remote half of a handshake with hooks to misbehave. */
async function evilPeer(
  socket: Socket,
  opts: { ephemeral?: Uint8Array; signWith?: Ed25519PrivKey; claim?: Uint8Array; corruptSig?: boolean; after?: (key: Uint8Array) => Uint8Array },
): Promise<void> {
  const raw = new BufferedReader(new SocketSource(socket));
  const eph = generateEphemeral();
  const myPub = opts.ephemeral ?? eph.pub;
  socket.write(encodeEphemeralKeyMsg(myPub));
  const rem = decodeEphemeralKeyMsg(await raw.readDelimited(1 << 20));
  if (opts.ephemeral) return; // nothing sensible to continue with
  const least = Buffer.compare(Buffer.from(myPub), Buffer.from(rem)) < 0;
  const tr = new Transcript('TENDERMINT_SECRET_CONNECTION_TRANSCRIPT_HASH');
  tr.appendMessage('EPHEMERAL_LOWER_PUBLIC_KEY', least ? myPub : rem);
  tr.appendMessage('EPHEMERAL_UPPER_PUBLIC_KEY', least ? rem : myPub);
  const dh = computeDHSecret(rem, eph.priv);
  tr.appendMessage('DH_SECRET', dh);
  const { send } = deriveSecrets(dh, least);
  const challenge = tr.challengeBytes('SECRET_CONNECTION_MAC', 32);
  const key = opts.signWith ?? Ed25519PrivKey.generate();
  const sig = key.sign(challenge);
  if (opts.corruptSig) sig[0]! ^= 1;
  const msg = encodeAuthSigMessage(opts.claim ?? key.pubKey, sig);
  socket.write(new FrameCipher(send).seal(msg));
  // Raw bytes after the handshake, built with the send key (the next frame uses counter 1).
  if (opts.after) socket.write(opts.after(send));
}

/** A frame sealed with `key` at nonce counter 1, declaring `len` data bytes. */
function rawFrame(key: Uint8Array, len: number): Buffer {
  const frame = Buffer.alloc(1028);
  frame.writeUInt32LE(len, 0);
  const nonce = Buffer.alloc(12);
  nonce.writeUInt32LE(1, 4);
  const c = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
  return Buffer.concat([c.update(frame), c.final(), c.getAuthTag()]);
}

t.test('after the handshake: an oversized frame and a forged frame fail the reader', async (t) => {
  const cases: [string, (key: Uint8Array) => Uint8Array, string][] = [
    ['length 1025', (key) => rawFrame(key, 1025), 'FRAME_LENGTH'],
    ['length 0xffffffff', (key) => rawFrame(key, 0xffffffff), 'FRAME_LENGTH'],
    [
      'tampered frame',
      (key) => {
        const f = rawFrame(key, 10);
        f[100]! ^= 4;
        return f;
      },
      'FRAME_MAC',
    ],
    ['frame for another key', () => rawFrame(new Uint8Array(32).fill(1), 10), 'FRAME_MAC'],
  ];
  for (const [name, after, code] of cases) {
    const [a, b] = await socketPair();
    void evilPeer(b, { after }).catch(() => {});
    const sc = await SecretConnection.handshake(a, Ed25519PrivKey.generate());
    await t.rejects(sc.reader.read(1), { code }, name);
    a.destroy();
    b.destroy();
  }
  {
    // Control: a well-formed frame with 0 declared bytes then one with 3 carries exactly those.
    const [a, b] = await socketPair();
    void evilPeer(b, {
      after: (key) => {
        const f1 = rawFrame(key, 0);
        const c = new FrameCipher(key, 2n);
        return Buffer.concat([f1, c.seal(Uint8Array.of(7, 8, 9))]);
      },
    }).catch(() => {});
    const sc = await SecretConnection.handshake(a, Ed25519PrivKey.generate());
    t.same(await sc.reader.read(3), Uint8Array.of(7, 8, 9), 'control frames read fine');
    a.destroy();
    b.destroy();
  }
});

t.test('back-pressure: an unread connection pauses the socket and the writer must wait for drain', async (t) => {
  const [a, b] = await socketPair();
  const [ka, kb] = keyPair();
  const [ca, cb] = await Promise.all([SecretConnection.handshake(a, ka), SecretConnection.handshake(b, kb)]);
  t.teardown(() => {
    ca.close();
    cb.close();
  });
  const piece = new Uint8Array(64 * 1024).map((_, i) => i & 0xff);
  // Write until the socket says stop; nobody reads on the other side.
  let written = 0;
  while (ca.write(piece)) {
    written += piece.length;
    if (written > 256 * 1024 * 1024) break;
  }
  written += piece.length;
  t.ok(ca.needsDrain, `writer told to wait after ${written} bytes`);
  // The reader side stops pulling from the kernel once 1 MiB waits unread.
  await waitFor(() => b.isPaused(), 20_000, 'receiver socket paused');
  t.ok(b.isPaused(), 'receiving socket paused');
  // Reading everything back drains the writer.
  const drained = ca.drain();
  let read = 0;
  while (read < written) {
    const chunk = await cb.reader.read(piece.length);
    if (read === 0) t.same(chunk, piece, 'content intact');
    read += chunk.length;
  }
  await drained;
  t.equal(read, written, 'every byte arrived');
  t.notOk(ca.needsDrain, 'writer drained');
});

t.test('evil peers: low-order ephemeral key, bad signature, signature by another key', async (t) => {
  const k = Ed25519PrivKey.generate();
  {
    const [a, b] = await socketPair();
    void evilPeer(b, { ephemeral: unhex(LOW_ORDER[2]!) }).catch(() => {});
    await t.rejects(SecretConnection.handshake(a, k), { code: 'LOW_ORDER_POINT' }, 'order-8 point');
    a.destroy();
    b.destroy();
  }
  {
    const [a, b] = await socketPair();
    void evilPeer(b, { corruptSig: true }).catch(() => {});
    await t.rejects(SecretConnection.handshake(a, k), { code: 'AUTH', message: 'challenge verification failed' }, 'corrupted signature');
    a.destroy();
    b.destroy();
  }
  {
    const [a, b] = await socketPair();
    void evilPeer(b, { claim: Ed25519PrivKey.generate().pubKey }).catch(() => {});
    await t.rejects(SecretConnection.handshake(a, k), { code: 'AUTH' }, 'claims a key it did not sign with');
    a.destroy();
    b.destroy();
  }
  {
    // The honest control: the same evil helper without a fault completes the handshake.
    const [a, b] = await socketPair();
    const signer = Ed25519PrivKey.generate();
    void evilPeer(b, { signWith: signer }).catch(() => {});
    const sc = await SecretConnection.handshake(a, k);
    t.same(sc.remotePubKey, signer.pubKey, 'control handshake succeeds');
    a.destroy();
    b.destroy();
  }
});

t.test('handshake fails cleanly when the peer hangs up or sends an oversized message', async (t) => {
  {
    const [a, b] = await socketPair();
    b.end();
    await t.rejects(SecretConnection.handshake(a, Ed25519PrivKey.generate()), { code: 'EOF' });
    a.destroy();
  }
  {
    const [a, b] = await socketPair();
    const w = new ProtoWriter(8);
    w.uvarint(1024 * 1024 + 1);
    b.write(w.finish());
    await t.rejects(SecretConnection.handshake(a, Ed25519PrivKey.generate()), { code: 'MSG_TOO_LARGE' }, '1 MiB cap');
    a.destroy();
    b.destroy();
  }
});
