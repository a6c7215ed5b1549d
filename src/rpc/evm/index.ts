/**
 * The EVM JSON-RPC (spec §4.4): the eth, net and web3 method modules served by the geth-dialect
 * server (src/rpc/jsonrpc/geth-server.ts) at `[json-rpc] address` (HTTP and websocket on one port,
 * as geth serves both), and again at `[json-rpc] ws-address` when that is another address. The
 * namespaces served are `[json-rpc] api`; a method of a namespace not enabled is geth's -32601.
 */
import type { Logger } from '../../log.js';
import { GethRpcServer } from '../jsonrpc/geth-server.js';
import { gethTable } from '../jsonrpc/geth.js';
import type { Route } from '../jsonrpc/methods.js';
import type { EvmRpcDeps } from './deps.js';
import { ethMethods } from './eth.js';
import { netMethods } from './net.js';
import { peekEvmSubscriptions, subscribeMethods } from './subscribe.js';
import { web3Methods } from './web3.js';

export { evmRpcDeps, type EvmRpcDeps, type NodeParts } from './deps.js';

/** The namespaces with method modules so far (eth: with eth_subscribe / eth_unsubscribe, subscribe.ts). */
export const EVM_RPC_NAMESPACES = {
  eth: (d: EvmRpcDeps, log?: Logger) => [...ethMethods(d), ...subscribeMethods(d, log)],
  net: netMethods,
  web3: web3Methods,
} as const;

/** Every method of the enabled namespaces (unknown or not yet built namespaces add nothing). */
export function evmRpcMethods(deps: EvmRpcDeps, api: readonly string[], logger?: Logger): Route[] {
  const out: Route[] = [];
  for (const ns of new Set(api)) {
    const build = (EVM_RPC_NAMESPACES as Record<string, ((d: EvmRpcDeps, log?: Logger) => Route[]) | undefined>)[ns];
    if (build !== undefined) out.push(...build(deps, logger));
  }
  return out;
}

export interface EvmRpcOptions {
  deps: EvmRpcDeps;
  /** `[json-rpc] address`. */
  address: string;
  /** `[json-rpc] ws-address` ('' or the same address: none of its own). */
  wsAddress?: string;
  api: readonly string[];
  batchRequestLimit?: number;
  batchResponseMaxSize?: number;
  logger?: Logger;
}

export interface EvmRpc {
  readonly port: number;
  /** The ws-address server's port, or null when it shares `address`. */
  readonly wsPort: number | null;
  close(): Promise<void>;
}

export async function startEvmRpc(opts: EvmRpcOptions): Promise<EvmRpc> {
  const table = gethTable(evmRpcMethods(opts.deps, opts.api, opts.logger));
  const make = (laddr: string) =>
    new GethRpcServer({ laddr, methods: table, logger: opts.logger, batchItemLimit: opts.batchRequestLimit, batchResponseMaxSize: opts.batchResponseMaxSize });
  const http = make(opts.address);
  await http.start();
  let ws: GethRpcServer | null = null;
  if (opts.wsAddress && opts.wsAddress !== opts.address) {
    ws = make(opts.wsAddress);
    try {
      await ws.start();
    } catch (e) {
      await http.close();
      throw e;
    }
  }
  return {
    port: http.port,
    wsPort: ws?.port ?? null,
    close: async () => {
      // Subscriptions end before their connections (a registry exists once someone subscribed).
      peekEvmSubscriptions(opts.deps)?.close();
      await ws?.close();
      await http.close();
    },
  };
}
