/**
 * The chain app (src/app/chain.ts) over a fresh LMDB in a temp directory, with the dev genesis
 * `chaind init --dev` writes (src/config/app-genesis.ts): the 20 dev accounts numbered 0–19 and
 * funded with 10^24 achain. Blocks are finalized and committed by hand; queries go through
 * abci_query-shaped BaseApp.query with protobuf codecs. Signatures go through a real
 * single-threaded crypto pool.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { fromBinary, toBinary, create, type DescMessage, type MessageInitShape, type MessageShape } from '@bufbuild/protobuf';
import { open, type Database, type RootDatabase } from 'lmdb';
import { CheckTxType, type ExecTxResult, type ResponseFinalizeBlock } from '../../src/abci/types.js';
import { createChainApp, type ChainApp, type ChainAppOptions } from '../../src/app/chain.js';
import { utf8 } from '../../src/app/bytes.js';
import { Context, ExecMode } from '../../src/app/context.js';
import { InfiniteGasMeter } from '../../src/app/gas.js';
import { CacheKVStore, LmdbReadStore, PrefixStore, ReadOnlyStore, type KVStore } from '../../src/app/store.js';
import { buildAppState } from '../../src/config/app-genesis.js';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { createNames } from '../../src/names/index.js';
import { createCryptoPool } from '../../src/pool/index.js';
import type { CryptoPool } from '../../src/pool/types.js';
import { defaultConsensusParams } from '../../src/types/params.js';
import type { Account } from '../../src/app/modules/auth/types.js';

export const CHAIN_ID = 'chaind-test-1';
export const DENOM = 'achain';
export const DEV_BALANCE = 10n ** 24n;
export const GENESIS_TIME = 1_700_000_000_000_000_000n;

export interface ChainHarnessOptions extends Partial<Omit<ChainAppOptions, 'db' | 'pool'>> {
  /** Edits the app_state before InitChain. */
  appState?: (s: Record<string, any>) => void;
  upstreamNames?: boolean;
  /** Default: a single-threaded pool (real verification, no threads). */
  pool?: CryptoPool | null;
  /** Leave the chain at height 0 (InitChain only). */
  noFirstBlock?: boolean;
}

export interface QueryAnswer<R> {
  code: number;
  codespace: string;
  log: string;
  height: bigint;
  res: R | undefined;
}

export interface ChainHarness {
  app: ChainApp;
  env: RootDatabase;
  db: Database<Uint8Array, Uint8Array>;
  pool: CryptoPool | undefined;
  height(): bigint;
  /** FinalizeBlock + Commit (inside one LMDB transaction, as the executor does). */
  block(txs?: Uint8Array[], time?: bigint): Promise<ResponseFinalizeBlock>;
  check(tx: Uint8Array, recheck?: boolean): Promise<ExecTxResult>;
  query<I extends DescMessage, O extends DescMessage>(path: string, req: I, init: MessageInitShape<I>, res: O): Promise<QueryAnswer<MessageShape<O>>>;
  /** Read-only context over committed state. */
  ctx(): Context;
  /** Read-only context over the CheckTx state (what CheckTx has accepted since the last commit). */
  checkCtx(): Context;
  account(addr: Uint8Array): Account | undefined;
  balance(addr: Uint8Array, denom?: string): bigint;
  /** Number of uncommitted writes CheckTx has made. */
  checkStateWrites(): number;
  lastAppHash(): string;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function contextOver(base: KVStore, height: bigint, app: ChainApp): Context {
  return new Context({
    mode: ExecMode.Query,
    chainId: CHAIN_ID,
    height,
    time: 0n,
    gasMeter: new InfiniteGasMeter(),
    addressCodec: app.addressCodec,
    stores: (sk) => new PrefixStore(new ReadOnlyStore(base), Uint8Array.from([1, sk.length, ...Buffer.from(sk)])),
  });
}

export async function startChain(t: Test, opts: ChainHarnessOptions = {}): Promise<ChainHarness> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  const env = open({ path: dir, maxDbs: 4 });
  const db = env.openDB<Uint8Array, Uint8Array>({ name: 'app', encoding: 'binary', keyEncoding: 'binary' });
  const pool = opts.pool === null ? undefined : opts.pool ?? createCryptoPool({ kind: 'single' });
  t.teardown(async () => {
    await pool?.close();
    await env.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const names = createNames({ upstreamNames: opts.upstreamNames === true });
  const { appState: edit, upstreamNames: _u, pool: _p, noFirstBlock, ...rest } = opts;
  const app = createChainApp({ bech32Prefix: 'chain', names, ...rest, db, pool });
  const appState = buildAppState({ accounts: devAccounts().map((a) => ({ address: a.address, balance: DEV_BALANCE })), names });
  edit?.(appState);
  const init = await app.initChain({
    time: GENESIS_TIME,
    chainId: CHAIN_ID,
    consensusParams: defaultConsensusParams(),
    validators: [],
    appStateBytes: utf8(JSON.stringify(appState)),
    initialHeight: 1n,
  });
  app.setConsensusParams(defaultConsensusParams());
  let height = 0n;
  let appHash = init.appHash;
  const h: ChainHarness = {
    app,
    env,
    db,
    pool,
    height: () => height,
    async block(txs = [], time) {
      const next = height + 1n;
      const res = await app.finalizeBlock({
        txs,
        decidedLastCommit: { round: 0, votes: [] },
        hash: new Uint8Array(32),
        height: next,
        time: time ?? GENESIS_TIME + next * 1_000_000_000n,
        nextValidatorsHash: new Uint8Array(32),
        proposerAddress: new Uint8Array(20),
      });
      env.transactionSync(() => app.commit());
      height = next;
      appHash = res.appHash;
      return res;
    },
    check: (tx, recheck = false) => app.checkTx(tx, recheck ? CheckTxType.Recheck : CheckTxType.New),
    async query(p, reqSchema, init, resSchema) {
      const r = await app.query({ path: p, data: toBinary(reqSchema, create(reqSchema, init)), height: 0n, prove: false });
      return { code: r.code, codespace: r.codespace, log: r.log, height: r.height, res: r.code === 0 ? fromBinary(resSchema, r.value) : undefined };
    },
    ctx: () => contextOver(new LmdbReadStore(db), height, app),
    checkCtx: () => contextOver((app as unknown as { checkState: CacheKVStore }).checkState, height + 1n, app),
    account: (addr) => app.auth.keeper.getAccount(h.ctx(), addr),
    balance: (addr, denom = DENOM) => app.bank.keeper.getBalance(h.ctx(), addr, denom).amount,
    checkStateWrites: () => [...(app as unknown as { checkState: CacheKVStore }).checkState.dirtyEntries()].length,
    lastAppHash: () => hex(appHash),
  };
  if (!noFirstBlock) await h.block();
  return h;
}
