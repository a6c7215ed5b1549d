/**
 * geth's tracers on chaind against anvil's (Foundry's revm-inspectors, which follow geth's
 * formats), side by side: ONE devnet node (`chaind start` as a separate process, `[json-rpc] api`
 * with debug, its JWT) and anvil (`--hardfork prague`, same chain id, base fee 0) get the same
 * signed txs from the same sender at the same nonces, so every address (contracts, CREATE,
 * CREATE2) is the same on both. Then debug_traceTransaction with the struct logger, callTracer
 * (plain and withLog), prestateTracer (plain and diffMode), 4byteTracer and flatCallTracer, and
 * debug_traceCall on the same calls, must give the same JSON key for key.
 *
 * Normalised, and why (nothing else is):
 *  - the block coinbase's prestate entry is removed on both sides: chaind's coinbase is the fee
 *    collector, anvil's another address, and its balance holds other txs' fees;
 *  - flatCallTracer's blockHash, blockNumber and transactionPosition, and callTracer's log
 *    `index`, are block facts: chaind packs several txs in a block, anvil mines one per block;
 *    log indexes are compared relative to the tx's first log (its receipt's logIndex).
 * debug_traceBlockByNumber is checked against debug_traceTransaction of each of the block's txs
 * (the replay of earlier txs gives the same trace as the tx alone).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { encodeFunctionData, getContractAddress, pad, toHex, type Abi, type Hex } from 'viem';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';
import { RLP } from '@ethereumjs/rlp';
import { signJwt, parseJwtSecret } from '../../src/config/jwt.js';
import { createEvmCommon } from '../../src/evm/common.js';
import { moduleAddress } from '../../src/app/address.js';
import { FEE_COLLECTOR_NAME } from '../../src/app/modules/auth/types.js';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { concat, keccak, loadProbe, rpcOk, signTx, startAnvil, startEvmDevnet, word, type Anvil, type TxSpec } from '../helpers/evm.js';
import { waitFor } from '../helpers/node.js';

const CHAIN_ID = 9000;
const eth = devAccounts().filter((a) => a.keyType === 'eth_secp256k1');
const { Probe, Child } = loadProbe().contracts;
const probeAbi = Probe.abi as Abi;
const hx = (b: Uint8Array): Hex => bytesToHex(b) as Hex;

type Answer = { result?: any; error?: { code: number; message: string; data?: string } };

// The 100,000-step trace answered whole (a batch of one) may outrun the default 30 s HTTP write
// timeout on a loaded machine: the limit here is the trace's own timeout below.
const devnet = await startEvmDevnet({ api: ['eth', 'net', 'web3', 'debug'], httpTimeout: '300s' });
t.teardown(() => devnet.stop());
const secret = parseJwtSecret(readFileSync(join(devnet.home, 'config/jwt.hex'), 'utf8'));

async function call(url: string, method: string, params: unknown[], auth = true): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (auth) headers.Authorization = `Bearer ${signJwt(secret)}`;
  const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), signal: AbortSignal.timeout(120_000) });
  return (await r.json()) as Answer;
}
async function ok(url: string, method: string, params: unknown[]): Promise<any> {
  const a = await call(url, method, params);
  if (a.error) throw new Error(`${method}: ${JSON.stringify(a.error)}`);
  return a.result;
}

const anvil: Anvil = await startAnvil(['--steps-tracing', '--hardfork', 'prague', '--chain-id', String(CHAIN_ID), '--base-fee', '0', '--disable-min-priority-fee']);
t.teardown(() => anvil.stop());

const sender = eth[5]!;
const S = hx(sender.address);
await rpcOk(anvil.url, 'anvil_setBalance', [S, await rpcOk(devnet.url, 'eth_getBalance', [S, 'latest'])]);

const common = createEvmCommon({ chainId: BigInt(CHAIN_ID) });
const probe = getContractAddress({ from: S, nonce: 1n });
const child = getContractAddress({ from: S, nonce: 2n });
const P = hexToBytes(probe);
const pc = (functionName: string, args: unknown[] = []) => hexToBytes(encodeFunctionData({ abi: probeAbi, functionName, args }));
const fresh = (tag: string) => hexToBytes(hx(keccak(new TextEncoder().encode(`tracer-${tag}`)).subarray(12)));
const salt = pad(toHex(0x77n));

interface Step {
  name: string;
  tx: TxSpec;
}
const steps: Step[] = [
  { name: 'plain transfer', tx: { type: 0, nonce: 0n, to: fresh('x1'), value: 10n ** 15n, gasLimit: 21_000n } },
  { name: 'CREATE Probe (deploy tx)', tx: { nonce: 1n, data: hexToBytes(Probe.bytecode), gasLimit: 3_000_000n } },
  { name: 'CREATE Child(42) with value', tx: { type: 0, nonce: 2n, data: concat(hexToBytes(Child.bytecode), word(42n)), value: 1234n, gasLimit: 1_000_000n } },
  { name: 'CREATE from a contract', tx: { nonce: 3n, to: P, data: pc('deploy', [5n]), value: 1000n } },
  { name: 'CREATE2 from a contract', tx: { nonce: 4n, to: P, data: pc('deploy2', [salt, 6n]) } },
  { name: 'nested CALL', tx: { nonce: 5n, to: P, data: pc('callSet', [child, 77n]) } },
  { name: 'DELEGATECALL', tx: { type: 0, nonce: 6n, to: P, data: pc('delegateSet', [child, 88n]) } },
  { name: 'STATICCALL that writes (caught inner failure)', tx: { nonce: 7n, to: P, data: pc('staticWrite', [child]) } },
  { name: 'top-level revert (custom error)', tx: { nonce: 8n, to: P, data: pc('fail', [1000n]) } },
  { name: 'top-level revert (require reason)', tx: { type: 0, nonce: 9n, to: P, data: pc('failRequire', [1000n]) } },
  { name: 'logs with 0 to 4 topics', tx: { nonce: 10n, to: P, data: pc('emitAll', [3n]) } },
  { name: 'SSTORE set, rewrite, clear', tx: { nonce: 11n, to: P, data: pc('poke', [5n, 9n]) } },
  { name: 'CALL with value to a fresh account', tx: { nonce: 12n, to: P, data: pc('pay', [hx(fresh('x2'))]), value: 500n } },
  { name: 'CREATE and SELFDESTRUCT in one tx', tx: { nonce: 13n, to: P, data: pc('createAndDestroy', [hx(fresh('x3'))]), value: 300n } },
  { name: 'precompiles by STATICCALL', tx: { nonce: 14n, to: P, data: pc('hashes', ['0x1234']) } },
  { name: 'out of gas', tx: { nonce: 15n, to: P, data: pc('spin'), gasLimit: 80_000n } },
];
const signed = steps.map((s) => signTx(common, { priv: sender.privateKey }, { gasLimit: 1_000_000n, price: 7n, ...s.tx }));
const hashes = signed.map((x) => hx(x.hash()));
const sides = [
  { name: 'chaind', url: devnet.url },
  { name: 'anvil', url: anvil.url },
] as const;
for (const s of sides) {
  for (const [i, x] of signed.entries()) {
    const a = await call(s.url, 'eth_sendRawTransaction', [hx(x.serialize())]);
    if (a.result !== hashes[i]) throw new Error(`${s.name} refused #${i} ${steps[i]!.name}: ${JSON.stringify(a.error)}`);
  }
}
const receipts = await Promise.all(
  sides.map(async (s) => {
    await waitFor(`${s.name}: the last receipt`, () => rpcOk(s.url, 'eth_getTransactionReceipt', [hashes.at(-1)]), 240_000, 200);
    return Promise.all(hashes.map((h) => rpcOk(s.url, 'eth_getTransactionReceipt', [h])));
  }),
);
// The coinbase of execution: chaind's fee collector (fees go there), anvil's block miner.
const coinbases = [hx(moduleAddress(FEE_COLLECTOR_NAME)), (await rpcOk(anvil.url, 'eth_getBlockByNumber', [receipts[1]![0].blockNumber, false])).miner as string];

/** The first path where two JSON values differ, for a readable failure. */
function firstDiff(a: unknown, b: unknown, path = '$'): string | undefined {
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || (a === null) !== (b === null)) return `${path}: ${JSON.stringify(a)?.slice(0, 200)} vs ${JSON.stringify(b)?.slice(0, 200)}`;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return `${path}: length ${a.length} vs ${bb.length}`;
    for (let i = 0; i < a.length; i++) {
      const d = firstDiff(a[i], bb[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (a !== null && typeof a === 'object') {
    const ka = Object.keys(a as object).sort();
    const kb = Object.keys(b as object).sort();
    if (ka.join() !== kb.join()) {
      const only = (x: any, ks: string[], other: string[]) => JSON.stringify(Object.fromEntries(ks.filter((k) => !other.includes(k)).map((k) => [k, x[k]]))).slice(0, 400);
      return `${path}: keys ${ka.join(',')} vs ${kb.join(',')}; only chaind ${only(a, ka, kb)}, only anvil ${only(b, kb, ka)}`;
    }
    for (const k of ka) {
      const d = firstDiff((a as any)[k], (b as any)[k], `${path}.${k}`);
      if (d) return d;
    }
    return undefined;
  }
  return a === b ? undefined : `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
}

/**
 * prestateTracer: the coinbase's entry dropped (see the header); codeHash dropped on both sides
 * (geth writes it, revm-inspectors does not; chaind's is checked against keccak(code) in its own
 * test below); on anvil's side, empty accounts dropped (geth drops them unless includeEmpty,
 * eth/tracers/native/prestate.go OnTxEnd; revm-inspectors keeps them).
 */
function dropCoinbase(v: any, side: number): any {
  const cb = coinbases[side]!.toLowerCase();
  // Empty when first touched: no balance, nonce or code (a created contract's constructor slots, all 0 before, do not count).
  const isEmpty = (a: any) =>
    side === 1 &&
    Object.keys(a).every((k) => k === 'balance' || k === 'storage') &&
    BigInt(a.balance ?? '0x0') === 0n &&
    Object.values(a.storage ?? {}).every((x) => BigInt(x as string) === 0n);
  const strip = (m: any, pre: boolean) =>
    m && typeof m === 'object'
      ? Object.fromEntries(
          Object.entries(m)
            .filter(([k, a]) => k.toLowerCase() !== cb && !(pre && isEmpty(a)))
            .map(([k, a]: [string, any]) => {
              const { codeHash: _c, ...rest } = a;
              return [k, rest];
            }),
        )
      : m;
  if (v && typeof v === 'object' && 'pre' in v && 'post' in v) {
    const post = strip(v.post, false);
    // An account whose only change was its codeHash (now dropped) has nothing left to compare.
    return { post: Object.fromEntries(Object.entries(post).filter(([, a]) => Object.keys(a as object).length > 0)), pre: strip(v.pre, true) };
  }
  return strip(v, true);
}

function relLogs(frame: any, first: number): any {
  if (!frame || typeof frame !== 'object') return frame;
  const out = { ...frame };
  if (out.logs) out.logs = out.logs.map((l: any) => ({ ...l, index: toHex(Number(BigInt(l.index)) - first) }));
  if (out.calls) out.calls = out.calls.map((c: any) => relLogs(c, first));
  return out;
}

/**
 * Where anvil (revm-inspectors) departs from geth, anvil's side is brought to geth's (chaind
 * follows geth): the top frame's gas (geth: the tx's gas limit, eth/tracers/native/call.go
 * OnEnter at depth 0; revm-inspectors: what is left after the intrinsic gas), and revm's error
 * names for geth's texts (core/vm/errors.go).
 */
const REVM_ERRORS: Record<string, string> = { StateChangeDuringStaticCall: 'write protection', OutOfGas: 'out of gas', Revert: 'execution reverted', OpcodeNotFound: 'invalid opcode: INVALID', InvalidFEOpcode: 'invalid opcode: INVALID' };
function anvilFrames(frame: any, topGas: bigint | undefined): any {
  if (!frame || typeof frame !== 'object') return frame;
  const out = { ...frame };
  if (topGas !== undefined) out.gas = toHex(topGas);
  if (typeof out.error === 'string' && REVM_ERRORS[out.error]) out.error = REVM_ERRORS[out.error];
  if (out.calls) out.calls = out.calls.map((c: any) => anvilFrames(c, undefined));
  return out;
}

/**
 * flatCallTracer against anvil's parity-style trace_transaction (anvil has no flatCallTracer):
 * chaind is asked with includePrecompiles and convertParityErrors (parity lists precompile calls
 * and words errors its way); block facts are dropped (see the header). On anvil's side the top
 * action's gas is the tx's gas limit (as for callTracer) and a failed frame that did not revert
 * has no `result` (geth: eth/tracers/native/call_flat.go flatFromNested).
 */
function flatNorm(list: any, side: number, i: number): any {
  if (!Array.isArray(list)) return list;
  return list.map(({ blockHash: _h, blockNumber: _n, transactionPosition: _p, ...rest }: any, k: number) => {
    if (side !== 1) return rest;
    const o = { ...rest, action: { ...rest.action } };
    if (k === 0 && o.action.gas !== undefined) o.action.gas = toHex(signed[i]!.gasLimit);
    // parity's top gasUsed leaves out the intrinsic gas; geth's is the receipt's.
    if (k === 0 && o.result?.gasUsed !== undefined) o.result = { ...o.result, gasUsed: receipts[1]![i].gasUsed };
    if (typeof o.error === 'string' && REVM_ERRORS[o.error]) o.error = REVM_ERRORS[o.error];
    if ((o.error !== undefined && o.error !== 'Reverted') || o.result === null) delete o.result;
    return o;
  });
}

/**
 * geth's prestateTracer skips an op that fails before it runs (OnOpcode with an error), so the
 * slot of an SSTORE that runs out of gas is not in its prestate; revm-inspectors lists it. On
 * anvil's side the slots of the failing steps (from chaind's struct log) are dropped.
 */
async function dropFailedSlots(v: any, side: number, i: number): Promise<any> {
  if (side !== 1) return v;
  const logs = (await ok(devnet.url, 'debug_traceTransaction', [hashes[i], {}])).structLogs as any[];
  const failed = new Set(logs.filter((l) => l.error !== undefined && (l.op === 'SSTORE' || l.op === 'SLOAD') && l.stack.length > 0).map((l) => `0x${BigInt(l.stack.at(-1)).toString(16).padStart(64, '0')}`));
  if (failed.size === 0) return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, a]: [string, any]) => [k, a.storage ? { ...a, storage: Object.fromEntries(Object.entries(a.storage).filter(([slot]) => !failed.has(slot))) } : a]),
  );
}

/**
 * The struct logger: on anvil's side, `refund` 0, `memory` [] and `returnData` "0x" removed (geth
 * omits them when empty: eth/tracers/logger/logger.go structLogLegacy, omitempty).
 */
function structNorm(v: any, side: number): any {
  if (side !== 1 || !v || !Array.isArray(v.structLogs)) return v;
  return {
    ...v,
    structLogs: v.structLogs.map((l: any, k: number, all: any[]) => {
      const o = { ...l };
      // revm-inspectors counts the gas handed to a CREATE's frame in the op's cost; geth does not
      // (core/vm/instructions.go opCreate charges it while the op runs): the next step, the new
      // frame's first, starts with exactly that gas.
      const next = all[k + 1];
      if ((o.op === 'CREATE' || o.op === 'CREATE2') && next !== undefined && next.depth === o.depth + 1) o.gasCost -= next.gas;
      // revm's error names (`Some(OutOfGas)`) for geth's texts.
      const m = typeof o.error === 'string' ? /^Some\((\w+)\)$/.exec(o.error) : null;
      if (m) o.error = REVM_ERRORS[m[1]!] ?? o.error;
      if (o.refund === 0) delete o.refund;
      if (Array.isArray(o.memory) && o.memory.length === 0) delete o.memory;
      if (o.returnData === '0x' || o.returnData === '') delete o.returnData;
      return o;
    }),
  };
}

/**
 * A step that fails: geth's struct logger records storage for an SSTORE even when it fails
 * (write protection) and counts an out-of-gas op at its full cost; revm-inspectors records no
 * storage and the gas that was left. Both are left out of the comparison for failing steps (both
 * sides); chaind's full cost is checked on its own below.
 */
function failedSteps(v: any): any {
  if (!v || !Array.isArray(v.structLogs)) return v;
  return {
    ...v,
    structLogs: v.structLogs.map((l: any) => {
      if (l.error === undefined) return l;
      const { storage: _s, ...o } = l;
      if (o.error === 'out of gas') delete o.gasCost;
      return o;
    }),
  };
}

/** 4byteTracer: geth leaves calls to precompiles out (eth/tracers/native/4byte.go); anvil's side loses them too. */
async function fourByteNorm(v: any, side: number, i: number): Promise<any> {
  if (side !== 1) return v;
  const tree = await ok(anvil.url, 'debug_traceTransaction', [hashes[i], { tracer: 'callTracer' }]);
  const drop = new Set<string>();
  const walk = (f: any) => {
    if (/^0x0{38}(0[1-9a-f]|1[01])$/.test(f.to ?? '') && f.input.length >= 10) drop.add(`${f.input.slice(0, 10)}-${(f.input.length - 10) / 2}`);
    for (const c of f.calls ?? []) walk(c);
  };
  walk(tree);
  return Object.fromEntries(Object.entries(v).filter(([k]) => !drop.has(k)));
}

const configs: [string, unknown, (v: any, side: number, i: number) => any][] = [
  ['struct logger', {}, (v, side) => failedSteps(structNorm(v, side))],
  ['struct logger with memory and return data', { enableMemory: true, enableReturnData: true }, (v, side) => failedSteps(structNorm(v, side))],
  ['callTracer', { tracer: 'callTracer' }, (v, side, i) => (side === 1 ? anvilFrames(v, signed[i]!.gasLimit) : v)],
  ['callTracer withLog', { tracer: 'callTracer', tracerConfig: { withLog: true } }, (v, side, i) => relLogs(side === 1 ? anvilFrames(v, signed[i]!.gasLimit) : v, Number(BigInt(receipts[side]![i].logs[0]?.logIndex ?? '0x0')))],
  ['prestateTracer', { tracer: 'prestateTracer' }, async (v, side, i) => dropFailedSlots(dropCoinbase(v, side), side, i)],
  ['prestateTracer diffMode', { tracer: 'prestateTracer', tracerConfig: { diffMode: true } }, (v, side) => dropCoinbase(v, side)],
  ['4byteTracer', { tracer: '4byteTracer' }, fourByteNorm],
  ['flatCallTracer', { tracer: 'flatCallTracer', tracerConfig: { includePrecompiles: true, convertParityErrors: true } }, flatNorm],
];

t.test('debug_traceTransaction: chaind and anvil give the same traces', async (t) => {
  for (const [i, step] of steps.entries()) {
    for (const [label, cfg, norm] of configs) {
      // anvil has no flatCallTracer (it answers {}); its parity-style trace_transaction is the same list.
      const flat = label === 'flatCallTracer';
      const [a, b] = await Promise.all(sides.map((s, k) => (flat && k === 1 ? call(s.url, 'trace_transaction', [hashes[i]]) : call(s.url, 'debug_traceTransaction', [hashes[i], cfg]))));
      if (a!.error || b!.error) {
        t.same(a!.error ?? null, b!.error ?? null, `#${i} ${step.name}, ${label}: both fail alike`);
        continue;
      }
      const [x, y] = [await norm(a!.result, 0, i), await norm(b!.result, 1, i)];
      const d = firstDiff(x, y);
      t.notOk(d, `#${i} ${step.name}, ${label}${d ? `: ${d}` : ''}`);
    }
  }
});

t.test('struct logger: an op that runs out of gas is logged at its full cost, with the error', async (t) => {
  const logs = (await ok(devnet.url, 'debug_traceTransaction', [hashes[15], {}])).structLogs as any[];
  const last = logs.at(-1);
  t.equal(last.error, 'out of gas');
  t.ok(last.gasCost > last.gas, `cost ${last.gasCost} > gas left ${last.gas}`);
});

t.test('prestateTracer: codeHash is keccak256 of the code', async (t) => {
  const pre = await ok(devnet.url, 'debug_traceTransaction', [hashes[5], { tracer: 'prestateTracer' }]);
  let n = 0;
  for (const a of Object.values(pre) as any[]) {
    if (a.code === undefined) continue;
    t.equal(a.codeHash, hx(keccak(hexToBytes(a.code))));
    n++;
  }
  t.ok(n >= 2, 'the probe and the child have code');
});

t.test('debug_traceCall: the same calls at the same state give the same traces', async (t) => {
  const latest = await Promise.all(sides.map((s) => rpcOk(s.url, 'eth_blockNumber', [])));
  const callsTo: [string, Record<string, unknown>][] = [
    ['nested CALL', { from: S, to: probe, data: hx(pc('callSet', [child, 5n])), gas: '0x100000' }],
    ['revert with reason', { from: S, to: probe, data: hx(pc('failRequire', [10n ** 9n])), gas: '0x100000' }],
    ['logs', { from: S, to: probe, data: hx(pc('emitAll', [9n])), gas: '0x100000' }],
  ];
  for (const [name, args] of callsTo) {
    for (const [label, cfg, norm] of configs) {
      // anvil's debug_traceCall serves the struct logger and callTracer only ("unsupported tracer type").
      if (!(label.startsWith('struct') || label === 'callTracer')) continue;
      const [a, b] = await Promise.all(sides.map((s, k) => call(s.url, 'debug_traceCall', [args, latest[k], cfg])));
      if (a!.error || b!.error) {
        t.same(a!.error ?? null, b!.error ?? null, `${name}, ${label}: both fail alike`);
        continue;
      }
      // The top frame's gas: geth's is the call's gas (revm-inspectors': what is left after the intrinsic gas).
      const fix = (v: any, side: number) => (label === 'callTracer' && side === 1 ? anvilFrames(v, BigInt(args.gas as string)) : label === 'callTracer' ? v : structNorm(v, side));
      const d = firstDiff(fix(a!.result, 0), fix(b!.result, 1));
      t.notOk(d, `traceCall ${name}, ${label}${d ? `: ${d}` : ''}`);
    }
  }
  // State overrides: the child's value slot set, read back through a nested call's trace.
  const over = await ok(devnet.url, 'debug_traceCall', [{ from: S, to: child, data: '0x6d4ce63c' }, 'latest', { tracer: 'callTracer', stateOverrides: { [child]: { stateDiff: { [`0x${'0'.repeat(64)}`]: `0x${'0'.repeat(62)}2a` } } } }]);
  t.equal(over.output, `0x${'0'.repeat(62)}2a`, 'stateOverrides apply to debug_traceCall');
  const bo = await ok(devnet.url, 'debug_traceCall', [{ from: S, to: probe, data: hx(pc('env')) }, 'latest', { tracer: 'callTracer', blockOverrides: { number: '0x1234' } }]);
  t.ok(bo.output.startsWith('0x'), 'blockOverrides are accepted');
});

t.test('debug_traceBlockByNumber / ByHash: each tx as debug_traceTransaction traces it', async (t) => {
  const byBlock = new Map<string, number[]>();
  receipts[0]!.forEach((r: any, i: number) => byBlock.set(r.blockNumber, [...(byBlock.get(r.blockNumber) ?? []), i]));
  const multi = [...byBlock].sort((a, b) => b[1].length - a[1].length)[0]!;
  t.comment(`block ${BigInt(multi[0])} holds ${multi[1].length} of the txs`);
  for (const cfg of [{ tracer: 'callTracer' }, { tracer: 'prestateTracer' }, {}]) {
    const list = await ok(devnet.url, 'debug_traceBlockByNumber', [multi[0], cfg]);
    const block = await rpcOk(devnet.url, 'eth_getBlockByNumber', [multi[0], false]);
    const byHash = await ok(devnet.url, 'debug_traceBlockByHash', [block.hash, cfg]);
    t.same(byHash, list, `${JSON.stringify(cfg)}: by hash = by number`);
    // debug_traceBlock: the same block as RLP (its header from debug-free eth_getBlockByNumber is not
    // RLP; built here from the header fields and the raw txs).
    const raw = await Promise.all(block.transactions.map(async (h: string) => (await rpcOk(devnet.url, 'eth_getTransactionByHash', [h])) as any));
    const rlpBlock = blockRlp(block, raw.map((x) => signed[hashes.indexOf(x.hash)]!));
    t.same(await ok(devnet.url, 'debug_traceBlock', [rlpBlock, cfg]), list, `${JSON.stringify(cfg)}: debug_traceBlock (RLP) = by number`);
    t.equal(list.length, block.transactions.length, 'one result per tx');
    for (const [k, entry] of list.entries()) {
      t.equal(entry.txHash, block.transactions[k], `result ${k} names its tx`);
      const single = await ok(devnet.url, 'debug_traceTransaction', [entry.txHash, cfg]);
      t.notOk(firstDiff(entry.result, single), `${JSON.stringify(cfg)}: tx ${k} traced in its block = alone`);
    }
  }
});

t.test('debug_intermediateRoots: the root after each tx, the last one the block\'s stateRoot', async (t) => {
  const heights = [...new Set(receipts[0]!.map((r: any) => r.blockNumber as string))];
  let multi = 0;
  for (const n of heights) {
    const block = await rpcOk(devnet.url, 'eth_getBlockByNumber', [n, false]);
    const roots = (await ok(devnet.url, 'debug_intermediateRoots', [block.hash])) as string[];
    t.equal(roots.length, block.transactions.length, `block ${BigInt(n)}: one root per tx`);
    t.ok(roots.every((r) => /^0x[0-9a-f]{64}$/.test(r)), 'hashes');
    // The block holds EVM txs only: its stateRoot is the state after its last tx.
    t.equal(roots.at(-1), block.stateRoot, `block ${BigInt(n)}: the last root is the block's stateRoot`);
    if (roots.length > 1) multi++;
    t.equal(new Set(roots).size, roots.length, 'each tx moves the root (every tx pays its fee)');
  }
  t.comment(`${heights.length} blocks, ${multi} with more than one tx`);
  const e = async (params: unknown[]) => (await call(devnet.url, 'debug_intermediateRoots', params)).error;
  const genesis = await rpcOk(devnet.url, 'eth_getBlockByNumber', ['0x0', false]);
  t.same(await e([genesis.hash]), { code: -32000, message: 'genesis is not traceable' });
  t.same(await e([`0x${'cd'.repeat(32)}`]), { code: -32000, message: `block 0x${'cd'.repeat(32)} not found` });
});

/** A block as RLP: its header fields in geth's order (core/types/block.go Header), its txs, no uncles, no withdrawals. */
function blockRlp(b: any, txs: { serialize(): Uint8Array; type: number }[]): Hex {
  const n = (x: string | undefined) => (x === undefined || BigInt(x) === 0n ? new Uint8Array(0) : hexToBytes(toHex(BigInt(x))));
  const h = hexToBytes;
  const header = [h(b.parentHash), h(b.sha3Uncles), h(b.miner), h(b.stateRoot), h(b.transactionsRoot), h(b.receiptsRoot), h(b.logsBloom), n(b.difficulty), n(b.number), n(b.gasLimit), n(b.gasUsed), n(b.timestamp), h(b.extraData), h(b.mixHash), h(b.nonce), n(b.baseFeePerGas)];
  const list = txs.map((x) => (x.type === 0 ? RLP.decode(x.serialize()) : x.serialize()));
  return hx(RLP.encode([header, list as never, []]));
}

t.test('a 100,000-step struct log: whole, and the peak memory of the node reported', async (t) => {
  // Runtime 0x5b600056 (JUMPDEST PUSH1 0 JUMP, forever: 4 gas a step), deployed by the next nonce.
  const n = BigInt(steps.length);
  const loop = getContractAddress({ from: S, nonce: n });
  const deploy = signTx(common, { priv: sender.privateKey }, { nonce: n, data: hexToBytes('0x635b6000566000526004601cf3'), gasLimit: 100_000n, price: 7n });
  const spin = signTx(common, { priv: sender.privateKey }, { nonce: n + 1n, to: hexToBytes(loop), gasLimit: 421_000n, price: 7n });
  for (const x of [deploy, spin]) await rpcOk(devnet.url, 'eth_sendRawTransaction', [hx(x.serialize())]);
  await waitFor('the loop tx', () => rpcOk(devnet.url, 'eth_getTransactionReceipt', [hx(spin.hash())]), 120_000, 200);
  // Peak memory of the node while one request runs: VmHWM (the process's high-water mark) and the
  // highest VmRSS sampled every 20 ms. The streamed answer (a single request) goes first, then the
  // same trace as a batch of one, which is answered whole (the buffered path), for comparison.
  const status = () => readFileSync(`/proc/${devnet.node.proc.pid}/status`, 'utf8');
  const mib = (k: string, s = status()) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0) / 1024;
  const measure = async (body: unknown) => {
    const before = { hwm: mib('VmHWM'), rss: mib('VmRSS') };
    let peak = before.rss;
    const timer = setInterval(() => (peak = Math.max(peak, mib('VmRSS'))), 20);
    try {
      const res = await fetch(devnet.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', Authorization: `Bearer ${signJwt(secret)}` },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(300_000),
      });
      const text = await res.text();
      return { text, chunked: res.headers.get('transfer-encoding') === 'chunked', before, peakRss: Math.max(peak, mib('VmRSS')), hwm: mib('VmHWM') };
    } finally {
      clearInterval(timer);
    }
  };
  const request = { jsonrpc: '2.0', id: 1, method: 'debug_traceTransaction', params: [hx(spin.hash()), { timeout: '300s' }] };
  const streamed = await measure(request);
  const out = JSON.parse(streamed.text).result;
  t.equal(out.structLogs.length, 100_002, 'every step');
  t.equal(out.failed, true);
  t.equal(out.structLogs.at(-1).error, 'out of gas');
  t.ok(streamed.chunked, 'a single request: the result is streamed (chunked transfer encoding)');
  const buffered = await measure([request]);
  t.notOk(buffered.chunked, 'a batch: answered whole');
  const batchOut = JSON.parse(buffered.text)[0].result;
  t.equal(batchOut.structLogs.length, 100_002);
  t.same(batchOut.structLogs.at(-1), out.structLogs.at(-1), 'the same trace either way');
  const say = (name: string, m: typeof streamed) =>
    `${name}: RSS ${m.before.rss.toFixed(0)} MiB before, peak ${m.peakRss.toFixed(0)} MiB (+${(m.peakRss - m.before.rss).toFixed(0)}); VmHWM ${m.before.hwm.toFixed(0)} -> ${m.hwm.toFixed(0)} MiB`;
  t.comment(`answer ${(streamed.text.length / 1e6).toFixed(1)} MB; node ${say('streamed', streamed)}; ${say('buffered (batch)', buffered)}`);
});

t.test("geth's errors", async (t) => {
  t.match((await call(devnet.url, 'debug_traceBlock', ['0x1234'])).error, { code: -32000, message: /^could not decode block/ });
  const e = async (method: string, params: unknown[]) => (await call(devnet.url, method, params)).error;
  t.same(await e('debug_traceTransaction', [`0x${'ab'.repeat(32)}`]), { code: -32000, message: 'transaction not found' });
  t.same(await e('debug_traceBlockByNumber', ['0x0']), { code: -32000, message: 'genesis is not traceable' });
  t.same(await e('debug_traceBlockByNumber', ['0xffffff']), { code: -32000, message: 'block #16777215 not found' });
  t.same(await e('debug_traceBlockByHash', [`0x${'cd'.repeat(32)}`]), { code: -32000, message: `block 0x${'cd'.repeat(32)} not found` });
  t.match(await e('debug_traceTransaction', [hashes[5], { tracer: 'noSuchTracer' }]), { code: -32000, message: /noSuchTracer/ });
  t.same(await e('debug_traceTransaction', [hashes[5], { timeout: 'soon' }]), { code: -32000, message: 'time: invalid duration "soon"' });
  t.same(await e('debug_traceTransaction', [hashes[15], { timeout: '1ns' }]), { code: -32000, message: 'execution timeout' });
  t.same(await e('debug_traceTransaction', [hashes[5], { tracer: 'prestateTracer', tracerConfig: { diffMode: true, includeEmpty: true } }]), { code: -32000, message: 'cannot use diffMode with includeEmpty' });
  t.same(await ok(devnet.url, 'debug_traceTransaction', [hashes[5], { tracer: 'noopTracer' }]), {});
  const mux = await ok(devnet.url, 'debug_traceTransaction', [hashes[5], { tracer: 'muxTracer', tracerConfig: { callTracer: {}, '4byteTracer': {} } }]);
  t.same(Object.keys(mux).sort(), ['4byteTracer', 'callTracer'], 'muxTracer: one result per tracer');
  t.same(mux.callTracer, await ok(devnet.url, 'debug_traceTransaction', [hashes[5], { tracer: 'callTracer' }]), 'muxTracer: the same callTracer result');
  // A custom JavaScript tracer on the node (its worker): ops counted, db read, the timeout.
  const js = await ok(devnet.url, 'debug_traceTransaction', [
    hashes[5],
    { tracer: '{ n: 0, step: function (log, db) { this.n++; }, result: function (ctx, db) { return { n: this.n, nonce: db.getNonce(ctx.from), type: ctx.type }; } }' },
  ]);
  const steps = (await ok(devnet.url, 'debug_traceTransaction', [hashes[5], {}])).structLogs.length;
  t.same(js, { n: steps, nonce: 6, type: 'CALL' }, "a JavaScript tracer sees every step and reads the state (the sender's nonce after its tx)");
  t.same(await e('debug_traceTransaction', [hashes[5], { tracer: '{ step: function () { for (;;) {} }, result: function () { return 1; } }', timeout: '500ms' }]), { code: -32000, message: 'execution timeout' }, 'an endless JavaScript tracer is stopped by the timeout');
  const noToken = await fetch(devnet.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'debug_traceTransaction', params: [hashes[5]] }) });
  t.equal(noToken.status, 401, 'debug_* without the JWT is refused');
  t.match(await noToken.text(), /missing token/);
});
