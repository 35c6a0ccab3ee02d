import { Injectable } from '@nestjs/common';
import type { JobsOptions } from 'bullmq';
import { QueueService } from '@app/service-kit';

/** The AI assistant's housekeeping queue: the periodic expiry of pending actions (and old session keys). */
export const AI_ACTIONS_QUEUE = 'ai-actions';

export const AiActionsJob = {
  /** Pending actions past `expiresAt` become `expired` (event `ai.action.expired`); expired session keys go. */
  ExpirePending: 'ai-actions.expire-pending',
} as const;

/** How often the expiry runs (ms). A pending action past `expiresAt` already answers `expired` before it runs. */
export const EXPIRE_PENDING_EVERY_MS = 60_000;

const JOB_OPTIONS: JobsOptions = { removeOnComplete: { count: 10 }, removeOnFail: { count: 50 } };

/**
 * Producer side: the repeatable expiry job. Job schedulers are upserted by id, so every worker process
 * may call `schedule` at start: N workers still make one schedule.
 */
@Injectable()
export class AiActionsSchedule {
  constructor(private readonly queues: QueueService) {}

  /** `everyMs` exists for tests, which cannot wait a minute for the second run. */
  async schedule({ everyMs = EXPIRE_PENDING_EVERY_MS }: { everyMs?: number } = {}): Promise<void> {
    const name = AiActionsJob.ExpirePending;
    await this.queues.queue(AI_ACTIONS_QUEUE).upsertJobScheduler(name, { every: everyMs }, { name, opts: JOB_OPTIONS });
  }
}
