/**
 * The `debug` namespace's node methods (issue 12 parts 2–4): the raw chain data
 * (ethereum/go-ethereum:internal/ethapi/api.go DebugAPI GetRawHeader / GetRawBlock /
 * GetRawReceipts / GetRawTransaction; eth/api_debug.go GetHeaderRlp / GetBlockRlp / PrintBlock)
 * and profiling the running node (ethereum/go-ethereum:internal/debug/api.go HandlerT), mapped to
 * V8 and Node by src/profiling (docs/PROFILING.md). The debug_trace* methods live elsewhere.
 *
 * Gating: the namespace is served only when `[json-rpc] api` lists `debug` (index.ts), and every
 * debug_ method is private (status.ts PRIVATE_NAMESPACES): it needs the JWT. Files are written only
 * under `[json-rpc] profiles-dir` (deps.profilesDir); a name resolving outside it is refused.
 */
import { RLP } from '@ethereumjs/rlp';
import { TransactionType } from '@ethereumjs/tx';
import { bigIntToUnpaddedBytes } from '@ethereumjs/util';
import type { StoredReceipt } from '../../app/modules/evm/receipts.js';
import type { Logger } from '../../log.js';
import { nodeProfiler, ProfilePathError, ProfilesDir, ProfilingError } from '../../profiling/index.js';
import { gcRecorder, gcStats, memStats } from '../../profiling/memstats.js';
import { blockProfile, mutexProfile, setBlockProfileRate, setMutexProfileFraction } from '../../profiling/waits.js';
import { GethRpcError, gethMethod } from '../jsonrpc/geth.js';
import type { Route } from '../jsonrpc/methods.js';
import { notImplemented } from './eth.js';
import type { EvmRpcDeps } from './deps.js';
import { argError, gethError, hex, parseBlockRef, type BlockRef } from './format.js';
import { notImplementedIn } from './status.js';
import { blockJson, blockTxs, heightByBlockHash, loadBlock, type LoadedBlock } from './view.js';

// ------------------------------------------------------------------------------------------------
// Arguments decoded as encoding/json decodes into Go's plain (non-hex) types.

function jsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v === 'boolean' ? 'bool' : typeof v;
}

/** A JSON number into Go's uint64 / uint / int (`json: cannot unmarshal string into Go value of type uint64`). */
export function goInt(i: number, v: unknown, goType: 'uint64' | 'uint' | 'int'): number {
  if (v === null || v === undefined) return 0; // json.Unmarshal of null leaves the zero value
  if (typeof v !== 'number') throw argError(i, `json: cannot unmarshal ${jsonKind(v)} into Go value of type ${goType}`);
  if (!Number.isInteger(v) || (goType !== 'int' && v < 0)) throw argError(i, `json: cannot unmarshal number ${v} into Go value of type ${goType}`);
  return v;
}

function goString(i: number, v: unknown): string {
  if (typeof v !== 'string') throw argError(i, `json: cannot unmarshal ${jsonKind(v)} into Go value of type string`);
  return v;
}

// ------------------------------------------------------------------------------------------------
// Raw data

/** The block a number / tag / hash names; null for a number or tag with no block (geth's nil, nil). */
function blockOf(deps: EvmRpcDeps, ref: BlockRef, what: 'header' | 'block'): LoadedBlock | null {
  if ('hash' in ref) {
    const h = heightByBlockHash(deps, ref.hash);
    const b = h === null ? undefined : loadBlock(deps, h);
    // fmt's %d of a common.Hash prints its bytes in decimal.
    if (b === undefined || b.header === undefined) throw gethError(`${what} #[${Array.from(ref.hash).join(' ')}] not found`);
    return b;
  }
  const h = 'tag' in ref ? (ref.tag === 'earliest' ? deps.blocks.base() : deps.lastHeight()) : ref.number;
  const b = loadBlock(deps, h === 0n ? deps.blocks.base() : h);
  return b === undefined || b.header === undefined ? null : b;
}

/** rlp.EncodeToBytes(block): [header, txs, uncles, withdrawals] (types.Block's extblock). */
export function blockRlp(deps: EvmRpcDeps, b: LoadedBlock): Uint8Array {
  const header = RLP.decode(b.header!.rlp);
  const txs = blockTxs(deps, b)
    .map((t) => t.tx)
    .filter((tx) => tx !== undefined)
    // A legacy tx is an RLP list inside the block; a typed one a string holding its envelope.
    .map((tx) => (tx.type === TransactionType.Legacy ? RLP.decode(tx.serialize()) : tx.serialize()));
  return RLP.encode([header, txs as never, [], []]);
}

/** Receipt.MarshalBinary: RLP([status, cumulativeGasUsed, bloom, logs]), typed ones behind their type byte. */
export function receiptBinary(r: StoredReceipt): Uint8Array {
  const body = RLP.encode([
    r.status === 1 ? Uint8Array.of(1) : new Uint8Array(0),
    bigIntToUnpaddedBytes(r.cumulativeGasUsed),
    r.logsBloom,
    r.logs.map(([a, t, d]) => [a, t, d]),
  ]);
  if (r.type === 0) return body;
  const out = new Uint8Array(body.length + 1);
  out[0] = r.type;
  out.set(body, 1);
  return out;
}

/** spew.Sdump's role in geth's PrintBlock: a readable dump of the block. */
async function printBlock(deps: EvmRpcDeps, b: LoadedBlock): Promise<string> {
  const json = await blockJson(deps, b, true);
  const lines = [`Block(#${b.height}): Size: ${BigInt(json.size as string)} bytes {`, `MinerHash: ${hex(b.header!.hash)}`];
  const dump = (o: unknown, indent: string): void => {
    for (const [k, v] of Object.entries(o as Record<string, unknown>)) {
      if (Array.isArray(v)) {
        lines.push(`${indent}${k}: [${v.length === 0 ? ']' : ''}`);
        if (v.length === 0) continue;
        v.forEach((x, i) => {
          if (x !== null && typeof x === 'object') {
            lines.push(`${indent}  [${i}] {`);
            dump(x, `${indent}    `);
            lines.push(`${indent}  }`);
          } else lines.push(`${indent}  ${String(x)}`);
        });
        lines.push(`${indent}]`);
      } else if (v !== null && typeof v === 'object') {
        lines.push(`${indent}${k}: {`);
        dump(v, `${indent}  `);
        lines.push(`${indent}}`);
      } else lines.push(`${indent}${k}: ${String(v)}`);
    }
  };
  dump(json, '  ');
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

function rawMethods(deps: EvmRpcDeps): Route[] {
  const k = () => deps.keeper;
  const byNumber = (n: number, what: 'header' | 'block'): LoadedBlock => {
    const b = loadBlock(deps, BigInt(n));
    if (b === undefined || b.header === undefined) throw gethError(`${what} #${n} not found`);
    return b;
  };
  return [
    gethMethod({
      name: 'debug_getRawHeader',
      params: [{ name: 'block', type: 'any' }],
      handler: ({ block }) => {
        const b = blockOf(deps, parseBlockRef(0, block), 'header');
        return b === null ? null : hex(b.header!.rlp);
      },
    }),
    gethMethod({
      name: 'debug_getRawBlock',
      params: [{ name: 'block', type: 'any' }],
      handler: ({ block }) => {
        const b = blockOf(deps, parseBlockRef(0, block), 'block');
        return b === null ? null : hex(blockRlp(deps, b));
      },
    }),
    gethMethod({
      name: 'debug_getRawReceipts',
      params: [{ name: 'block', type: 'any' }],
      handler: ({ block }) => {
        const b = blockOf(deps, parseBlockRef(0, block), 'block');
        return b === null ? null : k().blockReceipts(b.height).map((r) => hex(receiptBinary(r)));
      },
    }),
    gethMethod({
      name: 'debug_getRawTransaction',
      params: [{ name: 'hash', type: 'hash' }],
      handler: ({ hash }) => {
        const r = k().receiptByHash(hash);
        if (r !== undefined) {
          const b = loadBlock(deps, r.height);
          const t = b === undefined ? undefined : blockTxs(deps, b).find((x) => x.receipt.index === r.index);
          return t?.tx ? hex(t.tx.serialize()) : null;
        }
        // A pooled tx otherwise (geth's GetPoolTransaction).
        const want = hex(hash);
        for (const raw of deps.mempool.reapMaxTxs(-1)) {
          try {
            const tx = k().decode(raw).tx;
            if (hex(tx.hash()) === want) return hex(tx.serialize());
          } catch {
            // not an EVM tx
          }
        }
        return null;
      },
    }),
    gethMethod({
      name: 'debug_getHeaderRlp',
      params: [{ name: 'number', type: 'any' }],
      handler: ({ number }) => hex(byNumber(goInt(0, number, 'uint64'), 'header').header!.rlp),
    }),
    gethMethod({
      name: 'debug_getBlockRlp',
      params: [{ name: 'number', type: 'any' }],
      handler: ({ number }) => hex(blockRlp(deps, byNumber(goInt(0, number, 'uint64'), 'block'))),
    }),
    gethMethod({
      name: 'debug_printBlock',
      params: [{ name: 'number', type: 'any' }],
      handler: ({ number }) => printBlock(deps, byNumber(goInt(0, number, 'uint64'), 'block')),
    }),
  ];
}

// ------------------------------------------------------------------------------------------------
// Profiling

/** A profiling failure as the client sees it: geth's -32000 with the reason. */
function asRpc(e: unknown): never {
  if (e instanceof GethRpcError) throw e;
  if (e instanceof ProfilePathError || e instanceof ProfilingError) throw gethError(e.message);
  throw gethError((e as Error).message ?? String(e));
}

const guarded =
  <A extends unknown[], R>(fn: (...a: A) => Promise<R> | R) =>
  async (...a: A): Promise<R> => {
    try {
      return await fn(...a);
    } catch (e) {
      return asRpc(e);
    }
  };

/** Longest debug_cpuProfile / goTrace / blockProfile / mutexProfile wait. */
export const MAX_PROFILE_SECONDS = 3600;

function profileMethods(deps: EvmRpcDeps, log?: Logger): Route[] {
  const p = nodeProfiler();
  gcRecorder(); // GC history starts with the namespace
  const dir = (): ProfilesDir => {
    if (deps.profilesDir === undefined || deps.profilesDir === '') throw gethError('no profiles directory configured ([json-rpc] profiles-dir)');
    return new ProfilesDir(deps.profilesDir);
  };
  const seconds = (v: unknown): number => {
    const s = goInt(1, v, 'uint');
    if (s > MAX_PROFILE_SECONDS) throw argError(1, `at most ${MAX_PROFILE_SECONDS} seconds`);
    return s;
  };
  const wrote = (what: string, files: string[] | string) => {
    log?.info(`${what} written`, { files: ([] as string[]).concat(files).join(', ') });
    return null;
  };
  const file = [{ name: 'file', type: 'any' }] as const;
  const fileSecs = [{ name: 'file', type: 'any' }, { name: 'nsec', type: 'any' }] as const;
  const rate = [{ name: 'rate', type: 'any' }] as const;
  /**
   * debug_write<Kind>Profile(file) and debug_<kind>Profile(file, nsec) over one sampled profile:
   * `collect` reads it; `start` turns sampling on and returns how to turn it back.
   */
  const sampledProfileMethods = (kind: 'Block' | 'Mutex', what: string, collect: () => unknown, start: (on: true) => () => void): Route[] => [
    gethMethod({
      name: `debug_write${kind}Profile`,
      params: file,
      handler: guarded(({ file }: { file: unknown }) => {
        const name = goString(0, file);
        const d = dir();
        d.resolve(name);
        return wrote(what, d.write(name, JSON.stringify(collect(), null, 1)));
      }),
    }),
    gethMethod({
      name: `debug_${kind.toLowerCase()}Profile`,
      params: fileSecs,
      handler: guarded(async ({ file, nsec }: { file: unknown; nsec: unknown }) => {
        const name = goString(0, file);
        const secs = seconds(nsec);
        const d = dir();
        d.resolve(name);
        const stop = start(true);
        await new Promise((r) => setTimeout(r, secs * 1000));
        const doc = collect();
        stop();
        return wrote(what, d.write(name, JSON.stringify(doc, null, 1)));
      }),
    }),
  ];
  return [
    gethMethod({ name: 'debug_memStats', handler: () => memStats() }),
    gethMethod({ name: 'debug_gcStats', handler: () => gcStats() }),
    gethMethod({
      name: 'debug_freeOSMemory',
      handler: guarded(async () => {
        await p.collectGarbage();
        // Inspector-driven GCs carry no `forced` flag in their perf entries: count them here.
        gcRecorder().numForcedGC++;
        return null;
      }),
    }),
    gethMethod({
      name: 'debug_setGCPercent',
      params: [{ name: 'v', type: 'any' }],
      handler: ({ v }) => {
        goInt(0, v, 'int');
        throw gethError(
          'debug_setGCPercent: V8 has no GOGC-like knob to change at run time (its heap limits are fixed by --max-old-space-size and --max-semi-space-size when the process starts); nothing was changed',
        );
      },
    }),
    gethMethod({
      name: 'debug_stacks',
      params: [{ name: 'filter', type: 'any', optional: true }],
      handler: guarded(({ filter }: { filter?: unknown }) => p.stacks(filter === undefined ? undefined : goString(0, filter))),
    }),
    gethMethod({
      name: 'debug_startCPUProfile',
      params: file,
      handler: guarded(async ({ file }: { file: unknown }) => {
        await p.startCpuProfile(dir(), goString(0, file));
        return null;
      }),
    }),
    gethMethod({ name: 'debug_stopCPUProfile', handler: guarded(async () => wrote('CPU profiles', await p.stopCpuProfile())) }),
    gethMethod({
      name: 'debug_cpuProfile',
      params: fileSecs,
      handler: guarded(async ({ file, nsec }: { file: unknown; nsec: unknown }) => wrote('CPU profiles', await p.cpuProfile(dir(), goString(0, file), seconds(nsec)))),
    }),
    gethMethod({
      name: 'debug_writeMemProfile',
      params: file,
      handler: guarded(async ({ file }: { file: unknown }) => wrote('heap snapshots', await p.writeHeapSnapshots(dir(), goString(0, file)))),
    }),
    gethMethod({
      name: 'debug_startGoTrace',
      params: file,
      handler: guarded(({ file }: { file: unknown }) => {
        p.startTrace(dir(), goString(0, file));
        return null;
      }),
    }),
    gethMethod({ name: 'debug_stopGoTrace', handler: guarded(() => wrote('trace', p.stopTrace())) }),
    gethMethod({
      name: 'debug_goTrace',
      params: fileSecs,
      handler: guarded(async ({ file, nsec }: { file: unknown; nsec: unknown }) => wrote('trace', await p.goTrace(dir(), goString(0, file), seconds(nsec)))),
    }),
    gethMethod({
      name: 'debug_setBlockProfileRate',
      params: rate,
      handler: ({ rate }) => {
        setBlockProfileRate(goInt(0, rate, 'int'));
        return null;
      },
    }),
    gethMethod({
      name: 'debug_setMutexProfileFraction',
      params: rate,
      handler: ({ rate }) => setMutexProfileFraction(goInt(0, rate, 'int')),
    }),
    // debug_write<X>Profile writes what was sampled so far; debug_<x>Profile samples for `nsec`
    // seconds (geth: rate on, sleep, write, rate back).
    ...sampledProfileMethods('Block', 'block profile', blockProfile, () => {
      setBlockProfileRate(1);
      return () => setBlockProfileRate(0);
    }),
    ...sampledProfileMethods('Mutex', 'mutex profile', mutexProfile, () => {
      const prev = setMutexProfileFraction(1);
      return () => setMutexProfileFraction(prev);
    }),
  ];
}

/** The debug namespace's node methods, and the spec's debug N methods (-32601). */
export function debugNodeMethods(deps: EvmRpcDeps, log?: Logger): Route[] {
  return [...rawMethods(deps), ...profileMethods(deps, log), ...notImplementedIn('debug').map(notImplemented)];
}

