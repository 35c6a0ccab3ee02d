import { Module } from '@nestjs/common';
import { AccountEmailJobs } from './account-email.jobs.js';
import { AccountEmailService } from './account-email.service.js';
import { MailApiClient } from './mail-api.client.js';

@Module({ providers: [AccountEmailService, AccountEmailJobs, MailApiClient], exports: [AccountEmailService] })
export class AccountEmailModule {}
