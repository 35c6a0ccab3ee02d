import { Injectable } from '@nestjs/common';
import type { JobsOptions } from 'bullmq';
import { QueueService } from '@app/service-kit';

/** The attachments module's queue: removal of stored bytes no row points at any more. */
export const ATTACHMENTS_QUEUE = 'platform-attachments';

export const AttachmentsJob = {
  /** Removes the due rows of `attachment_storage_deletions` from storage (AttachmentStorageCleanup.sweep). */
  RemoveStored: 'attachments.remove-stored',
} as const;

/**
 * How often a sweep runs anyway (ms): pending removals are in Postgres, so one that lost its job
 * (Redis lost, a process gone between commit and enqueue) is found by the next scheduled sweep.
 */
export const REMOVE_STORED_EVERY_MS = 60_000;

const JOB_OPTIONS: JobsOptions = { removeOnComplete: { count: 10 }, removeOnFail: { count: 50 } };

/**
 * Producer side. A sweep claims its rows in Postgres, so duplicate or overlapping sweeps are harmless;
 * jobs asked for the same second share one id (BullMQ ignores a second add with an id it holds).
 */
@Injectable()
export class AttachmentsQueue {
  constructor(private readonly queues: QueueService) {}

  /** A sweep `delayMs` from now (a failed removal's backoff), or at once. */
  async sweepIn(delayMs = 0): Promise<void> {
    const dueSecond = Math.ceil((Date.now() + delayMs) / 1000);
    await this.queues.add(
      ATTACHMENTS_QUEUE,
      AttachmentsJob.RemoveStored,
      {},
      { ...JOB_OPTIONS, delay: delayMs, jobId: `sweep-${dueSecond}` },
    );
  }

  /**
   * The repeatable sweep. Job schedulers are upserted by id, so every worker process may call this at
   * start: N workers still make one schedule. `everyMs` exists for tests.
   */
  async schedule({ everyMs = REMOVE_STORED_EVERY_MS }: { everyMs?: number } = {}): Promise<void> {
    const name = AttachmentsJob.RemoveStored;
    await this.queues.queue(ATTACHMENTS_QUEUE).upsertJobScheduler(name, { every: everyMs }, { name, opts: JOB_OPTIONS });
  }
}
