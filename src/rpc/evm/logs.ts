/**
 * eth_getLogs, served from the EVM module's log index (evm_receipts: the logs of each height, in
 * block order), never by re-executing blocks. Filter rules as geth's (ethereum/go-ethereum:
 * eth/filters/filter.go filterLogs): `address` one or any of several; `topics` by position, `null`
 * a wildcard, an array a set of alternatives; `blockHash` excludes fromBlock/toBlock. Caps:
 * `[json-rpc] block-range-cap` and `logs-cap` (Cosmos EVM's, 10,000 each by default).
 */
import type { EvmRpcDeps } from './deps.js';
import { arg, argError, gethError, hex, qty } from './format.js';
import { GETH_CODES, GethRpcError } from '../jsonrpc/geth.js';
import { blockTime, heightByBlockHash, loadBlock } from './view.js';

const DEFAULT_CAP = 10_000;

interface LogFilter {
  from: bigint;
  to: bigint;
  addresses: Set<string> | undefined;
  topics: (Set<string> | undefined)[];
}

const invalidParams = (m: string) => new GethRpcError(GETH_CODES.INVALID_PARAMS, m);

function parseFilter(deps: EvmRpcDeps, v: unknown): LogFilter {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw argError(0, 'json: cannot unmarshal non-object into Go value of type filters.FilterCriteria');
  const o = v as Record<string, unknown>;
  const latest = deps.lastHeight();
  const blockOf = (x: unknown): bigint => {
    if (x === undefined || x === null) return latest;
    const b = arg<bigint | string>(0, 'block', x);
    if (typeof b === 'bigint') return b;
    if (b === 'earliest') return deps.blocks.base();
    if (b === 'pending') throw argError(0, 'pending logs are not supported');
    return latest;
  };
  let from: bigint;
  let to: bigint;
  if (o.blockHash !== undefined && o.blockHash !== null) {
    if ((o.fromBlock ?? null) !== null || (o.toBlock ?? null) !== null) {
      throw argError(0, 'cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other');
    }
    const h = heightByBlockHash(deps, arg<Uint8Array>(0, 'hash', o.blockHash));
    if (h === null || h > latest) throw gethError('unknown block');
    from = to = h;
  } else {
    from = blockOf(o.fromBlock);
    to = blockOf(o.toBlock);
    if (from > to) throw invalidParams('invalid block range params');
    if (to > latest) throw invalidParams('block range extends beyond current head block');
    const cap = BigInt(deps.blockRangeCap ?? DEFAULT_CAP);
    if (cap > 0n && to - from > cap) throw invalidParams(`exceed max block range ${cap}`);
  }
  let addresses: Set<string> | undefined;
  if (o.address !== undefined && o.address !== null) {
    const list = Array.isArray(o.address) ? o.address : [o.address];
    addresses = new Set(list.map((a) => hex(arg<Uint8Array>(0, 'address', a))));
    if (addresses.size === 0) addresses = undefined;
  }
  const topics: (Set<string> | undefined)[] = [];
  if (o.topics !== undefined && o.topics !== null) {
    if (!Array.isArray(o.topics)) throw argError(0, 'invalid topic(s)');
    if (o.topics.length > 4) throw argError(0, 'exceed max topics');
    for (const pos of o.topics) {
      if (pos === null) topics.push(undefined);
      else if (Array.isArray(pos)) topics.push(pos.some((x) => x === null) ? undefined : new Set(pos.map((x) => hex(arg<Uint8Array>(0, 'hash', x)))));
      else topics.push(new Set([hex(arg<Uint8Array>(0, 'hash', pos))]));
    }
  }
  return { from: from < 1n ? 1n : from, to, addresses, topics };
}

export function getLogs(deps: EvmRpcDeps, criteria: unknown): unknown[] {
  const f = parseFilter(deps, criteria);
  const cap = deps.logsCap ?? DEFAULT_CAP;
  const out: unknown[] = [];
  for (let h = f.from; h <= f.to; h++) {
    const summary = deps.keeper.blockSummary(h);
    if (summary === undefined || summary.logCount === 0) continue;
    const logs = deps.keeper.blockLogs(h);
    let receipts: ReturnType<typeof deps.keeper.blockReceipts> | undefined;
    let b: ReturnType<typeof loadBlock> | undefined;
    logs.forEach((l, logIndex) => {
      if (f.addresses && !f.addresses.has(hex(l.address))) return;
      for (let i = 0; i < f.topics.length; i++) {
        const want = f.topics[i];
        if (want === undefined) continue;
        const got = l.topics[i];
        if (got === undefined || !want.has(hex(got))) return;
      }
      receipts ??= deps.keeper.blockReceipts(h);
      b ??= loadBlock(deps, h);
      if (cap > 0 && out.length >= cap) throw gethError(`query returned more than ${cap} results`);
      out.push({
        address: hex(l.address),
        topics: l.topics.map(hex),
        data: hex(l.data),
        blockNumber: qty(h),
        transactionHash: hex(receipts[l.txIndex]!.ethHash),
        transactionIndex: qty(l.txIndex),
        blockHash: b ? b.hash : null,
        blockTimestamp: b ? qty(blockTime(b)) : null,
        logIndex: qty(logIndex),
        removed: false,
      });
    });
  }
  return out;
}
