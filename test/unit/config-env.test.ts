/** The environment switches, read in one place (src/config/env.ts). */
import t from 'tap';
import { ConfigError, DEFAULT_ENV_SWITCHES, readEnvSwitches } from '../../src/config/index.js';

t.test('defaults when nothing is set', async (t) => {
  t.same(readEnvSwitches({}), { pool: 'piscina', crypto: 'auto', signLog: null, exec: 'thread', grpc: 'auto', execNice: 0, mainSliceUs: 100, parallelScavenge: 'auto', testDoubleSign: false });
  t.same(readEnvSwitches({}), DEFAULT_ENV_SWITCHES, 'the same as a node started without an environment');
});

t.test('each switch', async (t) => {
  t.equal(readEnvSwitches({ CHAIND_POOL: 'single' }).pool, 'single');
  t.equal(readEnvSwitches({ CHAIND_POOL: ' Piscina ' }).pool, 'piscina');
  t.equal(readEnvSwitches({ CHAIND_POOL: '' }).pool, 'piscina');
  t.equal(readEnvSwitches({ CHAIND_CRYPTO: 'js' }).crypto, 'js');
  t.equal(readEnvSwitches({ CHAIND_CRYPTO: 'NATIVE' }).crypto, 'native');
  t.equal(readEnvSwitches({ CHAIND_SIGN_LOG: '/tmp/x.log' }).signLog, '/tmp/x.log');
  t.equal(readEnvSwitches({ CHAIND_SIGN_LOG: '' }).signLog, null);
  t.equal(readEnvSwitches({ CHAIND_EXEC: 'Inline' }).exec, 'inline');
  t.equal(readEnvSwitches({}).exec, 'thread');
  t.throws(() => readEnvSwitches({ CHAIND_EXEC: 'worker' }), { name: 'ConfigError', field: 'CHAIND_EXEC' } as any);
  t.equal(readEnvSwitches({ CHAIND_EXEC_NICE: '10' }).execNice, 10);
  t.equal(readEnvSwitches({ CHAIND_EXEC_NICE: ' 19 ' }).execNice, 19);
  t.equal(readEnvSwitches({ CHAIND_EXEC_NICE: '' }).execNice, 0, 'empty: the default');
  for (const bad of ['20', '-1', '5.5', 'low', '0x5']) {
    t.throws(() => readEnvSwitches({ CHAIND_EXEC_NICE: bad }), { name: 'ConfigError', field: 'CHAIND_EXEC_NICE' } as any, `CHAIND_EXEC_NICE=${bad}`);
  }
  t.equal(readEnvSwitches({}).mainSliceUs, 100, 'the main thread slice: 0.1 ms by default');
  t.equal(readEnvSwitches({ CHAIND_MAIN_SLICE_US: '0' }).mainSliceUs, 0, '0: the kernel default');
  t.equal(readEnvSwitches({ CHAIND_MAIN_SLICE_US: ' 3000 ' }).mainSliceUs, 3000);
  for (const bad of ['50', '100001', '-100', '1.5', 'short']) {
    t.throws(() => readEnvSwitches({ CHAIND_MAIN_SLICE_US: bad }), { name: 'ConfigError', field: 'CHAIND_MAIN_SLICE_US' } as any, `CHAIND_MAIN_SLICE_US=${bad}`);
  }
  t.equal(readEnvSwitches({ CHAIND_TEST_DOUBLE_SIGN: '1' }).testDoubleSign, true);
  t.equal(readEnvSwitches({ CHAIND_TEST_DOUBLE_SIGN: 'yes' }).testDoubleSign, false, 'only 1 turns it on');
});

t.test('a bad value is a ConfigError naming the variable', async (t) => {
  t.throws(() => readEnvSwitches({ CHAIND_POOL: 'threads' }), { name: 'ConfigError', field: 'CHAIND_POOL', message: 'CHAIND_POOL must be piscina or single, got "threads"' });
  const err = (() => {
    try {
      readEnvSwitches({ CHAIND_CRYPTO: 'wasm' });
    } catch (e) {
      return e as ConfigError;
    }
    return null;
  })();
  t.type(err, ConfigError);
  t.equal(err?.field, 'CHAIND_CRYPTO');
  t.match(err?.message, /CHAIND_CRYPTO must be auto, native or js, got "wasm"/);
});
