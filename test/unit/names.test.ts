/** The brand-name registry: emit in either spelling, parse both spellings. */
import t from 'tap';
import {
  createNames,
  EVENT_DATA_TYPES,
  EVENT_TYPES,
  normalizeQueryKey,
  parseAminoName,
  parseEventKey,
  parsePubKeyType,
  parseRestPath,
  parseTypeUrl,
  SPEC_NAMES,
  type KeyAlgo,
} from '../../src/names/index.js';

const spec = createNames();
const up = createNames({ upstreamNames: true });

t.test('emit: spec vs upstream spelling', async (t) => {
  const rows: Array<[string, (n: typeof spec) => string, string, string]> = [
    ['pub ed25519', (n) => n.pubKeyType('ed25519'), 'consensus/PubKeyEd25519', 'tendermint/PubKeyEd25519'],
    ['priv ed25519', (n) => n.privKeyType('ed25519'), 'consensus/PrivKeyEd25519', 'tendermint/PrivKeyEd25519'],
    ['pub secp256k1', (n) => n.pubKeyType('secp256k1'), 'consensus/PubKeySecp256k1', 'tendermint/PubKeySecp256k1'],
    ['event NewBlock', (n) => n.eventType('NewBlock'), 'consensus/event/NewBlock', 'tendermint/event/NewBlock'],
    ['event Tx', (n) => n.eventType('Tx'), 'consensus/event/Tx', 'tendermint/event/Tx'],
    ['event RoundState', (n) => n.eventType('RoundState'), 'consensus/event/RoundState', 'tendermint/event/RoundState'],
    ['event key', (n) => n.eventKey(), 'node.event', 'tm.event'],
    ['dup vote evidence', (n) => n.evidenceType('DuplicateVoteEvidence'), 'consensus/DuplicateVoteEvidence', 'tendermint/DuplicateVoteEvidence'],
    [
      'light client evidence',
      (n) => n.evidenceType('LightClientAttackEvidence'),
      'consensus/LightClientAttackEvidence',
      'tendermint/LightClientAttackEvidence',
    ],
    ['abci pubkey', (n) => n.abciPubKeySumType('ed25519'), 'consensus.crypto.PublicKey_Ed25519', 'tendermint.crypto.PublicKey_Ed25519'],
    ['type url from spec', (n) => n.typeUrl('/chain.auth.v1beta1.BaseAccount'), '/chain.auth.v1beta1.BaseAccount', '/cosmos.auth.v1beta1.BaseAccount'],
    ['type url from upstream', (n) => n.typeUrl('/cosmos.authz.v1beta1.MsgGrant'), '/chain.authz.v1beta1.MsgGrant', '/cosmos.authz.v1beta1.MsgGrant'],
    ['grpc method', (n) => n.typeUrl('chain.auth.v1beta1.Query/Account'), 'chain.auth.v1beta1.Query/Account', 'cosmos.auth.v1beta1.Query/Account'],
    ['package alone', (n) => n.typeUrl('cosmos'), 'chain', 'cosmos'],
    ['other package unchanged', (n) => n.typeUrl('/google.protobuf.Any'), '/google.protobuf.Any', '/google.protobuf.Any'],
    ['prefix-alike unchanged', (n) => n.typeUrl('/chainlink.x.Y'), '/chainlink.x.Y', '/chainlink.x.Y'],
    ['rest path', (n) => n.restPath('/chain/auth/v1beta1/params'), '/chain/auth/v1beta1/params', '/cosmos/auth/v1beta1/params'],
    ['rest path from upstream', (n) => n.restPath('/cosmos/bank/v1beta1/balances/x?y=1'), '/chain/bank/v1beta1/balances/x?y=1', '/cosmos/bank/v1beta1/balances/x?y=1'],
    ['rest other', (n) => n.restPath('/chainx/a'), '/chainx/a', '/chainx/a'],
    ['amino MsgGrant', (n) => n.aminoName('chain-sdk/MsgGrant'), 'chain-sdk/MsgGrant', 'cosmos-sdk/MsgGrant'],
    ['amino nested', (n) => n.aminoName('cosmos-sdk/x/auth/MsgUpdateParams'), 'chain-sdk/x/auth/MsgUpdateParams', 'cosmos-sdk/x/auth/MsgUpdateParams'],
    ['amino pubkey', (n) => n.aminoName('tendermint/PubKeySecp256k1'), 'consensus/PubKeySecp256k1', 'tendermint/PubKeySecp256k1'],
  ];
  for (const [name, f, wantSpec, wantUp] of rows) {
    t.equal(f(spec), wantSpec, `${name} (spec)`);
    t.equal(f(up), wantUp, `${name} (upstream)`);
  }
});

t.test('every event data type has both spellings', async (t) => {
  for (const e of EVENT_DATA_TYPES) {
    t.equal(spec.eventType(e), `consensus/event/${e}`);
    t.equal(up.eventType(e), `tendermint/event/${e}`);
    t.equal(spec.parseEventType(up.eventType(e)), e);
    t.equal(up.parseEventType(spec.eventType(e)), e);
  }
  for (const e of EVENT_TYPES) {
    t.equal(spec.eventType(e), `consensus/event/${e}`);
    t.equal(up.eventType(e), `tendermint/event/${e}`);
  }
  t.ok(EVENT_TYPES.includes('NewRoundStep'));
  t.equal(EVENT_TYPES.length, 17);
});

t.test('parse: both spellings, in either mode', async (t) => {
  const rows: Array<[string, string, unknown]> = [
    ['parsePubKeyType', 'consensus/PubKeyEd25519', 'ed25519'],
    ['parsePubKeyType', 'tendermint/PubKeyEd25519', 'ed25519'],
    ['parsePubKeyType', 'tendermint/PubKeySecp256k1', 'secp256k1'],
    ['parsePubKeyType', 'consensus/PubKeySr25519', 'sr25519'],
    ['parsePubKeyType', 'tendermint/PrivKeyEd25519', undefined],
    ['parsePubKeyType', 'cosmos/PubKeyEd25519', undefined],
    ['parsePubKeyType', 'consensus/PubKeyEd448', undefined],
    ['parsePrivKeyType', 'tendermint/PrivKeyEd25519', 'ed25519'],
    ['parsePrivKeyType', 'consensus/PrivKeyEd25519', 'ed25519'],
    ['parsePrivKeyType', 'consensus/PubKeyEd25519', undefined],
    ['parseEventType', 'tendermint/event/NewBlock', 'NewBlock'],
    ['parseEventType', 'consensus/event/Vote', 'Vote'],
    ['parseEventType', 'consensus/event/', undefined],
    ['parseEventType', 'NewBlock', undefined],
    ['parseEvidenceType', 'tendermint/DuplicateVoteEvidence', 'DuplicateVoteEvidence'],
    ['parseEvidenceType', 'consensus/LightClientAttackEvidence', 'LightClientAttackEvidence'],
    ['parseEvidenceType', 'consensus/OtherEvidence', undefined],
    ['parseAbciPubKeySumType', 'tendermint.crypto.PublicKey_Ed25519', 'ed25519'],
    ['parseAbciPubKeySumType', 'consensus.crypto.PublicKey_Secp256k1', 'secp256k1'],
    ['parseAbciPubKeySumType', 'tendermint.crypto.PublicKey', undefined],
    ['parseEventKey', 'tm.event', 'node.event'],
    ['parseEventKey', 'node.event', 'node.event'],
    ['parseEventKey', 'tx.hash', undefined],
    ['normalizeQueryKey', 'tm.event', 'node.event'],
    ['normalizeQueryKey', 'node.event', 'node.event'],
    ['normalizeQueryKey', 'tx.height', 'tx.height'],
    ['normalizeQueryKey', 'transfer.sender', 'transfer.sender'],
    ['parseTypeUrl', '/cosmos.auth.v1beta1.BaseAccount', '/chain.auth.v1beta1.BaseAccount'],
    ['parseTypeUrl', '/chain.auth.v1beta1.BaseAccount', '/chain.auth.v1beta1.BaseAccount'],
    ['parseTypeUrl', '/cosmos.evm.vm.v1.MsgEthereumTx', '/chain.evm.vm.v1.MsgEthereumTx'],
    ['parseTypeUrl', '/ibc.core.client.v1.MsgUpdateClient', '/ibc.core.client.v1.MsgUpdateClient'],
    ['parseTypeUrl', '/cosmoshub.x.Y', '/cosmoshub.x.Y'],
    ['parseRestPath', '/cosmos/auth/v1beta1/accounts', '/chain/auth/v1beta1/accounts'],
    ['parseRestPath', '/cosmos', '/chain'],
    ['parseRestPath', '/cosmoss/a', '/cosmoss/a'],
    ['parseRestPath', '/status', '/status'],
    ['parseAminoName', 'cosmos-sdk/MsgGrant', 'chain-sdk/MsgGrant'],
    ['parseAminoName', 'chain-sdk/MsgRevoke', 'chain-sdk/MsgRevoke'],
    ['parseAminoName', 'tendermint/PubKeySecp256k1', 'consensus/PubKeySecp256k1'],
    ['parseAminoName', 'other/Name', 'other/Name'],
  ];
  for (const names of [spec, up]) {
    for (const [fn, input, want] of rows) {
      const f = (names as unknown as Record<string, (s: string) => unknown>)[fn]!;
      t.equal(f(input), want, `${names.upstreamNames ? 'upstream' : 'spec'} ${fn}(${input})`);
    }
  }
  t.equal(parsePubKeyType('tendermint/PubKeyEd25519'), 'ed25519', 'free function');
  t.equal(parseEventKey('tm.event'), 'node.event');
  t.equal(normalizeQueryKey('tm.event'), 'node.event');
  t.equal(parseTypeUrl('/cosmos.bank.v1beta1.MsgSend'), '/chain.bank.v1beta1.MsgSend');
  t.equal(parseRestPath('/cosmos/tx/v1beta1/txs'), '/chain/tx/v1beta1/txs');
  t.equal(parseAminoName('cosmos-sdk/MsgExec'), 'chain-sdk/MsgExec');
  t.ok(spec.isEventKey('tm.event') && up.isEventKey('node.event') && !spec.isEventKey('tx.hash'));
});

t.test('round trip: parse(emit(x)) is the canonical spec form', async (t) => {
  const algos: KeyAlgo[] = ['ed25519', 'secp256k1', 'sr25519'];
  for (const names of [spec, up]) {
    for (const a of algos) {
      t.equal(names.parsePubKeyType(names.pubKeyType(a)), a);
      t.equal(names.parsePrivKeyType(names.privKeyType(a)), a);
      t.equal(names.parseAbciPubKeySumType(names.abciPubKeySumType(a)), a);
    }
    t.equal(names.parseTypeUrl(names.typeUrl('/chain.authz.v1beta1.MsgExec')), '/chain.authz.v1beta1.MsgExec');
    t.equal(names.parseRestPath(names.restPath('/chain/authz/v1beta1/grants')), '/chain/authz/v1beta1/grants');
    t.equal(names.parseAminoName(names.aminoName('chain-sdk/MsgGrant')), 'chain-sdk/MsgGrant');
    t.equal(names.parseEventKey(names.eventKey()), 'node.event');
  }
});

t.test('defaults', async (t) => {
  t.equal(spec.upstreamNames, false);
  t.equal(up.upstreamNames, true);
  t.equal(createNames({ upstreamNames: false }).pubKeyType('ed25519'), 'consensus/PubKeyEd25519');
  t.equal(SPEC_NAMES.eventKey(), 'node.event');
  t.ok(Object.isFrozen(spec));
});
