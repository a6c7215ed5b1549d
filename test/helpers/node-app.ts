/**
 * The node's own application (createNodeApp, the EVM included) over a real LMDB file in a temp
 * folder, initialised with the dev genesis, with a one-thread Piscina pool beside it, and a
 * `block(txs)` that finalizes and commits the next height (every tx must pass). For the tests that
 * run the EVM call/trace engines inline and on a pool thread over the same file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import type { RequestFinalizeBlock } from '../../src/abci/types.js';
import { utf8 } from '../../src/app/bytes.js';
import { buildAppState } from '../../src/config/app-genesis.js';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { createNames } from '../../src/names/index.js';
import { PiscinaCryptoPool } from '../../src/pool/piscina.js';
import { createNodeApp, type NodeAppSpec } from '../../src/state/executor-thread.js';
import { pruningOptions } from '../../src/store/pruning.js';
import { Storage } from '../../src/store/storage.js';
import { defaultConsensusParams } from '../../src/types/params.js';
import { CHAIN_ID, DEV_BALANCE, GENESIS_TIME } from './chainapp.js';

export interface NodeAppHarness {
  /** The LMDB file (a pool thread opens its own app over it). */
  file: string;
  spec: NodeAppSpec;
  storage: Storage;
  app: ReturnType<typeof createNodeApp>;
  pool: PiscinaCryptoPool;
  /** Finalizes and commits the next height with `txs`; asserts each tx passed. */
  block(txs: Uint8Array[]): Promise<RequestFinalizeBlock>;
}

export async function startNodeApp(t: Test): Promise<NodeAppHarness> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  const file = path.join(dir, 'chaind.mdb');
  const storage = Storage.open({ file, noSync: true });
  const spec: NodeAppSpec = { pruning: pruningOptions('nothing'), upstreamNames: false, minGasPrices: [], appVersion: 0n, evm: { allowUnprotectedTxs: false } };
  const app = createNodeApp(storage, spec);
  const pool = new PiscinaCryptoPool({ threads: 1 });
  t.teardown(async () => {
    await pool.close();
    await storage.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const names = createNames({ upstreamNames: false });
  const appState = buildAppState({ accounts: devAccounts().map((a) => ({ address: a.address, balance: DEV_BALANCE })), names });
  await app.initChain({ time: GENESIS_TIME, chainId: CHAIN_ID, consensusParams: defaultConsensusParams(), validators: [], appStateBytes: utf8(JSON.stringify(appState)), initialHeight: 1n });
  app.setConsensusParams(defaultConsensusParams());
  const block = async (txs: Uint8Array[]): Promise<RequestFinalizeBlock> => {
    const h = app.lastBlockHeight + 1n;
    const req: RequestFinalizeBlock = { txs, decidedLastCommit: { round: 0, votes: [] }, hash: new Uint8Array(32), height: h, time: GENESIS_TIME + h * 1_000_000_000n, nextValidatorsHash: new Uint8Array(32), proposerAddress: new Uint8Array(20) };
    const res = await app.finalizeBlock(req);
    storage.transactionSync(() => app.commit());
    for (const r of res.txResults) t.equal(r.code, 0, `tx in block ${h}: ${r.log}`);
    return req;
  };
  return { file, spec, storage, app, pool, block };
}
