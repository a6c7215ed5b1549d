/**
 * Hash vectors:
 * - cometbft types/block_test.go TestHeaderHash (expected F740121F...; nil ValidatorsHash -> nil);
 * - cometbft types/results_test.go TestABCIResults (nil and empty data encode alike, to nothing);
 * - real CometBFT v0.38 kvstore responses (informalsystems/tendermint-rs kvstore fixtures as kept
 *   in shared/reference/fixtures): block hashes, last_commit_hash, validators_hash,
 *   consensus_hash, data_hash of a one-tx block, tx hashes and the validator address.
 */
import { BLOCKS, headerFromJSON, commitFromJSON } from '../helpers/comet-json.js';
import t from 'tap';
import { createHash } from 'node:crypto';
import {
  cdcEncodeBytes,
  cdcEncodeInt64,
  cdcEncodeString,
  commitHash,
  consensusParamsHash,
  dataHash,
  encodeDeterministicTxResult,
  evidenceHash,
  evidenceInnerBytes,
  evidenceItemHash,
  headerHash,
  lastResultsHash,
  txHash,
  validatorsHash,
} from '../../src/types/hashing.js';
import { merkleRoot } from '../../src/crypto/merkle.js';
import { addressFromPubKey, sha256, tmhashTruncated } from '../../src/crypto/hash.js';
import { defaultConsensusParams } from '../../src/types/params.js';
import { parseTime } from '../../src/types/json.js';
import type { Header } from '../../src/types/block.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();
const enc = (s: string) => new TextEncoder().encode(s);
const EMPTY_HASH = 'E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855';

// block_metas of /blockchain (heights 10 and 9).
const METAS = JSON.parse(String.raw`[{"block_id":{"hash":"00ECDAC463C201ECD4BDBBAAE4A53A4C80291D4051FD69ED97F6420CE1388BFE","parts":{"hash":"FF0A320E696FD233DD4D3CC7CD82FF90F54B8FDBC9C700D9375C95A02782B062","total":1}},"block_size":"569","header":{"app_hash":"0000000000000000","chain_id":"dockerchain","consensus_hash":"048091BC7DDC283F77BFBF91D73C44DA58C3DF8A9CBC867405D8B7F3DAADA22F","data_hash":"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855","evidence_hash":"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855","height":"10","last_block_id":{"hash":"678A83FB0422D053A3792154703122861DD68ABB8247A4FF2945DF832DB18FC8","parts":{"hash":"29FE32F6B57D8439C9E9F6240B436DD560646FDA8C8C105E2C261B6F4746E89C","total":1}},"last_commit_hash":"A3AD467820428D99FD53BFCF38CDC1EB141DD27E3B5F0F3931BBE91FBA8B097D","last_results_hash":"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855","next_validators_hash":"33415EFFCEDA5BD0A3A443A727457D9F7B9E38389BF27A936FEDF749A7B7566E","proposer_address":"2DD9F44FD9067555C322243C3C913BA7B51D2BE0","time":"2023-05-17T14:12:53.088875124Z","validators_hash":"33415EFFCEDA5BD0A3A443A727457D9F7B9E38389BF27A936FEDF749A7B7566E","version":{"app":"1","block":"11"}},"num_txs":"0"},{"block_id":{"hash":"678A83FB0422D053A3792154703122861DD68ABB8247A4FF2945DF832DB18FC8","parts":{"hash":"29FE32F6B57D8439C9E9F6240B436DD560646FDA8C8C105E2C261B6F4746E89C","total":1}},"block_size":"571","header":{"app_hash":"0000000000000000","chain_id":"dockerchain","consensus_hash":"048091BC7DDC283F77BFBF91D73C44DA58C3DF8A9CBC867405D8B7F3DAADA22F","data_hash":"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855","evidence_hash":"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855","height":"9","last_block_id":{"hash":"0FD9EFBBC42938EBE2AFC1A72CFD3D95303573A8F247FE60105154A363869EE0","parts":{"hash":"CAA389BC14C73BFE452E01DC5DB89EEB20BA4331402DD0EF385F1FCA2A3B8F07","total":1}},"last_commit_hash":"AB99F72D02B4ADFEA560A2AFEE0332C3CC3723CBE485330679513AB0A192ED00","last_results_hash":"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855","next_validators_hash":"33415EFFCEDA5BD0A3A443A727457D9F7B9E38389BF27A936FEDF749A7B7566E","proposer_address":"2DD9F44FD9067555C322243C3C913BA7B51D2BE0","time":"2023-05-17T14:12:52.570941867Z","validators_hash":"33415EFFCEDA5BD0A3A443A727457D9F7B9E38389BF27A936FEDF749A7B7566E","version":{"app":"1","block":"11"}},"num_txs":"0"}]`) as any[];


t.test('TestHeaderHash vector (types/block_test.go)', async (t) => {
  const h: Header = {
    version: { block: 1n, app: 2n },
    chainId: 'chainId',
    height: 3n,
    time: parseTime('2019-10-13T16:14:44Z'),
    lastBlockId: { hash: new Uint8Array(32), partSetHeader: { total: 6, hash: new Uint8Array(32) } },
    lastCommitHash: sha256(enc('last_commit_hash')),
    dataHash: sha256(enc('data_hash')),
    validatorsHash: sha256(enc('validators_hash')),
    nextValidatorsHash: sha256(enc('next_validators_hash')),
    consensusHash: sha256(enc('consensus_hash')),
    appHash: sha256(enc('app_hash')),
    lastResultsHash: sha256(enc('last_results_hash')),
    evidenceHash: sha256(enc('evidence_hash')),
    proposerAddress: tmhashTruncated(enc('proposer_address')),
  };
  t.equal(hex(headerHash(h)), 'F740121F553B5418C3EFBD343C2DBFE9E007BB67B0D020A0741374BAB65242A4');
  t.equal(headerHash({ ...h, validatorsHash: new Uint8Array(0) }).length, 0, 'nil ValidatorsHash yields nil');
  // Every field is hashed: changing any one changes the hash.
  const base = hex(headerHash(h));
  const variants: Partial<Header>[] = [
    { version: { block: 1n, app: 3n } },
    { chainId: 'chainIe' },
    { height: 4n },
    { time: h.time + 1n },
    { lastBlockId: { hash: new Uint8Array(32), partSetHeader: { total: 7, hash: new Uint8Array(32) } } },
    { lastCommitHash: sha256(enc('x')) },
    { dataHash: sha256(enc('x')) },
    { validatorsHash: sha256(enc('x')) },
    { nextValidatorsHash: sha256(enc('x')) },
    { consensusHash: sha256(enc('x')) },
    { appHash: sha256(enc('x')) },
    { lastResultsHash: sha256(enc('x')) },
    { evidenceHash: sha256(enc('x')) },
    { proposerAddress: tmhashTruncated(enc('x')) },
  ];
  for (const v of variants) t.not(hex(headerHash({ ...h, ...v })), base, `field ${Object.keys(v)[0]} is hashed`);
});

t.test('cdcEncode wrappers (types/encoding_helper.go)', async (t) => {
  t.equal(cdcEncodeString('').length, 0);
  t.equal(hex(cdcEncodeString('chainId')), '0A07636861696E4964');
  t.equal(cdcEncodeInt64(0n).length, 0);
  t.equal(hex(cdcEncodeInt64(3n)), '0803');
  t.equal(hex(cdcEncodeInt64(-1n)), '08FFFFFFFFFFFFFFFFFF01');
  t.equal(cdcEncodeBytes(new Uint8Array(0)).length, 0);
  t.equal(hex(cdcEncodeBytes(Uint8Array.of(0xab, 0xcd))), '0A02ABCD');
});

t.test('real CometBFT block hashes (header hash = block_id.hash)', async (t) => {
  const seen = new Set<string>();
  const cases: [any, string][] = [];
  for (const b of BLOCKS) cases.push([b.block.header, b.block_id.hash]);
  for (const m of METAS) cases.push([m.header, m.block_id.hash]);
  for (const [hj, want] of cases) {
    if (seen.has(want)) continue;
    seen.add(want);
    t.equal(hex(headerHash(headerFromJSON(hj))), want, `height ${hj.height}`);
  }
  t.ok(seen.size >= 7);
  // The next header's last_block_id is the previous block's id.
  t.equal(BLOCKS[1]!.block.header.last_block_id.hash, BLOCKS[0]!.block_id.hash);
});

t.test('real CometBFT last_commit_hash (merkle over proto CommitSigs)', async (t) => {
  for (const b of BLOCKS) {
    const c = commitFromJSON(b.block.last_commit);
    t.equal(hex(commitHash(c)), b.block.header.last_commit_hash, `commit for height ${c.height}`);
  }
  t.equal(hex(commitHash({ height: 0n, round: 0, blockId: { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } }, signatures: [] })), EMPTY_HASH);
});

t.test('real CometBFT validators_hash, address and consensus_hash', async (t) => {
  // genesis: one validator, power 10.
  const pubKey = { type: 'ed25519' as const, bytes: Uint8Array.from(Buffer.from('bNNlGls5R25wC3Sd8720F/3+7IZBhXcD22MNFtPk/v0=', 'base64')) };
  t.equal(hex(addressFromPubKey(pubKey)), '2DD9F44FD9067555C322243C3C913BA7B51D2BE0');
  t.equal(hex(validatorsHash([{ pubKey, votingPower: 10n }])), '33415EFFCEDA5BD0A3A443A727457D9F7B9E38389BF27A936FEDF749A7B7566E');
  t.not(hex(validatorsHash([{ pubKey, votingPower: 11n }])), '33415EFFCEDA5BD0A3A443A727457D9F7B9E38389BF27A936FEDF749A7B7566E');
  t.equal(hex(validatorsHash([])), EMPTY_HASH);
  t.equal(hex(consensusParamsHash(defaultConsensusParams())), '048091BC7DDC283F77BFBF91D73C44DA58C3DF8A9CBC867405D8B7F3DAADA22F');
  // Only block.max_bytes and block.max_gas enter the hash (types/params.go HashedParams).
  const p = defaultConsensusParams();
  p.evidence.maxBytes = 1n;
  p.version.app = 9n;
  t.equal(hex(consensusParamsHash(p)), '048091BC7DDC283F77BFBF91D73C44DA58C3DF8A9CBC867405D8B7F3DAADA22F');
  p.block.maxGas = 1000n;
  t.not(hex(consensusParamsHash(p)), '048091BC7DDC283F77BFBF91D73C44DA58C3DF8A9CBC867405D8B7F3DAADA22F');
});

t.test('secp256k1 address is ripemd160(sha256(pub33))', async (t) => {
  const pub = Uint8Array.from(Buffer.from('02' + '11'.repeat(32), 'hex'));
  const want = createHash('ripemd160').update(createHash('sha256').update(pub).digest()).digest('hex').toUpperCase();
  t.equal(hex(addressFromPubKey({ type: 'secp256k1', bytes: pub })), want);
  t.throws(() => addressFromPubKey({ type: 'ed25519', bytes: new Uint8Array(33) }));
});

t.test('tx and data hashes', async (t) => {
  // Real v0.38 kvstore txs and their RPC hashes.
  t.equal(hex(txHash(enc('async-key=value'))), '9F28904F9C0F3AB74A81CBA48E39124DA1C680B47FBFCBA0126870DB722BCC30');
  t.equal(hex(txHash(enc('sync-key=value'))), '57018296EE0919C9D351F2FFEA82A8D28DE223724D79965FC8D00A7477ED48BC');
  // Single-tx blocks: TxProof.root_hash is Data.Hash.
  t.equal(hex(dataHash([enc('async-key=value')])), '3081F9915040D138B3AD7F895732D2767C29E85BA5D84388D04E17A5D8262B7A');
  t.equal(hex(dataHash([enc('sync-key=value')])), 'A0BF8E611A3A2ED0FE94AA345B903691C3E56EDE0E7F773F54DE7B020E788849');
  t.equal(hex(dataHash([])), EMPTY_HASH);
  // Many txs: the leaves are the tx hashes.
  const txs = Array.from({ length: 7 }, (_, i) => enc(`k${i}=v${i}`));
  t.equal(hex(dataHash(txs)), hex(merkleRoot(txs.map((x) => sha256(x)))));
  t.not(hex(dataHash(txs)), hex(merkleRoot(txs)));
});

t.test('data hash of a big block: the backend path agrees with the definition; known tx hashes are used as given', async (t) => {
  // 1,000 txs of varied length (the native backend hashes them into one buffer, then one merkle pass).
  const txs = Array.from({ length: 1000 }, (_, i) => enc(`tx-${i}-${'x'.repeat(i % 97)}`));
  const want = merkleRoot(txs.map((x) => sha256(x)));
  t.equal(hex(dataHash(txs)), hex(want), 'same root as leaves = sha256 of each tx');
  t.equal(hex(txHash(txs[5]!)), hex(sha256(txs[5]!)), 'txHash is sha256');
  // The mempool's keys (one per tx object it holds) stand in for hashing; unknown txs are hashed.
  const keys = new Map<Uint8Array, Uint8Array>(txs.filter((_, i) => i % 3 === 0).map((x) => [x, sha256(x)]));
  t.equal(hex(dataHash(txs, (x) => keys.get(x))), hex(want), 'known hashes for a third of the txs: same root');
  // A known hash is taken as the tx's hash (what the caller vouches for), not recomputed.
  const fake = new Uint8Array(32).fill(9);
  const withFake = merkleRoot(txs.map((x, i) => (i === 7 ? fake : sha256(x))));
  t.equal(hex(dataHash(txs, (x) => (x === txs[7] ? fake : undefined))), hex(withFake), 'the known hash is the leaf');
  t.equal(hex(dataHash([], () => fake)), EMPTY_HASH, 'no txs: the empty hash');
});

t.test('last results hash (types/results_test.go TestABCIResults)', async (t) => {
  const a = { code: 0, data: new Uint8Array(0), gasWanted: 0n, gasUsed: 0n };
  t.equal(encodeDeterministicTxResult(a).length, 0, 'first one is empty');
  const c = { code: 0, data: enc('one'), gasWanted: 0n, gasUsed: 0n };
  const d = { code: 14, data: new Uint8Array(0), gasWanted: 0n, gasUsed: 0n };
  const e = { code: 14, data: enc('foo'), gasWanted: 0n, gasUsed: 0n };
  const f = { code: 14, data: enc('bar'), gasWanted: 0n, gasUsed: 0n };
  const results = [a, c, d, e, f];
  const encoded = results.map((r) => hex(encodeDeterministicTxResult(r)));
  t.equal(new Set(encoded).size, encoded.length, 'each result serializes differently');
  t.equal(encoded[4], '080E1203626172', 'code 14 data "bar": 1 code, 2 data');
  t.equal(hex(encodeDeterministicTxResult({ code: 1, data: new Uint8Array(0), gasWanted: 5n, gasUsed: 3n })), '080128053003', 'gas_wanted is field 5 (0x28), gas_used field 6 (0x30)');
  t.equal(hex(lastResultsHash(results)), hex(merkleRoot(results.map(encodeDeterministicTxResult))));
  t.equal(hex(lastResultsHash([])), EMPTY_HASH, 'no txs gives the empty hash (real blocks above)');
});

t.test('evidence hash strips the Evidence oneof wrapper', async (t) => {
  t.equal(hex(evidenceHash([])), EMPTY_HASH);
  const inner = enc('duplicate-vote-evidence-proto');
  const wrapped = Uint8Array.from([0x0a, inner.length, ...inner]);
  t.equal(hex(evidenceInnerBytes(wrapped)), hex(inner));
  t.equal(hex(evidenceItemHash(wrapped)), hex(sha256(inner)));
  t.equal(hex(evidenceHash([wrapped])), hex(merkleRoot([inner])));
  t.throws(() => evidenceInnerBytes(Uint8Array.of(0x1a, 0x00)), 'no known evidence type');
});
