import { Module } from '@nestjs/common';
import { AiAgentsModule } from '../agents/ai-agents.module.js';
import { AiPolicyModule } from '../policy/ai-policy.module.js';
import { PendingActionConfirmService } from './pending-action-confirm.service.js';
import { PendingActionEvents } from './pending-action-events.js';
import { PendingActionsController } from './pending-actions.controller.js';
import { PendingActionsRepository } from './pending-actions.repository.js';
import { PendingActionsService } from './pending-actions.service.js';

/**
 * Pending AI actions: created by mutation tools (chat, tools/execute) through PendingActionsService,
 * read, cancelled and confirmed over /ai_assistant/ai/actions/{id}. The expiry job runs in the worker
 * (AiActionsWorkerModule).
 */
@Module({
  imports: [AiAgentsModule, AiPolicyModule],
  controllers: [PendingActionsController],
  providers: [PendingActionsService, PendingActionConfirmService, PendingActionsRepository, PendingActionEvents],
  exports: [PendingActionsService],
})
export class AiActionsModule {}
