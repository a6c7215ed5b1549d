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

/** The address and topic part of a filter (lower-case 0x hex), shared with `logs` subscriptions. */
export interface AddressTopicFilter {
  /** Any of these addresses; undefined: any address. */
  addresses: Set<string> | undefined;
  /** By position: any of the set; undefined: a wildcard. */
  topics: (Set<string> | undefined)[];
}

interface LogFilter extends AddressTopicFilter {
  from: bigint;
  to: bigint;
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
  const { addresses, topics } = parseAddressTopics(0, o);
  return { from: from < 1n ? 1n : from, to, addresses, topics };
}

/** `address` (one or several) and `topics` (positions of one, several or null) of argument `i`. */
export function parseAddressTopics(i: number, o: Record<string, unknown>): AddressTopicFilter {
  let addresses: Set<string> | undefined;
  if (o.address !== undefined && o.address !== null) {
    const list = Array.isArray(o.address) ? o.address : [o.address];
    addresses = new Set(list.map((a) => hex(arg<Uint8Array>(i, 'address', a))));
    if (addresses.size === 0) addresses = undefined;
  }
  const topics: (Set<string> | undefined)[] = [];
  if (o.topics !== undefined && o.topics !== null) {
    if (!Array.isArray(o.topics)) throw argError(i, 'invalid topic(s)');
    if (o.topics.length > 4) throw argError(i, 'exceed max topics');
    for (const pos of o.topics) {
      if (pos === null) topics.push(undefined);
      else if (Array.isArray(pos)) topics.push(pos.some((x) => x === null) ? undefined : new Set(pos.map((x) => hex(arg<Uint8Array>(i, 'hash', x)))));
      else topics.push(new Set([hex(arg<Uint8Array>(i, 'hash', pos))]));
    }
  }
  return { addresses, topics };
}

/** geth's filterLogs rule for one log: its address among the addresses, each topic position matched. */
export function logMatches(f: AddressTopicFilter, address: string, topics: readonly string[]): boolean {
  if (f.addresses && !f.addresses.has(address)) return false;
  for (let i = 0; i < f.topics.length; i++) {
    const want = f.topics[i];
    if (want === undefined) continue;
    const got = topics[i];
    if (got === undefined || !want.has(got)) return false;
  }
  return true;
}

/** One log of the index in geth's Log JSON (gen_log_json.go), with its block-wide index. */
export interface LogView {
  address: string;
  topics: string[];
  json: Record<string, unknown>;
}

/** Every log of block `h` as LogView, in logIndex order (the `logs` subscription's source). */
export function blockLogViews(deps: EvmRpcDeps, h: bigint, b: ReturnType<typeof loadBlock>): LogView[] {
  const summary = deps.keeper.blockSummary(h);
  if (summary === undefined || summary.logCount === 0) return [];
  const receipts = deps.keeper.blockReceipts(h);
  return deps.keeper.blockLogs(h).map((l, logIndex) => {
    const address = hex(l.address);
    const topics = l.topics.map(hex);
    return { address, topics, json: logJson(address, topics, l, h, receipts[l.txIndex]!.ethHash, b, logIndex) };
  });
}

function logJson(address: string, topics: string[], l: { data: Uint8Array; txIndex: number }, h: bigint, txHash: Uint8Array, b: ReturnType<typeof loadBlock>, logIndex: number): Record<string, unknown> {
  return {
    address,
    topics,
    data: hex(l.data),
    blockNumber: qty(h),
    transactionHash: hex(txHash),
    transactionIndex: qty(l.txIndex),
    blockHash: b ? b.hash : null,
    blockTimestamp: b ? qty(blockTime(b)) : null,
    logIndex: qty(logIndex),
    removed: false,
  };
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
      const address = hex(l.address);
      const topics = l.topics.map(hex);
      if (!logMatches(f, address, topics)) return;
      receipts ??= deps.keeper.blockReceipts(h);
      b ??= loadBlock(deps, h);
      if (cap > 0 && out.length >= cap) throw gethError(`query returned more than ${cap} results`);
      out.push(logJson(address, topics, l, h, receipts[l.txIndex]!.ethHash, b, logIndex));
    });
  }
  return out;
}
