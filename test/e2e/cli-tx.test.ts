/**
 * The Cosmos user's CLI against a real node process: `chaind init --dev`, `chaind start`, then
 * `chaind keys add --recover` with the dev mnemonic, `chaind query bank balances`, `chaind query
 * auth account`, `chaind tx bank send … --yes --broadcast-mode commit`, and an authz
 * grant / exec / revoke, every step through the CLI.
 *
 * The subtests go through the node's real transaction path (protobuf TxRaw decoding, signature
 * checks) and its module queries over abci_query. The node is its own process; the client
 * commands run in this one (test/helpers/cli.ts), except `init` and the first send, which run as
 * a user runs them.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { allocPorts, statusHeight, startNode, tmpHome, waitFor, within } from '../helpers/node.js';
import { runCliIn, spawnCli } from '../helpers/cli.js';
import { bech32Address, DEV_MNEMONIC } from '../../src/keys/devaccounts.js';

const CHAIN_ID = 'cli-e2e-1';
/** `--dev` funds each dev account with 10^24 achain. */
const DEV_BALANCE = 10n ** 24n;

t.setTimeout(300_000);

const home = tmpHome('chaind-cli-e2e-');
t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));

const baseEnv = { ...process.env };
delete baseEnv.CHAIND_KEYRING_PASSPHRASE;
delete baseEnv.CHAIND_KEYRING_BACKEND;
delete baseEnv.CHAIND_HOME;

/** A client command, in this process (test/helpers/cli.ts); `chaindProcess` runs one as its own process. */
function chaind(args: string[], input = '') {
  return runCliIn(args, input, baseEnv);
}
function chaindProcess(args: string[], input = '') {
  return spawnCli(args, input, baseEnv);
}

const KR = ['--home', home, '--keyring-backend', 'test'];
let NODE: string[] = [];
const addr: Record<string, string> = {};

async function balanceOf(address: string): Promise<bigint | undefined> {
  const r = await chaind(['query', 'bank', 'balances', address, ...NODE, '-o', 'json']);
  if (r.code !== 0) return undefined;
  const b = (JSON.parse(r.out).balances as { denom: string; amount: string }[]).find((c) => c.denom === 'achain');
  return BigInt(b?.amount ?? '0');
}

function txOk(t: Test, r: { code: number | null; out: string; err: string }, what: string): Record<string, any> | undefined {
  t.equal(r.code, 0, `${what} exits 0: ${r.err}`);
  if (r.code !== 0 && r.out === '') return undefined;
  const res = JSON.parse(r.out);
  t.equal(res.code, 0, `${what}: code 0 (${res.raw_log})`);
  t.ok(BigInt(res.height) > 0n, `${what}: committed at a height`);
  t.match(res.txhash, /^[0-9A-F]{64}$/);
  return res;
}

let nodeOutput: () => string = () => '';

t.before(async () => {
  const init = chaindProcess(['init', 'cli-e2e', '--home', home, '--chain-id', CHAIN_ID, '--dev']);
  if (init.code !== 0) throw new Error(`init failed: ${init.err}`);
  const ports = await allocPorts();
  // Fast blocks: every `--broadcast-mode commit` waits for one.
  const node = startNode(home, ports, {}, ['--consensus.timeout_commit', '200ms']);
  nodeOutput = node.output;
  t.teardown(async () => {
    node.proc.kill('SIGTERM');
    await within(node.exited, 10_000);
    node.proc.kill('SIGKILL');
  });
  NODE = ['--node', `tcp://127.0.0.1:${ports.rpc}`];
  await waitFor('height >= 2', async () => (await statusHeight(ports.rpc)) >= 2n, 180_000).catch((e) => {
    t.comment(node.output());
    throw e;
  });
});

t.test('keys add --recover with the dev mnemonic', async (t) => {
  for (const [name, extra] of [
    ['alice', []],
    ['bob', ['--index', '1']],
    ['eve', ['--key-type', 'eth_secp256k1']],
  ] as const) {
    const r = await chaind(['keys', 'add', name, '--recover', ...extra, ...KR, '-o', 'json'], DEV_MNEMONIC + '\n');
    t.equal(r.code, 0, `${name}: ${r.err}`);
    addr[name] = JSON.parse(r.out).address;
  }
  t.equal(addr['alice'], 'chain15yk64u7zc9g9k2yr2wmzeva5qgwxps6ynsmyjt');
  t.equal(addr['eve'], 'chain17w0adeg64ky0daxwd2ugyuneellmjgnxkl0eq4', 'eth_secp256k1 account 0 = 0xf39F…2266');
  t.equal((await chaind(['keys', 'show', 'bob', '-a', ...KR])).out.trim(), addr['bob']);
});

t.test('query bank balances', async (t) => {
  const b = await chaind(['query', 'bank', 'balances', addr['alice']!, ...NODE, '-o', 'json']);
  t.equal(b.code, 0, b.err);
  const j = JSON.parse(b.out || '{}');
  t.same(j.balances, [{ denom: 'achain', amount: DEV_BALANCE.toString() }], 'the dev genesis balance');
  t.ok('pagination' in j);
  const one = await chaind(['query', 'bank', 'balance', addr['alice']!, 'achain', ...NODE, '-o', 'json']);
  t.equal(one.code, 0, one.err);
  t.same(JSON.parse(one.out || '{}').balance, { denom: 'achain', amount: DEV_BALANCE.toString() });
  const text = await chaind(['query', 'bank', 'balances', addr['eve']!, ...NODE]);
  t.match(text.out, new RegExp(`^balances:\\n- amount: "${DEV_BALANCE}"\\n  denom: achain\\npagination:\\n`));
  const supply = await chaind(['query', 'bank', 'total-supply', ...NODE, '-o', 'json']);
  t.equal(supply.code, 0, supply.err);
  t.ok(BigInt(JSON.parse(supply.out || '{}').supply?.find((c: { denom: string }) => c.denom === 'achain')?.amount ?? 0) >= 20n * DEV_BALANCE, 'supply covers the 20 dev accounts');
  const bad = await chaind(['query', 'bank', 'balances', 'chain1notanaddress', ...NODE]);
  t.equal(bad.code, 1, 'an invalid address is an error');
  t.match(bad.err, /^rpc error: code = /);
});

t.test('query auth account', async (t) => {
  const a = await chaind(['query', 'auth', 'account', addr['eve']!, ...NODE, '-o', 'json']);
  t.equal(a.code, 0, a.err);
  const acc = JSON.parse(a.out || '{}').account ?? {};
  t.equal(acc['@type'], '/chain.auth.v1beta1.BaseAccount');
  t.equal(acc.address, addr['eve']);
  t.equal(acc.account_number, '0', 'eth dev account 0 is genesis account 0');
  t.equal(acc.sequence, '0');
  const text = await chaind(['query', 'auth', 'account', addr['eve']!, ...NODE]);
  t.match(text.out, /account:\n  '@type': \/chain\.auth\.v1beta1\.BaseAccount\n/);

  const missing = await chaind(['query', 'auth', 'account', bech32Address(new Uint8Array(20).fill(7)), ...NODE]);
  t.equal(missing.code, 1);
  t.match(missing.err, /rpc error: code = NotFound desc = .*not found/);
});

t.test('tx bank send --yes --broadcast-mode commit', async (t) => {
  const before = await balanceOf(addr['bob']!);
  t.ok(before !== undefined, 'bob has a balance');
  const r = chaindProcess(['tx', 'bank', 'send', 'alice', addr['bob']!, '12345achain', '--fees', '10achain', '--memo', 'cli e2e', '--yes', '--broadcast-mode', 'commit', ...KR, ...NODE]);
  const sent = txOk(t, r, 'bank send');
  // The signature CheckTx verified on the RPC thread reaches the executor thread (sent between
  // blocks or with the block), which does not verify it again.
  const executed = new RegExp(`executed block height=${sent?.height} txs=1 .*sigs_from_checktx=(\\d+) sigs_verified_here=(\\d+)`);
  await waitFor('the executor log line of the block', async () => executed.test(nodeOutput()), 30_000);
  const [, fromCheckTx, verifiedHere] = executed.exec(nodeOutput())!;
  t.equal(fromCheckTx, '1', "the block's signature came from CheckTx's checks");
  t.equal(verifiedHere, '0', 'the executor thread verified nothing again');
  t.equal(await balanceOf(addr['bob']!), (before ?? 0n) + 12345n, 'bob received 12345achain');
  t.equal(await balanceOf(addr['alice']!), DEV_BALANCE - 12345n - 10n, 'alice paid amount and fee');

  const acc = JSON.parse((await chaind(['query', 'auth', 'account', addr['alice']!, ...NODE, '-o', 'json'])).out || '{}').account ?? {};
  t.equal(acc.sequence, '1', 'sequence advanced');
  t.equal(acc.pub_key?.['@type'], '/chain.crypto.secp256k1.PubKey', 'public key stored by the first tx');

  // eth_secp256k1 signer, amino JSON sign mode.
  const e = await chaind(['tx', 'bank', 'send', 'eve', addr['bob']!, '1achain', '--sign-mode', 'amino-json', '--yes', '-b', 'commit', ...KR, ...NODE]);
  txOk(t, e, 'eth_secp256k1 amino-json send');
  t.equal(await balanceOf(addr['bob']!), (before ?? 0n) + 12346n);

  // A wrong sequence is refused by the node with the SDK's message.
  const bad = await chaind(['tx', 'bank', 'send', 'alice', addr['bob']!, '1achain', '--sequence', '0', '--yes', '-b', 'commit', ...KR, ...NODE]);
  t.equal(bad.code, 1);
  t.match(bad.err, /account sequence mismatch, expected 1, got 0/);
});

t.test('authz grant, exec, revoke through the CLI', async (t) => {
  const grant = await chaind(['tx', 'authz', 'grant', addr['eve']!, 'send', '--spend-limit', '1000achain', '--from', 'alice', '--yes', '-b', 'commit', ...KR, ...NODE]);
  txOk(t, grant, 'grant');
  const grants = await chaind(['query', 'authz', 'grants', addr['alice']!, addr['eve']!, ...NODE, '-o', 'json']);
  t.equal(grants.code, 0, grants.err);
  const g = JSON.parse(grants.out || '{}').grants ?? [];
  t.equal(g.length, 1);
  t.equal(g[0]?.authorization?.['@type'], '/chain.bank.v1beta1.SendAuthorization');
  t.same(g[0]?.authorization?.spend_limit, [{ denom: 'achain', amount: '1000' }]);
  const byGrantee = JSON.parse((await chaind(['query', 'authz', 'grants-by-grantee', addr['eve']!, ...NODE, '-o', 'json'])).out || '{}');
  t.equal(byGrantee.grants?.[0]?.granter, addr['alice']);
  const byGranter = JSON.parse((await chaind(['query', 'authz', 'grants-by-granter', addr['alice']!, ...NODE, '-o', 'json'])).out || '{}');
  t.equal(byGranter.grants?.[0]?.grantee, addr['eve']);

  // The granter's send, generated offline, executed by the grantee.
  const gen = await chaind(['tx', 'bank', 'send', addr['alice']!, addr['bob']!, '400achain', '--generate-only', ...KR]);
  t.equal(gen.code, 0, gen.err);
  const file = path.join(home, 'authz-send.json');
  fs.writeFileSync(file, gen.out);
  const bobBefore = (await balanceOf(addr['bob']!)) ?? 0n;
  const exec = await chaind(['tx', 'authz', 'exec', file, '--from', 'eve', '--yes', '-b', 'commit', ...KR, ...NODE]);
  txOk(t, exec, 'exec');
  t.equal(await balanceOf(addr['bob']!), bobBefore + 400n, 'the grantee moved the granter’s coins');
  const left = JSON.parse((await chaind(['query', 'authz', 'grants', addr['alice']!, addr['eve']!, ...NODE, '-o', 'json'])).out || '{}');
  t.same(left.grants?.[0]?.authorization?.spend_limit, [{ denom: 'achain', amount: '600' }], 'spend limit reduced');

  const revoke = await chaind(['tx', 'authz', 'revoke', addr['eve']!, '/chain.bank.v1beta1.MsgSend', '--from', 'alice', '--yes', '-b', 'commit', ...KR, ...NODE]);
  txOk(t, revoke, 'revoke');
  const after = await chaind(['query', 'authz', 'grants', addr['alice']!, addr['eve']!, ...NODE, '-o', 'json']);
  t.same(JSON.parse(after.out || '{}').grants, [], 'no grant left');
  const again = await chaind(['tx', 'authz', 'exec', file, '--from', 'eve', '--yes', '-b', 'commit', ...KR, ...NODE]);
  t.equal(again.code, 1, 'exec without a grant fails');
  t.match(again.err, /authorization not found/);
});
