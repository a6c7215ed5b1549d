/**
 * Sign-bytes vectors:
 * - cometbft types/vote_test.go TestVoteSignBytesTestVectors (six cases) and TestVoteSignable;
 * - proposal sign bytes generated with CometBFT's Go types.ProposalSignBytes, as recorded in
 *   informalsystems/tendermint-rs tendermint/src/proposal.rs (test_serialization,
 *   test_encoding_with_empty_block_id);
 * - real precommit signatures from a CometBFT v0.38 kvstore chain ("dockerchain"), verified
 *   against the genesis validator key: they only verify if our sign bytes are CometBFT's;
 * - ed25519: cometbft privval/msgs_test.go (GenPrivKeyFromSecret("it's a secret") pubkey) and
 *   RFC 8032 §7.1 test 1.
 */
import t from 'tap';
import { canonicalVoteBytes, isZeroBlockId, proposalSignBytes, voteExtensionSignBytes, voteSignBytes } from '../../src/types/signbytes.js';
import { delimit } from '../../src/types/proto.js';
import { parseTime } from '../../src/types/json.js';
import { Ed25519PrivKey, ed25519Verify } from '../../src/crypto/ed25519.js';
import { sha256, tmhashTruncated } from '../../src/crypto/hash.js';
import { SignedMsgType, ZERO_TIME, type BlockID, type Vote } from '../../src/types/block.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const unhex = (s: string) => Uint8Array.from(Buffer.from(s, 'hex'));
const enc = (s: string) => new TextEncoder().encode(s);
const EMPTY = new Uint8Array(0);
const zeroId = (): BlockID => ({ hash: EMPTY, partSetHeader: { total: 0, hash: EMPTY } });

function vote(p: Partial<Vote>): Vote {
  return {
    type: 0 as SignedMsgType,
    height: 0n,
    round: 0,
    blockId: zeroId(),
    timestamp: ZERO_TIME,
    validatorAddress: EMPTY,
    validatorIndex: 0,
    signature: EMPTY,
    extension: EMPTY,
    extensionSignature: EMPTY,
    ...p,
  };
}

const TS_ZERO = [0x2a, 0xb, 0x8, 0x80, 0x92, 0xb8, 0xc3, 0x98, 0xfe, 0xff, 0xff, 0xff, 0x1];
const H1 = [0x11, 0x1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0];
const R1 = [0x19, 0x1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0];
const CHAIN = [0x32, 0xd, ...enc('test_chain_id')];

t.test('TestVoteSignBytesTestVectors (types/vote_test.go)', async (t) => {
  const cases: [string, Vote, number[]][] = [
    ['0: empty vote, height and round skipped', vote({}), [0xd, ...TS_ZERO]],
    ['1: precommit h=1 r=1', vote({ height: 1n, round: 1, type: SignedMsgType.Precommit }), [0x21, 0x8, 0x2, ...H1, ...R1, ...TS_ZERO]],
    ['2: prevote h=1 r=1', vote({ height: 1n, round: 1, type: SignedMsgType.Prevote }), [0x21, 0x8, 0x1, ...H1, ...R1, ...TS_ZERO]],
    ['3: no type', vote({ height: 1n, round: 1 }), [0x1f, ...H1, ...R1, ...TS_ZERO]],
    ['4: chain id', vote({ height: 1n, round: 1 }), [0x2e, ...H1, ...R1, ...TS_ZERO, ...CHAIN]],
    ['5: extension is not signed here', vote({ height: 1n, round: 1, extension: enc('extension') }), [0x2e, ...H1, ...R1, ...TS_ZERO, ...CHAIN]],
  ];
  for (const [name, v, want] of cases) {
    const chainId = name.startsWith('4') || name.startsWith('5') ? 'test_chain_id' : '';
    t.equal(hex(voteSignBytes(chainId, v)), hex(Uint8Array.from(want)), name);
  }
});

t.test('TestVoteSignable: sign bytes are the delimited CanonicalVote', async (t) => {
  // examplePrecommit() of types/vote_test.go.
  const v = vote({
    type: SignedMsgType.Precommit,
    height: 12345n,
    round: 2,
    timestamp: parseTime('2017-12-25T03:00:01.234Z'),
    blockId: { hash: sha256(enc('blockID_hash')), partSetHeader: { total: 1000000, hash: sha256(enc('blockID_part_set_header_hash')) } },
    validatorAddress: tmhashTruncated(enc('validator_address')),
    validatorIndex: 56789,
    extension: enc('extension'),
    extensionSignature: enc('signature'),
  });
  const sb = voteSignBytes('test_chain_id', v);
  t.equal(hex(sb), hex(delimit(canonicalVoteBytes('test_chain_id', v))));
  // Validator address, index, signature and extension do not enter the sign bytes.
  const other: Vote = { ...v, validatorIndex: 1, validatorAddress: EMPTY, extension: EMPTY };
  t.equal(hex(voteSignBytes('test_chain_id', other)), hex(sb));
  // The block id does (a nil vote omits it).
  t.not(hex(voteSignBytes('test_chain_id', { ...v, blockId: zeroId() })), hex(sb));
  t.ok(isZeroBlockId(zeroId()));
  t.notOk(isZeroBlockId({ hash: EMPTY, partSetHeader: { total: 1, hash: EMPTY } }));
});

t.test('proposal sign bytes (Go ProposalSignBytes output recorded by tendermint-rs)', async (t) => {
  const base = {
    height: 12345n,
    round: 23456,
    polRound: -1,
    timestamp: parseTime('2018-02-11T07:09:22.765Z'),
  };
  const psh = { total: 65535, hash: unhex('0022446688AACCEE1133557799BBDDFF0022446688AACCEE1133557799BBDDFF') };
  const want1 = [
    136, 1, 8, 32, 17, 57, 48, 0, 0, 0, 0, 0, 0, 25, 160, 91, 0, 0, 0, 0, 0, 0, 32, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 1, 42, 74, 10, 32, 222, 173, 190, 239, 222,
    173, 190, 239, 186, 251, 175, 186, 251, 175, 186, 250, 222, 173, 190, 239, 222, 173,
    190, 239, 186, 251, 175, 186, 251, 175, 186, 250, 18, 38, 8, 255, 255, 3, 18, 32, 0,
    34, 68, 102, 136, 170, 204, 238, 17, 51, 85, 119, 153, 187, 221, 255, 0, 34, 68, 102,
    136, 170, 204, 238, 17, 51, 85, 119, 153, 187, 221, 255, 50, 12, 8, 162, 216, 255, 211,
    5, 16, 192, 242, 227, 236, 2, 58, 13, 116, 101, 115, 116, 95, 99, 104, 97, 105, 110,
    95, 105, 100,
  ];
  const p1 = { ...base, blockId: { hash: unhex('DEADBEEFDEADBEEFBAFBAFBAFBAFBAFADEADBEEFDEADBEEFBAFBAFBAFBAFBAFA'), partSetHeader: psh } };
  t.equal(hex(proposalSignBytes('test_chain_id', p1)), hex(Uint8Array.from(want1)), 'full block id, pol_round -1 as a 10-byte varint');
  const want2 = [
    102, 8, 32, 17, 57, 48, 0, 0, 0, 0, 0, 0, 25, 160, 91, 0, 0, 0, 0, 0, 0, 32, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 1, 42, 40, 18, 38, 8, 255, 255, 3, 18, 32, 0, 34,
    68, 102, 136, 170, 204, 238, 17, 51, 85, 119, 153, 187, 221, 255, 0, 34, 68, 102, 136,
    170, 204, 238, 17, 51, 85, 119, 153, 187, 221, 255, 50, 12, 8, 162, 216, 255, 211, 5,
    16, 192, 242, 227, 236, 2, 58, 13, 116, 101, 115, 116, 95, 99, 104, 97, 105, 110, 95,
    105, 100,
  ];
  const p2 = { ...base, blockId: { hash: EMPTY, partSetHeader: psh } };
  t.equal(hex(proposalSignBytes('test_chain_id', p2)), hex(Uint8Array.from(want2)), 'empty hash but non-zero part set header');
  // pol_round >= 0 is a short varint; a zero block id is omitted.
  const p3 = proposalSignBytes('c', { height: 1n, round: 0, polRound: 0, timestamp: 0n, blockId: zeroId() });
  t.equal(hex(p3), hex(Uint8Array.of(0x10, 0x08, 0x20, 0x11, 1, 0, 0, 0, 0, 0, 0, 0, 0x32, 0x00, 0x3a, 0x01, 0x63)));
});

t.test('vote extension sign bytes (CanonicalVoteExtension 1 extension, 2 height, 3 round, 4 chain_id)', async (t) => {
  const sb = voteExtensionSignBytes('test_chain_id', { extension: enc('extension'), height: 1n, round: 1 });
  const body = [0x0a, 9, ...enc('extension'), ...H1, ...R1, 0x22, 0xd, ...enc('test_chain_id')];
  t.equal(hex(sb), hex(Uint8Array.from([body.length, ...body])));
  const empty = voteExtensionSignBytes('', { extension: EMPTY, height: 0n, round: 0 });
  t.equal(hex(empty), '00');
});

// Real commits of a single-validator v0.38 chain; validator key from its genesis.
const COMMITS = JSON.parse(String.raw`[{"block_id":{"hash":"6CD5CF4E23A49D9BC073D6F305D29D1B8B5193B534C237696D42FEA5AFBCD520","parts":{"hash":"F021777213F7EF77494C9B5C11D246A6F532DA146D205422D1FB85600F6B479C","total":1}},"height":"1","round":0,"signatures":[{"block_id_flag":2,"signature":"Ui+aVj2J2XiutJivXorKO4QUKvBS+AiyCI1zhQGirWnBdaBKrT0LufSnkbvJrB3PThmy7e7L3twH320D4T1rDA==","timestamp":"2023-05-17T14:12:48.936921432Z","validator_address":"2DD9F44FD9067555C322243C3C913BA7B51D2BE0"}]},{"block_id":{"hash":"70302722FE881D45C2683268F3CCD8B72B6BAE35DE3765960244B956FA426F2C","parts":{"hash":"B1CE80F8E2150C3FCC23370CF72E24048C734451FC88EBFB8C9B5633C512BF4C","total":1}},"height":"2","round":0,"signatures":[{"block_id_flag":2,"signature":"l1bPl2KbQ1h14fgR6KhixqkPygH8XID1sO8PynIQgyexjDyWRQLiCH3vP127IC6f2s6xHAuAru9AfQPpRRMoBQ==","timestamp":"2023-05-17T14:12:49.452618685Z","validator_address":"2DD9F44FD9067555C322243C3C913BA7B51D2BE0"}]},{"block_id":{"hash":"7937D62B37155F3C723BDBEE2B19813B3EFDCD1E620CCF400C5CAA754DFB8AB1","parts":{"hash":"B1C0D25DB583D511EC23F4797374337D9926DD19FA71828426EFFFFE7DF1C19F","total":1}},"height":"3","round":0,"signatures":[{"block_id_flag":2,"signature":"EwYynCfBKqrp/8dIDLNfyorCBDUts/QmW0+meVLPUtDL+MhMixq7xIeM4z4FzNMWbN4r0UxMtVB8xGAypfLICw==","timestamp":"2023-05-17T14:12:49.974876236Z","validator_address":"2DD9F44FD9067555C322243C3C913BA7B51D2BE0"}]},{"block_id":{"hash":"678A83FB0422D053A3792154703122861DD68ABB8247A4FF2945DF832DB18FC8","parts":{"hash":"29FE32F6B57D8439C9E9F6240B436DD560646FDA8C8C105E2C261B6F4746E89C","total":1}},"height":"9","round":0,"signatures":[{"block_id_flag":2,"signature":"BMy5pB3a9xeEnuBkja/a6GUvP1guZ2lMQtZYvdrl8s0ri1/LaF0JuI9rOsy1biVTv+TDKzlBXTZ5gdgiq0uCAg==","timestamp":"2023-05-17T14:12:53.088875124Z","validator_address":"2DD9F44FD9067555C322243C3C913BA7B51D2BE0"}]},{"block_id":{"hash":"657D0859C6F0E0D556D150A14D9D76EF0ED0FBF83932980562B98B535916DF2C","parts":{"hash":"458E660E1F2488E0C42FE4E0E21FDBDDE5369AA9391E3A19E3A769382F341396","total":1}},"height":"234","round":0,"signatures":[{"block_id_flag":2,"signature":"/sTY1fEFE0vpbjM9r+1E3Fo0vOdMh6HTBfCLK3UHR2jf4VGQxdebXzEnNShfQg+UQkvGp7Rqe4nhxmhbo/DmCQ==","timestamp":"2023-05-17T14:14:50.081741308Z","validator_address":"2DD9F44FD9067555C322243C3C913BA7B51D2BE0"}]},{"block_id":{"hash":"00ECDAC463C201ECD4BDBBAAE4A53A4C80291D4051FD69ED97F6420CE1388BFE","parts":{"hash":"FF0A320E696FD233DD4D3CC7CD82FF90F54B8FDBC9C700D9375C95A02782B062","total":1}},"height":"10","round":0,"signatures":[{"block_id_flag":2,"signature":"5y0Kas3bSrgVYG/QKwWovMpTBfavZfy/A8DXkQHzFHVMjOcVk2TK6xhYQasfiodordg1bjDf7NDwNi/YdilaAw==","timestamp":"2023-05-17T14:12:53.605374524Z","validator_address":"2DD9F44FD9067555C322243C3C913BA7B51D2BE0"}]}]`) as any[];
const PUB = Uint8Array.from(Buffer.from('bNNlGls5R25wC3Sd8720F/3+7IZBhXcD22MNFtPk/v0=', 'base64'));

t.test('real CometBFT precommit signatures verify over our sign bytes', async (t) => {
  t.ok(COMMITS.length >= 5);
  for (const c of COMMITS) {
    const s = c.signatures[0];
    const v = vote({
      type: SignedMsgType.Precommit,
      height: BigInt(c.height),
      round: c.round,
      blockId: { hash: unhex(c.block_id.hash), partSetHeader: { total: c.block_id.parts.total, hash: unhex(c.block_id.parts.hash) } },
      timestamp: parseTime(s.timestamp),
    });
    const sig = Uint8Array.from(Buffer.from(s.signature, 'base64'));
    t.ok(ed25519Verify(PUB, voteSignBytes('dockerchain', v), sig), `height ${c.height}`);
    t.notOk(ed25519Verify(PUB, voteSignBytes('dockerchain2', v), sig), `wrong chain id fails at ${c.height}`);
    t.notOk(ed25519Verify(PUB, voteSignBytes('dockerchain', { ...v, timestamp: v.timestamp + 1n }), sig), `wrong time fails at ${c.height}`);
    t.notOk(ed25519Verify(PUB, voteSignBytes('dockerchain', { ...v, type: SignedMsgType.Prevote }), sig), `wrong type fails at ${c.height}`);
  }
});

t.test('ed25519 keys', async (t) => {
  // privval/msgs_test.go: ed25519.GenPrivKeyFromSecret([]byte("it's a secret")).PubKey().
  const k = Ed25519PrivKey.fromSecret(enc("it's a secret"));
  t.equal(hex(k.pubKey), '556a436f1218d30942efe798420f51dc9b6a311b929c578257457d05c5fcf230');
  t.equal(hex(k.address), hex(sha256(k.pubKey).subarray(0, 20)));

  // RFC 8032 §7.1 TEST 1 (empty message).
  const rfc = Ed25519PrivKey.fromSeed(unhex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60'));
  t.equal(hex(rfc.pubKey), 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
  const sig = rfc.sign(EMPTY);
  t.equal(hex(sig), 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b');
  t.ok(ed25519Verify(rfc.pubKey, EMPTY, sig));

  // 64-byte seed||pub form round trip; a mismatched public half is rejected.
  const full = rfc.bytes();
  t.equal(full.length, 64);
  t.equal(hex(Ed25519PrivKey.fromBytes(full).pubKey), hex(rfc.pubKey));
  const bad = Uint8Array.from(full);
  bad[63]! ^= 1;
  t.throws(() => Ed25519PrivKey.fromBytes(bad));
  t.throws(() => Ed25519PrivKey.fromSeed(new Uint8Array(31)));

  // Sign/verify and single-bit mutations (crypto/ed25519 TestSignAndValidateEd25519).
  const g = Ed25519PrivKey.generate();
  const msg = enc('a message of some length to sign');
  const s = g.sign(msg);
  t.ok(ed25519Verify(g.pubKey, msg, s));
  const s2 = Uint8Array.from(s);
  s2[7]! ^= 1;
  t.notOk(ed25519Verify(g.pubKey, msg, s2), 'mutated signature');
  t.notOk(ed25519Verify(rfc.pubKey, msg, s), 'other key');
  t.notOk(ed25519Verify(g.pubKey, msg, s.subarray(0, 63)), 'short signature');
  t.notOk(ed25519Verify(g.pubKey.subarray(0, 31), msg, s), 'short key');
  // Cached key objects keep verifying correctly for many keys.
  for (let i = 0; i < 20; i++) {
    const kk = Ed25519PrivKey.generate();
    t.ok(ed25519Verify(kk.pubKey, msg, kk.sign(msg)));
    t.ok(ed25519Verify(g.pubKey, msg, s));
  }
});
