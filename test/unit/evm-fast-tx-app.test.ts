/**
 * The same blocks through the whole app, once with every EVM tx through runTx (fastTxs off) and
 * once with one-frame txs on src/evm/fast-tx.ts: every block's app hash, results and receipts
 * agree. The genesis gives the sender only a bank balance and the contracts only EVM code (no auth
 * accounts), so the txs create auth accounts, whose numbers follow the order in which the state
 * manager hands the accounts over: a different write order would show as a different app hash.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createChainApp } from '../../src/app/chain.js';
import { utf8 } from '../../src/app/bytes.js';
import { buildAppState } from '../../src/config/app-genesis.js';
import { createEvmCommon } from '../../src/evm/common.js';
import { bech32Address, devAccounts } from '../../src/keys/devaccounts.js';
import { createNames } from '../../src/names/index.js';
import { createCryptoPool } from '../../src/pool/index.js';
import { Storage } from '../../src/store/storage.js';
import { defaultConsensusParams } from '../../src/types/params.js';
import { CHAIN_ID, DENOM, DEV_BALANCE, GENESIS_TIME } from '../helpers/chainapp.js';
import { concat, makeKeys, signTx, word } from '../helpers/evm.js';

const common = createEvmCommon({ chainId: 9000n });
const [E, F] = makeKeys(2, 'fast-tx-app');
/** For each 64-byte (key, value) pair of calldata, SSTORE; then STOP. */
const STORE_LOOP = '0x5f5b368110156017578060200135813555604001600156' + '5b00';
/** SSTORE(0, 1), then REVERT. */
const REVERTER = '0x60015f555f5ffd';
const X = Buffer.from('2000000000000000000000000000000000000002', 'hex');
const Y = Buffer.from('2000000000000000000000000000000000000003', 'hex');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const pairs = (...kv: [bigint, bigint][]) => concat(...kv.flatMap(([k, v]) => [word(k), word(v)]));

/** The blocks' txs: E and F (bank balances only) store, revert and clear, with fees and without. */
function blocks(): Uint8Array[][] {
  const tx = (key: typeof E, nonce: bigint, to: Uint8Array, data: Uint8Array, price: bigint) => signTx(common, key!, { nonce, to, data, gasLimit: 200_000n, price }).serialize();
  return [
    [],
    [tx(E, 0n, X, pairs([1n, 5n]), 0n), tx(F, 0n, Y, new Uint8Array(0), 0n)],
    [tx(E, 1n, X, pairs([1n, 6n], [2n, 7n]), 2n), tx(F, 1n, X, pairs([1n, 0n]), 3n), tx(E, 2n, Y, new Uint8Array(0), 1n)],
    [tx(F, 2n, X, pairs([2n, 0n], [3n, 1n], [3n, 0n]), 1n), tx(E, 3n, X, pairs([9n, 9n]), 0n)],
  ];
}

async function run(fastTxs: boolean): Promise<string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-fast-tx-'));
  const storage = Storage.open({ file: path.join(dir, 'chaind.mdb'), noSync: true });
  const pool = createCryptoPool({ kind: 'single' });
  try {
    const names = createNames({ upstreamNames: false });
    const app = createChainApp({ db: storage.app.latest, history: storage.app, names, pool, bech32Prefix: 'chain', openDatabase: (n) => storage.openNamedDb(n), evm: {} });
    const st = buildAppState({ accounts: devAccounts().map((a) => ({ address: a.address, balance: DEV_BALANCE })), names }) as Record<string, any>;
    const extra = 10n ** 18n;
    for (const k of [E!, F!]) st.bank.balances.push({ address: bech32Address(k.address, 'chain'), coins: [{ denom: DENOM, amount: extra.toString() }] });
    st.bank.balances.sort((a: { address: string }, b: { address: string }) => (a.address < b.address ? -1 : 1));
    st.bank.supply = [{ denom: DENOM, amount: (BigInt(st.bank.supply[0].amount) + 2n * extra).toString() }];
    st.evm.accounts = [
      { address: `0x${hex(X)}`, code: STORE_LOOP },
      { address: `0x${hex(Y)}`, code: REVERTER },
    ];
    await app.initChain({ time: GENESIS_TIME, chainId: CHAIN_ID, consensusParams: defaultConsensusParams(), validators: [], appStateBytes: utf8(JSON.stringify(st)), initialHeight: 1n });
    app.setConsensusParams(defaultConsensusParams());
    app.evm!.keeper.fastTxs = fastTxs;
    const out: string[] = [];
    let height = 0n;
    for (const txs of blocks()) {
      height++;
      const res = await app.finalizeBlock({ txs, decidedLastCommit: { round: 0, votes: [] }, hash: new Uint8Array(32), height, time: GENESIS_TIME + height * 1_000_000_000n, nextValidatorsHash: new Uint8Array(32), proposerAddress: new Uint8Array(20) });
      storage.transactionSync(() => app.commit());
      const receipts = app.evm!.keeper.blockReceipts(height).map((r) => `${r.status}/${r.gasUsed}/${r.cumulativeGasUsed}/${r.error}`);
      out.push(JSON.stringify({ height: String(height), appHash: hex(res.appHash), results: res.txResults.map((r) => `${r.code}/${r.gasUsed}/${r.log}`), receipts }));
    }
    const ctx = app.queryContext();
    out.push(JSON.stringify({ accountNumbers: [E!.address, F!.address, X, Y].map((a) => String(app.auth.keeper.getAccount(ctx, a)?.accountNumber)) }));
    return out;
  } finally {
    await pool.close();
    await storage.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

t.test('app hashes, results, receipts and account numbers agree with and without the fast path', async (t) => {
  const slow = await run(false);
  const fast = await run(true);
  t.same(fast, slow);
  t.ok(slow.some((b) => b.includes('"0/')), 'a failed tx (status 0) is among them');
  t.match(slow[slow.length - 1], /^\{"accountNumbers":\["\d+","\d+","\d+","\d+"\]\}$/, 'the txs created the auth accounts');
});
