/**
 * The consensus WAL (cometbft: consensus/wal.go, replay.go): record framing and round trip,
 * checksum and length checks, a torn tail cut at the last good record with a .CORRUPTED backup,
 * replay from the last EndHeight, proposals split into 64 KiB parts, and per-height rotation.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BLOCK_PROTOCOL, SignedMsgType, type Block, type BlockID, type Vote } from '../../src/types/block.js';
import { emptyBlockId, emptyCommit, encodeBlock } from '../../src/types/codec.js';
import {
  WAL,
  WAL_MAX_RECORD_SIZE,
  decodeRecords,
  encodeRecord,
  type TimedWALMessage,
} from '../../src/consensus/wal.js';
import { crc32c } from '../../src/consensus/crc32c.js';
import { RoundStep, type ConsensusMessage } from '../../src/consensus/types.js';

function tmpWal(t: Test, keepFiles?: number): { wal: WAL; dir: string } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  const wal = new WAL(WAL.defaultPath(home), { keepFiles });
  t.teardown(() => wal.close());
  return { wal, dir: path.dirname(WAL.defaultPath(home)) };
}

function bid(tag: number): BlockID {
  return { hash: new Uint8Array(32).fill(tag), partSetHeader: { total: 1, hash: new Uint8Array(32).fill(tag + 1) } };
}

function vote(height: bigint, round: number, tag: number): Vote {
  return {
    type: SignedMsgType.Prevote,
    height,
    round,
    blockId: bid(tag),
    timestamp: 1_700_000_000_000_000_001n,
    validatorAddress: new Uint8Array(20).fill(tag),
    validatorIndex: 2,
    signature: new Uint8Array(64).fill(tag),
    extension: new Uint8Array(0),
    extensionSignature: new Uint8Array(0),
  };
}

function block(height: bigint, txBytes: number[]): Block {
  return {
    header: {
      version: { block: BLOCK_PROTOCOL, app: 0n },
      chainId: 'wal-chain',
      height,
      time: 1_700_000_000_000_000_000n,
      lastBlockId: emptyBlockId(),
      lastCommitHash: new Uint8Array(32),
      dataHash: new Uint8Array(32),
      validatorsHash: new Uint8Array(32).fill(1),
      nextValidatorsHash: new Uint8Array(32).fill(1),
      consensusHash: new Uint8Array(32),
      appHash: new Uint8Array(0),
      lastResultsHash: new Uint8Array(32),
      evidenceHash: new Uint8Array(32),
      proposerAddress: new Uint8Array(20).fill(4),
    },
    data: { txs: txBytes.map((n, i) => new Uint8Array(n).fill(i + 1)) },
    evidence: [],
    lastCommit: emptyCommit(),
  };
}

function proposalMsg(height: bigint, round: number, b: Block): ConsensusMessage {
  return {
    kind: 'proposal',
    proposal: { type: SignedMsgType.Proposal, height, round, polRound: -1, blockId: bid(9), timestamp: 5n, signature: new Uint8Array(64).fill(3) },
    block: b,
  };
}

t.test('record framing: crc32c BE || length BE || payload, and decode round trip', async (t) => {
  const m: TimedWALMessage = { time: 42n, msg: { type: 'endHeight', height: 7n } };
  const rec = encodeRecord(m);
  const dv = new DataView(rec.buffer, rec.byteOffset, rec.byteLength);
  const len = dv.getUint32(4, false);
  t.equal(len, rec.length - 8);
  t.equal(dv.getUint32(0, false), crc32c(rec.subarray(8)));
  const dec = decodeRecords(rec);
  t.equal(dec.error, null);
  t.same(dec.records, [m]);
  t.equal(dec.goodBytes, rec.length);
});

t.test('Buffers (which have toJSON) are stored as bytes, not as {type:"Buffer"} objects', async (t) => {
  const v = { ...vote(3n, 1, 4), blockId: { hash: Buffer.alloc(32, 7), partSetHeader: { total: 1, hash: Buffer.alloc(32, 8) } }, signature: Buffer.alloc(64, 9) };
  const dec = decodeRecords(encodeRecord({ time: 1n, msg: { type: 'msgInfo', peerId: 'p', msg: { kind: 'vote', vote: v } } }));
  const m = dec.records[0]!.msg;
  if (m.type !== 'msgInfo' || m.msg.kind !== 'vote') return t.fail('wrong record');
  t.type(m.msg.vote.blockId.hash, Uint8Array);
  t.same(Buffer.from(m.msg.vote.blockId.hash), Buffer.alloc(32, 7));
  t.same(Buffer.from(m.msg.vote.signature), Buffer.alloc(64, 9));
});

t.test('checksum, length and truncation errors stop decoding at the bad record', async (t) => {
  const a = encodeRecord({ time: 1n, msg: { type: 'endHeight', height: 1n } });
  const b = encodeRecord({ time: 2n, msg: { type: 'timeout', timeout: { duration: 10, height: 2n, round: 0, step: RoundStep.Propose } } });
  const good = Buffer.concat([a, b]);
  {
    const bad = Buffer.from(good);
    bad[a.length + 8 + 3]! ^= 0x01; // flip a payload bit of the second record
    const dec = decodeRecords(bad);
    t.equal(dec.records.length, 1);
    t.equal(dec.goodBytes, a.length);
    t.match(dec.error, /checksums do not match/);
  }
  {
    const bad = Buffer.from(good);
    bad.writeUInt32BE(WAL_MAX_RECORD_SIZE + 1, a.length + 4);
    const dec = decodeRecords(bad);
    t.match(dec.error, /exceeded maximum possible value of 1048600 bytes/);
    t.equal(dec.records.length, 1);
  }
  {
    const dec = decodeRecords(good.subarray(0, good.length - 3));
    t.match(dec.error, /truncated record body/);
    t.equal(dec.goodBytes, a.length);
  }
  {
    const dec = decodeRecords(good.subarray(0, a.length + 5));
    t.match(dec.error, /truncated record header/);
  }
  t.throws(
    () => encodeRecord({ time: 1n, msg: { type: 'msgInfo', peerId: 'x', msg: { kind: 'blockPart', height: 1n, round: 0, index: 0, total: 1, bytes: new Uint8Array(900 * 1024) } } }),
    /msg is too big/,
  );
});

t.test('round trip through the file: votes, proposals with their block, timeouts, EndHeight', async (t) => {
  const { wal } = tmpWal(t);
  await wal.open();
  const v = vote(1n, 0, 5);
  // A block of about 150 KiB: three 64 KiB parts.
  const big = block(1n, [70_000, 70_000, 10_000]);
  t.ok(encodeBlock(big).length > 2 * 65536);
  await wal.writeMessage({ kind: 'vote', vote: v }, 'peerA', false);
  await wal.writeMessage(proposalMsg(1n, 0, big), '', true);
  wal.write({ type: 'timeout', timeout: { duration: 40, height: 1n, round: 0, step: RoundStep.Propose } });
  wal.write({ type: 'roundState', height: 1n, round: 0, step: RoundStep.Prevote });
  await wal.writeSync({ type: 'msgInfo', peerId: '', msg: { kind: 'vote', vote: vote(1n, 0, 6) } });
  const recs = wal.readAll();
  t.equal(recs[0]!.msg.type, 'endHeight', 'a new WAL starts with EndHeight(0)');
  const parts = recs.filter((r) => r.msg.type === 'msgInfo' && r.msg.msg.kind === 'blockPart');
  t.equal(parts.length, 3, 'block logged as 3 parts');
  const { found, items } = wal.replayAfterEndHeight(0n);
  t.ok(found);
  t.same(items.map((i) => i.type), ['msgInfo', 'msgInfo', 'timeout', 'msgInfo'], 'roundState records are not replayed');
  const first = items[0]!;
  t.ok(first.type === 'msgInfo' && first.msg.kind === 'vote');
  if (first.type === 'msgInfo' && first.msg.kind === 'vote') {
    t.same(first.msg.vote, v, 'vote with bigints and bytes intact');
    t.equal(first.peerId, 'peerA');
  }
  const second = items[1]!;
  if (second.type === 'msgInfo' && second.msg.kind === 'proposal') {
    t.same(encodeBlock(second.msg.block), encodeBlock(big), 'block reassembled byte for byte');
    t.equal(second.msg.proposal.round, 0);
    t.equal(second.peerId, '');
  } else t.fail('expected the proposal');
  const third = items[2]!;
  t.same(third.type === 'timeout' ? third.timeout : null, { duration: 40, height: 1n, round: 0, step: RoundStep.Propose });
});

t.test('a torn tail is cut at the last good record, the original kept as .CORRUPTED', async (t) => {
  const { wal, dir } = tmpWal(t);
  await wal.open();
  await wal.writeMessage({ kind: 'vote', vote: vote(1n, 0, 1) }, 'p', true);
  await wal.writeMessage({ kind: 'vote', vote: vote(1n, 0, 2) }, 'p', true);
  await wal.close();
  const file = path.join(dir, 'wal');
  const goodSize = fs.statSync(file).size;
  // A crash in the middle of the next record: header and half a payload.
  const partial = encodeRecord({ time: 3n, msg: { type: 'msgInfo', peerId: 'p', msg: { kind: 'vote', vote: vote(1n, 0, 3) } } });
  fs.appendFileSync(file, partial.subarray(0, 20));
  const wal2 = new WAL(file);
  t.teardown(() => wal2.close());
  const r = await wal2.open();
  t.ok(r.repaired);
  t.equal(r.backup, `${file}.CORRUPTED`);
  t.equal(fs.statSync(`${file}.CORRUPTED`).size, goodSize + 20, 'backup is the original');
  t.equal(fs.statSync(file).size, goodSize, 'cut at the last good record');
  const { items } = wal2.replayAfterEndHeight(0n);
  t.equal(items.length, 2, 'both complete votes survive');
  // Writing continues after the cut.
  await wal2.writeMessage({ kind: 'vote', vote: vote(1n, 0, 4) }, 'p', true);
  t.equal(wal2.replayAfterEndHeight(0n).items.length, 3);
  // A bit flip in the middle also cuts there (crc check on open).
  await wal2.close();
  const buf = fs.readFileSync(file);
  buf[buf.length - 10]! ^= 0xff;
  fs.writeFileSync(file, buf);
  const wal3 = new WAL(file);
  t.teardown(() => wal3.close());
  const r3 = await wal3.open();
  t.ok(r3.repaired);
  t.match(r3.error, /checksums do not match/);
  t.equal(wal3.replayAfterEndHeight(0n).items.length, 2);
});

t.test('replay starts after the last EndHeight(h-1); rotation keeps the last files only', async (t) => {
  const { wal, dir } = tmpWal(t, 2);
  await wal.open();
  for (let h = 1n; h <= 5n; h++) {
    await wal.writeMessage({ kind: 'vote', vote: vote(h, 0, Number(h)) }, 'p', false);
    wal.write({ type: 'timeout', timeout: { duration: 1, height: h, round: 0, step: RoundStep.Propose } });
    await wal.endHeight(h);
  }
  await wal.writeMessage({ kind: 'vote', vote: vote(6n, 0, 6) }, 'p', false);
  await wal.writeMessage({ kind: 'vote', vote: vote(6n, 1, 7) }, '', true);
  const files = fs.readdirSync(dir).sort();
  t.same(files, ['wal', 'wal.003', 'wal.004'], 'head plus the two newest rotated files');
  const r6 = wal.replayAfterEndHeight(5n);
  t.ok(r6.found);
  t.same(
    r6.items.map((i) => (i.type === 'msgInfo' && i.msg.kind === 'vote' ? `${i.msg.vote.height}/${i.msg.vote.round}` : i.type)),
    ['6/0', '6/1'],
  );
  const r5 = wal.replayAfterEndHeight(4n);
  t.ok(r5.found, 'EndHeight(4) is still there');
  t.same(r5.items.map((i) => i.type), ['msgInfo', 'timeout', 'endHeight', 'msgInfo', 'msgInfo']);
  // Pruned heights are gone: no EndHeight(1), and newer markers exist, so nothing to replay.
  const r1 = wal.replayAfterEndHeight(1n);
  t.notOk(r1.found);
  t.same(r1.items, []);
  // A restarted WAL reads the same.
  await wal.close();
  const again = new WAL(path.join(dir, 'wal'));
  t.teardown(() => again.close());
  const o = await again.open();
  t.notOk(o.repaired);
  t.equal(again.replayAfterEndHeight(5n).items.length, 2);
  t.equal(again.readAll().filter((r) => r.msg.type === 'endHeight' && r.msg.height === 0n).length, 0, 'no second EndHeight(0) in a used WAL');
});

t.test('initial height above 1: replay falls back to the newest lower EndHeight', async (t) => {
  const { wal } = tmpWal(t);
  await wal.open(); // EndHeight(0)
  await wal.writeMessage({ kind: 'vote', vote: vote(100n, 0, 1) }, 'p', false);
  const r = wal.replayAfterEndHeight(99n);
  t.notOk(r.found);
  t.equal(r.items.length, 1, 'the messages after EndHeight(0)');
});
