/** The evidence pool's repository (src/store/evidencestore.ts) on a real LMDB environment. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { Storage } from '../../src/store/storage.js';

const hash = (b: number) => new Uint8Array(32).fill(b);

t.test('pending lists oldest height first; commit moves an item; the key carries height and hash', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  const storage = Storage.open({ file: path.join(dir, 'chaind.mdb'), noSync: true });
  t.teardown(async () => {
    await storage.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const ev = storage.evidence;
  t.equal(ev.pendingCount(), 0);
  ev.transactionSync(() => {
    ev.addPending(300n, hash(1), Uint8Array.of(3));
    ev.addPending(2n, hash(9), Uint8Array.of(2));
    // 256 sorts after 2 and before 300 only if heights are big-endian, not decimal text.
    ev.addPending(256n, hash(5), Uint8Array.of(25));
  });
  t.equal(ev.pendingCount(), 3);
  t.same(
    [...ev.pending()].map((p) => [p.height, p.hash[0], p.item[0]]),
    [
      [2n, 9, 2],
      [256n, 5, 25],
      [300n, 1, 3],
    ],
  );
  t.ok(ev.isPending(256n, hash(5)));
  t.notOk(ev.isPending(255n, hash(5)), 'the height is part of the key');
  t.notOk(ev.isCommitted(256n, hash(5)));
  ev.transactionSync(() => ev.markCommitted(256n, hash(5)));
  t.notOk(ev.isPending(256n, hash(5)));
  t.ok(ev.isCommitted(256n, hash(5)));
  t.equal(ev.pendingCount(), 2, 'committed evidence is not pending');
  ev.transactionSync(() => ev.removePending(2n, hash(9)));
  t.same([...ev.pending()].map((p) => p.height), [300n]);
});
