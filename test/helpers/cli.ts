/**
 * The `chaind` command run in this process: `main(argv, io)` with stdout, stderr, stdin and the
 * environment given here, so a test runs dozens of client commands without paying a Node start
 * (about 0.7 s of CPU each) for every one. The process entry itself (argv, exit code) is covered
 * by the tests that still spawn `node dist/src/cli/main.js` (`spawnCli`).
 */
import { spawnSync } from 'node:child_process';
import { main } from '../../src/cli/main.js';
import { CLI } from './node.js';

export interface CliRun {
  code: number | null;
  out: string;
  err: string;
}

/** `chaind <args>` in this process; `input` is what stdin holds (never a terminal). */
export async function runCliIn(args: string[], input = '', env: NodeJS.ProcessEnv = process.env): Promise<CliRun> {
  const r = { code: null as number | null, out: '', err: '' };
  r.code = await main(args, { out: (s) => void (r.out += s), err: (s) => void (r.err += s), env, stdin: input });
  return r;
}

/** `chaind <args>` as its own process, as a user runs it. */
export function spawnCli(args: string[], input = '', env: NodeJS.ProcessEnv = process.env, timeout = 90_000): CliRun {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', input, env, timeout });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
