/**
 * Unmodified CosmJS (`Comet38Client` from @cosmjs/tendermint-rpc) against a real in-process node
 * with `[compat] upstream-names = true`, the setting that lets upstream clients and explorers work
 * unchanged (ARCHITECTURE.md, Names). Covers what CosmJS itself decodes: status, block,
 * blockResults, blockchain, validators, commit, txSearch, blockSearch, broadcastTxSync/Commit and
 * subscribeNewBlock over its websocket client.
 */
import { Comet38Client, WebsocketClient } from '@cosmjs/tendermint-rpc';
import t from 'tap';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { startTestNode, waitHeight } from '../helpers/inproc.js';

const enc = new TextEncoder();

function sendTx(from: string, to: string, amount: string, memo: string): Uint8Array {
  return enc.encode(
    JSON.stringify({
      body: {
        messages: [{ '@type': '/chain.bank.v1beta1.MsgSend', from_address: from, to_address: to, amount: [{ denom: 'achain', amount }] }],
        memo,
        timeout_height: '0',
      },
      auth_info: { fee: { amount: [], gas_limit: '200000', payer: '', granter: '' } },
      signatures: [],
    }),
  );
}

t.test('CosmJS Comet38Client against chaind with upstream names', async (t) => {
  const tn = await startTestNode({ flags: { 'compat.upstream-names': true }, txDecoder: 'json' });
  t.teardown(() => tn.close());
  await waitHeight(tn, 3n);
  const client = await Comet38Client.connect(tn.base);

  const status = await client.status();
  t.equal(status.nodeInfo.network, 'inproc-1');
  t.ok(status.syncInfo.latestBlockHeight >= 3);
  t.equal(status.validatorInfo.pubkey?.algorithm, 'ed25519', 'tendermint/PubKeyEd25519 decoded by CosmJS');
  t.equal(status.validatorInfo.votingPower, 10n);

  const block = await client.block(2);
  t.equal(block.block.header.height, 2);
  t.equal(block.block.header.chainId, 'inproc-1');
  t.equal(block.blockId.hash.length, 32);
  const block1 = await client.block(1);
  t.same(block.block.header.lastBlockId?.hash, block1.blockId.hash, 'block 2 points at block 1');

  const results = await client.blockResults(2);
  t.equal(results.height, 2);
  t.same(results.results, []);

  const chain = await client.blockchain(1, 3);
  t.equal(chain.blockMetas.length, 3);
  t.equal(chain.blockMetas[0]!.header.height, 3, 'block metas are in descending order');

  const vals = await client.validators({ height: 2 });
  t.equal(vals.total, 1);
  t.equal(vals.validators[0]!.votingPower, 10n);

  const commit = await client.commit(2);
  t.equal(commit.header.height, 2);
  t.equal(commit.commit.signatures.length, 1);
  t.equal(commit.canonical, true);

  // Transactions: sync, then commit, then find them again.
  const accts = devAccounts();
  const from = accts[0]!.bech32;
  const to = accts[1]!.bech32;
  const sync = await client.broadcastTxSync({ tx: sendTx(from, to, '5', 'sync') });
  t.equal(sync.code, 0, `broadcastTxSync accepted: ${sync.log}`);
  t.equal(sync.hash.length, 32);
  const committed = await client.broadcastTxCommit({ tx: sendTx(from, to, '7', 'commit') });
  t.equal(committed.checkTx.code, 0, 'CheckTx passed');
  t.equal(committed.txResult?.code, 0, `DeliverTx passed: ${committed.txResult?.log}`);
  t.ok(committed.height > 0, 'included at a height');

  const found = await client.tx({ hash: committed.hash, prove: true });
  t.equal(found.height, committed.height);
  t.ok(found.proof, 'proof present');
  const search = await client.txSearch({ query: `tx.height=${committed.height}` });
  t.ok(search.totalCount >= 1);
  t.ok(search.txs.some((x) => Buffer.from(x.hash).equals(Buffer.from(committed.hash))));
  const bsearch = await client.blockSearch({ query: `block.height <= 3` });
  t.equal(bsearch.totalCount, 3);

  // Subscriptions over CosmJS's own websocket client.
  // CosmJS appends /websocket to the URL itself.
  const ws = Comet38Client.create(new WebsocketClient(`ws://127.0.0.1:${tn.rpcPort}`));
  const heights: number[] = await new Promise((resolve, reject) => {
    const got: number[] = [];
    const timer = setTimeout(() => reject(new Error('no NewBlock events')), 15_000);
    const sub = ws.subscribeNewBlock().subscribe({
      next: (ev) => {
        got.push(ev.header.height);
        if (got.length === 3) {
          clearTimeout(timer);
          sub.unsubscribe();
          resolve(got);
        }
      },
      error: reject,
    });
  });
  t.same(heights, [heights[0]!, heights[0]! + 1, heights[0]! + 2], 'consecutive heights in order');
  // Disconnect, and let the close handshake finish before the node stops: the `ws` library under
  // CosmJS otherwise waits its 30 s close timeout for a server that is gone.
  ws.disconnect();
  client.disconnect();
  await new Promise((r) => setTimeout(r, 300));
});
