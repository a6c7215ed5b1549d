/**
 * JWT authentication of the EVM JSON-RPC's private methods (src/rpc/evm/index.ts evmRpcAuth,
 * src/rpc/jsonrpc/geth-server.ts): HS256 over config/jwt.hex, geth's node/jwt_auth.go rules
 * (`iat` within ±60 s whatever `exp` says). A refused request does no work: the methods here count
 * their calls, and a refused one leaves every count where it was.
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { runAuth } from '../../src/cli/auth.js';
import { formatJwtSecret, generateJwtSecret, signJwt } from '../../src/config/jwt.js';
import { evmRpcAuth, evmRpcMethods, type EvmRpcDeps } from '../../src/rpc/evm/index.js';
import { isPrivateMethod } from '../../src/rpc/evm/status.js';
import { gethMethod, gethTable } from '../../src/rpc/jsonrpc/geth.js';
import { GethRpcServer } from '../../src/rpc/jsonrpc/geth-server.js';
import { WsClient } from '../helpers/ws.js';

const secret = generateJwtSecret();
const calls = { private: 0, public: 0 };
// personal_listAccounts is private by namespace, eth_sign by the spec's Public flag N.
const methods = [
  gethMethod({ name: 'personal_listAccounts', handler: () => (calls.private++, []) }),
  gethMethod({ name: 'eth_sign', params: [{ name: 'a', type: 'any', optional: true }], handler: () => (calls.private++, '0x') }),
  gethMethod({ name: 'eth_chainId', handler: () => (calls.public++, '0x1') }),
];

async function startServer(): Promise<GethRpcServer> {
  const s = new GethRpcServer({ laddr: '127.0.0.1:0', methods: gethTable(methods), auth: evmRpcAuth(secret) });
  await s.start();
  return s;
}

const now = () => Math.floor(Date.now() / 1000);
const bearer = (tok: string) => ({ Authorization: `Bearer ${tok}` });

async function post(port: number, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const r = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: r.status, text: await r.text() };
}

const call = (method: string, id = 1) => ({ jsonrpc: '2.0', id, method, params: [] });

/** A token made by hand (header and claims as given), signed with `key`. */
function handMade(claims: Record<string, unknown>, key: Uint8Array = secret): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc(claims)}`;
  const mac = createHmac('sha256', key).update(body).digest('base64url');
  return `${body}.${mac}`;
}

t.test('which methods are private', async (t) => {
  for (const m of ['personal_sign', 'personal_listAccounts', 'personal_unpair', 'debug_traceTransaction', 'eth_sign', 'eth_sendTransaction', 'eth_signTransaction', 'eth_signTypedData_v4']) {
    t.ok(isPrivateMethod(m), `${m} is private`);
  }
  for (const m of ['eth_chainId', 'eth_getBalance', 'eth_sendRawTransaction', 'net_version', 'web3_clientVersion', 'miner_start', 'eth_compileSolidity', 'txpool_status']) {
    t.notOk(isPrivateMethod(m), `${m} is not`);
  }
});

t.test('HTTP: private methods need a valid token; a refused request does nothing', async (t) => {
  const s = await startServer();
  t.teardown(() => s.close());
  const before = { ...calls };
  const refused = async (headers: Record<string, string>, want: string, body: unknown = call('personal_listAccounts')) => {
    const r = await post(s.port, body, headers);
    t.equal(r.status, 401, `401: ${want}`);
    t.equal(r.text, `${want}\n`);
  };
  await refused({}, 'missing token');
  await refused({ Authorization: 'Basic abc' }, 'missing token');
  await refused({ Authorization: 'Bearer ' }, 'missing token');
  await refused(bearer(signJwt(secret, { now: now() - 3600, ttlSeconds: 60 })), 'token is expired');
  await refused(bearer(signJwt(generateJwtSecret())), 'signature is invalid');
  await refused(bearer('a.b'), 'token contains an invalid number of segments');
  await refused(bearer(handMade({ iat: now() - 120, exp: now() + 3600 })), 'stale token');
  await refused(bearer(handMade({ iat: now() - 120 })), 'stale token');
  await refused(bearer(handMade({ iat: now() + 120 })), 'future token');
  await refused(bearer(handMade({ exp: now() + 60 })), 'missing issued-at');
  await refused(bearer('not.a.token'), 'bad header');
  const none = handMade({ iat: now() }).split('.');
  await refused(bearer(`${Buffer.from('{"alg":"none"}').toString('base64url')}.${none[1]}.`), 'unsupported algorithm "none"');
  // A batch with one private call is refused whole: its public call does not run either.
  await refused({}, 'missing token', [call('eth_chainId', 1), call('eth_sign', 2)]);
  await refused({}, 'missing token', call('eth_sign'));
  // One message, `method` members in several spellings (Go matches them case-insensitively and
  // keeps the last): any private one among them needs the token, whichever the last is.
  await refused({}, 'missing token', { jsonrpc: '2.0', id: 1, Method: 'personal_listAccounts', method: 'eth_chainId' });
  await refused({}, 'missing token', { jsonrpc: '2.0', id: 1, METHOD: 'eth_sign', method: 7 });
  t.same(calls, before, 'no method ran');
  const last = await post(s.port, { jsonrpc: '2.0', id: 3, METHOD: 'eth_chainId', method: 'eth_chainId' });
  t.same(JSON.parse(last.text), { jsonrpc: '2.0', id: 3, result: '0x1' }, 'public in every spelling: no token needed');

  const pub = await post(s.port, call('eth_chainId'));
  t.equal(pub.status, 200, 'a public method needs no token');
  t.same(JSON.parse(pub.text), { jsonrpc: '2.0', id: 1, result: '0x1' });

  const ok = await post(s.port, [call('personal_listAccounts', 1), call('eth_chainId', 2)], bearer(signJwt(secret)));
  t.equal(ok.status, 200);
  t.same(JSON.parse(ok.text), [{ jsonrpc: '2.0', id: 1, result: [] }, { jsonrpc: '2.0', id: 2, result: '0x1' }]);
  const fresh = await post(s.port, call('eth_sign'), { Authorization: `bearer  ${handMade({ iat: now() - 30 })} ` });
  t.equal(fresh.status, 200, 'iat 30 s old, no exp, "bearer" in lower case, spaces around: accepted');
  t.same(calls, { private: before.private + 2, public: before.public + 3 });
});

t.test('websocket: the token is checked at the upgrade', async (t) => {
  const s = await startServer();
  t.teardown(() => s.close());
  const before = { ...calls };

  const bad = await WsClient.connect(s.port, `Authorization: Bearer ${signJwt(generateJwtSecret())}\r\n`);
  t.equal(bad.ws, null, 'a bad token: not upgraded');
  t.match(bad.head, /^HTTP\/1\.1 401 /);
  t.match(bad.head, /signature is invalid\n$/);
  const stale = await WsClient.connect(s.port, `Authorization: Bearer ${handMade({ iat: now() - 120 })}\r\n`);
  t.equal(stale.ws, null);
  t.match(stale.head, /stale token\n$/);

  const anon = (await WsClient.connect(s.port)).ws!;
  t.ok(anon, 'no token: upgraded, for public methods');
  t.teardown(() => anon.close());
  anon.send(JSON.stringify(call('personal_listAccounts', 7)));
  t.same(await anon.nextJson(), { jsonrpc: '2.0', id: 7, error: { code: -32000, message: 'missing token' } });
  anon.send(JSON.stringify([call('eth_chainId', 8), call('eth_sign', 9)]));
  t.same(await anon.nextJson(), [
    { jsonrpc: '2.0', id: 8, error: { code: -32000, message: 'missing token' } },
    { jsonrpc: '2.0', id: 9, error: { code: -32000, message: 'missing token' } },
  ]);
  t.same(calls, before, 'nothing ran');
  anon.send(JSON.stringify(call('eth_chainId', 10)));
  t.same(await anon.nextJson(), { jsonrpc: '2.0', id: 10, result: '0x1' });

  const authed = (await WsClient.connect(s.port, `Authorization: Bearer ${signJwt(secret)}\r\n`)).ws!;
  t.ok(authed, 'a valid token: upgraded');
  t.teardown(() => authed.close());
  authed.send(JSON.stringify(call('personal_listAccounts', 11)));
  t.same(await authed.nextJson(), { jsonrpc: '2.0', id: 11, result: [] });
  t.same(calls, { private: before.private + 1, public: before.public + 1 });
});

t.test('without a secret every private call is refused', async (t) => {
  const s = new GethRpcServer({ laddr: '127.0.0.1:0', methods: gethTable(methods), auth: evmRpcAuth(undefined) });
  await s.start();
  t.teardown(() => s.close());
  const r = await post(s.port, call('personal_listAccounts'), bearer(signJwt(secret)));
  t.equal(r.status, 401);
  t.equal(r.text, 'no JWT secret configured\n');
});

t.test('a namespace not in [json-rpc] api is unknown, token or not (it does nothing)', async (t) => {
  const table = gethTable(evmRpcMethods({} as EvmRpcDeps, ['eth', 'net', 'web3']));
  const s = new GethRpcServer({ laddr: '127.0.0.1:0', methods: table, auth: evmRpcAuth(secret) });
  await s.start();
  t.teardown(() => s.close());
  for (const m of ['personal_listAccounts', 'personal_newAccount', 'miner_start', 'debug_traceTransaction']) {
    for (const headers of [bearer(signJwt(secret)), {}]) {
      const r = await post(s.port, call(m), headers);
      t.equal(r.status, 200);
      t.same(JSON.parse(r.text).error, { code: -32601, message: `the method ${m} does not exist/is not available` }, `${m}, ${'Authorization' in headers ? 'with' : 'without'} a token`);
    }
  }
  const signer = await post(s.port, call('eth_sign'));
  t.equal(signer.status, 401, 'eth_sign is served with eth, and private');
});

t.test('`chaind auth token` prints a token the RPC accepts', async (t) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  fs.mkdirSync(path.join(home, 'config'));
  fs.writeFileSync(path.join(home, 'config', 'jwt.hex'), formatJwtSecret(secret));
  let out = '';
  t.equal(runAuth(['token', '--home', home], { out: (x) => void (out += x), err: () => {}, env: {} }), 0);
  const s = await startServer();
  t.teardown(() => s.close());
  const r = await post(s.port, call('personal_listAccounts'), bearer(out.trim()));
  t.equal(r.status, 200);
  t.same(JSON.parse(r.text), { jsonrpc: '2.0', id: 1, result: [] });
});
