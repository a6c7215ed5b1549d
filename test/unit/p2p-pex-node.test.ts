/**
 * PEX in the real node (src/node.ts): with `[p2p] pex = true` the switch advertises 0x00 and an
 * address given to `dial_seeds` lands in the address book, which is saved to
 * `[p2p] addr_book_file` on stop; with `pex = false` 0x00 is not advertised and no book is written.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startTestNode } from '../helpers/inproc.js';

const SEED_ID = 'ab'.repeat(20);

t.test('pex = true: 0x00 advertised, dial_seeds recorded, book saved on stop', async (t) => {
  const tn = await startTestNode({ flags: { 'rpc.unsafe': true, 'p2p.addr_book_strict': false } });
  t.teardown(() => tn.close());
  t.ok(tn.ctx.p2p!.nodeInfo.channels.includes(0x00), 'PEX channel advertised');
  // Port 1 on loopback: the dial fails; the address is recorded all the same (DialPeersAsync).
  const res = await fetch(`${tn.base}/dial_seeds?seeds=["${SEED_ID}@127.0.0.1:1"]`);
  const body = (await res.json()) as { result?: { log: string } };
  t.match(body.result?.log, /Dialing seeds in progress/);
  await tn.node.close();
  const file = path.join(tn.home, 'config', 'addrbook.json');
  t.ok(fs.existsSync(file), 'config/addrbook.json written');
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  const e = j.addrs.find((a: { addr: { id: string } }) => a.addr.id === SEED_ID);
  t.same(e?.addr, { id: SEED_ID, ip: '127.0.0.1', port: 1 }, 'the dialled seed is in the book');
  t.notOk(
    j.addrs.some((a: { addr: { id: string } }) => a.addr.id === tn.ctx.nodeId),
    'our own ID is not',
  );
});

t.test('pex = false: 0x00 not advertised, no book', async (t) => {
  const tn = await startTestNode({ flags: { 'p2p.pex': false } });
  t.teardown(() => tn.close());
  t.notOk(tn.ctx.p2p!.nodeInfo.channels.includes(0x00), 'PEX channel not advertised');
  t.ok(tn.ctx.p2p!.nodeInfo.channels.includes(0x20), 'the other reactors are');
  await tn.node.close();
  t.notOk(fs.existsSync(path.join(tn.home, 'config', 'addrbook.json')), 'no address book written');
});
