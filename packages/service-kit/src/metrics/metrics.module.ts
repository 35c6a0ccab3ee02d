import { DynamicModule, Global, Module } from '@nestjs/common';
import { HttpMetrics } from './http-metrics.js';
import { JobMetrics } from './job-metrics.js';
import { MetricsController } from './metrics.controller.js';
import { METRICS_OPTIONS, MetricsRegistry, type MetricsOptions } from './metrics-registry.js';
import { QueueCatalog } from './queue-catalog.js';
import { QueueMetrics } from './queue-metrics.js';

@Global()
@Module({})
class MetricsCoreModule {}

/**
 * Prometheus metrics of one process: the registry with the default process metrics, HTTP latency
 * (installed by `createHttpApp` when this module is present), job durations and failures (fed by
 * `runWorker`), queue depth and age (read at scrape time). Needs the QueueModule's Redis.
 * With `endpoint: true` (the APIs) it serves `GET /metrics`; workers serve it on their own port.
 */
export class MetricsModule {
  static forRoot(options: MetricsOptions): DynamicModule {
    return {
      module: MetricsCoreModule,
      global: true,
      controllers: options.endpoint ? [MetricsController] : [],
      providers: [{ provide: METRICS_OPTIONS, useValue: options }, MetricsRegistry, HttpMetrics, JobMetrics, QueueCatalog, QueueMetrics],
      exports: [METRICS_OPTIONS, MetricsRegistry, HttpMetrics, JobMetrics, QueueCatalog],
    };
  }
}
