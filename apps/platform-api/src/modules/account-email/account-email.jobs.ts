import { Injectable } from '@nestjs/common';
import { UnrecoverableError, type Job } from 'bullmq';
import { OnJob } from '@app/service-kit';
import {
  AccountEmailJob,
  AccountEmailQueue,
  isTokenLinkPayload,
  type AccountEmailJobData,
  type AccountEmailPayload,
} from './account-email.queue.js';
import { MailApiClient, MailApiRetryableError } from './mail-api.client.js';
import { TokenLinkComposers } from './token-link-composers.js';

@Injectable()
export class AccountEmailJobs {
  constructor(
    private readonly client: MailApiClient,
    private readonly composers: TokenLinkComposers,
  ) {}

  /**
   * Retries (BullMQ backoff) reuse the job id as Idempotency-Key, so the mail-api sends once. A
   * token-link job is composed here, in the worker, so its link never exists in Redis; a token that
   * is no longer live (used, replaced, expired, or its link already sent) sends nothing.
   */
  @OnJob({ queue: AccountEmailQueue, name: AccountEmailJob.Send })
  async send(job: Job<AccountEmailJobData>): Promise<{ delivered: string }> {
    const idempotencyKey = `platform-${job.id}`;
    if (!isTokenLinkPayload(job.data)) return this.deliver(job.data, idempotencyKey);
    const composer = this.composers.get(job.data.kind);
    if (!composer) throw new UnrecoverableError(`no composer for account email kind ${job.data.kind}`);
    const message = await composer.compose(job.data);
    if (!message) return { delivered: 'skipped' };
    const result = await this.deliver(message, idempotencyKey);
    await composer.delivered(job.data);
    return result;
  }

  private async deliver(message: AccountEmailPayload, idempotencyKey: string): Promise<{ delivered: string }> {
    try {
      return await this.client.send(message, idempotencyKey);
    } catch (err) {
      if (err instanceof MailApiRetryableError) throw err;
      throw new UnrecoverableError((err as Error).message);
    }
  }
}
