import { Module } from '@nestjs/common';
import { AccountEmailJobs } from './account-email.jobs.js';
import { AccountEmailService } from './account-email.service.js';
import { MailApiClient } from './mail-api.client.js';
import { TokenLinkComposers } from './token-link-composers.js';

@Module({
  providers: [AccountEmailService, AccountEmailJobs, MailApiClient, TokenLinkComposers],
  exports: [AccountEmailService, TokenLinkComposers],
})
export class AccountEmailModule {}
