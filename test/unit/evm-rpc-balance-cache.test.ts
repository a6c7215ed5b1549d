/**
 * eth_getBalance keeps its answers of the latest height (src/rpc/evm/eth.ts balanceOf): a block
 * that changes a balance must be seen by the very next call. On the node's production path, the
 * executor thread, whose commit the main thread learns of afterwards (the inline path moves the
 * height inside BaseApp.commit itself, after the writes).
 */
import t from 'tap';
import { bytesToHex } from '@ethereumjs/util';
import { createEvmCommon } from '../../src/evm/common.js';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { startTestNode } from '../helpers/inproc.js';
import { makeKeys, rpcOk, signTx } from '../helpers/evm.js';

const qty = (n: bigint) => `0x${n.toString(16)}`;

for (const executor of ['thread'] as const) {
  t.test(`eth_getBalance answers a block's new balance at once (${executor} executor)`, async (t) => {
    // A node start takes seconds, many more on a loaded machine.
    t.setTimeout(600_000);
    const tn = await startTestNode({ executor });
    t.teardown(() => tn.close());
    const url = `http://127.0.0.1:${tn.node.evmRpcPort!}/`;
    const ok = (method: string, params: unknown[] = []) => rpcOk(url, method, params);
    const deadline = Date.now() + 60_000;
    while (BigInt(await ok('eth_blockNumber')) < 2n) {
      if (Date.now() > deadline) throw new Error('no height 2');
      await new Promise((r) => setTimeout(r, 50));
    }
    const A = devAccounts().find((a) => a.keyType === 'eth_secp256k1')!;
    const [B] = makeKeys(1, `balance-cache-${executor}-${process.pid}`);
    const b = bytesToHex(B!.address);
    const a = bytesToHex(A.address);
    const common = createEvmCommon({ chainId: BigInt(await ok('eth_chainId')) });
    const aBefore = BigInt(await ok('eth_getBalance', [a, 'latest']));
    t.equal(await ok('eth_getBalance', [b, 'latest']), '0x0', 'a new address holds nothing');

    const nonce = BigInt(await ok('eth_getTransactionCount', [a, 'latest']));
    const tx = signTx(common, { priv: A.privateKey }, { nonce, to: B!.address, value: 12_345n, gasLimit: 21_000n, price: 0n });
    const hash = bytesToHex(tx.hash());
    await ok('eth_sendRawTransaction', [bytesToHex(tx.serialize())]);
    // Ask for B's balance all along (every height's answer is kept) until the receipt shows.
    let receipt: { blockNumber: string; status: string } | null = null;
    let asked = 0;
    const seen = new Set<string>();
    while (receipt === null) {
      if (Date.now() > deadline) throw new Error('no receipt');
      seen.add(await ok('eth_getBalance', [b, 'latest']));
      asked++;
      receipt = await ok('eth_getTransactionReceipt', [hash]);
    }
    t.ok([...seen].every((x) => x === '0x0' || x === '0x3039'), 'before or after the block');
    t.equal(receipt.status, '0x1');
    t.ok(asked > 0);
    t.equal(await ok('eth_getBalance', [b, 'latest']), '0x3039', 'the next call after the receipt answers the new balance');
    t.equal(BigInt(await ok('eth_getBalance', [a, 'latest'])), aBefore - 12_345n, "the sender's too");
    const hr = BigInt(receipt.blockNumber);
    t.equal(await ok('eth_getBalance', [b, qty(hr)]), '0x3039', 'at the block by number');
    t.equal(await ok('eth_getBalance', [b, qty(hr - 1n)]), '0x0', 'and before it');
  });
}
