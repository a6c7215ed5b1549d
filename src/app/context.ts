/**
 * The execution context handed to ante decorators, message and query handlers and module hooks
 * (cosmos-sdk: types/context.go, types/events.go).
 */
import type { AbciEvent } from '../abci/types.js';
import type { AddressCodec } from './address.js';
import type { Bytes } from './bytes.js';
import type { GasMeter } from './gas.js';
import type { KVStore } from './store.js';
import type { ConsensusParams } from '../types/params.js';

/** baseapp execMode (cosmos-sdk: baseapp/baseapp.go). */
export enum ExecMode {
  Check = 'check',
  ReCheck = 'recheck',
  Simulate = 'simulate',
  PrepareProposal = 'prepare_proposal',
  ProcessProposal = 'process_proposal',
  Finalize = 'finalize',
  Genesis = 'genesis',
  Query = 'query',
}

/**
 * Collects a context's events in emission order. Attributes are indexed by default: the SDK marks
 * every attribute for indexing when app.toml `index-events` is empty, its default
 * (cosmos-sdk: types/events.go MarkEventsToIndex).
 */
export class EventManager {
  private readonly list: AbciEvent[] = [];

  /** Emits `type` with attributes in the given order. */
  emit(type: string, attrs: readonly (readonly [string, string])[] = []): void {
    this.list.push({ type, attributes: attrs.map(([key, value]) => ({ key, value, index: true })) });
  }

  emitEvent(ev: AbciEvent): void {
    this.list.push({ type: ev.type, attributes: ev.attributes.map((a) => ({ ...a })) });
  }

  emitEvents(evs: readonly AbciEvent[]): void {
    for (const e of evs) this.emitEvent(e);
  }

  events(): AbciEvent[] {
    return this.list;
  }
}

export interface ContextInit {
  mode: ExecMode;
  chainId: string;
  height: bigint;
  /** Block time, ns since the Unix epoch. */
  time: bigint;
  gasMeter: GasMeter;
  addressCodec: AddressCodec;
  /** Resolves a module's store (already prefixed and gas-metered) by store key. */
  stores: (storeKey: string, meter: GasMeter) => KVStore;
  txBytes?: Bytes;
  consensusParams?: ConsensusParams;
  /** The block proposer's 20-byte address (FinalizeBlock's proposer_address; absent outside a block). */
  proposerAddress?: Bytes;
  /** Minimum gas prices of this node (app.toml `minimum-gas-prices`), for CheckTx fee checks. */
  minGasPrices?: readonly { denom: string; amount: string }[];
}

export class Context {
  readonly mode: ExecMode;
  readonly chainId: string;
  readonly height: bigint;
  readonly time: bigint;
  readonly addressCodec: AddressCodec;
  readonly txBytes: Bytes | undefined;
  readonly consensusParams: ConsensusParams | undefined;
  readonly proposerAddress: Bytes | undefined;
  readonly minGasPrices: readonly { denom: string; amount: string }[];
  readonly events = new EventManager();
  private meter: GasMeter;
  private readonly stores: (storeKey: string, meter: GasMeter) => KVStore;
  private readonly storeCache = new Map<string, KVStore>();

  constructor(init: ContextInit) {
    this.mode = init.mode;
    this.chainId = init.chainId;
    this.height = init.height;
    this.time = init.time;
    this.meter = init.gasMeter;
    this.addressCodec = init.addressCodec;
    this.stores = init.stores;
    this.txBytes = init.txBytes;
    this.consensusParams = init.consensusParams;
    this.proposerAddress = init.proposerAddress;
    this.minGasPrices = init.minGasPrices ?? [];
  }

  get gasMeter(): GasMeter {
    return this.meter;
  }

  /** SetUpContextDecorator replaces the meter (x/auth/ante/setup.go); stores follow the new one. */
  setGasMeter(m: GasMeter): void {
    this.meter = m;
    this.storeCache.clear();
  }

  get isCheckTx(): boolean {
    return this.mode === ExecMode.Check || this.mode === ExecMode.ReCheck;
  }

  get isReCheckTx(): boolean {
    return this.mode === ExecMode.ReCheck;
  }

  /** The module store registered under `storeKey`, relative to the module's prefix. */
  store(storeKey: string): KVStore {
    let s = this.storeCache.get(storeKey);
    if (s === undefined) {
      s = this.stores(storeKey, this.meter);
      this.storeCache.set(storeKey, s);
    }
    return s;
  }
}
