/**
 * The shapes a component needs of a metric, so components take `metrics?` without importing the
 * registry (src/metrics/registry.ts's Gauge, Counter and Histogram fit them). Optional everywhere.
 */
export interface Gauge {
  set(v: number): void;
}
export interface Counter {
  inc(v?: number): void;
}
export interface Histogram {
  observe(v: number): void;
}
