import { Injectable } from '@nestjs/common';
import { PlatformMaintenanceJob, PlatformQueue } from '@app/contracts';
import { QueueService } from '@app/service-kit';

/**
 * The worker's repeatable jobs. Job schedulers are upserted by id, so every worker process can call
 * this at start: N workers still make one schedule.
 */
@Injectable()
export class RecurringJobs {
  constructor(private readonly queues: QueueService) {}

  async schedule(): Promise<void> {
    const name = PlatformMaintenanceJob.PurgeExpired;
    await this.queues
      .queue(PlatformQueue.Maintenance)
      .upsertJobScheduler(name, { every: 3600_000 }, { name, opts: { removeOnComplete: { count: 10 }, removeOnFail: { count: 50 } } });
  }
}
