/**
 * A transaction whose whole run is one frame of plain contract code (an ERC-20 transfer, most
 * token and registry calls), run by src/evm/fast-call.ts's interpreter instead of
 * @ethereumjs/vm's runTx, with runTx's effects on the state manager and its result fields.
 *
 * Why: in a block of ERC-20 transfers, runTx and the library's interpreter were ~0.6 ms of the
 * executor's ~1.2 ms a transfer (CPU profile of in-process blocks, 2026-11-27): per tx a journal,
 * warm-address maps, Message and Interpreter objects, an awaited step per dynamic-gas opcode. The
 * same transfer here is one synchronous loop over preallocated memory.
 *
 * Taken only when nothing outside what this file and the interpreter reproduce can happen:
 * a legacy, EIP-2930 or EIP-1559 tx (not a blob or EIP-7702 tx), to an existing account with code
 * (not a precompile, not EOF, not a delegation), without value, from an EOA whose nonce, balance
 * and the gas limit pass runTx's checks, the coinbase being neither party. Anything else — or an
 * opcode the interpreter does not cover — returns undefined before anything is written, and the
 * caller runs the tx through runTx from the start (its reads only filled the caches).
 *
 * What runTx does for such a tx (ethereumjs/ethereumjs-monorepo:packages/vm/src/runTx.ts,
 * packages/evm/src/evm.ts _executeCall), in effect: the sender pays gas limit × price and its
 * nonce goes up; the call frame runs with the gas limit less the intrinsic gas, with the
 * recipient's access-list slots warm; its slot writes and logs stay only if it succeeds (a
 * failed or reverted frame also loses its refund); gas used = frame gas + intrinsic gas, less
 * the refund (at most a fifth, EIP-3529), at least the calldata floor (EIP-7623); the sender gets
 * back the unused gas, the coinbase gets gas used × priority fee; touched accounts left empty
 * (EIP-161) are deleted. What runTx marks written stays marked even when unchanged — the
 * recipient's account, the slots of a failed frame put back to their values — so the changes the
 * state manager hands over for the block are the same either way (test/unit/evm-fast-tx.test.ts).
 * It emits none of the VM's events (beforeTx, afterTx, step…): nothing listens on the block
 * engine's VM (the tracers replay on VMs of their own, through runTx), and a listener added there
 * would need the caller to turn this path off (EvmKeeper.fastTxs).
 */
import type { Block } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { KECCAK256_NULL, KECCAK256_RLP, bigIntToUnpaddedBytes, bytesToBigInt, equalsBytes } from '@ethereumjs/util';
import { TransactionType, type TypedTransaction } from '@ethereumjs/tx';
import { Bloom } from '@ethereumjs/vm';
import { FastCaller, inPrecompileRange, type FastLog } from './fast-call.js';
import type { AccountRecord } from './flat-state.js';
import type { FlatStateManager } from './state-manager.js';

/** The fields of runTx's result that a block's receipt is made of. */
export interface FastTxResult {
  totalGasSpent: bigint;
  execResult: { exceptionError?: { error: string }; logs: FastLog[]; returnValue: Uint8Array };
  bloom: Bloom;
  createdAddress?: undefined;
}

const EMPTY = new Uint8Array(0);

function isEmpty(rec: AccountRecord): boolean {
  return rec.nonce === 0n && rec.balance === 0n && equalsBytes(rec.codeHash, KECCAK256_NULL);
}

export interface FastTxInput {
  fast: FastCaller;
  sm: FlatStateManager;
  common: Common;
  tx: TypedTransaction;
  /** The recovered sender. */
  sender: Uint8Array;
  /** tx.getIntrinsicGas(), computed once per tx. */
  intrinsic: bigint;
  /** Its EIP-7623 calldata floor (getCalldataFloorGas), computed once per tx. */
  floor: bigint;
  block: Block;
}

/** Runs the tx as runTx would, or returns undefined (nothing written) when it is not one this takes. */
export function runFastTx(input: FastTxInput): FastTxResult | undefined {
  const { fast, sm, common, tx, sender, intrinsic, floor, block } = input;
  const type = tx.type;
  if (type !== TransactionType.Legacy && type !== TransactionType.AccessListEIP2930 && type !== TransactionType.FeeMarketEIP1559) return undefined;
  const toAddress = tx.to;
  if (toAddress === undefined || tx.value !== 0n) return undefined;
  const to = toAddress.bytes;
  if (inPrecompileRange(to)) return undefined;
  const header = block.header;
  const coinbase = header.coinbase.bytes;
  if (equalsBytes(sender, to) || equalsBytes(coinbase, sender) || equalsBytes(coinbase, to)) return undefined;

  // runTx's checks; a tx failing one is left to runTx, which gives its error.
  if (tx.gasLimit < intrinsic || tx.gasLimit < floor) return undefined;
  const from = sm.getAccountRecord(sender);
  if (from !== undefined && !equalsBytes(from.codeHash, KECCAK256_NULL)) return undefined;
  const nonce = from?.nonce ?? 0n;
  const balance = from?.balance ?? 0n;
  if (nonce !== tx.nonce) return undefined;
  const baseFee = header.baseFeePerGas ?? 0n;
  let gasPrice: bigint;
  let inclusionFee: bigint;
  let maxPrice: bigint;
  if (type === TransactionType.FeeMarketEIP1559) {
    const t = tx as unknown as { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
    if (t.maxFeePerGas < baseFee) return undefined;
    const room = t.maxFeePerGas - baseFee;
    inclusionFee = t.maxPriorityFeePerGas < room ? t.maxPriorityFeePerGas : room;
    gasPrice = inclusionFee + baseFee;
    maxPrice = t.maxFeePerGas;
  } else {
    const gp = (tx as unknown as { gasPrice: bigint }).gasPrice;
    if (gp < baseFee) return undefined;
    gasPrice = gp;
    inclusionFee = gp - baseFee;
    maxPrice = gp;
  }
  // The upfront cost (gas limit × price) is at most the max cost (gas limit × fee cap).
  if (balance < tx.gasLimit * maxPrice) return undefined;
  const target = sm.getAccountRecord(to);
  if (target === undefined) return undefined;
  const code = sm.getCodeSync(to);
  if (code.length === 0 || code[0] === 0xef) return undefined;

  let warmSlots: bigint[] | undefined;
  if (type !== TransactionType.Legacy) {
    for (const [address, slots] of (tx as unknown as { accessList: [Uint8Array, Uint8Array[]][] }).accessList) {
      if (!equalsBytes(address, to)) continue;
      for (const s of slots) (warmSlots ??= []).push(bytesToBigInt(s));
    }
  }
  const r = fast.run({
    code,
    address: to,
    caller: sender,
    origin: sender,
    data: tx.data,
    gasLimit: tx.gasLimit - intrinsic,
    gasPrice,
    block: header,
    sload: (key) => sm.getStorageSync(toAddress, key),
    writes: true,
    ...(warmSlots === undefined ? {} : { warmSlots }),
  });
  if (r === undefined) return undefined;

  // Effects, written in runTx's order: the order the state manager first sees an account or a
  // slot written is the order flush() hands them over, and the app creates missing auth accounts
  // (their account numbers) in that order. runTx: sender (fee, nonce), recipient (the call's
  // value), the slots in the order of their first SSTORE, sender (refund), coinbase.
  const ok = r.error === undefined;
  let total = r.executionGasUsed + intrinsic;
  const refund = ok ? (r.gasRefund ?? 0n) : 0n;
  if (refund !== 0n) {
    const max = total / common.param('maxRefundQuotient');
    total -= refund < max ? refund : max;
  }
  if (total < floor) total = floor;
  const senderRec: AccountRecord = {
    nonce: nonce + 1n,
    balance: balance - tx.gasLimit * gasPrice + (tx.gasLimit - total) * gasPrice,
    storageRoot: from?.storageRoot ?? KECCAK256_RLP,
    codeHash: from?.codeHash ?? KECCAK256_NULL,
  };
  sm.putAccountRecord(sender, senderRec);
  sm.putAccountRecord(to, target);
  if (r.storage !== undefined) {
    for (const [k, v] of r.storage) sm.putStorageSync(to, FastCaller.wordBytes(k), v === 0n ? EMPTY : bigIntToUnpaddedBytes(v));
  }
  const miner = sm.getAccountRecord(coinbase);
  const minerRec: AccountRecord = {
    nonce: miner?.nonce ?? 0n,
    balance: (miner?.balance ?? 0n) + total * inclusionFee,
    storageRoot: miner?.storageRoot ?? KECCAK256_RLP,
    codeHash: miner?.codeHash ?? KECCAK256_NULL,
  };
  sm.putAccountRecord(coinbase, minerRec);
  // EIP-161: the touched accounts (sender, recipient, coinbase) that are empty go. Only the
  // coinbase can be: the sender's nonce is not 0, the recipient has code.
  if (isEmpty(minerRec)) sm.deleteAccountSync(coinbase);

  const logs = ok ? (r.logs ?? []) : [];
  const bloom = new Bloom(undefined, common);
  for (const [address, topics] of logs) {
    bloom.add(address);
    for (const t of topics) bloom.add(t);
  }
  return {
    totalGasSpent: total,
    execResult: { ...(ok ? {} : { exceptionError: { error: r.error! } }), logs, returnValue: r.returnValue },
    bloom,
  };
}
