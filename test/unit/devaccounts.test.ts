/** Dev accounts from `test test … junk`: known addresses and keys, independent address checks. */
import t from 'tap';
import { createECDH, createHash } from 'node:crypto';
import { bech32 } from '@scure/base';
import {
  bech32Address,
  cosmosAddressFromPubKey,
  devAccounts,
  ethAddressFromPubKey,
  toChecksumAddress,
} from '../../src/keys/devaccounts.js';

const accounts = devAccounts();
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

t.test('20 accounts: 10 eth_secp256k1 then 10 secp256k1', async (t) => {
  t.equal(accounts.length, 20);
  t.same(accounts.map((a) => a.keyType), [...Array(10).fill('eth_secp256k1'), ...Array(10).fill('secp256k1')]);
  t.equal(accounts[3]!.path, "m/44'/60'/0'/0/3");
  t.equal(accounts[13]!.path, "m/44'/118'/0'/0/3");
  t.equal(new Set(accounts.map((a) => a.hex)).size, 20, 'all distinct');
});

t.test('known vectors', async (t) => {
  // Hardhat/Anvil accounts 0 and 1 and 9.
  const rows: Array<[number, string, string]> = [
    [0, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', 'ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'],
    [1, '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', '59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'],
    [9, '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720', '2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6'],
  ];
  for (const [i, addr, key] of rows) {
    t.equal(accounts[i]!.hex, addr, `eth ${i} address`);
    t.equal(hex(accounts[i]!.privateKey), key, `eth ${i} key`);
  }
  // m/44'/118'/0'/0/0 of the same mnemonic is cosmos15yk64u7zc9g9k2yr2wmzeva5qgwxps6yxj00e7.
  const c0 = accounts[10]!;
  t.equal(hex(c0.privateKey), 'e64e7928d4f6c06f01fefd31f760c51f59a16426e792761cd00529b76501c8a0');
  t.equal(bech32Address(c0.address, 'cosmos'), 'cosmos15yk64u7zc9g9k2yr2wmzeva5qgwxps6yxj00e7');
  t.equal(c0.bech32, 'chain15yk64u7zc9g9k2yr2wmzeva5qgwxps6ynsmyjt');
});

t.test('addresses match an independent computation (node:crypto)', async (t) => {
  for (const a of accounts) {
    const ecdh = createECDH('secp256k1');
    ecdh.setPrivateKey(Buffer.from(a.privateKey));
    const compressed = ecdh.getPublicKey(undefined, 'compressed');
    t.equal(hex(a.publicKey), compressed.toString('hex'), `${a.path} public key`);
    if (a.keyType === 'secp256k1') {
      const want = createHash('ripemd160').update(createHash('sha256').update(compressed).digest()).digest('hex');
      t.equal(hex(a.address), want, `${a.path} cosmos address`);
    }
    const decoded = bech32.decode(a.bech32 as `${string}1${string}`);
    t.equal(decoded.prefix, 'chain');
    t.equal(hex(bech32.fromWords(decoded.words)), hex(a.address), `${a.path} bech32 payload`);
    t.equal(a.hex.toLowerCase(), '0x' + hex(a.address), `${a.path} 0x form`);
  }
});

t.test('address helpers', async (t) => {
  const a = accounts[0]!;
  t.equal(hex(ethAddressFromPubKey(a.publicKey)), hex(a.address), 'compressed input is uncompressed first');
  t.throws(() => ethAddressFromPubKey(new Uint8Array(10)));
  t.throws(() => cosmosAddressFromPubKey(new Uint8Array(65)));
  // EIP-55 examples (eips.ethereum.org/EIPS/eip-55).
  for (const addr of ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB']) {
    t.equal(toChecksumAddress(Buffer.from(addr.slice(2), 'hex')), addr);
  }
  t.throws(() => toChecksumAddress(new Uint8Array(19)));
});

t.test('options and memoization', async (t) => {
  const again = devAccounts();
  t.not(again[0], accounts[0], 'callers get their own objects');
  again[0]!.hex = 'changed';
  t.equal(devAccounts()[0]!.hex, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
  const two = devAccounts({ count: 2, prefix: 'cosmos' });
  t.equal(two.length, 4);
  t.equal(two[2]!.bech32, 'cosmos15yk64u7zc9g9k2yr2wmzeva5qgwxps6yxj00e7');
});
