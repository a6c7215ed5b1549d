/** Listen and peer addresses in config files. */

export interface ListenAddress {
  host: string;
  port: number;
}

/** Host used when an address has none (`:26660`). chaind's choice: loopback, not every interface
 * (Go's net.Listen would bind all of them). Services that should be reachable from other machines
 * must say so with an explicit host such as `0.0.0.0`. */
export const DEFAULT_LISTEN_HOST = '127.0.0.1';

/**
 * Parse `tcp://host:port`, `host:port`, `[::1]:port` or `:port`. Only TCP is served (uWS and
 * node:net); `unix://` and other schemes are rejected. Throws an Error with the reason.
 */
export function parseListenAddress(s: string, defaultHost = DEFAULT_LISTEN_HOST): ListenAddress {
  let rest = s.trim();
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(rest);
  if (scheme) {
    if (scheme[1]!.toLowerCase() !== 'tcp') throw new Error(`unsupported scheme "${scheme[1]}" (only tcp)`);
    rest = rest.slice(scheme[0].length);
  }
  let host: string;
  let portText: string;
  if (rest.startsWith('[')) {
    const end = rest.indexOf(']');
    if (end < 0 || rest[end + 1] !== ':') throw new Error('want [ipv6]:port');
    host = rest.slice(1, end);
    portText = rest.slice(end + 2);
  } else {
    const colon = rest.lastIndexOf(':');
    if (colon < 0) throw new Error('missing port');
    host = rest.slice(0, colon);
    portText = rest.slice(colon + 1);
    if (host.includes(':')) throw new Error('IPv6 hosts must be in brackets');
  }
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) throw new Error(`invalid port "${portText}"`);
  if (host !== '' && !/^[A-Za-z0-9.:_-]+$/.test(host)) throw new Error(`invalid host "${host}"`);
  return { host: host === '' ? defaultHost : host, port: Number(portText) };
}

/** A peer address `<node id>@host:port` (cometbft: p2p/netaddress.go); the id is 40 hex chars. */
export interface PeerAddress {
  id: string;
  host: string;
  port: number;
}

export function parsePeerAddress(s: string): PeerAddress {
  const at = s.indexOf('@');
  if (at < 0) throw new Error('want <node id>@host:port');
  const id = s.slice(0, at).toLowerCase();
  if (!/^[0-9a-f]{40}$/.test(id)) throw new Error(`invalid node id "${s.slice(0, at)}" (want 40 hex characters)`);
  const addr = parseListenAddress(s.slice(at + 1), '');
  if (addr.host === '') throw new Error('missing host');
  if (addr.port === 0) throw new Error('port must not be 0');
  return { id, host: addr.host, port: addr.port };
}
