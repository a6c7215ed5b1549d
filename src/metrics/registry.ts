/**
 * A small Prometheus registry: gauges, counters and histograms rendered in the text exposition
 * format (version 0.0.4). Metrics are declared in one catalogue (metrics.ts) and are optional
 * everywhere they are used (`metrics?.x.set(…)`), as in lodestar and CometBFT.
 */

type Labels = Record<string, string>;

function labelKey(labels: Labels | undefined): string {
  if (!labels) return '';
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${String(labels[k]).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
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

export class Histogram implements Metric {
  private counts: number[];
  private sum = 0;
  private count = 0;
  constructor(readonly name: string, readonly help: string, readonly buckets: number[]) {
    this.counts = buckets.map(() => 0);
  }
  observe(v: number): void {
    this.sum += v;
    this.count++;
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]!) this.counts[i]!++;
  }
  render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} histogram\n`;
    this.buckets.forEach((b, i) => {
      out += `${this.name}_bucket{le="${b}"} ${this.counts[i]}\n`;
    });
    out += `${this.name}_bucket{le="+Inf"} ${this.count}\n${this.name}_sum ${this.sum}\n${this.name}_count ${this.count}\n`;
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
