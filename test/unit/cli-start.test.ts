/** `chaind start` in-process with a stand-in startNode: options handed over, signals, exit codes. */
import t, { type Test } from 'tap';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { runStart } from '../../src/cli/start.js';
import type { CliIo } from '../../src/cli/common.js';
import { ConfigError, type StartNodeOptions } from '../../src/config/index.js';

function setup(t: Test) {
  const h = mkdtempSync(join(tmpdir(), 'chaind-'));
  t.teardown(() => rmSync(h, { recursive: true, force: true }));
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (s) => void out.push(s), err: (s) => void err.push(s), env: {} };
  return { h, io, out, err };
}

async function initHome(t: Test, h: string): Promise<void> {
  const { io } = setup(t);
  t.equal(await main(['init', 'n', '--home', h, '--chain-id', 'start-test'], io), 0);
}

/** Let pending promise callbacks run. */
const tick = () => new Promise((r) => setImmediate(r));

t.test('hands config, app config, genesis and logger to startNode; SIGTERM closes once and exits 0', async (t) => {
  const { h, io } = setup(t);
  await initHome(t, h);
  const signals = new EventEmitter();
  const logs: string[] = [];
  let got: StartNodeOptions | undefined;
  let closes = 0;
  const done = runStart(
    ['--home', h, '--rpc.laddr', 'tcp://127.0.0.1:3333', '--json-rpc.api', 'eth,net', '--log_level', 'debug', '--compat.upstream-names=true'],
    io,
    {
      signals,
      logWrite: (l) => void logs.push(l),
      startNode: async (opts) => {
        got = opts;
        return { close: async () => void closes++ };
      },
    },
  );
  await tick();
  t.ok(got, 'startNode called');
  t.equal(got!.home, h);
  t.equal(got!.config.rpc.laddr, 'tcp://127.0.0.1:3333', 'flag applied');
  t.equal(got!.config.logLevel, 'debug');
  t.same(got!.appConfig.jsonRpc.api, ['eth', 'net']);
  t.equal(got!.appConfig.compat.upstreamNames, true);
  t.equal(got!.config.moniker, 'n', 'file applied');
  t.equal(got!.genesis.chainId, 'start-test');
  t.equal(got!.paths.genesis, join(h, 'config', 'genesis.json'));
  t.equal(got!.logger.level, 'debug');
  t.match(logs.join(''), /I\[.*\] starting chaind version=\S+ home=\S+ chain_id=start-test/);
  t.equal(signals.listenerCount('SIGTERM'), 1);
  signals.emit('SIGTERM');
  t.equal(await done, 0);
  t.equal(closes, 1);
  t.equal(signals.listenerCount('SIGTERM'), 0, 'handlers removed');
  t.equal(signals.listenerCount('SIGINT'), 0);
  t.match(logs.join(''), /shutting down signal=SIGTERM/);
});

t.test('SIGINT while closing exits 1 at once; close is not called twice', async (t) => {
  const { h, io } = setup(t);
  await initHome(t, h);
  const signals = new EventEmitter();
  let closes = 0;
  const done = runStart(['--home', h], io, {
    signals,
    logWrite: () => {},
    startNode: async () => ({ close: () => (closes++, new Promise<void>(() => {})) }),
  });
  await tick();
  signals.emit('SIGINT');
  signals.emit('SIGINT');
  t.equal(await done, 1);
  t.equal(closes, 1);
});

t.test('close() failing exits 1 with the message', async (t) => {
  const { h, io, err } = setup(t);
  await initHome(t, h);
  const signals = new EventEmitter();
  const done = runStart(['--home', h], io, {
    signals,
    logWrite: () => {},
    startNode: async () => ({ close: async () => Promise.reject(new Error('disk full')) }),
  });
  await tick();
  signals.emit('SIGTERM');
  t.equal(await done, 1);
  t.same(err, ['error while shutting down: disk full\n']);
});

t.test('startNode failing exits 1 with the message, no stack', async (t) => {
  const { h, io, err } = setup(t);
  await initHome(t, h);
  const code = await main(['start', '--home', h], io, {
    signals: new EventEmitter(),
    logWrite: () => {},
    startNode: async () => {
      throw new ConfigError('config/priv_validator_key.json: priv_key.value: want 64 bytes');
    },
  });
  t.equal(code, 1);
  t.same(err, ['config/priv_validator_key.json: priv_key.value: want 64 bytes\n']);
});

t.test('config warnings are logged, not fatal', async (t) => {
  const { h, io } = setup(t);
  await initHome(t, h);
  const { appendFileSync } = await import('node:fs');
  appendFileSync(join(h, 'config', 'config.toml'), '\n[rpc2]\nx = 1\n');
  const logs: string[] = [];
  const signals = new EventEmitter();
  const done = runStart(['--home', h], io, {
    signals,
    logWrite: (l) => void logs.push(l),
    startNode: async () => ({ close: async () => {} }),
  });
  await tick();
  signals.emit('SIGTERM');
  t.equal(await done, 0);
  t.match(logs.join(''), /W\[.*\] config\/config.toml: unknown section \[rpc2\] \(ignored\)/);
});
