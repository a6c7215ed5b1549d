/**
 * TxResponse as the Cosmos SDK builds it (cosmos-sdk: types/result.go NewResponseResultTx,
 * NewResponseFormatBroadcastTx, ParseABCILogs; x/auth/tx/query.go mkTxResult;
 * cosmos/cosmos-sdk:proto/cosmos/base/abci/v1beta1/abci.proto):
 *
 * - an indexed tx (GetTx, GetTxsEvent): height, `txhash` upper hex, codespace, code, `data` as
 *   upper hex of the FinalizeBlock result's data (the TxMsgData bytes), `raw_log`, `logs` parsed
 *   from the raw log (empty since 0.50: the log is no longer a JSON array), info, gas, `tx` the
 *   decoded Tx packed in an Any, `timestamp` the block time in Go's time.RFC3339 (whole seconds),
 *   events as FinalizeBlock returned them;
 * - a broadcast (BroadcastTx SYNC/ASYNC): only what CometBFT's ResultBroadcastTx carries, i.e.
 *   code, codespace, data, raw_log and txhash; height, gas and timestamp stay zero.
 */
import { create } from '@bufbuild/protobuf';
import type { Any } from '@bufbuild/protobuf/wkt';
import type { AbciEvent, ExecTxResult } from '../../abci/types.js';
import { sdkErrors, type RegisteredError } from '../errors.js';
import {
  ABCIMessageLogSchema,
  AttributeSchema,
  StringEventSchema,
  TxResponseSchema,
  type ABCIMessageLog,
  type TxResponse,
} from '../../gen/chain/base/abci/v1beta1/abci_pb.js';
import { EventSchema, type Event } from '../../gen/consensus/abci/types_pb.js';
import { hexUpper } from '../../crypto/bytes.js';

const NS_PER_S = 1_000_000_000n;


function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/**
 * Go's `t.Format(time.RFC3339)` of a UTC time (block times are UTC): `2006-01-02T15:04:05Z`,
 * whole seconds only — the fraction is dropped, not rounded (mkTxResult formats the block time
 * this way, so TxResponse.timestamp never has a fraction).
 */
export function formatRfc3339(ns: bigint): string {
  let secs = ns / NS_PER_S;
  if (ns < 0n && secs * NS_PER_S !== ns) secs -= 1n; // floor toward the earlier second
  const d = new Date(Number(secs) * 1000);
  if (Number.isNaN(d.getTime())) throw new Error(`block time out of range: ${ns}`);
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}` +
    `T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}Z`
  );
}

/** ABCI events as `consensus.abci.Event` messages (attribute keys and values are plain strings). */
export function eventsToProto(events: readonly AbciEvent[]): Event[] {
  return events.map((e) =>
    create(EventSchema, { type: e.type, attributes: e.attributes.map((a) => ({ key: a.key, value: a.value, index: a.index })) }),
  );
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Go's encoding/json matches object keys to struct fields case-insensitively. */
function field(o: Record<string, unknown>, name: string): unknown {
  if (name in o) return o[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(o)) if (k.toLowerCase() === lower) return o[k];
  return undefined;
}

class LogShapeError extends Error {}

function str(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new LogShapeError();
  return v;
}

function list(v: unknown): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new LogShapeError();
  return v;
}

function obj(v: unknown): Record<string, unknown> {
  if (v === null) return {};
  if (!isObject(v)) throw new LogShapeError();
  return v;
}

/**
 * ParseABCILogs (types/result.go): `json.Unmarshal(raw_log, &[]ABCIMessageLog)`; any failure
 * gives no logs. Since 0.50 the raw log is an error text or empty, so this is `[]` in practice;
 * it still reads a JSON array of `{msg_index, log, events: [{type, attributes: [{key, value}]}]}`
 * as older nodes wrote it.
 */
export function parseAbciLogs(rawLog: string): ABCIMessageLog[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawLog);
  } catch {
    return [];
  }
  try {
    return list(parsed).map((e) => {
      const o = obj(e);
      const idx = field(o, 'msg_index') ?? 0;
      if (typeof idx !== 'number' || !Number.isInteger(idx) || idx < 0 || idx > 0xffffffff) throw new LogShapeError();
      return create(ABCIMessageLogSchema, {
        msgIndex: idx,
        log: str(field(o, 'log')),
        events: list(field(o, 'events')).map((ev) => {
          const eo = obj(ev);
          return create(StringEventSchema, {
            type: str(field(eo, 'type')),
            attributes: list(field(eo, 'attributes')).map((a) => {
              const ao = obj(a);
              return create(AttributeSchema, { key: str(field(ao, 'key')), value: str(field(ao, 'value')) });
            }),
          });
        }),
      });
    });
  } catch (e) {
    if (e instanceof LogShapeError) return [];
    throw e;
  }
}

/** What an indexed tx gives NewResponseResultTx. */
export interface IndexedTxParts {
  /** sha256 of the tx bytes. */
  hash: Uint8Array;
  height: bigint;
  result: ExecTxResult;
  /** The decoded tx, packed (`/chain.tx.v1beta1.Tx`). */
  tx: Any;
  /** Block time, ns since the epoch. */
  blockTime: bigint;
}

/** NewResponseResultTx (types/result.go) for a committed tx. */
export function txResponseFromIndexed(p: IndexedTxParts): TxResponse {
  const r = p.result;
  return create(TxResponseSchema, {
    height: p.height,
    txhash: hexUpper(p.hash),
    codespace: r.codespace,
    code: r.code,
    data: hexUpper(r.data),
    rawLog: r.log,
    logs: parseAbciLogs(r.log),
    info: r.info,
    gasWanted: r.gasWanted,
    gasUsed: r.gasUsed,
    tx: p.tx,
    timestamp: formatRfc3339(p.blockTime),
    events: eventsToProto(r.events),
  });
}

/** CometBFT's ResultBroadcastTx (rpc/core/types): what broadcast_tx_sync/async answer. */
export interface BroadcastResult {
  code: number;
  data: Uint8Array;
  log: string;
  codespace: string;
  /** sha256 of the tx bytes. */
  hash: Uint8Array;
}

/** NewResponseFormatBroadcastTx (types/result.go): no height, gas, info, tx, timestamp or events. */
export function txResponseFromBroadcast(r: BroadcastResult): TxResponse {
  return create(TxResponseSchema, {
    txhash: hexUpper(r.hash),
    code: r.code,
    codespace: r.codespace,
    data: hexUpper(r.data),
    rawLog: r.log,
    logs: parseAbciLogs(r.log),
  });
}

/**
 * The TxResponse CheckCometError (client/broadcast.go) makes of a mempool refusal that has an SDK
 * code — `tx already exists in cache` → sdk 19, `mempool is full` → sdk 20, `tx too large` →
 * sdk 21, matched case-insensitively in the error text as upstream does — or undefined for any
 * other error, which the caller returns as an error (gRPC Unknown).
 */
export function txResponseFromMempoolError(err: unknown, hash: Uint8Array): TxResponse | undefined {
  const text = (err instanceof Error ? err.message : String(err)).toLowerCase();
  let root: RegisteredError;
  if (text.includes('tx already exists in cache')) root = sdkErrors.txInMempoolCache;
  else if (text.includes('mempool is full')) root = sdkErrors.mempoolIsFull;
  else if (text.includes('tx too large')) root = sdkErrors.txTooLarge;
  else return undefined;
  return create(TxResponseSchema, { txhash: hexUpper(hash), code: root.abciCode, codespace: root.codespace });
}
