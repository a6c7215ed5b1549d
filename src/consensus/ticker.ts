/**
 * The timeout ticker (cometbft: consensus/ticker.go). One timer at a time: scheduling a timeout
 * for an older height/round/step than the pending one is ignored, a newer one replaces it.
 * Fired timeouts go to `onTimeout`, which the state machine turns into a queued input.
 */
import type { TimeoutInfo } from './types.js';

export interface TimeoutTicker {
  /** Where fired timeouts go; set once by the ConsensusState. */
  onTimeout: (ti: TimeoutInfo) => void;
  schedule(ti: TimeoutInfo): void;
  stop(): void;
}

/** ticker.go timeoutRoutine: true when `next` should replace `cur`. */
export function supersedes(next: TimeoutInfo, cur: TimeoutInfo | null): boolean {
  if (cur === null) return true;
  if (next.height < cur.height) return false;
  if (next.height === cur.height) {
    if (next.round < cur.round) return false;
    // Step 0 never occurs; the guard keeps ticker.go's "ti.Step > 0" reading.
    if (next.round === cur.round && cur.step > 0 && next.step <= cur.step) return false;
  }
  return true;
}

/** setTimeout-based ticker for the running node. */
export class TimerTicker implements TimeoutTicker {
  onTimeout: (ti: TimeoutInfo) => void = () => {};
  private timer: NodeJS.Timeout | null = null;
  private current: TimeoutInfo | null = null;

  schedule(ti: TimeoutInfo): void {
    if (!supersedes(ti, this.current)) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.current = ti;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.onTimeout(ti);
      },
      Math.max(0, ti.duration),
    );
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** A ticker that tests drive: nothing fires until fire() is called. */
export class ManualTicker implements TimeoutTicker {
  onTimeout: (ti: TimeoutInfo) => void = () => {};
  /** The timeout that would fire next (null after it fired). */
  pending: TimeoutInfo | null = null;
  private last: TimeoutInfo | null = null;
  /** Every accepted schedule, in order. */
  readonly history: TimeoutInfo[] = [];

  schedule(ti: TimeoutInfo): void {
    if (!supersedes(ti, this.last)) return;
    this.last = ti;
    this.pending = ti;
    this.history.push(ti);
  }

  /** Fires the pending timeout; false when none is pending. */
  fire(): boolean {
    const ti = this.pending;
    if (ti === null) return false;
    this.pending = null;
    this.onTimeout(ti);
    return true;
  }

  stop(): void {
    this.pending = null;
  }
}
