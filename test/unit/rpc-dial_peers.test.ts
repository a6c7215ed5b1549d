/**
 * Node RPC `dial_peers` (cometbft: rpc/core/net.go UnsafeDialPeers and getIDs; p2p/switch.go
 * AddPersistentPeers, AddPrivatePeerIDs, AddUnconditionalPeerIDs, DialPeersAsync;
 * p2p/netaddress.go). Served only with `[rpc] unsafe = true`. The checks run in CometBFT's order:
 * `no peers provided`; every peer must contain one `@` (`address (X) does not contain ID`);
 * `persistent` checks the addresses; `private` and `unconditional` check the ids (`wrong ID #i:
 * …`, where a `tcp://` prefix is part of the id); then the dial's address checks. Success is
 * `Dialing peers in progress. See /net_info for details`; chaind has no P2P transport, so the
 * dials fail in the background and are logged, as CometBFT logs failed dials.
 */
import t from 'tap';
import { startTestNode } from '../helpers/inproc.js';
import { viaPost, viaWs, nodeOk3 as ok3, nodeErr3 as err3 } from '../helpers/rpc3.js';

import { ID, arrayArg, unsafeNode, BAD_ADDRESSES, GOOD_ADDRESSES } from '../helpers/dial.js';

const DIALING = { log: 'Dialing peers in progress. See /net_info for details' };
type Flags = { persistent?: boolean; unconditional?: boolean; private?: boolean };
const uriArgs = (peers: string[], f: Flags = {}) =>
  [arrayArg('peers', peers), ...Object.entries(f).map(([k, v]) => `${k}=${v}`)].join('&');

t.test('dial_peers with [rpc] unsafe = true', async (t) => {
  const tn = await unsafeNode();
  t.teardown(() => tn.close());

  await t.test('valid peers, with and without the flags', async (t) => {
    const all: Flags = { persistent: true, unconditional: true, private: true };
    const r = await ok3(t, tn, 'dial_peers', uriArgs(GOOD_ADDRESSES.slice(0, 1), all), { peers: GOOD_ADDRESSES.slice(0, 1), ...all });
    t.same([r.uri, r.post, r.ws], [DIALING, DIALING, DIALING]);
    t.same(r.cache, [null, null], 'not cacheable');
    const plain = await ok3(t, tn, 'dial_peers', uriArgs(GOOD_ADDRESSES), { peers: GOOD_ADDRESSES });
    t.same([plain.uri, plain.post, plain.ws], [DIALING, DIALING, DIALING]);
    const pos = await viaWs(tn, 'dial_peers', [GOOD_ADDRESSES, true, false, false]);
    t.same(pos.result, DIALING, 'positional params');
  });

  await t.test('no peers', async (t) => {
    await err3(t, tn, 'dial_peers', '', {}, 'no peers provided');
    await err3(t, tn, 'dial_peers', uriArgs([], { persistent: true }), { peers: [], persistent: true }, 'no peers provided');
  });

  await t.test('getIDs comes first: a peer without exactly one @', async (t) => {
    const list = [`${ID}@1.2.3.4:x`, 'nohost'];
    await err3(t, tn, 'dial_peers', uriArgs(list), { peers: list }, 'address (nohost) does not contain ID');
  });

  await t.test("each bad address gives CometBFT's error (from the dial, or from persistent first)", async (t) => {
    for (const [addr, text] of BAD_ADDRESSES) {
      if (addr.split('@').length !== 2) continue; // getIDs' error, covered above
      await err3(t, tn, 'dial_peers', uriArgs([addr]), { peers: [addr] }, text);
      const p = await viaPost(tn, 'dial_peers', { peers: [addr], persistent: true });
      t.equal(p.body.error?.data, text, `persistent ${addr}`);
    }
  });

  await t.test('private and unconditional check the ids as getIDs split them', async (t) => {
    // `tcp://` is stripped for the address but is part of the id getIDs returns.
    const withProto = [GOOD_ADDRESSES[0]!, `tcp://${ID}@1.2.3.4:26656`];
    const viaDial = await viaPost(tn, 'dial_peers', { peers: withProto });
    t.same(viaDial.body.result, DIALING, 'fine for the dial itself');
    for (const flag of ['private', 'unconditional'] as const) {
      await err3(t, tn, 'dial_peers', uriArgs(withProto, { [flag]: true }), { peers: withProto, [flag]: true }, "wrong ID #1: encoding/hex: invalid byte: U+0074 't'");
      const short = ['abcd@1.2.3.4:1'];
      await err3(t, tn, 'dial_peers', uriArgs(short, { [flag]: true }), { peers: short, [flag]: true }, 'wrong ID #0: invalid hex length - got 2, expected 20');
    }
    // persistent is checked before private: its address error comes first.
    const both = [`zz@1.2.3.4:1`];
    await err3(t, tn, 'dial_peers', uriArgs(both, { persistent: true, private: true }), { peers: both, persistent: true, private: true }, "invalid address (zz@1.2.3.4:1): encoding/hex: invalid byte: U+007A 'z'");
  });

  await t.test('flag arguments must be booleans', async (t) => {
    const p = await viaPost(tn, 'dial_peers', { peers: GOOD_ADDRESSES, persistent: 'yes' });
    t.same(p.body.error, { code: -32602, message: 'Invalid params', data: 'error converting json params to arguments: json: cannot unmarshal string into Go value of type bool' });
  });
});

t.test('dial_peers is not served by default', async (t) => {
  const tn = await startTestNode({ timeoutCommit: '60s' });
  t.teardown(() => tn.close());
  const u = await fetch(`${tn.base}/dial_peers?${uriArgs(GOOD_ADDRESSES)}`);
  t.same([u.status, await u.text()], [404, '404 page not found\n'], 'URI: plain 404');
  const p = await viaPost(tn, 'dial_peers', { peers: GOOD_ADDRESSES });
  t.same(p.body.error, { code: -32601, message: 'Method not found' }, 'JSON-RPC: -32601');
  const w = await viaWs(tn, 'dial_peers', { peers: GOOD_ADDRESSES });
  t.same(w.error, { code: -32601, message: 'Method not found' }, 'websocket: -32601');
});
