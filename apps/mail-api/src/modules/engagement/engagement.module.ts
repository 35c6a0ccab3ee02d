import { Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery/delivery.module.js';
import { EngagementController } from './engagement.controller.js';
import { EmailEngagementsRepository } from './email-engagements.repository.js';
import { EngagementRecorder } from './engagement-recorder.js';
import { EngagementService } from './engagement.service.js';

/**
 * Open and click tracking of marketing emails: the public pixel and redirect endpoints (`/t/...`). The
 * signed links (TrackingLinks) and the contact events (EngagementEventsService) come from the global
 * EngagementEventsModule, which the delivery worker uses too.
 */
@Module({
  imports: [DeliveryModule],
  controllers: [EngagementController],
  providers: [EngagementService, EngagementRecorder, EmailEngagementsRepository],
})
export class EngagementModule {}
