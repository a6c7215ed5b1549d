/**
 * A thin adapter over uWebSockets.js (the Truffle build, the one that loads on Debian 12's glibc:
 * ../shared/reference/anchors.md §0.1). Every server of the node goes through here, so swapping the
 * transport stays a one-file change.
 *
 * Hygiene, as uWS requires (STYLE.md item 10): an abort handler on every response not answered at
 * once; request headers read synchronously; writes after an await wrapped in cork(); no write
 * after an abort.
 */
import { createRequire } from 'node:module';
import type * as UWS from '@trufflesuite/uws-js-unofficial';

const require = createRequire(import.meta.url);
export const uws = require('@trufflesuite/uws-js-unofficial') as typeof UWS;

export type TemplatedApp = UWS.TemplatedApp;
export type HttpResponse = UWS.HttpResponse;
export type HttpRequest = UWS.HttpRequest;

export interface ListenAddr {
  host: string;
  port: number;
}

/** Parses `tcp://127.0.0.1:26657`, `127.0.0.1:9090`, `:26660` or `[::1]:8545`. */
export function parseListenAddr(addr: string, field = 'address'): ListenAddr {
  const rest = addr.replace(/^(tcp|http|ws):\/\//, '');
  const m = /^(\[[^\]]*\]|[^:]*):(\d+)$/.exec(rest);
  if (!m) throw new Error(`${field}: invalid listen address "${addr}" (want host:port)`);
  const port = Number(m[2]);
  if (port > 65535) throw new Error(`${field}: invalid port in "${addr}"`);
  let host = m[1]!.replace(/^\[|\]$/g, '');
  if (host === '') host = '127.0.0.1';
  return { host, port };
}

export interface Listening {
  host: string;
  port: number;
  close(): void;
}

/** Starts listening; resolves with the bound port (useful with port 0), rejects when the bind fails. */
export function listen(app: TemplatedApp, addr: ListenAddr, what: string): Promise<Listening> {
  return new Promise((resolve, reject) => {
    app.listen(addr.host, addr.port, (socket) => {
      if (!socket) {
        reject(new Error(`${what}: cannot listen on ${addr.host}:${addr.port} (address in use or not permitted)`));
        return;
      }
      const port = uws.us_socket_local_port(socket);
      let closed = false;
      resolve({
        host: addr.host,
        port,
        close() {
          if (closed) return;
          closed = true;
          uws.us_listen_socket_close(socket);
          // Open keep-alive connections would hold the process; close() ends them all.
          (app as unknown as { close?: () => void }).close?.();
        },
      });
    });
  });
}

/** Writes a complete response; safe to call after an await (corks) and after an abort (no-op). */
export function send(
  res: HttpResponse,
  state: { aborted: boolean },
  status: string,
  headers: Record<string, string>,
  body: string | Uint8Array,
): void {
  if (state.aborted) return;
  res.cork(() => {
    res.writeStatus(status);
    for (const k in headers) res.writeHeader(k, headers[k]!);
    res.end(body);
  });
}
