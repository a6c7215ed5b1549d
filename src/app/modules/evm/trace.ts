/**
 * debug_traceTransaction, debug_traceBlock* and debug_traceCall, where eth_call runs: on the warm
 * CallEngine (calls.ts) of a pool thread (workers/evm-call.worker.ts) or of the RPC thread when
 * the pool is off. The state is the committed state after the block's parent; the block's earlier
 * EVM transactions are replayed on it first (without tracing), then the traced one runs under
 * the tracer (src/evm/tracers), as geth's eth/tracers/api.go traceTx does over the parent's state
 * (ethereum/go-ethereum:eth/tracers/api.go). Everything written is reverted afterwards.
 *
 * A block that holds Cosmos txs too (bank sends, their fees and sequence bumps, authz…) is
 * replayed by BaseApp instead (baseapp.ts replayBlockTxs, through CallEngineSource.replayBlock):
 * its txs before the traced one, Cosmos and EVM in block order, run in Simulate mode on a branch
 * of the parent's state that is never written (the EVM keeper's pending block is not touched),
 * and the traced tx runs over that branch (CallEngine.session's context argument). A traced block
 * replays so for each of its EVM txs, and debug_intermediateRoots computes each root from the
 * branch's changed keys over the parent's root (EvmKeeper.rootOver). The block's BeginBlock runs
 * first, as in the block. Still unlike the block: a tx that ran out of gas or that the VM refused
 * there replays as in a simulation (no gas limit; a refused EVM tx is dropped, not charged).
 *
 * The timeout is checked at every opcode of the traced tx (geth stops the EVM the same way:
 * `execution timeout`). The result travels back as JSON text in parts (RawJson): a struct log of
 * many steps is built as text once, never as an object graph to clone and stringify again, and
 * a single HTTP request gets it streamed in chunks (workers/evm-call.worker.ts, raw-json.ts).
 */
import { createBlock } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { createLegacyTx, type TypedTransaction } from '@ethereumjs/tx';
import { Address, eoaCode7702RecoverAuthority, hexToBytes, KECCAK256_NULL, type PrefixedHexString } from '@ethereumjs/util';
import { runTx, type VM } from '@ethereumjs/vm';
import type { FlatStateManager } from '../../../evm/state-manager.js';
import { createTracer, drive, toJsonParts, TraceAbort, TracerError, type StateReader, type TxContext } from '../../../evm/tracers/index.js';
import type { TraceConfig } from '../../../evm/tracers/index.js';
import { sendParts, STREAM_MIN_CHARS } from '../../../evm/tracers/raw-json.js';
import type { MessagePort } from 'node:worker_threads';
import { createAddress } from '../../../evm/tracers/driver.js';
import { EMPTY_TRIE_ROOT, StateTrie } from '../../../evm/trie.js';
import type { AccountRecord, FlatState, StateChanges, StorageChange } from '../../../evm/flat-state.js';
import { overlayKV } from '../../../evm/kv.js';
import type { ContextFlatState } from './state.js';
import { gethVmError } from '../../../evm/tracers/types.js';
import { applyOverrides, CallError, type CallArgs, type CallEngine, type CallRequest } from './calls.js';
import { withSender, type EvmKeeper } from './keeper.js';
import { hex0x as hex } from '../../../crypto/bytes.js';

export interface TraceBlockEnv {
  number: bigint;
  /** Unix seconds. */
  time: bigint;
  gasLimit: bigint;
  /** The EVM block hash (tracer context: flatCallTracer's blockHash), if the block is committed. */
  hash?: Uint8Array;
}

export interface TraceSpec {
  /** roots: debug_intermediateRoots, the state root after each of `txs` (no tracer runs). */
  mode: 'tx' | 'block' | 'call' | 'roots';
  block: TraceBlockEnv;
  /** The block's EVM txs (raw envelopes), in order: replayed, and traced (tx: `target`; block: all). */
  txs: Uint8Array[];
  target?: number;
  /** roots mode: the state root of the parent (the state the block starts from). */
  parentRoot?: Uint8Array;
  /**
   * Where to stream a large result (a pool thread's end of a MessageChannel, in the job's transfer
   * list): the parts go through it in chunks (raw-json.ts sendParts) and the answer is `streamed`.
   */
  stream?: MessagePort;
  /** call mode: the message; its overrides apply before it runs. */
  call?: CallArgs;
  config: TraceConfig;
  /**
   * A block with Cosmos txs too: all its txs (Cosmos tx bytes, in block order), `positions[k]` the
   * index there of `txs[k]`, and the block time in ns. The txs before a traced one are then
   * replayed by BaseApp (CallEngineSource.replayBlock) instead of the EVM txs alone.
   */
  blockTxs?: Uint8Array[];
  positions?: number[];
  timeNs?: bigint;
  /** Set by runTrace: the txs before `target` are applied (a replayed branch); their log count. */
  replayed?: { logs: number };
}

/**
 * The trace as JSON text in parts, whose concatenation is the result (tx, call: one result;
 * block: geth's `[{txHash, result|error}]`; roots: the list of roots). Parts, not one string: a
 * struct log of 100,000 steps is streamed to the socket from them (raw-json.ts).
 */
export interface TraceValue {
  traceParts: string[];
  /** The parts went through `TraceSpec.stream` instead (traceParts is empty). */
  streamed?: boolean;
}

interface Env {
  vm: VM;
  sm: FlatStateManager;
  common: Common;
  keeper: EvmKeeper;
}

const unpad = (b: Uint8Array) => {
  let z = 0;
  while (z < b.length && b[z] === 0) z++;
  return b.subarray(z);
};

function stateReader(sm: FlatStateManager): StateReader {
  return {
    sync: {
      balance: (a) => sm.getAccountRecord(a)?.balance ?? 0n,
      nonce: (a) => sm.getAccountRecord(a)?.nonce ?? 0n,
      code: (a) => sm.getCodeSync(a),
      storage: (a, k) => {
        const v = sm.getStorageSync(new Address(Uint8Array.from(a)), k);
        const out = new Uint8Array(32);
        out.set(v.subarray(Math.max(0, v.length - 32)), 32 - Math.min(32, v.length));
        return out;
      },
      exists: (a) => sm.getAccountRecord(a) !== undefined,
    },
    account: async (addr) => {
      const a = new Address(Uint8Array.from(addr));
      const acc = await sm.getAccount(a);
      if (acc === undefined) return undefined;
      return { balance: acc.balance, nonce: acc.nonce, codeHash: acc.codeHash, code: await sm.getCode(a) };
    },
    storage: async (addr, slot) => {
      const v = await sm.getStorage(new Address(Uint8Array.from(addr)), slot);
      const out = new Uint8Array(32);
      out.set(v.subarray(Math.max(0, v.length - 32)), 32 - Math.min(32, v.length));
      return out;
    },
  };
}


export async function runTrace(engine: CallEngine, req: CallRequest): Promise<TraceValue> {
  const spec = req.trace;
  if (spec === undefined) throw new CallError(-32000, 'trace request without a trace');
  // The tracer is built first: a bad name or config fails before any work (geth's order).
  if (spec.mode !== 'roots') makeTracer(spec.config, Date.now() + spec.config.timeoutMs);
  const { stream, ...rest } = spec;
  const replay = engine.replayBlock;
  const mixed = replay !== undefined && rest.blockTxs !== undefined && rest.positions !== undefined && rest.mode !== 'call';
  const v = mixed ? await traceReplayed(engine, replay, rest, req) : await engine.session(req.height, req.latest, (env) => traceIn(env, rest, req));
  if (stream === undefined) return v;
  let size = 0;
  for (const p of v.traceParts) size += p.length;
  if (size < STREAM_MIN_CHARS) {
    stream.close();
    return v;
  }
  // Sent after the session, within the job (see sendParts); the RPC thread starts reading at the
  // first chunk, without waiting for this answer.
  await sendParts(stream, v.traceParts);
  return { traceParts: [], streamed: true };
}

/**
 * A traced tx of a block with Cosmos txs: BaseApp replays the block's txs before it (Cosmos and
 * EVM, in block order) on a branch of the parent's state, and the tx runs under the tracer over
 * that branch. A traced block does so for each of its EVM txs (a replay per tx: quadratic in the
 * block's size, only for mixed blocks; blocks of EVM txs alone take the single-session path).
 */
async function traceReplayed(engine: CallEngine, replay: NonNullable<CallEngine['replayBlock']>, spec: TraceSpec, req: CallRequest): Promise<TraceValue> {
  const one = async (target: number): Promise<TraceValue> => {
    const r = await replay(spec.block.number, spec.timeNs ?? spec.block.time * 1_000_000_000n, spec.blockTxs!, spec.positions![target]!);
    return engine.session(req.height, req.latest, (env) => traceIn(env, { ...spec, mode: 'tx', target, replayed: { logs: r.logs } }, req), r.ctx);
  };
  if (spec.mode === 'tx') return one(spec.target ?? spec.txs.length - 1);
  if (spec.mode === 'roots') {
    // The root after each EVM tx: the block replayed through it, its changed keys over the
    // parent's root (keeper.rootOver, as the block's own root is computed). A tx that could not
    // be applied ends the list (eth/tracers/api.go IntermediateRoots).
    const out: string[] = [];
    for (let i = 0; i < spec.txs.length; i++) {
      const r = await replay(spec.block.number, spec.timeNs ?? spec.block.time * 1_000_000_000n, spec.blockTxs!, spec.positions![i]! + 1);
      if (!r.lastOk) break;
      const root = await engine.session(req.height, req.latest, (env) => env.keeper.rootOver(r.ctx, r.changed(), spec.parentRoot!));
      out.push(`"${hex(root)}"`);
    }
    return { traceParts: [`[${out.join(',')}]`] };
  }
  const parts: string[] = ['['];
  for (let i = 0; i < spec.txs.length; i++) {
    const hash = await engine.session(req.height, req.latest, async (env) => hex(env.keeper.decode(spec.txs[i]!).tx.hash()));
    const head = `${i > 0 ? ',' : ''}{"txHash":"${hash}"`;
    try {
      const out = await one(i);
      parts.push(`${head},"result":`);
      for (const p of out.traceParts) parts.push(p);
      parts.push('}');
    } catch (e) {
      // geth's entry for a tx that could not be traced, or whose trace timed out; the block goes on.
      if (e instanceof CallError && (e.message === 'execution timeout' || e.message.startsWith('tracing failed: '))) {
        parts.push(`${head},"error":${JSON.stringify(e.message)}}`);
        continue;
      }
      throw e;
    }
  }
  parts.push(']');
  return { traceParts: parts };
}

function makeTracer(cfg: TraceConfig, deadline: number, st?: StateReader) {
  try {
    return createTracer(cfg.tracer, cfg.tracerConfig, cfg.logger, { deadline, ...(st?.sync ? { sync: st.sync } : {}) });
  } catch (e) {
    if (e instanceof TracerError) throw new CallError(-32000, e.message);
    if (e instanceof TraceAbort) throw new CallError(-32000, 'execution timeout');
    throw e;
  }
}

async function traceIn(env: Env, spec: TraceSpec, req: CallRequest): Promise<TraceValue> {
  const { vm, sm, common, keeper } = env;
  const b = spec.block;
  const block = createBlock(
    { header: { number: b.number, timestamp: b.time, coinbase: keeper.coinbase, gasLimit: b.gasLimit, baseFeePerGas: 0n, mixHash: new Uint8Array(32) } },
    { common, skipConsensusFormatValidation: true },
  );
  const st = stateReader(sm);
  let gasUsed = 0n;
  let logIndex = spec.replayed?.logs ?? 0;
  const run = async (tx: TypedTransaction, index: number, traced: boolean): Promise<{ json?: string[]; error?: string }> => {
    if (!traced) {
      const r = await runTx(vm, { tx, block, skipHardForkValidation: true, skipBlockGasLimitValidation: true, blockGasUsed: gasUsed });
      gasUsed += r.totalGasSpent;
      logIndex += r.execResult.logs?.length ?? 0;
      return {};
    }
    const deadline = Date.now() + spec.config.timeoutMs;
    const tracer = makeTracer(spec.config, deadline, st);
    const from = tx.getSenderAddress();
    const nonce = tx.nonce;
    const ctx: TxContext = {
      from: from.bytes,
      to: tx.to?.bytes,
      created: tx.to === undefined ? createAddress(from.bytes, nonce) : undefined,
      gasLimit: tx.gasLimit,
      gasPrice: (tx as unknown as { gasPrice?: bigint }).gasPrice ?? (tx as unknown as { maxPriorityFeePerGas: bigint }).maxPriorityFeePerGas,
      value: tx.value,
      input: tx.data,
      nonce,
      coinbase: keeper.coinbase,
      blockNumber: b.number,
      blockHash: b.hash,
      time: b.time,
      txHash: spec.mode === 'call' ? undefined : tx.hash(),
      txIndex: index,
      authorities: authoritiesOf(tx),
    };
    const check = spec.config.timeoutMs > 0 ? () => {
      if (Date.now() > deadline) throw new TraceAbort('execution timeout');
    } : undefined;
    const firstLog = logIndex;
    try {
      await tracer.onTxStart?.(ctx, st);
      const r = await drive(vm.evm.events as never, tracer, st, { firstLogIndex: firstLog, ...(check ? { check } : {}) }, () =>
        runTx(vm, { tx, block, skipHardForkValidation: true, skipBlockGasLimitValidation: true, blockGasUsed: gasUsed, ...(spec.mode === 'call' ? { skipNonce: true } : {}) }),
      );
      gasUsed += r.totalGasSpent;
      logIndex += r.execResult.logs?.length ?? 0;
      const err = r.execResult.exceptionError?.error;
      await tracer.onTxEnd?.({ gasUsed: r.totalGasSpent, output: r.execResult.returnValue, error: err === undefined ? undefined : gethVmError(err) }, st);
      return { json: toJsonParts(tracer.result()) };
    } catch (e) {
      // A tx the VM refused (nonce, balance, intrinsic gas…) or a stopped trace: geth's error.
      if (e instanceof TraceAbort || (e as { code?: unknown })?.code === 'TRACE_ABORT') throw new CallError(-32000, 'execution timeout');
      if (e instanceof TracerError) throw new CallError(-32000, e.message);
      if (e instanceof CallError) throw e;
      return { error: (e as Error).message };
    }
  };

  const decode = (raw: Uint8Array): TypedTransaction => keeper.decode(raw).tx;

  switch (spec.mode) {
    case 'tx': {
      const target = spec.target ?? spec.txs.length - 1;
      for (let i = spec.replayed !== undefined ? target : 0; i < target; i++) await runReplay(run, decode(spec.txs[i]!), i);
      const out = await run(decode(spec.txs[target]!), target, true);
      if (out.error !== undefined) throw new CallError(-32000, `tracing failed: ${out.error}`);
      return { traceParts: out.json! };
    }
    case 'block': {
      const parts: string[] = ['['];
      for (let i = 0; i < spec.txs.length; i++) {
        const tx = decode(spec.txs[i]!);
        const hash = `${i > 0 ? ',' : ''}{"txHash":"${hex(tx.hash())}"`;
        try {
          const out = await run(tx, i, true);
          if (out.error !== undefined) {
            // geth's entry for a tx that could not be traced (its error), the block goes on.
            parts.push(`${hash},"error":${JSON.stringify(`tracing failed: ${out.error}`)}}`);
            continue;
          }
          parts.push(`${hash},"result":`);
          for (const p of out.json!) parts.push(p);
          parts.push('}');
        } catch (e) {
          if (e instanceof CallError && e.message === 'execution timeout') {
            parts.push(`${hash},"error":"execution timeout"}`);
            continue;
          }
          throw e;
        }
      }
      parts.push(']');
      return { traceParts: parts };
    }
    case 'roots': {
      // eth/tracers/api.go IntermediateRoots: a tx that cannot be applied ends the list there.
      const roots = new IntermediateRoots(keeper, sm, spec.parentRoot!);
      const out: string[] = [];
      for (let i = 0; i < spec.txs.length; i++) {
        try {
          await run(decode(spec.txs[i]!), i, false);
        } catch {
          break;
        }
        out.push(`"${hex(await roots.next())}"`);
      }
      return { traceParts: [`[${out.join(',')}]`] };
    }
    case 'call': {
      const a = spec.call!;
      await applyOverrides(sm, a);
      const fromAddr = new Address(a.from ?? new Uint8Array(20));
      const nonce = (await sm.getAccount(fromAddr))?.nonce ?? 0n;
      const gasLimit = a.gas ?? req.gasCap;
      const tx = withSender(
        createLegacyTx({ nonce, gasPrice: a.gasPrice ?? 0n, gasLimit, ...(a.to ? { to: a.to } : {}), value: a.value, data: a.data }, { common, freeze: false }),
        fromAddr,
      );
      const out = await run(tx, 0, true);
      if (out.error !== undefined) throw new CallError(-32000, `tracing failed: ${out.error}`);
      return { traceParts: out.json! };
    }
  }
}

/**
 * The EIP-7702 authorities of a set-code tx (prestateTracer reads them before the tx runs, as
 * geth's OnTxStart does); an authorization whose signature does not recover is skipped, as the
 * EVM skips it.
 */
function authoritiesOf(tx: TypedTransaction): Uint8Array[] {
  const list = (tx as unknown as { authorizationList?: Parameters<typeof eoaCode7702RecoverAuthority>[0][] }).authorizationList;
  if (list === undefined) return [];
  return list.flatMap((a) => {
    try {
      return [eoaCode7702RecoverAuthority(a).bytes];
    } catch {
      return [];
    }
  });
}

/**
 * An earlier tx of the block, untraced. One the VM refuses outright (the keeper records it as a
 * failed tx that paid its whole gas limit, keeper.ts failInBlock) is skipped here: its fee and
 * nonce are then missing from the state the traced tx sees.
 */
async function runReplay(run: (tx: TypedTransaction, i: number, traced: boolean) => Promise<unknown>, tx: TypedTransaction, i: number): Promise<void> {
  try {
    await run(tx, i, false);
  } catch {
    // see above
  }
}


/**
 * The state root after each tx of a replayed block (debug_intermediateRoots), computed the way
 * the keeper computes the block's root (keeper.ts computeStateRoot): the secure MPT of src/evm/trie.ts
 * from the parent's root, so the root after the last tx of a block of EVM txs only is the block's
 * stateRoot. The session keeps one checkpoint open over the whole replay, so the state manager's
 * pendingChanges() (everything changed since the parent) is read after each tx and only what
 * changed since the previous tx goes into the trie; the new nodes stay in memory (an overlay over
 * the stored nodes) and are dropped with the request.
 *
 * Where the Cosmos account model and the EVM's differ, the keeper's view wins, as in the block:
 * an account the EVM deletes (EIP-161 empty touch, SELFDESTRUCT in its creation tx) keeps its leaf
 * when it has an auth account (state.ts applyChanges keeps the auth account), with the auth
 * sequence, no balance, no code and no storage.
 */
class IntermediateRoots {
  private readonly trie: StateTrie;
  private readonly parent: StateTrie;
  /** addrKey → the account's storage root after the last tx (or at the parent, once read). */
  private readonly storageRoots = new Map<string, Uint8Array>();
  /** addrKey → the leaf written last (nonce, balance, code hash), 'x' for none. */
  private readonly leaves = new Map<string, string>();
  /** addrKey + slotKey → the value written last (hex). */
  private readonly slots = new Map<string, string>();
  private readonly wiped = new Set<string>();

  constructor(
    private readonly keeper: EvmKeeper,
    private readonly sm: FlatStateManager,
    private readonly parentRoot: Uint8Array,
  ) {
    const base = keeper.nodeReader();
    this.trie = new StateTrie({ nodes: overlayKV(base), root: parentRoot, crypto: keeper.crypto });
    this.parent = new StateTrie({ nodes: base, root: parentRoot, crypto: keeper.crypto });
  }

  private async storageRootOf(address: Uint8Array, ak: string): Promise<Uint8Array> {
    let r = this.storageRoots.get(ak);
    if (r === undefined) {
      // The parent's, from its account leaf (evm_trie's per-address roots are the latest height's).
      r = hexToBytes((await this.parent.getProof(address, [], this.parentRoot)).storageHash as PrefixedHexString);
      this.storageRoots.set(ak, r);
    }
    return r;
  }

  /** The leaf the keeper keeps for an account the EVM deleted (see above), or undefined. */
  private deleted(address: Uint8Array): AccountRecord | undefined {
    const ctx = (this.sm.flat as ContextFlatState).ctx;
    const acc = ctx === undefined ? undefined : this.keeper.auth.getAccount(ctx, address);
    if (acc === undefined) return undefined;
    return { nonce: acc.sequence, balance: 0n, storageRoot: EMPTY_TRIE_ROOT, codeHash: KECCAK256_NULL };
  }

  async next(): Promise<Uint8Array> {
    const c = this.sm.pendingChanges();
    const storage: StorageChange[] = [];
    const withStorage = new Set<string>();
    for (const s of c.storage) {
      const ak = hex(s.address);
      let slots = s.slots;
      let wiped = false;
      if (s.wiped && !this.wiped.has(ak)) {
        this.wiped.add(ak);
        wiped = true;
      } else {
        slots = slots.filter((x) => this.slots.get(ak + hex(x.slot)) !== hex(x.value));
      }
      for (const x of slots) this.slots.set(ak + hex(x.slot), hex(x.value));
      if (!wiped && slots.length === 0) continue;
      await this.storageRootOf(s.address, ak);
      storage.push({ address: s.address, wiped, slots });
      withStorage.add(ak);
    }
    const accounts: StateChanges['accounts'] = [];
    for (const a of c.accounts) {
      const ak = hex(a.address);
      const rec = a.account ?? this.deleted(a.address);
      const leaf = rec === undefined ? 'x' : `${rec.nonce}:${rec.balance}:${hex(rec.codeHash)}`;
      if (leaf === this.leaves.get(ak) && !withStorage.has(ak)) continue;
      this.leaves.set(ak, leaf);
      accounts.push({ address: a.address, account: rec === undefined ? undefined : { ...rec, storageRoot: await this.storageRootOf(a.address, ak) } });
    }
    const roots = this.storageRoots;
    const flat: FlatState = {
      getAccount: (a) => ({ nonce: 0n, balance: 0n, storageRoot: roots.get(hex(a)) ?? EMPTY_TRIE_ROOT, codeHash: KECCAK256_NULL }),
      getCode: () => undefined,
      getStorage: () => undefined,
      storageEntries: () => [],
      apply: () => {
        throw new Error('read-only');
      },
    };
    const r = await this.trie.commit({ accounts, storage, code: [] }, flat);
    this.trie.writeNodes(r.nodes);
    // commit() put the new storage roots on the records; a wiped, deleted account's is empty.
    for (const s of storage) this.storageRoots.set(hex(s.address), EMPTY_TRIE_ROOT);
    for (const a of accounts) if (a.account !== undefined && withStorage.has(hex(a.address))) this.storageRoots.set(hex(a.address), a.account.storageRoot);
    return r.stateRoot;
  }
}
