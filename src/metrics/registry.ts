/**
 * A small Prometheus registry: gauges, counters and histograms rendered in the text exposition
 * format (version 0.0.4). Metrics are declared in one catalogue (metrics.ts) and are optional
 * everywhere they are used (`metrics?.x.set(…)`), as in lodestar and CometBFT.
 */

type Labels = Record<string, string>;

function renderLabels(labels: Labels): string {
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${String(labels[k]).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

/**
 * Rendered label sets by their keys and values as given: a series is counted on every RPC call
 * (method × transport), and sorting and escaping its labels each time was ~19 µs a request of the
 * RPC thread. Label sets are few (bounded by the methods); past LABEL_CACHE_MAX they are rendered
 * each time.
 */
const labelCache = new Map<string, string>();
const LABEL_CACHE_MAX = 10_000;

function labelKey(labels: Labels | undefined): string {
  if (!labels) return '';
  let raw = '';
  // Length-prefixed, so that no two label sets give the same text.
  for (const k in labels) {
    const v = String(labels[k]);
    raw += `${k.length}:${k}${v.length}:${v}`;
  }
  let key = labelCache.get(raw);
  if (key === undefined) {
    key = renderLabels(labels);
    if (labelCache.size < LABEL_CACHE_MAX) labelCache.set(raw, key);
  }
  return key;
}

interface Metric {
  name: string;
  help: string;
  render(): string;
}

export class Gauge implements Metric {
  private values = new Map<string, number>();
  constructor(readonly name: string, readonly help: string) {}
  set(v: number, labels?: Labels): void {
    this.values.set(labelKey(labels), v);
  }
  inc(by = 1, labels?: Labels): void {
    const k = labelKey(labels);
    this.values.set(k, (this.values.get(k) ?? 0) + by);
  }
  get(labels?: Labels): number | undefined {
    return this.values.get(labelKey(labels));
  }
  render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} gauge\n`;
    for (const [k, v] of this.values) out += `${this.name}${k} ${v}\n`;
    return out;
  }
}

export class Counter implements Metric {
  private values = new Map<string, number>();
  constructor(readonly name: string, readonly help: string) {}
  inc(by = 1, labels?: Labels): void {
    const k = labelKey(labels);
    this.values.set(k, (this.values.get(k) ?? 0) + by);
  }
  get(labels?: Labels): number {
    return this.values.get(labelKey(labels)) ?? 0;
  }
  render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} counter\n`;
    if (this.values.size === 0) out += `${this.name} 0\n`;
    for (const [k, v] of this.values) out += `${this.name}${k} ${v}\n`;
    return out;
  }
}

/** One labelled series of a histogram. */
interface Series {
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram implements Metric {
  private readonly series = new Map<string, Series>();
  constructor(readonly name: string, readonly help: string, readonly buckets: number[]) {}
  observe(v: number, labels?: Labels): void {
    const k = labelKey(labels);
    let s = this.series.get(k);
    if (s === undefined) {
      s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(k, s);
    }
    s.sum += v;
    s.count++;
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]!) s.counts[i]!++;
  }
  /** Observations so far (of one series). */
  count(labels?: Labels): number {
    return this.series.get(labelKey(labels))?.count ?? 0;
  }
  render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} histogram\n`;
    // An unlabelled histogram shows its zero buckets before the first observation.
    const all = this.series.size === 0 ? new Map<string, Series>([['', { counts: this.buckets.map(() => 0), sum: 0, count: 0 }]]) : this.series;
    for (const [k, s] of all) {
      const inner = k === '' ? '' : `${k.slice(1, -1)},`;
      this.buckets.forEach((b, i) => {
        out += `${this.name}_bucket{${inner}le="${b}"} ${s.counts[i]}\n`;
      });
      out += `${this.name}_bucket{${inner}le="+Inf"} ${s.count}\n${this.name}_sum${k} ${s.sum}\n${this.name}_count${k} ${s.count}\n`;
    }
    return out;
  }
}

export class Registry {
  private metrics: Metric[] = [];
  register<T extends Metric>(m: T): T {
    this.metrics.push(m);
    return m;
  }
  render(): string {
    return this.metrics.map((m) => m.render()).join('');
  }
}
