/**
 * A test-only module with its own tx kind, commitment and database, to prove the mechanisms of
 * src/app/txkinds.ts and AppModule.commitment/databases without the EVM.
 *
 * Tx format: 0x05 || UTF-8 JSON {"key": string, "value": string, "gas": number, "watch"?: bech32}.
 *   ante: consumes 1000 gas, bumps a counter in the module's KV store (`notes`), emits note_ante.
 *   run:  fails when value is "fail"; otherwise emits `note` (key, value, and when `watch` is
 *         given that account's achain balance as the block state has it at this tx), and in
 *         FinalizeBlock queues (key, value) for the module's own database `notes_log`.
 * Commitment: SHA-256(salt || previous commitment || the block's queued notes); commit() writes the
 * notes and the new commitment into `notes_log` inside the block's LMDB transaction.
 */
import { createHash } from 'node:crypto';
import type { AppModule, ModuleCommit, ModuleDbReader } from '../../src/app/module.js';
import type { TxKind } from '../../src/app/txkinds.js';
import { ExecMode, type Context } from '../../src/app/context.js';
import { fromUtf8, utf8, type Bytes } from '../../src/app/bytes.js';
import { sdkErrors } from '../../src/app/errors.js';
import type { BankModule } from '../../src/app/modules/bank/module.js';

export const NOTE_LEAD = 0x05;
export const NOTES_DB = 'notes_log';
export const ROOT_KEY = utf8('\x00root');

export interface NoteTx {
  key: string;
  value: string;
  gas: bigint;
  watch?: string;
}

export function noteTx(n: { key: string; value: string; gas?: number; watch?: string }): Uint8Array {
  const body = utf8(JSON.stringify({ key: n.key, value: n.value, gas: n.gas ?? 100_000, watch: n.watch }));
  return Uint8Array.from([NOTE_LEAD, ...body]);
}

export class NotesModule implements AppModule {
  readonly name = 'notes';
  readonly databases = [NOTES_DB];
  private log: ModuleDbReader | undefined;
  private pending: [string, string][] = [];
  private pendingRoot: Bytes | undefined;

  constructor(
    private readonly bank: BankModule,
    private readonly salt = 'notes',
  ) {}

  attachDatabases(dbs: ReadonlyMap<string, ModuleDbReader>): void {
    this.log = dbs.get(NOTES_DB);
  }

  /** A committed note, read through the read-only handle. */
  note(key: string): string | undefined {
    const v = this.log!.getBinary(utf8(key));
    return v === undefined ? undefined : fromUtf8(v);
  }

  committedRoot(): Bytes {
    return this.log!.getBinary(ROOT_KEY) ?? new Uint8Array(32);
  }

  commitment(_ctx: Context): Bytes {
    const h = createHash('sha256').update(this.salt).update(this.committedRoot());
    for (const [k, v] of this.pending) h.update(utf8(JSON.stringify([k, v])));
    this.pendingRoot = h.digest();
    return this.pendingRoot;
  }

  commit(c: ModuleCommit): void {
    const db = c.db(NOTES_DB);
    for (const [k, v] of this.pending) db.putSync(utf8(k), utf8(v));
    if (this.pendingRoot !== undefined) db.putSync(ROOT_KEY, this.pendingRoot);
    this.pending = [];
    this.pendingRoot = undefined;
  }

  discardPending(): void {
    this.pending = [];
    this.pendingRoot = undefined;
  }

  readonly kind: TxKind<NoteTx> = {
    name: 'notes',
    leadBytes: [NOTE_LEAD],
    decode: (bytes) => {
      try {
        const j = JSON.parse(fromUtf8(bytes.subarray(1))) as Record<string, unknown>;
        if (typeof j['key'] !== 'string' || typeof j['value'] !== 'string' || typeof j['gas'] !== 'number') throw new Error('key, value and gas are required');
        return { key: j['key'], value: j['value'], gas: BigInt(j['gas']), watch: typeof j['watch'] === 'string' ? j['watch'] : undefined };
      } catch (e) {
        throw sdkErrors.txDecode.wrap(`note: ${(e as Error).message}`);
      }
    },
    gasLimit: (tx) => tx.gas,
    ante: (ctx, tx) => {
      ctx.gasMeter.consume(1000n, 'note ante');
      const store = ctx.store('notes');
      const n = store.get(utf8('count'));
      const next = (n === undefined ? 0 : Number(fromUtf8(n))) + 1;
      store.set(utf8('count'), utf8(String(next)));
      ctx.events.emit('note_ante', [['key', tx.key], ['count', String(next)]]);
    },
    run: (ctx, tx) => {
      if (tx.value === 'fail') throw sdkErrors.invalidRequest.wrap('note asked to fail');
      const attrs: [string, string][] = [
        ['key', tx.key],
        ['value', tx.value],
      ];
      if (tx.watch !== undefined) attrs.push(['balance', this.bank.keeper.getBalance(ctx, ctx.addressCodec.decode(tx.watch), 'achain').amount.toString()]);
      ctx.events.emit('note', attrs);
      if (ctx.mode === ExecMode.Finalize) this.pending.push([tx.key, tx.value]);
      return { data: utf8(`stored ${tx.key}`) };
    },
  };
}
