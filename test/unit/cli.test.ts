/** The `chaind` binary, spawned on temporary homes: init, version, auth token, start's config errors. */
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, parseGenesis, readNodeKey, readPrivValidatorKey, verifyJwt } from '../../src/config/index.js';
import { VERSION } from '../../src/version.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

function chaind(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 30_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function home(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'chaind-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const read = (h: string, rel: string) => readFileSync(join(h, rel), 'utf8');

t.test('version', async (t) => {
  const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8'));
  t.equal(VERSION, pkg.version, 'VERSION follows package.json');
  const short = chaind(['version']);
  t.equal(short.code, 0);
  t.equal(short.out, `${VERSION}\n`);
  const long = chaind(['version', '--long'], { CHAIND_COMMIT: 'abc123' });
  t.equal(long.code, 0);
  t.match(long.out, new RegExp(`^version: ${VERSION.replace(/\./g, '\\.')}\ncommit: abc123\ncometbft: 0\\.38\\.\\d+\nabci: 2\\.0\\.0\nnode: v\\d+\\.\\d+\\.\\d+\ncrypto: \\S+`));
  t.equal(chaind(['--version']).out, `${VERSION}\n`);
});

t.test('usage errors exit 2', async (t) => {
  const rows: Array<[string[], RegExp]> = [
    [['frobnicate'], /^Error: unknown command "frobnicate"\nRun 'chaind frobnicate --help'/],
    [[], /^Usage: chaind <command>/],
    [['init', '--chain-id', 'x'], /^Error: init takes exactly one argument, the moniker/],
    [['init', 'm'], /^Error: --chain-id is required/],
    [['init', 'm', '--chain-id', 'x'.repeat(51)], /^Error: --chain-id: too long/],
    [['init', 'm', '--chain-id', 'c', '--bogus'], /^Error: Unknown option '--bogus'/],
    [['start', '--rpc.nope', 'x'], /^Error: Unknown option '--rpc.nope'/],
    [['auth'], /^Error: auth needs a subcommand: token/],
    [['auth', 'token', '--ttl', 'forever'], /^Error: --ttl: invalid duration "forever"/],
  ];
  for (const [args, re] of rows) {
    const r = chaind(args, { CHAIND_HOME: join(tmpdir(), 'chaind-none-' + process.pid) });
    t.equal(r.code, 2, args.join(' '));
    t.match(r.err, re);
  }
  const help = chaind(['help']);
  t.equal(help.code, 0);
  t.match(help.out, /init <moniker>/);
  t.match(chaind(['start', '--help']).out, /--json-rpc.ws-address/);
});

t.test('init writes a complete home', async (t) => {
  const h = home(t);
  const r = chaind(['init', 'node0', '--home', h, '--chain-id', 'chain-test-1']);
  t.equal(r.code, 0, r.err);
  const summary = JSON.parse(r.out);
  t.equal(summary.chain_id, 'chain-test-1');
  t.equal(summary.moniker, 'node0');
  t.notOk('dev_accounts' in summary);
  for (const rel of ['config/config.toml', 'config/app.toml', 'config/genesis.json', 'config/priv_validator_key.json', 'config/node_key.json', 'config/jwt.hex', 'data/priv_validator_state.json']) {
    t.ok(existsSync(join(h, rel)), rel);
  }
  for (const rel of ['config/priv_validator_key.json', 'config/node_key.json', 'config/jwt.hex', 'data/priv_validator_state.json']) {
    t.equal(statSync(join(h, rel)).mode & 0o077, 0, `${rel} is private`);
  }
  const loaded = loadConfig({ home: h });
  t.same(loaded.warnings, [], 'written config loads cleanly');
  t.equal(loaded.config.moniker, 'node0');
  t.equal(loaded.appConfig.compat.upstreamNames, false);

  const pv = readPrivValidatorKey(join(h, 'config/priv_validator_key.json'));
  const pvJson = JSON.parse(read(h, 'config/priv_validator_key.json'));
  t.equal(pvJson.pub_key.type, 'consensus/PubKeyEd25519');
  t.equal(pvJson.priv_key.type, 'consensus/PrivKeyEd25519');
  t.equal(summary.validator_address, pvJson.address);
  t.equal(summary.node_id, readNodeKey(join(h, 'config/node_key.json')).id);
  t.same(JSON.parse(read(h, 'data/priv_validator_state.json')), { height: '0', round: 0, step: 0 });
  t.match(read(h, 'config/jwt.hex'), /^[0-9a-f]{64}$/);

  const g = parseGenesis(read(h, 'config/genesis.json'));
  t.equal(g.chainId, 'chain-test-1');
  t.equal(g.initialHeight, 1n);
  t.equal(g.validators.length, 1);
  t.equal(g.validators[0]!.power, 10n);
  t.same(g.validators[0]!.pubKey.bytes, pv.pubKey);
  t.ok(g.genesisTime > BigInt(Date.now() - 60_000) * 1_000_000n, 'genesis time is now');
  const app = g.appState as any;
  t.same(app.auth.accounts, []);
  t.same(app.bank.balances, []);
  t.same(app.bank.supply, []);
  t.equal(app.bank.denom_metadata[0].base, 'achain');
  t.equal(app.evm.chain_id, 9000);
  t.equal(JSON.parse(read(h, 'config/genesis.json')).validators[0].pub_key.type, 'consensus/PubKeyEd25519');
});

t.test('init refuses to overwrite a genesis; --overwrite keeps keys and config', async (t) => {
  const h = home(t);
  t.equal(chaind(['init', 'a', '--home', h, '--chain-id', 'one']).code, 0);
  const before = {
    pv: read(h, 'config/priv_validator_key.json'),
    nk: read(h, 'config/node_key.json'),
    jwt: read(h, 'config/jwt.hex'),
    genesis: read(h, 'config/genesis.json'),
  };
  writeFileSync(join(h, 'config/config.toml'), read(h, 'config/config.toml').replace('timeout_commit = "1s"', 'timeout_commit = "2s"'));
  const again = chaind(['init', 'a', '--home', h, '--chain-id', 'two']);
  t.equal(again.code, 1);
  t.equal(again.err, 'config/genesis.json: already exists (use --overwrite to replace it)\n');
  t.equal(again.out, '');
  t.equal(read(h, 'config/genesis.json'), before.genesis, 'untouched');

  const over = chaind(['init', 'a', '--home', h, '--chain-id', 'two', '--overwrite']);
  t.equal(over.code, 0, over.err);
  t.equal(parseGenesis(read(h, 'config/genesis.json')).chainId, 'two');
  t.equal(read(h, 'config/priv_validator_key.json'), before.pv, 'validator key reused');
  t.equal(read(h, 'config/node_key.json'), before.nk, 'node key reused');
  t.equal(read(h, 'config/jwt.hex'), before.jwt, 'jwt secret reused');
  t.equal(loadConfig({ home: h }).config.consensus.timeoutCommit, 2_000, 'edited config.toml kept');
});

t.test('init --dev funds the 20 dev accounts', async (t) => {
  const h = home(t);
  const r = chaind(['init', 'dev', '--home', h, '--dev']);
  t.equal(r.code, 0, r.err);
  const summary = JSON.parse(r.out);
  t.equal(summary.chain_id, 'chaind-dev');
  t.equal(summary.dev_accounts.length, 20);
  t.equal(summary.dev_accounts[0].address, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
  const g = parseGenesis(read(h, 'config/genesis.json'));
  t.equal(g.validators[0]!.power, 10n);
  const app = g.appState as any;
  t.equal(app.auth.accounts.length, 20);
  t.same(
    app.auth.accounts.map((a: { account_number: string }) => a.account_number),
    Array.from({ length: 20 }, (_, i) => String(i)),
  );
  t.equal(app.auth.accounts[0].address, 'chain17w0adeg64ky0daxwd2ugyuneellmjgnxkl0eq4');
  t.equal(app.auth.accounts[0]['@type'], '/chain.auth.v1beta1.BaseAccount');
  t.equal(app.bank.balances.length, 20);
  for (const b of app.bank.balances) t.same(b.coins, [{ denom: 'achain', amount: '1000000000000000000000000' }]);
  t.same(app.bank.supply, [{ denom: 'achain', amount: '20000000000000000000000000' }]);
  t.same(app.bank.denom_metadata[0].denom_units.map((u: { exponent: number }) => u.exponent), [0, 18]);
  t.equal(app.evm.chain_id, 9000);
  t.equal(app.evm.no_base_fee, true);
  const funded = new Set(app.bank.balances.map((b: { address: string }) => b.address));
  t.ok(funded.has('chain15yk64u7zc9g9k2yr2wmzeva5qgwxps6ynsmyjt'), "m/44'/118'/0'/0/0 funded");
});

t.test('auth token', async (t) => {
  const h = home(t);
  const missing = chaind(['auth', 'token', '--home', h]);
  t.equal(missing.code, 1);
  t.equal(missing.err, 'config/jwt.hex: not found (run `chaind init` first)\n');
  t.equal(chaind(['init', 'a', '--home', h, '--chain-id', 'c']).code, 0);
  const secret = new Uint8Array(Buffer.from(read(h, 'config/jwt.hex'), 'hex'));
  const r = chaind(['auth', 'token', '--home', h]);
  t.equal(r.code, 0, r.err);
  const token = r.out.trim();
  t.equal(r.out, token + '\n');
  const v = verifyJwt(token, secret);
  t.ok(v.ok, 'verifies with the secret of jwt.hex');
  if (v.ok) {
    t.equal(v.claims.exp! - v.claims.iat, 3600, 'default ttl 1h');
    t.ok(Math.abs(v.claims.iat - Date.now() / 1000) < 60);
  }
  const r30 = chaind(['auth', 'token', '--home', h, '--ttl', '30m']);
  const v30 = verifyJwt(r30.out.trim(), secret);
  t.ok(v30.ok && v30.claims.exp! - v30.claims.iat === 1800, '--ttl 30m');
  t.notOk(verifyJwt(token, new Uint8Array(32)).ok, 'another secret fails');
  const env = chaind(['auth', 'token'], { CHAIND_HOME: h });
  t.ok(verifyJwt(env.out.trim(), secret).ok, '$CHAIND_HOME');
});

t.test('start: invalid config or genesis exits 1 with the message alone', async (t) => {
  const h = home(t);
  t.equal(chaind(['init', 'a', '--home', h, '--chain-id', 'c']).code, 0);
  const cfg = read(h, 'config/config.toml');
  const genesis = read(h, 'config/genesis.json');
  const rows: Array<[string, () => void, string[], string]> = [
    ['bad flag value', () => {}, ['--consensus.timeout_commit', 'abc'], 'flag --consensus.timeout_commit: invalid duration "abc"\n'],
    ['bad flag value (=)', () => {}, ['--rpc.laddr=nowhere'], 'flag --rpc.laddr: invalid listen address "nowhere": missing port\n'],
    ['bad log level flag', () => {}, ['--log_level', 'loud'], 'flag --log_level: invalid log level "loud" (want one of debug|info|warn|error|none)\n'],
    [
      'bad config.toml value',
      () => writeFileSync(join(h, 'config/config.toml'), cfg.replace('timeout_commit = "1s"', 'timeout_commit = "abc"')),
      [],
      'config/config.toml: [consensus] timeout_commit: invalid duration "abc"\n',
    ],
    [
      'bad app.toml value',
      () => writeFileSync(join(h, 'config/app.toml'), read(h, 'config/app.toml').replace('upstream-names = false', 'upstream-names = "no"')),
      [],
      'config/app.toml: [compat] upstream-names: expected true or false, got "no"\n',
    ],
    [
      'bad genesis',
      () => {
        const g = JSON.parse(genesis);
        g.chain_id = '';
        writeFileSync(join(h, 'config/genesis.json'), JSON.stringify(g));
      },
      [],
      'config/genesis.json: chain_id: must not be empty\n',
    ],
    ['missing genesis', () => rmSync(join(h, 'config/genesis.json')), [], 'config/genesis.json: not found (run `chaind init` first)\n'],
  ];
  for (const [name, setup, flags, msg] of rows) {
    // Reset to the good files, then break one thing.
    writeFileSync(join(h, 'config/config.toml'), cfg);
    writeFileSync(join(h, 'config/genesis.json'), genesis);
    writeFileSync(join(h, 'config/app.toml'), read(h, 'config/app.toml').replace('upstream-names = "no"', 'upstream-names = false'));
    setup();
    const r = chaind(['start', '--home', h, ...flags]);
    t.equal(r.code, 1, name);
    t.equal(r.err, msg, name);
    t.notMatch(r.err, /\n\s+at /, `${name}: no stack`);
  }
});
