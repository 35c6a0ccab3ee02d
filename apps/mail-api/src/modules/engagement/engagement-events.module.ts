import { Global, Module } from '@nestjs/common';
import { TrackRepository } from '../track/track.repository.js';
import { WorkflowTriggerModule } from '../workflows/workflow-trigger.module.js';
import { EngagementEventsService } from './engagement-events.service.js';
import { TrackingLinks } from './tracking-links.js';

/**
 * What every module that sends or tracks marketing email shares, in the API and the worker: the
 * service's own contact events (EngagementEventsService: delivery's `email.sent` / `email.bounced`,
 * the engagement endpoints' `email.opened` / `email.clicked`, each in the transaction of the change it
 * describes) and the signed tracking links the delivery worker puts into marketing emails
 * (TrackingLinks). Global: one instance per process.
 */
@Global()
@Module({
  imports: [WorkflowTriggerModule],
  providers: [EngagementEventsService, TrackRepository, TrackingLinks],
  exports: [EngagementEventsService, TrackingLinks],
})
export class EngagementEventsModule {}
