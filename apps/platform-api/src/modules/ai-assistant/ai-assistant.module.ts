import { Module } from '@nestjs/common';
import { AiAgentsModule } from './agents/ai-agents.module.js';
import { AiActionsModule } from './actions/ai-actions.module.js';
import { AiPolicyModule } from './policy/ai-policy.module.js';
import { AiToolsModule } from './tools/ai-tools.module.js';
import { AiAgentsApiModule } from './agents/agents-api.module.js';
import { AiChatModule } from './chat/ai-chat.module.js';
import { AiSettingsModule } from './settings/ai-settings.module.js';
import { AiUsageModule } from './usage/ai-usage.module.js';

/**
 * The AI assistant (/ai_assistant): agents, providers and runtime settings, chat and run-object, usage,
 * pending actions, policies and MCP tools. Each folder has its own module; dependencies point one way:
 * agents <- actions/policy/tools <- chat.
 */
@Module({
  imports: [
    AiAgentsModule,
    AiAgentsApiModule,
    AiSettingsModule,
    AiUsageModule,
    AiActionsModule,
    AiPolicyModule,
    AiToolsModule,
    AiChatModule,
  ],
})
export class AiAssistantModule {}
