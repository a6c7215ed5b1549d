/**
 * Polling filters (ethereum/go-ethereum:eth/filters/api.go): eth_newFilter, eth_newBlockFilter,
 * eth_newPendingTransactionFilter, eth_getFilterChanges, eth_getFilterLogs, eth_uninstallFilter.
 * State is per node, in memory; a filter not polled for 5 minutes is dropped (geth's deadline),
 * swept lazily on each filter call, so no timer outlives the server. Log filters read the log
 * index through eth_getLogs (logs.ts); block filters the block store; pending-tx filters the
 * mempool. `[json-rpc] filter-cap` bounds how many are installed.
 */
import { randomBytes } from 'node:crypto';
import { gethMethod } from '../jsonrpc/geth.js';
import type { Route } from '../jsonrpc/methods.js';
import type { EvmRpcDeps } from './deps.js';
import { gethError, hex, qty } from './format.js';
import { getLogs } from './logs.js';
import { loadBlock } from './view.js';

const FILTER_TIMEOUT_MS = 5 * 60_000;

type Filter =
  | { kind: 'block'; last: bigint; polled: number }
  | { kind: 'pending'; seen: Set<string>; polled: number }
  | { kind: 'logs'; criteria: Record<string, unknown>; last: bigint; polled: number; once: boolean };

/** rpc/subscription.go NewID: 16 random bytes, hex, leading zeros trimmed. */
export function newId(): string {
  const h = randomBytes(16).toString('hex').replace(/^0+/, '');
  return `0x${h === '' ? '0' : h}`;
}

export function filterMethods(deps: EvmRpcDeps): Route[] {
  const filters = new Map<string, Filter>();
  const cap = deps.filterCap ?? 200;
  const sweep = () => {
    const now = Date.now();
    for (const [id, f] of filters) if (now - f.polled > FILTER_TIMEOUT_MS) filters.delete(id);
  };
  const install = (f: Filter) => {
    sweep();
    if (cap > 0 && filters.size >= cap) throw gethError(`error creating filter: max limit reached (${cap})`);
    const id = newId();
    filters.set(id, f);
    return id;
  };
  // EVM txs only (a Cosmos tx in the pool has no eth hash); each pool entry decoded once.
  const ethHashes = new WeakMap<Uint8Array, string | null>();
  const ethHashOf = (raw: Uint8Array): string | null => {
    let h = ethHashes.get(raw);
    if (h === undefined) {
      try {
        h = hex(deps.keeper.decode(raw).tx.hash());
      } catch {
        h = null;
      }
      ethHashes.set(raw, h);
    }
    return h;
  };
  const pendingHashes = () => deps.mempool.reapMaxTxs(-1).map(ethHashOf).filter((h): h is string => h !== null);
  const get = (id: string) => {
    sweep();
    const f = filters.get(id.toLowerCase());
    if (f === undefined) throw gethError('filter not found');
    f.polled = Date.now();
    return f;
  };
  return [
    gethMethod({ name: 'eth_newBlockFilter', handler: () => install({ kind: 'block', last: deps.lastHeight(), polled: Date.now() }) }),
    gethMethod({
      name: 'eth_newPendingTransactionFilter',
      params: [{ name: 'fullTx', type: 'bool', optional: true }],
      handler: () => install({ kind: 'pending', seen: new Set(pendingHashes()), polled: Date.now() }),
    }),
    gethMethod({
      name: 'eth_newFilter',
      params: [{ name: 'criteria', type: 'any' }],
      handler: ({ criteria }) => {
        // Validated now, as geth decodes FilterCriteria before installing.
        const c = (criteria ?? {}) as Record<string, unknown>;
        getLogs(deps, c.blockHash != null ? c : { ...c, fromBlock: 'latest', toBlock: 'latest' });
        return install({ kind: 'logs', criteria: c, last: deps.lastHeight(), polled: Date.now(), once: c.blockHash != null });
      },
    }),
    gethMethod({
      name: 'eth_getFilterChanges',
      params: [{ name: 'id', type: 'string' }],
      handler: ({ id }) => {
        const f = get(id);
        const head = deps.lastHeight();
        if (f.kind === 'block') {
          const out: string[] = [];
          for (let h = f.last + 1n; h <= head; h++) {
            const b = loadBlock(deps, h);
            if (b) out.push(b.hash);
          }
          f.last = head;
          return out;
        }
        if (f.kind === 'pending') {
          const now = pendingHashes();
          const fresh = now.filter((x) => !f.seen.has(x));
          f.seen = new Set(now);
          return fresh;
        }
        if (f.once) {
          if (f.last < 0n) return [];
          f.last = -1n;
          return getLogs(deps, f.criteria);
        }
        if (head <= f.last) return [];
        const from = f.last + 1n;
        f.last = head;
        return getLogs(deps, { ...f.criteria, fromBlock: qty(from), toBlock: qty(head) }).filter((l) => inRange(l, f.criteria, deps));
      },
    }),
    gethMethod({
      name: 'eth_getFilterLogs',
      params: [{ name: 'id', type: 'string' }],
      handler: ({ id }) => {
        const f = get(id);
        if (f.kind !== 'logs') throw gethError('filter not found');
        return getLogs(deps, f.criteria);
      },
    }),
    gethMethod({
      name: 'eth_uninstallFilter',
      params: [{ name: 'id', type: 'string' }],
      handler: ({ id }) => {
        sweep();
        return filters.delete(id.toLowerCase());
      },
    }),
  ];
}

/** A log filter's own fromBlock/toBlock still bound what its changes report. */
function inRange(l: unknown, c: Record<string, unknown>, deps: EvmRpcDeps): boolean {
  const n = BigInt((l as { blockNumber: string }).blockNumber);
  const bound = (v: unknown, dflt: bigint) => (typeof v === 'string' && v.startsWith('0x') ? BigInt(v) : dflt);
  return n >= bound(c.fromBlock, 0n) && n <= bound(c.toBlock, deps.lastHeight());
}
