import { Module } from '@nestjs/common';
import { ContactsModule } from '../contacts/contacts.module.js';
import { DeliveryModule } from '../delivery/delivery.module.js';
import { DomainsModule } from '../domains/domains.module.js';
import { TemplatesModule } from '../templates/templates.module.js';
import { UnsubscribeModule } from '../unsubscribe/unsubscribe.module.js';
import { SendController } from './send.controller.js';
import { SendJobs } from './send.jobs.js';
import { SendRepository } from './send.repository.js';
import { SendService } from './send.service.js';

/**
 * POST /v1/send (its recipients through ContactsRepository, its emails through EmailDeliveryRepository,
 * one transaction; a campaign's test send goes through SendService too), and the purges of expired Idempotency-Key records and finished send requests (worker).
 */
@Module({
  imports: [TemplatesModule, DomainsModule, DeliveryModule, UnsubscribeModule, ContactsModule],
  controllers: [SendController],
  providers: [SendService, SendRepository, SendJobs],
  exports: [SendService],
})
export class SendModule {}
