import { Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery/delivery.module.js';
import { DomainsModule } from '../domains/domains.module.js';
import { TemplatesModule } from '../templates/templates.module.js';
import { UnsubscribeModule } from '../unsubscribe/unsubscribe.module.js';
import { SendController } from './send.controller.js';
import { SendJobs } from './send.jobs.js';
import { SendRepository } from './send.repository.js';
import { SendService } from './send.service.js';

/** POST /v1/send, and the purge of expired Idempotency-Key records (worker). */
@Module({
  imports: [TemplatesModule, DomainsModule, DeliveryModule, UnsubscribeModule],
  controllers: [SendController],
  providers: [SendService, SendRepository, SendJobs],
})
export class SendModule {}
