/**
 * Network methods of the node RPC: net_info, dial_seeds and dial_peers (cometbft: rpc/core/net.go,
 * p2p/switch.go DialPeersAsync/AddPersistentPeers/AddPrivatePeerIDs/AddUnconditionalPeerIDs,
 * p2p/netaddress.go NewNetAddressString, p2p/errors.go, node/node.go Listeners/IsListening).
 *
 * net_info lists the switch's peers (src/p2p/switch.ts) in CometBFT's shape; dial_seeds and
 * dial_peers check their arguments with CometBFT's rules and error texts, record the persistent /
 * unconditional / private flags on the switch, then dial in the background and answer "Dialing …
 * in progress" (failed dials are logged, `Error dialing peer`, as CometBFT does). Without a switch
 * (bare test setups) the dials fail and are logged.
 */
import dns from 'node:dns';
import net from 'node:net';
import { goQuote } from '../../server/gojson.js';
import { goHexDecode } from '../../jsonrpc/cometbft-params.js';
import type { NetRpc } from '../context.js';
import { route, type Route } from '../../jsonrpc/methods.js';
import type { Peer } from '../../../p2p/switch.js';

/** crypto.AddressSize: a node ID is 20 bytes (40 hex characters). */
const ID_BYTE_LENGTH = 20;

/** ErrNetAddressLookup: skipped by DialPeersAsync and AddPersistentPeers. */
class LookupError extends Error {
  constructor(host: string, err: string) {
    super(`error looking up host (${host}): ${err}`);
  }
}

/** p2p/netaddress.go validateID. Returns the error text or null. */
export function validateNodeId(id: string): string | null {
  if (id.length === 0) return 'no ID';
  let bytes: Uint8Array;
  try {
    bytes = goHexDecode(id);
  } catch (e) {
    return (e as Error).message;
  }
  if (bytes.length !== ID_BYTE_LENGTH) return `invalid hex length - got ${bytes.length}, expected ${ID_BYTE_LENGTH}`;
  return null;
}

/** net.SplitHostPort with Go's AddrError texts (`address X: missing port in address`, …). */
export function goSplitHostPort(hostport: string): { host: string; port: string } | { error: string } {
  const addrErr = (why: string) => ({ error: hostport === '' ? why : `address ${hostport}: ${why}` });
  let j = 0;
  let k = 0;
  const i = hostport.lastIndexOf(':');
  if (i < 0) return addrErr('missing port in address');
  let host: string;
  if (hostport[0] === '[') {
    const end = hostport.indexOf(']');
    if (end < 0) return addrErr("missing ']' in address");
    if (end + 1 === hostport.length) return addrErr('missing port in address');
    if (end + 1 !== i) return addrErr(hostport[end + 1] === ':' ? 'too many colons in address' : 'missing port in address');
    host = hostport.slice(1, end);
    j = 1;
    k = end + 1;
  } else {
    host = hostport.slice(0, i);
    if (host.includes(':')) return addrErr('too many colons in address');
  }
  if (hostport.slice(j).includes('[')) return addrErr("unexpected '[' in address");
  if (hostport.slice(k).includes(']')) return addrErr("unexpected ']' in address");
  return { host, port: hostport.slice(i + 1) };
}

/** strconv.ParseUint(s, 10, 16): the first problem in scan order decides the error. */
export function goParsePort(s: string): number | string {
  const fail = (why: string) => `strconv.ParseUint: parsing ${goQuote(s)}: ${why}`;
  if (s === '') return fail('invalid syntax');
  let n = 0;
  for (const c of s) {
    if (c < '0' || c > '9') return fail('invalid syntax');
    n = n * 10 + (c.charCodeAt(0) - 48);
    if (n > 0xffff) return fail('value out of range');
  }
  return n;
}

/** net.ParseIP: IPv4 or IPv6 literals, without zones. */
function isGoIP(host: string): boolean {
  return !host.includes('%') && net.isIP(host) !== 0;
}

/**
 * NewNetAddressString: `[proto://]<id>@<host>:<port>`. Resolves to null when the address is
 * valid, else to its error (LookupError for a host that does not resolve).
 */
export async function checkNetAddress(addr: string, lookup: (host: string) => Promise<void>): Promise<Error | null> {
  const withoutProto = addr.includes('://') ? addr.split('://')[1]! : addr;
  const spl = withoutProto.split('@');
  if (spl.length !== 2) return new Error(`address (${addr}) does not contain ID`);
  const idErr = validateNodeId(spl[0]!);
  if (idErr !== null) return new Error(`invalid address (${withoutProto}): ${idErr}`);
  const hostport = spl[1]!;
  const hp = goSplitHostPort(hostport);
  if ('error' in hp) return new Error(`invalid address (${hostport}): ${hp.error}`);
  if (hp.host.length === 0) return new Error(`invalid address (${hostport}): host is empty`);
  const port = goParsePort(hp.port);
  // A name is looked up before the port is parsed; the lookup matters only when the port is bad,
  // since a failed lookup is skipped by the callers and a valid address dials either way.
  if (typeof port === 'string') {
    if (!isGoIP(hp.host)) {
      try {
        await lookup(hp.host);
      } catch (e) {
        return new LookupError(hp.host, (e as Error).message);
      }
    }
    return new Error(`invalid address (${hp.port}): ${port}`);
  }
  return null;
}

/** NewNetAddressStrings + "return first non-ErrNetAddressLookup error". */
async function firstAddressError(addrs: readonly string[], lookup: (host: string) => Promise<void>): Promise<Error | null> {
  const errs: Error[] = [];
  for (const a of addrs) {
    const e = await checkNetAddress(a, lookup);
    if (e !== null) errs.push(e);
  }
  return errs.find((e) => !(e instanceof LookupError)) ?? null;
}

async function dnsLookup(host: string): Promise<void> {
  await dns.promises.lookup(host, { all: true });
}

/** A peer as net_info shows it (cometbft/cometbft:rpc/core/net.go, p2p/conn/connection.go ConnectionStatus). */
function peerJson(p: Peer) {
  const ni = p.nodeInfo;
  const st = p.status();
  const monitor = (bytes: number, rate: number) => ({
    Start: new Date(Date.now() - st.durationMs).toISOString(),
    Bytes: String(bytes),
    Samples: '0',
    InstRate: String(Math.round(rate)),
    CurRate: String(Math.round(rate)),
    AvgRate: String(st.durationMs > 0 ? Math.round((bytes * 1000) / st.durationMs) : 0),
    PeakRate: String(Math.round(rate)),
    BytesRem: '0',
    Duration: String(Math.round(st.durationMs * 1e6)),
    Idle: '0',
    TimeRem: '0',
    Progress: 0,
    Active: true,
  });
  return {
    node_info: {
      protocol_version: { p2p: ni.protocolVersion.p2p.toString(), block: ni.protocolVersion.block.toString(), app: ni.protocolVersion.app.toString() },
      id: ni.id,
      listen_addr: ni.listenAddr,
      network: ni.network,
      version: ni.version,
      channels: Buffer.from(ni.channels).toString('hex'),
      moniker: ni.moniker,
      other: { tx_index: ni.other.txIndex, rpc_address: ni.other.rpcAddress },
    },
    is_outbound: p.outbound,
    connection_status: {
      Duration: String(Math.round(st.durationMs * 1e6)),
      SendMonitor: monitor(st.sendBytes, st.sendRate),
      RecvMonitor: monitor(st.recvBytes, st.recvRate),
      Channels: st.channels.map((c) => ({
        ID: c.id,
        SendQueueCapacity: String(c.sendQueueCapacity),
        SendQueueSize: String(c.sendQueueSize),
        Priority: String(c.priority),
        RecentlySent: String(c.recentlySent),
      })),
    },
    remote_ip: p.remoteIp,
  };
}

export interface NetRoutesOptions {
  /** Host name resolution for addresses with a bad port (default node:dns); tests replace it. */
  lookup?: (host: string) => Promise<void>;
}

export function netRoutes(ctx: NetRpc, opts: NetRoutesOptions = {}): Route[] {
  const log = ctx.logger;
  const lookup = opts.lookup ?? dnsLookup;

  /** DialPeersAsync: addresses are checked, then dialled in the background (failures logged). */
  const dialPeersAsync = async (addrs: readonly string[], persistent = false): Promise<void> => {
    const err = await firstAddressError(addrs, lookup);
    if (err !== null) throw err;
    const sw = ctx.p2p;
    if (sw) sw.dialPeersAsync(addrs, { persistent });
    else for (const a of addrs) log.error('Error dialing peer', { addr: a, err: 'the P2P switch is not running' });
  };

  return [
    route({
      name: 'net_info',
      // node.go: Listeners() is `Listener(@<p2p.external_address>)`; IsListening() is true once
      // the P2P transport listens, which chaind's never does.
      handler: () => {
        const sw = ctx.p2p;
        const peers = sw ? sw.peerList().map(peerJson) : [];
        return {
          listening: sw?.listening ?? false,
          listeners: [`Listener(@${ctx.config.p2p.externalAddress})`],
          n_peers: String(peers.length),
          peers,
        };
      },
    }),
    route({
      name: 'dial_seeds',
      params: [{ name: 'seeds', type: 'array' }],
      unsafe: true,
      handler: async ({ seeds }) => {
        if (seeds.length === 0) throw new Error('no seeds provided');
        log.info('DialSeeds', { seeds: seeds.join(',') });
        await dialPeersAsync(seeds);
        return { log: 'Dialing seeds in progress. See /net_info for details' };
      },
    }),
    route({
      name: 'dial_peers',
      params: [
        { name: 'peers', type: 'array' },
        { name: 'persistent', type: 'bool' },
        { name: 'unconditional', type: 'bool' },
        { name: 'private', type: 'bool' },
      ],
      unsafe: true,
      handler: async ({ peers, persistent, unconditional, private: priv }) => {
        if (peers.length === 0) throw new Error('no peers provided');
        // getIDs: only the `@` split, so a `tcp://` prefix stays in the id.
        const ids: string[] = [];
        for (const p of peers) {
          const spl = p.split('@');
          if (spl.length !== 2) throw new Error(`address (${p}) does not contain ID`);
          ids.push(spl[0]!);
        }
        log.info('DialPeers', { peers: peers.join(','), persistent, unconditional, private: priv });
        if (persistent) {
          const err = await firstAddressError(peers, lookup);
          if (err !== null) throw err;
        }
        const checkIds = () => {
          for (let i = 0; i < ids.length; i++) {
            const e = validateNodeId(ids[i]!);
            if (e !== null) throw new Error(`wrong ID #${i}: ${e}`);
          }
        };
        if (priv) {
          checkIds();
          ctx.p2p?.addPrivatePeerIds(ids);
        }
        if (unconditional) {
          checkIds();
          ctx.p2p?.addUnconditionalPeerIds(ids);
        }
        await dialPeersAsync(peers, persistent);
        return { log: 'Dialing peers in progress. See /net_info for details' };
      },
    }),
    // chaind's own, for fault tests: cut the node off its peers for `duration` ms from inside
    // (0 ends the cut).
    route({
      name: 'unsafe_p2p_isolate',
      params: [{ name: 'duration', type: 'int' }],
      unsafe: true,
      handler: ({ duration }) => {
        if (!ctx.p2p) throw new Error('no P2P switch');
        const ms = Number(duration);
        if (!(ms >= 0 && ms <= 600_000)) throw new Error('duration must be 0..600000 ms');
        ctx.p2p.isolate(ms);
        return { log: ms === 0 ? 'Isolation ended' : `Isolated from peers for ${ms} ms` };
      },
    }),
  ];
}
