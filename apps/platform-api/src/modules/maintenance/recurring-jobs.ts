import { Injectable } from '@nestjs/common';
import { PlatformMaintenanceJob, PlatformQueue } from '@app/contracts';
import { QueueService } from '@app/service-kit';

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
      .queue(PlatformQueue.Maintenance)
      .upsertJobScheduler(
        name,
        { every: purgeExpiredEveryMs },
        { name, opts: { removeOnComplete: { count: 10 }, removeOnFail: { count: 50 } } },
      );
  }
}
