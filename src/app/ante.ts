/**
 * The ante chain: ordered checks that run before a tx's messages, in CheckTx and FinalizeBlock
 * (cosmos-sdk: types/handler.go ChainAnteDecorators, x/auth/ante/ante.go NewAnteHandler;
 * cosmos/cosmos-sdk:x/auth/ante/ante.go).
 *
 * A decorator returns an Error to stop the chain (or throws one; out-of-gas throws from the
 * meter). BaseApp does step 1 of the SDK chain (SetUpContext: a gas meter of the tx's gas limit,
 * infinite when simulating, out-of-gas → sdk code 11) itself before calling the chain, so every
 * chain is metered. State written by the chain is kept even when the messages fail, as the SDK
 * keeps the ante branch (fees paid, sequences incremented).
 *
 * The decorators here are the ones that need no auth state; `defaultAnteChain` is the chain of
 * unsigned test txs (jsonTxDecoder). The chain of signed txs, with DeductFee, SetPubKey,
 * ValidateSigCount, SigGasConsume, SigVerification and IncrementSequence reading auth params from
 * state, is src/app/modules/auth/ante.ts `authAnteChain` (what src/app/chain.ts installs).
 */
import { utf8 } from './bytes.js';
import type { Context } from './context.js';
import { sdkErrors } from './errors.js';
import type { Tx } from './tx.js';

export type AnteDecorator = (ctx: Context, tx: Tx, simulate: boolean) => void | Error;

/** Runs the decorators in order; throws the first error. */
export function runAnteChain(chain: readonly AnteDecorator[], ctx: Context, tx: Tx, simulate: boolean): void {
  for (const d of chain) {
    const err = d(ctx, tx, simulate);
    if (err instanceof Error) throw err;
  }
}

/** tx.ValidateBasic MaxGasWanted: gas must fit an int64 (x/auth/tx/builder.go). */
export const MAX_GAS_WANTED = (1n << 63n) - 1n;

/**
 * The block-gas part of SetUpContextDecorator (x/auth/ante/setup.go): a tx may not ask for more
 * gas than a block allows (`tx gas limit G exceeds block max gas M: invalid gas limit`, code 41).
 */
export const setUpContextDecorator: AnteDecorator = (ctx, tx) => {
  const maxGas = ctx.consensusParams?.block.maxGas ?? -1n;
  if (maxGas > 0n && tx.gas > maxGas) {
    return sdkErrors.invalidGasLimit.wrap(`tx gas limit ${tx.gas} exceeds block max gas ${maxGas}`);
  }
};

/**
 * ValidateBasicDecorator (x/auth/ante/basic.go), the parts that need no signatures: gas within
 * int64 and a non-negative fee. Skipped on recheck, as upstream.
 */
export const validateBasicDecorator: AnteDecorator = (ctx, tx) => {
  if (ctx.isReCheckTx) return;
  if (tx.gas > MAX_GAS_WANTED) return sdkErrors.invalidRequest.wrap(`invalid gas supplied; ${tx.gas} > ${MAX_GAS_WANTED}`);
  for (const c of tx.fee.amount) {
    if (c.amount < 0n) {
      const fee = tx.fee.amount.map((x) => `${x.amount}${x.denom}`).join(',');
      return sdkErrors.insufficientFee.wrap(`invalid fee provided: ${fee}`);
    }
  }
};

/** TxTimeoutHeightDecorator (x/auth/ante/basic.go): `block height: H, timeout height: T: tx timeout height`. */
export const txTimeoutHeightDecorator: AnteDecorator = (ctx, tx) => {
  if (tx.timeoutHeight > 0n && ctx.height > tx.timeoutHeight) {
    return sdkErrors.txTimeoutHeight.wrap(`block height: ${ctx.height}, timeout height: ${tx.timeoutHeight}`);
  }
};

/** auth params default max_memo_characters (x/auth/types/params.go). */
export const DEFAULT_MAX_MEMO_CHARACTERS = 256n;
/** auth params default tx_size_cost_per_byte. */
export const DEFAULT_TX_SIZE_COST_PER_BYTE = 10n;

/**
 * ValidateMemoDecorator: the memo's length in bytes (Go `len`) against max_memo_characters;
 * `maximum number of characters is 256 but received N characters: memo too large` (code 12).
 */
export function validateMemoDecorator(maxMemoCharacters: () => bigint = () => DEFAULT_MAX_MEMO_CHARACTERS): AnteDecorator {
  return (_ctx, tx) => {
    const max = maxMemoCharacters();
    const n = BigInt(utf8(tx.memo).length);
    if (n > max) return sdkErrors.memoTooLarge.wrap(`maximum number of characters is ${max} but received ${n} characters`);
  };
}

/**
 * ConsumeTxSizeGasDecorator: tx_size_cost_per_byte × len(tx bytes), descriptor `txSize`. The
 * simulate-mode surcharge for missing signatures needs signer infos and comes with auth.
 */
export function consumeTxSizeGasDecorator(costPerByte: () => bigint = () => DEFAULT_TX_SIZE_COST_PER_BYTE): AnteDecorator {
  return (ctx, tx) => {
    ctx.gasMeter.consume(costPerByte() * BigInt(tx.bytes.length), 'txSize');
  };
}

/** The chain BaseApp uses when the node passes none: SDK order, without the auth decorators. */
export function defaultAnteChain(): AnteDecorator[] {
  return [setUpContextDecorator, validateBasicDecorator, txTimeoutHeightDecorator, validateMemoDecorator(), consumeTxSizeGasDecorator()];
}
