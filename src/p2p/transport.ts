/**
 * Connection upgrade and TCP transport (cometbft/cometbft:p2p/transport.go MultiplexTransport):
 *
 *   TCP → SecretConnection → (outbound) remote key's ID must equal the dialled ID
 *       → NodeInfo exchange (uvarint-delimited, 10,240-byte cap) → Validate()
 *       → the NodeInfo's ID must equal the key's ID → not ourselves → CompatibleWith()
 *
 * Each of the two handshakes (SecretConnection, NodeInfo) gets the full handshake timeout, as
 * CometBFT sets a fresh deadline for each (config handshake_timeout 20 s, dial_timeout 3 s).
 * Any failure destroys the socket.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { connect, createServer, isIP, type Server, type Socket } from 'node:net';
import type { Ed25519PrivKey } from '../crypto/ed25519.js';
import { P2PError } from './errors.js';
import { MAX_NODE_INFO_SIZE, checkCompatible, decodeNodeInfoStrict, encodeNodeInfo, validateNodeInfoAsync, type NodeInfo } from './node-info.js';
import { ProtoWriter } from '../types/proto.js';
import { SecretConnection, nodeIdFromPubKey, type HandshakeOptions } from './secret-connection.js';

export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 20_000;
export const DEFAULT_DIAL_TIMEOUT_MS = 3_000;

export interface UpgradeOptions {
  nodeKey: Ed25519PrivKey;
  /** Our NodeInfo; its id must be our key's ID. */
  nodeInfo: NodeInfo;
  /** For outbound connections: the ID we meant to reach. */
  dialedId?: string;
  /** ms, per handshake phase (default 20 s). */
  handshakeTimeout?: number;
  /** DNS lookup for non-IP listen hosts in the peer's NodeInfo (default node:dns lookup). */
  lookup?: (host: string) => Promise<unknown>;
  /** Test hook passed to SecretConnection.handshake. */
  handshake?: HandshakeOptions;
}

export interface UpgradedConnection {
  conn: SecretConnection;
  /** The peer's validated NodeInfo. */
  nodeInfo: NodeInfo;
  /** The peer's ID, from its authenticated key. */
  id: string;
  outbound: boolean;
}

/** Runs `p`; if it has not settled after `ms`, destroys the socket and rejects with TIMEOUT. */
function withDeadline<T>(socket: Socket, ms: number, what: string, p: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      reject(new P2PError('TIMEOUT', `${what} timed out after ${ms} ms`));
      socket.destroy();
    }, ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        if (!timedOut) resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        if (!timedOut) reject(e);
      },
    );
  });
}

async function exchangeNodeInfo(conn: SecretConnection, ours: NodeInfo): Promise<NodeInfo> {
  const w = new ProtoWriter(256);
  w.raw(encodeNodeInfo(ours));
  conn.write(w.finishDelimited());
  return decodeNodeInfoStrict(await conn.reader.readDelimited(MAX_NODE_INFO_SIZE));
}

/** upgrade(): see the file comment. On success the connection is ready for an MConnection. */
export async function upgrade(socket: Socket, opts: UpgradeOptions): Promise<UpgradedConnection> {
  const timeout = opts.handshakeTimeout ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  try {
    const conn = await withDeadline(socket, timeout, 'secret connection handshake', SecretConnection.handshake(socket, opts.nodeKey, opts.handshake));
    const connId = conn.remoteId;
    // The dialled ID comes from our own config; hex case is not meaningful there.
    if (opts.dialedId !== undefined && connId !== opts.dialedId.toLowerCase()) {
      throw new P2PError('ID_MISMATCH', `conn.ID (${connId}) dialed ID (${opts.dialedId}) mismatch`);
    }
    const theirs = await withDeadline(socket, timeout, 'NodeInfo handshake', exchangeNodeInfo(conn, opts.nodeInfo));
    await validateNodeInfoAsync(theirs, opts.lookup ?? ((h) => dnsLookup(h)));
    // Exact string comparison, as CometBFT does: an upper-case ID in NodeInfo passes Validate()
    // but does not equal the key's (lower-case) ID.
    if (connId !== theirs.id) {
      throw new P2PError('ID_MISMATCH', `conn.ID (${connId}) NodeInfo.ID (${theirs.id}) mismatch`);
    }
    if (opts.nodeInfo.id === theirs.id) throw new P2PError('SELF', 'connected to self');
    checkCompatible(opts.nodeInfo, theirs);
    return { conn, nodeInfo: theirs, id: connId, outbound: opts.dialedId !== undefined };
  } catch (err) {
    socket.destroy();
    throw err;
  }
}

/**
 * The IP to dial for `host`: an IP literal as it is, a host name looked up now (the system
 * resolver: /etc/hosts first, so `localhost` needs no network), its first address, as CometBFT's
 * NetAddress does (cometbft/cometbft:p2p/netaddress.go NewNetAddressString: net.LookupIP, ips[0]).
 * Called at each dial, so a name that moves to another address is followed.
 */
export async function resolveHost(host: string, lookup: (host: string) => Promise<{ address: string }> = (h) => dnsLookup(h)): Promise<string> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare) !== 0) return bare;
  try {
    return (await lookup(bare)).address;
  } catch (e) {
    throw new P2PError('SOCKET', `lookup ${host}: ${(e as Error).message}`, { cause: e });
  }
}

/** Opens a TCP connection within `timeoutMs` (dial_timeout). */
export function dialTcp(host: string, port: number, timeoutMs = DEFAULT_DIAL_TIMEOUT_MS): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new P2PError('TIMEOUT', `dial ${host}:${port} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(new P2PError('SOCKET', `dial ${host}:${port}: ${err.message}`, { cause: err }));
    });
  });
}

export interface PeerAddress {
  id: string;
  host: string;
  port: number;
}

/** Parses `id@host:port` (persistent_peers / seeds entries). */
export function parsePeerAddress(s: string): PeerAddress {
  const at = s.indexOf('@');
  if (at <= 0) throw new P2PError('NODE_INFO_INVALID', `peer address ${JSON.stringify(s)} has no ID`);
  const id = s.slice(0, at).toLowerCase();
  const hp = s.slice(at + 1);
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(hp);
  if (!m || Number(m[3]) > 65535) throw new P2PError('NODE_INFO_INVALID', `peer address ${JSON.stringify(s)}: bad host:port`);
  return { id, host: (m[1] ?? m[2])!, port: Number(m[3]) };
}

/** The timeouts of a loaded `[p2p]` section (handshake_timeout, dial_timeout; ms). */
export function transportOptionsFromP2P(p2p: { handshakeTimeout: number; dialTimeout: number }): { handshakeTimeout: number; dialTimeout: number } {
  return { handshakeTimeout: p2p.handshakeTimeout, dialTimeout: p2p.dialTimeout };
}

export interface TransportOptions {
  nodeKey: Ed25519PrivKey;
  nodeInfo: NodeInfo;
  handshakeTimeout?: number;
  dialTimeout?: number;
  lookup?: (host: string) => Promise<unknown>;
}

/**
 * Listens for and dials peers, handing out upgraded connections. Accepted sockets are upgraded
 * concurrently; a failed upgrade is reported through onRejected and the socket is dropped.
 */
export class Transport {
  private server: Server | null = null;
  readonly id: string;

  constructor(private readonly opts: TransportOptions) {
    this.id = nodeIdFromPubKey(opts.nodeKey.pubKey);
    if (opts.nodeInfo.id.toLowerCase() !== this.id) throw new RangeError('nodeInfo.id is not the ID of nodeKey');
  }

  private upgradeOpts(dialedId?: string): UpgradeOptions {
    return {
      nodeKey: this.opts.nodeKey,
      nodeInfo: this.opts.nodeInfo,
      dialedId,
      handshakeTimeout: this.opts.handshakeTimeout,
      lookup: this.opts.lookup,
    };
  }

  /**
   * Starts listening; resolves with the bound port. `admit`, when given, is asked before any
   * handshake work (cometbft/cometbft:p2p/transport.go runs its connection filters before the
   * upgrade too): false closes the socket at once, so the dialler fails its dial and backs off.
   */
  listen(
    host: string,
    port: number,
    onAccept: (c: UpgradedConnection) => void,
    onRejected: (err: unknown, remote: string) => void = () => {},
    admit?: () => boolean,
  ): Promise<number> {
    if (this.server) throw new Error('already listening');
    const server = createServer((socket) => {
      const remote = `${socket.remoteAddress}:${socket.remotePort}`;
      if (admit !== undefined && !admit()) {
        socket.destroy();
        onRejected(new Error('connection refused before the handshake'), remote);
        return;
      }
      upgrade(socket, this.upgradeOpts()).then(onAccept, (err) => onRejected(err, remote));
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        // Later listener failures (accept errors such as EMFILE) are reported, not thrown.
        server.on('error', (err) => onRejected(err, `${host}:${port}`));
        const addr = server.address();
        resolve(typeof addr === 'object' && addr ? addr.port : port);
      });
    });
  }

  /** Dials `addr`; a host name is resolved first (resolveHost). */
  async dial(addr: PeerAddress): Promise<UpgradedConnection> {
    const ip = await resolveHost(addr.host);
    const socket = await dialTcp(ip, addr.port, this.opts.dialTimeout ?? DEFAULT_DIAL_TIMEOUT_MS);
    return upgrade(socket, this.upgradeOpts(addr.id));
  }

  /** Stops accepting; existing connections are the caller's. */
  close(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return Promise.resolve();
    return new Promise((resolve) => s.close(() => resolve()));
  }
}
