/** priv_validator_key.json and node_key.json: write, read back, reject inconsistent files. */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign, verify, createPrivateKey, createPublicKey } from 'node:crypto';
import {
  ed25519PubKeyFromSeed,
  generateEd25519,
  nodeIdFromPubKey,
  readNodeKey,
  readPrivValidatorKey,
  writeInitialPrivValidatorState,
  writeNodeKey,
  writePrivValidatorKey,
} from '../../src/config/keyfiles.js';
import { createNames } from '../../src/names/index.js';

function tmp(t: { teardown(f: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'chaind-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('generated keys sign and verify with node:crypto', async (t) => {
  const k = generateEd25519();
  t.equal(k.seed.length, 32);
  t.equal(k.pubKey.length, 32);
  t.same(ed25519PubKeyFromSeed(k.seed), k.pubKey, 'public key derives from the seed');
  const priv = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), k.seed]), format: 'der', type: 'pkcs8' });
  const sig = sign(null, Buffer.from('msg'), priv);
  const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(k.pubKey).toString('base64url') }, format: 'jwk' });
  t.ok(verify(null, Buffer.from('msg'), pub, sig));
  t.notSame(generateEd25519().seed, k.seed);
});

t.test('RFC 8032 test 1: seed → public key, address', async (t) => {
  const seed = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
  t.equal(Buffer.from(ed25519PubKeyFromSeed(seed)).toString('hex'), 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
});

t.test('priv_validator_key.json round trip and shape', async (t) => {
  const dir = tmp(t);
  const path = join(dir, 'config', 'priv_validator_key.json');
  const k = generateEd25519();
  writePrivValidatorKey(path, k);
  t.equal(statSync(path).mode & 0o777, 0o600, 'private file mode');
  const json = JSON.parse(readFileSync(path, 'utf8'));
  t.same(Object.keys(json), ['address', 'pub_key', 'priv_key']);
  t.equal(json.pub_key.type, 'consensus/PubKeyEd25519');
  t.equal(json.priv_key.type, 'consensus/PrivKeyEd25519');
  t.equal(Buffer.from(json.priv_key.value, 'base64').length, 64);
  t.equal(json.address, nodeIdFromPubKey(k.pubKey).toUpperCase());
  const back = readPrivValidatorKey(path);
  t.same(back.seed, k.seed);
  t.same(back.pubKey, k.pubKey);
  t.equal(back.privKey.length, 64);

  // Upstream spelling is accepted.
  writePrivValidatorKey(path, k, createNames({ upstreamNames: true }));
  t.equal(JSON.parse(readFileSync(path, 'utf8')).priv_key.type, 'tendermint/PrivKeyEd25519');
  t.same(readPrivValidatorKey(path).pubKey, k.pubKey);
});

t.test('inconsistent key files are rejected with the field', async (t) => {
  const dir = tmp(t);
  const path = join(dir, 'pv.json');
  const k = generateEd25519();
  writePrivValidatorKey(path, k);
  const good = JSON.parse(readFileSync(path, 'utf8'));
  const other = generateEd25519();
  const rows: Array<[(j: any) => void, string]> = [
    [(j) => (j.address = '00'.repeat(20)), 'pv: address: does not match the key'],
    [(j) => (j.pub_key.value = Buffer.from(other.pubKey).toString('base64')), 'pv: pub_key.value: does not match priv_key'],
    [(j) => (j.priv_key.type = 'consensus/PrivKeySecp256k1'), 'pv: priv_key.type: unsupported key type'],
    [(j) => (j.priv_key.value = 'AAAA'), 'pv: priv_key.value: want 64 bytes'],
    [
      (j) => (j.priv_key.value = Buffer.concat([Buffer.from(k.seed), Buffer.from(other.pubKey)]).toString('base64')),
      'pv: priv_key.value: public half does not match the seed',
    ],
    [(j) => delete j.priv_key, 'pv: priv_key: missing'],
  ];
  for (const [f, msg] of rows) {
    const j = JSON.parse(JSON.stringify(good));
    f(j);
    writeFileSync(path, JSON.stringify(j));
    t.throws(() => readPrivValidatorKey(path, 'pv'), { name: 'ConfigError' }, msg);
    try {
      readPrivValidatorKey(path, 'pv');
    } catch (e) {
      t.equal((e as Error).message.slice(0, msg.length), msg);
    }
  }
  writeFileSync(path, '{');
  t.throws(() => readPrivValidatorKey(path, 'pv'), { code: 'CONFIG_SYNTAX' });
});

t.test('node_key.json and the node id', async (t) => {
  const dir = tmp(t);
  const path = join(dir, 'node_key.json');
  const k = generateEd25519();
  writeNodeKey(path, k);
  const json = JSON.parse(readFileSync(path, 'utf8'));
  t.same(Object.keys(json), ['priv_key']);
  t.equal(json.priv_key.type, 'consensus/PrivKeyEd25519');
  const nk = readNodeKey(path);
  t.match(nk.id, /^[0-9a-f]{40}$/);
  t.equal(nk.id, nodeIdFromPubKey(k.pubKey));
  // The CometBFT fixture's validator: address = sha256(pub)[:20].
  const pub = Buffer.from('bNNlGls5R25wC3Sd8720F/3+7IZBhXcD22MNFtPk/v0=', 'base64');
  t.equal(nodeIdFromPubKey(pub), '2dd9f44fd9067555c322243c3c913ba7b51d2be0');
});

t.test('initial sign state', async (t) => {
  const dir = tmp(t);
  const path = join(dir, 'data', 'priv_validator_state.json');
  writeInitialPrivValidatorState(path);
  t.same(JSON.parse(readFileSync(path, 'utf8')), { height: '0', round: 0, step: 0 });
});
