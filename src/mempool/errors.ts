/**
 * Mempool errors with CometBFT's exact messages (cometbft: mempool/errors.go,
 * mempool/clist_mempool.go). broadcast_tx_sync/async return
 * them as JSON-RPC -32603 with the message as `data`, so the text is part of the interface.
 */

export class MempoolError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

/** ErrMempoolIsFull: by count (`size`) or by bytes (`max_txs_bytes`). */
export class ErrMempoolIsFull extends MempoolError {
  constructor(
    readonly numTxs: number,
    readonly maxTxs: number,
    readonly txsBytes: number,
    readonly maxTxsBytes: number,
  ) {
    super('MEMPOOL_FULL', `mempool is full: number of txs ${numTxs} (max: ${maxTxs}), total txs bytes ${txsBytes} (max: ${maxTxsBytes})`);
  }
}

/** ErrRecheckFull: new txs are refused while the pool rechecks after a commit. */
export class ErrRecheckFull extends MempoolError {
  constructor() {
    super('MEMPOOL_RECHECK_FULL', 'mempool is still rechecking after a new committed block, so it is considered as full');
  }
}

/** ErrTxTooLarge: a single tx above `max_tx_bytes`. */
export class ErrTxTooLarge extends MempoolError {
  constructor(
    readonly max: number,
    readonly actual: number,
  ) {
    super('MEMPOOL_TX_TOO_LARGE', `Tx too large. Max size is ${max}, but got ${actual}`);
  }
}

/** ErrTxInCache: the tx's key is in the LRU cache (seen recently, in the pool or committed). */
export class ErrTxInCache extends MempoolError {
  constructor() {
    super('MEMPOOL_TX_IN_CACHE', 'tx already exists in cache');
  }
}

/** ErrPreCheck: the node's pre-check (e.g. the block's max data bytes) refused the tx. */
export class ErrPreCheck extends MempoolError {
  constructor(readonly err: Error) {
    super('MEMPOOL_PRE_CHECK', `tx pre check: ${err.message}`);
  }
}

/** ErrAppConnMempool: the application failed to answer CheckTx. */
export class ErrAppConnMempool extends MempoolError {
  constructor(readonly err: Error) {
    super('MEMPOOL_APP_CONN', `appConn mempool: ${err.message}`);
  }
}
