/**
 * DefaultNodeInfo: what peers tell each other right after the SecretConnection handshake
 * (cometbft/cometbft:p2p/node_info.go, proto/tendermint/p2p/types.proto).
 *
 *   DefaultNodeInfo{protocol_version=1 {p2p=1, block=2, app=3}, default_node_id=2, listen_addr=3,
 *                   network=4, version=5, channels=6 (bytes), moniker=7,
 *                   other=8 {tx_index=1, rpc_address=2}}
 *
 * protocol_version and other are non-nullable in gogoproto: always written, even when empty.
 */
import { isIP } from 'node:net';
import { ProtoDecodeError, ProtoReader, ProtoWriter, WIRE_LEN, WIRE_VARINT, expectWire } from '../types/proto.js';
import { P2PError } from './errors.js';

/** maxNodeInfoSize: the delimited reader's cap for the NodeInfo exchange. */
export const MAX_NODE_INFO_SIZE = 10240;
export const MAX_NUM_CHANNELS = 16;
/** IDByteLength (cometbft/cometbft:p2p/key.go): a node ID is 20 bytes, 40 hex characters. */
export const ID_BYTE_LENGTH = 20;

export interface ProtocolVersion {
  p2p: bigint;
  block: bigint;
  app: bigint;
}

export interface NodeInfo {
  protocolVersion: ProtocolVersion;
  /** Lower-case hex node ID. */
  id: string;
  listenAddr: string;
  /** Chain ID. */
  network: string;
  version: string;
  /** Channel IDs this node serves, one byte each. */
  channels: Uint8Array;
  moniker: string;
  other: { txIndex: string; rpcAddress: string };
}

export function encodeNodeInfo(info: NodeInfo): Uint8Array {
  const w = new ProtoWriter(256);
  let m = w.fork(1);
  w.uint64Field(1, info.protocolVersion.p2p);
  w.uint64Field(2, info.protocolVersion.block);
  w.uint64Field(3, info.protocolVersion.app);
  w.ldelim(m);
  w.stringField(2, info.id);
  w.stringField(3, info.listenAddr);
  w.stringField(4, info.network);
  w.stringField(5, info.version);
  w.bytesField(6, info.channels);
  w.stringField(7, info.moniker);
  m = w.fork(8);
  w.stringField(1, info.other.txIndex);
  w.stringField(2, info.other.rpcAddress);
  w.ldelim(m);
  return w.finish();
}

export function decodeNodeInfo(bytes: Uint8Array): NodeInfo {
  const info: NodeInfo = {
    protocolVersion: { p2p: 0n, block: 0n, app: 0n },
    id: '',
    listenAddr: '',
    network: '',
    version: '',
    channels: new Uint8Array(0),
    moniker: '',
    other: { txIndex: '', rpcAddress: '' },
  };
  const r = new ProtoReader(bytes);
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    switch (f) {
      case 1: {
        expectWire(f, wt, WIRE_LEN);
        const s = r.sub();
        while (!s.eof()) {
          const st = s.tag();
          const sf = st >>> 3;
          if (sf >= 1 && sf <= 3) {
            expectWire(sf, st & 7, WIRE_VARINT);
            const v = s.uint64();
            if (sf === 1) info.protocolVersion.p2p = v;
            else if (sf === 2) info.protocolVersion.block = v;
            else info.protocolVersion.app = v;
          } else s.skip(st & 7);
        }
        break;
      }
      case 2:
      case 3:
      case 4:
      case 5:
      case 7: {
        expectWire(f, wt, WIRE_LEN);
        const v = r.string();
        if (f === 2) info.id = v;
        else if (f === 3) info.listenAddr = v;
        else if (f === 4) info.network = v;
        else if (f === 5) info.version = v;
        else info.moniker = v;
        break;
      }
      case 6:
        expectWire(f, wt, WIRE_LEN);
        info.channels = r.bytes();
        break;
      case 8: {
        expectWire(f, wt, WIRE_LEN);
        const s = r.sub();
        while (!s.eof()) {
          const st = s.tag();
          const sf = st >>> 3;
          if (sf === 1 || sf === 2) {
            expectWire(sf, st & 7, WIRE_LEN);
            if (sf === 1) info.other.txIndex = s.string();
            else info.other.rpcAddress = s.string();
          } else s.skip(st & 7);
        }
        break;
      }
      default:
        r.skip(wt);
    }
  }
  return info;
}

// ---------------------------------------------------------------------------------------------
// Validation (cometbft/cometbft:p2p/node_info.go Validate, p2p/netaddress.go NewNetAddressString,
// libs/strings/string.go IsASCIIText / ASCIITrim)

/** Non-empty and every byte printable ASCII (32..126). */
function isASCIIText(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 32 || c > 126) return false;
  }
  return true;
}

/** isASCIIText and not only spaces (ASCIITrim(s) != ""). */
function isNonBlankASCII(s: string): boolean {
  return isASCIIText(s) && s.replace(/ /g, '').length > 0;
}

/** validateID: non-empty hex (either case) of exactly 20 bytes. */
export function validateNodeId(id: string): void {
  if (id.length === 0) throw new P2PError('NODE_INFO_INVALID', 'no ID');
  if (!/^([0-9a-fA-F]{2})*$/.test(id)) throw new P2PError('NODE_INFO_INVALID', `invalid hex in ID ${JSON.stringify(id)}`);
  if (id.length !== ID_BYTE_LENGTH * 2) {
    throw new P2PError('NODE_INFO_INVALID', `invalid hex length - got ${id.length / 2}, expected ${ID_BYTE_LENGTH}`);
  }
}

function removeProtocol(addr: string): string {
  const i = addr.indexOf('://');
  if (i < 0) return addr;
  // strings.Split(addr, "://")[1]: the part between the first and a possible second "://".
  const rest = addr.slice(i + 3);
  const j = rest.indexOf('://');
  return j < 0 ? rest : rest.slice(0, j);
}

/** net.SplitHostPort: "host:port" or "[v6host]:port"; exactly one colon outside brackets. */
function splitHostPort(hp: string): [string, string] {
  if (hp.startsWith('[')) {
    const end = hp.indexOf(']');
    if (end < 0) throw new Error('missing \']\' in address');
    if (hp[end + 1] !== ':') throw new Error('missing port in address');
    const host = hp.slice(1, end);
    const port = hp.slice(end + 2);
    if (host.includes('[') || host.includes(']') || port.includes('[') || port.includes(']')) throw new Error('unexpected bracket in address');
    return [host, port];
  }
  const i = hp.lastIndexOf(':');
  if (i < 0) throw new Error('missing port in address');
  const host = hp.slice(0, i);
  if (host.includes(':')) throw new Error('too many colons in address');
  if (host.includes('[') || host.includes(']')) throw new Error('unexpected bracket in address');
  return [host, hp.slice(i + 1)];
}

/**
 * Parses the listen address the way Validate does (id@host:port after dropping "proto://").
 * Returns the host and port; whether a non-IP host resolves is checked separately (resolveHost),
 * since CometBFT's DNS lookup is the one asynchronous step.
 */
export function parseListenAddr(listenAddr: string): { host: string; port: number } {
  const hp = removeProtocol(listenAddr);
  // Validate parses "id@" + this; a second '@' splits into three parts there.
  if (hp.includes('@')) throw new P2PError('NODE_INFO_INVALID', `invalid listen address ${JSON.stringify(listenAddr)}: unexpected '@'`);
  let host: string;
  let portStr: string;
  try {
    [host, portStr] = splitHostPort(hp);
  } catch (err) {
    throw new P2PError('NODE_INFO_INVALID', `invalid listen address ${JSON.stringify(listenAddr)}: ${(err as Error).message}`);
  }
  if (host.length === 0) throw new P2PError('NODE_INFO_INVALID', `invalid listen address ${JSON.stringify(listenAddr)}: host is empty`);
  // strconv.ParseUint(portStr, 10, 16): decimal digits only, 0..65535.
  if (!/^[0-9]+$/.test(portStr) || Number(portStr) > 65535) {
    throw new P2PError('NODE_INFO_INVALID', `invalid listen address ${JSON.stringify(listenAddr)}: bad port ${JSON.stringify(portStr)}`);
  }
  return { host, port: Number(portStr) };
}

/**
 * DefaultNodeInfo.Validate(), except the DNS lookup of a non-IP listen host (validateNodeInfoAsync
 * adds it). Throws a P2PError with code NODE_INFO_INVALID.
 */
export function validateNodeInfo(info: NodeInfo): void {
  // The address check comes first in CometBFT: the ID, then host and port.
  validateNodeId(info.id);
  parseListenAddr(info.listenAddr);
  if (info.version.length > 0 && !isNonBlankASCII(info.version)) {
    throw new P2PError('NODE_INFO_INVALID', `info.Version must be valid ASCII text without tabs, but got ${JSON.stringify(info.version)}`);
  }
  if (info.channels.length > MAX_NUM_CHANNELS) {
    throw new P2PError('NODE_INFO_INVALID', `info.Channels is too long (${info.channels.length}). Max is ${MAX_NUM_CHANNELS}`);
  }
  const seen = new Set<number>();
  for (const ch of info.channels) {
    if (seen.has(ch)) throw new P2PError('NODE_INFO_INVALID', `info.Channels contains duplicate channel id ${ch}`);
    seen.add(ch);
  }
  if (!isNonBlankASCII(info.moniker)) {
    throw new P2PError('NODE_INFO_INVALID', `info.Moniker must be valid non-empty ASCII text without tabs, but got ${JSON.stringify(info.moniker)}`);
  }
  const txIndex = info.other.txIndex;
  if (txIndex !== '' && txIndex !== 'on' && txIndex !== 'off') {
    throw new P2PError('NODE_INFO_INVALID', `info.Other.TxIndex should be either 'on', 'off', or empty string, got '${txIndex}'`);
  }
  const rpc = info.other.rpcAddress;
  if (rpc.length > 0 && !isNonBlankASCII(rpc)) {
    throw new P2PError('NODE_INFO_INVALID', `info.Other.RPCAddress=${rpc} must be valid ASCII text without tabs`);
  }
}

/** validateNodeInfo plus CometBFT's net.LookupIP of a listen host that is not an IP literal. */
export async function validateNodeInfoAsync(info: NodeInfo, lookup: (host: string) => Promise<unknown>): Promise<void> {
  validateNodeInfo(info);
  const { host } = parseListenAddr(info.listenAddr);
  if (isIP(host) === 0) {
    try {
      await lookup(host);
    } catch (err) {
      throw new P2PError('NODE_INFO_INVALID', `listen host ${JSON.stringify(host)} does not resolve: ${(err as Error).message}`);
    }
  }
}

/** DefaultNodeInfo.CompatibleWith: same block protocol, same network, a common channel (if we list any). */
export function checkCompatible(ours: NodeInfo, theirs: NodeInfo): void {
  if (ours.protocolVersion.block !== theirs.protocolVersion.block) {
    throw new P2PError(
      'INCOMPATIBLE',
      `peer is on a different Block version. Got ${theirs.protocolVersion.block}, expected ${ours.protocolVersion.block}`,
    );
  }
  if (ours.network !== theirs.network) {
    throw new P2PError('INCOMPATIBLE', `peer is on a different network. Got ${theirs.network}, expected ${ours.network}`);
  }
  if (ours.channels.length === 0) return;
  for (const ch of ours.channels) if (theirs.channels.includes(ch)) return;
  throw new P2PError(
    'INCOMPATIBLE',
    `peer has no common channels. Our channels: ${Buffer.from(ours.channels).toString('hex')} ; Peer channels: ${Buffer.from(theirs.channels).toString('hex')}`,
  );
}

/** HasChannel: whether the peer advertised `ch` (sends on other channels are dropped). */
export function hasChannel(info: NodeInfo, ch: number): boolean {
  return info.channels.includes(ch);
}

/** Decoding errors of a peer's NodeInfo are handshake errors. */
export function decodeNodeInfoStrict(bytes: Uint8Array): NodeInfo {
  try {
    return decodeNodeInfo(bytes);
  } catch (err) {
    if (err instanceof ProtoDecodeError) throw new P2PError('HANDSHAKE', `malformed NodeInfo: ${err.message}`, { cause: err });
    throw err;
  }
}
