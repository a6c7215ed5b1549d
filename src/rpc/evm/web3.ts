/** The `web3` namespace. */
import { VERSION } from '../../version.js';
import { gethMethod } from '../jsonrpc/geth.js';
import type { Route } from '../jsonrpc/methods.js';
import type { EvmRpcDeps } from './deps.js';
import { hex } from './format.js';

/** geth's `Geth/v1.x/linux-amd64/go1.x` shape: name/version/platform/runtime. */
export const CLIENT_VERSION = `chaind/v${VERSION}/${process.platform}-${process.arch}/node${process.versions.node}`;

export function web3Methods(deps: EvmRpcDeps): Route[] {
  return [
    gethMethod({ name: 'web3_clientVersion', handler: () => CLIENT_VERSION }),
    gethMethod({ name: 'web3_sha3', params: [{ name: 'input', type: 'data' }], handler: ({ input }) => hex(deps.keeper.crypto.keccak256(input)) }),
  ];
}
