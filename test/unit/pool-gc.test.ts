/**
 * src/pool/gc.ts: parallel scavenging is off on a machine with few cores, on with many, and
 * CHAIND_PARALLEL_SCAVENGE=on|off decides when set (src/config/env.ts refuses another value).
 */
import t from 'tap';
import { readEnvSwitches } from '../../src/config/env.js';
import { PARALLEL_SCAVENGE_MIN_CORES, parallelScavenge } from '../../src/pool/gc.js';

t.test('the choice', async (t) => {
  t.equal(parallelScavenge('auto', 2), false, '2 cores: off');
  t.equal(parallelScavenge('auto', PARALLEL_SCAVENGE_MIN_CORES - 1), false, 'below the threshold: off');
  t.equal(parallelScavenge('auto', PARALLEL_SCAVENGE_MIN_CORES), true, 'at the threshold: on');
  t.equal(parallelScavenge('on', 2), true, 'on, whatever the cores');
  t.equal(parallelScavenge('off', 64), false, 'off, whatever the cores');
  t.equal(readEnvSwitches({}).parallelScavenge, 'auto');
  t.equal(readEnvSwitches({ CHAIND_PARALLEL_SCAVENGE: ' OFF ' }).parallelScavenge, 'off');
  t.throws(() => readEnvSwitches({ CHAIND_PARALLEL_SCAVENGE: 'maybe' }), { code: 'CONFIG_INVALID', message: /CHAIND_PARALLEL_SCAVENGE must be on, off or auto/ });
});
