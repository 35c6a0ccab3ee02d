import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { createBlockingClient, REDIS_SETTINGS, type RedisSettings } from './redis.js';

/** Producer side of the queues: one BullMQ `Queue` per name, sharing one connection. */
@Injectable()
export class QueueService implements OnApplicationShutdown {
  private readonly queues = new Map<string, Queue>();
  private connection?: Redis;

  constructor(@Inject(REDIS_SETTINGS) private readonly settings: RedisSettings) {}

  queue(name: string): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      this.connection ??= createBlockingClient(this.settings.url);
      queue = new Queue(name, { connection: this.connection, prefix: this.settings.queuePrefix });
      this.queues.set(name, queue);
    }
    return queue;
  }

  /**
   * Enqueues a job. Give a `jobId` derived from the work itself where duplicates are possible:
   * BullMQ ignores a second add with the same id, which keeps producers idempotent.
   */
  async add<T>(queue: string, name: string, data: T, options: JobsOptions = {}): Promise<string | undefined> {
    const job = await this.queue(queue).add(name, data, {
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: { age: 3600, count: 1000 },
      removeOnFail: { age: 7 * 24 * 3600 },
      ...options,
    });
    return job.id;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.connection?.disconnect();
  }
}
