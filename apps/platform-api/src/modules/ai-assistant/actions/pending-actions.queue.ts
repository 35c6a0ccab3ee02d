import { Injectable } from '@nestjs/common';
import type { JobsOptions } from 'bullmq';
import { QueueService } from '@app/service-kit';

/** The AI assistant's housekeeping queue: the periodic expiry of pending actions, and the recovery of interrupted confirms. */
export const AI_ACTIONS_QUEUE = 'ai-actions';

export const AiActionsJob = {
  /** Pending actions past `expiresAt` become `expired` (event `ai.action.expired`); expired session keys go. */
  ExpirePending: 'ai-actions.expire-pending',
  /** Actions left `executing` by a crashed confirm (lease lapsed): back to `pending`, or `failed` (`interrupted`). */
  RecoverInterrupted: 'ai-actions.recover-interrupted',
} as const;

/** How often the expiry runs (ms). A pending action past `expiresAt` already answers `expired` before it runs. */
export const EXPIRE_PENDING_EVERY_MS = 60_000;

/**
 * How often the recovery runs (ms). An action is recovered at most this long after its lease (at most
 * 45 s, AI_PENDING_ACTION_LEASE_SECONDS) lapses: within 60 s of the crash with the default lease of 20 s.
 */
export const RECOVER_INTERRUPTED_EVERY_MS = 10_000;

const JOB_OPTIONS: JobsOptions = { removeOnComplete: { count: 10 }, removeOnFail: { count: 50 } };

/**
 * Producer side: the repeatable expiry and recovery jobs. Job schedulers are upserted by id, so every worker process
 * may call `schedule` at start: N workers still make one schedule.
 */
@Injectable()
export class AiActionsSchedule {
  constructor(private readonly queues: QueueService) {}

  /** `everyMs` / `recoverEveryMs` exist for tests, which cannot wait for the second run. */
  async schedule({
    everyMs = EXPIRE_PENDING_EVERY_MS,
    recoverEveryMs = RECOVER_INTERRUPTED_EVERY_MS,
  }: { everyMs?: number; recoverEveryMs?: number } = {}): Promise<void> {
    const queue = this.queues.queue(AI_ACTIONS_QUEUE);
    for (const [name, every] of [
      [AiActionsJob.ExpirePending, everyMs],
      [AiActionsJob.RecoverInterrupted, recoverEveryMs],
    ] as const) {
      await queue.upsertJobScheduler(name, { every }, { name, opts: JOB_OPTIONS });
    }
  }
}
