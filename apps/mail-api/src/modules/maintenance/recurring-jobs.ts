import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { QueueService } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import { MAINTENANCE_JOB_OPTIONS, MAINTENANCE_QUEUE, MailMaintenanceJob } from './maintenance.queue.js';

/**
 * The worker's repeatable jobs. Job schedulers are upserted by id, so every worker process can call
 * this at start: N workers still make one schedule. Schedulers live in Redis: after `schedule()`, the
 * worker checks every MAIL_CAMPAIGN_SWEEP_SECONDS that they are still there and upserts them again if
 * Redis lost them (a flush, a failover to an empty replica), so the sweeps that rebuild lost jobs
 * from Postgres keep running without a worker restart.
 */
@Injectable()
export class RecurringJobs implements OnApplicationShutdown {
  private readonly logger = new Logger(RecurringJobs.name);
  private watch?: NodeJS.Timeout;

  constructor(
    private readonly queues: QueueService,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
  ) {}

  async schedule(): Promise<void> {
    await this.upsertAll();
    this.watch ??= setInterval(() => void this.restoreIfLost(), this.config.campaignSweepSeconds * 1000).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.watch);
  }

  private async restoreIfLost(): Promise<void> {
    try {
      if (await this.queues.queue(MAINTENANCE_QUEUE).getJobScheduler(MailMaintenanceJob.RequeueEmails)) return;
      this.logger.warn('recurring job schedules are missing from Redis; scheduling them again');
      await this.upsertAll();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'checking the recurring job schedules failed');
    }
  }

  private async upsertAll(): Promise<void> {
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
    await queue.upsertJobScheduler(
      MailMaintenanceJob.SweepWorkflows,
      every(this.config.workflows.sweepSeconds),
      job(MailMaintenanceJob.SweepWorkflows),
    );
    await queue.upsertJobScheduler(
      MailMaintenanceJob.SweepCampaigns,
      every(this.config.campaignSweepSeconds),
      job(MailMaintenanceJob.SweepCampaigns),
    );
  }
}
