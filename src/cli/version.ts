/** `chaind version [--long]`. */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ABCI_VERSION, COMETBFT_VERSION, VERSION } from '../version.js';
import { type CliIo, EXIT_OK, parse } from './common.js';

/** Repository root: this file is src/cli/version.ts, compiled to dist/src/cli/version.js. */
function repoRoot(): string {
  return fileURLToPath(new URL('../../../', import.meta.url));
}

/** The commit: $CHAIND_COMMIT (set by packagers), else `git rev-parse` in the checkout, else "unknown". */
export function gitCommit(env: Record<string, string | undefined>): string {
  if (env.CHAIND_COMMIT) return env.CHAIND_COMMIT;
  try {
    const out = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot(), stdio: ['ignore', 'pipe', 'ignore'], timeout: 2000 });
    const sha = out.toString().trim();
    return /^[0-9a-f]{40}$/.test(sha) ? sha : 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * Which crypto backend the node would pick with this environment's CHAIND_CRYPTO (loads the native
 * addon if there is one; imported only for `--long`).
 */
export async function cryptoBackendName(env: Record<string, string | undefined> = {}): Promise<string> {
  try {
    const { readEnvSwitches } = await import('../config/env.js');
    const { selectCryptoBackend } = await import('../crypto/backend.js');
    return selectCryptoBackend(readEnvSwitches(env).crypto).name;
  } catch (e) {
    return `unavailable (${(e as Error).message.split('\n')[0]})`;
  }
}

export async function runVersion(args: string[], io: CliIo): Promise<number> {
  const { values } = parse(args, { long: { type: 'boolean', default: false } });
  if (!values.long) {
    io.out(VERSION + '\n');
    return EXIT_OK;
  }
  const lines = [
    `version: ${VERSION}`,
    `commit: ${gitCommit(io.env)}`,
    `cometbft: ${COMETBFT_VERSION}`,
    `abci: ${ABCI_VERSION}`,
    `node: ${process.version}`,
    `crypto: ${await cryptoBackendName(io.env)}`,
  ];
  io.out(lines.join('\n') + '\n');
  return EXIT_OK;
}
