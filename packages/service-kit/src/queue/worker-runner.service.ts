import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { UnrecoverableError, Worker, type Job, type WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { ON_JOB, type JobRoute } from './on-job.decorator.js';
import { createBlockingClient, REDIS_SETTINGS, type RedisSettings } from './redis.js';

type JobHandler = (job: Job) => Promise<unknown>;

/** Per-queue worker settings (limiter, concurrency, lock duration, ...); connection and prefix are the runner's. */
export type QueueWorkerOptions = Partial<Omit<WorkerOptions, 'connection' | 'prefix' | 'autorun'>>;

/**
 * Implemented by the jobs class that owns a queue when its worker needs settings of its own (a rate
 * limiter, a lock duration): the runner asks it for each queue it has `@OnJob` handlers on.
 */
export interface OwnsQueueWorkerOptions {
  queueWorkerOptions(queue: string): QueueWorkerOptions | undefined;
  /**
   * Called once the queue's worker runs in this process (optional): what must run only where the
   * queue's jobs run (a feeder, a watch that adjusts the worker's settings at run time) starts here.
   */
  queueWorkerStarted?(queue: string, worker: Worker): void;
}

function ownsQueueWorkerOptions(instance: object): instance is OwnsQueueWorkerOptions {
  return typeof (instance as Partial<OwnsQueueWorkerOptions>).queueWorkerOptions === 'function';
}

export interface WorkerRunnerStartOptions {
  /** Default concurrency of every queue's worker. */
  concurrency?: number;
  /** Only these queues (default: every queue with a handler). */
  queues?: string[];
  /** Overrides for single queues, above what the owning jobs class declares (tests). */
  queueOptions?: Record<string, QueueWorkerOptions>;
  /** Called once per job attempt when it settles (metrics: `JobMetrics.observe`). */
  onJobSettled?: (queue: string, name: string, seconds: number, outcome: 'completed' | 'failed') => void;
}

/**
 * Consumer side: finds every `@OnJob` method and runs one BullMQ worker per queue that dispatches by
 * job name. Started only by the worker entry (`worker.ts`). On shutdown each worker finishes its
 * active jobs before closing; jobs it had not started stay in Redis for the next worker.
 */
@Injectable()
export class WorkerRunner implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerRunner.name);
  private readonly workers: Worker[] = [];
  /** BullMQ does not close a connection it was handed; we do, after the workers. */
  private readonly connections: Redis[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    @Inject(REDIS_SETTINGS) private readonly settings: RedisSettings,
  ) {}

  /** Worker settings the owning jobs classes declare, by queue (filled by `discoverHandlers`). */
  private readonly ownedOptions = new Map<string, QueueWorkerOptions>();
  /** The jobs class that declared each queue's settings (told when its worker starts). */
  private readonly owners = new Map<string, OwnsQueueWorkerOptions>();

  /** Every (queue -> job name -> handler) the app's modules declare. */
  discoverHandlers(): Map<string, Map<string, JobHandler>> {
    const byQueue = new Map<string, Map<string, JobHandler>>();
    this.ownedOptions.clear();
    this.owners.clear();
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as Record<string, (job: Job) => Promise<unknown>> | null;
      if (!prototype) continue;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const route = this.reflector.get<JobRoute | undefined>(ON_JOB, prototype[method]);
        if (!route) continue;
        const handlers = byQueue.get(route.queue) ?? new Map<string, JobHandler>();
        if (handlers.has(route.name)) throw new Error(`two handlers for job ${route.queue}/${route.name}`);
        handlers.set(route.name, (job) => (instance[method] as JobHandler).call(instance, job));
        byQueue.set(route.queue, handlers);
        const owned = ownsQueueWorkerOptions(instance) ? instance.queueWorkerOptions(route.queue) : undefined;
        if (owned) this.ownedOptions.set(route.queue, owned);
        if (owned && ownsQueueWorkerOptions(instance)) this.owners.set(route.queue, instance);
      }
    }
    return byQueue;
  }

  async start(options: WorkerRunnerStartOptions = {}): Promise<string[]> {
    const handlers = this.discoverHandlers();
    const queues = options.queues ?? [...handlers.keys()];
    for (const queue of queues) {
      const routes = handlers.get(queue);
      if (!routes) continue;
      const connection = createBlockingClient(this.settings.url);
      this.connections.push(connection);
      const worker = new Worker(
        queue,
        async (job) => {
          const handle = routes.get(job.name);
          if (!handle) throw new UnrecoverableError(`no handler for job ${queue}/${job.name}`);
          const settled = options.onJobSettled;
          if (!settled) return handle(job);
          const started = process.hrtime.bigint();
          const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
          try {
            const result = await handle(job);
            settled(queue, job.name, seconds(), 'completed');
            return result;
          } catch (err) {
            settled(queue, job.name, seconds(), 'failed');
            throw err;
          }
        },
        {
          connection,
          prefix: this.settings.queuePrefix,
          concurrency: options.concurrency ?? 4,
          ...this.ownedOptions.get(queue),
          ...options.queueOptions?.[queue],
          autorun: true,
        },
      );
      worker.on('failed', (job, err) =>
        this.logger.warn({ queue, job: job?.name, jobId: job?.id, attempt: job?.attemptsMade, err: err.message }, 'job failed'),
      );
      worker.on('error', (err) => this.logger.error({ queue, err: err.message }, 'worker error'));
      await worker.waitUntilReady();
      this.workers.push(worker);
      this.owners.get(queue)?.queueWorkerStarted?.(queue, worker);
    }
    return queues.filter((q) => handlers.has(q));
  }

  /**
   * Before any module's shutdown hook: the workers stop taking jobs and let the active ones finish
   * while everything those jobs use (database pools, mail transports, ...) is still open. Closed in
   * `onApplicationShutdown`, a worker could run a job against a pool another module had already closed,
   * and a job waiting on a closed resource would keep the process from ever exiting.
   */
  async beforeApplicationShutdown(): Promise<void> {
    // close() without force waits for the active jobs to finish.
    await Promise.all(this.workers.map((w) => w.close()));
    this.workers.length = 0;
  }

  onApplicationShutdown(): void {
    for (const connection of this.connections.splice(0)) connection.disconnect();
  }
}
