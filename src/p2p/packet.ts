/**
 * MConnection packets (cometbft/cometbft:proto/tendermint/p2p/conn.proto), each sent as
 * `uvarint(len) || Packet`:
 *
 *   Packet{oneof sum: packet_ping=1 PacketPing{}, packet_pong=2 PacketPong{}, packet_msg=3 PacketMsg}
 *   PacketMsg{channel_id int32=1, eof bool=2, data bytes=3}
 *
 * A set oneof member is written even when empty (ping = 0a 00), while PacketMsg's scalar fields
 * follow proto3 and are omitted at zero (channel 0, eof false, empty data).
 */
import { ProtoDecodeError, ProtoReader, WIRE_LEN, WIRE_VARINT, expectWire, uvarintSize } from '../types/proto.js';
import { P2PError } from './errors.js';

export type Packet = { type: 'ping' } | { type: 'pong' } | { type: 'msg'; channelId: number; eof: boolean; data: Uint8Array };

export const PING_DELIMITED = Uint8Array.of(0x02, 0x0a, 0x00);
export const PONG_DELIMITED = Uint8Array.of(0x02, 0x12, 0x00);

function packetMsgBodySize(channelId: number, eof: boolean, dataLen: number): number {
  let n = 0;
  if (channelId !== 0) n += 1 + uvarintSize(channelId);
  if (eof) n += 2;
  if (dataLen > 0) n += 1 + uvarintSize(dataLen) + dataLen;
  return n;
}

/** Size of Packet{packet_msg} without the delimiter (maxPacketMsgSize uses channel 1, eof true). */
export function packetMsgSize(channelId: number, eof: boolean, dataLen: number): number {
  const body = packetMsgBodySize(channelId, eof, dataLen);
  return 1 + uvarintSize(body) + body;
}

/** Size of the delimited PacketMsg packet as written on the stream. */
export function delimitedPacketMsgSize(channelId: number, eof: boolean, dataLen: number): number {
  const p = packetMsgSize(channelId, eof, dataLen);
  return uvarintSize(p) + p;
}

function putUvarint(buf: Uint8Array, pos: number, n: number): number {
  while (n > 0x7f) {
    buf[pos++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  buf[pos++] = n;
  return pos;
}

/**
 * Writes `uvarint(len) || Packet{packet_msg{channelId, eof, data}}` into `buf` at `pos` (the caller
 * reserved delimitedPacketMsgSize bytes); returns the new position. channelId is 0..255.
 */
export function writePacketMsgInto(buf: Uint8Array, pos: number, channelId: number, eof: boolean, data: Uint8Array): number {
  const body = packetMsgBodySize(channelId, eof, data.length);
  const packet = 1 + uvarintSize(body) + body;
  pos = putUvarint(buf, pos, packet);
  buf[pos++] = 0x1a; // field 3, length-delimited
  pos = putUvarint(buf, pos, body);
  if (channelId !== 0) {
    buf[pos++] = 0x08;
    pos = putUvarint(buf, pos, channelId);
  }
  if (eof) {
    buf[pos++] = 0x10;
    buf[pos++] = 0x01;
  }
  if (data.length > 0) {
    buf[pos++] = 0x1a;
    pos = putUvarint(buf, pos, data.length);
    buf.set(data, pos);
    pos += data.length;
  }
  return pos;
}

/** The delimited encoding of one packet (tests and one-off writes). */
export function encodePacketDelimited(p: Packet): Uint8Array {
  if (p.type === 'ping') return PING_DELIMITED.slice();
  if (p.type === 'pong') return PONG_DELIMITED.slice();
  if (!Number.isInteger(p.channelId) || p.channelId < 0 || p.channelId > 255) throw new RangeError(`channel id ${p.channelId} out of range`);
  const out = new Uint8Array(delimitedPacketMsgSize(p.channelId, p.eof, p.data.length));
  writePacketMsgInto(out, 0, p.channelId, p.eof, p.data);
  return out;
}

/** Decodes a Packet (without its delimiter). Malformed input is a PROTOCOL error. */
export function decodePacket(bytes: Uint8Array): Packet {
  try {
    return decodePacketUnchecked(bytes);
  } catch (err) {
    if (err instanceof ProtoDecodeError) throw new P2PError('PROTOCOL', `malformed packet: ${err.message}`, { cause: err });
    throw err;
  }
}

function decodePacketUnchecked(bytes: Uint8Array): Packet {
  const r = new ProtoReader(bytes);
  let out: Packet | null = null;
  // gogoproto keeps the last oneof member seen; so do we.
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1 || f === 2) {
      expectWire(f, wt, WIRE_LEN);
      const s = r.sub();
      while (!s.eof()) s.skip(s.tag() & 7);
      out = { type: f === 1 ? 'ping' : 'pong' };
    } else if (f === 3) {
      expectWire(f, wt, WIRE_LEN);
      const s = r.sub();
      let channelId = 0;
      let eof = false;
      let data: Uint8Array = new Uint8Array(0);
      while (!s.eof()) {
        const st = s.tag();
        const sf = st >>> 3;
        if (sf === 1) {
          expectWire(sf, st & 7, WIRE_VARINT);
          channelId = s.int32();
        } else if (sf === 2) {
          expectWire(sf, st & 7, WIRE_VARINT);
          eof = s.bool();
        } else if (sf === 3) {
          expectWire(sf, st & 7, WIRE_LEN);
          data = s.bytes();
        } else s.skip(st & 7);
      }
      out = { type: 'msg', channelId, eof, data };
    } else r.skip(wt);
  }
  if (!out) throw new P2PError('PROTOCOL', 'unknown message type: packet with no ping, pong or msg');
  return out;
}
