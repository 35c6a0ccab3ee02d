import { Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery/delivery.module.js';
import { DomainsModule } from '../domains/domains.module.js';
import { SegmentsModule } from '../segments/segments.module.js';
import { SendModule } from '../send/send.module.js';
import { UnsubscribeModule } from '../unsubscribe/unsubscribe.module.js';
import { CampaignPipeline } from './campaign-pipeline.service.js';
import { CampaignLinksRepository } from './campaign-links.repository.js';
import { CampaignRecipientsRepository } from './campaign-recipients.repository.js';
import { CampaignSweep } from './campaign-sweep.service.js';
import { CampaignsController } from './campaigns.controller.js';
import { CampaignsJobs } from './campaigns.jobs.js';
import { CampaignsQueue } from './campaigns.queue.js';
import { CampaignsRepositoryModule } from './campaigns-repository.module.js';
import { CampaignsService } from './campaigns.service.js';

/**
 * /campaigns and the staged send pipeline (the campaign queue's dispatch, batch and sweep jobs, run by
 * the worker; the controller is inert there). Emails go through DeliveryModule's repository and queue (a
 * test send through SendModule's send path);
 * audiences through the segments module's conditions.
 */
@Module({
  imports: [CampaignsRepositoryModule, DeliveryModule, DomainsModule, SegmentsModule, SendModule, UnsubscribeModule],
  controllers: [CampaignsController],
  providers: [
    CampaignsService,
    CampaignRecipientsRepository,
    CampaignLinksRepository,
    CampaignsQueue,
    CampaignPipeline,
    CampaignSweep,
    CampaignsJobs,
  ],
})
export class CampaignsModule {}
