/**
 * The fuzz harness: a surface is a small object with its seed corpus, a mutator (`generate`, which
 * picks a seed and mutates it with a per-case PRNG) and a sender (`openLane`, one connection that
 * runs cases and judges each answer). Adding a surface (e.g. the EVM JSON-RPC ports) means writing
 * one such object and listing it in surfaces.ts; the runner, the test and the bench take it from
 * there.
 */
import { Rng } from './prng.js';

/** One generated case: enough to send it again, and to print it. */
export interface FuzzCase {
  readonly index: number;
  /** The seed it came from (a name like `block_by_hash` or `GET /cosmos/bank/v1beta1/supply`). */
  readonly seed: string;
  /** Names of the mutators applied, in order. */
  readonly mutations: string[];
  /** The bytes (or messages) sent, printable, for the failure report. */
  describe(): string;
}

/**
 * How long a case may wait for its answer: 20 s, and 100 ms more for each JSON-RPC call past the
 * first that it carries (a batch, pipelined copies, several websocket messages), so a batch of
 * 1,000 calls gets 120 s. The node answers such a batch alone in ~0.6 s (~0.6 ms a call); make
 * bench runs all seven surfaces at once on a shared 2-core machine, where at load 20–30 the
 * node's share of a core is a small fraction and big batches of several lanes queue behind one
 * another: 20 s for 1,000 calls was a deadline for the machine, not for the node (9 such
 * batches "unanswered" in one run, issue 14). A hang still fails: no answer at all, whatever
 * the budget. Over HTTP the EVM server, as geth, bounds a call or batch by its write timeout
 * (`http-timeout`, 30 s) and answers the calls not reached by then with -32002 (an error in the
 * protocol's shape); websocket batches run to their end.
 */
export function answerBudgetMs(calls: number): number {
  return 20_000 + 100 * Math.max(0, calls - 1);
}

/** One connection (or session) running cases one after another. */
export interface Lane<C extends FuzzCase> {
  /**
   * Sends the case and judges the answer: null when it was protocol-shaped, else what was wrong.
   * `tag` counts outcome kinds for the report (e.g. `200`, `grpc-status 3`, `close 1009`).
   */
  run(c: C): Promise<{ problem: string | null; tag: string }>;
  close(): void;
}

export interface Surface<C extends FuzzCase = FuzzCase> {
  readonly name: string;
  /** Names of the seed requests, for the report. */
  readonly seedNames: readonly string[];
  generate(rng: Rng, index: number): C;
  openLane(): Promise<Lane<C>>;
}

export interface Failure {
  surface: string;
  seed: number;
  index: number;
  problem: string;
  mutations: string[];
  from: string;
  request: string;
}

export interface RunOptions {
  seed: number;
  count: number;
  /** Connections run in parallel (each runs its cases one at a time). */
  lanes: number;
  /** Stop the surface after this many failures. */
  maxFailures?: number;
  /** Checked between cases: true stops the run (e.g. the node died). */
  stop?: () => boolean;
}

export interface RunResult {
  surface: string;
  cases: number;
  ms: number;
  failures: Failure[];
  tags: Map<string, number>;
  /** The last cases sent (most recent last), for a crash report. */
  recent: FuzzCase[];
  /** Time spent per seed (ms, summed over lanes) and cases per seed. */
  bySeed: Map<string, { ms: number; n: number }>;
}

/** How to reproduce one case: the environment of the test or bench. */
export function reproLine(f: { surface: string; seed: number; index: number }): string {
  return `FUZZ_SEED=${f.seed} FUZZ_SURFACE=${f.surface} FUZZ_CASE=${f.index}`;
}

export function formatFailure(f: Failure): string {
  return [
    `surface ${f.surface}, seed ${f.seed}, case ${f.index} (from ${f.from}; mutations ${f.mutations.join(' ') || 'none'})`,
    `problem: ${f.problem}`,
    `reproduce: ${reproLine(f)}`,
    `request: ${f.request}`,
  ].join('\n');
}

/** Printable form of bytes: JSON-escaped latin1, cut to `max` characters. */
export function printable(b: Buffer | string, max = 2000): string {
  const s = typeof b === 'string' ? b : b.toString('latin1');
  const cut = s.length > max ? `${s.slice(0, max)}…(+${s.length - max} chars)` : s;
  return JSON.stringify(cut);
}

export async function runSurface<C extends FuzzCase>(surface: Surface<C>, opts: RunOptions): Promise<RunResult> {
  const failures: Failure[] = [];
  const tags = new Map<string, number>();
  const recent: FuzzCase[] = [];
  const bySeed = new Map<string, { ms: number; n: number }>();
  const maxFailures = opts.maxFailures ?? 5;
  let next = 0;
  let done = 0;
  const t0 = performance.now();
  const only = process.env.FUZZ_CASE !== undefined && process.env.FUZZ_SURFACE === surface.name ? Number(process.env.FUZZ_CASE) : null;
  const lane = async () => {
    let l: Lane<C> | null = null;
    try {
      for (;;) {
        if (failures.length >= maxFailures || opts.stop?.()) return;
        const n = next++;
        if (n >= (only !== null ? 1 : opts.count)) return;
        const i = only ?? n;
        const c = surface.generate(Rng.forCase(opts.seed, surface.name, i), i);
        recent.push(c);
        if (recent.length > 20) recent.shift();
        l ??= await surface.openLane();
        let r: { problem: string | null; tag: string };
        const c0 = performance.now();
        try {
          r = await l.run(c);
        } catch (e) {
          r = { problem: `sender threw: ${(e as Error).stack ?? e}`, tag: 'throw' };
        }
        const st = bySeed.get(c.seed) ?? { ms: 0, n: 0 };
        st.ms += performance.now() - c0;
        st.n++;
        bySeed.set(c.seed, st);
        done++;
        tags.set(r.tag, (tags.get(r.tag) ?? 0) + 1);
        if (r.problem !== null) {
          failures.push({ surface: surface.name, seed: opts.seed, index: i, problem: r.problem, mutations: c.mutations, from: c.seed, request: c.describe() });
          l.close();
          l = null;
        }
      }
    } finally {
      l?.close();
    }
  };
  await Promise.all(Array.from({ length: only !== null ? 1 : opts.lanes }, lane));
  return { surface: surface.name, cases: done, ms: performance.now() - t0, failures, tags, recent, bySeed };
}

/**
 * A request the server closed with no answer at all (or whose write met the closed socket): its
 * own assertion in test/e2e/fuzz.test.ts (the client reuses a connection only while the server
 * keeps it: http-conn.ts).
 */
export function isUnanswered(problem: string): boolean {
  return problem.startsWith('connection closed without an answer') || /^socket error .*(EPIPE|ECONNRESET)/.test(problem);
}

/**
 * net/http's own answer to a request it cannot frame (a bad Content-Length: RFC 9112 §6.3), written
 * before any handler: `400 Bad Request`, text/plain, `Connection: close`. On the uWS ports its
 * body carries trailing spaces up to 16 KiB + 1, so that it leaves uWS's cork buffer before uWS
 * drops the connection (src/rpc/server/uws.ts CONN_DROPPED_BY_UWS).
 */
export function isFramingError(a: { status: number; headers: Map<string, string[]>; body: Buffer }): boolean {
  if (a.status !== 400) return false;
  if (!(a.headers.get('content-type')?.[0] ?? '').toLowerCase().startsWith('text/plain')) return false;
  if ((a.headers.get('connection')?.[0] ?? '').toLowerCase() !== 'close') return false;
  return /^400 Bad Request *$/.test(a.body.toString('latin1'));
}
