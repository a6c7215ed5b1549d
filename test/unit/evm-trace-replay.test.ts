/**
 * Tracing an EVM tx of a block that holds Cosmos txs too: the block's earlier txs, a bank send
 * among them, are replayed by BaseApp (replayBlockTxs) on a branch of the parent's state before
 * the traced tx runs, on the inline engine and on a pool thread alike; the committed state is not
 * touched by the replay.
 */
import t from 'tap';
import { appBlockReplay, CallEngine, CallError, type CallRequest } from '../../src/app/modules/evm/calls.js';
import type { TraceSpec, TraceValue } from '../../src/app/modules/evm/trace.js';
import { createEvmCommon } from '../../src/evm/common.js';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { poolEvmCalls } from '../../src/pool/evm-calls.js';
import { CHAIN_ID, DENOM } from '../helpers/chainapp.js';
import { startNodeApp } from '../helpers/node-app.js';
import { signTx } from '../helpers/evm.js';
import { freshKey, sendTx } from '../helpers/txsign.js';
import { evmRpcDeps } from '../../src/rpc/evm/deps.js';
import { debugTraceMethods } from '../../src/rpc/evm/debug-trace.js';
import type { RawJson } from '../../src/evm/tracers/index.js';
import type { Block, BlockMeta } from '../../src/types/block.js';

t.setTimeout(180_000);

const common = createEvmCommon({ chainId: 9000n });
const COSMOS = devAccounts().find((a) => a.keyType === 'secp256k1')!;
const B = devAccounts().find((a) => a.keyType === 'eth_secp256k1')!;
const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;

t.test('a bank send earlier in the block is replayed before the traced EVM tx', async (t) => {
  const { file, spec, app, pool, block } = await startNodeApp(t);
  await block([]);

  // X has nothing at height 1; block 2 funds it with a bank send, then X sends 7 wei to B.
  const X = freshKey(77, 'eth_secp256k1');
  const keeper = app.evm!.keeper;
  const accountNumber = keeper.auth.getAccount(app.queryContext(), COSMOS.address)!.accountNumber;
  const FUND = 10n ** 18n;
  const send = sendTx({ chainId: CHAIN_ID, from: COSMOS, to: X.bech32, amount: [{ denom: DENOM, amount: FUND }], accountNumber, sequence: 0n });
  const evmTx = signTx(common, { priv: X.privateKey }, { nonce: 0n, to: B.address, value: 7n, gasLimit: 21_000n, price: 0n }).serialize();
  const req2 = await block([send, evmTx]);
  t.equal(keeper.blockReceipts(2n)[0]?.status, 1, 'the EVM tx succeeded in the block');

  const trace = (tracer: string | undefined, replayed: boolean, mode: 'tx' | 'block' | 'roots' = 'tx'): CallRequest => {
    const s: TraceSpec = {
      mode,
      block: { number: 2n, time: req2.time / 1_000_000_000n, gasLimit: 1n << 62n },
      txs: [evmTx],
      target: 0,
      ...(mode === 'roots' ? { parentRoot: keeper.stateRootAt(1n)! } : {}),
      ...(replayed ? { blockTxs: req2.txs, positions: [1], timeNs: req2.time } : {}),
      config: { ...(tracer ? { tracer } : {}), logger: {}, timeoutMs: 60_000 },
    };
    return { kind: 'trace', height: 1n, latest: app.lastBlockHeight, time: 0n, gasLimit: 1n << 62n, gasCap: 50_000_000n, args: { value: 0n, data: new Uint8Array(0) }, trace: s };
  };
  const json = (v: unknown) => JSON.parse((v as TraceValue).traceParts.join(''));

  const inline = new CallEngine({ keeper, queryContext: (h) => app.queryContext(h), replayBlock: appBlockReplay(app) });
  // What tracing did before: only the EVM txs replayed, so X has no funds for the 7 wei.
  const before = await inline.handle(trace('prestateTracer', false)).catch((e: unknown) => e);
  t.ok(before instanceof CallError && /^tracing failed: .*enough funds/.test(before.message), `without the bank send X cannot pay (${(before as Error).message})`);

  const pre = json(await inline.handle(trace('prestateTracer', true)));
  t.equal(BigInt(pre[X.hex].balance), FUND, "prestateTracer: X's balance includes the bank send");
  t.equal(pre[X.hex].nonce ?? 0, 0, 'and its nonce is 0');
  const call = json(await inline.handle(trace('callTracer', true)));
  t.equal(call.from, X.hex, 'callTracer: from X');
  t.equal(call.value, '0x7', 'callTracer: the 7 wei');
  t.notOk(call.error, 'callTracer: the transfer succeeds');
  const blk = json(await inline.handle(trace('prestateTracer', true, 'block')));
  t.equal(blk.length, 1, 'block mode: one EVM tx');
  t.equal(BigInt(blk[0].result[X.hex].balance), FUND, "block mode: X's balance includes the bank send");
  t.equal(blk[0].txHash, hex(keeper.blockReceipts(2n)[0]!.ethHash), 'block mode: its hash');

  // debug_intermediateRoots: the root after the EVM tx, the last of the block, is the block's.
  const roots = json(await inline.handle(trace(undefined, true, 'roots')));
  t.same(roots, [hex(keeper.stateRootAt(2n)!)], "intermediateRoots: the last root is the block's stateRoot");
  const rootsOld = json(await inline.handle(trace(undefined, false, 'roots')));
  t.not(rootsOld[0], roots[0], 'without the bank send replayed it was not');

  // The replay wrote nothing: the state at height 1 still has no funds for X, and latest has the block's.
  const bank = (h: bigint) => app.queryContext(h);
  t.equal(app.evm!.keeper.bank.getBalance(bank(1n), X.address, DENOM).amount, 0n, 'height 1: X still empty');
  t.equal(app.evm!.keeper.bank.getBalance(bank(2n), X.address, DENOM).amount, FUND - 7n, 'height 2: as the block left it');

  // Through the RPC methods (debug-trace.ts: the block's Cosmos txs found and passed), inline.
  const deps = evmRpcDeps({
    app,
    keeper,
    blocks: {
      base: () => 1n,
      height: () => app.lastBlockHeight,
      loadBlock: (h) => (h === 2n ? ({ header: { time: req2.time }, data: { txs: req2.txs } } as unknown as Block) : null),
      loadBlockMeta: (h) => (h === 2n ? ({ blockId: { hash: new Uint8Array(32) } } as unknown as BlockMeta) : null),
      heightByHash: () => null,
    },
    mempool: { checkTx: async () => ({}) as never, reapMaxTxs: () => [] },
    consensus: { getState: () => ({ consensusParams: { block: { maxGas: -1n } } }) },
    p2p: { numPeers: () => ({ outbound: 0, inbound: 0 }) },
    gasCap: 0,
    evmTimeoutMs: 5000,
  });
  const routes = new Map(debugTraceMethods(deps).map((r) => [r.name, r]));
  const rpc = async (name: string, args: Record<string, unknown>) => JSON.parse(((await routes.get(name)!.handler(args as never, {} as never)) as RawJson).json);
  const ethHash = keeper.blockReceipts(2n)[0]!.ethHash;
  const viaRpc = await rpc('debug_traceTransaction', { hash: ethHash, config: { tracer: 'prestateTracer' } });
  t.same(viaRpc, pre, 'debug_traceTransaction: the same prestate (X funded)');
  const rootsRpc = await rpc('debug_intermediateRoots', { hash: keeper.headerAt(2n)!.hash, config: undefined });
  t.same(rootsRpc, roots, "debug_intermediateRoots: the block's stateRoot");

  // The same on a pool thread (its own app over the LMDB file).
  const poolCalls = poolEvmCalls(pool, { dbFile: file, app: spec });
  t.equal(await poolCalls.whenReady(), true, 'the call workers load');
  const onPool = (r: CallRequest) => poolCalls.calls(r)!;
  const preP = json(await onPool(trace('prestateTracer', true)));
  t.same(preP, pre, 'pool: the same prestate');
  const blkP = json(await onPool(trace('prestateTracer', true, 'block')));
  t.same(blkP, blk, 'pool: the same block trace');
  t.same(json(await onPool(trace(undefined, true, 'roots'))), roots, 'pool: the same roots');
});
