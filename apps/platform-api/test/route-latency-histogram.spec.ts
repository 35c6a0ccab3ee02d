import { describe, expect, it } from '@jest/globals';
import { Histogram, Registry } from 'prom-client';
import { RouteLatencyHistogram } from '@app/service-kit';

const BUCKETS = [0.001, 0.01, 0.1, 1];

/** The same observations into prom-client's Histogram and into RouteLatencyHistogram, each in its own registry. */
function both(observations: [string, string, string, number][]) {
  const reference = new Registry();
  reference.setDefaultLabels({ service: 'test' });
  const histogram = new Histogram({
    name: 'latency',
    help: 'help text',
    labelNames: ['method', 'route', 'status_code'],
    buckets: BUCKETS,
    registers: [reference],
  });
  const ours = new Registry();
  ours.setDefaultLabels({ service: 'test' });
  const fast = new RouteLatencyHistogram('latency', 'help text', BUCKETS, ours);
  for (const [method, route, status, seconds] of observations) {
    histogram.observe({ method, route, status_code: status }, seconds);
    fast.observe(method, route, status, seconds);
  }
  return { reference, ours, fast };
}

describe('RouteLatencyHistogram (the HTTP latency histogram without prom-client per-call label hashing)', () => {
  const observations: [string, string, string, number][] = [
    ['GET', '/healthz', '200', 0.0004],
    ['GET', '/healthz', '200', 0.001], // on a bound: counted in it, as prom-client does
    ['GET', '/healthz', '200', 0.02],
    ['POST', '/contacts/:id', '422', 0.5],
    ['GET', '/contacts/:id', '499', 3], // above the last bound: +Inf only
    ['GET', 'weird "route" \\ with\nnewline', '500', 0.05], // label values escaped by the registry
  ];

  it('renders exactly the text prom-client renders for the same observations', async () => {
    const { reference, ours } = both(observations);
    expect(await ours.metrics()).toBe(await reference.metrics());
  });

  it('and the same JSON (without the exemplar fields of prom-client, always empty here)', async () => {
    const { reference, ours } = both(observations);
    const withoutExemplars = (await reference.getMetricsAsJSON()).map((metric) => ({
      ...metric,
      values: metric.values.map((value) => {
        const { exemplar: _exemplar, ...rest } = value as typeof value & { exemplar?: unknown };
        return rest;
      }),
    }));
    expect(await ours.getMetricsAsJSON()).toEqual(withoutExemplars);
  });

  it('resets with the registry', async () => {
    const { reference, ours } = both(observations);
    reference.resetMetrics();
    ours.resetMetrics();
    expect(await ours.metrics()).toBe(await reference.metrics());
  });
});
