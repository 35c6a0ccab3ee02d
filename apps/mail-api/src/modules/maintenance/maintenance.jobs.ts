import { Inject, Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { MailQueue, MaintenanceJob, type WorkerHeartbeatPayload } from '@app/contracts';
import { OnJob, REDIS, REDIS_SETTINGS, type RedisSettings } from '@app/service-kit';

export function heartbeatKey(prefix: string, probeId: string): string {
  return `${prefix}:heartbeat:${probeId}`;
}

/** Answers a heartbeat probe: proves that a worker of this deployment consumes the queue. */
@Injectable()
export class MaintenanceJobs {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_SETTINGS) private readonly settings: RedisSettings,
  ) {}

  @OnJob({ queue: MailQueue.Maintenance, name: MaintenanceJob.WorkerHeartbeat })
  async heartbeat(job: Job<WorkerHeartbeatPayload>): Promise<{ processedAt: string }> {
    const processedAt = new Date().toISOString();
    // SET overwrites: a retried or duplicated job leaves the same single answer.
    await this.redis.set(
      heartbeatKey(this.settings.queuePrefix, job.data.probeId),
      JSON.stringify({ requestedAt: job.data.requestedAt, processedAt, pid: process.pid }),
      'EX',
      600,
    );
    return { processedAt };
  }
}
