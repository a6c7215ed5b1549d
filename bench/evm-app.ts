/**
 * The chain app alone over a fresh LMDB file, at genesis with the dev accounts funded: what the
 * in-process EVM benches (evm-call, evm-module) execute blocks on, one FinalizeBlock and one
 * commit per height, no node around it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RequestFinalizeBlock } from '../src/abci/types.js';
import { utf8 } from '../src/app/bytes.js';
import { createChainApp, type ChainApp } from '../src/app/chain.js';
import { buildAppState } from '../src/config/app-genesis.js';
import { devAccounts } from '../src/keys/devaccounts.js';
import { createNames } from '../src/names/index.js';
import { Storage } from '../src/store/storage.js';
import { defaultConsensusParams } from '../src/types/params.js';
import type { Key } from '../test/helpers/evm.js';

const GENESIS_TIME = 1_700_000_000_000_000_000n;

export interface BenchApp {
  readonly storage: Storage;
  readonly app: ChainApp;
  /** The first eth_secp256k1 dev account: it deploys and sends. */
  readonly key: Key;
  /** The FinalizeBlock request of the next height (a second apart). */
  request(txs: Uint8Array[]): RequestFinalizeBlock;
  /** Commits the finalized height in one LMDB write transaction; the next height follows. */
  commit(): void;
  close(): Promise<void>;
}

/** `evm: false`: the app without its EVM module. */
export async function openBenchApp(opts: { evm?: boolean } = {}): Promise<BenchApp> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-bench-'));
  const storage = Storage.open({ file: path.join(dir, 'chaind.mdb'), noSync: true });
  const names = createNames({ upstreamNames: false });
  const app = createChainApp({ db: storage.app.latest, history: storage.app, names, bech32Prefix: 'chain', openDatabase: (n) => storage.openNamedDb(n), ...(opts.evm === false ? { evm: false as const } : {}) });
  const dev = devAccounts();
  const sender = dev.find((a) => a.keyType === 'eth_secp256k1')!;
  const appState = buildAppState({ accounts: dev.map((a) => ({ address: a.address, balance: 10n ** 24n })), names });
  const params = defaultConsensusParams();
  await app.initChain({ time: GENESIS_TIME, chainId: 'bench-1', consensusParams: params, validators: [], appStateBytes: utf8(JSON.stringify(appState)), initialHeight: 1n });
  app.setConsensusParams(params);
  let h = 0n;
  return {
    storage,
    app,
    key: { priv: sender.privateKey, address: sender.address },
    request: (txs) => ({ txs, decidedLastCommit: { round: 0, votes: [] }, hash: new Uint8Array(32), height: h + 1n, time: GENESIS_TIME + (h + 1n) * 1_000_000_000n, nextValidatorsHash: new Uint8Array(32), proposerAddress: new Uint8Array(20) }),
    commit: () => {
      storage.transactionSync(() => app.commit());
      h++;
    },
    close: async () => {
      await storage.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
