import { Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { OnJob } from '@app/service-kit';
import { AccountEmailJob, AccountEmailQueue, type PasswordResetRequestedPayload } from '../account-email/account-email.queue.js';
import { PasswordResetService } from './password-reset.service.js';

@Injectable()
export class AuthJobs {
  constructor(private readonly passwordReset: PasswordResetService) {}

  @OnJob({ queue: AccountEmailQueue, name: AccountEmailJob.PasswordResetRequested })
  processResetRequest(job: Job<PasswordResetRequestedPayload>): Promise<{ sent: boolean }> {
    return this.passwordReset.processResetRequest(job.data);
  }
}
