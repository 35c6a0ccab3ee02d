import { Injectable } from '@nestjs/common';
import { QueueService } from '@app/service-kit';
import { MAINTENANCE_JOB_OPTIONS, MAINTENANCE_QUEUE, PlatformMaintenanceJob } from './maintenance.queue.js';

/** How often the purge of expired rows runs (ms). */
export const PURGE_EXPIRED_EVERY_MS = 3600_000;

/**
 * The worker's repeatable jobs. Job schedulers are upserted by id, so every worker process can call
 * this at start: N workers still make one schedule.
 */
@Injectable()
export class RecurringJobs {
  constructor(private readonly queues: QueueService) {}

  /** `purgeExpiredEveryMs` exists for tests, which cannot wait an hour for the second run. */
  async schedule({ purgeExpiredEveryMs = PURGE_EXPIRED_EVERY_MS }: { purgeExpiredEveryMs?: number } = {}): Promise<void> {
    const name = PlatformMaintenanceJob.PurgeExpired;
    await this.queues
      .queue(MAINTENANCE_QUEUE)
      .upsertJobScheduler(name, { every: purgeExpiredEveryMs }, { name, opts: MAINTENANCE_JOB_OPTIONS });
  }
}
