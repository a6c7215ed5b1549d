/**
 * `chaind start [--home DIR] [--<section>.<key> VALUE ...]`
 *
 * Loads config.toml and app.toml (flag beats file beats default; any setting can be a flag, e.g.
 * `--rpc.laddr`, `--json-rpc.api`, `--log_level`), then the genesis, then hands everything to
 * `startNode` (src/node.ts). Invalid settings exit 1 with the ConfigError's message alone.
 *
 * Shutdown: the first SIGINT/SIGTERM calls `close()` once and exits 0 when it resolves (1 if it
 * throws). A second signal while closing exits 1 at once: an operator pressing Ctrl-C twice wants
 * out, and every write chaind makes is crash-safe (one LMDB transaction per block, the WAL).
 */
import type { EventEmitter } from 'node:events';
import { loadGenesis } from '../config/genesis.js';
import { displayPath, loadConfig, settingFlagNames, type FlagValue } from '../config/load.js';
import { readEnvSwitches, type RunningNode, type StartNode, type StartNodeOptions } from '../config/index.js';
import { createLogger, type Logger } from '../log.js';
import { VERSION } from '../version.js';
import { nofileLogFields, raiseNofile, type NofileRaise } from './rlimit.js';
import type { AppConfig } from '../config/app-config.js';
import { type CliIo, EXIT_FAILURE, EXIT_OK, parse, resolveHome } from './common.js';

export const START_USAGE = `Usage: chaind start [--home DIR] [--<section>.<key> VALUE ...]

Every config.toml and app.toml setting can be given as a flag, which beats the file:
  --log_level info|debug|warn|error|none|"consensus:debug,*:info"
  --rpc.laddr tcp://127.0.0.1:26657        --p2p.laddr tcp://0.0.0.0:26656
  --api.address tcp://127.0.0.1:1317       --grpc.address 127.0.0.1:9090
  --json-rpc.address 127.0.0.1:8545        --json-rpc.ws-address 127.0.0.1:8546
  --json-rpc.api eth,net,web3              --instrumentation.prometheus-listen-addr 127.0.0.1:26660
  --consensus.timeout_commit 1s            --compat.upstream-names=true
Booleans take a value: --rpc.unsafe=true. '-' and '_' are interchangeable in keys.
`;

/** parseArgs options for every setting, in TOML spelling and with '-'/'_' swapped. */
function settingOptions(): Record<string, { type: 'string' }> {
  const out: Record<string, { type: 'string' }> = {};
  for (const name of settingFlagNames()) {
    out[name] = { type: 'string' };
    out[name.replace(/_/g, '-')] = { type: 'string' };
    out[name.replace(/-/g, '_')] = { type: 'string' };
  }
  return out;
}

export interface StartDeps {
  /** The node's entry; default: `startNode` of src/node.ts, imported when needed. */
  startNode?: StartNode;
  /** Where SIGINT/SIGTERM arrive; default `process`. */
  signals?: Pick<EventEmitter, 'on' | 'off'>;
  /** Where log lines go; default stdout. */
  logWrite?: (line: string) => void;
  /** Checks and raises the open-file limit (default raiseNofile of rlimit.ts). */
  raiseNofile?: () => NofileRaise;
}

/**
 * The composition root, loaded when `start` needs it: a literal import (tsc checks the path and
 * the type), dynamic so that `init`, `keys`, `version` and the CLI's tests, which load this file
 * through main.ts, do not load the servers, LMDB and the worker pool.
 */
async function importStartNode(): Promise<StartNode> {
  return (await import('../node.js')).startNode;
}

/**
 * Logs the open-file limit, and warns when the servers' connection caps together (plus a reserve
 * for LMDB, the WAL, peers and the private validator) do not fit in it: then a flood of
 * connections could still starve the node of descriptors.
 */
function logNofile(logger: Logger, r: NofileRaise, rpcMax: number, app: AppConfig): void {
  const fields = nofileLogFields(r);
  if (r.method === 'failed') logger.warn('cannot raise the open-file limit (RLIMIT_NOFILE) to the hard limit', fields);
  else logger.info(r.method === 'prlimit' ? 'raised the open-file limit (RLIMIT_NOFILE) to the hard limit' : 'open-file limit (RLIMIT_NOFILE)', fields);
  const soft = r.after?.soft;
  if (soft === null || soft === undefined) return;
  const caps = [rpcMax, app.api.enable ? app.api.maxOpenConnections : -1, app.grpc.enable ? app.grpc.maxOpenConnections : -1];
  if (caps.some((c) => c === 0)) {
    logger.warn('a server has no connection cap (max-open-connections 0): enough connections can exhaust the open-file limit', { soft });
    return;
  }
  const need = caps.filter((c) => c > 0).reduce((a, b) => a + b, 0) + FD_RESERVE;
  if (need > soft) logger.warn('the connection caps together exceed the open-file limit', { soft, caps_plus_reserve: need });
}

/** Descriptors kept for everything but client connections (LMDB, WAL, peers, privval, workers). */
const FD_RESERVE = 256;

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Run the node until a signal; resolves with the exit code. */
export async function runStart(args: string[], io: CliIo, deps: StartDeps = {}): Promise<number> {
  const { values } = parse(args, { home: { type: 'string' }, help: { type: 'boolean', short: 'h' }, ...settingOptions() });
  if (values.help) {
    io.out(START_USAGE);
    return EXIT_OK;
  }
  const home = resolveHome(values.home as string | undefined, io.env);
  const flags: Record<string, FlagValue | undefined> = {};
  for (const [k, v] of Object.entries(values)) if (k !== 'home' && k !== 'help') flags[k] = v as string;

  // Config errors escape to main(), which prints the message and returns 1.
  const loaded = loadConfig({ home, flags });
  const logger: Logger = createLogger({ level: loaded.config.logLevel, format: loaded.config.logFormat, write: deps.logWrite });
  for (const w of loaded.warnings) logger.warn(w);
  const genesis = loadGenesis(loaded.paths.genesis, { source: displayPath(home, loaded.paths.genesis) });

  const env = readEnvSwitches(io.env);
  const opts: StartNodeOptions = { home, config: loaded.config, appConfig: loaded.appConfig, genesis, logger, paths: loaded.paths, env };
  logger.info('starting chaind', { version: VERSION, home, chain_id: genesis.chainId });
  logNofile(logger, (deps.raiseNofile ?? raiseNofile)(), loaded.config.rpc.maxOpenConnections, loaded.appConfig);
  let node: RunningNode;
  try {
    const startNode = deps.startNode ?? (await importStartNode());
    node = await startNode(opts);
  } catch (e) {
    io.err(`${describe(e)}\n`);
    if (logger.enabled('debug') && e instanceof Error && e.stack) io.err(e.stack + '\n');
    return EXIT_FAILURE;
  }

  const signals = deps.signals ?? process;
  return await new Promise<number>((resolveExit) => {
    let closing = false;
    const onSignal = (sig: string) => {
      if (closing) {
        logger.warn('second signal while shutting down; exiting now', { signal: sig });
        done(EXIT_FAILURE);
        return;
      }
      closing = true;
      logger.info('shutting down', { signal: sig });
      // While the parts are torn down, a late callback of one already closed (a timer, a socket
      // event) may throw: log it and finish the shutdown, so the exit code says whether close()
      // succeeded rather than which teardown race a loaded machine happened to run.
      const late = (e: unknown) => logger.error('error while shutting down', { err: describe(e) });
      if (signals === process) {
        process.on('uncaughtException', late);
        process.on('unhandledRejection', late);
      }
      node.close().then(
        () => done(EXIT_OK),
        (e: unknown) => {
          io.err(`error while shutting down: ${describe(e)}\n`);
          done(EXIT_FAILURE);
        },
      );
    };
    const onInt = () => onSignal('SIGINT');
    const onTerm = () => onSignal('SIGTERM');
    let finished = false;
    const done = (code: number) => {
      if (finished) return;
      finished = true;
      signals.off('SIGINT', onInt);
      signals.off('SIGTERM', onTerm);
      resolveExit(code);
    };
    signals.on('SIGINT', onInt);
    signals.on('SIGTERM', onTerm);
  });
}
