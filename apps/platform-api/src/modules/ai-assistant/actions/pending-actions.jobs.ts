import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { OnJob } from '@app/service-kit';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../../config/platform-config.js';
import { PendingActionEvents } from './pending-action-events.js';
import { PendingActionsRepository } from './pending-actions.repository.js';
import { AI_ACTIONS_QUEUE, AiActionsJob } from './pending-actions.queue.js';

const BATCH = 500;
/** A run expires at most this many batches; the next run goes on. */
const ROUNDS = 20;
/** An action a crash left `executing`, whose tool never started, is confirmable again for at least this long. */
const RECOVERED_PENDING_GRACE_SECONDS = 300;
const INTERRUPTED = {
  notRun: 'the confirmation was interrupted before the tool ran; the same proposal is pending as another action',
  mayHaveRun: 'the confirmation was interrupted while the tool ran; check the record before proposing it again',
};

@Injectable()
export class PendingActionsJobs {
  private readonly logger = new Logger(PendingActionsJobs.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly repository: PendingActionsRepository,
    private readonly events: PendingActionEvents,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
  ) {}

  /**
   * Pending actions past `expiresAt` become `expired`, one event `ai.action.expired` each. Idempotent:
   * a row moves once (the UPDATE requires `pending`), so a retried or duplicate run emits nothing twice,
   * and rows a confirm or cancel holds at that moment are left to it.
   */
  @OnJob({ queue: AI_ACTIONS_QUEUE, name: AiActionsJob.ExpirePending })
  async expirePending(): Promise<{ expired: number }> {
    let expired = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const rows = await this.repository.expireDue(this.dataSource, { limit: BATCH });
      await this.events.emit('expired', rows);
      expired += rows.length;
      if (rows.length < BATCH) break;
    }
    if (expired > 0) this.logger.log({ expired }, 'expired pending AI actions');
    return { expired };
  }

  /**
   * Actions whose confirm crashed (their claim's lease lapsed: the process that held it stopped
   * renewing it) become confirmable again when the tool never started, or `failed` with
   * `executionResult.error.code = "interrupted"` (event `ai.action.failed`) when it may have run.
   * Idempotent: each move is one conditional UPDATE of `executing` rows.
   */
  @OnJob({ queue: AI_ACTIONS_QUEUE, name: AiActionsJob.RecoverInterrupted })
  async recoverInterrupted(): Promise<{ pending: number; failed: number }> {
    const counts = { pending: 0, failed: 0 };
    for (let round = 0; round < ROUNDS; round += 1) {
      const rows = await this.repository.recoverInterrupted(this.dataSource, {
        limit: BATCH,
        legacyGraceSeconds: this.config.aiPendingActionLeaseSeconds,
        pendingGraceSeconds: RECOVERED_PENDING_GRACE_SECONDS,
        messages: INTERRUPTED,
      });
      const failed = rows.filter((r) => r.status === 'failed');
      await this.events.emit('failed', failed);
      counts.failed += failed.length;
      counts.pending += rows.length - failed.length;
      if (rows.length < BATCH) break;
    }
    if (counts.pending + counts.failed > 0) this.logger.warn(counts, 'recovered pending AI actions left executing by a crashed confirm');
    return counts;
  }
}
