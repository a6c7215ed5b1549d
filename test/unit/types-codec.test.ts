/**
 * Codec vectors:
 * - cometbft privval/msgs_test.go TestPrivvalVectors: the proto Vote, Proposal, empty Vote, empty
 *   Proposal and ed25519 PublicKey inside the expected privval messages;
 * - real CometBFT v0.38 kvstore blocks: our proto encoding of each block must hash to the
 *   block's part-set hash (one part, so the root is the leaf hash of the whole encoding), and the
 *   encoding of height 10 is 569 bytes (its BlockMeta block_size);
 * - round trips for every type, and malformed input rejected with ProtoDecodeError only.
 */
import { BLOCKS, blockIdFromJSON, headerFromJSON, commitFromJSON } from '../helpers/comet-json.js';
import t from 'tap';
import { createHash } from 'node:crypto';
import {
  decodeBlock,
  decodeBlockId,
  decodeBlockMeta,
  decodeCommit,
  decodeCommitSig,
  decodeHeader,
  decodePart,
  decodePartSetHeader,
  decodeProposal,
  decodePublicKey,
  decodeTimestamp,
  decodeValidator,
  decodeValidatorSet,
  decodeVote,
  emptyCommit,
  encodeBlock,
  encodeBlockId,
  encodeBlockMeta,
  encodeCommit,
  encodeCommitSig,
  encodeHeader,
  encodePart,
  encodePartSetHeader,
  encodeProposal,
  encodePublicKey,
  encodeTimestamp,
  encodeValidator,
  encodeValidatorSet,
  encodeVote,
  timeToSecondsNanos,
} from '../../src/types/codec.js';
import { ProtoDecodeError, ProtoReader, ProtoWriter, readDelimited, delimit } from '../../src/types/proto.js';
import { makePartSet, blockIdOf, PartSet, validatePart } from '../../src/types/partset.js';
import { headerHash } from '../../src/types/hashing.js';
import { parseTime } from '../../src/types/json.js';
import { sha256, tmhashTruncated } from '../../src/crypto/hash.js';
import { BlockIDFlag, SignedMsgType, ZERO_TIME, type Block, type BlockID, type Proposal, type Vote } from '../../src/types/block.js';
import type { Validator } from '../../src/types/validator.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const unhex = (s: string) => Uint8Array.from(Buffer.from(s, 'hex'));
const enc = (s: string) => new TextEncoder().encode(s);
const EMPTY = new Uint8Array(0);


function blockFromJSON(j: any): Block {
  return {
    header: headerFromJSON(j.header),
    data: { txs: j.data.txs.map((x: string) => Uint8Array.from(Buffer.from(x, 'base64'))) },
    evidence: [],
    lastCommit: commitFromJSON(j.last_commit),
  };
}

// Deep comparison that treats Buffer and Uint8Array with equal bytes as equal.
function norm(x: unknown): unknown {
  if (x instanceof Uint8Array) return 'bytes:' + hex(x);
  if (typeof x === 'bigint') return 'bigint:' + x.toString();
  if (Array.isArray(x)) return x.map(norm);
  if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, norm(v)]));
  return x;
}

const exampleBlockId: BlockID = {
  hash: sha256(enc('blockID_hash')),
  partSetHeader: { total: 1000000, hash: sha256(enc('blockID_part_set_header_hash')) },
};
const stamp = parseTime('2019-10-13T16:14:44Z');

t.test('privval vectors: Vote (privval/msgs_test.go)', async (t) => {
  const v: Vote = {
    type: SignedMsgType.Precommit,
    height: 3n,
    round: 2,
    blockId: exampleBlockId,
    timestamp: stamp,
    validatorAddress: tmhashTruncated(enc('validator_address')),
    validatorIndex: 56789,
    signature: EMPTY,
    extension: enc('extension'),
    extensionSignature: EMPTY,
  };
  // "Vote Request" = 1a 81 01 (SignVoteRequest) 0a 7f (vote) || vote proto.
  const want = '080210031802224a0a208b01023386c371778ecb6368573e539afc3cc860ec3a2f614e54fe5652f4fc80122608c0843d122072db3d959635dff1bb567bedaa70573392c5159666a3f8caf11e413aac52207a2a0608f49a8ded0532146af1f4111082efb388211bc72c55bcd61e9ac3d538d5bb034a09657874656e73696f6e';
  t.equal(hex(encodeVote(v)), want);
  t.same(norm(decodeVote(unhex(want))), norm(v));
  // "Vote Response with error": the empty Vote still carries block_id (12 00) and the zero time.
  const empty: Vote = {
    type: 0 as SignedMsgType, height: 0n, round: 0,
    blockId: { hash: EMPTY, partSetHeader: { total: 0, hash: EMPTY } },
    timestamp: ZERO_TIME, validatorAddress: EMPTY, validatorIndex: 0, signature: EMPTY, extension: EMPTY, extensionSignature: EMPTY,
  };
  t.equal(hex(encodeVote(empty)), '220212002a0b088092b8c398feffffff01');
  t.same(norm(decodeVote(unhex('220212002a0b088092b8c398feffffff01'))), norm(empty));
});

t.test('privval vectors: Proposal (privval/msgs_test.go)', async (t) => {
  const p: Proposal = {
    type: 1 as SignedMsgType.Proposal, // the Go test uses SignedMsgType(1)
    height: 3n,
    round: 2,
    polRound: 2,
    blockId: exampleBlockId,
    timestamp: stamp,
    signature: enc("it's a signature"),
  };
  const want = '08011003180220022a4a0a208b01023386c371778ecb6368573e539afc3cc860ec3a2f614e54fe5652f4fc80122608c0843d122072db3d959635dff1bb567bedaa70573392c5159666a3f8caf11e413aac52207a320608f49a8ded053a10697427732061207369676e6174757265';
  t.equal(hex(encodeProposal(p)), want);
  t.same(norm(decodeProposal(unhex(want))), norm(p));
  const empty: Proposal = {
    type: 0 as SignedMsgType.Proposal, height: 0n, round: 0, polRound: 0,
    blockId: { hash: EMPTY, partSetHeader: { total: 0, hash: EMPTY } }, timestamp: ZERO_TIME, signature: EMPTY,
  };
  t.equal(hex(encodeProposal(empty)), '2a021200320b088092b8c398feffffff01');
  // pol_round -1 is a 10-byte varint.
  t.equal(hex(encodeProposal({ ...empty, polRound: -1 })), '20ffffffffffffffffff01' + '2a021200320b088092b8c398feffffff01');
  t.equal(decodeProposal(encodeProposal({ ...empty, polRound: -1 })).polRound, -1);
});

t.test('privval vectors: PublicKey (privval/msgs_test.go)', async (t) => {
  const pk = { type: 'ed25519' as const, bytes: unhex('556a436f1218d30942efe798420f51dc9b6a311b929c578257457d05c5fcf230') };
  t.equal(hex(encodePublicKey(pk)), '0a20556a436f1218d30942efe798420f51dc9b6a311b929c578257457d05c5fcf230');
  t.same(norm(decodePublicKey(encodePublicKey(pk))), norm(pk));
  const sk = { type: 'secp256k1' as const, bytes: new Uint8Array(33).fill(2) };
  t.equal(hex(encodePublicKey(sk)).slice(0, 4), '1221');
  t.same(norm(decodePublicKey(encodePublicKey(sk))), norm(sk));
  t.throws(() => decodePublicKey(EMPTY), ProtoDecodeError, 'a PublicKey without a key type is rejected');
});

t.test('real CometBFT blocks: encoding matches part-set hash and size', async (t) => {
  for (const b of BLOCKS) {
    const block = blockFromJSON(b.block);
    const bytes = encodeBlock(block);
    // One part: the part-set root is the leaf hash of the whole encoding.
    const leaf = createHash('sha256').update(Uint8Array.of(0)).update(bytes).digest('hex').toUpperCase();
    t.equal(leaf, b.block_id.parts.hash, `part-set hash at height ${b.block.header.height}`);
    const { blockId, parts } = blockIdOf(block);
    t.equal(hex(blockId.hash).toUpperCase(), b.block_id.hash);
    t.equal(blockId.partSetHeader.total, 1);
    t.equal(parts.length, 1);
    if (b.block.header.height === '10') t.equal(bytes.length, 569, 'block_size of height 10');
    // Round trip.
    const back = decodeBlock(bytes);
    t.same(norm(back), norm(block), `decode(encode) at height ${b.block.header.height}`);
    t.equal(hex(encodeBlock(back)), hex(bytes));
  }
  // The initial-height block: the empty last commit is `22 04 1a 02 12 00`.
  const b1 = encodeBlock(blockFromJSON(BLOCKS[0]!.block));
  t.equal(hex(b1.subarray(b1.length - 6)), '22041a021200');
});

t.test('round trips', async (t) => {
  const b = blockFromJSON(BLOCKS[4]!.block);
  const h = b.header;
  t.same(norm(decodeHeader(encodeHeader(h))), norm(h));
  t.same(norm(decodeCommit(encodeCommit(b.lastCommit))), norm(b.lastCommit));
  t.same(norm(decodeCommit(encodeCommit(emptyCommit()))), norm(emptyCommit()));
  t.equal(hex(encodeCommit(emptyCommit())), '1a021200');
  const sig = { blockIdFlag: BlockIDFlag.Absent, validatorAddress: EMPTY, timestamp: ZERO_TIME, signature: EMPTY };
  t.equal(hex(encodeCommitSig(sig)), '08011a0b088092b8c398feffffff01', 'absent sig: flag and zero time only');
  t.same(norm(decodeCommitSig(encodeCommitSig(sig))), norm(sig));
  t.same(norm(decodeBlockId(encodeBlockId(h.lastBlockId))), norm(h.lastBlockId));
  t.equal(hex(encodeBlockId({ hash: EMPTY, partSetHeader: { total: 0, hash: EMPTY } })), '1200');
  t.same(norm(decodePartSetHeader(encodePartSetHeader(h.lastBlockId.partSetHeader))), norm(h.lastBlockId.partSetHeader));

  const withTxs: Block = { ...b, data: { txs: [enc('a=1'), EMPTY, enc('c=3')] }, evidence: [Uint8Array.of(0x0a, 0x00)] };
  const back = decodeBlock(encodeBlock(withTxs));
  t.same(norm(back), norm(withTxs), 'empty txs and evidence items survive');

  const meta = { blockId: blockIdFromJSON(BLOCKS[4]!.block_id), blockSize: 569, header: h, numTxs: 0 };
  t.same(norm(decodeBlockMeta(encodeBlockMeta(meta))), norm(meta));

  const val: Validator = {
    address: unhex('2DD9F44FD9067555C322243C3C913BA7B51D2BE0'),
    pubKey: { type: 'ed25519', bytes: Uint8Array.from(Buffer.from('bNNlGls5R25wC3Sd8720F/3+7IZBhXcD22MNFtPk/v0=', 'base64')) },
    votingPower: 10n,
    proposerPriority: -5n,
  };
  t.same(norm(decodeValidator(encodeValidator(val))), norm(val));
  const vs = { validators: [val, { ...val, address: new Uint8Array(20), proposerPriority: 5n }], proposer: val };
  const dec = decodeValidatorSet(encodeValidatorSet(vs));
  t.same(norm(dec), norm(vs));
  t.equal(encodeValidatorSet({ validators: [], proposer: null }).length, 0, 'empty set is an empty message');

  for (const ns of [0n, 1n, -1n, ZERO_TIME, parseTime('2023-05-17T14:12:53.088875124Z'), parseTime('9999-12-31T23:59:59.999999999Z')]) {
    t.equal(decodeTimestamp(encodeTimestamp(ns)), ns, `timestamp ${ns}`);
  }
  t.same(timeToSecondsNanos(-1n), { seconds: -1n, nanos: 999999999 });
  t.equal(hex(encodeTimestamp(0n)), '', 'the epoch is an empty Timestamp');
  t.equal(hex(encodeTimestamp(ZERO_TIME)), '088092b8c398feffffff01');

  const ps = makePartSet(encodeBlock(withTxs), 64);
  for (const part of ps.parts) {
    t.same(norm(decodePart(encodePart(part))), norm(part));
    t.equal(validatePart(part), part.index < ps.parts.length - 1 ? 'part of invalid size' : null, 'non-default part size is flagged except for the last part');
  }
});

t.test('part sets', async (t) => {
  const data = new Uint8Array(65536 * 3 + 100);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7) & 0xff;
  const full = PartSet.fromData(data);
  t.equal(full.total, 4);
  t.ok(full.isComplete());
  const recv = PartSet.fromHeader(full.header());
  t.ok(recv.hasHeader(full.header()));
  for (let i = 0; i < 4; i++) {
    const part = full.getPart(i)!;
    t.equal(validatePart(part), null);
    t.ok(recv.addPart(part));
    t.notOk(recv.addPart(part), 'duplicate');
  }
  t.ok(recv.isComplete());
  t.equal(hex(recv.assemble()), hex(data));
  t.equal(recv.bitArray().toString(), 'BA{4:xxxx}');
  // Wrong proofs (part_set_test.go TestWrongProof).
  const fresh = PartSet.fromHeader(full.header());
  const p0 = full.getPart(0)!;
  const badAunt = { ...p0, proof: { ...p0.proof, aunts: p0.proof.aunts.map((a, i) => (i === 0 ? Uint8Array.from(a).map((x, j) => (j === 0 ? x ^ 1 : x)) : a)) } };
  t.throws(() => fresh.addPart(badAunt), { code: 'PART_SET_INVALID_PROOF' });
  const p1 = full.getPart(1)!;
  const badBytes = { ...p1, bytes: Uint8Array.from(p1.bytes).map((x, j) => (j === 0 ? x ^ 1 : x)) };
  t.throws(() => fresh.addPart(badBytes), { code: 'PART_SET_INVALID_PROOF' });
  const p2 = full.getPart(2)!;
  t.throws(() => fresh.addPart({ ...p2, proof: { ...p2.proof, index: 1 } }), { code: 'PART_SET_INVALID_PROOF' });
  const p3 = full.getPart(3)!;
  t.throws(() => fresh.addPart({ ...p3, proof: { ...p3.proof, total: 3 } }), { code: 'PART_SET_INVALID_PROOF' });
  t.throws(() => fresh.addPart({ ...p3, index: 10000 }), { code: 'PART_SET_UNEXPECTED_INDEX' });
  t.equal(fresh.count, 0);
});

t.test('malformed input is rejected with ProtoDecodeError', async (t) => {
  const cases: [string, () => unknown][] = [
    ['truncated varint', () => decodeVote(Uint8Array.of(0x10, 0x80))],
    ['11-byte varint', () => decodeVote(Uint8Array.of(0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01))],
    ['varint overflowing 64 bits', () => decodeVote(Uint8Array.of(0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02))],
    ['length past the end', () => decodeHeader(Uint8Array.of(0x12, 0x05, 0x61))],
    ['huge length', () => decodeBlock(Uint8Array.of(0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f))],
    ['tag 0', () => decodeCommit(Uint8Array.of(0x00, 0x00))],
    ['group wire type', () => decodeCommit(Uint8Array.of(0x0b))],
    ['wire type 7', () => decodeCommit(Uint8Array.of(0x0f))],
    ['wrong wire type for height', () => decodeCommit(Uint8Array.of(0x0a, 0x00))],
    ['wrong wire type for block_id', () => decodeCommit(Uint8Array.of(0x18, 0x01))],
    ['timestamp nanos >= 1e9', () => decodeTimestamp(Uint8Array.of(0x10, 0x80, 0x94, 0xeb, 0xdc, 0x03))],
    ['timestamp nanos < 0', () => decodeTimestamp(Uint8Array.of(0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01))],
    ['timestamp before year 1', () => decodeTimestamp(unhex('08ff91b8c398feffffff01'))],
    ['timestamp seconds 253402300800 (year 10000)', () => decodeTimestamp(unhex('088083d1ffaf07'))],
    ['truncated fixed64', () => decodeVote(Uint8Array.of(0x59, 1, 2, 3))],
    ['block without last_commit', () => decodeBlock(Uint8Array.of(0x0a, 0x00))],
    ['validator without pub_key', () => decodeValidator(Uint8Array.of(0x18, 0x0a))],
    ['delimited past the end', () => readDelimited(Uint8Array.of(0x05, 1, 2))],
    ['delimited over the limit', () => readDelimited(Uint8Array.of(0x05, 1, 2, 3, 4, 5), 4)],
  ];
  for (const [name, fn] of cases) t.throws(fn, ProtoDecodeError, name);
  // Unknown fields of every wire type are skipped.
  const w = new ProtoWriter();
  w.tag(99, 0); w.uvarint(5);
  w.tag(98, 1); w.sfixed64(7n);
  w.tag(97, 2); w.lenBytes(enc('x'));
  w.tag(96, 5); w.raw(Uint8Array.of(1, 2, 3, 4));
  w.int64Field(1, 42n);
  t.equal(decodeCommit(w.finish()).height, 42n);
  const d = readDelimited(delimit(enc('hello')));
  t.equal(Buffer.from(d.msg).toString(), 'hello');
  t.equal(d.size, 6);
});

t.test('fuzz: truncations, bit flips and random bytes never throw anything but ProtoDecodeError', async (t) => {
  let seed = 12345;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const block = blockFromJSON(BLOCKS[4]!.block);
  const samples: [string, Uint8Array, (b: Uint8Array) => unknown][] = [
    ['block', encodeBlock(block), decodeBlock],
    ['header', encodeHeader(block.header), decodeHeader],
    ['commit', encodeCommit(block.lastCommit), decodeCommit],
    ['vote', unhex('080210031802224a0a208b01023386c371778ecb6368573e539afc3cc860ec3a2f614e54fe5652f4fc80122608c0843d122072db3d959635dff1bb567bedaa70573392c5159666a3f8caf11e413aac52207a2a0608f49a8ded0532146af1f4111082efb388211bc72c55bcd61e9ac3d538d5bb034a09657874656e73696f6e'), decodeVote],
    ['proposal', encodeProposal({ type: SignedMsgType.Proposal, height: 5n, round: 1, polRound: -1, blockId: block.header.lastBlockId, timestamp: 1n, signature: new Uint8Array(64) }), decodeProposal],
    ['part', encodePart(makePartSet(encodeBlock(block), 100).parts[2]!), decodePart],
  ];
  let unexpected = 0;
  let runs = 0;
  const tryDecode = (fn: (b: Uint8Array) => unknown, b: Uint8Array) => {
    runs++;
    try {
      fn(b);
    } catch (e) {
      if (!(e instanceof ProtoDecodeError)) {
        unexpected++;
        t.fail(`unexpected ${(e as Error).name}: ${(e as Error).message}`);
      }
    }
  };
  for (const [, bytes, fn] of samples) {
    for (let n = 0; n < bytes.length; n++) tryDecode(fn, bytes.subarray(0, n));
    for (let i = 0; i < 400; i++) {
      const m = Uint8Array.from(bytes);
      const k = 1 + Math.floor(rnd() * 3);
      for (let j = 0; j < k; j++) m[Math.floor(rnd() * m.length)] = Math.floor(rnd() * 256);
      tryDecode(fn, m);
    }
    for (let i = 0; i < 300; i++) {
      const r = new Uint8Array(Math.floor(rnd() * 64));
      for (let j = 0; j < r.length; j++) r[j] = Math.floor(rnd() * 256);
      tryDecode(fn, r);
    }
  }
  t.equal(unexpected, 0, `${runs} decodes, only ProtoDecodeError thrown`);
  // Header hash of the decoded block is stable.
  t.equal(hex(headerHash(decodeBlock(encodeBlock(block)).header)), hex(headerHash(block.header)));
});

t.test('ProtoReader primitives', async (t) => {
  const w = new ProtoWriter(1); // forces growth
  w.uvarint(300);
  w.uvarint64(-1n);
  w.int32(-2);
  w.uvarint(2 ** 53 - 1);
  w.sfixed64(-5n);
  const r = new ProtoReader(w.finish());
  t.equal(r.uvarint(), 300);
  t.equal(r.int64(), -1n);
  t.equal(r.int32(), -2);
  t.equal(r.uvarint(), 2 ** 53 - 1);
  t.equal(r.sfixed64(), -5n);
  t.ok(r.eof());
  // Embedded messages longer than 127 bytes widen their length prefix in place.
  const w2 = new ProtoWriter(4);
  const m = w2.fork(1);
  w2.raw(new Uint8Array(300).fill(7));
  w2.ldelim(m);
  w2.int64Field(2, 9n);
  const out = w2.finish();
  t.equal(hex(out.subarray(0, 3)), '0aac02');
  t.equal(out.length, 3 + 300 + 2);
  const r2 = new ProtoReader(out);
  t.equal(r2.tag(), 10);
  t.equal(r2.bytes().length, 300);
  t.equal(r2.tag(), 16);
  t.equal(r2.int64(), 9n);
});

t.test('ProtoWriter.stringField: the UTF-8 bytes behind a length, whichever path writes them', async (t) => {
  const cases = ['a', 'chain1qqqsyqcyq5rqwzqfpg9scrgwpugpzysn8fgq4s', '/chain.crypto.secp256k1.PubKey', 'x'.repeat(127), 'y'.repeat(128), 'z'.repeat(300), 'é', `${'a'.repeat(100)}é`, `é${'a'.repeat(100)}`, `${'b'.repeat(126)}€`, '😀 ascii after', '\u007f\u0080', '\u0000'];
  for (const s of cases) {
    const w = new ProtoWriter(4); // small: the fast path must grow the buffer itself
    w.uint32Field(1, 7);
    w.stringField(2, s);
    w.uint32Field(3, 9);
    const u = new TextEncoder().encode(s);
    const want = new ProtoWriter();
    want.uint32Field(1, 7);
    want.tag(2, 2);
    want.lenBytes(u);
    want.uint32Field(3, 9);
    t.same(Buffer.from(w.finish()).toString('hex'), Buffer.from(want.finish()).toString('hex'), `${JSON.stringify(s.slice(0, 20))} (${s.length} chars)`);
  }
  const empty = new ProtoWriter();
  empty.stringField(1, '');
  t.equal(empty.finish().length, 0, 'an empty string is left out');
});
