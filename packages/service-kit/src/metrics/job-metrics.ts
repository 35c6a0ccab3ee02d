import { Injectable } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { MetricsRegistry } from './metrics-registry.js';

export type JobOutcome = 'completed' | 'failed';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * Job durations and failures of the worker process: `bullmq_job_duration_seconds{queue, name, outcome}`
 * (every attempt, completed or failed) and `bullmq_job_failures_total{queue, name}` (failed attempts,
 * retried or not). Fed by the WorkerRunner through `runWorker`.
 */
@Injectable()
export class JobMetrics {
  private readonly duration: Histogram<'queue' | 'name' | 'outcome'>;
  private readonly failures: Counter<'queue' | 'name'>;

  constructor(metrics: MetricsRegistry) {
    this.duration = new Histogram({
      name: 'bullmq_job_duration_seconds',
      help: 'Duration of job attempts by queue, job name and outcome',
      labelNames: ['queue', 'name', 'outcome'],
      buckets: BUCKETS,
      registers: [metrics.registry],
    });
    this.failures = new Counter({
      name: 'bullmq_job_failures_total',
      help: 'Failed job attempts by queue and job name (retried or final)',
      labelNames: ['queue', 'name'],
      registers: [metrics.registry],
    });
  }

  /** Records one attempt; the WorkerRunner's `onJobSettled` hook. */
  readonly observe = (queue: string, name: string, seconds: number, outcome: JobOutcome): void => {
    this.duration.observe({ queue, name, outcome }, seconds);
    if (outcome === 'failed') this.failures.inc({ queue, name });
  };
}
