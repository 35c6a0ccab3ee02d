import { Module } from '@nestjs/common';
import { CampaignsRepositoryModule } from '../campaigns/campaigns-repository.module.js';
import { UnsubscribeModule } from '../unsubscribe/unsubscribe.module.js';
import { CampaignCompletion } from './campaign-completion.js';
import { SuppressionsRepository } from '../suppressions/suppressions.repository.js';
import { DeliveryMetrics } from './delivery-metrics.js';
import { EmailDeliveryBatcher } from './email-delivery-batcher.js';
import { EmailDeliveryJobs } from './email-delivery.jobs.js';
import { EmailDeliveryQueue } from './email-delivery.queue.js';
import { EmailDeliveryRepository } from './email-delivery.repository.js';
import { EmailEngagementMarksRepository } from './email-engagement-marks.repository.js';
import { EmailReadsRepository } from './email-reads.repository.js';
import { EmailOutcomeEvents } from './email-outcome-events.js';
import { MailTransport } from './mail-transport.js';
import { RelayThrottle } from './relay-throttle.js';
import { Verp } from './verp.js';
import { MarketingFeeder } from './marketing-feeder.js';
import { MarketingFeedRepository } from './marketing-feed.repository.js';
import { SendingRate } from './sending-rate.js';

/**
 * The email queue: the producer (`EmailDeliveryQueue`, for the send endpoint, campaigns and
 * workflows) and the throttled delivery processor with its requeue sweep (run by the worker; the
 * limiter and concurrency are in email-queue-options.ts, the run-time rate in sending-rate.ts). Campaign
 * and workflow mail reaches the queue through MarketingFeeder, round-robin by project. `EmailDeliveryRepository` writes
 * `emails` (the send endpoint inserts its rows through it), but for the feeder's `fed_at` (MarketingFeedRepository).
 */
@Module({
  // A campaign's last email completes the campaign (CampaignCompletion, through the one CampaignsRepository).
  imports: [UnsubscribeModule, CampaignsRepositoryModule],
  providers: [
    EmailDeliveryQueue,
    EmailDeliveryRepository,
    EmailReadsRepository,
    EmailEngagementMarksRepository,
    EmailDeliveryBatcher,
    EmailOutcomeEvents,
    EmailDeliveryJobs,
    MailTransport,
    CampaignCompletion,
    // Deliverability (decisions.md): hard bounces suppress through the list's one writer; the relay's
    // throttling pauses every worker; VERP envelope senders for the inbound report listener.
    SuppressionsRepository,
    RelayThrottle,
    Verp,
    DeliveryMetrics,
    SendingRate,
    MarketingFeeder,
    MarketingFeedRepository,
  ],
  exports: [EmailDeliveryQueue, EmailDeliveryRepository, EmailReadsRepository, EmailEngagementMarksRepository, EmailOutcomeEvents, Verp],
})
export class DeliveryModule {}
