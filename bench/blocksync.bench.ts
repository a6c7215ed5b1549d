/**
 * Block-sync catch-up rate on loopback: a real chain (chain app, Executor, LMDB with noSync) is
 * served by two reactors over MConnections on SecretConnections and synced into a fresh store,
 * all in this one process (serving, syncing, encryption on one core).
 *
 *   node dist/bench/blocksync.bench.js                 # 1000 empty blocks, 500 blocks of 50 txs
 *   BS_BLOCKS=3000 BS_TX_BLOCKS=0 node dist/bench/blocksync.bench.js
 *   BS_PER_PEER=50 node dist/bench/blocksync.bench.js   # pending requests per peer (default 20)
 *   BS_FLUSH_MS=10 node dist/bench/blocksync.bench.js  # MConnection flush throttle (default 100)
 */
import { BlocksyncReactor } from '../src/p2p/blocksync/reactor.js';
import type { State } from '../src/types/state.js';
import { linkReactors, makeChainGenesis, openChainNode } from '../test/helpers/blocksync-chain.js';
import { transferTx } from '../test/helpers/mempool-tx.js';
import { report } from './report.js';

const EMPTY = Number(process.env['BS_BLOCKS'] ?? 1000);
const TX_BLOCKS = Number(process.env['BS_TX_BLOCKS'] ?? 500);
const TXS = Number(process.env['BS_TXS'] ?? 50);
const PER_PEER = process.env['BS_PER_PEER'] ? Number(process.env['BS_PER_PEER']) : undefined;
const FLUSH = process.env['BS_FLUSH_MS'] ? Number(process.env['BS_FLUSH_MS']) : undefined;

async function run(label: string, blocks: number, txs: number): Promise<void> {
  const g = makeChainGenesis();
  const src = await openChainNode(g);
  const dst = await openChainNode(g);
  let t = performance.now();
  await src.produce(blocks, () => Array.from({ length: txs }, () => transferTx()));
  const produceS = (performance.now() - t) / 1000;
  const servers = [0, 1].map(() => new BlocksyncReactor({ store: src.storage.blocks, executor: src.executor, state: src.state, blockSync: false }));
  let caught: State | null = null;
  const r = new BlocksyncReactor({
    store: dst.storage.blocks,
    executor: dst.executor,
    state: dst.state,
    blockSync: true,
    onCaughtUp: (s) => (caught = s),
    statusIntervalStartMs: 100,
    checkIntervalMs: 50,
    minSyncMs: 0,
    pool: PER_PEER ? { requestsPerPeer: PER_PEER } : undefined,
  });
  r.start();
  t = performance.now();
  const links = await Promise.all(servers.map((s, i) => linkReactors(s, `peer${i}`, r, 'syncer', FLUSH === undefined ? {} : { flushThrottle: FLUSH })));
  while (caught === null && r.error === null) await new Promise((res) => setTimeout(res, 5));
  const s = (performance.now() - t) / 1000;
  const h = Number((caught as State | null)?.lastBlockHeight ?? 0n);
  console.log(
    `${label}: produced ${blocks} blocks (${txs} txs each) at ${(blocks / produceS).toFixed(0)} blocks/s; ` +
      `synced ${h} at ${(h / s).toFixed(0)} blocks/s${r.error ? ` ERROR ${r.error.message}` : ''}`,
  );
  if (!r.error) report({ area: 'P2P', figure: `block sync catch-up, ${label} (${txs} txs each), in-process`, unit: 'blocks/s', value: h / s, peer: 'block production (same chain)', peerValue: blocks / produceS });
  r.stop();
  servers.forEach((x) => x.stop());
  links.forEach((l) => l.close());
  await src.close();
  await dst.close();
}

await run('empty blocks', EMPTY, 0);
if (TX_BLOCKS > 0) await run('blocks with txs', TX_BLOCKS, TXS);
