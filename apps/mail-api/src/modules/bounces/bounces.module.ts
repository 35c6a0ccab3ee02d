import { Module } from '@nestjs/common';
import { ContactsRepository } from '../contacts/contacts.repository.js';
import { DeliveryModule } from '../delivery/delivery.module.js';
import { SuppressionsRepository } from '../suppressions/suppressions.repository.js';
import { DeliveryReportsService } from './delivery-reports.service.js';
import { InboundSmtpService } from './inbound-smtp.service.js';

/**
 * Asynchronous bounces and complaints (decisions.md "Deliverability"): the mail worker's inbound SMTP
 * listener for VERP addresses, and what a report changes (email, contact event, contact, suppression
 * list, each through its table's one writer). Runs only in the worker, and only with MAIL_BOUNCE_DOMAIN.
 */
@Module({
  imports: [DeliveryModule],
  providers: [InboundSmtpService, DeliveryReportsService, SuppressionsRepository, ContactsRepository],
  exports: [InboundSmtpService],
})
export class BouncesModule {}
