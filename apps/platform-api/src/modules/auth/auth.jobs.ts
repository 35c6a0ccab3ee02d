import { Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { AccountEmailJob, PlatformQueue, type PasswordResetRequestedPayload } from '@app/contracts';
import { OnJob } from '@app/service-kit';
import { PasswordResetService } from './password-reset.service.js';

@Injectable()
export class AuthJobs {
  constructor(private readonly passwordReset: PasswordResetService) {}

  @OnJob({ queue: PlatformQueue.AccountEmail, name: AccountEmailJob.PasswordResetRequested })
  processResetRequest(job: Job<PasswordResetRequestedPayload>): Promise<{ sent: boolean }> {
    return this.passwordReset.processResetRequest(job.data);
  }
}
