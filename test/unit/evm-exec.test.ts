/**
 * Block execution over the flat state: an ERC-20 deploy, transfers, a revert, logs, a skipped tx;
 * the state root against @ethereumjs's own MerkleStateManager on the same txs, block after block,
 * with both crypto backends; EIP-1186 proofs; the LMDB-backed stores.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Common } from '@ethereumjs/common';
import { verifyMPTWithMerkleProof, createMPT } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { MerkleStateManager, getMerkleStateProof } from '@ethereumjs/statemanager';
import { createTx } from '@ethereumjs/tx';
import { Address, bigIntToHex, bytesToBigInt, createContractAddress, eoaCode7702SignAuthorization, bytesToHex, hexToBytes } from '@ethereumjs/util';
import { createVM, runTx, type VM } from '@ethereumjs/vm';
import { open } from 'lmdb';
import t, { type Test } from 'tap';
import { availableCryptoBackends, type CryptoBackend } from '../../src/crypto/backend.js';
import {
  type BlockEnv,
  EvmContext,
  type ExecTx,
  KVFlatState,
  LmdbKV,
  MemoryKV,
  StateTrie,
  createEvmCommon,
  recoverSender,
} from '../../src/evm/index.js';
import {
  type Key,
  TRANSFER_TOPIC,
  allowanceData,
  approveData,
  transferFromData,
  balanceOfData,
  balanceSlot,
  deployData,
  makeKeys,
  signTx,
  transferData,
  word,
} from '../helpers/evm.js';

const CHAIN_ID = 9001n;
const ETH = 10n ** 18n;

function env(n: bigint): BlockEnv {
  return {
    number: n,
    timestamp: 1_700_000_000n + n,
    coinbase: hexToBytes('0x00000000000000000000000000000000000000c0'),
    gasLimit: 30_000_000n,
    baseFeePerGas: 0n,
    prevRandao: new Uint8Array(32).fill(7),
  };
}

interface Chain {
  ctx: EvmContext;
  ref: { vm: VM; sm: MerkleStateManager };
  common: Common;
}

async function newChain(t: Test, crypto: CryptoBackend, keys: Key[], kv = new MemoryKV()): Promise<Chain> {
  const common = createEvmCommon({ chainId: CHAIN_ID, crypto });
  const ctx = await EvmContext.create({ common, crypto, flat: new KVFlatState(kv), trie: new StateTrie({ nodes: kv, crypto }) });
  const g = await ctx.applyGenesis(keys.map((k) => ({ address: k.address, balance: 1000n * ETH })));
  ctx.persistBlock(g);
  const sm = new MerkleStateManager({ common });
  for (const k of keys) await sm.modifyAccountFields(new Address(k.address), { balance: 1000n * ETH });
  const vm = await createVM({ common, stateManager: sm });
  t.same(bytesToHex(g.stateRoot), bytesToHex(await sm.getStateRoot()), 'genesis root equals MerkleStateManager');
  return { ctx, ref: { vm, sm }, common };
}

/** Runs the block on both; returns ours. The reference runs the same txs through runTx. */
async function runBoth(chain: Chain, n: bigint, txs: ExecTx[]) {
  const res = await chain.ctx.executeBlock(env(n), txs);
  chain.ctx.persistBlock(res);
  const block = chain.ctx.makeBlock(env(n));
  const refGas: bigint[] = [];
  for (const { tx } of txs) {
    try {
      const r = await runTx(chain.ref.vm, { tx, block, skipHardForkValidation: true });
      refGas.push(r.totalGasSpent);
    } catch {
      refGas.push(0n);
    }
  }
  const refRoot = await chain.ref.sm.getStateRoot();
  return { res, refRoot, refGas };
}

function exec(common: Common, key: Key, spec: Parameters<typeof signTx>[2], crypto: CryptoBackend): ExecTx {
  const tx = signTx(common, key, spec);
  return { tx, sender: recoverSender(tx, crypto) };
}

async function balanceOf(ctx: EvmContext, token: Uint8Array, who: Uint8Array): Promise<bigint> {
  const r = await ctx.call({ to: token, data: balanceOfData(who), gasLimit: 1_000_000n });
  return bytesToBigInt(r.execResult.returnValue);
}

// Signing with @noble and running blocks on both crypto backends takes seconds alone and many
// times that on a loaded 2-core machine: more than tap's default 30 s per file.
t.setTimeout(240_000);

for (const crypto of availableCryptoBackends()) {
  t.test(`ERC-20 blocks and state roots (${crypto.name} crypto)`, async (t) => {
    const keys = makeKeys(4);
    const [a, b, c, d] = keys as [Key, Key, Key, Key];
    const chain = await newChain(t, crypto, keys);
    const { common, ctx } = chain;

    // Block 1: deploy (supply 1,000,000 to A), A→B 250, B→C 300 (reverts: B has 250),
    // a plain transfer C→D 1 ETH, a legacy tx from D with a wrong nonce (skipped).
    const deploy = exec(common, a, { nonce: 0n, data: deployData(1_000_000n), gasLimit: 2_000_000n }, crypto);
    const token = createContractAddress(new Address(a.address), 0n).bytes;
    const txs1 = [
      deploy,
      exec(common, a, { nonce: 1n, to: token, data: transferData(b.address, 250n) }, crypto),
      exec(common, b, { nonce: 0n, to: token, data: transferData(c.address, 300n) }, crypto),
      exec(common, c, { type: 0, nonce: 0n, to: d.address, value: ETH, gasLimit: 21_000n }, crypto),
      exec(common, d, { type: 1, nonce: 5n, to: a.address, value: 1n, gasLimit: 21_000n }, crypto),
    ];
    const { res, refRoot, refGas } = await runBoth(chain, 1n, txs1);
    const rc = res.receipts;
    t.equal(rc.length, 5);
    t.same(
      rc.map((r) => r.status),
      [1, 1, 0, 1, 0],
      'statuses: deploy, transfer, revert, plain, skipped',
    );
    t.same(bytesToHex(rc[0]!.contractAddress!), bytesToHex(token), 'contract address');
    t.equal(rc[1]!.contractAddress, undefined);
    t.equal(rc[2]!.error, 'revert', 'the failing transfer reverted');
    t.ok(rc[2]!.gasUsed > 21_000n, 'the reverted tx was charged gas');
    t.equal(rc[4]!.skipped, true, 'wrong nonce: skipped');
    t.equal(rc[4]!.gasUsed, 0n);
    t.match(rc[4]!.error, /nonce/);
    t.same(
      rc.map((r) => r.gasUsed),
      refGas,
      'gas per tx equals a plain runTx on MerkleStateManager',
    );
    let cum = 0n;
    for (const r of rc) {
      cum += r.gasUsed;
      t.equal(r.cumulativeGasUsed, cum);
    }
    t.equal(res.gasUsed, cum);
    t.equal(rc[3]!.gasUsed, 21_000n, 'plain transfer costs 21000');
    // Logs: Transfer(0→A) on deploy, Transfer(A→B, 250); none from the reverted tx.
    t.equal(rc[0]!.logs.length, 1);
    const [addr, topics, data] = rc[1]!.logs[0]!;
    t.same(bytesToHex(addr), bytesToHex(token));
    t.same(topics.map((x) => bytesToHex(x)), [TRANSFER_TOPIC, word(a.address), word(b.address)].map((x) => bytesToHex(x)));
    t.equal(bytesToBigInt(data), 250n);
    t.equal(rc[2]!.logs.length, 0);
    t.equal(rc[1]!.logsBloom.some((x) => x !== 0), true, 'bloom set for a tx with logs');
    t.equal(rc[3]!.logsBloom.every((x) => x === 0), true, 'bloom empty without logs');
    t.same(bytesToHex(res.stateRoot), bytesToHex(refRoot), 'block 1 root equals MerkleStateManager');

    t.equal(await balanceOf(ctx, token, a.address), 1_000_000n - 250n);
    t.equal(await balanceOf(ctx, token, b.address), 250n);
    t.equal(await balanceOf(ctx, token, c.address), 0n);
    t.equal(ctx.stateManager.getAccountRecord(d.address)!.balance, 1001n * ETH);
    t.equal(ctx.stateManager.getAccountRecord(b.address)!.nonce, 1n, 'the reverted tx still bumped the nonce');

    // Block 2 (storage roots now start from the flat state): B→C 100, C→D 40, A→D 1 with an
    // overflow-free revert (D→A 1000: D has 40), plus coinbase fees accumulating.
    const txs2 = [
      exec(common, b, { nonce: 1n, to: token, data: transferData(c.address, 100n) }, crypto),
      exec(common, c, { nonce: 1n, to: token, data: transferData(d.address, 40n) }, crypto),
      exec(common, d, { nonce: 0n, to: token, data: transferData(a.address, 1000n) }, crypto),
      exec(common, a, { nonce: 2n, to: token, data: transferData(d.address, 1n) }, crypto),
    ];
    const r2 = await runBoth(chain, 2n, txs2);
    t.same(
      r2.res.receipts.map((r) => r.status),
      [1, 1, 0, 1],
    );
    t.same(bytesToHex(r2.res.stateRoot), bytesToHex(r2.refRoot), 'block 2 root equals MerkleStateManager');
    t.equal(await balanceOf(ctx, token, d.address), 41n);

    // Block 3: a tx that writes storage and then reverts, between two that commit, inside the
    // one block checkpoint. D approves B for 100 (D holds 41); B's transferFrom(D→C, 50) first
    // lowers the allowance to 50, then _move fails: the allowance write must be undone.
    const txs3 = [
      exec(common, d, { nonce: 1n, to: token, data: approveData(b.address, 100n) }, crypto),
      exec(common, b, { nonce: 2n, to: token, data: transferFromData(d.address, c.address, 50n) }, crypto),
      exec(common, b, { nonce: 3n, to: token, data: transferFromData(d.address, c.address, 30n) }, crypto),
    ];
    const r3 = await runBoth(chain, 3n, txs3);
    t.same(
      r3.res.receipts.map((r) => r.status),
      [1, 0, 1],
    );
    t.same(bytesToHex(r3.res.stateRoot), bytesToHex(r3.refRoot), 'block 3 root equals MerkleStateManager');
    t.equal(bytesToBigInt((await ctx.call({ to: token, data: allowanceData(d.address, b.address) })).execResult.returnValue), 70n, 'allowance 100 - 30: the reverted write is gone');
    t.equal(await balanceOf(ctx, token, d.address), 11n);
    t.equal(await balanceOf(ctx, token, c.address), 90n);

    // Block 4: an EIP-7702 set-code tx: C delegates its code to the token and A calls C's (the
    // token's) balanceOf in the same tx. The authority is recovered by @ethereumjs/util; the
    // delegation lands in the flat state like any code hash.
    const auth = eoaCode7702SignAuthorization({ chainId: bigIntToHex(CHAIN_ID), address: bytesToHex(token), nonce: bigIntToHex(2n) }, c.priv);
    const setCode = createTx(
      { type: 4, nonce: 3n, to: bytesToHex(c.address), data: balanceOfData(c.address), maxFeePerGas: 1n, maxPriorityFeePerGas: 1n, gasLimit: 200_000n, authorizationList: [auth] },
      { common },
    ).sign(a.priv);
    const r4 = await runBoth(chain, 4n, [{ tx: setCode, sender: recoverSender(setCode, crypto) }]);
    t.same(
      r4.res.receipts.map((r) => r.status),
      [1],
    );
    t.same(bytesToHex(r4.res.stateRoot), bytesToHex(r4.refRoot), 'block 4 (7702) root equals MerkleStateManager');
    const cCode = await ctx.stateManager.getCode(new Address(c.address));
    t.equal(bytesToHex(cCode), '0xef0100' + bytesToHex(token).slice(2), 'C carries the delegation designator');
    t.equal(ctx.stateManager.getAccountRecord(c.address)!.nonce, 3n, 'the authorization bumped C\'s nonce');

    // Proofs at the new root: same bytes as @ethereumjs's getMerkleStateProof, and they verify.
    const slots = [balanceSlot(a.address), balanceSlot(d.address), word(99n)];
    const ours = await ctx.trie.getProof(token, slots);
    const theirs = await getMerkleStateProof(chain.ref.sm, new Address(token), slots);
    // Values are quantities as geth writes them ("0xf4145"); @ethereumjs writes raw bytes ("0x0f4145").
    const theirsQ = { ...theirs, storageProof: theirs.storageProof.map((p) => ({ ...p, value: `0x${BigInt(p.value).toString(16)}` })) };
    t.same(ours, theirsQ, 'EIP-1186 proof equals @ethereumjs getMerkleStateProof');
    const verifier = await createMPT({ useKeyHashing: true });
    const acct = await verifyMPTWithMerkleProof(verifier, r4.res.stateRoot, token, ours.accountProof.map((x) => hexToBytes(x as `0x${string}`)));
    t.ok(acct, 'account proof verifies against the root');
    const fields = RLP.decode(acct!) as Uint8Array[];
    t.same(bytesToHex(fields[2]!), ours.storageHash);
    for (const sp of ours.storageProof) {
      const v = await verifyMPTWithMerkleProof(
        await createMPT({ useKeyHashing: true }),
        hexToBytes(ours.storageHash as `0x${string}`),
        hexToBytes(sp.key as `0x${string}`),
        sp.proof.map((x) => hexToBytes(x as `0x${string}`)),
      );
      t.equal(v === null ? 0n : bytesToBigInt(RLP.decode(v) as Uint8Array), BigInt(sp.value), `slot ${sp.key} proven`);
    }
    // A proof of absence for an account that does not exist.
    const none = await ctx.trie.getProof(hexToBytes('0x00000000000000000000000000000000000000ab'));
    t.equal(
      await verifyMPTWithMerkleProof(
        await createMPT({ useKeyHashing: true }),
        r4.res.stateRoot,
        hexToBytes('0x00000000000000000000000000000000000000ab'),
        none.accountProof.map((x) => hexToBytes(x as `0x${string}`)),
      ),
      null,
      'absence proof verifies',
    );
  });
}


t.test('a sender that does not match the signature aborts the block and leaves no trace', async (t) => {
  const crypto = availableCryptoBackends()[0]!;
  const keys = makeKeys(3, 'mismatch');
  const chain = await newChain(t, crypto, keys);
  const good = exec(chain.common, keys[0]!, { nonce: 0n, to: keys[1]!.address, value: 5n, gasLimit: 21_000n }, crypto);
  const bad = { ...exec(chain.common, keys[1]!, { nonce: 0n, to: keys[0]!.address, value: 5n, gasLimit: 21_000n }, crypto), sender: keys[2]!.address };
  const root = chain.ctx.trie.root;
  await t.rejects(chain.ctx.executeBlock(env(1n), [good, bad]), { code: 'EVM_BLOCK_SENDER_MISMATCH' });
  t.equal(chain.ctx.stateManager.checkpointDepth, 0);
  t.equal(chain.ctx.stateManager.isDirty(), true, 'dirty marks stay, values are reverted');
  t.equal(chain.ctx.stateManager.getAccountRecord(keys[0]!.address)!.nonce, 0n, 'the first tx was rolled back');
  const res = await chain.ctx.executeBlock(env(1n), [good]);
  t.not(bytesToHex(res.stateRoot), bytesToHex(root));
  await runTx(chain.ref.vm, { tx: good.tx, block: chain.ctx.makeBlock(env(1n)), skipHardForkValidation: true });
  t.equal(bytesToHex(res.stateRoot), bytesToHex(await chain.ref.sm.getStateRoot()), 'the retried block equals MerkleStateManager');
});

t.test('empty state root', async (t) => {
  const kv = new MemoryKV();
  const trie = new StateTrie({ nodes: kv });
  t.equal(bytesToHex(trie.root), '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421');
  const r = await trie.commit({ accounts: [], storage: [], code: [] }, new KVFlatState(kv));
  t.equal(bytesToHex(r.stateRoot), '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421');
  t.equal(r.nodes.length, 0);
});

t.test('only reachable trie nodes are written', async (t) => {
  const crypto = availableCryptoBackends()[0]!;
  const keys = makeKeys(40, 'reach');
  const kv = new MemoryKV();
  const chain = await newChain(t, crypto, keys, kv);
  const txs = keys.slice(0, 20).map((k, i) =>
    exec(chain.common, k, { nonce: 0n, to: keys[(i + 1) % 40]!.address, value: 5n, gasLimit: 21_000n }, crypto),
  );
  const before = [...kv.map.keys()].filter((k) => k.charCodeAt(0) === 0x04).length;
  const res = await chain.ctx.executeBlock(env(1n), txs);
  chain.ctx.persistBlock(res);
  // Every written node is reachable from the new root (walk it), so the count is bounded by the
  // trie size: 40 accounts → far fewer nodes than the ~20 puts × path length the trie produced.
  const after = [...kv.map.keys()].filter((k) => k.charCodeAt(0) === 0x04).length;
  t.ok(res.nodes.length > 0 && res.nodes.length <= 60, `nodes written: ${res.nodes.length}`);
  t.equal(after - before, res.nodes.length);
  // The whole trie is readable from the store: every account's proof verifies.
  for (const k of keys) {
    const p = await chain.ctx.trie.getProof(k.address);
    const v = await verifyMPTWithMerkleProof(
      await createMPT({ useKeyHashing: true }),
      res.stateRoot,
      k.address,
      p.accountProof.map((x) => hexToBytes(x as `0x${string}`)),
    );
    t.ok(v, 'account provable');
  }
});

t.test('LMDB-backed flat state and trie: same root, survives reopening', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'chaind-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const crypto = availableCryptoBackends()[0]!;
  const keys = makeKeys(3, 'lmdb');
  const [a, b] = keys as [Key, Key];
  const common = createEvmCommon({ chainId: CHAIN_ID, crypto });
  const txsFor = () => [
    exec(common, a, { nonce: 0n, data: deployData(500n), gasLimit: 2_000_000n }, crypto),
    exec(common, a, { nonce: 1n, to: createContractAddress(new Address(a.address), 0n).bytes, data: transferData(b.address, 7n) }, crypto),
  ];
  const token = createContractAddress(new Address(a.address), 0n).bytes;

  const mem = await newChain(t, crypto, keys);
  const memRes = await mem.ctx.executeBlock(env(1n), txsFor());

  let root: Uint8Array;
  {
    const env0 = open({ path: dir });
    const db = env0.openDB({ name: 'evm', keyEncoding: 'binary', encoding: 'binary' });
    const kv = new LmdbKV(db as never);
    const ctx = await EvmContext.create({ common, flat: new KVFlatState(kv), trie: new StateTrie({ nodes: kv, crypto }) });
    const g = await ctx.applyGenesis(keys.map((k) => ({ address: k.address, balance: 1000n * ETH })));
    db.transactionSync(() => ctx.persistBlock(g));
    const res = await ctx.executeBlock(env(1n), txsFor());
    db.transactionSync(() => ctx.persistBlock(res));
    t.same(bytesToHex(res.stateRoot), bytesToHex(memRes.stateRoot), 'LMDB root equals the in-memory one');
    root = res.stateRoot;
    await env0.close();
  }
  const env1 = open({ path: dir });
  t.teardown(() => env1.close());
  const db = env1.openDB({ name: 'evm', keyEncoding: 'binary', encoding: 'binary' });
  const kv = new LmdbKV(db as never);
  const ctx = await EvmContext.create({ common, flat: new KVFlatState(kv), trie: new StateTrie({ nodes: kv, root, crypto }) });
  t.equal(await balanceOf(ctx, token, b.address), 7n, 'state readable after reopening');
  const p = await ctx.trie.getProof(token, [balanceSlot(b.address)]);
  t.equal(p.storageProof[0]!.value, '0x7');
  const v = await verifyMPTWithMerkleProof(
    await createMPT({ useKeyHashing: true }),
    root,
    token,
    p.accountProof.map((x) => hexToBytes(x as `0x${string}`)),
  );
  t.ok(v, 'proof from the reopened LMDB verifies');
});
