/**
 * `chaind tx` and `chaind query` against a stub node RPC on 127.0.0.1 (a plain HTTP server that
 * answers the JSON-RPC calls the client makes and records what it was sent). Checks the tx bytes
 * the CLI signs: decoded with the node's own decoder, signature verified over the sign bytes, and
 * equal to what CosmJS signs for the same SignDoc; fees, gas auto, generate-only, authz messages,
 * broadcast modes, and the query request/response and error mapping.
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { DirectSecp256k1HdWallet, makeSignDoc } from '@cosmjs/proto-signing';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/common.js';
import { BaseAccountSchema } from '../../src/gen/chain/auth/v1beta1/auth_pb.js';
import { QueryAccountRequestSchema, QueryAccountResponseSchema } from '../../src/gen/chain/auth/v1beta1/query_pb.js';
import { GenericAuthorizationSchema } from '../../src/gen/chain/authz/v1beta1/authz_pb.js';
import { MsgExecSchema, MsgGrantSchema, MsgRevokeSchema } from '../../src/gen/chain/authz/v1beta1/tx_pb.js';
import { SendAuthorizationSchema } from '../../src/gen/chain/bank/v1beta1/authz_pb.js';
import { QueryAllBalancesRequestSchema, QueryAllBalancesResponseSchema } from '../../src/gen/chain/bank/v1beta1/query_pb.js';
import { MsgSendSchema } from '../../src/gen/chain/bank/v1beta1/tx_pb.js';
import { SignMode } from '../../src/gen/chain/tx/signing/v1beta1/signing_pb.js';
import { SimulateRequestSchema, SimulateResponseSchema } from '../../src/gen/chain/tx/v1beta1/service_pb.js';
import { DEV_MNEMONIC } from '../../src/keys/devaccounts.js';
import { packAny, unpackAnyAs } from '../../src/proto/registry.js';
import { decodeTx, signBytesDirect, signBytesLegacyAmino, txHash } from '../../src/tx/index.js';

const SECP0 = 'chain15yk64u7zc9g9k2yr2wmzeva5qgwxps6ynsmyjt';
const ETH0 = 'chain17w0adeg64ky0daxwd2ugyuneellmjgnxkl0eq4';

// ---- stub node ----

interface Stub {
  url: string;
  calls: { method: string; params: any }[];
  txs: Uint8Array[];
  simulate: 'ok' | 'unknown';
  checkCode: number;
  close: () => Promise<void>;
}

async function stubNode(): Promise<Stub> {
  const stub = { calls: [], txs: [], simulate: 'ok', checkCode: 0 } as unknown as Stub;
  const accounts = new Map([
    [SECP0, { n: 7n, s: 3n }],
    [ETH0, { n: 0n, s: 0n }],
  ]);
  const queryResult = (path: string, data: Uint8Array) => {
    const ok = (value: Uint8Array) => ({ code: 0, log: '', info: '', index: '0', key: null, value: Buffer.from(value).toString('base64'), proofOps: null, height: '42', codespace: '' });
    const fail = (code: number, log: string) => ({ code, log, info: '', index: '0', key: null, value: null, proofOps: null, height: '0', codespace: 'sdk' });
    if (path === '/chain.auth.v1beta1.Query/Account') {
      const { address } = fromBinary(QueryAccountRequestSchema, data);
      const a = accounts.get(address);
      if (!a) return fail(22, `rpc error: code = NotFound desc = account ${address} not found: key not found`);
      const acc = create(BaseAccountSchema, { address, accountNumber: a.n, sequence: a.s });
      return ok(toBinary(QueryAccountResponseSchema, create(QueryAccountResponseSchema, { account: packAny(BaseAccountSchema, acc) })));
    }
    if (path === '/chain.tx.v1beta1.Service/Simulate') {
      if (stub.simulate === 'unknown') return fail(6, 'unknown query path: unknown request');
      const req = fromBinary(SimulateRequestSchema, data);
      decodeTx(req.txBytes); // the simulated tx must be a valid TxRaw
      return ok(toBinary(SimulateResponseSchema, create(SimulateResponseSchema, { gasInfo: { gasWanted: 0n, gasUsed: 100_000n } })));
    }
    if (path === '/chain.bank.v1beta1.Query/AllBalances') {
      const req = fromBinary(QueryAllBalancesRequestSchema, data);
      return ok(
        toBinary(
          QueryAllBalancesResponseSchema,
          create(QueryAllBalancesResponseSchema, { balances: [{ denom: 'achain', amount: `${req.pagination?.limit ?? 0n}` }], pagination: { nextKey: new Uint8Array([1, 2]), total: 0n } }),
        ),
      );
    }
    return fail(6, 'unknown query path: unknown request');
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const { id, method, params } = JSON.parse(body);
      stub.calls.push({ method, params });
      let result: unknown;
      if (method === 'abci_query') result = { response: queryResult(params.path, new Uint8Array(Buffer.from(params.data, 'hex'))) };
      else if (method === 'status') result = { node_info: { network: 'stub-from-status' } };
      else if (method.startsWith('broadcast_tx_')) {
        const tx = new Uint8Array(Buffer.from(params.tx, 'base64'));
        stub.txs.push(tx);
        const check = { code: stub.checkCode, data: null, log: stub.checkCode ? 'insufficient fees; got: 0achain required: 1achain: insufficient fee' : '', info: '', gas_wanted: '200000', gas_used: '0', events: [], codespace: stub.checkCode ? 'sdk' : '' };
        if (method === 'broadcast_tx_commit') {
          result = {
            check_tx: check,
            tx_result: { code: 0, data: Buffer.from([0x12, 0x03]).toString('base64'), log: '', info: '', gas_wanted: '200000', gas_used: '51234', events: [{ type: 'message', attributes: [{ key: 'action', value: '/chain.bank.v1beta1.MsgSend', index: true }] }], codespace: '' },
            hash: txHash(tx),
            height: '12',
          };
        } else result = { code: check.code, data: '', log: check.log, codespace: check.codespace, hash: txHash(tx) };
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(result === undefined ? { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } } : { jsonrpc: '2.0', id, result }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  stub.url = `tcp://127.0.0.1:${(server.address() as { port: number }).port}`;
  stub.close = () => new Promise((r) => server.close(() => r()));
  return stub;
}

// ---- harness ----

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = { out: (s) => void (out += s), err: (s) => void (err += s), env: {} };
  const code = await main(args, io);
  return { code, out, err };
}

const KR = ['--home', home, '--keyring-backend', 'test'];
let stub: Stub;

t.before(async () => {
  stub = await stubNode();
  const { Keyring } = await import('../../src/keys/keyring.js');
  const kr = new Keyring({ backend: 'test', home });
  await kr.add('alice', { mnemonic: DEV_MNEMONIC });
  await kr.add('eve', { mnemonic: DEV_MNEMONIC, algo: 'eth_secp256k1' });
});
t.teardown(() => stub.close());

t.test('bank send, SIGN_MODE_DIRECT: decodes, verifies, equals CosmJS', async (t) => {
  const r = await cli(['tx', 'bank', 'send', 'alice', ETH0, '1000achain,5zeta', '--chain-id', 'stub-1', '--node', stub.url, '--fees', '20achain', '--memo', 'hello', ...KR]);
  t.equal(r.code, 0, r.err);
  const res = JSON.parse(r.out);
  const tx = decodeTx(stub.txs.at(-1)!);
  t.equal(res.txhash, txHash(stub.txs.at(-1)!));
  t.equal(res.code, 0);
  t.equal(res.height, '0', 'sync mode: no height');
  t.same(stub.calls.filter((c) => c.method.startsWith('broadcast')).map((c) => c.method), ['broadcast_tx_sync']);

  const msg = unpackAnyAs(tx.body.messages[0]!, MsgSendSchema)!;
  t.equal(tx.body.messages[0]!.typeUrl, '/chain.bank.v1beta1.MsgSend');
  t.equal(msg.fromAddress, SECP0);
  t.equal(msg.toAddress, ETH0);
  t.same(msg.amount.map((c) => `${c.amount}${c.denom}`), ['1000achain', '5zeta']);
  t.equal(tx.body.memo, 'hello');
  t.equal(tx.authInfo.fee!.gasLimit, 200_000n, 'default gas');
  t.same(tx.authInfo.fee!.amount.map((c) => `${c.amount}${c.denom}`), ['20achain']);
  const si = tx.authInfo.signerInfos[0]!;
  t.equal(si.sequence, 3n, 'sequence from the account query');
  t.equal(si.publicKey!.typeUrl, '/chain.crypto.secp256k1.PubKey');
  t.same(si.modeInfo!.sum, { case: 'single', value: si.modeInfo!.sum.value });
  t.equal((si.modeInfo!.sum.value as { mode: SignMode }).mode, SignMode.DIRECT);

  const sb = signBytesDirect(tx.bodyBytes, tx.authInfoBytes, 'stub-1', 7n);
  const wallet = await DirectSecp256k1HdWallet.fromMnemonic(DEV_MNEMONIC, { prefix: 'chain' });
  const [acct] = await wallet.getAccounts();
  t.ok(secp256k1.verify(tx.signatures[0]!, sha256(sb), acct!.pubkey, { prehash: false }), 'signature verifies over SignDoc(account number 7)');
  const cosm = await wallet.signDirect(SECP0, makeSignDoc(tx.bodyBytes, tx.authInfoBytes, 'stub-1', 7));
  t.equal(Buffer.from(tx.signatures[0]!).toString('base64'), cosm.signature.signature, 'CosmJS signs the same SignDoc identically');
});

t.test('eth_secp256k1 + amino-json, explicit account number and sequence, commit mode', async (t) => {
  const before = stub.calls.length;
  const r = await cli(['tx', 'bank', 'send', 'eve', SECP0, '1achain', '--chain-id', 'stub-1', '--node', stub.url, '--sign-mode', 'amino-json', '-a', '9', '-s', '4', '-b', 'commit', ...KR]);
  t.equal(r.code, 0, r.err);
  t.notOk(stub.calls.slice(before).some((c) => c.method === 'abci_query'), 'no account query when both are given');
  const res = JSON.parse(r.out);
  t.equal(res.height, '12');
  t.equal(res.gas_used, '51234');
  t.equal(res.data, '1203', 'data as upper hex');
  t.equal(res.events[0].type, 'message');
  const tx = decodeTx(stub.txs.at(-1)!);
  const si = tx.authInfo.signerInfos[0]!;
  t.equal(si.publicKey!.typeUrl, '/chain.evm.crypto.v1.ethsecp256k1.PubKey');
  t.equal((si.modeInfo!.sum.value as { mode: SignMode }).mode, SignMode.LEGACY_AMINO_JSON);
  t.equal(si.sequence, 4n);
  const sb = signBytesLegacyAmino(tx, 'stub-1', 9n, 4n);
  t.match(new TextDecoder().decode(sb), /"type":"chain-sdk\/MsgSend"/);
  const pub = fromBinary((await import('../../src/gen/chain/evm/crypto/v1/ethsecp256k1/keys_pb.js')).PubKeySchema, si.publicKey!.value).key;
  t.ok(secp256k1.verify(tx.signatures[0]!, keccak_256(sb), pub, { prehash: false }), 'Keccak-256 signature over the amino sign doc');
});

t.test('gas auto (Simulate), --gas-adjustment, --gas-prices', async (t) => {
  const r = await cli(['tx', 'bank', 'send', 'alice', ETH0, '1achain', '--chain-id', 'stub-1', '--node', stub.url, '--gas', 'auto', '--gas-adjustment', '1.5', '--gas-prices', '0.5achain', ...KR]);
  t.equal(r.code, 0, r.err);
  t.match(r.err, /estimated gas: 150000/);
  const tx = decodeTx(stub.txs.at(-1)!);
  t.equal(tx.authInfo.fee!.gasLimit, 150_000n, 'ceil(100000 × 1.5)');
  t.same(tx.authInfo.fee!.amount.map((c) => `${c.amount}${c.denom}`), ['75000achain'], 'ceil(0.5 × 150000)');

  const dry = await cli(['tx', 'bank', 'send', 'alice', ETH0, '1achain', '--node', stub.url, '--dry-run', ...KR]);
  t.equal(dry.code, 0, dry.err);
  t.equal(dry.err, 'gas estimate: 100000\n');
  t.equal(dry.out, '');

  const odd = await cli(['tx', 'bank', 'send', 'alice', ETH0, '1achain', '--chain-id', 'c', '--node', stub.url, '--gas', '3', '--gas-prices', '0.1achain', ...KR]);
  t.equal(odd.code, 0, odd.err);
  t.same(decodeTx(stub.txs.at(-1)!).authInfo.fee!.amount.map((c) => `${c.amount}${c.denom}`), ['1achain'], 'fee rounds up');

  stub.simulate = 'unknown';
  const un = await cli(['tx', 'bank', 'send', 'alice', ETH0, '1achain', '--chain-id', 'stub-1', '--node', stub.url, '--gas', 'auto', ...KR]);
  stub.simulate = 'ok';
  t.equal(un.code, 1);
  t.match(un.err, /--gas auto is not supported by this node/);

  const both = await cli(['tx', 'bank', 'send', 'alice', ETH0, '1achain', '--node', stub.url, '--fees', '1achain', '--gas-prices', '1achain', ...KR]);
  t.equal(both.code, 1);
  t.match(both.err, /cannot provide both fees and gas prices/);
});

t.test('chain id from the genesis in --home, else from /status', async (t) => {
  const r1 = await cli(['tx', 'bank', 'send', 'alice', ETH0, '1achain', '--node', stub.url, ...KR]);
  t.equal(r1.code, 0, r1.err);
  const tx1 = decodeTx(stub.txs.at(-1)!);
  t.ok(secp256k1.verify(tx1.signatures[0]!, sha256(signBytesDirect(tx1.bodyBytes, tx1.authInfoBytes, 'stub-from-status', 7n)), tx1.authInfo.signerInfos[0]!.publicKey!.value.subarray(2), { prehash: false }), 'node network as chain id');
  fs.mkdirSync(path.join(home, 'config'), { recursive: true });
  fs.writeFileSync(path.join(home, 'config', 'genesis.json'), JSON.stringify({ chain_id: 'from-genesis-7' }));
  const r2 = await cli(['tx', 'bank', 'send', 'alice', ETH0, '1achain', '--node', stub.url, ...KR]);
  t.equal(r2.code, 0, r2.err);
  const tx2 = decodeTx(stub.txs.at(-1)!);
  t.ok(secp256k1.verify(tx2.signatures[0]!, sha256(signBytesDirect(tx2.bodyBytes, tx2.authInfoBytes, 'from-genesis-7', 7n)), tx2.authInfo.signerInfos[0]!.publicKey!.value.subarray(2), { prehash: false }), 'genesis chain id');
});

t.test('failures: CheckTx code, unknown account, bad input', async (t) => {
  stub.checkCode = 13;
  const r = await cli(['tx', 'bank', 'send', 'alice', ETH0, '1achain', '--chain-id', 'c', '--node', stub.url, ...KR]);
  stub.checkCode = 0;
  t.equal(r.code, 1, 'a failed CheckTx exits 1');
  t.equal(JSON.parse(r.out).code, 13, 'and still prints the TxResponse');
  t.match(r.err, /insufficient fee/);

  const nf = await cli(['tx', 'bank', 'send', SECP0.replace(/.$/, 'x'), ETH0, '1achain', '--node', stub.url, ...KR]);
  t.equal(nf.code, 1);
  const stranger = 'chain1qyqszqgpqyqszqgpqyqszqgpqyqszqgpjnp7du';
  await (async () => {
    const { Keyring } = await import('../../src/keys/keyring.js');
    await new Keyring({ backend: 'test', home }).importPrivateKey('stranger', new Uint8Array(32).fill(9), 'secp256k1');
  })();
  const noAcc = await cli(['tx', 'bank', 'send', 'stranger', ETH0, '1achain', '--chain-id', 'c', '--node', stub.url, ...KR]);
  t.equal(noAcc.code, 1);
  t.match(noAcc.err, /account chain1[0-9a-z]+ not found: rpc error: code = NotFound desc = /);
  void stranger;

  const badTo = await cli(['tx', 'bank', 'send', 'alice', 'cosmos1xyz', '1achain', '--node', stub.url, ...KR]);
  t.equal(badTo.code, 1);
  t.match(badTo.err, /invalid recipient address/);
  const zero = await cli(['tx', 'bank', 'send', 'alice', ETH0, '0achain', '--node', stub.url, ...KR]);
  t.match(zero.err, /must send positive amount/);
  const dec = await cli(['tx', 'bank', 'send', 'alice', ETH0, '1.5achain', '--node', stub.url, ...KR]);
  t.equal(dec.code, 1);
  const noNode = await cli(['tx', 'bank', 'send', 'alice', ETH0, '1achain', '--node', 'tcp://127.0.0.1:1', '--chain-id', 'c', ...KR]);
  t.equal(noNode.code, 1);
  t.match(noNode.err, /post failed/);
  const usage = await cli(['tx', 'bank', 'send', 'alice', ETH0, ...KR]);
  t.equal(usage.code, 2);
  const mode = await cli(['tx', 'bank', 'send', 'alice', ETH0, '1achain', '-b', 'block', ...KR]);
  t.equal(mode.code, 2);
});

t.test('generate-only, then authz exec of that file; grant and revoke', async (t) => {
  const gen = await cli(['tx', 'bank', 'send', SECP0, ETH0, '25achain', '--generate-only', '--home', home]);
  t.equal(gen.code, 0, gen.err);
  const unsigned = JSON.parse(gen.out);
  t.same(unsigned.signatures, []);
  t.same(unsigned.auth_info.signer_infos, []);
  t.equal(unsigned.auth_info.fee.gas_limit, '200000');
  t.equal(unsigned.body.messages[0]['@type'], '/chain.bank.v1beta1.MsgSend');
  const file = path.join(home, 'send.json');
  fs.writeFileSync(file, gen.out);

  const exec = await cli(['tx', 'authz', 'exec', file, '--from', 'eve', '--chain-id', 'c', '--node', stub.url, ...KR]);
  t.equal(exec.code, 0, exec.err);
  const etx = decodeTx(stub.txs.at(-1)!);
  const me = unpackAnyAs(etx.body.messages[0]!, MsgExecSchema)!;
  t.equal(me.grantee, ETH0);
  t.equal(unpackAnyAs(me.msgs[0]!, MsgSendSchema)!.fromAddress, SECP0, 'the inner message is the granter’s send');

  const g1 = await cli(['tx', 'authz', 'grant', ETH0, 'send', '--spend-limit', '100achain', '--allow-list', SECP0, '--expiration', '4102444800', '--from', 'alice', '--chain-id', 'c', '--node', stub.url, ...KR]);
  t.equal(g1.code, 0, g1.err);
  const mg = unpackAnyAs(decodeTx(stub.txs.at(-1)!).body.messages[0]!, MsgGrantSchema)!;
  t.equal(mg.granter, SECP0);
  t.equal(mg.grantee, ETH0);
  t.equal(mg.grant!.expiration!.seconds, 4102444800n);
  const sa = unpackAnyAs(mg.grant!.authorization!, SendAuthorizationSchema)!;
  t.same(sa.spendLimit.map((c) => `${c.amount}${c.denom}`), ['100achain']);
  t.same(sa.allowList, [SECP0]);

  const g2 = await cli(['tx', 'authz', 'grant', ETH0, 'generic', '--msg-type', '/chain.bank.v1beta1.MsgSend', '--expiration', '2100-01-01T00:00:00Z', '--from', 'alice', '--generate-only', ...KR]);
  t.equal(g2.code, 0, g2.err);
  const gj = JSON.parse(g2.out).body.messages[0];
  t.same(gj.grant, { authorization: { '@type': '/chain.authz.v1beta1.GenericAuthorization', msg: '/chain.bank.v1beta1.MsgSend' }, expiration: '2100-01-01T00:00:00Z' });
  void GenericAuthorizationSchema;

  const rv = await cli(['tx', 'authz', 'revoke', ETH0, '/chain.bank.v1beta1.MsgSend', '--from', 'alice', '--chain-id', 'c', '--node', stub.url, ...KR]);
  t.equal(rv.code, 0, rv.err);
  const mr = unpackAnyAs(decodeTx(stub.txs.at(-1)!).body.messages[0]!, MsgRevokeSchema)!;
  t.same({ granter: mr.granter, grantee: mr.grantee, url: mr.msgTypeUrl }, { granter: SECP0, grantee: ETH0, url: '/chain.bank.v1beta1.MsgSend' });

  for (const [args, re] of [
    [['send'], /spend-limit should be greater than zero/],
    [['generic'], /--msg-type is required/],
    [['stake'], /invalid authorization type/],
    [['send', '--spend-limit', '1achain', '--expiration', '1000'], /expiration must be in the future/],
  ] as const) {
    const bad = await cli(['tx', 'authz', 'grant', ETH0, ...args, '--from', 'alice', '--node', stub.url, ...KR]);
    t.equal(bad.code, 1, args.join(' '));
    t.match(bad.err, re);
  }
  const self = await cli(['tx', 'authz', 'grant', SECP0, 'generic', '--msg-type', 'x', '--from', 'alice', ...KR]);
  t.match(self.err, /grantee and granter should be different/);
  fs.writeFileSync(path.join(home, 'empty.json'), '{"body":{"messages":[]}}');
  const empty = await cli(['tx', 'authz', 'exec', path.join(home, 'empty.json'), '--from', 'eve', ...KR]);
  t.match(empty.err, /messages cannot be empty/);
});

t.test('query: request encoding, pagination flags, JSON and YAML, errors', async (t) => {
  const r = await cli(['query', 'bank', 'balances', SECP0, '--node', stub.url, '-o', 'json', '--height', '5']);
  t.equal(r.code, 0, r.err);
  t.same(JSON.parse(r.out), { balances: [{ denom: 'achain', amount: '100' }], pagination: { next_key: 'AQI=', total: '0' } });
  const call = stub.calls.filter((c) => c.method === 'abci_query').at(-1)!;
  t.equal(call.params.path, '/chain.bank.v1beta1.Query/AllBalances');
  t.equal(call.params.height, '5');
  const req = fromBinary(QueryAllBalancesRequestSchema, new Uint8Array(Buffer.from(call.params.data, 'hex')));
  t.equal(req.address, SECP0);
  t.equal(req.pagination!.limit, 100n, 'default limit 100');

  await cli(['q', 'bank', 'balances', SECP0, '--node', stub.url, '--limit', '10', '--page', '3', '--count-total', '--reverse', '--page-key', 'AQI=']);
  const p = fromBinary(QueryAllBalancesRequestSchema, new Uint8Array(Buffer.from(stub.calls.filter((c) => c.method === 'abci_query').at(-1)!.params.data, 'hex'))).pagination!;
  t.same({ limit: p.limit, offset: p.offset, countTotal: p.countTotal, reverse: p.reverse, key: [...p.key] }, { limit: 10n, offset: 20n, countTotal: true, reverse: true, key: [1, 2] });

  const y = await cli(['query', 'bank', 'balances', SECP0, '--node', stub.url]);
  t.equal(y.out, 'balances:\n- amount: "100"\n  denom: achain\npagination:\n  next_key: AQI=\n  total: "0"\n', 'YAML text output');

  const acc = await cli(['query', 'auth', 'account', SECP0, '--node', stub.url, '-o', 'json']);
  t.equal(acc.code, 0, acc.err);
  t.same(JSON.parse(acc.out), { account: { '@type': '/chain.auth.v1beta1.BaseAccount', address: SECP0, pub_key: null, account_number: '7', sequence: '3' } });
  const accText = await cli(['query', 'auth', 'account', SECP0, '--node', stub.url]);
  t.match(accText.out, /^account:\n  '@type': \/chain\.auth\.v1beta1\.BaseAccount\n  account_number: "7"\n/);

  const nf = await cli(['query', 'auth', 'account', ETH0.replace('eq4', 'aaa'), '--node', stub.url]);
  t.equal(nf.code, 1);
  t.match(nf.err, /^rpc error: code = NotFound desc = rpc error: code = NotFound desc = account /);
  const unk = await cli(['query', 'authz', 'grants-by-grantee', ETH0, '--node', stub.url]);
  t.equal(unk.code, 1);
  t.equal(unk.err, 'rpc error: code = Unknown desc = unknown query path: unknown request\n');
  t.equal((await cli(['query', 'bank', 'nope'])).code, 2);
  t.equal((await cli(['query', 'bank', 'balances'])).code, 2);
  t.equal((await cli(['query', 'bank', 'balances', SECP0, '--page', '2', '--offset', '1', '--node', stub.url])).code, 2);
});
