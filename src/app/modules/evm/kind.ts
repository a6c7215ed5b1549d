/**
 * The `evm` tx kind: raw signed Ethereum transactions (EIP-2718 typed envelopes 0x01, 0x02, 0x04,
 * and legacy RLP lists, first byte 0xc0–0xff) carried as they are in CometBFT blocks. The kind
 * also claims 0x03 so that a blob tx (EIP-4844) gets decodeTx's clear refusal ("blob transactions
 * (type 0x03) are not supported on this chain") instead of a protobuf parse error.
 *
 * decode: RLP only (cheap; PrepareProposal and ProcessProposal call it for the gas limit).
 * ante:   chain id, replay protection (CheckTx), sender recovery (native secp256k1 through the
 *         crypto backend), intrinsic gas, nonce = auth sequence, balance ≥ gas × price + value.
 * run:    @ethereumjs/vm runTx over the tx's Context (keeper.ts).
 */
import type { Bytes } from '../../bytes.js';
import type { Context } from '../../context.js';
import type { TxKind } from '../../txkinds.js';
import type { EvmKeeper, EvmTx } from './keeper.js';

/** 0x01 (EIP-2930), 0x02 (EIP-1559), 0x03 (blob: refused), 0x04 (EIP-7702), 0xc0–0xff (legacy RLP list). */
export const EVM_LEAD_BYTES: readonly number[] = [0x01, 0x02, 0x03, 0x04, ...Array.from({ length: 64 }, (_, i) => 0xc0 + i)];

export type EvmTxKind = TxKind<EvmTx>;

/** The kind's name (what BaseApp reports as the writer of an EVM run stage: keeper.ts watchBlockState). */
export const EVM_KIND = 'evm';

export function evmTxKind(keeper: EvmKeeper): EvmTxKind {
  return {
    name: EVM_KIND,
    leadBytes: EVM_LEAD_BYTES,
    decode: (bytes: Bytes) => keeper.decode(bytes),
    gasLimit: (tx: EvmTx) => tx.tx.gasLimit,
    preVerify: (txs: readonly EvmTx[]) => keeper.preVerify(txs),
    ante: (ctx: Context, tx: EvmTx) => keeper.ante(ctx, tx),
    run: (ctx: Context, tx: EvmTx) => keeper.execute(ctx, tx),
  };
}
