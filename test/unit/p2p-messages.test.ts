/**
 * Reactor message codecs (src/p2p/messages):
 * - CometBFT's own byte vectors: consensus/msgs_test.go TestConsMsgsVectors (every consensus
 *   message), blocksync/msgs_test.go TestBlocksyncMessageVectors, mempool/reactor_test.go
 *   TestMempoolVectors, p2p/pex/pex_reactor_test.go TestPexVectors;
 * - vectors built by hand from the .proto field numbers (ExtendedCommit, negative rounds,
 *   EvidenceList, several txs, unpacked bit array elems);
 * - round trips of every message, malformed input rejected with ProtoDecodeError;
 * - block parts: the real CometBFT v0.38 blocks of the kvstore fixture travel as BlockPart
 *   messages and reassemble to the fixture's part-set hash; a > 64 KiB block splits into 64 KiB
 *   parts that each verify against the PartSetHeader (root checked against an independent
 *   RFC 6962 computation here) and reassemble; a tampered part, proof or index fails.
 */
import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import { BLOCKS, commitFromJSON, headerFromJSON, unhex } from '../helpers/comet-json.js';
import {
  consensusChannelOf,
  decodeBlocksyncMessage,
  decodeConsensusMessage,
  decodeEvidenceMessage,
  decodeMempoolMessage,
  decodePexMessage,
  encodeBlockResponseRaw,
  encodeBlocksyncMessage,
  encodeConsensusMessage,
  encodeEvidenceMessage,
  encodeMempoolMessage,
  encodePexMessage,
  validateBlocksyncMessage,
  validateConsensusMessage,
  validateNewRoundStepHeight,
  type ConsensusMessage,
} from '../../src/p2p/messages/index.js';
import { BitArray } from '../../src/types/bitarray.js';
import { BLOCK_PART_SIZE_BYTES, BlockIDFlag, SignedMsgType, type Block, type BlockID, type Proposal, type Vote } from '../../src/types/block.js';
import { decodeBitArray, decodeBlock, decodeExtendedCommit, encodeBitArray, encodeBlock, encodeExtendedCommit, extendedCommitToCommit, type ExtendedCommit, type Part } from '../../src/types/codec.js';
import { PartSet, PartSetError, makePartSet, validatePart } from '../../src/types/partset.js';
import { ProtoDecodeError } from '../../src/types/proto.js';
import { parseTime } from '../../src/types/json.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const enc = (s: string) => new TextEncoder().encode(s);
const EMPTY = new Uint8Array(0);

function norm(x: unknown): unknown {
  if (x instanceof BitArray) return 'bits:' + x.size + ':' + x.elems().join(',');
  if (x instanceof Uint8Array) return 'bytes:' + hex(x);
  if (typeof x === 'bigint') return 'bigint:' + x.toString();
  if (Array.isArray(x)) return x.map(norm);
  if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, norm(v)]));
  return x;
}

// ---------------------------------------------------------------------------------------------
// The fixtures of cometbft consensus/msgs_test.go TestConsMsgsVectors.

const MARKS = enc('add_more_exclamation_marks_code-');
const psh = { total: 1, hash: MARKS };
const bi: BlockID = { hash: MARKS, partSetHeader: psh };
const date = parseTime('2018-08-30T12:00:00Z');
const oneBit = new BitArray(1);
const part: Part = { index: 1, bytes: enc('test'), proof: { total: 1, index: 1, leafHash: MARKS, aunts: [] } };
const proposal: Proposal = { type: SignedMsgType.Proposal, height: 1n, round: 1, polRound: 1, blockId: bi, timestamp: date, signature: enc('add_more_exclamation') };
const vote: Vote = {
  type: SignedMsgType.Precommit,
  height: 1n,
  round: 0,
  blockId: bi,
  timestamp: date,
  validatorAddress: enc('add_more_exclamation'),
  validatorIndex: 1,
  signature: EMPTY,
  extension: EMPTY,
  extensionSignature: EMPTY,
};
const MAX_I64 = 2n ** 63n - 1n;
const MAX_I32 = 2 ** 31 - 1;

const CONSENSUS_VECTORS: Array<[string, ConsensusMessage, string]> = [
  ['NewRoundStep', { type: 'NewRoundStep', height: 1n, round: 1, step: 1, secondsSinceStartTime: 1n, lastCommitRound: 1 }, '0a0a08011001180120012801'],
  [
    'NewRoundStep Max',
    { type: 'NewRoundStep', height: MAX_I64, round: MAX_I32, step: 2 ** 32 - 1, secondsSinceStartTime: MAX_I64, lastCommitRound: MAX_I32 },
    '0a2608ffffffffffffffff7f10ffffffff0718ffffffff0f20ffffffffffffffff7f28ffffffff07',
  ],
  [
    'NewValidBlock',
    { type: 'NewValidBlock', height: 1n, round: 1, blockPartSetHeader: psh, blockParts: oneBit, isCommit: false },
    '1231080110011a24080112206164645f6d6f72655f6578636c616d6174696f6e5f6d61726b735f636f64652d22050801120100',
  ],
  [
    'Proposal',
    { type: 'Proposal', proposal },
    '1a720a7008201001180120012a480a206164645f6d6f72655f6578636c616d6174696f6e5f6d61726b735f636f64652d1224080112206164645f6d6f72655f6578636c616d6174696f6e5f6d61726b735f636f64652d320608c0b89fdc053a146164645f6d6f72655f6578636c616d6174696f6e',
  ],
  ['ProposalPol', { type: 'ProposalPOL', height: 1n, proposalPolRound: 1, proposalPol: new BitArray(0) }, '2206080110011a00'],
  [
    'BlockPart',
    { type: 'BlockPart', height: 1n, round: 1, part },
    '2a36080110011a3008011204746573741a26080110011a206164645f6d6f72655f6578636c616d6174696f6e5f6d61726b735f636f64652d',
  ],
  [
    'Vote',
    { type: 'Vote', vote },
    '32700a6e0802100122480a206164645f6d6f72655f6578636c616d6174696f6e5f6d61726b735f636f64652d1224080112206164645f6d6f72655f6578636c616d6174696f6e5f6d61726b735f636f64652d2a0608c0b89fdc0532146164645f6d6f72655f6578636c616d6174696f6e3801',
  ],
  ['HasVote', { type: 'HasVote', height: 1n, round: 1, voteType: SignedMsgType.Prevote, index: 1 }, '3a080801100118012001'],
  [
    'HasVote Max',
    { type: 'HasVote', height: MAX_I64, round: MAX_I32, voteType: SignedMsgType.Prevote, index: MAX_I32 },
    '3a1808ffffffffffffffff7f10ffffffff07180120ffffffff07',
  ],
  [
    'VoteSetMaj23',
    { type: 'VoteSetMaj23', height: 1n, round: 1, voteType: SignedMsgType.Prevote, blockId: bi },
    '425008011001180122480a206164645f6d6f72655f6578636c616d6174696f6e5f6d61726b735f636f64652d1224080112206164645f6d6f72655f6578636c616d6174696f6e5f6d61726b735f636f64652d',
  ],
  [
    'VoteSetBits',
    { type: 'VoteSetBits', height: 1n, round: 1, voteType: SignedMsgType.Prevote, blockId: bi, votes: oneBit },
    '4a5708011001180122480a206164645f6d6f72655f6578636c616d6174696f6e5f6d61726b735f636f64652d1224080112206164645f6d6f72655f6578636c616d6174696f6e5f6d61726b735f636f64652d2a050801120100',
  ],
];

t.test('consensus messages: CometBFT TestConsMsgsVectors bytes, both ways', async (t) => {
  for (const [name, msg, want] of CONSENSUS_VECTORS) {
    t.equal(hex(encodeConsensusMessage(msg)), want, `${name} encodes to CometBFT's bytes`);
    t.same(norm(decodeConsensusMessage(unhex(want))), norm(msg), `${name} decodes from CometBFT's bytes`);
  }
  t.equal(consensusChannelOf(CONSENSUS_VECTORS[0]![1]), 0x20);
  t.equal(consensusChannelOf({ type: 'BlockPart', height: 1n, round: 0, part }), 0x21);
  t.equal(consensusChannelOf({ type: 'Vote', vote }), 0x22);
  t.equal(consensusChannelOf(CONSENSUS_VECTORS[10]![1]), 0x23);
});

t.test('consensus messages: hand-built vectors and round trips', async (t) => {
  // NewValidBlock with nil block_parts (size 0) omits field 4; is_commit true is `28 01`;
  // the part-set header is always written (non-nullable), here empty: `1a 00`.
  const nvb: ConsensusMessage = { type: 'NewValidBlock', height: 5n, round: 0, blockPartSetHeader: { total: 0, hash: EMPTY }, blockParts: new BitArray(0), isCommit: true };
  t.equal(hex(encodeConsensusMessage(nvb)), '12' + '06' + '0805' + '1a00' + '2801');
  t.same(norm(decodeConsensusMessage(encodeConsensusMessage(nvb))), norm(nvb));

  // round -1 and last_commit_round -1 are 10-byte varints (int32 sign-extended).
  const nrs: ConsensusMessage = { type: 'NewRoundStep', height: 2n, round: -1, step: 8, secondsSinceStartTime: 0n, lastCommitRound: -1 };
  t.equal(hex(encodeConsensusMessage(nrs)), '0a' + '1a' + '0802' + '10ffffffffffffffffff01' + '1808' + '28ffffffffffffffffff01');
  t.same(norm(decodeConsensusMessage(encodeConsensusMessage(nrs))), norm(nrs));

  // A 70-bit array: two elems, bits 0, 64 and 69 set.
  const ba = BitArray.fromFn(70, (i) => i === 0 || i === 64 || i === 69);
  t.equal(hex(encodeBitArray(ba)), '0846' + '1202' + '01' + '21', 'bits=70 then packed elems [1, 33]');
  const pol: ConsensusMessage = { type: 'ProposalPOL', height: 9n, proposalPolRound: 2, proposalPol: ba };
  t.same(norm(decodeConsensusMessage(encodeConsensusMessage(pol))), norm(pol));
  // Unpacked elems (each its own `10 <varint>`) decode the same.
  t.ok(decodeBitArray(unhex('0846' + '1001' + '1021')).equals(ba), 'unpacked elems accepted');
  t.throws(() => decodeBitArray(unhex('0846' + '1001')), ProtoDecodeError, 'too few elems for the size');
  t.throws(() => decodeBitArray(unhex('0801' + '1001' + '1001')), ProtoDecodeError, 'too many elems');
  t.throws(() => decodeBitArray(unhex('08ffffffffffffffffff01')), ProtoDecodeError, 'negative size');

  for (const [, msg] of CONSENSUS_VECTORS) t.same(norm(decodeConsensusMessage(encodeConsensusMessage(msg))), norm(msg));
  const withExt: ConsensusMessage = { type: 'Vote', vote: { ...vote, extension: enc('ext'), extensionSignature: new Uint8Array(64).fill(7), signature: new Uint8Array(64).fill(9) } };
  t.same(norm(decodeConsensusMessage(encodeConsensusMessage(withExt))), norm(withExt));
});

t.test('consensus messages: malformed input', async (t) => {
  const bad: Array<[string, string]> = [
    ['empty message', ''],
    ['only an unknown member (HasProposalBlockPart = 10, after v0.38)', '5206080110011801'],
    ['Vote without a vote', '3200'],
    ['truncated', '0a0a080110011801200128'],
    ['member with a varint wire type', '0801'],
    ['height with a length wire type', '0a020a00'],
    ['bit array elems missing', '12080801100122020801'],
  ];
  for (const [what, h] of bad) t.throws(() => decodeConsensusMessage(unhex(h)), ProtoDecodeError, what);
  // Several members: the last wins, as in any proto decoder.
  const two = unhex('3a080801100118012001' + '0a0a08011001180120012801');
  t.equal(decodeConsensusMessage(two).type, 'NewRoundStep');
});

// ---------------------------------------------------------------------------------------------

t.test('mempool, evidence, PEX messages', async (t) => {
  // cometbft mempool/reactor_test.go TestMempoolVectors.
  t.equal(hex(encodeMempoolMessage([Uint8Array.of(123)])), '0a030a017b');
  t.equal(hex(encodeMempoolMessage([enc('proto encoding in mempool')])), '0a1b0a1970726f746f20656e636f64696e6720696e206d656d706f6f6c');
  t.same(decodeMempoolMessage(unhex('0a030a017b')).map(hex), ['7b']);
  // Several txs, one empty: every element written (repeated bytes).
  const txs = [enc('a'), EMPTY, enc('bc')];
  t.equal(hex(encodeMempoolMessage(txs)), '0a09' + '0a0161' + '0a00' + '0a026263');
  t.same(decodeMempoolMessage(encodeMempoolMessage(txs)).map(hex), txs.map(hex));
  t.same(decodeMempoolMessage(unhex('0a00')), [], 'an empty Txs decodes to no txs (the reactor refuses it)');
  t.throws(() => decodeMempoolMessage(EMPTY), ProtoDecodeError);

  // Evidence: a bare EvidenceList{evidence=1}, items written even when empty.
  const items = [unhex('0a0408011002'), EMPTY];
  t.equal(hex(encodeEvidenceMessage(items)), '0a060a0408011002' + '0a00');
  t.same(decodeEvidenceMessage(encodeEvidenceMessage(items)).map(hex), items.map(hex));
  t.same(decodeEvidenceMessage(EMPTY), []);

  // cometbft p2p/pex/pex_reactor_test.go TestPexVectors.
  t.equal(hex(encodePexMessage({ type: 'PexRequest' })), '0a00');
  const addrs = { type: 'PexAddrs' as const, addrs: [{ id: '1', ip: '127.0.0.1', port: 9090 }] };
  t.equal(hex(encodePexMessage(addrs)), '12130a110a013112093132372e302e302e31188247');
  t.same(decodePexMessage(unhex('12130a110a013112093132372e302e302e31188247')), addrs);
  t.same(decodePexMessage(unhex('0a00')), { type: 'PexRequest' });
  const many = { type: 'PexAddrs' as const, addrs: [{ id: 'ab'.repeat(20), ip: '::1', port: 26656 }, { id: 'cd'.repeat(20), ip: '10.0.0.1', port: 0 }] };
  t.same(decodePexMessage(encodePexMessage(many)), many);
  t.throws(() => decodePexMessage(unhex('1a00')), ProtoDecodeError, 'unknown member only');
});

// ---------------------------------------------------------------------------------------------

function blockFromJSON(j: any): Block {
  return {
    header: headerFromJSON(j.header),
    data: { txs: j.data.txs.map((x: string) => Uint8Array.from(Buffer.from(x, 'base64'))) },
    evidence: [],
    lastCommit: commitFromJSON(j.last_commit),
  };
}

t.test('blocksync messages', async (t) => {
  // cometbft blocksync/msgs_test.go TestBlocksyncMessageVectors.
  const vectors: Array<[Parameters<typeof encodeBlocksyncMessage>[0], string]> = [
    [{ type: 'BlockRequest', height: 1n }, '0a020801'],
    [{ type: 'BlockRequest', height: MAX_I64 }, '0a0a08ffffffffffffffff7f'],
    [{ type: 'NoBlockResponse', height: 1n }, '12020801'],
    [{ type: 'NoBlockResponse', height: MAX_I64 }, '120a08ffffffffffffffff7f'],
    [{ type: 'StatusRequest' }, '2200'],
    [{ type: 'StatusResponse', height: 1n, base: 2n }, '2a0408011002'],
    [{ type: 'StatusResponse', height: MAX_I64, base: MAX_I64 }, '2a1408ffffffffffffffff7f10ffffffffffffffff7f'],
  ];
  for (const [msg, want] of vectors) {
    t.equal(hex(encodeBlocksyncMessage(msg)), want, `${msg.type} encodes to CometBFT's bytes`);
    t.same(norm(decodeBlocksyncMessage(unhex(want))), norm(msg), `${msg.type} decodes`);
  }
  // The BlockResponse vector's block has a nil last_commit, which chaind never makes (and refuses
  // to decode, as a block that cannot be hashed); its wrapper is checked with the raw block bytes.
  const goBlock = '0a5b0a02080b1803220b088092b8c398feffffff012a0212003a20c4da88e876062aa1543400d50d0eaa0dac88096057949cfb7bca7f3a48c04bf96a20e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855120d0a0b48656c6c6f20576f726c641a00';
  t.equal(hex(encodeBlockResponseRaw(unhex(goBlock))), '1a700a6e' + goBlock);
  t.throws(() => decodeBlocksyncMessage(unhex('1a700a6e' + goBlock)), ProtoDecodeError, 'a block without last_commit is refused');
  t.throws(() => decodeBlocksyncMessage(unhex('1a00')), ProtoDecodeError, 'BlockResponse without a block');

  // Real v0.38 blocks: a BlockResponse carries exactly the block's proto bytes, which hash to
  // the fixture's part-set root.
  for (const b of BLOCKS) {
    const block = blockFromJSON(b.block);
    const bytes = encodeBlock(block);
    const msg = encodeBlocksyncMessage({ type: 'BlockResponse', block, extCommit: null });
    t.equal(hex(msg), hex(encodeBlockResponseRaw(bytes)), 'typed and raw encodings agree');
    const back = decodeBlocksyncMessage(msg);
    if (back.type !== 'BlockResponse') throw new Error('want BlockResponse');
    t.equal(hex(back.blockBytes), hex(bytes));
    t.same(norm(back.block), norm(block));
    t.equal(back.extCommit, null);
    t.equal(hex(PartSet.fromData(back.blockBytes).hash).toUpperCase(), b.block_id.parts.hash, `height ${b.block.header.height}: part-set hash`);
  }

  // ExtendedCommit, by hand from the field numbers: height 1, round 2, block_id 3 (always),
  // extended_signatures 4 {block_id_flag 1, validator_address 2, timestamp 3 (always), signature 4,
  // extension 5, extension_signature 6}.
  const ec: ExtendedCommit = {
    height: 10n,
    round: 1,
    blockId: bi,
    extendedSignatures: [
      { blockIdFlag: BlockIDFlag.Commit, validatorAddress: new Uint8Array(20).fill(0xaa), timestamp: date, signature: new Uint8Array(64).fill(1), extension: enc('x'), extensionSignature: new Uint8Array(64).fill(2) },
      { blockIdFlag: BlockIDFlag.Absent, validatorAddress: EMPTY, timestamp: parseTime('0001-01-01T00:00:00Z'), signature: EMPTY, extension: EMPTY, extensionSignature: EMPTY },
    ],
  };
  const bid = '0a20' + hex(MARKS) + '1224' + '0801' + '1220' + hex(MARKS);
  const sig0 = '0802' + '1214' + 'aa'.repeat(20) + '1a06' + '08c0b89fdc05' + '2240' + '01'.repeat(64) + '2a0178' + '3240' + '02'.repeat(64);
  const sig1 = '0801' + '1a0b088092b8c398feffffff01';
  const want = '080a' + '1001' + '1a48' + bid + '22' + 'a701' + sig0 + '22' + '0f' + sig1;
  t.equal(sig0.length / 2, 167, 'a 167-byte signature entry: length varint a7 01');
  t.equal(sig1.length / 2, 15);
  t.equal(hex(encodeExtendedCommit(ec)), want);
  t.same(norm(decodeExtendedCommit(unhex(want))), norm(ec));
  t.same(norm(extendedCommitToCommit(ec).signatures[0]), norm({ blockIdFlag: 2, validatorAddress: ec.extendedSignatures[0]!.validatorAddress, timestamp: date, signature: ec.extendedSignatures[0]!.signature }));

  const block = blockFromJSON(BLOCKS[4]!.block);
  const withEc = decodeBlocksyncMessage(encodeBlocksyncMessage({ type: 'BlockResponse', block, extCommit: ec }));
  if (withEc.type !== 'BlockResponse') throw new Error('want BlockResponse');
  t.same(norm(withEc.extCommit), norm(ec), 'ext_commit travels with the block');
  t.throws(() => decodeBlocksyncMessage(EMPTY), ProtoDecodeError);
});

// ---------------------------------------------------------------------------------------------
// Block parts

const sha = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
/** RFC 6962 root, written here independently of src/crypto/merkle.ts. */
function rfc6962Root(items: Uint8Array[]): Uint8Array {
  if (items.length === 1) return sha(Uint8Array.of(0), items[0]!);
  let k = 1;
  while (k * 2 < items.length) k *= 2;
  return sha(Uint8Array.of(1), rfc6962Root(items.slice(0, k)), rfc6962Root(items.slice(k)));
}

/** Every part through a BlockPart message, into a PartSet made from the header alone. */
function receive(t: Test, header: { total: number; hash: Uint8Array }, parts: Part[]): PartSet {
  const ps = PartSet.fromHeader(header);
  for (const p of parts) {
    const m = decodeConsensusMessage(encodeConsensusMessage({ type: 'BlockPart', height: 10n, round: 0, part: p }));
    if (m.type !== 'BlockPart') throw new Error('want BlockPart');
    t.equal(validatePart(m.part), null, `part ${p.index} passes ValidateBasic`);
    t.ok(ps.addPart(m.part), `part ${p.index} verifies against the header`);
  }
  return ps;
}

t.test('block parts: real blocks reassemble to the fixture part-set hash', async (t) => {
  for (const b of BLOCKS) {
    const block = blockFromJSON(b.block);
    const { header, parts } = makePartSet(encodeBlock(block));
    const fixture = { total: b.block_id.parts.total, hash: unhex(b.block_id.parts.hash) };
    t.equal(hex(header.hash).toUpperCase(), b.block_id.parts.hash);
    const ps = receive(t, fixture, parts);
    t.ok(ps.isComplete());
    t.same(norm(decodeBlock(ps.assemble())), norm(block), `height ${b.block.header.height} reassembled`);
  }
});

t.test('block parts: a > 64 KiB block', async (t) => {
  const block = blockFromJSON(BLOCKS[4]!.block);
  // Three 60 000-byte txs: ~180 KB, so three 64 KiB parts (the last shorter).
  block.data.txs = [0, 1, 2].map((i) => new Uint8Array(60_000).fill(i + 1));
  const bytes = encodeBlock(block);
  t.ok(bytes.length > 2 * BLOCK_PART_SIZE_BYTES && bytes.length <= 3 * BLOCK_PART_SIZE_BYTES, `${bytes.length} bytes`);
  const { header, parts } = makePartSet(bytes);
  t.equal(header.total, 3);
  t.same(parts.map((p) => p.bytes.length), [65536, 65536, bytes.length - 2 * 65536]);
  const chunks = parts.map((p) => p.bytes);
  t.equal(hex(header.hash), hex(rfc6962Root(chunks)), 'root matches an independent RFC 6962 computation');
  t.equal(hex(Buffer.concat(chunks)), hex(bytes), 'parts are the block bytes cut at 64 KiB');

  // In reverse order, through the wire: each verifies, the whole reassembles.
  const ps = receive(t, header, [...parts].reverse());
  t.ok(ps.isComplete());
  t.equal(ps.byteSize, bytes.length);
  t.equal(hex(ps.assemble()), hex(bytes));
  t.same(norm(decodeBlock(ps.assemble())), norm(block));
  t.equal(ps.addPart(parts[0]!), false, 'a duplicate is ignored');

  // Tampering.
  const wire = (p: Part) => {
    const m = decodeConsensusMessage(encodeConsensusMessage({ type: 'BlockPart', height: 10n, round: 0, part: p }));
    return (m as { part: Part }).part;
  };
  const flip = (b: Uint8Array, i: number) => {
    const c = b.slice();
    c[i]! ^= 1;
    return c;
  };
  const cases: Array<[string, Part]> = [
    ['a flipped data byte', { ...parts[1]!, bytes: flip(parts[1]!.bytes, 1000) }],
    ['a flipped aunt byte', { ...parts[1]!, proof: { ...parts[1]!.proof, aunts: [flip(parts[1]!.proof.aunts[0]!, 0), ...parts[1]!.proof.aunts.slice(1)] } }],
    ['part 1 claiming index 2', { ...parts[1]!, index: 2 }],
    ['part 2 with part 1 proof', { ...parts[2]!, proof: parts[1]!.proof }],
  ];
  for (const [what, p] of cases) {
    const fresh = PartSet.fromHeader(header);
    t.throws(() => fresh.addPart(wire(p)), PartSetError, `${what} is refused`);
    t.equal(fresh.count, 0);
  }
  const other = PartSet.fromHeader({ total: 3, hash: sha(enc('another block')) });
  t.throws(() => other.addPart(parts[0]!), /invalid proof/, 'a part of another block is refused');
  t.throws(() => PartSet.fromHeader(header).addPart({ ...parts[0]!, index: 3 }), /unexpected index/);
});

// ---------------------------------------------------------------------------------------------

t.test('ValidateBasic of the consensus and blocksync messages', async (t) => {
  const h32 = new Uint8Array(32).fill(3);
  const fullId: BlockID = { hash: h32, partSetHeader: { total: 2, hash: h32 } };
  const goodProposal: Proposal = { ...proposal, blockId: fullId, polRound: -1, signature: new Uint8Array(64).fill(1) };
  const goodVote: Vote = { ...vote, blockId: fullId, validatorAddress: new Uint8Array(20).fill(1), signature: new Uint8Array(64).fill(1) };
  const ok: ConsensusMessage[] = [
    { type: 'NewRoundStep', height: 1n, round: 0, step: 1, secondsSinceStartTime: -5n, lastCommitRound: -1 },
    { type: 'NewValidBlock', height: 1n, round: 0, blockPartSetHeader: { total: 2, hash: h32 }, blockParts: new BitArray(2), isCommit: true },
    { type: 'Proposal', proposal: goodProposal },
    { type: 'ProposalPOL', height: 1n, proposalPolRound: 0, proposalPol: new BitArray(4) },
    { type: 'BlockPart', height: 1n, round: 0, part: makePartSet(new Uint8Array(100)).parts[0]! },
    { type: 'Vote', vote: goodVote },
    { type: 'HasVote', height: 1n, round: 0, voteType: SignedMsgType.Precommit, index: 3 },
    { type: 'VoteSetMaj23', height: 1n, round: 0, voteType: SignedMsgType.Prevote, blockId: fullId },
    { type: 'VoteSetBits', height: 1n, round: 0, voteType: SignedMsgType.Prevote, blockId: fullId, votes: new BitArray(4) },
  ];
  for (const m of ok) t.equal(validateConsensusMessage(m), null, `${m.type} passes`);
  const [nrs, nvb, prop, pol, bp, v, hv, maj, bits] = ok as [any, any, any, any, any, any, any, any, any];
  const bad: Array<[ConsensusMessage, RegExp]> = [
    [{ ...nrs, height: -1n }, /^negative Height$/],
    [{ ...nrs, round: -1 }, /^negative Round$/],
    [{ ...nrs, step: 0 }, /^invalid Step$/],
    [{ ...nrs, step: 9 }, /^invalid Step$/],
    [{ ...nrs, lastCommitRound: -2 }, /LastCommitRound/],
    [{ ...nvb, blockParts: new BitArray(0) }, /^empty blockParts$/],
    [{ ...nvb, blockParts: new BitArray(3) }, /not equal to BlockPartSetHeader.Total 2/],
    [{ ...nvb, blockPartSetHeader: { total: 2, hash: new Uint8Array(5) } }, /^wrong BlockPartSetHeader: wrong Hash/],
    [{ ...nvb, blockPartSetHeader: { total: 1602, hash: h32 }, blockParts: new BitArray(1602) }, /too big: 1602, max: 1601/],
    [{ type: 'Proposal', proposal: { ...goodProposal, type: SignedMsgType.Prevote as SignedMsgType.Proposal } }, /^invalid Type$/],
    [{ type: 'Proposal', proposal: { ...goodProposal, polRound: -2 } }, /POLRound/],
    [{ type: 'Proposal', proposal: { ...goodProposal, blockId: { hash: EMPTY, partSetHeader: { total: 0, hash: EMPTY } } } }, /complete, non-empty BlockID/],
    [{ type: 'Proposal', proposal: { ...goodProposal, signature: EMPTY } }, /signature is missing/],
    [{ ...pol, proposalPolRound: -1 }, /^negative ProposalPOLRound$/],
    [{ ...pol, proposalPol: new BitArray(0) }, /^empty ProposalPOL bit array$/],
    [{ ...pol, proposalPol: new BitArray(10_001) }, /too big/],
    [{ ...bp, part: { ...bp.part, index: 1 } }, /^wrong Part: /],
    [{ type: 'Vote', vote: { ...goodVote, signature: EMPTY } }, /signature is missing/],
    [{ ...hv, voteType: SignedMsgType.Proposal }, /^invalid Type$/],
    [{ ...hv, index: -1 }, /^negative Index$/],
    [{ ...maj, blockId: { hash: new Uint8Array(31), partSetHeader: { total: 0, hash: EMPTY } } }, /^wrong BlockID: wrong Hash/],
    [{ ...bits, votes: new BitArray(10_001) }, /votes bit array is too big/],
    [{ ...bits, round: -1 }, /^negative Round$/],
  ];
  for (const [m, re] of bad) t.match(validateConsensusMessage(m), re, `${m.type}: ${re}`);

  t.equal(validateNewRoundStepHeight({ ...nrs, height: 1n, lastCommitRound: -1 }, 1n), null);
  t.match(validateNewRoundStepHeight({ ...nrs, height: 1n, lastCommitRound: 0 }, 1n), /must be -1 for initial height 1/);
  t.match(validateNewRoundStepHeight({ ...nrs, height: 2n, lastCommitRound: -1 }, 1n), /only be negative for initial height/);
  t.match(validateNewRoundStepHeight({ ...nrs, height: 4n, lastCommitRound: -1 }, 5n), /lower than initial height/);

  t.equal(validateBlocksyncMessage({ type: 'StatusResponse', height: 5n, base: 1n }), null);
  t.match(validateBlocksyncMessage({ type: 'StatusResponse', height: 5n, base: 6n }), /base 6 cannot be greater than height 5/);
  t.match(validateBlocksyncMessage({ type: 'StatusResponse', height: 5n, base: -1n }), /negative Base/);
  t.match(validateBlocksyncMessage({ type: 'BlockRequest', height: -1n }), /negative Height/);
  t.equal(validateBlocksyncMessage({ type: 'StatusRequest' }), null);
});
