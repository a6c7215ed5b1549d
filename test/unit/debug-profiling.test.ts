/**
 * Profiling the running process through the debug_ methods (src/rpc/evm/debug-node.ts,
 * src/profiling): a real EVM JSON-RPC server on loopback with `debug` enabled and a JWT secret,
 * and two real worker threads (one busy in a named function, one idle) standing in for the pool's
 * threads. Every method produces a file or a value that parses; names resolving outside the
 * profiles directory are refused with nothing written; no token or no `debug` in the api refuses.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { generateJwtSecret, signJwt } from '../../src/config/jwt.js';
import { ProfilesDir } from '../../src/profiling/files.js';

const HELPER = fileURLToPath(new URL('../helpers/debug-rpc-server.js', import.meta.url));

// Heap snapshots of four threads take seconds, and minutes on a loaded 2-core machine.
t.setTimeout(900_000);

const secret = generateJwtSecret();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
const profiles = path.join(tmp, 'profiles');
const outside = path.join(tmp, 'outside');
fs.mkdirSync(outside);
t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));

type Answer = { result?: any; error?: { code: number; message: string } };

async function rpc(port: number, method: string, params: unknown[] = [], token: string | null = signJwt(secret)): Promise<{ status: number; body: Answer | string }> {
  const r = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(120_000),
  });
  const text = await r.text();
  try {
    return { status: r.status, body: JSON.parse(text) as Answer };
  } catch {
    return { status: r.status, body: text };
  }
}

async function ok(port: number, method: string, params: unknown[] = []): Promise<any> {
  const r = await rpc(port, method, params);
  const a = r.body as Answer;
  if (typeof r.body === 'string' || a.error) throw new Error(`${method}: ${JSON.stringify(r.body)}`);
  return a.result;
}

async function err(port: number, method: string, params: unknown[] = []): Promise<{ code: number; message: string }> {
  const a = (await rpc(port, method, params)).body as Answer;
  if (a.error === undefined) throw new Error(`${method} succeeded: ${JSON.stringify(a)}`);
  return a.error;
}

const listing = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);

/** The busy worker's profile from debug_cpuProfile(`<file>`, 1) has a sample in chaindBusyLoop. */
function busySampled(file: string): boolean {
  const busy = listing(profiles).find((f) => f.startsWith(`${file}.worker-`) && f.endsWith('-busy.cpuprofile'));
  if (busy === undefined) return false;
  const p = JSON.parse(fs.readFileSync(path.join(profiles, busy), 'utf8'));
  const ids = new Set(p.nodes.filter((n: any) => n.callFrame.functionName === 'chaindBusyLoop').map((n: any) => n.id));
  return p.samples.some((s: number) => ids.has(s));
}

/**
 * Profiles of 1 s named `<prefix>-<n>` until the busy worker's loop is sampled in one, for up to
 * 60 s: the loop runs 10 ms in every 50, and on a loaded machine both it and V8's sampler thread
 * wait for a core, so one second's profile may hold no sample of it (idle here: ≈ 130 of ≈ 800
 * samples; with eight CPU hogs on the two cores: 25–60 of ≈ 400). Returns the profiles taken.
 */
async function profileUntilBusySampled(t: Test, prefix: string): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (let n = 1; ; n++) {
    t.equal(await ok(server.port, 'debug_cpuProfile', [`${prefix}-${n}`, 1]), null);
    if (busySampled(`${prefix}-${n}`) || Date.now() > deadline) return n;
  }
}

let server: { port: number };
let plain: { port: number };

t.before(async () => {
  // A separate plain `node` process: the test runner's own loader thread stays out of the profiles.
  // A bare environment: the runner's (NODE_OPTIONS and its loaders) would add threads of their own.
  const env = { PATH: process.env.PATH ?? '', PROFILES: profiles, JWT_SECRET: Buffer.from(secret).toString('hex') };
  // Through env(1): the runner's spawn hook puts its NODE_OPTIONS back into any env it is given.
  const child = spawn('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, HELPER], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  t.teardown(() => new Promise<void>((r) => {
    if (child.exitCode !== null) return r();
    child.once('exit', () => r());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  }));
  const line = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const i = buf.indexOf('\n');
      if (i >= 0) resolve(buf.slice(0, i));
    });
    child.once('exit', (code) => reject(new Error(`helper exited with ${code}`)));
  });
  const ports = JSON.parse(line) as { port: number; plainPort: number };
  server = { port: ports.port };
  plain = { port: ports.plainPort };
});

t.test('gating: no token, a bad token, and debug not in the api are refused', async (t) => {
  const none = await rpc(server.port, 'debug_memStats', [], null);
  t.equal(none.status, 401);
  t.equal(none.body, 'missing token\n');
  const bad = await rpc(server.port, 'debug_startCPUProfile', ['x'], signJwt(generateJwtSecret()));
  t.equal(bad.status, 401);
  t.equal(bad.body, 'signature is invalid\n');
  t.same(listing(profiles), [], 'a refused call wrote nothing');
  const off = await rpc(plain.port, 'debug_memStats');
  t.same((off.body as Answer).error, { code: -32601, message: 'the method debug_memStats does not exist/is not available' }, 'debug not listed in [json-rpc] api');
  const offNoToken = await rpc(plain.port, 'debug_cpuProfile', ['x', 1], null);
  t.ok(offNoToken.status === 401 || (offNoToken.body as Answer).error?.code === -32601, 'no token and no namespace: refused either way');
  t.same(listing(profiles), [], 'nothing written');
});

t.test('debug_memStats: Go field names, live V8 values', async (t) => {
  const m = await ok(server.port, 'debug_memStats');
  for (const k of ['Alloc', 'TotalAlloc', 'Sys', 'Lookups', 'Mallocs', 'Frees', 'HeapAlloc', 'HeapSys', 'HeapIdle', 'HeapInuse', 'HeapReleased', 'HeapObjects', 'StackInuse', 'StackSys', 'MSpanInuse', 'MSpanSys', 'MCacheInuse', 'MCacheSys', 'BuckHashSys', 'GCSys', 'OtherSys', 'NextGC', 'LastGC', 'PauseTotalNs', 'NumGC', 'NumForcedGC', 'GCCPUFraction', 'EnableGC', 'DebugGC']) {
    t.ok(k in m, `has ${k}`);
  }
  t.ok(m.HeapAlloc > 1_000_000, `HeapAlloc ${m.HeapAlloc} is the live heap`);
  t.ok(m.Sys >= m.HeapInuse, 'Sys (RSS) covers the committed heap');
  t.ok(m.HeapSys >= m.HeapAlloc);
  t.equal(m.PauseNs.length, 256);
  t.equal(m.PauseEnd.length, 256);
  t.equal(m.BySize.length, 61);
  t.equal(m.EnableGC, true);
});

t.test('debug_freeOSMemory is a forced full GC that debug_gcStats and debug_memStats then show', async (t) => {
  const before = await ok(server.port, 'debug_memStats');
  t.equal(await ok(server.port, 'debug_freeOSMemory'), null);
  // GC entries reach the observer asynchronously.
  let g: any;
  const deadline = Date.now() + 30_000;
  do {
    await new Promise((r) => setTimeout(r, 50));
    g = await ok(server.port, 'debug_gcStats');
  } while (g.NumGC <= before.NumGC && Date.now() < deadline);
  t.ok(g.NumGC > before.NumGC, `NumGC ${before.NumGC} → ${g.NumGC}`);
  t.ok(g.PauseTotal > 0);
  t.equal(g.Pause.length, Math.min(g.NumGC, 256));
  t.equal(g.PauseEnd.length, g.Pause.length);
  t.match(g.LastGC, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  t.equal(g.PauseEnd[0], g.LastGC, 'most recent first');
  t.equal(g.PauseQuantiles, null);
  const after = await ok(server.port, 'debug_memStats');
  t.ok(after.NumForcedGC > before.NumForcedGC, 'the GC counted as forced');
});

t.test('debug_setGCPercent is a clear error, not a silent success', async (t) => {
  const e = await err(server.port, 'debug_setGCPercent', [100]);
  t.equal(e.code, -32000);
  t.match(e.message, /no GOGC-like knob/);
});

t.test('CPU profile of every thread: one .cpuprofile each, with nodes and samples', async (t) => {
  t.equal(await ok(server.port, 'debug_cpuProfile', ['cpu1.prof', 1]), null);
  const files = listing(profiles).filter((f) => f.startsWith('cpu1.'));
  t.ok(files.includes('cpu1.main.cpuprofile'), 'main thread');
  t.ok(files.some((f) => /^cpu1\.worker-\d+-busy\.cpuprofile$/.test(f)), `the busy thread: ${files.join(', ')}`);
  t.ok(files.some((f) => /^cpu1\.worker-\d+-idle\.cpuprofile$/.test(f)), 'the idle thread');
  t.equal(files.length, 4, 'main, busy, idle and the pool thread');
  let sawBusy = false;
  for (const f of files) {
    const p = JSON.parse(fs.readFileSync(path.join(profiles, f), 'utf8'));
    t.ok(Array.isArray(p.nodes) && p.nodes.length > 0, `${f}: nodes`);
    t.ok(Array.isArray(p.samples) && p.samples.length > 0, `${f}: samples`);
    t.ok(Array.isArray(p.timeDeltas) && p.timeDeltas.length === p.samples.length, `${f}: timeDeltas`);
    t.ok(p.endTime > p.startTime, `${f}: a time span`);
    if (p.nodes.some((n: any) => n.callFrame.functionName === 'chaindBusyLoop')) sawBusy = true;
  }
  if (!sawBusy) {
    const n = await profileUntilBusySampled(t, 'cpu1-again');
    sawBusy = busySampled(`cpu1-again-${n}`);
    t.comment(`the busy loop was sampled in profile ${n + 1} (the first had no sample of it)`);
  }
  t.ok(sawBusy, "the busy worker's function is in its profile");
});

t.test('start/stop CPU profile; no second one at once; stop without start', async (t) => {
  t.equal(await ok(server.port, 'debug_startCPUProfile', ['cpu2']), null);
  t.same(await err(server.port, 'debug_startCPUProfile', ['cpu3']), { code: -32000, message: 'CPU profiling already in progress' });
  t.same(await err(server.port, 'debug_cpuProfile', ['cpu3', 1]), { code: -32000, message: 'CPU profiling already in progress' });
  await new Promise((r) => setTimeout(r, 300));
  t.equal(await ok(server.port, 'debug_stopCPUProfile'), null);
  t.same(await err(server.port, 'debug_stopCPUProfile'), { code: -32000, message: 'CPU profiling not in progress' });
  const files = listing(profiles).filter((f) => f.startsWith('cpu2.'));
  t.ok(files.includes('cpu2.main.cpuprofile'));
  t.equal(files.length, 4, files.join(', '));
  t.same(listing(profiles).filter((f) => f.startsWith('cpu3')), [], 'the refused start wrote nothing');
});

t.test('debug_writeMemProfile: a heap snapshot of every thread', async (t) => {
  t.equal(await ok(server.port, 'debug_writeMemProfile', ['heap']), null);
  const files = listing(profiles).filter((f) => f.startsWith('heap.'));
  t.ok(files.includes('heap.main.heapsnapshot'));
  t.equal(files.length, 4, files.join(', '));
  for (const f of files) {
    const s = JSON.parse(fs.readFileSync(path.join(profiles, f), 'utf8'));
    t.ok(Array.isArray(s.snapshot?.meta?.node_fields), `${f}: snapshot meta`);
    t.ok(s.snapshot.node_count > 0 && s.nodes.length === s.snapshot.node_count * s.snapshot.meta.node_fields.length, `${f}: ${s.snapshot.node_count} nodes`);
    t.ok(Array.isArray(s.strings) && s.strings.length > 0, `${f}: strings`);
  }
});

t.test('debug_stacks: the main thread and every worker', async (t) => {
  // The busy worker runs its loop 10 ms in every 50: ask until a pause lands inside it.
  let s = '';
  const deadline = Date.now() + 60_000;
  do s = await ok(server.port, 'debug_stacks');
  while (!/\] busy, running\]:\n(\s+at .*\n)*\s+at chaindBusyLoop /.test(s) && Date.now() < deadline);
  t.match(s, /^thread 0 \[main, running: this debug_stacks call\]:\n\s+at /);
  t.match(s, /\[worker \d+\] busy, running\]:\n(\s+at .*\n)*\s+at chaindBusyLoop /, "the busy worker's current frame");
  t.match(s, /\[worker \d+\] idle, idle: no JavaScript running/);
  t.match(s, /\nthread \d+ \[\[worker \d+\], (running|idle)/, 'the pool thread (unnamed) too');
  const only: string = await ok(server.port, 'debug_stacks', ['busy']);
  t.notMatch(only, /\] idle, idle: no JavaScript/, 'the filter keeps matching threads only');
  t.match(only, /\] busy, /);
  // The workers go on after being paused and resumed: the busy one still runs its loop.
  const n = await profileUntilBusySampled(t, 'after-stacks');
  t.ok(busySampled(`after-stacks-${n}`), `still running after the pauses (sampled in profile ${n})`);
});

t.test('debug_goTrace / start / stop: Chrome trace events of the node spans', async (t) => {
  t.equal(await ok(server.port, 'debug_startGoTrace', ['trace1.json']), null);
  t.same(await err(server.port, 'debug_startGoTrace', ['trace2.json']), { code: -32000, message: 'trace already in progress' });
  await ok(server.port, 'debug_memStats');
  t.equal(await ok(server.port, 'debug_stopGoTrace'), null);
  t.same(await err(server.port, 'debug_stopGoTrace'), { code: -32000, message: 'trace not in progress' });
  const doc = JSON.parse(fs.readFileSync(path.join(profiles, 'trace1.json'), 'utf8'));
  t.ok(Array.isArray(doc.traceEvents));
  const rpcSpans = doc.traceEvents.filter((e: any) => e.cat === 'rpc' && e.ph === 'X');
  t.ok(rpcSpans.some((e: any) => e.name === 'debug_memStats' && e.dur >= 0 && e.ts > 1e15), 'the debug_memStats call is a span (µs since the epoch)');
  t.ok(doc.traceEvents.some((e: any) => e.ph === 'M' && e.name === 'process_name'), 'metadata names the process');
  t.equal(await ok(server.port, 'debug_goTrace', ['trace3.json', 1]), null);
  t.ok(Array.isArray(JSON.parse(fs.readFileSync(path.join(profiles, 'trace3.json'), 'utf8')).traceEvents));
});

t.test('block and mutex profiles: real measurements, or an error naming why', async (t) => {
  t.match((await err(server.port, 'debug_writeMutexProfile', ['mutex0.json'])).message, /mutex profiling is off/);
  t.match((await err(server.port, 'debug_writeBlockProfile', ['block0.json'])).message, /block profiling is off/);
  t.same(listing(profiles).filter((f) => /^(mutex0|block0)/.test(f)), [], 'nothing written');

  t.equal(await ok(server.port, 'debug_setBlockProfileRate', [1]), null);
  let b: any;
  const until = Date.now() + 60_000;
  do {
    await new Promise((r) => setTimeout(r, 100));
    t.equal(await ok(server.port, 'debug_writeBlockProfile', ['block1.json']), null);
    b = JSON.parse(fs.readFileSync(path.join(profiles, 'block1.json'), 'utf8'));
  } while (!(b.eventLoopDelay.count > 0) && Date.now() < until);
  t.ok(b.eventLoopDelay.count > 0, 'event-loop delay samples');
  t.ok(b.eventLoopDelay.maxNs >= b.eventLoopDelay.minNs && b.eventLoopDelay.minNs > 0, `delays measured: ${JSON.stringify(b.eventLoopDelay.percentilesNs)}`);
  t.equal(await ok(server.port, 'debug_setBlockProfileRate', [0]), null);

  t.equal(await ok(server.port, 'debug_setMutexProfileFraction', [1]), 0, 'the previous fraction');
  // The helper's pool runs a job every 50 ms: each one's wait for the thread is recorded.
  let m: any;
  const deadline = Date.now() + 60_000;
  do {
    await new Promise((r) => setTimeout(r, 200));
    t.equal(await ok(server.port, 'debug_writeMutexProfile', ['mutex1.json']), null);
    m = JSON.parse(fs.readFileSync(path.join(profiles, 'mutex1.json'), 'utf8'));
  } while (!(m.waits['pool-queue'].count > 0) && Date.now() < deadline);
  t.ok(m.waits['pool-queue'].count > 0, `pool waits recorded: ${JSON.stringify(m.waits['pool-queue'])}`);
  t.ok(m.waits['pool-queue'].maxNs > 0);
  t.equal(await ok(server.port, 'debug_setMutexProfileFraction', [0]), 1);

  t.equal(await ok(server.port, 'debug_blockProfile', ['block2.json', 1]), null);
  t.ok(JSON.parse(fs.readFileSync(path.join(profiles, 'block2.json'), 'utf8')).eventLoopDelay.count > 0);
  t.equal(await ok(server.port, 'debug_mutexProfile', ['mutex2.json', 1]), null);
  t.ok(JSON.parse(fs.readFileSync(path.join(profiles, 'mutex2.json'), 'utf8')).waits['pool-queue'].count > 0, 'a second of pool waits');
});

t.test('paths: anything resolving outside the profiles directory is refused, nothing written', async (t) => {
  fs.symlinkSync(outside, path.join(profiles, 'link'));
  fs.symlinkSync(path.join(outside, 'target.json'), path.join(profiles, 'file-link.json'));
  const bad = ['../outside/x', path.join(outside, 'abs'), '/tmp/chaind-abs-escape', 'link/x', 'a/../../outside/y', '', '.'];
  for (const f of bad) {
    for (const [m, extra] of [['debug_startCPUProfile', []], ['debug_writeMemProfile', []], ['debug_startGoTrace', []], ['debug_cpuProfile', [1]]] as const) {
      const e = await err(server.port, m, [f, ...extra]);
      t.equal(e.code, -32000, `${m}(${JSON.stringify(f)}) refused: ${e.message}`);
    }
  }
  // A file that is itself a link (the exact-name writers: trace, block and mutex profiles).
  for (const m of ['debug_startGoTrace', 'debug_writeBlockProfile', 'debug_writeMutexProfile']) {
    t.match((await err(server.port, m, ['file-link.json'])).message, /symbolic link/, `${m} through a file link refused`);
  }
  t.same(listing(outside), [], 'nothing landed outside');
  t.notOk(fs.existsSync('/tmp/chaind-abs-escape.main.cpuprofile') || fs.existsSync('/tmp/chaind-abs-escape'));
  // Nothing is left running after a refusal.
  t.same(listing(profiles).filter((f) => f.endsWith('.cpuprofile') && !/^(cpu[12]|cpu1-again-\d+|after-stacks-\d+)\./.test(f)), [], 'no profile from the refused calls');
  t.same(await err(server.port, 'debug_stopCPUProfile'), { code: -32000, message: 'CPU profiling not in progress' }, 'no refused start left one running');
  t.equal(await ok(server.port, 'debug_startCPUProfile', ['sub/dir/cpu4']), null, 'a subdirectory inside is fine');
  t.equal(await ok(server.port, 'debug_stopCPUProfile'), null);
  t.ok(fs.existsSync(path.join(profiles, 'sub/dir/cpu4.main.cpuprofile')));
  t.equal(await ok(server.port, 'debug_startGoTrace', [path.join(profiles, 'abs-inside.json')]), null, 'an absolute path inside is fine');
  t.equal(await ok(server.port, 'debug_stopGoTrace'), null);
  // Arguments decoded as Go decodes them.
  t.same(await err(server.port, 'debug_cpuProfile', [1, 1]), { code: -32602, message: 'invalid argument 0: json: cannot unmarshal number into Go value of type string' });
  t.same(await err(server.port, 'debug_cpuProfile', ['x', '1']), { code: -32602, message: 'invalid argument 1: json: cannot unmarshal string into Go value of type uint' });
  t.same(await err(server.port, 'debug_cpuProfile', ['x', -1]), { code: -32602, message: 'invalid argument 1: json: cannot unmarshal number -1 into Go value of type uint' });
});

t.test('ProfilesDir on its own', async (t) => {
  const d = new ProfilesDir(path.join(tmp, 'other'));
  t.throws(() => d.resolve('../x'), { code: 'PROFILE_PATH' });
  t.throws(() => d.resolve(path.join(tmp, 'x')), { code: 'PROFILE_PATH' });
  t.equal(d.resolve('a/b.json'), path.join(tmp, 'other', 'a', 'b.json'));
  t.equal(fs.readFileSync(d.write('w.txt', 'hi'), 'utf8'), 'hi');
});
