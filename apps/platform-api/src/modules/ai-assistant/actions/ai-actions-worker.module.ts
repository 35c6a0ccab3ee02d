import { Module } from '@nestjs/common';
import { PendingActionEvents } from './pending-action-events.js';
import { PendingActionsJobs } from './pending-actions.jobs.js';
import { AiActionsSchedule } from './pending-actions.queue.js';
import { PendingActionsRepository } from './pending-actions.repository.js';

/**
 * The worker's part of pending actions: the periodic expiry and its schedule. Separate from
 * AiActionsModule, which needs the agents (and through them the API's command bus) to confirm.
 */
@Module({
  providers: [PendingActionsRepository, PendingActionEvents, PendingActionsJobs, AiActionsSchedule],
  exports: [AiActionsSchedule],
})
export class AiActionsWorkerModule {}
