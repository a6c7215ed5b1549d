/**
 * RPC work per event-loop turn. The RPC servers, consensus and the block executor share one
 * thread; uWS hands a whole read of a socket (up to 512 KiB: thousands of pipelined requests) to
 * its handlers in one native callback, and a websocket's queued requests run back to back in one
 * microtask drain. Without a bound, one flood keeps the loop for seconds and consensus timers
 * (timeout_commit, the propose and vote timeouts) fire late: no block meanwhile.
 *
 * LoopSlice bounds it: a turn opens with the first request served after the loop came back from
 * its check phase; requests are served at once while less than `sliceMs` has passed since, and
 * deferred after that to a FIFO that setImmediate drains, one slice per loop iteration. Timers run
 * in every iteration between slices, so consensus gets its turn within ~2 slices whatever the RPC
 * load. The bookkeeping per request is one clock read and a comparison.
 *
 * A deferred HTTP request has its socket paused (HttpResponse.pause) until it is served: no more
 * requests are read from that client meanwhile. uWS refuses async pipelining, so requests the
 * client already pipelined behind a deferred one make uWS close the connection: the cap on
 * requests in flight per connection is thus 1 beyond those served synchronously in the slice.
 * HTTP requests go through admitHttp(), which answers up to PIPELINE_OVERDRAFT more per turn
 * past the slice, so that short pipelines are not closed on a loaded machine.
 */
export class LoopSlice {
  /** performance.now() when the current turn opened, or -1 when none is open. */
  private turnStart = -1;
  private readonly waiting: Array<(() => void) | undefined> = [];
  private head = 0;
  private armed = false;
  /** Requests admitted in the current turn. */
  private served = 0;
  /** HTTP requests admitted in the current turn after its slice was spent (admitHttp). */
  private overdraft = 0;
  /** Requests deferred so far (for tests and metrics). */
  deferred = 0;

  /** `sliceMs` ≤ 0 disables the bound (every request runs at once). */
  constructor(public sliceMs: number) {}

  /**
   * Whether a request may run now; if not, hand it to defer(). The first MIN_PER_TURN requests
   * of a turn always run (no clock read): the slice is wall time, and on a loaded machine a
   * descheduled millisecond would otherwise defer, and so close, a client's short pipeline.
   */
  admit(): boolean {
    if (this.sliceMs <= 0) return true;
    if (this.turnStart < 0) {
      this.turnStart = performance.now();
      this.served = 0;
      this.overdraft = 0;
      this.arm();
    }
    // FIFO: while earlier requests wait, later ones wait behind them.
    if (this.head < this.waiting.length) return false;
    if (++this.served <= MIN_PER_TURN) return true;
    return performance.now() - this.turnStart < this.sliceMs;
  }

  /**
   * admit() for an HTTP/1.1 request, which cannot wait safely: uWS 20.30 closes a connection when
   * it parses a pipelined request while an earlier one is unanswered (before any handler runs for
   * it, and whatever res.pause() said), and a handler cannot tell whether more requests follow in
   * the same read, nor which connection a request came on (a new HttpResponse per request, no
   * port). So once the slice is spent (or others wait), a turn still answers up to
   * PIPELINE_OVERDRAFT HTTP requests at once, past the clock and the FIFO; only after those is one
   * deferred (and its connection closed, if it pipelines). A client pipelining a few requests is
   * answered unless floods already took the turn's overdraft.
   */
  admitHttp(): boolean {
    if (this.admit()) return true;
    if (this.overdraft >= PIPELINE_OVERDRAFT) return false;
    this.overdraft++;
    return true;
  }

  /** Runs `fn` in a later loop iteration, in order, within that iteration's slice. */
  defer(fn: () => void): void {
    this.deferred++;
    this.waiting.push(fn);
    this.arm();
  }

  /** Requests waiting for a slice. */
  get pending(): number {
    return this.waiting.length - this.head;
  }

  private arm(): void {
    if (this.armed) return;
    this.armed = true;
    setImmediate(this.tick);
  }

  /**
   * The check phase of the loop iteration whose turn is open: deferred work gets a slice of its
   * own (at least one item, so that it always progresses), then the turn closes and the next
   * iteration (timers first) opens a fresh one. An iteration under flood lasts about two slices
   * (the turn's requests served at once, then the deferred ones) plus the HTTP overdraft and
   * consensus' own work.
   *
   * Its own slice, not what the turn left of one: under a flood of HTTP requests the turn's
   * requests (MIN_PER_TURN, then admitHttp's overdraft) spend the slice in every iteration, and
   * deferred work then ran one item per iteration. Websocket requests, which are only ever
   * deferred (a connection's requests run one at a time), waited seconds each behind the FIFO
   * while HTTP requests were answered in ~0.3 s: the fuzzer's websocket surfaces, beside its HTTP
   * ones and two other e2e files, got 2–18 cases/s against ~70 alone, and some sentinels no
   * answer within 20 s.
   */
  private readonly tick = (): void => {
    this.armed = false;
    const start = performance.now();
    if (this.turnStart < 0) this.turnStart = start;
    let ran = false;
    while (this.head < this.waiting.length && (!ran || performance.now() - start < this.sliceMs)) {
      const fn = this.waiting[this.head]!;
      this.waiting[this.head++] = undefined;
      ran = true;
      try {
        fn();
      } catch (e) {
        // Each deferred function answers its own errors; this is a bug, not a request's failure.
        process.emitWarning(`deferred RPC work failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      }
    }
    if (this.head === this.waiting.length) {
      this.waiting.length = 0;
      this.head = 0;
    } else if (this.head >= 1024) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    // The next poll phase opens a fresh turn.
    this.turnStart = -1;
    if (this.head < this.waiting.length) this.arm();
  };
}

/**
 * Default slice: 5 ms of RPC work per loop iteration, and as much again for deferred work. A
 * consensus step that signs takes about eight iterations (the privval state is written and
 * fsynced through libuv's thread pool, one callback per iteration), so under a flood each step
 * waits ~8 × 2 slices: 80 ms, three steps a block, far under timeout_commit (1 s). 5 ms still
 * serves hundreds of /status per iteration.
 */
export const DEFAULT_LOOP_SLICE_MS = 5;

/**
 * Requests a turn serves before the clock is read: a pipelining client's usual depth (wrk's
 * pipeline script uses 16), and at ~0.5–1 ms for the heaviest common request (/blockchain of 20
 * headers) a turn of ~16 ms at worst. 64 let 20 pipelining floods stretch a block to 2.5 s.
 */
export const MIN_PER_TURN = 16;

/**
 * HTTP requests a turn answers at once after its slice is spent (LoopSlice.admitHttp): four
 * clients pipelining 8 requests each. Bounded so that a pipelining flood still ends its turn: at
 * ~1 ms for a heavy request, ~32 ms more per loop iteration at worst.
 */
export const PIPELINE_OVERDRAFT = 32;

/** The slice every RPC server of the process shares (they share the one event loop). */
export const loopSlice = new LoopSlice(DEFAULT_LOOP_SLICE_MS);
