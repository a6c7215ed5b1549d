/**
 * Tx kinds: more than one kind of transaction in the same CometBFT block.
 *
 * A block's txs are opaque bytes. BaseApp sends each to the kind that claims its FIRST BYTE; bytes
 * no kind claims (and the empty tx) go to the built-in Cosmos kind (protobuf TxRaw through the
 * app's TxDecoder and ante chain, exactly as before kinds existed). Dispatch is one table look-up,
 * and two kinds can never both match: the registry refuses a lead byte claimed twice.
 *
 * Why a TxRaw can never be taken by another kind: the Cosmos decoder (src/tx/codec.ts) accepts
 * no unknown field in TxRaw (RejectUnknownFields; cosmos/cosmos-sdk:x/auth/tx/decoder.go), so a
 * valid TxRaw's first byte begins the varint tag of field 1, 2 or 3 with wire type 2 (LEN): tag
 * 10, 18 or 26. A varint's first byte carries the value's low 7 bits, plus 0x80 if more bytes
 * follow (an overlong encoding), so the first byte is one of 0x0a 0x12 0x1a 0x8a 0x92 0x9a.
 * Those six are COSMOS_LEAD_BYTES and no other kind may claim them. An empty TxRaw is zero bytes
 * and goes to Cosmos as well. The Ethereum envelopes the EVM kind claims (EIP-2718 types
 * 0x01–0x04, 0x03 only to refuse blob txs clearly; a legacy tx is an RLP list, first byte 0xc0–0xff) are disjoint from these:
 * 0x01–0x04 are tags of field number 0, which protobuf forbids, and no valid TxRaw tag byte is
 * ≥ 0xc0. The JSON test decoder's txs start with `{` (0x7b), also unclaimed.
 *
 * A kind brings its decoder and its two stages: `ante` (checks and fee/nonce effects; the only
 * stage CheckTx runs; kept even when `run` then fails, as the SDK keeps the ante branch) and
 * `run` (the tx's effects, kept only if it returns). BaseApp gives each stage a Context over a
 * branch of the block (or check) state with a gas meter of the kind's gas limit, and turns the
 * outcome into the tx's ExecTxResult (events from ctx.events, `data` from run).
 */
import type { Bytes } from './bytes.js';
import type { Context } from './context.js';

/** First bytes a valid Cosmos TxRaw can have (see above). */
export const COSMOS_LEAD_BYTES: readonly number[] = [0x0a, 0x12, 0x1a, 0x8a, 0x92, 0x9a];

export interface TxKind<T = unknown> {
  /** A short name (`evm`), for errors and logs. */
  readonly name: string;
  /** The first bytes this kind claims; never one of COSMOS_LEAD_BYTES, never one another kind claims. */
  readonly leadBytes: readonly number[];
  /** Decodes the tx; throws an AbciError (the tx's result) on bad input. */
  decode(bytes: Bytes): T;
  /** The tx's gas limit: the meter of both stages, ResponseCheckTx.gas_wanted, block max-gas accounting. */
  gasLimit(tx: T): bigint;
  /**
   * Checks and up-front effects (nonce, fee); CheckTx runs only this. Throws (or rejects) to
   * reject. May be async: BaseApp awaits a returned promise (Cosmos txs never pay for that).
   */
  ante(ctx: Context, tx: T, simulate: boolean): void | Promise<void>;
  /**
   * Optional batch stage before ante, off the ante's path (e.g. sender recovery on the worker
   * pool): FinalizeBlock hands it all of the block's txs of this kind in one call, CheckTx its one
   * tx. Its results are hints only: a rejection is ignored, and ante/run must decide the same
   * without it.
   */
  preVerify?(txs: readonly T[]): Promise<void>;
  /** The tx's effects; throws (or rejects) to fail (ante's effects stay). `data` is ExecTxResult.data. May be async. */
  run(ctx: Context, tx: T): { data?: Bytes } | void | Promise<{ data?: Bytes } | void>;
}

/** Whether `kind` claims these bytes (a non-empty tx whose first byte it lists). */
export function kindMatches(kind: TxKind, bytes: Bytes): boolean {
  return bytes.length > 0 && kind.leadBytes.includes(bytes[0]!);
}

/** The registered kinds by lead byte; everything unclaimed is Cosmos (`undefined`). */
export class TxKindRegistry {
  private readonly byLead: (TxKind | undefined)[] = new Array<TxKind | undefined>(256).fill(undefined);
  private readonly kinds: TxKind[] = [];

  constructor(kinds: readonly TxKind[] = []) {
    for (const k of kinds) this.register(k);
  }

  register(kind: TxKind): void {
    if (kind.name === 'cosmos' || this.kinds.some((k) => k.name === kind.name)) throw new Error(`tx kind ${kind.name} is registered twice`);
    if (kind.leadBytes.length === 0) throw new Error(`tx kind ${kind.name} claims no lead byte`);
    for (const b of kind.leadBytes) {
      if (!Number.isInteger(b) || b < 0 || b > 255) throw new Error(`tx kind ${kind.name}: lead byte ${b} is not a byte`);
      if (COSMOS_LEAD_BYTES.includes(b)) throw new Error(`tx kind ${kind.name}: lead byte 0x${b.toString(16)} can start a Cosmos TxRaw`);
      const other = this.byLead[b];
      if (other !== undefined) throw new Error(`tx kind ${kind.name}: lead byte 0x${b.toString(16)} is already claimed by ${other.name}`);
    }
    for (const b of kind.leadBytes) this.byLead[b] = kind;
    this.kinds.push(kind);
  }

  /** The kind of these bytes, or undefined for the Cosmos kind. */
  kindOf(bytes: Bytes): TxKind | undefined {
    return bytes.length === 0 ? undefined : this.byLead[bytes[0]!];
  }

  get size(): number {
    return this.kinds.length;
  }
}
