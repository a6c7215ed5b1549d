/**
 * The chain application: BaseApp with the chain's modules in order (auth, bank, authz, then
 * whatever the caller adds), the protobuf tx decoder, the signature-checking ante chain and the
 * worker-pool signature stage (cosmos-sdk: simapp/app.go — module order, maccPerms, blocked
 * addresses, NewAnteHandler; cosmos/cosmos-sdk:x/auth/keeper/account.go, cosmos/cosmos-sdk:x/auth/ante/ante.go).
 */
import type { AnteDecorator } from './ante.js';
import { defaultAnteChain } from './ante.js';
import { moduleAddress } from './address.js';
import { BaseApp, type TypeUrlNames } from './baseapp.js';
import type { KVGasConfig } from './gas.js';
import type { AppModule } from './module.js';
import type { AppDb } from './store.js';
import type { TxDecoder } from './tx.js';
import type { TxKind } from './txkinds.js';
import { authAnteChain } from './modules/auth/ante.js';
import { AuthModule } from './modules/auth/module.js';
import { SignatureVerifier } from './modules/auth/sigverify.js';
import { txSigners } from './modules/auth/ante.js';
import { FEE_COLLECTOR_NAME, GOV_MODULE_NAME, MINT_MODULE_NAME } from './modules/auth/types.js';
import { BankModule } from './modules/bank/module.js';
import { AuthzModule } from './modules/authz/module.js';
import { EvmModule } from './modules/evm/module.js';
import type { ModulePermission } from './modules/bank/keeper.js';
import { parseDecCoins } from '../config/app-config.js';
import { BASE_DENOM } from '../config/app-genesis.js';
import type { CryptoPool } from '../pool/types.js';
import { protoTxDecoder } from '../tx/codec.js';
import type { EmitNames } from '../proto/registry.js';
import { pruningOptions, type PruningOptions } from '../store/pruning.js';
import { VersionedStore, type VersionedDb } from '../store/versioned.js';

/** app.go maccPerms: module accounts and what they may do with the bank. */
export const MODULE_ACCOUNT_PERMISSIONS: Readonly<Record<string, ModulePermission[]>> = Object.freeze({
  [FEE_COLLECTOR_NAME]: [],
  [GOV_MODULE_NAME]: ['burner'],
  [MINT_MODULE_NAME]: ['minter'],
});

/**
 * app.go BlockedAddresses: every module account may not receive funds through MsgSend, except gov
 * (deposits and community spends go there).
 */
export function blockedAddresses(perms: Record<string, unknown> = MODULE_ACCOUNT_PERMISSIONS): Uint8Array[] {
  return Object.keys(perms)
    .filter((n) => n !== GOV_MODULE_NAME)
    .map(moduleAddress);
}

export type DecCoinSetting = string | readonly { denom: string; amount: string }[];

/**
 * app.toml `minimum-gas-prices` (`0.025achain,1uatom`; empty = none) as DecCoins
 * (types/dec_coin.go ParseDecCoins, via src/config). Throws on a malformed entry.
 */
export function minGasPricesOf(s: DecCoinSetting | undefined): { denom: string; amount: string }[] {
  if (s === undefined) return [];
  if (typeof s === 'string') return parseDecCoins(s);
  return s.map((c) => ({ denom: c.denom, amount: c.amount }));
}

export interface ChainAppOptions {
  /** The node's `app` database. */
  db: AppDb;
  /**
   * The node's `app_history` and `app_changes` databases: module state becomes versioned
   * (src/store/versioned.ts) and queries can read any retained height. Without them only the
   * latest height is served.
   */
  history?: { history: VersionedDb; changes: VersionedDb };
  /** app.toml `pruning*` (src/store/pruning.ts); default the SDK's `default`. */
  pruning?: PruningOptions;
  /** The names registry (src/names createNames): accepted spellings and the emit spelling. */
  names?: TypeUrlNames & EmitNames;
  /** The worker pool for signature verification; without one signatures are checked inline. */
  pool?: CryptoPool;
  /** app.toml `minimum-gas-prices`, checked in CheckTx. */
  minGasPrices?: DecCoinSetting;
  /** MsgUpdateParams authority (bech32); default the gov module account. */
  authority?: string;
  /** Account address prefix (`chain`). */
  bech32Prefix?: string;
  name?: string;
  version?: string;
  appVersion?: bigint;
  minRetainBlocks?: bigint;
  kvGasConfig?: KVGasConfig;
  /** Modules after auth, bank and authz, in order. */
  extraModules?: (parts: { auth: AuthModule; bank: BankModule; authz: AuthzModule }) => AppModule[];
  /**
   * Tests only: another tx decoder (the JSON one of src/app/tx.ts). It carries no signatures, so
   * the app then runs the unauthenticated ante chain (defaultAnteChain) unless `anteDecorators`
   * says otherwise.
   */
  txDecoder?: TxDecoder;
  anteDecorators?: AnteDecorator[];
  /** Tx kinds besides Cosmos (src/app/txkinds.ts), after the EVM kind. */
  txKinds?: TxKind[];
  /**
   * The EVM module (src/app/modules/evm) and its tx kind: on whenever the app can open module
   * databases (`openDatabase`, which the node always passes), unless `false`. `allowUnprotectedTxs`
   * is app.toml `[json-rpc] allow-unprotected-txs`; the chain id comes from genesis
   * (`app_state.evm.chain_id`).
   */
  evm?: { allowUnprotectedTxs?: boolean; chainId?: bigint } | false;
  /** Opens a module's named database (the node passes Storage.openNamedDb). */
  openDatabase?: (name: string) => AppDb;
  /** Called when the signature stage could not use the pool (FinalizeBlock verifies inline then). */
  onPoolError?: (err: unknown) => void;
  /** Capacity of the memo of valid signature checks (sigverify.ts VERIFIED_SIG_MEMO_SIZE); tests shrink it. */
  verifiedSigMemoSize?: number;
  /**
   * Whether CheckTx sends a tx's signatures to the pool (SignatureVerifierOptions.checkTxOnPool);
   * default: only when the crypto backend is the JS one.
   */
  checkTxOnPool?: boolean;
}

/** BaseApp with the chain's modules; `auth`, `bank`, `authz` and `sigVerifier` for the node and tests. */
export class ChainApp extends BaseApp {
  readonly auth: AuthModule;
  readonly bank: BankModule;
  readonly authz: AuthzModule;
  readonly sigVerifier: SignatureVerifier;
  /** The EVM module, when enabled (see ChainAppOptions.evm). */
  readonly evm: EvmModule | undefined;

  constructor(opts: ChainAppOptions) {
    const perms = MODULE_ACCOUNT_PERMISSIONS;
    const auth = new AuthModule({ moduleAccountPermissions: perms, authority: opts.authority, emit: opts.names });
    const bank = new BankModule({ moduleAccountPermissions: { ...perms }, blockedAddrs: blockedAddresses(perms), accounts: auth.keeper.accountHooks() });
    const sigVerifier = new SignatureVerifier({ accounts: auth.keeper, signers: txSigners, pool: opts.pool, onPoolError: opts.onPoolError, verifiedMemoSize: opts.verifiedSigMemoSize, checkTxOnPool: opts.checkTxOnPool });
    const signed = opts.txDecoder === undefined || opts.txDecoder === protoTxDecoder;
    const ante = opts.anteDecorators ?? (signed ? authAnteChain({ accounts: auth.keeper, bank: bank.keeper, verifier: sigVerifier }) : defaultAnteChain());
    // MsgExec finds inner messages' routes through the app (BaseApp.msgRoute, the registrar).
    const authz = new AuthzModule({ names: opts.names, accounts: auth.keeper.accountHooks(), bank: bank.keeper });
    const evm =
      opts.evm === false || opts.openDatabase === undefined
        ? undefined
        : new EvmModule({ auth: auth.keeper, bank: bank.keeper, denom: BASE_DENOM, allowUnprotectedTxs: opts.evm?.allowUnprotectedTxs, chainId: opts.evm?.chainId, pool: opts.pool });
    const extra = opts.extraModules?.({ auth, bank, authz }) ?? [];
    super(
      {
        name: opts.name ?? 'chaind',
        version: opts.version,
        appVersion: opts.appVersion,
        bech32Prefix: opts.bech32Prefix ?? 'chain',
        minRetainBlocks: opts.minRetainBlocks,
        kvGasConfig: opts.kvGasConfig,
        minGasPrices: minGasPricesOf(opts.minGasPrices),
      },
      {
        db: opts.db,
        modules: [auth, bank, authz, ...(evm === undefined ? [] : [evm]), ...extra],
        txDecoder: opts.txDecoder ?? protoTxDecoder,
        anteDecorators: ante,
        names: opts.names,
        preVerifier: signed ? sigVerifier : undefined,
        txKinds: [...(evm === undefined ? [] : [evm.txKind]), ...(opts.txKinds ?? [])],
        openDatabase: opts.openDatabase,
        versions: opts.history === undefined ? undefined : new VersionedStore({ latest: opts.db, ...opts.history }, opts.pruning ?? pruningOptions('default')),
      },
    );
    this.auth = auth;
    this.bank = bank;
    this.authz = authz;
    this.sigVerifier = sigVerifier;
    this.evm = evm;
  }
}

/** The chain app as the node builds it (see ChainAppOptions). */
export function createChainApp(opts: ChainAppOptions): ChainApp {
  return new ChainApp(opts);
}
