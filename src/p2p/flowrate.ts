/**
 * Byte-rate limiting in the manner of cometbft/cometbft:libs/flowrate (Monitor.Limit with
 * block=true): time is cut into 100 ms samples; once a sample has carried rate × 0.1 s bytes,
 * the next transfer waits for the next sample. A transfer is checked before it starts, so one
 * batch may overshoot a sample by its own size, as in CometBFT.
 */
export const SAMPLE_MS = 100;

export class RateMonitor {
  private sampleStart: number;
  private sampleBytes = 0;
  private readonly start: number;
  /** Bytes transferred since creation. */
  total = 0;

  constructor(
    /** Bytes per second; 0 or less disables the limit. */
    public rate: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.start = this.now();
    this.sampleStart = this.start;
  }

  private roll(now: number): void {
    const elapsed = now - this.sampleStart;
    if (elapsed >= SAMPLE_MS) {
      this.sampleStart = now - (elapsed % SAMPLE_MS);
      this.sampleBytes = 0;
    }
  }

  /** Milliseconds to wait before the next transfer (0 = go). */
  delay(): number {
    if (this.rate <= 0) return 0;
    const now = this.now();
    this.roll(now);
    const limit = Math.max(1, Math.round(this.rate * (SAMPLE_MS / 1000)));
    if (this.sampleBytes < limit) return 0;
    return Math.max(1, Math.ceil(this.sampleStart + SAMPLE_MS - now));
  }

  update(n: number): void {
    this.roll(this.now());
    this.sampleBytes += n;
    this.total += n;
  }

  /** Average bytes per second since creation. */
  averageRate(): number {
    const secs = (this.now() - this.start) / 1000;
    return secs > 0 ? this.total / secs : 0;
  }
}
