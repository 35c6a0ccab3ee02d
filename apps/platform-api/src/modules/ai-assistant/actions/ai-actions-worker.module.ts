import { Module } from '@nestjs/common';
import { PendingActionEvents } from './pending-action-events.js';
import { PendingActionsJobs } from './pending-actions.jobs.js';
import { AiActionsSchedule } from './pending-actions.queue.js';
import { PendingActionsRepository } from './pending-actions.repository.js';

/**
 * The worker's part of pending actions: the periodic expiry and its schedule. Separate from
 * AiAssistantModule (the API side), which needs the agents (and through them the command bus) to confirm.
 */
@Module({
  providers: [PendingActionsRepository, PendingActionEvents, PendingActionsJobs, AiActionsSchedule],
  exports: [AiActionsSchedule],
})
export class AiActionsWorkerModule {}
