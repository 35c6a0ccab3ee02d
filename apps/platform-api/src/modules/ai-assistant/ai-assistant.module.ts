import { Module } from '@nestjs/common';
import { RolesModule } from '../roles/roles.module.js';
import { PendingActionConfirmService } from './actions/pending-action-confirm.service.js';
import { PendingActionEvents } from './actions/pending-action-events.js';
import { PendingActionsController } from './actions/pending-actions.controller.js';
import { PendingActionsRepository } from './actions/pending-actions.repository.js';
import { PendingActionsService } from './actions/pending-actions.service.js';
import { AgentLoopOverrideController } from './overrides/agent-loop-override.controller.js';
import { AgentLoopOverrideRepository } from './overrides/agent-loop-override.repository.js';
import { AgentLoopOverrideService } from './overrides/agent-loop-override.service.js';
import { AgentRegistry } from './agents/agent-registry.js';
import { AgentsController } from './agents/agents.controller.js';
import { AgentsService } from './agents/agents.service.js';
import { AuthAccessAssistantAgent } from './agents/builtin/auth-access-assistant.agent.js';
import { AuthAccessSummaryAgent } from './agents/builtin/auth-access-summary.agent.js';
import { AgentRunService } from './chat/agent-run.service.js';
import { AiChatController } from './chat/ai-chat.controller.js';
import { AssistantHealthService } from './chat/assistant-health.service.js';
import { AssistantRouterService } from './chat/assistant-router.service.js';
import { AssistantController } from './chat/assistant.controller.js';
import { ChatAttachmentsRepository } from './chat/chat-attachments.repository.js';
import { ChatService } from './chat/chat.service.js';
import { RunObjectService } from './chat/run-object.service.js';
import { MutationPolicyController } from './overrides/mutation-policy.controller.js';
import { MutationPolicyRepository } from './overrides/mutation-policy.repository.js';
import { MutationPolicyService } from './overrides/mutation-policy.service.js';
import { PromptOverrideController } from './overrides/prompt-override.controller.js';
import { PromptOverrideRepository } from './overrides/prompt-override.repository.js';
import { PromptOverrideService } from './overrides/prompt-override.service.js';
import { AiProviderRegistry } from './providers/ai-provider-registry.js';
import { ProviderKeyCipher } from './settings/provider-key-cipher.js';
import { RuntimeAllowlistRepository } from './overrides/runtime-allowlist.repository.js';
import { RuntimeResolver } from './settings/runtime-resolver.service.js';
import { RuntimeSettingsController } from './overrides/runtime-settings.controller.js';
import { RuntimeSettingsRepository } from './overrides/runtime-settings.repository.js';
import { RuntimeSettingsService } from './overrides/runtime-settings.service.js';
import { McpServerService } from './tools/mcp-server.service.js';
import { McpController } from './tools/mcp.controller.js';
import { SessionKeyController } from './tools/session-key.controller.js';
import { SessionKeysRepository } from './tools/session-keys.repository.js';
import { SessionKeysService } from './tools/session-keys.service.js';
import { ToolCatalogService } from './tools/tool-catalog.service.js';
import { ToolsController } from './tools/tools.controller.js';
import { ToolsService } from './tools/tools.service.js';
import { AiUsageController } from './usage/ai-usage.controller.js';
import { AiUsageRepository } from './usage/ai-usage.repository.js';
import { AiUsageService } from './usage/ai-usage.service.js';
import { TokenBudgetService } from './usage/token-budget.service.js';

/**
 * The AI assistant's API side (/ai_assistant), one Nest module: agents, providers and runtime settings,
 * chat and run-object, usage, pending actions, policies, tools, the MCP server and session keys. The
 * folders group the files; dependencies between them point one way (agents <- actions, policy, tools
 * <- chat) without modules of their own. The worker's part is AiActionsWorkerModule.
 */
@Module({
  imports: [RolesModule],
  controllers: [
    AgentsController,
    AgentLoopOverrideController,
    RuntimeSettingsController,
    AiUsageController,
    PendingActionsController,
    MutationPolicyController,
    PromptOverrideController,
    ToolsController,
    SessionKeyController,
    McpController,
    AiChatController,
    AssistantController,
  ],
  providers: [
    // agents and providers
    AgentRegistry,
    AuthAccessAssistantAgent,
    AuthAccessSummaryAgent,
    AgentsService,
    AgentLoopOverrideService,
    AgentLoopOverrideRepository,
    AiProviderRegistry,
    // runtime settings
    RuntimeSettingsService,
    RuntimeSettingsRepository,
    RuntimeAllowlistRepository,
    RuntimeResolver,
    ProviderKeyCipher,
    // usage
    AiUsageService,
    AiUsageRepository,
    TokenBudgetService,
    // pending actions and policies
    PendingActionsService,
    PendingActionConfirmService,
    PendingActionsRepository,
    PendingActionEvents,
    MutationPolicyService,
    MutationPolicyRepository,
    PromptOverrideService,
    PromptOverrideRepository,
    // tools, MCP, session keys
    ToolsService,
    McpServerService,
    ToolCatalogService,
    SessionKeysService,
    SessionKeysRepository,
    // chat
    AgentRunService,
    ChatService,
    RunObjectService,
    AssistantRouterService,
    AssistantHealthService,
    ChatAttachmentsRepository,
  ],
})
export class AiAssistantModule {}
