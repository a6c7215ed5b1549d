/**
 * The EVM module inside the chain app (src/app/modules/evm): signed Ethereum txs through
 * BaseApp FinalizeBlock/commit over a real Storage (LMDB), one account model with auth and bank in
 * both directions, receipts and logs in the module's databases, the state root against
 * @ethereumjs's MerkleStateManager on the same state, deterministic app hashes, a restart.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Common, Hardfork, Mainnet } from '@ethereumjs/common';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { createTx, type TypedTransaction } from '@ethereumjs/tx';
import { Address, bigIntToHex, bytesToHex, createContractAddress, eoaCode7702SignAuthorization, hexToBytes, privateToAddress } from '@ethereumjs/util';
import { createMPT, verifyMPTWithMerkleProof } from '@ethereumjs/mpt';
import { CheckTxType, type ExecTxResult, type RequestFinalizeBlock } from '../../src/abci/types.js';
import { createChainApp, type ChainApp } from '../../src/app/chain.js';
import { utf8 } from '../../src/app/bytes.js';
import { prefixEnd } from '../../src/app/bytes.js';
import { buildAppState } from '../../src/config/app-genesis.js';
import { devAccounts, type DevAccount } from '../../src/keys/devaccounts.js';
import { createNames } from '../../src/names/index.js';
import { createCryptoPool } from '../../src/pool/index.js';
import { Storage } from '../../src/store/storage.js';
import { defaultConsensusParams } from '../../src/types/params.js';
import { createEvmCommon } from '../../src/evm/common.js';
import { installJumpDestCache } from '../../src/evm/jumpdests.js';
import { getCryptoBackend } from '../../src/crypto/backend.js';
import { EVM_STORE_KEY } from '../../src/app/modules/evm/keys.js';
import { CHAIN_ID, DENOM, DEV_BALANCE, GENESIS_TIME } from '../helpers/chainapp.js';
import { sendTx } from '../helpers/txsign.js';
import { balanceOfData, balanceSlot, deployData, keccak, signTx, transferData, TRANSFER_TOPIC, word } from '../helpers/evm.js';

const EVM_CHAIN_ID = 9000n;
const common: Common = createEvmCommon({ chainId: EVM_CHAIN_ID });
const DEV = devAccounts();
const ETH = DEV.filter((a) => a.keyType === 'eth_secp256k1');
const COSMOS = DEV.filter((a) => a.keyType === 'secp256k1');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const attrs = (r: ExecTxResult, type: string) => r.events.filter((e) => e.type === type).map((e) => Object.fromEntries(e.attributes.map((a) => [a.key, a.value])));

interface TxOpts {
  type?: 0 | 1 | 2;
  nonce: bigint;
  to?: Uint8Array;
  value?: bigint;
  data?: Uint8Array;
  gasLimit?: bigint;
  price?: bigint;
  chainId?: bigint;
  unprotected?: boolean;
}

function signed(priv: Uint8Array, o: TxOpts): TypedTransaction {
  const spec = { ...o, price: o.price ?? 0n, gasLimit: o.gasLimit ?? 1_000_000n };
  if (o.unprotected) {
    // Before Spurious Dragon (EIP-155) the library signs with v = 27/28: no chain id at all.
    return signTx(new Common({ chain: Mainnet, hardfork: Hardfork.TangerineWhistle }), { priv }, spec);
  }
  return signTx(o.chainId === undefined ? common : createEvmCommon({ chainId: o.chainId }), { priv }, spec);
}
const raw = (tx: TypedTransaction) => tx.serialize();

interface Node {
  dir: string;
  storage: Storage;
  app: ChainApp;
  block(txs?: Uint8Array[]): Promise<Awaited<ReturnType<ChainApp['finalizeBlock']>>>;
  check(tx: Uint8Array): Promise<ExecTxResult>;
  height(): bigint;
  close(): Promise<void>;
}

async function startNode(t: Test, o: { dir?: string; allowUnprotected?: boolean; keep?: boolean } = {}): Promise<Node> {
  const dir = o.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  const storage = Storage.open({ file: path.join(dir, 'chaind.mdb'), noSync: true });
  const pool = createCryptoPool({ kind: 'single' });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await pool.close();
    await storage.close();
  };
  t.teardown(async () => {
    await close();
    if (!o.keep && o.dir === undefined) fs.rmSync(dir, { recursive: true, force: true });
  });
  const names = createNames({ upstreamNames: false });
  const app = createChainApp({
    db: storage.app.latest,
    history: storage.app,
    names,
    pool,
    bech32Prefix: 'chain',
    openDatabase: (name) => storage.openNamedDb(name),
    evm: { allowUnprotectedTxs: o.allowUnprotected ?? false },
  });
  if (app.lastBlockHeight === 0n) {
    const appState = buildAppState({ accounts: DEV.map((a) => ({ address: a.address, balance: DEV_BALANCE })), names });
    await app.initChain({ time: GENESIS_TIME, chainId: CHAIN_ID, consensusParams: defaultConsensusParams(), validators: [], appStateBytes: utf8(JSON.stringify(appState)), initialHeight: 1n });
  }
  app.setConsensusParams(defaultConsensusParams());
  let height = app.lastBlockHeight;
  const req = (txs: Uint8Array[], h: bigint): RequestFinalizeBlock => ({
    txs,
    decidedLastCommit: { round: 0, votes: [] },
    hash: new Uint8Array(32),
    height: h,
    time: GENESIS_TIME + h * 1_000_000_000n,
    nextValidatorsHash: new Uint8Array(32),
    proposerAddress: new Uint8Array(20),
  });
  return {
    dir,
    storage,
    app,
    async block(txs = []) {
      const res = await app.finalizeBlock(req(txs, height + 1n));
      storage.transactionSync(() => app.commit());
      height++;
      return res;
    },
    check: (tx) => app.checkTx(tx, CheckTxType.New),
    height: () => height,
    close,
  };
}

const bankBalance = (n: Node, addr: Uint8Array) => n.app.bank.keeper.getBalance(n.app.queryContext(), addr, DENOM).amount;
const sequence = (n: Node, addr: Uint8Array) => n.app.auth.keeper.getAccount(n.app.queryContext(), addr)?.sequence;
const storageAt = (n: Node, addr: Uint8Array, slot: Uint8Array) => {
  const v = n.app.queryContext().store(EVM_STORE_KEY).get(Uint8Array.from([0x03, ...addr, ...slot]));
  return v === undefined ? 0n : BigInt('0x' + (hex(v) || '0'));
};

/** The whole EVM state of the app, put into @ethereumjs's MerkleStateManager: its root. */
async function referenceRoot(n: Node): Promise<string> {
  const ctx = n.app.queryContext();
  const sm = new MerkleStateManager({ common });
  const addrs = new Map<string, Uint8Array>();
  for (const acc of n.app.auth.keeper.iterateAccounts(ctx)) if (acc.address.length === 20) addrs.set(hex(acc.address), acc.address);
  const bank = ctx.store('bank');
  const p = Uint8Array.of(0x03, ...utf8(DENOM), 0x00);
  for (const e of bank.iterate(p, prefixEnd(p))) {
    const a = e.key.subarray(p.length + 1);
    if (a.length === 20) addrs.set(hex(a), Uint8Array.from(a));
  }
  const evm = ctx.store(EVM_STORE_KEY);
  for (const e of evm.iterate(Uint8Array.of(0x01), Uint8Array.of(0x02))) addrs.set(hex(e.key.subarray(1)), Uint8Array.from(e.key.subarray(1)));
  for (const a of addrs.values()) {
    const addr = new Address(a);
    const acc = n.app.auth.keeper.getAccount(ctx, a);
    await sm.modifyAccountFields(addr, { nonce: acc?.sequence ?? 0n, balance: n.app.bank.keeper.getBalance(ctx, a, DENOM).amount });
    const ch = evm.get(Uint8Array.of(0x01, ...a));
    if (ch !== undefined) await sm.putCode(addr, evm.get(Uint8Array.of(0x02, ...ch))!);
    const sp = Uint8Array.of(0x03, ...a);
    for (const e of evm.iterate(sp, prefixEnd(sp))) await sm.putStorage(addr, Uint8Array.from(e.key.subarray(21)), Uint8Array.from(e.value));
  }
  await sm.checkpoint();
  await sm.commit();
  return bytesToHex(await sm.getStateRoot());
}

const A = ETH[0]!;
const B = ETH[1]!;
const C = ETH[2]!;
const GWEI = 10n ** 9n;

t.test('ERC-20 deploy, legacy and EIP-1559 transfers, a revert, receipts and logs, the state root', async (t) => {
  const n = await startNode(t);
  const genesisRoot = bytesToHex(n.app.evm!.keeper.lastStateRoot);
  await n.block([]);
  t.equal(bytesToHex(n.app.evm!.keeper.lastStateRoot), await referenceRoot(n), 'block 1 (genesis accounts only): root equals MerkleStateManager');
  t.not(bytesToHex(n.app.evm!.keeper.lastStateRoot), genesisRoot, 'the genesis accounts are in the trie');

  // Deploy with an EIP-1559 tx at gas price 0 (the devnet accepts it).
  const deploy = signed(A.privateKey, { nonce: 0n, data: deployData(1_000_000n), gasLimit: 2_000_000n });
  const token = createContractAddress(new Address(A.address), 0n).bytes;
  const chk = await n.check(raw(deploy));
  t.equal(chk.code, 0, `CheckTx accepts the deploy: ${chk.log}`);
  const r1 = await n.block([raw(deploy)]);
  t.equal(r1.txResults[0]!.code, 0, r1.txResults[0]!.log);
  const ev = attrs(r1.txResults[0]!, 'ethereum_tx')[0]!;
  t.equal(ev.ethereumTxHash, bytesToHex(deploy.hash()), 'ethereum_tx carries the eth hash');
  t.equal(ev.contract, bytesToHex(token));
  t.equal(ev.txHash, hex(getCryptoBackend().sha256(raw(deploy))).toUpperCase(), 'and the CometBFT hash');
  t.equal(sequence(n, A.address), 1n, 'nonce = auth sequence');
  t.equal(storageAt(n, token, balanceSlot(A.address)), 1_000_000n, 'token balance of the deployer in the evm store');
  const rc = n.app.evm!.keeper.receiptByHash(deploy.hash())!;
  t.equal(rc.status, 1);
  t.equal(rc.height, 2n);
  t.same(rc.contractAddress, token);
  t.equal(rc.cumulativeGasUsed, rc.gasUsed);
  t.ok(rc.gasUsed > 21_000n);
  t.same(n.app.evm!.keeper.ethHashOf(rc.cometHash), deploy.hash(), 'CometBFT hash → eth hash');

  // Legacy (EIP-155) and EIP-1559 transfers in one block, with a gas price: fees come off the bank balance.
  const aBefore = bankBalance(n, A.address);
  const fcBefore = bankBalance(n, n.app.evm!.keeper.coinbase);
  const t1 = signed(A.privateKey, { type: 0, nonce: 1n, to: token, data: transferData(B.address, 100n), price: GWEI });
  const t2 = signed(A.privateKey, { type: 2, nonce: 2n, to: token, data: transferData(C.address, 50n), price: 2n * GWEI });
  const r2 = await n.block([raw(t1), raw(t2)]);
  t.same(r2.txResults.map((r) => r.code), [0, 0]);
  const [rc1, rc2] = n.app.evm!.keeper.blockReceipts(3n);
  t.equal(rc1!.type, 0);
  t.equal(rc2!.type, 2);
  t.equal(rc2!.cumulativeGasUsed, rc1!.gasUsed + rc2!.gasUsed, 'cumulative gas');
  t.equal(rc2!.firstLogIndex, 1);
  const fees = rc1!.gasUsed * GWEI + rc2!.gasUsed * 2n * GWEI;
  t.equal(bankBalance(n, A.address), aBefore - fees, 'the fees left the sender\'s bank balance');
  t.equal(bankBalance(n, n.app.evm!.keeper.coinbase) - fcBefore, fees, 'and reached the fee collector');
  t.equal(storageAt(n, token, balanceSlot(B.address)), 100n);
  t.equal(storageAt(n, token, balanceSlot(C.address)), 50n);
  const logs = n.app.evm!.keeper.blockLogs(3n);
  t.equal(logs.length, 2, 'the log index');
  t.same(logs[0]!.topics[0], TRANSFER_TOPIC);
  t.same(logs[0]!.address, token);
  t.equal(logs[1]!.txIndex, 1);
  t.equal(attrs(r2.txResults[1]!, 'tx_log').length, 1);
  // The tx_log attribute is the log as JSON, in this key order (Cosmos EVM's event).
  const l1 = logs[1]!;
  t.equal(
    attrs(r2.txResults[1]!, 'tx_log')[0]!.txLog,
    JSON.stringify({ address: bytesToHex(l1.address), topics: l1.topics.map((x) => bytesToHex(x)), data: bytesToHex(l1.data), blockNumber: 3, transactionHash: bytesToHex(t2.hash()), transactionIndex: 1, logIndex: 1, removed: false }),
    'the tx_log event: the log as JSON',
  );
  t.equal(n.app.evm!.keeper.blockSummary(3n)!.txCount, 2);

  // A revert: transfer more than B holds. Included with status 0, gas charged, nonce used.
  const bBefore = bankBalance(n, B.address);
  const bad = signed(B.privateKey, { nonce: 0n, to: token, data: transferData(C.address, 10_000n), price: GWEI, gasLimit: 100_000n });
  const r3 = await n.block([raw(bad)]);
  t.equal(r3.txResults[0]!.code, 0, 'a failed EVM tx is included');
  const fev = attrs(r3.txResults[0]!, 'ethereum_tx')[0]!;
  t.equal(fev.ethereumTxFailed, 'revert');
  const brc = n.app.evm!.keeper.receiptByHash(bad.hash())!;
  t.equal(brc.status, 0);
  t.ok(brc.gasUsed > 21_000n && brc.gasUsed < 100_000n);
  t.equal(r3.txResults[0]!.gasUsed, brc.gasUsed, 'ExecTxResult.gasUsed is the EVM gas');
  t.equal(bankBalance(n, B.address), bBefore - brc.gasUsed * GWEI, 'its gas was charged');
  t.equal(sequence(n, B.address), 1n);
  t.equal(storageAt(n, token, balanceSlot(C.address)), 50n, 'nothing moved');

  t.equal(bytesToHex(n.app.evm!.keeper.lastStateRoot), await referenceRoot(n), 'state root equals MerkleStateManager on the same state');
  t.same(n.app.evm!.keeper.stateRootAt(4n), n.app.evm!.keeper.lastStateRoot, 'the root of the height is recorded');

  // eth_getProof at the latest root verifies with @ethereumjs/mpt.
  const proof = await n.app.evm!.keeper.getProof(token, [balanceSlot(A.address)]);
  const verifier = await createMPT({ useKeyHashing: true });
  const val = await verifyMPTWithMerkleProof(verifier, n.app.evm!.keeper.lastStateRoot, token, proof.accountProof.map((p) => hexToBytes(p as `0x${string}`)));
  t.ok(val, 'account proof verifies against the state root');
  t.equal(BigInt(proof.storageProof[0]!.value), 1_000_000n - 150n);

  // balanceOf through a simulated call would need eth_call; the storage read above is the check.
  void balanceOfData;
});


t.test('one account model: a bank send to a 0x address, then an EVM tx from it; an EVM transfer to a new address', async (t) => {
  const n = await startNode(t);
  await n.block([]);
  const freshPriv = keccak(utf8('evm-module-fresh'));
  const fresh = { priv: freshPriv, address: privateToAddress(freshPriv) as Uint8Array };
  const S = COSMOS[0]!;
  const send = sendTx({ chainId: CHAIN_ID, from: S, to: n.app.addressCodec.encode(fresh.address), amount: [{ denom: DENOM, amount: 5n * 10n ** 18n }], accountNumber: 10n, sequence: 0n, fee: { amount: [{ denom: DENOM, amount: 100 }], gasLimit: 200_000n } });
  const r1 = await n.block([send]);
  t.equal(r1.txResults[0]!.code, 0, r1.txResults[0]!.log);
  t.equal(bankBalance(n, fresh.address), 5n * 10n ** 18n);
  t.equal(bytesToHex(n.app.evm!.keeper.lastStateRoot), await referenceRoot(n), 'a Cosmos-only block re-leafs the touched accounts');

  // The EVM sees the bank balance: send 1 chain of it on, to a brand-new address.
  const dest = privateToAddress(keccak(utf8('evm-module-dest')));
  t.equal(n.app.auth.keeper.getAccount(n.app.queryContext(), dest), undefined);
  const tx = signed(fresh.priv, { nonce: 0n, to: dest, value: 10n ** 18n, gasLimit: 21_000n, price: GWEI });
  const r2 = await n.block([raw(tx)]);
  t.equal(r2.txResults[0]!.code, 0, r2.txResults[0]!.log);
  t.equal(bankBalance(n, dest), 10n ** 18n, 'the EVM transfer moved the bank balance');
  t.equal(bankBalance(n, fresh.address), 4n * 10n ** 18n - 21_000n * GWEI);
  t.equal(sequence(n, fresh.address), 1n, 'the account the bank created now has sequence 1');
  t.ok(n.app.auth.keeper.getAccount(n.app.queryContext(), dest), 'the recipient got an auth account');
  t.equal(bytesToHex(n.app.evm!.keeper.lastStateRoot), await referenceRoot(n));

  // And a bank send from an EVM-funded key is not possible without a Cosmos signature, but a
  // Cosmos send into a contract-free 0x address then an EVM tx in the same block works in order.
  const send2 = sendTx({ chainId: CHAIN_ID, from: S, to: n.app.addressCodec.encode(dest), amount: [{ denom: DENOM, amount: 10n ** 18n }], accountNumber: 10n, sequence: 1n, fee: { amount: [{ denom: DENOM, amount: 100 }], gasLimit: 200_000n } });
  const destKey = keccak(utf8('evm-module-dest'));
  const back = signed(destKey, { nonce: 0n, to: fresh.address, value: 15n * 10n ** 17n, gasLimit: 21_000n });
  const r3 = await n.block([send2, raw(back)]);
  t.same(r3.txResults.map((r) => r.code), [0, 0], 'the EVM tx spends what the Cosmos tx before it in the block sent');
  t.equal(bankBalance(n, dest), 5n * 10n ** 17n);
  t.equal(bytesToHex(n.app.evm!.keeper.lastStateRoot), await referenceRoot(n), 'mixed block: root equals MerkleStateManager');
  const supply = n.app.bank.keeper.getSupply(n.app.queryContext(), DENOM).amount;
  t.equal(supply, DEV_BALANCE * BigInt(DEV.length), 'EVM execution conserves the supply');
});

t.test('the EVM caches kept across a block\'s txs stay what the block state holds', async (t) => {
  // Each case fails if an entry cached by an earlier tx of the block outlived a change to it.
  const n = await startNode(t);
  await n.block([]);
  const keeper = n.app.evm!.keeper;
  const token = createContractAddress(new Address(A.address), 0n).bytes;
  t.equal((await n.block([raw(signed(A.privateKey, { nonce: 0n, data: deployData(1_000_000n), gasLimit: 2_000_000n }))])).txResults[0]!.code, 0);
  const X = privateToAddress(keccak(utf8('evm-module-cache-x')));
  const Y = privateToAddress(keccak(utf8('evm-module-cache-y')));
  const transfer = (nonce: bigint, to: Uint8Array, amount: bigint) => raw(signed(A.privateKey, { nonce, to: token, data: transferData(to, amount), price: GWEI, gasLimit: 100_000n }));
  const S = COSMOS[0]!;
  const supply = () => n.app.bank.keeper.getSupply(n.app.queryContext(), DENOM).amount;
  const supply0 = supply();

  // Bank sends to the token's address and to B between EVM txs that touch both (each later tx
  // writes their records back: from a stale record it would undo the send), with a tx whose ante
  // fails in between.
  const pay = (nonce: bigint, to: Uint8Array) => raw(signed(A.privateKey, { nonce, to, value: 1n, price: GWEI, gasLimit: 21_000n }));
  const bank = (sequence: bigint, to: Uint8Array) => sendTx({ chainId: CHAIN_ID, from: S, to: n.app.addressCodec.encode(to), amount: [{ denom: DENOM, amount: 5n * 10n ** 18n }], accountNumber: 10n, sequence, fee: { amount: [{ denom: DENOM, amount: 100 }], gasLimit: 200_000n } });
  const b0 = bankBalance(n, B.address);
  const r1 = await n.block([transfer(1n, X, 10n), pay(2n, B.address), bank(0n, token), bank(1n, B.address), transfer(9n, X, 1n), transfer(3n, Y, 20n), pay(4n, B.address)]);
  t.same(r1.txResults.map((r) => r.code === 0), [true, true, true, true, false, true, true], r1.txResults.map((r) => r.log).join(' | '));
  t.equal(bankBalance(n, token), 5n * 10n ** 18n, 'the bank send to the token stays');
  t.equal(bankBalance(n, B.address), b0 + 5n * 10n ** 18n + 2n, 'the bank send to B stays');
  t.equal(storageAt(n, token, balanceSlot(X)), 10n);
  t.equal(storageAt(n, token, balanceSlot(Y)), 20n);
  t.equal(supply(), supply0, 'the supply is the sum of balances');

  // A tx whose run stage BaseApp drops after the keeper applied it: the next tx of the block
  // sees neither its nonce nor its token move.
  const dropped = transfer(5n, X, 7n);
  const execute = keeper.execute.bind(keeper);
  keeper.execute = async (ctx, etx) => {
    const out = await execute(ctx, etx);
    if (etx.raw === dropped) throw new Error('dropped by the test');
    return out;
  };
  const again = signed(A.privateKey, { nonce: 5n, to: token, data: transferData(Y, 9n), price: GWEI, gasLimit: 100_000n });
  const r2 = await n.block([dropped, raw(again)]);
  t.same(r2.txResults.map((r) => r.code === 0), [false, true]);
  t.equal(keeper.receiptByHash(again.hash())?.status, 1, 'the second tx ran with the nonce the first did not use');
  t.equal(storageAt(n, token, balanceSlot(X)), 10n, 'the dropped transfer moved nothing');
  t.equal(storageAt(n, token, balanceSlot(Y)), 29n);
  t.equal(sequence(n, A.address), 6n);

  // A simulation (over the check state, without the block's first tx) runs between two txs of
  // the block and reads X's token balance: the block's second tx must not see what it read.
  const sim = raw(signed(A.privateKey, { nonce: 6n, to: token, data: balanceOfData(X), gasLimit: 100_000n }));
  const second = transfer(7n, X, 2n);
  let simulated: Promise<ExecTxResult> | undefined;
  keeper.execute = (ctx, etx) => {
    if (etx.raw === second) simulated = n.app.simulate(sim);
    return execute(ctx, etx);
  };
  const r3 = await n.block([transfer(6n, X, 1n), second]);
  keeper.execute = execute;
  t.ok(simulated, 'the simulation ran inside the block');
  t.equal((await simulated!).code, 0);
  t.same(r3.txResults.map((r) => r.code), [0, 0]);
  t.same(keeper.blockReceipts(n.height()).map((r) => r.status), [1, 1]);
  t.equal(storageAt(n, token, balanceSlot(X)), 13n, 'both transfers to X counted');
  t.equal(bytesToHex(keeper.lastStateRoot), await referenceRoot(n), 'state root equals MerkleStateManager');
});

t.test('ante: nonce, balance, intrinsic gas, chain id, replay protection, blob txs; CheckTx sequencing', async (t) => {
  const n = await startNode(t);
  await n.block([]);
  const ok0 = signed(C.privateKey, { nonce: 0n, to: A.address, value: 1n, gasLimit: 21_000n });
  const ok1 = signed(C.privateKey, { nonce: 1n, to: A.address, value: 1n, gasLimit: 21_000n });
  t.equal((await n.check(raw(ok0))).code, 0);
  t.equal((await n.check(raw(ok1))).code, 0, 'the next nonce is admitted after the first');
  const dup = await n.check(raw(ok0));
  t.match(dup.log, /nonce too low/);
  const far = await n.check(raw(signed(C.privateKey, { nonce: 9n, to: A.address, gasLimit: 21_000n })));
  t.match(far.log, /nonce too high/);
  const poor = await n.check(raw(signed(C.privateKey, { nonce: 2n, to: A.address, value: DEV_BALANCE * 2n, gasLimit: 21_000n })));
  t.match(poor.log, /insufficient funds for gas \* price \+ value/);
  t.equal(poor.code, 5);
  const low = await n.check(raw(signed(C.privateKey, { nonce: 2n, to: A.address, gasLimit: 20_000n })));
  t.match(low.log, /intrinsic gas too low: have 20000, want 21000/);
  // 1,000 non-zero bytes: intrinsic 21,000 + 16 × 1,000; the EIP-7623 floor 21,000 + 10 × 4 × 1,000.
  const underFloor = await n.check(raw(signed(C.privateKey, { nonce: 2n, to: A.address, data: new Uint8Array(1000).fill(7), gasLimit: 50_000n })));
  t.match(underFloor.log, /insufficient gas for floor data gas cost: have 50000, want 61000/, 'a gas limit under the calldata floor is refused');
  const wrongChain = await n.check(raw(signed(C.privateKey, { nonce: 2n, to: A.address, gasLimit: 21_000n, chainId: 1n })));
  t.match(wrongChain.log, /invalid chain id for signer: have 1 want 9000/, 'wrong chain id refused');
  const unprot = signed(C.privateKey, { type: 0, nonce: 2n, to: A.address, gasLimit: 21_000n, unprotected: true });
  t.match((await n.check(raw(unprot))).log, /only replay-protected \(EIP-155\) transactions allowed over RPC/);
  const blob = Uint8Array.of(0x03, 0xc0);
  t.match((await n.check(blob)).log, /blob transactions \(type 0x03\) are not supported/);
  const garbage = await n.check(Uint8Array.of(0xf8, 0x01, 0x02));
  t.not(garbage.code, 0, 'bad RLP refused');

  // In a block: unprotected txs are valid (the flag is an RPC-admission rule); a wrong nonce fails without effects.
  const r = await n.block([raw(ok0), raw(ok1), raw(unprot), raw(signed(C.privateKey, { nonce: 7n, to: A.address, gasLimit: 21_000n }))]);
  t.same(r.txResults.map((x) => x.code === 0), [true, true, true, false]);
  t.equal(sequence(n, C.address), 3n);

  const n2 = await startNode(t, { allowUnprotected: true });
  await n2.block([]);
  const u2 = signed(C.privateKey, { type: 0, nonce: 0n, to: A.address, gasLimit: 21_000n, unprotected: true });
  t.equal((await n2.check(raw(u2))).code, 0, 'allow-unprotected-txs admits it');
});

t.test('app hash: deterministic across nodes, changed by EVM state; a restart recomputes nothing wrong', async (t) => {
  const dirA = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  t.teardown(() => fs.rmSync(dirA, { recursive: true, force: true }));
  const a = await startNode(t, { dir: dirA });
  const b = await startNode(t);
  const deploy = raw(signed(A.privateKey, { nonce: 0n, data: deployData(1000n), gasLimit: 2_000_000n }));
  const token = createContractAddress(new Address(A.address), 0n).bytes;
  const blocks: Uint8Array[][] = [[], [deploy], [raw(signed(A.privateKey, { nonce: 1n, to: token, data: transferData(B.address, 7n) }))]];
  const hashes: string[] = [];
  for (const txs of blocks) {
    const ra = await a.block(txs);
    const rb = await b.block(txs);
    t.equal(hex(ra.appHash), hex(rb.appHash), `height ${a.height()}: same app hash on both nodes`);
    hashes.push(hex(ra.appHash));
  }
  t.not(hashes[1], hashes[0]);
  t.not(hashes[2], hashes[1], 'an ERC-20 transfer changes the app hash');
  const root = bytesToHex(a.app.evm!.keeper.lastStateRoot);

  // Restart a: the module reads its committed root; the next block agrees with b's.
  await a.close();
  const a2 = await startNode(t, { dir: dirA });
  t.equal(a2.height(), 3n);
  t.equal(bytesToHex(a2.app.evm!.keeper.lastStateRoot), root, 'the state root survives the restart');
  t.equal(a2.app.evm!.keeper.chainId, EVM_CHAIN_ID, 'and the chain id');
  const next = [raw(signed(B.privateKey, { nonce: 0n, to: token, data: transferData(C.address, 3n) })), raw(signed(A.privateKey, { nonce: 2n, to: C.address, value: 5n, gasLimit: 21_000n }))];
  const ra = await a2.block(next);
  const rb = await b.block(next);
  t.same(ra.txResults.map((r) => r.code), [0, 0]);
  t.equal(hex(ra.appHash), hex(rb.appHash), 'after the restart, the same app hash as the node that kept running');
  t.equal(bytesToHex(a2.app.evm!.keeper.lastStateRoot), await referenceRoot(a2));
  t.equal(storageAt(a2, token, balanceSlot(C.address)), 3n);

  // A re-run of a finalized-but-uncommitted height gives the same result (discardPending).
  const txs = [raw(signed(C.privateKey, { nonce: 0n, to: A.address, value: 1n, gasLimit: 21_000n }))];
  const req = (h: bigint): RequestFinalizeBlock => ({ txs, decidedLastCommit: { round: 0, votes: [] }, hash: new Uint8Array(32), height: h, time: GENESIS_TIME + h * 1_000_000_000n, nextValidatorsHash: new Uint8Array(32), proposerAddress: new Uint8Array(20) });
  const first = await a2.app.finalizeBlock(req(5n));
  const again = await a2.app.finalizeBlock(req(5n));
  t.equal(hex(again.appHash), hex(first.appHash));
  a2.storage.transactionSync(() => a2.app.commit());
  t.equal(a2.app.evm!.keeper.blockReceipts(5n).length, 1, 'one receipt, not two');
  void word;
});

t.test('sender recovery on the worker pool: one call for the block, same senders as inline, bad signatures left to the ante', async (t) => {
  const n = await startNode(t);
  await n.block([]);
  const k = n.app.evm!.keeper;
  const txs = [signed(A.privateKey, { nonce: 0n, to: B.address, gasLimit: 21_000n }), signed(B.privateKey, { type: 0, nonce: 0n, to: A.address, gasLimit: 21_000n })];
  const etxs = txs.map((x) => k.decode(x.serialize()));
  // A signature over other bytes: recovers to some other address (or none) — never A or B.
  const forged = k.decode(signed(C.privateKey, { nonce: 0n, to: A.address, gasLimit: 21_000n }).serialize());
  await k.preVerify([...etxs, forged]);
  t.same(etxs.map((e) => hex(e.sender!)), [hex(A.address), hex(B.address)], 'pool-recovered senders');
  t.same(hex(etxs[0]!.tx.getSenderAddress().bytes), hex(A.address), 'runTx sees the pool\'s sender');
  t.same(hex(forged.sender!), hex(C.address));
  const r = await n.block(txs.map((x) => x.serialize()));
  t.same(r.txResults.map((x) => x.code), [0, 0], 'both run with pool-recovered senders');
  t.equal(sequence(n, A.address), 1n);
  t.equal(sequence(n, B.address), 1n);
});

t.test('sender hints: what CheckTx recovered and hashed on one app is handed to another (the executor thread) with the block', async (t) => {
  const a = await startNode(t);
  const b = await startNode(t);
  await a.block([]);
  await b.block([]);
  const ka = a.app.evm!.keeper;
  const kb = b.app.evm!.keeper;
  t.equal(ka.takeSenderHints(), undefined, 'nothing collected before sharing is on');
  ka.shareSenderHints();
  const txs = [signed(A.privateKey, { nonce: 0n, to: B.address, value: 3n, gasLimit: 21_000n }), signed(B.privateKey, { type: 0, nonce: 0n, to: C.address, value: 4n, gasLimit: 21_000n })];
  for (const x of txs) t.equal((await a.check(x.serialize())).code, 0);
  const packed = ka.takeSenderHints()!;
  t.equal(packed.length, 8 + 2 * 84, 'two hints: SHA-256 of the bytes, sender, tx hash each');
  t.equal(ka.takeSenderHints(), undefined, 'taken once');
  // Another chain id's hints are ignored.
  const foreign = Uint8Array.from(packed);
  foreign[7]! ^= 1;
  kb.addSenderHints(foreign);
  const untouched = kb.decode(Uint8Array.from(txs[0]!.serialize()));
  await kb.preVerify([kb.decode(Uint8Array.from(txs[1]!.serialize()))]);
  t.equal(kb.hintStats.hinted, 0, 'a foreign chain id: no hint used');
  kb.addSenderHints(packed);
  // Fresh copies of the bytes, as the executor thread decodes them from the block.
  const copies = txs.map((x) => Uint8Array.from(x.serialize()));
  const rb = await b.block(copies);
  const ra = await a.block(txs.map((x) => x.serialize()));
  t.equal(kb.hintStats.hinted, 2, 'both senders came from the hints');
  t.same(rb.txResults.map((r) => r.code), [0, 0]);
  t.equal(hex(rb.appHash), hex(ra.appHash), 'the same app hash as the app that recovered them itself');
  t.same(kb.blockReceipts(b.height()).map((r) => hex(r.ethHash)), txs.map((x) => hex(x.hash())), 'receipts under the real tx hashes');
  t.same(kb.blockReceipts(b.height()).map((r) => hex(r.from)), [hex(A.address), hex(B.address)]);
  t.equal(sequence(b, B.address), 1n);
  t.equal(untouched.sender, undefined);
});

t.test('decode by identity: one EvmTx per byte array (CheckTx decodes once), a copy decodes afresh; the jump-destination cache installs', async (t) => {
  const n = await startNode(t);
  const k = n.app.evm!.keeper;
  const raw = signed(A.privateKey, { nonce: 0n, to: B.address, gasLimit: 21_000n }).serialize();
  const e1 = k.decode(raw);
  t.equal(k.decode(raw), e1, 'the same bytes: the same EvmTx');
  t.equal(hex(k.sender(e1)), hex(A.address));
  t.equal(hex(k.decode(raw).sender!), hex(A.address), 'its recovered sender is kept (preVerify has nothing to do)');
  const copy = k.decode(Uint8Array.from(raw));
  t.not(copy, e1, 'a copy of the bytes: decoded afresh');
  t.equal(copy.sender, undefined);
  t.equal(hex(copy.tx.hash()), hex(e1.tx.hash()));
  t.throws(() => k.decode(raw.subarray(0, raw.length - 1)), 'bad bytes still throw');
  // @ethereumjs/evm's Interpreter is reached by file (not exported): this fails if the layout moves.
  t.equal(await installJumpDestCache(), true, 'the jump-destination cache is active (installed)');
});

t.test('EIP-2930 and EIP-7702 txs: the authority\'s nonce is its auth sequence, its delegation is code', async (t) => {
  const n = await startNode(t);
  await n.block([]);
  const deploy = signed(A.privateKey, { nonce: 0n, data: deployData(1000n), gasLimit: 2_000_000n });
  const token = createContractAddress(new Address(A.address), 0n).bytes;
  const al = createTx(
    { type: 1, nonce: 1n, to: bytesToHex(token), data: transferData(B.address, 5n), gasPrice: 0n, gasLimit: 100_000n, accessList: [{ address: bytesToHex(token), storageKeys: [] }] },
    { common },
  ).sign(A.privateKey);
  // C (a funded dev account with sequence 0) delegates its code to the token; A sends the set-code tx.
  const auth = eoaCode7702SignAuthorization({ chainId: bigIntToHex(EVM_CHAIN_ID), address: bytesToHex(token), nonce: bigIntToHex(0n) }, C.privateKey);
  const setCode = createTx(
    { type: 4, nonce: 2n, to: bytesToHex(C.address), data: balanceOfData(C.address), maxFeePerGas: 0n, maxPriorityFeePerGas: 0n, gasLimit: 200_000n, authorizationList: [auth] },
    { common },
  ).sign(A.privateKey);
  const r = await n.block([deploy.serialize(), al.serialize(), setCode.serialize()]);
  t.same(r.txResults.map((x) => x.code), [0, 0, 0], r.txResults.map((x) => x.log).join(' | '));
  t.same(n.app.evm!.keeper.blockReceipts(2n).map((x) => [x.type, x.status]), [[2, 1], [1, 1], [4, 1]]);
  t.equal(storageAt(n, token, balanceSlot(B.address)), 5n);
  t.equal(sequence(n, C.address), 1n, 'the authorization bumped the authority\'s auth sequence');
  const ch = n.app.queryContext().store(EVM_STORE_KEY).get(Uint8Array.of(0x01, ...C.address));
  t.ok(ch, 'the delegation designator is the authority\'s code');
  t.equal(bytesToHex(n.app.evm!.keeper.lastStateRoot), await referenceRoot(n), 'root equals MerkleStateManager');
});

t.test('genesis: app_state.evm chain id and accounts with code and storage; reads at a height', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const storage = Storage.open({ file: path.join(dir, 'chaind.mdb'), noSync: true });
  t.teardown(() => storage.close());
  const names = createNames({ upstreamNames: false });
  const app = createChainApp({ db: storage.app.latest, history: storage.app, names, bech32Prefix: 'chain', openDatabase: (x) => storage.openNamedDb(x) });
  const appState = buildAppState({ accounts: DEV.map((a) => ({ address: a.address, balance: DEV_BALANCE })), names, evmChainId: 4242 }) as any;
  const contract = hexToBytes('0x00000000000000000000000000000000000c0de1');
  const runtime = '0x600160005401600055'; // slot0 += 1
  appState.evm.accounts = [{ address: bytesToHex(contract), code: runtime, storage: { '0x0': '0x05' } }];
  await app.initChain({ time: GENESIS_TIME, chainId: CHAIN_ID, consensusParams: defaultConsensusParams(), validators: [], appStateBytes: utf8(JSON.stringify(appState)), initialHeight: 1n });
  app.setConsensusParams(defaultConsensusParams());
  const k = app.evm!.keeper;
  t.equal(k.chainId, 4242n, 'the chain id from genesis');
  const c4242 = createEvmCommon({ chainId: 4242n });
  const req = (txs: Uint8Array[], h: bigint): RequestFinalizeBlock => ({ txs, decidedLastCommit: { round: 0, votes: [] }, hash: new Uint8Array(32), height: h, time: GENESIS_TIME + h * 1_000_000_000n, nextValidatorsHash: new Uint8Array(32), proposerAddress: new Uint8Array(20) });
  await app.finalizeBlock(req([], 1n));
  storage.transactionSync(() => app.commit());
  const call = createTx({ type: 2, nonce: 0n, to: bytesToHex(contract), maxFeePerGas: 0n, maxPriorityFeePerGas: 0n, gasLimit: 100_000n }, { common: c4242 }).sign(A.privateKey);
  const r = await app.finalizeBlock(req([call.serialize()], 2n));
  storage.transactionSync(() => app.commit());
  t.equal(r.txResults[0]!.code, 0, r.txResults[0]!.log);
  t.equal(bytesToHex(k.code(app.queryContext(), contract)), runtime, 'code from genesis');
  t.equal(BigInt(bytesToHex(k.storage(app.queryContext(), contract, new Uint8Array(32)))), 6n, 'the genesis slot, incremented by the call');
  t.equal(BigInt(bytesToHex(k.storage(app.queryContext(1n), contract, new Uint8Array(32)))), 5n, 'and at height 1, from the versioned store');
  t.equal(k.account(app.queryContext(1n), A.address)!.nonce, 0n);
  t.equal(k.account(app.queryContext(2n), A.address)!.nonce, 1n);
  t.not(bytesToHex(k.stateRootAt(1n)!), bytesToHex(k.stateRootAt(2n)!));
  const p1 = await k.getProof(contract, [new Uint8Array(32)], 1n);
  t.equal(p1.storageProof[0]!.value, '0x5', 'a proof at height 1 answers the state after height 1');
  t.equal(bytesToHex(k.lastStateRoot), await referenceRootOf(app), 'root equals MerkleStateManager');
});

async function referenceRootOf(app: ChainApp): Promise<string> {
  return referenceRoot({ app } as Node);
}

t.test('SELFDESTRUCT to itself in the creating tx burns its value: the supply follows (sum of balances = supply)', async (t) => {
  const n = await startNode(t);
  await n.block([]);
  const supply0 = n.app.bank.keeper.getSupply(n.app.queryContext(), DENOM).amount;
  // init code: ADDRESS SELFDESTRUCT — the new contract destroys itself, beneficiary itself.
  const burn = signed(A.privateKey, { nonce: 0n, data: hexToBytes('0x30ff'), value: 7n * 10n ** 18n, gasLimit: 100_000n });
  const r = await n.block([raw(burn)]);
  t.equal(r.txResults[0]!.code, 0, r.txResults[0]!.log);
  t.equal(n.app.evm!.keeper.receiptByHash(burn.hash())!.status, 1);
  const created = createContractAddress(new Address(A.address), 0n).bytes;
  t.equal(bankBalance(n, created), 0n, 'the contract is gone with its balance');
  const supply1 = n.app.bank.keeper.getSupply(n.app.queryContext(), DENOM).amount;
  t.equal(supply1, supply0 - 7n * 10n ** 18n, 'the supply went down by the burned value');
  let sum = 0n;
  const p = Uint8Array.of(0x02);
  for (const e of n.app.queryContext().store('bank').iterate(p, prefixEnd(p))) {
    if (Buffer.from(e.key.subarray(2 + e.key[1]!)).toString() === DENOM) sum += BigInt(Buffer.from(e.value).toString());
  }
  t.equal(sum, supply1, 'sum of balances = supply');
  t.equal(bytesToHex(n.app.evm!.keeper.lastStateRoot), await referenceRoot(n));
});
