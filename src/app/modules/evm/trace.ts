/**
 * debug_traceTransaction, debug_traceBlock* and debug_traceCall, where eth_call runs: on the warm
 * CallEngine (calls.ts) of a pool thread (workers/evm-call.worker.ts) or of the RPC thread when
 * the pool is off. The state is the committed state after the block's parent; the block's earlier
 * EVM transactions are replayed on it first (without tracing), then the traced one runs under
 * the tracer (src/evm/tracers), as geth's eth/tracers/api.go traceTx does over the parent's state
 * (ethereum/go-ethereum:eth/tracers/api.go). Everything written is reverted afterwards.
 *
 * What differs from geth, by construction: the Cosmos transactions of a block (and its
 * BeginBlock) are not EVM transactions and are not replayed, so an EVM tx that follows a Cosmos
 * tx touching the same accounts in the same block is traced over state without that change.
 *
 * The timeout is checked at every opcode of the traced tx (geth stops the EVM the same way:
 * `execution timeout`). The result travels back as JSON text (RawJson): a struct log of many
 * steps is built as text once, never as an object graph to clone and stringify again.
 */
import { createBlock } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { createLegacyTx, type TypedTransaction } from '@ethereumjs/tx';
import { Address } from '@ethereumjs/util';
import { runTx, type VM } from '@ethereumjs/vm';
import type { FlatStateManager } from '../../../evm/state-manager.js';
import { createTracer, drive, toJsonText, TraceAbort, TracerError, type StateReader, type TxContext } from '../../../evm/tracers/index.js';
import type { TraceConfig } from '../../../evm/tracers/index.js';
import { createAddress } from '../../../evm/tracers/driver.js';
import { gethVmError } from '../../../evm/tracers/types.js';
import { applyOverrides, CallError, type CallArgs, type CallEngine, type CallRequest } from './calls.js';
import { withSender, type EvmKeeper } from './keeper.js';

export interface TraceBlockEnv {
  number: bigint;
  /** Unix seconds. */
  time: bigint;
  gasLimit: bigint;
  /** The EVM block hash (tracer context: flatCallTracer's blockHash), if the block is committed. */
  hash?: Uint8Array;
}

export interface TraceSpec {
  mode: 'tx' | 'block' | 'call';
  block: TraceBlockEnv;
  /** The block's EVM txs (raw envelopes), in order: replayed, and traced (tx: `target`; block: all). */
  txs: Uint8Array[];
  target?: number;
  /** call mode: the message; its overrides apply before it runs. */
  call?: CallArgs;
  config: TraceConfig;
}

/** The trace as JSON text (tx, call: one result; block: geth's `[{txHash, result|error}]`). */
export interface TraceValue {
  traceJson: string;
}

interface Env {
  vm: VM;
  sm: FlatStateManager;
  common: Common;
  keeper: EvmKeeper;
}

const hex = (b: Uint8Array): string => `0x${Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex')}`;
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
  makeTracer(spec.config, Date.now() + spec.config.timeoutMs);
  return engine.session(req.height, req.latest, (env) => traceIn(env, spec, req));
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
  let logIndex = 0;
  const run = async (tx: TypedTransaction, index: number, traced: boolean): Promise<{ json?: string; error?: string }> => {
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
      authorities: [],
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
      return { json: toJsonText(tracer.result()) };
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
      for (let i = 0; i < target; i++) await runReplay(run, decode(spec.txs[i]!), i);
      const out = await run(decode(spec.txs[target]!), target, true);
      if (out.error !== undefined) throw new CallError(-32000, `tracing failed: ${out.error}`);
      return { traceJson: out.json! };
    }
    case 'block': {
      const parts: string[] = [];
      for (let i = 0; i < spec.txs.length; i++) {
        const tx = decode(spec.txs[i]!);
        const hash = `"txHash":"${hex(tx.hash())}"`;
        try {
          const out = await run(tx, i, true);
          if (out.error !== undefined) {
            // geth's entry for a tx that could not be traced (its error), the block goes on.
            parts.push(`{${hash},"error":${JSON.stringify(`tracing failed: ${out.error}`)}}`);
            continue;
          }
          parts.push(`{${hash},"result":${out.json}}`);
        } catch (e) {
          if (e instanceof CallError && e.message === 'execution timeout') {
            parts.push(`{${hash},"error":"execution timeout"}`);
            continue;
          }
          throw e;
        }
      }
      return { traceJson: `[${parts.join(',')}]` };
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
      return { traceJson: out.json! };
    }
  }
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

