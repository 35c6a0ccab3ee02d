import { Module } from '@nestjs/common';
import { WorkflowExecutionsRepository } from './workflow-executions.repository.js';
import { WorkflowStepsRepository } from './workflow-steps.repository.js';
import { WorkflowTriggerService } from './workflow-trigger.service.js';
import { WorkflowsQueue } from './workflows.queue.js';
import { WorkflowsRepository } from './workflows.repository.js';

/**
 * The part of workflows that events reach: the trigger hook, the workflow tables' repositories and the
 * step queue's producer. Small and free of other features' modules, so /v1/track and the engagement
 * events (which delivery uses) can import it without a cycle; WorkflowsModule builds on it.
 */
@Module({
  providers: [WorkflowTriggerService, WorkflowsRepository, WorkflowExecutionsRepository, WorkflowStepsRepository, WorkflowsQueue],
  exports: [WorkflowTriggerService, WorkflowsRepository, WorkflowExecutionsRepository, WorkflowStepsRepository, WorkflowsQueue],
})
export class WorkflowTriggerModule {}
