/**
 * src/pool/gc.ts: parallel scavenging is off on a machine with few cores, on with many, and
 * CHAIND_PARALLEL_SCAVENGE=on|off decides when set (an unknown value is ignored).
 */
import t from 'tap';
import { PARALLEL_SCAVENGE_MIN_CORES, parallelScavenge } from '../../src/pool/gc.js';

t.test('the choice', async (t) => {
  t.equal(parallelScavenge({}, 2), false, '2 cores: off');
  t.equal(parallelScavenge({}, PARALLEL_SCAVENGE_MIN_CORES - 1), false, 'below the threshold: off');
  t.equal(parallelScavenge({}, PARALLEL_SCAVENGE_MIN_CORES), true, 'at the threshold: on');
  t.equal(parallelScavenge({ CHAIND_PARALLEL_SCAVENGE: 'on' }, 2), true, 'on, whatever the cores');
  t.equal(parallelScavenge({ CHAIND_PARALLEL_SCAVENGE: 'off' }, 64), false, 'off, whatever the cores');
  t.equal(parallelScavenge({ CHAIND_PARALLEL_SCAVENGE: 'maybe' }, 2), false, 'unknown value: by cores (2)');
  t.equal(parallelScavenge({ CHAIND_PARALLEL_SCAVENGE: 'maybe' }, 16), true, 'unknown value: by cores (16)');
});
