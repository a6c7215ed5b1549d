/**
 * Node RPC `dial_seeds` (cometbft: rpc/core/net.go UnsafeDialSeeds; p2p/switch.go DialPeersAsync;
 * p2p/netaddress.go). Served only with `[rpc] unsafe = true`. An empty list is `no seeds
 * provided`; each address is checked as NewNetAddressString does and the first error (other than
 * a failed host lookup) is returned; otherwise `Dialing seeds in progress. See /net_info for
 * details`. chaind has no P2P transport: like CometBFT, whose dials run in the background and only
 * log their failures, it answers so and logs that it cannot dial.
 */
import { nullLogger } from '../../src/log.js';
import type { NodeRpcContext } from '../../src/rpc/node/context.js';
import { netRoutes } from '../../src/rpc/node/methods/info-net.js';
import type { RouteContext } from '../../src/rpc/node/routes.js';
import t from 'tap';
import { startTestNode } from '../helpers/inproc.js';
import { viaPost, viaWs, nodeOk3 as ok3, nodeErr3 as err3 } from '../helpers/rpc3.js';

import { ID, arrayArg, unsafeNode, BAD_ADDRESSES, GOOD_ADDRESSES } from '../helpers/dial.js';

const DIALING = { log: 'Dialing seeds in progress. See /net_info for details' };

t.test('dial_seeds with [rpc] unsafe = true', async (t) => {
  const tn = await unsafeNode();
  t.teardown(() => tn.close());

  await t.test('valid addresses: dialing in progress', async (t) => {
    const r = await ok3(t, tn, 'dial_seeds', arrayArg('seeds', GOOD_ADDRESSES), { seeds: GOOD_ADDRESSES });
    t.same([r.uri, r.post, r.ws], [DIALING, DIALING, DIALING]);
    t.same(r.cache, [null, null], 'not cacheable');
    const pos = await viaPost(tn, 'dial_seeds', [[GOOD_ADDRESSES[0]]]);
    t.same(pos.body.result, DIALING, 'positional params');
    const net = await viaPost(tn, 'net_info', {});
    t.equal(net.body.result.n_peers, '0', 'no peer came of it');
  });

  await t.test('no seeds', async (t) => {
    await err3(t, tn, 'dial_seeds', '', {}, 'no seeds provided');
    await err3(t, tn, 'dial_seeds', arrayArg('seeds', []), { seeds: [] }, 'no seeds provided');
  });

  await t.test("each bad address gives CometBFT's error", async (t) => {
    for (const [addr, text] of BAD_ADDRESSES) await err3(t, tn, 'dial_seeds', arrayArg('seeds', [addr]), { seeds: [addr] }, text);
  });

  await t.test('the first bad address in order wins', async (t) => {
    const list = [GOOD_ADDRESSES[0]!, BAD_ADDRESSES[3]![0], BAD_ADDRESSES[0]![0]];
    await err3(t, tn, 'dial_seeds', arrayArg('seeds', list), { seeds: list }, BAD_ADDRESSES[3]![1]);
  });

  await t.test('seeds must be an array of strings', async (t) => {
    const p = await viaPost(tn, 'dial_seeds', { seeds: 'x' });
    t.same(p.body.error, { code: -32602, message: 'Invalid params', data: 'error converting json params to arguments: json: cannot unmarshal string into Go value of type []json.RawMessage' });
  });
});

t.test('dial_seeds is not served by default', async (t) => {
  const tn = await startTestNode({ timeoutCommit: '60s' });
  t.teardown(() => tn.close());
  const u = await fetch(`${tn.base}/dial_seeds?${arrayArg('seeds', GOOD_ADDRESSES)}`);
  t.same([u.status, await u.text()], [404, '404 page not found\n'], 'URI: plain 404');
  const p = await viaPost(tn, 'dial_seeds', { seeds: GOOD_ADDRESSES });
  t.same(p.body.error, { code: -32601, message: 'Method not found' }, 'JSON-RPC: -32601');
  const w = await viaWs(tn, 'dial_seeds', { seeds: GOOD_ADDRESSES });
  t.same(w.error, { code: -32601, message: 'Method not found' }, 'websocket: -32601');
});

t.test('dial_seeds: a host that does not resolve is skipped, as ErrNetAddressLookup is', async (t) => {
  // The route over a lookup that fails (no DNS in tests): the bad port behind it is never seen.
  const logged: string[] = [];
  const logger = { ...nullLogger, error: (m: string) => logged.push(m), info: () => {}, child: () => logger };
  const ctx = { logger, config: { p2p: { externalAddress: '' } } } as unknown as NodeRpcContext;
  const seen: string[] = [];
  const routes = netRoutes(ctx, { lookup: async (h) => (seen.push(h), Promise.reject(new Error('no such host'))) });
  const dial = routes.find((r) => r.name === 'dial_seeds')!.handler;
  const rc: RouteContext = { transport: 'jsonrpc', id: 1, remoteAddr: '127.0.0.1', ws: undefined, signal: new AbortController().signal };
  t.same(await dial({ seeds: [`${ID}@nowhere.invalid:x`] }, rc), DIALING);
  t.same(seen, ['nowhere.invalid'], 'looked up before the port was parsed');
  t.same(logged, ['Error dialing peer'], 'the dial failure is logged');
  // An IP literal needs no lookup: the port error stands.
  await t.rejects(Promise.resolve(dial({ seeds: [`${ID}@10.0.0.1:x`] }, rc)), { message: 'invalid address (x): strconv.ParseUint: parsing "x": invalid syntax' });
  t.same(seen, ['nowhere.invalid']);
});
