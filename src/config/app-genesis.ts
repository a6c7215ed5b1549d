/**
 * The genesis `app_state` that `chaind init` writes: auth, authz, bank and evm, in the Cosmos SDK's
 * genesis JSON shapes (cosmos-sdk: x/auth/types/genesis.go, x/bank/types/genesis.go,
 * x/authz/genesis.go) with the type URLs from the names registry.
 *
 * The native token is `achain` (18 decimals, display unit `chain`): the bank denom and the EVM
 * balance are the same thing (one account model, ARCHITECTURE.md).
 */
import { bech32 } from '@scure/base';
import { BECH32_PREFIX, SPEC_NAMES, type Names } from '../names/index.js';

export const BASE_DENOM = 'achain';
export const DISPLAY_DENOM = 'chain';
export const DENOM_DECIMALS = 18;
/** EVM chain id of a chaind network unless the genesis says otherwise (EIP-155). */
export const DEFAULT_EVM_CHAIN_ID = 9000;

/** x/auth params at the SDK defaults (cosmos/cosmos-sdk:x/auth/types/params.go, Params table). */
export const DEFAULT_AUTH_PARAMS = {
  max_memo_characters: '256',
  tx_sig_limit: '7',
  tx_size_cost_per_byte: '10',
  sig_verify_cost_ed25519: '590',
  sig_verify_cost_secp256k1: '1000',
  sig_verify_cost_mldsa65: '750',
} as const;

export interface GenesisAccount {
  /** 20-byte address. */
  address: Uint8Array;
  /** Balance in the base denom. */
  balance: bigint;
}

export interface AppStateOptions {
  accounts?: GenesisAccount[];
  names?: Names;
  prefix?: string;
  evmChainId?: number;
  /** Default true: no EIP-1559 base fee (gas price 0 and legacy transactions are accepted). */
  noBaseFee?: boolean;
}

/** bank denom metadata of the native token (cosmos-sdk: x/bank/types/metadata.go). */
export function nativeDenomMetadata(): Record<string, unknown> {
  return {
    description: 'The native token of chaind: fees, EVM value and balances.',
    denom_units: [
      { denom: BASE_DENOM, exponent: 0, aliases: ['attochain'] },
      { denom: DISPLAY_DENOM, exponent: DENOM_DECIMALS, aliases: [] },
    ],
    base: BASE_DENOM,
    display: DISPLAY_DENOM,
    name: 'Chain',
    symbol: 'CHAIN',
    uri: '',
    uri_hash: '',
  };
}

/**
 * app_state for `chaind init`: each account gets an account number in the given order and its
 * balance; bank balances are sorted by address and the supply is their sum (the SDK's bank
 * InitGenesis checks both).
 */
export function buildAppState(opts: AppStateOptions = {}): Record<string, unknown> {
  const names = opts.names ?? SPEC_NAMES;
  const prefix = opts.prefix ?? BECH32_PREFIX;
  const accounts = opts.accounts ?? [];
  const addr = (a: Uint8Array) => bech32.encode(prefix, bech32.toWords(a));
  const baseAccount = names.typeUrl('/chain.auth.v1beta1.BaseAccount');
  const funded = accounts.filter((a) => a.balance > 0n);
  const balances = funded
    .map((a) => ({ address: addr(a.address), coins: [{ denom: BASE_DENOM, amount: a.balance.toString() }] }))
    .sort((x, y) => (x.address < y.address ? -1 : x.address > y.address ? 1 : 0));
  const total = funded.reduce((s, a) => s + a.balance, 0n);
  return {
    auth: {
      params: { ...DEFAULT_AUTH_PARAMS },
      accounts: accounts.map((a, i) => ({
        '@type': baseAccount,
        address: addr(a.address),
        pub_key: null,
        account_number: String(i),
        sequence: '0',
      })),
    },
    authz: { authorization: [] },
    bank: {
      params: { send_enabled: [], default_send_enabled: true },
      balances,
      supply: total > 0n ? [{ denom: BASE_DENOM, amount: total.toString() }] : [],
      denom_metadata: [nativeDenomMetadata()],
      send_enabled: [],
    },
    evm: {
      chain_id: opts.evmChainId ?? DEFAULT_EVM_CHAIN_ID,
      evm_denom: BASE_DENOM,
      no_base_fee: opts.noBaseFee ?? true,
      base_fee: '0',
      min_gas_price: '0',
      accounts: [],
    },
  };
}
