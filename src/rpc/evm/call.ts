/**
 * eth_call and eth_estimateGas over the state after a height: a VM of its own per call, whose
 * state manager reads the app's query context (the account model's view, src/app/modules/evm
 * state.ts) and is dropped afterwards, so nothing a call does can reach a block.
 * Errors as geth words them (ethereum/go-ethereum:internal/ethapi/api.go, errors.go): a revert is
 * code 3 `execution reverted[: reason]` with the revert data; other VM failures -32000.
 */
import { createBlock } from '@ethereumjs/block';
import { createTx } from '@ethereumjs/tx';
import { Address } from '@ethereumjs/util';
import { createVM } from '@ethereumjs/vm';
import { blockHashChain } from '../../app/modules/evm/header.js';
import { ContextFlatState } from '../../app/modules/evm/state.js';
import { FlatStateManager } from '../../evm/state-manager.js';
import { GethRpcError } from '../jsonrpc/geth.js';
import type { EvmRpcDeps } from './deps.js';
import { arg, argError, gethError, hex } from './format.js';
import { gasLimitOf } from './view.js';

export interface CallArgs {
  /** eth_call's third parameter (internal/ethapi/override: StateOverride). */
  overrides?: AccountOverride[];
  /** The fourth (BlockOverrides): number, time, gasLimit, feeRecipient. */
  blockOverrides?: { number?: bigint; time?: bigint; gasLimit?: bigint; coinbase?: Uint8Array };
  from?: Uint8Array;
  to?: Uint8Array;
  gas?: bigint;
  gasPrice?: bigint;
  value: bigint;
  data: Uint8Array;
}

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

export interface AccountOverride {
  address: Uint8Array;
  balance?: bigint;
  nonce?: bigint;
  code?: Uint8Array;
  state?: [Uint8Array, Uint8Array][];
  stateDiff?: [Uint8Array, Uint8Array][];
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

const unpad = (b: Uint8Array) => {
  let z = 0;
  while (z < b.length && b[z] === 0) z++;
  return b.subarray(z);
};

interface RunResult {
  ok: boolean;
  gasUsed: bigint;
  returnValue: Uint8Array;
  error?: string;
}

/** One call on a fresh VM over the state after `height`; `gas` includes the intrinsic gas. */
/** Prague's precompiles, 0x01–0x11: warm in every tx (EIP-2929), never in an access list. */
const PRECOMPILES = Array.from({ length: 0x11 }, (_, i) => (i + 1).toString(16).padStart(40, '0'));

/** An access list as the journal keeps it: address hex → slot hexes (no 0x). */
type JournalAccessList = Map<string, Set<string>>;

async function run(deps: EvmRpcDeps, height: bigint, time: bigint, a: CallArgs, gas: bigint, list?: { warm: JournalAccessList; report: boolean }): Promise<RunResult & { accessList?: JournalAccessList }> {
  const keeper = deps.keeper;
  const view = new ContextFlatState(keeper);
  view.ctx = deps.queryContext(height);
  const sm = new FlatStateManager(view, { keccak256: (d) => keeper.crypto.keccak256(d) });
  // BLOCKHASH: the stored EVM hashes (the ones eth_getBlockByNumber reports).
  const vm = await createVM({ common: keeper.common, stateManager: sm, blockchain: blockHashChain((n) => keeper.blockHashAt(n)) as never });
  for (const o of a.overrides ?? []) {
    const addr = new Address(o.address);
    if (o.balance !== undefined || o.nonce !== undefined) {
      await sm.modifyAccountFields(addr, { ...(o.balance !== undefined ? { balance: o.balance } : {}), ...(o.nonce !== undefined ? { nonce: o.nonce } : {}) });
    }
    if (o.code !== undefined) await sm.putCode(addr, o.code);
    if (o.state !== undefined) await sm.clearStorage(addr);
    for (const [k, v] of o.state ?? o.stateDiff ?? []) await sm.putStorage(addr, k, unpad(v));
  }
  const bo = a.blockOverrides;
  const block = createBlock(
    {
      header: {
        number: bo?.number ?? height + 1n,
        timestamp: bo?.time ?? time,
        coinbase: bo?.coinbase ?? keeper.coinbase,
        gasLimit: bo?.gasLimit ?? gasLimitOf(deps),
        baseFeePerGas: 0n,
        mixHash: new Uint8Array(32),
      },
    },
    { common: keeper.common, skipConsensusFormatValidation: true },
  );
  const journal = vm.evm.journal;
  // What runTx warms before a tx runs (EIP-2929, EIP-3651): sender, recipient, coinbase, precompiles.
  const warm = [...PRECOMPILES, Buffer.from(keeper.coinbase).toString('hex')];
  if (a.from) warm.push(Buffer.from(a.from).toString('hex'));
  if (a.to) warm.push(Buffer.from(a.to).toString('hex'));
  for (const w of warm) journal.addAlwaysWarmAddress(w);
  if (list?.report) journal.startReportingAccessList();
  let listCost = 0n;
  for (const [addr, slots] of list?.warm ?? []) {
    journal.addAlwaysWarmAddress(addr, false);
    for (const slot of slots) journal.addAlwaysWarmSlot(addr, slot, false);
    listCost += 2400n + 1900n * BigInt(slots.size);
  }
  const intrinsic = intrinsicGas(deps, a) + listCost;
  if (gas < intrinsic) return { ok: false, gasUsed: gas, returnValue: new Uint8Array(0), error: `intrinsic gas too low: have ${gas}, want ${intrinsic}` };
  const caller = new Address(a.from ?? new Uint8Array(20));
  const r = await vm.evm.runCall({
    ...(a.to ? { to: new Address(a.to) } : {}),
    caller,
    origin: caller,
    data: a.data,
    value: a.value,
    gasLimit: gas - intrinsic,
    gasPrice: a.gasPrice ?? 0n,
    block,
    // the caller's balance is not checked for value transfers beyond what it holds: geth checks it
    // (core/state_transition.go buyGas); runCall does, through the state manager.
  });
  const err = r.execResult.exceptionError;
  return {
    ok: err === undefined,
    gasUsed: intrinsic + r.execResult.executionGasUsed,
    returnValue: r.execResult.returnValue,
    ...(err ? { error: err.error } : {}),
    ...(list?.report && journal.accessList ? { accessList: journal.accessList } : {}),
  };
}

function intrinsicGas(deps: EvmRpcDeps, a: CallArgs): bigint {
  const tx = createTx({ to: a.to ? new Address(a.to) : undefined, data: a.data, value: a.value, gasLimit: 0n }, { common: deps.keeper.common });
  return tx.getIntrinsicGas();
}

/** The gas an unbounded call may use: `[json-rpc] gas-cap`, or the block gas limit. */
function gasCap(deps: EvmRpcDeps): bigint {
  const limit = gasLimitOf(deps);
  return deps.gasCap > 0n && deps.gasCap < limit ? deps.gasCap : limit;
}

/** Error(string) selector and Panic(uint256) (go-ethereum accounts/abi UnpackRevert). */
function revertReason(data: Uint8Array): string | undefined {
  const h = Buffer.from(data).toString('hex');
  if (h.startsWith('08c379a0') && data.length >= 68) {
    const len = Number(BigInt(`0x${h.slice(72, 136)}`));
    if (68 + len <= data.length) return Buffer.from(data.subarray(68, 68 + len)).toString('utf8');
  }
  if (h.startsWith('4e487b71') && data.length === 36) {
    const code = BigInt(`0x${h.slice(8)}`);
    const panics: Record<string, string> = { '1': 'assert(false)', '17': 'arithmetic underflow or overflow', '18': 'division or modulo by zero', '50': 'out-of-bounds access of an array or bytesSlice' };
    return panics[code.toString()] ?? `unknown panic code: 0x${code.toString(16)}`;
  }
  return undefined;
}

function failure(r: RunResult): GethRpcError {
  if (r.error === 'revert') {
    const reason = revertReason(r.returnValue);
    return new GethRpcError(3, reason === undefined ? 'execution reverted' : `execution reverted: ${reason}`, hex(r.returnValue));
  }
  return gethError(r.error ?? 'execution failed');
}

async function withTimeout<T>(deps: EvmRpcDeps, p: Promise<T>): Promise<T> {
  if (deps.evmTimeoutMs <= 0) return p;
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(gethError(`execution aborted (timeout = ${deps.evmTimeoutMs / 1000}s)`)), deps.evmTimeoutMs);
  });
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

export async function ethCall(deps: EvmRpcDeps, height: bigint, time: bigint, a: CallArgs): Promise<string> {
  const r = await withTimeout(deps, run(deps, height, time, a, a.gas ?? gasCap(deps)));
  if (!r.ok) throw failure(r);
  return hex(r.returnValue);
}

/** internal/ethapi DoEstimateGas: the lowest gas at which the call succeeds, by binary search. */
export async function estimateGas(deps: EvmRpcDeps, height: bigint, time: bigint, a: CallArgs): Promise<bigint> {
  const hi0 = a.gas ?? gasCap(deps);
  return withTimeout(
    deps,
    (async () => {
      const first = await run(deps, height, time, a, hi0);
      // geth's shortcut: a plain transfer to an account without code costs exactly 21000.
      if (first.ok && a.to !== undefined && a.data.length === 0 && first.gasUsed === 21_000n) return 21_000n;
      if (!first.ok) {
        if (first.error === 'revert' || first.error?.startsWith('intrinsic')) throw failure(first);
        throw gethError(`gas required exceeds allowance (${hi0})`);
      }
      let lo = first.gasUsed - 1n;
      let hi = hi0;
      // geth's shortcut: the used gas plus the 63/64 reserve usually succeeds at once.
      const guess = (first.gasUsed * 64n) / 63n;
      if (guess < hi) {
        const g = await run(deps, height, time, a, guess);
        if (g.ok) hi = guess;
        else lo = guess;
      }
      while (lo + 1n < hi) {
        // stop when within 1.5% as geth does (estimateGasErrorRatio).
        if (((hi - lo) * 1000n) / hi < 15n) break;
        const mid = (lo + hi) / 2n;
        const m = await run(deps, height, time, a, mid);
        if (m.ok) hi = mid;
        else lo = mid;
      }
      return hi;
    })(),
  );
}

/**
 * eth_createAccessList (internal/ethapi AccessList): run, collect the addresses and slots touched
 * (without sender, recipient and precompiles), run again with that list warm, until it is stable;
 * the gas is the tx's with the list (its intrinsic cost included). A failing run is reported in
 * `error`, not as an RPC error.
 */
export async function createAccessList(deps: EvmRpcDeps, height: bigint, time: bigint, a: CallArgs): Promise<{ accessList: unknown[]; gasUsed: string; error?: string }> {
  const gas = a.gas ?? gasCap(deps);
  const skip = new Set([...PRECOMPILES]);
  if (a.from) skip.add(Buffer.from(a.from).toString('hex'));
  if (a.to) skip.add(Buffer.from(a.to).toString('hex'));
  let list: JournalAccessList = new Map();
  for (let round = 0; round < 8; round++) {
    const r = await withTimeout(deps, run(deps, height, time, a, gas, { warm: list, report: true }));
    // As geth's tracer starts from the previous list: the union, so the rounds converge.
    const next: JournalAccessList = new Map([...list].map(([k, v]) => [k, new Set(v)]));
    // geth's access-list tracer: excluded addresses still carry the slots they touched.
    for (const [addr, slots] of r.accessList ?? []) {
      if (skip.has(addr) && slots.size === 0) continue;
      const have = next.get(addr) ?? new Set<string>();
      for (const x of slots) have.add(x);
      next.set(addr, have);
    }
    const same = next.size === list.size && [...next].every(([k, v]) => list.get(k)?.size === v.size && [...v].every((x) => list.get(k)!.has(x)));
    if (same || !r.ok) {
      const accessList = [...next].map(([addr, slots]) => ({ address: `0x${addr}`, storageKeys: [...slots].map((x) => `0x${x.padStart(64, '0')}`) }));
      if (!same) {
        const final = await withTimeout(deps, run(deps, height, time, a, gas, { warm: next, report: false }));
        return { accessList, gasUsed: `0x${final.gasUsed.toString(16)}`, ...(final.ok ? {} : { error: failure(final).message }) };
      }
      return { accessList, gasUsed: `0x${r.gasUsed.toString(16)}`, ...(r.ok ? {} : { error: failure(r).message }) };
    }
    list = next;
  }
  throw gethError('access list did not converge');
}
