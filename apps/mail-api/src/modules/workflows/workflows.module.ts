import { Module } from '@nestjs/common';
import { ContactsModule } from '../contacts/contacts.module.js';
import { DeliveryModule } from '../delivery/delivery.module.js';
import { DomainsModule } from '../domains/domains.module.js';
import { UnsubscribeModule } from '../unsubscribe/unsubscribe.module.js';
import { WebhookClient } from './webhook-client.js';
import { WebhookSecretCipher } from './webhook-secret-cipher.js';
import { WorkflowEmailStep } from './workflow-email-step.js';
import { WorkflowExecutionsController } from './workflow-executions.controller.js';
import { WorkflowExecutionsService } from './workflow-executions.service.js';
import { WorkflowRunner } from './workflow-runner.service.js';
import { WorkflowStatsController } from './workflow-stats.controller.js';
import { WorkflowStatsRepository } from './workflow-stats.repository.js';
import { WorkflowStatsService } from './workflow-stats.service.js';
import { WorkflowSweep } from './workflow-sweep.service.js';
import { WorkflowTransitions } from './workflow-transitions.js';
import { WorkflowTriggerModule } from './workflow-trigger.module.js';
import { WorkflowWebhookStep } from './workflow-webhook-step.js';
import { WorkflowsController } from './workflows.controller.js';
import { WorkflowsJobs } from './workflows.jobs.js';
import { WorkflowsService } from './workflows.service.js';

/**
 * /workflows, /workflows/{id}/executions and /workflows/{id}/stats, and the step runner with its sweep (run by the worker;
 * the controllers are inert there). Events reach workflows through WorkflowTriggerModule, which
 * /v1/track and the engagement events import on their own.
 */
@Module({
  imports: [WorkflowTriggerModule, ContactsModule, DeliveryModule, DomainsModule, UnsubscribeModule],
  controllers: [WorkflowsController, WorkflowExecutionsController, WorkflowStatsController],
  providers: [
    WorkflowsService,
    WorkflowExecutionsService,
    WorkflowStatsService,
    WorkflowStatsRepository,
    WebhookSecretCipher,
    WebhookClient,
    WorkflowEmailStep,
    WorkflowWebhookStep,
    WorkflowTransitions,
    WorkflowRunner,
    WorkflowSweep,
    WorkflowsJobs,
  ],
})
export class WorkflowsModule {}
