/**
 * eth_call, eth_estimateGas and eth_createAccessList: the arguments parsed here, on the RPC
 * thread; the calls themselves run on the Piscina pool's threads (`deps.calls`, the EVM call
 * worker workers/evm-call.worker.ts, which reads the committed state from LMDB opened there), or,
 * when the pool is off (CHAIND_POOL=single), inline on a warm engine of this thread. Both run the
 * same src/app/modules/evm/calls.ts. Its CallError becomes geth's error here: a revert is code 3
 * `execution reverted[: reason]` with the revert data; other failures -32000
 * (ethereum/go-ethereum:internal/ethapi/api.go, errors.go).
 */
import { CallEngine, CallError, type AccessListResult, type AccountOverride, type CallArgs, type CallRequest, type CallValue } from '../../app/modules/evm/calls.js';
import { GethRpcError } from '../jsonrpc/geth.js';
import type { EvmRpcDeps } from './deps.js';
import { arg, argError, gethError, hex } from './format.js';
import { gasLimitOf } from './view.js';

export type { AccountOverride, CallArgs, CallRequest, CallValue } from '../../app/modules/evm/calls.js';

/** TransactionArgs (internal/ethapi/transaction_args.go): `input` wins over `data` when both match. */
export function parseCallArgs(i: number, v: unknown): CallArgs {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw argError(i, 'json: cannot unmarshal non-object into Go value of type ethapi.TransactionArgs');
  const o = v as Record<string, unknown>;
  const opt = <T>(k: string, t: Parameters<typeof arg>[1]) => (o[k] === undefined || o[k] === null ? undefined : arg<T>(i, t, o[k]));
  const input = opt<Uint8Array>('input', 'data');
  const data = opt<Uint8Array>('data', 'data');
  if (input && data && hex(input) !== hex(data)) {
    throw argError(i, 'both "data" and "input" are set and not equal. Please use "input" to pass transaction call data');
  }
  return {
    from: opt('from', 'address'),
    to: opt('to', 'address'),
    gas: opt('gas', 'uint64'),
    gasPrice: opt('gasPrice', 'quantity') ?? opt('maxFeePerGas', 'quantity'),
    value: opt<bigint>('value', 'quantity') ?? 0n,
    data: input ?? data ?? new Uint8Array(0),
  };
}

/** StateOverride: address → {balance, nonce, code, state | stateDiff}. */
export function parseStateOverride(i: number, v: unknown): AccountOverride[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw argError(i, 'json: cannot unmarshal non-object into Go value of type override.StateOverride');
  const out: AccountOverride[] = [];
  for (const [addr, o] of Object.entries(v as Record<string, Record<string, unknown>>)) {
    const address = arg<Uint8Array>(i, 'address', addr);
    if (o === null || typeof o !== 'object') throw argError(i, 'json: cannot unmarshal non-object into Go value of type override.OverrideAccount');
    const slots = (m: unknown) =>
      Object.entries((m ?? {}) as Record<string, unknown>).map(([k, val]) => [arg<Uint8Array>(i, 'hash', k), arg<Uint8Array>(i, 'hash', val)] as [Uint8Array, Uint8Array]);
    if (o.state != null && o.stateDiff != null) throw gethError(`account ${hex(address)} has both 'state' and 'stateDiff'`);
    out.push({
      address,
      ...(o.balance != null ? { balance: arg<bigint>(i, 'quantity', o.balance) } : {}),
      ...(o.nonce != null ? { nonce: arg<bigint>(i, 'uint64', o.nonce) } : {}),
      ...(o.code != null ? { code: arg<Uint8Array>(i, 'data', o.code) } : {}),
      ...(o.state != null ? { state: slots(o.state) } : {}),
      ...(o.stateDiff != null ? { stateDiff: slots(o.stateDiff) } : {}),
    });
  }
  return out;
}

export function parseBlockOverrides(i: number, v: unknown): CallArgs['blockOverrides'] {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw argError(i, 'json: cannot unmarshal non-object into Go value of type override.BlockOverrides');
  const o = v as Record<string, unknown>;
  return {
    ...(o.number != null ? { number: arg<bigint>(i, 'quantity', o.number) } : {}),
    ...(o.time != null ? { time: arg<bigint>(i, 'uint64', o.time) } : {}),
    ...(o.gasLimit != null ? { gasLimit: arg<bigint>(i, 'uint64', o.gasLimit) } : {}),
    ...(o.feeRecipient != null ? { coinbase: arg<Uint8Array>(i, 'address', o.feeRecipient) } : {}),
  };
}

/**
 * Unix seconds of block `height`, the time a call at it runs with: from the block meta (its
 * header), not the whole block, remembered for the last height asked (calls cluster on latest).
 */
let lastTime: { deps: EvmRpcDeps; height: bigint; time: bigint } | undefined;
export function callTime(deps: EvmRpcDeps, height: bigint): bigint {
  if (lastTime !== undefined && lastTime.deps === deps && lastTime.height === height) return lastTime.time;
  const meta = height >= deps.blocks.base() && height <= deps.lastHeight() ? deps.blocks.loadBlockMeta(height) : null;
  if (meta === null) throw gethError('header not found');
  const time = meta.header.time / 1_000_000_000n;
  lastTime = { deps, height, time };
  return time;
}

/** The gas an unbounded call may use: `[json-rpc] gas-cap`, or the block gas limit. */
function gasCap(deps: EvmRpcDeps): bigint {
  const limit = gasLimitOf(deps);
  return deps.gasCap > 0n && deps.gasCap < limit ? deps.gasCap : limit;
}

/** The inline engine of a keeper (pool off): built once, warm across calls. */
const inlineEngines = new WeakMap<object, CallEngine>();

export function inlineEngine(deps: EvmRpcDeps): CallEngine {
  let e = inlineEngines.get(deps.keeper);
  if (e === undefined) {
    e = new CallEngine({ keeper: deps.keeper, queryContext: (h) => deps.queryContext(h), ...(deps.replayBlock !== undefined ? { replayBlock: deps.replayBlock } : {}) });
    inlineEngines.set(deps.keeper, e);
  }
  return e;
}

/**
 * `p`, or geth's timeout error after `[json-rpc] evm-timeout`. One timer and one promise per call
 * (no Promise.race, whose extra promise and reactions every eth_call paid for on the RPC thread).
 */
function withTimeout<T>(deps: EvmRpcDeps, p: Promise<T>): Promise<T> {
  if (deps.evmTimeoutMs <= 0) return p;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(gethError(`execution aborted (timeout = ${deps.evmTimeoutMs / 1000}s)`)), deps.evmTimeoutMs);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** One request to the pool (or inline), its CallError turned into geth's error. */
async function request(deps: EvmRpcDeps, kind: CallRequest['kind'], height: bigint, time: bigint, a: CallArgs): Promise<CallValue> {
  const req: CallRequest = { kind, height, latest: deps.lastHeight(), time, gasLimit: gasLimitOf(deps), gasCap: gasCap(deps), args: a };
  try {
    return await withTimeout(deps, deps.calls?.(req) ?? inlineEngine(deps).handle(req));
  } catch (e) {
    if (e instanceof CallError || (e as { code?: unknown })?.code === 'EVM_CALL_ERROR') {
      const c = e as CallError;
      throw new GethRpcError(c.rpcCode, c.message, c.data);
    }
    throw e;
  }
}

export async function ethCall(deps: EvmRpcDeps, height: bigint, time: bigint, a: CallArgs): Promise<string> {
  return (await request(deps, 'call', height, time, a)) as string;
}

/** internal/ethapi DoEstimateGas (binary search, src/app/modules/evm/calls.ts). */
export async function estimateGas(deps: EvmRpcDeps, height: bigint, time: bigint, a: CallArgs): Promise<bigint> {
  return (await request(deps, 'estimate', height, time, a)) as bigint;
}

/** internal/ethapi AccessList (src/app/modules/evm/calls.ts). */
export async function createAccessList(deps: EvmRpcDeps, height: bigint, time: bigint, a: CallArgs): Promise<AccessListResult> {
  return (await request(deps, 'accessList', height, time, a)) as AccessListResult;
}
