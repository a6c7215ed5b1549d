/**
 * The broadcast-async CheckTx sequence shared by the node RPC's `broadcast_tx_async`
 * (cometbft/cometbft:rpc/core/mempool.go) and the SDK tx service's BroadcastTx in ASYNC mode
 * (cosmos/cosmos-sdk:client/broadcast.go); each caller renders its own answer.
 */
import type { Bytes } from '../types/block.js';
import type { Mempool } from './mempool.js';

/**
 * Submits `tx` without awaiting the app's CheckTx, and resolves with the mempool's local refusal
 * (full, still rechecking, too large, pre-check, in cache), or null when there was none.
 *
 * Mempool.checkTx runs those checks and issues the app call in its synchronous part, so a refusal
 * has settled the promise by the next turn of the event loop. (While a commit holds the mempool
 * lock, the cache check waits for it; such a cache hit is then not reported, where CometBFT would
 * block on the lock first.) Whatever settles later is dropped, never left unhandled.
 */
export async function checkTxNoWait(mempool: Pick<Mempool, 'checkTx'>, tx: Bytes): Promise<unknown> {
  let early: unknown = null;
  let settled = false;
  const p = mempool.checkTx(tx).then(
    () => {
      settled = true;
    },
    (e: unknown) => {
      settled = true;
      early = e;
    },
  );
  await Promise.race([p, new Promise<void>((resolve) => setImmediate(resolve))]);
  return settled ? early : null;
}
