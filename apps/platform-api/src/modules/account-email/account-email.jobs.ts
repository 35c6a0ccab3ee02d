import { Injectable } from '@nestjs/common';
import { UnrecoverableError, type Job } from 'bullmq';
import { AccountEmailJob, PlatformQueue, type AccountEmailPayload } from '@app/contracts';
import { OnJob } from '@app/service-kit';
import { MailApiClient, MailApiRetryableError } from './mail-api.client.js';

@Injectable()
export class AccountEmailJobs {
  constructor(private readonly client: MailApiClient) {}

  /** Retries (BullMQ backoff) reuse the job id as Idempotency-Key, so the mail-api sends once. */
  @OnJob({ queue: PlatformQueue.AccountEmail, name: AccountEmailJob.Send })
  async send(job: Job<AccountEmailPayload>): Promise<{ delivered: string }> {
    try {
      return await this.client.send(job.data, `platform-${job.id}`);
    } catch (err) {
      if (err instanceof MailApiRetryableError) throw err;
      throw new UnrecoverableError((err as Error).message);
    }
  }
}
