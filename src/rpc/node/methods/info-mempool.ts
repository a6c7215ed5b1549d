/**
 * Mempool and transaction methods of the node RPC (cometbft: rpc/core/mempool.go, rpc/core/dev.go;
 * cometbft/cometbft:rpc/core/routes.go, cometbft/cometbft:mempool/clist_mempool.go): broadcast_tx_async, broadcast_tx_sync,
 * broadcast_tx_commit, unconfirmed_txs, num_unconfirmed_txs, check_tx, unsafe_flush_mempool.
 *
 * Errors the mempool refuses a tx with (full, still rechecking, too large, pre-check, in cache,
 * app failure) are thrown as they are, so the transports answer -32603 with the plain message as
 * `data`, as CometBFT does for any error a method returns.
 */
import { CheckTxType, type ExecTxResult, type ResponseCheckTx } from '../../../abci/types.js';
import type { BusMessage } from '../../../events/bus.js';
import { checkTxNoWait } from '../../../mempool/broadcast.js';
import { txHash } from '../../../types/hashing.js';
import { base64, hexUpper } from '../../../types/json.js';
import type { MempoolRpc } from '../context.js';
import { route, type Route, type RouteContext } from '../../jsonrpc/methods.js';
import { execTxResultJSON } from './chain-json.js';
import { subscriptionsFor } from './events.js';

// ---------------------------------------------------------------------------------------------
// JSON renderings (abci/types/types.go: ResponseCheckTx and ExecTxResult marshal with gogo jsonpb,
// EmitDefaults and EnumsAsInts: every field present, int64 as strings, empty bytes as null, in
// proto field order).

/**
 * ResponseCheckTx as check_tx and broadcast_tx_commit.check_tx show it: its fields 1–8 are those of
 * ExecTxResult, marshalled the same way (the sender/priority hints are ours and not shown).
 */
export function responseCheckTxJSON(r: ResponseCheckTx) {
  return execTxResultJSON(r);
}

/** `abci.ExecTxResult{}`: what broadcast_tx_commit returns when the tx was not executed. */
const EMPTY_EXEC_TX_RESULT: ExecTxResult = {
  code: 0,
  data: new Uint8Array(0),
  log: '',
  info: '',
  gasWanted: 0n,
  gasUsed: 0n,
  events: [],
  codespace: '',
};

// ---------------------------------------------------------------------------------------------
// Limits: unconfirmed_txs

/**
 * validatePerPage (rpc/core/env.go), which unconfirmed_txs reuses for `limit`: absent or < 1 is
 * 30, above 100 is 100; never an error.
 */
export const DEFAULT_PER_PAGE = 30;
export const MAX_PER_PAGE = 100;
export function validatePerPage(v: bigint | undefined): number {
  if (v === undefined || v < 1n) return DEFAULT_PER_PAGE;
  if (v > BigInt(MAX_PER_PAGE)) return MAX_PER_PAGE;
  return Number(v);
}

const CANCELED = 'broadcast confirmation not received: context canceled';

/**
 * `p`, or Go's `broadcast confirmation not received: context canceled` once the client has gone
 * away (the request's context is done). The abort listener is removed when `p` settles: a
 * websocket's signal lives as long as the connection and sees many calls.
 */
function unlessCanceled<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    p.catch(() => {});
    return Promise.reject(new Error(CANCELED));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error(CANCELED));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e as Error);
      },
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Routes

const TX_PARAM = [{ name: 'tx', type: 'bytes' }] as const;

export function mempoolRoutes(ctx: MempoolRpc): Route[] {
  const log = ctx.logger;
  // Looked up at call time: the composition root may create the registry (with its metrics) after
  // the routes are built.
  let httpCalls = 0;

  /**
   * BroadcastTxAsync: the mempool's local checks (full, too large, pre-check, cache) are answered;
   * the app's CheckTx is not awaited.
   */
  const broadcastTxAsync = async (tx: Uint8Array) => {
    const early = await checkTxNoWait(ctx.mempool, tx);
    if (early !== null) throw early;
    return { code: 0, data: '', log: '', codespace: '', hash: hexUpper(txHash(tx)) };
  };

  /** BroadcastTxSync: waits for the app's CheckTx; a failing code is a result, not an error. */
  const broadcastTxSync = async (tx: Uint8Array, rc: RouteContext) => {
    const { response } = await unlessCanceled(ctx.mempool.checkTx(tx), rc.signal);
    return { code: response.code, data: hexUpper(response.data), log: response.log, codespace: response.codespace, hash: hexUpper(txHash(tx)) };
  };

  /**
   * BroadcastTxCommit: subscribe to the tx's Tx event first (so an inclusion cannot be missed),
   * then CheckTx, then wait for the event up to `[rpc] timeout_broadcast_tx_commit`.
   */
  const broadcastTxCommit = async (tx: Uint8Array, rc: RouteContext) => {
    const rpcCfg = ctx.config.rpc;
    // CometBFT's subscriber is the request's remote `ip:port`, i.e. its connection: here the
    // websocket connection's id, or for HTTP a fresh id per request (an HTTP/1.1 connection serves
    // one request at a time). Its subscription counts against the limits while it waits.
    const subscriber = rc.ws?.id ?? `${rc.remoteAddr}#http-${++httpCalls}`;
    const subs = subscriptionsFor(ctx);
    const limit = subs.limitError(subscriber);
    if (limit !== null) throw new Error(limit.message);
    const hash = hexUpper(txHash(tx));
    // types.EventQueryTxFor (tm.event='Tx' AND tx.hash='<HASH>'): the Tx message of this hash.
    // Not reproduced: pubsub's `failed to subscribe to tx: already subscribed` when the same
    // websocket already `subscribe`d to exactly that query (the registry does not expose it).
    const release = subs.hold(subscriber);
    let included: BusMessage | null = null;
    let onIncluded: (() => void) | null = null;
    let timer: NodeJS.Timeout | undefined;
    const unsubscribe = ctx.bus.subscribe((m) => {
      if (included !== null || m.type !== 'Tx' || !m.attributes['tx.hash']?.includes(hash)) return;
      included = m;
      onIncluded?.();
    });
    try {
      let check: ResponseCheckTx;
      try {
        check = (await unlessCanceled(ctx.mempool.checkTx(tx), rc.signal)).response;
      } catch (e) {
        const msg = (e as Error).message;
        if (msg === CANCELED) throw e;
        log.error('Error on broadcastTxCommit', { err: msg });
        throw new Error(`error on broadcastTxCommit: ${msg}`);
      }
      const notIncluded = { check_tx: responseCheckTxJSON(check), tx_result: execTxResultJSON(EMPTY_EXEC_TX_RESULT), hash, height: '0' };
      if (check.code !== 0) return notIncluded;

      const waitForTx = new Promise<BusMessage>((resolve, reject) => {
        if (included !== null) return resolve(included);
        timer = setTimeout(() => {
          const err = new Error('timed out waiting for tx to be included in a block');
          log.error('Error on broadcastTxCommit', { err: err.message });
          reject(err);
        }, rpcCfg.timeoutBroadcastTxCommit);
        onIncluded = () => {
          clearTimeout(timer);
          resolve(included!);
        };
      });
      const ev = await unlessCanceled(waitForTx, rc.signal);
      const data = ev.data as { height: bigint; result: ExecTxResult };
      return { check_tx: responseCheckTxJSON(check), tx_result: execTxResultJSON(data.result), hash, height: data.height.toString() };
    } finally {
      clearTimeout(timer);
      unsubscribe();
      release();
    }
  };

  return [
    route({ name: 'broadcast_tx_async', params: TX_PARAM, handler: ({ tx }) => broadcastTxAsync(tx) }),
    route({ name: 'broadcast_tx_sync', params: TX_PARAM, handler: ({ tx }, rc) => broadcastTxSync(tx, rc) }),
    route({ name: 'broadcast_tx_commit', params: TX_PARAM, handler: ({ tx }, rc) => broadcastTxCommit(tx, rc) }),
    route({
      name: 'unconfirmed_txs',
      params: [{ name: 'limit', type: 'int', optional: true }],
      handler: ({ limit }) => {
        // ReapMaxTxs returns a non-nil slice: `[]` when the pool is empty.
        const txs = ctx.mempool.reapMaxTxs(validatePerPage(limit));
        return {
          n_txs: String(txs.length),
          total: String(ctx.mempool.size()),
          total_bytes: String(ctx.mempool.sizeBytes()),
          txs: txs.map(base64),
        };
      },
    }),
    route({
      name: 'num_unconfirmed_txs',
      // NumUnconfirmedTxs leaves Txs nil: `null`.
      handler: () => ({
        n_txs: String(ctx.mempool.size()),
        total: String(ctx.mempool.size()),
        total_bytes: String(ctx.mempool.sizeBytes()),
        txs: null,
      }),
    }),
    route({
      name: 'check_tx',
      params: TX_PARAM,
      // The app's CheckTx (type New) straight through the mempool connection: no mempool checks,
      // nothing added. ResultCheckTx embeds ResponseCheckTx, so the result is flat.
      handler: async ({ tx }) => responseCheckTxJSON(await ctx.app.checkTx(tx, CheckTxType.New)),
    }),
    route({
      name: 'unsafe_flush_mempool',
      unsafe: true,
      handler: () => {
        ctx.mempool.flush();
        return {};
      },
    }),
  ];
}
