import { Injectable } from '@nestjs/common';
import { AccountEmailJob, PlatformQueue, type AccountEmailPayload } from '@app/contracts';
import { QueueService } from '@app/service-kit';

/** Queues account emails; the worker delivers them (retried with exponential backoff). */
@Injectable()
export class AccountEmailService {
  constructor(private readonly queues: QueueService) {}

  /** `dedupeId`: one message per id, however often this is called (e.g. the token id). */
  async queue(message: AccountEmailPayload, dedupeId: string): Promise<void> {
    await this.queues.add(PlatformQueue.AccountEmail, AccountEmailJob.Send, message, {
      jobId: `${message.kind}-${dedupeId}`,
      attempts: 8,
      backoff: { type: 'exponential', delay: 2000 },
    });
  }
}
