/**
 * `chaind init <moniker> --chain-id ID [--home DIR] [--dev] [--overwrite]`
 *
 * Writes config/config.toml, config/app.toml, config/genesis.json, config/priv_validator_key.json,
 * config/node_key.json, config/jwt.hex and data/priv_validator_state.json.
 *
 * - An existing genesis is kept unless --overwrite (then it is replaced).
 * - Existing config.toml / app.toml are never rewritten: they may hold the operator's edits.
 * - Existing keys, sign state and jwt.hex are reused, never regenerated: replacing a validator
 *   key silently, or resetting its sign state, is how validators double-sign.
 * - `--dev`: the 20 dev accounts (src/keys/devaccounts.ts) get 10^24 achain (10^6 CHAIN) each,
 *   and the 10 Ethereum ones (m/44'/60'/0'/0/i) go into <home>/keystore with the empty password
 *   (as geth --dev's account), so personal_unlockAccount(addr, "") and then eth_sendTransaction
 *   work without a wallet. scrypt N 2^12 (DEV_SCRYPT): the keys are public, init stays fast.
 */
import { hexUpper } from '../crypto/bytes.js';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildAppState, type GenesisAccount } from '../config/app-genesis.js';
import { defaultAppConfig, type AppConfig } from '../config/app-config.js';
import { configError } from '../config/errors.js';
import { MAX_CHAIN_ID_LEN, nowNanos, writeGenesis, type GenesisDoc } from '../config/genesis.js';
import { formatJwtSecret, generateJwtSecret } from '../config/jwt.js';
import {
  ed25519Address,
  generateEd25519,
  nodeIdFromPubKey,
  readNodeKey,
  readPrivValidatorKey,
  writeInitialPrivValidatorState,
  writeNodeKey,
  writePrivValidatorKey,
  type Ed25519KeyPair,
} from '../config/keyfiles.js';
import { configPaths, displayPath, loadConfig, type ConfigPaths } from '../config/load.js';
import { defaultNodeConfig, type NodeConfig } from '../config/node-config.js';
import { renderAppToml, renderConfigToml } from '../config/write.js';
import { devAccounts } from '../keys/devaccounts.js';
import { DEV_SCRYPT, Keystore } from '../keys/keystore.js';
import { SPEC_NAMES } from '../names/index.js';
import { defaultConsensusParams } from '../types/params.js';
import { type CliIo, EXIT_OK, parse, resolveHome, UsageError } from './common.js';

/** Voting power of the single genesis validator (CometBFT's init uses 10). */
export const INIT_VALIDATOR_POWER = 10n;
/** Balance of each dev account: 10^24 achain = 1,000,000 CHAIN. */
export const DEV_ACCOUNT_BALANCE = 10n ** 24n;
/** Chain id of `init --dev` when --chain-id is not given. */
export const DEV_CHAIN_ID = 'chaind-dev';

export const INIT_USAGE = `Usage: chaind init <moniker> --chain-id ID [--home DIR] [--dev] [--overwrite]

  --chain-id ID   chain id written to the genesis (required unless --dev; --dev default "${DEV_CHAIN_ID}")
  --home DIR      node home (default $CHAIND_HOME or ~/.chaind)
  --dev           fund the 20 dev accounts of "test test ... junk" with 10^24 achain each
                  and put the 10 Ethereum ones in <home>/keystore (password "")
  --overwrite     replace an existing genesis.json
`;

export interface InitOptions {
  home: string;
  moniker: string;
  chainId: string;
  dev: boolean;
  overwrite: boolean;
}

export interface InitResult {
  home: string;
  moniker: string;
  chain_id: string;
  node_id: string;
  validator_address: string;
  genesis: string;
  dev_accounts?: { address: string; bech32: string; path: string }[];
}

function writeNew(path: string, text: string, mode?: number): void {
  writeFileSync(path, text, mode === undefined ? undefined : { mode });
}

/** Reuse the key at `path` if there is one, else make and write a new one. */
function ensureKey(
  path: string,
  source: string,
  read: (p: string, s: string) => Ed25519KeyPair,
  write: (p: string, k: Ed25519KeyPair) => void,
): Ed25519KeyPair {
  if (existsSync(path)) return read(path, source);
  const key = generateEd25519();
  write(path, key);
  return key;
}

/** A node home's files apart from the genesis: what `initHomeFiles` wrote or found. */
export interface HomeFiles {
  config: NodeConfig;
  paths: ConfigPaths;
  /** The validator key (priv_validator_key.json). */
  privValidator: Ed25519KeyPair;
  /** The P2P identity (node_key.json). */
  nodeKey: Ed25519KeyPair;
}

/**
 * Write a node home's config.toml, app.toml, key files, sign state and jwt.hex, each only when
 * absent (see the file comment); `config` / `appConfig` are what a new config.toml / app.toml get.
 */
export function initHomeFiles(home: string, config: NodeConfig, appConfig: AppConfig = defaultAppConfig()): HomeFiles {
  const configToml = join(home, 'config', 'config.toml');
  const paths = configPaths(home, config);
  const show = (p: string) => displayPath(home, p);
  mkdirSync(join(home, 'config'), { recursive: true });
  mkdirSync(join(home, 'data'), { recursive: true });
  if (!existsSync(configToml)) writeNew(configToml, renderConfigToml(config));
  if (!existsSync(paths.appToml)) writeNew(paths.appToml, renderAppToml(appConfig));

  for (const p of [paths.privValidatorKey, paths.nodeKey, paths.privValidatorState]) mkdirSync(join(p, '..'), { recursive: true });
  const pv = ensureKey(paths.privValidatorKey, show(paths.privValidatorKey), readPrivValidatorKey, (p, k) => writePrivValidatorKey(p, k, SPEC_NAMES));
  const nk = ensureKey(paths.nodeKey, show(paths.nodeKey), readNodeKey, (p, k) => writeNodeKey(p, k, SPEC_NAMES));
  if (!existsSync(paths.privValidatorState)) writeInitialPrivValidatorState(paths.privValidatorState);
  if (!existsSync(paths.jwtSecret)) writeNew(paths.jwtSecret, formatJwtSecret(generateJwtSecret()), 0o600);
  return { config, paths, privValidator: pv, nodeKey: nk };
}

export interface GenesisValidatorSpec {
  /** ed25519 public key of the validator. */
  pubKey: Uint8Array;
  /** The moniker, written as the validator's name. */
  name: string;
  /** Default INIT_VALIDATOR_POWER. */
  power?: bigint;
}

export interface InitGenesisOptions {
  chainId: string;
  validators: GenesisValidatorSpec[];
  /** Fund the dev accounts (DEV_ACCOUNT_BALANCE each). */
  dev: boolean;
  /** More funded accounts, after the dev accounts. */
  accounts?: GenesisAccount[];
  /** Nanoseconds; default now. */
  genesisTime?: bigint;
}

/** The genesis of `chaind init` (one validator) and `chaind testnet init-files` (N validators). */
export function initGenesisDoc(opts: InitGenesisOptions): GenesisDoc {
  const accounts: GenesisAccount[] = opts.dev ? devAccounts().map((a) => ({ address: a.address, balance: DEV_ACCOUNT_BALANCE })) : [];
  if (opts.accounts) accounts.push(...opts.accounts);
  return {
    genesisTime: opts.genesisTime ?? nowNanos(),
    chainId: opts.chainId,
    initialHeight: 1n,
    consensusParams: defaultConsensusParams(),
    validators: opts.validators.map((v) => ({
      address: ed25519Address(v.pubKey),
      pubKey: { type: 'ed25519', bytes: v.pubKey },
      power: v.power ?? INIT_VALIDATOR_POWER,
      name: v.name,
    })),
    appHash: new Uint8Array(),
    appState: buildAppState({ accounts, names: SPEC_NAMES }),
  };
}

/** The init steps; throws ConfigError (exit 1) when it must not proceed. */
export function initHome(opts: InitOptions): InitResult {
  const { home } = opts;
  const configToml = join(home, 'config', 'config.toml');
  // Respect an existing config.toml's file locations; otherwise the defaults.
  let config: NodeConfig;
  if (existsSync(configToml)) config = loadConfig({ home }).config;
  else config = defaultNodeConfig({ moniker: opts.moniker });
  const paths = configPaths(home, config);

  if (existsSync(paths.genesis) && !opts.overwrite) {
    throw configError(displayPath(home, paths.genesis), undefined, 'already exists (use --overwrite to replace it)', 'CONFIG_EXISTS');
  }

  const files = initHomeFiles(home, config);
  const pv = files.privValidator;
  const doc = initGenesisDoc({ chainId: opts.chainId, validators: [{ pubKey: pv.pubKey, name: opts.moniker }], dev: opts.dev });
  writeGenesis(paths.genesis, doc, SPEC_NAMES);

  const result: InitResult = {
    home,
    moniker: opts.moniker,
    chain_id: opts.chainId,
    node_id: nodeIdFromPubKey(files.nodeKey.pubKey),
    validator_address: hexUpper(ed25519Address(pv.pubKey)),
    genesis: paths.genesis,
  };
  if (opts.dev) {
    result.dev_accounts = devAccounts().map((a) => ({ address: a.hex, bech32: a.bech32, path: a.path }));
    importDevKeystore(paths.keystoreDir);
  }
  return result;
}

/** The password of the dev accounts in the keystore (geth --dev's is empty too). */
export const DEV_KEYSTORE_PASSWORD = '';

/** Writes the Ethereum dev accounts into the keystore; ones already there are left alone. */
export function importDevKeystore(dir: string): string[] {
  const ks = new Keystore(dir);
  return devAccounts()
    .filter((a) => a.keyType === 'eth_secp256k1')
    .map((a) => ks.importKeySync(a.privateKey, DEV_KEYSTORE_PASSWORD, DEV_SCRYPT).file);
}

export function runInit(args: string[], io: CliIo): number {
  const { values, positionals } = parse(
    args,
    {
      home: { type: 'string' },
      'chain-id': { type: 'string' },
      dev: { type: 'boolean', default: false },
      overwrite: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    true,
  );
  if (values.help) {
    io.out(INIT_USAGE);
    return EXIT_OK;
  }
  if (positionals.length !== 1) throw new UsageError('init takes exactly one argument, the moniker');
  const moniker = positionals[0]!;
  if (moniker.trim() === '') throw new UsageError('the moniker must not be empty');
  const dev = values.dev === true;
  const chainId = (values['chain-id'] as string | undefined) ?? (dev ? DEV_CHAIN_ID : undefined);
  if (chainId === undefined || chainId === '') throw new UsageError('--chain-id is required');
  if (chainId.length > MAX_CHAIN_ID_LEN) throw new UsageError(`--chain-id: too long (max ${MAX_CHAIN_ID_LEN} characters)`);
  const home = resolveHome(values.home as string | undefined, io.env);
  const result = initHome({ home, moniker, chainId, dev, overwrite: values.overwrite === true });
  io.out(JSON.stringify(result, null, 2) + '\n');
  return EXIT_OK;
}
