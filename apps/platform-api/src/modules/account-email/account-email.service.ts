import { Injectable } from '@nestjs/common';
import { QueueService } from '@app/service-kit';
import {
  ACCOUNT_EMAIL_SEND_OPTIONS,
  AccountEmailJob,
  AccountEmailQueue,
  type AccountEmailJobData,
  type AccountEmailPayload,
  type TokenLinkEmailPayload,
} from './account-email.queue.js';

/**
 * The producer of the account-email queue's `Send` jobs (other modules queue their emails through
 * it); the worker delivers them (retried with exponential backoff).
 */
@Injectable()
export class AccountEmailService {
  constructor(private readonly queues: QueueService) {}

  /** `dedupeId`: one message per id, however often this is called. */
  async queue(message: AccountEmailPayload, dedupeId: string): Promise<void> {
    await this.add(message, `${message.kind}-${dedupeId}`);
  }

  /** A reset or invitation email: the job holds the token row's id only; the worker builds the link. */
  async queueTokenLink(reference: TokenLinkEmailPayload): Promise<void> {
    const data: TokenLinkEmailPayload = { kind: reference.kind, to: reference.to, tokenId: reference.tokenId };
    await this.add(data, `${reference.kind}-${reference.tokenId}`);
  }

  private async add(data: AccountEmailJobData, jobId: string): Promise<void> {
    await this.queues.add(AccountEmailQueue, AccountEmailJob.Send, data, { jobId, ...ACCOUNT_EMAIL_SEND_OPTIONS });
  }
}
