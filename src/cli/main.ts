#!/usr/bin/env node
/**
 * The `chaind` command (package.json `bin`): init, start, testnet, auth token, version, and the client
 * commands keys, tx and query (alias q), and the load generator loadtest.
 *
 * Exit codes: 0 success; 1 failure (invalid config or genesis, refused overwrite, node error),
 * with the error's message alone on stderr; 2 bad usage.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type CliIo, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, processIo, UsageError } from './common.js';
import type { TestnetStartDeps } from './testnet.js';
import type { StartDeps } from './start.js';

export const USAGE = `Usage: chaind <command> [options]

Commands:
  init <moniker> --chain-id ID [--dev] [--overwrite]   create a node home (config, keys, genesis)
  start [--<section>.<key> VALUE ...]                  run the node
  testnet init-files|start                             a local N-validator network (chaind testnet --help)
  auth token [--ttl 1h]                                print a JWT for the authenticated RPC
  version [--long]                                     print the version
  keys add|list|show|delete|export|import|import-hex   manage account keys (chaind keys --help)
  tx bank send | tx authz grant|exec|revoke            sign and broadcast a tx (chaind tx --help)
  query auth|bank|authz <query>  (alias q)             query the chain modules (chaind query --help)
  loadtest --kind K | --method M                       load a node: txs at a rate, or reads (chaind loadtest --help)

Common options:
  --home DIR    node home (default $CHAIND_HOME or ~/.chaind)
  -h, --help    help for a command
`;

/** Errors from our modules carry a string `code` and a message meant for the operator. */
function isExpected(e: unknown): e is Error & { code: string } {
  return e instanceof Error && typeof (e as { code?: unknown }).code === 'string';
}

/** Run one command; resolves with the exit code (never throws). */
export async function main(argv: string[], io: CliIo = processIo(), deps: StartDeps & TestnetStartDeps = {}): Promise<number> {
  const [command, ...rest] = argv;
  try {
    // Each command loads its own modules only: a `keys` or `query` process does not load the
    // node (half a second of CPU less per client command).
    switch (command) {
      case 'init':
        return (await import('./init.js')).runInit(rest, io);
      case 'start':
        return await (await import('./start.js')).runStart(rest, io, deps);
      case 'testnet':
        return await (await import('./testnet.js')).runTestnet(rest, io, deps);
      case 'auth':
        return (await import('./auth.js')).runAuth(rest, io);
      case 'version':
        return await (await import('./version.js')).runVersion(rest, io);
      case 'keys':
        return await (await import('./keys.js')).runKeys(rest, io);
      case 'tx':
        return await (await import('./tx.js')).runTx(rest, io);
      case 'query':
      case 'q':
        return await (await import('./query.js')).runQuery(rest, io);
      case 'loadtest':
        return await (await import('./loadtest.js')).runLoadtest(rest, io);
      case 'help':
      case '--help':
      case '-h':
        io.out(USAGE);
        return EXIT_OK;
      case '--version':
        return await (await import('./version.js')).runVersion([], io);
      case undefined:
        io.err(USAGE);
        return EXIT_USAGE;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`Error: ${e.message}\nRun 'chaind ${command && !command.startsWith('-') ? command + ' ' : ''}--help' for usage.\n`);
      return EXIT_USAGE;
    }
    if (isExpected(e)) {
      io.err(`${e.message}\n`);
      return EXIT_FAILURE;
    }
    io.err(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return EXIT_FAILURE;
  }
}

function invokedDirectly(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    // npm's bin link is a symlink: compare real paths.
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (invokedDirectly()) {
  const argv = process.argv.slice(2);
  void main(argv).then((code) => {
    // After `start` has closed the node nothing should be left running; exit regardless so that a
    // stray handle cannot keep a stopped node's process alive. Other commands just set the code.
    if (argv[0] === 'start' || (argv[0] === 'testnet' && argv[1] === 'start')) process.exit(code);
    process.exitCode = code;
  });
}
