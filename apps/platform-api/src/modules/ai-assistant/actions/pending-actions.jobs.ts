import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { OnJob } from '@app/service-kit';
import { PendingActionEvents } from './pending-action-events.js';
import { PendingActionsRepository } from './pending-actions.repository.js';
import { AI_ACTIONS_QUEUE, AiActionsJob } from './pending-actions.queue.js';

const BATCH = 500;
/** A run expires at most this many batches; the next run goes on. */
const ROUNDS = 20;

@Injectable()
export class PendingActionsJobs {
  private readonly logger = new Logger(PendingActionsJobs.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly repository: PendingActionsRepository,
    private readonly events: PendingActionEvents,
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
}
