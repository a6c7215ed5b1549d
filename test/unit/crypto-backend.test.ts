/**
 * One table of known answers, run over every crypto backend that loads here (native when
 * native/ is built, always JS), plus native-vs-JS cross-checks and the CHAIND_CRYPTO switch.
 */
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes, sign as edSign } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import * as secp from '@noble/secp256k1';
import {
  availableCryptoBackends,
  CryptoBackendError,
  cryptoBackendSetting,
  getCryptoBackend,
  getJsBackend,
  nativeLoadError,
  parseCryptoSetting,
  selectCryptoBackend,
  tryNativeBackend,
  type CryptoBackend,
} from '../../src/crypto/backend.js';
import { createNativeBackend, loadNativeAddon } from '../../src/crypto/native.js';
import { PiscinaCryptoPool } from '../../src/pool/piscina.js';
import type { CryptoJobTiming } from '../../src/pool/types.js';

// Signing (RFC 6979) needs noble's sync HMAC; verification under test does not.
secp.hashes.sha256 = nobleSha256;
secp.hashes.hmacSha256 = (k, m) => hmac(nobleSha256, k, m);

const hex = (b: Uint8Array | null): string => (b === null ? 'null' : Buffer.from(b).toString('hex'));
const unhex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'hex'));
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** A fixed, valid secret key per index (1, 2, 3, ...; 1 gives Ethereum's well-known address). */
function secretKey(i: number): Uint8Array {
  const k = new Uint8Array(32);
  k[31] = i;
  k[0] = i > 1 ? 0x11 : 0;
  return k;
}

/** r||s and recid for a digest, signed by noble without pre-hash. */
function secpSign(digest: Uint8Array, sk: Uint8Array): { sig: Uint8Array; recid: number } {
  const rec = secp.sign(digest, sk, { prehash: false, format: 'recovered' });
  return { sig: rec.subarray(1), recid: rec[0]! };
}

function highS(sig: Uint8Array): Uint8Array {
  const s = BigInt('0x' + hex(sig.subarray(32)));
  const out = Uint8Array.from(sig);
  out.set(unhex((N - s).toString(16).padStart(64, '0')), 32);
  return out;
}

function argThrows(tt: Test, fn: () => unknown, what: string): void {
  tt.throws(fn, { name: 'TypeError', code: 'ERR_CHAIND_CRYPTO_ARG' }, what);
}

const backends = availableCryptoBackends();
t.comment(`backends under test: ${backends.map((b) => b.name).join(', ')}`);
if (!tryNativeBackend()) t.comment(`native backend not loaded: ${nativeLoadError()?.message}`);

// cometbft: crypto/merkle/tree_test.go TestHashFromByteSlices; the 3-item root is not in
// CometBFT's table and was computed by hand (Python hashlib) as inner(inner(L1, L2), L3).
const MERKLE_VECTORS: { name: string; items: Uint8Array[]; root: string }[] = [
  { name: '0 items', items: [], root: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
  { name: '1 item', items: [Uint8Array.of(1, 2, 3)], root: '054edec1d0211f624fed0cbca9d4f9400b0e491c43742af2c5b0abebf0c990d8' },
  { name: '1 empty item', items: [new Uint8Array(0)], root: '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d' },
  { name: '2 items', items: [Uint8Array.of(1, 2, 3), Uint8Array.of(4, 5, 6)], root: '82e6cfce00453804379b53962939eaa7906b39904be0813fcadd31b100773c4b' },
  { name: '3 items', items: [Uint8Array.of(1, 2, 3), Uint8Array.of(4, 5, 6), Uint8Array.of(7, 8, 9)], root: '00508f750948afea6fdc966d4ab818f428ba4cbc0df298dbdb79552e187fe6ca' },
  {
    name: '5 items',
    items: [Uint8Array.of(1, 2), Uint8Array.of(3, 4), Uint8Array.of(5, 6), Uint8Array.of(7, 8), Uint8Array.of(9, 10)],
    root: 'f326493eceab4f2d9ffbc78c59432a0a005d6ea98392045c74df5d14a113be18',
  },
];

function runTable(tt: Test, b: CryptoBackend): void {
  tt.test('ltHashMix: one element from zero lanes is SHAKE256(u32be(len k) || k || v), lanes little-endian', async (q) => {
    const key = Buffer.from('bank/balances');
    const value = new Uint8Array(150).fill(7);
    const lanes = new Uint8Array(2048);
    b.ltHashMix(lanes, key, value, false);
    const want = createHash('shake256', { outputLength: 2048 }).update(Uint8Array.of(0, 0, 0, key.length)).update(key).update(value).digest();
    q.equal(hex(lanes), hex(want));
    // Subtracting from zero wraps lane-wise: lane i becomes (65536 - e_i) mod 65536.
    const neg = new Uint8Array(2048);
    b.ltHashMix(neg, key, value, true);
    const e = (x: Uint8Array, i: number) => x[2 * i]! | (x[2 * i + 1]! << 8);
    q.ok([0, 1, 511, 1023].every((i) => e(neg, i) === (0x10000 - e(want, i)) % 0x10000), 'subtraction wraps mod 2^16');
    q.throws(() => b.ltHashMix(new Uint8Array(2047), key, value, false), { code: 'ERR_CHAIND_CRYPTO_ARG' }, 'lanes of the wrong size');
  });
  tt.test('keccak256 known vectors', async (q) => {
    q.equal(hex(b.keccak256(new Uint8Array(0))), 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    q.equal(hex(b.keccak256(Buffer.from('abc'))), '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
    // 200 bytes spans two 136-byte keccak blocks.
    const long = new Uint8Array(200).fill(0xa3);
    q.equal(hex(b.keccak256(long)), hex(getJsBackend().keccak256(long)), 'multi-block agrees with noble');
  });

  tt.test('keccak256Into and keccak256Batch', async (q) => {
    const out = new Uint8Array(70).fill(0xee);
    b.keccak256Into(Buffer.from('abc'), out, 5);
    q.equal(hex(out.subarray(5, 37)), '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
    q.equal(out[4], 0xee, 'byte before untouched');
    q.equal(out[37], 0xee, 'byte after untouched');
    // A view with a byteOffset into a larger buffer, and output aliasing the input.
    const big = new Uint8Array(64);
    big.set(Buffer.from('abc'), 10);
    const view = big.subarray(10, 13);
    q.equal(hex(b.keccak256(view)), '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45', 'subarray view');
    const alias = new Uint8Array(32);
    alias.set(Buffer.from('abc'));
    const want = hex(b.keccak256(alias.subarray(0, 3)));
    b.keccak256Into(alias.subarray(0, 3), alias, 0);
    q.equal(hex(alias), want, 'in-place output over the input');

    const items = [Buffer.from('aaaa'), Buffer.from('bbbb'), Buffer.from('cccc')];
    const batchOut = new Uint8Array(96);
    q.equal(b.keccak256Batch(Buffer.concat(items), 4, batchOut), 3);
    for (let i = 0; i < 3; i++) q.equal(hex(batchOut.subarray(i * 32, i * 32 + 32)), hex(b.keccak256(items[i]!)), `batch item ${i}`);
    q.equal(b.keccak256Batch(new Uint8Array(0), 32, new Uint8Array(0)), 0, 'empty batch');
  });

  tt.test('keccak256Spans: variable-length items, known digests', async (q) => {
    // '' (an empty span in the middle), 'abc', a 136-byte item (one full keccak block: the
    // padding goes into a second block) and a 532-byte one (a full branch node's size).
    const long136 = new Uint8Array(136).map((_, i) => i);
    const long532 = new Uint8Array(532).map((_, i) => (i * 7) & 0xff);
    const items = [Buffer.from('abc'), new Uint8Array(0), long136, long532, Buffer.from('')];
    const concat = Buffer.concat(items);
    let end = 0;
    const ends = Uint32Array.from(items.map((it) => (end += it.length)));
    // Inside a larger output, after 4 bytes: the view's byteOffset must be honoured.
    const big = new Uint8Array(4 + 32 * items.length + 4).fill(0xee);
    q.equal(b.keccak256Spans(concat, ends, big.subarray(4, 4 + 32 * items.length)), items.length);
    q.equal(hex(big.subarray(4, 36)), '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45', 'abc');
    q.equal(hex(big.subarray(36, 68)), 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470', 'empty span');
    q.equal(hex(big.subarray(68, 100)), hex(keccak_256(long136)), '136 bytes');
    q.equal(hex(big.subarray(100, 132)), hex(keccak_256(long532)), '532 bytes');
    q.equal(hex(big.subarray(132, 164)), 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470', 'empty last span');
    q.equal(big[3], 0xee, 'byte before untouched');
    q.equal(big[164], 0xee, 'byte after untouched');
    q.equal(b.keccak256Spans(new Uint8Array(0), new Uint32Array(0), new Uint8Array(0)), 0, 'no items');
    // ends as a view into a larger Uint32Array (byteOffset 4).
    const endsBig = Uint32Array.of(99, 3, 7);
    const out2 = new Uint8Array(64);
    q.equal(b.keccak256Spans(Buffer.from('abcdefg'), endsBig.subarray(1), out2), 2);
    q.equal(hex(out2.subarray(32)), hex(keccak_256(Buffer.from('defg'))), 'ends view');
  });

  tt.test('sha256', async (q) => {
    q.equal(hex(b.sha256(new Uint8Array(0))), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    q.equal(hex(b.sha256(Buffer.from('abc'))), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const out = new Uint8Array(40);
    b.sha256Into(Buffer.from('abc'), out, 8);
    q.equal(hex(out.subarray(8)), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  tt.test('merkleRoot known values', async (q) => {
    for (const v of MERKLE_VECTORS) q.equal(hex(b.merkleRoot(v.items)), v.root, v.name);
  });

  tt.test('secp256k1 verify against @noble signatures', async (q) => {
    for (let i = 1; i <= 4; i++) {
      const sk = secretKey(i);
      const digest = nobleSha256(Buffer.from(`message ${i}`));
      const { sig } = secpSign(digest, sk);
      const comp = secp.getPublicKey(sk, true);
      const uncomp = secp.getPublicKey(sk, false);
      q.equal(b.secp256k1Verify(digest, sig, comp), true, `key ${i} compressed`);
      q.equal(b.secp256k1Verify(digest, sig, uncomp), true, `key ${i} uncompressed`);
      const otherDigest = Uint8Array.from(digest);
      otherDigest[0]! ^= 1;
      q.equal(b.secp256k1Verify(otherDigest, sig, comp), false, `key ${i} wrong digest`);
      const bad = Uint8Array.from(sig);
      bad[40]! ^= 0x10;
      q.equal(b.secp256k1Verify(digest, bad, comp), false, `key ${i} tampered s`);
      q.equal(b.secp256k1Verify(digest, sig, secp.getPublicKey(secretKey(i + 10), true)), false, `key ${i} wrong key`);
      q.equal(b.secp256k1Verify(digest, highS(sig), comp), false, `key ${i} high-S refused`);
    }
    const digest = nobleSha256(Buffer.from('x'));
    const { sig } = secpSign(digest, secretKey(1));
    const pub = secp.getPublicKey(secretKey(1), false);
    const hybrid = Uint8Array.from(pub);
    hybrid[0] = 0x06 | (pub[64]! & 1);
    q.equal(b.secp256k1Verify(digest, sig, hybrid), false, 'hybrid 0x06/0x07 key refused');
    const offCurve = Uint8Array.from(secp.getPublicKey(secretKey(1), true));
    offCurve[32]! ^= 1;
    // Not every x is on the curve; flipping the low bit of this one gives x with no y.
    q.equal(b.secp256k1Verify(digest, sig, offCurve), false, 'bad point');
    q.equal(b.secp256k1Verify(digest, new Uint8Array(64), pub), false, 'r = s = 0');
    q.equal(b.secp256k1Verify(digest, new Uint8Array(64).fill(0xff), pub), false, 'r, s >= n');
  });

  tt.test('secp256k1 decompress', async (q) => {
    // The generator G: its compressed and uncompressed SEC1 forms (SEC 2, 2.4.1).
    const gx = '79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798';
    const gy = '483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8';
    q.equal(hex(b.secp256k1Decompress(unhex(`02${gx}`))), `04${gx}${gy}`, 'G compressed');
    q.equal(hex(b.secp256k1Decompress(unhex(`04${gx}${gy}`))), `04${gx}${gy}`, 'G uncompressed');
    // -G has the same x and the odd y = p - gy.
    const p = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;
    const negGy = (p - BigInt(`0x${gy}`)).toString(16).padStart(64, '0');
    q.equal(hex(b.secp256k1Decompress(unhex(`03${gx}`))), `04${gx}${negGy}`, '-G from prefix 03');
    for (let i = 1; i <= 8; i++) {
      const comp = secp.getPublicKey(secretKey(i), true);
      q.equal(hex(b.secp256k1Decompress(comp)), hex(secp.getPublicKey(secretKey(i), false)), `key ${i}`);
    }
    // x = 5: 5³ + 7 = 132 is not a square mod p, so no point has this x.
    q.equal(b.secp256k1Decompress(unhex(`02${'00'.repeat(31)}05`)), null, 'x with no y');
    q.not(b.secp256k1Decompress(unhex(`02${'00'.repeat(31)}06`)), null, 'x = 6 has a y');
    q.equal(b.secp256k1Decompress(unhex(`05${gx}`)), null, 'prefix 05');
    q.equal(b.secp256k1Decompress(unhex(`06${gx}${gy}`)), null, 'hybrid key refused');
    q.equal(b.secp256k1Decompress(unhex(`04${gx}${negGy.replace(/.$/, (c) => (c === '0' ? '1' : '0'))}`)), null, 'uncompressed y off the curve');
    q.equal(b.secp256k1Decompress(unhex(`02${'ff'.repeat(32)}`)), null, 'x >= p');
    q.equal(b.secp256k1Decompress(new Uint8Array(33)), null, 'all zero');
    argThrows(q, () => b.secp256k1Decompress(new Uint8Array(32)), 'decompress 32 bytes');
    argThrows(q, () => (b as unknown as Record<string, (...a: unknown[]) => unknown>)['secp256k1Decompress']!('02'), 'decompress string');
  });

  tt.test('secp256k1 recover', async (q) => {
    for (let i = 1; i <= 4; i++) {
      const sk = secretKey(i);
      const digest = nobleSha256(Buffer.from(`recover ${i}`));
      const { sig, recid } = secpSign(digest, sk);
      const pub = b.secp256k1Recover(digest, sig, recid);
      q.equal(hex(pub), hex(secp.getPublicKey(sk, false)), `key ${i}`);
      q.equal(pub?.length, 65);
      const wrong = b.secp256k1Recover(digest, sig, recid ^ 1);
      q.not(hex(wrong), hex(pub), `key ${i} other recid gives another key`);
      // The high-S twin recovers the same key with the opposite parity (recovery accepts it).
      q.equal(hex(b.secp256k1Recover(digest, highS(sig), recid ^ 1)), hex(pub), `key ${i} high-S twin`);
    }
    // Ethereum: secret key 1 signs for 0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf.
    const digest = b.keccak256(Buffer.from('chaind'));
    const { sig, recid } = secpSign(digest, secretKey(1));
    const pub = b.secp256k1Recover(digest, sig, recid)!;
    q.equal(hex(b.keccak256(pub.subarray(1)).subarray(12)), '7e5f4552091a69125d5dfcb7b8c2659029395bdf', 'address of key 1');
    q.equal(b.secp256k1Recover(digest, new Uint8Array(64), 0), null, 'r = s = 0');
    q.equal(b.secp256k1Recover(digest, new Uint8Array(64).fill(0xff), 1), null, 'r, s >= n');
    // recid 2/3 mean x = r + n, which for this r is past the field prime: no key.
    q.equal(b.secp256k1Recover(digest, new Uint8Array(64).fill(0xfe), 3), null, 'r + n >= p');
  });

  tt.test('ed25519 verify', async (q) => {
    // RFC 8032 §7.1 TEST 1 (empty message).
    const pub = unhex('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
    const sig = unhex('e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b');
    q.equal(b.ed25519Verify(pub, new Uint8Array(0), sig), true, 'RFC 8032 test 1');
    q.equal(b.ed25519Verify(pub, Uint8Array.of(0), sig), false, 'other message');
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
    const msg = randomBytes(100);
    const s = edSign(null, msg, privateKey);
    q.equal(b.ed25519Verify(raw, msg, s), true, 'node:crypto signature');
    const bad = Uint8Array.from(s);
    bad[10]! ^= 1;
    q.equal(b.ed25519Verify(raw, msg, bad), false, 'tampered');
  });

  tt.test('bad arguments are TypeErrors, not crashes', async (q) => {
    const d32 = new Uint8Array(32);
    const s64 = new Uint8Array(64);
    const p33 = secp.getPublicKey(secretKey(1), true);
    const any = b as unknown as Record<string, (...a: unknown[]) => unknown>;
    argThrows(q, () => any['keccak256']!('abc'), 'keccak256 string');
    argThrows(q, () => any['keccak256']!(undefined), 'keccak256 missing');
    argThrows(q, () => any['keccak256']!(new Uint16Array(4)), 'keccak256 Uint16Array');
    argThrows(q, () => b.keccak256Into(d32, new Uint8Array(40), 9), 'keccak256Into past the end');
    argThrows(q, () => b.keccak256Into(d32, new Uint8Array(40), -1), 'keccak256Into negative offset');
    argThrows(q, () => b.keccak256Into(d32, new Uint8Array(40), 1.5), 'keccak256Into fractional offset');
    argThrows(q, () => any['keccak256Into']!(d32, new Uint8Array(40), '0'), 'keccak256Into string offset');
    argThrows(q, () => b.keccak256Batch(new Uint8Array(10), 3, new Uint8Array(128)), 'keccak256Batch not a multiple');
    argThrows(q, () => b.keccak256Batch(new Uint8Array(10), 0, new Uint8Array(128)), 'keccak256Batch itemLen 0');
    argThrows(q, () => b.keccak256Batch(new Uint8Array(64), 16, new Uint8Array(127)), 'keccak256Batch out too small');
    argThrows(q, () => b.keccak256Spans(new Uint8Array(10), Uint32Array.of(4, 3), new Uint8Array(64)), 'keccak256Spans ends out of order');
    argThrows(q, () => b.keccak256Spans(new Uint8Array(10), Uint32Array.of(4, 11), new Uint8Array(64)), 'keccak256Spans end past concat');
    argThrows(q, () => b.keccak256Spans(new Uint8Array(10), Uint32Array.of(4, 8), new Uint8Array(63)), 'keccak256Spans out too small');
    argThrows(q, () => any['keccak256Spans']!(new Uint8Array(10), [4, 8], new Uint8Array(64)), 'keccak256Spans ends not a Uint32Array');
    argThrows(q, () => any['keccak256Spans']!(new Uint8Array(10), new Int32Array([4, 8]), new Uint8Array(64)), 'keccak256Spans ends an Int32Array');
    argThrows(q, () => b.sha256Into(d32, new Uint8Array(31), 0), 'sha256Into short out');
    argThrows(q, () => any['merkleRoot']!('x'), 'merkleRoot not an array');
    argThrows(q, () => any['merkleRoot']!([d32, 'x']), 'merkleRoot bad element');
    argThrows(q, () => b.secp256k1Verify(new Uint8Array(31), s64, p33), 'verify digest 31');
    argThrows(q, () => b.secp256k1Verify(d32, new Uint8Array(65), p33), 'verify sig 65');
    argThrows(q, () => b.secp256k1Verify(d32, s64, new Uint8Array(34)), 'verify pubkey 34');
    argThrows(q, () => b.secp256k1Recover(d32, s64, 4), 'recover recid 4');
    argThrows(q, () => b.secp256k1Recover(d32, new Uint8Array(63), 0), 'recover sig 63');
    argThrows(q, () => b.ed25519Verify(new Uint8Array(31), d32, s64), 'ed25519 pubkey 31');
    argThrows(q, () => b.ed25519Verify(d32, d32, new Uint8Array(63)), 'ed25519 sig 63');
  });
}

for (const b of backends) t.test(`backend ${b.name}`, async (tt) => runTable(tt, b));

t.test('native and JS agree', { skip: tryNativeBackend() ? false : `native backend not built (${nativeLoadError()?.message})` }, async (tt) => {
  const native = tryNativeBackend()!;
  const js = getJsBackend();
  // The native root is computed level by level, the JS one top-down: both must match for every
  // shape of tree, including each power of two and its neighbours.
  for (let n = 0; n <= 130; n++) {
    const items = Array.from({ length: n }, (_, i) => randomBytes((i * 7) % 90));
    if (hex(native.merkleRoot(items)) !== hex(js.merkleRoot(items))) {
      tt.fail(`merkleRoot differs at n = ${n}`);
      return;
    }
  }
  tt.pass('merkleRoot equal for n = 0..130');
  // Random 33-byte strings with prefix 02/03: about half have an x on the curve.
  let valid = 0;
  for (let i = 0; i < 200; i++) {
    const k = randomBytes(33);
    k[0] = 2 + (i & 1);
    const n = native.secp256k1Decompress(k);
    if (n !== null) valid++;
    if (hex(n) !== hex(js.secp256k1Decompress(k))) {
      tt.fail(`secp256k1Decompress differs for ${hex(k)}`);
      return;
    }
  }
  tt.ok(valid > 50 && valid < 150, `secp256k1Decompress equal on 200 random keys (${valid} on the curve)`);
  for (let len = 0; len <= 300; len += 17) {
    const d = randomBytes(len);
    tt.equal(hex(native.keccak256(d)), hex(js.keccak256(d)), `keccak256 of ${len} bytes`);
  }
  // A batch of 300 spans of every length 0..299 (all the block boundaries of keccak's 136-byte
  // rate, and trie-node sizes), and the fixed-size batch over the same bytes.
  const lens = Array.from({ length: 300 }, (_, i) => (i * 37) % 300);
  const concat = randomBytes(lens.reduce((a, x) => a + x, 0));
  let end = 0;
  const ends = Uint32Array.from(lens.map((l) => (end += l)));
  const outN = new Uint8Array(32 * lens.length);
  const outJ = new Uint8Array(32 * lens.length);
  tt.equal(native.keccak256Spans(concat, ends, outN), lens.length);
  tt.equal(js.keccak256Spans(concat, ends, outJ), lens.length);
  tt.equal(hex(outN), hex(outJ), 'keccak256Spans equal over 300 spans of 0..299 bytes');
  // An addon built before keccak256Spans (a stale .node) still loads, and hashes spans item by item.
  const { keccak256Spans: _spans, ...stale } = loadNativeAddon();
  const staleBackend = createNativeBackend(stale);
  const outS = new Uint8Array(32 * lens.length);
  tt.equal(staleBackend.keccak256Spans(concat, ends, outS), lens.length);
  tt.equal(hex(outS), hex(outJ), 'keccak256Spans through a stale addon (per-item fallback) equal');
  tt.throws(() => staleBackend.keccak256Spans(concat, Uint32Array.of(5, 4), outS), { code: 'ERR_CHAIND_CRYPTO_ARG' }, 'fallback checks ends too');
  const fixed = concat.subarray(0, 20 * 100);
  const fN = new Uint8Array(3200);
  const fJ = new Uint8Array(3200);
  native.keccak256Batch(fixed, 20, fN);
  js.keccak256Batch(fixed, 20, fJ);
  tt.equal(hex(fN), hex(fJ), 'keccak256Batch equal over 100 items of 20 bytes');
  // The app hash's LtHash step: keys and values of 0..300 bytes (SHAKE256's 136-byte rate and
  // beyond), added and subtracted into the same lanes by both, from random lanes (every carry).
  const lanesN = randomBytes(2048);
  const lanesJ = Uint8Array.from(lanesN);
  const start = hex(lanesN);
  const pairs = Array.from({ length: 40 }, (_, i) => [randomBytes((i * 53) % 301), randomBytes((i * 29) % 301)] as const);
  for (const [k, v] of pairs) {
    native.ltHashMix(lanesN, k, v, false);
    js.ltHashMix(lanesJ, k, v, false);
  }
  tt.equal(hex(lanesN), hex(lanesJ), 'ltHashMix adds equal over 40 elements');
  for (const [k, v] of pairs.reverse()) {
    native.ltHashMix(lanesN, k, v, true);
    js.ltHashMix(lanesJ, k, v, true);
  }
  tt.equal(hex(lanesN), start, 'native: subtracting every element gives back the lanes');
  tt.equal(hex(lanesJ), start, 'JS: subtracting every element gives back the lanes');
  const { ltHashMix: _mix, ...noMix } = loadNativeAddon();
  const noMixBackend = createNativeBackend(noMix);
  noMixBackend.ltHashMix(lanesJ, pairs[0]![0], pairs[0]![1], false);
  native.ltHashMix(lanesN, pairs[0]![0], pairs[0]![1], false);
  tt.equal(hex(lanesJ), hex(lanesN), 'ltHashMix through an addon without it (node:crypto fallback) equal');
});

t.test('backend selection', async (tt) => {
  tt.equal(parseCryptoSetting(undefined), 'auto');
  tt.equal(parseCryptoSetting(' JS '), 'js');
  tt.equal(parseCryptoSetting('native'), 'native');
  tt.throws(() => parseCryptoSetting('wasm'), { code: 'CRYPTO_BAD_SETTING' });
  tt.equal(selectCryptoBackend('js').name, 'js');
  if (tryNativeBackend()) tt.equal(selectCryptoBackend('native').name, 'native');
  else tt.throws(() => selectCryptoBackend('native'), CryptoBackendError);

  // The process-wide choice is made once, so each case runs in a fresh process.
  // CHAIND_CRYPTO is read by src/config/env.ts (as the CLI does) and handed to the backend.
  const backendUrl = new URL('../../src/crypto/backend.js', import.meta.url).href;
  const envUrl = new URL('../../src/config/env.js', import.meta.url).href;
  const probe =
    `Promise.all([import(${JSON.stringify(backendUrl)}), import(${JSON.stringify(envUrl)})]).then(([m, e]) => { ` +
    `try { m.setCryptoBackendSetting(e.readEnvSwitches(process.env).crypto); console.log(m.getCryptoBackend().name) } catch (err) { console.log(err.code) } })`;
  const run = (env: Record<string, string>): string =>
    execFileSync(process.execPath, ['-e', probe], { env: { ...process.env, ...env }, encoding: 'utf8', cwd: '/' }).trim();
  tt.equal(run({ CHAIND_CRYPTO: 'js' }), 'js', 'CHAIND_CRYPTO=js');
  tt.equal(run({ CHAIND_CRYPTO: 'native', CHAIND_NATIVE_PATH: '/nonexistent/chaind.node' }), 'CRYPTO_NATIVE_UNAVAILABLE', 'CHAIND_CRYPTO=native without addon is fatal');
  tt.equal(run({ CHAIND_CRYPTO: 'auto', CHAIND_NATIVE_PATH: '/nonexistent/chaind.node' }), 'js', 'auto falls back to JS');
  tt.equal(run({ CHAIND_CRYPTO: 'sha3' }), 'CONFIG_INVALID', 'unknown setting');
  tt.equal(run({ CHAIND_CRYPTO: 'js', CHAIND_NATIVE_PATH: '' }), 'js', 'the setting, not the default, decides');
  if (tryNativeBackend()) tt.equal(run({ CHAIND_CRYPTO: '' }), 'native', 'auto picks native (path found from cwd /)');
  tt.ok(fileURLToPath(backendUrl).endsWith('backend.js'));

  // Once chosen, the process-wide backend does not switch.
  const switchProbe =
    `import(${JSON.stringify(backendUrl)}).then((m) => { m.setCryptoBackendSetting('js'); m.getCryptoBackend(); ` +
    `try { m.setCryptoBackendSetting('auto'); console.log('switched') } catch (err) { console.log(err.code) } })`;
  tt.equal(execFileSync(process.execPath, ['-e', switchProbe], { encoding: 'utf8' }).trim(), 'CRYPTO_ALREADY_CHOSEN');
});

t.test("the test run's CHAIND_CRYPTO reaches this process and the pool's threads", async (tt) => {
  // `CHAIND_CRYPTO=js tap …` (make test's second pass) must run everything on JS: the setting is
  // applied at start by test/helpers/crypto-env.ts (package.json tap.node-arg), and a worker thread
  // takes its creator's setting (workers/crypto-setting.ts). Unset: auto, native where it loads.
  const runSetting = parseCryptoSetting(process.env.CHAIND_CRYPTO);
  const expected = runSetting === 'js' || (runSetting === 'auto' && !tryNativeBackend()) ? 'js' : 'native';
  tt.equal(cryptoBackendSetting(), runSetting, `this process runs with CHAIND_CRYPTO=${runSetting}`);
  tt.equal(getCryptoBackend().name, expected, `this process hashes with ${expected}`);

  // The pool's threads, with the setting they inherit and with each explicit one.
  const edKeys = generateKeyPairSync('ed25519');
  const pub = new Uint8Array(edKeys.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
  const msg = Uint8Array.of(1, 2, 3);
  const item = { scheme: 'ed25519' as const, pubKey: pub, msg, sig: new Uint8Array(edSign(null, msg, edKeys.privateKey)) };
  const cases: [string, 'js' | 'native' | undefined][] = [['inherited', undefined], ['js', 'js']];
  if (tryNativeBackend()) cases.push(['native', 'native']);
  for (const [what, crypto] of cases) {
    const seen: CryptoJobTiming['backend'][] = [];
    const pool = new PiscinaCryptoPool({ threads: 1, crypto }, { onJob: (j) => void seen.push(j.backend) });
    try {
      tt.same(await pool.verifySignatures([item]), [true], `pool (${what}): the signature verifies`);
      tt.same(seen, [crypto ?? expected], `pool (${what}): the worker thread used ${crypto ?? expected}`);
    } finally {
      await pool.close();
    }
  }
});
