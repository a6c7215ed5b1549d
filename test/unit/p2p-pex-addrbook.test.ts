/**
 * The PEX address book (src/p2p/pex/addrbook.ts) and the address rules it applies
 * (src/p2p/pex/netaddress.ts): add / refuse with a reason, first address per ID kept, attempts,
 * good (old) and bad (banned, reinstated when the ban ends), selections, strict routability, our
 * own address and private IDs, and the JSON file (round trip, CometBFT's format read, corrupt file,
 * periodic save and save on stop).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { AddrBook, AddrBookError, DEFAULT_BAN_MS } from '../../src/p2p/pex/addrbook.js';
import { isRoutable, netAddressError, netAddressFromListen } from '../../src/p2p/pex/netaddress.js';
import { waitFor } from '../helpers/p2p.js';

const id = (n: number) => n.toString(16).padStart(40, '0');
const addr = (n: number, ip = `8.8.${n >> 8}.${n & 255}`, port = 26656) => ({ id: id(n), ip, port });
const SRC = addr(9999, '9.9.9.9');

function tmpDir(t: Test): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function codeOf(fn: () => void): string | null {
  try {
    fn();
    return null;
  } catch (e) {
    return e instanceof AddrBookError ? e.code : `not an AddrBookError: ${(e as Error).message}`;
  }
}

t.test('address rules (netaddress.go)', async (t) => {
  t.equal(netAddressError(addr(1)), null, 'a public IPv4 address is valid');
  t.match(netAddressError({ ...addr(1), id: 'xyz' }), /peer ID/);
  t.match(netAddressError(addr(1, '0.0.0.0')), /invalid IP/, 'unspecified');
  t.match(netAddressError(addr(1, '255.255.255.255')), /invalid IP/, 'broadcast');
  t.match(netAddressError(addr(1, '2001:db8::1')), /invalid IP/, 'RFC3849 documentation');
  t.match(netAddressError(addr(1, 'example.com')), /invalid IP/, 'a host name is no IP');
  t.match(netAddressError(addr(1, '1.2.3.4', 0)), /port/, 'port 0 cannot be dialled');
  t.ok(isRoutable(addr(1)));
  t.ok(isRoutable(addr(1, '2a00:1450::1')), 'public IPv6');
  for (const ip of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.1.1', '::1', 'fe80::1', 'fd00::1']) {
    t.notOk(isRoutable(addr(1, ip)), `${ip} is not routable`);
  }
  t.same(netAddressFromListen(id(1).toUpperCase(), 'tcp://127.0.0.2:26656'), { id: id(1), ip: '127.0.0.2', port: 26656 });
  t.equal(netAddressFromListen(id(1), 'tcp://0.0.0.0:26656'), null, 'an unspecified listen address is no address');
});

t.test('add, refuse, first address kept', async (t) => {
  const book = new AddrBook({ file: null, strict: true });
  book.addOurAddress(addr(1));
  book.addPrivateIds([id(2)]);
  book.addAddress(addr(3), SRC);
  t.ok(book.has(id(3)));
  t.equal(book.size(), 1);
  t.equal(codeOf(() => book.addAddress(addr(1), SRC)), 'SELF', 'our own address');
  t.equal(codeOf(() => book.addAddress(addr(1, '8.8.4.4'), SRC)), 'SELF', 'our own ID at another address');
  t.equal(codeOf(() => book.addAddress(addr(2), SRC)), 'PRIVATE', 'a private peer');
  t.equal(codeOf(() => book.addAddress(addr(4), addr(2))), 'PRIVATE_SRC', 'learnt from a private peer');
  t.equal(codeOf(() => book.addAddress(addr(5, '127.0.0.1'), SRC)), 'NON_ROUTABLE', 'strict: loopback refused');
  t.equal(codeOf(() => book.addAddress(addr(5, '192.168.0.5'), SRC)), 'NON_ROUTABLE', 'strict: private range refused');
  t.equal(codeOf(() => book.addAddress(addr(5, '0.0.0.0'), SRC)), 'INVALID');
  t.equal(book.size(), 1, 'nothing refused was added');
  book.addAddress(addr(3, '8.8.8.8'), SRC);
  t.equal(book.get(id(3))!.addr.ip, addr(3).ip, 'a known ID keeps its first address');

  const loose = new AddrBook({ file: null, strict: false });
  loose.addAddress(addr(5, '127.0.0.1'), SRC);
  loose.addAddress(addr(6, '10.0.0.6'), SRC);
  t.equal(loose.size(), 2, 'not strict: loopback and private ranges accepted');

  book.addPrivateIds([id(3)]);
  t.notOk(book.has(id(3)), 'an ID made private leaves the book');
});

t.test('attempts, good, bad, reinstated', async (t) => {
  let now = 1_700_000_000_000;
  const book = new AddrBook({ file: null, strict: false, now: () => now });
  book.addAddress(addr(1), SRC);
  book.addAddress(addr(2), SRC);
  book.markAttempt(id(1));
  book.markAttempt(id(1));
  t.equal(book.get(id(1))!.attempts, 2);
  t.notOk(book.isGood(id(1)));
  t.ok(book.pickAddress(0), 'bias 0 with no old address still picks a new one (both weights are 0)');
  now += 1000;
  book.markGood(id(1));
  const ka = book.get(id(1))!;
  t.equal(ka.attempts, 0, 'a success resets the attempts');
  t.equal(ka.lastSuccess, now);
  t.ok(book.isGood(id(1)), 'moved to old');
  for (let i = 0; i < 20; i++) t.equal(book.pickAddress(0)!.id, id(1), 'bias 0 picks the old address');
  for (let i = 0; i < 20; i++) t.equal(book.pickAddress(100)!.id, id(2), 'bias 100 picks the new address');

  book.markBad(id(2), 60_000);
  t.notOk(book.has(id(2)), 'a bad address leaves the book');
  t.ok(book.isBanned(id(2)));
  t.equal(codeOf(() => book.addAddress(addr(2), SRC)), 'BANNED', 'and cannot come back while banned');
  book.reinstateBadPeers();
  t.ok(book.isBanned(id(2)), 'not before the ban ends');
  now += 60_001;
  book.reinstateBadPeers();
  t.notOk(book.isBanned(id(2)));
  t.ok(book.has(id(2)), 'reinstated when the ban ended');
  t.notOk(book.isGood(id(2)), 'as a new address');
  book.markBad(id(77));
  t.notOk(book.isBanned(id(77)), 'an ID not in the book is not banned (as in CometBFT)');
});

t.test('selections', async (t) => {
  const book = new AddrBook({ file: null, strict: false });
  t.same(book.getSelection(), [], 'an empty book selects nothing');
  for (let i = 1; i <= 10; i++) book.addAddress(addr(i), SRC);
  t.equal(book.getSelection().length, 10, 'under 32 addresses: all of them');
  for (let i = 11; i <= 1200; i++) book.addAddress(addr(i), SRC);
  const sel = book.getSelection();
  t.equal(sel.length, 250, '23 % of 1200 is 276: capped at 250');
  t.equal(new Set(sel.map((a) => a.id)).size, 250, 'no address twice');
  t.notOk(book.needMoreAddrs(), '1200 addresses are enough');
  for (let i = 1; i <= 5; i++) book.markGood(id(i));
  const biased = book.getSelectionWithBias(30);
  t.equal(biased.length, 250);
  t.ok(biased.slice(-5).every((a) => book.isGood(a.id)), 'old addresses fill the end of a biased selection');
});

t.test('file: round trip, CometBFT format, corrupt', async (t) => {
  const dir = tmpDir(t);
  const file = path.join(dir, 'config', 'addrbook.json');
  const book = new AddrBook({ file, strict: false });
  book.load();
  t.equal(book.size(), 0, 'no file: an empty book');
  book.addAddress(addr(1), SRC);
  book.addAddress(addr(2, '10.0.0.2', 26000), SRC);
  book.addAddress(addr(3, '2a00:1450::3'), SRC);
  book.markAttempt(id(2));
  book.markGood(id(1));
  book.markBad(id(3));
  book.save();
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  t.type(j.key, 'string');
  t.equal(j.addrs.length, 2);
  const e1 = j.addrs.find((a: any) => a.addr.id === id(1));
  t.equal(e1.bucket_type, 2, 'old = bucket type 2');
  t.match(e1.last_success, /^\d{4}-\d\d-\d\dT/, 'Go time format');
  t.equal(j.addrs.find((a: any) => a.addr.id === id(2)).last_success, '0001-01-01T00:00:00Z', "Go's zero time");
  t.equal(j.bad_peers.length, 1);

  const again = new AddrBook({ file, strict: false });
  again.start();
  t.teardown(() => again.stop());
  t.equal(again.size(), 2);
  t.ok(again.isGood(id(1)), 'good stays good');
  t.same(again.get(id(2))!.addr, { id: id(2), ip: '10.0.0.2', port: 26000 });
  t.equal(again.get(id(2))!.attempts, 1, 'attempts kept');
  t.equal(again.get(id(1))!.lastSuccess, book.get(id(1))!.lastSuccess, 'last success kept');
  t.ok(again.isBanned(id(3)), 'a ban survives a restart');
  t.equal(again.get(id(3))!.lastBanTime, book.get(id(3))!.lastBanTime);

  // Strict and private IDs apply to a loaded file too: a loopback entry a non-strict node wrote.
  const cometFile = path.join(dir, 'comet.json');
  fs.writeFileSync(
    cometFile,
    JSON.stringify({
      key: 'abc',
      addrs: [
        { addr: { id: id(7), ip: '8.8.8.7', port: 26656 }, src: SRC, buckets: [12], attempts: 0, bucket_type: 1, last_attempt: '2024-01-02T03:04:05.123456789Z', last_success: '0001-01-01T00:00:00Z', last_ban_time: '0001-01-01T00:00:00Z' },
        { addr: { id: id(8), ip: '8.8.8.8', port: 26656 }, src: SRC, buckets: [3], attempts: 0, bucket_type: 2, last_attempt: '2024-01-02T03:04:05Z', last_success: '2024-01-02T03:04:05Z', last_ban_time: '0001-01-01T00:00:00Z' },
        { addr: { id: 'nothex', ip: '8.8.8.9', port: 26656 }, src: SRC, buckets: [3], attempts: 0, bucket_type: 1 },
        { addr: { id: id(9), ip: '8.8.8.9', port: 26656 }, src: SRC, buckets: [3], attempts: 0, bucket_type: 1 },
      ],
    }),
  );
  const comet = new AddrBook({ file: cometFile, strict: true });
  comet.addPrivateIds([id(9)]);
  comet.load();
  t.equal(comet.size(), 2, "CometBFT's file read; the invalid and the private entry skipped");
  t.ok(comet.isGood(id(8)));
  t.equal(comet.get(id(7))!.lastAttempt, Date.parse('2024-01-02T03:04:05.123Z'));

  const bad = path.join(dir, 'bad.json');
  fs.writeFileSync(bad, '{"key": ');
  t.equal(codeOf(() => new AddrBook({ file: bad, strict: true }).load()), 'CORRUPT', 'a corrupt file is an error');
});

t.test('periodic save and save on stop', async (t) => {
  const dir = tmpDir(t);
  const file = path.join(dir, 'addrbook.json');
  const book = new AddrBook({ file, strict: false, saveIntervalMs: 50 });
  book.start();
  book.addAddress(addr(1), SRC);
  await waitFor(() => fs.existsSync(file) && JSON.parse(fs.readFileSync(file, 'utf8')).addrs.length === 1, 20_000, 'periodic save');
  book.addAddress(addr(2), SRC);
  book.stop();
  t.equal(JSON.parse(fs.readFileSync(file, 'utf8')).addrs.length, 2, 'stop saves');
  t.equal(DEFAULT_BAN_MS, 24 * 3600_000, "CometBFT's ban time");
});
