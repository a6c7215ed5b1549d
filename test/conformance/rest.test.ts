/**
 * The REST gateway of a real in-process node through plain `fetch`, as a browser, curl or an
 * explorer uses it (spec §4.2; cosmos/gogoproto:jsonpb/jsonpb.go): the SDK's protobuf JSON
 * (snake_case, int64 as strings, nulls emitted, Any as `@type`), the `/cosmos/…` path alias,
 * grpc-gateway v1 query parameters for pagination (limit, count_total, reverse, offset, the key
 * round trip with base64 keys), bank balances, authz grant queries, errors as `{code, message,
 * details}` with grpc-gateway's HTTP status codes, the height header, and POST
 * `/chain/tx/v1beta1/simulate`. A second node with `[compat] upstream-names = true` shows the
 * upstream type URLs in the same JSON.
 */
import t from 'tap';
import { bech32 } from '@scure/base';
import { startTestNode, waitHeight, type TestNode } from '../helpers/inproc.js';
import { DENOM, DEV_BALANCE, FEE, FRESH, S0, S1, S2, S3, seed, type Seeded } from '../helpers/seed.js';
import { buildTx, freshKey, msgSend } from '../helpers/txsign.js';

interface Answer {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

async function get(tn: TestNode, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const r = await fetch(`http://127.0.0.1:${tn.restPort}${path}`, { headers });
  const text = await r.text();
  return { status: r.status, body: JSON.parse(text), text, headers: r.headers };
}

async function post(tn: TestNode, path: string, body: unknown): Promise<Answer> {
  const r = await fetch(`http://127.0.0.1:${tn.restPort}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, body: JSON.parse(text), text, headers: r.headers };
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
/** The address of an account in JSON: BaseAccount, or ModuleAccount's nested base_account. */
const acctAddr = (a: any): string => a.address ?? a.base_account.address;
const addrB64 = (bech: string) => b64(Uint8Array.from(bech32.fromWords(bech32.decode(bech as `${string}1${string}`).words)));

t.test('REST gateway with plain fetch', async (t) => {
  const tn = await startTestNode();
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);
  const sd: Seeded = await seed(tn);

  await t.test('GET /chain/auth/v1beta1/accounts/{address} and the /cosmos alias', async (t) => {
    const r = await get(tn, `/chain/auth/v1beta1/accounts/${S0.bech32}`);
    t.equal(r.status, 200);
    t.match(r.headers.get('content-type'), /^application\/json/);
    t.ok(Number(r.headers.get('grpc-metadata-x-cosmos-block-height')) >= Number(sd.lastHeight), 'served height in Grpc-Metadata-X-Cosmos-Block-Height');
    t.strictSame(r.body, {
      account: {
        '@type': '/chain.auth.v1beta1.BaseAccount',
        address: S0.bech32,
        pub_key: { '@type': '/chain.crypto.secp256k1.PubKey', key: b64(S0.publicKey) },
        account_number: '10',
        sequence: '2',
      },
    });
    const alias = await get(tn, `/cosmos/auth/v1beta1/accounts/${S0.bech32}`);
    t.equal(alias.status, 200);
    t.equal(alias.text, r.text, 'the /cosmos/ path answers the same JSON');

    const fresh = await get(tn, `/chain/auth/v1beta1/accounts/${FRESH.bech32}`);
    t.equal(fresh.body.account.pub_key, null, 'unset key is null (EmitDefaults)');
    t.equal(fresh.body.account.sequence, '0');
    t.ok(Number(fresh.body.account.account_number) >= 20);

    const info = await get(tn, `/chain/auth/v1beta1/account_info/${S0.bech32}`);
    t.strictSame(info.body, { info: { address: S0.bech32, pub_key: r.body.account.pub_key, account_number: '10', sequence: '2' } }, 'AccountInfo: a BaseAccount without @type');
  });

  await t.test('errors: {code, message, details} with the SDK’s HTTP status', async (t) => {
    const unknown = freshKey(0x74).bech32;
    const nf = await get(tn, `/chain/auth/v1beta1/accounts/${unknown}`);
    t.equal(nf.status, 404, 'NotFound → 404');
    t.strictSame(nf.body, { code: 5, message: `account ${unknown} not found`, details: [] });

    const bad = await get(tn, '/chain/auth/v1beta1/accounts/chain1notanaddress');
    t.equal(bad.status, 500, 'the address codec’s plain error is Unknown → 500, as upstream');
    t.equal(bad.body.code, 2);
    t.match(bad.body.message, /^decoding bech32 failed: /);
    t.equal(bad.body.message, 'decoding bech32 failed: invalid character not part of charset: 111', "the SDK's text (Go bech32 ErrInvalidCharacter, 'o' = 111)", {
      todo: 'chaind src/app/modules/auth/module.ts addressStringToBytes passes @scure/base error texts through',
    });
    t.strictSame(bad.body.details, []);
    t.strictSame(Object.keys(bad.body), ['code', 'message', 'details']);

    const hrp = await get(tn, `/chain/auth/v1beta1/accounts/${bech32.encode('cosmos', bech32.toWords(S0.address))}`);
    t.equal(hrp.status, 500);
    t.strictSame(hrp.body, { code: 2, message: "internal logic error: hrp does not match bech32 prefix: expected 'chain' got 'cosmos'", details: [] });

    const noRoute = await get(tn, '/chain/auth/v1beta1/nothing/here');
    t.equal(noRoute.status, 501);
    t.strictSame(noRoute.body, { code: 12, message: 'Not Implemented', details: [] });

    const badLimit = await get(tn, '/chain/auth/v1beta1/accounts?pagination.limit=x');
    t.equal(badLimit.status, 400, 'a bad query parameter is InvalidArgument → 400');
    t.strictSame(badLimit.body, { code: 3, message: 'strconv.ParseUint: parsing "x": invalid syntax', details: [] });
    const badKey = await get(tn, '/chain/auth/v1beta1/accounts?pagination.key=!!!');
    t.equal(badKey.status, 400);
    t.equal(badKey.body.code, 3);
    t.equal(badKey.body.message, 'illegal base64 data at input byte 0', "Go's base64.CorruptInputError text (runtime.Bytes returns it as is)", {
      todo: 'chaind src/rpc/rest/query-params.ts:173 writes `illegal base64 data in "<value>"`',
    });

    const height = await get(tn, `/chain/auth/v1beta1/accounts/${S0.bech32}`, { 'x-cosmos-block-height': 'abc' });
    t.equal(height.status, 500, 'a bad height header: invalid request (Unknown) → 500');
    t.equal(height.body.code, 2);
    t.match(height.body.message, /invalid height header "x-cosmos-block-height"/);
  });

  await t.test('GET /chain/auth/v1beta1/params', async (t) => {
    const r = await get(tn, '/chain/auth/v1beta1/params');
    t.equal(r.status, 200);
    t.equal(
      r.text,
      '{"params":{"max_memo_characters":"256","tx_sig_limit":"7","tx_size_cost_per_byte":"10","sig_verify_cost_ed25519":"590","sig_verify_cost_secp256k1":"1000","sig_verify_cost_mldsa65":"750"}}',
      'exact bytes: field order, int64 as strings',
    );
  });

  await t.test('GET /chain/auth/v1beta1/accounts with pagination', async (t) => {
    const all = await get(tn, '/chain/auth/v1beta1/accounts');
    const list: string[] = all.body.accounts.map(acctAddr);
    t.equal(all.body.pagination.total, String(list.length), 'no limit: 100 with count_total forced');
    t.equal(all.body.pagination.next_key, null, 'next_key null at the end');
    t.ok(list.includes(S0.bech32) && list.includes(FRESH.bech32));
    const mod = all.body.accounts.find((a: any) => a['@type'] === '/chain.auth.v1beta1.ModuleAccount');
    t.ok(mod, 'module accounts are listed');
    t.match(mod, { base_account: { address: /^chain1/, pub_key: null }, name: String, permissions: Array }, 'ModuleAccount JSON shape');

    const limited = await get(tn, '/chain/auth/v1beta1/accounts?pagination.limit=3');
    t.same(limited.body.accounts.map(acctAddr), list.slice(0, 3));
    t.equal(limited.body.pagination.total, '0', 'no count_total: total 0');
    t.equal(limited.body.pagination.next_key, addrB64(list[3]!), 'next_key = base64 of the next address');
    const counted = await get(tn, '/chain/auth/v1beta1/accounts?pagination.limit=3&pagination.count_total=true');
    t.equal(counted.body.pagination.total, String(list.length));
    const camel = await get(tn, '/chain/auth/v1beta1/accounts?pagination.limit=3&pagination.countTotal=true');
    t.equal(camel.text, counted.text, 'the lowerCamel parameter name is accepted too');
    const offset = await get(tn, '/chain/auth/v1beta1/accounts?pagination.offset=2&pagination.limit=2');
    t.same(offset.body.accounts.map(acctAddr), list.slice(2, 4));

    // Key round trip: next_key goes back as pagination.key, percent-encoded.
    const walked: string[] = [];
    let key: string | null = '';
    let pages = 0;
    while (key !== null && pages < 20) {
      const r: Answer = await get(tn, `/chain/auth/v1beta1/accounts?pagination.limit=4${key ? `&pagination.key=${encodeURIComponent(key)}` : ''}`);
      t.equal(r.status, 200, r.status === 200 ? `page ${pages}` : r.text.slice(0, 200));
      walked.push(...r.body.accounts.map(acctAddr));
      key = r.body.pagination.next_key;
      pages++;
    }
    t.same(walked, list, 'pagination.key round trip returns every account once, in order');
    t.equal(pages, Math.ceil(list.length / 4));

    const rev = await get(tn, '/chain/auth/v1beta1/accounts?pagination.limit=3&pagination.reverse=true');
    t.same(rev.body.accounts.map(acctAddr), list.slice(-3).reverse(), 'reverse');
    const revNext = await get(tn, `/chain/auth/v1beta1/accounts?pagination.limit=3&pagination.reverse=true&pagination.key=${encodeURIComponent(rev.body.pagination.next_key)}`);
    t.same(revNext.body.accounts.map(acctAddr), list.slice(-6, -3).reverse(), 'reverse key round trip');

    const both = await get(tn, `/chain/auth/v1beta1/accounts?pagination.offset=1&pagination.key=${encodeURIComponent(addrB64(S0.bech32))}`);
    t.equal(both.status, 500, 'plain error → Unknown → 500 (upstream)');
    t.strictSame(both.body, { code: 2, message: 'invalid request, either offset or key is expected, got both', details: [] });
  });

  await t.test('bank balances', async (t) => {
    const r = await get(tn, `/chain/bank/v1beta1/balances/${S0.bech32}`);
    t.equal(r.status, 200);
    t.strictSame(r.body, { balances: [{ denom: DENOM, amount: (DEV_BALANCE - 1000n - 10_000n).toString() }], pagination: { next_key: null, total: '1' } });
    const by = await get(tn, `/chain/bank/v1beta1/balances/${FRESH.bech32}/by_denom?denom=${DENOM}`);
    t.strictSame(by.body, { balance: { denom: DENOM, amount: '1000' } });
    const alias = await get(tn, `/cosmos/bank/v1beta1/balances/${FRESH.bech32}/by_denom?denom=${DENOM}`);
    t.equal(alias.text, by.text);
    const none = await get(tn, `/chain/bank/v1beta1/balances/${freshKey(0x75).bech32}`);
    t.strictSame(none.body, { balances: [], pagination: { next_key: null, total: '0' } }, 'empty list, not an error');
  });

  await t.test('authz grants queries', async (t) => {
    const g = await get(tn, `/chain/authz/v1beta1/grants?granter=${S0.bech32}&grantee=${S1.bech32}`);
    t.equal(g.status, 200);
    t.strictSame(g.body, {
      grants: [
        { authorization: { '@type': '/chain.authz.v1beta1.GenericAuthorization', msg: '/chain.authz.v1beta1.MsgRevoke' }, expiration: null },
        { authorization: { '@type': '/chain.bank.v1beta1.SendAuthorization', spend_limit: [{ denom: DENOM, amount: '500' }], allow_list: [] }, expiration: null },
      ],
      pagination: { next_key: null, total: '2' },
    });
    const one = await get(tn, `/chain/authz/v1beta1/grants?granter=${S0.bech32}&grantee=${S1.bech32}&msg_type_url=/chain.bank.v1beta1.MsgSend`);
    t.strictSame(one.body, { grants: [g.body.grants[1]], pagination: null }, 'with msg_type_url: that grant, pagination null');
    const miss = await get(tn, `/chain/authz/v1beta1/grants?granter=${S0.bech32}&grantee=${S1.bech32}&msg_type_url=/chain.staking.v1beta1.MsgDelegate`);
    t.equal(miss.status, 500, 'registered authz error → Unknown → 500');
    t.strictSame(miss.body, { code: 2, message: 'authorization not found: authorization not found for /chain.staking.v1beta1.MsgDelegate type', details: [] });

    const byGranter = await get(tn, `/chain/authz/v1beta1/grants/granter/${S0.bech32}`);
    t.equal(byGranter.body.grants.length, 3);
    t.equal(byGranter.body.pagination.total, '3');
    const expiring = byGranter.body.grants.find((x: any) => x.grantee === S2.bech32);
    t.strictSame(expiring, {
      granter: S0.bech32,
      grantee: S2.bech32,
      authorization: { '@type': '/chain.authz.v1beta1.GenericAuthorization', msg: '/chain.bank.v1beta1.MsgSend' },
      expiration: new Date(Number(sd.expiry) * 1000).toISOString().replace('.000Z', 'Z'),
    }, 'RFC 3339 expiration without fractional seconds');

    const byGrantee = await get(tn, `/chain/authz/v1beta1/grants/grantee/${S1.bech32}`);
    const rows = byGrantee.body.grants.map((x: any) => `${x.granter} ${x.authorization['@type']}`);
    t.equal(rows.length, 3);
    t.same(new Set(byGrantee.body.grants.map((x: any) => x.granter)), new Set([S0.bech32, S3.bech32]));
    const walked: string[] = [];
    let key: string | null = '';
    for (let i = 0; i < 5 && key !== null; i++) {
      const r: Answer = await get(tn, `/chain/authz/v1beta1/grants/grantee/${S1.bech32}?pagination.limit=1${key ? `&pagination.key=${encodeURIComponent(key)}` : ''}`);
      t.equal(r.status, 200, r.status === 200 ? `grantee page ${i}` : r.text.slice(0, 200));
      walked.push(...r.body.grants.map((x: any) => `${x.granter} ${x.authorization['@type']}`));
      key = r.body.pagination.next_key;
    }
    t.same(walked, rows, 'grantee pagination.key round trip');
    const alias = await get(tn, `/cosmos/authz/v1beta1/grants/grantee/${S1.bech32}`);
    t.equal(alias.text, byGrantee.text, '/cosmos/ alias');
  });

  await t.test('POST /chain/tx/v1beta1/simulate', async (t) => {
    const tx = buildTx({ chainId: sd.chainId, msgs: [msgSend(S2.bech32, FRESH.bech32, [{ denom: DENOM, amount: 3 }])], signers: [{ key: S2, accountNumber: 12n, sequence: 0n }], fee: FEE }).bytes;
    const r = await post(tn, '/chain/tx/v1beta1/simulate', { tx_bytes: b64(tx) });
    t.equal(r.status, 200, r.text.slice(0, 300));
    t.equal(r.body.gas_info.gas_wanted, '200000');
    t.ok(Number(r.body.gas_info.gas_used) > 20_000 && Number(r.body.gas_info.gas_used) < 200_000, `gas_used ${r.body.gas_info.gas_used}`);
    t.ok(
      r.body.result.events.some((e: any) => e.type === 'transfer' && e.attributes.some((a: any) => a.key === 'amount' && a.value === `3${DENOM}`)),
      'events as JSON with plain-string attributes',
    );
    t.strictSame(r.body.result.msg_responses, [{ '@type': '/chain.bank.v1beta1.MsgSendResponse' }]);
    const camel = await post(tn, '/chain/tx/v1beta1/simulate', { txBytes: b64(tx) });
    t.equal(camel.body.gas_info.gas_used, r.body.gas_info.gas_used, 'lowerCamel body field accepted; same gas');
    const alias = await post(tn, '/cosmos/tx/v1beta1/simulate', { tx_bytes: b64(tx) });
    t.equal(alias.body.gas_info.gas_used, r.body.gas_info.gas_used, '/cosmos/ alias');
    t.equal((await get(tn, `/chain/bank/v1beta1/balances/${FRESH.bech32}/by_denom?denom=${DENOM}`)).body.balance.amount, '1000', 'simulation changed nothing');

    const empty = await post(tn, '/chain/tx/v1beta1/simulate', {});
    t.equal(empty.status, 400);
    t.strictSame(empty.body, { code: 3, message: 'empty txBytes is not allowed', details: [] });
    const garbage = await post(tn, '/chain/tx/v1beta1/simulate', { tx_bytes: b64(Uint8Array.of(1, 2, 3)) });
    t.equal(garbage.status, 500);
    t.equal(garbage.body.code, 2);
    t.match(garbage.body.message, /tx parse error With gas wanted: '0' and gas used: '0' $/, "upstream's Simulate failure text, trailing space included");
    const wrongSeq = buildTx({ chainId: sd.chainId, msgs: [msgSend(S2.bech32, FRESH.bech32, [{ denom: DENOM, amount: 3 }])], signers: [{ key: S2, accountNumber: 12n, sequence: 9n }], fee: FEE }).bytes;
    const seq = await post(tn, '/chain/tx/v1beta1/simulate', { tx_bytes: b64(wrongSeq) });
    t.equal(seq.status, 500);
    t.match(seq.body.message, /^account sequence mismatch, expected 0, got 9: incorrect account sequence With gas wanted: '200000' and gas used: '\d+' $/);
    const badJson = await fetch(`http://127.0.0.1:${tn.restPort}/chain/tx/v1beta1/simulate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"tx_bytes":' });
    t.equal(badJson.status, 400, 'an undecodable body is InvalidArgument');
    t.equal(((await badJson.json()) as { code: number }).code, 3);
  });
});

t.test('REST with [compat] upstream-names = true', async (t) => {
  const tn = await startTestNode({ flags: { 'compat.upstream-names': true } });
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);
  const r = await get(tn, `/cosmos/auth/v1beta1/accounts/${S3.bech32}`);
  t.equal(r.status, 200);
  t.strictSame(r.body, { account: { '@type': '/cosmos.auth.v1beta1.BaseAccount', address: S3.bech32, pub_key: null, account_number: '13', sequence: '0' } }, 'upstream type URL');
  const chainPath = await get(tn, `/chain/auth/v1beta1/accounts/${S3.bech32}`);
  t.equal(chainPath.text, r.text, 'the spec path still answers');
  const accts = await get(tn, '/cosmos/auth/v1beta1/accounts?pagination.limit=1');
  t.equal(accts.body.accounts[0]['@type'].startsWith('/cosmos.auth.v1beta1.'), true);
});
