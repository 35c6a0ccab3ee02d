import { Inject, Injectable } from '@nestjs/common';
import type { JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { QueueService, REDIS } from '@app/service-kit';

/**
 * The campaign pipeline's queue: `campaign.dispatch` (start a campaign: its audience snapshot), then one
 * `campaign.batch` per ~500 recipients (their email rows and delivery jobs on the email queue). The
 * periodic sweep is a maintenance job (MailMaintenanceJob.SweepCampaigns). Job ids are derived from the campaign, so an add that repeats one (a retried
 * request, the sweep) is a no-op; Postgres decides what each job still has to do.
 */
export const CAMPAIGN_QUEUE = 'mail-campaigns';

export const CampaignJob = {
  /** Start a campaign now, or at its `scheduled_at` (delayed): SENDING, audience snapshot, batch jobs. */
  Dispatch: 'campaign.dispatch',
  /** Plan one batch of recipients: render, insert their emails, enqueue their delivery. */
  Batch: 'campaign.batch',
} as const;

/** Recipients per batch job (one statement inserts their emails; rendering holds only them in memory). */
export const CAMPAIGN_BATCH_SIZE = 500;

export interface CampaignDispatchPayload {
  campaignId: string;
  projectId: string;
}

export interface CampaignBatchPayload {
  campaignId: string;
  projectId: string;
  /** 0-based: recipients with seq in (batch * size, (batch + 1) * size]. */
  batch: number;
}

/** The seq range [from, to] of a batch. */
export function batchRange(batch: number): { fromSeq: number; toSeq: number } {
  return { fromSeq: batch * CAMPAIGN_BATCH_SIZE + 1, toSeq: (batch + 1) * CAMPAIGN_BATCH_SIZE };
}

export function batchCountOf(recipients: number): number {
  return Math.ceil(recipients / CAMPAIGN_BATCH_SIZE);
}

/**
 * BullMQ job ids may hold `:` only as exactly three parts. A scheduled dispatch's id carries its time,
 * so rescheduling adds a new delayed job (the old one finds the campaign not due, or no longer
 * SCHEDULED, and does nothing).
 */
export function dispatchJobId(campaignId: string, scheduledAt: Date | null): string {
  return `campaign:${campaignId}:dispatch-${scheduledAt ? scheduledAt.getTime() : 'now'}`;
}

export function batchJobId(campaignId: string, batch: number): string {
  return `campaign:${campaignId}:batch-${batch}`;
}

/**
 * Retried with backoff (a database hiccup); a job that fails for good is removed, so the sweep can add
 * its id again (a failed job left in Redis would make that add a no-op).
 */
const JOB_OPTIONS: JobsOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: true,
};

/** Adds per round trip. */
const ADD_CHUNK = 1000;

/** Producer of the campaign queue. */
@Injectable()
export class CampaignsQueue {
  constructor(
    private readonly queues: QueueService,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  /** Starts the campaign now, or when `scheduledAt` comes (a delayed job; the job checks the time again). */
  async dispatch(campaign: { id: string; projectId: string; scheduledAt: Date | null }): Promise<void> {
    const delay = campaign.scheduledAt ? Math.max(0, campaign.scheduledAt.getTime() - Date.now()) : 0;
    const data: CampaignDispatchPayload = { campaignId: campaign.id, projectId: campaign.projectId };
    await this.queues
      .queue(CAMPAIGN_QUEUE)
      .add(CampaignJob.Dispatch, data, { ...JOB_OPTIONS, jobId: dispatchJobId(campaign.id, campaign.scheduledAt), delay });
  }

  /** One job per batch number; existing ids are left as they are. */
  async batches(campaign: { id: string; projectId: string }, batches: number[]): Promise<void> {
    const queue = this.queues.queue(CAMPAIGN_QUEUE);
    for (let i = 0; i < batches.length; i += ADD_CHUNK) {
      await queue.addBulk(
        batches.slice(i, i + ADD_CHUNK).map((batch) => ({
          name: CampaignJob.Batch,
          data: { campaignId: campaign.id, projectId: campaign.projectId, batch } satisfies CampaignBatchPayload,
          opts: { ...JOB_OPTIONS, jobId: batchJobId(campaign.id, batch) },
        })),
      );
    }
  }

  /** The batch numbers among `batches` that have a job in Redis (any state), one pipelined round trip per chunk. */
  async existingBatchJobs(campaignId: string, batches: number[]): Promise<Set<number>> {
    const queue = this.queues.queue(CAMPAIGN_QUEUE);
    const existing = new Set<number>();
    for (let i = 0; i < batches.length; i += ADD_CHUNK) {
      const chunk = batches.slice(i, i + ADD_CHUNK);
      const pipeline = this.redis.pipeline();
      for (const batch of chunk) pipeline.exists(queue.toKey(batchJobId(campaignId, batch)));
      const results = (await pipeline.exec()) ?? [];
      chunk.forEach((batch, j) => results[j]?.[1] === 1 && existing.add(batch));
    }
    return existing;
  }
}
