/**
 * Node RPC `tx` (cometbft: rpc/core/tx.go Tx, types/tx.go Txs.Proof): an indexed tx by hash
 * (`hash` is []byte: base64 in JSON-RPC, 0x-hex over URI) with its jsonpb ExecTxResult and, with
 * `prove`, its Merkle proof against the block's data hash; `tx (HASH) not found`,
 * `transaction hash cannot be empty`, `transaction indexing is disabled`. Always cacheable
 * (routes.go), the method's own errors included for JSON-RPC. Real bank transfers on a real node,
 * over URI, JSON-RPC and websocket; shapes checked against the `tx_search_with_prove` fixture.
 */
import t from 'tap';
import { waitHeight } from '../helpers/inproc.js';
import { createHash } from 'node:crypto';
import { leafHash, rootFromAunts } from '../../src/crypto/merkle.js';
import { FIXTURES, CACHED, hexOf, b64, startNode, sendTx, settle, viaUri, viaPost, ok3, err3, shapeDiff } from '../helpers/rpc3.js';

t.test('tx', async (t) => {
  const tn = await startNode();
  t.teardown(() => tn.close());
  await waitHeight(tn, 1n);
  const single = await sendTx(tn);
  await waitHeight(tn, 2n);
  // Three at once share a block, so their proofs have aunts.
  const trio = await Promise.all([sendTx(tn), sendTx(tn), sendTx(tn)]);
  await settle(tn);
  const sha = (b: Uint8Array) => createHash('sha256').update(b).digest();
  const fixtureTx = FIXTURES['tx_search_with_prove'].result.txs[0];
  const { proof: _fixtureProof, ...fixtureNoProof } = fixtureTx;
  const args = (hash: Uint8Array, prove?: boolean) => ({
    uri: { hash: `0x${hexOf(hash)}`, ...(prove === undefined ? {} : { prove: String(prove) }) },
    params: { hash: b64(hash), ...(prove === undefined ? {} : { prove }) },
  });

  await t.test('by hash, without proof', async (t) => {
    const hash = sha(single);
    const a = args(hash);
    const r = await ok3(t, tn, 'tx', a.uri, a.params, true);
    const rec = tn.ctx.txIndexer!.getTx(hash)!;
    t.same(Object.keys(r), ['hash', 'height', 'index', 'tx_result', 'tx'], 'no proof key without prove');
    t.same([r.hash, r.height, r.index, r.tx], [hexOf(hash), rec.height.toString(), rec.index, b64(single)]);
    t.same(shapeDiff(r, fixtureNoProof, { mayFill: ['$.tx_result.data'] }), [], 'fixture shape');
    t.same([r.tx_result.code, r.tx_result.gas_wanted], [0, '200000']);
    const block = tn.ctx.storage.blocks.loadBlock(rec.height)!;
    t.same(b64(block.data.txs[rec.index]!), r.tx, 'the tx is in the block at height/index');
    const results = await viaUri(tn, 'block_results', { height: r.height });
    t.same(r.tx_result, results.body.result.txs_results[r.index], 'tx_result = block_results entry');
    const off = await ok3(t, tn, 'tx', args(hash, false).uri, args(hash, false).params, true);
    t.same(off, r, 'prove=false');
  });

  await t.test('with proof', async (t) => {
    for (const tx of [single, ...trio]) {
      const hash = sha(tx);
      const a = args(hash, true);
      const r = await ok3(t, tn, 'tx', a.uri, a.params, true);
      t.same(shapeDiff(r, fixtureTx, { mayFill: ['$.tx_result.data'] }), [], 'fixture shape');
      const block = tn.ctx.storage.blocks.loadBlock(BigInt(r.height))!;
      const p = r.proof;
      t.equal(p.root_hash, hexOf(block.header.dataHash), 'root_hash is the block\'s data_hash');
      t.equal(p.data, b64(tx), 'data is the tx');
      t.same([p.proof.total, p.proof.index], [String(block.data.txs.length), String(r.index)]);
      t.equal(p.proof.leaf_hash, b64(leafHash(sha(tx))), 'leaf = sha256(0x00 || sha256(tx))');
      const root = rootFromAunts(Number(p.proof.index), Number(p.proof.total), Buffer.from(p.proof.leaf_hash, 'base64'), p.proof.aunts.map((x: string) => Buffer.from(x, 'base64')));
      t.equal(root && hexOf(root), p.root_hash, `the proof of tx ${r.index}/${p.proof.total} verifies`);
    }
    const multi = tn.ctx.storage.blocks.loadBlock(tn.ctx.txIndexer!.getTx(sha(trio[0]!))!.height)!;
    t.ok(multi.data.txs.length > 1, 'a block with several txs was covered');
  });

  await t.test('errors', async (t) => {
    const unknown = new Uint8Array(32).fill(0x5a);
    const a = args(unknown);
    await err3(t, tn, 'tx', a.uri, a.params, `tx (${hexOf(unknown)}) not found`);
    const again = await viaPost(tn, 'tx', a.params);
    t.equal(again.cache, CACHED, 'JSON-RPC keeps Cache-Control on the method\'s own error (CometBFT)');
    await err3(t, tn, 'tx', { hash: '0xABCD' }, { hash: 'q80=' }, 'tx (ABCD) not found');
    await err3(t, tn, 'tx', {}, {}, 'transaction hash cannot be empty');
    const ctx = tn.ctx as { txIndexer: unknown };
    const ix = ctx.txIndexer;
    ctx.txIndexer = null;
    t.teardown(() => void (ctx.txIndexer = ix));
    const b = args(sha(single));
    await err3(t, tn, 'tx', b.uri, b.params, 'transaction indexing is disabled');
  });
});
