/**
 * Binary records of the indexer (src/indexer/indexer.ts):
 *
 * - the primary tx record in `tx_results`, keyed by tx hash: what `tx` and `tx_search` return
 *   (CometBFT stores a proto TxResult under the hash, state/txindex/kv/kv.go). Fixed header first,
 *   so the duplicate-hash rule reads height, index and code without decoding the rest:
 *     ver(1)=1 height(8) index(4) code(4) tx(bytes) data(bytes) log info codespace(str)
 *     gasWanted(8, signed) gasUsed(8, signed) events
 * - the indexed attributes of one tx or block (value of the 0x01 position row): only attributes
 *   with index=true, non-empty type and key, as (composite key, value) per event with the event's
 *   position in the list. The position is the "event sequence" of CometBFT 0.38: conditions of a
 *   search must hold within one event (kv.go setTmpHashes keys hits by hash + eventSeq).
 *
 * bytes/str = u32 BE length + bytes (UTF-8 for str).
 */
import type { AbciEvent, ExecTxResult } from '../abci/types.js';
import { readTxResultBody, Reader, writeTxResultBody, Writer } from './record-codec.js';

// ---------------------------------------------------------------------------------------------
// Tx record

export interface TxRecord {
  /** sha256 of the tx (32 bytes). */
  hash: Uint8Array;
  height: bigint;
  /** Position in the block. */
  index: number;
  tx: Uint8Array;
  result: ExecTxResult;
}

const RECORD_VERSION = 1;

export function encodeTxRecord(height: bigint, index: number, tx: Uint8Array, r: ExecTxResult): Buffer {
  const w = new Writer(64 + tx.length + r.data.length + r.log.length);
  w.u8(RECORD_VERSION);
  w.u64(height);
  w.u32(index);
  w.u32(r.code);
  w.bytes(tx);
  writeTxResultBody(w, r);
  return w.finish();
}

/** Height, index and result code from a record's fixed header. */
export function recordHeader(b: Uint8Array): { height: bigint; index: number; code: number } {
  const r = new Reader(b, 1);
  return { height: r.u64(), index: r.u32(), code: r.u32() };
}

export function decodeTxRecord(hash: Uint8Array, b: Uint8Array): TxRecord {
  const r = new Reader(b);
  const ver = r.u8();
  if (ver !== RECORD_VERSION) throw new Error(`tx record: unknown version ${ver}`);
  const height = r.u64();
  const index = r.u32();
  const code = r.u32();
  const tx = r.bytes();
  return { hash, height, index, tx, result: readTxResultBody(r, code) };
}

// ---------------------------------------------------------------------------------------------
// Indexed attributes

/** One event's indexed attributes: composite keys (`type.key`) and values, in order. */
export interface IndexedEvent {
  /** Position of the event in the tx's (or block's) event list. */
  seq: number;
  keys: string[];
  values: string[];
}

/** The indexable attributes of an event list (kv.go indexEvents: non-empty type and key, index=true). */
export function indexedEvents(events: readonly AbciEvent[], keyOk: (composite: string) => boolean): IndexedEvent[] {
  const out: IndexedEvent[] = [];
  for (let seq = 0; seq < events.length; seq++) {
    const e = events[seq]!;
    if (e.type.length === 0) continue;
    let ev: IndexedEvent | undefined;
    for (const a of e.attributes) {
      if (a.key.length === 0 || !a.index) continue;
      const composite = `${e.type}.${a.key}`;
      if (!keyOk(composite)) continue;
      ev ??= { seq, keys: [], values: [] };
      ev.keys.push(composite);
      ev.values.push(a.value);
    }
    if (ev) out.push(ev);
  }
  return out;
}

/** Attribute block: u32 n, then per event seq(u32) count(u32) (key str, value str)*. `prefix` is written first. */
export function encodeIndexed(prefix: Uint8Array | undefined, events: readonly IndexedEvent[]): Buffer {
  const w = new Writer(64);
  if (prefix) w.raw(prefix);
  w.u32(events.length);
  for (const e of events) {
    w.u32(e.seq);
    w.u32(e.keys.length);
    for (let i = 0; i < e.keys.length; i++) {
      w.str(e.keys[i]!);
      w.str(e.values[i]!);
    }
  }
  return w.finish();
}

export function decodeIndexed(b: Uint8Array, offset = 0): IndexedEvent[] {
  const r = new Reader(b, offset);
  const n = r.u32();
  const out: IndexedEvent[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const seq = r.u32();
    const k = r.u32();
    const keys: string[] = new Array(k);
    const values: string[] = new Array(k);
    for (let j = 0; j < k; j++) {
      keys[j] = r.str();
      values[j] = r.str();
    }
    out[i] = { seq, keys, values };
  }
  return out;
}
