/**
 * Counters and histograms whose updates are plain number arithmetic, exposed through a
 * prom-client {@link Registry} at scrape time.
 *
 * prom-client validates and hashes the labels of every `inc()` and `observe()` (a labelled child
 * too): measured at ~0.5 µs an update here, five updates a transition cost a tenth of the
 * transition itself. These keep their values in maps and typed arrays instead — an update is a
 * Map lookup and an add — and hand prom-client finished values when the registry is read, so the
 * text format, the content type and the registry stay prom-client's.
 */
import { Counter, type Registry } from 'prom-client';

/** A counter by one or two label values (`add(a)` / `add(a, b)`), exposed as a prom-client Counter. */
export class CounterTally {
  private readonly values = new Map<string, Map<string, number>>();

  /**
   * @param labelNames the one or two label names (none: an unlabelled counter, `add('')`).
   * @throws Error when `registry` has a metric of this name already (prom-client's rule).
   */
  constructor(registry: Registry, name: string, help: string, private readonly labelNames: readonly string[] = []) {
    const values = this.values;
    new Counter({
      name,
      help,
      labelNames: [...labelNames],
      registers: [registry],
      collect() {
        this.reset();
        for (const [a, inner] of values) {
          for (const [b, v] of inner) {
            const labels: Record<string, string> = {};
            if (labelNames[0] !== undefined) labels[labelNames[0]] = a;
            if (labelNames[1] !== undefined) labels[labelNames[1]] = b;
            this.inc(labels, v);
          }
        }
      },
    });
  }

  /** Adds `n` (default 1) to the series of label values `a` (and `b`). */
  add(a: string, b = '', n = 1): void {
    let inner = this.values.get(a);
    if (inner === undefined) this.values.set(a, (inner = new Map()));
    inner.set(b, (inner.get(b) ?? 0) + n);
  }
}

/** One series of a {@link HistogramTally}: counts per bucket (the last is +Inf), sum and count. */
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  /** Records one value (seconds, or whatever unit the bounds are in). */
  observe(v: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > (b[i] as number)) i++;
    this.counts[i] = (this.counts[i] ?? 0) + 1;
    this.sum += v;
    this.count++;
  }
}

/** A histogram by at most one label, exposed in the registry as a Prometheus histogram. */
export class HistogramTally {
  private readonly series = new Map<string, HistogramSeries>();

  /**
   * @param bounds the buckets' upper bounds, increasing; `+Inf` is added.
   * @param labelName the one label (none: an unlabelled histogram, `of('')`).
   * @throws Error when `registry` has a metric of this name already.
   */
  constructor(registry: Registry, name: string, help: string, private readonly bounds: readonly number[], labelName?: string) {
    const series = this.series;
    const metric = {
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      collect: () => undefined,
      get() {
        const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
        const all = labelName === undefined && series.size === 0 ? new Map([['', new HistogramSeries(bounds)]]) : series;
        for (const [label, s] of all) {
          const labels: Record<string, string> = labelName === undefined ? {} : { [labelName]: label };
          let cumulative = 0;
          s.counts.forEach((c, i) => {
            cumulative += c;
            values.push({ metricName: `${name}_bucket`, labels: { le: i < bounds.length ? (bounds[i] as number) : '+Inf', ...labels }, value: cumulative });
          });
          values.push({ metricName: `${name}_sum`, labels, value: s.sum });
          values.push({ metricName: `${name}_count`, labels, value: s.count });
        }
        return Promise.resolve({ name, help, type: 'histogram', aggregator: 'sum', values });
      },
    };
    // The registry reads only name, help, type and get(): a metric of prom-client's shape.
    registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** The series of label value `label` (created on first use; keep it: looking it up again costs a Map get). */
  of(label: string): HistogramSeries {
    let s = this.series.get(label);
    if (s === undefined) this.series.set(label, (s = new HistogramSeries(this.bounds)));
    return s;
  }
}
