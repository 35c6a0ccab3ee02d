import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { OnJob } from '@app/service-kit';
import { MAINTENANCE_QUEUE, MailMaintenanceJob } from '../maintenance/maintenance.queue.js';
import { SendRepository } from './send.repository.js';

const PURGE_BATCH = 500;
/** A run deletes at most this many batches; the next hourly run goes on. */
const PURGE_ROUNDS = 20;

@Injectable()
export class SendJobs {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repository: SendRepository,
  ) {}

  /** Idempotency-Key records past their 24 h window (an expired key is also taken over on use). */
  @OnJob({ queue: MAINTENANCE_QUEUE, name: MailMaintenanceJob.PurgeIdempotencyKeys })
  async purgeIdempotencyKeys(): Promise<{ deleted: number }> {
    return { deleted: await this.repository.purgeExpiredIdempotencyKeys(this.dataSource) };
  }

  /** Attachments of delivered sends, in batches until none is left (or a bounded number of rounds). */
  @OnJob({ queue: MAINTENANCE_QUEUE, name: MailMaintenanceJob.PurgeSendRequests })
  async purgeSendRequests(): Promise<{ deleted: number }> {
    let deleted = 0;
    for (let round = 0; round < PURGE_ROUNDS; round += 1) {
      const batch = await this.repository.purgeFinishedSendRequests(this.dataSource, PURGE_BATCH);
      deleted += batch;
      if (batch < PURGE_BATCH) break;
    }
    return { deleted };
  }
}
