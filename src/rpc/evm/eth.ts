/**
 * The `eth` namespace (spec §4.4's status table): the methods implemented so far, each declared
 * once with its parameters (geth.ts decodes them as geth's Go types would), and the methods the
 * spec marks N, which answer an error (spec §7), never a result.
 */
import { EVM_LEAD_BYTES } from '../../app/modules/evm/kind.js';
import { bytesEqual } from '../../crypto/bytes.js';
import { ErrTxInCache } from '../../mempool/errors.js';
import { GETH_CODES, GethRpcError, gethMethod } from '../jsonrpc/geth.js';
import type { Route } from '../jsonrpc/methods.js';
import { filterMethods } from './filters.js';
import { getLogs } from './logs.js';
import { notImplementedIn } from './status.js';
import { callTime, createAccessList, estimateGas, ethCall, parseBlockOverrides, parseCallArgs, parseStateOverride } from './call.js';
import type { EvmRpcDeps } from './deps.js';
import { arg, argError, gethError, hex, parseBlockRef, qty, type BlockRef } from './format.js';
import { blockJson, blockTime, blockTxs, gasLimitOf, headerJson, heightByBlockHash, loadBlock, receiptJson, txJson, type LoadedBlock } from './view.js';

/** eth/68, as Cosmos EVM answers eth_protocolVersion (0x41). */
export const ETH_PROTOCOL_VERSION = 0x41;

/** Most eth_getBalance answers kept for the latest height (ethMethods balanceOf). */
const BALANCE_ANSWERS_MAX = 16_384;

/** Spec §4.4, eth rows N/Y and N/N (status.ts). */
export const ETH_NOT_IMPLEMENTED = notImplementedIn('eth');

/** A method the spec marks N: geth's answer for a method it does not serve. */
export function notImplemented(name: string): Route {
  return gethMethod({
    name,
    params: [{ name: 'args', type: 'any', optional: true }, { name: 'more', type: 'any', optional: true }, { name: 'rest', type: 'any', optional: true }, { name: 'last', type: 'any', optional: true }],
    handler: () => {
      throw new GethRpcError(GETH_CODES.METHOD_NOT_FOUND, `the method ${name} does not exist/is not available`);
    },
  });
}

/** The height a block reference names, for state reads (geth's StateAndHeaderByNumberOrHash). */
export function stateHeight(deps: EvmRpcDeps, ref: BlockRef): bigint {
  const latest = deps.lastHeight();
  let h: bigint;
  if ('tag' in ref) h = ref.tag === 'earliest' ? deps.blocks.base() : latest;
  else if ('hash' in ref) {
    const found = heightByBlockHash(deps, ref.hash);
    if (found === null || found > latest) throw gethError('header for hash not found');
    h = found;
  } else h = ref.number;
  if (h > latest) throw gethError('header not found');
  if (h === 0n) h = 1n; // genesis state is the state the first block starts from; chaind keeps it as of height 1
  if (latest === 0n) throw gethError('header not found');
  if (h !== latest && deps.resolveQueryHeight !== undefined) {
    try {
      deps.resolveQueryHeight(h);
    } catch {
      throw gethError(`missing trie node: the state of block ${h} is not available (pruned)`);
    }
  }
  return h;
}

/** The block a number or tag names (for block objects), or undefined (geth answers null). */
function blockByRef(deps: EvmRpcDeps, ref: BlockRef): LoadedBlock | undefined {
  if ('hash' in ref) {
    const h = heightByBlockHash(deps, ref.hash);
    return h === null ? undefined : loadBlock(deps, h);
  }
  const h = 'tag' in ref ? (ref.tag === 'earliest' ? deps.blocks.base() : deps.lastHeight()) : ref.number;
  // Block 0 is the first block the store has (Cosmos EVM maps 0 to height 1; CometBFT has no block 0).
  return loadBlock(deps, h === 0n ? deps.blocks.base() : h);
}

function blockAt(deps: EvmRpcDeps, height: bigint): LoadedBlock {
  const b = loadBlock(deps, height);
  if (b === undefined) throw gethError('header not found');
  return b;
}

/** A storage position: up to 32 bytes of hex, left-padded (geth's decodeHash). */
function storageKey(v: unknown): Uint8Array {
  if (typeof v !== 'string') throw argError(1, 'json: cannot unmarshal non-string into Go value of type string');
  let s = v.startsWith('0x') || v.startsWith('0X') ? v.slice(2) : v;
  if (s.length % 2 === 1) s = `0${s}`;
  if (s.length > 64) throw gethError(`hex string too long, want at most 32 bytes`);
  if (!/^[0-9a-fA-F]*$/.test(s)) throw gethError('invalid hex string');
  const out = new Uint8Array(32);
  out.set(Buffer.from(s, 'hex'), 32 - s.length / 2);
  return out;
}

/** A 32-bit hash of an address's bytes (balanceOf's map key). */
function addressHash(a: Uint8Array): number {
  let h = 0;
  for (let i = 0; i < a.length; i++) h = (Math.imul(h, 31) + a[i]!) | 0;
  return h;
}

/** The geth text for a CheckTx refusal: the keeper's reason without the SDK's trailing description. */
function checkTxMessage(log: string): string {
  return log.replace(/: [a-z][a-z -]*$/, '');
}

export function ethMethods(deps: EvmRpcDeps): Route[] {
  const k = deps.keeper;
  /** sender:nonce of mempool txs, by CometBFT hash (decoded once). */
  const poolInfo = new Map<string, { sender: string; nonce: bigint; raw: Uint8Array } | null>();
  const mempoolTxs = () => {
    const txs = deps.mempool.reapMaxTxs(-1);
    if (poolInfo.size > 50_000) poolInfo.clear();
    const out: { sender: string; nonce: bigint; raw: Uint8Array; hash: string }[] = [];
    for (const raw of txs) {
      const key = hex(k.crypto.sha256(raw));
      let info = poolInfo.get(key);
      if (info === undefined) {
        try {
          const etx = k.decode(raw);
          info = { sender: hex(k.sender(etx)), nonce: etx.tx.nonce, raw };
        } catch {
          info = null;
        }
        poolInfo.set(key, info);
      }
      if (info !== null) out.push({ ...info, hash: key });
    }
    return out;
  };

  let lastNumber = { height: -1n, hex: '' };
  /**
   * A read-only context for `height`: the one of the latest height is made once per block (it
   * reads the committed store, whatever its height; a context holds no per-call state for reads).
   */
  let latestCtx: { height: bigint; ctx: ReturnType<EvmRpcDeps['queryContext']> } | undefined;
  const readContext = (height: bigint) => {
    if (height !== deps.lastHeight()) return deps.queryContext(height);
    if (latestCtx === undefined || latestCtx.height !== height) latestCtx = { height, ctx: deps.queryContext(height) };
    return latestCtx.ctx;
  };

  /**
   * eth_getBalance answers of the latest height, by address. The state of a height never
   * changes, and the app moves its last height only once that height's state is readable
   * (BaseApp.commit on this thread; reload after the executor thread's commit): so the map is
   * emptied whenever the last height differs from the one it was filled at (a rollback after an
   * aborted block moves it too). Bounded: emptied when full. Keyed by a hash of the 20 bytes (a
   * number: no key string to make per call), each entry holding its address: an entry of another
   * address under the same hash is a miss, and the new answer takes its place.
   */
  let balances = { height: -1n, answers: new Map<number, { address: Uint8Array; answer: string }>() };
  const balanceOf = (address: Uint8Array, b: unknown): string => {
    const latest = deps.lastHeight();
    // `latest` or none (what stateHeight makes of them once a block exists), else the general way.
    const h = (b === 'latest' || b === undefined) && latest > 0n ? latest : stateHeight(deps, parseBlockRef(1, b));
    if (h !== latest) return qty(k.bank.getBalance(readContext(h), address, k.denom).amount);
    if (balances.height !== latest) balances = { height: latest, answers: new Map() };
    const key = addressHash(address);
    const e = balances.answers.get(key);
    if (e !== undefined && bytesEqual(e.address, address)) return e.answer;
    const answer = qty(k.bank.getBalance(readContext(h), address, k.denom).amount);
    if (balances.answers.size >= BALANCE_ANSWERS_MAX) balances.answers.clear();
    // A copy: the caller's bytes are not ours to keep.
    balances.answers.set(key, { address: address.slice(), answer });
    return answer;
  };

  const block = { name: 'block', type: 'any', optional: true } as const;
  const txAt = (lb: LoadedBlock | undefined, index: bigint) => {
    if (lb === undefined) return null;
    const t = blockTxs(deps, lb).find((x) => BigInt(x.receipt.index) === index);
    return t?.tx ? txJson(t.tx, t.receipt, lb) : null;
  };
  return [
    gethMethod({ name: 'eth_chainId', handler: () => qty(k.chainId) }),
    gethMethod({
      name: 'eth_blockNumber',
      handler: () => {
        // The hex of the latest height, made once per block.
        const h = deps.lastHeight();
        if (h !== lastNumber.height) lastNumber = { height: h, hex: qty(h) };
        return lastNumber.hex;
      },
    }),
    gethMethod({
      name: 'eth_syncing',
      handler: () => (deps.catchingUp() ? { startingBlock: qty(deps.blocks.base()), currentBlock: qty(deps.lastHeight()), highestBlock: qty(deps.blocks.height()) } : false),
    }),
    gethMethod({ name: 'eth_gasPrice', handler: () => '0x0' }),
    gethMethod({ name: 'eth_maxPriorityFeePerGas', handler: () => '0x0' }),
    gethMethod({ name: 'eth_accounts', handler: () => (deps.keystore?.accounts() ?? []).map((a) => hex(a.address)) }),
    gethMethod({ name: 'eth_coinbase', handler: () => hex(k.coinbase) }),
    gethMethod({ name: 'eth_mining', handler: () => false }),
    gethMethod({ name: 'eth_hashrate', handler: () => '0x0' }),
    gethMethod({ name: 'eth_protocolVersion', handler: () => qty(ETH_PROTOCOL_VERSION) }),
    gethMethod({
      name: 'eth_getBalance',
      params: [{ name: 'address', type: 'address' }, block],
      // The bank balance of the EVM denom is the account's balance (state.ts readAccount): read
      // alone, without the auth account, code hash and storage root the account record needs.
      // Answers of the latest height come from balanceOf's map while the height stays.
      handler: ({ address, block: b }) => balanceOf(address, b),
    }),
    gethMethod({
      name: 'eth_getTransactionCount',
      params: [{ name: 'address', type: 'address' }, block],
      handler: ({ address, block: b }) => {
        const ref = parseBlockRef(1, b);
        // The auth sequence is the nonce (state.ts readAccount): read alone.
        const nonce = k.auth.getAccount(readContext(stateHeight(deps, ref)), address)?.sequence ?? 0n;
        if (!('tag' in ref) || ref.tag !== 'pending') return qty(nonce);
        // pending: the next nonce after the sender's pending txs (consecutive from the state's).
        if (deps.txpool !== undefined) {
          const p = deps.txpool.pendingNonce(hex(address).toLowerCase());
          return qty(p !== undefined && p > nonce ? p : nonce);
        }
        const mine = new Set(mempoolTxs().filter((t) => t.sender === hex(address)).map((t) => t.nonce));
        let next = nonce;
        while (mine.has(next)) next++;
        return qty(next);
      },
    }),
    gethMethod({
      name: 'eth_getCode',
      params: [{ name: 'address', type: 'address' }, block],
      handler: ({ address, block: b }) => hex(k.code(deps.queryContext(stateHeight(deps, parseBlockRef(1, b))), address)),
    }),
    gethMethod({
      name: 'eth_getStorageAt',
      params: [{ name: 'address', type: 'address' }, { name: 'slot', type: 'any' }, block],
      handler: ({ address, slot, block: b }) => {
        const key = storageKey(slot);
        return hex(k.storage(deps.queryContext(stateHeight(deps, parseBlockRef(2, b))), address, key));
      },
    }),
    gethMethod({
      name: 'eth_sendRawTransaction',
      params: [{ name: 'tx', type: 'data' }],
      handler: async ({ tx }) => {
        // Ethereum bytes are decoded (and their sender recovered) once, in the EVM pool's admission
        // turn, not here: a block's worth of these arrives at once, and what a handler does before
        // its first await is work the RPC thread's loop slice (src/rpc/server/slice.ts) counts, so
        // every request queued behind the burst (an eth_getBalance) waited for all of it. Bytes
        // outside the EVM kind's lead bytes would go to the Cosmos pool: refused here, with the
        // decoder's words (they never decode as an Ethereum tx).
        if (tx.length === 0 || !EVM_LEAD_BYTES.includes(tx[0]!)) {
          try {
            k.decode(tx);
          } catch (e) {
            throw gethError(checkTxMessage((e as Error).message));
          }
        }
        let res;
        try {
          res = await deps.mempool.checkTx(tx);
        } catch (e) {
          if (e instanceof ErrTxInCache) throw gethError('already known');
          throw gethError((e as Error).message);
        }
        if (res.response.code !== 0) throw gethError(checkTxMessage(res.response.log));
        // The pool's admission decoded these bytes (the keeper keeps that by their identity) and hashed them.
        return hex(k.ethHash(k.decode(tx)));
      },
    }),
    gethMethod({
      name: 'eth_getTransactionReceipt',
      params: [{ name: 'hash', type: 'hash' }],
      handler: ({ hash }) => {
        const r = k.receiptByHash(hash);
        if (r === undefined) return null;
        const b = loadBlock(deps, r.height);
        return b === undefined ? null : receiptJson(r, b);
      },
    }),
    gethMethod({
      name: 'eth_getTransactionByHash',
      params: [{ name: 'hash', type: 'hash' }],
      handler: ({ hash }) => {
        const r = k.receiptByHash(hash);
        if (r !== undefined) {
          const b = loadBlock(deps, r.height);
          if (b === undefined) return null;
          const t = blockTxs(deps, b).find((x) => x.receipt.index === r.index);
          return t?.tx ? txJson(t.tx, t.receipt, b) : null;
        }
        // A pending tx: in the mempool, not yet in a block (queued ones too, as geth's pool.Get).
        const want = hex(hash);
        const pooled = deps.txpool?.getByHash(want);
        if (pooled !== undefined) {
          const etx = k.decode(pooled.tx);
          k.sender(etx);
          return txJson(etx.tx, undefined, undefined);
        }
        for (const p of mempoolTxs()) {
          const etx = k.decode(p.raw);
          if (hex(etx.tx.hash()) === want) {
            k.sender(etx);
            return txJson(etx.tx, undefined, undefined);
          }
        }
        return null;
      },
    }),
    gethMethod({
      name: 'eth_getBlockByNumber',
      params: [{ name: 'block', type: 'block' }, { name: 'full', type: 'bool' }],
      handler: async ({ block: b, full }) => {
        const lb = blockByRef(deps, typeof b === 'bigint' ? { number: b } : { tag: b });
        return lb === undefined ? null : blockJson(deps, lb, full);
      },
    }),
    gethMethod({
      name: 'eth_getBlockByHash',
      params: [{ name: 'hash', type: 'hash' }, { name: 'full', type: 'bool' }],
      handler: async ({ hash, full }) => {
        const lb = blockByRef(deps, { hash });
        return lb === undefined ? null : blockJson(deps, lb, full);
      },
    }),
    gethMethod({
      name: 'eth_call',
      params: [{ name: 'args', type: 'any' }, block, { name: 'overrides', type: 'any', optional: true }, { name: 'blockOverrides', type: 'any', optional: true }],
      handler: ({ args, block: b, overrides, blockOverrides }) => {
        const a = { ...parseCallArgs(0, args), overrides: parseStateOverride(2, overrides), blockOverrides: parseBlockOverrides(3, blockOverrides) };
        const h = stateHeight(deps, parseBlockRef(1, b));
        return ethCall(deps, h, callTime(deps, h), a);
      },
    }),
    gethMethod({
      name: 'eth_estimateGas',
      params: [{ name: 'args', type: 'any' }, block, { name: 'overrides', type: 'any', optional: true }, { name: 'blockOverrides', type: 'any', optional: true }],
      handler: async ({ args, block: b, overrides, blockOverrides }) => {
        const a = { ...parseCallArgs(0, args), overrides: parseStateOverride(2, overrides), blockOverrides: parseBlockOverrides(3, blockOverrides) };
        const h = stateHeight(deps, parseBlockRef(1, b));
        return qty(await estimateGas(deps, h, callTime(deps, h), a));
      },
    }),
    gethMethod({
      name: 'eth_getHeaderByNumber',
      params: [{ name: 'block', type: 'block' }],
      handler: async ({ block: b }) => {
        const lb = blockByRef(deps, typeof b === 'bigint' ? { number: b } : { tag: b });
        return lb === undefined ? null : headerJson(await blockJson(deps, lb, false));
      },
    }),
    gethMethod({
      name: 'eth_getHeaderByHash',
      params: [{ name: 'hash', type: 'hash' }],
      handler: async ({ hash }) => {
        const lb = blockByRef(deps, { hash });
        return lb === undefined ? null : headerJson(await blockJson(deps, lb, false));
      },
    }),
    gethMethod({
      name: 'eth_getBlockTransactionCountByNumber',
      params: [{ name: 'block', type: 'block' }],
      handler: ({ block: b }) => {
        const lb = blockByRef(deps, typeof b === 'bigint' ? { number: b } : { tag: b });
        return lb === undefined ? null : qty(k.blockSummary(lb.height)?.txCount ?? 0);
      },
    }),
    gethMethod({
      name: 'eth_getBlockTransactionCountByHash',
      params: [{ name: 'hash', type: 'hash' }],
      handler: ({ hash }) => {
        const lb = blockByRef(deps, { hash });
        return lb === undefined ? null : qty(k.blockSummary(lb.height)?.txCount ?? 0);
      },
    }),
    gethMethod({
      name: 'eth_getTransactionByBlockNumberAndIndex',
      params: [{ name: 'block', type: 'block' }, { name: 'index', type: 'uint64' }],
      handler: ({ block: b, index }) => txAt(blockByRef(deps, typeof b === 'bigint' ? { number: b } : { tag: b }), index),
    }),
    gethMethod({
      name: 'eth_getTransactionByBlockHashAndIndex',
      params: [{ name: 'hash', type: 'hash' }, { name: 'index', type: 'uint64' }],
      handler: ({ hash, index }) => txAt(blockByRef(deps, { hash }), index),
    }),
    gethMethod({
      name: 'eth_getBlockReceipts',
      params: [{ name: 'block', type: 'any' }],
      handler: ({ block: b }) => {
        const lb = blockByRef(deps, parseBlockRef(0, b));
        return lb === undefined ? null : k.blockReceipts(lb.height).map((r) => receiptJson(r, lb));
      },
    }),
    gethMethod({
      name: 'eth_getTransactionLogs',
      params: [{ name: 'hash', type: 'hash' }],
      handler: ({ hash }) => {
        const r = k.receiptByHash(hash);
        if (r === undefined) return null;
        const b = loadBlock(deps, r.height);
        return b === undefined ? null : receiptJson(r, b).logs;
      },
    }),
    gethMethod({ name: 'eth_getUncleCountByBlockNumber', params: [{ name: 'block', type: 'block' }], handler: ({ block: b }) => (blockByRef(deps, typeof b === 'bigint' ? { number: b } : { tag: b }) ? '0x0' : null) }),
    gethMethod({ name: 'eth_getUncleCountByBlockHash', params: [{ name: 'hash', type: 'hash' }], handler: ({ hash }) => (blockByRef(deps, { hash }) ? '0x0' : null) }),
    gethMethod({ name: 'eth_getUncleByBlockNumberAndIndex', params: [{ name: 'block', type: 'block' }, { name: 'index', type: 'uint64' }], handler: () => null }),
    gethMethod({ name: 'eth_getUncleByBlockHashAndIndex', params: [{ name: 'hash', type: 'hash' }, { name: 'index', type: 'uint64' }], handler: () => null }),
    gethMethod({
      name: 'eth_getProof',
      params: [{ name: 'address', type: 'address' }, { name: 'keys', type: 'any' }, block],
      handler: ({ address, keys, block: b }) => {
        if (!Array.isArray(keys)) throw argError(1, 'json: cannot unmarshal non-array into Go value of type []string');
        if (keys.length > 1024) throw new GethRpcError(GETH_CODES.INVALID_PARAMS, `too many storage keys requested (max 1024, got ${keys.length})`);
        const slots = keys.map((x) => storageKey(x));
        return k.getProof(address, slots, stateHeight(deps, parseBlockRef(2, b)));
      },
    }),
    gethMethod({
      name: 'eth_getPendingTransactions',
      handler: () =>
        mempoolTxs().map((p) => {
          const etx = k.decode(p.raw);
          k.sender(etx);
          return txJson(etx.tx, undefined, undefined);
        }),
    }),
    gethMethod({ name: 'eth_getLogs', params: [{ name: 'criteria', type: 'any' }], handler: ({ criteria }) => getLogs(deps, criteria) }),
    gethMethod({
      name: 'eth_feeHistory',
      params: [{ name: 'blockCount', type: 'any' }, { name: 'newest', type: 'block' }, { name: 'percentiles', type: 'any', optional: true }],
      handler: ({ blockCount, newest, percentiles }) => feeHistory(deps, blockCount, newest, percentiles),
    }),
    gethMethod({
      name: 'eth_createAccessList',
      params: [{ name: 'args', type: 'any' }, block],
      handler: ({ args, block: b }) => {
        const a = parseCallArgs(0, args);
        const h = stateHeight(deps, parseBlockRef(1, b));
        return createAccessList(deps, h, callTime(deps, h), a);
      },
    }),
    ...filterMethods(deps),
    ...ETH_NOT_IMPLEMENTED.map(notImplemented),
  ];
}

/**
 * eth_feeHistory (eth/gasprice/feehistory.go): chaind has no base fee (0) and accepts a 0 tip, so
 * every base fee and reward is 0; gasUsedRatio is each block's gas used over its gas limit.
 */
function feeHistory(deps: EvmRpcDeps, countArg: unknown, newest: bigint | string, pct: unknown): unknown {
  let count: bigint;
  if (typeof countArg === 'number' && Number.isInteger(countArg) && countArg >= 0) count = BigInt(countArg);
  else count = arg<bigint>(0, 'uint64', countArg);
  let percentiles: number[] | undefined;
  if (pct !== undefined && pct !== null) {
    if (!Array.isArray(pct) || pct.some((x) => typeof x !== 'number')) throw argError(2, 'json: cannot unmarshal non-array into Go value of type []float64');
    if (pct.length > 100) throw gethError(`too many percentiles: ${pct.length} > 100`);
    pct.forEach((x: number, i: number) => {
      if (x < 0 || x > 100 || (i > 0 && x <= pct[i - 1])) throw gethError(`invalid reward percentile: ${x}`);
    });
    percentiles = pct as number[];
  }
  const head = deps.lastHeight();
  const last = typeof newest === 'bigint' ? newest : newest === 'earliest' ? deps.blocks.base() : head;
  if (last > head) throw gethError(`request beyond head block: requested ${last}, head ${head}`);
  if (count === 0n) return { oldestBlock: '0x0', gasUsedRatio: null };
  const cap = BigInt(deps.feeHistoryCap ?? 1024);
  if (count > cap) count = cap;
  const base = deps.blocks.base() > 1n ? deps.blocks.base() : 1n;
  const oldest = last - count + 1n < base ? base : last - count + 1n;
  const limit = Number(gasLimitOf(deps));
  const ratios: number[] = [];
  const rewards: string[][] = [];
  for (let h = oldest; h <= last; h++) {
    ratios.push(Number(deps.keeper.blockSummary(h)?.gasUsed ?? 0n) / limit);
    if (percentiles) rewards.push(percentiles.map(() => '0x0'));
  }
  return {
    oldestBlock: qty(oldest),
    ...(percentiles ? { reward: rewards } : {}),
    baseFeePerGas: Array.from({ length: ratios.length + 1 }, () => '0x0'),
    gasUsedRatio: ratios,
  };
}
