/**
 * Configuration: config.toml, app.toml, genesis.json, key files and the JWT secret.
 * `loadConfig` gives the typed settings; `StartNodeOptions` is what the CLI hands to `startNode`.
 */
import type { Logger } from '../log.js';
import type { AppConfig } from './app-config.js';
import type { EnvSwitches } from './env.js';
import type { GenesisDoc } from './genesis.js';
import type { ConfigPaths } from './load.js';
import type { NodeConfig } from './node-config.js';

export * from './errors.js';
export * from './duration.js';
export * from './address.js';
export * from './node-config.js';
export * from './app-config.js';
export * from './load.js';
export * from './genesis.js';
export * from './keyfiles.js';
export * from './jwt.js';
export * from './app-genesis.js';
export * from './env.js';
export { renderToml } from './schema.js';
export { renderConfigToml, renderAppToml } from './write.js';

/** What `chaind start` passes to `startNode` in src/node.ts. */
export interface StartNodeOptions {
  /** Absolute home directory. */
  home: string;
  /** config.toml after defaults ← file ← flags. */
  config: NodeConfig;
  /** app.toml after defaults ← file ← flags. */
  appConfig: AppConfig;
  /** The validated genesis document. */
  genesis: GenesisDoc;
  /** Root logger (level and format from config.toml); use `logger.child({ module })`. */
  logger: Logger;
  /** Absolute paths of genesis, key files, jwt.hex, db dir, WAL, address book. */
  paths: ConfigPaths;
  /** CHAIND_POOL, CHAIND_CRYPTO, CHAIND_SIGN_LOG (src/config/env.ts); default DEFAULT_ENV_SWITCHES. */
  env?: EnvSwitches;
}

/** The running node as the CLI sees it. */
export interface RunningNode {
  /** Stop every part, in reverse order of start. Called once. */
  close(): Promise<void>;
}

export type StartNode = (opts: StartNodeOptions) => Promise<RunningNode>;
