import { Module } from '@nestjs/common';
import { UnsubscribeModule } from '../unsubscribe/unsubscribe.module.js';
import { EmailDeliveryJobs } from './email-delivery.jobs.js';
import { EmailDeliveryQueue } from './email-delivery.queue.js';
import { EmailDeliveryRepository } from './email-delivery.repository.js';
import { MailTransport } from './mail-transport.js';

/**
 * The email queue: the producer (`EmailDeliveryQueue`, for the send endpoint, campaigns and
 * workflows) and the throttled delivery processor with its requeue sweep (run by the worker; the
 * limiter and concurrency are in email-queue-options.ts). `EmailDeliveryRepository` is the one writer
 * of `emails` (the send endpoint inserts its rows through it).
 */
@Module({
  imports: [UnsubscribeModule],
  providers: [EmailDeliveryQueue, EmailDeliveryRepository, EmailDeliveryJobs, MailTransport],
  exports: [EmailDeliveryQueue, EmailDeliveryRepository],
})
export class DeliveryModule {}
