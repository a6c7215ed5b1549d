/**
 * `chain.tx.v1beta1.Service` (the SDK's `cosmos.tx.v1beta1.Service`, renamed): Simulate, GetTx,
 * BroadcastTx, GetTxsEvent, GetBlockWithTxs, TxDecode, TxEncode, TxEncodeAmino, TxDecodeAmino,
 * answering as cosmos-sdk x/auth/tx/service.go (v0.50 and later) does, with the node's parts in
 * place of the SDK's in-process CometBFT client (cosmos/cosmos-sdk:proto/cosmos/tx/v1beta1/service.proto, cosmos/cosmos-sdk:proto/cosmos/base/abci/v1beta1/abci.proto, cosmos/cosmos-sdk:baseapp/grpcrouter.go).
 *
 * Registration (src/node.ts does this on its QueryRouter, with TX_SERVICE_REGISTER_OPTIONS):
 *
 *   router.registerService(Service, txServiceImpl(ctx), {
 *     notAbciRoutable: ['BroadcastTx'],
 *     verbatimAny: ['TxDecode', 'GetTx', 'GetTxsEvent', 'GetBlockWithTxs'],
 *   });
 *
 * The router needs the chain's type registry (`new QueryRouter({ registry: protoRegistry, … })`,
 * src/proto): the REST gateway reads and writes the messages packed in a Tx's Anys with it.
 *
 * `verbatimAny`: a decoded tx must re-encode to the bytes that were signed, so its message Anys
 * keep the type URLs it was sent with; the handlers emit their own Anys (TxResponse.tx) in the
 * names registry's spelling themselves.
 *
 * Errors, as upstream raises them (the servers map them: gRPC status, REST `{code, message}` with
 * grpc-gateway's HTTP status, abci_query's gRPCErrorToSDKError):
 * - `status.Error(codes.X, …)` upstream → GrpcStatusError(X): empty requests (InvalidArgument),
 *   GetTx NotFound `tx not found: <hash as given>`, GetTxsEvent search failures (Internal), the
 *   Simulate failure (Unknown `<err> With gas wanted: 'W' and gas used: 'U' `);
 * - registered SDK errors → AbciError (gRPC Unknown, message `<root>: <wrap>`): GetBlockWithTxs'
 *   `invalid height` and `invalid request: out of range…`, tx decoding's `tx parse error`;
 * - plain Go errors → Error (gRPC Unknown, its text): bad hex in GetTx, an unsupported broadcast
 *   mode, mempool refusals CheckCometError does not turn into a TxResponse.
 *
 * Version notes: the Simulate failure text is main's (v0.50 wrote `<err> with gas used: 'U'`);
 * an empty GetTxsEvent query is InvalidArgument as cosmos/cosmos-sdk:proto/cosmos/tx/v1beta1/service.proto records (in v0.50 the empty
 * check sits in QueryTxsByEvents and surfaces as Internal).
 *
 * Deliberate differences, each small:
 * - TxEncodeAmino / TxDecodeAmino (amino.ts): malformed amino JSON or binary is InvalidArgument
 *   (upstream surfaces the codec error as Unknown); StakeAuthorization and multisig keys are refused.
 * - Txs read back from blocks fall back to the proto3 JSON form when they are not a TxRaw, for
 *   nodes running the test-only JSON tx decoder (decode.ts); a protobuf node never meets one.
 * - GetTxsEvent: a query that does not parse (or is over 512 bytes, or has a bad `tx.hash`) is
 *   InvalidArgument `failed to search for txs: <CometBFT's error>`; upstream wraps every search
 *   error as Internal. A malformed query is the client's error, and HTTP 400 says so. Page out of
 *   range stays Internal, as upstream.
 * - Empty `bytes` fields: gogoproto tells an absent field (nil) from an empty one; protobuf-es
 *   does not, so an empty tx_bytes / amino_binary is treated as absent (InvalidArgument).
 * - GetBlockWithTxs with `reverse` on an empty block and a non-zero offset indexes past the txs
 *   upstream (a Go panic); here those positions are skipped like undecodable txs.
 */
import { createHash } from 'node:crypto';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { ExecTxResult } from '../../abci/types.js';
import { GrpcCode, GrpcStatusError, sdkErrors } from '../errors.js';
import { TxMsgDataSchema } from '../../gen/chain/base/abci/v1beta1/abci_pb.js';
import { PageResponseSchema } from '../../gen/chain/base/query/v1beta1/pagination_pb.js';
import {
  BroadcastMode,
  GetBlockWithTxsResponseSchema,
  GetTxResponseSchema,
  GetTxsEventResponseSchema,
  OrderBy,
  Service,
  SimulateResponseSchema,
  TxDecodeResponseSchema,
  TxEncodeResponseSchema,
  type BroadcastTxRequest,
  type GetBlockWithTxsRequest,
  type GetTxRequest,
  type GetTxsEventRequest,
  type SimulateRequest,
  type TxDecodeRequest,
  type TxEncodeRequest,
} from '../../gen/chain/tx/v1beta1/service_pb.js';
import { AuthInfoSchema, TxBodySchema, TxSchema, type Tx } from '../../gen/chain/tx/v1beta1/tx_pb.js';
import { BlockSchema } from '../../gen/consensus/types/block_pb.js';
import { BlockIDSchema } from '../../gen/consensus/types/types_pb.js';
import { QueryError } from '../../events/query.js';
import { checkTxNoWait } from '../../mempool/broadcast.js';
import { packAny } from '../../proto/registry.js';
import { IndexerError, MAX_PER_PAGE } from '../../indexer/indexer.js';
import { encodeTxRaw } from '../../tx/codec.js';
import type { CallContext, ServiceImpl } from '../query-router.js';
import type { BaseApp } from '../baseapp.js';
import type { Logger } from '../../log.js';
import type { Mempool } from '../../mempool/mempool.js';
import type { Names } from '../../names/index.js';
import type { Storage } from '../../store/storage.js';
import type { TxIndexer } from '../../indexer/indexer.js';
import { txDecodeAmino, txEncodeAmino } from './amino.js';
import { decodeProtoTx, decodeStoredTx, type StoredTxDecoder } from './decode.js';
import { eventsToProto, txResponseFromBroadcast, txResponseFromIndexed, txResponseFromMempoolError } from './txresponse.js';

export { decodeProtoTx, decodeStoredTx, type StoredTxDecoder } from './decode.js';
export { formatRfc3339, parseAbciLogs, txResponseFromBroadcast, txResponseFromIndexed, txResponseFromMempoolError } from './txresponse.js';
export { txDecodeAmino, txEncodeAmino } from './amino.js';

/** The registration options the tx service needs on a QueryRouter. */
export const TX_SERVICE_REGISTER_OPTIONS = {
  notAbciRoutable: ['BroadcastTx'],
  verbatimAny: ['TxDecode', 'GetTx', 'GetTxsEvent', 'GetBlockWithTxs'],
} as const;

/** types/query DefaultLimit: GetTxsEvent's limit and GetBlockWithTxs' page size when none is given. */
export const DEFAULT_LIMIT = 100n;

export interface TxServiceOptions {
  /**
   * How txs read back from blocks and the indexer become Tx messages; default decodeStoredTx
   * (protobuf, plus the JSON form the test-only JSON decoder admits). TxDecode always uses the
   * protobuf decoder.
   */
  decodeStoredTx?: StoredTxDecoder;
}

/** What the tx service reads: the node's parts, handed over by the composition root. */
export interface TxServiceDeps {
  app: Pick<BaseApp, 'simulate'>;
  mempool: Mempool;
  storage: Pick<Storage, 'blocks'>;
  /** Absent when `[tx_index] indexer = "null"`. */
  txIndexer: TxIndexer | null;
  names: Names;
  logger: Logger;
}

type Nodes = TxServiceDeps;

function invalidArgument(msg: string): GrpcStatusError {
  return new GrpcStatusError(GrpcCode.InvalidArgument, msg);
}

function sha256(b: Uint8Array): Uint8Array {
  return createHash('sha256').update(b).digest();
}

/** Go's fmt `%#U` of one byte read as a rune (encoding/hex InvalidByteError). */
function goRuneU(b: number): string {
  const code = `U+${b.toString(16).toUpperCase().padStart(4, '0')}`;
  // strconv.IsPrint for U+0000–U+00FF: printable ASCII, and Latin-1 above U+00A0 except U+00AD.
  const printable = (b >= 0x20 && b < 0x7f) || (b >= 0xa1 && b !== 0xad);
  return printable ? `${code} '${String.fromCharCode(b)}'` : code;
}

/** Go's hex.DecodeString, with its error texts (encoding/hex: invalid byte …, odd length …). */
export function goHexDecode(s: string): Uint8Array {
  const src = Buffer.from(s, 'utf8');
  const val = (c: number) => (c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1);
  const out = new Uint8Array(src.length >> 1);
  let j = 1;
  for (; j < src.length; j += 2) {
    const a = val(src[j - 1]!);
    const b = val(src[j]!);
    if (a < 0) throw new Error(`encoding/hex: invalid byte: ${goRuneU(src[j - 1]!)}`);
    if (b < 0) throw new Error(`encoding/hex: invalid byte: ${goRuneU(src[j]!)}`);
    out[(j - 1) >> 1] = (a << 4) | b;
  }
  if (src.length % 2 === 1) {
    // The invalid character, when there is one, is the earlier problem (hex.Decode).
    if (val(src[j - 1]!) < 0) throw new Error(`encoding/hex: invalid byte: ${goRuneU(src[j - 1]!)}`);
    throw new Error('encoding/hex: odd length hex string');
  }
  return out;
}

/** Go's `int(x)` of a uint64 on a 64-bit machine: values above 2^63-1 wrap negative. */
function goInt(x: bigint): bigint {
  return BigInt.asIntN(64, x);
}

/** parseOrderBy (service.go): ASC → "asc", DESC → "desc", anything else → "" (CometBFT: asc). */
function parseOrderBy(o: OrderBy): string {
  if (o === OrderBy.ASC) return 'asc';
  if (o === OrderBy.DESC) return 'desc';
  return '';
}

/** TxMsgData.msg_responses of a result's data (empty when the data is not a TxMsgData). */
function msgResponsesOf(data: Uint8Array) {
  try {
    return fromBinary(TxMsgDataSchema, data).msgResponses;
  } catch {
    return [];
  }
}

/** Why a search failed: the query (client) or the search itself. */
function isBadQuery(e: unknown): boolean {
  return e instanceof QueryError || (e instanceof IndexerError && (e.code === 'QUERY_TOO_LONG' || e.code === 'HASH'));
}

export function txServiceImpl(ctx: Nodes, opts: TxServiceOptions = {}): ServiceImpl<typeof Service> {
  const decodeStored = opts.decodeStoredTx ?? decodeStoredTx;
  const blocks = ctx.storage.blocks;
  const log = ctx.logger.child({ module: 'txservice' });

  /** The Tx packed as TxResponse.tx (Any), type URL in the node's emit spelling. */
  const packTx = (tx: Tx) => packAny(TxSchema, tx, ctx.names);

  /**
   * CometBFT's Block RPC height check (rpc/core/env.go getHeight) as the SDK meets it through
   * node.Block: a height below the store's base is gone.
   */
  const blockTime = (height: bigint): bigint => {
    const meta = blocks.loadBlockMeta(height);
    if (!meta) {
      const base = blocks.base();
      if (height < base) throw new Error(`height ${height} is not available, lowest height is ${base}`);
      throw new Error(`height ${height} must be less than or equal to the current blockchain height ${blocks.height()}`);
    }
    return meta.header.time;
  };

  /** mkTxResult (x/auth/tx/query.go): decode the tx, pack it, format the block time. */
  const indexedResponse = (rec: { hash: Uint8Array; height: bigint; tx: Uint8Array; result: ExecTxResult }, time: bigint) => {
    const tx = decodeStored(rec.tx);
    return { tx, txResponse: txResponseFromIndexed({ hash: rec.hash, height: rec.height, result: rec.result, tx: packTx(tx), blockTime: time }) };
  };

  // ---- Simulate ----------------------------------------------------------------------------

  const simulate = async (req: SimulateRequest) => {
    let txBytes = req.txBytes;
    // The deprecated `tx` field: proto.Marshal(Tx), which is the TxRaw of its re-encoded parts
    // (Tx and TxRaw share field numbers and wire types). Signatures may then not verify, which
    // is why upstream deprecated it (cosmos-sdk#10585).
    if (txBytes.length === 0 && req.tx !== undefined) txBytes = toBinary(TxSchema, req.tx);
    if (txBytes.length === 0) throw invalidArgument('empty txBytes is not allowed');
    const r = await ctx.app.simulate(txBytes);
    if (r.code !== 0) {
      // Upstream's format, trailing space included; %v of the error is its Go text (`wrap: root`).
      throw new GrpcStatusError(GrpcCode.Unknown, `${r.log} With gas wanted: '${r.gasWanted}' and gas used: '${r.gasUsed}' `);
    }
    return create(SimulateResponseSchema, {
      gasInfo: { gasWanted: r.gasWanted, gasUsed: r.gasUsed },
      // sdk.Result: data is the TxMsgData (deprecated but still set), msg_responses its entries.
      result: { data: r.data, log: r.log, events: eventsToProto(r.events), msgResponses: msgResponsesOf(r.data) },
    });
  };

  // ---- GetTx -------------------------------------------------------------------------------

  const getTx = (req: GetTxRequest) => {
    if (req.hash.length === 0) throw invalidArgument('tx hash cannot be empty');
    // QueryTx: hex.DecodeString first; its error is returned as is (gRPC Unknown).
    const hash = goHexDecode(req.hash);
    // CometBFT answers `tx (HASH) not found`; service.go turns any error whose text contains
    // "not found" into NotFound with the hash as the client wrote it, and returns the rest as is.
    const notFound = () => new GrpcStatusError(GrpcCode.NotFound, `tx not found: ${req.hash}`);
    const ix = ctx.txIndexer;
    if (!ix) throw new Error('transaction indexing is disabled');
    const rec = ix.getTx(hash);
    if (!rec) throw notFound();
    try {
      const { tx, txResponse } = indexedResponse(rec, blockTime(rec.height));
      return create(GetTxResponseSchema, { tx, txResponse });
    } catch (e) {
      if (e instanceof Error && e.message.includes('not found')) throw notFound();
      throw e;
    }
  };

  // ---- GetTxsEvent ---------------------------------------------------------------------------

  const getTxsEvent = (req: GetTxsEventRequest) => {
    // Only `query` is read since v0.50; the deprecated `events` and `pagination` are ignored.
    if (req.query.length === 0) throw invalidArgument('query cannot be empty');
    // QueryTxsByEvents: page and limit are Go ints; zero or negative take the defaults (1, 100).
    let page = goInt(req.page);
    if (page <= 0n) page = 1n;
    let limit = goInt(req.limit);
    if (limit <= 0n) limit = DEFAULT_LIMIT;
    // CometBFT's TxSearch then caps per_page at 100 (rpc/core/env.go validatePerPage).
    const perPage = limit > BigInt(MAX_PER_PAGE) ? MAX_PER_PAGE : Number(limit);
    const orderBy = parseOrderBy(req.orderBy);
    const failed = (e: unknown) =>
      new GrpcStatusError(isBadQuery(e) ? GrpcCode.InvalidArgument : GrpcCode.Internal, `failed to search for txs: ${e instanceof Error ? e.message : String(e)}`);

    const ix = ctx.txIndexer;
    if (!ix) throw failed(new Error('transaction indexing is disabled'));
    let result;
    try {
      if (page > BigInt(Number.MAX_SAFE_INTEGER)) {
        // Beyond 2^53 the page is out of range whatever the total; report it digit for digit.
        const { totalCount } = ix.searchTxs(req.query, { perPage, orderBy });
        const pages = Math.max(1, Math.trunc((totalCount - 1) / perPage) + 1);
        throw new IndexerError(`page should be within [1, ${pages}] range, given ${page}`, 'PAGE');
      }
      result = ix.searchTxs(req.query, { page: Number(page), perPage, orderBy });
    } catch (e) {
      throw failed(e);
    }
    const times = new Map<bigint, bigint>();
    const txs: Tx[] = [];
    const txResponses = [];
    for (const rec of result.txs) {
      let time = times.get(rec.height);
      let out;
      try {
        if (time === undefined) {
          time = blockTime(rec.height);
          times.set(rec.height, time);
        }
        out = indexedResponse(rec, time);
      } catch (e) {
        // service.go: status.Error(codes.Internal, err.Error()), Go's `wrap: root` text.
        throw new GrpcStatusError(GrpcCode.Internal, e instanceof Error ? e.message : String(e));
      }
      txs.push(out.tx);
      txResponses.push(out.txResponse);
    }
    return create(GetTxsEventResponseSchema, { txs, txResponses, total: BigInt(result.totalCount) });
  };

  // ---- GetBlockWithTxs -------------------------------------------------------------------------

  const getBlockWithTxs = (req: GetBlockWithTxsRequest, cc: CallContext) => {
    // sdkCtx.BlockHeight(): the height the query is served at.
    const current = cc.height ?? blocks.height();
    if (req.height < 1n || req.height > current) {
      throw sdkErrors.invalidHeight.wrap(
        `requested height ${req.height} but height must not be less than 1 or greater than the current height ${current}`,
      );
    }
    const bytes = blocks.loadBlockBytes(req.height);
    const meta = blocks.loadBlockMeta(req.height);
    if (!bytes || !meta) {
      const base = blocks.base();
      if (req.height < base) throw new Error(`height ${req.height} is not available, lowest height is ${base}`);
      throw new Error(`height ${req.height} must be less than or equal to the current blockchain height ${blocks.height()}`);
    }
    // The stored block is its proto encoding (consensus.types.Block): the same bytes the part set
    // hashes, so this is exactly what Block.ToProto gives upstream.
    const block = fromBinary(BlockSchema, bytes);
    const blockId = create(BlockIDSchema, {
      hash: meta.blockId.hash,
      partSetHeader: { total: meta.blockId.partSetHeader.total, hash: meta.blockId.partSetHeader.hash },
    });

    const p = req.pagination;
    const offset = p ? p.offset : 0n;
    const limit = p ? p.limit : DEFAULT_LIMIT;
    const blockTxs = block.data?.txs ?? [];
    const n = BigInt(blockTxs.length);
    if (offset >= n && n !== 0n) {
      throw sdkErrors.invalidRequest.wrap(`out of range: cannot paginate ${n} txs with offset ${offset} and limit ${limit}`);
    }
    // v0.54.1 (cosmos-sdk#26297) caps the limit at the block's tx count before allocating the
    // page; the loops below stop at the block's end anyway, so only memory was at stake.
    const txs: Tx[] = [];
    const decodeAt = (i: bigint) => {
      if (i >= n) {
        log.error('failed to decode tx', { err: `index ${i} out of range [0, ${n})` });
        return;
      }
      try {
        txs.push(decodeStored(blockTxs[Number(i)]!));
      } catch (e) {
        // Since v0.50 an undecodable tx is logged and left out, not an error.
        log.error('failed to decode tx', { err: e instanceof Error ? e.message : String(e) });
      }
    };
    if (p?.reverse === true) {
      // Upstream's loop, kept as it is: from `offset` down while i > 0, so index 0 is never
      // returned and offset 0 returns nothing.
      for (let i = offset, count = 0n; i > 0n && count !== limit; i--, count++) decodeAt(i);
    } else {
      // A pagination with limit 0 returns no txs (count starts equal to the limit).
      for (let i = offset, count = 0n; i < n && count !== limit; i++, count++) decodeAt(i);
    }
    return create(GetBlockWithTxsResponseSchema, { txs, blockId, block, pagination: create(PageResponseSchema, { total: n }) });
  };

  // ---- BroadcastTx -------------------------------------------------------------------------

  const broadcastTx = async (req: BroadcastTxRequest) => {
    if (req.txBytes.length === 0) throw invalidArgument('invalid empty tx');
    const tx = req.txBytes;
    const hash = sha256(tx);
    // normalizeBroadcastMode + Context.BroadcastTx (client/broadcast.go): only sync and async;
    // BLOCK (removed in v0.47), UNSPECIFIED and unknown values are "unspecified".
    if (req.mode === BroadcastMode.SYNC) {
      let res;
      try {
        res = (await ctx.mempool.checkTx(tx)).response;
      } catch (e) {
        const mapped = txResponseFromMempoolError(e, hash);
        if (mapped) return { txResponse: mapped };
        throw e;
      }
      return { txResponse: txResponseFromBroadcast({ code: res.code, data: res.data, log: res.log, codespace: res.codespace, hash }) };
    }
    if (req.mode === BroadcastMode.ASYNC) {
      const err = await checkTxNoWait(ctx.mempool, tx);
      if (err !== null) {
        const mapped = txResponseFromMempoolError(err, hash);
        if (mapped) return { txResponse: mapped };
        throw err;
      }
      return { txResponse: txResponseFromBroadcast({ code: 0, data: new Uint8Array(0), log: '', codespace: '', hash }) };
    }
    throw new Error('unsupported return type unspecified; supported types: sync, async');
  };

  // ---- TxEncode / TxDecode -------------------------------------------------------------------

  const txEncode = (req: TxEncodeRequest) => {
    const tx = req.tx;
    if (tx === undefined) throw invalidArgument('invalid empty tx');
    // Codec.Marshal of body and auth info (an absent one is empty bytes), then the TxRaw.
    const bodyBytes = tx.body ? toBinary(TxBodySchema, tx.body) : new Uint8Array(0);
    const authInfoBytes = tx.authInfo ? toBinary(AuthInfoSchema, tx.authInfo) : new Uint8Array(0);
    return create(TxEncodeResponseSchema, { txBytes: encodeTxRaw({ bodyBytes, authInfoBytes, signatures: tx.signatures }) });
  };

  const txDecode = (req: TxDecodeRequest) => {
    if (req.txBytes.length === 0) throw invalidArgument('invalid empty tx bytes');
    return create(TxDecodeResponseSchema, { tx: decodeProtoTx(req.txBytes) });
  };

  return {
    simulate,
    getTx,
    broadcastTx,
    getTxsEvent,
    getBlockWithTxs,
    txDecode,
    txEncode,
    txEncodeAmino: (req) => txEncodeAmino(req, ctx.names),
    txDecodeAmino: (req) => txDecodeAmino(req, ctx.names),
  };
}
