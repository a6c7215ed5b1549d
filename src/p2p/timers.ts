/**
 * The timers of a P2P component (the switch's redials, the PEX reactor's passes): each callback
 * runs only while the component is live, none keeps the process alive, and `clear()` cancels all
 * that are pending when the component stops.
 */
export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();

  /** `live`: whether the owner still runs (checked when scheduling and when firing). */
  constructor(private readonly live: () => boolean) {}

  /** Runs `fn` once after `ms`. */
  later(ms: number, fn: () => void): void {
    if (!this.live()) return;
    const t = setTimeout(() => {
      this.pending.delete(t);
      if (this.live()) fn();
    }, ms);
    t.unref?.();
    this.pending.add(t);
  }

  /** Runs `fn` every `ms` until clear(). */
  every(ms: number, fn: () => void): void {
    if (!this.live()) return;
    const t = setInterval(() => {
      if (this.live()) fn();
    }, ms);
    t.unref?.();
    this.pending.add(t);
  }

  clear(): void {
    for (const t of this.pending) clearTimeout(t);
    this.pending.clear();
  }
}
