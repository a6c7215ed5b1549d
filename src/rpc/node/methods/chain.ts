/**
 * Node RPC methods: blockchain, block, block_by_hash, block_results, commit, header,
 * header_by_hash, validators, genesis, genesis_chunked, consensus_params, tx, tx_search,
 * block_search.
 *
 * Behaviour, parameters, error texts and cacheability follow CometBFT 0.38: rpc/core/blocks.go,
 * consensus.go (validators, consensus_params), net.go (genesis, genesis_chunked), tx.go,
 * env.go (heights and pages), routes.go (parameter names and Cacheable flags);
 * result shapes from rpc/core/types/responses.go (cometbft/cometbft:rpc/core/routes.go, libs/json/encoder.go; fixtures in test/fixtures/cometbft-v038-kvstore.json).
 */
import { genesisToJson } from '../../../config/genesis.js';
import { merkleProofs } from '../../../crypto/merkle.js';
import { zeroBlockId } from '../../../state/execution.js';
import type { Block, BlockMeta } from '../../../types/block.js';
import { consensusParamsHash, txHash } from '../../../types/hashing.js';
import { base64OrNull, blockIdJSON, blockJSON, blockMetaJSON, commitJSON, consensusParamsJSON, headerJSON, validatorJSON } from '../../../types/json.js';
import type { ConsensusParams } from '../../../types/params.js';
import { ValidatorSet } from '../../../types/validator_set.js';
import { marshalJson } from '../../server/gojson.js';
import type { ChainRpc } from '../context.js';
import { RawJson } from '../../jsonrpc/envelope.js';
import { GoPanicError } from '../../jsonrpc/cometbft-params.js';
import { route, type Route } from '../../jsonrpc/methods.js';
import {
  filterMinMax,
  latestUncommittedHeight,
  pageCount,
  pageError,
  pageOf,
  perPageOf,
  resolveHeight,
  skipCount,
} from './chain-args.js';
import {
  abciEventJSON,
  consensusParamUpdatesJSON,
  execTxResultJSON,
  resultTxJSON,
  validatorUpdateJSON,
  type TxProof,
} from './chain-json.js';
import { bytesEqual, hexUpper } from '../../../crypto/bytes.js';

/** env.go genesisChunkSize: the genesis JSON is served in 16 MiB slices. */
export const GENESIS_CHUNK_SIZE = 16 * 1024 * 1024;


const HEIGHT = [{ name: 'height', type: 'int64', optional: true }] as const;

/** Serialised `block` results kept per node (~2–20 KiB each for small blocks). */
const BLOCK_CACHE_SIZE = 256;

export function chainRoutes(ctx: ChainRpc): Route[] {
  const blocks = ctx.storage.blocks;
  const stateStore = ctx.storage.state;
  const names = ctx.names;
  const evidenceNames = { duplicateVote: names.evidenceType('DuplicateVoteEvidence'), lightClientAttack: names.evidenceType('LightClientAttackEvidence') };
  const pubKeyTypeName = (pk: { type: 'ed25519' | 'secp256k1' }) => names.pubKeyType(pk.type);

  const renderBlock = (b: Block | null) => (b ? blockJSON(b, { evidenceNames }) : null);
  /** coretypes.ResultBlock: a missing meta gives the zero BlockID (blocks.go Block, BlockByHash). */
  const resultBlock = (meta: BlockMeta | null, block: Block | null) => ({
    block_id: blockIdJSON(meta ? meta.blockId : zeroBlockId()),
    block: renderBlock(block),
  });
  /**
   * `block` results by height, serialised once: a committed block never changes, and decoding
   * plus JSON is ~85% of a /block request's cost. BLOCK_CACHE_SIZE heights, evicted by second
   * chance (CLOCK): a hit only marks its entry, where moving it to the back of the Map (true LRU)
   * cost more than the rest of the lookup; recent blocks, the hot ones for explorers and
   * indexers following the tip, stay. Keyed by the height as a number (exact below 2^53): a
   * BigInt key hashes slowly.
   */
  const blockCache = new Map<number, { raw: RawJson; used: boolean }>();
  const cachedBlock = (h: bigint): RawJson => {
    const key = Number(h);
    const hit = blockCache.get(key);
    if (hit) {
      hit.used = true;
      return hit.raw;
    }
    const raw = new RawJson(marshalJson(resultBlock(blocks.loadBlockMeta(h), blocks.loadBlock(h))));
    // Oldest first: a marked entry is unmarked and moved to the back, the first unmarked goes
    // (if all were marked, the oldest, now unmarked, comes round again). Before the insert, so
    // that the new entry is never the one evicted.
    if (blockCache.size >= BLOCK_CACHE_SIZE) {
      for (const [k, e] of blockCache) {
        blockCache.delete(k);
        if (!e.used) break;
        e.used = false;
        blockCache.set(k, e);
      }
    }
    blockCache.set(key, { raw, used: false });
    return raw;
  };

  // ------------------------------------------------------------------------------------------
  // Validator sets and params by height, with what the store does not (yet) keep.

  /**
   * The validator set of `height` (state/store.go LoadValidators). The store writes the sets of
   * H+1 and H+2 with each block H, so the initial height's set is never on disk: it is rebuilt
   * from genesis the way the node's start-up does, and only served if it hashes to the
   * validators_hash of that height's header. Before the first block, the in-memory state holds
   * the sets of the next two heights.
   */
  function validatorsAt(height: bigint): ValidatorSet {
    const stored = stateStore.loadValidators(height);
    if (stored) return stored;
    const st = ctx.consensus.getState();
    if (height === st.lastBlockHeight + 1n) return st.validators;
    if (height === st.lastBlockHeight + 2n) return st.nextValidators;
    if (height === st.initialHeight) {
      const set = new ValidatorSet(ctx.genesis.validators.map((v) => ({ pubKey: v.pubKey, power: v.power })));
      const meta = blocks.loadBlockMeta(height);
      if (meta && bytesEqual(meta.header.validatorsHash, set.hash())) return set;
    }
    throw new Error(`could not find validator set for height #${height}`);
  }

  /**
   * The consensus params of `height` (state/store.go LoadConsensusParams). Heights from the
   * state's last params change up to the next height have the current params; the initial
   * height's, never stored, are the genesis params when they hash to that header's consensus_hash.
   */
  function consensusParamsAt(height: bigint): ConsensusParams {
    const stored = stateStore.loadConsensusParams(height);
    if (stored) return stored;
    const st = ctx.consensus.getState();
    if (height >= st.lastHeightConsensusParamsChanged && height <= st.lastBlockHeight + 1n) return st.consensusParams;
    if (height === st.initialHeight) {
      const meta = blocks.loadBlockMeta(height);
      if (meta && bytesEqual(meta.header.consensusHash, consensusParamsHash(ctx.genesis.consensusParams))) return ctx.genesis.consensusParams;
    }
    throw new Error(`could not find consensus params for height #${height}`);
  }

  // ------------------------------------------------------------------------------------------
  // Genesis (net.go Genesis, GenesisChunked; env.go InitGenesisChunks)

  let genesisCache: { doc: ChainRpc['genesis']; json: Record<string, unknown>; chunks: string[] } | null = null;
  /**
   * The GenesisDoc as cmtjson marshals it (compact, HTML-escaped), cut into 16 MiB chunks once:
   * CometBFT does this at start-up. Keyed on the document object, so a replaced `ctx.genesis`
   * is re-chunked.
   */
  function genesisDoc() {
    if (genesisCache?.doc === ctx.genesis) return genesisCache;
    const doc = ctx.genesis;
    const json = genesisToJson(doc, names);
    const data = Buffer.from(marshalJson(json), 'utf8');
    const chunks: string[] = [];
    for (let i = 0; i < data.length; i += GENESIS_CHUNK_SIZE) chunks.push(data.subarray(i, i + GENESIS_CHUNK_SIZE).toString('base64'));
    genesisCache = { doc, json, chunks };
    return genesisCache;
  }

  // ------------------------------------------------------------------------------------------
  // Tx proofs (types/tx.go Txs.Proof: leaves are the tx hashes, root = the block's data hash)

  /** Proofs of one request, computed once per block however many of its txs are asked for. */
  function proofSource() {
    const byHeight = new Map<bigint, { root: Uint8Array; txs: Uint8Array[]; proofs: ReturnType<typeof merkleProofs>['proofs'] } | null>();
    return (height: bigint, index: number): TxProof | undefined => {
      let entry = byHeight.get(height);
      if (entry === undefined) {
        const block = blocks.loadBlock(height);
        if (block) {
          const txs = block.data.txs;
          const { root, proofs } = merkleProofs(txs.map(txHash));
          entry = { root, txs, proofs };
        } else entry = null;
        byHeight.set(height, entry);
      }
      // A pruned block, or an index the block does not have: no proof (CometBFT leaves it zero).
      if (!entry || index < 0 || index >= entry.txs.length) return undefined;
      return { rootHash: entry.root, tx: entry.txs[index]!, proof: entry.proofs[index]! };
    };
  }

  /**
   * Search pages as the indexer validates them (numbers), keeping the client's exact page in the
   * error when it is beyond 2^53: then it is out of range whatever the total.
   */
  function searchPage(page: bigint | undefined, perPage: bigint | undefined, run: (page: number | undefined, perPage: number) => { total: number }) {
    const pp = perPageOf(perPage);
    if (page !== undefined && (page > BigInt(Number.MAX_SAFE_INTEGER) || page < BigInt(Number.MIN_SAFE_INTEGER))) {
      const { total } = run(undefined, pp);
      throw pageError(pageCount(pp, total), page);
    }
    return pp;
  }

  return [
    // blocks.go BlockchainInfo: block metas from max down to min, at most 20.
    route({
      name: 'blockchain',
      params: [
        { name: 'minHeight', type: 'int64' },
        { name: 'maxHeight', type: 'int64' },
      ] as const,
      cacheable: true,
      handler: ({ minHeight, maxHeight }) => {
        const last = blocks.height();
        const { min, max } = filterMinMax(blocks.base(), last, minHeight, maxHeight);
        const metas: (ReturnType<typeof blockMetaJSON> | null)[] = [];
        for (let h = max; h >= min; h--) {
          const m = blocks.loadBlockMeta(h);
          metas.push(m ? blockMetaJSON(m) : null);
        }
        return { last_height: last.toString(), block_metas: metas };
      },
    }),

    // net.go Genesis: the whole document unless it takes more than one chunk.
    route({
      name: 'genesis',
      cacheable: true,
      handler: () => {
        const g = genesisDoc();
        if (g.chunks.length > 1) throw new Error('genesis response is large, please use the genesis_chunked API instead');
        return { genesis: g.json };
      },
    }),

    // net.go GenesisChunked: chunk `chunk` of the marshalled document, base64.
    route({
      name: 'genesis_chunked',
      params: [{ name: 'chunk', type: 'uint' }] as const,
      cacheable: true,
      handler: ({ chunk }) => {
        const { chunks } = genesisDoc();
        if (chunks.length === 0) throw new Error('service configuration error, there are no chunks');
        // Go converts the uint to int: values from 2^63 wrap negative, pass the bounds check and
        // panic on the slice index (recovered as HTTP 500, id -1).
        const id = BigInt.asIntN(64, chunk);
        if (id > BigInt(chunks.length - 1)) throw new Error(`there are ${chunks.length - 1} chunks, ${id} is invalid`);
        if (id < 0n) throw new GoPanicError(`runtime error: index out of range [${id}]`);
        return { chunk: id.toString(), total: String(chunks.length), data: chunks[Number(id)]! };
      },
    }),

    // blocks.go Block: the block and its BlockID; a height with no meta gives the zero BlockID.
    route({
      name: 'block',
      params: HEIGHT,
      cacheable: { unlessDefault: ['height'] },
      handler: ({ height }) => cachedBlock(resolveHeight(blocks, blocks.height(), height)),
    }),

    // blocks.go BlockByHash: an unknown hash is not an error: zero BlockID and `block: null`.
    route({
      name: 'block_by_hash',
      params: [{ name: 'hash', type: 'bytes' }] as const,
      cacheable: true,
      handler: ({ hash }) => {
        const h = hash.length > 0 ? blocks.heightByHash(hash) : null;
        const block = h === null ? null : blocks.loadBlock(h);
        if (!block) return resultBlock(null, null);
        return cachedBlock(block.header.height);
      },
    }),

    // blocks.go BlockResults: the stored FinalizeBlock response of the height.
    route({
      name: 'block_results',
      params: HEIGHT,
      cacheable: { unlessDefault: ['height'] },
      handler: ({ height }) => {
        const h = resolveHeight(blocks, blocks.height(), height);
        const r = stateStore.loadFinalizeBlockResponse(h);
        if (!r) throw new Error(`could not find results for height #${h}`);
        // Empty repeated fields decode as nil slices in Go: null, not [].
        return {
          height: h.toString(),
          txs_results: r.txResults.length > 0 ? r.txResults.map(execTxResultJSON) : null,
          finalize_block_events: r.events.length > 0 ? r.events.map(abciEventJSON) : null,
          validator_updates: r.validatorUpdates.length > 0 ? r.validatorUpdates.map((u) => validatorUpdateJSON(u, names)) : null,
          consensus_param_updates: r.consensusParamUpdates ? consensusParamUpdatesJSON(r.consensusParamUpdates) : null,
          app_hash: base64OrNull(r.appHash),
        };
      },
    }),

    // blocks.go Commit: the seen commit (canonical=false) at the store height, else the
    // canonical commit from block h+1; a height without meta answers `null`.
    route({
      name: 'commit',
      params: HEIGHT,
      cacheable: { unlessDefault: ['height'] },
      handler: ({ height }) => {
        const latest = blocks.height();
        const h = resolveHeight(blocks, latest, height);
        const meta = blocks.loadBlockMeta(h);
        if (!meta) return null;
        const canonical = h !== latest;
        const commit = canonical ? blocks.loadBlockCommit(h) : blocks.loadSeenCommit(h);
        return {
          signed_header: { header: headerJSON(meta.header), commit: commit ? commitJSON(commit) : null },
          canonical,
        };
      },
    }),

    // blocks.go Header: the header from the block meta, or `header: null`.
    route({
      name: 'header',
      params: HEIGHT,
      cacheable: { unlessDefault: ['height'] },
      handler: ({ height }) => {
        const h = resolveHeight(blocks, blocks.height(), height);
        const meta = blocks.loadBlockMeta(h);
        return { header: meta ? headerJSON(meta.header) : null };
      },
    }),

    // blocks.go HeaderByHash: the hash is HexBytes (hex in JSON-RPC); unknown gives `header: null`.
    route({
      name: 'header_by_hash',
      params: [{ name: 'hash', type: 'hexbytes' }] as const,
      cacheable: true,
      handler: ({ hash }) => {
        const h = hash.length > 0 ? blocks.heightByHash(hash) : null;
        const meta = h === null ? null : blocks.loadBlockMeta(h);
        return { header: meta ? headerJSON(meta.header) : null };
      },
    }),

    // consensus.go Validators: the set of a height (default: the next one), paginated.
    route({
      name: 'validators',
      params: [
        { name: 'height', type: 'int64', optional: true },
        { name: 'page', type: 'int', optional: true },
        { name: 'per_page', type: 'int', optional: true },
      ] as const,
      cacheable: { unlessDefault: ['height'] },
      handler: ({ height, page, per_page }) => {
        const h = resolveHeight(blocks, latestUncommittedHeight(blocks), height);
        const set = validatorsAt(h);
        const total = set.validators.length;
        const perPage = perPageOf(per_page);
        const p = pageOf(page, perPage, total);
        const skip = skipCount(p, perPage);
        const vals = set.validators.slice(skip, skip + Math.min(perPage, total - skip));
        return {
          block_height: h.toString(),
          validators: vals.map((v) => validatorJSON(v, pubKeyTypeName)),
          count: String(vals.length),
          total: String(total),
        };
      },
    }),

    // consensus.go ConsensusParams: the params of a height (default: the next one).
    route({
      name: 'consensus_params',
      params: HEIGHT,
      cacheable: { unlessDefault: ['height'] },
      handler: ({ height }) => {
        const h = resolveHeight(blocks, latestUncommittedHeight(blocks), height);
        return { block_height: h.toString(), consensus_params: consensusParamsJSON(consensusParamsAt(h)) };
      },
    }),

    // tx.go Tx: the indexed tx by hash, with its Merkle proof when `prove`.
    route({
      name: 'tx',
      params: [
        { name: 'hash', type: 'bytes' },
        { name: 'prove', type: 'bool' },
      ] as const,
      cacheable: true,
      handler: ({ hash, prove }) => {
        const ix = ctx.txIndexer;
        if (!ix) throw new Error('transaction indexing is disabled');
        const rec = ix.getTx(hash);
        if (!rec) throw new Error(`tx (${hexUpper(hash)}) not found`);
        const proof = prove ? proofSource()(rec.height, rec.index) : undefined;
        // The answer echoes the hash as asked (tx.go: `Hash: hash`).
        return resultTxJSON({ hash, height: rec.height, index: rec.index, result: rec.result, tx: rec.tx, proof });
      },
    }),

    // tx.go TxSearch: matching txs, sorted by (height, index), asc by default, then paginated.
    route({
      name: 'tx_search',
      params: [
        { name: 'query', type: 'query' },
        { name: 'prove', type: 'bool' },
        { name: 'page', type: 'int', optional: true },
        { name: 'per_page', type: 'int', optional: true },
        { name: 'order_by', type: 'string' },
      ] as const,
      handler: ({ query, prove, page, per_page, order_by }) => {
        const ix = ctx.txIndexer;
        if (!ix) throw new Error('transaction indexing is disabled');
        // The indexer checks the 512-byte query limit first, then parses (tx.go order).
        const run = (pg: number | undefined, pp: number) => {
          const r = ix.searchTxs(query, { page: pg, perPage: pp, orderBy: order_by });
          return { ...r, total: r.totalCount };
        };
        const perPage = searchPage(page, per_page, run);
        const r = run(page === undefined ? undefined : Number(page), perPage);
        const proofs = prove ? proofSource() : null;
        return {
          txs: r.txs.map((t) =>
            resultTxJSON({ hash: txHash(t.tx), height: t.height, index: t.index, result: t.result, tx: t.tx, proof: proofs?.(t.height, t.index) }),
          ),
          total_count: String(r.totalCount),
        };
      },
    }),

    // blocks.go BlockSearch: blocks whose FinalizeBlock events match, desc by default.
    route({
      name: 'block_search',
      params: [
        { name: 'query', type: 'query' },
        { name: 'page', type: 'int', optional: true },
        { name: 'per_page', type: 'int', optional: true },
        { name: 'order_by', type: 'string' },
      ] as const,
      handler: ({ query, page, per_page, order_by }) => {
        const ix = ctx.blockIndexer;
        if (!ix) throw new Error('block indexing is disabled');
        const run = (pg: number | undefined, pp: number) => {
          const r = ix.searchBlocks(query, { page: pg, perPage: pp, orderBy: order_by });
          return { ...r, total: r.totalCount };
        };
        const perPage = searchPage(page, per_page, run);
        const r = run(page === undefined ? undefined : Number(page), perPage);
        const out: ReturnType<typeof resultBlock>[] = [];
        // Heights whose block or meta is gone (pruned) are skipped, as blocks.go does.
        for (const h of r.heights) {
          const block = blocks.loadBlock(h);
          const meta = block ? blocks.loadBlockMeta(h) : null;
          if (block && meta) out.push(resultBlock(meta, block));
        }
        return { blocks: out, total_count: String(r.totalCount) };
      },
    }),
  ];
}
