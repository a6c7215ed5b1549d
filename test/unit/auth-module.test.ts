/**
 * x/auth (src/app/modules/auth): every query of spec §4.2 over abci_query-shaped BaseApp.query with
 * protobuf codecs and the SDK's errors (cosmos/cosmos-sdk:proto/cosmos/auth/v1beta1/query.proto, cosmos/cosmos-sdk:baseapp/abci.go), the SDK's pagination rules on
 * Accounts (cosmos/cosmos-sdk:types/query/pagination.go), MsgUpdateParams by the authority and by others (signed txs), and
 * genesis import (the `chaind init --dev` section as is, sanitising, validation) and export.
 */
import t from 'tap';
import { toBinary } from '@bufbuild/protobuf';
import { AnySchema } from '@bufbuild/protobuf/wkt';
import { Bech32Codec } from '../../src/app/address.js';
import { concatBytes } from '../../src/app/bytes.js';
import { Context, ExecMode } from '../../src/app/context.js';
import { InfiniteGasMeter } from '../../src/app/gas.js';
import { AccountKeeper, encodeBaseAccountAny } from '../../src/app/modules/auth/keeper.js';
import { CacheKVStore, ReadOnlyStore } from '../../src/app/store.js';
import { packAny } from '../../src/proto/registry.js';
import { encodePubKey } from '../../src/tx/pubkey.js';
import { create, fromBinary } from '@bufbuild/protobuf';
import type { Any } from '@bufbuild/protobuf/wkt';
import { moduleAddress } from '../../src/app/address.js';
import { addressBytesToString } from '../../src/app/modules/auth/module.js';
import { BaseAccountSchema, ModuleAccountSchema, ParamsSchema } from '../../src/gen/chain/auth/v1beta1/auth_pb.js';
import {
  AddressBytesToStringRequestSchema,
  AddressBytesToStringResponseSchema,
  AddressStringToBytesRequestSchema,
  AddressStringToBytesResponseSchema,
  Bech32PrefixRequestSchema,
  Bech32PrefixResponseSchema,
  QueryAccountAddressByIDRequestSchema,
  QueryAccountAddressByIDResponseSchema,
  QueryAccountInfoRequestSchema,
  QueryAccountInfoResponseSchema,
  QueryAccountRequestSchema,
  QueryAccountResponseSchema,
  QueryAccountsRequestSchema,
  QueryAccountsResponseSchema,
  QueryModuleAccountByNameRequestSchema,
  QueryModuleAccountByNameResponseSchema,
  QueryModuleAccountsRequestSchema,
  QueryModuleAccountsResponseSchema,
  QueryParamsRequestSchema,
  QueryParamsResponseSchema,
} from '../../src/gen/chain/auth/v1beta1/query_pb.js';
import { MsgUpdateParamsSchema } from '../../src/gen/chain/auth/v1beta1/tx_pb.js';
import { toProtoJson } from '../../src/proto/json.js';
import { startChain, CHAIN_ID, DENOM, type ChainHarness } from '../helpers/chainapp.js';
import { anyOf, buildTx, devKeys, sendTx, type DevAccount } from '../helpers/txsign.js';

const KEYS = devKeys();
const S0 = KEYS[10]!;
const S1 = KEYS[11]!;
const S2 = KEYS[12]!;
const Q = '/chain.auth.v1beta1.Query';
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function baseAccountOf(any: Any | undefined) {
  return fromBinary(BaseAccountSchema, any!.value);
}

/** Sorted dev-account addresses plus the three module accounts: the Accounts query's order. */
function allAddresses(): string[] {
  const addrs = [...KEYS.map((k) => k.address), ...['fee_collector', 'gov', 'mint'].map(moduleAddress)];
  return addrs.map(hex).sort();
}

async function accountsPage(h: ChainHarness, pagination: Record<string, unknown>) {
  return h.query(`${Q}/Accounts`, QueryAccountsRequestSchema, { pagination: pagination as never }, QueryAccountsResponseSchema);
}

const addrHexOfAny = (a: Any, h: ChainHarness) => {
  const b = a.typeUrl.endsWith('ModuleAccount') ? fromBinary(ModuleAccountSchema, a.value).baseAccount! : fromBinary(BaseAccountSchema, a.value);
  return hex(h.app.addressCodec.decode(b.address));
};

t.test('Params, Account, AccountInfo, AccountAddressByID, Bech32 queries', async (t) => {
  const h = await startChain(t);

  const p = await h.query(`${Q}/Params`, QueryParamsRequestSchema, {}, QueryParamsResponseSchema);
  t.equal(p.code, 0);
  t.equal(p.height, 1n, 'served at the latest height');
  t.same(toProtoJson(QueryParamsResponseSchema, p.res!), {
    params: { max_memo_characters: '256', tx_sig_limit: '7', tx_size_cost_per_byte: '10', sig_verify_cost_ed25519: '590', sig_verify_cost_secp256k1: '1000', sig_verify_cost_mldsa65: '750' },
  });

  const a = await h.query(`${Q}/Account`, QueryAccountRequestSchema, { address: S0.bech32 }, QueryAccountResponseSchema);
  t.equal(a.res!.account!.typeUrl, '/chain.auth.v1beta1.BaseAccount');
  t.same(toProtoJson(QueryAccountResponseSchema, a.res!), {
    account: { '@type': '/chain.auth.v1beta1.BaseAccount', address: S0.bech32, pub_key: null, account_number: '10', sequence: '0' },
  });
  const errs: [string, string, number, string][] = [
    ['empty address', '', 18, 'rpc error: code = InvalidArgument desc = Address cannot be empty: invalid request'],
    ['wrong prefix', 'cosmos1w508d6qejxtdg4y5r3zarvary0c5xw7k6ah60c', 6, "hrp does not match bech32 prefix: expected 'chain' got 'cosmos': internal logic error: unknown request"],
  ];
  for (const [what, address, code, log] of errs) {
    const r = await h.query(`${Q}/Account`, QueryAccountRequestSchema, { address }, QueryAccountResponseSchema);
    t.same([r.code, r.codespace, r.log], [code, 'sdk', log], `Account: ${what}`);
  }
  const stranger = addressBytesToString('chain', new Uint8Array(20).fill(7));
  const nf = await h.query(`${Q}/Account`, QueryAccountRequestSchema, { address: stranger }, QueryAccountResponseSchema);
  t.same([nf.code, nf.log], [22, `rpc error: code = NotFound desc = account ${stranger} not found: key not found`], 'Account: not found (what CosmJS matches)');
  const bad = await h.query(`${Q}/Account`, QueryAccountRequestSchema, { address: 'chain1notbech32' }, QueryAccountResponseSchema);
  t.equal(bad.code, 18, 'a bech32 decoding error is a plain error: invalid request');
  t.match(bad.log, /^decoding bech32 failed: .*: invalid request$/);

  const info = await h.query(`${Q}/AccountInfo`, QueryAccountInfoRequestSchema, { address: S0.bech32 }, QueryAccountInfoResponseSchema);
  t.same(toProtoJson(QueryAccountInfoResponseSchema, info.res!), { info: { address: S0.bech32, pub_key: null, account_number: '10', sequence: '0' } }, 'no key yet: pub_key null');
  const infoEmpty = await h.query(`${Q}/AccountInfo`, QueryAccountInfoRequestSchema, { address: '' }, QueryAccountInfoResponseSchema);
  t.equal(infoEmpty.log, 'rpc error: code = InvalidArgument desc = address cannot be empty: invalid request');
  const infoNf = await h.query(`${Q}/AccountInfo`, QueryAccountInfoRequestSchema, { address: stranger }, QueryAccountInfoResponseSchema);
  t.same([infoNf.code, infoNf.log], [22, `rpc error: code = NotFound desc = account ${stranger} not found: key not found`]);

  // After a signed tx the key and sequence show.
  await h.block([sendTx({ chainId: CHAIN_ID, from: S0, to: S1.bech32, amount: [{ denom: DENOM, amount: 1 }], accountNumber: 10n, sequence: 0n })]);
  const info2 = await h.query(`${Q}/AccountInfo`, QueryAccountInfoRequestSchema, { address: S0.bech32 }, QueryAccountInfoResponseSchema);
  t.same(toProtoJson(QueryAccountInfoResponseSchema, info2.res!), {
    info: { address: S0.bech32, pub_key: { '@type': '/chain.crypto.secp256k1.PubKey', key: Buffer.from(S0.publicKey).toString('base64') }, account_number: '10', sequence: '1' },
  });

  const byId = await h.query(`${Q}/AccountAddressByID`, QueryAccountAddressByIDRequestSchema, { accountId: 10n }, QueryAccountAddressByIDResponseSchema);
  t.equal(byId.res!.accountAddress, S0.bech32);
  const byId0 = await h.query(`${Q}/AccountAddressByID`, QueryAccountAddressByIDRequestSchema, {}, QueryAccountAddressByIDResponseSchema);
  t.equal(byId0.res!.accountAddress, KEYS[0]!.bech32, 'account_id 0 is account #0');
  const byOldId = await h.query(`${Q}/AccountAddressByID`, QueryAccountAddressByIDRequestSchema, { id: 3n }, QueryAccountAddressByIDResponseSchema);
  t.equal(byOldId.log, "rpc error: code = InvalidArgument desc = requesting with id isn't supported, try to request using account-id: invalid request");
  const byIdNf = await h.query(`${Q}/AccountAddressByID`, QueryAccountAddressByIDRequestSchema, { accountId: 999n }, QueryAccountAddressByIDResponseSchema);
  t.same([byIdNf.code, byIdNf.log], [22, 'rpc error: code = NotFound desc = account address not found with account number 999: key not found']);

  const prefix = await h.query(`${Q}/Bech32Prefix`, Bech32PrefixRequestSchema, {}, Bech32PrefixResponseSchema);
  t.equal(prefix.res!.bech32Prefix, 'chain');
  const toStr = await h.query(`${Q}/AddressBytesToString`, AddressBytesToStringRequestSchema, { addressBytes: S0.address }, AddressBytesToStringResponseSchema);
  t.equal(toStr.res!.addressString, S0.bech32);
  const long = new Uint8Array(32).fill(0xc3);
  const toStr32 = await h.query(`${Q}/AddressBytesToString`, AddressBytesToStringRequestSchema, { addressBytes: long }, AddressBytesToStringResponseSchema);
  t.equal(toStr32.res!.addressString.length, 'chain1'.length + 52 + 6, 'a 32-byte address');
  const toStrEmpty = await h.query(`${Q}/AddressBytesToString`, AddressBytesToStringRequestSchema, {}, AddressBytesToStringResponseSchema);
  t.same([toStrEmpty.code, toStrEmpty.log], [18, 'empty address bytes is not allowed: invalid request']);
  const toBytes = await h.query(`${Q}/AddressStringToBytes`, AddressStringToBytesRequestSchema, { addressString: S0.bech32 }, AddressStringToBytesResponseSchema);
  t.equal(hex(toBytes.res!.addressBytes), hex(S0.address));
  const toBytesEmpty = await h.query(`${Q}/AddressStringToBytes`, AddressStringToBytesRequestSchema, { addressString: ' ' }, AddressStringToBytesResponseSchema);
  t.same([toBytesEmpty.code, toBytesEmpty.log], [18, 'empty address string is not allowed: invalid request']);
});

t.test('module accounts: numbers after the genesis accounts, sorted by name, the SDK addresses', async (t) => {
  const h = await startChain(t);
  t.equal(addressBytesToString('cosmos', moduleAddress('fee_collector')), 'cosmos17xpfvakm2amg962yls6f84z3kell8c5lserqta', 'cosmos/cosmos-sdk:proto/cosmos/crypto/secp256k1/keys.proto vector');
  t.equal(addressBytesToString('cosmos', moduleAddress('gov')), 'cosmos10d07y265gmmuvt4z0w9aw880jnsr700j6zn9kn');
  const r = await h.query(`${Q}/ModuleAccounts`, QueryModuleAccountsRequestSchema, {}, QueryModuleAccountsResponseSchema);
  const mods = r.res!.accounts.map((a) => {
    t.equal(a.typeUrl, '/chain.auth.v1beta1.ModuleAccount');
    const m = fromBinary(ModuleAccountSchema, a.value);
    return [m.name, m.baseAccount!.accountNumber, m.permissions, m.baseAccount!.address];
  });
  t.same(mods, [
    ['fee_collector', 20n, [], addressBytesToString('chain', moduleAddress('fee_collector'))],
    ['gov', 21n, ['burner'], addressBytesToString('chain', moduleAddress('gov'))],
    ['mint', 22n, ['minter'], addressBytesToString('chain', moduleAddress('mint'))],
  ]);
  const gov = await h.query(`${Q}/ModuleAccountByName`, QueryModuleAccountByNameRequestSchema, { name: 'gov' }, QueryModuleAccountByNameResponseSchema);
  t.same(toProtoJson(QueryModuleAccountByNameResponseSchema, gov.res!), {
    account: {
      '@type': '/chain.auth.v1beta1.ModuleAccount',
      base_account: { address: addressBytesToString('chain', moduleAddress('gov')), pub_key: null, account_number: '21', sequence: '0' },
      name: 'gov',
      permissions: ['burner'],
    },
  }, 'ModuleAccount JSON nests base_account');
  const empty = await h.query(`${Q}/ModuleAccountByName`, QueryModuleAccountByNameRequestSchema, { name: '' }, QueryModuleAccountByNameResponseSchema);
  t.equal(empty.log, 'rpc error: code = InvalidArgument desc = module name is empty: invalid request');
  const nope = await h.query(`${Q}/ModuleAccountByName`, QueryModuleAccountByNameRequestSchema, { name: 'nope' }, QueryModuleAccountByNameResponseSchema);
  t.same([nope.code, nope.log], [22, 'rpc error: code = NotFound desc = account nope not found: key not found']);
  // A module account is also an ordinary Account answer.
  const acc = await h.query(`${Q}/Account`, QueryAccountRequestSchema, { address: addressBytesToString('chain', moduleAddress('mint')) }, QueryAccountResponseSchema);
  t.equal(acc.res!.account!.typeUrl, '/chain.auth.v1beta1.ModuleAccount');
});

t.test('upstream names ([compat] upstream-names): accounts and keys are emitted as /cosmos.…', async (t) => {
  const h = await startChain(t, { upstreamNames: true });
  await h.block([sendTx({ chainId: CHAIN_ID, from: S0, to: S1.bech32, amount: [{ denom: DENOM, amount: 1 }], accountNumber: 10n, sequence: 0n })]);
  const a = await h.query('/cosmos.auth.v1beta1.Query/Account', QueryAccountRequestSchema, { address: S0.bech32 }, QueryAccountResponseSchema);
  t.equal(a.res!.account!.typeUrl, '/cosmos.auth.v1beta1.BaseAccount', 'CosmJS accountFromAny accepts this');
  t.equal(baseAccountOf(a.res!.account).pubKey!.typeUrl, '/cosmos.crypto.secp256k1.PubKey');
  t.equal(h.account(S0.address)!.pubKey!.typeUrl, '/chain.crypto.secp256k1.PubKey', 'state keeps the canonical spelling');
});

t.test('Accounts pagination: the SDK rules', async (t) => {
  const h = await startChain(t);
  const order = allAddresses();
  t.equal(order.length, 23);

  const all = await h.query(`${Q}/Accounts`, QueryAccountsRequestSchema, {}, QueryAccountsResponseSchema);
  t.same(all.res!.accounts.map((a) => addrHexOfAny(a, h)), order, 'no pagination: default limit 100, address order');
  t.same([all.res!.pagination!.total, all.res!.pagination!.nextKey.length], [23n, 0], 'limit 0 → 100 and count_total forced; no next key');

  const p1 = await accountsPage(h, { limit: 5n });
  t.same(p1.res!.accounts.map((a) => addrHexOfAny(a, h)), order.slice(0, 5));
  t.equal(hex(p1.res!.pagination!.nextKey), order[5], 'next_key is the raw address of the first item not returned');
  t.equal(p1.res!.pagination!.total, 0n, 'total only with count_total');

  const p2 = await accountsPage(h, { key: p1.res!.pagination!.nextKey, limit: 5n, countTotal: true });
  t.same(p2.res!.accounts.map((a) => addrHexOfAny(a, h)), order.slice(5, 10), 'key mode starts at the key (inclusive)');
  t.equal(p2.res!.pagination!.total, 0n, 'count_total is ignored in key mode');
  t.equal(hex(p2.res!.pagination!.nextKey), order[10]);

  const off = await accountsPage(h, { offset: 20n, limit: 5n, countTotal: true });
  t.same(off.res!.accounts.map((a) => addrHexOfAny(a, h)), order.slice(20));
  t.same([off.res!.pagination!.total, off.res!.pagination!.nextKey.length], [23n, 0]);
  const offMid = await accountsPage(h, { offset: 3n, limit: 2n });
  t.same(offMid.res!.accounts.map((a) => addrHexOfAny(a, h)), order.slice(3, 5));
  t.equal(hex(offMid.res!.pagination!.nextKey), order[5]);

  const rev = await accountsPage(h, { limit: 3n, reverse: true });
  t.same(rev.res!.accounts.map((a) => addrHexOfAny(a, h)), order.slice(-3).reverse(), 'reverse: descending address order');
  t.equal(hex(rev.res!.pagination!.nextKey), order[order.length - 4]);
  const rev2 = await accountsPage(h, { key: rev.res!.pagination!.nextKey, limit: 2n, reverse: true });
  t.same(rev2.res!.accounts.map((a) => addrHexOfAny(a, h)), [order[order.length - 4], order[order.length - 5]], 'reverse key mode continues downwards');

  const both = await accountsPage(h, { key: p1.res!.pagination!.nextKey, offset: 1n });
  t.same([both.code, both.log], [18, 'invalid request, either offset or key is expected, got both: invalid request'], 'key and offset together');
});

function updateParamsTx(signer: DevAccount, accountNumber: bigint, sequence: bigint, authority: string, params: Partial<Record<keyof ReturnType<typeof create<typeof ParamsSchema>>, bigint>>) {
  const msg = create(MsgUpdateParamsSchema, { authority, params: create(ParamsSchema, params as never) });
  return buildTx({ chainId: CHAIN_ID, msgs: [anyOf(MsgUpdateParamsSchema, msg)], signers: [{ key: signer, accountNumber, sequence }] }).bytes;
}

const FULL = { maxMemoCharacters: 300n, txSigLimit: 5n, txSizeCostPerByte: 12n, sigVerifyCostEd25519: 600n, sigVerifyCostSecp256k1: 1100n, sigVerifyCostMldsa65: 800n };

t.test('MsgUpdateParams: only the authority, only with every field', async (t) => {
  const h = await startChain(t, { authority: S0.bech32 });
  // Someone else, naming themselves as authority.
  const other = (await h.block([updateParamsTx(S1, 11n, 0n, S1.bech32, FULL)])).txResults[0]!;
  t.same([other.codespace, other.code, other.log], ['gov', 13, `failed to execute message; message index: 0: invalid authority; expected ${S0.bech32}, got ${S1.bech32}: expected gov account as only signer for proposal message`]);
  // The authority with a missing field (0 is "not supplied").
  const partial = (await h.block([updateParamsTx(S0, 10n, 0n, S0.bech32, { ...FULL, sigVerifyCostMldsa65: 0n })])).txResults[0]!;
  t.same([partial.codespace, partial.code, partial.log], ['undefined', 1, 'failed to execute message; message index: 0: invalid ML-DSA-65 signature verification cost: 0']);
  const none = (await h.block([updateParamsTx(S0, 10n, 1n, S0.bech32, {})])).txResults[0]!;
  t.equal(none.log, 'failed to execute message; message index: 0: invalid max memo characters: 0');
  const p0 = await h.query(`${Q}/Params`, QueryParamsRequestSchema, {}, QueryParamsResponseSchema);
  t.equal(p0.res!.params!.maxMemoCharacters, 256n, 'unchanged by the failures');
  // The authority with every field.
  const ok = (await h.block([updateParamsTx(S0, 10n, 2n, S0.bech32, FULL)])).txResults[0]!;
  t.equal(ok.code, 0, ok.log);
  t.same(attrs(ok), { action: '/chain.auth.v1beta1.MsgUpdateParams', sender: S0.bech32, module: 'auth', msg_index: '0' });
  const p1 = await h.query(`${Q}/Params`, QueryParamsRequestSchema, {}, QueryParamsResponseSchema);
  t.same(toProtoJson(ParamsSchema, p1.res!.params!), {
    max_memo_characters: '300', tx_sig_limit: '5', tx_size_cost_per_byte: '12', sig_verify_cost_ed25519: '600', sig_verify_cost_secp256k1: '1100', sig_verify_cost_mldsa65: '800',
  });
  // The new params govern the ante chain at once.
  const memo = sendTx({ chainId: CHAIN_ID, from: S2, to: S1.bech32, amount: [{ denom: DENOM, amount: 1 }], accountNumber: 12n, sequence: 0n, memo: 'm'.repeat(290) });
  t.equal((await h.check(memo)).code, 0, 'a 290-byte memo fits max_memo_characters 300');
});

function attrs(r: { events: { type: string; attributes: { key: string; value: string }[] }[] }) {
  const m = r.events.find((e) => e.type === 'message' && e.attributes.some((a) => a.key === 'action'))!;
  return Object.fromEntries(m.attributes.map((a) => [a.key, a.value]));
}

t.test('MsgUpdateParams: the default authority is the gov module account, whose key nobody holds', async (t) => {
  const h = await startChain(t);
  const gov = addressBytesToString('chain', moduleAddress('gov'));
  t.equal(gov, h.app.auth.authorityString(h.ctx()));
  const self = (await h.block([updateParamsTx(S0, 10n, 0n, S0.bech32, FULL)])).txResults[0]!;
  t.equal(self.log, `failed to execute message; message index: 0: invalid authority; expected ${gov}, got ${S0.bech32}: expected gov account as only signer for proposal message`);
  // Naming gov makes gov the signer: S0's key does not hash to it.
  const asGov = (await h.block([updateParamsTx(S0, 21n, 0n, gov, FULL)])).txResults[0]!;
  t.same([asGov.code, asGov.log], [8, `pubKey does not match signer address ${gov} with signer index: 0: invalid pubkey`]);
});

t.test('genesis: the init --dev section as is, upstream @type, sanitised numbers, validation, export', async (t) => {
  const h = await startChain(t);
  t.equal(h.account(S0.address)!.accountNumber, 10n, 'numbers as declared');
  t.equal(h.app.auth.keeper.peekAccountNumber(h.ctx()), 23n, 'counter past the genesis and module accounts');

  const exported = h.app.auth.keeper.exportGenesis(h.ctx()) as { params: Record<string, string>; accounts: Record<string, unknown>[] };
  t.same(exported.params, { max_memo_characters: '256', tx_sig_limit: '7', tx_size_cost_per_byte: '10', sig_verify_cost_ed25519: '590', sig_verify_cost_secp256k1: '1000', sig_verify_cost_mldsa65: '750' });
  t.equal(exported.accounts.length, 23);
  // Re-import the export: same accounts.
  const h2 = await startChain(t, {
    appState: (s) => {
      s['auth'] = exported;
    },
  });
  t.same(h2.account(S0.address), h.account(S0.address), 'export → import round trip');
  t.equal(h2.app.auth.keeper.peekAccountNumber(h2.ctx()), 23n);

  // Duplicate numbers get the lowest unused ones; upstream @type is accepted; the counter passes the largest.
  const a = KEYS.slice(0, 3).map((k) => k.bech32);
  const h3 = await startChain(t, {
    appState: (s) => {
      s['auth'].accounts = [
        { '@type': '/cosmos.auth.v1beta1.BaseAccount', address: a[0], pub_key: null, account_number: '5', sequence: '2' },
        { '@type': '/chain.auth.v1beta1.BaseAccount', address: a[1], pub_key: null, account_number: '5', sequence: '0' },
        { '@type': '/chain.auth.v1beta1.BaseAccount', address: a[2], pub_key: null, account_number: '9', sequence: '0' },
      ];
    },
  });
  t.same(KEYS.slice(0, 3).map((k) => [h3.account(k.address)!.accountNumber, h3.account(k.address)!.sequence]), [
    [5n, 2n],
    [0n, 0n],
    [9n, 0n],
  ]);
  const fc = h3.account(moduleAddress('fee_collector'))!;
  t.same([fc.name, fc.accountNumber], ['fee_collector', 10n], 'fee_collector right after the largest genesis number');

  const bad = async (edit: (s: Record<string, any>) => void) => {
    try {
      await startChain(t, { appState: edit, noFirstBlock: true });
      return 'no error';
    } catch (e) {
      return (e as Error).message;
    }
  };
  t.equal(
    await bad((s) => {
      s['auth'].params.tx_sig_limit = '0';
    }),
    'invalid tx signature limit: 0',
  );
  t.equal(
    await bad((s) => {
      s['auth'].accounts.push({ ...s['auth'].accounts[0], account_number: '99' });
    }),
    `duplicate account found in genesis state; address: ${KEYS[0]!.bech32}`,
  );
});

t.test('setAccount writes a BaseAccount as protobuf-es packs it; getAccount reads back what decoding gives', async (t) => {
  let n = 0;
  for (const address of ['chain1qqqsyqcyq5rqwzqfpg9scrgwpugpzysn8fgq4s', 'x', 'é'.repeat(70)]) {
    for (const pubKey of [undefined, create(AnySchema, { typeUrl: '/chain.crypto.secp256k1.PubKey', value: Uint8Array.from({ length: 35 }, (_, i) => i) }), create(AnySchema, { typeUrl: '', value: new Uint8Array(0) }), create(AnySchema, { typeUrl: '/x', value: new Uint8Array(200).fill(3) })]) {
      for (const [accountNumber, sequence] of [[0n, 0n], [1n, 127n], [128n, 300n], [2n ** 63n, 2n ** 64n - 1n]] as const) {
        const ref = toBinary(AnySchema, packAny(BaseAccountSchema, create(BaseAccountSchema, { address, pubKey, accountNumber, sequence })));
        t.same(encodeBaseAccountAny(address, pubKey?.typeUrl, pubKey?.value, accountNumber, sequence), ref);
        n++;
      }
    }
  }
  t.equal(n, 48);
  // Through the keeper, over a cache: the account it answers after a write is the stored bytes' decoding.
  const keeper = new AccountKeeper();
  const cache = new CacheKVStore(new CacheKVStore(new ReadOnlyStore({ get: () => undefined, has: () => false, set: () => undefined, delete: () => undefined, iterate: () => [] })));
  const ctx = new Context({ mode: ExecMode.Finalize, chainId: CHAIN_ID, height: 2n, time: 0n, gasMeter: new InfiniteGasMeter(), addressCodec: new Bech32Codec('chain'), stores: () => cache });
  const key = devKeys().find((k) => k.keyType === 'secp256k1')!;
  // An upstream-spelled key is stored in the spec spelling.
  const upstream = create(AnySchema, { typeUrl: '/cosmos.crypto.secp256k1.PubKey', value: encodePubKey({ algo: 'secp256k1', key: key.publicKey }).value });
  const acc = { address: key.address, pubKey: upstream, accountNumber: 7n, sequence: 3n };
  keeper.setAccount(ctx, acc);
  acc.sequence = 99n; // the caller's object changing afterwards changes nothing stored or remembered
  const stored = cache.get(concatBytes(Uint8Array.of(0x01), key.address))!;
  const decoded = keeper.decodeStoredAccount(key.address, stored);
  t.equal(decoded.pubKey?.typeUrl, '/chain.crypto.secp256k1.PubKey');
  const got = keeper.getAccount(ctx, key.address)!;
  t.same({ ...got, pubKey: { typeUrl: got.pubKey?.typeUrl, value: got.pubKey?.value } }, { ...decoded, pubKey: { typeUrl: decoded.pubKey?.typeUrl, value: decoded.pubKey?.value } });
  t.equal(keeper.getAccount(ctx, key.address), got, 'the same bytes again: the same account');
});
