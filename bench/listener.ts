/**
 * "Is the server on this port the process we started?" for the benches (Linux /proc): the inode
 * of the socket listening on 127.0.0.1:<port> (/proc/net/tcp, state 0A) must be one of the
 * process's open file descriptors. A bench that measured whatever answered on a port could
 * measure another engineer's node, or a stale one of its own.
 */
import fs from 'node:fs';

/** /proc/net/tcp's spelling of an IPv4 address (little-endian hex). */
function procHex(ipv4: string): string {
  return ipv4
    .split('.')
    .reverse()
    .map((x) => Number(x).toString(16).toUpperCase().padStart(2, '0'))
    .join('');
}

/** Inodes of the sockets listening on `port` (on `host` if given, an IPv4 address; else any), from /proc/net/tcp and tcp6. */
export function listeningInodes(port: number, host?: string): Set<string> {
  const want = port.toString(16).toUpperCase().padStart(4, '0');
  const wantHost = host === undefined ? undefined : procHex(host);
  const out = new Set<string>();
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      const local = cols[1]!;
      const [addr, p] = [local.slice(0, local.lastIndexOf(':')), local.slice(local.lastIndexOf(':') + 1)];
      if (cols[3] === '0A' && p === want && (wantHost === undefined || addr === wantHost)) out.add(cols[9]!);
    }
  }
  return out;
}

/** Whether process `pid` holds the socket listening on `port`. */
export function listensOn(pid: number, port: number, host?: string): boolean {
  const inodes = listeningInodes(port, host);
  if (inodes.size === 0) return false;
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m && inodes.has(m[1]!)) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

/** Throws unless `pid` is the process listening on `port`. */
export function assertListener(what: string, pid: number, port: number, host?: string): void {
  if (!listensOn(pid, port, host)) throw new Error(`${what}: the server on ${host ?? ''}:${port} is not our child (pid ${pid}); refusing to measure it`);
}
