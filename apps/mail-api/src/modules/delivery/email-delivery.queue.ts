import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { JobsOptions } from 'bullmq';
import { QueueService, REDIS } from '@app/service-kit';
import type { ProjectScope } from '../../core/scope/project-scope.js';

/**
 * Outgoing emails, one job per email row. One queue whatever the source (transactional sends,
 * campaigns, workflows): its BullMQ limiter is the deployment-wide MAIL_RATE_PER_SECOND (the worker
 * options are EmailDeliveryJobs.queueWorkerOptions).
 */
export const EMAIL_QUEUE = 'mail-email';

export const MailEmailJob = {
  /** Deliver one email row (idempotent on the email id: a SENT or FAILED row is never sent again). */
  Deliver: 'email.deliver',
} as const;

export interface MailEmailDeliverPayload {
  emailId: string;
  projectId: string;
}

/**
 * BullMQ priorities of the email queue (lower runs first): transactional mail overtakes queued
 * campaign and workflow mail.
 */
export const MailEmailPriority = {
  Transactional: 1,
  Workflow: 5,
  Campaign: 10,
} as const;

/** Delivery attempts of one email (transient failures: SMTP 4xx, connection errors). */
export const EMAIL_DELIVERY_ATTEMPTS = 8;

export interface EmailToEnqueue {
  id: string;
  projectId: string;
  /** A `MailEmailPriority` (lower runs first). */
  priority: number;
}

/**
 * The priority an email row gets when its job is rebuilt from Postgres: the one its first enqueue gave
 * it, from where it came. Campaign and workflow mail is marketing mail whatever its template's type (a
 * TRANSACTIONAL template in a workflow must not let a workflow's volume overtake /v1/send); the rest
 * (/v1/send, a campaign's one test send) is transactional.
 */
export function priorityOf(email: { campaignId: string | null; workflowId: string | null }): number {
  if (email.campaignId) return MailEmailPriority.Campaign;
  if (email.workflowId) return MailEmailPriority.Workflow;
  return MailEmailPriority.Transactional;
}

/**
 * The job id is the email id: BullMQ ignores an add whose id exists, so enqueueing twice (a retried
 * request, the requeue sweep) never makes a second job. Exponential backoff from 2 s over 8 attempts
 * spans about 4 minutes of a relay's temporary refusals. Failed jobs are removed at once: the
 * failure is recorded on the email row, and a lingering failed job would make the requeue sweep's
 * add of that id a no-op.
 */
export function emailJobOptions(email: EmailToEnqueue): JobsOptions {
  return {
    jobId: email.id,
    priority: email.priority,
    attempts: EMAIL_DELIVERY_ATTEMPTS,
    backoff: { type: 'exponential', delay: 2000 },
    removeOnComplete: { age: 3600, count: 1000 },
    removeOnFail: true,
  };
}

/** Producer of the email queue (the send endpoint, campaigns and workflows enqueue through it). */
@Injectable()
export class EmailDeliveryQueue {
  private readonly logger = new Logger(EmailDeliveryQueue.name);

  constructor(
    private readonly queues: QueueService,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  /** One round trip for the whole batch. The rows must be committed first: the job reads them. */
  async enqueue(emails: EmailToEnqueue[]): Promise<void> {
    if (emails.length === 0) return;
    await this.queues.queue(EMAIL_QUEUE).addBulk(
      emails.map((email) => ({
        name: MailEmailJob.Deliver,
        data: { emailId: email.id, projectId: email.projectId } satisfies MailEmailDeliverPayload,
        opts: emailJobOptions(email),
      })),
    );
  }

  /**
   * The jobs of emails just committed as QUEUED, for a caller whose answer must not depend on Redis (the
   * send endpoint, a campaign's test send and batches, the campaign sweep): when the add fails, the
   * failure is logged and the rows stay QUEUED, so the requeue sweep (EmailDeliveryJobs.requeue) adds
   * their jobs once the queue is reachable again. Postgres is the truth; a lost add only delays.
   */
  async enqueueOrLeaveToSweep(scope: ProjectScope, input: { emailIds: string[]; priority: number }): Promise<void> {
    try {
      await this.enqueue(input.emailIds.map((id) => ({ id, projectId: scope.projectId, priority: input.priority })));
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message, emails: input.emailIds.length, priority: input.priority },
        'enqueue failed; the emails stay QUEUED and the requeue sweep adds their jobs',
      );
    }
  }

  /**
   * Removes the jobs of emails that will never be sent (a cancelled campaign's): each would still take
   * a slot of the sending limiter only to find its row CANCELLED. Jobs being processed stay (their
   * claim finds the row CANCELLED). Returns how many were removed.
   */
  async remove(ids: string[]): Promise<number> {
    const queue = this.queues.queue(EMAIL_QUEUE);
    let removed = 0;
    for (let i = 0; i < ids.length; i += 500) {
      const results = await Promise.all(ids.slice(i, i + 500).map((id) => queue.remove(id)));
      removed += results.filter((r) => r === 1).length;
    }
    return removed;
  }

  /** The ids among `ids` that have a job in Redis (in any state), in one pipelined round trip. */
  async existingJobIds(ids: string[]): Promise<Set<string>> {
    const queue = this.queues.queue(EMAIL_QUEUE);
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.exists(queue.toKey(id));
    const results = (await pipeline.exec()) ?? [];
    return new Set(ids.filter((_, i) => results[i]?.[1] === 1));
  }
}
