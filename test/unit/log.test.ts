/** The structured logger: formats, levels, per-module levels, child context, disabled levels. */
import t from 'tap';
import { createLogger, nullLogger, parseLogLevel } from '../../src/log.js';

const at = new Date('2026-01-01T00:00:00.000Z');

function capture(opts: Parameters<typeof createLogger>[0] = {}) {
  const lines: string[] = [];
  const log = createLogger({ now: () => at, write: (l) => lines.push(l), ...opts });
  return { log, lines };
}

t.test('plain format', async (t) => {
  const { log, lines } = capture();
  log.child({ module: 'consensus' }).info('committed block', { height: 5n, hash: new Uint8Array([0xab, 0x01]), note: 'two words', empty: '' });
  log.warn('careful');
  log.error('bad', { err: new Error('boom') });
  t.same(lines, [
    'I[2026-01-01T00:00:00.000Z] committed block height=5 hash=AB01 note="two words" empty="" module=consensus\n',
    'W[2026-01-01T00:00:00.000Z] careful\n',
    'E[2026-01-01T00:00:00.000Z] bad err=boom\n',
  ]);
});

t.test('json format', async (t) => {
  const { log, lines } = capture({ format: 'json' });
  log.child({ module: 'p2p' }).info('peer', { id: 'abc', n: 1n, b: new Uint8Array([1]) });
  t.same(JSON.parse(lines[0]!), { level: 'info', ts: '2026-01-01T00:00:00.000Z', msg: 'peer', id: 'abc', n: '1', b: '01', module: 'p2p' });
});

t.test('levels', async (t) => {
  const rows: Array<[string, string[]]> = [
    ['debug', ['D', 'I', 'W', 'E']],
    ['info', ['I', 'W', 'E']],
    ['warn', ['W', 'E']],
    ['error', ['E']],
    ['none', []],
  ];
  for (const [level, want] of rows) {
    const { log, lines } = capture({ level });
    log.debug('x');
    log.info('x');
    log.warn('x');
    log.error('x');
    t.same(lines.map((l) => l[0]), want, level);
    t.equal(log.enabled('debug'), level === 'debug');
  }
});

t.test('per-module levels', async (t) => {
  const { log, lines } = capture({ level: 'consensus:debug,p2p:error,*:warn' });
  log.child({ module: 'consensus' }).debug('a');
  log.child({ module: 'p2p' }).warn('b');
  log.child({ module: 'rpc' }).info('c');
  log.child({ module: 'rpc' }).warn('d');
  log.info('e');
  t.same(lines.map((l) => l.split('] ')[1]!.split(' ')[0]), ['a', 'd']);
  t.equal(log.child({ module: 'consensus' }).level, 'debug');
  t.equal(log.child({ module: 'consensus' }).child({ peer: 'x' }).level, 'debug', 'grandchild keeps the module');
  t.same(parseLogLevel('info'), { default: 'info', modules: {} });
  t.same(parseLogLevel('a:debug'), { default: 'info', modules: { a: 'debug' } });
  for (const bad of ['loud', 'a:loud', 'a', ':debug', 'a:debug:x']) t.throws(() => parseLogLevel(bad), bad);
});

t.test('disabled levels do not format', async (t) => {
  const { log, lines } = capture({ level: 'info' });
  let touched = false;
  const fields = {
    get x() {
      touched = true;
      return 1;
    },
  };
  log.debug('skip', fields);
  t.equal(touched, false, 'fields not read');
  t.same(lines, []);
  nullLogger.error('nothing');
});
