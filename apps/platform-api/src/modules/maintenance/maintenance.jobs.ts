import { Inject, Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { MaintenanceJob, type WorkerHeartbeatPayload } from '@app/contracts';
import { answerHeartbeat, OnJob, REDIS, REDIS_SETTINGS, type RedisSettings } from '@app/service-kit';
import { MAINTENANCE_QUEUE } from './maintenance.queue.js';

@Injectable()
export class MaintenanceJobs {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_SETTINGS) private readonly settings: RedisSettings,
  ) {}

  @OnJob({ queue: MAINTENANCE_QUEUE, name: MaintenanceJob.WorkerHeartbeat })
  heartbeat(job: Job<WorkerHeartbeatPayload>): Promise<{ processedAt: string }> {
    return answerHeartbeat(this.redis, this.settings.queuePrefix, job);
  }
}
