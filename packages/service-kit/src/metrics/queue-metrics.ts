import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Gauge } from 'prom-client';
import type { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { QueueService } from '../queue/queue.service.js';
import { REDIS, REDIS_SETTINGS, type RedisSettings } from '../queue/redis.js';
import { METRICS_OPTIONS, MetricsRegistry, type MetricsOptions } from './metrics-registry.js';
import { QueueCatalog } from './queue-catalog.js';

interface QueuesSnapshot {
  /** This instance holds the lease: it exports the queue gauges. */
  exporter: boolean;
  queues: Map<string, { counts: Record<string, number>; age: number }>;
}

/** How long the exporter lease lasts without a scrape renewing it: a dead holder is replaced within it. */
export const QUEUE_EXPORTER_LEASE_MS = 60_000;

/** Takes the lease when free or renews it when ours: 1 when this instance holds it now. */
const ACQUIRE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * One exporter of the queue gauges per app (API and worker pods of the app together): a lease in
 * Redis taken or renewed at each scrape. Every pod reading the same queues would otherwise export
 * the same series many times over.
 */
class ExporterLease {
  private readonly holder = randomUUID();

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
  ) {}

  async held(): Promise<boolean> {
    return (await this.redis.eval(ACQUIRE, 1, this.key, this.holder, String(QUEUE_EXPORTER_LEASE_MS))) === 1;
  }

  async release(): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.key, this.holder);
  }
}

/** Job states counted per queue (BullMQ's names). */
export const QUEUE_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'waiting-children', 'failed', 'completed'] as const;

/**
 * Queue depth and age, read from Redis when Prometheus scrapes: `bullmq_queue_jobs{queue, state}` and
 * `bullmq_queue_oldest_waiting_seconds{queue}`, the age of the job at the head of the waiting lists
 * (FIFO: the oldest waiting job; prioritized: the next one to run), 0 when nothing waits. Only the
 * instance holding the app's exporter lease exports them (`bullmq_queue_exporter` is 1 there, 0
 * elsewhere), so each series exists once per app; `max by (queue)` still reads them right across a
 * handover. A failed read leaves the series absent (never zeros).
 */
@Injectable()
export class QueueMetrics implements OnModuleDestroy {
  private readonly logger = new Logger(QueueMetrics.name);
  private readonly lease: ExporterLease;

  constructor(
    metrics: MetricsRegistry,
    catalog: QueueCatalog,
    queues: QueueService,
    @Inject(REDIS) redis: Redis,
    @Inject(REDIS_SETTINGS) settings: RedisSettings,
    @Inject(METRICS_OPTIONS) options: MetricsOptions,
  ) {
    const lease = (this.lease = new ExporterLease(redis, `${settings.queuePrefix}:metrics-exporter:${options.queueNamePrefix ?? ''}`));
    const read = async (): Promise<QueuesSnapshot> => {
      if (!(await lease.held())) return { exporter: false, queues: new Map() };
      const names = await catalog.names();
      const entries = await Promise.all(names.map(async (name) => [name, await snapshot(queues.queue(name))] as const));
      return { exporter: true, queues: new Map(entries) };
    };
    // One read per scrape, shared by the gauges (their collect() run in the same registry.metrics()).
    let pending: Promise<QueuesSnapshot | null> | null = null;
    const shared = () => {
      pending ??= read()
        .catch((err: unknown) => {
          this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'queue metrics unavailable');
          return null;
        })
        .finally(() => setImmediate(() => (pending = null)));
      return pending;
    };
    new Gauge({
      name: 'bullmq_queue_exporter',
      help: '1 on the one instance of the app that exports the queue gauges (it holds the Redis lease), 0 elsewhere',
      registers: [metrics.registry],
      async collect() {
        const snapshot = await shared();
        this.reset();
        if (snapshot) this.set(snapshot.exporter ? 1 : 0);
      },
    });
    new Gauge({
      name: 'bullmq_queue_jobs',
      help: 'Jobs per queue and state',
      labelNames: ['queue', 'state'],
      registers: [metrics.registry],
      async collect() {
        this.reset();
        for (const [queue, { counts }] of (await shared())?.queues ?? []) {
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
        for (const [queue, { age }] of (await shared())?.queues ?? []) this.set({ queue }, age);
      },
    });
  }

  /** A pod going away hands the export over at the next scrape of another one, not after the lease expires. */
  async onModuleDestroy(): Promise<void> {
    await this.lease.release().catch(() => undefined);
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
