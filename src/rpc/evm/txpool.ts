/**
 * The `txpool` namespace over the EVM tx pool (src/mempool/evm_pool.ts), in geth's shapes
 * (ethereum/go-ethereum:internal/ethapi/api.go TxPoolAPI; cosmos/evm:rpc/backend/tx_pool.go):
 * `content` / `inspect` map each sender (EIP-55) to its txs by decimal nonce, split into `pending`
 * (executable from the account's nonce) and `queued` (behind a nonce gap); `contentFrom` is one
 * sender's two maps; `status` counts both as quantities. Served only when `[json-rpc] api` lists
 * `txpool`. A node without an EVM pool answers empty maps.
 */
import { toChecksumAddress } from '@ethereumjs/util';
import type { EvmPoolEntry } from '../../mempool/evm_pool.js';
import { gethMethod } from '../jsonrpc/geth.js';
import type { Route } from '../jsonrpc/methods.js';
import type { EvmRpcDeps } from './deps.js';
import { hex, qty } from './format.js';
import { txJson } from './view.js';

type Maps<T> = { pending: Record<string, Record<string, T>>; queued: Record<string, Record<string, T>> };

/** geth's inspect line: `<to>: <value> wei + <gas> gas × <price> wei` (the fee cap as the price of a dynamic-fee tx). */
export function inspectLine(e: Pick<EvmPoolEntry, 'info'>): string {
  const i = e.info;
  const tail = `${i.value} wei + ${i.gasLimit} gas \u00d7 ${i.feeCap} wei`;
  return i.to === null ? `contract creation: ${tail}` : `${toChecksumAddress(i.to)}: ${tail}`;
}

export function txpoolMethods(deps: EvmRpcDeps): Route[] {
  const k = deps.keeper;
  const txObject = (e: EvmPoolEntry) => {
    const etx = k.decode(e.tx);
    k.sender(etx);
    return txJson(etx.tx, undefined, undefined);
  };
  const byNonce = <T>(list: EvmPoolEntry[], f: (e: EvmPoolEntry) => T): Record<string, T> => {
    const out: Record<string, T> = {};
    for (const e of list) out[e.info.nonce.toString()] = f(e);
    return out;
  };
  const maps = <T>(f: (e: EvmPoolEntry) => T): Maps<T> => {
    const out: Maps<T> = { pending: {}, queued: {} };
    const c = deps.txpool?.content();
    if (c === undefined) return out;
    for (const [addr, list] of c.pending) out.pending[toChecksumAddress(addr)] = byNonce(list, f);
    for (const [addr, list] of c.queued) out.queued[toChecksumAddress(addr)] = byNonce(list, f);
    return out;
  };
  return [
    gethMethod({
      name: 'txpool_status',
      handler: () => {
        const s = deps.txpool?.stats() ?? { pending: 0, queued: 0 };
        return { pending: qty(BigInt(s.pending)), queued: qty(BigInt(s.queued)) };
      },
    }),
    gethMethod({ name: 'txpool_content', handler: () => maps(txObject) }),
    gethMethod({ name: 'txpool_inspect', handler: () => maps(inspectLine) }),
    gethMethod({
      name: 'txpool_contentFrom',
      params: [{ name: 'address', type: 'address' }],
      handler: ({ address }) => {
        const c = deps.txpool?.content(hex(address).toLowerCase());
        const one = (m: Map<string, EvmPoolEntry[]> | undefined) => byNonce([...(m?.values() ?? [])].flat(), txObject);
        return { pending: one(c?.pending), queued: one(c?.queued) };
      },
    }),
  ];
}
