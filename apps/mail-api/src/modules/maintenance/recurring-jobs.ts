import { Inject, Injectable } from '@nestjs/common';
import { QueueService } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import { MAINTENANCE_JOB_OPTIONS, MAINTENANCE_QUEUE, MailMaintenanceJob } from './maintenance.queue.js';

/**
 * The worker's repeatable jobs. Job schedulers are upserted by id, so every worker process can call
 * this at start: N workers still make one schedule.
 */
@Injectable()
export class RecurringJobs {
  constructor(
    private readonly queues: QueueService,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
  ) {}

  async schedule(): Promise<void> {
    const queue = this.queues.queue(MAINTENANCE_QUEUE);
    const every = (seconds: number) => ({ every: seconds * 1000 });
    const job = (name: string) => ({ name, opts: MAINTENANCE_JOB_OPTIONS });
    await queue.upsertJobScheduler(
      MailMaintenanceJob.RecheckDomains,
      every(this.config.domainRecheckSeconds),
      job(MailMaintenanceJob.RecheckDomains),
    );
    await queue.upsertJobScheduler(MailMaintenanceJob.RequeueEmails, every(60), job(MailMaintenanceJob.RequeueEmails));
    await queue.upsertJobScheduler(MailMaintenanceJob.PurgeIdempotencyKeys, every(3600), job(MailMaintenanceJob.PurgeIdempotencyKeys));
    await queue.upsertJobScheduler(MailMaintenanceJob.PurgeSendRequests, every(3600), job(MailMaintenanceJob.PurgeSendRequests));
  }
}
