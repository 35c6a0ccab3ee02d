import type { Metric, Registry } from 'prom-client';

type LabelName = 'method' | 'route' | 'status_code';
type Labels = Record<LabelName, string>;

/** One exported sample, as prom-client's registry formats it (`sharedLabels` follow `labels`). */
interface Sample {
  metricName: string;
  value: number;
  labels: Record<string, string | number>;
  sharedLabels: Labels;
}

interface Series {
  labels: Labels;
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  counts: number[];
  sum: number;
  count: number;
}

/**
 * The HTTP latency histogram (`<name>{method, route, status_code}`), observed on every request. It
 * keeps its own series and hands them to prom-client's registry in the format of prom-client's
 * `Histogram` (same buckets, cumulative, `+Inf`, `_sum`, `_count`, registry default labels).
 * prom-client's `observe` validates and hashes the labels object on every call, which measured about
 * 1 us per request (4% of `GET /healthz`, bench/README.md "HTTP stack"); here a request costs three
 * Map lookups by strings it already has (no key is built per request) and one bucket increment.
 */
export class RouteLatencyHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  /** Route → method → status code → its series; `series` keeps them in order of appearance for export. */
  private readonly index = new Map<string, Map<string, Map<string, Series>>>();
  private readonly series: Series[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  observe(method: string, route: string, statusCode: string, seconds: number): void {
    let byMethod = this.index.get(route);
    if (!byMethod) this.index.set(route, (byMethod = new Map<string, Map<string, Series>>()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map<string, Series>()));
    let series = byStatus.get(statusCode);
    if (!series) {
      series = {
        labels: { method, route, status_code: statusCode },
        counts: new Array<number>(this.buckets.length + 1).fill(0),
        sum: 0,
        count: 0,
      };
      byStatus.set(statusCode, series);
      this.series.push(series);
    }
    let bucket = 0;
    while (bucket < this.buckets.length && seconds > this.buckets[bucket]) bucket++;
    series.counts[bucket] = series.counts[bucket] + 1;
    series.sum += seconds;
    series.count += 1;
  }

  /** What the registry renders as text (prom-client's `getForPromString` contract). */
  getForPromString(): { name: string; help: string; type: string; aggregator: string; values: Sample[] } {
    const values: Sample[] = [];
    for (const series of this.series) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += series.counts[i];
        values.push({ metricName: `${this.name}_bucket`, value: cumulative, labels: { le: bound }, sharedLabels: series.labels });
      });
      values.push(
        { metricName: `${this.name}_bucket`, value: series.count, labels: { le: '+Inf' }, sharedLabels: series.labels },
        { metricName: `${this.name}_sum`, value: series.sum, labels: {}, sharedLabels: series.labels },
        { metricName: `${this.name}_count`, value: series.count, labels: {}, sharedLabels: series.labels },
      );
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** The JSON form (`registry.getMetricsAsJSON()`): each sample's labels in one object. */
  get(): { name: string; help: string; type: string; aggregator: string; values: Omit<Sample, 'sharedLabels'>[] } {
    const data = this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...sample }) => ({ ...sample, labels: { ...labels, ...sharedLabels } })),
    };
  }

  reset(): void {
    this.index.clear();
    this.series.length = 0;
  }
}
