/**
 * The PEX reactor's messages on channel 0x00 (cometbft/cometbft:proto/tendermint/p2p/pex.proto,
 * proto/tendermint/p2p/types.proto):
 *
 *   Message{oneof sum: pex_request=1 PexRequest{}, pex_addrs=2 PexAddrs{addrs repeated NetAddress=1}}
 *   NetAddress{id string=1, ip string=2, port uint32=3}
 *
 * Addresses are decoded as sent; checking them (40-hex ID, parseable IP, port <= 65535) is the
 * reactor's job, as NetAddressFromProto is CometBFT's.
 */
import { ProtoDecodeError, type ProtoReader, type ProtoWriter, WIRE_LEN, WIRE_VARINT, expectWire } from '../../types/proto.js';
import { readOneof, writeOneof } from './oneof.js';

export const PEX_CHANNEL = 0x00;

export interface NetAddress {
  id: string;
  ip: string;
  port: number;
}

export type PexMessage = { type: 'PexRequest' } | { type: 'PexAddrs'; addrs: NetAddress[] };

function writeNetAddressBody(w: ProtoWriter, a: NetAddress): void {
  w.stringField(1, a.id);
  w.stringField(2, a.ip);
  w.uint32Field(3, a.port);
}

export function encodePexMessage(m: PexMessage): Uint8Array {
  if (m.type === 'PexRequest') return writeOneof(1, () => {}, 4);
  return writeOneof(2, (w) => {
    for (const a of m.addrs) {
      const k = w.fork(1);
      writeNetAddressBody(w, a);
      w.ldelim(k);
    }
  }, 16 + m.addrs.length * 72);
}

function readNetAddress(r: ProtoReader): NetAddress {
  const a: NetAddress = { id: '', ip: '', port: 0 };
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1) {
      expectWire(f, wt, WIRE_LEN);
      a.id = r.string();
    } else if (f === 2) {
      expectWire(f, wt, WIRE_LEN);
      a.ip = r.string();
    } else if (f === 3) {
      expectWire(f, wt, WIRE_VARINT);
      a.port = r.uint32();
    } else r.skip(wt);
  }
  return a;
}

export function decodePexMessage(bytes: Uint8Array): PexMessage {
  const { field, body: r } = readOneof(bytes, [1, 2], 'pex');
  if (field === 1) return { type: 'PexRequest' };
  if (field !== 2) throw new ProtoDecodeError(`pex: unknown message field ${field}`);
  const addrs: NetAddress[] = [];
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1) {
      expectWire(f, wt, WIRE_LEN);
      addrs.push(readNetAddress(r.sub()));
    } else r.skip(wt);
  }
  return { type: 'PexAddrs', addrs };
}
