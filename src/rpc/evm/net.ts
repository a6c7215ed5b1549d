/** The `net` namespace: the network id is the EVM chain id (as geth's net_version with --networkid = chain id). */
import { gethMethod } from '../jsonrpc/geth.js';
import type { Route } from '../jsonrpc/methods.js';
import type { EvmRpcDeps } from './deps.js';
import { qty } from './format.js';

export function netMethods(deps: EvmRpcDeps): Route[] {
  return [
    gethMethod({ name: 'net_version', handler: () => deps.keeper.chainId.toString() }),
    gethMethod({ name: 'net_listening', handler: () => true }),
    gethMethod({ name: 'net_peerCount', handler: () => qty(deps.peerCount()) }),
  ];
}
