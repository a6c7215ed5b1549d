/**
 * The EVM JSON-RPC (spec §4.4): the eth, net, web3, txpool, personal and miner method modules served by the geth-dialect
 * server (src/rpc/jsonrpc/geth-server.ts) at `[json-rpc] address` (HTTP and websocket on one port,
 * as geth serves both), and again at `[json-rpc] ws-address` when that is another address. The
 * namespaces served are `[json-rpc] api`; a method of a namespace not enabled is geth's -32601.
 *
 * Private methods (status.ts isPrivateMethod: personal_*, debug_*, eth_sign and the other signing
 * methods) need `Authorization: Bearer <JWT>` signed with config/jwt.hex, under geth's rules
 * (ethereum/go-ethereum:node/jwt_handler.go via verifyJwt's `geth` mode); public methods need none on any listen address
 * (docs/ARCHITECTURE.md, "EVM JSON-RPC authentication").
 */
import { verifyJwt } from '../../config/jwt.js';
import type { Logger } from '../../log.js';
import { GethRpcServer, type GethRpcAuth } from '../jsonrpc/geth-server.js';
import { gethTable } from '../jsonrpc/geth.js';
import type { Route, RouteContext } from '../jsonrpc/methods.js';
import type { EvmRpcDeps } from './deps.js';
import { debugNodeMethods } from './debug-node.js';
import { debugTraceMethods } from './debug-trace.js';
import { ethMethods, notImplemented } from './eth.js';
import { netMethods } from './net.js';
import { personalMethods } from './personal.js';
import { AddrLocker, signMethods, type SignerEnv } from './sign.js';
import { isPrivateMethod, notImplementedIn } from './status.js';
import { peekEvmSubscriptions, subscribeMethods } from './subscribe.js';
import { txpoolMethods } from './txpool.js';
import { web3Methods } from './web3.js';

export { evmRpcDeps, type EvmRpcDeps, type NodeParts } from './deps.js';

type Build = (d: EvmRpcDeps, s: Signing, log?: Logger) => Route[];

/** The namespaces with method modules so far (eth: with eth_subscribe / eth_unsubscribe, subscribe.ts). */
export const EVM_RPC_NAMESPACES: Readonly<Record<string, Build>> = {
  eth: (d, s, log) => [...s.eth(), ...signMethods(s.env, s.locker), ...subscribeMethods(d, log)],
  net: netMethods,
  web3: web3Methods,
  txpool: txpoolMethods,
  personal: (_d, s) => personalMethods(s.env, s.locker, { allowInsecureUnlock: s.allowInsecureUnlock }),
  // Raw data and profiling the node (debug-node.ts) and the tracers (debug-trace.ts); private:
  // JWT (status.ts).
  debug: (d, _s, log) => [...debugNodeMethods(d, log), ...debugTraceMethods(d)],
  // Nothing mines on a BFT chain: the spec's N (status.ts).
  miner: () => notImplementedIn('miner').map(notImplemented),
};

/** What the signing methods of eth and personal share: eth's own routes, one nonce lock. */
interface Signing {
  eth(): Route[];
  env: SignerEnv;
  locker: AddrLocker;
  allowInsecureUnlock: boolean;
}

function signing(deps: EvmRpcDeps): Signing {
  let routes: Map<string, Route> | undefined;
  let list: Route[] | undefined;
  const eth = () => (list ??= ethMethods(deps));
  const call = async (name: string, args: Record<string, unknown>, ctx: RouteContext): Promise<unknown> => {
    routes ??= new Map(eth().map((r) => [r.name, r]));
    return routes.get(name)!.handler(args as never, ctx);
  };
  const env: SignerEnv = {
    deps,
    keystore: deps.keystore,
    pendingNonce: async (address, ctx) => BigInt((await call('eth_getTransactionCount', { address, block: 'pending' }, ctx)) as string),
    suggestTip: async (ctx) => BigInt((await call('eth_maxPriorityFeePerGas', {}, ctx)) as string),
    submit: async (raw, ctx) => (await call('eth_sendRawTransaction', { tx: raw }, ctx)) as string,
  };
  return { eth, env, locker: new AddrLocker(), allowInsecureUnlock: deps.allowInsecureUnlock ?? true };
}

/** Every method of the enabled namespaces (unknown or not yet built namespaces add nothing). */
export function evmRpcMethods(deps: EvmRpcDeps, api: readonly string[], logger?: Logger): Route[] {
  const out: Route[] = [];
  const s = signing(deps);
  for (const ns of new Set(api)) {
    const build = EVM_RPC_NAMESPACES[ns];
    if (build !== undefined) out.push(...build(deps, s, logger));
  }
  return out;
}

/**
 * The JWT check of private methods: `Authorization: Bearer <token>` (ethereum/go-ethereum:node/jwt_handler.go), HS256 over `secret`, geth's ±60 s `iat` rule. Without a secret every
 * private call is refused.
 */
export function evmRpcAuth(secret: Uint8Array | undefined): GethRpcAuth {
  return {
    isPrivate: isPrivateMethod,
    verify: (authorization) => {
      // node/jwt_handler.go: "bearer " in any case, the rest trimmed.
      const token = authorization.length >= 7 && authorization.slice(0, 7).toLowerCase() === 'bearer ' ? authorization.slice(7).trim() : '';
      if (token === '') return 'missing token';
      if (secret === undefined) return 'no JWT secret configured';
      const v = verifyJwt(token, secret, { geth: true });
      if (v.ok) return null;
      // golang-jwt/jwt v4's words where geth passes them on.
      if (v.code === 'JWT_SIGNATURE') return 'signature is invalid';
      if (v.code === 'JWT_MALFORMED' && token.split('.').length !== 3) return 'token contains an invalid number of segments';
      return v.reason;
    },
  };
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
  /** `[json-rpc] http-timeout`, ms: an HTTP call running longer is answered -32002. 0/absent: none. */
  httpTimeout?: number;
  logger?: Logger;
  /** config/jwt.hex's secret, for private methods; none: every private call is refused. */
  jwtSecret?: Uint8Array;
  /** Called once, on the first method call of any client (node.ts warms the eth_call workers). */
  onFirstCall?: () => void;
}

export interface EvmRpc {
  readonly port: number;
  /** The ws-address server's port, or null when it shares `address`. */
  readonly wsPort: number | null;
  close(): Promise<void>;
}

/** The EVM methods that may stream a result (debug-trace.ts, through raw-json.ts streamScope). */
const mayStream = (method: string): boolean => method.startsWith('debug_');

export async function startEvmRpc(opts: EvmRpcOptions): Promise<EvmRpc> {
  let routes = evmRpcMethods(opts.deps, opts.api, opts.logger);
  const first = opts.onFirstCall;
  if (first !== undefined) {
    let called = false;
    routes = routes.map((r) => ({
      ...r,
      handler: (args: Parameters<Route['handler']>[0], ctx: RouteContext) => {
        if (!called) {
          called = true;
          first();
        }
        return r.handler(args, ctx);
      },
    }));
  }
  const table = gethTable(routes);
  const auth = evmRpcAuth(opts.jwtSecret);
  const make = (laddr: string) =>
    new GethRpcServer({ laddr, methods: table, logger: opts.logger, batchItemLimit: opts.batchRequestLimit, batchResponseMaxSize: opts.batchResponseMaxSize, auth, streams: mayStream, httpTimeoutMs: opts.httpTimeout });
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
      opts.deps.keystore?.close();
    },
  };
}
