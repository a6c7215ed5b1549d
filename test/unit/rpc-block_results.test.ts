/**
 * Node RPC `block_results` (cometbft: rpc/core/blocks.go BlockResults,
 * rpc/core/types/responses.go ResultBlockResults): the stored FinalizeBlock response of a height
 * (default: the store height): `txs_results` as jsonpb ExecTxResults, `finalize_block_events`,
 * `validator_updates` (the `Sum`-wrapped ABCI key, cometbft/cometbft:crypto/ed25519/ed25519.go), `consensus_param_updates`
 * (proto params, omitempty), `app_hash` base64; empty lists are null. `could not find results for
 * height #H` when none is stored. Cacheable only with a height. Over URI, JSON-RPC and websocket,
 * shapes checked against the `block_results_at_height_10` and `tx_search_with_prove` fixtures.
 */
import t from 'tap';
import { waitHeight } from '../helpers/inproc.js';
import { createHash } from 'node:crypto';
import type { ResponseFinalizeBlock } from '../../src/abci/types.js';
import { defaultConsensusParams } from '../../src/types/params.js';
import { FIXTURES, hexOf, b64, startNode, ALICE, sendTx, growTo, ok3, err3, shapeDiff } from '../helpers/rpc3.js';

t.test('block_results', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);
  await Promise.all([sendTx(tn), sendTx(tn)]);
  const H = await growTo(tn, 5n);
  const blocks = tn.ctx.storage.blocks;
  const states = tn.ctx.storage.state;
  let T = 1n;
  while (blocks.loadBlock(T)!.data.txs.length === 0) T++;
  let E = 1n;
  while (blocks.loadBlock(E)!.data.txs.length !== 0) E++;

  await t.test('an empty block: null lists, the app hash in base64', async (t) => {
    const r = await ok3(t, tn, 'block_results', { height: String(E) }, { height: String(E) }, true);
    t.same(shapeDiff(r, FIXTURES['block_results_at_height_10'].result, { mayFill: ['$.app_hash'] }), [], 'fixture shape');
    t.same(
      [r.height, r.txs_results, r.finalize_block_events, r.validator_updates, r.consensus_param_updates],
      [String(E), null, null, null, null],
    );
    const next = blocks.loadBlockMeta(E + 1n)!.header;
    t.equal(Buffer.from(r.app_hash, 'base64').toString('hex').toUpperCase(), hexOf(next.appHash), 'app_hash is what block h+1 carries');
  });

  await t.test('a block with txs: jsonpb ExecTxResults', async (t) => {
    const r = await ok3(t, tn, 'block_results', { height: String(T) }, { height: String(T) }, true);
    const block = blocks.loadBlock(T)!;
    t.equal(r.txs_results.length, block.data.txs.length);
    const want = FIXTURES['tx_search_with_prove'].result.txs[0].tx_result;
    for (const [i, tx] of block.data.txs.entries()) {
      const res = r.txs_results[i];
      t.same(shapeDiff(res, want, { mayFill: ['$.data'] }), [], `tx ${i}: ExecTxResult shape as the fixture`);
      t.same(Object.keys(res), ['code', 'data', 'log', 'info', 'gas_wanted', 'gas_used', 'events', 'codespace'], 'every jsonpb field, proto order');
      t.same([res.code, res.gas_wanted, typeof res.gas_used], [0, '200000', 'string']);
      const indexed = tn.ctx.txIndexer!.getTx(createHash('sha256').update(tx).digest())!;
      t.equal(res.gas_used, indexed.result.gasUsed.toString(), 'the same result the indexer holds');
      const transfer = res.events.find((e: any) => e.type === 'transfer');
      t.same(transfer.attributes.find((a: any) => a.key === 'sender'), { key: 'sender', value: ALICE!.bech32, index: true });
    }
    t.equal(r.finalize_block_events, null, 'the bank app emits no block events');
    const latest = await ok3(t, tn, 'block_results', {}, {}, false);
    t.equal(latest.height, String(H), 'latest by default, not cacheable');
  });

  await t.test('events, validator updates and param updates as CometBFT renders them', async (t) => {
    const s = states as unknown as { loadFinalizeBlockResponse: (h: bigint) => ResponseFinalizeBlock | null };
    const stored = s.loadFinalizeBlockResponse.bind(states);
    const params = defaultConsensusParams();
    params.block.maxGas = 0n;
    params.version.app = 3n;
    const resp: ResponseFinalizeBlock = {
      events: [
        { type: 'mint', attributes: [{ key: 'amount', value: '5', index: true }, { key: 'note', value: '', index: false }] },
        { type: 'bare', attributes: [] },
        { type: '', attributes: [{ key: 'k', value: 'v', index: false }] },
      ],
      txResults: [],
      validatorUpdates: [
        { pubKey: { type: 'ed25519', bytes: new Uint8Array(32).fill(7) }, power: 15n },
        { pubKey: { type: 'ed25519', bytes: new Uint8Array(32).fill(8) }, power: 0n },
      ],
      consensusParamUpdates: params,
      appHash: new Uint8Array([1, 2, 3]),
    };
    s.loadFinalizeBlockResponse = (h) => (h === 2n ? resp : stored(h));
    t.teardown(() => void delete (s as { loadFinalizeBlockResponse?: unknown }).loadFinalizeBlockResponse);
    const r = await ok3(t, tn, 'block_results', { height: '2' }, { height: '2' }, true);
    t.same(r.finalize_block_events, [
      { type: 'mint', attributes: [{ key: 'amount', value: '5', index: true }, { key: 'note', value: '', index: false }] },
      { type: 'bare' },
      { attributes: [{ key: 'k', value: 'v', index: false }] },
    ], 'cmtjson omitempty on type and attributes');
    const sum = tn.ctx.names.abciPubKeySumType('ed25519');
    t.equal(sum, 'consensus.crypto.PublicKey_Ed25519');
    t.same(r.validator_updates, [
      { pub_key: { Sum: { type: sum, value: { ed25519: b64(new Uint8Array(32).fill(7)) } } }, power: '15' },
      { pub_key: { Sum: { type: sum, value: { ed25519: b64(new Uint8Array(32).fill(8)) } } } },
    ], 'Sum-wrapped keys; power 0 omitted');
    t.same(r.consensus_param_updates, {
      block: { max_bytes: '22020096' },
      evidence: { max_age_num_blocks: '100000', max_age_duration: '172800000000000', max_bytes: '1048576' },
      validator: { pub_key_types: ['ed25519'] },
      version: { app: '3' },
      abci: {},
    }, 'proto params: zero values omitted, max_age_duration kept');
    t.equal(r.app_hash, 'AQID');
  });

  await t.test('no stored results', async (t) => {
    const s = states as unknown as { loadFinalizeBlockResponse: (h: bigint) => ResponseFinalizeBlock | null };
    s.loadFinalizeBlockResponse = () => null;
    t.teardown(() => void delete (s as { loadFinalizeBlockResponse?: unknown }).loadFinalizeBlockResponse);
    await err3(t, tn, 'block_results', { height: '2' }, { height: '2' }, 'could not find results for height #2');
  });

  await t.test('height errors', async (t) => {
    await err3(t, tn, 'block_results', { height: '0' }, { height: '0' }, 'height must be greater than 0, but got 0');
    const over = String(H + 1n);
    await err3(t, tn, 'block_results', { height: over }, { height: over }, `height ${over} must be less than or equal to the current blockchain height ${H}`);
    const b = blocks as unknown as { base: () => bigint };
    b.base = () => 3n;
    t.teardown(() => void delete (b as { base?: unknown }).base);
    await err3(t, tn, 'block_results', { height: '2' }, { height: '2' }, 'height 2 is not available, lowest height is 3');
  });
});

