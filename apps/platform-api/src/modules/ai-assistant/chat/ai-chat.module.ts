import { Module } from '@nestjs/common';
import { AiActionsModule } from '../actions/ai-actions.module.js';
import { AiAgentsApiModule } from '../agents/agents-api.module.js';
import { AiAgentsModule } from '../agents/ai-agents.module.js';
import { AiPolicyModule } from '../policy/ai-policy.module.js';
import { AiProvidersModule } from '../providers/ai-providers.module.js';
import { AiSettingsModule } from '../settings/ai-settings.module.js';
import { AiToolsModule } from '../tools/ai-tools.module.js';
import { AiUsageModule } from '../usage/ai-usage.module.js';
import { AgentRunService } from './agent-run.service.js';
import { AiChatController } from './ai-chat.controller.js';
import { AssistantHealthService } from './assistant-health.service.js';
import { AssistantRouterService } from './assistant-router.service.js';
import { AssistantController } from './assistant.controller.js';
import { ChatAttachmentsRepository } from './chat-attachments.repository.js';
import { ChatService } from './chat.service.js';
import { RunObjectService } from './run-object.service.js';

/**
 * Chat and run-object (/ai_assistant/ai/chat, /ai_assistant/ai/run-object) and the assistant's entry
 * points (/ai_assistant/chat, /route, /health). Depends on every other AI module; none depends on it.
 */
@Module({
  imports: [
    AiAgentsModule,
    AiAgentsApiModule,
    AiProvidersModule,
    AiSettingsModule,
    AiUsageModule,
    AiPolicyModule,
    AiActionsModule,
    AiToolsModule,
  ],
  controllers: [AiChatController, AssistantController],
  providers: [AgentRunService, ChatService, RunObjectService, AssistantRouterService, AssistantHealthService, ChatAttachmentsRepository],
})
export class AiChatModule {}
