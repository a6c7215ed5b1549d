/**
 * The account keyring (src/keys/keyring.ts): sealed file format, passphrase checks, known
 * addresses of the dev mnemonic on both coin types (cross-checked against CosmJS), signing, and
 * export/import.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { bech32 } from '@scure/base';
import { DirectEthSecp256k1HdWallet, DirectSecp256k1HdWallet } from '@cosmjs/proto-signing';
import {
  armorPrivateKey,
  bip44Path,
  derivePrivateKey,
  Keyring,
  KeyringError,
  SCRYPT_N,
  unarmorPrivateKey,
} from '../../src/keys/keyring.js';
import { DEV_MNEMONIC, devAccounts } from '../../src/keys/devaccounts.js';

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  t.teardown(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

const PASS = 'correct horse battery';

async function rejectsCode(t: Test, p: Promise<unknown>, code: string, msg: string) {
  try {
    await p;
    t.fail(`${msg}: resolved, want ${code}`);
  } catch (e) {
    t.ok(e instanceof KeyringError && e.code === code, `${msg} (${e instanceof KeyringError ? e.code : String(e)})`);
  }
}

// Known addresses of `test test … junk`, index 0 (CosmJS computes the same below).
const SECP_ADDR0 = 'chain15yk64u7zc9g9k2yr2wmzeva5qgwxps6ynsmyjt';
const ETH_ADDR0 = 'chain17w0adeg64ky0daxwd2ugyuneellmjgnxkl0eq4';
const ETH_HEX0 = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

t.test('dev mnemonic: known addresses on both coin types', async (t) => {
  const kr = new Keyring({ backend: 'test', home: tmp() });
  const { record: c } = await kr.add('cosmos', { mnemonic: DEV_MNEMONIC });
  t.equal(c.hdPath, "m/44'/118'/0'/0/0");
  t.equal(c.bech32, SECP_ADDR0);
  const { record: e } = await kr.add('eth', { mnemonic: DEV_MNEMONIC, algo: 'eth_secp256k1' });
  t.equal(e.hdPath, "m/44'/60'/0'/0/0");
  t.equal(e.bech32, ETH_ADDR0);
  t.equal(e.hex, ETH_HEX0);

  const cw = await DirectSecp256k1HdWallet.fromMnemonic(DEV_MNEMONIC, { prefix: 'chain' });
  t.equal((await cw.getAccounts())[0]!.address, c.bech32, 'CosmJS agrees (secp256k1)');
  t.same([...(await cw.getAccounts())[0]!.pubkey], [...c.pubKey]);
  const ew = await DirectEthSecp256k1HdWallet.fromMnemonic(DEV_MNEMONIC, { prefix: 'chain' });
  t.equal((await ew.getAccounts())[0]!.address, e.bech32, 'CosmJS agrees (eth_secp256k1)');

  // --account / --index and an explicit path reach the other dev accounts.
  const dev = devAccounts();
  for (const i of [1, 7]) {
    const { record } = await kr.add(`c${i}`, { mnemonic: DEV_MNEMONIC, index: i });
    t.equal(record.bech32, dev.find((a) => a.keyType === 'secp256k1' && a.index === i)!.bech32, `secp256k1 index ${i}`);
    const { record: r2 } = await kr.add(`e${i}`, { mnemonic: DEV_MNEMONIC, algo: 'eth_secp256k1', hdPath: `m/44'/60'/0'/0/${i}` });
    t.equal(r2.hex, dev.find((a) => a.keyType === 'eth_secp256k1' && a.index === i)!.hex, `eth index ${i}`);
  }
  const { record: acct1 } = await kr.add('acct1', { mnemonic: DEV_MNEMONIC, account: 1, dryRun: true });
  t.equal(acct1.hdPath, "m/44'/118'/1'/0/0");
  t.notOk(kr.has('acct1'), 'dry run stores nothing');
  t.equal(bip44Path(60, 2, 3), "m/44'/60'/2'/0/3");
  t.throws(() => derivePrivateKey(DEV_MNEMONIC, { hdPath: 'x/1' }), /invalid HD path/);
  t.throws(() => derivePrivateKey('test test test test test test test test test test test test'), /invalid mnemonic/);
});

t.test('file backend: sealed, round trip, wrong passphrase', async (t) => {
  const home = tmp();
  const kr = new Keyring({ backend: 'file', home, passphrase: PASS });
  const { record, mnemonic } = await kr.add('alice');
  t.equal(mnemonic.split(' ').length, 24, 'a fresh key has a 24-word mnemonic');
  const priv = derivePrivateKey(mnemonic).privateKey;
  const text = fs.readFileSync(path.join(home, 'keyring-file', 'alice.json'), 'utf8');
  const file = JSON.parse(text);
  t.notOk(text.includes(Buffer.from(priv).toString('hex')), 'the private key is not in the file');
  t.notOk(text.includes(mnemonic.split(' ')[0]! + ' ' + mnemonic.split(' ')[1]!), 'nor the mnemonic');
  t.equal(file.crypto.kdf, 'scrypt');
  t.equal(file.crypto.n, SCRYPT_N);
  t.equal(file.crypto.cipher, 'aes-256-gcm');
  t.equal(file.address, record.bech32);
  t.equal((fs.statSync(path.join(home, 'keyring-file', 'alice.json')).mode & 0o777).toString(8), '600');
  t.ok(fs.existsSync(path.join(home, 'keyring-file', 'keyhash')));

  // A fresh keyring object (as a new process) decrypts with the passphrase.
  const again = new Keyring({ backend: 'file', home, passphrase: PASS });
  t.same([...(await again.privateKey('alice')).privateKey], [...priv], 'decrypts to the derived key');
  t.equal(again.get(record.bech32).name, 'alice', 'found by address');
  t.equal(again.get(record.hex).name, 'alice', 'found by 0x address');
  t.equal(again.list().length, 1, 'listing needs no passphrase');

  await rejectsCode(t, new Keyring({ backend: 'file', home, passphrase: 'wrong passphrase' }).privateKey('alice'), 'WRONG_PASSPHRASE', 'wrong passphrase cannot decrypt');
  await rejectsCode(t, new Keyring({ backend: 'file', home, passphrase: 'wrong passphrase' }).add('bob'), 'WRONG_PASSPHRASE', 'nor add a key under another passphrase');
  t.notOk(again.has('bob'));
  await rejectsCode(t, new Keyring({ backend: 'file', home }).privateKey('alice'), 'NO_PASSPHRASE', 'no passphrase source');
  await rejectsCode(t, new Keyring({ backend: 'file', home: tmp(), passphrase: 'short' }).add('x'), 'WEAK_PASSPHRASE', 'a new keyring wants 8+ characters');

  // A passphrase callback is asked once, with confirm=true only for a new keyring.
  const asked: boolean[] = [];
  const cb = new Keyring({ backend: 'file', home: tmp(), passphrase: async ({ confirm }) => (asked.push(confirm), PASS) });
  await cb.add('k1');
  await cb.add('k2');
  t.same(asked, [true]);

  // Editing clear-text metadata breaks decryption (the GCM additional data binds it).
  const edited = { ...file, name: 'mallory' };
  fs.writeFileSync(path.join(home, 'keyring-file', 'mallory.json'), JSON.stringify(edited));
  await rejectsCode(t, again.privateKey('mallory'), 'WRONG_PASSPHRASE', 'a renamed record does not open');
  const tampered = { ...file, crypto: { ...file.crypto, ciphertext: file.crypto.ciphertext.replace(/^./, (c: string) => (c === '0' ? '1' : '0')) } };
  fs.writeFileSync(path.join(home, 'keyring-file', 'alice.json'), JSON.stringify(tampered));
  await rejectsCode(t, again.privateKey('alice'), 'WRONG_PASSPHRASE', 'a flipped ciphertext bit does not open');
});

t.test('test backend: clear text, exists/overwrite/delete, names', async (t) => {
  const home = tmp();
  const kr = new Keyring({ backend: 'test', home });
  const { record } = await kr.add('k', { mnemonic: DEV_MNEMONIC });
  const file = JSON.parse(fs.readFileSync(path.join(home, 'keyring-test', 'k.json'), 'utf8'));
  t.equal(file.private_key, Buffer.from(derivePrivateKey(DEV_MNEMONIC).privateKey).toString('hex'));
  t.notOk(file.crypto);
  await rejectsCode(t, kr.add('k', { mnemonic: DEV_MNEMONIC }), 'KEY_EXISTS', 'no silent overwrite');
  const { record: r2 } = await kr.add('k', { mnemonic: DEV_MNEMONIC, algo: 'eth_secp256k1', overwrite: true });
  t.not(r2.bech32, record.bech32, 'overwritten');
  await rejectsCode(t, kr.add('../evil', { mnemonic: DEV_MNEMONIC }), 'INVALID_NAME', 'path-like names are refused');
  t.equal(kr.delete('k').name, 'k');
  t.throws(() => kr.get('k'), { code: 'KEY_NOT_FOUND' });
  t.same(kr.list(), []);
});

t.test('signatures verify (SHA-256 for secp256k1, Keccak-256 for eth_secp256k1), low-S', async (t) => {
  const kr = new Keyring({ backend: 'test', home: tmp() });
  await kr.add('c', { mnemonic: DEV_MNEMONIC });
  await kr.add('e', { mnemonic: DEV_MNEMONIC, algo: 'eth_secp256k1' });
  const msg = new TextEncoder().encode('sign me');
  const c = await kr.sign('c', msg);
  t.equal(c.signature.length, 64);
  t.ok(secp256k1.verify(c.signature, sha256(msg), c.record.pubKey, { prehash: false, lowS: true }));
  t.notOk(secp256k1.verify(c.signature, keccak_256(msg), c.record.pubKey, { prehash: false }));
  const e = await kr.sign('e', msg);
  t.ok(secp256k1.verify(e.signature, keccak_256(msg), e.record.pubKey, { prehash: false, lowS: true }));
  t.notOk(secp256k1.verify(e.signature, sha256(msg), e.record.pubKey, { prehash: false }));
});

t.test('export and import: armored with a passphrase, and hex', async (t) => {
  const src = new Keyring({ backend: 'file', home: tmp(), passphrase: PASS });
  const { record } = await src.add('a', { mnemonic: DEV_MNEMONIC, algo: 'eth_secp256k1' });
  const armor = await src.exportArmored('a', 'export-pass');
  t.match(armor, /^-----BEGIN CHAIND PRIVATE KEY-----\nkdf: scrypt\n/);
  t.match(armor, /\ntype: eth_secp256k1\n/);
  t.match(armor, /-----END CHAIND PRIVATE KEY-----\n$/);
  const priv = derivePrivateKey(DEV_MNEMONIC, { algo: 'eth_secp256k1' }).privateKey;
  t.notOk(armor.includes(Buffer.from(priv).toString('base64').slice(0, 20)));

  const dst = new Keyring({ backend: 'test', home: tmp() });
  await rejectsCode(t, dst.importArmored('b', armor, 'not it'), 'WRONG_PASSPHRASE', 'wrong export passphrase');
  t.notOk(dst.has('b'));
  const imported = await dst.importArmored('b', armor, 'export-pass');
  t.equal(imported.bech32, record.bech32);
  t.equal(imported.algo, 'eth_secp256k1');
  t.equal(await dst.exportHex('b'), Buffer.from(priv).toString('hex'));
  await rejectsCode(t, dst.importArmored('b', armor, 'export-pass'), 'KEY_EXISTS', 'import does not overwrite');

  // Hex import, and the armor functions alone.
  const h = await dst.importPrivateKey('h', priv, 'secp256k1');
  t.equal(h.bech32, bech32Of(priv));
  const a2 = await armorPrivateKey(priv, 'secp256k1', 'pw', 1 << 10);
  t.same([...(await unarmorPrivateKey(a2, 'pw')).privateKey], [...priv]);
  await rejectsCode(t, unarmorPrivateKey(a2.replace('kdf: scrypt', 'kdf: bcrypt'), 'pw'), 'INVALID_ARMOR', 'upstream bcrypt armor is refused');
  await rejectsCode(t, unarmorPrivateKey('garbage', 'pw'), 'INVALID_ARMOR', 'not armor');
  await rejectsCode(t, dst.importPrivateKey('z', new Uint8Array(32), 'secp256k1'), 'INVALID_KEY', 'zero key refused');
});

/** RIPEMD160(SHA256(compressed key)) in bech32, computed here independently of the keyring. */
function bech32Of(priv: Uint8Array): string {
  return bech32.encode('chain', bech32.toWords(ripemd160(sha256(secp256k1.getPublicKey(priv, true)))));
}
