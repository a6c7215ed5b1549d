/**
 * The keystore (src/keys/keystore.ts), the personal namespace (src/rpc/evm/personal.ts) and the
 * signing methods of eth (src/rpc/evm/sign.ts) on an in-process node made by `init --dev`'s code,
 * checked against other implementations: ethers decrypts our key files and we decrypt its, viem
 * recovers our EIP-191 and EIP-712 signatures (and its local signer gives the same bytes), and
 * a sent transaction lands in a block. scrypt stays cheap: the dev keys are written with N 2^12
 * and the node runs with `[json-rpc] light-kdf`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { encryptKeystoreJson, Wallet } from 'ethers';
import { parseTransaction, recoverMessageAddress, recoverTransactionAddress, recoverTypedDataAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { readJwtSecret, signJwt } from '../../src/config/jwt.js';
import { decryptKey, Keystore, LIGHT_SCRYPT_N, type KeyJsonV3 } from '../../src/keys/keystore.js';
import { startTestNode, type TestNode } from '../helpers/inproc.js';

const DEV0 = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const DEV0_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const DEV1_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const DEV1 = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const OTHER = `0x${'42'.repeat(20)}`;
const LIGHT = { n: LIGHT_SCRYPT_N, p: 1 };

const MAIL = {
  domain: { name: 'Ether Mail', version: '1', chainId: 1, verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC' },
  types: {
    Person: [
      { name: 'name', type: 'string' },
      { name: 'wallets', type: 'address[]' },
    ],
    Mail: [
      { name: 'from', type: 'Person' },
      { name: 'to', type: 'Person[]' },
      { name: 'contents', type: 'string' },
      { name: 'id', type: 'uint256' },
      { name: 'flag', type: 'bool' },
      { name: 'tag', type: 'bytes32' },
      { name: 'blob', type: 'bytes' },
    ],
  },
  primaryType: 'Mail',
  message: {
    from: { name: 'Cow', wallets: ['0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826', '0xDeaDbeefdEAdbeefdEadbEEFdeadbeEFdEaDbeeF'] },
    to: [{ name: 'Bob', wallets: ['0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB'] }],
    contents: 'Hello, Bob!',
    id: '123456789012345678901234567890',
    flag: true,
    tag: `0x${'ab'.repeat(32)}`,
    blob: '0x0102',
  },
} as const;

function tmpDir(t: Test): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('key files: ethers reads ours, we read ethers\'', async (t) => {
  const ks = new Keystore(path.join(tmpDir(t), 'keystore'), { scrypt: LIGHT });
  const acct = await ks.newAccount('correct horse');
  t.match(path.basename(acct.file), /^UTC--\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{9}Z--[0-9a-f]{40}$/, "geth's file name");
  t.equal(path.basename(acct.file).slice(-40), Buffer.from(acct.address).toString('hex'));
  t.equal((fs.statSync(acct.file).mode & 0o777).toString(8), '600');
  const text = fs.readFileSync(acct.file, 'utf8');
  const json = JSON.parse(text) as KeyJsonV3;
  t.equal(json.version, 3);
  t.equal(json.crypto.kdf, 'scrypt');
  t.equal(json.crypto.cipher, 'aes-128-ctr');
  t.same(json.crypto.kdfparams.n, LIGHT_SCRYPT_N);
  const w = await Wallet.fromEncryptedJson(text, 'correct horse');
  t.equal(w.address.toLowerCase(), `0x${json.address}`, 'ethers decrypts it to the same account');
  await t.rejects(Wallet.fromEncryptedJson(text, 'wrong'), 'ethers refuses a wrong password');
  await t.rejects(ks.decrypt(acct.address, 'wrong'), { code: 'DECRYPT', message: 'could not decrypt key with given password' });
  t.equal(`0x${Buffer.from(await ks.decrypt(acct.address, 'correct horse')).toString('hex')}`, w.privateKey);

  const theirs = await encryptKeystoreJson({ address: privateKeyToAccount(DEV0_KEY).address, privateKey: DEV0_KEY }, 'pw', { scrypt: { N: 1024 } });
  const priv = await decryptKey(JSON.parse(theirs) as KeyJsonV3, 'pw');
  t.equal(`0x${Buffer.from(priv).toString('hex')}`, DEV0_KEY, 'we decrypt an ethers key file');
  await t.rejects(decryptKey(JSON.parse(theirs) as KeyJsonV3, 'nope'), { code: 'DECRYPT' });

  fs.copyFileSync(path.join(path.dirname(acct.file), path.basename(acct.file)), path.join(path.dirname(acct.file), 'copy-of-a-key'));
  fs.writeFileSync(path.join(path.dirname(acct.file), 'README'), 'not a key');
  t.equal(ks.accounts().length, 1, 'a duplicate file and a non-key file add no account');
  await ks.importKey(priv, 'x');
  t.equal(ks.accounts().length, 2, 'the imported key is listed');
  await t.rejects(ks.importKey(priv, 'x'), { message: 'account already exists' });

  // The list is kept between calls while the directory is unchanged; a key file another program
  // drops in, or takes away, shows at the next call. The directory's mtime is set an hour back
  // so that the reading is old enough to be kept (a reading within 100 ms of a change is not).
  const dir = path.dirname(acct.file);
  const hourAgo = new Date(Date.now() - 3_600_000);
  fs.utimesSync(dir, hourAgo, hourAgo);
  t.equal(ks.accounts().length, 2, 'two accounts, read once');
  t.equal(ks.accounts().length, 2, 'the same two, from the kept reading');
  const other = await encryptKeystoreJson({ address: privateKeyToAccount(DEV1_KEY).address, privateKey: DEV1_KEY }, 'pw', { scrypt: { N: 1024 } });
  fs.writeFileSync(path.join(dir, 'dropped-in'), other);
  t.ok(ks.has(Buffer.from(privateKeyToAccount(DEV1_KEY).address.slice(2), 'hex')), 'a key file written by hand is found at the next call');
  t.equal(ks.accounts().length, 3, 'and listed');
  fs.utimesSync(dir, hourAgo, hourAgo);
  t.equal(ks.accounts().length, 3);
  fs.rmSync(path.join(dir, 'dropped-in'));
  t.equal(ks.accounts().length, 2, 'a key file removed by hand is gone at the next call');
});

interface Rpc {
  (method: string, params?: unknown[], opts?: { token?: boolean }): Promise<{ result?: any; error?: { code: number; message: string } }>;
}

function rpcClient(tn: TestNode): Rpc {
  const secret = readJwtSecret(path.join(tn.home, 'config', 'jwt.hex'));
  let id = 0;
  return async (method, params = [], opts = {}) => {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (opts.token !== false) headers.Authorization = `Bearer ${signJwt(secret)}`;
    const r = await fetch(`http://127.0.0.1:${tn.node.evmRpcPort}/`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }) });
    if (r.status !== 200) return { error: { code: r.status, message: await r.text() } };
    return (await r.json()) as { result?: unknown; error?: { code: number; message: string } };
  };
}

async function waitReceipt(rpc: Rpc, hash: string): Promise<any> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await rpc('eth_getTransactionReceipt', [hash], { token: false });
    if (r.result) return r.result;
    if (Date.now() > deadline) throw new Error(`no receipt for ${hash}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

t.test('on a dev node', async (t) => {
  const tn = await startTestNode({ flags: { 'json-rpc.api': 'eth,net,web3,personal,miner', 'json-rpc.light-kdf': true } });
  t.teardown(() => tn.close());
  const rpc = rpcClient(tn);
  const chainId = BigInt((await rpc('eth_chainId')).result as string);

  await t.test('init --dev put the 10 Ethereum dev accounts in the keystore', async (t) => {
    const files = fs.readdirSync(path.join(tn.home, 'keystore'));
    t.equal(files.length, 10);
    const list = (await rpc('personal_listAccounts')).result as string[];
    t.equal(list.length, 10);
    t.ok(list.includes(DEV0) && list.includes(DEV1));
    t.same((await rpc('eth_accounts', [], { token: false })).result, list, 'eth_accounts: the same, public');
    const wallets = (await rpc('personal_listWallets')).result as { url: string; status: string; accounts: { address: string }[] }[];
    t.equal(wallets.length, 10);
    t.match(wallets[0]!, { url: /^keystore:\/\/.*UTC--/, status: 'Locked', accounts: [{ address: /^0x[0-9a-f]{40}$/ }] });
    t.same((await rpc('personal_listAccounts', [], { token: false })).error, { code: 401, message: 'missing token\n' });
  });

  await t.test('importRawKey and newAccount', async (t) => {
    const err = async (key: string) => (await rpc('personal_importRawKey', [key, 'pw'])).error?.message;
    t.equal(await err(`0x${'11'.repeat(32)}`), "invalid hex character 'x' in private key");
    t.equal(await err(`${'11'.repeat(31)}1g`), "invalid hex character 'g' in private key");
    t.equal(await err(`${'11'.repeat(31)}1 `), "invalid hex character ' ' in private key");
    t.equal(await err('123'), 'invalid hex data for private key');
    t.equal(await err(`${'11'.repeat(31)}é`), "invalid hex character 'Ã' in private key", "Go reads bytes: é's first byte");
    t.equal(await err('11'.repeat(31)), 'invalid length, need 256 bits');
    t.equal(await err('00'.repeat(32)), 'invalid private key, zero or negative');
    t.equal(await err('ff'.repeat(32)), 'invalid private key, >=N');
    const key = '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
    const want = privateKeyToAccount(`0x${key}`).address.toLowerCase();
    t.equal((await rpc('personal_importRawKey', [key, 'pw'])).result, want, 'the address, lower-case');
    t.equal(await err(key), 'account already exists');
    t.ok(((await rpc('personal_listAccounts')).result as string[]).includes(want));
    const file = fs.readdirSync(path.join(tn.home, 'keystore')).find((f) => f.endsWith(want.slice(2)))!;
    const w = await Wallet.fromEncryptedJson(fs.readFileSync(path.join(tn.home, 'keystore', file), 'utf8'), 'pw');
    t.equal(w.privateKey, `0x${key}`, 'ethers decrypts the imported key');

    const made = (await rpc('personal_newAccount', ['s3cret'])).result as string;
    t.match(made, /^0x[0-9a-fA-F]{40}$/);
    t.not(made, made.toLowerCase(), 'newAccount answers the EIP-55 form');
    t.ok(((await rpc('personal_listAccounts')).result as string[]).includes(made.toLowerCase()));
  });

  await t.test('personal_sign and personal_ecRecover', async (t) => {
    const data = '0x48656c6c6f2c20776f726c6421'; // "Hello, world!"
    const sig = (await rpc('personal_sign', [data, DEV0, ''])).result as Hex;
    t.match(sig, /^0x[0-9a-f]{130}$/);
    t.ok(sig.endsWith('1b') || sig.endsWith('1c'), 'v is 27 or 28');
    t.equal((await recoverMessageAddress({ message: { raw: data }, signature: sig })).toLowerCase(), DEV0, 'viem recovers the signer');
    t.equal(sig, await privateKeyToAccount(DEV0_KEY).signMessage({ message: { raw: data } }), "the same bytes as viem's local signer");
    t.equal((await rpc('personal_ecRecover', [data, sig])).result, DEV0);
    t.equal((await rpc('personal_sign', [data, DEV0, 'wrong'])).error?.message, 'could not decrypt key with given password');
    t.equal((await rpc('personal_sign', [data, OTHER, ''])).error?.message, 'unknown account');
    t.equal((await rpc('personal_unlockAccount', [OTHER, ''])).error?.message, 'no key for given address or file');
    t.equal((await rpc('personal_ecRecover', [data, sig.slice(0, 130)])).error?.message, 'signature must be 65 bytes long');
    t.equal((await rpc('personal_ecRecover', [data, `${sig.slice(0, 130)}00`])).error?.message, 'invalid Ethereum signature (V is not 27 or 28)');
  });

  await t.test('eth_sign needs an unlocked account; unlock and lock', async (t) => {
    const data = '0xdeadbeef';
    t.same((await rpc('eth_sign', [DEV1, data])).error, { code: -32000, message: 'authentication needed: password or unlock' });
    t.same((await rpc('eth_sign', [OTHER, data])).error, { code: -32000, message: 'unknown account' });
    t.equal((await rpc('personal_unlockAccount', [DEV1, 'wrong'])).error?.message, 'could not decrypt key with given password');
    t.same((await rpc('personal_unlockAccount', [DEV1, '', '0x10'])).error, { code: -32602, message: 'invalid argument 2: json: cannot unmarshal string into Go value of type uint64' });
    t.same((await rpc('personal_unlockAccount', [DEV1, '', -1])).error, { code: -32602, message: 'invalid argument 2: json: cannot unmarshal number -1 into Go value of type uint64' });
    t.equal((await rpc('personal_unlockAccount', [DEV1, '', 1e12])).error?.message, 'unlock duration too large');
    t.equal((await rpc('personal_unlockAccount', [DEV1, ''])).result, true, 'default duration (300 s)');
    const wallets = (await rpc('personal_listWallets')).result as { status: string; accounts: { address: string }[] }[];
    t.equal(wallets.find((w) => w.accounts[0]!.address === DEV1)!.status, 'Unlocked');
    const sig = (await rpc('eth_sign', [DEV1, data])).result as Hex;
    t.equal((await recoverMessageAddress({ message: { raw: data }, signature: sig })).toLowerCase(), DEV1, 'EIP-191: viem recovers it');
    t.same((await rpc('eth_sign', [DEV1, data], { token: false })).error, { code: 401, message: 'missing token\n' }, 'private');
    t.equal((await rpc('personal_lockAccount', [DEV1])).result, true);
    t.equal((await rpc('eth_sign', [DEV1, data])).error?.message, 'authentication needed: password or unlock', 'locked again');
    t.equal((await rpc('personal_lockAccount', [OTHER])).result, true, "geth's Lock: true for any address");
    t.equal((await rpc('personal_unlockAccount', [DEV1, '', 0])).result, true, '0: until exit');
    t.ok((await rpc('eth_sign', [DEV1, data])).result);
  });

  await t.test('eth_signTypedData_v4 (EIP-712)', async (t) => {
    t.equal((await rpc('personal_unlockAccount', [DEV0, '', 0])).result, true);
    const local = await privateKeyToAccount(DEV0_KEY).signTypedData(MAIL as never);
    for (const m of ['eth_signTypedData_v4', 'eth_signTypedData']) {
      const sig = (await rpc(m, [DEV0, MAIL])).result as Hex;
      t.equal((await recoverTypedDataAddress({ ...(MAIL as object), signature: sig } as never)).toLowerCase(), DEV0, `${m}: viem recovers the signer`);
      t.equal(sig, local, `${m}: the same bytes as viem's local signer`);
    }
    const asText = (await rpc('eth_signTypedData_v4', [DEV0, JSON.stringify(MAIL)])).result;
    t.equal(asText, local, 'the typed data as JSON text (MetaMask) too');
    const withDomainType = { ...MAIL, types: { ...MAIL.types, EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'version', type: 'string' }, { name: 'chainId', type: 'uint256' }, { name: 'verifyingContract', type: 'address' }] } };
    t.equal((await rpc('eth_signTypedData_v4', [DEV0, withDomainType])).result, local, 'an explicit EIP712Domain type');
    const { domain: _d, ...noDomain } = MAIL;
    t.equal((await rpc('eth_signTypedData_v4', [DEV0, noDomain])).error?.message, 'domain is undefined');
    t.equal((await rpc('eth_signTypedData_v3', [DEV0, MAIL])).error?.code, -32601, 'v3: the spec N');
  });

  await t.test('eth_sendTransaction, personal_sendTransaction, eth_signTransaction', async (t) => {
    // DEV0 is unlocked (previous subtest).
    const sent = await rpc('eth_sendTransaction', [{ from: DEV0, to: OTHER, value: '0x1000' }]);
    t.match(sent.result, /^0x[0-9a-f]{64}$/, sent.error?.message ?? 'a hash');
    const receipt = await waitReceipt(rpc, sent.result as string);
    t.equal(receipt.status, '0x1');
    t.equal(receipt.from, DEV0);
    const tx = (await rpc('eth_getTransactionByHash', [sent.result], { token: false })).result;
    t.equal(tx.gas, '0x15f90', 'default gas 90000 (spec §8)');
    t.equal(tx.type, '0x2');
    t.equal(tx.chainId, `0x${chainId.toString(16)}`);

    t.equal((await rpc('eth_sendTransaction', [{ from: DEV0, to: OTHER, chainId: '0x1' }])).error?.message, `chainId does not match node's (have=1, want=${chainId})`);
    t.equal((await rpc('eth_sendTransaction', [{ from: DEV0, to: OTHER, maxFeePerGas: '0x1', maxPriorityFeePerGas: '0x2' }])).error?.message, 'maxFeePerGas (1) < maxPriorityFeePerGas (2)');
    t.equal((await rpc('eth_sendTransaction', [{ from: DEV0, to: OTHER, gasPrice: '0x1', maxFeePerGas: '0x1' }])).error?.message, 'both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified');
    t.equal((await rpc('eth_sendTransaction', [{ from: DEV0 }])).error?.message, 'contract creation without any data provided');
    const locked = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc'; // dev account 2, never unlocked here
    t.equal((await rpc('eth_sendTransaction', [{ from: locked, to: OTHER }])).error?.message, 'authentication needed: password or unlock');
    t.equal((await rpc('eth_sendTransaction', [{ from: OTHER, to: OTHER }])).error?.message, 'unknown account');

    const viaPassword = await rpc('personal_sendTransaction', [{ from: locked, to: OTHER, value: '0x1', gas: '0x5208', gasPrice: '0x0' }, '']);
    t.match(viaPassword.result, /^0x[0-9a-f]{64}$/, viaPassword.error?.message ?? 'personal_sendTransaction with the password');
    t.equal((await waitReceipt(rpc, viaPassword.result as string)).status, '0x1');
    const legacy = (await rpc('eth_getTransactionByHash', [viaPassword.result], { token: false })).result;
    t.equal(legacy.type, '0x0', 'a gasPrice makes a legacy tx');
    t.equal(legacy.gas, '0x5208');
    t.equal((await rpc('personal_sendTransaction', [{ from: locked, to: OTHER }, 'wrong'])).error?.message, 'could not decrypt key with given password');
    t.equal((await rpc('personal_sendTransaction', [{ from: OTHER, to: OTHER }, ''])).error?.message, 'unknown account');
    t.equal((await rpc('eth_sendTransaction', [{ to: OTHER }])).error?.message, 'unknown account', 'no from: the zero address');

    // Two sends at once from one account take consecutive nonces.
    const [a, b] = await Promise.all([rpc('eth_sendTransaction', [{ from: DEV0, to: OTHER, value: '0x1' }]), rpc('eth_sendTransaction', [{ from: DEV0, to: OTHER, value: '0x2' }])]);
    t.ok(a.result && b.result, `${a.error?.message ?? ''} ${b.error?.message ?? ''}`);
    const ra = await waitReceipt(rpc, a.result as string);
    const rb = await waitReceipt(rpc, b.result as string);
    t.equal(ra.status, '0x1');
    t.equal(rb.status, '0x1');

    t.equal((await rpc('eth_signTransaction', [{ from: DEV0, to: OTHER }])).error?.message, 'gas not specified');
    t.equal((await rpc('eth_signTransaction', [{ from: DEV0, to: OTHER, gas: '0x5208' }])).error?.message, 'missing gasPrice or maxFeePerGas/maxPriorityFeePerGas');
    t.equal((await rpc('eth_signTransaction', [{ from: DEV0, to: OTHER, gas: '0x5208', gasPrice: '0x1' }])).error?.message, 'nonce not specified');
    const signed = (await rpc('eth_signTransaction', [{ from: DEV0, to: OTHER, gas: '0x5208', maxFeePerGas: '0x2', maxPriorityFeePerGas: '0x1', nonce: '0x63', value: '0x5' }])).result;
    t.match(signed.raw, /^0x02/);
    const parsed = parseTransaction(signed.raw as Hex);
    t.equal(parsed.nonce, 99);
    t.equal(parsed.gas, 21000n);
    t.equal(parsed.value, 5n);
    t.equal(BigInt(parsed.chainId!), chainId);
    t.equal((await recoverTransactionAddress({ serializedTransaction: signed.raw as never })).toLowerCase(), DEV0, 'viem recovers the sender');
    t.equal(signed.tx.hash, (await import('viem')).keccak256(signed.raw as Hex));
    t.equal(signed.tx.from, DEV0);
    t.equal(signed.tx.blockHash, null);
  });

  await t.test('miner_* answer as the spec says (N)', async (t) => {
    for (const m of ['miner_start', 'miner_stop', 'miner_setEtherbase', 'miner_getHashrate']) {
      t.same((await rpc(m, [], { token: false })).error, { code: -32601, message: `the method ${m} does not exist/is not available` }, m);
    }
  });
});
