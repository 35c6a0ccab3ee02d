import { Inject, Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';

export interface MetricsOptions {
  /** `platform-api`, `mail-worker`, ...: the `service` label of every series of the process. */
  service: string;
  /** Serve `GET /metrics` from the app's HTTP server (the APIs); workers serve it on their own port. */
  endpoint?: boolean;
  /** Only queues whose name starts with this are measured and shown (`mail-`, `platform-`): both apps may share one Redis prefix. */
  queueNamePrefix?: string;
  /** `METRICS_TOKEN`: when set, `/metrics` (API and worker port) needs `Authorization: Bearer <token>` (401 otherwise). */
  token?: string | null;
  /** The app's version (its package.json): the `version` label of `build_info`. */
  version?: string;
}

export const METRICS_OPTIONS = Symbol('METRICS_OPTIONS');

/**
 * The process's one Prometheus registry (prom-client), with the default process metrics (CPU, memory,
 * event loop lag, GC, handles) and a `service` label on every series. Modules add their own metrics
 * with `registers: [metrics.registry]`.
 */
@Injectable()
export class MetricsRegistry {
  readonly registry = new Registry();

  constructor(@Inject(METRICS_OPTIONS) readonly options: MetricsOptions) {
    this.registry.setDefaultLabels({ service: options.service });
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: 'build_info',
      help: 'Always 1: the version of the app and the Node.js it runs on, as labels',
      labelNames: ['version', 'node_version'],
      registers: [this.registry],
    }).set({ version: options.version ?? 'unknown', node_version: process.version }, 1);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of every metric (collectors run now). */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
