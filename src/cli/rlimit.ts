/**
 * The open-file limit of `chaind start` (docs/ARCHITECTURE.md "gRPC limits and fd limits").
 *
 * Every connection to the node's servers holds a descriptor, and so do LMDB, the WAL and the
 * private validator's state write. Distributions start processes with a soft RLIMIT_NOFILE of
 * 1024 and a much higher hard limit (systemd: 524288); the node wants the hard one, as Go has given
 * every program since go1.19 (golang/go:src/os/rlimit.go) and so every CometBFT node.
 *
 * Node.js itself raises the soft limit to the hard one when the process starts (nodejs/node:
 * src/node.cc, PlatformInit, "Raise the open file descriptor limit"), before any of our code runs:
 * the value `chaind start` sees is already the raised one. This module checks it from
 * /proc/self/limits, and where the soft limit is still below the hard one (a runtime that does not
 * do this) raises it with util-linux `prlimit --pid <own pid> --nofile=<hard>:<hard>` — Node has no
 * setrlimit; prlimit(2) on our own process needs no privilege to go up to the hard limit. The result
 * is logged at start.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export interface NofileLimit {
  /** null = unlimited */
  soft: number | null;
  hard: number | null;
}

export interface NofileRaise {
  before: NofileLimit | null;
  after: NofileLimit | null;
  /** 'unchanged': already at the hard limit (or no /proc); 'prlimit': raised here; 'failed'. */
  method: 'unchanged' | 'prlimit' | 'failed';
  error?: string;
}

/** RLIMIT_NOFILE of a process from /proc/<pid>/limits; null where there is no /proc. */
export function readNofile(pid: number | 'self' = 'self'): NofileLimit | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/limits`, 'utf8');
  } catch {
    return null;
  }
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
  if (!m) return null;
  const num = (v: string) => (v === 'unlimited' ? null : Number(v));
  return { soft: num(m[1]!), hard: num(m[2]!) };
}

function below(l: NofileLimit | null): l is NofileLimit & { soft: number; hard: number } {
  return l !== null && l.hard !== null && l.soft !== null && l.soft < l.hard;
}

/** Raises this process's soft open-file limit to the hard one where it is not there yet. */
export function raiseNofile(env: NodeJS.ProcessEnv = process.env): NofileRaise {
  const before = readNofile();
  if (!below(before)) return { before, after: before, method: 'unchanged' };
  const bin = env.CHAIND_PRLIMIT_BIN || 'prlimit';
  try {
    execFileSync(bin, ['--pid', String(process.pid), `--nofile=${before.hard}:${before.hard}`], { stdio: 'ignore', timeout: 10_000 });
  } catch (e) {
    return { before, after: readNofile(), method: 'failed', error: (e as Error).message.split('\n', 1)[0]! };
  }
  const after = readNofile();
  if (below(after)) return { before, after, method: 'failed', error: 'prlimit ran but the soft limit did not change' };
  return { before, after, method: 'prlimit' };
}

/** One log line's fields for a raise. */
export function nofileLogFields(r: NofileRaise): Record<string, unknown> {
  const show = (v: number | null | undefined) => (v === null ? 'unlimited' : v === undefined ? 'unknown' : v);
  return {
    soft_before: show(r.before?.soft),
    soft: show(r.after?.soft),
    hard: show(r.after?.hard ?? r.before?.hard),
    method: r.method,
    ...(r.error !== undefined ? { err: r.error } : {}),
  };
}
