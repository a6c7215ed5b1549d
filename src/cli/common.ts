/** Shared CLI plumbing: output sinks, usage errors, home directory, argument parsing. */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Where a command writes; tests pass collectors, the binary passes the process streams. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
  /**
   * What stdin holds, when the caller supplies it (an in-process run, as the tests do); unset, the
   * process's own stdin is read and may be a terminal.
   */
  stdin?: string;
}

export function processIo(): CliIo {
  return {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    env: process.env,
  };
}

/** Exit codes: 0 ok, 1 failure (invalid config, refused overwrite, node error), 2 bad usage. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Wrong command line: the message is printed with a hint to `--help` and the exit code is 2. */
export class UsageError extends Error {
  readonly code = 'CLI_USAGE';
}

/** `--home`, else $CHAIND_HOME, else ~/.chaind. */
export function resolveHome(flag: string | undefined, env: Record<string, string | undefined>): string {
  return resolve(flag ?? env.CHAIND_HOME ?? `${homedir()}/.chaind`);
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** node:util parseArgs in strict mode, with its errors turned into short UsageErrors. */
export function parse(args: string[], options: Options, allowPositionals = false) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (e) {
    const msg = (e as Error).message.split('. To specify')[0]!;
    throw new UsageError(msg);
  }
}
