/**
 * Peer network addresses as PEX exchanges them (`<id>@<ip>:<port>`) and CometBFT's rules for them
 * (cometbft/cometbft:p2p/netaddress.go Valid, Routable, Local and the RFC ranges).
 *
 * Only IP literals are addresses here. Host names in seeds, persistent_peers and dial_peers are
 * resolved when dialled (src/p2p/transport.ts resolveHost) and go into the book as the IP they
 * resolved to; a host name a peer reports in its NodeInfo is not looked up for the book.
 */
import { BlockList, isIP } from 'node:net';
import type { NetAddress } from '../messages/pex.js';
import { parseListenAddress } from '../../config/address.js';

export type { NetAddress } from '../messages/pex.js';

/** `id@ip:port`, IPv6 in brackets (NetAddress.String). */
export function netAddressString(a: NetAddress): string {
  return `${a.id}@${dialString(a)}`;
}

/** `ip:port` (NetAddress.DialString). */
export function dialString(a: NetAddress): string {
  return isIP(a.ip) === 6 ? `[${a.ip}]:${a.port}` : `${a.ip}:${a.port}`;
}

/** An IPv4-mapped IPv6 address (::ffff:1.2.3.4) is the IPv4 address, as Go's net.IP treats it. */
export function normalizeIp(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return m ? m[1]! : ip.toLowerCase();
}

function subnets(list: [string, number, 'ipv4' | 'ipv6'][]): BlockList {
  const b = new BlockList();
  for (const [ip, prefix, type] of list) b.addSubnet(ip, prefix, type);
  return b;
}

/** Addresses Valid() refuses: unspecified, broadcast, RFC3849 documentation. */
const INVALID = subnets([
  ['0.0.0.0', 32, 'ipv4'],
  ['255.255.255.255', 32, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
]);

/** Local(): loopback and 0.0.0.0/8. */
const LOCAL = subnets([
  ['127.0.0.0', 8, 'ipv4'],
  ['0.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
]);

/** Not routable: RFC1918, RFC3927, RFC4862, RFC4193, RFC4843 (and Local). */
const UNROUTABLE = subnets([
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['fe80::', 64, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['2001:10::', 28, 'ipv6'],
]);

function family(ip: string): 'ipv4' | 'ipv6' | null {
  const v = isIP(ip);
  return v === 4 ? 'ipv4' : v === 6 ? 'ipv6' : null;
}

/** Why the address is not valid (NetAddress.Valid), or null. Port 0 is refused too: it cannot be dialled. */
export function netAddressError(a: NetAddress): string | null {
  if (!/^[0-9a-f]{40}$/.test(a.id)) return `invalid peer ID ${JSON.stringify(a.id)}`;
  const f = family(a.ip);
  if (f === null) return `invalid IP ${JSON.stringify(a.ip)}`;
  if (INVALID.check(a.ip, f)) return `invalid IP ${a.ip}`;
  if (!Number.isInteger(a.port) || a.port < 1 || a.port > 65535) return `invalid port ${a.port}`;
  return null;
}

export function isLocal(a: NetAddress): boolean {
  const f = family(a.ip);
  return f !== null && LOCAL.check(a.ip, f);
}

/** NetAddress.Routable: valid, not local, not in a private or link-local range. */
export function isRoutable(a: NetAddress): boolean {
  if (netAddressError(a) !== null) return false;
  const f = family(a.ip)!;
  return !LOCAL.check(a.ip, f) && !UNROUTABLE.check(a.ip, f);
}

/**
 * A NetAddress from `id` and a listen address (`tcp://ip:port`), as NodeInfo.NetAddress builds
 * it for an inbound peer; null when the host is not an IP literal or the result is not valid.
 */
export function netAddressFromListen(id: string, listenAddr: string): NetAddress | null {
  try {
    const { host, port } = parseListenAddress(listenAddr, '');
    const a = { id: id.toLowerCase(), ip: normalizeIp(host), port };
    return netAddressError(a) === null ? a : null;
  } catch {
    return null;
  }
}

/** A NetAddress from a checked message field set: IDs lower-cased, IPs normalised. */
export function normalizeNetAddress(a: NetAddress): NetAddress {
  return { id: a.id.toLowerCase(), ip: normalizeIp(a.ip), port: a.port };
}
