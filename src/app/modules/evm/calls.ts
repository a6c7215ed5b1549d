/**
 * The read-only EVM calls behind eth_call, eth_estimateGas and eth_createAccessList, over the
 * committed state after a height. Runs where it is given a keeper and query contexts: on the
 * Piscina pool's threads (workers/evm-call.worker.ts, over the node's LMDB opened there), or
 * inline on the RPC thread when the pool is off (src/rpc/evm/call.ts).
 *
 * A `CallEngine` is warm: ONE VM (Common, EVM, interpreter tables) and one FlatStateManager per
 * engine, built once. Its caches (accounts, slots, code) hold committed reads at the bound height
 * and are dropped when the height (or the latest height, whose snapshot the reads come from)
 * moves. Each call runs under one checkpoint of the state manager that is reverted afterwards, so
 * what a call (or its state overrides) writes never reaches the next call, while what it READ stays
 * cached. The EVM's own per-call state (journal, warm sets, transient storage) is reset before each
 * call, which is what a fresh VM per call gave before.
 *
 * Errors as geth words them (ethereum/go-ethereum:internal/ethapi/api.go, errors.go): a revert is
 * code 3 `execution reverted[: reason]` with the revert data; other failures -32000. They are
 * thrown as CallError (plain data: it crosses the thread boundary), which the RPC layer turns
 * into its GethRpcError.
 */
import type { Block } from '@ethereumjs/block';
import { createBlock } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { Address } from '@ethereumjs/util';
import { createVM, type VM } from '@ethereumjs/vm';
import type { Context } from '../../context.js';
import { FastCaller, inPrecompileRange } from '../../../evm/fast-call.js';
import { installFastSteps } from '../../../evm/fast-steps.js';
import { installJumpDestCache } from '../../../evm/jumpdests.js';
import { FlatStateManager } from '../../../evm/state-manager.js';
import { blockHashChain } from './header.js';
import type { EvmKeeper } from './keeper.js';
import { ContextFlatState } from './state.js';
import { runTrace, type TraceSpec, type TraceValue } from './trace.js';
import { hex0x as hex } from '../../../crypto/bytes.js';

export interface AccountOverride {
  address: Uint8Array;
  balance?: bigint;
  nonce?: bigint;
  code?: Uint8Array;
  state?: [Uint8Array, Uint8Array][];
  stateDiff?: [Uint8Array, Uint8Array][];
}

export interface CallArgs {
  /** eth_call's third parameter (internal/ethapi/override: StateOverride). */
  overrides?: AccountOverride[] | undefined;
  /** The fourth (BlockOverrides): number, time, gasLimit, feeRecipient. */
  blockOverrides?: { number?: bigint; time?: bigint; gasLimit?: bigint; coinbase?: Uint8Array } | undefined;
  from?: Uint8Array;
  to?: Uint8Array;
  gas?: bigint;
  gasPrice?: bigint;
  value: bigint;
  data: Uint8Array;
}

/** One request, as plain data (structured clone: bigint and Uint8Array survive). */
export interface CallRequest {
  /** trace: a debug_trace* request (trace.ts), its details in `trace`. */
  kind: 'call' | 'estimate' | 'accessList' | 'trace';
  /** The state height (already resolved and checked by the RPC thread). */
  height: bigint;
  /** The RPC thread's latest committed height when it sent the request. */
  latest: bigint;
  /** The block's time (the next block's header carries it). */
  time: bigint;
  /** The block gas limit (consensus block.max_gas, or 2^62 when unlimited). */
  gasLimit: bigint;
  /** The gas of a call without `gas`: `[json-rpc] gas-cap`, or the block gas limit. */
  gasCap: bigint;
  args: CallArgs;
  trace?: TraceSpec;
}

export type AccessListResult = { accessList: { address: string; storageKeys: string[] }[]; gasUsed: string; error?: string };
export type CallValue = string | bigint | AccessListResult | TraceValue;

/** A geth JSON-RPC error as plain data: `rpcCode` 3 (revert, with `data`) or -32000. */
export class CallError extends Error {
  override readonly name = 'CallError';
  readonly code = 'EVM_CALL_ERROR';
  constructor(
    readonly rpcCode: number,
    message: string,
    readonly data?: string,
  ) {
    super(message);
  }
}

const DEFAULT_ERROR = -32000;
const unprefixedHex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
};

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
  accessList?: JournalAccessList;
}

/** Prague's precompiles, 0x01–0x11: warm in every tx (EIP-2929), never in an access list. */
const PRECOMPILES = Array.from({ length: 0x11 }, (_, i) => (i + 1).toString(16).padStart(40, '0'));

const ZERO_ADDRESS = new Uint8Array(20);
const EMPTY_BYTES = new Uint8Array(0);

/** The slot set of the kept always-warm addresses: empty, and never added to (see run()). */
const EMPTY_SLOTS: Set<string> = new Set();

/** An access list as the journal keeps it: address hex → slot hexes (no 0x). */
type JournalAccessList = Map<string, Set<string>>;

/**
 * CallEngine.warmUp's contract: an ERC-20 `balanceOf(address)` as solc lays it out, by hand
 * (selector dispatch with SHR/EQ/JUMPI, the address masked, the mapping slot keccak256(holder,
 * 0), SLOAD, the word returned); any other selector reverts. Placed at WARM_ADDRESS by a state
 * override, so nothing of it is ever stored.
 */
const WARM_CODE = Uint8Array.from([
  0x60, 0x00, 0x35, 0x60, 0xe0, 0x1c, // selector = calldata[0..4]
  0x80, 0x63, 0x70, 0xa0, 0x82, 0x31, 0x14, 0x60, 0x14, 0x57, // balanceOf? jump to 0x14
  0x60, 0x00, 0x80, 0xfd, // else revert(0, 0)
  0x5b, 0x50, 0x60, 0x04, 0x35, // 0x14: JUMPDEST, POP, calldata[4..36]
  0x73, ...new Array<number>(20).fill(0xff), 0x16, // AND with the 20-byte mask
  0x60, 0x00, 0x52, 0x60, 0x00, 0x60, 0x20, 0x52, // mstore(0, holder), mstore(32, 0)
  0x60, 0x40, 0x60, 0x00, 0x20, 0x54, // sload(keccak256(0, 64))
  0x60, 0x00, 0x52, 0x60, 0x20, 0x60, 0x00, 0xf3, // mstore(0, balance), return(0, 32)
]);
const WARM_SELECTOR = Uint8Array.from([0x70, 0xa0, 0x82, 0x31]);
/** The warm-up calls' address; the override replaces whatever state it has, for those calls only. */
const WARM_ADDRESS = Uint8Array.from({ length: 20 }, (_, i) => (i === 19 ? 0x0e : 0xee));

/** Past this many cached accounts at one height, the caches start over (bounded memory). */
const MAX_CACHED_ACCOUNTS = 100_000;

/** What the engine reads: the keeper (account model, Common, coinbase) and contexts at a height. */
export interface CallEngineSource {
  keeper: EvmKeeper;
  queryContext(height: bigint): Context;
  /**
   * BaseApp.replayBlockTxs: txs [0, upTo) of the block at `height` (time in ns) replayed over a
   * never-written branch of height - 1; the context reads that branch. Tracing uses it for a
   * block with Cosmos txs (trace.ts); without it those are not replayed.
   */
  replayBlock?(height: bigint, time: bigint, txs: Uint8Array[], upTo: number): Promise<{ ctx: Context; logs: number; lastOk: boolean; changed(): Map<string, Uint8Array[]> }>;
}

/**
 * CallEngineSource.replayBlock over a BaseApp's replayBlockTxs; `logs` counts the EVM logs of the
 * replayed txs (their `tx_log` events), the traced tx's first log index.
 */
export function appBlockReplay(app: {
  replayBlockTxs(hdr: { height: bigint; time: bigint }, txs: Uint8Array[], upTo: number): Promise<{ ctx: Context; results: { code: number; events: { type: string }[] }[]; changed(): Map<string, Uint8Array[]> }>;
}): NonNullable<CallEngineSource['replayBlock']> {
  return async (height, time, txs, upTo) => {
    const r = await app.replayBlockTxs({ height, time }, txs, upTo);
    let logs = 0;
    for (const x of r.results) for (const e of x.events) if (e.type === 'tx_log') logs++;
    const last = r.results[r.results.length - 1];
    return { ctx: r.ctx, logs, lastOk: last === undefined || last.code === 0, changed: r.changed };
  };
}

interface Warm {
  common: Common;
  vm: VM;
  sm: FlatStateManager;
  view: ContextFlatState;
  /** The synchronous interpreter of plain read-only calls (src/evm/fast-call.ts), if the fork allows. */
  fast: FastCaller | undefined;
}

export class CallEngine {
  private warm: Promise<Warm> | undefined;
  private bound: { height: bigint; latest: bigint } | undefined;
  private blockCache: { number: bigint; timestamp: bigint; gasLimit: bigint; coinbase: Uint8Array; common: Common; block: Block } | undefined;
  /** Calls run one at a time: they share the VM. */
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * eth_call tries src/evm/fast-call.ts's interpreter first (a call without value or overrides
   * to plain code), and runs the library only for what it does not cover. False: every call
   * through the library (the bench and the tests compare the two).
   */
  fastCalls = true;

  constructor(private readonly src: CallEngineSource) {}

  /**
   * Builds the VM now (start-up), so that the first call does not pay for it. With `at` (the
   * committed height to read), it also runs `at.calls` throw-away calls of WARM_CODE, placed by a
   * state override at a scratch address, so that V8 has compiled the call path (the EVM's
   * runCall/_executeCall/runInterpreter, the interpreter loop, the opcode and gas handlers, this
   * engine, the state manager, src/evm/fast-call.ts's interpreter) before the first real call:
   * measured on the call worker, a cold thread spent its first seconds of calls compiling
   * (TurboFan on V8's helper threads was about 40 % of their time, a third of all the process's
   * CPU per call over a 4 s run, against about 15 % once warm). Nothing of it stays: each call is
   * reverted like any other, and the caches start over after.
   */
  async warmUp(at?: { height: bigint; latest: bigint; time: bigint; calls: number }): Promise<void> {
    const w = await this.engine();
    if (at === undefined || at.calls <= 0) return;
    const holder = new Uint8Array(32);
    for (let i = 0; i < at.calls; i++) {
      holder[28] = i >> 24;
      holder[29] = (i >> 16) & 0xff;
      holder[30] = (i >> 8) & 0xff;
      holder[31] = i & 0xff;
      const data = new Uint8Array(36);
      data.set(WARM_SELECTOR, 0);
      data.set(holder, 4);
      await this.handle({
        kind: 'call',
        height: at.height,
        latest: at.latest,
        time: at.time,
        gasLimit: 30_000_000n,
        gasCap: 30_000_000n,
        args: { to: WARM_ADDRESS, data, value: 0n, overrides: [{ address: WARM_ADDRESS, code: WARM_CODE }] },
      }).catch(() => undefined);
      // The override sends those through the library; the fast interpreter runs the same code
      // directly (no state: every slot reads as empty).
      w.fast?.run({ code: WARM_CODE, address: WARM_ADDRESS, caller: ZERO_ADDRESS, origin: ZERO_ADDRESS, data, gasLimit: 1_000_000n, gasPrice: 0n, block: { number: at.height + 1n, timestamp: at.time, gasLimit: 30_000_000n }, sload: () => EMPTY_BYTES });
    }
    w.sm.clearCaches();
    this.bound = undefined;
  }

  /** Answers one request; throws CallError with geth's code and text. */
  handle(req: CallRequest): Promise<CallValue> {
    const p = this.queue.then(() => this.handleNow(req));
    this.queue = p.catch(() => undefined);
    return p;
  }

  private async handleNow(req: CallRequest): Promise<CallValue> {
    switch (req.kind) {
      case 'call': {
        const gas = req.args.gas ?? req.gasCap;
        const r = (await this.fastRun(req, gas)) ?? (await this.run(req, gas));
        if (!r.ok) throw failure(r);
        return hex(r.returnValue);
      }
      case 'estimate':
        return this.estimate(req);
      case 'accessList':
        return this.accessList(req);
      case 'trace':
        return runTrace(this, req);
    }
  }

  /**
   * The warm VM bound to the state of `height`, for `f` (debug tracing, trace.ts), inside one
   * checkpoint of the state manager that is reverted afterwards, as a call's is. Runs in the
   * engine's queue (the caller is handleNow).
   */
  async session<T>(height: bigint, latest: bigint, f: (w: { vm: VM; sm: FlatStateManager; common: Common; keeper: EvmKeeper }) => Promise<T>, ctx?: Context): Promise<T> {
    const w = await this.engine();
    if (ctx !== undefined) {
      // A replayed block's branch (replayBlock): read through it, and rebind after.
      w.view.ctx = ctx;
      w.sm.clearCaches();
      this.bound = undefined;
    } else this.bind(w, height, latest);
    const { sm, vm } = w;
    vm.evm.journal.cleanJournal();
    delete vm.evm.journal.accessList;
    (vm.evm as unknown as { transientStorage: { clear(): void } }).transientStorage.clear();
    sm.originalStorageCache.clear();
    await sm.checkpoint();
    try {
      return await f({ vm, sm, common: w.common, keeper: this.src.keeper });
    } finally {
      while (sm.checkpointDepth > 0) await sm.revert();
      sm.discardReverted();
      sm.originalStorageCache.clear();
      if (ctx !== undefined) {
        w.view.ctx = undefined;
        sm.clearCaches();
      }
    }
  }

  /** The source's block replay (BaseApp.replayBlockTxs), if it has one. */
  get replayBlock(): CallEngineSource['replayBlock'] {
    return this.src.replayBlock?.bind(this.src);
  }

  private async engine(): Promise<Warm> {
    const common = this.src.keeper.common;
    let w = this.warm === undefined ? undefined : await this.warm;
    if (w === undefined || w.common !== common) {
      // The chain id changed (genesis) or first use: one VM, kept.
      const keeper = this.src.keeper;
      const view = new ContextFlatState(keeper);
      const sm = new FlatStateManager(view, { keccak256: (d) => keeper.crypto.keccak256(d) });
      // BLOCKHASH: the stored EVM hashes (the ones eth_getBlockByNumber reports).
      this.warm = Promise.all([installJumpDestCache(), installFastSteps()])
        .then(() => createVM({ common, stateManager: sm, blockchain: blockHashChain((n) => keeper.blockHashAt(n)) as never }))
        .then((vm) => ({ common, vm, sm, view, fast: FastCaller.create(vm.evm, common) }));
      this.bound = undefined;
      w = await this.warm;
    }
    return w;
  }

  /** The precompiles and the coinbase, always warm; `fresh`: each with its own slot set. */
  private warmTemplate: { coinbase: Uint8Array; map: Map<string, Set<string>> } | undefined;
  private warmBase(fresh: boolean): Map<string, Set<string>> {
    const coinbase = this.src.keeper.coinbase;
    if (this.warmTemplate?.coinbase !== coinbase) {
      const map = new Map<string, Set<string>>(PRECOMPILES.map((p) => [p, EMPTY_SLOTS]));
      const cb = Buffer.from(coinbase).toString('hex');
      if (!map.has(cb)) map.set(cb, EMPTY_SLOTS);
      this.warmTemplate = { coinbase, map };
    }
    const base = this.warmTemplate.map;
    if (!fresh) return base;
    return new Map([...base.keys()].map((k) => [k, new Set<string>()]));
  }

  /** Binds the state of `height` (as seen with `latest` committed); drops the caches if it moved. */
  private bind(w: Warm, height: bigint, latest: bigint): void {
    const b = this.bound;
    if (b !== undefined && b.height === height && b.latest === latest && w.sm.cachedAccounts < MAX_CACHED_ACCOUNTS) return;
    w.view.ctx = this.src.queryContext(height);
    w.sm.clearCaches();
    this.bound = { height, latest };
  }

  private block(req: CallRequest, common: Common): Block {
    const bo = req.args.blockOverrides;
    const coinbase = this.src.keeper.coinbase;
    const number = bo?.number ?? req.height + 1n;
    const timestamp = bo?.time ?? req.time;
    const gasLimit = bo?.gasLimit ?? req.gasLimit;
    const cb = bo?.coinbase ?? coinbase;
    // createBlock copies the Common (and rebuilds its parameter cache): once per height, not per call.
    const c = this.blockCache;
    if (c !== undefined && c.common === common && c.number === number && c.timestamp === timestamp && c.gasLimit === gasLimit && sameBytes(c.coinbase, cb)) return c.block;
    const header = { number, timestamp, coinbase: cb, gasLimit, baseFeePerGas: 0n, mixHash: new Uint8Array(32) };
    const block = createBlock({ header }, { common, skipConsensusFormatValidation: true });
    this.blockCache = { number: header.number, timestamp: header.timestamp, gasLimit: header.gasLimit, coinbase: header.coinbase, common, block };
    return block;
  }

  /**
   * An eth_call through src/evm/fast-call.ts, when it is one that interpreter may take: to an
   * address with code (not a precompile), no value, no state or block overrides. Undefined: run()
   * must answer it (the interpreter met something it does not cover, or the call is not one it
   * takes). It writes nothing, so run() starts from the same state.
   */
  private async fastRun(req: CallRequest, gas: bigint): Promise<RunResult | undefined> {
    const a = req.args;
    if (!this.fastCalls || a.to === undefined || a.value !== 0n || (a.overrides !== undefined && a.overrides.length > 0) || a.blockOverrides !== undefined) return undefined;
    if (inPrecompileRange(a.to)) return undefined;
    const w = await this.engine();
    if (w.fast === undefined) return undefined;
    this.bind(w, req.height, req.latest);
    const { sm, common } = w;
    const intrinsic = intrinsicGas(common, a);
    if (gas < intrinsic) return undefined;
    const code = sm.getCodeSync(a.to);
    if (code.length === 0) return undefined;
    const caller = a.from ?? ZERO_ADDRESS;
    const to = new Address(a.to);
    const r = w.fast.run({
      code,
      address: a.to,
      caller,
      origin: caller,
      data: a.data,
      gasLimit: gas - intrinsic,
      gasPrice: a.gasPrice ?? 0n,
      block: this.block(req, common).header,
      sload: (key) => sm.getStorageSync(to, key),
    });
    if (r === undefined) return undefined;
    return { ok: r.error === undefined, gasUsed: intrinsic + r.executionGasUsed, returnValue: r.returnValue, ...(r.error !== undefined ? { error: r.error } : {}) };
  }

  /** One call over the bound state; `gas` includes the intrinsic gas. Nothing it writes survives it. */
  private async run(req: CallRequest, gas: bigint, list?: { warm: JournalAccessList; report: boolean }): Promise<RunResult> {
    const w = await this.engine();
    this.bind(w, req.height, req.latest);
    const { sm, vm, common } = w;
    const a = req.args;
    const evm = vm.evm;
    const journal = evm.journal;
    // What a fresh VM would start with: an empty journal (warm sets, touched accounts), no access
    // list being reported, empty transient storage, no remembered original slot values.
    journal.cleanJournal();
    delete journal.accessList;
    // EIP-1153 storage is the EVM class's (not on EVMInterface).
    (evm as unknown as { transientStorage: { clear(): void } }).transientStorage.clear();
    sm.originalStorageCache.clear();
    await sm.checkpoint();
    let added: string[] | undefined;
    try {
      if (a.overrides !== undefined && a.overrides.length > 0) await applyOverrides(sm, a);
      const block = this.block(req, common);
      // What runTx warms before a tx runs (EIP-2929, EIP-3651): sender, recipient, coinbase,
      // precompiles. The precompiles and the coinbase are one kept map instead of 18
      // addAlwaysWarmAddress calls (each a hex-prefix regex and a new Set); the call's sender and
      // recipient are added to it and taken out again afterwards. Nothing else writes the
      // always-warm map during a call (runTx's access lists do, in traces, whose sessions start
      // from the library's own fresh map); a run that warms slots (an access list) gets a map
      // and slot sets of its own.
      const fresh = list !== undefined && list.warm.size > 0;
      const warm = this.warmBase(fresh);
      setAlwaysWarm(journal, warm);
      for (let i = 0; i < 2; i++) {
        const x = i === 0 ? a.from : a.to;
        if (x === undefined) continue;
        const k = unprefixedHex(x);
        if (warm.has(k)) continue;
        warm.set(k, fresh ? new Set() : EMPTY_SLOTS);
        if (!fresh) (added ??= []).push(k);
      }
      if (list?.report) journal.startReportingAccessList();
      let listCost = 0n;
      for (const [addr, slots] of list?.warm ?? []) {
        journal.addAlwaysWarmAddress(addr, false);
        for (const slot of slots) journal.addAlwaysWarmSlot(addr, slot, false);
        listCost += 2400n + 1900n * BigInt(slots.size);
      }
      const intrinsic = intrinsicGas(common, a) + listCost;
      if (gas < intrinsic) return { ok: false, gasUsed: gas, returnValue: new Uint8Array(0), error: `intrinsic gas too low: have ${gas}, want ${intrinsic}` };
      const caller = new Address(a.from ?? new Uint8Array(20));
      const r = await evm.runCall({
        ...(a.to ? { to: new Address(a.to) } : {}),
        caller,
        origin: caller,
        data: a.data,
        value: a.value,
        gasLimit: gas - intrinsic,
        gasPrice: a.gasPrice ?? 0n,
        block,
        // the caller's balance is checked for a value transfer, as geth does
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
    } finally {
      // Undo every write of the call and its overrides; reads stay cached. At depth 0 only the
      // dirty marks the reverted writes left remain: dropped (discardReverted, not a flush()
      // whose result would be thrown away). A call that threw inside the EVM may leave its own
      // checkpoints open: unwind them all.
      if (added !== undefined) for (const k of added) this.warmTemplate?.map.delete(k);
      while (sm.checkpointDepth > 0) await sm.revert();
      sm.discardReverted();
      sm.originalStorageCache.clear();
    }
  }

  /** internal/ethapi DoEstimateGas: the lowest gas at which the call succeeds, by binary search. */
  private async estimate(req: CallRequest): Promise<bigint> {
    const a = req.args;
    const hi0 = a.gas ?? req.gasCap;
    const first = await this.run(req, hi0);
    // geth's shortcut: a plain transfer to an account without code costs exactly 21000.
    if (first.ok && a.to !== undefined && a.data.length === 0 && first.gasUsed === 21_000n) return 21_000n;
    if (!first.ok) {
      if (first.error === 'revert' || first.error?.startsWith('intrinsic')) throw failure(first);
      throw new CallError(DEFAULT_ERROR, `gas required exceeds allowance (${hi0})`);
    }
    let lo = first.gasUsed - 1n;
    let hi = hi0;
    // geth's shortcut: the used gas plus the 63/64 reserve usually succeeds at once.
    const guess = (first.gasUsed * 64n) / 63n;
    if (guess < hi) {
      const g = await this.run(req, guess);
      if (g.ok) hi = guess;
      else lo = guess;
    }
    while (lo + 1n < hi) {
      // stop when within 1.5% as geth does (estimateGasErrorRatio).
      if (((hi - lo) * 1000n) / hi < 15n) break;
      const mid = (lo + hi) / 2n;
      const m = await this.run(req, mid);
      if (m.ok) hi = mid;
      else lo = mid;
    }
    return hi;
  }

  /**
   * eth_createAccessList (internal/ethapi AccessList): run, collect the addresses and slots touched
   * (without sender, recipient and precompiles), run again with that list warm, until it is stable;
   * the gas is the tx's with the list (its intrinsic cost included). A failing run is reported in
   * `error`, not as an RPC error.
   */
  private async accessList(req: CallRequest): Promise<AccessListResult> {
    const a = req.args;
    const gas = a.gas ?? req.gasCap;
    const skip = new Set([...PRECOMPILES]);
    if (a.from) skip.add(Buffer.from(a.from).toString('hex'));
    if (a.to) skip.add(Buffer.from(a.to).toString('hex'));
    let list: JournalAccessList = new Map();
    for (let round = 0; round < 8; round++) {
      const r = await this.run(req, gas, { warm: list, report: true });
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
          const final = await this.run(req, gas, { warm: next, report: false });
          return { accessList, gasUsed: `0x${final.gasUsed.toString(16)}`, ...(final.ok ? {} : { error: failure(final).message }) };
        }
        return { accessList, gasUsed: `0x${r.gasUsed.toString(16)}`, ...(r.ok ? {} : { error: failure(r).message }) };
      }
      list = next;
    }
    throw new CallError(DEFAULT_ERROR, 'access list did not converge');
  }
}

/** The journal's always-warm addresses (a private field of @ethereumjs/evm's Journal), set whole. */
function setAlwaysWarm(journal: object, warm: Map<string, Set<string>>): void {
  (journal as { alwaysWarmJournal: Map<string, Set<string>> }).alwaysWarmJournal = warm;
}

/**
 * The tx's intrinsic gas as @ethereumjs/tx's getIntrinsicGas counts it for a call (no access list,
 * no authorizations): txGas, calldata (EIP-2028), creation and initcode words (EIP-3860), from the
 * engine's Common. Building a tx to ask it copies the Common, which cost more than the call itself.
 */
function intrinsicGas(common: Common, a: CallArgs): bigint {
  let fee = common.param('txGas');
  const zero = common.param('txDataZeroGas');
  const nonZero = common.param('txDataNonZeroGas');
  for (let i = 0; i < a.data.length; i++) fee += a.data[i] === 0 ? zero : nonZero;
  if (a.to === undefined) {
    fee += common.param('txCreationGas');
    if (common.isActivatedEIP(3860)) fee += common.param('initCodeWordGas') * BigInt(Math.ceil(a.data.length / 32));
  }
  return fee;
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

function failure(r: RunResult): CallError {
  if (r.error === 'revert') {
    const reason = revertReason(r.returnValue);
    return new CallError(3, reason === undefined ? 'execution reverted' : `execution reverted: ${reason}`, hex(r.returnValue));
  }
  return new CallError(DEFAULT_ERROR, r.error ?? 'execution failed');
}

/** eth_call's state overrides (internal/ethapi/override), on the session's checkpoint. */
export async function applyOverrides(sm: FlatStateManager, a: CallArgs): Promise<void> {
  for (const o of a.overrides ?? []) {
    const addr = new Address(o.address);
    if (o.balance !== undefined || o.nonce !== undefined) {
      await sm.modifyAccountFields(addr, { ...(o.balance !== undefined ? { balance: o.balance } : {}), ...(o.nonce !== undefined ? { nonce: o.nonce } : {}) });
    }
    if (o.code !== undefined) await sm.putCode(addr, o.code);
    if (o.state !== undefined) await sm.clearStorage(addr);
    for (const [k, v] of o.state ?? o.stateDiff ?? []) await sm.putStorage(addr, k, unpad(v));
  }
}
