/**
 * The app hash of today's chain (auth, bank, authz; signed protobuf txs) for a fixed sequence of
 * blocks, pinned byte for byte. The hashes were recorded with the code before tx kinds, module
 * commitments and module databases existed (src/app/txkinds.ts): a module without a commitment
 * must keep contributing exactly its LtHash root, so these must never change.
 */
import t from 'tap';
import { startChain, CHAIN_ID, DENOM } from '../helpers/chainapp.js';
import { devKeys, sendTx } from '../helpers/txsign.js';

const KEYS = devKeys();
const S0 = KEYS[10]!;
const S1 = KEYS[11]!;
const S2 = KEYS[12]!;
const E0 = KEYS[0]!;

const GOLDEN: string[] = [
  '8235b1ef61e5fab4b452339f4b34fc85b9cb0ca1e1932312d205ad2825cc7861',
  '003bb89fb5ef4b15c1a7e559f1336bfe6e224d9ead27b6f8cda3b58cc9bff884',
  '9b8f508fac062de246af3eef80e7ada67b2c2f924e3c17e10f58ec6bb5d8b3b7',
  '9b8f508fac062de246af3eef80e7ada67b2c2f924e3c17e10f58ec6bb5d8b3b7',
  'b4e570eff2dedf2fb9739eaaf021f7bbd8b6f9a872059b3a8aa3bdcd52b73161',
];

t.test('app hashes of a fixed block sequence are unchanged', async (t) => {
  const h = await startChain(t);
  const hashes = [h.lastAppHash()];
  const fee = { amount: [{ denom: DENOM, amount: 100 }], gasLimit: 200_000n };
  const r1 = await h.block([sendTx({ chainId: CHAIN_ID, from: S0, to: S2.bech32, amount: [{ denom: DENOM, amount: 1000 }], accountNumber: 10n, sequence: 0n, fee })]);
  t.same(r1.txResults.map((r) => r.code), [0]);
  hashes.push(h.lastAppHash());
  const r2 = await h.block([
    sendTx({ chainId: CHAIN_ID, from: S0, to: S1.bech32, amount: [{ denom: DENOM, amount: 7 }], accountNumber: 10n, sequence: 1n, fee }),
    sendTx({ chainId: CHAIN_ID, from: S1, to: S2.bech32, amount: [{ denom: DENOM, amount: 3 }], accountNumber: 11n, sequence: 0n, fee }),
    // A failing tx (wrong sequence) and garbage: results only, the ante state of the first stays.
    sendTx({ chainId: CHAIN_ID, from: S2, to: S1.bech32, amount: [{ denom: DENOM, amount: 1 }], accountNumber: 12n, sequence: 5n, fee }),
    Uint8Array.of(0x0a, 0xff),
  ]);
  t.same(r2.txResults.map((r) => r.code), [0, 0, 32, 2]);
  hashes.push(h.lastAppHash());
  await h.block([]);
  hashes.push(h.lastAppHash());
  const r4 = await h.block([sendTx({ chainId: CHAIN_ID, from: E0, to: S0.bech32, amount: [{ denom: DENOM, amount: 12345 }], accountNumber: 0n, sequence: 0n, fee, mode: 'amino' })]);
  t.same(r4.txResults.map((r) => r.code), [0]);
  hashes.push(h.lastAppHash());
  t.same(hashes, GOLDEN);
  t.equal(new Set(hashes).size, hashes.length - 1, 'only the empty block leaves the hash as it was');
});
