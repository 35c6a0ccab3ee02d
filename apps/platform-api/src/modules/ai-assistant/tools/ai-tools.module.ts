import { Module } from '@nestjs/common';
import { AiActionsModule } from '../actions/ai-actions.module.js';
import { AiAgentsModule } from '../agents/ai-agents.module.js';
import { AiPolicyModule } from '../policy/ai-policy.module.js';
import { McpToolsService } from './mcp-tools.service.js';
import { SessionKeyController } from './session-key.controller.js';
import { SessionKeysRepository } from './session-keys.repository.js';
import { SessionKeysService } from './session-keys.service.js';
import { ToolCatalogService } from './tool-catalog.service.js';
import { ToolsController } from './tools.controller.js';

/**
 * The AI tools over MCP (/ai_assistant/tools, /tools/execute) and session keys (/session-key).
 * Exports the catalog (which tools a caller may use) and session keys for chat.
 */
@Module({
  imports: [AiAgentsModule, AiPolicyModule, AiActionsModule],
  controllers: [ToolsController, SessionKeyController],
  providers: [McpToolsService, ToolCatalogService, SessionKeysService, SessionKeysRepository],
  exports: [ToolCatalogService, SessionKeysService, McpToolsService],
})
export class AiToolsModule {}
