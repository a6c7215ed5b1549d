/**
 * V8's parallel scavenging, off on a machine with few cores (the process's setting: V8 flags are
 * per process, and a worker thread cannot be given its own).
 *
 * A scavenge (the young-generation GC) normally splits its work between the thread whose heap it
 * is and V8's platform helper threads (`node --v8-pool-size`, 4 by default). On a machine whose
 * cores are already taken by the main thread and the pool's threads, the helpers only compete for
 * those cores: measured on the 2-core machine with eth_call on the pool (balanceOf over 1,024
 * holders, wrk with 64 connections, load ~10, A/B in one session), the four helper threads used
 * 55–70 µs of CPU each per call (perf: about half of it scavenging for the call thread's heap, the
 * rest TurboFan compiling), and the whole process ~760–810 µs per call; with parallel scavenging
 * off, the helpers fell to ~10 µs each, the call thread's own CPU did not grow (its scavenges were
 * waiting on the helpers), and the process used ~450–480 µs per call.
 *
 * CHAIND_PARALLEL_SCAVENGE=on|off (src/config/env.ts) overrides the choice made from the core
 * count; the node applies it at start, before its threads (src/node.ts).
 */
import { availableParallelism } from 'node:os';
import v8 from 'node:v8';
import type { ScavengeSetting } from '../config/env.js';

/** Up to this many cores, parallel scavenging is off unless CHAIND_PARALLEL_SCAVENGE=on. */
export const PARALLEL_SCAVENGE_MIN_CORES = 5;

/** Whether parallel scavenging stays on: `on`/`off` as set, `auto` by core count. */
export function parallelScavenge(setting: ScavengeSetting, cores: number): boolean {
  return setting === 'on' ? true : setting === 'off' ? false : cores >= PARALLEL_SCAVENGE_MIN_CORES;
}

let applied: boolean | undefined;

/**
 * Applies parallelScavenge() once per process (the node, before it starts its threads); returns
 * whether parallel scavenging stays on.
 */
export function applyScavengePolicy(setting: ScavengeSetting): boolean {
  if (applied !== undefined) return applied;
  applied = parallelScavenge(setting, availableParallelism());
  if (!applied) v8.setFlagsFromString('--no-parallel-scavenge');
  return applied;
}
