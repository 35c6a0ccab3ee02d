import { Module } from '@nestjs/common';
import { AiActionsModule } from '../actions/ai-actions.module.js';
import { AiAgentsModule } from '../agents/ai-agents.module.js';
import { AiPolicyModule } from '../policy/ai-policy.module.js';
import { McpController } from './mcp.controller.js';
import { McpServerService } from './mcp-server.service.js';
import { ToolsService } from './tools.service.js';
import { SessionKeyController } from './session-key.controller.js';
import { SessionKeysRepository } from './session-keys.repository.js';
import { SessionKeysService } from './session-keys.service.js';
import { ToolCatalogService } from './tool-catalog.service.js';
import { ToolsController } from './tools.controller.js';

/**
 * The AI tools (/ai_assistant/tools, /tools/execute), the MCP server (/ai_assistant/mcp) and session keys (/session-key).
 * Exports the catalog (which tools a caller may use) and session keys for chat.
 */
@Module({
  imports: [AiAgentsModule, AiPolicyModule, AiActionsModule],
  controllers: [ToolsController, SessionKeyController, McpController],
  providers: [ToolsService, McpServerService, ToolCatalogService, SessionKeysService, SessionKeysRepository],
  exports: [ToolCatalogService, SessionKeysService, ToolsService],
})
export class AiToolsModule {}
