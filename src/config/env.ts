/**
 * The environment switches, read here and nowhere else in src/: the CLI reads them once
 * (`readEnvSwitches(io.env)`) and passes them down (StartNodeOptions.env → src/node.ts → the
 * crypto backend, the worker pool, the private validator). They are for tests, benchmarks and
 * debugging; operators configure the node through config.toml and app.toml.
 *
 *   CHAIND_POOL      `piscina` (default) or `single`: run signature jobs inline on the main thread
 *   CHAIND_CRYPTO    `auto` (default: native if the addon loads, else JS), `native`, `js`
 *   CHAIND_SIGN_LOG  a file that receives every signature the private validator releases (the
 *                    kill -9 e2e test proves no double signature with it); unset or empty: none
 *   CHAIND_EXEC     `thread` (default): blocks execute on the executor thread; `inline`: on the
 *                    main thread (src/state/executor-thread.ts; tests, debugging)
 *   CHAIND_GRPC     `auto` (default: `thread` on a machine of 4 cores or more, else `inline`),
 *                    `thread`: the gRPC server's transport on a thread of its own, calls run by the
 *                    main thread's router (src/rpc/grpc/thread.ts); `inline`: all of it on the main thread
 *   CHAIND_EXEC_NICE the executor thread's nice value, 0..19 (default 0): above 0 it yields a shared core
 *                    to the thread that answers RPC (Linux: a per-thread setting)
 *   CHAIND_MAIN_SLICE_US the main thread's scheduler slice in µs, 100..100000, or 0 for the kernel's
 *                    default (default 100): on Linux 6.12+ a short slice lets the thread that answers
 *                    RPC preempt the executor on a shared core as soon as a request wakes it
 *                    (src/pool/sched.ts; needs the native addon)
 *   CHAIND_PARALLEL_SCAVENGE `on` | `off` | `auto` (default: off on a machine of fewer than 5 cores, on
 *                    otherwise): V8's parallel young-generation GC, a process-wide flag (src/pool/gc.ts)
 *   CHAIND_TEST_DOUBLE_SIGN  `1`: the validator equivocates (tests of evidence only; refused unless
 *                    the chain id begins "test-", src/p2p/reactors/double-sign.ts)
 *
 * (CHAIND_HOME and CHAIND_COMMIT are the CLI's own and reach it through `io.env`; CHAIND_NATIVE_PATH
 * stays with the addon loader, src/crypto/native.ts, because worker threads load the addon too.)
 */
import { parseCryptoSetting, type CryptoBackendSetting } from '../crypto/backend.js';
import { ConfigError } from './errors.js';

export type PoolSetting = 'piscina' | 'single';
export type ExecSetting = 'thread' | 'inline';
export type GrpcSetting = 'auto' | 'thread' | 'inline';
export type ScavengeSetting = 'auto' | 'on' | 'off';

export interface EnvSwitches {
  /** CHAIND_POOL */
  pool: PoolSetting;
  /** CHAIND_CRYPTO */
  crypto: CryptoBackendSetting;
  /** CHAIND_SIGN_LOG; null: no signature log. */
  signLog: string | null;
  /** CHAIND_EXEC */
  exec: ExecSetting;
  /** CHAIND_GRPC */
  grpc: GrpcSetting;
  /** CHAIND_EXEC_NICE */
  execNice: number;
  /** CHAIND_MAIN_SLICE_US; 0: the kernel's default. */
  mainSliceUs: number;
  /** CHAIND_PARALLEL_SCAVENGE */
  parallelScavenge: ScavengeSetting;
  /** CHAIND_TEST_DOUBLE_SIGN=1 */
  testDoubleSign: boolean;
}

/** The executor thread's default nice value (CHAIND_EXEC_NICE). */
export const DEFAULT_EXEC_NICE = 0;

/** The main thread's default scheduler slice, µs (CHAIND_MAIN_SLICE_US; src/pool/sched.ts). */
export const DEFAULT_MAIN_SLICE_US = 100;

/** What a node started without an environment (in-process tests) runs with. */
export const DEFAULT_ENV_SWITCHES: Readonly<EnvSwitches> = Object.freeze({ pool: 'piscina', crypto: 'auto', signLog: null, exec: 'thread', grpc: 'auto', execNice: DEFAULT_EXEC_NICE, mainSliceUs: DEFAULT_MAIN_SLICE_US, parallelScavenge: 'auto', testDoubleSign: false });

/** Reads and checks the switches; a bad value is a ConfigError naming the variable. */
export function readEnvSwitches(env: Record<string, string | undefined>): EnvSwitches {
  const pool = (env.CHAIND_POOL ?? '').trim().toLowerCase();
  if (pool !== '' && pool !== 'piscina' && pool !== 'single') {
    throw new ConfigError(`CHAIND_POOL must be piscina or single, got "${env.CHAIND_POOL}"`, 'CONFIG_INVALID', 'environment', 'CHAIND_POOL');
  }
  const exec = (env.CHAIND_EXEC ?? '').trim().toLowerCase();
  if (exec !== '' && exec !== 'thread' && exec !== 'inline') {
    throw new ConfigError(`CHAIND_EXEC must be thread or inline, got "${env.CHAIND_EXEC}"`, 'CONFIG_INVALID', 'environment', 'CHAIND_EXEC');
  }
  const grpc = (env.CHAIND_GRPC ?? '').trim().toLowerCase();
  if (grpc !== '' && grpc !== 'auto' && grpc !== 'thread' && grpc !== 'inline') {
    throw new ConfigError(`CHAIND_GRPC must be auto, thread or inline, got "${env.CHAIND_GRPC}"`, 'CONFIG_INVALID', 'environment', 'CHAIND_GRPC');
  }
  const niceText = (env.CHAIND_EXEC_NICE ?? '').trim();
  const execNice = niceText === '' ? DEFAULT_EXEC_NICE : Number(niceText);
  if (!/^[0-9]+$/.test(niceText === '' ? '0' : niceText) || !Number.isInteger(execNice) || execNice < 0 || execNice > 19) {
    throw new ConfigError(`CHAIND_EXEC_NICE must be an integer 0..19, got "${env.CHAIND_EXEC_NICE}"`, 'CONFIG_INVALID', 'environment', 'CHAIND_EXEC_NICE');
  }
  const sliceText = (env.CHAIND_MAIN_SLICE_US ?? '').trim();
  const mainSliceUs = sliceText === '' ? DEFAULT_MAIN_SLICE_US : Number(sliceText);
  // Linux clamps a requested slice to 0.1..100 ms (kernel/sched/syscalls.c); outside that, say so here.
  if (!/^[0-9]+$/.test(sliceText === '' ? '0' : sliceText) || (mainSliceUs !== 0 && (mainSliceUs < 100 || mainSliceUs > 100_000))) {
    throw new ConfigError(`CHAIND_MAIN_SLICE_US must be 0 or an integer 100..100000, got "${env.CHAIND_MAIN_SLICE_US}"`, 'CONFIG_INVALID', 'environment', 'CHAIND_MAIN_SLICE_US');
  }
  const scavenge = (env.CHAIND_PARALLEL_SCAVENGE ?? '').trim().toLowerCase();
  if (scavenge !== '' && scavenge !== 'auto' && scavenge !== 'on' && scavenge !== 'off') {
    throw new ConfigError(`CHAIND_PARALLEL_SCAVENGE must be on, off or auto, got "${env.CHAIND_PARALLEL_SCAVENGE}"`, 'CONFIG_INVALID', 'environment', 'CHAIND_PARALLEL_SCAVENGE');
  }
  let crypto: CryptoBackendSetting;
  try {
    crypto = parseCryptoSetting(env.CHAIND_CRYPTO);
  } catch (e) {
    throw new ConfigError((e as Error).message, 'CONFIG_INVALID', 'environment', 'CHAIND_CRYPTO');
  }
  const signLog = env.CHAIND_SIGN_LOG;
  return { pool: pool === 'single' ? 'single' : 'piscina', crypto, signLog: signLog !== undefined && signLog !== '' ? signLog : null,
    exec: exec === 'inline' ? 'inline' : 'thread',
    grpc: grpc === 'inline' || grpc === 'thread' ? grpc : 'auto',
    execNice,
    mainSliceUs,
    parallelScavenge: scavenge === 'on' || scavenge === 'off' ? scavenge : 'auto',
    testDoubleSign: env.CHAIND_TEST_DOUBLE_SIGN === '1' };
}
