import { Injectable } from '@nestjs/common';
import { MailMaintenanceJob, MailQueue } from '@app/contracts';
import { OnJob } from '@app/service-kit';
import { SendRepository } from './send.repository.js';

@Injectable()
export class SendJobs {
  constructor(private readonly repository: SendRepository) {}

  /** Idempotency-Key records past their 24 h window (an expired key is also taken over on use). */
  @OnJob({ queue: MailQueue.Maintenance, name: MailMaintenanceJob.PurgeIdempotencyKeys })
  async purgeIdempotencyKeys(): Promise<{ deleted: number }> {
    return { deleted: await this.repository.purgeExpiredIdempotencyKeys() };
  }
}
