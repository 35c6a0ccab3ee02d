import { Injectable } from '@nestjs/common';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { OnJob, type OwnsQueueWorkerOptions, type QueueWorkerOptions } from '@app/service-kit';
import { projectScope } from '../../core/scope/project-scope.js';
import { MAINTENANCE_QUEUE, MailMaintenanceJob } from '../maintenance/maintenance.queue.js';
import { CampaignPipeline, type BatchOutcome, type DispatchOutcome } from './campaign-pipeline.service.js';
import { CampaignSweep, type SweepResult } from './campaign-sweep.service.js';
import { CAMPAIGN_QUEUE, CampaignJob, type CampaignBatchPayload, type CampaignDispatchPayload } from './campaigns.queue.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function checkPayload(job: Job<CampaignDispatchPayload>): void {
  if (!UUID.test(String(job.data?.campaignId)) || !UUID.test(String(job.data?.projectId))) {
    throw new UnrecoverableError(`malformed campaign job ${job.id}`);
  }
}

/** Puts the job back, delayed until `at` (not an attempt: nothing failed), and leaves the handler. */
async function delayUntil(job: Job, at: number): Promise<never> {
  await job.moveToDelayed(at, job.token);
  throw new DelayedError();
}

/** Processors of the campaign queue (the pipeline's steps and its sweep), run by the worker. */
@Injectable()
export class CampaignsJobs implements OwnsQueueWorkerOptions {
  constructor(
    private readonly pipeline: CampaignPipeline,
    private readonly sweeper: CampaignSweep,
  ) {}

  /**
   * A worker that dies holding a batch gives it back after 15 s, not BullMQ's default 30 s (+ its 30 s
   * stall check). A long job (a big audience snapshot) keeps its lock: BullMQ renews it while it runs.
   */
  queueWorkerOptions(queue: string): QueueWorkerOptions | undefined {
    return queue === CAMPAIGN_QUEUE ? { lockDuration: 15_000, stalledInterval: 7_500 } : undefined;
  }

  /** Fires at the scheduled time (or at once); a job that fires early (clock skew) waits until the time. */
  @OnJob({ queue: CAMPAIGN_QUEUE, name: CampaignJob.Dispatch })
  async dispatch(job: Job<CampaignDispatchPayload>): Promise<DispatchOutcome> {
    checkPayload(job);
    const result = await this.pipeline.dispatch(projectScope(job.data.projectId), job.data.campaignId);
    if (result.outcome === 'not-due') return delayUntil(job, Math.max(result.dueAt.getTime(), Date.now()) + 50);
    return result;
  }

  @OnJob({ queue: CAMPAIGN_QUEUE, name: CampaignJob.Batch })
  async batch(job: Job<CampaignBatchPayload>): Promise<BatchOutcome> {
    checkPayload(job);
    if (!Number.isInteger(job.data.batch) || job.data.batch < 0) throw new UnrecoverableError(`malformed campaign job ${job.id}`);
    const result = await this.pipeline.planBatch(projectScope(job.data.projectId), job.data.campaignId, job.data.batch);
    if (result.outcome === 'wait') return delayUntil(job, Date.now() + result.ms);
    return result;
  }

  /** Every MAIL_CAMPAIGN_SWEEP_SECONDS (RecurringJobs): lost jobs back from Postgres, finished campaigns completed. */
  @OnJob({ queue: MAINTENANCE_QUEUE, name: MailMaintenanceJob.SweepCampaigns })
  sweep(): Promise<SweepResult> {
    return this.sweeper.run();
  }
}
