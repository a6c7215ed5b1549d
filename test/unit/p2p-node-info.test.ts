/**
 * DefaultNodeInfo encoding against hand-built proto bytes, and the Validate()/CompatibleWith()
 * cases of cometbft/cometbft:p2p/node_info_test.go (TestNodeInfoValidate, TestNodeInfoCompatible).
 */
import t from 'tap';
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import {
  checkCompatible,
  decodeNodeInfo,
  encodeNodeInfo,
  hasChannel,
  parseListenAddr,
  validateNodeInfo,
  validateNodeInfoAsync,
  type NodeInfo,
} from '../../src/p2p/node-info.js';
import { makeNodeInfo } from '../helpers/p2p.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const ascii = (s: string) => Buffer.from(s, 'latin1').toString('hex');
const lenHex = (s: string) => s.length.toString(16).padStart(2, '0');
const str = (tag: string, s: string) => tag + lenHex(s) + ascii(s);

t.test('encoding matches hand-built proto bytes', async (t) => {
  const id = 'ab'.repeat(20);
  const info: NodeInfo = {
    protocolVersion: { p2p: 8n, block: 11n, app: 0n },
    id,
    listenAddr: 'tcp://0.0.0.0:26656',
    network: 'chain-1',
    version: '0.38.17',
    channels: Uint8Array.of(0x40, 0x20, 0x21),
    moniker: 'm',
    other: { txIndex: 'on', rpcAddress: 'tcp://x:1' },
  };
  const other = str('0a', 'on') + str('12', 'tcp://x:1');
  const want =
    '0a04' + '0808' + '100b' + // protocol_version{p2p=8, block=11}, app 0 omitted
    str('12', id) +
    str('1a', 'tcp://0.0.0.0:26656') +
    str('22', 'chain-1') +
    str('2a', '0.38.17') +
    '3203402021' +
    str('3a', 'm') +
    '42' + lenHex('x'.repeat(other.length / 2)) + other;
  t.equal(hex(encodeNodeInfo(info)), want);
  t.same(decodeNodeInfo(encodeNodeInfo(info)), info, 'round trip');

  // Non-nullable protocol_version and other are written even when empty; empty strings are not.
  const empty: NodeInfo = {
    protocolVersion: { p2p: 0n, block: 0n, app: 0n },
    id: '',
    listenAddr: '',
    network: '',
    version: '',
    channels: new Uint8Array(0),
    moniker: '',
    other: { txIndex: '', rpcAddress: '' },
  };
  t.equal(hex(encodeNodeInfo(empty)), '0a004200');
  t.same(decodeNodeInfo(new Uint8Array(0)), empty, 'absent fields decode to zero values');
  t.same(decodeNodeInfo(Uint8Array.from(Buffer.from('0a021805' + 'ba0601ff', 'hex'))).protocolVersion, { p2p: 0n, block: 0n, app: 5n }, 'app, unknown fields skipped');
  t.throws(() => decodeNodeInfo(Uint8Array.of(0x12, 0x05, 0x61)), { code: 'PROTO_DECODE' }, 'truncated');
});

t.test('Validate (TestNodeInfoValidate cases)', async (t) => {
  const key = Ed25519PrivKey.generate();
  const channels = Uint8Array.from({ length: 16 }, (_, i) => i);
  const base = (): NodeInfo => makeNodeInfo(key, { channels, moniker: 'testing', listenAddr: 'tcp://127.0.0.1:26656' });
  t.doesNotThrow(() => validateNodeInfo(base()), 'the base info is valid');
  t.throws(() => validateNodeInfo(decodeNodeInfo(new Uint8Array(0))), { code: 'NODE_INFO_INVALID' }, 'empty fails');

  const nonASCII = '¢§µ';
  const cases: [string, (n: NodeInfo) => void, boolean][] = [
    ['Too Many Channels', (n) => (n.channels = Uint8Array.from({ length: 17 }, (_, i) => i)), true],
    ['Duplicate Channel', (n) => (n.channels = Uint8Array.of(0, 1, 2, 3, 4, 1)), true],
    ['Good Channels', (n) => (n.channels = channels.slice(0, 5)), false],
    ['Invalid NetAddress', (n) => (n.listenAddr = 'not-an-address'), true],
    ['Good NetAddress', (n) => (n.listenAddr = '0.0.0.0:26656'), false],
    ['IPv6 NetAddress', (n) => (n.listenAddr = 'tcp://[::1]:26656'), false],
    ['Port out of range', (n) => (n.listenAddr = '0.0.0.0:65536'), true],
    ['Empty host', (n) => (n.listenAddr = ':26656'), true],
    ['Bad ID', (n) => (n.id = 'zz'.repeat(20)), true],
    ['Short ID', (n) => (n.id = 'ab'.repeat(19)), true],
    ['Upper-case ID', (n) => (n.id = n.id.toUpperCase()), false],
    ['Non-ASCII Version', (n) => (n.version = nonASCII), true],
    ['Empty tab Version', (n) => (n.version = '\t'), true],
    ['Empty space Version', (n) => (n.version = '  '), true],
    ['Empty Version', (n) => (n.version = ''), false],
    ['Non-ASCII Moniker', (n) => (n.moniker = nonASCII), true],
    ['Empty tab Moniker', (n) => (n.moniker = '\t'), true],
    ['Empty space Moniker', (n) => (n.moniker = '  '), true],
    ['Empty Moniker', (n) => (n.moniker = ''), true],
    ['Good Moniker', (n) => (n.moniker = 'hey its me'), false],
    ['Non-ASCII TxIndex', (n) => (n.other.txIndex = nonASCII), true],
    ['Empty tab TxIndex', (n) => (n.other.txIndex = '\t'), true],
    ['Empty space TxIndex', (n) => (n.other.txIndex = '  '), true],
    ['Empty TxIndex', (n) => (n.other.txIndex = ''), false],
    ['Off TxIndex', (n) => (n.other.txIndex = 'off'), false],
    ['Non-ASCII RPCAddress', (n) => (n.other.rpcAddress = nonASCII), true],
    ['Empty tab RPCAddress', (n) => (n.other.rpcAddress = '\t'), true],
    ['Empty space RPCAddress', (n) => (n.other.rpcAddress = '  '), true],
    ['Empty RPCAddress', (n) => (n.other.rpcAddress = ''), false],
    ['Good RPCAddress', (n) => (n.other.rpcAddress = '0.0.0.0:26657'), false],
  ];
  for (const [name, mutate, bad] of cases) {
    const n = base();
    mutate(n);
    if (bad) t.throws(() => validateNodeInfo(n), { code: 'NODE_INFO_INVALID' }, name);
    else t.doesNotThrow(() => validateNodeInfo(n), name);
  }
});

t.test('listen address parsing and the host lookup', async (t) => {
  t.same(parseListenAddr('tcp://1.2.3.4:5'), { host: '1.2.3.4', port: 5 });
  t.same(parseListenAddr('[::1]:26656'), { host: '::1', port: 26656 });
  t.throws(() => parseListenAddr('1.2.3.4'), { code: 'NODE_INFO_INVALID' }, 'no port');
  t.throws(() => parseListenAddr('::1:26656'), { code: 'NODE_INFO_INVALID' }, 'bare IPv6 has too many colons');
  t.throws(() => parseListenAddr('a@1.2.3.4:5'), { code: 'NODE_INFO_INVALID' }, "'@' in the address");
  t.throws(() => parseListenAddr('1.2.3.4:+5'), { code: 'NODE_INFO_INVALID' }, 'signed port');

  const key = Ed25519PrivKey.generate();
  const looked: string[] = [];
  const okLookup = async (h: string) => void looked.push(h);
  await validateNodeInfoAsync(makeNodeInfo(key, { listenAddr: 'tcp://peer.example:26656' }), okLookup);
  await validateNodeInfoAsync(makeNodeInfo(key, { listenAddr: 'tcp://10.0.0.1:26656' }), okLookup);
  t.same(looked, ['peer.example'], 'only a non-IP host is looked up');
  await t.rejects(
    validateNodeInfoAsync(makeNodeInfo(key, { listenAddr: 'tcp://nowhere.invalid:26656' }), async () => {
      throw new Error('ENOTFOUND');
    }),
    { code: 'NODE_INFO_INVALID' },
    'an unresolvable host is invalid',
  );
});

t.test('CompatibleWith (TestNodeInfoCompatible cases)', async (t) => {
  const a = makeNodeInfo(Ed25519PrivKey.generate());
  const b = makeNodeInfo(Ed25519PrivKey.generate());
  t.doesNotThrow(() => checkCompatible(a, b), 'same network, block version and channels');
  b.channels = Uint8Array.from([...b.channels, 0x02]);
  t.ok(hasChannel(b, 0x02));
  t.notOk(hasChannel(a, 0x02));
  t.doesNotThrow(() => checkCompatible(a, b), 'an extra channel is fine');
  const cases: [string, (n: NodeInfo) => void][] = [
    ['Wrong block version', (n) => (n.protocolVersion.block += 1n)],
    ['Wrong network', (n) => (n.network += '-wrong')],
    ['No common channels', (n) => (n.channels = Uint8Array.of(0x02))],
  ];
  for (const [name, mutate] of cases) {
    const n = makeNodeInfo(Ed25519PrivKey.generate());
    mutate(n);
    t.throws(() => checkCompatible(a, n), { code: 'INCOMPATIBLE' }, name);
  }
  const p2pOnly = makeNodeInfo(Ed25519PrivKey.generate(), { protocolVersion: { p2p: 7n, block: 11n, app: 9n } });
  t.doesNotThrow(() => checkCompatible(a, p2pOnly), 'p2p and app versions are not compared');
  const noChannels = makeNodeInfo(Ed25519PrivKey.generate(), { channels: new Uint8Array(0) });
  t.doesNotThrow(() => checkCompatible(noChannels, a), 'we list no channels: anything goes');
});
