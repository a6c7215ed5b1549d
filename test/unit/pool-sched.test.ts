/**
 * src/pool/sched.ts and native/src/sched.rs: the main thread's scheduler slice. With the real
 * addon, on a thread of its own (the slice is per thread): the kernel's own view of the thread
 * (/proc/thread-self/sched, `se.slice`) must show what applyThreadSlice reports, and a thread
 * started afterwards must not inherit it.
 */
import { release } from 'node:os';
import { Worker } from 'node:worker_threads';
import t from 'tap';
import { loadNativeAddon } from '../../src/crypto/native.js';
import { applyThreadSlice } from '../../src/pool/sched.js';

t.test('the decisions, with a stand-in for the addon', async (t) => {
  t.same(applyThreadSlice(0, { threadSlice: () => t.fail('not called') as never }), { applied: false, sliceNs: null, reason: 'CHAIND_MAIN_SLICE_US=0' });
  const asked: number[] = [];
  t.same(applyThreadSlice(100, { threadSlice: (ns) => (asked.push(ns), ns) }), { applied: true, sliceNs: 100_000 });
  t.same(asked, [100_000], 'µs become ns');
  t.match(applyThreadSlice(100, { threadSlice: () => 1_400_000 }), { applied: false, sliceNs: 1_400_000, reason: /kernel kept 1400000 ns/ }, 'an older kernel keeps its own slice');
  t.match(applyThreadSlice(100, { threadSlice: () => -1 }), { applied: false, sliceNs: null, reason: 'sched_setattr failed (errno 1)' });
  t.match(applyThreadSlice(100, {}), { applied: false, reason: /predates threadSlice/ });
});

/** Linux 6.12 is the first with custom slices for SCHED_OTHER. */
function customSlices(): boolean {
  const [major, minor] = release().split('.').map(Number) as [number, number];
  return major > 6 || (major === 6 && minor >= 12);
}

let addonLoads = true;
try {
  loadNativeAddon();
} catch {
  addonLoads = false;
}

t.test('the real addon on a thread of its own', { skip: process.platform !== 'linux' || !addonLoads ? 'needs Linux and the native addon' : false }, async (t) => {
  const src = `
    const { parentPort, workerData } = require('node:worker_threads');
    const fs = require('node:fs');
    const slice = () => Number(/se\\.slice\\s*:\\s*(\\d+)/.exec(fs.readFileSync('/proc/thread-self/sched', 'utf8'))?.[1] ?? NaN);
    import(workerData.mod).then(({ applyThreadSlice }) => {
      const before = slice();
      const r = applyThreadSlice(250);
      const after = slice();
      // A thread started afterwards: the kernel's default again (reset on fork).
      const { Worker } = require('node:worker_threads');
      const child = new Worker("require('node:worker_threads').parentPort.postMessage(require('node:fs').readFileSync('/proc/thread-self/sched', 'utf8'))", { eval: true });
      child.once('message', (text) => parentPort.postMessage({ before, r, after, child: Number(/se\\.slice\\s*:\\s*(\\d+)/.exec(text)?.[1] ?? NaN) }));
    });`;
  const mod = new URL('../../src/pool/sched.js', import.meta.url).href;
  const out = await new Promise<{ before: number; r: { applied: boolean; sliceNs: number | null; reason?: string }; after: number; child: number }>((resolve, reject) => {
    const w = new Worker(src, { eval: true, workerData: { mod } });
    w.once('message', resolve);
    w.once('error', reject);
  });
  t.ok(Number.isFinite(out.before) && out.before > 0, `the kernel reports a slice (${out.before} ns)`);
  const refused = /sched_setattr failed \(errno (1|38)\)/.exec(out.r.reason ?? '');
  if (refused) {
    // A sandbox (seccomp) that refuses the call with EPERM or ENOSYS: nothing may have changed.
    t.equal(out.after, out.before, `refused (${refused[0]}): the slice is unchanged`);
  } else if (customSlices()) {
    t.same(out.r, { applied: true, sliceNs: 250_000 });
    t.equal(out.after, 250_000, 'the kernel shows the new slice');
    t.equal(out.child, out.before, 'a thread it starts afterwards begins with the default slice');
  } else {
    t.equal(out.r.applied, false, `Linux ${release()} keeps its own slice`);
    t.equal(out.after, out.before);
  }
  // Only that thread's: this one keeps its own.
  const mine = Number(/se\.slice\s*:\s*(\d+)/.exec((await import('node:fs')).readFileSync('/proc/thread-self/sched', 'utf8'))?.[1]);
  t.not(mine, 250_000, 'the test thread did not change');
});
