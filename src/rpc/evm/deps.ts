/**
 * What the EVM JSON-RPC reads from the node: the EVM keeper (receipts, logs, accounts), the app's
 * query contexts (state at a height), the block store (the CometBFT blocks the EVM blocks are a view
 * of), the mempool (eth_sendRawTransaction: the same CheckTx path as broadcast_tx_sync) and a few
 * node facts. Narrow on purpose: tests build it over a real node, src/node.ts over its parts.
 */
import { appBlockReplay, type CallEngineSource } from '../../app/modules/evm/calls.js';
import type { Context } from '../../app/context.js';
import type { CallRequest, CallValue } from '../../app/modules/evm/calls.js';
import type { EvmKeeper } from '../../app/modules/evm/keeper.js';
import type { EventBus } from '../../events/bus.js';
import type { SubscriptionMetrics } from '../../events/subscriptions.js';
import type { CheckTxResult } from '../../mempool/mempool.js';
import type { EvmTxPool } from '../../mempool/evm_pool.js';

/** What the RPC reads of the EVM tx pool. */
export type EvmTxPoolView = Pick<EvmTxPool, 'stats' | 'content' | 'pendingNonce' | 'getByHash'>;
import type { Keystore } from '../../keys/keystore.js';
import type { Block, BlockMeta } from '../../types/block.js';

export interface EvmRpcDeps {
  keeper: EvmKeeper;
  /** BaseApp.queryContext: state after `height` (default: the last committed block). */
  queryContext(height?: bigint): Context;
  /** BaseApp.resolveQueryHeight: throws when the height's state is not (or no longer) kept. */
  resolveQueryHeight?(height: bigint): bigint;
  /** The app's last committed height. */
  lastHeight(): bigint;
  /** BaseApp.replayBlockTxs for tracing a block with Cosmos txs (calls.ts appBlockReplay). */
  replayBlock?: CallEngineSource['replayBlock'];
  blocks: {
    base(): bigint;
    height(): bigint;
    loadBlock(height: bigint): Block | null;
    loadBlockMeta(height: bigint): BlockMeta | null;
    heightByHash(hash: Uint8Array): bigint | null;
  };
  mempool: {
    checkTx(tx: Uint8Array): Promise<CheckTxResult>;
    /** Every tx in the mempool, for the `pending` nonce (Mempool.reapMaxTxs(-1)). */
    reapMaxTxs(max: number): Uint8Array[];
    /** Each tx as the pool admits it (eth_subscribe newPendingTransactions); absent: none are reported. */
    onTxAdded?(listener: (tx: Uint8Array) => void): () => void;
  };
  /** The EVM tx pool (txpool_*, the `pending` nonce, eth_getPendingTransactions); absent: the mempool's reap order is all there is. */
  txpool?: EvmTxPoolView;
  /** The node's event bus (NewBlock drives eth_subscribe newHeads, logs and syncing); absent: no notifications. */
  bus?: EventBus;
  /** eth_subscribe limits (`[json-rpc] subscription-*`); absent: the defaults (subscribe.ts). */
  subscriptionLimits?: { clients: number; perClient: number; buffer: number };
  subscriptionMetrics?: SubscriptionMetrics;
  /** Consensus `block.max_gas` (-1: unlimited). */
  blockMaxGas(): bigint;
  peerCount(): number;
  /** True while block sync is catching up. */
  catchingUp(): boolean;
  /** `[json-rpc] gas-cap` (0: unlimited). */
  gasCap: bigint;
  /** `[json-rpc] evm-timeout` in ms (0: none). */
  evmTimeoutMs: number;
  /** `[json-rpc] logs-cap`: most logs eth_getLogs returns (0: unlimited; default 10,000). */
  logsCap?: number;
  /** `[json-rpc] block-range-cap`: widest eth_getLogs range (0: unlimited; default 10,000). */
  blockRangeCap?: number;
  /** `[json-rpc] feehistory-cap`: most blocks eth_feeHistory reports (default 1024, geth's). */
  feeHistoryCap?: number;
  /** `[json-rpc] filter-cap`: most installed filters (0: unlimited; default 200). */
  filterCap?: number;
  /** `<home>/keystore`: eth_accounts, the signing methods and personal_* (none: no accounts). */
  keystore?: Keystore;
  /** `[json-rpc] allow-insecure-unlock` (default true): false refuses personal_unlockAccount. */
  allowInsecureUnlock?: boolean;
  /**
   * eth_call / eth_estimateGas / eth_createAccessList on the worker pool (src/pool/evm-calls.ts);
   * throws CallError. Absent: they run inline on this thread (src/rpc/evm/call.ts).
   */
  calls?: (req: CallRequest) => Promise<CallValue> | undefined;
  /** `[json-rpc] profiles-dir`, absolute: where debug_ profiling methods write (absent: they refuse). */
  profilesDir?: string;
}

/** The node's parts as the composition root has them (src/node.ts). */
export interface NodeParts {
  app: { queryContext(height?: bigint): Context; resolveQueryHeight(h: bigint | undefined): bigint; lastBlockHeight: bigint } & Partial<Parameters<typeof appBlockReplay>[0]>;
  keeper: EvmKeeper;
  blocks: EvmRpcDeps['blocks'];
  mempool: EvmRpcDeps['mempool'];
  txpool?: EvmTxPoolView;
  consensus: { getState(): { consensusParams: { block: { maxGas: bigint } } } };
  p2p: { numPeers(): { outbound: number; inbound: number } };
  catchingUp?: () => boolean;
  /** `[json-rpc] gas-cap`. */
  gasCap: number;
  /** `[json-rpc] evm-timeout`, ms. */
  evmTimeoutMs: number;
  logsCap?: number;
  blockRangeCap?: number;
  feeHistoryCap?: number;
  filterCap?: number;
  keystore?: Keystore;
  allowInsecureUnlock?: boolean;
  bus?: EventBus;
  subscriptionLimits?: EvmRpcDeps['subscriptionLimits'];
  subscriptionMetrics?: SubscriptionMetrics;
  calls?: EvmRpcDeps['calls'];
  profilesDir?: string;
}

export function evmRpcDeps(p: NodeParts): EvmRpcDeps {
  return {
    keeper: p.keeper,
    queryContext: (h) => p.app.queryContext(h),
    resolveQueryHeight: (h) => p.app.resolveQueryHeight(h),
    lastHeight: () => p.app.lastBlockHeight,
    ...(p.app.replayBlockTxs !== undefined ? { replayBlock: appBlockReplay(p.app as Parameters<typeof appBlockReplay>[0]) } : {}),
    blocks: p.blocks,
    mempool: p.mempool,
    blockMaxGas: () => p.consensus.getState().consensusParams.block.maxGas,
    peerCount: () => {
      const n = p.p2p.numPeers();
      return n.outbound + n.inbound;
    },
    catchingUp: p.catchingUp ?? (() => false),
    gasCap: BigInt(p.gasCap),
    evmTimeoutMs: p.evmTimeoutMs,
    ...(p.logsCap === undefined ? {} : { logsCap: p.logsCap }),
    ...(p.blockRangeCap === undefined ? {} : { blockRangeCap: p.blockRangeCap }),
    ...(p.feeHistoryCap === undefined ? {} : { feeHistoryCap: p.feeHistoryCap }),
    ...(p.filterCap === undefined ? {} : { filterCap: p.filterCap }),
    ...(p.keystore === undefined ? {} : { keystore: p.keystore }),
    ...(p.allowInsecureUnlock === undefined ? {} : { allowInsecureUnlock: p.allowInsecureUnlock }),
    ...(p.txpool === undefined ? {} : { txpool: p.txpool }),
    ...(p.bus === undefined ? {} : { bus: p.bus }),
    ...(p.subscriptionLimits === undefined ? {} : { subscriptionLimits: p.subscriptionLimits }),
    ...(p.subscriptionMetrics === undefined ? {} : { subscriptionMetrics: p.subscriptionMetrics }),
    ...(p.calls === undefined ? {} : { calls: p.calls }),
    ...(p.profilesDir === undefined ? {} : { profilesDir: p.profilesDir }),
  };
}
