/**
 * `chaind keys …` on a temporary home: add (new and --recover, both key types, HD flags), list,
 * show (--address, --pubkey, --bech), export/import, import-hex, delete, and the error exits.
 * The commands run in this process (test/helpers/cli.ts); the first subtest also runs a few as
 * their own processes, so the entry's exit codes and stdin are the real ones.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { runCliIn, spawnCli } from '../helpers/cli.js';
import { DEV_MNEMONIC, devAccounts } from '../../src/keys/devaccounts.js';

const SECP_ADDR0 = 'chain15yk64u7zc9g9k2yr2wmzeva5qgwxps6ynsmyjt';
const ETH_ADDR0 = 'chain17w0adeg64ky0daxwd2ugyuneellmjgnxkl0eq4';

// About 50 commands, some with scrypt, and a few processes.
t.setTimeout(240_000);

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));

const baseEnv = { ...process.env };
delete baseEnv.CHAIND_KEYRING_PASSPHRASE;
delete baseEnv.CHAIND_KEYRING_BACKEND;
delete baseEnv.CHAIND_HOME;

function keys(args: string[], input?: string, env: NodeJS.ProcessEnv = {}) {
  return runCliIn(['keys', ...args, '--home', home], input ?? '', { ...baseEnv, ...env });
}
function keysProcess(args: string[], input?: string) {
  return spawnCli(['keys', ...args, '--home', home], input ?? '', baseEnv, 60_000);
}
const T = ['--keyring-backend', 'test'];

t.test('add --recover: both key types, JSON and text output', async (t) => {
  const a = keysProcess(['add', 'alice', '--recover', ...T], DEV_MNEMONIC + '\n');
  t.equal(a.code, 0, a.err);
  t.match(a.out, /^- address: chain15yk64u7zc9g9k2yr2wmzeva5qgwxps6ynsmyjt\n  name: alice\n  pubkey: '\{"@type":"\/chain\.crypto\.secp256k1\.PubKey","key":"[A-Za-z0-9+/]{44}"\}'\n  type: local\n$/);
  t.notMatch(a.err, /Important/, 'a recovered key prints no mnemonic');

  const e = await keys(['add', 'eve', '--recover', '--key-type', 'eth_secp256k1', '-o', 'json', ...T], DEV_MNEMONIC);
  t.equal(e.code, 0, e.err);
  const j = JSON.parse(e.out);
  t.equal(j.name, 'eve');
  t.equal(j.type, 'local');
  t.equal(j.address, ETH_ADDR0);
  t.equal(JSON.parse(j.pubkey)['@type'], '/chain.evm.crypto.v1.ethsecp256k1.PubKey');
  t.notOk('mnemonic' in j);

  const dev = devAccounts();
  const i3 = await keys(['add', 'c3', '--recover', '--index', '3', '-o', 'json', ...T], DEV_MNEMONIC);
  t.equal(JSON.parse(i3.out).address, dev.find((x) => x.keyType === 'secp256k1' && x.index === 3)!.bech32, '--index');
  const hp = await keys(['add', 'e2', '--recover', '--algo', 'eth_secp256k1', '--hd-path', "m/44'/60'/0'/0/2", '-o', 'json', ...T], DEV_MNEMONIC);
  t.equal(JSON.parse(hp.out).address, dev.find((x) => x.keyType === 'eth_secp256k1' && x.index === 2)!.bech32, '--hd-path');
  const ct = await keys(['add', 'ct', '--recover', '--coin-type', '60', '-o', 'json', ...T], DEV_MNEMONIC);
  t.not(JSON.parse(ct.out).address, SECP_ADDR0, '--coin-type 60 with secp256k1 is another key');

  const dup = await keys(['add', 'alice', '--recover', ...T], DEV_MNEMONIC);
  t.equal(dup.code, 1);
  t.match(dup.err, /alice: key already exists/);
  const bad = await keys(['add', 'bad', '--recover', ...T], 'test test test test test test test test test test test test');
  t.equal(bad.code, 1);
  t.match(bad.err, /invalid mnemonic/);
  const none = await keys(['add', 'none', '--recover', ...T], '');
  t.equal(none.code, 1);
  const badType = keysProcess(['add', 'x', '--key-type', 'ed25519', ...T]);
  t.equal(badType.code, 2, 'unknown key type is a usage error');
});

t.test('add: a new key prints its mnemonic once, which recovers the same address', async (t) => {
  const n = await keys(['add', 'fresh', ...T]);
  t.equal(n.code, 0, n.err);
  const m = /\n\n((?:[a-z]+ ){23}[a-z]+)\n\n$/.exec(n.err);
  t.ok(m, 'mnemonic of 24 words on stderr');
  const addr = /address: (chain1[0-9a-z]+)/.exec(n.out)![1];
  const dry = await keys(['add', 'again', '--recover', '--dry-run', '-o', 'json', ...T], m![1]);
  t.equal(JSON.parse(dry.out).address, addr);
  t.equal((await keys(['show', 'again', ...T])).code, 1, 'dry run stored nothing');
  const nb = await keys(['add', 'nobackup', '--no-backup', '-o', 'json', ...T]);
  t.notOk('mnemonic' in JSON.parse(nb.out));
  const js = await keys(['add', 'withm', '-o', 'json', ...T]);
  t.equal(JSON.parse(js.out).mnemonic.split(' ').length, 24, 'JSON carries the mnemonic');
});

t.test('list and show', async (t) => {
  const l = await keys(['list', '-o', 'json', ...T]);
  t.equal(l.code, 0, l.err);
  const list = JSON.parse(l.out) as { name: string; address: string }[];
  t.same(list.map((k) => k.name), [...list.map((k) => k.name)].sort(), 'sorted by name');
  t.equal(list.find((k) => k.name === 'alice')!.address, SECP_ADDR0);
  t.match((await keys(['list', '-n', ...T])).out, /^alice\n/m);

  t.equal((await keys(['show', 'alice', '--address', ...T])).out, `${SECP_ADDR0}\n`);
  t.equal((await keys(['show', 'eve', '-a', ...T])).out, `${ETH_ADDR0}\n`);
  t.match((await keys(['show', 'alice', '-a', '--bech', 'val', ...T])).out, /^chainvaloper1[0-9a-z]+\n$/);
  t.match((await keys(['show', 'alice', '-a', '--bech', 'cons', ...T])).out, /^chainvalcons1[0-9a-z]+\n$/);
  const pk = JSON.parse((await keys(['show', 'alice', '--pubkey', ...T])).out);
  t.equal(pk['@type'], '/chain.crypto.secp256k1.PubKey');
  t.equal(Buffer.from(pk.key, 'base64').length, 33);
  const byAddr = await keys(['show', ETH_ADDR0, '-o', 'json', ...T]);
  t.equal(JSON.parse(byAddr.out).name, 'eve', 'show by address');
  const text = (await keys(['show', 'alice', ...T])).out;
  t.match(text, /^address: chain15yk64u7zc9g9k2yr2wmzeva5qgwxps6ynsmyjt\nname: alice\npubkey: '/);

  const missing = keysProcess(['show', 'nobody', ...T]);
  t.equal(missing.code, 1);
  t.equal(missing.err, 'nobody.info: key not found\n');
  t.equal((await keys(['show', 'alice', '--bech', 'xyz', ...T])).code, 2);
  t.equal((await keys(['show', ...T])).code, 2, 'missing argument');
});

t.test('export / import / import-hex', async (t) => {
  const hex = await keys(['export', 'eve', '--unarmored-hex', '--unsafe', ...T]);
  t.equal(hex.code, 0, hex.err);
  const dev0 = devAccounts().find((x) => x.keyType === 'eth_secp256k1' && x.index === 0)!;
  t.equal(hex.out, Buffer.from(dev0.privateKey).toString('hex') + '\n', 'hex export is the dev key');
  t.equal((await keys(['export', 'eve', '--unarmored-hex', ...T])).code, 2, '--unarmored-hex needs --unsafe');

  const armored = await keys(['export', 'eve', '--export-passphrase', 'exp-pass', ...T]);
  t.equal(armored.code, 0, armored.err);
  t.match(armored.out, /^-----BEGIN CHAIND PRIVATE KEY-----\n/);
  const file = path.join(home, 'eve.armor');
  fs.writeFileSync(file, armored.out);
  const wrong = await keys(['import', 'eve2', file, '--import-passphrase', 'nope', ...T]);
  t.equal(wrong.code, 1);
  t.match(wrong.err, /wrong passphrase/);
  const ok = await keys(['import', 'eve2', file, '--import-passphrase', 'exp-pass', ...T]);
  t.equal(ok.code, 0, ok.err);
  t.equal((await keys(['show', 'eve2', '-a', ...T])).out, `${ETH_ADDR0}\n`, 'imported key has the same address');
  const noPass = await keys(['export', 'eve', ...T]);
  t.equal(noPass.code, 1, 'no export passphrase without a terminal');

  const ih = await keys(['import-hex', 'hexkey', Buffer.from(dev0.privateKey).toString('hex'), '--key-type', 'eth_secp256k1', ...T]);
  t.equal(ih.code, 0, ih.err);
  t.equal((await keys(['show', 'hexkey', '-a', ...T])).out, `${ETH_ADDR0}\n`);
  t.equal((await keys(['import-hex', 'badhex', 'zz', ...T])).code, 1);
});

t.test('delete', async (t) => {
  const refused = await keys(['delete', 'fresh', ...T]);
  t.equal(refused.code, 1, 'no terminal and no --yes');
  t.equal((await keys(['show', 'fresh', ...T])).code, 0, 'still there');
  const d = await keys(['delete', 'fresh', '--yes', ...T]);
  t.equal(d.code, 0, d.err);
  t.match(d.err, /Key deleted forever/);
  t.equal((await keys(['show', 'fresh', ...T])).code, 1);
  t.equal((await keys(['delete', 'fresh', '-y', ...T])).code, 1, 'deleting a missing key fails');
});

t.test('file backend through the CLI: passphrase flag and env, wrong passphrase', async (t) => {
  const add = await keys(['add', 'sealed', '--recover', '--keyring-passphrase', 'passphrase-1'], DEV_MNEMONIC);
  t.equal(add.code, 0, add.err);
  const f = JSON.parse(fs.readFileSync(path.join(home, 'keyring-file', 'sealed.json'), 'utf8'));
  t.ok(f.crypto && !f.private_key, 'sealed on disk');
  t.equal((await keys(['list', '-n'])).out, 'sealed\n', 'list needs no passphrase');
  const hexOk = await keys(['export', 'sealed', '--unarmored-hex', '--unsafe'], '', { CHAIND_KEYRING_PASSPHRASE: 'passphrase-1' });
  t.equal(hexOk.code, 0, hexOk.err);
  t.equal(hexOk.out.trim().length, 64);
  const wrong = await keys(['export', 'sealed', '--unarmored-hex', '--unsafe', '--keyring-passphrase', 'passphrase-2']);
  t.equal(wrong.code, 1);
  t.match(wrong.err, /incorrect keyring passphrase/);
  const none = await keys(['add', 'other']);
  t.equal(none.code, 1);
  t.match(none.err, /needs a passphrase/);
  const badBackend = await keys(['list', '--keyring-backend', 'os']);
  t.equal(badBackend.code, 2);
});
