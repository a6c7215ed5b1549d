/**
 * The EVM tx pool's view of the chain (src/mempool/evm_pool.ts EvmPoolChain): decoding and sender
 * recovery through the keeper, the committed nonce and balance through the app's query context.
 */
import { TransactionType } from '@ethereumjs/tx';
import { hexToBytes } from '@ethereumjs/util';
import { hex0x } from '../../../crypto/bytes.js';
import type { EvmPoolChain, EvmPoolTxInfo } from '../../../mempool/evm_pool.js';
import type { Bytes } from '../../bytes.js';
import type { Context } from '../../context.js';
import type { EvmKeeper } from './keeper.js';

export function evmPoolChain(keeper: EvmKeeper, queryContext: () => Context): EvmPoolChain {
  return {
    inspect(raw: Bytes): EvmPoolTxInfo {
      const etx = keeper.decode(raw);
      const tx = etx.tx;
      if (tx.type !== TransactionType.Legacy) {
        const cid = (tx as unknown as { chainId: bigint }).chainId;
        if (cid !== keeper.chainId) throw new Error(`invalid chain id for signer: have ${cid} want ${keeper.chainId}`);
      }
      const sender = hex0x(keeper.sender(etx));
      const t = tx as unknown as { gasPrice?: bigint; maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint };
      const feeCap = t.maxFeePerGas ?? t.gasPrice ?? 0n;
      const tip = t.maxPriorityFeePerGas ?? t.gasPrice ?? 0n;
      return {
        hash: hex0x(keeper.ethHash(etx)),
        sender,
        nonce: tx.nonce,
        gasLimit: tx.gasLimit,
        feeCap,
        tip,
        value: tx.value,
        to: tx.to === undefined ? null : tx.to.toString().toLowerCase(),
      };
    },
    account(sender: string) {
      // The nonce and balance only (readAccount would also read the code hash and storage root).
      const ctx = queryContext();
      const a = hexToBytes(sender as `0x${string}`);
      return { nonce: keeper.auth.getAccount(ctx, a)?.sequence ?? 0n, balance: keeper.bank.getBalance(ctx, a, keeper.denom).amount };
    },
  };
}
