import { Injectable, Logger } from '@nestjs/common';
import { Gauge } from 'prom-client';
import type { Job, Queue } from 'bullmq';
import { QueueService } from '../queue/queue.service.js';
import { MetricsRegistry } from './metrics-registry.js';
import { QueueCatalog } from './queue-catalog.js';

/** Job states counted per queue (BullMQ's names). */
export const QUEUE_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'waiting-children', 'failed', 'completed'] as const;

/**
 * Queue depth and age, read from Redis when Prometheus scrapes: `bullmq_queue_jobs{queue, state}` and
 * `bullmq_queue_oldest_waiting_seconds{queue}`, the age of the job at the head of the waiting lists
 * (FIFO: the oldest waiting job; prioritized: the next one to run), 0 when nothing waits. Every
 * instance reports the same numbers: aggregate with `max by (queue)`, not `sum`.
 */
@Injectable()
export class QueueMetrics {
  private readonly logger = new Logger(QueueMetrics.name);

  constructor(metrics: MetricsRegistry, catalog: QueueCatalog, queues: QueueService) {
    const read = async (): Promise<Map<string, { counts: Record<string, number>; age: number }>> => {
      const names = await catalog.names();
      const entries = await Promise.all(names.map(async (name) => [name, await snapshot(queues.queue(name))] as const));
      return new Map(entries);
    };
    // One read per scrape, shared by the two gauges (both collect() run in the same registry.metrics()).
    let pending: Promise<Map<string, { counts: Record<string, number>; age: number }>> | null = null;
    const shared = () => {
      pending ??= read().finally(() => setImmediate(() => (pending = null)));
      return pending;
    };
    const onError = (err: unknown) => {
      this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'queue metrics unavailable');
      return new Map<string, { counts: Record<string, number>; age: number }>();
    };
    new Gauge({
      name: 'bullmq_queue_jobs',
      help: 'Jobs per queue and state',
      labelNames: ['queue', 'state'],
      registers: [metrics.registry],
      async collect() {
        this.reset();
        for (const [queue, { counts }] of await shared().catch(onError)) {
          for (const state of QUEUE_STATES) this.set({ queue, state }, counts[state] ?? 0);
        }
      },
    });
    new Gauge({
      name: 'bullmq_queue_oldest_waiting_seconds',
      help: 'Age in seconds of the job at the head of the waiting lists (0 when none waits)',
      labelNames: ['queue'],
      registers: [metrics.registry],
      async collect() {
        this.reset();
        for (const [queue, { age }] of await shared().catch(onError)) this.set({ queue }, age);
      },
    });
  }
}

async function snapshot(queue: Queue): Promise<{ counts: Record<string, number>; age: number }> {
  const [counts, heads] = await Promise.all([
    queue.getJobCounts(...QUEUE_STATES),
    queue.getJobs(['waiting', 'prioritized'], 0, 0, true) as Promise<(Job | undefined)[]>,
  ]);
  const oldest = Math.min(...heads.filter((job): job is Job => Boolean(job)).map((job) => job.timestamp));
  return { counts, age: Number.isFinite(oldest) ? Math.max(0, (Date.now() - oldest) / 1000) : 0 };
}
