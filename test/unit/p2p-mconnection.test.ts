/**
 * MConnection (cometbft/cometbft:p2p/conn/connection.go): packet bytes against hand-built proto,
 * then real connections (SecretConnection over loopback TCP): multi-packet messages on several
 * channels, priority scheduling, unknown channel, oversized packet, receive caps, malformed
 * packets, ping/pong and pong timeout, send queues and flow-rate limits.
 */
import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { RateMonitor } from '../../src/p2p/flowrate.js';
import { MConnection, type ChannelDescriptor, type MConnConfig } from '../../src/p2p/mconnection.js';
import {
  PING_DELIMITED,
  decodePacket,
  delimitedPacketMsgSize,
  encodePacketDelimited,
  packetMsgSize,
} from '../../src/p2p/packet.js';
import { readDelimited } from '../../src/types/proto.js';
import { recorder, secretPair, waitFor, type Recorder } from '../helpers/p2p.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const unhex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));

t.test('packet encodings: hand-built proto bytes', async (t) => {
  t.equal(hex(encodePacketDelimited({ type: 'ping' })), '020a00', 'Packet{packet_ping{}}');
  t.equal(hex(encodePacketDelimited({ type: 'pong' })), '021200', 'Packet{packet_pong{}}');
  // Packet{packet_msg(3){channel_id(1)=0x20, eof(2)=true, data(3)="hi"}}
  t.equal(hex(encodePacketDelimited({ type: 'msg', channelId: 0x20, eof: true, data: unhex('6869') })), '0a1a08082010011a026869');
  // channel 0, eof false and empty data are all omitted: an empty PacketMsg.
  t.equal(hex(encodePacketDelimited({ type: 'msg', channelId: 0, eof: false, data: new Uint8Array(0) })), '021a00');
  // channel 0x80 takes a two-byte varint
  t.equal(hex(encodePacketDelimited({ type: 'msg', channelId: 0x80, eof: false, data: unhex('01') })), '081a060880011a0101');
  // a full 1024-byte payload: 1a 8708 (08 01 10 01 1a 8008 <1024>) = 1034 bytes, prefix 8a08
  const full = encodePacketDelimited({ type: 'msg', channelId: 1, eof: true, data: new Uint8Array(1024).fill(7) });
  t.equal(hex(full.subarray(0, 12)), '8a081a8708080110011a8008');
  t.equal(full.length, 2 + 1034);
  t.equal(packetMsgSize(1, true, 1024), 1034, 'maxPacketMsgSize for the default payload');
  t.equal(delimitedPacketMsgSize(0x80, false, 1), 9);

  for (const p of [
    { type: 'ping' as const },
    { type: 'pong' as const },
    { type: 'msg' as const, channelId: 0x38, eof: false, data: randomBytes(300) },
    { type: 'msg' as const, channelId: 0, eof: true, data: new Uint8Array(0) },
  ]) {
    const enc = encodePacketDelimited(p);
    const { msg, size } = readDelimited(enc);
    t.equal(size, enc.length);
    t.same(decodePacket(msg), p.type === 'msg' ? { ...p, data: new Uint8Array(p.data) } : p, `${p.type} round trip`);
  }
  // int32 channel -1 (ten-byte varint) decodes as -1, for the receiver to reject
  const neg = decodePacket(unhex('1a0b08ffffffffffffffffff01'));
  t.equal(neg.type === 'msg' && neg.channelId, -1);
  t.throws(() => decodePacket(new Uint8Array(0)), { code: 'PROTOCOL' }, 'a packet with no member');
  t.throws(() => decodePacket(unhex('1a05080110')), { code: 'PROTOCOL' }, 'truncated PacketMsg');
  t.throws(() => decodePacket(unhex('0802')), { code: 'PROTOCOL' }, 'ping with the wrong wire type');
});

t.test('RateMonitor: 100 ms samples of rate/10 bytes (fake clock)', async (t) => {
  let now = 0;
  const m = new RateMonitor(10_000, () => now);
  t.equal(m.delay(), 0, 'fresh sample');
  m.update(999);
  t.equal(m.delay(), 0, 'under the 1000-byte sample budget');
  m.update(500);
  now = 30;
  t.equal(m.delay(), 70, 'over budget: wait for the next sample');
  now = 100;
  t.equal(m.delay(), 0, 'next sample starts empty');
  m.update(1000);
  now = 250;
  t.equal(m.delay(), 0, 'a sample later');
  now = 1000;
  t.equal(m.total, 2499);
  t.equal(Math.round(m.averageRate()), 2499);
  t.equal(new RateMonitor(0, () => now).delay(), 0, 'rate 0 = unlimited');
});

const CHANNELS: ChannelDescriptor[] = [
  { id: 0x20, priority: 5, sendQueueCapacity: 100 },
  { id: 0x21, priority: 10, sendQueueCapacity: 100 },
];

async function mconnPair(
  t: Test,
  chA: ChannelDescriptor[] = CHANNELS,
  chB: ChannelDescriptor[] = CHANNELS,
  cfgA: Partial<MConnConfig> = {},
  cfgB: Partial<MConnConfig> = {},
): Promise<{ a: MConnection; b: MConnection; ra: Recorder; rb: Recorder }> {
  const [sa, sb] = await secretPair();
  const ra = recorder();
  const rb = recorder();
  const fast = { flushThrottle: 5 };
  const a = new MConnection(sa, chA, ra.handlers, { ...fast, ...cfgA });
  const b = new MConnection(sb, chB, rb.handlers, { ...fast, ...cfgB });
  a.start();
  b.start();
  t.teardown(() => {
    a.stop();
    b.stop();
  });
  return { a, b, ra, rb };
}

t.test('messages on two channels both ways, multi-packet and empty, exact packet bytes', async (t) => {
  const { a, b, ra, rb } = await mconnPair(t);
  const big = randomBytes(3000);
  const huge = randomBytes(100_000);
  t.ok(a.trySend(0x20, big));
  t.ok(a.trySend(0x21, Uint8Array.of(1, 2, 3)));
  t.ok(a.trySend(0x20, new Uint8Array(0)));
  t.ok(await b.send(0x21, huge));
  t.ok(b.trySend(0x20, Uint8Array.of(9)));
  await waitFor(() => rb.got.length === 3 && ra.got.length === 2, 20_000, 'all messages');
  const by = (r: Recorder, ch: number) => r.got.filter(([c]) => c === ch).map(([, m]) => hex(m));
  t.same(by(rb, 0x20), [hex(big), ''], 'channel 0x20 in order, the empty message included');
  t.same(by(rb, 0x21), ['010203']);
  t.same(by(ra, 0x21), [hex(huge)], '100 kB in 98 packets');
  t.same(by(ra, 0x20), ['09']);
  // 3000 bytes = 1024 + 1024 + 952: two non-eof packets and one eof packet; plus 3 bytes and the
  // empty eof packet. Nothing else is on the wire (no ping within 60 s).
  const wantA =
    2 * delimitedPacketMsgSize(0x20, false, 1024) +
    delimitedPacketMsgSize(0x20, true, 952) +
    delimitedPacketMsgSize(0x21, true, 3) +
    delimitedPacketMsgSize(0x20, true, 0);
  t.equal(a.status().sendBytes, wantA, 'sender counted the exact packet bytes');
  t.equal(b.status().recvBytes, wantA, 'receiver read exactly those packets');
  t.same(ra.errors, []);
  t.same(rb.errors, []);
  t.equal(a.trySend(0x99, Uint8Array.of(1)), false, 'unknown channel: not sent');
  t.equal(await a.send(0x99, Uint8Array.of(1)), false);
});

t.test('the channel with the lower recentlySent/priority goes first', async (t) => {
  // Listed low priority first, so list order alone would favour it.
  const chans: ChannelDescriptor[] = [
    { id: 1, priority: 1, sendQueueCapacity: 10 },
    { id: 2, priority: 10, sendQueueCapacity: 10 },
  ];
  const { a, rb } = await mconnPair(t, chans, chans);
  const m = randomBytes(20 * 1024);
  t.ok(a.trySend(1, m));
  t.ok(a.trySend(2, m));
  await waitFor(() => rb.got.length === 2, 20_000, 'both messages');
  t.same(
    rb.got.map(([c]) => c),
    [2, 1],
    'priority 10 finishes its 20 packets before priority 1',
  );
});

t.test('unknown channel from the peer: error and disconnect', async (t) => {
  const { a, ra, rb } = await mconnPair(t, [...CHANNELS, { id: 0x30, priority: 1 }], CHANNELS);
  t.ok(a.trySend(0x30, Uint8Array.of(1)));
  await waitFor(() => rb.errors.length === 1 && ra.errors.length === 1, 20_000, 'both sides down');
  t.equal(rb.errors[0]!.code, 'UNKNOWN_CHANNEL');
  t.match(ra.errors[0]!.code, /^(EOF|SOCKET|CLOSED)$/, 'the sender sees the disconnect');
  t.equal(a.isRunning, false);
});

t.test('a message above the channel recvMessageCapacity: disconnect', async (t) => {
  const small: ChannelDescriptor[] = [{ id: 0x20, priority: 1, recvMessageCapacity: 2000 }];
  const { a, b, rb } = await mconnPair(t, CHANNELS, small);
  t.ok(a.trySend(0x20, randomBytes(2000)), 'exactly at capacity');
  await waitFor(() => rb.got.length === 1, 20_000, 'message at capacity');
  t.ok(a.trySend(0x20, randomBytes(2001)));
  await waitFor(() => rb.errors.length === 1, 20_000, 'receiver error');
  t.equal(rb.errors[0]!.code, 'RECV_CAPACITY');
  t.equal(b.isRunning, false);
});

t.test('raw misbehaviour: oversized packet, malformed packet, negative channel', async (t) => {
  const cases: [string, Uint8Array, string][] = [
    ['packet over maxPacketMsgSize', encodePacketDelimited({ type: 'msg', channelId: 0x20, eof: true, data: new Uint8Array(1025) }), 'MSG_TOO_LARGE'],
    ['empty packet', Uint8Array.of(0x00), 'PROTOCOL'],
    ['garbage packet', Uint8Array.of(0x02, 0xff, 0xff), 'PROTOCOL'],
    ['negative channel', unhex('0d1a0b08ffffffffffffffffff01'), 'UNKNOWN_CHANNEL'],
  ];
  for (const [name, bytes, code] of cases) {
    const [raw, sb] = await secretPair();
    const rb = recorder();
    const b = new MConnection(sb, CHANNELS, rb.handlers, { flushThrottle: 5 });
    b.start();
    raw.write(bytes);
    await waitFor(() => rb.errors.length === 1, 20_000, name);
    t.equal(rb.errors[0]!.code, code, name);
    t.same(rb.got, [], `${name}: nothing delivered`);
    raw.close();
    b.stop();
  }
});

t.test('ping/pong keeps the connection; a silent peer times out', async (t) => {
  {
    // A long pong timeout, so that a stalled event loop on a busy machine cannot fake a timeout.
    const { a, b, ra, rb } = await mconnPair(t, CHANNELS, CHANNELS, { pingInterval: 2000, pongTimeout: 1900 });
    // A's ping (3 bytes) reaches B, B's pong (3 bytes) reaches A; nothing else is sent.
    await waitFor(() => b.status().recvBytes >= 3 && a.status().recvBytes >= 3, 20_000, 'a ping/pong round');
    t.ok(a.isRunning && b.isRunning, 'still up after pongs');
    t.same(ra.errors, []);
    t.same(rb.errors, []);
  }
  {
    const [sa, silent] = await secretPair();
    const ra = recorder();
    const a = new MConnection(sa, CHANNELS, ra.handlers, { pingInterval: 100, pongTimeout: 50 });
    a.start();
    const ping = await silent.reader.readDelimited(16);
    t.equal(hex(ping), hex(PING_DELIMITED.subarray(1)), 'the ping on the wire is 0a00');
    await waitFor(() => ra.errors.length === 1, 20_000, 'pong timeout');
    t.equal(ra.errors[0]!.code, 'PONG_TIMEOUT');
    silent.close();
  }
});

t.test('send queues: trySend refuses when full, send waits for room or times out', async (t) => {
  const one: ChannelDescriptor[] = [{ id: 0x40, priority: 1, sendQueueCapacity: 1 }];
  // 20 kB/s: a 100 kB message holds the channel for seconds.
  const { a, rb } = await mconnPair(t, one, one, { sendRate: 20_000, sendTimeout: 200 });
  t.ok(a.trySend(0x40, randomBytes(100_000)), 'first message');
  await waitFor(() => a.status().sendBytes > 0, 20_000, 'first message in flight');
  t.ok(a.trySend(0x40, Uint8Array.of(2)), 'second message fills the queue');
  t.notOk(a.trySend(0x40, Uint8Array.of(3)), 'queue full');
  t.notOk(a.canSend(0x40));
  t.equal(await a.send(0x40, Uint8Array.of(3)), false, 'send gives up after sendTimeout');
  a.config.sendTimeout = 60_000;
  t.equal(await a.send(0x40, Uint8Array.of(4)), true, 'send succeeds once the queue moves');
  await waitFor(() => rb.got.length === 3, 30_000, 'all three delivered');
  t.same(
    rb.got.map(([, m]) => m.length),
    [100_000, 1, 1],
  );
  t.equal(rb.got[2]![1][0], 4, 'the timed-out message was not sent');
});

t.test('send rate limit: a limited sender cannot beat its budget', async (t) => {
  // 100 kB/s = 10 kB per 100 ms sample; a batch of 10 packets (~10.3 kB) may overshoot each
  // sample, so 200 kB needs at least 200k / 20.4k ≈ 9.8 samples after the first: > 0.9 s.
  const { a, rb } = await mconnPair(t, CHANNELS, CHANNELS, { sendRate: 100_000 });
  const start = performance.now();
  t.ok(a.trySend(0x20, randomBytes(200_000)));
  await waitFor(() => rb.got.length === 1, 30_000, 'message');
  t.ok(performance.now() - start >= 900, `took ${Math.round(performance.now() - start)} ms`);
});

t.test('recv rate limit: a limited receiver reads no faster than its budget', async (t) => {
  // 100 kB/s receive; the check is per packet, so one packet of overshoot per sample at most:
  // 200 kB needs ≥ 200k / 11k ≈ 18 samples: > 1.7 s.
  const { a, rb } = await mconnPair(t, CHANNELS, CHANNELS, {}, { recvRate: 100_000 });
  const start = performance.now();
  t.ok(a.trySend(0x20, randomBytes(200_000)));
  await waitFor(() => rb.got.length === 1, 30_000, 'message');
  t.ok(performance.now() - start >= 1700, `took ${Math.round(performance.now() - start)} ms`);
});

t.test('flushStop delivers what is queued, then closes; stop() does not report an error', async (t) => {
  const [sa, sb] = await secretPair();
  const ra = recorder();
  const rb = recorder();
  const a = new MConnection(sa, CHANNELS, ra.handlers, { flushThrottle: 60_000 });
  const b = new MConnection(sb, CHANNELS, rb.handlers);
  a.start();
  b.start();
  t.ok(a.trySend(0x20, randomBytes(5000)));
  t.ok(a.trySend(0x21, Uint8Array.of(7)));
  await a.flushStop();
  await waitFor(() => rb.got.length === 2 && rb.errors.length === 1, 20_000, 'delivery then EOF');
  t.equal(rb.errors[0]!.code, 'EOF', 'the peer sees a clean close');
  t.same(ra.errors, [], 'flushStop is not an error');
  t.equal(a.trySend(0x20, Uint8Array.of(1)), false, 'no sends after stop');
  b.stop();
  t.same(rb.errors.length, 1, 'stop after an error does not report again');
});
