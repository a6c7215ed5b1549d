/** genesis.json: parse, validation messages, canonical writing, the app_state of init. */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  appStateBytes,
  buildAppState,
  ConfigError,
  formatRfc3339Nano,
  genesisToJson,
  genesisToString,
  loadGenesis,
  parseGenesis,
  parseRfc3339Nano,
  writeGenesis,
} from '../../src/config/index.js';
import { createNames } from '../../src/names/index.js';
import { defaultConsensusParams } from '../../src/types/params.js';

/** `genesis` of a real CometBFT v0.38 kvstore node (test/fixtures/cometbft-v038-kvstore.json). */
const FIXTURE = {
  app_hash: '',
  app_state: {},
  chain_id: 'dockerchain',
  consensus_params: {
    abci: { vote_extensions_enable_height: '0' },
    block: { max_bytes: '22020096', max_gas: '-1' },
    evidence: { max_age_duration: '172800000000000', max_age_num_blocks: '100000', max_bytes: '1048576' },
    validator: { pub_key_types: ['ed25519'] },
    version: { app: '0' },
  },
  genesis_time: '2023-05-17T14:12:48.347696215Z',
  initial_height: '1',
  validators: [
    {
      address: '2DD9F44FD9067555C322243C3C913BA7B51D2BE0',
      name: '',
      power: '10',
      pub_key: { type: 'consensus/PubKeyEd25519', value: 'bNNlGls5R25wC3Sd8720F/3+7IZBhXcD22MNFtPk/v0=' },
    },
  ],
};

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

t.test('RFC 3339 times with nanoseconds', async (t) => {
  const rows: Array<[string, bigint | undefined, string?]> = [
    ['2023-05-17T14:12:48.347696215Z', 1684332768347696215n],
    ['1970-01-01T00:00:00Z', 0n],
    ['1970-01-01T00:00:00.5Z', 500_000_000n],
    ['1970-01-01T01:00:00+01:00', 0n, '1970-01-01T00:00:00Z'],
    ['1969-12-31T23:59:59.999999999Z', -1n],
    ['0001-01-01T00:00:00Z', -62135596800000000000n],
    ['2024-02-29T00:00:00Z', 1709164800000000000n],
    ['2023-02-29T00:00:00Z', undefined],
    ['2023-13-01T00:00:00Z', undefined],
    ['2023-01-01T24:00:00Z', undefined],
    ['2023-01-01 00:00:00Z', undefined],
    ['2023-01-01T00:00:00', undefined],
    ['2023-01-01T00:00:00.1234567890Z', undefined],
  ];
  for (const [text, ns, formatted] of rows) {
    t.equal(parseRfc3339Nano(text), ns, text);
    if (ns !== undefined) t.equal(formatRfc3339Nano(ns), formatted ?? text, `format ${text}`);
  }
  t.equal(formatRfc3339Nano(1_500_000_000n), '1970-01-01T00:00:01.5Z', 'trailing zeros trimmed');
});

t.test('parses the CometBFT fixture, both key spellings', async (t) => {
  for (const type of ['consensus/PubKeyEd25519', 'tendermint/PubKeyEd25519']) {
    const raw = clone(FIXTURE);
    raw.validators[0]!.pub_key.type = type;
    const doc = parseGenesis(JSON.stringify(raw));
    t.equal(doc.chainId, 'dockerchain');
    t.equal(doc.genesisTime, 1684332768347696215n);
    t.equal(doc.initialHeight, 1n);
    t.same(doc.consensusParams, defaultConsensusParams());
    t.equal(doc.validators.length, 1);
    const v = doc.validators[0]!;
    t.equal(v.pubKey.type, 'ed25519');
    t.equal(Buffer.from(v.address).toString('hex').toUpperCase(), '2DD9F44FD9067555C322243C3C913BA7B51D2BE0');
    t.equal(v.power, 10n);
    t.same(doc.appState, {});
    t.equal(doc.appHash.length, 0);
  }
});

t.test('writes back the same document (spec and upstream names)', async (t) => {
  const doc = parseGenesis(FIXTURE);
  const out = genesisToJson(doc);
  t.same(out, FIXTURE, 'same content as the fixture');
  t.same(Object.keys(out), ['genesis_time', 'chain_id', 'initial_height', 'consensus_params', 'validators', 'app_hash', 'app_state'], 'GenesisDoc field order');
  const up = genesisToJson(doc, createNames({ upstreamNames: true })) as { validators: Array<{ pub_key: { type: string } }> };
  t.equal(up.validators[0]!.pub_key.type, 'tendermint/PubKeyEd25519');
  const text = genesisToString(doc);
  t.ok(text.endsWith('}\n'));
  t.match(text, /^\{\n {2}"genesis_time": "2023-05-17T14:12:48.347696215Z",\n/);
  t.same(parseGenesis(text), doc, 'round trip');
});

t.test('completion: defaults for what is missing', async (t) => {
  const now = 1_700_000_000_000_000_000n;
  const doc = parseGenesis({ chain_id: 'c' }, { now: () => now });
  t.equal(doc.genesisTime, now, 'missing genesis_time becomes now');
  t.equal(doc.initialHeight, 1n);
  t.same(doc.consensusParams, defaultConsensusParams());
  t.same(doc.validators, []);
  t.equal(doc.appState, undefined);
  t.notOk('app_state' in genesisToJson(doc), 'absent app_state stays absent');
  t.equal(appStateBytes(doc).length, 0);
  t.equal(parseGenesis({ chain_id: 'c', initial_height: '0' }).initialHeight, 1n, 'initial_height 0 → 1');
  t.equal(parseGenesis({ chain_id: 'c', genesis_time: '0001-01-01T00:00:00Z' }, { now: () => 5n }).genesisTime, 5n, 'zero time → now');
  const partial = parseGenesis({ chain_id: 'c', consensus_params: { block: { max_gas: '1000' } } });
  t.equal(partial.consensusParams.block.maxGas, 1000n);
  t.equal(partial.consensusParams.block.maxBytes, 22020096n, 'missing field keeps its default');
  t.equal(
    parseGenesis({ chain_id: 'c', consensus_params: { evidence: { max_age_duration: '172800s' } } }).consensusParams.evidence.maxAgeDuration,
    172800000000000n,
    'SDK duration form',
  );
  const withAddr = clone(FIXTURE);
  withAddr.validators[0]!.address = '';
  t.equal(Buffer.from(parseGenesis(withAddr).validators[0]!.address).toString('hex'), '2dd9f44fd9067555c322243c3c913ba7b51d2be0', 'address computed');
  t.same(parseGenesis({ chain_id: 'c', app_hash: 'abCD' }).appHash, new Uint8Array([0xab, 0xcd]));
});

t.test('validation messages name the file and the field', async (t) => {
  const mutate = (f: (g: any) => void) => {
    const g = clone(FIXTURE) as any;
    f(g);
    return g;
  };
  const rows: Array<[unknown, string]> = [
    [mutate((g) => (g.chain_id = '')), 'config/genesis.json: chain_id: must not be empty'],
    [mutate((g) => delete g.chain_id), 'config/genesis.json: chain_id: must not be empty'],
    [mutate((g) => (g.chain_id = 'x'.repeat(51))), 'config/genesis.json: chain_id: too long (51 > 50 characters)'],
    [mutate((g) => (g.chain_id = 5)), 'config/genesis.json: chain_id: expected a string, got 5'],
    [mutate((g) => (g.initial_height = '-1')), 'config/genesis.json: initial_height: must not be negative, got -1'],
    [mutate((g) => (g.initial_height = 'one')), 'config/genesis.json: initial_height: expected an integer string such as "1", got "one"'],
    [mutate((g) => (g.genesis_time = 'yesterday')), 'config/genesis.json: genesis_time: invalid RFC 3339 time "yesterday"'],
    [mutate((g) => (g.validators[0].power = '0')), 'config/genesis.json: validators[0].power: must be greater than 0, got 0'],
    [mutate((g) => (g.validators[0].power = 10)), ''],
    [mutate((g) => (g.validators[0].pub_key.type = 'cosmos/PubKeyEd25519')), 'config/genesis.json: validators[0].pub_key.type: unknown key type "cosmos/PubKeyEd25519" (want consensus/PubKeyEd25519)'],
    [mutate((g) => (g.validators[0].pub_key.type = 'tendermint/PubKeySecp256k1')), 'config/genesis.json: validators[0].pub_key.type: secp256k1 is not in consensus_params.validator.pub_key_types'],
    [mutate((g) => (g.validators[0].pub_key.value = 'AAAA')), 'config/genesis.json: validators[0].pub_key.value: want 32 bytes of base64 for ed25519'],
    [mutate((g) => delete g.validators[0].pub_key), 'config/genesis.json: validators[0].pub_key: missing'],
    [mutate((g) => (g.validators[0].address = '00'.repeat(20))), 'config/genesis.json: validators[0].address: does not match the key; should be 2DD9F44FD9067555C322243C3C913BA7B51D2BE0'],
    [mutate((g) => (g.validators[0].address = 'xyz')), 'config/genesis.json: validators[0].address: want 40 hex characters, got "xyz"'],
    [mutate((g) => g.validators.push(clone(g.validators[0]))), 'config/genesis.json: validators[1].pub_key: duplicate validator'],
    [mutate((g) => (g.validators = {})), 'config/genesis.json: validators: expected an array'],
    [mutate((g) => (g.consensus_params.block.max_bytes = '0')), 'config/genesis.json: consensus_params.block.max_bytes: must be -1 or greater than 0, got 0'],
    [mutate((g) => (g.consensus_params.block.max_bytes = '104857601')), 'config/genesis.json: consensus_params.block.max_bytes: must be <= 104857600, got 104857601'],
    [mutate((g) => (g.consensus_params.block.max_gas = '-2')), 'config/genesis.json: consensus_params.block.max_gas: must be >= -1, got -2'],
    [mutate((g) => (g.consensus_params.evidence.max_age_num_blocks = '0')), 'config/genesis.json: consensus_params.evidence.max_age_num_blocks: must be greater than 0, got 0'],
    [mutate((g) => (g.consensus_params.evidence.max_age_duration = 'soon')), 'config/genesis.json: consensus_params.evidence.max_age_duration: invalid duration "soon"'],
    [mutate((g) => (g.consensus_params.evidence.max_bytes = '30000000')), 'config/genesis.json: consensus_params.evidence.max_bytes: must not exceed block.max_bytes (22020096), got 30000000'],
    [mutate((g) => (g.consensus_params.validator.pub_key_types = [])), 'config/genesis.json: consensus_params.validator.pub_key_types: must not be empty'],
    [mutate((g) => (g.consensus_params.validator.pub_key_types = ['rsa'])), 'config/genesis.json: consensus_params.validator.pub_key_types[0]: unknown key type "rsa" (want ed25519 or secp256k1)'],
    [mutate((g) => (g.consensus_params.abci.vote_extensions_enable_height = '-1')), 'config/genesis.json: consensus_params.abci.vote_extensions_enable_height: must not be negative, got -1'],
    [mutate((g) => (g.consensus_params.block = 5)), 'config/genesis.json: consensus_params.block: expected an object'],
    [mutate((g) => (g.app_hash = 'xyz')), 'config/genesis.json: app_hash: expected hex, got "xyz"'],
    ['{not json', 'config/genesis.json: invalid JSON:'],
    [[], 'config/genesis.json: (document): expected an object'],
  ];
  for (const [input, msg] of rows) {
    let err: unknown;
    try {
      parseGenesis(typeof input === 'string' ? input : JSON.stringify(input));
    } catch (e) {
      err = e;
    }
    if (msg === '') {
      t.equal(err, undefined, 'numeric power is accepted');
      continue;
    }
    t.ok(err instanceof ConfigError, `${msg}: ConfigError`);
    t.equal((err as Error | undefined)?.message.slice(0, msg.length), msg);
  }
});

t.test('load and write files', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'chaind-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'config', 'genesis.json');
  t.throws(() => loadGenesis(path, { source: 'config/genesis.json' }), {
    message: 'config/genesis.json: not found (run `chaind init` first)',
    code: 'CONFIG_NOT_FOUND',
  });
  const doc = parseGenesis(FIXTURE);
  writeGenesis(path, doc);
  t.same(loadGenesis(path), doc);
  t.equal(readFileSync(path, 'utf8'), genesisToString(doc));
});

t.test('app_state is canonical: keys sorted, stable bytes', async (t) => {
  const doc = parseGenesis({ chain_id: 'c', app_state: { z: { b: 1, a: [{ d: 1, c: 2 }] }, a: 'x' } });
  const text = JSON.stringify(genesisToJson(doc).app_state);
  t.equal(text, '{"a":"x","z":{"a":[{"c":2,"d":1}],"b":1}}');
  t.equal(new TextDecoder().decode(appStateBytes(doc)), text);
});

t.test('init app_state: accounts, balances, supply, denom metadata, evm', async (t) => {
  const a1 = new Uint8Array(20).fill(0xee);
  const a2 = new Uint8Array(20).fill(0x01);
  const state = buildAppState({ accounts: [{ address: a1, balance: 10n ** 24n }, { address: a2, balance: 5n }] }) as any;
  t.same(Object.keys(state).sort(), ['auth', 'authz', 'bank', 'evm']);
  t.same(state.auth.params, {
    max_memo_characters: '256',
    tx_sig_limit: '7',
    tx_size_cost_per_byte: '10',
    sig_verify_cost_ed25519: '590',
    sig_verify_cost_secp256k1: '1000',
    sig_verify_cost_mldsa65: '750',
  });
  t.equal(state.auth.accounts.length, 2);
  t.equal(state.auth.accounts[0]['@type'], '/chain.auth.v1beta1.BaseAccount');
  t.equal(state.auth.accounts[1].account_number, '1');
  t.match(state.auth.accounts[0].address, /^chain1/);
  const addrs = state.bank.balances.map((b: { address: string }) => b.address);
  t.same(addrs, [...addrs].sort(), 'balances sorted by address');
  t.same(state.bank.supply, [{ denom: 'achain', amount: '1000000000000000000000005' }]);
  t.equal(state.bank.denom_metadata[0].base, 'achain');
  t.same(state.bank.denom_metadata[0].denom_units[1], { denom: 'chain', exponent: 18, aliases: [] });
  t.equal(state.evm.chain_id, 9000);
  t.equal(state.evm.no_base_fee, true);
  t.equal(state.evm.evm_denom, 'achain');

  const up = buildAppState({ accounts: [{ address: a1, balance: 1n }], names: createNames({ upstreamNames: true }) }) as any;
  t.equal(up.auth.accounts[0]['@type'], '/cosmos.auth.v1beta1.BaseAccount');

  const empty = buildAppState() as any;
  t.same(empty.auth.accounts, []);
  t.same(empty.bank.balances, []);
  t.same(empty.bank.supply, []);
  t.equal(empty.bank.denom_metadata.length, 1);
});
