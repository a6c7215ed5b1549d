/**
 * `chaind testnet init-files`, run in-process through main(): the node homes, one genesis with
 * every validator, listeners on one address per node, persistent_peers naming the other nodes by
 * the IDs of their node keys, the --dev accounts, account keys and the usage errors.
 */
import t, { type Test } from 'tap';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, loadGenesis, parsePeerAddress, readNodeKey, readPrivValidatorKey } from '../../src/config/index.js';
import { main } from '../../src/cli/main.js';
import { findNodeDirs, nthIp, withHost } from '../../src/cli/testnet.js';
import { Keyring } from '../../src/keys/keyring.js';
import { devAccounts } from '../../src/keys/devaccounts.js';

function collector(env: Record<string, string | undefined> = {}) {
  const io = { outText: '', errText: '', out: (s: string) => void (io.outText += s), err: (s: string) => void (io.errText += s), env };
  return io;
}

function tmp(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'chaind-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

t.test('nthIp and withHost', async (t) => {
  t.equal(nthIp('127.0.0.2', 0), '127.0.0.2');
  t.equal(nthIp('127.0.0.2', 3), '127.0.0.5');
  t.equal(nthIp('10.0.0.255', 1), '10.0.1.0', 'carries into the next octet');
  t.throws(() => nthIp('255.255.255.255', 1), /past 255\.255\.255\.255/);
  t.throws(() => nthIp('localhost', 0), /not an IPv4 address/);
  t.equal(withHost('tcp://127.0.0.1:26657', '127.0.0.3'), 'tcp://127.0.0.3:26657');
  t.equal(withHost('tcp://0.0.0.0:26656', '127.0.0.3'), 'tcp://127.0.0.3:26656');
  t.equal(withHost('127.0.0.1:9090', '127.0.0.3'), '127.0.0.3:9090');
});

t.test('init-files --v 3: homes, one genesis, addresses, peers, ids', async (t) => {
  const dir = tmp(t);
  const out = join(dir, 'net');
  const io = collector();
  const code = await main(['testnet', 'init-files', '--v', '3', '--output-dir', out, '--chain-id', 'tn-1', '--keyring-backend', 'none'], io);
  t.equal(code, 0, io.errText);
  t.match(io.errText, /Successfully initialized 3 node directories/);
  const summary = JSON.parse(io.outText);
  t.equal(summary.chain_id, 'tn-1');
  t.same(findNodeDirs(out, 'node'), ['node0', 'node1', 'node2']);

  const homes = [0, 1, 2].map((i) => join(out, `node${i}`));
  for (const h of homes) {
    for (const f of ['config/config.toml', 'config/app.toml', 'config/genesis.json', 'config/priv_validator_key.json', 'config/node_key.json', 'config/jwt.hex', 'data/priv_validator_state.json']) {
      t.ok(existsSync(join(h, f)), `${h}/${f}`);
    }
    t.notOk(existsSync(join(h, 'keyring-test')), 'no account keys with --keyring-backend none');
  }

  // One genesis, byte-identical on every node, with the three validators at equal power.
  const genesisText = readFileSync(join(homes[0]!, 'config/genesis.json'), 'utf8');
  for (const h of homes) t.equal(readFileSync(join(h, 'config/genesis.json'), 'utf8'), genesisText, `${h}: the same genesis`);
  const g = loadGenesis(join(homes[0]!, 'config/genesis.json'));
  t.equal(g.chainId, 'tn-1');
  t.equal(g.validators.length, 3);
  const powers = new Set(g.validators.map((v) => v.power));
  t.equal(powers.size, 1, 'equal power');
  t.ok([...powers][0]! > 0n);
  t.same((g.appState as { bank: { balances: unknown[] } }).bank.balances, [], 'no funded accounts without --dev or keys');

  const ids: string[] = [];
  homes.forEach((h, i) => {
    const pv = readPrivValidatorKey(join(h, 'config/priv_validator_key.json'));
    const v = g.validators[i]!;
    t.equal(hex(v.address), hex(pv.address), `validator ${i} is node${i}'s key`);
    t.equal(hex(v.pubKey.bytes), hex(pv.pubKey));
    t.equal(v.name, `node${i}`);
    const nk = readNodeKey(join(h, 'config/node_key.json'));
    ids.push(nk.id);
    t.equal(summary.nodes[i].node_id, nk.id, 'the printed ID is the node key\'s');
    t.equal(summary.nodes[i].validator_address, hex(pv.address).toUpperCase());
  });
  t.equal(new Set(ids).size, 3, 'three distinct node keys');

  homes.forEach((h, i) => {
    const ip = `127.0.0.${2 + i}`;
    const { config, appConfig } = loadConfig({ home: h });
    t.equal(config.moniker, `node${i}`);
    t.equal(config.rpc.laddr, `tcp://${ip}:26657`);
    t.equal(config.p2p.laddr, `tcp://${ip}:26656`);
    t.equal(config.instrumentation.prometheusListenAddr, `${ip}:26660`);
    t.equal(appConfig.api.address, `tcp://${ip}:1317`);
    t.equal(appConfig.grpc.address, `${ip}:9090`);
    t.equal(appConfig.jsonRpc.address, `${ip}:8545`);
    t.equal(appConfig.jsonRpc.wsAddress, `${ip}:8546`);
    t.equal(config.p2p.addrBookStrict, false);
    t.equal(config.p2p.allowDuplicateIp, true);

    const peers = config.p2p.persistentPeers;
    t.equal(peers.length, 2, `node${i} peers with the two others`);
    const want = [0, 1, 2].filter((j) => j !== i).map((j) => `${ids[j]}@127.0.0.${2 + j}:26656`);
    t.same(peers, want);
    for (const p of peers) t.ok(parsePeerAddress(p), 'a valid peer address');
    t.same(summary.nodes[i].persistent_peers, want);
  });

  // A second run into the same directory refuses to overwrite.
  const again = collector();
  t.equal(await main(['testnet', 'init-files', '--v', '3', '--output-dir', out, '--chain-id', 'tn-1'], again), 1);
  t.match(again.errText, /already exists/);
});

t.test('init-files --dev funds the dev accounts; keys get funded accounts', async (t) => {
  const dir = tmp(t);
  const out = join(dir, 'net');
  const io = collector();
  const code = await main(
    ['testnet', 'init-files', '--v', '2', '-o', out, '--dev', '--starting-ip-address', '127.0.1.254', '--keyring-backend', 'test'],
    io,
  );
  t.equal(code, 0, io.errText);
  const summary = JSON.parse(io.outText);
  t.match(summary.chain_id, /^chain-[a-z0-9]{6}$/, 'a random chain id when none is given');
  t.same(summary.nodes.map((n: { ip: string }) => n.ip), ['127.0.1.254', '127.0.1.255']);

  const g = loadGenesis(join(out, 'node1/config/genesis.json'));
  const app = g.appState as { bank: { balances: Array<{ address: string; coins: unknown }> }; auth: { accounts: Array<{ address: string }> } };
  const funded = new Set(app.bank.balances.map((b) => b.address));
  for (const a of devAccounts()) t.ok(funded.has(a.bech32), `dev account ${a.bech32} funded`);
  t.equal(app.bank.balances.length, devAccounts().length + 2, 'the dev accounts and one account per node');

  for (const [i, node] of summary.nodes.entries()) {
    const home = join(out, `node${i}`);
    const kr = new Keyring({ backend: 'test', home });
    const rec = kr.get(`node${i}`);
    t.equal(rec.bech32, node.account.bech32, `node${i}'s key is in its keyring`);
    t.ok(funded.has(rec.bech32), `node${i}'s account is funded`);
    const seed = JSON.parse(readFileSync(join(home, 'key_seed.json'), 'utf8'));
    t.equal(seed.secret.split(' ').length, 24, 'the mnemonic is kept in key_seed.json');
  }
  const { config } = loadConfig({ home: join(out, 'node0') });
  t.same(config.p2p.persistentPeers, [`${summary.nodes[1].node_id}@127.0.1.255:26656`]);
});

t.test('usage errors', async (t) => {
  const dir = tmp(t);
  const rows: Array<[string[], RegExp]> = [
    [['testnet'], /^Usage: chaind testnet/],
    [['testnet', 'frob'], /unknown testnet subcommand "frob"/],
    [['testnet', 'init-files', '--v', '0', '-o', dir], /--v: want a number of validators from 1 to 254/],
    [['testnet', 'init-files', '--v', 'x', '-o', dir], /--v: want a number/],
    [['testnet', 'init-files', '--starting-ip-address', 'nope', '-o', dir], /not an IPv4 address/],
    [['testnet', 'init-files', '--v', '3', '--starting-ip-address', '255.255.255.254', '-o', dir], /past 255\.255\.255\.255/],
    [['testnet', 'init-files', '--keyring-backend', 'os', '-o', dir], /--keyring-backend: want/],
    [['testnet', 'init-files', '--keyring-backend', 'file', '-o', dir], /CHAIND_KEYRING_PASSPHRASE/],
  ];
  for (const [args, re] of rows) {
    const io = collector();
    t.equal(await main(args, io), 2, args.join(' '));
    t.match(io.errText, re);
  }
  t.same(findNodeDirs(dir, 'node'), [], 'nothing written by a refused command');
  const io = collector();
  t.equal(await main(['testnet', 'start', '-o', join(dir, 'missing')], io), 1);
  t.match(io.errText, /no node<i> node directories/);
});

/**
 * `testnet start` with a stand-in for the chaind script (deps.cliScript): a child that prints a
 * line, then waits; on SIGTERM it says so and exits 0 unless told to ignore SIGTERM. Exercises the
 * runner's log prefixing, chaind.log, the pass-through flags, death reports and both signals
 * without starting real nodes (test/e2e/testnet-start.test.ts runs real ones).
 */
const FAKE_NODE = `
const args = process.argv.slice(2);
const home = args[args.indexOf('--home') + 1];
const ignoreTerm = args.includes('--ignore-term');
// The handler first: the test signals once it has seen 'up', and must find it installed.
process.on('SIGTERM', () => { if (ignoreTerm) { console.log('ignoring SIGTERM'); return; } console.log('bye'); process.exit(0); });
console.log('up ' + require('node:path').basename(home) + ' ' + args.slice(3).join(' '));
if (args.includes('--die') && home.endsWith('node1')) setTimeout(() => process.exit(3), 200);
setInterval(() => {}, 1000);
`;

async function waitUntil(what: string, fn: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

t.test('testnet start with a stand-in node script', async (t) => {
  const { EventEmitter } = await import('node:events');
  const { writeFileSync } = await import('node:fs');
  const dir = tmp(t);
  const out = join(dir, 'net');
  const init = collector();
  t.equal(await main(['testnet', 'init-files', '--v', '2', '-o', out, '--chain-id', 'tn-s', '--keyring-backend', 'none'], init), 0, init.errText);
  const script = join(dir, 'fake-node.cjs');
  writeFileSync(script, FAKE_NODE);

  // 1. Prefixed lines and chaind.log; SIGINT stops both; exit 0.
  let signals = new EventEmitter();
  let io = collector();
  let run = main(['testnet', 'start', '-o', out, '--', '--log_level', 'debug'], io, { cliScript: script, signals });
  await waitUntil('both nodes up', () => /^node0\| up node0 --log_level debug$/m.test(io.outText) && /^node1\| up node1 --log_level debug$/m.test(io.outText));
  t.match(io.outText, /^node0: rpc http:\/\/127\.0\.0\.2:26657 id [0-9a-f]{40} moniker node0 pid \d+ home /m);
  t.match(io.outText, /^node1: rpc http:\/\/127\.0\.0\.3:26657 id [0-9a-f]{40} moniker node1 pid \d+ home /m);
  signals.emit('SIGINT');
  t.equal(await run, 0, io.errText);
  t.match(io.outText, /^node0\| bye$/m);
  t.match(io.outText, /^node1\| bye$/m);
  t.match(readFileSync(join(out, 'node1', 'chaind.log'), 'utf8'), /^up node1 --log_level debug\nbye\n$/);
  t.equal(signals.listenerCount('SIGINT'), 0, 'signal handlers removed');

  // 2. node1 dies on its own: reported; SIGTERM stops node0; exit 1.
  signals = new EventEmitter();
  io = collector();
  run = main(['testnet', 'start', '-o', out, '--', '--die'], io, { cliScript: script, signals });
  await waitUntil('the death report', () => /node1 exited unexpectedly \(code 3\); the others keep running/.test(io.errText));
  signals.emit('SIGTERM');
  t.equal(await run, 1);
  t.match(io.errText, /SIGTERM: stopping 1 node\(s\)/);

  // 3. Nodes that ignore SIGTERM: a second signal kills them.
  signals = new EventEmitter();
  io = collector();
  run = main(['testnet', 'start', '-o', out, '--', '--ignore-term'], io, { cliScript: script, signals });
  await waitUntil('both nodes up', () => (io.outText.match(/\| up node/g) ?? []).length === 2);
  signals.emit('SIGINT');
  await waitUntil('both ignore SIGTERM', () => (io.outText.match(/ignoring SIGTERM/g) ?? []).length === 2);
  signals.emit('SIGINT');
  t.equal(await run, 1, 'killed nodes are not a clean stop');
  t.match(io.errText, /second SIGINT: killing every node/);
});
