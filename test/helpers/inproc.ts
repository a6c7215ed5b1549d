/**
 * An in-process chaind for tests: a fresh home made by `chaind init --dev`'s own code, the real
 * startNode with every part (LMDB, consensus, mempool, app, RPC server on 127.0.0.1 port 0), fast
 * blocks, and direct access to the node's parts through `ctx`. Nothing is mocked.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { initHome } from '../../src/cli/init.js';
import { loadGenesis } from '../../src/config/genesis.js';
import { loadConfig, type FlagValue } from '../../src/config/load.js';
import { jsonTxDecoder } from '../../src/app/tx.js';
import { createLogger } from '../../src/log.js';
import { startNode, type ChaindNode } from '../../src/node.js';
import { RoundStep } from '../../src/consensus/types.js';
import type { NodeRpcContext } from '../../src/rpc/node/context.js';

export interface TestNode {
  node: ChaindNode;
  ctx: NodeRpcContext;
  home: string;
  rpcPort: number;
  /** http://127.0.0.1:<rpcPort> */
  base: string;
  grpcPort: number | null;
  restPort: number | null;
  close(): Promise<void>;
}

export interface TestNodeOptions {
  /** Go duration; default 100ms so tests see many blocks. */
  timeoutCommit?: string;
  /** Extra settings as `section.key` flags, e.g. {'rpc.unsafe': true, 'compat.upstream-names': true}. */
  flags?: Record<string, FlagValue>;
  /** Log level for the node; default none (set CHAIND_TEST_LOG=debug to see logs). */
  logLevel?: string;
  /** 'json': the app decodes txs with jsonTxDecoder (src/app/tx.ts) so tests can submit txs. */
  txDecoder?: 'json';
  /**
   * Where blocks execute. Default 'inline', on the test's own thread: an executor thread loads
   * the whole app again (about 2 s of CPU a node) and the RPC tests that start most in-process
   * nodes are not about it. 'thread' is the node's production path (always taken by the
   * process-level e2e tests, which run `chaind start`); test/unit/inproc-node.test.ts and
   * node-metrics.test.ts take it here.
   */
  executor?: 'inline' | 'thread';
}

export async function startTestNode(opts: TestNodeOptions = {}): Promise<TestNode> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-inproc-'));
  initHome({ home, moniker: 'inproc', chainId: 'inproc-1', dev: true, overwrite: false });
  const flags: Record<string, FlagValue> = {
    'rpc.laddr': 'tcp://127.0.0.1:0',
    'grpc.address': '127.0.0.1:0',
    'api.address': 'tcp://127.0.0.1:0',
    'p2p.laddr': 'tcp://127.0.0.1:0',
    'json-rpc.address': '127.0.0.1:0',
    'json-rpc.ws-address': '127.0.0.1:0',
    'instrumentation.prometheus': false,
    'consensus.timeout_commit': opts.timeoutCommit ?? '100ms',
    ...opts.flags,
  };
  const loaded = loadConfig({ home, flags });
  const genesis = loadGenesis(loaded.paths.genesis);
  const level = (process.env.CHAIND_TEST_LOG ?? opts.logLevel ?? 'none') as 'none';
  const node = await startNode({
    home,
    config: loaded.config,
    appConfig: loaded.appConfig,
    genesis,
    logger: createLogger({ level, write: (l) => process.stderr.write(`${l}\n`) }),
    paths: loaded.paths,
    testing: { txDecoder: opts.txDecoder === 'json' ? jsonTxDecoder : undefined, inlineExecutor: (opts.executor ?? 'inline') === 'inline' },
  });
  let closed = false;
  return {
    node,
    ctx: node.context,
    home,
    rpcPort: node.rpcPort,
    base: `http://127.0.0.1:${node.rpcPort}`,
    grpcPort: node.grpcPort,
    restPort: node.restPort,
    async close() {
      if (closed) return;
      closed = true;
      await node.close();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Resolves once the node has committed `height`. */
export async function waitHeight(tn: TestNode, height: bigint, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (tn.ctx.storage.blocks.height() < height) {
    if (Date.now() > deadline) throw new Error(`height ${height} not reached (at ${tn.ctx.storage.blocks.height()})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Resolves once a node with create_empty_blocks = false is at rest: consensus waits for txs in
 * round 0 of the height above the store (step NewRound), the state is the store's last block,
 * that block's header already carries the state's app hash (so no proof block is due, see
 * needProofBlock in src/consensus/state.ts) and the mempool is empty. Nothing changes from there
 * without a tx. A state, not a quiet interval: under load the proof block may come late.
 */
export async function waitAtRest(tn: TestNode, timeoutMs = 30_000): Promise<bigint> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stored = tn.ctx.storage.blocks.height();
    const rs = tn.ctx.consensus.getRoundState();
    const state = tn.ctx.consensus.getState();
    const last = stored > 0n ? tn.ctx.storage.blocks.loadBlock(stored) : null;
    if (
      last !== null &&
      rs.height === stored + 1n &&
      rs.round === 0 &&
      rs.step === RoundStep.NewRound &&
      state.lastBlockHeight === stored &&
      Buffer.from(last.header.appHash).equals(Buffer.from(state.appHash)) &&
      tn.ctx.mempool.size() === 0
    ) {
      return stored;
    }
    if (Date.now() > deadline) {
      throw new Error(`node not at rest after ${timeoutMs} ms (store ${stored}, consensus ${rs.height}/${rs.round}/${rs.step}, state ${state.lastBlockHeight})`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
