/**
 * The EVM module: Ethereum transactions executed by the app (the `evm` tx kind, kind.ts), one
 * account model with auth and bank (state.ts), code and storage in its store, receipts, logs and
 * the state trie in databases of its own, and the state root as its commitment to the app hash.
 * See docs/EVM.md.
 */
import type { Bytes } from '../../bytes.js';
import type { Context } from '../../context.js';
import type { AppModule, BlockStateWatcher, ModuleCommit, ModuleDbReader } from '../../module.js';
import type { TxKind } from '../../txkinds.js';
import { EvmKeeper, type EvmKeeperOptions } from './keeper.js';
import { EVM_MODULE_NAME, EVM_RECEIPTS_DB, EVM_STORE_KEY, EVM_TRIE_DB } from './keys.js';
import { evmTxKind, type EvmTxKind } from './kind.js';

export type EvmModuleOptions = EvmKeeperOptions;

export class EvmModule implements AppModule {
  readonly name = EVM_MODULE_NAME;
  readonly storeKey = EVM_STORE_KEY;
  readonly databases = [EVM_TRIE_DB, EVM_RECEIPTS_DB] as const;
  readonly keeper: EvmKeeper;
  readonly kind: EvmTxKind;

  constructor(opts: EvmModuleOptions) {
    this.keeper = new EvmKeeper(opts);
    this.kind = evmTxKind(this.keeper);
  }

  get txKind(): TxKind {
    return this.kind as TxKind;
  }

  initGenesis(ctx: Context, genesis: unknown): void {
    this.keeper.initGenesis(ctx, genesis);
  }

  attachDatabases(dbs: ReadonlyMap<string, ModuleDbReader>): void {
    this.keeper.attach(dbs);
  }

  commitment(ctx: Context, changed?: ReadonlyMap<string, readonly Bytes[]>): Promise<Bytes> {
    return this.keeper.computeRoot(ctx, changed ?? new Map());
  }

  commit(c: ModuleCommit): void {
    this.keeper.commit(c);
  }

  discardPending(): void {
    this.keeper.discardPending();
  }

  watchBlockState(height: bigint): BlockStateWatcher {
    return this.keeper.watchBlockState(height);
  }
}
