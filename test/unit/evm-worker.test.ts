/**
 * The EVM core loads and runs in a worker thread (where block execution will run): a genesis and
 * one block there give the same state root as on the main thread.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { bytesToHex } from '@ethereumjs/util';
import t from 'tap';
import { EvmContext, KVFlatState, MemoryKV, StateTrie, createEvmCommon, recoverSender } from '../../src/evm/index.js';
import { makeKeys, signTx } from '../helpers/evm.js';

const evmIndex = pathToFileURL(fileURLToPath(new URL('../../src/evm/index.js', import.meta.url))).href;
const helpers = pathToFileURL(fileURLToPath(new URL('../helpers/evm.js', import.meta.url))).href;

async function rootHere(): Promise<string> {
  const common = createEvmCommon({ chainId: 77n });
  const kv = new MemoryKV();
  const ctx = await EvmContext.create({ common, flat: new KVFlatState(kv), trie: new StateTrie({ nodes: kv }) });
  const keys = makeKeys(2, 'worker');
  ctx.persistBlock(await ctx.applyGenesis(keys.map((k) => ({ address: k.address, balance: 10n ** 18n }))));
  const tx = signTx(common, keys[0]!, { nonce: 0n, to: keys[1]!.address, value: 1n, gasLimit: 21_000n });
  const res = await ctx.executeBlock(
    { number: 1n, timestamp: 1n, coinbase: new Uint8Array(20), gasLimit: 1_000_000n, prevRandao: new Uint8Array(32) },
    [{ tx, sender: recoverSender(tx) }],
  );
  return bytesToHex(res.stateRoot);
}

// Signing with @noble and running blocks on both crypto backends takes seconds alone and many
// times that on a loaded 2-core machine: more than tap's default 30 s per file.
t.setTimeout(240_000);

t.test('same root in a worker thread', async (t) => {
  const main = await rootHere();
  const src = `
    const { parentPort } = await import('node:worker_threads');
    const m = await import(${JSON.stringify(evmIndex)});
    const h = await import(${JSON.stringify(helpers)});
    const common = m.createEvmCommon({ chainId: 77n });
    const kv = new m.MemoryKV();
    const ctx = await m.EvmContext.create({ common, flat: new m.KVFlatState(kv), trie: new m.StateTrie({ nodes: kv }) });
    const keys = h.makeKeys(2, 'worker');
    ctx.persistBlock(await ctx.applyGenesis(keys.map((k) => ({ address: k.address, balance: 10n ** 18n }))));
    const tx = h.signTx(common, keys[0], { nonce: 0n, to: keys[1].address, value: 1n, gasLimit: 21000n });
    const res = await ctx.executeBlock(
      { number: 1n, timestamp: 1n, coinbase: new Uint8Array(20), gasLimit: 1000000n, prevRandao: new Uint8Array(32) },
      [{ tx, sender: m.recoverSender(tx) }],
    );
    parentPort.postMessage('0x' + Buffer.from(res.stateRoot).toString('hex'));
  `;
  const w = new Worker(new URL(`data:text/javascript,${encodeURIComponent(src)}`), { type: 'module' } as never);
  const fromWorker = await new Promise<string>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  await w.terminate();
  t.equal(fromWorker, main);
  t.match(main, /^0x[0-9a-f]{64}$/);
});
